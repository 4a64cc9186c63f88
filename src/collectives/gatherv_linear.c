/* Gather(v) over point-to-point, linear: the root posts a receive from every
 * member straight into its block of recvbuf (recvbuf + displs[q], counts[q]
 * bytes), copies its own block (unless in place) and waits for them all;
 * each other member sends its block to the root.  Every block moves with
 * the sender-matched protocol's single copy (memcpy into a shared-heap
 * buffer, CMA or staging otherwise). */
#include "collectives/p2p_util.h"

#include <string.h>

int fmpl_gatherv_linear(fmpl_team *t, const void *sendbuf, int64_t sendbytes, void *recvbuf,
                        const fmpl_coll_layout *l, int root, int flags)
{
    int idx = fmpl_coll_idx(t), rc = FMPL_SUCCESS;
    if (t->rank != root) {
        if (sendbytes == 0)
            return FMPL_SUCCESS;
        rc = fmpl_sm_isend(t, sendbuf, sendbytes, root, idx);
        return rc == FMPL_SUCCESS ? fmpl_sm_send_wait(t, root, idx) : rc;
    }
    char *rb = recvbuf;
    for (int q = 0; q < t->size; q++) {
        int64_t n = fmpl_layout_count(l, q);
        if (q != root && n > 0)
            fmpl_coll_keep(&rc, fmpl_sm_irecv(t, rb + fmpl_layout_displ(l, q), n, q, idx));
    }
    if (!(flags & FMPL_COLL_IN_PLACE) && fmpl_layout_count(l, root) > 0)
        memcpy(rb + fmpl_layout_displ(l, root), sendbuf, (size_t)fmpl_layout_count(l, root));
    if (rc != FMPL_SUCCESS)
        return rc; /* a receive could not be posted: a bug, reported */
    for (int q = 0; q < t->size; q++)
        if (q != root && fmpl_layout_count(l, q) > 0)
            fmpl_coll_keep(&rc, fmpl_sm_recv_wait(t, q, idx, NULL));
    return rc;
}
