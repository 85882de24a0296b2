/*
 * Non-temporal (streaming) stores for outputs too large to stay in cache.
 *
 * An ordinary store first reads the destination's cache line from memory
 * (read-for-ownership), so writing N bytes moves 2N; a non-temporal store
 * writes whole lines straight to memory.  For out = f(g, y) that is 3N bytes
 * of traffic instead of 4N.  The kernels compute a small block into an L1
 * buffer and hand it to a non-temporal copy, which writes every whole
 * 64-byte line of the destination that way and the partial lines at either
 * end normally.
 *
 * Two copies: SSE2 (the x86-64 baseline) and AVX2, whose 32-byte stores fill
 * a line in two instructions and measured 5-10% faster on 20 MB outputs
 * (benchmarks/NOTES.md); _dispatch.h picks one with the loops.  Off x86
 * the copy is a memcpy.
 *
 * Non-temporal stores are weakly ordered: sb_nt_fence() must run before the
 * written memory is handed to another thread (the end of each thread's part).
 */
#ifndef SIGMOID_BACKWARD_NONTEMPORAL_H
#define SIGMOID_BACKWARD_NONTEMPORAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_cpu.h"

#define SB_LINE 64

#if SB_X86_DISPATCH
/* Copy nbytes, writing the destination's whole 64-byte lines with `line`
 * (which copies one) and its partial first and last lines with memcpy.
 * Inlined with its constant line copy. */
static inline __attribute__((always_inline)) void sb_nt_copy_lines(
    void *dst, const void *src, size_t nbytes, void (*line)(char *d, const char *s))
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    size_t head = (SB_LINE - ((uintptr_t)d & (SB_LINE - 1))) & (SB_LINE - 1);
    if (head > nbytes) head = nbytes;
    memcpy(d, s, head);
    d += head; s += head; nbytes -= head;
    for (; nbytes >= SB_LINE; nbytes -= SB_LINE, d += SB_LINE, s += SB_LINE)
        line(d, s);
    memcpy(d, s, nbytes);
}

static inline __attribute__((always_inline)) void sb_nt_line_sse2(char *d, const char *s)
{
    const __m128i a = _mm_loadu_si128((const __m128i *)s);
    const __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
    const __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
    const __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_stream_si128((__m128i *)d, a);
    _mm_stream_si128((__m128i *)(d + 16), b);
    _mm_stream_si128((__m128i *)(d + 32), c);
    _mm_stream_si128((__m128i *)(d + 48), e);
}

__attribute__((target("avx2"))) static inline void sb_nt_line_avx2(char *d, const char *s)
{
    const __m256i a = _mm256_loadu_si256((const __m256i *)s);
    const __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
    _mm256_stream_si256((__m256i *)d, a);
    _mm256_stream_si256((__m256i *)(d + 32), b);
}

static void sb_nt_copy_portable(void *dst, const void *src, size_t nbytes)
{
    sb_nt_copy_lines(dst, src, nbytes, sb_nt_line_sse2);
}

__attribute__((target("avx2")))
static void sb_nt_copy_avx2(void *dst, const void *src, size_t nbytes)
{
    sb_nt_copy_lines(dst, src, nbytes, sb_nt_line_avx2);
}
#else
static void sb_nt_copy_portable(void *dst, const void *src, size_t nbytes)
{
    memcpy(dst, src, nbytes);
}
#endif

static inline void sb_nt_fence(void)
{
#if SB_X86_DISPATCH
    _mm_sfence();
#endif
}

/* Bytes from the last 64-byte boundary at or before p to p. */
static inline size_t sb_line_misalignment(const void *p)
{
    return (size_t)((uintptr_t)p & (SB_LINE - 1));
}

#endif /* SIGMOID_BACKWARD_NONTEMPORAL_H */
