/* Allgather(v) around a ring as a schedule: round 0 puts my block in place
 * (unless in place); in round k = 1 .. P-1 I send block (rank - k + 1) to
 * the right neighbour and receive block (rank - k) from the left one, each
 * straight into its place in recvbuf. */
#include "collectives/sched_coll.h"

int fmpl_sched_allgatherv_ring(fmpl_sched *s, fmpl_team *t, const void *sendbuf, void *recvbuf,
                               const fmpl_coll_layout *l, int flags)
{
    int p = t->size, me = t->rank, right = (me + 1) % p, left = (me - 1 + p) % p;
    char *r = recvbuf;
    if (!(flags & FMPL_COLL_IN_PLACE) && fmpl_layout_count(l, me) > 0)
        fmpl_sched_copy(s, 0, r + fmpl_layout_displ(l, me), sendbuf, fmpl_layout_count(l, me));
    for (int k = 1; k < p; k++) {
        int out = (me - k + 1 + p) % p, in = (me - k + p) % p;
        if (fmpl_layout_count(l, out) > 0)
            fmpl_sched_send(s, k, r + fmpl_layout_displ(l, out), fmpl_layout_count(l, out), right);
        if (fmpl_layout_count(l, in) > 0)
            fmpl_sched_recv(s, k, r + fmpl_layout_displ(l, in), fmpl_layout_count(l, in), left);
    }
    return s->error;
}
