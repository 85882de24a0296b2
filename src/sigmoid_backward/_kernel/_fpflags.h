/*
 * Floating-point exception flags around a kernel call.
 *
 * NumPy checks the calling thread's flags after each inner loop to apply
 * np.errstate.  The kernels do not report floating-point errors: an
 * overflow to inf or an invalid operation giving NaN is a value, as in the
 * operator this library mirrors (and PyTorch, and scipy.special), and the
 * flags could not be reported faithfully anyway: OpenMP workers raise them
 * in their own threads, and the 16-bit conversions of different instruction
 * sets raise different ones for the same bits.  So a kernel call restores
 * the calling thread's flags to what they were before it, which also keeps
 * the flags NumPy's own casts raised in the same ufunc call (its "overflow
 * encountered in cast" warnings still work).
 *
 * The one-byte dtypes' tables are made in the default environment
 * (sb_fpenv_default, _loops_table.h), whatever the importing thread had set.
 */
#ifndef SIGMOID_BACKWARD_FPFLAGS_H
#define SIGMOID_BACKWARD_FPFLAGS_H

#if defined(__x86_64__) || defined(_M_X64)
#  include <xmmintrin.h>
/* SSE arithmetic only sets MXCSR's six flag bits: save and restore them. */
typedef unsigned int sb_fpflags_t;
static inline sb_fpflags_t sb_fpflags_save(void) { return _mm_getcsr() & 0x3Fu; }
static inline void sb_fpflags_restore(sb_fpflags_t saved)
{
    _mm_setcsr((_mm_getcsr() & ~0x3Fu) | saved);
}
/* The whole environment, and the default one for a while: every exception
 * masked, round-to-nearest, no flush-to-zero or denormals-are-zero. */
typedef unsigned int sb_fpenv_t;
static inline sb_fpenv_t sb_fpenv_default(void)
{
    const unsigned int saved = _mm_getcsr();
    _mm_setcsr(0x1F80u);
    return saved;
}
static inline void sb_fpenv_restore(sb_fpenv_t saved) { _mm_setcsr(saved); }
#else
#  include <fenv.h>
typedef fexcept_t sb_fpflags_t;
static inline sb_fpflags_t sb_fpflags_save(void)
{
    fexcept_t saved;
    fegetexceptflag(&saved, FE_ALL_EXCEPT);
    return saved;
}
static inline void sb_fpflags_restore(sb_fpflags_t saved)
{
    fesetexceptflag(&saved, FE_ALL_EXCEPT);
}
typedef fenv_t sb_fpenv_t;
static inline sb_fpenv_t sb_fpenv_default(void)
{
    fenv_t saved;
    fegetenv(&saved);
    fesetenv(FE_DFL_ENV);
    return saved;
}
static inline void sb_fpenv_restore(sb_fpenv_t saved) { fesetenv(&saved); }
#endif

#endif /* SIGMOID_BACKWARD_FPFLAGS_H */
