/* Barrier over a binomial tree rooted at member 0 (the paper's software
 * barrier: flag writes only).
 *   gather:  a member waits until each child c (rank + 2^j) has stored the
 *            epoch into its flag[j], then stores the epoch into its parent's
 *            flag[k] (k: the lowest set bit of its rank)
 *   release: member 0, then each member in turn, stores the epoch into its
 *            children's `release` line; the others wait on their own.
 * 2 log2 P steps on the critical path against dissemination's log2 P, but
 * only P - 1 flag writes per phase.  Resumable (coll_run.h). */
#include "collectives/collectives.h"

#include <stddef.h>

static void store(fmpl_coll_team *c, int member, size_t offset, uint64_t value)
{
    fmpl_line *l = (fmpl_line *)((char *)c->peer[member] + offset);
    fmpl_line_set(l, value);
}

static int body(fmpl_coll_algo *a)
{
    fmpl_barrier_run *st = (fmpl_barrier_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    int rank = t->rank;
    FMPL_RUN_BEGIN(a);
    st->epoch = ++c->barrier_epoch;
    for (st->k = 0; st->k < c->rounds && !(rank & (1 << st->k)); st->k++)
        if (rank + (1 << st->k) < t->size)
            FMPL_RUN_AWAIT(a, fmpl_line_get(&c->mine->flag[st->k]) >= st->epoch);
    if (rank != 0) {
        int parent = rank - (1 << st->k);
        store(c, parent, offsetof(fmpl_coll_scratch, flag) + (size_t)st->k * sizeof(fmpl_line),
              st->epoch);
        FMPL_RUN_AWAIT(a, fmpl_line_get(&c->mine->release) >= st->epoch);
    }
    for (int j = st->k - 1; j >= 0; j--)
        if (rank + (1 << j) < t->size)
            store(c, rank + (1 << j), offsetof(fmpl_coll_scratch, release), st->epoch);
    FMPL_RUN_END(a);
}

void fmpl_barrier_binomial_setup(fmpl_barrier_run *st, fmpl_team *t)
{
    fmpl_coll_algo_init(&st->a, body, t);
}
