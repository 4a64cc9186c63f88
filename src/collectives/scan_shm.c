/* Scan and exscan in shared memory, in rounds of FMPL_COLL_AREA / 2 bytes
 * (one round inside a cache line when the whole vector has <= 56 bytes).
 * Round = sequence s, member r:
 *   1. fmpl_coll_exchange_ready(s)
 *   2. copy my chunk into posted[s % 2]'s spare bytes (<= 56 bytes) or into
 *      input half s % 2; release-store posted[s % 2] = s
 *   3. scan: result = x[r]; exscan (r > 0): result = x[r-1] (wait for its
 *      posted[s % 2] >= s); then for k = (start - 1) .. 0: wait for member
 *      k's posted[s % 2] >= s, result = x[k] op result
 *   4. release-store finished = s
 * Member r reads only the inputs of members below it; the highest member
 * does P - 1 combines, so this is for small teams (the recursive doubling
 * algorithm scales as log2 P).  Resumable (coll_run.h). */
#include "collectives/collectives.h"
#include "base/error.h"

#include <string.h>

/* Member p's input of sequence seq: in its posted line when small (no
 * areas block needed), else in its input half seq % 2. */
static char *input_of(fmpl_coll_team *c, int p, uint64_t seq, int64_t bytes)
{
    if (bytes <= FMPL_LINE_DATA)
        return fmpl_line_data(&c->peer[p]->posted[seq % 2]);
    return fmpl_coll_input_half(fmpl_coll_areas(c, p), seq);
}

/* Elements per round. */
static int64_t round_elems(const fmpl_scan_run *st)
{
    return fmpl_coll_half() / (int64_t)fmpl_op_elem_size(&st->op);
}

/* This round's elements (from st->off), and where its result goes. */
static int64_t round_count(const fmpl_scan_run *st)
{
    int64_t q = round_elems(st);
    return st->count - st->off < q ? st->count - st->off : q;
}
static char *round_result(const fmpl_scan_run *st)
{
    return st->out + st->off * (int64_t)fmpl_op_elem_size(&st->op);
}

static int body(fmpl_coll_algo *a)
{
    fmpl_scan_run *st = (fmpl_scan_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    int r = t->rank, start = st->exclusive ? r - 1 : r;
    int64_t es = (int64_t)fmpl_op_elem_size(&st->op), total = st->count * es;
    FMPL_RUN_BEGIN(a);
    if (round_elems(st) < 1)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "scan: no room for one element");
    for (st->off = 0; st->off < st->count; st->off += round_elems(st)) {
        st->s = ++c->exchange_seq;
        st->cursor = 0;
        FMPL_RUN_AWAIT(a, fmpl_coll_exchange_ready(c, st->s, &st->cursor));
        memcpy(input_of(c, r, st->s, total), st->in + st->off * es,
               (size_t)(round_count(st) * es));
        fmpl_line_set(&c->mine->posted[st->s % 2], st->s);
        if (start >= 0) {
            if (start != r) {
                FMPL_RUN_AWAIT(a, fmpl_line_get(&c->peer[start]->posted[st->s % 2]) >= st->s);
                memcpy(round_result(st), input_of(c, start, st->s, total),
                       (size_t)(round_count(st) * es));
            } else if (!st->in_place) {
                memcpy(round_result(st), st->in + st->off * es, (size_t)(round_count(st) * es));
            }
            for (st->k = start - 1; st->k >= 0; st->k--) {
                FMPL_RUN_AWAIT(a, fmpl_line_get(&c->peer[st->k]->posted[st->s % 2]) >= st->s);
                fmpl_op_apply(&st->op, input_of(c, st->k, st->s, total), round_result(st),
                              round_count(st));
            }
        }
        fmpl_line_set(&c->mine->finished, st->s);
    }
    FMPL_RUN_END(a);
}

void fmpl_scan_shm_setup(fmpl_scan_run *st, fmpl_team *t, const void *sendbuf, void *recvbuf,
                         int64_t count, const fmpl_op *op, int flags, int exclusive)
{
    fmpl_coll_algo_init(&st->a, body, t);
    st->in_place = (flags & FMPL_COLL_IN_PLACE) != 0;
    st->in = st->in_place ? (const char *)recvbuf : (const char *)sendbuf;
    st->out = recvbuf;
    st->count = count;
    st->op = *op;
    st->exclusive = exclusive;
}
