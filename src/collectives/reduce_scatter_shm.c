/* Reduce-scatter in shared memory, in rounds through the input areas.
 * Every member's block is cut into pieces of q elements (q * size of an
 * element <= stride = FMPL_COLL_AREA / 2 / P, 64-aligned); round j carries
 * piece j of every block.  Round j = sequence s:
 *   1. fmpl_coll_exchange_ready(s)
 *   2. copy my contribution to piece j of every member m's block into input
 *      half s % 2 at m * stride; release-store posted[s % 2] = s
 *   3. if my own block has a piece j: wait for every member's
 *      posted[s % 2] >= s; recvbuf piece j = x[P-1]; then x[k] op it for
 *      k = P-2 .. 0 (rank order: `in` is the lower rank's)
 *   4. release-store finished = s
 * Every member combines its own block, so all members compute at once;
 * rounds are ceil(max count / q), the same on every member.  Resumable
 * (coll_run.h). */
#include "collectives/collectives.h"
#include "base/error.h"

#include <string.h>

static int64_t count_of(const fmpl_reduce_scatter_run *st, int m)
{
    return st->counts ? st->counts[m] : st->block;
}

/* Step 2 of the round at st->lo: my pieces of every block into my input
 * half.  Block offsets are summed here, not kept: a run may be paused
 * between calls of other collectives, so it uses no shared table. */
static void contribute(fmpl_reduce_scatter_run *st, fmpl_coll_team *c)
{
    int64_t es = (int64_t)fmpl_op_elem_size(&st->op), off = 0;
    char *area = fmpl_coll_input_half(fmpl_coll_areas(c, c->rank), st->s);
    for (int m = 0; m < c->size; m++) {
        int64_t len = fmpl_clamp64(count_of(st, m) - st->lo, 0, st->q);
        if (len > 0)
            memcpy(area + m * st->stride, st->in + (off + st->lo) * es, (size_t)(len * es));
        off += count_of(st, m);
    }
}

/* Step 3: piece st->lo of my block, combined in rank order. */
static void combine(fmpl_reduce_scatter_run *st, fmpl_coll_team *c, int64_t mine)
{
    int p = c->size, r = c->rank;
    int64_t es = (int64_t)fmpl_op_elem_size(&st->op);
    char *res = st->out + st->lo * es;
    memcpy(res, fmpl_coll_input_half(fmpl_coll_areas(c, p - 1), st->s) + r * st->stride,
           (size_t)(mine * es));
    for (int k = p - 2; k >= 0; k--)
        fmpl_op_apply(&st->op, fmpl_coll_input_half(fmpl_coll_areas(c, k), st->s) + r * st->stride,
                      res, mine);
}

static int body(fmpl_coll_algo *a)
{
    fmpl_reduce_scatter_run *st = (fmpl_reduce_scatter_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    int p = t->size;
    FMPL_RUN_BEGIN(a);
    {
        int64_t es = (int64_t)fmpl_op_elem_size(&st->op);
        st->maxc = 0;
        for (int m = 0; m < p; m++)
            st->maxc = count_of(st, m) > st->maxc ? count_of(st, m) : st->maxc;
        st->stride = (fmpl_coll_half() / p) & ~63ll;
        int64_t need = (st->maxc * es + 63) & ~63ll;
        if (need < st->stride)
            st->stride = need;
        st->q = st->stride / es;
        if (st->q < 1)
            return FMPL_ERROR(FMPL_ERR_INTERNAL, "reduce-scatter: no room for one element");
    }
    for (st->lo = 0; st->lo < st->maxc; st->lo += st->q) {
        st->s = ++c->exchange_seq;
        st->cursor = 0;
        FMPL_RUN_AWAIT(a, fmpl_coll_exchange_ready(c, st->s, &st->cursor));
        contribute(st, c);
        fmpl_line_set(&c->mine->posted[st->s % 2], st->s);
        if (fmpl_clamp64(count_of(st, t->rank) - st->lo, 0, st->q) > 0) {
            st->cursor = 0;
            FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(c, posted[st->s % 2], st->s, &st->cursor));
            combine(st, c, fmpl_clamp64(count_of(st, t->rank) - st->lo, 0, st->q));
        }
        fmpl_line_set(&c->mine->finished, st->s);
    }
    FMPL_RUN_END(a);
}

void fmpl_reduce_scatter_shm_setup(fmpl_reduce_scatter_run *st, fmpl_team *t,
                                   const void *sendbuf, void *recvbuf, const int64_t *counts,
                                   int64_t block, const fmpl_op *op, int flags)
{
    fmpl_coll_algo_init(&st->a, body, t);
    st->in = (flags & FMPL_COLL_IN_PLACE) ? (const char *)recvbuf : (const char *)sendbuf;
    st->out = recvbuf;
    st->counts = counts;
    st->block = block;
    st->op = *op;
}
