/* Linking a process of another world of the job (a spawned world, or one
 * that connected to this one: runtime/link.c) at the fabric level.
 *
 * Its start-up published "<host identity>:<pid>:<segment size>:<fd>" under
 * its universe rank (fabric.c, step 2) and, when it opened the network
 * backend, its endpoint under "net" (net_iface.c).
 *  - Same host (and not FMPL_FABRIC=net): its file is long gone (step 4),
 *    so its segment is mapped through the descriptor it keeps open,
 *    /proc/<pid>/fd/<fd>; then CMA is probed as at start-up.
 *  - Another host, or FMPL_FABRIC=net: its endpoint goes into the address
 *    vector and it is a network peer from then on, as a world peer on
 *    another host is.  Both processes opened the backend at start-up,
 *    because the job spans hosts or forces the network (fabric.c,
 *    net_needed); a process that did not cannot link, and says why.
 *  - When the backend is open, a same-host peer enters the address vector
 *    too: every atomic then goes through the backend (fabric.h), whatever
 *    reaches the peer's memory otherwise. */
#include "fabric/fabric.h"
#include "fabric/fabric_internal.h"
#include "fabric/shm/shm_segment.h"
#include "base/error.h"
#include "base/log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int map_segment(fmpl_peer *peer, int r, int pid, int fd, size_t size)
{
    int rc = fmpl_shm_segment_attach_fd(pid, fd, size, &peer->base);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!fmpl_shm_header_ok(peer->base, r)) {
        fmpl_shm_segment_unmap(peer->base, size);
        peer->base = NULL;
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "process %d's shared segment has a bad header", r);
    }
    /* Same host: the node-aware collectives group it with this process. */
    peer->node = fmpl_fab.peers[fmpl_fab.rank].node;
    peer->cma = fmpl_fab.cma_mode != 2 && fmpl_shm_cma_probe(r) == 0;
    return FMPL_SUCCESS;
}

int fmpl_fabric_link(int r)
{
    if (r < 0 || r >= fmpl_fab.capacity)
        return FMPL_ERROR(FMPL_ERR_RANK, "universe rank %d outside 0..%d", r,
                          fmpl_fab.capacity - 1);
    fmpl_peer *peer = &fmpl_fab.peers[r];
    if (peer->linked)
        return FMPL_SUCCESS;
    char value[FMPL_BOOTSTRAP_VALUE_MAX], host[384], peer_host[384];
    int pid, fd;
    size_t size;
    fmpl_bootstrap *bs = fmpl_fab.bs;
    if (bs->get(bs, r, "shm", value, sizeof value) != FMPL_SUCCESS ||
        sscanf(value, "%383[^:]:%d:%zx:%d", peer_host, &pid, &size, &fd) != 4)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "process %d published no shared segment", r);
    fmpl_fabric_host_identity(host, sizeof host);
    int remote = strcmp(peer_host, host) != 0;
    int over_net = remote || fmpl_fabric_forces_net();
    if (over_net && !fmpl_fab.net) {
        int name_len = (int)strcspn(peer_host, "/");
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "process %d (host %.*s) is reached over the network, and this process "
                          "started without the network backend (its launcher did not say that "
                          "the job spans hosts, or this build has no libfabric)",
                          r, name_len, peer_host);
    }
    if (fmpl_fab.net) {
        int rc = fmpl_fabric_net_link(r);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    peer->pid = pid;
    peer->seg_size = size;
    if (over_net) {
        peer->net = 1;
        /* A node of its own, as under FMPL_FABRIC=net: members of
         * different worlds need not agree on nodes, since a team spanning
         * worlds never uses the node-aware schedules (coll_team.c). */
        peer->node = r;
        fmpl_fab.net_peers++;
        fmpl_fab.net_remote += remote;
    } else {
        int rc = map_segment(peer, r, pid, fd, size);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    peer->linked = 1;
    if (r + 1 > fmpl_fab.linked_end)
        fmpl_fab.linked_end = r + 1;
    fmpl_log_debug("linked process %d (pid %d) of another world%s", r, pid,
                   over_net ? " over the network" : "");
    return FMPL_SUCCESS;
}
