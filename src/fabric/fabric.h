/* The remote-memory-operation layer ("fabric").
 *
 * Every protocol reaches another rank's memory only through this interface:
 *   register    fmpl_fab_raddr()       a local address -> a remote address (key)
 *   put         fmpl_fab_put()         bytes into a peer's memory (source reusable on
 *                                      return; placed as "Ordering" says)
 *   notify      fmpl_fab_notify()      a 64-bit flag store, ordered after earlier puts
 *   flagged put fmpl_fab_put_flagged() bytes 4.. of a block, then its first 32-bit
 *                                      word: a record and its flag in one operation
 *   get         fmpl_fab_get()         bytes from a peer's memory
 *   atomics     fmpl_fab_fetch_add(), fmpl_fab_cswap()  on 64-bit words
 *   ordering    fmpl_fab_flush()
 *   descriptors fmpl_ctl_prepare() / fmpl_ctl_write(): pre-built small control
 *               writes (the paper's reused TCW): all address work is done once.
 *
 * Backend: shared memory.  Each rank owns one segment (a header, then a heap)
 * that every rank on the node maps.  A remote address is either
 *   FMPL_MEM_SHARED  an offset in the owner's segment: reached with plain
 *                    loads and stores, no system call;
 *   FMPL_MEM_PRIVATE a virtual address in the owner's process: reached with
 *                    one kernel-assisted copy (process_vm_writev/readv, "CMA")
 *                    where the kernel allows it.  Where it does not, the
 *                    operation fails with FMPL_ERR_UNSUPPORTED and the protocol
 *                    above falls back to staging through shared memory.
 * Backend: network (src/fabric/net/, libfabric, built when found).  A peer on
 * another host (or every peer, with FMPL_FABRIC=net) has no mapped segment
 * (peers[r].base == NULL, peers[r].net != 0); operations on its memory leave
 * the inline paths below for fmpl_fab.net, an operation table.  Its shared
 * heap is reached by offset through one registration of its whole segment,
 * published at start-up; a private buffer is reached through the key that
 * fmpl_fab_register() put in the remote address.  The shared-memory fast
 * paths pay one predictable branch (the NULL base) for this.
 * A shared heap mapped at identical addresses in all ranks (PVAS) makes
 * fmpl_fab_ptr() the identity; callers never assume either way.
 *
 * Ordering: a get is complete when the call returns.  A put is placed at
 * its target before any later notify, get or atomic of the caller at that
 * rank takes effect, and before fmpl_fab_flush returns; over loads, stores
 * and CMA it is placed on return already, over the network it may still be
 * on its way (net_ep.c: settling).  fmpl_fab_notify() is a release store, so
 * a peer that observes the flag with an acquire load also observes every
 * put issued before it.  Over the network a flag may be seen half written:
 * without network atomics the backend sends it as an 8-byte RMA write,
 * which a stream provider (tcp) places in pieces as its segments arrive,
 * lowest address first.  So a flag's value must be the whole message: a
 * counter (a prefix of a larger one reads smaller) or a sequence word whose
 * other bytes a put already placed (channel.c, sender_match.c). */
#ifndef FMPL_FABRIC_H
#define FMPL_FABRIC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "fmpl.h"
#include "bootstrap/bootstrap.h"

enum { FMPL_MEM_NONE = 0, FMPL_MEM_SHARED = 1, FMPL_MEM_PRIVATE = 2 };

typedef struct fmpl_raddr {
    uint64_t addr;  /* SHARED: offset in the owner's segment; PRIVATE: address */
    int32_t rank;   /* world rank of the owner */
    uint32_t kind;  /* FMPL_MEM_* */
    uint64_t key;   /* PRIVATE memory registered with the network backend
                       (fmpl_fab_register): its remote key plus one; 0 otherwise.
                       SHARED addresses need none: the owner's segment key is
                       known to every rank. */
} fmpl_raddr;

/* What this process knows about one peer (the local rank included). */
typedef struct fmpl_peer {
    int linked;        /* set up: a member of this world, or a process of another
                          world linked since (fabric_link.c); 0 for every other
                          entry of the table */
    char *base;        /* where the peer's segment is mapped here; NULL when the
                          peer is reached over the network */
    size_t seg_size;
    pid_t pid;
    int cma;           /* process_vm_writev/readv to this peer works */
    int net;           /* reached through fmpl_fab.net */
    int node;          /* the lowest world rank sharing its host (FMPL_FABRIC=net: the
                          peer itself), from the identities every rank publishes at
                          start-up: all ranks agree on every peer's node without
                          communicating (the node-aware collective schedules) */
    uint64_t net_dest; /* its address-vector entry (fi_addr_t) */
    uint64_t net_base; /* remote address of its segment's byte 0 (0: offset-based) */
    uint64_t net_key;  /* key of its segment registration */
} fmpl_peer;

