/*
 * The arithmetic of sigmoid_backward on contiguous arrays: one loop per
 * dtype and instruction set, all computing
 *
 *   real:     g * (1 - y) * y, in that order
 *   complex:  g * conj((1 - y) * y), written out in real arithmetic exactly
 *             as NumPy evaluates complex - and * (C's complex * would call
 *             __mulsc3 and round differently)
 *   narrow (float16, bfloat16, float8): widened to float32, computed as
 *             real, rounded once (_half.h)
 *
 * The formula is written once for scalars and once for vectors, where every
 * width shares it (_simd.h's v_* operations); _dispatch.h makes the table of
 * each instruction set's loops and picks one at run time.  Every loop gives
 * the same bits: only IEEE +, -, * and exact conversions, the build pins
 * -ffp-contract=off, and the only loops with a product added to a product
 * (complex) keep every product out of reach of fused multiply-adds
 * (SB_OPAQUE).
 *
 * - float32 / float64: plain C, which the compiler vectorises for each
 *   target.
 * - complex, on x86: intrinsics on split real and imaginary parts for every
 *   instruction set, SSE2 (the x86-64 baseline) for portable.  Every
 *   AVX-512 target has fused multiply-adds, and GCC 12 turns the plain-C
 *   complex loop's a*b - c*d, a*b + c*d pair into vfmaddsub even under
 *   -ffp-contract=off (half the results then differ in the last bit); it
 *   does the same to a baseline loop built with -march=native.  Splitting
 *   two vectors of pairs costs 6 shuffles per 2 vectors, where multiplying
 *   the pairs in place needs 6 per vector (benchmarks/NOTES.md).
 * - narrow, on x86: F16C's conversions for float16, an unpack and the
 *   vector roundings for bfloat16 (GCC 12 does not vectorise the scalar
 *   conversions well), both through the blocked loop: one vector a block
 *   for float16, two for bfloat16.
 * - one byte (float8): a table of every result, which the scalar loop
 *   fills once; with AVX512-VBMI, -VBMI2 and GFNI (avx512vbmi) computed,
 *   64 a block, exactly (below).
 *
 * out may be g or y itself (in place), or lie behind an input that it
 * overlaps (out[i] at or before g[i] in memory, as x[:-1] and x[1:]): the
 * loops load every element of a vector, or of a block, before they store
 * its results, and go forward.  Other overlaps are the caller's
 * (_overlap.h decides, and _fused.pxd runs them one element at a time).
 */
#ifndef SIGMOID_BACKWARD_LOOPS_H
#define SIGMOID_BACKWARD_LOOPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_dtypes.h"
#include "_fpflags.h"
#include "_half.h"
#include "_simd.h"

/* Every loop: n elements of its dtype at g, y and out. */
typedef void (*sb_loop_fn)(const void *g, const void *y, void *out, ptrdiff_t n);

/* ---- the formula, on scalars --------------------------------------------- */

SB_ALWAYS_INLINE float sb_grad_f32(float g, float y) { return g * (1.0f - y) * y; }

/* sb_grad_f32, with a NaN g as the result whatever order the compiler gives
 * the commutative multiply: x86 (and AArch64) return the first NaN operand,
 * and g is first in g * (1 - y), but GCC may emit (1 - y) * g, which gave
 * the sign of y's NaN when both are NaN (float8: 2 of the 65,536 pairs).
 * For the loops the compiler vectorises from scalar code; the vector loops'
 * intrinsics keep their order.  The narrow dtypes widen NaNs quiet, so
 * this is the NaN the ordered product gives. */
SB_ALWAYS_INLINE float sb_grad_f32_ordered(float g, float y)
{
    const float r = sb_grad_f32(g, y);
    return sb_f32_from_bits(sb_select((sb_f32_to_bits(g) & 0x7FFFFFFFu) > 0x7F800000u,
                                      sb_f32_to_bits(g), sb_f32_to_bits(r)));
}
SB_ALWAYS_INLINE double sb_grad_f64(double g, double y) { return g * (1.0 - y) * y; }

/* The real loops, inlined into each instruction set's function, where the
 * compiler vectorises them for its target. */
SB_ALWAYS_INLINE void sb_real_f32(const float *g, const float *y, float *out, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) out[i] = sb_grad_f32(g[i], y[i]);
}

SB_ALWAYS_INLINE void sb_real_f64(const double *g, const double *y, double *out, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) out[i] = sb_grad_f64(g[i], y[i]);
}

