/* Barrier by dissemination: ceil(log2 P) rounds; in round k each member
 * release-stores the barrier epoch into flag[k] of member (rank + 2^k) mod P
 * with a pre-built control write, then waits for its own flag[k] to reach
 * the epoch.  After the last round every member has heard, directly or
 * transitively, from all others.  Flags hold monotonic epochs, so they are
 * never reset and a fast member racing ahead into the next barrier cannot be
 * confused with this one.  Resumable (coll_run.h). */
#include "collectives/collectives.h"

static int body(fmpl_coll_algo *a)
{
    fmpl_barrier_run *st = (fmpl_barrier_run *)a;
    fmpl_coll_team *c = a->coll;
    FMPL_RUN_BEGIN(a);
    st->epoch = ++c->barrier_epoch;
    for (st->k = 0; st->k < c->rounds; st->k++) {
        fmpl_ctl_write(&c->diss[st->k], st->epoch);
        FMPL_RUN_AWAIT(a, fmpl_line_get(&c->mine->flag[st->k]) >= st->epoch);
    }
    FMPL_RUN_END(a);
}

void fmpl_barrier_dissemination_setup(fmpl_barrier_run *st, fmpl_team *t)
{
    fmpl_coll_algo_init(&st->a, body, t);
}
