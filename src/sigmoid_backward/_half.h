/*
 * float16 and bfloat16 <-> float32 conversions on raw uint16 bit patterns.
 *
 * The kernels carry 16-bit values as uint16 and never use NumPy's float16
 * arithmetic: they widen to float32, compute, and round once (_loops.h).
 *
 * These are the portable scalar conversions, written so that GCC can
 * vectorise loops over them; on x86 the float16 loops use F16C instead
 * (_loops.h), and the bfloat16 loops the vector roundings at the end of this
 * file.  All round float32 -> 16 bit to nearest-even, keep subnormals
 * exact, turn overflow into +-inf and keep NaN a (quiet) NaN.  The float16 code
 * is the branch-free algorithm of Marat Dukhan's FP16 library (MIT), which
 * PyTorch also uses: it is exact only under the default floating-point
 * environment (round-to-nearest, no flush-to-zero), which is one reason the
 * build never uses -ffast-math.
 */
#ifndef SIGMOID_BACKWARD_HALF_H
#define SIGMOID_BACKWARD_HALF_H

#include <stdint.h>
#include <string.h>
#include <stddef.h>

#include "_cpu.h"

#if defined(__GNUC__) || defined(__clang__)
#  define SB_ALWAYS_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#  define SB_ALWAYS_INLINE static __forceinline
#else
#  define SB_ALWAYS_INLINE static inline
#endif

SB_ALWAYS_INLINE float sb_f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
SB_ALWAYS_INLINE uint32_t sb_f32_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* ---- bfloat16: the upper half of a float32 ---------------------------- */

SB_ALWAYS_INLINE float sb_bf16_to_f32(uint16_t h)
{
    return sb_f32_from_bits((uint32_t)h << 16);
}

SB_ALWAYS_INLINE uint16_t sb_f32_to_bf16(float f)
{
    uint32_t u = sb_f32_to_bits(f);
    /* NaN first: the rounding add below could carry a NaN into inf. */
    uint16_t nan = (uint16_t)((u >> 16) | 0x0040u);
    uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
    return ((u & 0x7fffffffu) > 0x7f800000u) ? nan : (uint16_t)(rounded >> 16);
}

/* ---- IEEE float16 ------------------------------------------------------ */

SB_ALWAYS_INLINE float sb_f16_to_f32(uint16_t h)
{
    const uint32_t w = (uint32_t)h << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w;
    /* Normal, inf and NaN: re-bias the exponent by a multiply by 2^-112. */
    const float normalized = sb_f32_from_bits((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    /* Subnormal: place the mantissa under 0.5's exponent and subtract 0.5. */
    const float denormalized = sb_f32_from_bits((two_w >> 17) | (126u << 23)) - 0.5f;
    /* two_w < 2^27, as a signed compare of |w| (SSE2 has no unsigned one),
     * and a select by mask: with a branch, GCC would move each float op into
     * its arm, and then refuses to vectorise code that might trap. */
    const uint32_t subnormal = -(uint32_t)((int32_t)(w & 0x7FFFFFFFu) < (1 << 26));
    const uint32_t result = sign | (sb_f32_to_bits(denormalized) & subnormal)
                                 | (sb_f32_to_bits(normalized) & ~subnormal);
    return sb_f32_from_bits(result);
}

SB_ALWAYS_INLINE uint16_t sb_f32_to_f16(float f)
{
    /* Scale so that the float32 adder performs the round-to-nearest-even at
     * float16's precision; overflow saturates to inf on the way up. */
    const uint32_t w = sb_f32_to_bits(f);
    /* |f| by clearing the sign bit: exact, and no compiler builtin */
    float base = (sb_f32_from_bits(w & 0x7FFFFFFFu) * 0x1.0p+112f) * 0x1.0p-110f;
    const uint32_t sign = w & 0x80000000u;
    /* The reference's unsigned compares of 2w, as signed compares of |w|
     * and its exponent bits, and a select by mask, so that SSE2 can
     * vectorise them (see sb_f16_to_f32). */
    const int32_t abs_w = (int32_t)(w & 0x7FFFFFFFu);
    int32_t bias = (int32_t)(w & 0x7F800000u);
    if (bias < 0x38800000) bias = 0x38800000;
    base = sb_f32_from_bits((uint32_t)bias + 0x07800000u) + base;
    const uint32_t bits = sb_f32_to_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
    const uint32_t mantissa_bits = bits & 0x00000FFFu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    const uint32_t nan = -(uint32_t)(abs_w > 0x7F800000);
    return (uint16_t)((sign >> 16) | (0x7E00u & nan) | (nonsign & ~nan));
}

/* ---- bfloat16: vector rounding on x86 ---------------------------------- */

#if SB_X86_DISPATCH
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
#endif /* SB_X86_DISPATCH */

#endif /* SIGMOID_BACKWARD_HALF_H */
