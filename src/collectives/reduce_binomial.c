/* Reduce over a binomial tree of sender-matched messages, rooted at member 0
 * so that operands combine in rank order (the built-in operations keep the
 * lower rank's value on ties; user functions need not commute):
 *   member r receives the partial result of each child r + 2^j (j = 0, 1, ..
 *   while bit j of r is clear) into `work`, combines buf (ranks r .. r+2^j-1)
 *   as the lower operand with work, and finally sends buf to its parent
 *   r - 2^k.  A root other than 0 then gets the result from member 0 in one
 *   more message.  Allreduce (root < 0) broadcasts it from 0 down the tree. */
#include "collectives/collectives.h"
#include "protocols/sender_match.h"

#include <string.h>

static int recv_from(fmpl_team *t, void *buf, int64_t bytes, int src, int idx)
{
    int rc = fmpl_sm_irecv(t, buf, bytes, src, idx);
    return rc == FMPL_SUCCESS ? fmpl_sm_recv_wait(t, src, idx, NULL) : rc;
}

static int send_to(fmpl_team *t, const void *buf, int64_t bytes, int dst, int idx)
{
    int rc = fmpl_sm_isend(t, buf, bytes, dst, idx);
    return rc == FMPL_SUCCESS ? fmpl_sm_send_wait(t, dst, idx) : rc;
}

int fmpl_reduce_binomial(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, int root,
                         void *work)
{
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(op);
    int idx = fmpl_team_internal_index(t, FMPL_IDX_COLL);
    int rank = t->rank, p = t->size, j = 0, rc;
    for (; (1 << j) < p; j++) {
        if (rank & (1 << j))
            break;
        int child = rank + (1 << j);
        if (child >= p)
            continue;
        if ((rc = recv_from(t, work, bytes, child, idx)) != FMPL_SUCCESS)
            return rc;
        fmpl_op_apply(op, buf, work, count);
        memcpy(buf, work, (size_t)bytes);
    }
    if (rank != 0 && (rc = send_to(t, buf, bytes, rank - (1 << j), idx)) != FMPL_SUCCESS)
        return rc;
    if (root < 0)
        return fmpl_bcast_binomial(t, buf, bytes, 0);
    if (root > 0 && rank == 0)
        return send_to(t, buf, bytes, root, idx);
    if (root > 0 && rank == root)
        return recv_from(t, buf, bytes, 0, idx);
    return FMPL_SUCCESS;
}
