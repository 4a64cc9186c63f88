/* Collectives as schedules (sched.h): the entry points the nonblocking and
 * persistent collectives build with, and the catalogue of schedule
 * builders (one file per algorithm: sched_<collective>_<algorithm>.c).
 *
 * Arguments are those of the blocking entry points (collectives.h), with
 * the same meaning and flags; a builder appends its steps to `s` (rounds
 * from 0 after fmpl_sched_phase) and moves no data: every copy of the
 * caller's input is a step, so a persistent schedule reads its input anew
 * at each start.  Scratch memory comes from fmpl_sched_alloc.  Errors:
 * s->error (also returned).
 *
 * While fmpl_coll_capture is set, the blocking entry points of
 * collectives.h build into it instead of running (select.c): that is how
 * the MPI binding reuses one body (checks, datatype staging) for the
 * blocking, nonblocking and persistent forms. */
#ifndef FMPL_COLLECTIVES_SCHED_COLL_H
#define FMPL_COLLECTIVES_SCHED_COLL_H

#include "base/hidden.h"
#include "collectives/collectives.h"
#include "collectives/sched.h"

extern FMPL_TLS fmpl_sched *fmpl_coll_capture;

/* Entry points (sched_select.c): bind the schedule to the team, set the
 * operation, pick the builder. */
int fmpl_sched_coll_barrier(fmpl_sched *s, fmpl_team *t);
int fmpl_sched_coll_bcast(fmpl_sched *s, fmpl_team *t, void *buf, int64_t size, int root);
/* FMPL_IBCAST_ALGO names a schedule design (else the blocking selection's
 * algorithm serves the nonblocking and persistent forms too). */
int fmpl_sched_bcast_forced(void);
/* root < 0: allreduce.  buf holds this member's input on entry to each
 * instance (the caller's steps copy it there) and the result after. */
int fmpl_sched_coll_reduce(fmpl_sched *s, fmpl_team *t, void *buf, int64_t count,
                           const fmpl_op *op, int root, void *work);
int fmpl_sched_coll_gatherv(fmpl_sched *s, fmpl_team *t, const void *sendbuf, int64_t sendbytes,
                            void *recvbuf, const fmpl_coll_layout *l, int root, int flags);
int fmpl_sched_coll_scatterv(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                             const fmpl_coll_layout *l, void *recvbuf, int64_t recvbytes,
                             int root, int flags);
int fmpl_sched_coll_allgatherv(fmpl_sched *s, fmpl_team *t, const void *sendbuf, void *recvbuf,
                               const fmpl_coll_layout *l, int flags);
int fmpl_sched_coll_alltoallv(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                              const fmpl_coll_layout *sl, void *recvbuf,
                              const fmpl_coll_layout *rl, int flags);
/* work (reduce-scatter, scan): NULL, or the team's work area
 * (fmpl_coll_tmp) for a blocking run. */
int fmpl_sched_coll_reduce_scatter(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                   void *recvbuf, const int64_t *counts, const fmpl_op *op,
                                   int flags, char *work);
int fmpl_sched_coll_scan(fmpl_sched *s, fmpl_team *t, const void *sendbuf, void *recvbuf,
                         int64_t count, const fmpl_op *op, int flags, int exclusive, char *work);

/* The catalogue. */
int fmpl_sched_barrier_dissemination(fmpl_sched *s, fmpl_team *t);
int fmpl_sched_barrier_nodes(fmpl_sched *s, fmpl_team *t);
int fmpl_sched_bcast_binomial(fmpl_sched *s, fmpl_team *t, void *buf, int64_t size, int root);
int fmpl_sched_bcast_leaders(fmpl_sched *s, fmpl_team *t, void *buf, int64_t size, int root);
int fmpl_sched_bcast_split(fmpl_sched *s, fmpl_team *t, void *buf, int64_t size, int root);
/* work: NULL (blocks allocated with the schedule), or one block of the
 * vector's size that the caller keeps until the run completes. */
int fmpl_sched_reduce_binomial(fmpl_sched *s, fmpl_team *t, void *buf, int64_t count, int root,
                               void *work);
/* Only for teams whose nodes hold consecutive ranks (FMPL_NODES_ORDERED). */
int fmpl_sched_reduce_nodes(fmpl_sched *s, fmpl_team *t, void *buf, int64_t count, int root,
                            void *work);
int fmpl_sched_gatherv_linear(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                              int64_t sendbytes, void *recvbuf, const fmpl_coll_layout *l,
                              int root, int flags);
int fmpl_sched_scatterv_linear(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                               const fmpl_coll_layout *l, void *recvbuf, int64_t recvbytes,
                               int root, int flags);
int fmpl_sched_allgatherv_ring(fmpl_sched *s, fmpl_team *t, const void *sendbuf, void *recvbuf,
                               const fmpl_coll_layout *l, int flags);
int fmpl_sched_alltoallv_pairwise(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                  const fmpl_coll_layout *sl, void *recvbuf,
                                  const fmpl_coll_layout *rl);
/* Block offsets in t->coll->offs (read while building); work: NULL
 * (allocated with the schedule) or 3 * FMPL_COLL_AREA / 2 bytes the caller
 * keeps until the run completes. */
int fmpl_sched_reduce_scatter_pairwise(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                       void *recvbuf, const int64_t *counts, int flags,
                                       char *work);
/* work: NULL (allocated with the schedule) or 2 * FMPL_COLL_AREA / 2 bytes. */
int fmpl_sched_scan_recursive_doubling(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                       void *recvbuf, int64_t count, int flags, int exclusive,
                                       char *work);

#endif
