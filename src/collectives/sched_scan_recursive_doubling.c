/* Scan and exscan by recursive doubling as a schedule, in chunks of at most
 * FMPL_COLL_AREA / 2 bytes.  Per chunk, member r:
 *   part = my chunk (work block A); result = my chunk (scan) or nothing yet
 *   for mask = 1, 2, 4 .. < P, partner = r ^ mask (if it exists), one round:
 *     combine what the previous round received (below), then exchange part
 *     with the partner (its part arrives in work block B);
 *     combine, partner < r: result = B op result (exscan: the first one is
 *                  copied); part = B op part
 *              partner > r: B = part op B; part and B swap roles
 *   a last round combines the last exchange.
 * `part` always covers a contiguous range of ranks ending or starting at r's
 * group, so every combine has the lower ranks' value as `in`: correct for
 * non-commutative operations.  log2(P) message rounds per chunk; exscan
 * leaves member 0's recvbuf alone.  A round's combines are local steps
 * before its exchange in the array, so they read B before the next message
 * can land in it. */
#include "collectives/sched_coll.h"
#include "base/error.h"

int fmpl_sched_scan_recursive_doubling(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                       void *recvbuf, int64_t count, int flags, int exclusive,
                                       char *work)
{
    int p = t->size, r = t->rank;
    int64_t es = (int64_t)fmpl_op_elem_size(&s->op), q = fmpl_coll_half() / es;
    if (q < 1)
        return s->error = FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                                     "elements of %lld bytes exceed FMPL_COLL_AREA / 2",
                                     (long long)es);
    int64_t stride = (count < q ? count : q) * es;
    if (!work && !(work = fmpl_sched_alloc(s, 2 * (size_t)stride)))
        return s->error;
    int in_place = (flags & FMPL_COLL_IN_PLACE) != 0;
    const char *in = in_place ? (const char *)recvbuf : (const char *)sendbuf;
    int round = 0;
    for (int64_t off = 0; off < count; off += q) {
        int64_t m = count - off < q ? count - off : q, bytes = m * es;
        char *part = work, *rb = work + stride;
        char *res = exclusive && r == 0 ? NULL : (char *)recvbuf + off * es;
        int have = !exclusive;
        fmpl_sched_copy(s, round, part, in + off * es, bytes);
        if (have && !in_place)
            fmpl_sched_copy(s, round, res, in + off * es, bytes);
        for (int mask = 1; mask < p; mask <<= 1) {
            int partner = r ^ mask;
            if (partner >= p)
                continue;
            fmpl_sched_send(s, round, part, bytes, partner);
            fmpl_sched_recv(s, round, rb, bytes, partner);
            round++;
            if (partner < r) {
                if (have)
                    fmpl_sched_reduce(s, round, rb, res, m);
                else
                    fmpl_sched_copy(s, round, res, rb, bytes);
                have = 1;
                fmpl_sched_reduce(s, round, rb, part, m);
            } else {
                fmpl_sched_reduce(s, round, part, rb, m);
                char *x = part;
                part = rb;
                rb = x;
            }
        }
        round++;
    }
    return s->error;
}
