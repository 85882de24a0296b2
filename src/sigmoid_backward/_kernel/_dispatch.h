/*
 * The instruction sets, as data: each with the CPU features it needs, the
 * loops it specialises (_loops.h; _isa_loops.h, generated from the dtype
 * table, names every dtype's) and its non-temporal copy
 * (_nontemporal.h); a dtype it does not specialise runs its base's loop.
 * At import the best set this CPU runs is chosen (_cpu.h reads the
 * features), and use_isa may choose another, for tests and benchmarks.
 *
 *   portable    the build's baseline (SSE2 on x86-64; anything elsewhere)
 *   avx2        AVX2 + F16C
 *   avx512      AVX-512 (F, BW, VL, DQ) + F16C
 *   avx512bf16  avx512, with bfloat16 rounded by AVX512-BF16's
 *               vcvtne2ps2bf16
 *   avx512vbmi  avx512bf16, with the one-byte dtypes computed with
 *               AVX512-VBMI, -VBMI2 and GFNI instead of read from their
 *               tables (a CPU with those but not AVX512-BF16, Ice Lake,
 *               keeps the tables: the list is a chain)
 *
 * The per-ISA loops need GCC-style target attributes (GCC and clang on
 * x86-64: SB_X86_DISPATCH); other builds have the portable loops only.
 */
#ifndef SIGMOID_BACKWARD_DISPATCH_H
#define SIGMOID_BACKWARD_DISPATCH_H

#include <string.h>

#include "_atomic.h"
#include "_cpu.h"
#include "_dtypes.h"
#include "_loops.h"
#include "_nontemporal.h"

typedef void (*sb_nt_copy_fn)(void *dst, const void *src, size_t nbytes);

/* One instruction set's loops, every dtype's filled in. */
typedef struct {
    const char *name;
    sb_loop_fn loop[SB_NUM_KINDS];
    sb_nt_copy_fn nt_copy;
} sb_loops_t;

typedef struct {
    const char *name;
    int features;                  /* SB_CPU_* bits it needs */
    int base;                      /* whose loops fill its gaps; -1: none */
    sb_loop_fn loop[SB_NUM_KINDS]; /* NULL: the base's */
    sb_nt_copy_fn nt_copy;
} sb_isa_t;

#define SB_PORTABLE_LOOP(K, name, size, storage, xla) [SB_KIND_##K] = sb_##K##_portable,

/* Slowest first: selection takes the last one the CPU runs. */
static const sb_isa_t sb_isas[] = {
    {"portable", 0, -1, {SB_DTYPES(SB_PORTABLE_LOOP)}, sb_nt_copy_portable},
#if SB_X86_DISPATCH
    {"avx2", SB_CPU_AVX2 | SB_CPU_F16C, 0, SB_LOOPS_avx2, sb_nt_copy_avx2},
    {"avx512", SB_CPU_AVX2 | SB_CPU_F16C | SB_CPU_AVX512, 0, SB_LOOPS_avx512, sb_nt_copy_avx2},
#  if SB_HAVE_AVX512BF16
    {"avx512bf16", SB_CPU_AVX2 | SB_CPU_F16C | SB_CPU_AVX512 | SB_CPU_AVX512_BF16, 2,
     {[SB_KIND_BF16] = sb_BF16_avx512bf16}, sb_nt_copy_avx2},
#  endif
#  if SB_HAVE_AVX512VBMI
    {"avx512vbmi",
     SB_CPU_AVX2 | SB_CPU_F16C | SB_CPU_AVX512 | SB_CPU_AVX512_BF16 | SB_CPU_AVX512_VBMI, 3,
     SB_LOOPS_avx512vbmi, sb_nt_copy_avx2},
#  endif
#endif
};
#undef SB_PORTABLE_LOOP

#define SB_NUM_ISAS ((int)(sizeof(sb_isas) / sizeof(sb_isas[0])))

static sb_loops_t sb_resolved[SB_NUM_ISAS];
/* The loops in use: sb_select_isa changes them, and a kernel call reads
 * them once (sb_loops_in_use), maybe while another thread selects others. */
static const void *sb_loops = NULL;

static inline int sb_num_isas(void) { return SB_NUM_ISAS; }
static inline const char *sb_isa_name(int k) { return sb_isas[k].name; }

/* The index of the ISA named `name`, or -1. */
static inline int sb_isa_named(const char *name)
{
    for (int k = 0; k < SB_NUM_ISAS; k++)
        if (strcmp(name, sb_isas[k].name) == 0) return k;
    return -1;
}

/* Can this CPU (and build) run ISA k? */
static inline int sb_isa_supported(int k)
{
    return (sb_cpu_features() & sb_isas[k].features) == sb_isas[k].features;
}

/* Fill every ISA's table from its own loops and its bases', and the
 * one-byte dtypes' tables of results (_loops_table.h).  Once, at import, under
 * the GIL, before any kernel call. */
static void sb_dispatch_init(void)
{
    for (int k = 0; k < SB_NUM_ISAS; k++) {
        sb_resolved[k].name = sb_isas[k].name;
        sb_resolved[k].nt_copy = sb_isas[k].nt_copy;
        for (int kind = 0; kind < SB_NUM_KINDS; kind++) {
            int from = k;
            while (sb_isas[from].loop[kind] == NULL) from = sb_isas[from].base;
            sb_resolved[k].loop[kind] = sb_isas[from].loop[kind];
        }
    }
    sb_tables_fill();
#if SB_HAVE_AVX512VBMI
    sb_minifloat_vbmi_init();
#endif
    sb_store_ptr(&sb_loops, &sb_resolved[0]);
}

static inline const sb_loops_t *sb_loops_in_use(void)
{
    return (const sb_loops_t *)sb_load_ptr(&sb_loops);
}

static inline sb_loop_fn sb_loop_for(const sb_loops_t *loops, int kind)
{
    return loops->loop[kind];
}

/* Use the loops of `isa`, or with NULL the best this CPU runs.  Returns the
 * name of the loops now in use, or NULL (nothing changed) when the name is
 * unknown or this CPU cannot run it. */
static const char *sb_select_isa(const char *isa)
{
    int choice = -1;
    if (isa != NULL) {
        choice = sb_isa_named(isa);
        if (choice >= 0 && !sb_isa_supported(choice)) choice = -1;
    } else {
        for (int k = 0; k < SB_NUM_ISAS; k++)
            if (sb_isa_supported(k)) choice = k;
    }
    if (choice < 0) return NULL;
    sb_store_ptr(&sb_loops, &sb_resolved[choice]);
    return sb_isas[choice].name;
}

#endif /* SIGMOID_BACKWARD_DISPATCH_H */
