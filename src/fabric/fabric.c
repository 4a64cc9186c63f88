/* Fabric start-up and shut-down, and the out-of-line paths.
 *
 * Sequence (every rank):
 *   1. create and map its own segment /dev/shm/fmpl-<job>-<rank>, write the
 *      header, create the heap inside it (the symmetric arena follows the
 *      heap: symmetric.h; the file stays open to map the arena again);
 *   2. publish "<host identity>:<pid>:<segment size>" under key "shm", fence.
 *      The host identity is the host name plus the kernel's boot id, so two
 *      containers with their own host names, or two machines that happen to
 *      share a name, count as two hosts;
 *   3. map the segment of every peer on this host; a peer on another host
 *      (every peer, with FMPL_FABRIC=net) is left to the network backend;
 *   4. barrier, then unlink its own file: from here on nothing is left in
 *      /dev/shm whatever happens to the job;
 *   5. probe CMA to every same-host peer (FMPL_SHM_CMA decides what to do);
 *   6. when any peer is a network peer, or a world of the job may be on
 *      another host later (net_needed): open the network backend
 *      (net_iface.c: endpoint, segment registration, address exchange).
 * The runtime above still refuses network peers (runtime.c): its protocols
 * reach peers by loads and stores. */
#include "fabric/fabric.h"
#include "fabric/fabric_internal.h"
#include "fabric/shm/shm_heap.h"
#include "fabric/shm/shm_malloc.h"
#include "fabric/shm/shm_segment.h"
#include "fabric/symmetric.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"
#include "base/wait.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FMPL_TUNABLE(tunable_heap_size, "FMPL_HEAP_SIZE", "256m",
             "bytes of shared heap per rank (fmpl_alloc, staging, control areas); "
             "pages are taken only when touched");
FMPL_TUNABLE(tunable_symmetric_size, "FMPL_SYMMETRIC_SIZE", "128m",
             "bytes of symmetric arena per rank (fmpl_alloc_symmetric), at the end of its "
             "shared segment; pages are taken only when touched; the same on every rank");
FMPL_TUNABLE(tunable_cma, "FMPL_SHM_CMA", "auto",
             "single-copy kernel path for private buffers: auto (use it when the kernel "
             "allows), on (fail at start-up when refused), off (stage through shared memory)");
FMPL_TUNABLE(tunable_fabric, "FMPL_FABRIC", "auto",
             "which backend reaches a peer: auto (shared memory on the same host, the network "
             "otherwise), net (the network for every peer, even on this host: for testing), "
             "split (for testing: the lower and the upper half of the ranks act as two hosts, "
             "shared memory inside each half, the network between them)");

fmpl_fabric fmpl_fab;

#ifdef FMPL_HAVE_NET
int fmpl_net_open(fmpl_bootstrap *bs);
void fmpl_net_close(void);
void fmpl_net_start_progress_thread(void);
void fmpl_net_describe(void (*line)(const char *text, void *ctx), void *ctx);
void fmpl_net_rcache_stats_get(fmpl_fab_rcache_info *s);
int fmpl_net_link(int r);
#endif

static const char *const cma_choices[] = {"auto", "on", "off", NULL};
static const char *const fabric_choices[] = {"auto", "net", "split", NULL};
enum { FABRIC_AUTO, FABRIC_NET, FABRIC_SPLIT };
static int fabric_mode;

int fmpl_fabric_forces_net(void) { return fabric_mode == FABRIC_NET; }

int fmpl_fabric_net_link(int r)
{
#ifdef FMPL_HAVE_NET
    return fmpl_net_link(r);
#else
    return FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "process %d: this build has no network backend", r);
#endif
}

/* "<host name>/<boot id>": the boot id tells hosts apart that share a name
 * and, being per kernel, containers of one host apart from hosts. */
void fmpl_fabric_host_identity(char *out, size_t len)
{
    char boot[64] = "noboot";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            strcpy(boot, "noboot");
        fclose(f);
        boot[strcspn(boot, "\n")] = '\0';
    }
    snprintf(out, len, "%s/%s", fmpl_fab.host, boot);
    if (fabric_mode == FABRIC_SPLIT) { /* the half is part of the identity */
        size_t used = strlen(out);
        snprintf(out + used, len - used, "/half%d",
                 fmpl_fab_world_index(fmpl_fab.rank) * 2 / fmpl_fab.size);
    }
}

/* The node of a rank whose host identity is `id`: the first rank seen with
 * it (ranks are visited in increasing order, so the lowest).  ids/id_rank
 * hold the distinct identities so far (*n of them). */
