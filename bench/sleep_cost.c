/* sleep-cost: what a short timed sleep costs this machine's core (no MPI).
 *
 *   build/bench/sleep-cost [--usec N] [--reps N] [--cpu C]
 *
 * mpi-overlap's "sleep" compute (clock_nanosleep to a deadline) stands for
 * a rank that is off the CPU while a GPU kernel or I/O runs.  On a virtual
 * machine arming and taking a timer interrupt can stall the core for tens
 * of microseconds, which a progress thread sharing that core cannot use.
 * This program measures, on one core (the calling thread and a sibling
 * thread bound to it):
 *   late     how long after its deadline a sleep of N us returns, with the
 *            core otherwise idle, and with the sibling spinning (pause,
 *            then sched_yield, as FMPL's agent does while it watches);
 *   handoff  from the moment the sleeper is about to call clock_nanosleep
 *            to the moment the spinning sibling runs (the core's time lost
 *            to entering the sleep);
 *   stall    the longest stretch, after the handoff and before the sleeper
 *            has run again, in which the sibling did not run (the core's
 *            time lost to the timer's expiry and the sleeper's wake-up).
 * Medians, 10th and 90th percentiles over --reps sleeps (default 400); the
 * thread's timer slack is 1 ns as in mpi-overlap. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t deadline)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000),
                          .tv_nsec = (long)(deadline % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    printf("  %-34s median %7.1f us   p10 %7.1f   p90 %7.1f\n", what, v[n / 2] * 1e-3,
           v[n / 10] * 1e-3, v[n * 9 / 10] * 1e-3);
}

static atomic_int sibling_stop;
static _Atomic int64_t about_to_sleep; /* mono_ns() just before the sleep; 0: none */
static atomic_int asleep;             /* the sleeper has not run since its sleep */
static int64_t *handoffs, *stalls;
static atomic_int nhandoffs;

static void *sibling(void *arg)
{
    (void)arg;
    unsigned polls = 0;
    int tracking = -1;
    int64_t last = 0;
    while (!atomic_load(&sibling_stop)) {
        int64_t now = mono_ns();
        int64_t t = atomic_exchange(&about_to_sleep, 0);
        if (t) {
            tracking = atomic_fetch_add(&nhandoffs, 1);
            handoffs[tracking] = now - t;
            stalls[tracking] = 0;
        } else if (tracking >= 0) {
            if (now - last > stalls[tracking])
                stalls[tracking] = now - last;
            if (!atomic_load(&asleep))
                tracking = -1;
        }
        last = now;
        if (++polls < 64)
            __builtin_ia32_pause();
        else
            sched_yield();
    }
    return NULL;
}

static void sleeps(int64_t *late, int reps, long usec, int mark)
{
    for (int i = 0; i < reps; i++) {
        sleep_until(mono_ns() + 200000); /* apart from the previous one */
        int64_t deadline = mono_ns() + usec * 1000;
        if (mark) {
            atomic_store(&asleep, 1);
            atomic_store(&about_to_sleep, mono_ns());
        }
        sleep_until(deadline);
        late[i] = mono_ns() - deadline;
        atomic_store(&asleep, 0);
        atomic_store(&about_to_sleep, 0);
    }
}

int main(int argc, char **argv)
{
    long usec = 20;
    int reps = 400, cpu = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--usec") && i + 1 < argc)
            usec = atol(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
            cpu = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: sleep-cost [--usec N (20)] [--reps N (400)] [--cpu C (0)]\n");
            return 2;
        }
    }
    if (usec < 1 || usec > 1000000 || reps < 10 || reps > 1000000) {
        fprintf(stderr, "sleep-cost: --usec 1..1000000, --reps 10..1000000\n");
        return 2;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        perror("sleep-cost: sched_setaffinity");
        return 1;
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    int64_t *late = malloc(sizeof *late * (size_t)reps);
    handoffs = malloc(sizeof *handoffs * (size_t)reps);
    stalls = malloc(sizeof *stalls * (size_t)reps);
    if (!late || !handoffs || !stalls) {
        fprintf(stderr, "sleep-cost: out of memory\n");
        return 1;
    }
    printf("# sleep-cost: %ld us sleeps to a deadline on cpu %d, %d each\n", usec, cpu, reps);
    sleeps(late, reps, usec, 0);
    report("late, core idle", late, reps);
    pthread_t th; /* inherits the binding: the same core */
    if (pthread_create(&th, NULL, sibling, NULL) != 0) {
        fprintf(stderr, "sleep-cost: cannot start the sibling thread\n");
        return 1;
    }
    sleeps(late, reps, usec, 1);
    atomic_store(&sibling_stop, 1);
    pthread_join(th, NULL);
    report("late, sibling spinning", late, reps);
    int n = atomic_load(&nhandoffs);
    if (n >= 10) {
        report("handoff to the sibling", handoffs, n);
        report("stall while asleep", stalls, n);
    }
    free(late);
    free(handoffs);
    free(stalls);
    return 0;
}