/* The storage of a narrow dtype of `size` bytes. */
#define SB_STORAGE(size) SB_STORAGE_##size
#define SB_STORAGE_1 uint8_t
#define SB_STORAGE_2 uint16_t

/* ---- the formula, on vectors (x86) ---------------------------------------- */

#if SB_X86_DISPATCH

/* sb_grad_<V>(g, y): the real formula on a vector of float32. */
#define SB_DEFINE_VECTOR_GRAD(V, attr)                                        \
    attr static inline V sb_grad_##V(V g, V y)                                 \
    {                                                                         \
        return v_mul(v_mul(g, v_sub(v_set1(y, 1), y)), y);                     \
    }

/* sb_complex_grad_<V>: re + i im = g * conj((1 - y) * y) on split parts,
 * in the order of the scalar complex loop below. */
#define SB_DEFINE_COMPLEX_GRAD(V, attr)                                       \
    attr static inline void sb_complex_grad_##V(V gr, V gi, V yr, V yi,        \
                                                V *re, V *im)                  \
    {                                                                         \
        const V ar = v_sub(v_set1(yr, 1), yr);      /* a = complex(1, 0) - y */ \
        const V ai = v_sub(v_set1(yr, 0), yi);                                 \
        V p1 = v_mul(ar, yr), p2 = v_mul(ai, yi);                              \
        V p3 = v_mul(ar, yi), p4 = v_mul(ai, yr);                              \
        SB_OPAQUE(p1); SB_OPAQUE(p2); SB_OPAQUE(p3); SB_OPAQUE(p4);            \
        const V pr = v_sub(p1, p2);                 /* p = a * y */             \
        const V npi = v_xor(v_add(p3, p4), v_set1(yr, -0.0)); /* imag(conj(p)) */ \
        V q1 = v_mul(gr, pr), q2 = v_mul(gi, npi);  /* g * conj(p) */           \
        V q3 = v_mul(gr, npi), q4 = v_mul(gi, pr);                             \
        SB_OPAQUE(q1); SB_OPAQUE(q2); SB_OPAQUE(q3); SB_OPAQUE(q4);            \
        *re = v_sub(q1, q2);                                                   \
        *im = v_add(q3, q4);                                                   \
    }

/* One complex block: two vectors of (re, im) pairs of T. */
#define SB_DEFINE_COMPLEX_BLOCK(name, attr, V, T)                             \
    attr static inline void name(const void *gp, const void *yp, void *op)     \
    {                                                                         \
        const T *g = (const T *)gp, *y = (const T *)yp;                        \
        const int lanes = (int)(sizeof(V) / sizeof(T));                        \
        const V g0 = v_loadu((V){0}, g), g1 = v_loadu((V){0}, g + lanes);      \
        const V y0 = v_loadu((V){0}, y), y1 = v_loadu((V){0}, y + lanes);      \
        V re, im;                                                             \
        sb_complex_grad_##V(v_real_parts(g0, g1), v_imag_parts(g0, g1),        \
                            v_real_parts(y0, y1), v_imag_parts(y0, y1), &re, &im); \
        v_storeu((T *)op, v_pairs_lo(re, im));                                 \
        v_storeu((T *)op + lanes, v_pairs_hi(re, im));                         \
    }

/* One float16 block: a vector of float32's worth, converted by F16C (two
 * vectors a block took 3-4% longer in cache: benchmarks/NOTES.md). */
#define SB_DEFINE_F16_BLOCK(name, attr, V, widen, narrow)                     \
    attr static inline void name(const void *gp, const void *yp, void *op)     \
    {                                                                         \
        narrow(sb_grad_##V(widen((const uint16_t *)gp), widen((const uint16_t *)yp)), \
               (uint16_t *)op);                                               \
    }

/* One bfloat16 block: two vectors of float32's worth, since AVX512-BF16
 * rounds two vectors into one (_simd.h). */
