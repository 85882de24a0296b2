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
 * The load policy (on by default; sb_threads_set_adaptive(0) turns it off
 * for tests and benchmarks) lowers only the DEFAULT count, never an
 * explicit one, and never changes a result: with two OpenMP threads on
 * busy CPUs, the region's closing barrier waits for a preempted thread, so
 * a call cost a scheduler time slice (milliseconds) instead of its
 * microseconds (issue 26, docs/usage.md "Threads and fork()").  Two parts:
 *
 * - Sharing among callers in this process (sb_threads_claim/release): a
 *   pool holds one token per CPU; every call large enough for a team takes
 *   tokens for its threads, an explicit count all it asks, a default call
 *   what is free (at least its own thread), and gives them back at its
 *   end.  So while any call holds more than its own thread, all calls
 *   together hold at most the CPUs.  First come, first served alone let
 *   a caller that found the others between their calls take every CPU,
 *   and the next caller's own thread then made CPUs + 1 runnable threads,
 *   whose team waited at its barrier: two Python threads looping a 1e6
 *   float32 call started 3-6 teams a second that way (of 2,500-3,400
 *   calls).  So the calls in flight are counted too, and for SB_SHARE_NS
 *   after N of them were seen at once, a default call takes at most
 *   CPUs/N: callers that keep overlapping share the CPUs evenly (the same
 *   loop: 1 team, the first call's), and a lone caller gets its team back
 *   20 ms after the last overlap, far longer than the gap between a
 *   worker's tasks and far shorter than a user would notice.
 * - Back-off when the machine is busy (sb_threads_load_cap and
 *   sb_threads_note_call): each thread of a team times the chunks it
 *   claimed (_fused.pxd's _split), and one thread alone would have taken
 *   about the whole call at the fastest thread's rate, by its CPU time
 *   where the parts are long (sb_threads_alone_ns).  What each default
 *   team call saved against that (negative when it waited for a preempted
 *   thread) goes into a credit, capped at 10 ms, 1 ms at import.  While the
 *   credit holds, teams run: on an idle machine a rare stall (a host's
 *   interrupt, another guest) is paid from what thousands of calls saved,
 *   and the default keeps its full speed.  When the credit runs out, the
 *   default count halves for a period, and then the next call probes the
 *   full count again.  The period is 50 times what the last call wasted
 *   (so a probe that loses as much costs about 2% of the time, whatever a
 *   time slice costs here), 1 ms to 2 s; but the first back-off since the
 *   credit was last full lasts at most 50 ms, and each next one at most 4x
 *   longer: one stall of tens of ms (a first call's page faults and thread
 *   creation) must not hold an idle process at one thread for seconds.  A
 *   first version backed off at every call slower than one thread, and on
 *   an idle guest the rare stalls kept the default at one thread (0.91x
 *   one thread's time at 1e6 float32, against 0.54x).
 *   Only the default's calls are timed (two reads of CLOCK_MONOTONIC per
 *   thread, tens of ns).
 *
 * fork(): _threads_fork.h.
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
#  include <time.h>
#  define SB_HAVE_FORK 1
#  define SB_HAVE_MONOTONIC 1
#else
#  define SB_HAVE_FORK 0
#endif

/* No call asks OpenMP for more threads than this, whatever it is told. */
#define SB_MAX_THREADS (1 << 30)

static int sb_num_procs = 1;            /* processors this process may use */
static int sb_default_threads = 0;      /* set_num_threads; 0: OpenMP's limit */
static SB_THREAD_LOCAL int sb_call_threads = 0;   /* num_threads=; 0: default */
static SB_THREAD_LOCAL int sb_last_threads = 0;   /* the calling thread's last call's */
static int sb_adaptive = 1;             /* the load policy on the default */
static int sb_free_cpus = 1;            /* tokens left in the pool (may go below 0) */
static int sb_in_flight = 0;            /* calls holding tokens now */
/* Sharing: default calls use at most sb_num_procs / sb_share_callers
 * threads until sb_share_until (ns of sb_now_ns). */
static int sb_share_callers = 1;
static long long sb_share_until = 0;
#define SB_SHARE_NS 20000000LL              /* 20 ms after calls last overlapped */
/* Back-off: default calls use at most sb_cap threads until sb_cap_until
 * (ns of sb_now_ns); sb_credit is what the default's teams saved lately
 * against one thread (ns, at most SB_CREDIT_MAX_NS). */
static int sb_cap = SB_MAX_THREADS;
static long long sb_cap_until = 0;
static long long sb_credit = 0;
static int sb_backoffs = 0;             /* back-offs since the credit was last full */
#define SB_CREDIT_MAX_NS 10000000LL         /* 10 ms: the stalls an idle machine absorbs */
#define SB_CREDIT_START_NS 1000000LL        /* 1 ms: a new process's first calls' */
#define SB_BACKOFF_PER_WASTE 50             /* a back-off lasts 50x what the loss wasted, */
#define SB_BACKOFF_MIN_NS 1000000LL         /* at least 1 ms, */
#define SB_BACKOFF_FIRST_NS 50000000LL      /* at most 50 ms x 4^(back-offs since full), */
#define SB_BACKOFF_MAX_NS 2000000000LL      /* and at most 2 s */

/* fork(): the forking thread's calls, started from a helper thread. */
#include "_threads_fork.h"

/* Once, at import. */
static void sb_threads_init(void)
{
    int procs = sb_omp_num_procs();
    sb_store_int(&sb_num_procs, procs < 1 ? 1 : procs);
    sb_store_int(&sb_free_cpus, procs < 1 ? 1 : procs);
    /* A process starts with a credit: with none, its first team calls'
     * costs (creating the pool's threads, the first page faults) backed it
     * off, and on an idle guest a loop of 1e5 float32 calls ran on one
     * thread for its first 250-500 ms (probes that woke a sleeping pool
     * lost again, 4 of 4 fresh processes; 0 of 6 with 1 ms).  1 ms, not the
     * full 10: a process started on busy CPUs backs off after its first
     * lost time slice, not after several. */
    sb_store_ll(&sb_credit, SB_CREDIT_START_NS);
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

/* ---- the load policy ----------------------------------------------------- */

static inline void sb_threads_set_adaptive(int on) { sb_store_int(&sb_adaptive, on != 0); }
static inline int sb_threads_adaptive(void) { return sb_load_int(&sb_adaptive); }

/* Whether every default call of the process runs on its own thread alone
 * (set_num_threads(1), or one processor).  A default call resolved to one
 * thread then asks nothing of the load policy: the back-off cannot lower
 * it, and its token would change no other call's count (a default one also
 * resolves to one; an explicit one takes all it asks), except while the
 * setting changes: calls that skipped hold no token for the moment they
 * still run.  Skipping the clock read and the pool's four atomic
 * operations, which wait for the loop's stores to drain, saved about
 * 100-150 ns of a 1e5 float32 call on one thread (1%; NOTES.md, 40). */
static inline int sb_threads_default_alone(void)
{
    return sb_threads_get_default_setting() == 1 || sb_threads_procs() == 1;
}
static inline int sb_threads_free_cpus(void) { return sb_load_int(&sb_free_cpus); }
/* The threads the calling thread's last kernel call ran on (tests). */
static inline void sb_threads_set_last(int n) { sb_last_threads = n; }
static inline int sb_threads_last(void) { return sb_last_threads; }

/* A monotonic clock in ns: CLOCK_MONOTONIC where POSIX has it (the vDSO,
 * about 20 ns), which no change of the wall clock moves (LLVM's libomp
 * reads omp_get_wtime from the wall clock), else OpenMP's.  Only teams
 * are timed, so a build without OpenMP never asks. */
static inline long long sb_now_ns(void)
{
#if defined(_OPENMP) && defined(SB_HAVE_MONOTONIC)
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
#elif defined(_OPENMP)
    return (long long)(omp_get_wtime() * 1e9);
#else
    return 0;
#endif
}

/* The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID: a system
 * call, about 200 ns on the project's guests, so read only around a
 * thread's whole share of a long call), or -1 where there is none. */
static inline long long sb_thread_cpu_ns(void)
{
#if defined(_OPENMP) && defined(SB_HAVE_MONOTONIC) && defined(CLOCK_THREAD_CPUTIME_ID)
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
#else
    return -1;
#endif
}

/* What one thread alone would take, in ns, for a call of `total` elements
 * that `nthreads` threads shared: thread t did n[t] of them in wall[t] ns
 * of its chunks, with cpu[t] ns of CPU time over its share (-1: not read).
 * From the fastest thread's rate: by the wall clock, a thread of the team
 * that the scheduler shared with another process is slower than a lone
 * thread would be, so under a load that takes both CPUs from the team the
 * estimate was too slow, and a team that lost looked as if it won (a
 * strided 1e7 call under another process's torch threads: 1.37x one
 * thread's time, the credit full).  By CPU time it is the thread's rate
 * when it ran: a lone thread that the load leaves alone.  -1: no thread
 * did any. */
static inline long long sb_threads_alone_ns(int nthreads, const long long *wall,
                                            const long long *cpu, const long long *n,
                                            long long total)
{
    double best = -1;
    for (int t = 0; t < nthreads; t++) {
        if (n[t] <= 0) continue;
        const double ns = cpu[t] >= 0 && cpu[t] < wall[t] ? (double)cpu[t] : (double)wall[t];
        if (best < 0 || ns / (double)n[t] < best) best = ns / (double)n[t];
    }
    return best < 0 ? -1 : (long long)(best * (double)total);
}

/* Take threads for a call that may use `want` (>= 1) of them, at `now` (ns
 * of sb_now_ns; 0 for an explicit count, which reads the clock only when
 * another call is in flight): an explicit count takes all it asks, a
 * default call its share of the CPUs while calls overlap, and no more than
 * the pool has free, at least its own thread.  Returns the count taken; the
 * call gives it back with sb_threads_release. */
static inline int sb_threads_claim(int want, int is_explicit, long long now)
{
    const int callers = sb_add_int(&sb_in_flight, 1);
    if (callers > 1) {
        if (!now) now = sb_now_ns();
        /* the most callers seen at once since the last window ended */
        if (now >= sb_load_ll(&sb_share_until) || callers > sb_load_int(&sb_share_callers))
            sb_store_int(&sb_share_callers, callers);
        sb_store_ll(&sb_share_until, now + SB_SHARE_NS);
    }
    if (!is_explicit && now < sb_load_ll(&sb_share_until)) {
        const int share = sb_threads_procs() / sb_load_int(&sb_share_callers);
        if (want > share) want = share < 1 ? 1 : share;
    }
    int free_now = sb_load_int(&sb_free_cpus), take;
    do {
        take = is_explicit ? want : (free_now < 1 ? 1 : (free_now < want ? free_now : want));
    } while (!sb_cas_int(&sb_free_cpus, &free_now, free_now - take));
    return take;
}

static inline void sb_threads_release(int taken)
{
    sb_add_int(&sb_free_cpus, taken);
    sb_add_int(&sb_in_flight, -1);
}

/* The most threads a default call may use now (the back-off's cap, or no
 * cap once its period is over: the next call probes). */
static inline int sb_threads_load_cap(long long now)
{
    return now < sb_load_ll(&sb_cap_until) ? sb_load_int(&sb_cap) : SB_MAX_THREADS;
}

/* What a call on `nthreads` threads saved against one thread (ns; negative:
 * it lost): it took `elapsed` ns, and its fastest thread would have done
 * an equal part (1/nthreads of the call, at the rate of its chunks) in
 * `fastest_part` ns; one thread alone runs at least as fast as that one,
 * so it would have taken about nthreads x that. */
static inline long long sb_threads_saved(int nthreads, long long elapsed,
                                         long long fastest_part)
{
    return (long long)nthreads * fastest_part - elapsed;
}

/* After a default call on `nthreads` (> 1) threads, started at `start` and
 * ended at `end` (ns), whose fastest part took `fastest_part` ns: add what
 * it saved to the credit, and back off when the credit is spent.  Races
 * between threads only move the credit or the cap, never a result. */
static inline void sb_threads_note_call(int nthreads, long long start, long long end,
                                        long long fastest_part)
{
    const long long saved = sb_threads_saved(nthreads, end - start, fastest_part);
    const long long credit = sb_add_ll(&sb_credit, saved);
    if (credit >= SB_CREDIT_MAX_NS) {
        sb_add_ll(&sb_credit, SB_CREDIT_MAX_NS - credit);
        sb_store_int(&sb_backoffs, 0);
    } else if (credit < 0) {
        const long long waste = saved < 0 ? -saved : -credit;
        const int earlier = sb_load_int(&sb_backoffs);
        long long ramp = SB_BACKOFF_FIRST_NS, period = SB_BACKOFF_PER_WASTE * waste;
        for (int k = 0; k < earlier && ramp < SB_BACKOFF_MAX_NS; k++) ramp *= 4;
        if (period > ramp) period = ramp;
        if (period < SB_BACKOFF_MIN_NS) period = SB_BACKOFF_MIN_NS;
        if (period > SB_BACKOFF_MAX_NS) period = SB_BACKOFF_MAX_NS;
        sb_store_int(&sb_backoffs, earlier + 1 < 64 ? earlier + 1 : 64);
        sb_add_ll(&sb_credit, -credit);
        sb_store_int(&sb_cap, nthreads / 2 > 1 ? nthreads / 2 : 1);
        sb_store_ll(&sb_cap_until, end + period);
    }
}

/* Forget the back-off and the callers seen (tests, and the bench between
 * loads). */
static inline void sb_threads_reset_load(void)
{
    sb_store_ll(&sb_credit, 0);
    sb_store_int(&sb_backoffs, 0);
    sb_store_ll(&sb_cap_until, 0);
    sb_store_int(&sb_cap, SB_MAX_THREADS);
    sb_store_ll(&sb_share_until, 0);
    sb_store_int(&sb_share_callers, 1);
}

/* The credit (tests). */
static inline long long sb_threads_credit(void) { return sb_load_ll(&sb_credit); }

#endif /* SIGMOID_BACKWARD_THREADS_H */
