/* The progress engine: one call that advances everything outstanding.
 * Every wait in the layers above polls it.  Today it drives the point-to-
 * point protocols, the async list (collective schedules, nonblocking
 * communicator creation) and the split-phase barriers; the agent thread
 * (agent.h) calls it while the application computes. */
#ifndef FMPL_PROGRESS_H
#define FMPL_PROGRESS_H

#include "base/wait.h"
#include "progress/async.h"
#include "protocols/active_message.h"
#include "protocols/sender_match.h"
#include "protocols/tag_match.h"

#include <stdatomic.h>
#include <stdint.h>

/* Returns how many operations advanced (0: nothing to do right now). */
int fmpl_progress(void);

/* Work of a layer above this one that advances only inside progress and
 * is not an fmpl_async: the split-phase barriers (collectives/
 * barrier_split.c), whose start must cost a few stores, not a list
 * insertion and a poll.  The owner installs `poll` at start-up and keeps
 * `pending` nonzero while it has work (instances started, not complete);
 * progress calls poll only then, so an idle job pays one load.  Also what
 * an agent that sleeps when idle reads to know that it may not. */
typedef struct fmpl_progress_hook {
    _Atomic uint64_t pending;
    int (*poll)(void); /* returns how many things advanced */
} fmpl_progress_hook;
extern FMPL_HIDDEN fmpl_progress_hook fmpl_progress_barrier_hook;

/* Something this rank started needs its progress to finish (a posted
 * receive, a rendezvous send, a matching slot, a schedule, active messages
 * queued, split-phase barriers): the agent polls while this holds.  Five
 * loads, inline: every call's exit reads it while the agent runs
 * (agent.h). */
static inline int fmpl_progress_pending(void)
{
    return fmpl_sm_outstanding || fmpl_tm_inflight || fmpl_async_head || fmpl_am_queued ||
           atomic_load_explicit(&fmpl_progress_barrier_hook.pending, memory_order_relaxed);
}

/* Wait for one tag-matched request (spin, then yield), progressing
 * everything; a receive from a known source mostly polls that source's
 * channel.  Returns r->st_error. */
struct fmpl_tm_req;
int fmpl_progress_wait_tm(struct fmpl_tm_req *r);

/* A blocking receive (start and wait): when no receive of the team is
 * posted and the source is known, it stays off the posted queue and takes
 * its message straight from the source's channel; else it is posted and
 * waited for.  Returns r->st_error; r holds the status. */
struct fmpl_team;
int fmpl_progress_recv_direct(struct fmpl_tm_req *r, struct fmpl_team *t, void *buf,
                              int64_t size, int src, int tag);

/* Spin-then-yield until cond holds, progressing meanwhile. */
#define FMPL_WAIT_UNTIL(cond)                                                      \
    do {                                                                           \
        fmpl_waiter fmpl_w_ = FMPL_WAITER_INIT;                                    \
        while (!(cond)) {                                                          \
            if (!fmpl_progress())                                                  \
                fmpl_wait_once(&fmpl_w_);                                          \
        }                                                                          \
    } while (0)

#endif
