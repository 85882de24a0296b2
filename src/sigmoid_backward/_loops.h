/*
 * The arithmetic of sigmoid_backward on contiguous arrays, one loop per
 * dtype, compiled for four instruction sets:
 *
 *   portable    the build's baseline (SSE2 on x86-64; anything elsewhere);
 *   avx2        AVX2 + F16C;
 *   avx512      AVX-512 (F, BW, VL, DQ) + F16C, with the AVX2 non-temporal
 *               copy (_nontemporal.h);
 *   avx512bf16  avx512, with bfloat16 rounded by AVX512-BF16's
 *               vcvtne2ps2bf16;
 *
 * chosen at run time from what the CPU reports (_cpu.h, sb_select_isa).
 * Every ISA gives the same bits: the loops only use IEEE +, -, * and exact
 * conversions, the build pins -ffp-contract=off, and the only loops with a
 * product added to a product (complex) keep every product out of reach of
 * fused multiply-adds (see the complex section).
 *
 * - float32 / float64: g * (1 - y) * y, in that order; plain C, which GCC
 *   vectorises for each target.
 * - complex64 / complex128, as interleaved (re, im) pairs:
 *   g * conj((1 - y) * y), written out in real arithmetic exactly as NumPy
 *   evaluates complex - and * (C's complex * would call __mulsc3 and round
 *   differently); on x86, intrinsics on split real and imaginary parts
 *   for every ISA.
 * - float16 / bfloat16, as uint16 bits: widen to float32, compute as above,
 *   round once (_half.h).  GCC 12 does not vectorise float16 conversions,
 *   so the F16C versions are written with intrinsics; so are the bfloat16
 *   ones, which widen by unpacking with zero and round with the vector
 *   forms of sb_f32_to_bf16 in _half.h.
 *
 * out may be g or y itself (in place), or lie behind an input that it
 * overlaps (out[i] at or before g[i] in memory, as x[:-1] and x[1:]): the
 * loops load every element of a vector, or of a block, before they store
 * its results, and go forward.  Other overlaps are the caller's
 * (_kernels.pyx runs them one element at a time).
 */
#ifndef SIGMOID_BACKWARD_LOOPS_H
#define SIGMOID_BACKWARD_LOOPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_atomic.h"
#include "_half.h"
#include "_cpu.h"
#include "_nontemporal.h"

/* ---- the loops, written once ------------------------------------------- */

#define SB_REAL_LOOP(T)                                                     \
    const T one = 1;                                                        \
    for (ptrdiff_t i = 0; i < n; i++) out[i] = g[i] * (one - y[i]) * y[i];

/* n complex numbers, stored as 2n reals */
#define SB_COMPLEX_LOOP(T)                                                  \
    const T one = 1, zero = 0;                                              \
    for (ptrdiff_t i = 0; i < n; i++) {                                     \
        const T gr = g[2 * i], gi = g[2 * i + 1];                           \
        const T yr = y[2 * i], yi = y[2 * i + 1];                           \
        /* a = 1 - y, as NumPy subtracts complex(1, 0) - y */               \
        const T ar = one - yr, ai = zero - yi;                              \
        /* p = a * y; keep -imag(p), which is imag(conj(p)) */              \
        const T pr = ar * yr - ai * yi;                                     \
        const T npi = -(ar * yi + ai * yr);                                 \
        /* g * conj(p) */                                                   \
        out[2 * i] = gr * pr - gi * npi;                                    \
        out[2 * i + 1] = gr * npi + gi * pr;                                \
    }

#define SB_HALF_LOOP(to_f32, from_f32)                                      \
    const float one = 1;                                                    \
    for (ptrdiff_t i = 0; i < n; i++) {                                     \
        const float yf = to_f32(y[i]);                                      \
        out[i] = from_f32(to_f32(g[i]) * (one - yf) * yf);                  \
    }

/* One ISA's float32 and float64 loops.  `attr` is its target attribute. */
#define SB_DEFINE_REAL_LOOPS(isa, attr)                                                \
    attr static void sb_f32_##isa(const float *g, const float *y, float *out,          \
                                  ptrdiff_t n) { SB_REAL_LOOP(float) }                 \
    attr static void sb_f64_##isa(const double *g, const double *y, double *out,       \
                                  ptrdiff_t n) { SB_REAL_LOOP(double) }

