/*
 * Relaxed atomic loads and stores of the settings that kernels read without
 * the GIL (the loops in use, the thresholds, the thread policy's state) while
 * another thread may change them.  A plain access would be a data race,
 * undefined behaviour in C11; a relaxed atomic access compiles to the same
 * single load or store on x86-64 and AArch64.  Relaxed is enough: each value
 * is valid on its own (every set of loops gives the same bits, and no
 * threshold or thread count changes a result), and nothing is published
 * through them.
 */
#ifndef SIGMOID_BACKWARD_ATOMIC_H
#define SIGMOID_BACKWARD_ATOMIC_H

#include <stddef.h>

#if defined(_MSC_VER) && !defined(__clang__)
/* MSVC has no __atomic builtins in C; a volatile access of an aligned int or
 * pointer is one load or store on every target it supports. */
#  define SB_ATOMIC_ACCESSORS(name, T)                                           \
    static inline T sb_load_##name(T *p) { return *(volatile T *)p; }          \
    static inline void sb_store_##name(T *p, T v) { *(volatile T *)p = v; }
#else
#  define SB_ATOMIC_ACCESSORS(name, T)                                           \
    static inline T sb_load_##name(T *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); } \
    static inline void sb_store_##name(T *p, T v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
#endif

SB_ATOMIC_ACCESSORS(int, int)
SB_ATOMIC_ACCESSORS(size, ptrdiff_t)
SB_ATOMIC_ACCESSORS(ll, long long)
SB_ATOMIC_ACCESSORS(ptr, const void *)

/* Read-modify-write of an int, for the thread pool's token count and the
 * calls in flight, and of a long long, for the back-off's credit
 * (_threads.h); the adds return the new value.  Relaxed, as above: none
 * orders anything. */
#if defined(_MSC_VER) && !defined(__clang__)
#  include <intrin.h>
static inline int sb_cas_int(int *p, int *expected, int desired)
{
    long seen = _InterlockedCompareExchange((volatile long *)p, desired, *expected);
    if (seen == *expected) return 1;
    *expected = (int)seen;
    return 0;
}
static inline int sb_add_int(int *p, int v)
{
    return (int)_InterlockedExchangeAdd((volatile long *)p, v) + v;
}
static inline long long sb_add_ll(long long *p, long long v)
{
    return _InterlockedExchangeAdd64((volatile long long *)p, v) + v;
}
#else
static inline int sb_cas_int(int *p, int *expected, int desired)
{
    return __atomic_compare_exchange_n(p, expected, desired, 1, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}
static inline int sb_add_int(int *p, int v) { return __atomic_add_fetch(p, v, __ATOMIC_RELAXED); }
static inline long long sb_add_ll(long long *p, long long v)
{
    return __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}
#endif

#endif /* SIGMOID_BACKWARD_ATOMIC_H */
