/* Waiting for a remote write: spin briefly, then yield the core.
 *
 * With more ranks than cores a pure spin burns the time slice the writer
 * needs; a pure yield adds a system call to every wait.  So a wait spins
 * FMPL_SPIN_COUNT times with the pause instruction and then calls
 * sched_yield() between polls. */
#ifndef FMPL_BASE_WAIT_H
#define FMPL_BASE_WAIT_H

#include <sched.h>

#include "base/hidden.h"

/* Read on every poll of every wait: hidden (base/hidden.h). */
extern FMPL_HIDDEN unsigned fmpl_spin_count; /* set once at init (FMPL_SPIN_COUNT) */
/* This host runs more ranks of the job than it has cores (set at init; the
 * same on every rank of the host). */
extern int fmpl_oversubscribed;

/* Set by a layer above whose remote writes land only while this process
 * polls (the network backend over a provider without hardware RMA, such as
 * tcp): every wait calls it, so a rank waiting on a flag still serves the
 * puts and atomics that will set it.  NULL on one host. */
extern FMPL_HIDDEN int (*fmpl_wait_poll)(void);

/* One poll for calls that test rather than wait (fmpl_irecv_test, ...): a
 * rank that only tests must serve the writes it tests for, too. */
static inline void fmpl_poll_remote(void)
{
    if (__builtin_expect(fmpl_wait_poll != 0, 0))
        fmpl_wait_poll();
}

/* Set when several application threads share the library (progress/
 * threads.c): every poll that found nothing calls it, so that a thread
 * waiting inside a call lets the others in.  NULL otherwise. */
extern FMPL_HIDDEN void (*fmpl_wait_share)(void);
/* Several application threads share the library (set with fmpl_wait_share;
 * read by protocols that keep per-process state across a wait). */
extern FMPL_HIDDEN int fmpl_threads_on;

typedef struct fmpl_waiter {
    unsigned polls;
} fmpl_waiter;

#define FMPL_WAITER_INIT {0}

static inline void fmpl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* The n-th unsuccessful poll of a wait that has no waiter's hooks (a lock,
 * the agent's own loops): the pause instruction for the first `spins`
 * polls, then a yield. */
static inline void fmpl_spin_or_yield(unsigned n, unsigned spins)
{
    if (n < spins)
        fmpl_cpu_relax();
    else
        sched_yield();
}

/* Call once per unsuccessful poll. */
static inline void fmpl_wait_once(fmpl_waiter *w)
{
    if (__builtin_expect(fmpl_wait_share != 0, 0))
        fmpl_wait_share();
    if (__builtin_expect(fmpl_wait_poll != 0, 0) && fmpl_wait_poll() > 0)
        return;
    if (w->polls < fmpl_spin_count) {
        w->polls++;
        fmpl_cpu_relax();
    } else {
        sched_yield();
    }
}

/* Set the spin budget for `local_ranks` ranks sharing this host;
 * `remote_peers`: some peers are on other hosts (their packets need this
 * host's kernel, which a spinning rank starves: see wait.c). */
void fmpl_wait_init(int local_ranks, int remote_peers);

#endif
