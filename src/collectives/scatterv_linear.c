/* Scatter(v) over point-to-point, linear: every member other than the root
 * posts its receive; the root starts a send of each member's block
 * (sendbuf + displs[d], counts[d] bytes) in the order root+1, root+2, ..
 * (each goes out as soon as that member's header is there), copies its own
 * block (unless in place) and waits for all sends. */
#include "collectives/p2p_util.h"

#include <string.h>

int fmpl_scatterv_linear(fmpl_team *t, const void *sendbuf, const fmpl_coll_layout *l,
                         void *recvbuf, int64_t recvbytes, int root, int flags)
{
    int idx = fmpl_coll_idx(t), rc = FMPL_SUCCESS, p = t->size;
    if (t->rank != root) {
        if (recvbytes == 0)
            return FMPL_SUCCESS;
        rc = fmpl_sm_irecv(t, recvbuf, recvbytes, root, idx);
        return rc == FMPL_SUCCESS ? fmpl_sm_recv_wait(t, root, idx, NULL) : rc;
    }
    const char *sb = sendbuf;
    for (int i = 1; i < p; i++) {
        int d = (root + i) % p;
        int64_t n = fmpl_layout_count(l, d);
        if (n > 0)
            fmpl_coll_keep(&rc, fmpl_sm_isend(t, sb + fmpl_layout_displ(l, d), n, d, idx));
    }
    if (!(flags & FMPL_COLL_IN_PLACE) && fmpl_layout_count(l, root) > 0)
        memcpy(recvbuf, sb + fmpl_layout_displ(l, root), (size_t)fmpl_layout_count(l, root));
    if (rc != FMPL_SUCCESS)
        return rc;
    for (int i = 1; i < p; i++) {
        int d = (root + i) % p;
        if (fmpl_layout_count(l, d) > 0)
            fmpl_coll_keep(&rc, fmpl_sm_send_wait(t, d, idx));
    }
    return rc;
}
