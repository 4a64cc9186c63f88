/* The agent: a thread that progresses the core while the application
 * computes (seed 004's network-interface processor, stood in for by a
 * thread; seed 002's offload engine).  FMPL_AGENT=off|thread|auto.
 *
 * Who may touch the core.  The core's structures (channels, tag-matching
 * queues, matching slots, the async list, the network endpoint, request
 * state) have one owner at a time: the application thread while it is
 * inside a library call, the agent otherwise.  Handing over is a pair of
 * flags in the style of Dekker's algorithm, made asymmetric so that the
 * application's side costs two plain stores and a load:
 *
 *   application, entering (outermost call only):
 *     1. store app_in = 1; compiler barrier
 *     2. load agent_in: 0 -> the core is ours
 *                       1 -> wait until the agent sees app_in and stores 0
 *   application, leaving:
 *     3. if nothing is outstanding (no request in flight, no schedule
 *        running, no watcher, no peer that may ring: fmpl_agent_expect_
 *        rings): keep the core (app_in stays 1, held = 1);
 *        the next call skips steps 1-2.  The agent would only go back to
 *        sleep, and the synchronous paths pay nothing for the hand-over:
 *        work becomes outstanding only inside a call, whose leave hands the
 *        core back.
 *     4. else ring the doorbell if the agent sleeps (bell += 1, futex wake;
 *        agent.c: sleep_on_bell says why nothing is missed) and
 *        store-release app_in = 0 (held = 0)
 *   agent, taking the core:
 *     a. store agent_in = 1; membarrier() (every thread of the process
 *        executes a full barrier: an application store of step 1 that was
 *        still in its store buffer is now visible)
 *     b. load app_in: 1 -> store agent_in = 0, back off (sleep on the bell)
 *                     0 -> the core is the agent's: progress passes until
 *                          nothing is outstanding or app_in becomes 1
 *     c. store-release agent_in = 0
 * Either the application sees agent_in = 1 or the agent sees app_in = 1, so
 * both never hold the core.  Where membarrier(2) is missing (or under
 * ThreadSanitizer, which does not model it) both sides use sequentially
 * consistent accesses instead: correct, a few nanoseconds dearer per call.
 *
 * Calls nest (MPI calls call MPI calls; a handler run by the agent calls
 * the library): a per-thread depth counts them and only the outermost
 * takes and gives the core.  The agent holds depth 1 while it progresses.
 *
 * Several application threads (MPI_THREAD_SERIALIZED and _MULTIPLE,
 * threads.c): before step 1 the outermost call takes the application
 * threads' lock (taken by whichever running thread finds it free), and gives it
 * back after step 4; so one application thread at a time owns the core,
 * and the agent side stays as it is.  A thread that waits inside a call
 * (a blocking receive, a collective waiting for a peer) lets the lock go
 * between polls whenever another thread is queued for it (fmpl_wait_once
 * calls fmpl_wait_share): steps 3-4, unlock, yield, lock, steps 1-2.  So a
 * blocking call never holds up the calls of other threads that it may be
 * waiting for.  Whatever a waiting call keeps across its waits therefore
 * lives in its request, on its stack or in thread-local scratch, never in
 * a process-wide buffer.
 *
 * Sleeping: the agent sleeps on a futex word (the bell, in this rank's
 * shared segment, so local peers can ring it too) whenever nothing is
 * outstanding, and while the application is inside a call: an idle job
 * costs no CPU time.  With work outstanding it polls, spinning briefly,
 * then yielding, then sleeping in growing timed steps (FMPL_AGENT_NAP). */
#ifndef FMPL_PROGRESS_AGENT_H
#define FMPL_PROGRESS_AGENT_H

#include <stdatomic.h>

#include "base/wait.h"
#include "progress/progress.h"

typedef struct fmpl_core_flags {
    _Atomic int app_in;    /* written by the application thread */
    char pad1[60];
    _Atomic int agent_in;  /* written by the agent */
    char pad2[60];
} fmpl_core_flags;

extern FMPL_HIDDEN fmpl_core_flags fmpl_core;
extern FMPL_HIDDEN int fmpl_agent_on;   /* the agent thread runs */
extern FMPL_HIDDEN int fmpl_core_light; /* membarrier works: light side */
/* The application kept the core when it last left (nothing was outstanding,
 * so the agent had nothing to do): app_in is still 1.  Read and written by
 * the application thread holding the threads' lock, never by the agent. */