struct fmpl_ctl_desc;

/* The network backend's operations (src/fabric/net/net_ep.c), with the
 * guarantees the inline shared-memory paths give (see "Ordering" above). */
typedef struct fmpl_fab_ops {
    const char *name;
    int (*put)(const void *src, size_t len, fmpl_raddr dst);
    int (*get)(void *dst, size_t len, fmpl_raddr src);
    int (*notify)(fmpl_raddr flag, uint64_t value);
    int (*put_flagged)(const void *src, size_t len, fmpl_raddr dst);
    int (*fetch_add)(fmpl_raddr r, uint64_t add, uint64_t *old);
    int (*cswap)(fmpl_raddr r, uint64_t expected, uint64_t desired, uint64_t *old);
    int (*flush)(int rank);
    void (*drain)(void);     /* every operation's local completion read */
    void (*ctl_prepare)(struct fmpl_ctl_desc *d);
    int (*ctl_write)(const struct fmpl_ctl_desc *d, uint64_t value);
    int (*reg)(const void *p, size_t len, uint64_t *key);   /* take a reference */
    void (*dereg)(const void *p, size_t len);               /* drop it */
    int (*progress)(void);   /* poll completions; > 0 when something advanced */
    void (*idle)(void);      /* nothing to do: spin briefly, then block or yield */
    const char *(*describe)(void);  /* provider and modes chosen, one line */
} fmpl_fab_ops;

typedef struct fmpl_fabric {
    int rank;                 /* this process's universe rank (bootstrap.h): the
                                 index every peer table uses */
    int size;                 /* processes in this process's world */
    int world_base;           /* universe rank of the world's first process */
    int capacity;             /* entries of the peer tables: universe ranks that
                                 may ever be peers (FMPL_UNIVERSE_MAX where the
                                 launcher spawns, else world_base + size) */
    int linked_end;           /* 1 + the highest universe rank linked: loops over
                                 every peer (polling) stop there */
    fmpl_peer *peers;         /* [capacity] */
    char *my_base;            /* == peers[rank].base */
    int my_fd;                /* holds my segment open (symmetric.h, fabric_link.c) */
    size_t my_size;
    struct fmpl_heap *heap;   /* this rank's shared heap */
    fmpl_bootstrap *bs;
    int cma_mode;             /* FMPL_SHM_CMA: 0 auto, 1 on, 2 off */
    const char *cma_reason;   /* why CMA is not used, or NULL */
    const fmpl_fab_ops *net;  /* network backend, or NULL when no peer needs it */
    int net_atomics;          /* atomics go through fmpl_fab.net, even to load/store
                                 peers: a provider's atomics are not atomic with
                                 respect to the CPU's */
    int net_peers;            /* peers reached over the network */
    int net_remote;           /* of them, peers on other hosts (not FMPL_FABRIC=net) */
    int machine_ranks;        /* ranks under this kernel (same boot id), me included:
                                 hosts that are containers or namespaces of one
                                 machine share its cores */
    int net_first;            /* the first of them, preferring one on another host
                                 (-1: none), for messages */
    char host[256];           /* this rank's host name */
    char net_first_host[256]; /* net_first's host name */
} fmpl_fabric;

extern fmpl_fabric fmpl_fab;

/* Every process of this world, by universe rank. */
#define FMPL_FAB_FOR_WORLD(r)                                                      \
    for (int r = fmpl_fab.world_base; r < fmpl_fab.world_base + fmpl_fab.size; r++)
/* Universe rank r's place in this world (valid for members only). */
static inline int fmpl_fab_world_index(int r) { return r - fmpl_fab.world_base; }

int fmpl_fabric_init(fmpl_bootstrap *bs);
void fmpl_fabric_finalize(void);
/* Map and probe universe rank r, a process of another world of this job
 * (fabric_link.c); nothing to do when it is linked already. */
int fmpl_fabric_link(int r);
/* Start-up is over (every rank has connected its protocols): the network
 * backend may start its progress thread. */
void fmpl_fabric_started(void);

/* Shared heap of this rank (fmpl_alloc). */
void *fmpl_fab_alloc(size_t size);
void fmpl_fab_free(void *p);

