/* Fabric start-up and shut-down for the shared-memory backend.
 *
 * Sequence (every rank):
 *   1. create and map its own segment /dev/shm/fmpl-<job>-<rank>, write the
 *      header, create the heap inside it;
 *   2. publish "<host> <pid> <segment size>" under key "shm", fence;
 *   3. map every peer's segment (all ranks must be on this host: there is no
 *      network backend yet);
 *   4. barrier, then unlink its own file: from here on nothing is left in
 *      /dev/shm whatever happens to the job;
 *   5. probe CMA to every peer (FMPL_SHM_CMA decides what to do about it). */
#include "fabric/fabric.h"
#include "fabric/shm/shm_heap.h"
#include "fabric/shm/shm_malloc.h"
#include "fabric/shm/shm_segment.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FMPL_TUNABLE(tunable_heap_size, "FMPL_HEAP_SIZE", "256m",
             "bytes of shared heap per rank (fmpl_alloc, staging, control areas); "
             "pages are taken only when touched");
FMPL_TUNABLE(tunable_cma, "FMPL_SHM_CMA", "auto",
             "single-copy kernel path for private buffers: auto (use it when the kernel "
             "allows), on (fail at start-up when refused), off (stage through shared memory)");

fmpl_fabric fmpl_fab;

int fmpl_shm_cma_probe(int rank);

static const char *const cma_choices[] = {"auto", "on", "off", NULL};

static int exchange_and_attach(fmpl_bootstrap *bs)
{
    char host[256], value[FMPL_BOOTSTRAP_VALUE_MAX];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(value, sizeof value, "%s:%d:%zx", host, (int)getpid(), fmpl_fab.my_size);
    int rc = bs->put(bs, "shm", value);
    if (rc == FMPL_SUCCESS)
        rc = bs->fence(bs);
    if (rc != FMPL_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "exchanging shared-segment information failed");

    for (int r = 0; r < fmpl_fab.size; r++) {
        if (r == fmpl_fab.rank)
            continue;
        char peer_host[256];
        int pid;
        size_t size;
        if (bs->get(bs, r, "shm", value, sizeof value) != FMPL_SUCCESS ||
            sscanf(value, "%255[^:]:%d:%zx", peer_host, &pid, &size) != 3)
            return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "rank %d published no shared segment", r);
        if (strcmp(peer_host, host) != 0)
            return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                              "rank %d runs on host %s, this rank on %s: FMPL has no network "
                              "backend yet, all ranks must share one host",
                              r, peer_host, host);
        fmpl_peer *peer = &fmpl_fab.peers[r];
        peer->pid = pid;
        peer->seg_size = size;
        rc = fmpl_shm_segment_attach(bs->job_id, r, size, &peer->base);
        if (rc != FMPL_SUCCESS)
            return rc;
        const fmpl_shm_header *h = (const fmpl_shm_header *)peer->base;
        if (h->magic != FMPL_SHM_MAGIC || h->rank != r)
            return FMPL_ERROR(FMPL_ERR_INTERNAL, "rank %d's shared segment has a bad header", r);
    }
    return FMPL_SUCCESS;
}

static int probe_cma(void)
{
    fmpl_fab.cma_mode = fmpl_tunable_choice(&tunable_cma, cma_choices);
    if (fmpl_fab.cma_mode == 2) {
        fmpl_fab.cma_reason = "disabled by FMPL_SHM_CMA=off";
        return FMPL_SUCCESS;
    }
    int refused = 0, first_errno = 0;
    for (int r = 0; r < fmpl_fab.size; r++) {
        if (r == fmpl_fab.rank)
            continue;
        int e = fmpl_shm_cma_probe(r);
        fmpl_fab.peers[r].cma = (e == 0);
        if (e && !refused) {
            refused = 1;
            first_errno = e;
        }
    }
    if (!refused)
        return FMPL_SUCCESS;
    static char reason[160];
    snprintf(reason, sizeof reason, "process_vm_readv refused by the kernel: %s",
             strerror(first_errno));
    fmpl_fab.cma_reason = reason;
    if (fmpl_fab.cma_mode == 1)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "FMPL_SHM_CMA=on but %s", reason);
    if (fmpl_fab.rank == 0)
        fmpl_log_warn("single-copy CMA unavailable (%s); private buffers are staged through "
                      "shared memory (two copies)", reason);
    return FMPL_SUCCESS;
}

