/* Linking a process of another world of the job (a spawned world, or one
 * that connected to this one: runtime/link.c) at the fabric level.
 *
 * Its start-up published "<host identity>:<pid>:<segment size>:<fd>" under
 * its universe rank (fabric.c, step 2); its file is long gone (step 4), so
 * its segment is mapped through the descriptor it keeps open:
 * /proc/<pid>/fd/<fd>.  Then CMA is probed as at start-up.  A process on
 * another host, or any link while FMPL_FABRIC=net, would need the network
 * backend to insert an address after start-up, which it cannot do yet: the
 * link fails with FMPL_ERR_UNSUPPORTED and a message. */
#include "fabric/fabric.h"
#include "fabric/fabric_internal.h"
#include "fabric/shm/shm_segment.h"
#include "base/error.h"
#include "base/log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>


int fmpl_fabric_link(int r)
{
    if (r < 0 || r >= fmpl_fab.capacity)
        return FMPL_ERROR(FMPL_ERR_RANK, "universe rank %d outside 0..%d", r,
                          fmpl_fab.capacity - 1);
    fmpl_peer *peer = &fmpl_fab.peers[r];
    if (peer->linked)
        return FMPL_SUCCESS;
    if (fmpl_fab.net_peers > 0)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "linking process %d of another world: this job uses the network "
                          "backend, which cannot add a peer after start-up yet",
                          r);
    char value[FMPL_BOOTSTRAP_VALUE_MAX], host[384], peer_host[384];
    int pid, fd;
    size_t size;
    fmpl_bootstrap *bs = fmpl_fab.bs;
    if (bs->get(bs, r, "shm", value, sizeof value) != FMPL_SUCCESS ||
        sscanf(value, "%383[^:]:%d:%zx:%d", peer_host, &pid, &size, &fd) != 4)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "process %d published no shared segment", r);
    fmpl_fabric_host_identity(host, sizeof host);
    if (strcmp(peer_host, host) != 0)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "process %d runs on another host (%.*s): linking worlds across hosts "
                          "needs the network backend, which cannot add a peer after start-up "
                          "yet",
                          r, (int)strcspn(peer_host, "/"), peer_host);
    int rc = fmpl_shm_segment_attach_fd(pid, fd, size, &peer->base);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!fmpl_shm_header_ok(peer->base, r)) {
        fmpl_shm_segment_unmap(peer->base, size);
        peer->base = NULL;
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "process %d's shared segment has a bad header", r);
    }
    peer->pid = pid;
    peer->seg_size = size;
    /* Same host: the node-aware collectives group it with this process. */
    peer->node = fmpl_fab.peers[fmpl_fab.rank].node;
    peer->cma = fmpl_fab.cma_mode != 2 && fmpl_shm_cma_probe(r) == 0;
    peer->linked = 1;
    if (r + 1 > fmpl_fab.linked_end)
        fmpl_fab.linked_end = r + 1;
    fmpl_log_debug("linked process %d (pid %d) of another world", r, pid);
    return FMPL_SUCCESS;
}
