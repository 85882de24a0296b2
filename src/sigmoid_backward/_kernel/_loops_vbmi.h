/*
 * The one-byte dtypes' (float8's) computed loop of the avx512vbmi
 * instruction set.  Part of _loops.h, which includes it inside its x86
 * section, after the AVX-512 tail; not included alone.
 */
#ifndef SIGMOID_BACKWARD_LOOPS_VBMI_H
#define SIGMOID_BACKWARD_LOOPS_VBMI_H

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

#endif /* SIGMOID_BACKWARD_LOOPS_VBMI_H */
