/* Resumable collective algorithms: one body for the blocking, the
 * nonblocking and the persistent forms.
 *
 * A shared-memory algorithm is a function over a state object that runs
 * until it would have to wait for another member (a flag that has not
 * reached its value yet), records where it stopped, and returns
 * FMPL_RUN_PENDING; called again, it resumes there.  Who calls it decides
 * the form:
 *   blocking      fmpl_coll_run drives it to completion on the caller's
 *                 stack (spin, then yield, progressing everything else);
 *   nonblocking,  a RUN step of a schedule (sched.h) holds the state, and
 *   persistent    whoever executes the schedule (the progress engine today,
 *                 an offload agent later) calls it at every poll.
 *
 * Turns: the algorithms keep per-team sequence counters and scratch areas
 * (coll_team.h) that assume one collective at a time, in the same order on
 * every member.  A team has two sets of them, one per kind: blocking calls,
 * and nonblocking or persistent ones (a run's `coll`: t->coll, or
 * t->coll->nbc for a RUN step of a nonblocking schedule, sched.c).  Every
 * run takes a ticket from its state when it is started (the blocking call;
 * the schedule instance's start, for all its RUN steps, in step order) and
 * runs only when that state's turn reaches the ticket.  Members start the
 * collectives of one kind in the same order (MPI requires it of all
 * collectives; MPICH, and so programs, only of each kind), so they run them
 * in the same order, one after another, each exactly as the blocking
 * algorithm would.  Runs of the two kinds proceed independently: a blocking
 * call waits in place while the nonblocking runs progress around it.  A
 * blocking call's turn has normally come at once (the blocking calls before
 * it have returned); where not, it progresses everything while it waits.
 *
 * Writing a body (the protothread idiom):
 *   static int body(fmpl_coll_algo *a)
 *   {
 *       my_state *st = (my_state *)a;
 *       FMPL_RUN_BEGIN(a);
 *       ... code ...
 *       FMPL_RUN_AWAIT(a, condition);
 *       ... code ...
 *       FMPL_RUN_END(a);
 *   }
 * FMPL_RUN_AWAIT returns FMPL_RUN_PENDING while the condition is false and
 * continues after it on a later call; in a blocking run it waits right
 * there instead (spin, then yield, progressing everything else), so a
 * blocking call costs what the plain blocking algorithm would.  Local variables do not survive an
 * await (the function returns): whatever is needed after one lives in the
 * state.  At most one await per source line.  A body returns FMPL_SUCCESS
 * or an error code when finished. */
#ifndef FMPL_COLLECTIVES_COLL_RUN_H
#define FMPL_COLLECTIVES_COLL_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "collectives/coll_team.h"
#include "progress/progress.h"
#include "protocols/team.h"

#define FMPL_RUN_PENDING (-1)

typedef struct fmpl_coll_algo {
    int (*body)(struct fmpl_coll_algo *a);
    int line;          /* where the body resumes (0: from the start) */
    int blocking;      /* fmpl_coll_run: awaits wait instead of returning */
    fmpl_team *team;
    fmpl_coll_team *coll; /* the team's state of the run's kind: t->coll (set
                             up so), or t->coll->nbc (a nonblocking schedule's
                             RUN step, fmpl_sched_run_algo) */
    uint64_t ticket;   /* the team's turn this run waits for; an unordered run's
                          own instance number */
    /* Persistent collectives: called once when the schedule is prepared
     * (fmpl_sched_prepare), may turn the run into a prepared form (NULL:
     * the algorithm has none). */
    void (*prepare)(struct fmpl_coll_algo *a);
    /* Set: the run uses memory no other algorithm touches and numbers its
     * instances itself, so it takes no turn in the team's order; at start
     * the ticket is this function's value (the instance number). */
    uint64_t (*unordered)(struct fmpl_coll_algo *a);
} fmpl_coll_algo;

#define FMPL_RUN_BEGIN(a)                                                            \
    switch ((a)->line) {                                                             \
    case 0:
#define FMPL_RUN_AWAIT(a, cond)                                                      \
    do {                                                                             \
        (a)->line = __LINE__;                                                        \
        __attribute__((fallthrough));                                                \
    case __LINE__:                                                                   \
        if (!(cond)) {                                                               \
            if (!(a)->blocking)                                                      \
                return FMPL_RUN_PENDING;                                             \
            FMPL_WAIT_UNTIL(cond);                                                   \
        }                                                                            \
    } while (0)
#define FMPL_RUN_END(a)                                                              \
    }                                                                                \
    (a)->line = 0;                                                                   \
    return FMPL_SUCCESS

static inline void fmpl_coll_algo_init(fmpl_coll_algo *a, int (*body)(fmpl_coll_algo *),
                                       fmpl_team *t)
{
    a->body = body;
    a->line = 0;
    a->blocking = 0;
    a->team = t;
    a->coll = t->coll;
    a->ticket = 0;
    a->prepare = NULL;
    a->unordered = NULL;
}

/* Take the next ticket of a's team (starting a run). */
static inline void fmpl_coll_algo_enqueue(fmpl_coll_algo *a)
{
    a->line = 0;
    a->ticket = a->unordered ? a->unordered(a) : a->coll->run_tickets++;
}

/* Advance a started run as far as it goes without waiting: FMPL_RUN_PENDING,
 * or its result once finished (the team's turn then passes on). */
int fmpl_coll_algo_poll(fmpl_coll_algo *a);

/* Blocking: take a ticket, wait for the turn, run to completion. */
int fmpl_coll_run(fmpl_coll_algo *a);

/* Resumable waits over every other member's line at `field_offset` in the
 * headers of state c: nonzero once all have reached `value`.  *cursor (0
 * at the start of the wait) remembers the members already seen there. */
int fmpl_coll_all_reached(fmpl_coll_team *c, size_t field_offset, uint64_t value, int *cursor);
#define FMPL_COLL_ALL_REACHED(c, field, value, cursor)                               \
    fmpl_coll_all_reached((c), offsetof(fmpl_coll_scratch, field), (value), (cursor))

/* Step 1 of an exchange of sequence s of state c that uses input half
 * s % 2 (see coll_team.h): nonzero once nobody reads that half any more. */
int fmpl_coll_exchange_ready(fmpl_coll_team *c, uint64_t s, int *cursor);

#endif
