/*
 * The one-byte dtypes' (float8's) table loops, on every instruction set: each
 * result read from a table of all 2^16 (g, y) pairs, which each dtype's
 * scalar loop fills once at import.  Part of _loops.h, which includes it
 * where the formula and the blocked loops are defined; not included alone.
 */
#ifndef SIGMOID_BACKWARD_LOOPS_TABLE_H
#define SIGMOID_BACKWARD_LOOPS_TABLE_H

/* The one-byte loops ask for their inputs' lines this many bytes ahead.  At
 * 1e8 elements the core's own prefetchers fall behind those loops' work: on
 * the Xeon (2 threads, against the bandwidth floor) the computed loop went
 * from 1.95x the floor's time to 1.55x (E4M3FN) and 2.07x to 1.66x (E5M2),
 * the table loop from 2.35x to 1.95x and 2.72x to 2.07x; at 1e7 only the
 * computed E5M2 loop moved (1.49-1.52x to 1.38-1.47x), 1e5 not at all, and
 * 512 to 4096 bytes ahead did alike (benchmarks/NOTES.md, 36).  A prefetch
 * never faults, so the lines up to 2 KiB past an array's end are harmless. */
enum { SB_BYTE_PREFETCH = 2048 };

SB_ALWAYS_INLINE void sb_prefetch_inputs(const uint8_t *g, const uint8_t *y)
{
    /* the addresses as integers, so that no pointer leaves its array */
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch((const void *)((uintptr_t)g + SB_BYTE_PREFETCH), 0, 3);
    __builtin_prefetch((const void *)((uintptr_t)y + SB_BYTE_PREFETCH), 0, 3);
#elif defined(_M_X64)   /* MSVC and clang-cl */
    _mm_prefetch((const char *)((uintptr_t)g + SB_BYTE_PREFETCH), _MM_HINT_T0);
    _mm_prefetch((const char *)((uintptr_t)y + SB_BYTE_PREFETCH), _MM_HINT_T0);
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

#endif /* SIGMOID_BACKWARD_LOOPS_TABLE_H */
