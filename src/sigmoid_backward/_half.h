/*
 * float16 and bfloat16 <-> float32 conversions on raw uint16 bit patterns.
 *
 * The kernels carry 16-bit values as uint16 and never use NumPy's float16
 * arithmetic: they widen a block to float32, compute, and round once.
 *
 * Two implementations of every array conversion:
 *   - portable C on integer/float bit patterns, which GCC auto-vectorises for
 *     whatever ISA the translation unit targets;
 *   - on x86, F16C instructions for float16 and an AVX2 build of the portable
 *     loop for bfloat16, chosen once at run time with __builtin_cpu_supports.
 * Both round float32 -> 16 bit to nearest-even, keep subnormals exact, turn
 * overflow into +-inf and keep NaN a (quiet) NaN.  The portable float16 code
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

#if defined(__GNUC__) && defined(__x86_64__)
#  define SB_HAVE_X86_DISPATCH 1
#  include <immintrin.h>
#else
#  define SB_HAVE_X86_DISPATCH 0
#endif

#if defined(__GNUC__)
#  define SB_ALWAYS_INLINE static inline __attribute__((always_inline))
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
    const uint32_t result = sign | (two_w < (1u << 27) ? sb_f32_to_bits(denormalized)
                                                        : sb_f32_to_bits(normalized));
    return sb_f32_from_bits(result);
}

SB_ALWAYS_INLINE uint16_t sb_f32_to_f16(float f)
{
    /* Scale so that the float32 adder performs the round-to-nearest-even at
     * float16's precision; overflow saturates to inf on the way up. */
    float base = (__builtin_fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
    const uint32_t w = sb_f32_to_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = sb_f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = sb_f32_to_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
    const uint32_t mantissa_bits = bits & 0x00000FFFu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return (uint16_t)((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

/* ---- array loops, written once and compiled per ISA -------------------- */

SB_ALWAYS_INLINE void sb_f16_to_f32_loop(const uint16_t *src, float *dst, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = sb_f16_to_f32(src[i]);
}
SB_ALWAYS_INLINE void sb_f32_to_f16_loop(const float *src, uint16_t *dst, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = sb_f32_to_f16(src[i]);
}
SB_ALWAYS_INLINE void sb_bf16_to_f32_loop(const uint16_t *src, float *dst, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = sb_bf16_to_f32(src[i]);
}
SB_ALWAYS_INLINE void sb_f32_to_bf16_loop(const float *src, uint16_t *dst, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = sb_f32_to_bf16(src[i]);
}

typedef void (*sb_widen_fn)(const uint16_t *, float *, ptrdiff_t);
typedef void (*sb_narrow_fn)(const float *, uint16_t *, ptrdiff_t);

static void sb_f16_to_f32_portable(const uint16_t *s, float *d, ptrdiff_t n) { sb_f16_to_f32_loop(s, d, n); }
static void sb_f32_to_f16_portable(const float *s, uint16_t *d, ptrdiff_t n) { sb_f32_to_f16_loop(s, d, n); }
static void sb_bf16_to_f32_portable(const uint16_t *s, float *d, ptrdiff_t n) { sb_bf16_to_f32_loop(s, d, n); }
static void sb_f32_to_bf16_portable(const float *s, uint16_t *d, ptrdiff_t n) { sb_f32_to_bf16_loop(s, d, n); }

#if SB_HAVE_X86_DISPATCH
__attribute__((target("avx2,f16c")))
static void sb_f16_to_f32_f16c(const uint16_t *src, float *dst, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++) dst[i] = _cvtsh_ss(src[i]);
}

__attribute__((target("avx2,f16c")))
static void sb_f32_to_f16_f16c(const float *src, uint16_t *dst, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

__attribute__((target("avx2")))
static void sb_bf16_to_f32_avx2(const uint16_t *s, float *d, ptrdiff_t n) { sb_bf16_to_f32_loop(s, d, n); }
__attribute__((target("avx2")))
static void sb_f32_to_bf16_avx2(const float *s, uint16_t *d, ptrdiff_t n) { sb_f32_to_bf16_loop(s, d, n); }
#endif

static sb_widen_fn sb_widen[2] = {sb_f16_to_f32_portable, sb_bf16_to_f32_portable};
static sb_narrow_fn sb_narrow[2] = {sb_f32_to_f16_portable, sb_f32_to_bf16_portable};

/* Select the conversions: 1 = the fastest this CPU supports, 0 = portable.
 * Returns 1 when SIMD conversions are in use.  Tests call it with 0 to check
 * that both paths agree bit for bit. */
static int sb_half_select(int use_simd)
{
    sb_widen[0] = sb_f16_to_f32_portable;  sb_narrow[0] = sb_f32_to_f16_portable;
    sb_widen[1] = sb_bf16_to_f32_portable; sb_narrow[1] = sb_f32_to_bf16_portable;
#if SB_HAVE_X86_DISPATCH
    if (use_simd) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) {
            sb_widen[1] = sb_bf16_to_f32_avx2; sb_narrow[1] = sb_f32_to_bf16_avx2;
            if (__builtin_cpu_supports("f16c")) {
                sb_widen[0] = sb_f16_to_f32_f16c; sb_narrow[0] = sb_f32_to_f16_f16c;
            }
            return 1;
        }
    }
#endif
    (void)use_simd;
    return 0;
}

/* kind: 0 = float16, 1 = bfloat16 */
static inline void sb_half_to_float(const uint16_t *src, float *dst, ptrdiff_t n, int kind)
{
    sb_widen[kind != 0](src, dst, n);
}
static inline void sb_float_to_half(const float *src, uint16_t *dst, ptrdiff_t n, int kind)
{
    sb_narrow[kind != 0](src, dst, n);
}

#endif /* SIGMOID_BACKWARD_HALF_H */
