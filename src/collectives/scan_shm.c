/* Scan and exscan in shared memory, in rounds of FMPL_COLL_AREA / 2 bytes
 * (one round inside a cache line when the whole vector has <= 56 bytes).
 * Round = sequence s, member r:
 *   1. fmpl_coll_exchange_begin(s)
 *   2. copy my chunk into posted[s % 2]'s spare bytes (<= 56 bytes) or into
 *      input half s % 2; release-store posted[s % 2] = s
 *   3. scan: result = x[r]; exscan (r > 0): result = x[r-1] (wait for its
 *      posted[s % 2] >= s); then for k = (start - 1) .. 0: wait for member
 *      k's posted[s % 2] >= s, result = x[k] op result
 *   4. release-store finished = s
 * Member r reads only the inputs of members below it; the highest member
 * does P - 1 combines, so this is for small teams (the recursive doubling
 * algorithm scales as log2 P). */
#include "collectives/p2p_util.h"
#include "base/error.h"
#include "progress/progress.h"

#include <string.h>

/* Member p's input of sequence seq: in its posted line when small (no
 * areas block needed), else in its input half seq % 2. */
static char *input_of(fmpl_coll_team *c, int p, uint64_t seq, int64_t bytes)
{
    if (bytes <= FMPL_LINE_DATA)
        return fmpl_line_data(&c->peer[p]->posted[seq % 2]);
    return fmpl_coll_input_half(fmpl_coll_areas(c, p), seq);
}

static int run_fmpl_scan_shm(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t count,
                  const fmpl_op *op, int flags, int exclusive)
{
    fmpl_coll_team *c = t->coll;
    int r = t->rank;
    int64_t es = (int64_t)fmpl_op_elem_size(op), q = fmpl_coll_half() / es;
    int in_place = (flags & FMPL_COLL_IN_PLACE) != 0;
    const char *in = in_place ? (const char *)recvbuf : (const char *)sendbuf;
    if (q < 1)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "scan: no room for one element");
    for (int64_t off = 0; off < count; off += q) {
        int64_t m = count - off < q ? count - off : q, bytes = m * es;
        uint64_t s = ++c->exchange_seq;
        fmpl_coll_exchange_begin(t, s);
        memcpy(input_of(c, t->rank, s, count * es), in + off * es, (size_t)bytes);
        fmpl_line_set(&c->mine->posted[s % 2], s);
        int start = exclusive ? r - 1 : r;
        if (start >= 0) {
            char *res = (char *)recvbuf + off * es;
            if (start != r) {
                const fmpl_line *l = &c->peer[start]->posted[s % 2];
                FMPL_WAIT_UNTIL(fmpl_line_get(l) >= s);
                memcpy(res, input_of(c, start, s, count * es), (size_t)bytes);
            } else if (!in_place) {
                memcpy(res, in + off * es, (size_t)bytes);
            }
            for (int k = start - 1; k >= 0; k--) {
                const fmpl_line *l = &c->peer[k]->posted[s % 2];
                FMPL_WAIT_UNTIL(fmpl_line_get(l) >= s);
                fmpl_op_apply(op, input_of(c, k, s, count * es), res, m);
            }
        }
        fmpl_line_set(&c->mine->finished, s);
    }
    return FMPL_SUCCESS;
}

/* Legacy blocking body: in the team's order of runs (coll_run.h). */
int fmpl_scan_shm(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t count,
                  const fmpl_op *op, int flags, int exclusive)
{
    fmpl_coll_turn_begin(t);
    int rc = run_fmpl_scan_shm(t, sendbuf, recvbuf, count, op, flags, exclusive);
    fmpl_coll_turn_end(t);
    return rc;
}
