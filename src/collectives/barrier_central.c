/* Barrier on one central counter, for ranks that outnumber their cores.
 *   every member, epoch e:  atomically add 1 to member 0's `arrived` line;
 *     the member whose addition makes it e * P arrived last: it release-
 *     stores e into member 0's `release` line and leaves at once;
 *     the others wait for member 0's `release` >= e.
 * Why: with more ranks than cores a wait costs a context switch, and this
 * barrier has one wait per member, none for the last to arrive, and no
 * chain of rounds in which a descheduled member holds everyone up (the
 * dissemination barrier's log2 P waits each depend on one particular
 * peer).  With a core per rank the P atomic additions on one line cost
 * more than dissemination's flag writes, so the selection keeps this one
 * for oversubscribed nodes.  Counters are monotonic: nothing is reset.
 * Resumable (coll_run.h). */
#include "collectives/collectives.h"

static int body(fmpl_coll_algo *a)
{
    fmpl_barrier_run *st = (fmpl_barrier_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = t->coll;
    fmpl_coll_scratch *zero = c->peer[0];
    FMPL_RUN_BEGIN(a);
    st->epoch = ++c->barrier_epoch;
    uint64_t before = atomic_fetch_add_explicit(&zero->arrived.v, 1, memory_order_acq_rel);
    if (before + 1 == st->epoch * (uint64_t)t->size) {
        fmpl_line_set(&zero->release, st->epoch);
    } else {
        FMPL_RUN_AWAIT(a, fmpl_line_get(&zero->release) >= st->epoch);
    }
    FMPL_RUN_END(a);
}

void fmpl_barrier_central_setup(fmpl_barrier_run *st, fmpl_team *t)
{
    fmpl_coll_algo_init(&st->a, body, t);
}