static int node_of_identity(const char *id, int rank, char (*ids)[384], int *id_rank, int *n)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(ids[i], id) == 0)
            return id_rank[i];
    snprintf(ids[*n], sizeof ids[*n], "%s", id);
    id_rank[*n] = rank;
    return id_rank[(*n)++];
}

static int attach_peers(fmpl_bootstrap *bs, int force_net, const char *host, char (*ids)[384],
                        int *id_rank);

static int exchange_and_attach(fmpl_bootstrap *bs, int force_net)
{
    char host[384], value[FMPL_BOOTSTRAP_VALUE_MAX];
    fmpl_fabric_host_identity(host, sizeof host);
    /* The descriptor that holds the segment open lets a process linked
     * later (a spawned world: fabric_link.c) map it after its file is gone. */
    snprintf(value, sizeof value, "%s:%d:%zx:%d", host, (int)getpid(), fmpl_fab.my_size,
             fmpl_fab.my_fd);
    int rc = bs->put(bs, "shm", value);
    if (rc == FMPL_SUCCESS)
        rc = bs->fence(bs);
    if (rc != FMPL_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "exchanging shared-segment information failed");
    /* Pages are taken only for the distinct identities written. */
    char (*ids)[384] = malloc((size_t)fmpl_fab.size * sizeof *ids);
    int *id_rank = malloc((size_t)fmpl_fab.size * sizeof *id_rank);
    rc = ids && id_rank ? attach_peers(bs, force_net, host, ids, id_rank)
                        : FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for the host identities");
    free(ids);
    free(id_rank);
    return rc;
}

/* The kernel part of a host identity (its boot id): "<name>/<boot id>[/half]". */
static size_t kernel_of(const char *id, const char **start)
{
    const char *slash = strchr(id, '/');
    *start = slash ? slash + 1 : id;
    return strcspn(*start, "/");
}

static int same_kernel(const char *a, const char *b)
{
    const char *ka, *kb;
    size_t na = kernel_of(a, &ka), nb = kernel_of(b, &kb);
    return na == nb && strncmp(ka, kb, na) == 0;
}

