/* Several application threads in the library (MPI_THREAD_SERIALIZED and
 * MPI_THREAD_MULTIPLE; agent.h has the whole hand-over).
 *
 * One lock among the application threads guards the core: the outermost
 * call of a thread takes it (fmpl_core_enter) and gives it back when it
 * returns.  It is a ticket lock: threads are served in the order they
 * asked, so a thread that lets the lock go while it waits and asks again
 * queues behind the others instead of taking it straight back (a plain
 * mutex would let the releasing thread win again and again).  Waiting for
 * the lock spins briefly, then yields, as every wait does (2 cores, 8
 * threads: the holder must get the CPU).
 *
 * Sharing while waiting: a call that waits (fmpl_wait_once, every poll that
 * found nothing) lets the lock go when another thread is queued for it, so
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

static struct {
    _Atomic unsigned next;    /* tickets handed out */
    char pad1[60];
    _Atomic unsigned serving; /* the ticket that holds the lock */
    char pad2[60];
} lock;

/* This thread holds the lock (an outermost call of its own), and whether
 * that call took the core from the agent's side too (app_in). */
static __thread int held;

void fmpl_threads_lock(void)
{
    unsigned me = atomic_fetch_add_explicit(&lock.next, 1, memory_order_relaxed);
    unsigned spins = 0;
    while (atomic_load_explicit(&lock.serving, memory_order_acquire) != me) {
        if (spins < 64) {
            spins++;
            fmpl_cpu_relax();
        } else {
            sched_yield();
        }
    }
    held = 1;
}

void fmpl_threads_unlock(void)
{
    held = 0;
    atomic_store_explicit(&lock.serving,
                          atomic_load_explicit(&lock.serving, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* fmpl_wait_once's hook: let queued threads have the core for a while. */
static void share(void)
{
    if (!held || atomic_load_explicit(&lock.next, memory_order_relaxed) -
                         atomic_load_explicit(&lock.serving, memory_order_relaxed) < 2)
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
