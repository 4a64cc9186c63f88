/* Broadcast over a binomial tree of sender-matched point-to-point messages
 * (the paper's software broadcast).  Relative rank v = (rank - root) mod P;
 * a member receives from v - 2^k (k: lowest set bit of v) and then sends to
 * v + 2^j for j = k-1 .. 0, largest subtree first.  The receive is posted on
 * entry, so the parent's send finds the header already there and the data
 * moves with a single copy straight into the child's buffer.
 * Messages use the team's internal index FMPL_IDX_COLL. */
#include "collectives/collectives.h"
#include "protocols/sender_match.h"

int fmpl_bcast_binomial(fmpl_team *t, void *buf, int64_t size, int root)
{
    int p = t->size, v = (t->rank - root + p) % p;
    int idx = fmpl_team_internal_index(t, FMPL_IDX_COLL);
    int k = 0, rc;
    while ((1 << k) < p && !(v & (1 << k)))
        k++;
    if (v != 0) {
        int parent = ((v - (1 << k)) + root) % p;
        rc = fmpl_sm_irecv(t, buf, size, parent, idx);
        if (rc == FMPL_SUCCESS)
            rc = fmpl_sm_recv_wait(t, parent, idx, NULL);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    int children[32], n = 0;
    for (int j = k - 1; j >= 0; j--)
        if (v + (1 << j) < p)
            children[n++] = (v + (1 << j) + root) % p;
    for (int i = 0; i < n; i++)
        if ((rc = fmpl_sm_isend(t, buf, size, children[i], idx)) != FMPL_SUCCESS)
            return rc;
    for (int i = 0; i < n; i++)
        if ((rc = fmpl_sm_send_wait(t, children[i], idx)) != FMPL_SUCCESS)
            return rc;
    return FMPL_SUCCESS;
}