static int attach_peers(fmpl_bootstrap *bs, int force_net, const char *host, char (*ids)[384],
                        int *id_rank)
{
    char value[FMPL_BOOTSTRAP_VALUE_MAX];
    int nids = 0, rc;
    FMPL_FAB_FOR_WORLD(r) {
        if (r == fmpl_fab.rank) {
            int node = node_of_identity(host, r, ids, id_rank, &nids);
            fmpl_fab.peers[r].node = force_net ? r : node;
            continue;
        }
        char peer_host[384];
        int pid;
        size_t size;
        if (bs->get(bs, r, "shm", value, sizeof value) != FMPL_SUCCESS ||
            sscanf(value, "%383[^:]:%d:%zx:", peer_host, &pid, &size) != 3)
            return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "rank %d published no shared segment", r);
        fmpl_peer *peer = &fmpl_fab.peers[r];
        peer->linked = 1;
        peer->pid = pid;
        peer->seg_size = size;
        int node = node_of_identity(peer_host, r, ids, id_rank, &nids);
        peer->node = force_net ? r : node;
        fmpl_fab.machine_ranks += same_kernel(peer_host, host);
        int remote = strcmp(peer_host, host) != 0;
        if (force_net || remote) {
            /* Another host (or FMPL_FABRIC=net): the network backend. */
            peer->net = 1;
            fmpl_fab.net_remote += remote;
            if (fmpl_fab.net_peers++ == 0 || (remote && fmpl_fab.net_remote == 1)) {
                fmpl_fab.net_first = r;
                snprintf(fmpl_fab.net_first_host, sizeof fmpl_fab.net_first_host, "%.*s",
                         (int)strcspn(peer_host, "/"), peer_host);
            }
            continue;
        }
        rc = fmpl_shm_segment_attach(bs->job_id, r, size, &peer->base);
        if (rc != FMPL_SUCCESS)
            return rc;
        if (!fmpl_shm_header_ok(peer->base, r))
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
    FMPL_FAB_FOR_WORLD(r) {
        if (r == fmpl_fab.rank || fmpl_fab.peers[r].net)
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

/* Whether this process opens the network backend at start-up: when a peer
 * of its world needs it, and also, so that a world spawned or connected
 * later can be linked over it (fabric_link.c), when the job spans hosts or
 * FMPL_FABRIC=net and the launcher spawns.  Every process of the job then
 * has it, and every atomic of the job goes through it (net_atomics): a
 * backend opened only when the first link came would switch a process's
 * atomics while its world's peers kept using the CPU's on the same words. */
static int net_needed(const fmpl_bootstrap *bs, int force_net)
{
    if (fmpl_fab.net_peers > 0)
        return 1;
    if (!bs->spawn)
        return 0;
    return bs->universe_hosts > 1 || force_net;
}

int fmpl_fabric_init(fmpl_bootstrap *bs)
{
    memset(&fmpl_fab, 0, sizeof fmpl_fab);
    fmpl_fab.bs = bs;
    fmpl_fab.rank = bs->universe_rank;
    fmpl_fab.size = bs->size;
    fmpl_fab.world_base = bs->universe_base;
    fmpl_fab.capacity = bs->spawn ? FMPL_UNIVERSE_MAX : bs->universe_base + bs->size;
    fmpl_fab.my_fd = -1;
    fmpl_fab.linked_end = bs->universe_base + bs->size;
    fmpl_fab.net_first = -1;
    fmpl_fab.machine_ranks = 1;
    if (gethostname(fmpl_fab.host, sizeof fmpl_fab.host) != 0)
        strcpy(fmpl_fab.host, "localhost");
    fmpl_fab.host[sizeof fmpl_fab.host - 1] = '\0';
    fabric_mode = fmpl_tunable_choice(&tunable_fabric, fabric_choices);
    int force_net = fabric_mode == FABRIC_NET;
    /* One more entry than ranks, all zero: the out-of-line paths meet rank
     * `capacity` (a common off-by-one) as "no such peer", not as stray
     * memory.  Entries of processes not linked stay zero (calloc's pages
     * cost nothing until touched). */
    fmpl_fab.peers = calloc((size_t)fmpl_fab.capacity + 1, sizeof *fmpl_fab.peers);
    if (!fmpl_fab.peers)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d peers", fmpl_fab.capacity);

    long long heap = fmpl_tunable_long(&tunable_heap_size);
    if (heap < (1 << 20))
        heap = 1 << 20;
    long long sym = fmpl_tunable_long(&tunable_symmetric_size);
    if (sym < 0)
        sym = 0;
    size_t heap_bytes = ((size_t)heap + 4095) & ~(size_t)4095;
    size_t sym_bytes = ((size_t)sym + 4095) & ~(size_t)4095;
    size_t size = FMPL_SHM_HEADER_SIZE + heap_bytes + sym_bytes;
    int fd = -1;
    int rc = fmpl_shm_segment_create(bs->job_id, fmpl_fab.rank, size, &fmpl_fab.my_base, &fd);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_fab.my_fd = fd;
    fmpl_sym_setup(FMPL_SHM_HEADER_SIZE + heap_bytes, sym_bytes, fd);
    fmpl_fab.my_size = size;
    fmpl_peer *me = &fmpl_fab.peers[fmpl_fab.rank];
    me->base = fmpl_fab.my_base;
    me->seg_size = size;
    me->pid = getpid();
    me->cma = 1;
    me->linked = 1;

    fmpl_shm_header *h = (fmpl_shm_header *)fmpl_fab.my_base;
    h->owner_addr = (uint64_t)(uintptr_t)fmpl_fab.my_base;
    h->rank = fmpl_fab.rank;
    h->pid = (int32_t)getpid();
    h->size = size;
    fmpl_fab.heap = fmpl_heap_create(fmpl_fab.my_base + FMPL_SHM_HEADER_SIZE, heap_bytes);
    if (!fmpl_fab.heap) {
        fmpl_shm_segment_unlink(bs->job_id, fmpl_fab.rank);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "cannot create the shared heap");
    }
    atomic_store_explicit((_Atomic uint64_t *)&h->magic, FMPL_SHM_MAGIC, memory_order_release);

    rc = exchange_and_attach(bs, force_net);
    /* Waits spin or yield by the ranks under this kernel (FMPL_FABRIC=net
     * peers and namespace hosts share the cores); the network backend
     * reads fmpl_oversubscribed when it opens. */
    fmpl_wait_init(fmpl_fab.machine_ranks, fmpl_fab.net_remote > 0);
    /* On failure the job is ending anyway (fmpl_init failures end the job):
     * remove our file now, not after the barrier below, because a process
     * manager that does not clean /dev/shm (Open MPI's mpirun) may kill us
     * while we wait in it. */
    if (rc != FMPL_SUCCESS)
        fmpl_shm_segment_unlink(bs->job_id, fmpl_fab.rank);
    /* Everyone has mapped every segment (or failed): the files can go. */
    if (bs->barrier(bs) != FMPL_SUCCESS && rc == FMPL_SUCCESS)
        rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "barrier after attaching segments failed");
    fmpl_shm_segment_unlink(bs->job_id, fmpl_fab.rank);
    if (rc == FMPL_SUCCESS)
        rc = probe_cma();
    /* Every rank agrees whether the network is needed (any rank has a
     * network peer iff some pair is on two hosts, or FMPL_FABRIC=net with
     * two ranks or more), so the collective set-up inside fmpl_net_open is
     * entered by all or none (net_needed adds job-wide conditions only).
     * A world of one rank that no launcher can join to others has no pair
     * to serve, even under FMPL_FABRIC=net (udp;ofi_rxd, libfabric 1.17,
     * crashed on its own atomics to itself there). */
    if (rc == FMPL_SUCCESS && net_needed(bs, force_net)) {
#ifdef FMPL_HAVE_NET
        rc = fmpl_net_open(bs);
#else
        /* Without the backend a later link across hosts fails instead,
         * with its own message (fabric_link.c). */
        if (fmpl_fab.net_peers > 0)
            rc = fmpl_fab.net_remote
                 ? FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                              "rank %d runs on host %s, this rank on %s: this build has no "
                              "network backend (libfabric was not found when it was "
                              "configured)",
                              fmpl_fab.net_first, fmpl_fab.net_first_host, fmpl_fab.host)
                 : FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                              "FMPL_FABRIC=net, but this build has no network backend "
                              "(libfabric was not found when it was configured)");
