/* The agent thread and the core hand-over (agent.h has the protocol).
 *
 * The agent's states:
 *   WATCH  it spins (pause, then yield) on the words the application
 *          writes when it leaves a call: `work` (something it started is
 *          outstanding), `leaves` (how many calls it has left) and, with
 *          work, `left_at` (a time-stamp counter reading, where it is
 *          invariant).  When the application is outside with work
 *          outstanding and has not come back for FMPL_AGENT_GRACE ns, it
 *          is computing: the agent takes the core (SERVE).  An application that comes straight
 *          back (a loop of nonblocking calls) is left alone: taking the
 *          core costs a membarrier, an interrupt of the application's core.
 *          With no sign of the application for FMPL_AGENT_LINGER ns the
 *          agent stops watching (SLEEP, or NAP when only watchers remain).
 *   SERVE  progress passes while work is outstanding and the application
 *          stays outside; an empty pass spins, then yields; after
 *          FMPL_AGENT_POLL empty passes it gives the core back and NAPs.
 *   NAP    a timed futex wait on the bell, doubling from 2 us up to
 *          FMPL_AGENT_NAP, then SERVE again: work whose peer is slow (a
 *          receive posted long before its send) costs little CPU.
 *   SLEEP  sleeping = 1, an untimed futex wait on the bell: an idle job
 *          costs no CPU time.  The application rings the bell when it
 *          leaves a call with work outstanding and finds the agent in this
 *          state (sleep_on_bell); a local peer rings it for an active
 *          message (fmpl_agent_ring).
 * The bell lives in this rank's shared segment (fabric.h: fmpl_fab_bell). */
#include "progress/agent.h"
#include "progress/progress.h"
#include "fabric/fabric.h"
#include "base/log.h"
#include "base/timer.h"
#include "base/tunable.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

FMPL_TUNABLE(tunable_agent, "FMPL_AGENT", "auto",
             "the progress agent: off; thread (a thread per process progresses requests, "
             "schedules and active messages while the application computes); auto (thread when "
             "this host has a core to spare for it: more online cores than ranks of the job "
             "here, else off)");
FMPL_TUNABLE(tunable_agent_poll, "FMPL_AGENT_POLL", "2000",
             "empty progress passes (spinning, then yielding) before the agent naps while "
             "work is outstanding");
FMPL_TUNABLE(tunable_agent_grace, "FMPL_AGENT_GRACE", "5000",
             "nanoseconds the application must stay outside the library, with work "
             "outstanding, before the agent takes over its progress");
FMPL_TUNABLE(tunable_agent_linger, "FMPL_AGENT_LINGER", "200000",
             "nanoseconds the agent keeps watching without a sign of the application "
             "before it sleeps");
FMPL_TUNABLE(tunable_agent_nap, "FMPL_AGENT_NAP", "500",
             "longest nap of the agent, in microseconds, while work is outstanding and "
             "nothing advances (naps double from 2 us)");

fmpl_core_flags fmpl_core;
int fmpl_agent_on;
int fmpl_core_light;
int fmpl_core_held;
int fmpl_core_no_keep;
FMPL_TLS unsigned fmpl_core_depth;

static pthread_t agent_thread;
static _Atomic int agent_stop;
static _Atomic uint32_t local_bell;     /* when the segment has none */
static _Atomic uint32_t *bell;          /* this rank's doorbell */
static _Atomic uint32_t *sleeping;      /* its "the agent sleeps" word */
static _Atomic uint32_t local_sleeping;
static _Atomic int watchers; /* changed with the core held; read by the agent anywhere */
static _Atomic int app_work;        /* the application left with work outstanding */
static _Atomic unsigned app_leaves; /* calls it has left */
static _Atomic uint64_t app_left_at; /* when it last left with work (stamp()) */
/* The agent is pinned to cores no rank of this host is bound to (set just
 * after the thread starts): it watches all the time then, and times the
 * grace itself (watch_gap), so the application need not stamp its leaves. */
