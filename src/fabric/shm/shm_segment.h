/* A rank's shared segment: a header with well-known offsets, the heap, then
 * the symmetric arena.
 *
 *   offset 0              fmpl_shm_header (one page)
 *   FMPL_SHM_HEADER_SIZE  heap (fmpl_heap bookkeeping, then blocks)
 *   + FMPL_HEAP_SIZE      symmetric arena (FMPL_SYMMETRIC_SIZE; fabric/symmetric.h)
 *
 * The file is /dev/shm/fmpl-<job_id>-<rank>.  It exists only between its
 * creation and the moment every rank has mapped it: the owner unlinks it
 * after the attach barrier, so a job that dies later leaves no file, and the
 * launcher removes any file with the job's prefix when a job dies earlier
 * (under other process managers the PMIx client removes it when the
 * process manager goes away: base/exit_cleanup.h). */
#ifndef FMPL_SHM_SEGMENT_H
#define FMPL_SHM_SEGMENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fabric/fabric.h"

#define FMPL_SHM_MAGIC 0x464d504c53484d31ull /* "FMPLSHM1" */
#define FMPL_SHM_HEADER_SIZE 4096

typedef struct fmpl_shm_header {
    uint64_t magic;
    uint64_t owner_addr;           /* where the owner mapped it (for CMA probing) */
    int32_t rank;
    int32_t pid;
    uint64_t size;
    /* Read by network peers to settle their writes (net_ep.c: settle): a
     * word of its own line that the owner never writes after creation. */
    _Alignas(64) uint64_t net_settle;
    /* The owner's agent (progress/agent.c) sleeps on agent_bell (a futex
     * word) while agent_sleeping is 1; the owner and its local peers ring
     * it.  A line of their own: peers read agent_sleeping often. */
    _Alignas(64) _Atomic uint32_t agent_bell;
    _Atomic uint32_t agent_sleeping;
} fmpl_shm_header;

/* Name of rank's segment in this job (shm_open form, starting with '/'). */
void fmpl_shm_segment_name(char *out, size_t len, const char *job_id, int rank);
/* Create, size and map this rank's segment.  With fd_out, the file stays
 * open there (close-on-exec, like every shm_open descriptor): the owner
 * maps its symmetric arena a second time from it (fabric/symmetric.h). */
int fmpl_shm_segment_create(const char *job_id, int rank, size_t size, char **base, int *fd_out);
/* Map a peer's segment (it must exist). */
int fmpl_shm_segment_attach(const char *job_id, int rank, size_t size, char **base);
/* Map the segment a live process holds open in descriptor fd, after its
 * file is gone (a process linked later: fabric_link.c), through
 * /proc/<pid>/fd/<fd>; the kernel allows it to the same user. */
int fmpl_shm_segment_attach_fd(pid_t pid, int fd, size_t size, char **base);
void fmpl_shm_segment_unlink(const char *job_id, int rank);
void fmpl_shm_segment_unmap(char *base, size_t size);

#endif