#endif
    }
    if (rc == FMPL_SUCCESS)
        fmpl_shm_malloc_enable(fmpl_fab.heap, fmpl_fab.heap, heap_bytes);
    return rc;
}

int fmpl_fab_bell(int rank, _Atomic uint32_t **bell, _Atomic uint32_t **sleeping)
{
    if (rank < 0 || rank >= fmpl_fab.capacity || !fmpl_fab.peers || !fmpl_fab.peers[rank].base)
        return 0;
    fmpl_shm_header *h = (fmpl_shm_header *)fmpl_fab.peers[rank].base;
    *bell = &h->agent_bell;
    *sleeping = &h->agent_sleeping;
    return 1;
}

void fmpl_fabric_started(void)
{
#ifdef FMPL_HAVE_NET
    if (fmpl_fab.net)
        fmpl_net_start_progress_thread();
#endif
}

void fmpl_fabric_finalize(void)
{
    if (!fmpl_fab.peers)
        return;
    /* The program's malloc blocks in our heap outlive finalisation (they
     * are freed, and maybe used, after MPI_Finalize): keep our segment. */
    int keep_mine = fmpl_shm_malloc_retire();
#ifdef FMPL_HAVE_NET
    fmpl_net_close();
#endif
    fmpl_sym_finalize();
    for (int r = 0; r < fmpl_fab.capacity; r++)
        if ((r != fmpl_fab.rank || !keep_mine) && fmpl_fab.peers[r].base)
            fmpl_shm_segment_unmap(fmpl_fab.peers[r].base, fmpl_fab.peers[r].seg_size);
    free(fmpl_fab.peers);
    memset(&fmpl_fab, 0, sizeof fmpl_fab);
}

/* ------------------------------------------------ out-of-line paths */

static inline int bad_rank(int rank)
{
    return rank < 0 || rank >= fmpl_fab.capacity || !fmpl_fab.peers[rank].linked;
}

int fmpl_fab_put_far(const void *src, size_t len, fmpl_raddr dst)
{
    if (bad_rank(dst.rank))
        return FMPL_ERROR(FMPL_ERR_ARG, "put to rank %d: no such peer", dst.rank);
    if (fmpl_fab.peers[dst.rank].net)
        return fmpl_fab.net->put(src, len, dst);
    return fmpl_fab_cma_write(dst.rank, dst.addr, src, len);
}

int fmpl_fab_get_far(void *dst, size_t len, fmpl_raddr src)
{
    if (bad_rank(src.rank))
        return FMPL_ERROR(FMPL_ERR_ARG, "get from rank %d: no such peer", src.rank);
    if (fmpl_fab.peers[src.rank].net)
        return fmpl_fab.net->get(dst, len, src);
    return fmpl_fab_cma_read(src.rank, dst, src.addr, len);
}

