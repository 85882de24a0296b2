/*
 * Where a contiguous share's vector loop starts (_fused.pxd's
 * contiguous_share): the elements computed before it, so that its wide
 * loads and stores split the fewest 64-byte lines.
 *
 * Wide accesses that split lines cost up to 30% in cache.  Measured on the
 * Xeon (float32, 1e5 elements, one thread; benchmarks/NOTES.md, 40), a
 * split g cost 8-10%, a split y 10%, a split out 2.5-7%: an input weighs 4,
 * out 1.  Tried in turn: no start, then the starts that put y, g or out on
 * a line (where a whole number of elements does: not complex128 8 bytes
 * off one); the cheapest wins, the first on ties.  NumPy's large arrays,
 * all 16 bytes past a line, then align together; a fresh torch output (on
 * a line) beside NumPy inputs keeps its line unless both inputs can have
 * theirs: aligning y alone there split g's loads and every store, and the
 * op took 1.05-1.10x aten's time at 1e5.
 */
#ifndef SIGMOID_BACKWARD_VECTOR_START_H
#define SIGMOID_BACKWARD_VECTOR_START_H

#include <stddef.h>

#include "_nontemporal.h" /* SB_LINE, sb_line_misalignment */

/* The split lines' cost when the loop starts `shift` bytes on. */
static inline int sb_split_cost(size_t g_off, size_t y_off, size_t out_off, size_t shift)
{
    return 4 * ((g_off + shift) % SB_LINE != 0) + 4 * ((y_off + shift) % SB_LINE != 0) +
           ((out_off + shift) % SB_LINE != 0);
}

/* The elements of `size` bytes to compute before the vector loop, at most n. */
static inline ptrdiff_t sb_vector_start(const void *g, const void *y, const void *out,
                                        size_t size, ptrdiff_t n)
{
    const size_t g_off = sb_line_misalignment(g), y_off = sb_line_misalignment(y);
    const size_t out_off = sb_line_misalignment(out);
    const size_t tried[3] = {y_off, g_off, out_off};
    ptrdiff_t best = 0;
    int best_cost = sb_split_cost(g_off, y_off, out_off, 0);
    for (int i = 0; i < 3; i++) {
        const size_t shift = (SB_LINE - tried[i]) % SB_LINE;
        if (shift % size != 0) continue;   /* no start puts that operand on a line */
        const int cost = sb_split_cost(g_off, y_off, out_off, shift);
        if (cost < best_cost) {
            best = (ptrdiff_t)(shift / size);
            best_cost = cost;
        }
    }
    return best < n ? best : n;
}

#endif /* SIGMOID_BACKWARD_VECTOR_START_H */
