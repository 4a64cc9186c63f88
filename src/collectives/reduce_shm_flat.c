/* Small reductions in shared memory, one exchange: every member publishes its
 * whole input, and the root (reduce) or every member (allreduce) combines
 * all inputs itself, in rank order.
 *   member, sequence s:
 *     1. wait until every member's `finished` >= s - 2 (nobody still reads
 *        my input buffer of the same parity), or >= the last sequence that
 *        used the whole input area (fmpl_coll_exchange_begin)
 *     2. copy buf into posted[s % 2]'s spare bytes (<= 56 bytes: one cache
 *        line carries data and flag) or into input half s % 2; release-store
 *        posted[s % 2] = s
 *     3. combiners: wait for every member's posted[s % 2] >= s, then
 *        buf = x[P-1]; buf = x[r] op buf for r = P-2 .. 0
 *     4. release-store finished = s
 * One cache-line handoff on the critical path at small sizes. */
#include "collectives/collectives.h"
#include "progress/progress.h"

#include <string.h>

/* Member p's input of sequence seq: in its posted line when small (no
 * areas block needed), else in its input half seq % 2. */
static const char *input_of(fmpl_coll_team *c, int p, uint64_t seq, int64_t bytes)
{
    if (bytes <= FMPL_LINE_DATA)
        return fmpl_line_data(&c->peer[p]->posted[seq % 2]);
    return fmpl_coll_input_half(fmpl_coll_areas(c, p), seq);
}

int fmpl_reduce_shm_flat(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, int root)
{
    fmpl_coll_team *c = t->coll;
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(op);
    uint64_t s = ++c->exchange_seq;
    fmpl_coll_exchange_begin(t, s);
    memcpy((char *)input_of(c, t->rank, s, bytes), buf, (size_t)bytes);
    fmpl_line_set(&c->mine->posted[s % 2], s);
    if (root < 0 || root == t->rank) {
        FMPL_COLL_WAIT_ALL(t, posted[s % 2], s);
        int last = t->size - 1;
        if (last != t->rank)
            memcpy(buf, input_of(c, last, s, bytes), (size_t)bytes);
        for (int r = last - 1; r >= 0; r--)
            fmpl_op_apply(op, input_of(c, r, s, bytes), buf, count);
    }
    fmpl_line_set(&c->mine->finished, s);
    return FMPL_SUCCESS;
}
