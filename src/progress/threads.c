/* Several application threads in the library (MPI_THREAD_SERIALIZED and
 * MPI_THREAD_MULTIPLE; agent.h has the whole hand-over).
 *
 * One lock among the application threads guards the core: the outermost
 * call of a thread takes it (fmpl_core_enter) and gives it back when it
 * returns.  Taking it is one atomic exchange when it is free.  A thread
 * that finds it held counts itself among the waiters and polls it,
 * spinning briefly, then yielding, as every wait does.
 *
 * Why not first come, first served.  A ticket lock (the first version)
 * hands the lock to the next ticket even when that thread is off the CPU:
 * with more threads than cores (4 threads per rank, 2 ranks, 2 cores) every
 * hand-over then waited for the scheduler to bring one particular thread
 * back, and the message rate of bench/mpi-threads fell from 6-7 to 0.6-1.0
 * million messages per second going from 2 to 4 threads per rank.  Here
 * whichever thread is running takes the lock (5-6 at 4 threads, same run).
 * Fairness comes from the waits instead: a call that waits lets the lock
 * go and yields whenever another thread is waiting for it (below), and a
 * thread that has waited long (STARVING_POLLS) claims the next turn: the
 * others then stand back until it has had it, so a thread that calls in a
 * tight loop without ever waiting cannot keep another out for good.
 *
 * Sharing while waiting: a call that waits (fmpl_wait_once, every poll that
 * found nothing) lets the lock go when another thread waits for it, so
 * that the other thread's call, which this one may be waiting for (a send
 * to this process, a receive that frees a peer), runs.  With the agent on,
 * the waiting thread also gives the core back (steps 3-4 of agent.h) and
 * takes it again after the lock.  The waiting call resumes where it was:
 * its state is its own (request, stack, thread-local scratch).
 *
 * With one application thread (MPI_THREAD_SINGLE and _FUNNELED) none of
 * this runs: fmpl_threads_on stays 0 and the guard is one branch. */
#include "progress/agent.h"
#include "base/wait.h"

#include <sched.h>
#include <stdatomic.h>

int fmpl_core_guarded;

/* Polls of the lock (after the spins, each one a yield) after which a
 * waiting thread claims the next turn. */
enum { SPIN_POLLS = 64, STARVING_POLLS = 2048 };

static struct {
    _Atomic int held;        /* 1 while some thread holds the lock */
    char pad1[60];
    _Atomic unsigned waiting; /* threads polling for it (fmpl_threads_lock) */
    _Atomic int claimed;      /* a starving waiter has the next turn */
    char pad2[56];
} lock;

/* This thread holds the lock (an outermost call of its own). */
static FMPL_TLS int this_thread_holds;

static int try_take(void)
{
    return !atomic_load_explicit(&lock.held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&lock.held, 1, memory_order_acquire);
}

void fmpl_threads_lock(void)
{
    if (!atomic_load_explicit(&lock.claimed, memory_order_relaxed) &&
        !atomic_exchange_explicit(&lock.held, 1, memory_order_acquire)) {
        this_thread_holds = 1;
        return;
    }
    atomic_fetch_add_explicit(&lock.waiting, 1, memory_order_relaxed);
    int claimant = 0;
    for (unsigned polls = 0;; polls++) {
        if (!claimant && polls >= STARVING_POLLS) {
            int none = 0;
            claimant = atomic_compare_exchange_strong_explicit(
                &lock.claimed, &none, 1, memory_order_relaxed, memory_order_relaxed);
        }
        /* Another thread's claim: stand back until it has had its turn. */
        if ((claimant || !atomic_load_explicit(&lock.claimed, memory_order_relaxed)) &&
            try_take())
            break;
        fmpl_spin_or_yield(polls, SPIN_POLLS);
    }
    if (claimant)
        atomic_store_explicit(&lock.claimed, 0, memory_order_relaxed);
    atomic_fetch_sub_explicit(&lock.waiting, 1, memory_order_relaxed);
    this_thread_holds = 1;
}

void fmpl_threads_unlock(void)
{
    this_thread_holds = 0;
    atomic_store_explicit(&lock.held, 0, memory_order_release);
}

/* fmpl_wait_once's hook: let waiting threads have the core for a while. */
static void share(void)
{
    if (!this_thread_holds || atomic_load_explicit(&lock.waiting, memory_order_relaxed) == 0)
        return;
    /* app_in is 1 for the lock holder exactly when the agent runs: the
     * outermost call takes it after the lock (fmpl_core_enter), and the
     * agent starts and stops only inside MPI_Init and MPI_Finalize, which no
     * other thread may overlap. */
    int app = fmpl_agent_on && atomic_load_explicit(&fmpl_core.app_in, memory_order_relaxed);
    if (app)
        fmpl_core_handback();
    fmpl_threads_unlock();
    sched_yield();
    fmpl_threads_lock();
    if (app)
        fmpl_core_take();
}

void fmpl_threads_enable(void)
{
    if (fmpl_threads_on)
        return;
    fmpl_threads_on = 1;
    fmpl_core_guarded = 1;
    fmpl_wait_share = share;
}
