/* Allgather(v) over point-to-point, ring: member r copies its own block into
 * place (unless in place); in step i = 0 .. P-2 it receives block
 * (r - i - 1) mod P from its left neighbour r - 1, straight into its place
 * in recvbuf, while sending block (r - i) mod P, which it holds by then, to
 * its right neighbour r + 1.  P - 1 steps, each member sends and receives
 * one block per step: every link carries the same load whatever the sizes'
 * spread. */
#include "collectives/p2p_util.h"

#include <string.h>

int fmpl_allgatherv_ring(fmpl_team *t, const void *sendbuf, void *recvbuf,
                         const fmpl_coll_layout *l, int flags)
{
    int p = t->size, r = t->rank, rc = FMPL_SUCCESS;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    char *rb = recvbuf;
    if (!(flags & FMPL_COLL_IN_PLACE) && fmpl_layout_count(l, r) > 0)
        memcpy(rb + fmpl_layout_displ(l, r), sendbuf, (size_t)fmpl_layout_count(l, r));
    for (int i = 0; i < p - 1 && rc == FMPL_SUCCESS; i++) {
        int sblk = (r - i + p) % p, rblk = (r - i - 1 + p) % p;
        int64_t sn = fmpl_layout_count(l, sblk), rn = fmpl_layout_count(l, rblk);
        rc = fmpl_coll_sendrecv(t, sn > 0 ? rb + fmpl_layout_displ(l, sblk) : NULL, sn, right,
                                rn > 0 ? rb + fmpl_layout_displ(l, rblk) : NULL, rn, left);
    }
    return rc;
}
