/* Gather(v) as a schedule: the root receives every other member's block
 * straight into its place in recvbuf (all at once, round 0) and copies its
 * own unless in place; the others send theirs.  Zero-byte blocks are
 * skipped by both sides alike (the two views of a block size agree). */
#include "collectives/sched_coll.h"

int fmpl_sched_gatherv_linear(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                              int64_t sendbytes, void *recvbuf, const fmpl_coll_layout *l,
                              int root, int flags)
{
    if (t->rank != root) {
        if (sendbytes > 0)
            fmpl_sched_send(s, 0, sendbuf, sendbytes, root);
        return s->error;
    }
    for (int q = 0; q < t->size; q++) {
        int64_t n = fmpl_layout_count(l, q);
        char *at = n > 0 ? (char *)recvbuf + fmpl_layout_displ(l, q) : NULL;
        if (n <= 0)
            continue;
        if (q != root)
            fmpl_sched_recv(s, 0, at, n, q);
        else if (!(flags & FMPL_COLL_IN_PLACE))
            fmpl_sched_copy(s, 0, at, sendbuf, n);
    }
    return s->error;
}
