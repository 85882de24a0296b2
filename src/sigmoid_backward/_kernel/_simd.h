/*
 * The vector operations of the x86 loops (_loops.h), named once for every
 * vector type, in the style of NumPy's universal intrinsics: v_mul(a, b)
 * is _mm_mul_ps, _mm256_mul_pd, _mm512_mul_ps, ... as a and b are __m128,
 * __m256d, __m512, ... (C11 _Generic picks the intrinsic), so a loop body
 * is written once for every width, and each intrinsic is written out here,
 * where grep finds it.  The caller's target attribute must allow the
 * width it uses.
 *
 * Then the 16-bit formats: float16 (F16C's conversions) and bfloat16
 * (widened by unpacking with zero, rounded by the vector forms of
 * sb_f32_to_bf16), each as a widen and a narrow of two float32 vectors.
 */
#ifndef SIGMOID_BACKWARD_SIMD_H
#define SIGMOID_BACKWARD_SIMD_H

#include "_cpu.h"
#include "_half.h"

#if SB_X86_DISPATCH

/* ---- arithmetic, on any vector type -------------------------------------- */

#define SB_BY_TYPE(x, f128, d128, f256, d256, f512, d512)                        \
    _Generic((x), __m128: f128, __m128d: d128, __m256: f256, __m256d: d256,       \
             __m512: f512, __m512d: d512)

#define v_add(a, b) SB_BY_TYPE(a, _mm_add_ps, _mm_add_pd, _mm256_add_ps, _mm256_add_pd, \
                               _mm512_add_ps, _mm512_add_pd)(a, b)
#define v_sub(a, b) SB_BY_TYPE(a, _mm_sub_ps, _mm_sub_pd, _mm256_sub_ps, _mm256_sub_pd, \
                               _mm512_sub_ps, _mm512_sub_pd)(a, b)
#define v_mul(a, b) SB_BY_TYPE(a, _mm_mul_ps, _mm_mul_pd, _mm256_mul_ps, _mm256_mul_pd, \
                               _mm512_mul_ps, _mm512_mul_pd)(a, b)
#define v_xor(a, b) SB_BY_TYPE(a, _mm_xor_ps, _mm_xor_pd, _mm256_xor_ps, _mm256_xor_pd, \
                               _mm512_xor_ps, _mm512_xor_pd)(a, b)
/* x in every lane of a vector of like's type */
#define v_set1(like, x) SB_BY_TYPE(like, _mm_set1_ps, _mm_set1_pd, _mm256_set1_ps,      \
                                   _mm256_set1_pd, _mm512_set1_ps, _mm512_set1_pd)(x)
#define v_loadu(like, p) SB_BY_TYPE(like, _mm_loadu_ps, _mm_loadu_pd, _mm256_loadu_ps,  \
                                    _mm256_loadu_pd, _mm512_loadu_ps, _mm512_loadu_pd)(p)
#define v_storeu(p, v) SB_BY_TYPE(v, _mm_storeu_ps, _mm_storeu_pd, _mm256_storeu_ps,    \
                                  _mm256_storeu_pd, _mm512_storeu_ps, _mm512_storeu_pd)(p, v)

/* Every product of the complex loops passes through SB_OPAQUE, an empty asm
 * that the compiler must assume changes the value: no compiler, flag
 * (-ffp-contract=fast, -march=native) or pattern matcher can fuse it with
 * the add or subtract that consumes it.  It emits no instruction. */
#define SB_OPAQUE(v) __asm__("" : "+v"(v))

/* ---- complex pairs: split into real and imaginary parts, and back --------

Two vectors of (re, im) pairs become a vector of real parts and one of
imaginary parts: float by shuffles 0x88 / 0xDD (even / odd floats of both),
double by unpacklo / unpackhi.  Within 128-bit lanes, so the parts are not
in element order, but v_pairs_lo / v_pairs_hi (unpacklo / unpackhi of the
parts) undo it. */

