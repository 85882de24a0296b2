/*
 * How a kernel call may run, from where its operands lie in memory.
 *
 * NumPy's inner-loop contract lets an input overlap out: a ufunc call hands
 * over out=x[:-1] with the input x[1:] without a copy (element i of the
 * input lies at or ahead of element i of out), and a reduction or an
 * accumulation passes out itself, or out's previous element, as the first
 * input.  A loop that goes forward, reading each block before writing it,
 * is right in the first case; a thread split is not (a thread would read
 * what the next one already wrote).  Anything else must go one element at
 * a time.  Disjoint operands, and an input that is out itself element for
 * element (in place), allow any split.
 */
#ifndef SIGMOID_BACKWARD_OVERLAP_H
#define SIGMOID_BACKWARD_OVERLAP_H

#include <stddef.h>

typedef enum {
    SB_ANY_ORDER,    /* any split between threads */
    SB_FORWARD,      /* one thread, blocks in order */
    SB_ELEMENTWISE,  /* one element at a time, in order */
} sb_order;

/* Do n elements at a (a_size bytes every a_step) and at b share no byte? */
static inline int sb_disjoint(const char *a, ptrdiff_t a_step, ptrdiff_t a_size,
                              const char *b, ptrdiff_t b_step, ptrdiff_t b_size, ptrdiff_t n)
{
    const ptrdiff_t a_span = (n - 1) * a_step, b_span = (n - 1) * b_step;
    const char *a_lo = a + (a_span < 0 ? a_span : 0), *a_hi = a + (a_span > 0 ? a_span : 0) + a_size;
    const char *b_lo = b + (b_span < 0 ? b_span : 0), *b_hi = b + (b_span > 0 ? b_span : 0) + b_size;
    return a_hi <= b_lo || b_hi <= a_lo;
}

/* The order one input `a` (of a_size bytes, a_same: of out's dtype) allows
 * next to out (n elements each). */
static inline sb_order sb_input_order(const char *a, ptrdiff_t a_step, ptrdiff_t a_size,
                                      int a_same, const char *out, ptrdiff_t os,
                                      ptrdiff_t size, ptrdiff_t n)
{
    if (n <= 1 || sb_disjoint(a, a_step, a_size, out, os, size, n)) return SB_ANY_ORDER;
    if (a == out && a_step == os && a_same && os != 0) return SB_ANY_ORDER;   /* in place */
    /* Out's element i starts at or before the input's element i, and out
     * falls behind at least as fast (mirrored for negative steps): every
     * byte an element reads belongs to that element of out or a later one. */
    if (os >= size && a_step >= os && a >= out) return SB_FORWARD;
    if (os <= -size && a_step <= os && a + a_size <= out + size) return SB_FORWARD;
    return SB_ELEMENTWISE;
}

/* The order a call allows: its inputs', and one thread when out's elements
 * overlap each other (a zero step: the last write must win). */
static inline sb_order sb_call_order(const char *g, ptrdiff_t gs, ptrdiff_t g_size, int g_same,
                                     const char *y, ptrdiff_t ys, ptrdiff_t y_size, int y_same,
                                     const char *out, ptrdiff_t os, ptrdiff_t size, ptrdiff_t n)
{
    sb_order order = sb_input_order(g, gs, g_size, g_same, out, os, size, n);
    const sb_order y_order = sb_input_order(y, ys, y_size, y_same, out, os, size, n);
    if (y_order > order) order = y_order;
    if (n > 1 && -size < os && os < size && order == SB_ANY_ORDER) order = SB_FORWARD;
    return order;
}

/* The bytes [*lo, *hi) that rows runs of n elements of `size` bytes touch,
 * `step` bytes apart within a run and `row` bytes from run to run. */
static inline void sb_rows_span(const char *p, ptrdiff_t step, ptrdiff_t row, ptrdiff_t size,
                                ptrdiff_t n, ptrdiff_t rows, const char **lo, const char **hi)
{
    const ptrdiff_t a = (n - 1) * step, b = (rows - 1) * row;
    *lo = p + (a < 0 ? a : 0) + (b < 0 ? b : 0);
    *hi = p + (a > 0 ? a : 0) + (b > 0 ? b : 0) + size;
}

/* May rows runs of n elements (each operand's runs `*_row` bytes apart)
 * split between threads anywhere?  When out's elements are all apart (each
 * run's steps at least an element, the runs beyond each other's reach), and
 * each input lies apart from out or is out itself, element for element.
 * Otherwise the caller goes run after run, each in its own order. */
static inline int sb_rows_apart(const char *g, ptrdiff_t gs, ptrdiff_t g_row, ptrdiff_t g_size,
                                int g_same, const char *y, ptrdiff_t ys, ptrdiff_t y_row,
                                ptrdiff_t y_size, int y_same, const char *out, ptrdiff_t os,
                                ptrdiff_t o_row, ptrdiff_t size, ptrdiff_t n, ptrdiff_t rows)
{
    const char *o_lo, *o_hi, *lo, *hi;
    const ptrdiff_t run = (n - 1) * (os < 0 ? -os : os) + size;
    if ((os < 0 ? -os : os) < size || (o_row < 0 ? -o_row : o_row) < run) return 0;
    sb_rows_span(out, os, o_row, size, n, rows, &o_lo, &o_hi);
    sb_rows_span(g, gs, g_row, g_size, n, rows, &lo, &hi);
    if (!(hi <= o_lo || o_hi <= lo) && !(g == out && gs == os && g_row == o_row && g_same))
        return 0;
    sb_rows_span(y, ys, y_row, y_size, n, rows, &lo, &hi);
    if (!(hi <= o_lo || o_hi <= lo) && !(y == out && ys == os && y_row == o_row && y_same))
        return 0;
    return 1;
}

#endif /* SIGMOID_BACKWARD_OVERLAP_H */