typedef struct {
    const char *name;
    void (*f32)(const float *, const float *, float *, ptrdiff_t);
    void (*f64)(const double *, const double *, double *, ptrdiff_t);
    void (*c64)(const float *, const float *, float *, ptrdiff_t);
    void (*c128)(const double *, const double *, double *, ptrdiff_t);
    void (*f16)(const uint16_t *, const uint16_t *, uint16_t *, ptrdiff_t);
    void (*bf16)(const uint16_t *, const uint16_t *, uint16_t *, ptrdiff_t);
    void (*nt_copy)(void *, const void *, size_t);   /* _nontemporal.h */
} sb_loops_t;

/* name: the table's; isa: whose loops; bf16_isa, nt_isa: whose bfloat16
 * loop and non-temporal copy */
#define SB_LOOPS_TABLE(name, isa, bf16_isa, nt_isa)                             \
    {#name, sb_f32_##isa, sb_f64_##isa, sb_c64_##isa, sb_c128_##isa,            \
     sb_f16_##isa, sb_bf16_##bf16_isa, sb_nt_copy_##nt_isa}

/* ---- blocks of vectors --------------------------------------------------- */

/* n elements of `elem` scalars of type T, W elements at a time by `block`
 * (g, y, out pointers); the last n % W go through zero-padded buffers, so
 * that every element takes the same instructions (a scalar complex tail
 * compiled for an FMA-capable target could be fused, see below). */
#define SB_BLOCKED_LOOP(T, elem, W, block)                                  \
    ptrdiff_t i = 0;                                                        \
    for (; i + (W) <= n; i += (W))                                          \
        block(g + (elem) * i, y + (elem) * i, out + (elem) * i);            \
    if (i < n) {                                                            \
        T bg[(elem) * (W)] = {0}, by[(elem) * (W)] = {0}, bo[(elem) * (W)]; \
        const size_t bytes = (size_t)(n - i) * (elem) * sizeof(T);          \
        memcpy(bg, g + (elem) * i, bytes);                                  \
        memcpy(by, y + (elem) * i, bytes);                                  \
        block(bg, by, bo);                                                  \
        memcpy(out + (elem) * i, bo, bytes);                                \
    }

#if SB_X86_DISPATCH
/* ---- complex, with intrinsics ------------------------------------------

Every AVX-512 target has fused multiply-adds, and GCC 12 turns the plain-C
complex loop's a*b - c*d, a*b + c*d pair into vfmaddsub even under
-ffp-contract=off (half the results then differ in the last bit); it does
the same to the baseline loop in a build with -march=native.  So on x86
every ISA's complex loops are written with intrinsics (SSE2, the x86-64
baseline, for portable), and every product passes through SB_OPAQUE, an
empty asm that the compiler must assume changes the value: no compiler,
flag (-ffp-contract=fast, -march=native) or pattern matcher can fuse it
with the add or subtract that consumes it.  It emits no instruction.

The loops split two vectors of (re, im) pairs into a vector of real parts
and one of imaginary parts with in-lane shuffles, compute with vertical
operations only, in SB_COMPLEX_LOOP's order, and interleave the results
again: 6 shuffles per 2 vectors, where multiplying the pairs in place
needs 6 per vector (benchmarks/NOTES.md). */

#define SB_OPAQUE(v) __asm__("" : "+v"(v))

/* re + i im = g * conj((1 - y) * y) on split parts; P_ and S_ are the
 * intrinsics' prefix (_mm, _mm256, _mm512) and suffix (ps, pd). */
#define SB_COMPLEX_SPLIT(V, P_, S_, gr, gi, yr, yi, re, im)                        \
    const V ar = P_##_sub_##S_(P_##_set1_##S_(1), yr);                              \
    const V ai = P_##_sub_##S_(P_##_setzero_##S_(), yi);                            \
    V p1 = P_##_mul_##S_(ar, yr), p2 = P_##_mul_##S_(ai, yi);                       \
    V p3 = P_##_mul_##S_(ar, yi), p4 = P_##_mul_##S_(ai, yr);                       \
    SB_OPAQUE(p1); SB_OPAQUE(p2); SB_OPAQUE(p3); SB_OPAQUE(p4);                     \
    const V pr = P_##_sub_##S_(p1, p2);                                             \
    const V npi = P_##_xor_##S_(P_##_add_##S_(p3, p4), P_##_set1_##S_(-0.0));       \
    V q1 = P_##_mul_##S_(gr, pr), q2 = P_##_mul_##S_(gi, npi);                      \
    V q3 = P_##_mul_##S_(gr, npi), q4 = P_##_mul_##S_(gi, pr);                      \
    SB_OPAQUE(q1); SB_OPAQUE(q2); SB_OPAQUE(q3); SB_OPAQUE(q4);                     \
    const V re = P_##_sub_##S_(q1, q2), im = P_##_add_##S_(q3, q4);

/* One block: two vectors of pairs.  float: shuffle 0x88 / 0xDD takes the
 * even / odd floats of both, unpacklo / unpackhi interleaves back; double:
 * unpacklo / unpackhi both ways.  (Within 128-bit lanes, so the split order
 * is not the element order, but the interleave undoes it.) */
#define SB_COMPLEX_BLOCK(name, attr, T, V, P_, S_, split_re, split_im, W)          \
    attr static inline void name(const T *g, const T *y, T *out)                    \
    {                                                                               \
        const V g0 = P_##_loadu_##S_(g), g1 = P_##_loadu_##S_(g + W);               \
        const V y0 = P_##_loadu_##S_(y), y1 = P_##_loadu_##S_(y + W);               \
        const V gr = split_re(g0, g1), gi = split_im(g0, g1);                       \
        const V yr = split_re(y0, y1), yi = split_im(y0, y1);                       \
        SB_COMPLEX_SPLIT(V, P_, S_, gr, gi, yr, yi, re, im)                         \
        P_##_storeu_##S_(out, P_##_unpacklo_##S_(re, im));                          \
        P_##_storeu_##S_(out + W, P_##_unpackhi_##S_(re, im));                      \
    }

#define SB_SPLIT_RE_256(a, b) _mm256_shuffle_ps(a, b, 0x88)
#define SB_SPLIT_IM_256(a, b) _mm256_shuffle_ps(a, b, 0xDD)
#define SB_SPLIT_RE_512(a, b) _mm512_shuffle_ps(a, b, 0x88)
#define SB_SPLIT_IM_512(a, b) _mm512_shuffle_ps(a, b, 0xDD)
#define SB_SPLIT_RE_128(a, b) _mm_shuffle_ps(a, b, 0x88)
#define SB_SPLIT_IM_128(a, b) _mm_shuffle_ps(a, b, 0xDD)

#endif

/* ---- portable ----------------------------------------------------------- */

SB_DEFINE_REAL_LOOPS(portable, )
#if SB_X86_DISPATCH
SB_COMPLEX_BLOCK(sb_c64_block_sse2, , float, __m128, _mm, ps,
                 SB_SPLIT_RE_128, SB_SPLIT_IM_128, 4)
SB_COMPLEX_BLOCK(sb_c128_block_sse2, , double, __m128d, _mm, pd,
                 _mm_unpacklo_pd, _mm_unpackhi_pd, 2)
static void sb_c64_portable(const float *g, const float *y, float *out, ptrdiff_t n)
{
    SB_BLOCKED_LOOP(float, 2, 4, sb_c64_block_sse2)
}
static void sb_c128_portable(const double *g, const double *y, double *out, ptrdiff_t n)
{
    SB_BLOCKED_LOOP(double, 2, 2, sb_c128_block_sse2)
}
#else
static void sb_c64_portable(const float *g, const float *y, float *out, ptrdiff_t n)
{
    SB_COMPLEX_LOOP(float)
}
static void sb_c128_portable(const double *g, const double *y, double *out, ptrdiff_t n)
{
    SB_COMPLEX_LOOP(double)
}
#endif
static void sb_f16_portable(const uint16_t *g, const uint16_t *y, uint16_t *out, ptrdiff_t n)
{
    SB_HALF_LOOP(sb_f16_to_f32, sb_f32_to_f16)
}
static void sb_bf16_portable(const uint16_t *g, const uint16_t *y, uint16_t *out, ptrdiff_t n)
{
    SB_HALF_LOOP(sb_bf16_to_f32, sb_f32_to_bf16)
}

static const sb_loops_t sb_loops_portable =
    SB_LOOPS_TABLE(portable, portable, portable, portable);

/* ---- x86: AVX2 and AVX-512 ---------------------------------------------- */

#if SB_X86_DISPATCH

SB_DEFINE_REAL_LOOPS(avx2, SB_AVX2)
SB_DEFINE_REAL_LOOPS(avx512, SB_AVX512)

/* the last argument: scalars per vector, i.e. complex numbers per block */
SB_COMPLEX_BLOCK(sb_c64_block_avx2, SB_AVX2, float, __m256, _mm256, ps,
                 SB_SPLIT_RE_256, SB_SPLIT_IM_256, 8)
SB_COMPLEX_BLOCK(sb_c128_block_avx2, SB_AVX2, double, __m256d, _mm256, pd,
                 _mm256_unpacklo_pd, _mm256_unpackhi_pd, 4)
SB_COMPLEX_BLOCK(sb_c64_block_avx512, SB_AVX512, float, __m512, _mm512, ps,
                 SB_SPLIT_RE_512, SB_SPLIT_IM_512, 16)
SB_COMPLEX_BLOCK(sb_c128_block_avx512, SB_AVX512, double, __m512d, _mm512, pd,
                 _mm512_unpacklo_pd, _mm512_unpackhi_pd, 8)

SB_AVX2 static void sb_c64_avx2(const float *g, const float *y, float *out, ptrdiff_t n)
{
    SB_BLOCKED_LOOP(float, 2, 8, sb_c64_block_avx2)
}
SB_AVX2 static void sb_c128_avx2(const double *g, const double *y, double *out, ptrdiff_t n)
{
    SB_BLOCKED_LOOP(double, 2, 4, sb_c128_block_avx2)
}
SB_AVX512 static void sb_c64_avx512(const float *g, const float *y, float *out, ptrdiff_t n)
{
    SB_BLOCKED_LOOP(float, 2, 16, sb_c64_block_avx512)
}
SB_AVX512 static void sb_c128_avx512(const double *g, const double *y, double *out, ptrdiff_t n)
{
    SB_BLOCKED_LOOP(double, 2, 8, sb_c128_block_avx512)
}

/* ---- float16, with F16C -------------------------------------------------- */

/* F16C's scalar rounding, for the tails of the vector loops below */
SB_AVX2 static inline uint16_t sb_cvtss_sh(float f)
{
    return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}

SB_AVX2 static void sb_f16_avx2(const uint16_t *g, const uint16_t *y, uint16_t *out, ptrdiff_t n)
{
    const __m256 vone = _mm256_set1_ps(1.0f);
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 gv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + i)));
        const __m256 yv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(y + i)));
        const __m256 r = _mm256_mul_ps(_mm256_mul_ps(gv, _mm256_sub_ps(vone, yv)), yv);
        _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
    }
    g += i; y += i; out += i; n -= i;
    SB_HALF_LOOP(_cvtsh_ss, sb_cvtss_sh)
}

