/*
 * Every float32 bit pattern through each vector bfloat16 rounding of
 * _simd.h (AVX2, AVX-512, AVX512-BF16 with its subnormal fix-up), against
 * the scalar sb_f32_to_bf16: all 2^32 inputs, NaN payloads included, bit
 * for bit.  Run by tests/core/test_bf16_rounding_exhaustive.py (slow); by hand:
 *
 *   cc -O2 -ffp-contract=off -I src/sigmoid_backward \
 *      tests/core/bf16_rounding_exhaustive.c -o /tmp/bf16x && /tmp/bf16x
 *
 * Prints one line per ISA, "<isa> mismatches=<count>" or "<isa> skipped",
 * and exits 1 if any rounding differs.
 */
#include <stdio.h>
#include <string.h>

#include "_dispatch.h"

#if SB_X86_DISPATCH
/* The roundings take two float32 vectors in the order the loops' unpacks
 * leave them: of each 8 outputs in a 128-bit lane, the first 4 come from
 * r0 and the next 4 from r1.  Each block here feeds 2 * L consecutive
 * patterns (L = floats per vector): r0 = base + [0, L), r1 = base + [L, 2L). */
static uint32_t sb_source(uint32_t base, int j, int L)
{
    const int lane = j / 8, k = j % 8;
    return base + (uint32_t)(k < 4 ? lane * 4 + k : L + lane * 4 + k - 4);
}

static long sb_reported;   /* mismatches printed so far, at most 5 */

static long sb_check(uint32_t base, const uint16_t *got, int L)
{
    long bad = 0;
    for (int j = 0; j < 2 * L; j++) {
        const uint32_t u = sb_source(base, j, L);
        const uint16_t want = sb_f32_to_bf16(sb_f32_from_bits(u));
        if (got[j] != want) {
            if (sb_reported++ < 5)
                fprintf(stderr, "  %08x -> %04x, want %04x\n", (unsigned)u, got[j], want);
            bad++;
        }
    }
    return bad;
}

SB_AVX2 static long sb_run_avx2(void)
{
    long bad = 0;
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    uint16_t got[16];
    for (uint64_t base = 0; base < (1ull << 32); base += 16) {
        const __m256i b = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)base), iota);
        const __m256 r0 = _mm256_castsi256_ps(b);
        const __m256 r1 = _mm256_castsi256_ps(_mm256_add_epi32(b, _mm256_set1_epi32(8)));
        _mm256_storeu_si256((__m256i *)got, sb_bf16_round_avx2(r0, r1));
        bad += sb_check((uint32_t)base, got, 8);
    }
    return bad;
}

#define SB_RUN_512(name, attr, round)                                                   \
    attr static long name(void)                                                         \
    {                                                                                   \
        long bad = 0;                                                                   \
        const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,   \
                                               12, 13, 14, 15);                         \
        uint16_t got[32];                                                               \
        for (uint64_t base = 0; base < (1ull << 32); base += 32) {                      \
            const __m512i b = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)base), iota); \
            const __m512 r0 = _mm512_castsi512_ps(b);                                   \
            const __m512 r1 = _mm512_castsi512_ps(_mm512_add_epi32(b, _mm512_set1_epi32(16))); \
            _mm512_storeu_si512(got, round(r0, r1));                                    \
            bad += sb_check((uint32_t)base, got, 16);                                   \
        }                                                                               \
        return bad;                                                                     \
    }

SB_RUN_512(sb_run_avx512, SB_AVX512, sb_bf16_round_avx512)
#if SB_HAVE_AVX512BF16
SB_RUN_512(sb_run_avx512bf16, SB_AVX512BF16, sb_bf16_round_avx512bf16)
#endif
#endif /* SB_X86_DISPATCH */

int main(void)
{
    int failed = 0;
    const struct { const char *isa; long (*run)(void); } cases[] = {
#if SB_X86_DISPATCH
        {"avx2", sb_run_avx2},
        {"avx512", sb_run_avx512},
#if SB_HAVE_AVX512BF16
        {"avx512bf16", sb_run_avx512bf16},
#endif
#endif
        {NULL, NULL},
    };
    for (int k = 0; cases[k].isa != NULL; k++) {
        const int isa = sb_isa_named(cases[k].isa);
        if (isa < 0 || !sb_isa_supported(isa)) {
            printf("%s skipped\n", cases[k].isa);
            continue;
        }
        const long bad = cases[k].run();
        printf("%s mismatches=%ld\n", cases[k].isa, bad);
        failed |= bad != 0;
    }
    return failed;
}
