/* Helpers of the point-to-point collective algorithms: every message goes
 * through the sender-matched protocol on the team's internal index
 * FMPL_IDX_COLL (one outstanding send and one receive per peer and
 * direction).  Zero-byte blocks are skipped by both sides alike. */
#ifndef FMPL_COLLECTIVES_P2P_UTIL_H
#define FMPL_COLLECTIVES_P2P_UTIL_H

#include "collectives/collectives.h"
#include "protocols/sender_match.h"
#include "base/error.h"

static inline int fmpl_coll_idx(const fmpl_team *t)
{
    return fmpl_team_internal_index(t, FMPL_IDX_COLL);
}

/* Keep the first error. */
static inline void fmpl_coll_keep(int *rc, int r)
{
    if (r != FMPL_SUCCESS && *rc == FMPL_SUCCESS)
        *rc = r;
}

/* Send `sbytes` to dst while receiving `rbytes` from src (either may be 0). */
static inline int fmpl_coll_sendrecv(fmpl_team *t, const void *sbuf, int64_t sbytes, int dst,
                                     void *rbuf, int64_t rbytes, int src)
{
    int idx = fmpl_coll_idx(t), rc = FMPL_SUCCESS;
    int rposted = 0, sposted = 0;
    if (rbytes > 0) {
        fmpl_coll_keep(&rc, fmpl_sm_irecv(t, rbuf, rbytes, src, idx));
        rposted = rc == FMPL_SUCCESS;
    }
    if (sbytes > 0) {
        int r = fmpl_sm_isend(t, sbuf, sbytes, dst, idx);
        fmpl_coll_keep(&rc, r);
        sposted = r == FMPL_SUCCESS;
    }
    if (sposted)
        fmpl_coll_keep(&rc, fmpl_sm_send_wait(t, dst, idx));
    if (rposted)
        fmpl_coll_keep(&rc, fmpl_sm_recv_wait(t, src, idx, NULL));
    return rc;
}

static inline int64_t fmpl_clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

#endif
