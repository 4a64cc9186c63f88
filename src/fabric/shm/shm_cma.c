/* Single-copy transfers to and from another process's private memory through
 * the kernel (Linux cross-memory attach: process_vm_writev/readv).
 *
 * One system call per transfer; the kernel copies once.  Used for user
 * buffers outside the shared heap.  The kernel may refuse (EPERM under
 * ptrace restrictions, ENOSYS in some containers): fmpl_shm_cma_probe finds
 * out at start-up, and the protocols then stage through shared memory. */
#include "fabric/fabric.h"
#include "fabric/fabric_internal.h"
#include "fabric/shm/shm_segment.h"
#include "base/error.h"
#include "base/log.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

/* The kernel moves at most this much per call; larger transfers loop. */
static int cma_loop(int rank, void *local, uint64_t remote, size_t len, int write)
{
    const fmpl_peer *peer = &fmpl_fab.peers[rank];
    if (!peer->cma)
        return FMPL_ERR_UNSUPPORTED;
    while (len > 0) {
        struct iovec l = {.iov_base = local, .iov_len = len};
        struct iovec r = {.iov_base = (void *)(uintptr_t)remote, .iov_len = len};
        ssize_t n = write ? process_vm_writev(peer->pid, &l, 1, &r, 1, 0)
                          : process_vm_readv(peer->pid, &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return FMPL_ERROR(FMPL_ERR_INTERNAL, "%s of %zu bytes with rank %d (pid %d) failed: %s",
                              write ? "process_vm_writev" : "process_vm_readv", len, rank,
                              (int)peer->pid, strerror(errno));
        }
        local = (char *)local + n;
        remote += (uint64_t)n;
        len -= (size_t)n;
    }
    return FMPL_SUCCESS;
}

int fmpl_fab_cma_write(int rank, uint64_t remote_addr, const void *src, size_t len)
{
    return cma_loop(rank, (void *)src, remote_addr, len, 1);
}

int fmpl_fab_cma_read(int rank, void *dst, uint64_t remote_addr, size_t len)
{
    return cma_loop(rank, dst, remote_addr, len, 0);
}

/* Read the peer's segment magic through CMA at the address where the peer
 * mapped it.  Returns 0 when that works, else the errno. */
int fmpl_shm_cma_probe(int rank)
{
    const fmpl_peer *peer = &fmpl_fab.peers[rank];
    const fmpl_shm_header *h = (const fmpl_shm_header *)peer->base;
    uint64_t magic = 0;
    struct iovec l = {.iov_base = &magic, .iov_len = sizeof magic};
    struct iovec r = {.iov_base = (void *)(uintptr_t)h->owner_addr, .iov_len = sizeof magic};
    ssize_t n = process_vm_readv(peer->pid, &l, 1, &r, 1, 0);
    if (n != (ssize_t)sizeof magic)
        return n < 0 ? errno : EIO;
    return magic == FMPL_SHM_MAGIC ? 0 : EIO;
}
