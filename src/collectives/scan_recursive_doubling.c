/* Scan and exscan over point-to-point, recursive doubling, in chunks of
 * FMPL_COLL_AREA / 2 bytes.  Per chunk, member r:
 *   part = my chunk (work area A); result = my chunk (scan) or nothing yet
 *   for mask = 1, 2, 4 .. < P, partner = r ^ mask (if it exists):
 *     exchange part with the partner (its part arrives in work area B)
 *     partner < r: result = B op result (exscan: the first one is copied);
 *                  part = B op part
 *     partner > r: B = part op B; part and B swap roles
 * `part` always covers a contiguous range of ranks ending or starting at r's
 * group, so every combine has the lower ranks' value as `in`: correct for
 * non-commutative operations.  log2(P) steps per chunk; exscan leaves member
 * 0's recvbuf alone. */
#include "collectives/p2p_util.h"

#include <string.h>

int fmpl_scan_recursive_doubling(fmpl_team *t, const void *sendbuf, void *recvbuf,
                                 int64_t count, const fmpl_op *op, int flags, int exclusive)
{
    int p = t->size, r = t->rank, rc = FMPL_SUCCESS;
    int64_t es = (int64_t)fmpl_op_elem_size(op), h = fmpl_coll_half(), q = h / es;
    int in_place = (flags & FMPL_COLL_IN_PLACE) != 0;
    const char *in = in_place ? (const char *)recvbuf : (const char *)sendbuf;
    char *tmp = fmpl_coll_tmp(t);
    if (!tmp)
        return FMPL_ERR_NO_MEMORY;
    for (int64_t off = 0; off < count && rc == FMPL_SUCCESS; off += q) {
        int64_t m = count - off < q ? count - off : q, bytes = m * es;
        char *part = tmp, *rb = tmp + h;
        char *res = exclusive && r == 0 ? NULL : (char *)recvbuf + off * es;
        memcpy(part, in + off * es, (size_t)bytes);
        int have = !exclusive;
        if (have && !in_place)
            memcpy(res, part, (size_t)bytes);
        for (int mask = 1; mask < p && rc == FMPL_SUCCESS; mask <<= 1) {
            int partner = r ^ mask;
            if (partner >= p)
                continue;
            rc = fmpl_coll_sendrecv(t, part, bytes, partner, rb, bytes, partner);
            if (rc != FMPL_SUCCESS)
                break;
            if (partner < r) {
                if (have) {
                    fmpl_op_apply(op, rb, res, m);
                } else {
                    memcpy(res, rb, (size_t)bytes);
                    have = 1;
                }
                fmpl_op_apply(op, rb, part, m);
            } else {
                fmpl_op_apply(op, part, rb, m);
                char *x = part;
                part = rb;
                rb = x;
            }
        }
    }
    return rc;
}