static inline __m128 sb_even_f128(__m128 a, __m128 b) { return _mm_shuffle_ps(a, b, 0x88); }
static inline __m128 sb_odd_f128(__m128 a, __m128 b) { return _mm_shuffle_ps(a, b, 0xDD); }
SB_AVX2 static inline __m256 sb_even_f256(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, 0x88); }
SB_AVX2 static inline __m256 sb_odd_f256(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, 0xDD); }
SB_AVX512 static inline __m512 sb_even_f512(__m512 a, __m512 b) { return _mm512_shuffle_ps(a, b, 0x88); }
SB_AVX512 static inline __m512 sb_odd_f512(__m512 a, __m512 b) { return _mm512_shuffle_ps(a, b, 0xDD); }

#define v_real_parts(a, b) SB_BY_TYPE(a, sb_even_f128, _mm_unpacklo_pd, sb_even_f256,      \
                                      _mm256_unpacklo_pd, sb_even_f512, _mm512_unpacklo_pd)(a, b)
#define v_imag_parts(a, b) SB_BY_TYPE(a, sb_odd_f128, _mm_unpackhi_pd, sb_odd_f256,        \
                                      _mm256_unpackhi_pd, sb_odd_f512, _mm512_unpackhi_pd)(a, b)
#define v_pairs_lo(re, im) SB_BY_TYPE(re, _mm_unpacklo_ps, _mm_unpacklo_pd, _mm256_unpacklo_ps, \
                                      _mm256_unpacklo_pd, _mm512_unpacklo_ps,                 \
                                      _mm512_unpacklo_pd)(re, im)
#define v_pairs_hi(re, im) SB_BY_TYPE(re, _mm_unpackhi_ps, _mm_unpackhi_pd, _mm256_unpackhi_ps, \
                                      _mm256_unpackhi_pd, _mm512_unpackhi_ps,                 \
                                      _mm512_unpackhi_pd)(re, im)

/* ---- float16: F16C ------------------------------------------------------- */

/* 8 or 16 values <-> one vector of floats, rounded to nearest even */
SB_AVX2 static inline __m256 sb_f16_widen_256(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

SB_AVX2 static inline void sb_f16_narrow_256(__m256 a, uint16_t *p)
{
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT));
}

SB_AVX512 static inline __m512 sb_f16_widen_512(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

SB_AVX512 static inline void sb_f16_narrow_512(__m512 a, uint16_t *p)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT));
}

/* ---- bfloat16: the high half of a float32 --------------------------------

Widening is an unpack with a zero vector (one instruction per 8 or 16
values: the low half of each float is zero).  GCC's vectorisation of the
plain-C loop widened with vpmovzxwd + shift and narrowed with vpermt2w,
about twice the instructions. */

/* 16 values -> the first 4 of every 8 in a, the other 4 in b */
SB_AVX2 static inline void sb_bf16_widen_256(const uint16_t *p, __m256 *a, __m256 *b)
{
    const __m256i zero = _mm256_setzero_si256(), w = _mm256_loadu_si256((const __m256i *)p);
    *a = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, w));
    *b = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, w));
}

SB_AVX512 static inline void sb_bf16_widen_512(const uint16_t *p, __m512 *a, __m512 *b)
{
    const __m512i zero = _mm512_setzero_si512(), w = _mm512_loadu_si512((const void *)p);
    *a = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, w));
    *b = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, w));
}

/*
 * The loops widen 16-bit values to float32 with unpack-with-zero, which
 * works within each 128-bit lane: of a vector of consecutive bfloat16
 * values, unpacklo gives the first 4 of every 8 (r0 below), unpackhi the
 * other 4 (r1).  Each rounding takes that pair of float32 vectors back to
 * the bfloat16 values in their original order, rounded as sb_f32_to_bf16
 * does: bit for bit the same, NaN included.
 */

/* AVX2: 16 values.  Split each float into its high and low 16 bits
 * (pshufb within lanes, then 64-bit unpacks, which also restore the
 * order), and round in 16-bit lanes, 16 at a time: hi + 1 when
 * lo + (hi & 1) > 0x8000, i.e. when avg(lo, hi & 1) = (lo + lsb + 1) >> 1
 * exceeds 0x4000, which adding 0x3FFF carries into bit 15. */
