/*
 * How many OpenMP threads a kernel call uses, and where its team starts: the
 * thread policy, stated for the code here and for users in docs/usage.md
 * ("Threads and fork()").  _threads.py is its Python API and validates
 * arguments; the ufunc's inner loop runs without the GIL, so the state it
 * reads is here.
 *
 * - sb_threads_set_default(n) is set_num_threads(n); 0 restores the default,
 *   which is OpenMP's limit in the calling thread (OMP_NUM_THREADS,
 *   omp_set_num_threads, threadpoolctl).
 * - sb_threads_set_call(n) makes the calling thread's kernel calls use n
 *   threads until it is set back to 0: the function's num_threads= around
 *   its ufunc call.  It is thread-local, so calls from other Python threads
 *   keep their own counts.
 * - sb_threads_resolve(requested) is the count for a call asking for
 *   `requested` threads (0: the calling thread's num_threads=, else the
 *   default capped by OpenMP's limit); every count is capped at the
 *   processors this process may use, read once at import
 *   (omp_get_num_procs asks the kernel for the affinity mask, which costs
 *   more than a small call), and at SB_MAX_THREADS: more threads than
 *   processors never help, and a huge count must not ask OpenMP for
 *   thousands of threads.  An explicit count is not lowered to OpenMP's
 *   limit, as in scikit-learn.  A call wakes no more threads than its
 *   output pays for (_thresholds.py, _kernels.pyx's compute).
 *
 * fork(): GNU libgomp keeps a pool of threads for each thread that started
 * a parallel region, in that thread's thread-local state.  A child process
 * inherits the forking thread's state but not the pool's threads, so a
 * parallel region started by that thread in the child waits forever for
 * them, whoever (us, or any other library on the same runtime) started the
 * region in the parent.  Threads the child creates have no pool and are
 * safe.  So after fork() the forking thread, and only it, is marked
 * (sb_threads_must_delegate), and its multi-threaded calls start their
 * team from a helper thread made in the child (sb_threads_delegate): the
 * child keeps every thread, and nothing depends on who ran OpenMP before.
 */
#ifndef SIGMOID_BACKWARD_THREADS_H
#define SIGMOID_BACKWARD_THREADS_H

#include "_atomic.h"
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

/* No call asks OpenMP for more threads than this, whatever it is told. */
#define SB_MAX_THREADS (1 << 30)

static int sb_num_procs = 1;            /* processors this process may use */
static int sb_default_threads = 0;      /* set_num_threads; 0: OpenMP's limit */
static SB_THREAD_LOCAL int sb_call_threads = 0;   /* num_threads=; 0: default */

/* ---- fork(): a helper thread for the thread that forked ---------------- */

#if SB_HAVE_FORK && defined(_OPENMP)
/* Set in the child, in the forking thread only (thread-local). */
static SB_THREAD_LOCAL int sb_forked_here = 0;

/* One helper thread per process, made on first use; the caller hands it a
 * task and waits.  state: 0 idle, 1 task posted, 2 task done. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int started, state;
    void (*task)(void *);
    void *arg;
} sb_helper = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, NULL};

static void *sb_helper_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&sb_helper.lock);
    for (;;) {
        while (sb_helper.state != 1) pthread_cond_wait(&sb_helper.changed, &sb_helper.lock);
        pthread_mutex_unlock(&sb_helper.lock);
        sb_helper.task(sb_helper.arg);
        pthread_mutex_lock(&sb_helper.lock);
        sb_helper.state = 2;
        pthread_cond_broadcast(&sb_helper.changed);
    }
    return NULL;
}

static void sb_threads_after_fork_in_child(void)
{
    sb_forked_here = 1;
    /* The parent's helper thread, if any, did not come along; the lock may
     * have been held by it at the fork. */
    pthread_mutex_init(&sb_helper.lock, NULL);
    pthread_cond_init(&sb_helper.changed, NULL);
    sb_helper.started = 0;
    sb_helper.state = 0;
}

static inline int sb_threads_must_delegate(void) { return sb_forked_here; }

/* Run task(arg) on the helper thread and wait for it.  Returns 0, or -1
 * (nothing run) when no helper thread could be made. */
static int sb_threads_delegate(void (*task)(void *), void *arg)
{
    pthread_mutex_lock(&sb_helper.lock);
    if (!sb_helper.started) {
        pthread_t thread;
        pthread_attr_t attr;
        int failed = pthread_attr_init(&attr);
        if (!failed) {
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            failed = pthread_create(&thread, &attr, sb_helper_main, NULL);
            pthread_attr_destroy(&attr);
        }
        if (failed) {
            pthread_mutex_unlock(&sb_helper.lock);
            return -1;
        }
        sb_helper.started = 1;
    }
    while (sb_helper.state != 0) pthread_cond_wait(&sb_helper.changed, &sb_helper.lock);
    sb_helper.task = task;
    sb_helper.arg = arg;
    sb_helper.state = 1;
    pthread_cond_broadcast(&sb_helper.changed);
    while (sb_helper.state != 2) pthread_cond_wait(&sb_helper.changed, &sb_helper.lock);
    sb_helper.state = 0;
    pthread_cond_broadcast(&sb_helper.changed);
    pthread_mutex_unlock(&sb_helper.lock);
    return 0;
}
#else
static inline int sb_threads_must_delegate(void) { return 0; }
static inline int sb_threads_delegate(void (*task)(void *), void *arg)
{
    (void)task; (void)arg;
    return -1;
}
#endif

/* Once, at import. */
static void sb_threads_init(void)
{
    int procs = sb_omp_num_procs();
    sb_store_int(&sb_num_procs, procs < 1 ? 1 : procs);
#if SB_HAVE_FORK && defined(_OPENMP)
    pthread_atfork(NULL, NULL, sb_threads_after_fork_in_child);
#endif
}

static inline void sb_threads_set_default(int n) { sb_store_int(&sb_default_threads, n > 0 ? n : 0); }
static inline int sb_threads_get_default_setting(void) { return sb_load_int(&sb_default_threads); }
static inline void sb_threads_set_call(int n) { sb_call_threads = n > 0 ? n : 0; }
static inline int sb_threads_call(void) { return sb_call_threads; }
static inline int sb_threads_procs(void) { return sb_load_int(&sb_num_procs); }

/* OpenMP's limit in the calling thread, or the processors when it makes no
 * sense: LLVM's libomp turns OMP_NUM_THREADS=garbage into a negative limit
 * (GNU libgomp ignores it). */
static inline int sb_threads_limit(void)
{
    const int limit = sb_omp_max_threads();
    return limit >= 1 ? limit : sb_threads_procs();
}

/* The default count: set_num_threads, else OpenMP's limit; 1 without
 * OpenMP. */
static inline int sb_threads_default(void)
{
    if (!sb_openmp_enabled()) return 1;
    const int set = sb_threads_get_default_setting();
    return set ? set : sb_threads_limit();
}

/* The count for a call asking for `requested` threads (0: the calling
 * thread's num_threads=, else the default capped by OpenMP's limit), capped
 * at the processors. */
static inline int sb_threads_resolve(int requested)
{
    int n;
    if (!sb_openmp_enabled()) return 1;
    if (requested <= 0) requested = sb_call_threads;
    if (requested > 0) {
        n = requested;
    } else {
        const int limit = sb_threads_limit();
        n = sb_threads_default();
        if (n > limit) n = limit;
    }
    const int procs = sb_threads_procs();
    if (n > procs) n = procs;
    return n < 1 ? 1 : n;
}

#endif /* SIGMOID_BACKWARD_THREADS_H */
