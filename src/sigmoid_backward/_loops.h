/*
 * The arithmetic of sigmoid_backward on contiguous arrays, one loop per
 * dtype, written once and compiled for three instruction sets:
 *
 *   portable  the build's baseline (SSE2 on x86-64; anything elsewhere);
 *   avx2      AVX2 + F16C;
 *   avx512    AVX-512 (F, BW, VL, DQ) + F16C, with the AVX2 complex loops
 *             and non-temporal copy;
 *
 * chosen at run time from what the CPU reports (_cpu.h, sb_select_isa).  Every ISA
 * gives the same bits: the loops only use IEEE +, -, * and exact
 * conversions, the build pins -ffp-contract=off, and the only loops with a
 * product added to a product (complex) are never compiled for a target
 * with FMA (see the AVX-512 section).
 *
 * - float32 / float64: g * (1 - y) * y, in that order.
 * - complex64 / complex128, as interleaved (re, im) pairs:
 *   g * conj((1 - y) * y), written out in real arithmetic exactly as NumPy
 *   evaluates complex - and * (C's complex * would call __mulsc3 and round
 *   differently).  GCC vectorises the pair loop with shuffles.
 * - float16 / bfloat16, as uint16 bits: widen to float32, compute as above,
 *   round once (_half.h).  GCC 12 does not vectorise float16 conversions, so
 *   the F16C versions are written with intrinsics; the bfloat16 bit
 *   arithmetic vectorises as it is.
 *
 * out may be g or y itself (in place), but must not overlap them otherwise.
 */
#ifndef SIGMOID_BACKWARD_LOOPS_H
#define SIGMOID_BACKWARD_LOOPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* One ISA's loops.  `attr` is its target attribute. */
#define SB_DEFINE_REAL_LOOPS(isa, attr)                                                \
    attr static void sb_f32_##isa(const float *g, const float *y, float *out,          \
                                  ptrdiff_t n) { SB_REAL_LOOP(float) }                 \
    attr static void sb_f64_##isa(const double *g, const double *y, double *out,       \
                                  ptrdiff_t n) { SB_REAL_LOOP(double) }                \
    attr static void sb_bf16_##isa(const uint16_t *g, const uint16_t *y, uint16_t *out,\
                                   ptrdiff_t n) { SB_HALF_LOOP(sb_bf16_to_f32, sb_f32_to_bf16) }

#define SB_DEFINE_COMPLEX_LOOPS(isa, attr)                                             \
    attr static void sb_c64_##isa(const float *g, const float *y, float *out,          \
                                  ptrdiff_t n) { SB_COMPLEX_LOOP(float) }              \
    attr static void sb_c128_##isa(const double *g, const double *y, double *out,      \
                                   ptrdiff_t n) { SB_COMPLEX_LOOP(double) }

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

/* complex_isa, nt_isa: whose complex loops (see the AVX-512 section) and
 * non-temporal copy */
#define SB_LOOPS_TABLE(isa, complex_isa, nt_isa)                                \
    {#isa, sb_f32_##isa, sb_f64_##isa, sb_c64_##complex_isa, sb_c128_##complex_isa, \
     sb_f16_##isa, sb_bf16_##isa, sb_nt_copy_##nt_isa}

/* ---- portable ----------------------------------------------------------- */

SB_DEFINE_REAL_LOOPS(portable, )
SB_DEFINE_COMPLEX_LOOPS(portable, )
static void sb_f16_portable(const uint16_t *g, const uint16_t *y, uint16_t *out, ptrdiff_t n)
{
    SB_HALF_LOOP(sb_f16_to_f32, sb_f32_to_f16)
}

static const sb_loops_t sb_loops_portable = SB_LOOPS_TABLE(portable, portable, portable);

/* ---- x86: AVX2 and AVX-512 ---------------------------------------------- */

#if SB_X86_DISPATCH

SB_DEFINE_REAL_LOOPS(avx2, SB_AVX2)
SB_DEFINE_COMPLEX_LOOPS(avx2, SB_AVX2)
/* No complex loops for AVX-512: every AVX-512 target has fused multiply-adds,
 * and GCC 12 fuses the complex a*b - c*d, a*b + c*d pair into vfmaddsub even
 * under -ffp-contract=off (half the results then differ in the last bit).
 * The AVX2 target has no FMA to fuse with, and the complex loops are limited
 * by memory bandwidth at the sizes where the width would matter.  (A build
 * with -march=native or -mfma in CFLAGS would expose the portable and AVX2
 * complex loops to the same bug; tests/test_kernel_paths.py would fail.) */
SB_DEFINE_REAL_LOOPS(avx512, SB_AVX512)

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

static const sb_loops_t sb_loops_avx2 = SB_LOOPS_TABLE(avx2, avx2, avx2);
static const sb_loops_t sb_loops_avx512 = SB_LOOPS_TABLE(avx512, avx2, avx2);
#endif

/* The loops in use; sb_select_isa changes them. */
static const sb_loops_t *sb_loops = &sb_loops_portable;

/* Can this CPU run isa ("portable", "avx2" or "avx512")? */
static int sb_isa_supported(const char *isa)
{
    if (strcmp(isa, "portable") == 0) return 1;
#if SB_X86_DISPATCH
    const int f = sb_cpu_features();
    const int avx2 = (f & SB_CPU_AVX2) && (f & SB_CPU_F16C);
    if (strcmp(isa, "avx2") == 0) return avx2;
    if (strcmp(isa, "avx512") == 0) return avx2 && (f & SB_CPU_AVX512);
#endif
    return 0;
}

/* Use the loops of isa, or with NULL the best this CPU runs.  Returns the
 * name of the loops now in use, or NULL (nothing changed) when isa is
 * unknown or this CPU cannot run it. */
static const char *sb_select_isa(const char *isa)
{
    const sb_loops_t *choice = NULL;
    if (isa == NULL) {
        choice = &sb_loops_portable;
#if SB_X86_DISPATCH
        if (sb_isa_supported("avx512")) choice = &sb_loops_avx512;
        else if (sb_isa_supported("avx2")) choice = &sb_loops_avx2;
#endif
    } else if (sb_isa_supported(isa)) {
        choice = &sb_loops_portable;
#if SB_X86_DISPATCH
        if (strcmp(isa, "avx2") == 0) choice = &sb_loops_avx2;
        if (strcmp(isa, "avx512") == 0) choice = &sb_loops_avx512;
#endif
    }
    if (choice == NULL) return NULL;
    sb_loops = choice;
    return choice->name;
}

#endif /* SIGMOID_BACKWARD_LOOPS_H */
