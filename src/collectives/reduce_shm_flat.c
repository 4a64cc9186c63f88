/* Small reductions in shared memory, one exchange: every member publishes its
 * whole input, and the root (reduce) or every member (allreduce) combines
 * all inputs itself, in rank order.
 *   member, sequence s:
 *     1. wait until every member's `finished` >= s - 2 (nobody still reads
 *        my input buffer of the same parity), or >= the last sequence that
 *        used the whole input area (fmpl_coll_exchange_ready)
 *     2. copy buf into posted[s % 2]'s spare bytes (<= 56 bytes: one cache
 *        line carries data and flag) or into input half s % 2; release-store
 *        posted[s % 2] = s
 *     3. combiners: wait for every member's posted[s % 2] >= s, then
 *        buf = x[P-1]; buf = x[r] op buf for r = P-2 .. 0
 *     4. release-store finished = s
 * One cache-line handoff on the critical path at small sizes.  Resumable
 * (coll_run.h). */
#include "collectives/collectives.h"

#include <string.h>

/* Member p's input of sequence seq: in its posted line when small (no
 * areas block needed), else in its input half seq % 2. */
static const char *input_of(fmpl_coll_team *c, int p, uint64_t seq, int64_t bytes)
{
    if (bytes <= FMPL_LINE_DATA)
        return fmpl_line_data(&c->peer[p]->posted[seq % 2]);
    return fmpl_coll_input_half(fmpl_coll_areas(c, p), seq);
}

static int body(fmpl_coll_algo *a)
{
    fmpl_reduce_run *st = (fmpl_reduce_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    int64_t bytes = st->count * (int64_t)fmpl_op_elem_size(&st->op);
    FMPL_RUN_BEGIN(a);
    st->s = ++c->exchange_seq;
    st->cursor = 0;
    FMPL_RUN_AWAIT(a, fmpl_coll_exchange_ready(c, st->s, &st->cursor));
    memcpy((char *)input_of(c, t->rank, st->s, bytes), st->buf, (size_t)bytes);
    fmpl_line_set(&c->mine->posted[st->s % 2], st->s);
    if (st->root < 0 || st->root == t->rank) {
        st->cursor = 0;
        FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(c, posted[st->s % 2], st->s, &st->cursor));
        int last = t->size - 1;
        if (last != t->rank)
            memcpy(st->buf, input_of(c, last, st->s, bytes), (size_t)bytes);
        for (int r = last - 1; r >= 0; r--)
            fmpl_op_apply(&st->op, input_of(c, r, st->s, bytes), st->buf, st->count);
    }
    fmpl_line_set(&c->mine->finished, st->s);
    FMPL_RUN_END(a);
}

void fmpl_reduce_shm_flat_setup(fmpl_reduce_run *st, fmpl_team *t, void *buf, int64_t count,
                                const fmpl_op *op, int root)
{
    fmpl_reduce_run_init(st, body, t, buf, count, op, root);
}
