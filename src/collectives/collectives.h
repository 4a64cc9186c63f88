/* Collectives: the algorithm catalogue and its selection.  One file per
 * algorithm; select.c decides which runs.  Arguments arrive checked. */
#ifndef FMPL_COLLECTIVES_H
#define FMPL_COLLECTIVES_H

#include <stdint.h>

#include "collectives/coll_team.h"
#include "collectives/op.h"
#include "protocols/team.h"

/* Entry points (select.c): pick an algorithm, run it. */
int fmpl_coll_barrier(fmpl_team *t);
int fmpl_coll_bcast(fmpl_team *t, void *buf, int64_t size, int root);
int fmpl_coll_reduce(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, int root,
                     void *work);
int fmpl_coll_allreduce(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, void *work);
/* Every member contributes `len` bytes (len <= FMPL_COLL_AREA / size);
 * `all` receives size * len bytes in rank order. */
int fmpl_coll_allgather_small(fmpl_team *t, const void *mine, int64_t len, void *all);

/* The catalogue. */
int fmpl_barrier_dissemination(fmpl_team *t);
int fmpl_barrier_binomial(fmpl_team *t);
int fmpl_bcast_binomial(fmpl_team *t, void *buf, int64_t size, int root);
int fmpl_bcast_shm_pipelined(fmpl_team *t, void *buf, int64_t size, int root);
/* root < 0: allreduce. */
int fmpl_reduce_binomial(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, int root,
                         void *work);
int fmpl_reduce_shm_flat(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, int root);
int fmpl_reduce_shm_slices(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op,
                           int root);

/* Names for logs, fmpl_info and the environment overrides. */
const char *fmpl_coll_describe_selection(void);

#endif