SB_AVX2 static inline __m256i sb_bf16_round_avx2(__m256 r0, __m256 r1)
{
    const __m256i halves = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                            0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    const __m256i a = _mm256_shuffle_epi8(_mm256_castps_si256(r0), halves);
    const __m256i b = _mm256_shuffle_epi8(_mm256_castps_si256(r1), halves);
    const __m256i lo = _mm256_unpacklo_epi64(a, b);
    const __m256i hi = _mm256_unpackhi_epi64(a, b);   /* the truncated bfloat16 */
    const __m256i lsb = _mm256_and_si256(hi, _mm256_set1_epi16(1));
    const __m256i up = _mm256_srli_epi16(
        _mm256_add_epi16(_mm256_avg_epu16(lo, lsb), _mm256_set1_epi16(0x3FFF)), 15);
    const __m256i rounded = _mm256_add_epi16(hi, up);
    /* NaN: the truncated bits with the quiet bit set (the add could carry a
     * NaN's payload into the exponent) */
    const __m256i nan = _mm256_packs_epi32(
        _mm256_castps_si256(_mm256_cmp_ps(r0, r0, _CMP_UNORD_Q)),
        _mm256_castps_si256(_mm256_cmp_ps(r1, r1, _CMP_UNORD_Q)));
    return _mm256_blendv_epi8(rounded, _mm256_or_si256(hi, _mm256_set1_epi16(0x40)), nan);
}

/* AVX-512: 32 values.  sb_f32_to_bf16 in 32-bit lanes, then packus (the
 * inverse of the unpacks).  The NaN test is vfpclassps (QNaN | SNaN). */
SB_AVX512 static inline __m512i sb_bf16_round_avx512_half(__m512 r)
{
    const __m512i u = _mm512_castps_si512(r);
    const __m512i truncated = _mm512_srli_epi32(u, 16);
    const __m512i lsb = _mm512_and_si512(truncated, _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(u, lsb), _mm512_set1_epi32(0x7FFF)), 16);
    return _mm512_mask_or_epi32(rounded, _mm512_fpclass_ps_mask(r, 0x81),
                                truncated, _mm512_set1_epi32(0x40));
}

SB_AVX512 static inline __m512i sb_bf16_round_avx512(__m512 r0, __m512 r1)
{
    return _mm512_packus_epi32(sb_bf16_round_avx512_half(r0), sb_bf16_round_avx512_half(r1));
}

#if SB_HAVE_AVX512BF16
/* AVX512-BF16: vcvtne2ps2bf16 rounds 32 values to nearest-even in one
 * instruction, with NaN handled as sb_f32_to_bf16 does (truncate, set the
 * quiet bit), but it reads subnormal inputs as zero and so flushes them
 * to a signed zero (Intel SDM; MXCSR is neither consulted nor updated).
 * Only those lanes differ: a float32 and its bfloat16 rounding have the
 * same exponent range, so no normal float32 gives a subnormal bfloat16.  A
 * block with a subnormal float32 (vfpclassps, class 0x20) is rounded by
 * the integer path instead; subnormal results are rare, so the branch
 * predicts well.  The instruction writes r0's values to the low half and
 * r1's to the high half; vpermq puts the 4-value groups back in order. */
SB_AVX512BF16 static inline __m512i sb_bf16_round_avx512bf16(__m512 r0, __m512 r1)
{
    const __mmask16 subnormal = _mm512_fpclass_ps_mask(r0, 0x20) | _mm512_fpclass_ps_mask(r1, 0x20);
    if (__builtin_expect(subnormal != 0, 0))
        return sb_bf16_round_avx512(r0, r1);
    const __m512i halves = (__m512i)_mm512_cvtne2ps_pbh(r1, r0);
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7), halves);
}
#endif

SB_AVX2 static inline void sb_bf16_narrow_256(__m256 a, __m256 b, uint16_t *p)
{
    _mm256_storeu_si256((__m256i *)p, sb_bf16_round_avx2(a, b));
}

SB_AVX512 static inline void sb_bf16_narrow_512(__m512 a, __m512 b, uint16_t *p)
{
    _mm512_storeu_si512((void *)p, sb_bf16_round_avx512(a, b));
}

#if SB_HAVE_AVX512BF16
SB_AVX512BF16 static inline void sb_bf16_narrow_512bf16(__m512 a, __m512 b, uint16_t *p)
{
    _mm512_storeu_si512((void *)p, sb_bf16_round_avx512bf16(a, b));
}
#endif

#endif /* SB_X86_DISPATCH */
#endif /* SIGMOID_BACKWARD_SIMD_H */
