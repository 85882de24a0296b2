/*
 * Multi-threaded calls after fork(), for _threads.h, which includes it after
 * its counters (the child resets them); not included alone.
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
#ifndef SIGMOID_BACKWARD_THREADS_FORK_H
#define SIGMOID_BACKWARD_THREADS_FORK_H

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
    /* Only the forking thread came along, and it was not in a call. */
    sb_store_int(&sb_free_cpus, sb_load_int(&sb_num_procs));
    sb_store_int(&sb_in_flight, 0);
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

#endif /* SIGMOID_BACKWARD_THREADS_FORK_H */