SB_AVX512 static void sb_f16_avx512(const uint16_t *g, const uint16_t *y, uint16_t *out, ptrdiff_t n)
{
    const __m512 vone = _mm512_set1_ps(1.0f);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 gv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + i)));
        const __m512 yv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(y + i)));
        const __m512 r = _mm512_mul_ps(_mm512_mul_ps(gv, _mm512_sub_ps(vone, yv)), yv);
        _mm256_storeu_si256((__m256i *)(out + i), _mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
    }
    g += i; y += i; out += i; n -= i;
    SB_HALF_LOOP(_cvtsh_ss, sb_cvtss_sh)
}

/* ---- bfloat16, with intrinsics -------------------------------------------

A bfloat16 is the high half of a float32, so widening is an unpack with a
zero vector (one instruction per 8 or 16 values: the low half of each
float is zero).  The rounding back is sb_f32_to_bf16 in vector form
(_half.h): integer arithmetic with AVX2 and AVX-512, vcvtne2ps2bf16 with a
fix-up for subnormal results with AVX512-BF16.  (GCC's vectorisation of the
plain-C loop widened with vpmovzxwd + shift and narrowed with vpermt2w, about
twice the instructions.) */

#define SB_BF16_BLOCK(name, attr, V, VI, P_, SI_, round)                             \
    attr static inline void name(const uint16_t *g, const uint16_t *y, uint16_t *out) \
    {                                                                                \
        const VI zero = P_##_setzero_##SI_();                                        \
        const VI gw = P_##_loadu_##SI_((const VI *)g), yw = P_##_loadu_##SI_((const VI *)y); \
        const V g0 = P_##_cast##SI_##_ps(P_##_unpacklo_epi16(zero, gw));            \
        const V g1 = P_##_cast##SI_##_ps(P_##_unpackhi_epi16(zero, gw));            \
        const V y0 = P_##_cast##SI_##_ps(P_##_unpacklo_epi16(zero, yw));            \
        const V y1 = P_##_cast##SI_##_ps(P_##_unpackhi_epi16(zero, yw));            \
        const V one = P_##_set1_ps(1.0f);                                            \
        const V r0 = P_##_mul_ps(P_##_mul_ps(g0, P_##_sub_ps(one, y0)), y0);           \
        const V r1 = P_##_mul_ps(P_##_mul_ps(g1, P_##_sub_ps(one, y1)), y1);           \
        P_##_storeu_##SI_((VI *)out, round(r0, r1));                                 \
    }

