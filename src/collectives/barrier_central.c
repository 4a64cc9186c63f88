/* Barrier on one central counter, for ranks that outnumber their cores.
 *   every member, epoch e:  atomically add 1 to member 0's `arrived` line;
 *   member 0: wait until `arrived` >= e * P, then release-store e into its
 *     `release` line and leave;
 *   the others: wait for member 0's `release` >= e.
 * Why: with more ranks than cores a wait costs a context switch; here each
 * member waits once, on one line, and no chain of rounds lets a descheduled
 * member hold everyone up (the dissemination barrier's log2 P waits each
 * depend on one particular peer).  Member 0 releases rather than the last
 * to arrive: it then leaves first, which is what a following rooted
 * collective from member 0 (a broadcast after a barrier) needs; with the
 * last arriver releasing, the barrier was faster (4.1 against 5.9-7.3 us at
 * 4 ranks on 2 cores) but a broadcast after it waited for a descheduled
 * root (2.6-3.6 us against 0.12-0.14).  With a core per rank the P atomic
 * additions on one line cost more than dissemination's flag writes, so the
 * selection keeps this one for oversubscribed nodes.  Counters are
 * monotonic: nothing is reset.  Resumable (coll_run.h). */
#include "collectives/collectives.h"

static int body(fmpl_coll_algo *a)
{
    fmpl_barrier_run *st = (fmpl_barrier_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    fmpl_coll_scratch *zero = c->peer[0];
    FMPL_RUN_BEGIN(a);
    st->epoch = ++c->barrier_epoch;
    atomic_fetch_add_explicit(&zero->arrived.v, 1, memory_order_acq_rel);
    if (t->rank == 0) {
        FMPL_RUN_AWAIT(a, fmpl_line_get(&zero->arrived) >= st->epoch * (uint64_t)t->size);
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
