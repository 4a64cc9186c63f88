/* Alltoall(v) over point-to-point: every member first posts its receives
 * (from r - 1, r - 2, .., each straight into recvbuf + rdispls[q]), copies
 * its own block, then starts its sends in the pairwise order r + 1, r + 2,
 * .. (sendbuf + sdispls[d]); a send whose header is there is delivered at
 * once by the sender, so in step i every member writes to a different
 * member.  Then it waits for everything. */
#include "collectives/p2p_util.h"

#include <string.h>

int fmpl_alltoallv_pairwise(fmpl_team *t, const void *sendbuf, const fmpl_coll_layout *sl,
                            void *recvbuf, const fmpl_coll_layout *rl)
{
    int p = t->size, r = t->rank, idx = fmpl_coll_idx(t), rc = FMPL_SUCCESS;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    for (int i = 1; i < p; i++) {
        int q = (r - i + p) % p;
        int64_t n = fmpl_layout_count(rl, q);
        if (n > 0)
            fmpl_coll_keep(&rc, fmpl_sm_irecv(t, rb + fmpl_layout_displ(rl, q), n, q, idx));
    }
    if (fmpl_layout_count(rl, r) > 0)
        memcpy(rb + fmpl_layout_displ(rl, r), sb + fmpl_layout_displ(sl, r),
               (size_t)fmpl_layout_count(rl, r));
    for (int i = 1; i < p && rc == FMPL_SUCCESS; i++) {
        int d = (r + i) % p;
        int64_t n = fmpl_layout_count(sl, d);
        if (n > 0)
            fmpl_coll_keep(&rc, fmpl_sm_isend(t, sb + fmpl_layout_displ(sl, d), n, d, idx));
    }
    if (rc != FMPL_SUCCESS)
        return rc;
    for (int i = 1; i < p; i++) {
        int q = (r - i + p) % p, d = (r + i) % p;
        if (fmpl_layout_count(sl, d) > 0)
            fmpl_coll_keep(&rc, fmpl_sm_send_wait(t, d, idx));
        if (fmpl_layout_count(rl, q) > 0)
            fmpl_coll_keep(&rc, fmpl_sm_recv_wait(t, q, idx, NULL));
    }
    return rc;
}
