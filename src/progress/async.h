/* Operations driven by the progress engine: a nonblocking operation that is
 * more than one message (a nonblocking communicator creation, later the
 * nonblocking collectives) is a state machine with a poll function.  The
 * owner embeds an fmpl_async in its state, starts it, and from then on every
 * fmpl_progress() call (any wait of either API, on any communicator) polls
 * it until it reports completion, so the operation advances while its owner
 * is blocked in something else (MPI's progress rule).
 *
 * Rules for a poll function: it never blocks (no FMPL_WAIT_UNTIL: it starts
 * nonblocking messages and tests them), it may call fmpl_progress (the
 * engine does not re-enter the async list), and it returns nonzero once the
 * operation is finished; the engine then takes it off the list and sets
 * `done`.  Operations are polled in the order they were started, so two
 * operations on the same communicator step in the same order on every
 * member.  The owner frees its state only once `done` is set. */
#ifndef FMPL_PROGRESS_ASYNC_H
#define FMPL_PROGRESS_ASYNC_H

#include "base/hidden.h"

typedef struct fmpl_async {
    int (*poll)(struct fmpl_async *a); /* advance; nonzero once finished */
    struct fmpl_async *next;           /* the engine's list (start order) */
    int done;                          /* set by the engine after the last poll */
    int self_driven;                   /* polling it alone advances it (no message
                                          of its own needs the engine) */
} fmpl_async;

/* Append `a` to the engine's list and poll it once (not with the agent
 * on: the agent takes it from there while the caller computes). */
void fmpl_async_start(fmpl_async *a, int (*poll)(fmpl_async *a));
/* Poll every started operation once; returns how many finished.  Called by
 * fmpl_progress. */
int fmpl_async_progress(void);
extern FMPL_HIDDEN fmpl_async *fmpl_async_head; /* for the engine's idle test */
/* Poll `a` alone, out of turn (its owner waits for it): nonzero once done.
 * Only for an operation whose polls do not depend on the others' order. */
int fmpl_async_poll_one(fmpl_async *a);
/* Spin-then-yield until `a` is done, progressing everything meanwhile. */
void fmpl_async_wait(fmpl_async *a);

#endif
