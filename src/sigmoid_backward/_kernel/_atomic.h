/*
 * Relaxed atomic loads and stores of the settings that kernels read without
 * the GIL (the loops in use, the thresholds, the default thread count) while
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
SB_ATOMIC_ACCESSORS(ptr, const void *)

#endif /* SIGMOID_BACKWARD_ATOMIC_H */