int fmpl_fab_notify_far(fmpl_raddr flag, uint64_t value)
{
    if (bad_rank(flag.rank))
        return FMPL_ERROR(FMPL_ERR_ARG, "notify to rank %d: no such peer", flag.rank);
    if (fmpl_fab.peers[flag.rank].net)
        return fmpl_fab.net->notify(flag, value);
    return fmpl_fab_cma_write(flag.rank, flag.addr, &value, sizeof value);
}

int fmpl_fab_put_flagged(const void *src, size_t len, fmpl_raddr dst)
{
    if (bad_rank(dst.rank))
        return FMPL_ERROR(FMPL_ERR_ARG, "put to rank %d: no such peer", dst.rank);
    if (len < 8 || (dst.addr & 7))
        return FMPL_ERROR(FMPL_ERR_ARG,
                          "flagged put of %zu bytes at %#llx: 8 bytes at least, 8-byte aligned",
                          len, (unsigned long long)dst.addr);
    if (fmpl_fab.peers[dst.rank].net)
        return fmpl_fab.net->put_flagged(src, len, dst);
    /* Bytes 4..7 go with the put and again in the flag: a flag that lands
     * in pieces never shows the new word beside stale ones (fabric.h). */
    uint64_t first;
    memcpy(&first, src, sizeof first);
    int rc = fmpl_fab_put((const char *)src + 4, len - 4,
                          (fmpl_raddr){dst.addr + 4, dst.rank, dst.kind, dst.key});
    return rc == FMPL_SUCCESS ? fmpl_fab_notify(dst, first) : rc;
}

/* Only reached with the network backend up (fmpl_fabric.net_atomics). */
uint64_t fmpl_fab_fetch_add_far(fmpl_raddr r, uint64_t add)
{
    uint64_t old = UINT64_MAX;
    if (bad_rank(r.rank))
        FMPL_ERROR(FMPL_ERR_ARG, "fetch-add at rank %d: no such rank", r.rank);
    else
        fmpl_fab.net->fetch_add(r, add, &old);
    return old;
}

uint64_t fmpl_fab_cswap_far(fmpl_raddr r, uint64_t expected, uint64_t desired)
{
    uint64_t old = UINT64_MAX;
    if (bad_rank(r.rank))
        FMPL_ERROR(FMPL_ERR_ARG, "compare-and-swap at rank %d: no such rank", r.rank);
    else
        fmpl_fab.net->cswap(r, expected, desired, &old);
    return old;
}

int fmpl_fab_register(const void *p, size_t len, fmpl_raddr *r)
{
    *r = fmpl_fab_raddr(p);
    if (r->kind == FMPL_MEM_SHARED || !fmpl_fab.net)
        return FMPL_SUCCESS;
    if (!p || len == 0)
        return FMPL_ERROR(FMPL_ERR_ARG, "cannot register %zu bytes at %p", len, p);
    return fmpl_fab.net->reg(p, len, &r->key);
}

void fmpl_fab_deregister(const void *p, size_t len)
{
    if (fmpl_fab.net && p && !fmpl_fab_is_shared(p))
        fmpl_fab.net->dereg(p, len);
}

int fmpl_fab_rcache_stats(fmpl_fab_rcache_info *s)
{
    memset(s, 0, sizeof *s);
#ifdef FMPL_HAVE_NET
    if (fmpl_fab.net) {
        fmpl_net_rcache_stats_get(s);
        return FMPL_SUCCESS;
    }
#endif
    return FMPL_ERR_UNSUPPORTED;
}

int fmpl_fab_progress(void) { return fmpl_fab.net ? fmpl_fab.net->progress() : 0; }

void fmpl_fab_net_describe(void (*line)(const char *text, void *ctx), void *ctx)
{
#ifdef FMPL_HAVE_NET
    fmpl_net_describe(line, ctx);
#else
    line("network (libfabric): not built in (libfabric was not found when this build was "
         "configured); all ranks must share a host",
         ctx);
#endif
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

/* Shared offsets and user-space addresses both fit in 62 bits.  The key does
 * not travel: a packed address reaches shared memory and CMA only (every
 * user of the packed form today hands it to fmpl_fab_ptr or CMA); a private
 * buffer for a network peer goes as a full fmpl_raddr (fmpl_fab_register). */
uint64_t fmpl_raddr_pack(fmpl_raddr r) { return ((uint64_t)r.kind << 62) | r.addr; }

fmpl_raddr fmpl_raddr_unpack(uint64_t packed, int rank)
{
    fmpl_raddr r = {.addr = packed & ((1ull << 62) - 1), .rank = rank,
                    .kind = (uint32_t)(packed >> 62)};
    return r;
}