#define SB_DEFINE_BF16_BLOCK(name, attr, V, widen, narrow)                    \
    attr static inline void name(const void *gp, const void *yp, void *op)     \
    {                                                                         \
        V g0, g1, y0, y1;                                                     \
        widen((const uint16_t *)gp, &g0, &g1);                                 \
        widen((const uint16_t *)yp, &y0, &y1);                                 \
        narrow(sb_grad_##V(g0, y0), sb_grad_##V(g1, y1), (uint16_t *)op);      \
    }

#endif /* SB_X86_DISPATCH */

/* One block's worth of bytes at most: two AVX-512 vectors. */
#define SB_MAX_BLOCK_BYTES 128
typedef void (*sb_block_fn)(const void *g, const void *y, void *out);

/* The last `bytes` of a blocked loop (less than a block) through zero-padded
 * buffers of one block, so that every element takes the same instructions
 * (a scalar complex tail compiled for an FMA-capable target could be
 * fused).  Copied with memcpy here; sb_tail_masked is AVX-512's. */
SB_ALWAYS_INLINE void sb_tail_copied(const void *g, const void *y, void *out, size_t bytes,
                                     sb_block_fn block)
{
    unsigned char bg[SB_MAX_BLOCK_BYTES] = {0}, by[SB_MAX_BLOCK_BYTES] = {0};
    unsigned char bo[SB_MAX_BLOCK_BYTES];
    memcpy(bg, g, bytes);
    memcpy(by, y, bytes);
    block(bg, by, bo);
    memcpy(out, bo, bytes);
}

/* n elements of `size` bytes, `width` at a time by block(g, y, out), the
 * rest by tail().  Inlined with its constant block and tail. */
SB_ALWAYS_INLINE void sb_blocked(const void *g, const void *y, void *out, ptrdiff_t n,
                                 size_t size, ptrdiff_t width, sb_block_fn block,
                                 void (*tail)(const void *, const void *, void *, size_t,
                                              sb_block_fn))
{
    const char *gc = (const char *)g, *yc = (const char *)y;
    char *oc = (char *)out;
    const ptrdiff_t whole = n - n % width;
    for (ptrdiff_t i = 0; i < whole; i += width)
        block(gc + i * size, yc + i * size, oc + i * size);
    if (whole < n)
        tail(gc + whole * size, yc + whole * size, oc + whole * size,
             (size_t)(n - whole) * size, block);
}

/* ---- portable ------------------------------------------------------------ */

static void sb_F32_portable(const void *g, const void *y, void *out, ptrdiff_t n)
{
    sb_real_f32((const float *)g, (const float *)y, (float *)out, n);
}

static void sb_F64_portable(const void *g, const void *y, void *out, ptrdiff_t n)
{
    sb_real_f64((const double *)g, (const double *)y, (double *)out, n);
}

#if SB_X86_DISPATCH
SB_DEFINE_COMPLEX_GRAD(__m128, )
SB_DEFINE_COMPLEX_GRAD(__m128d, )
SB_DEFINE_COMPLEX_BLOCK(sb_c64_block_sse2, , __m128, float)
SB_DEFINE_COMPLEX_BLOCK(sb_c128_block_sse2, , __m128d, double)

static void sb_C64_portable(const void *g, const void *y, void *out, ptrdiff_t n)
{
    sb_blocked(g, y, out, n, 2 * sizeof(float), 4, sb_c64_block_sse2, sb_tail_copied);
}

static void sb_C128_portable(const void *g, const void *y, void *out, ptrdiff_t n)
{
    sb_blocked(g, y, out, n, 2 * sizeof(double), 2, sb_c128_block_sse2, sb_tail_copied);
}
#else
/* n complex numbers of T, stored as 2n reals, in real arithmetic */
#define SB_DEFINE_COMPLEX_LOOP(name, T)                                       \
    static void name(const void *gp, const void *yp, void *op, ptrdiff_t n)    \
    {                                                                         \
        const T *g = (const T *)gp, *y = (const T *)yp;                        \
        T *out = (T *)op;                                                     \
        const T one = 1, zero = 0;                                            \
        for (ptrdiff_t i = 0; i < n; i++) {                                    \
            const T gr = g[2 * i], gi = g[2 * i + 1];                          \
            const T yr = y[2 * i], yi = y[2 * i + 1];                          \
            const T ar = one - yr, ai = zero - yi;   /* a = complex(1, 0) - y */ \
            const T pr = ar * yr - ai * yi;          /* p = a * y */            \
            const T npi = -(ar * yi + ai * yr);      /* imag(conj(p)) */        \
            out[2 * i] = gr * pr - gi * npi;         /* g * conj(p) */          \
            out[2 * i + 1] = gr * npi + gi * pr;                               \
        }                                                                     \
    }
SB_DEFINE_COMPLEX_LOOP(sb_C64_portable, float)
SB_DEFINE_COMPLEX_LOOP(sb_C128_portable, double)
#endif

/* The one-byte loops ask for their inputs' lines this many bytes ahead.  At
 * 1e8 elements the core's own prefetchers fall behind those loops' work: on
 * the Xeon (2 threads, against the bandwidth floor) the computed loop went
 * from 1.95x the floor's time to 1.55x (E4M3FN) and 2.07x to 1.66x (E5M2),
 * the table loop from 2.35x to 1.95x and 2.72x to 2.07x; 1e5 and 1e7 did
 * not move, nor did 512 to 4096 bytes ahead (benchmarks/NOTES.md, 36).
 * A prefetch never faults, so one past an array's end is harmless. */
enum { SB_BYTE_PREFETCH = 2048 };

SB_ALWAYS_INLINE void sb_prefetch_inputs(const uint8_t *g, const uint8_t *y)
{
#if defined(__GNUC__) /* gcc and clang; the addresses as integers, so that no
                       * pointer leaves its array */
    __builtin_prefetch((const void *)((uintptr_t)g + SB_BYTE_PREFETCH), 0, 3);
    __builtin_prefetch((const void *)((uintptr_t)y + SB_BYTE_PREFETCH), 0, 3);
#else
    (void)g, (void)y;
#endif
}

/* ---- one-byte dtypes: a table of every result ------------------------------
 * A one-byte dtype's loops read each of its 2^16 (g, y) results from a 64
 * KiB table indexed by g << 8 | y (sigmoid outputs in [0, 1) share a few
 * lines of a g's row), made once at import by its scalar loop below: exact
 * by construction, the same bits on every ISA, no floating-point flag
 * raised (and _fpflags.h restores the caller's anyway).  Computing took
 * 0.55-0.70 ns an element on Zen 3 in cache (AVX2), this 0.35-0.38; on a
 * Sapphire-Rapids-class Xeon the table loop takes 0.20-0.23, and the
 * AVX512-VBMI loop below (the avx512vbmi ISA) computes in 0.16-0.19, so
 * that ISA computes and every other reads the table (NOTES.md, 29, 33). */
static uint8_t sb_tables[SB_NUM_TABLES > 0 ? SB_NUM_TABLES : 1][1 << 16];

/* n results from `table`.  On x86 two byte unpacks (SSE2) make the indices
 * of 16 pairs, read as four 64-bit words of four: per element a shift, a
 * zero-extension, the load and a byte store (AVX2's vpgatherdd, 7 cycles
 * for 8, and the plain-C loop below were slower).  All 16 pairs are loaded
 * before a result is stored, so out may be g or y, or lie behind them. */
SB_ALWAYS_INLINE void sb_table_loop(const uint8_t *table, const void *gp, const void *yp,
                                    void *op, ptrdiff_t n)
{
    const uint8_t *g = (const uint8_t *)gp, *y = (const uint8_t *)yp;
    uint8_t *out = (uint8_t *)op;
    ptrdiff_t i = 0;
#if SB_X86_DISPATCH
    for (; i + 16 <= n; i += 16) {
        if ((i & 63) == 0) sb_prefetch_inputs(g + i, y + i); /* once a line */
        const __m128i gb = _mm_loadu_si128((const __m128i *)(g + i));
        const __m128i yb = _mm_loadu_si128((const __m128i *)(y + i));
        const __m128i lo = _mm_unpacklo_epi8(yb, gb), hi = _mm_unpackhi_epi8(yb, gb);
        const uint64_t w[4] = {(uint64_t)_mm_cvtsi128_si64(lo),
                               (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(lo, lo)),
                               (uint64_t)_mm_cvtsi128_si64(hi),
                               (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(hi, hi))};
        for (int k = 0; k < 4; k++) {
            out[i + 4 * k] = table[(uint16_t)w[k]];
            out[i + 4 * k + 1] = table[(uint16_t)(w[k] >> 16)];
            out[i + 4 * k + 2] = table[(uint16_t)(w[k] >> 32)];
            out[i + 4 * k + 3] = table[w[k] >> 48];
        }
    }
#endif
    for (; i < n; i++) out[i] = table[(unsigned)g[i] << 8 | y[i]];
}

/* Every narrow dtype's loop from its scalar conversions: widen, compute in
 * float32, round once.  The portable loop of each (a one-byte dtype's reads
 * its table, which this loop fills), and on x86 the loop of a dtype without
 * a fast path, which the compiler vectorises for each instruction set's
 * target (_isa_loops.h). */
#define SB_NARROW_LOOP(K, name, size, widen, round)                             \
    SB_ALWAYS_INLINE void sb_narrow_loop_##K(const void *gp, const void *yp, void *op, \
                                             ptrdiff_t n)                       \
    {                                                                           \
        const SB_STORAGE(size) *g = gp, *y = yp;                                 \
        SB_STORAGE(size) *out = op;                                              \
        for (ptrdiff_t i = 0; i < n; i++)                                        \
            out[i] = round(sb_grad_f32_ordered(widen(g[i]), widen(y[i])));               \
    }                                                                           \
    static void sb_##K##_portable(const void *g, const void *y, void *out, ptrdiff_t n) \
    {                                                                           \
        const int t = sb_kind_table[SB_KIND_##K];                                \
        if (t >= 0) sb_table_loop(sb_tables[t], g, y, out, n);                   \
        else sb_narrow_loop_##K(g, y, out, n);                                   \
    }
SB_NARROW_DTYPES(SB_NARROW_LOOP)
#undef SB_NARROW_LOOP

/* Every table, by its dtype's scalar loop (row a: g = a, y = 0..255).  Not
 * inlined, so that no arithmetic leaves sb_tables_fill's default floating-
 * point environment, where the conversions are exact (_half.h). */
static SB_NOINLINE void sb_tables_compute(void)
{
    uint8_t g[256], y[256];
    for (int a = 0; a < 256; a++) {
        memset(g, a, sizeof g);
        for (int b = 0; b < 256; b++) y[b] = (uint8_t)b;
#define SB_TABLE_ROW(K, t, E, M, B, fn) sb_narrow_loop_##K(g, y, sb_tables[t] + 256 * a, 256);
        SB_TABLE_DTYPES(SB_TABLE_ROW)
#undef SB_TABLE_ROW
    }
}

/* Once, at import (_dispatch.h); the caller's environment is restored. */
static void sb_tables_fill(void)
{
    const sb_fpenv_t env = sb_fpenv_default();
    sb_tables_compute();
    sb_fpenv_restore(env);
}

/* The element of a narrow dtype at p, widened to float32 (exactly), for a
 * wider computation (_fused.pxd). */
static inline float sb_narrow_to_f32(int kind, const void *p)
{
#define SB_NARROW_WIDEN(K, name, size, widen, round)                               \
    if (kind == SB_KIND_##K) return widen(*(const SB_STORAGE(size) *)p);
    SB_NARROW_DTYPES(SB_NARROW_WIDEN)
#undef SB_NARROW_WIDEN
    return 0.0f;
}

/* f, which the narrow dtype `kind` holds exactly, stored at p in it: a
 * narrower input of a narrow computation (float8 into bfloat16, say). */
static inline void sb_narrow_from_f32(int kind, float f, void *p)
{
#define SB_NARROW_ROUND(K, name, size, widen, round)                               \
    if (kind == SB_KIND_##K) *(SB_STORAGE(size) *)p = round(f);
    SB_NARROW_DTYPES(SB_NARROW_ROUND)
#undef SB_NARROW_ROUND
}

/* ---- x86: AVX2 and AVX-512, one definition for both ---------------------- */

#if SB_X86_DISPATCH

/* The bytes of [k, k + 64) that lie below `bytes`, as a mask of 64. */
SB_ALWAYS_INLINE uint64_t sb_byte_mask(size_t bytes, size_t k)
{
    return bytes >= k + 64 ? ~(uint64_t)0 : bytes > k ? ((uint64_t)1 << (bytes - k)) - 1 : 0;
}

/* sb_tail_copied with AVX512BW's masked loads and stores, which touch only
 * the tail's bytes and call nothing: memcpy's calls and the loads that
 * straddle its stores took 10% of a 1,000-element float16 call (NOTES.md). */
SB_AVX512 SB_ALWAYS_INLINE void sb_tail_masked(const void *g, const void *y, void *out,
                                             size_t bytes, sb_block_fn block)
{
    __m512i bg[SB_MAX_BLOCK_BYTES / 64], by[SB_MAX_BLOCK_BYTES / 64], bo[SB_MAX_BLOCK_BYTES / 64];
    for (size_t k = 0; k < SB_MAX_BLOCK_BYTES / 64; k++) {
        const uint64_t m = sb_byte_mask(bytes, 64 * k);
        bg[k] = m ? _mm512_maskz_loadu_epi8(m, (const char *)g + 64 * k) : _mm512_setzero_si512();
        by[k] = m ? _mm512_maskz_loadu_epi8(m, (const char *)y + 64 * k) : _mm512_setzero_si512();
    }
    block(bg, by, bo);
    for (size_t k = 0; k < SB_MAX_BLOCK_BYTES / 64; k++) {
        const uint64_t m = sb_byte_mask(bytes, 64 * k);
        if (m) _mm512_mask_storeu_epi8((char *)out + 64 * k, m, bo[k]);
    }
}

#if SB_HAVE_AVX512VBMI
/* ---- one-byte dtypes, computed: AVX512-VBMI, -VBMI2 and GFNI ----------------
 *
 * 64 pairs of codes a block, every result computed once and exactly:
 *
 * - widen: two vpermi2b read the high and low bytes of each code's float32
 *   from 128-byte tables of its 7-bit magnitude (the top 16 bits: a one-byte
 *   format is a bfloat16; NaN as the quiet NaN), the sign ORed in; byte
 *   unpacks pair them, and a shift or a mask makes each pair a float32:
 *   four vectors of 16, the even and odd elements of each 128-bit lane's
 *   first and last 8 (four vpermt2b a vector could place them in element
 *   order, but with a register copy each and all on port 5 that loop took
 *   0.20-0.22 ns an element in cache, this one 0.17).
 * - the formula, exact: (1 - y) has at most 10 (E4M3) or 17 (E5M2)
 *   significant bits and g and y 4 or 3, so (1 - y) * y and g times it fit
 *   float32's 24 and nothing rounds.  The order of the products then
 *   matters only for NaN: g is the first operand of the last one (an asm
 *   vmulps, which the compiler cannot commute), and x86 returns the first
 *   NaN, g's when both are, as the scalar loop does.  The subtraction and
 *   the rounding add have their rounding written in (RNE, no flags), and no
 *   value is subnormal in float32, so MXCSR's mode and denormal flags do
 *   not change a bit.
 * - round once, by the float adder: |r| (vrangeps, clamped at the first
 *   value that rounds to the all-ones magnitude, 480 for E4M3FN, or to 2^16,
 *   inf, for E5M2; a NaN clamps there too), plus K = 2^(e - M + 23), where e
 *   is |r|'s exponent or the format's least normal one if greater: the
 *   sum's last place is the format's quantum at |r|, and the adder rounds
 *   to it, to nearest-even.  K comes from a table by e (vpermd, or vpermt2d
 *   for E5M2's 31 exponents), with the code's exponent field added below its
 *   mantissa (an even number, which keeps a tie's parity), so the sum's low
 *   byte is the code.
 * - sign and pack: vpshldd puts r's sign below the code's 7 bits, two
 *   vpermt2b gather the 64 low bytes back in element order, and a GF(2)
 *   affine rotates each byte right by one.  An E5M2 NaN (vfpclassps)
 *   adds its code's top mantissa bit to K: |r| clamps to 2^16 exactly, and
 *   the sum is inf's code with that bit.
 *
 * The hot loop is 68 instructions a block (E4M3FN; 79 for E5M2), about 30
 * cycles on ports 0 and 5 (llvm-mca, icelake-server), where the table loop
 * has a load and a byte store an element (benchmarks/NOTES.md, 33). */
typedef struct {
    uint8_t hi[128], lo[128]; /* the float32 of each magnitude code: bits 31-24, 23-16 */
    uint32_t k[32];           /* K by r's exponent less the least normal one */
    uint32_t big;             /* |r| is clamped here */
    uint8_t pack[64];         /* vpermt2b's indices that put the codes back in order */
} sb_minifloat_consts;

static sb_minifloat_consts sb_minifloat_vbmi[SB_NUM_TABLES > 0 ? SB_NUM_TABLES : 1];

/* The constants of a format (sb_minifloat_to_f32's parameters). */
static void sb_minifloat_vbmi_fill(sb_minifloat_consts *c, const int E, const int M, const int B,
                                   const int fn)
{
    for (uint32_t m = 0; m < 128; m++) {
        uint32_t u = sb_f32_to_bits(sb_minifloat_to_f32(m, E, M, B, fn));
        if (u > 0x7F800000u) u = 0x7FC00000u;
        c->hi[m] = (uint8_t)(u >> 24);
        c->lo[m] = (uint8_t)(u >> 16);
    }
    const int emin = 1 - B; /* the least normal exponent */
    for (int i = 0; i < 32; i++) {
        const int biased = emin + i - M + 23 + 127;
        c->k[i] = biased > 0 && biased < 255 ? ((uint32_t)biased << 23) + ((uint32_t)i << M) : 0;
    }
    /* fn: the all-ones magnitude's value were it finite; else 2^(emax + 1) */
    const int top = (1 << E) - 1 - B;
    c->big = fn ? ((uint32_t)(top + 127) << 23) | (((1u << M) - 1) << (23 - M))
                : (uint32_t)(top + 127) << 23;
    /* pack: byte 16L + j (j < 8) is element 16L + j of the block, byte 0 of
     * float 4L + j / 2 of s[0] (j even: index 16L + 4 (j / 2)) or of s[1]
     * (j odd: 64 more); bytes 16L + 8 + j likewise from s[2] and s[3] */
    for (int b = 0; b < 64; b++) {
        const int lane = b / 16, j = b % 8;
        c->pack[b] = (uint8_t)(16 * lane + 4 * (j / 2) + (j & 1 ? 64 : 0));
    }
}

/* Every one-byte dtype's, once, at import (_dispatch.h). */
static void sb_minifloat_vbmi_init(void)
{
#define SB_VBMI_FILL(K, t, E, M, B, fn) sb_minifloat_vbmi_fill(&sb_minifloat_vbmi[t], E, M, B, fn);
    SB_TABLE_DTYPES(SB_VBMI_FILL)
#undef SB_VBMI_FILL
}

typedef struct {
    __m512i hi0, hi1, lo0, lo1, k0, k1, pack, upper, base, sign8, ror1, nanbit;
    __m512 one, big;
} sb_minifloat_regs;

/* r = a * b, a the first operand: the compiler may swap a commutative
 * multiply's operands, and x86 returns the first NaN.  No rounding is
 * written in: the loops' products are exact. */
SB_AVX512VBMI SB_ALWAYS_INLINE __m512 sb_mul_ordered_512(__m512 a, __m512 b)
{
    __m512 r;
    __asm__("vmulps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
    return r;
}

/* 64 results of a format of M mantissa bits, from 64 codes of g and y. */
SB_AVX512VBMI SB_ALWAYS_INLINE __m512i sb_minifloat_block_vbmi(const sb_minifloat_regs *c,
                                                            const int M, const int fn,
                                                            const int small_k, __m512i gb,
                                                            __m512i yb)
{
    /* an integer constant expression, as clang wants for _round_ intrinsics
     * (a const int is not one in C) */
    enum { rne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC };
    /* The float32's top bytes: hi | (code & 0x80), the sign; and lo */
    const __m512i ghi = _mm512_ternarylogic_epi32(_mm512_permutex2var_epi8(c->hi0, gb, c->hi1),
                                                  gb, c->sign8, 0xF8);
    const __m512i glo = _mm512_permutex2var_epi8(c->lo0, gb, c->lo1);
    const __m512i yhi = _mm512_ternarylogic_epi32(_mm512_permutex2var_epi8(c->hi0, yb, c->hi1),
                                                  yb, c->sign8, 0xF8);
    const __m512i ylo = _mm512_permutex2var_epi8(c->lo0, yb, c->lo1);
    /* Their 16-bit pairs (each 128-bit lane's first 8 elements, then its
     * last 8), and the floats: the even and the odd pairs */
    const __m512i gw[2] = {_mm512_unpacklo_epi8(glo, ghi), _mm512_unpackhi_epi8(glo, ghi)};
    const __m512i yw[2] = {_mm512_unpacklo_epi8(ylo, yhi), _mm512_unpackhi_epi8(ylo, yhi)};
    __m512i s[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m512 g = _mm512_castsi512_ps(k & 1 ? _mm512_and_si512(gw[k >> 1], c->upper)
                                                   : _mm512_slli_epi32(gw[k >> 1], 16));
        const __m512 y = _mm512_castsi512_ps(k & 1 ? _mm512_and_si512(yw[k >> 1], c->upper)
                                                   : _mm512_slli_epi32(yw[k >> 1], 16));
        const __m512 p = _mm512_mul_round_ps(_mm512_sub_round_ps(c->one, y, rne), y, rne);
        const __m512 r = sb_mul_ordered_512(g, p);
        /* |r| clamped: vrangeps's "absolute minimum" with the sign cleared,
         * which gives the number when one operand is a quiet NaN (IEEE
         * minNum; the Intel SDM's table for VRANGEPS): NaN clamps too */
        const __m512i a = _mm512_castps_si512(_mm512_range_ps(r, c->big, 0x0A));
        /* r's exponent less the least normal one, or 0 (a saturating
         * subtract on the high 16 bits) */
        const __m512i e = _mm512_srli_epi32(_mm512_subs_epu16(a, c->base), 23);
        __m512i kk = small_k ? _mm512_permutexvar_epi32(e, c->k0)
                             : _mm512_permutex2var_epi32(c->k0, e, c->k1);
        if (!fn) /* NaN: inf's code (the clamp's, exactly 2^(emax + 1)) with
                  * the top mantissa bit, an even number added to K */
            kk = _mm512_mask_add_epi32(kk, _mm512_fpclass_ps_mask(r, 0x81), kk, c->nanbit);
        const __m512 t = _mm512_add_round_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(kk), rne);
        s[k] = _mm512_shldi_epi32(_mm512_castps_si512(t), _mm512_castps_si512(r), 1);
    }
    /* byte 0 of each float, back in element order: the first 8 of each
     * 16 from s[0] and s[1], the last 8 from s[2] and s[3] */
    const __m512i lo = _mm512_permutex2var_epi8(s[0], c->pack, s[1]);
    const __m512i hi = _mm512_permutex2var_epi8(s[2], c->pack, s[3]);
    return _mm512_gf2p8affine_epi64_epi8(_mm512_mask_mov_epi64(lo, 0xAA, hi), c->ror1, 0);
}

/* n results of the format (E, M, B, fn), whose constants are c.  Each block
 * loads its 64 pairs before it stores, so out may be g or y, or lie behind
 * them; the last block's loads and store are masked. */
SB_AVX512VBMI SB_ALWAYS_INLINE void sb_minifloat_loop_vbmi(const sb_minifloat_consts *cc,
                                                          const int E, const int M, const int B,
                                                          const int fn, const void *gp,
                                                          const void *yp, void *op, ptrdiff_t n)
{
    const uint8_t *g = (const uint8_t *)gp, *y = (const uint8_t *)yp;
    uint8_t *out = (uint8_t *)op;
    sb_minifloat_regs c;
    c.hi0 = _mm512_loadu_si512(cc->hi);
    c.hi1 = _mm512_loadu_si512(cc->hi + 64);
    c.lo0 = _mm512_loadu_si512(cc->lo);
    c.lo1 = _mm512_loadu_si512(cc->lo + 64);
    c.k0 = _mm512_loadu_si512(cc->k);
    c.k1 = _mm512_loadu_si512(cc->k + 16);
    c.pack = _mm512_loadu_si512(cc->pack);
    c.upper = _mm512_set1_epi32((int)0xFFFF0000u);
    c.one = _mm512_set1_ps(1.0f);
    c.big = _mm512_castsi512_ps(_mm512_set1_epi32((int)cc->big));
    c.base = _mm512_set1_epi32((int)((uint32_t)(127 + 1 - B) << 23));
    c.sign8 = _mm512_set1_epi8((char)0x80);
    /* GF(2) affine: result bit i is bit i + 1 (mod 8) */
    c.ror1 = _mm512_set1_epi64(0x0204081020408001ll);
    c.nanbit = _mm512_set1_epi32(1 << (M - 1)); /* the code's top mantissa bit */
    /* K's table has (1 << E) - 1 entries (the clamp's exponent is the
     * greatest): E = 4 fits one register */
    const int small_k = (1 << E) - 1 <= 16;
    ptrdiff_t i = 0;
    for (; i + 64 <= n; i += 64) {
        sb_prefetch_inputs(g + i, y + i);
        _mm512_storeu_si512(out + i, sb_minifloat_block_vbmi(&c, M, fn, small_k,
                                                             _mm512_loadu_si512(g + i),
                                                             _mm512_loadu_si512(y + i)));
    }
    if (i < n) {
        const __mmask64 m = ((__mmask64)1 << (n - i)) - 1;
        _mm512_mask_storeu_epi8(out + i, m, sb_minifloat_block_vbmi(
            &c, M, fn, small_k, _mm512_maskz_loadu_epi8(m, g + i),
            _mm512_maskz_loadu_epi8(m, y + i)));
    }
}
#endif /* SB_HAVE_AVX512VBMI */

/* Every dtype's loop on each instruction set, made from the dtype table
 * by _dtype_codegen.py: the macros above, with the ISA's vectors, its
 * conversions and its blocked loops' tail. */
#include "_isa_loops.h"

#if SB_HAVE_AVX512BF16
/* avx512bf16: the avx512 loops, but bfloat16 rounded by vcvtne2ps2bf16 */
SB_DEFINE_BF16_BLOCK(sb_bf16_block_avx512bf16, SB_AVX512BF16, __m512, sb_bf16_widen_512,
                       sb_bf16_narrow_512bf16)
SB_AVX512BF16 static void sb_BF16_avx512bf16(const void *g, const void *y, void *out,
                                             ptrdiff_t n)
{
    sb_blocked(g, y, out, n, 2, 32, sb_bf16_block_avx512bf16, sb_tail_masked);
}
#endif
#endif /* SB_X86_DISPATCH */

#endif /* SIGMOID_BACKWARD_LOOPS_H */
