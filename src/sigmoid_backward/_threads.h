/*
 * How many OpenMP threads a kernel call uses: the C half of the thread
 * policy.  _threads.py documents the policy and validates arguments; the
 * ufunc's inner loop runs without the GIL, so the state it reads is here.
 *
 * - sb_threads_set_default(n) is set_num_threads(n); 0 restores the default,
 *   which is OpenMP's limit in the calling thread (OMP_NUM_THREADS,
 *   omp_set_num_threads, threadpoolctl).
 * - sb_threads_set_call(n) makes the calling thread's kernel calls use n
 *   threads until it is set back to 0: the function's num_threads= around
 *   its ufunc call.  It is thread-local, so calls from other Python threads
 *   keep their own counts.
 * - sb_threads_for_call() is the count for the next kernel call in this
 *   thread: an explicit count as given, else the default capped by OpenMP's
 *   limit; either capped at the processors this process may use, read once
 *   at import (omp_get_num_procs asks the kernel for the affinity mask, which
 *   costs more than a small call).
 *
 * fork(): GNU libgomp keeps its thread pool across parallel regions, and a
 * child process inherits the pool's bookkeeping but not its threads, so the
 * child's first parallel region waits forever for them.  A child forked
 * after this module ran a parallel region therefore runs every call on one
 * thread (as PyTorch's data-loader workers do).  A child forked before any
 * parallel region keeps its threads.
 */
#ifndef SIGMOID_BACKWARD_THREADS_H
#define SIGMOID_BACKWARD_THREADS_H

#include "_openmp.h"

#if defined(_MSC_VER) && !defined(__clang__)
#  define SB_THREAD_LOCAL __declspec(thread)
#else
#  define SB_THREAD_LOCAL _Thread_local
#endif

#if defined(__unix__) || defined(__APPLE__)
#  include <pthread.h>
#  define SB_HAVE_FORK 1
#else
#  define SB_HAVE_FORK 0
#endif

static int sb_num_procs = 1;            /* processors this process may use */
static int sb_default_threads = 0;      /* set_num_threads; 0: OpenMP's limit */
static SB_THREAD_LOCAL int sb_call_threads = 0;   /* num_threads=; 0: default */
/* Set before the first parallel region; a forked child that inherits it
 * set runs single-threaded (sb_forked_after_team). */
static volatile int sb_team_started = 0;
static volatile int sb_forked_after_team = 0;

#if SB_HAVE_FORK
static void sb_threads_after_fork_in_child(void)
{
    if (sb_team_started) sb_forked_after_team = 1;
}
#endif

/* Once, at import. */
static void sb_threads_init(void)
{
    sb_num_procs = sb_omp_num_procs();
    if (sb_num_procs < 1) sb_num_procs = 1;
#if SB_HAVE_FORK && defined(_OPENMP)
    pthread_atfork(NULL, NULL, sb_threads_after_fork_in_child);
#endif
}

static inline void sb_threads_set_default(int n) { sb_default_threads = n > 0 ? n : 0; }
static inline void sb_threads_set_call(int n) { sb_call_threads = n > 0 ? n : 0; }
static inline int sb_threads_call(void) { return sb_call_threads; }

/* OpenMP's limit in the calling thread, or the processors when it makes no
 * sense: LLVM's libomp turns OMP_NUM_THREADS=garbage into a negative limit
 * (GNU libgomp ignores it). */
static inline int sb_threads_limit(void)
{
    const int limit = sb_omp_max_threads();
    return limit >= 1 ? limit : sb_num_procs;
}

/* The default count: set_num_threads, else OpenMP's limit; 1 without
 * OpenMP or in a child forked after a parallel region. */
static inline int sb_threads_default(void)
{
    if (!sb_openmp_enabled() || sb_forked_after_team) return 1;
    return sb_default_threads ? sb_default_threads : sb_threads_limit();
}

/* The count for `requested` threads (0: the caller's default): an explicit
 * count as given, the default capped by OpenMP's limit, both capped at the
 * processors. */
static inline int sb_threads_for(int requested)
{
    int n;
    if (!sb_openmp_enabled() || sb_forked_after_team) return 1;
    if (requested > 0) {
        n = requested;
    } else {
        const int limit = sb_threads_limit();
        n = sb_threads_default();
        if (n > limit) n = limit;
    }
    if (n > sb_num_procs) n = sb_num_procs;
    return n < 1 ? 1 : n;
}

/* The count for the calling thread's next kernel call. */
static inline int sb_threads_for_call(void) { return sb_threads_for(sb_call_threads); }

/* Record that a parallel region is about to run (see fork() above). */
static inline void sb_threads_team_starts(void) { sb_team_started = 1; }

#endif /* SIGMOID_BACKWARD_THREADS_H */
