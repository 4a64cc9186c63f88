/* Large reductions in shared memory: reduce-scatter, then gather.
 * The vector is processed in rounds of FMPL_COLL_AREA bytes.  Round s:
 *   1. wait until every member's `finished` >= s - 1 (my input and output
 *      areas are no longer read)
 *   2. allreduce, or the root of a reduce, with buf in my shared heap (a
 *      large malloc block, MPI_Alloc_mem): put the
 *      packed address of my part in posted[s % 2]'s spare bytes (others
 *      read my input straight from buf); else copy my part into my `input`
 *      and put 0 there; release-store posted[s % 2] = s
 *   3. wait for every member's posted[s % 2] >= s; combine my slice
 *      [rank*m/P, (rank+1)*m/P) of all inputs (each from the member's buf or
 *      its `input`), in rank order, into my `output`; release-store
 *      sliced = s
 *   4. if others read my buf: wait until every member's sliced >= s (none
 *      reads it any more) before writing it or returning
 *   5. root (reduce) or everyone (allreduce): for each member q wait
 *      q.sliced >= s and copy q's output slice into buf
 *   6. release-store finished = s
 * Each member reads 1/P of every input and computes 1/P of the result, so
 * the arithmetic and the memory traffic are spread over all members; inputs
 * in the shared heap are read where they are, which saves a copy of the
 * whole vector per member.  Resumable (coll_run.h). */
#include "collectives/collectives.h"

#include <string.h>

/* Member r's input of sequence s: its buffer, when it published one (in
 * posted[s % 2]'s spare bytes), else its `input` area. */
static const char *input_of(fmpl_coll_team *c, int r, uint64_t s)
{
    uint64_t where;
    memcpy(&where, c->peer[r]->posted[s % 2].pad, sizeof where);
    return where ? fmpl_fab_ptr(fmpl_raddr_unpack(where, c->world[r]))
                 : fmpl_coll_input(fmpl_coll_areas(c, r));
}

static int body(fmpl_coll_algo *a)
{
    fmpl_reduce_run *st = (fmpl_reduce_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    int64_t es = (int64_t)fmpl_op_elem_size(&st->op);
    int64_t per_round = fmpl_coll_area / es;
    int p = t->size, last = p - 1, root = st->root;
    FMPL_RUN_BEGIN(a);
    for (st->off = 0; st->off < st->count; st->off += per_round) {
        st->m = st->count - st->off < per_round ? st->count - st->off : per_round;
        st->s = ++c->exchange_seq;
        st->cursor = 0;
        if (st->s > 1)
            FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(c, finished, st->s - 1, &st->cursor));
        c->exchange_full = st->s;
        {
            char *mine = st->buf + st->off * es;
            /* A reduce's other members copy in and leave: reading their
             * buffers in place would hold them until the root has its
             * result. */
            st->direct = fmpl_fab_is_shared(mine) && (root < 0 || root == t->rank);
            uint64_t where = st->direct ? fmpl_raddr_pack(fmpl_fab_raddr(mine)) : 0;
            if (!st->direct)
                memcpy(fmpl_coll_input(fmpl_coll_areas(c, t->rank)), mine, (size_t)(st->m * es));
            memcpy(c->mine->posted[st->s % 2].pad, &where, sizeof where);
            fmpl_line_set(&c->mine->posted[st->s % 2], st->s);
        }
        st->cursor = 0;
        FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(c, posted[st->s % 2], st->s, &st->cursor));
        {
            int64_t m = st->m, lo = m * t->rank / p, hi = m * (t->rank + 1) / p;
            char *out = fmpl_coll_output(fmpl_coll_areas(c, t->rank));
            memcpy(out, input_of(c, last, st->s) + lo * es, (size_t)((hi - lo) * es));
            for (int r = last - 1; r >= 0; r--)
                fmpl_op_apply(&st->op, input_of(c, r, st->s) + lo * es, out, hi - lo);
            fmpl_line_set(&c->mine->sliced, st->s);
        }
        st->cursor = 0;
        if (st->direct)
            FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(c, sliced, st->s, &st->cursor));

        if (root < 0 || root == t->rank) {
            for (st->q = 0; st->q < p; st->q++) {
                FMPL_RUN_AWAIT(a, fmpl_line_get(&c->peer[st->q]->sliced) >= st->s);
                int64_t m = st->m, qlo = m * st->q / p, qhi = m * (st->q + 1) / p;
                memcpy(st->buf + (st->off + qlo) * es, fmpl_coll_output(fmpl_coll_areas(c, st->q)),
                       (size_t)((qhi - qlo) * es));
            }
        }
        fmpl_line_set(&c->mine->finished, st->s);
    }
    FMPL_RUN_END(a);
}

void fmpl_reduce_shm_slices_setup(fmpl_reduce_run *st, fmpl_team *t, void *buf, int64_t count,
                                  const fmpl_op *op, int root)
{
    fmpl_reduce_run_init(st, body, t, buf, count, op, root);
}
