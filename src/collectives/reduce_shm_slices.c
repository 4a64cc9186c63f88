/* Large reductions in shared memory: reduce-scatter, then gather.
 * The vector is processed in rounds of FMPL_COLL_AREA bytes.  Round s:
 *   1. wait until every member's `finished` >= s - 1 (my input and output
 *      areas are no longer read)
 *   2. copy my part of buf into my `input`; release-store posted[s % 2] = s
 *   3. wait for every member's posted[s % 2] >= s; combine my slice
 *      [rank*m/P, (rank+1)*m/P) of all inputs, in rank order, into my
 *      `output`; release-store sliced = s
 *   4. root (reduce) or everyone (allreduce): for each member q wait
 *      q.sliced >= s and copy q's output slice into buf
 *   5. release-store finished = s
 * Each member reads 1/P of every input and computes 1/P of the result, so
 * the arithmetic and the memory traffic are spread over all members. */
#include "collectives/collectives.h"
#include "progress/progress.h"

#include <string.h>

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
        memcpy(fmpl_coll_input(fmpl_coll_areas(c, t->rank)), mine, (size_t)(m * es));
        fmpl_line_set(&c->mine->posted[s % 2], s);
        FMPL_COLL_WAIT_ALL(t, posted[s % 2], s);

        int64_t lo = m * t->rank / p, hi = m * (t->rank + 1) / p;
        char *out = fmpl_coll_output(fmpl_coll_areas(c, t->rank));
        memcpy(out, fmpl_coll_input(fmpl_coll_areas(c, last)) + lo * es, (size_t)((hi - lo) * es));
        for (int r = last - 1; r >= 0; r--)
            fmpl_op_apply(op, fmpl_coll_input(fmpl_coll_areas(c, r)) + lo * es, out, hi - lo);
        fmpl_line_set(&c->mine->sliced, s);

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