int fmpl_fabric_init(fmpl_bootstrap *bs)
{
    memset(&fmpl_fab, 0, sizeof fmpl_fab);
    fmpl_fab.bs = bs;
    fmpl_fab.rank = bs->rank;
    fmpl_fab.size = bs->size;
    fmpl_fab.peers = calloc((size_t)bs->size, sizeof *fmpl_fab.peers);
    if (!fmpl_fab.peers)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d peers", bs->size);

    long long heap = fmpl_tunable_long(&tunable_heap_size);
    if (heap < (1 << 20))
        heap = 1 << 20;
    size_t size = FMPL_SHM_HEADER_SIZE + (((size_t)heap + 4095) & ~(size_t)4095);
    int rc = fmpl_shm_segment_create(bs->job_id, bs->rank, size, &fmpl_fab.my_base);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_fab.my_size = size;
    fmpl_peer *me = &fmpl_fab.peers[bs->rank];
    me->base = fmpl_fab.my_base;
    me->seg_size = size;
    me->pid = getpid();
    me->cma = 1;

    fmpl_shm_header *h = (fmpl_shm_header *)fmpl_fab.my_base;
    h->owner_addr = (uint64_t)(uintptr_t)fmpl_fab.my_base;
    h->rank = bs->rank;
    h->pid = (int32_t)getpid();
    h->size = size;
    fmpl_fab.heap = fmpl_heap_create(fmpl_fab.my_base + FMPL_SHM_HEADER_SIZE,
                                     size - FMPL_SHM_HEADER_SIZE);
    if (!fmpl_fab.heap) {
        fmpl_shm_segment_unlink(bs->job_id, bs->rank);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "cannot create the shared heap");
    }
    atomic_store_explicit((_Atomic uint64_t *)&h->magic, FMPL_SHM_MAGIC, memory_order_release);

    rc = exchange_and_attach(bs);
    /* On failure the job is ending anyway (fmpl_init failures end the job):
     * remove our file now, not after the barrier below, because a process
     * manager that does not clean /dev/shm (Open MPI's mpirun) may kill us
     * while we wait in it. */
    if (rc != FMPL_SUCCESS)
        fmpl_shm_segment_unlink(bs->job_id, bs->rank);
    /* Everyone has mapped every segment (or failed): the files can go. */
    if (bs->barrier(bs) != FMPL_SUCCESS && rc == FMPL_SUCCESS)
        rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "barrier after attaching segments failed");
    fmpl_shm_segment_unlink(bs->job_id, bs->rank);
    if (rc == FMPL_SUCCESS)
        rc = probe_cma();
    if (rc == FMPL_SUCCESS)
        fmpl_shm_malloc_enable(fmpl_fab.heap, fmpl_fab.heap, size - FMPL_SHM_HEADER_SIZE);
    return rc;
}

void fmpl_fabric_finalize(void)
{
    if (!fmpl_fab.peers)
        return;
    /* The program's malloc blocks in our heap outlive finalisation (they
     * are freed, and maybe used, after MPI_Finalize): keep our segment. */
    int keep_mine = fmpl_shm_malloc_retire();
    for (int r = 0; r < fmpl_fab.size; r++)
        if (r != fmpl_fab.rank || !keep_mine)
            fmpl_shm_segment_unmap(fmpl_fab.peers[r].base, fmpl_fab.peers[r].seg_size);
    free(fmpl_fab.peers);
    memset(&fmpl_fab, 0, sizeof fmpl_fab);
}

void *fmpl_fab_alloc(size_t size) { return fmpl_heap_alloc(fmpl_fab.heap, size, 64); }

void fmpl_fab_free(void *p) { fmpl_heap_free(fmpl_fab.heap, p); }

void fmpl_raddr_format(fmpl_raddr r, char *out, size_t len)
{
    snprintf(out, len, "%x.%llx", r.kind, (unsigned long long)r.addr);
}

int fmpl_raddr_parse(const char *text, int rank, fmpl_raddr *r)
{
    unsigned kind;
    unsigned long long addr;
    if (sscanf(text, "%x.%llx", &kind, &addr) != 2)
        return FMPL_ERR_BOOTSTRAP;
    r->kind = kind;
    r->addr = addr;
    r->rank = rank;
    return FMPL_SUCCESS;
}

/* Shared offsets and user-space addresses both fit in 62 bits. */
uint64_t fmpl_raddr_pack(fmpl_raddr r) { return ((uint64_t)r.kind << 62) | r.addr; }

fmpl_raddr fmpl_raddr_unpack(uint64_t packed, int rank)
{
    fmpl_raddr r = {.addr = packed & ((1ull << 62) - 1), .rank = rank,
                    .kind = (uint32_t)(packed >> 62)};
    return r;
}
