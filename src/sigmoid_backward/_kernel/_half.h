/*
 * The narrow formats <-> float32, on raw bit patterns: float16 and bfloat16
 * (uint16), and the minifloats (float8) made from their format.
 *
 * The kernels carry 16-bit values as uint16 and never use NumPy's float16
 * arithmetic: they widen to float32, compute, and round once (_loops.h).
 *
 * These are the portable scalar conversions, written so that GCC can
 * vectorise loops over them; on x86 the float16 loops use F16C instead, and
 * the bfloat16 loops vector forms of these roundings (_simd.h).  All round
 * float32 -> 16 bit to nearest-even, keep subnormals exact, turn overflow
 * into +-inf and keep NaN a (quiet) NaN.  The float16 code
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

#if defined(__GNUC__) || defined(__clang__)
#  define SB_ALWAYS_INLINE static inline __attribute__((always_inline))
#  define SB_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#  define SB_ALWAYS_INLINE static __forceinline
#  define SB_NOINLINE __declspec(noinline)
#else
#  define SB_ALWAYS_INLINE static inline
#  define SB_NOINLINE
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


/* ---- minifloats: made from the format -------------------------------------
 *
 * A format of 1 sign, E exponent and M mantissa bits with bias B, in the low
 * 1 + E + M bits of an unsigned integer.  `fn` formats (float8_e4m3fn) are
 * finite: their one NaN is all ones, and what overflows becomes NaN; the
 * others (the IEEE-style formats) have inf and NaN.  The conversions are
 * ml_dtypes' (its astype), bit for bit: widening is exact, and a NaN widens
 * to float32's quiet NaN, with its sign; rounding is to nearest-even, once,
 * subnormals included, and a NaN rounds to the format's NaN (IEEE formats:
 * the top exponent with the top mantissa bit), with its sign.  Checked
 * against ml_dtypes over every float32 (benchmarks/NOTES.md).
 *
 * Branch-free (selects, no table), with the format as constants after
 * inlining, so that the compiler vectorises loops over them for each
 * instruction set (_loops.h). */

/* a where cond (0 or 1), else b: a select by mask, since GCC turns a
 * conditional into branches when an arm holds a float operation, and then
 * does not vectorise (see sb_f16_to_f32). */
SB_ALWAYS_INLINE uint32_t sb_select(uint32_t cond, uint32_t a, uint32_t b)
{
    const uint32_t mask = 0u - cond;
    return (a & mask) | (b & ~mask);
}

SB_ALWAYS_INLINE uint32_t sb_min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

SB_ALWAYS_INLINE float sb_minifloat_to_f32(uint32_t b, const int E, const int M, const int B,
                                           const int fn)
{
    const uint32_t mag_mask = (1u << (E + M)) - 1;
    const uint32_t sign = (b >> (E + M) & 1u) << 31;
    const uint32_t mag = b & mag_mask;
    const uint32_t exp = mag >> M;
    /* Normal: the exponent rebiased, which is exact. */
    const uint32_t normal = (mag << (23 - M)) + ((uint32_t)(127 - B) << 23);
    /* Subnormal, mag * 2^(1-B-M): K plus mag units of K's last place, less
     * K (K = 2^(24-B-M)), exact, and no subnormal float32 on the way. */
    const uint32_t k = (uint32_t)(127 + 24 - B - M) << 23;
    const uint32_t sub = sb_f32_to_bits(sb_f32_from_bits(k + mag) - sb_f32_from_bits(k));
    /* The top codes: NaN (all ones) if fn, else the top exponent, inf or NaN. */
    const uint32_t top = fn ? mag == mag_mask : exp == (1u << E) - 1;
    const uint32_t special = sb_select(fn || (mag & ((1u << M) - 1)) != 0,
                                       0x7FC00000u, 0x7F800000u);
    return sb_f32_from_bits(sign | sb_select(top, special, sb_select(exp == 0, sub, normal)));
}

SB_ALWAYS_INLINE uint32_t sb_f32_to_minifloat(float f, const int E, const int M, const int B,
                                              const int fn)
{
    const uint32_t u = sb_f32_to_bits(f);
    const uint32_t sign = (u >> 31) << (E + M);
    const uint32_t a = u & 0x7FFFFFFFu;
    /* Normal results: rebias, and round to nearest-even at M bits (a carry
     * into the exponent is the next binade, or overflow).  Below the
     * least normal the subtraction wraps; that result is not used. */
    uint32_t r = a - ((uint32_t)(127 - B) << 23);
    r = (r + (1u << (22 - M)) - 1u + ((r >> (23 - M)) & 1u)) >> (23 - M);
    /* Subnormal results (|f| below 2^(1-B)): adding K = 2^(24-B-M) makes
     * the float adder round |f| to a multiple of 2^(1-B-M), the format's
     * last place there, to nearest-even; K's bits less leave the code
     * (2^M is the least normal, which is right). */
    const uint32_t k = (uint32_t)(127 + 24 - B - M) << 23;
    const uint32_t sub = sb_f32_to_bits(sb_f32_from_bits(a) + sb_f32_from_bits(k)) - k;
    r = sb_select(a < ((uint32_t)(127 + 1 - B) << 23), sub, r);
    /* Overflow: to inf, or to NaN (all ones) in a format without inf. */
    const uint32_t top = fn ? (1u << (E + M)) - 1 : ((1u << E) - 1) << M;
    r = sb_min_u32(r, top);
    /* NaN: all ones (fn), or the top exponent with the top mantissa bit. */
    const uint32_t nan = fn ? top : top | (1u << (M - 1));
    return sign | sb_select(a > 0x7F800000u, nan, r);
}

#endif /* SIGMOID_BACKWARD_HALF_H */