static _Atomic int agent_has_core;
static double ticks_per_ns;         /* stamp() ticks per nanosecond; 0: no stamps */
static long grace_ns, linger_ns;
static long stat_takes, stat_refused, stat_passes, stat_advanced;
static long poll_budget;
static long nap_max_ns;

/* A cheap clock for the application's side: the time-stamp counter where
 * it is constant and synchronised across cores (x86-64 with constant_tsc,
 * checked at start), else nothing (the agent then times the grace from
 * when it notices the application leave, which may be later: with as many
 * runnable threads as cores it runs only once the application sleeps). */
static inline uint64_t stamp(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

static void heavy_barrier(void)
{
    if (fmpl_core_light)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

/* ---------------------------------------------------- application side */

void fmpl_core_wait_for_agent(void)
{
    /* app_in is 1: the agent sees it after its current pass and lets go. */
    for (unsigned polls = 0; atomic_load_explicit(&fmpl_core.agent_in, memory_order_acquire);
         polls++)
        fmpl_spin_or_yield(polls, 64);
}

static void ring(_Atomic uint32_t *b, _Atomic uint32_t *s)
{
    atomic_fetch_add_explicit(b, 1, memory_order_seq_cst);
    if (atomic_load_explicit(s, memory_order_seq_cst))
        futex(b, FUTEX_WAKE, 1, NULL);
}

void fmpl_core_handback(void)
{
    fmpl_core_held = 0;
    if (!fmpl_agent_on) { /* the agent stopped inside this call (finalize) */
        atomic_store_explicit(&fmpl_core.app_in, 0, memory_order_release);
        return;
    }
    /* Still the owner: the pending test reads the core. */
    int work = fmpl_progress_pending() || watchers;
    atomic_store_explicit(&app_work, work, memory_order_relaxed);
    /* A constant order each: GCC makes an order chosen at run time seq_cst
     * (an xchg, which cost every call 10-20 ns). */
    unsigned leaves = atomic_load_explicit(&app_leaves, memory_order_relaxed) + 1;
    if (fmpl_core_light)
        atomic_store_explicit(&app_leaves, leaves, memory_order_relaxed);
    else
        atomic_store_explicit(&app_leaves, leaves, memory_order_seq_cst);
    /* The stamp: a time-stamp counter read, 24 ns on this virtual machine,
     * for an agent that may notice late (it shares a core or sleeps). */
    if (work && ticks_per_ns > 0 && !atomic_load_explicit(&agent_has_core, memory_order_relaxed))
        atomic_store_explicit(&app_left_at, stamp(), memory_order_relaxed);
    atomic_store_explicit(&fmpl_core.app_in, 0, memory_order_release);
    /* Ring only a sleeping agent (sleep_on_bell): the bell's line then stays
     * out of the application's way (a locked add on it, which the watching
     * agent reads, was 12% of a loop of self-sends). */
    if (work) {
        atomic_signal_fence(memory_order_seq_cst);
        if (atomic_load_explicit(sleeping,
                                 fmpl_core_light ? memory_order_relaxed : memory_order_seq_cst))
            ring(bell, sleeping);
    }
}

void fmpl_agent_watch(int delta)
{
    atomic_fetch_add_explicit(&watchers, delta, memory_order_relaxed);
    fmpl_core_no_keep += delta;
}

void fmpl_agent_expect_rings(int delta)
{
    fmpl_core_no_keep += delta;
}

void fmpl_agent_ring(int rank)
{
    /* The caller is inside the library: its own rank needs no ring. */
    if (rank == fmpl_fab.rank)
        return;
    _Atomic uint32_t *b, *s;
    if (!fmpl_fab_bell(rank, &b, &s))
        return;
    /* Always move the bell, then look whether the agent sleeps: the work
     * named by the ring is in a channel, which the agent does not look at
     * between publishing "sleeping" and its futex wait, so a ring skipped
     * because it was not asleep yet was lost (remote_copy_4 with the agent
     * on waited 30 s once, under a third test's load).  Against the agent's
     * store of "sleeping", heavy barrier and load of the bell (sleep_on_bell)
     * either it sees the bell moved or this sees it asleep and wakes it. */
    ring(b, s);
}

/* ----------------------------------------------------------- the agent */

static int take_core(void)
{
    atomic_store_explicit(&fmpl_core.agent_in, 1, memory_order_seq_cst);
    heavy_barrier();
    if (atomic_load_explicit(&fmpl_core.app_in, memory_order_seq_cst)) {
        atomic_store_explicit(&fmpl_core.agent_in, 0, memory_order_release);
        return 0;
    }
    atomic_thread_fence(memory_order_acquire);
    return 1;
}

static void give_core(void)
{
    atomic_store_explicit(&fmpl_core.agent_in, 0, memory_order_release);
}

/* Sleep until the bell moves from `seen` (or `ns` pass, if ns > 0), unless
 * the application has left a call since the agent saw `leaves` leaves.
 * The application rings only when it finds `sleeping` set (fmpl_core_
 * handback), which pairs with the check here as app_in with agent_in:
 * application: store app_leaves, load sleeping; agent: store sleeping,
 * heavy barrier, load app_leaves.  So either the application sees the
 * agent asleep and rings, or the agent sees the leave and stays up.  A
 * timed nap skips the barrier (an interrupt of the application's core):
 * a leave it misses waits at most for the nap's end. */
static void sleep_on_bell(uint32_t seen, unsigned leaves, long ns)
{
    atomic_store_explicit(sleeping, 1, memory_order_seq_cst);
    if (ns == 0)
        heavy_barrier();
    if (atomic_load_explicit(bell, memory_order_seq_cst) == seen &&
        atomic_load_explicit(&app_leaves, memory_order_seq_cst) == leaves &&
        !atomic_load_explicit(&agent_stop, memory_order_acquire)) {
        struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
        futex(bell, FUTEX_WAIT, seen, ns > 0 ? &ts : NULL);
    }
    atomic_store_explicit(sleeping, 0, memory_order_relaxed);
}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* SERVE, the core held: returns 1 when it stopped because nothing
 * advanced for a while (then NAP), 0 when the work is done or the
 * application wants the core. */
static int serve(void)
{
    long empty = 0;
    unsigned spins = 0;
    /* The first pass runs even with nothing outstanding here: a ring from
     * a peer (a forwarded copy, an active message) names work that only a
     * pass finds, in a channel. */
    int first = 1;
    for (;;) {
        if (atomic_load_explicit(&fmpl_core.app_in, memory_order_relaxed))
            return 0;
        if (!first && !fmpl_progress_pending() && !watchers)
            return 0;
        first = 0;
        stat_passes++;
        if (fmpl_progress() > 0) {
            stat_advanced++;
            empty = 0;
            spins = 0;
            continue;
        }
        if (++empty >= poll_budget)
            return 1;
        fmpl_spin_or_yield(spins, fmpl_spin_count);
        if (spins < fmpl_spin_count)
            spins++;
    }
}

/* Take the core and SERVE; returns serve's answer, or -1 when the
 * application holds the core. */
static int take_and_serve(void)
{
    if (!take_core()) {
        stat_refused++;
        return -1;
    }
    stat_takes++;
    fmpl_core_depth = 1;
    int stalled = serve();
    atomic_store_explicit(&app_work, fmpl_progress_pending() || watchers, memory_order_relaxed);
    fmpl_core_depth = 0;
    give_core();
    return stalled;
}

/* How long the application has been outside with work outstanding: by its
 * own stamp when there is one (seen_ns: since the agent noticed it leave;
 * an agent with a core of its own notices within WATCH_GAP_NS). */
static long outside_ns(long seen_ns)
{
    if (ticks_per_ns <= 0 || atomic_load_explicit(&agent_has_core, memory_order_relaxed))
        return seen_ns;
    uint64_t left = atomic_load_explicit(&app_left_at, memory_order_relaxed);
    uint64_t now = stamp();
    long ns = now > left ? (long)((double)(now - left) / ticks_per_ns) : 0;
    return ns > seen_ns ? ns : seen_ns;
}

/* Ticks of stamp() per nanosecond, over about 200 us of the clock; 0 when
 * the counter is not constant across cores and frequencies. */
static double calibrate_stamp(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    /* CPUID 0x80000007, EDX bit 8: invariant TSC */
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
    if (!(d & (1u << 8)))
        return 0;
    long t0 = now_ns();
    uint64_t s0 = stamp();
    while (now_ns() - t0 < 200000)
        ;
    long t1 = now_ns();
    uint64_t s1 = stamp();
    return t1 > t0 && s1 > s0 ? (double)(s1 - s0) / (double)(t1 - t0) : 0;
#else
    return 0;
#endif
}

/* Between two looks at the application's words while watching.  On a
 * core of its own (place_agent), each look pulls their cache lines to the
 * agent's core, and the application's next call, which writes them
 * (app_in, app_leaves), waits for them to come back: looking after every
 * yield (about 0.3 us), a loop of self-sends took 448-690 ns per message
 * instead of 148-159 with the agent off, 189-306 with this gap.  So there
 * the agent lets WATCH_GAP_NS pass on its own clock between looks (the
 * grace it times is 5 us).  Sharing a core with the application (or
 * floating), a look costs no transfer, and spinning would take the CPU from
 * the application: it spins briefly, then yields between looks. */
enum { WATCH_GAP_NS = 2000 };

static void watch_gap(long t, unsigned polls)
{
    if (!atomic_load_explicit(&agent_has_core, memory_order_relaxed)) {
        fmpl_spin_or_yield(polls, 64);
        return;
    }
    while (now_ns() - t < WATCH_GAP_NS)
        fmpl_cpu_relax();
}

static void *agent_main(void *arg)
{
    (void)arg;
    long nap = 2000;
    unsigned seen_leaves = atomic_load_explicit(&app_leaves, memory_order_relaxed);
    long last_sign = now_ns();
    unsigned polls = 0;
    while (!atomic_load_explicit(&agent_stop, memory_order_acquire)) {
        /* WATCH */
        uint32_t seen = atomic_load_explicit(bell, memory_order_seq_cst);
        long t = now_ns();
        unsigned leaves = atomic_load_explicit(&app_leaves, memory_order_relaxed);
        int inside = atomic_load_explicit(&fmpl_core.app_in, memory_order_relaxed);
        if (leaves != seen_leaves) {
            seen_leaves = leaves;
            last_sign = t;
        }
        if (!inside && atomic_load_explicit(&app_work, memory_order_relaxed) &&
            outside_ns(t - last_sign) >= grace_ns) {
            int stalled = take_and_serve();
            if (stalled > 0) {
                sleep_on_bell(seen, leaves, nap); /* NAP */
                nap = nap * 2 < nap_max_ns ? nap * 2 : nap_max_ns;
            } else if (stalled == 0) {
                nap = 2000;
            }
            last_sign = now_ns();
            polls = 0;
            continue;
        }
        if (t - last_sign < linger_ns) {
            watch_gap(t, ++polls);
            continue;
        }
        /* No sign of the application for a while. */
        polls = 0;
        if (!inside && !atomic_load_explicit(&app_work, memory_order_relaxed) && watchers) {
            sleep_on_bell(seen, leaves, nap); /* NAP: only watchers to serve */
            nap = nap * 2 < nap_max_ns ? nap * 2 : nap_max_ns;
            if (take_and_serve() == 0)
                nap = 2000;
        } else {
            sleep_on_bell(seen, leaves, 0); /* SLEEP until the bell rings */
            nap = 2000;
            /* Rung by the application leaving with work, or by a peer with
             * an active message for us: serve now. */
            if (!atomic_load_explicit(&fmpl_core.app_in, memory_order_relaxed))
                take_and_serve();
        }
        seen_leaves = atomic_load_explicit(&app_leaves, memory_order_relaxed);
        last_sign = now_ns();
    }
    return NULL;
}

static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Where hwloc would say a core is free: with fewer ranks of the job on
 * this host than online cores, the agent runs on the cores the ranks are
 * not bound to (fmplrun --bind core puts local rank i on core i); else it
 * shares its rank's cores (it inherits the process's binding). */
static void place_agent(void)
{
    int cores = online_cores();
    int ranks = fmpl_fab.machine_ranks > 0 ? fmpl_fab.machine_ranks : 1;
    cpu_set_t mine;
    if (ranks >= cores || sched_getaffinity(0, sizeof mine, &mine) != 0 ||
        CPU_COUNT(&mine) != 1)
        return;
    cpu_set_t spare;
    CPU_ZERO(&spare);
    for (int c = ranks; c < cores && c < CPU_SETSIZE; c++)
        CPU_SET(c, &spare);
    if (CPU_COUNT(&spare) > 0)
        atomic_store_explicit(&agent_has_core,
                              pthread_setaffinity_np(agent_thread, sizeof spare, &spare) == 0,
                              memory_order_relaxed);
}

void fmpl_agent_start(void)
{
    static const char *const choices[] = {"off", "thread", "auto", NULL};
    int choice = fmpl_tunable_choice(&tunable_agent, choices);
    int ranks = fmpl_fab.machine_ranks > 0 ? fmpl_fab.machine_ranks : 1;
    if (!(choice == 1 || (choice == 2 && online_cores() > ranks)))
        return;
    poll_budget = fmpl_tunable_long(&tunable_agent_poll);
    if (poll_budget < 1)
        poll_budget = 1;
    nap_max_ns = fmpl_tunable_long(&tunable_agent_nap) * 1000;
    grace_ns = fmpl_tunable_long(&tunable_agent_grace);
    linger_ns = fmpl_tunable_long(&tunable_agent_linger);
    if (nap_max_ns < 2000)
        nap_max_ns = 2000;
    if (!fmpl_fab_bell(fmpl_fab.rank, &bell, &sleeping)) {
        bell = &local_bell;
        sleeping = &local_sleeping;
    }
#if defined(__SANITIZE_THREAD__)
    fmpl_core_light = 0;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    fmpl_core_light = 0;
#else
    fmpl_core_light =
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
#else
    fmpl_core_light =
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
    ticks_per_ns = calibrate_stamp();
    atomic_store(&agent_stop, 0);
    atomic_store(&agent_has_core, 0);
    atomic_store(&fmpl_core.app_in, 0);
    atomic_store(&fmpl_core.agent_in, 0);
    fmpl_core_held = 0; /* the exit of the call that stopped an agent may have kept app_in */
    int rc = pthread_create(&agent_thread, NULL, agent_main, NULL);
    if (rc != 0) {
        fmpl_log_error("FMPL_AGENT: cannot start the agent thread (%s); progress stays in calls",
                       strerror(rc));
        return;
    }
    place_agent();
    fmpl_agent_on = 1;
    fmpl_core_guarded = 1;
    fmpl_log_info("agent: thread started (%s hand-over; grace timed by %s)",
                  fmpl_core_light ? "membarrier" : "fenced",
                  ticks_per_ns > 0 ? "the time-stamp counter" : "the agent");
}

void fmpl_agent_stop(void)
{
    if (!fmpl_agent_on)
        return;
    atomic_store_explicit(&agent_stop, 1, memory_order_release);
    atomic_fetch_add_explicit(bell, 1, memory_order_seq_cst);
    futex(bell, FUTEX_WAKE, 1, NULL);
    pthread_join(agent_thread, NULL);
    fmpl_log_info("agent: took the core %ld times (refused %ld), %ld progress passes, %ld "
                  "advanced", stat_takes, stat_refused, stat_passes, stat_advanced);
    /* Called inside a guarded call: the depth stays balanced because the
     * guard remembers that it entered (fmpl_core_leave). */
    fmpl_agent_on = 0;
    fmpl_core_guarded = fmpl_threads_on;
}

const char *fmpl_agent_describe(void)
{
    return fmpl_agent_on ? "thread" : "off";
}
