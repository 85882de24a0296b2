/*
 * Streaming (non-temporal) stores for outputs too large to stay in cache.
 *
 * An ordinary store first reads the destination's cache line from memory
 * (read-for-ownership), so writing N bytes moves 2N; a streaming store writes
 * whole lines straight to memory.  For out = f(g, y) that is 3N bytes of
 * traffic instead of 4N.  The kernels compute a small block into an L1 buffer
 * and hand it to sb_stream_copy, which streams every whole 64-byte line of
 * the destination and writes the partial lines at either end normally.
 *
 * Streaming stores are weakly ordered: sb_stream_fence() must run before the
 * written memory is handed to another thread (the end of each thread's
 * share).  Without SSE2 (non-x86 builds) the copy is a memcpy.
 */
#ifndef SIGMOID_BACKWARD_STREAM_H
#define SIGMOID_BACKWARD_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#  include <emmintrin.h>
#  define SB_HAVE_STREAM 1
#else
#  define SB_HAVE_STREAM 0
#endif

#define SB_LINE 64

static inline void sb_stream_copy(void *dst, const void *src, size_t nbytes)
{
#if SB_HAVE_STREAM
    char *d = (char *)dst;
    const char *s = (const char *)src;
    size_t head = (SB_LINE - ((uintptr_t)d & (SB_LINE - 1))) & (SB_LINE - 1);
    if (head > nbytes) head = nbytes;
    memcpy(d, s, head);
    d += head; s += head; nbytes -= head;
    for (; nbytes >= SB_LINE; nbytes -= SB_LINE, d += SB_LINE, s += SB_LINE) {
        /* SSE2 is enough: the store width does not change the traffic, and
         * one full line in four stores fills a write-combining buffer. */
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, nbytes);
#else
    memcpy(dst, src, nbytes);
#endif
}

static inline void sb_stream_fence(void)
{
#if SB_HAVE_STREAM
    _mm_sfence();
#endif
}

/* Bytes from the last 64-byte boundary at or before p to p. */
static inline size_t sb_line_misalignment(const void *p)
{
    return (size_t)((uintptr_t)p & (SB_LINE - 1));
}

#endif /* SIGMOID_BACKWARD_STREAM_H */