/* Remote addresses travel between ranks as text (bootstrap key-value
 * values) or as two 64-bit words (collective exchanges). */
void fmpl_raddr_format(fmpl_raddr r, char *out, size_t len);
int fmpl_raddr_parse(const char *text, int rank, fmpl_raddr *r);
uint64_t fmpl_raddr_pack(fmpl_raddr r);              /* kind in the top bits */
fmpl_raddr fmpl_raddr_unpack(uint64_t packed, int rank);

/* Out-of-line kernel-assisted copies (CMA). */
int fmpl_fab_cma_write(int rank, uint64_t remote_addr, const void *src, size_t len);
int fmpl_fab_cma_read(int rank, void *dst, uint64_t remote_addr, size_t len);

/* Out-of-line paths for memory loads and stores do not reach: the network
 * backend for network peers, else CMA.  A bad rank gives FMPL_ERR_ARG. */
int fmpl_fab_put_far(const void *src, size_t len, fmpl_raddr dst);
int fmpl_fab_get_far(void *dst, size_t len, fmpl_raddr src);
int fmpl_fab_notify_far(fmpl_raddr flag, uint64_t value);
uint64_t fmpl_fab_fetch_add_far(fmpl_raddr r, uint64_t add);
uint64_t fmpl_fab_cswap_far(fmpl_raddr r, uint64_t expected, uint64_t desired);

/* A remote address for [p, p + len) that works over every backend: as
 * fmpl_fab_raddr, plus, for private memory while the network backend is up,
 * a registration (cached) whose key travels in r->key.  The registration
 * stays until fmpl_fab_deregister (it is not evicted while referenced) or
 * until the memory is freed or unmapped.  FMPL_ERR_ARG for NULL or len 0
 * with private memory, FMPL_ERR_UNSUPPORTED when the provider cannot
 * register it. */
int fmpl_fab_register(const void *p, size_t len, fmpl_raddr *r);
void fmpl_fab_deregister(const void *p, size_t len);

/* The network backend's registration cache (tests, fmpl_info); FMPL_ERR_
 * UNSUPPORTED when the backend is not up. */
typedef struct fmpl_fab_rcache_info {
    long hits, misses, evictions, invalidations, entries, cap;
    int hooked;  /* free/munmap are watched (not in sanitizer builds) */
} fmpl_fab_rcache_info;
int fmpl_fab_rcache_stats(fmpl_fab_rcache_info *s);

/* The doorbell of world rank `rank`'s agent and its "sleeping" word, in
 * that rank's segment: 1 when it is mapped here (this rank, or a peer on
 * this host), 0 for a network peer. */
int fmpl_fab_bell(int rank, _Atomic uint32_t **bell, _Atomic uint32_t **sleeping);

/* Poll the network backend, if any (the progress engine does this). */
int fmpl_fab_progress(void);

/* fmpl_info's network section: providers found, the one chosen and why. */
void fmpl_fab_net_describe(void (*line)(const char *text, void *ctx), void *ctx);

/* ----------------------------------------------------------- fast paths */

static inline int fmpl_fab_is_shared(const void *p)
{
    return (const char *)p >= fmpl_fab.my_base &&
           (const char *)p < fmpl_fab.my_base + fmpl_fab.my_size;
}

/* Register: the remote address under which peers reach `p`. */
static inline fmpl_raddr fmpl_fab_raddr(const void *p)
{
    fmpl_raddr r;
    r.rank = fmpl_fab.rank;
    r.key = 0;
    if (fmpl_fab_is_shared(p)) {
        r.kind = FMPL_MEM_SHARED;
        r.addr = (uint64_t)((const char *)p - fmpl_fab.my_base);
    } else {
        r.kind = FMPL_MEM_PRIVATE;
        r.addr = (uint64_t)(uintptr_t)p;
    }
    return r;
}

/* A local pointer to remote memory when loads and stores reach it, else NULL.
 * A network peer's base is NULL: one predictable branch. */
static inline void *fmpl_fab_ptr(fmpl_raddr r)
{
    if (r.kind == FMPL_MEM_SHARED) {
        char *base = fmpl_fab.peers[r.rank].base;
        return base ? base + r.addr : NULL;
    }
    if (r.kind == FMPL_MEM_PRIVATE && r.rank == fmpl_fab.rank)
        return (void *)(uintptr_t)r.addr;
    return NULL;
}

