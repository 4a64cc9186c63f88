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
 * whole vector per member. */
#include "collectives/collectives.h"
#include "progress/progress.h"

#include <string.h>

/* Member r's input of sequence s: its buffer, when it published one (in
 * posted[s % 2]'s spare bytes), else its `input` area. */
static const char *input_of(fmpl_team *t, int r, uint64_t s)
{
    fmpl_coll_team *c = t->coll;
    uint64_t where;
    memcpy(&where, c->peer[r]->posted[s % 2].pad, sizeof where);
    return where ? fmpl_fab_ptr(fmpl_raddr_unpack(where, t->world[r]))
                 : fmpl_coll_input(fmpl_coll_areas(c, r));
}

int fmpl_reduce_shm_slices(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op,
                           int root)
{
    fmpl_coll_team *c = t->coll;
    int64_t es = (int64_t)fmpl_op_elem_size(op);
    int64_t per_round = fmpl_coll_area / es;
    int p = t->size, last = p - 1;
    for (int64_t off = 0; off < count; off += per_round) {
        int64_t m = count - off < per_round ? count - off : per_round;
        char *mine = (char *)buf + off * es;
        uint64_t s = ++c->exchange_seq;
        if (s > 1)
            FMPL_COLL_WAIT_ALL(t, finished, s - 1);
        c->exchange_full = s;
        /* A reduce's other members copy in and leave: reading their buffers
         * in place would hold them until the root has its result. */
        int direct = fmpl_fab_is_shared(mine) && (root < 0 || root == t->rank);
        uint64_t where = direct ? fmpl_raddr_pack(fmpl_fab_raddr(mine)) : 0;
        if (!direct)
            memcpy(fmpl_coll_input(fmpl_coll_areas(c, t->rank)), mine, (size_t)(m * es));
        memcpy(c->mine->posted[s % 2].pad, &where, sizeof where);
        fmpl_line_set(&c->mine->posted[s % 2], s);
        FMPL_COLL_WAIT_ALL(t, posted[s % 2], s);

        int64_t lo = m * t->rank / p, hi = m * (t->rank + 1) / p;
        char *out = fmpl_coll_output(fmpl_coll_areas(c, t->rank));
        memcpy(out, input_of(t, last, s) + lo * es, (size_t)((hi - lo) * es));
        for (int r = last - 1; r >= 0; r--)
            fmpl_op_apply(op, input_of(t, r, s) + lo * es, out, hi - lo);
        fmpl_line_set(&c->mine->sliced, s);
        if (direct)
            FMPL_COLL_WAIT_ALL(t, sliced, s);

        if (root < 0 || root == t->rank) {
            for (int q = 0; q < p; q++) {
                int64_t qlo = m * q / p, qhi = m * (q + 1) / p;
                const fmpl_line *l = &c->peer[q]->sliced;
                FMPL_WAIT_UNTIL(fmpl_line_get(l) >= s);
                memcpy(mine + qlo * es, fmpl_coll_output(fmpl_coll_areas(c, q)), (size_t)((qhi - qlo) * es));
            }
        }
        fmpl_line_set(&c->mine->finished, s);
    }
    return FMPL_SUCCESS;
}
