/* Reduce-scatter as a schedule: the input vector is copied into a work
 * vector (a step, so each start reads the input anew), reduced to member 0
 * over the binomial tree (sched_reduce_binomial.c) and scattered from
 * member 0's work vector into the members' recvbuf. */
#include "collectives/sched_coll.h"

int fmpl_sched_reduce_scatter_reduce_scatterv(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                              void *recvbuf, const int64_t *counts, int flags)
{
    int p = t->size;
    int64_t es = (int64_t)fmpl_op_elem_size(&s->op), total = 0;
    int64_t *blk = fmpl_sched_alloc(s, 2 * (size_t)p * sizeof *blk);
    if (!blk)
        return s->error;
    for (int q = 0; q < p; q++) {
        blk[q] = counts[q] * es;
        blk[p + q] = total * es;
        total += counts[q];
    }
    char *work = total ? fmpl_sched_alloc(s, (size_t)(total * es)) : NULL;
    if (total && !work)
        return s->error;
    fmpl_sched_copy(s, 0, work, flags & FMPL_COLL_IN_PLACE ? recvbuf : sendbuf, total * es);
    fmpl_sched_phase(s);
    fmpl_sched_reduce_binomial(s, t, work, total, 0, NULL);
    fmpl_sched_phase(s);
    fmpl_coll_layout l = {blk, blk + p, 0};
    return fmpl_sched_scatterv_linear(s, t, work, &l, recvbuf, blk[t->rank], 0, 0);
}