extern FMPL_HIDDEN int fmpl_core_held;
/* Watchers and ringers (fmpl_agent_watch, fmpl_agent_expect_rings): the
 * application never keeps the core while this is above 0.  Application
 * side only, changed with the core held. */
extern FMPL_HIDDEN int fmpl_core_no_keep;
/* fmpl_agent_on || fmpl_threads_on: the guard has something to do. */
extern FMPL_HIDDEN int fmpl_core_guarded;
extern FMPL_TLS unsigned fmpl_core_depth;

void fmpl_core_wait_for_agent(void);
/* Step 4: give the core back (held = 0), ringing a sleeping agent. */
void fmpl_core_handback(void);
/* The application threads' lock (threads.c). */
void fmpl_threads_lock(void);
void fmpl_threads_unlock(void);

/* What the outermost call took, for fmpl_core_leave. */
enum { FMPL_CORE_COUNTED = 1, FMPL_CORE_LOCKED = 2, FMPL_CORE_APP_IN = 4 };

/* Step 1-2: the application side of the hand-over (agent on). */
static inline void fmpl_core_take(void)
{
    if (fmpl_core_held)
        return;
    if (fmpl_core_light) {
        atomic_store_explicit(&fmpl_core.app_in, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_store_explicit(&fmpl_core.app_in, 1, memory_order_seq_cst);
    }
    if (atomic_load_explicit(&fmpl_core.agent_in,
                             fmpl_core_light ? memory_order_acquire : memory_order_seq_cst))
        fmpl_core_wait_for_agent();
}

/* Enter the core (outermost call: take it).  Returns what this call took
 * (FMPL_CORE_*); pass it to fmpl_core_leave. */
static inline int fmpl_core_enter(void)
{
    if (__builtin_expect(!fmpl_core_guarded, 1))
        return 0;
    if (fmpl_core_depth++ != 0)
        return FMPL_CORE_COUNTED;
    int took = FMPL_CORE_COUNTED;
    if (fmpl_threads_on) {
        fmpl_threads_lock();
        took |= FMPL_CORE_LOCKED;
    }
    if (fmpl_agent_on) {
        fmpl_core_take();
        took |= FMPL_CORE_APP_IN;
    }
    return took;
}

static inline void fmpl_core_leave(const int *entered)
{
    if (__builtin_expect(*entered, 0) && --fmpl_core_depth == 0) {
        /* Step 3: nothing for the agent, keep the core.  Giving it back
         * cost every call about 10 ns: an 8-byte ping-pong took 85-88 ns
         * one way with the agent on against 68 with it off. */
        if (*entered & FMPL_CORE_APP_IN) {
            if (fmpl_core_no_keep || fmpl_progress_pending())
                fmpl_core_handback();
            else
                fmpl_core_held = 1;
        }
        if (*entered & FMPL_CORE_LOCKED)
            fmpl_threads_unlock();
    }
}

/* The first statement of every API function that may touch the core: the
 * core is held until the function returns, by whatever path. */
#define FMPL_CORE_GUARD()                                                          \
    const int fmpl_core_entered_ __attribute__((cleanup(fmpl_core_leave), unused)) = \
        fmpl_core_enter()

/* Let several application threads call the library (MPI_THREAD_SERIALIZED,
 * _MULTIPLE): from now on every outermost call takes the threads' lock.
 * Called once, by the thread initialising the library, before any other
 * thread may call it. */
void fmpl_threads_enable(void);

/* Start the agent if FMPL_AGENT asks for it (after start-up, when every
 * protocol is connected); stop it (first thing in finalize). */
void fmpl_agent_start(void);
void fmpl_agent_stop(void);
/* "off", "thread": what runs, for fmpl_info and logs. */
const char *fmpl_agent_describe(void);

/* Something the agent should serve even when nothing is outstanding (an
 * active-message handler table, a window over the network whose target
 * side needs polling): while the count is above 0 the agent polls with
 * growing naps instead of sleeping until rung.  Called with the core held. */
void fmpl_agent_watch(int delta);

/* Peers may ring this rank's agent for work that only a progress pass
 * finds (a forwarded remote copy out of a symmetric block): while the count
 * is above 0 the application gives the core back at every leave (agent.h
 * step 3 does not apply), so that a rung agent can take it.  Called with
 * the core held. */
void fmpl_agent_expect_rings(int delta);

/* Wake the agent of world rank `rank` if it sleeps (a local peer, through
 * its segment's bell): for records whose handling should not wait for the
 * target's next call, such as active messages.  No system call when the
 * agent is awake or off. */
void fmpl_agent_ring(int rank);

#endif