static inline int fmpl_fab_put(const void *src, size_t len, fmpl_raddr dst)
{
    void *p = fmpl_fab_ptr(dst);
    if (p) {
        memcpy(p, src, len);
        return FMPL_SUCCESS;
    }
    return fmpl_fab_put_far(src, len, dst);
}

static inline int fmpl_fab_get(void *dst, size_t len, fmpl_raddr src)
{
    void *p = fmpl_fab_ptr(src);
    if (p) {
        memcpy(dst, p, len);
        return FMPL_SUCCESS;
    }
    return fmpl_fab_get_far(dst, len, src);
}

/* Place src[4, len) at dst, then, last, the 32-bit word src[0, 4) (len >= 8,
 * dst 8-byte aligned): a reader that sees that word sees the rest.  Over the
 * network one message where the provider allows (net_msg.c), so a small
 * record costs one operation instead of a put and a notify. */
int fmpl_fab_put_flagged(const void *src, size_t len, fmpl_raddr dst);

/* Release-store a 64-bit flag: every earlier put is visible before it. */
static inline int fmpl_fab_notify(fmpl_raddr flag, uint64_t value)
{
    _Atomic uint64_t *p = (_Atomic uint64_t *)fmpl_fab_ptr(flag);
    if (p) {
        atomic_store_explicit(p, value, memory_order_release);
        return FMPL_SUCCESS;
    }
    /* A CMA write is synchronous, so earlier puts are already in place; the
     * network backend documents its own guarantee (net_ep.c). */
    return fmpl_fab_notify_far(flag, value);
}

/* Remote atomics need load/store reach (shared memory), or the network
 * backend, which then takes every atomic (fmpl_fabric.net_atomics).  A
 * failure there is reported and returns UINT64_MAX. */
static inline uint64_t fmpl_fab_fetch_add(fmpl_raddr r, uint64_t add)
{
    if (__builtin_expect(fmpl_fab.net_atomics, 0))
        return fmpl_fab_fetch_add_far(r, add);
    return atomic_fetch_add_explicit((_Atomic uint64_t *)fmpl_fab_ptr(r), add,
                                     memory_order_acq_rel);
}

static inline uint64_t fmpl_fab_cswap(fmpl_raddr r, uint64_t expected, uint64_t desired)
{
    if (__builtin_expect(fmpl_fab.net_atomics, 0))
        return fmpl_fab_cswap_far(r, expected, desired);
    atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)fmpl_fab_ptr(r), &expected,
                                            desired, memory_order_acq_rel,
                                            memory_order_acquire);
    return expected;
}

/* Every earlier put and notify to rank (-1: to every rank) is placed at
 * its target on return.  Loads and stores need only the fence; the network
 * backend may have writes on their way (net_ep.c: settling). */
static inline int fmpl_fab_flush(int rank)
{
    atomic_thread_fence(memory_order_seq_cst);
    return fmpl_fab.net ? fmpl_fab.net->flush(rank) : FMPL_SUCCESS;
}

/* Every operation this rank started has completed locally: no buffer of
 * it is still the provider's (records sent as messages return before
 * that, net_msg.c).  Needs no peer's progress: before a final out-of-band
 * barrier, after which peers close their endpoints. */
static inline void fmpl_fab_drain(void)
{
    if (fmpl_fab.net)
        fmpl_fab.net->drain();
}

/* Pre-built control write: the target is resolved once (for a network
 * peer: its address-vector entry, remote address and key). */
typedef struct fmpl_ctl_desc {
    _Atomic uint64_t *direct;  /* load/store reach, or NULL */
    fmpl_raddr target;
    uint64_t net_dest, net_addr, net_key;
} fmpl_ctl_desc;

static inline void fmpl_ctl_prepare(fmpl_ctl_desc *d, fmpl_raddr target)
{
    d->target = target;
    d->direct = (_Atomic uint64_t *)fmpl_fab_ptr(target);
    if (!d->direct && fmpl_fab.net)
        fmpl_fab.net->ctl_prepare(d);
}

static inline int fmpl_ctl_write(const fmpl_ctl_desc *d, uint64_t value)
{
    if (d->direct) {
        atomic_store_explicit(d->direct, value, memory_order_release);
        return FMPL_SUCCESS;
    }
    if (fmpl_fab.net && fmpl_fab.peers[d->target.rank].net)
        return fmpl_fab.net->ctl_write(d, value);
    return fmpl_fab_cma_write(d->target.rank, d->target.addr, &value, sizeof value);
}

#endif
