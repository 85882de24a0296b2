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
 *   fills once (_loops_table.h); with AVX512-VBMI, -VBMI2 and GFNI
 *   (avx512vbmi) computed, 64 a block, exactly (_loops_vbmi.h).
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

#include "_loops_table.h" /* float8: a table of every result */

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

#include "_loops_vbmi.h" /* float8 computed, on AVX512-VBMI */

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
