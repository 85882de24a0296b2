/*
 * What this CPU can run, read with cpuid and xgetbv.
 *
 * __builtin_cpu_supports is not used: clang before 17 (Debian 12's default
 * clang 14, Apple clang on Intel Macs) rejects feature names such as
 * "f16c", and MSVC has no such builtin.  cpuid works on every compiler, and
 * xgetbv tells whether the operating system saves the wide registers: a CPU
 * with AVX-512 under an OS that does not enable it must not run AVX-512.
 *
 * SB_X86_DISPATCH says whether the per-ISA loops can be compiled at all:
 * they need GCC-style target attributes (GCC and clang, any version), so an
 * MSVC build runs the portable loops only.
 */
#ifndef SIGMOID_BACKWARD_CPU_H
#define SIGMOID_BACKWARD_CPU_H

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#  define SB_X86_DISPATCH 1
#  include <cpuid.h>
#  include <immintrin.h>
#else
#  define SB_X86_DISPATCH 0
#endif

#if SB_X86_DISPATCH
/* The target attributes of the per-ISA code (_simd.h, _loops.h). */
#  define SB_AVX2 __attribute__((target("avx2,f16c")))
#  define SB_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c")))
/* AVX512-BF16 intrinsics arrived in GCC 10 and clang 9. */
#  if (defined(__clang__) && __clang_major__ >= 9) \
      || (!defined(__clang__) && __GNUC__ >= 10)
#    define SB_HAVE_AVX512BF16 1
#    define SB_AVX512BF16 \
       __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,f16c")))
#  else
#    define SB_HAVE_AVX512BF16 0
#  endif
/* AVX512-VBMI, -VBMI2 and GFNI intrinsics arrived in GCC 8 and clang 6,
 * before AVX512-BF16's: the ISA that uses them (the one-byte dtypes'
 * computed loops, _loops_vbmi.h) builds on avx512bf16 (_dispatch.h). */
#  if SB_HAVE_AVX512BF16
#    define SB_HAVE_AVX512VBMI 1
#    define SB_AVX512VBMI __attribute__((target( \
       "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx512vbmi,avx512vbmi2,gfni,f16c")))
#  else
#    define SB_HAVE_AVX512VBMI 0
#  endif
#else
#  define SB_HAVE_AVX512BF16 0
#  define SB_HAVE_AVX512VBMI 0
#endif

/* The features the loops are compiled for; see sb_cpu_features(). */
enum {
    SB_CPU_AVX2 = 1 << 0,        /* AVX2 with the OS saving YMM state */
    SB_CPU_F16C = 1 << 1,
    SB_CPU_AVX512 = 1 << 2,      /* AVX-512 F, BW, VL and DQ, OS saving ZMM */
    SB_CPU_AVX512_BF16 = 1 << 3,
    SB_CPU_AVX512_VBMI = 1 << 4, /* AVX512-VBMI, AVX512-VBMI2 and GFNI, all three */
};

#if SB_X86_DISPATCH
static inline void sb_cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    r[0] = r[1] = r[2] = r[3] = 0;
    if (leaf <= __get_cpuid_max(leaf & 0x80000000u, 0))
        __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

/* XCR0: which register states the OS saves (only when OSXSAVE is set) */
static inline unsigned long long sb_xcr0(void)
{
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}
#endif

/* The SB_CPU_* bits this CPU and OS support, read now. */
static inline int sb_cpu_features_read(void)
{
    int features = 0;
#if SB_X86_DISPATCH
    unsigned l1[4], l7[4], l7s1[4];
    sb_cpuid(1, 0, l1);
    const int osxsave = (l1[2] >> 27) & 1, avx = (l1[2] >> 28) & 1;
    if (!osxsave || !avx) return 0;
    const unsigned long long xcr0 = sb_xcr0();
    const int ymm = (xcr0 & 0x6) == 0x6;             /* SSE and AVX state */
    const int zmm = ymm && (xcr0 & 0xE0) == 0xE0;    /* opmask, ZMM_Hi256, Hi16_ZMM */
    if (!ymm) return 0;
    sb_cpuid(7, 0, l7);
    sb_cpuid(7, 1, l7s1);
    if (l7[0] < 1) l7s1[0] = 0;                      /* no subleaf 1 */
    if ((l7[1] >> 5) & 1) features |= SB_CPU_AVX2;
    if ((l1[2] >> 29) & 1) features |= SB_CPU_F16C;
    const unsigned avx512 = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31); /* F DQ BW VL */
    if (zmm && (l7[1] & avx512) == avx512) {
        features |= SB_CPU_AVX512;
        if ((l7s1[0] >> 5) & 1) features |= SB_CPU_AVX512_BF16;
        const unsigned vbmi = (1u << 1) | (1u << 6) | (1u << 8); /* VBMI, VBMI2, GFNI */
        if ((l7[2] & vbmi) == vbmi) features |= SB_CPU_AVX512_VBMI;
    }
#endif
    return features;
}

/* The SB_CPU_* bits this CPU and OS support (0 off x86-64 or without
 * SB_X86_DISPATCH), read once: under a hypervisor every cpuid is a VM exit
 * (about 4 us each in a KVM guest), and selecting an ISA asks for every
 * ISA.  The first call comes from module import, under the GIL; later ones
 * only read. */
static inline int sb_cpu_features(void)
{
    static int cached = -1;
    if (cached < 0) cached = sb_cpu_features_read();
    return cached;
}

#endif /* SIGMOID_BACKWARD_CPU_H */