SB_BF16_BLOCK(sb_bf16_block_avx2, SB_AVX2, __m256, __m256i, _mm256, si256, sb_bf16_round_avx2)
SB_BF16_BLOCK(sb_bf16_block_avx512, SB_AVX512, __m512, __m512i, _mm512, si512,
              sb_bf16_round_avx512)

SB_AVX2 static void sb_bf16_avx2(const uint16_t *g, const uint16_t *y, uint16_t *out, ptrdiff_t n)
{
    SB_BLOCKED_LOOP(uint16_t, 1, 16, sb_bf16_block_avx2)
}
SB_AVX512 static void sb_bf16_avx512(const uint16_t *g, const uint16_t *y, uint16_t *out,
                                     ptrdiff_t n)
{
    SB_BLOCKED_LOOP(uint16_t, 1, 32, sb_bf16_block_avx512)
}

static const sb_loops_t sb_loops_avx2 = SB_LOOPS_TABLE(avx2, avx2, avx2, avx2);
static const sb_loops_t sb_loops_avx512 = SB_LOOPS_TABLE(avx512, avx512, avx512, avx2);

#if SB_HAVE_AVX512BF16
/* avx512bf16: the avx512 loops, but bfloat16 rounded by vcvtne2ps2bf16 */
SB_BF16_BLOCK(sb_bf16_block_avx512bf16, SB_AVX512BF16, __m512, __m512i, _mm512, si512,
              sb_bf16_round_avx512bf16)

