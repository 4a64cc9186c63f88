/* Grow-only scratch buffers, one set per thread.
 *
 * Several MPI calls need a work area whose size depends on the call (a
 * reduction's input copy, per-member counts, Sendrecv_replace's packed
 * stream).  Allocating per call would put malloc on the hot path, so each
 * area grows once to the largest size seen and stays.  It must be per
 * thread: a call keeps its area across its waits, in which another thread's
 * call may run (progress/threads.c).  A thread's areas are freed when the
 * thread ends; the main thread's live until the process exits. */
#ifndef FMPL_BASE_SCRATCH_H
#define FMPL_BASE_SCRATCH_H

#include <stddef.h>

/* One slot per user, so that two areas a call holds at once never alias. */
typedef enum fmpl_scratch_slot {
    FMPL_SCRATCH_REDUCE,        /* api/mpi/coll.c: reduction work buffer */
    FMPL_SCRATCH_ALLTOALL_COPY, /* api/mpi/coll_move.c: alltoall's in-place copy */
    FMPL_SCRATCH_COUNTS0,       /* api/mpi/coll_move.c: per-member counts, 4 arrays */
    FMPL_SCRATCH_COUNTS1,
    FMPL_SCRATCH_COUNTS2,
    FMPL_SCRATCH_COUNTS3,
    FMPL_SCRATCH_REPLACE,       /* api/mpi/replace.c: Sendrecv_replace's stream */
    FMPL_SCRATCH_SLOTS
} fmpl_scratch_slot;

/* The calling thread's area for `slot`, at least `bytes` long (contents
 * kept when it grows), or NULL when memory is exhausted. */
void *fmpl_scratch(fmpl_scratch_slot slot, size_t bytes);

#endif