SB_AVX512BF16 static void sb_bf16_avx512bf16(const uint16_t *g, const uint16_t *y,
                                             uint16_t *out, ptrdiff_t n)
{
    SB_BLOCKED_LOOP(uint16_t, 1, 32, sb_bf16_block_avx512bf16)
}

static const sb_loops_t sb_loops_avx512bf16 =
    SB_LOOPS_TABLE(avx512bf16, avx512, avx512bf16, avx2);
#endif
#endif /* SB_X86_DISPATCH */

/* The loops in use; sb_select_isa changes them, and a kernel call reads them
 * once (sb_loops_in_use), maybe while another thread selects others. */
static const void *sb_loops = &sb_loops_portable;

static inline const sb_loops_t *sb_loops_in_use(void)
{
    return (const sb_loops_t *)sb_load_ptr(&sb_loops);
}

/* The ISAs this build has, slowest first, and their loops. */
static const struct { const char *name; const sb_loops_t *loops; } sb_isas[] = {
    {"portable", &sb_loops_portable},
#if SB_X86_DISPATCH
    {"avx2", &sb_loops_avx2},
    {"avx512", &sb_loops_avx512},
#if SB_HAVE_AVX512BF16
    {"avx512bf16", &sb_loops_avx512bf16},
#endif
#endif
};
#define SB_NUM_ISAS (sizeof(sb_isas) / sizeof(sb_isas[0]))

/* Can this CPU (and build) run isa ("portable", "avx2", "avx512" or
 * "avx512bf16")? */
static int sb_isa_supported(const char *isa)
{
    if (strcmp(isa, "portable") == 0) return 1;
#if SB_X86_DISPATCH
    const int f = sb_cpu_features();
    const int avx2 = (f & SB_CPU_AVX2) && (f & SB_CPU_F16C);
    const int avx512 = avx2 && (f & SB_CPU_AVX512);
    if (strcmp(isa, "avx2") == 0) return avx2;
    if (strcmp(isa, "avx512") == 0) return avx512;
    if (strcmp(isa, "avx512bf16") == 0)
        return SB_HAVE_AVX512BF16 && avx512 && (f & SB_CPU_AVX512_BF16);
#endif
    return 0;
}

/* Use the loops of isa, or with NULL the best this CPU runs.  Returns the
 * name of the loops now in use, or NULL (nothing changed) when isa is
 * unknown or this CPU cannot run it. */
static const char *sb_select_isa(const char *isa)
{
    const sb_loops_t *choice = NULL;
    for (size_t k = 0; k < SB_NUM_ISAS; k++) {
        if (!sb_isa_supported(sb_isas[k].name)) continue;
        if (isa == NULL || strcmp(isa, sb_isas[k].name) == 0) choice = sb_isas[k].loops;
    }
    if (choice == NULL) return NULL;
    sb_store_ptr(&sb_loops, choice);
    return choice->name;
}

#endif /* SIGMOID_BACKWARD_LOOPS_H */
