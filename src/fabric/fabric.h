/* The remote-memory-operation layer ("fabric").
 *
 * Every protocol reaches another rank's memory only through this interface:
 *   register    fmpl_fab_raddr()       a local address -> a remote address (key)
 *   put         fmpl_fab_put()         bytes into a peer's memory, complete on return
 *   notify      fmpl_fab_notify()      a 64-bit flag store, ordered after earlier puts
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
 * A network backend (libfabric) will add a third kind, dispatched through an
 * operation table, without changing the shared-memory fast paths below.
 * A shared heap mapped at identical addresses in all ranks (PVAS) makes
 * fmpl_fab_ptr() the identity; callers never assume either way.
 *
 * Ordering: a put or get is complete when the call returns; fmpl_fab_notify()
 * is a release store, so a peer that observes the flag with an acquire load
 * also observes every put issued before it. */
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
} fmpl_raddr;

/* What this process knows about one peer (the local rank included). */
typedef struct fmpl_peer {
    char *base;        /* where the peer's segment is mapped here */
    size_t seg_size;
    pid_t pid;
    int cma;           /* process_vm_writev/readv to this peer works */
} fmpl_peer;

typedef struct fmpl_fabric {
    int rank;
    int size;
    fmpl_peer *peers;         /* [size] */
    char *my_base;            /* == peers[rank].base */
    size_t my_size;
    struct fmpl_heap *heap;   /* this rank's shared heap */
    fmpl_bootstrap *bs;
    int cma_mode;             /* FMPL_SHM_CMA: 0 auto, 1 on, 2 off */
    const char *cma_reason;   /* why CMA is not used, or NULL */
} fmpl_fabric;

extern fmpl_fabric fmpl_fab;

int fmpl_fabric_init(fmpl_bootstrap *bs);
void fmpl_fabric_finalize(void);

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
    if (fmpl_fab_is_shared(p)) {
        r.kind = FMPL_MEM_SHARED;
        r.addr = (uint64_t)((const char *)p - fmpl_fab.my_base);
    } else {
        r.kind = FMPL_MEM_PRIVATE;
        r.addr = (uint64_t)(uintptr_t)p;
    }
    return r;
}

/* A local pointer to remote memory when loads and stores reach it, else NULL. */
static inline void *fmpl_fab_ptr(fmpl_raddr r)
{
    if (r.kind == FMPL_MEM_SHARED)
        return fmpl_fab.peers[r.rank].base + r.addr;
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
    return fmpl_fab_cma_write(dst.rank, dst.addr, src, len);
}

static inline int fmpl_fab_get(void *dst, size_t len, fmpl_raddr src)
{
    void *p = fmpl_fab_ptr(src);
    if (p) {
        memcpy(dst, p, len);
        return FMPL_SUCCESS;
    }
    return fmpl_fab_cma_read(src.rank, dst, src.addr, len);
}

/* Release-store a 64-bit flag: every earlier put is visible before it. */
static inline int fmpl_fab_notify(fmpl_raddr flag, uint64_t value)
{
    _Atomic uint64_t *p = (_Atomic uint64_t *)fmpl_fab_ptr(flag);
    if (p) {
        atomic_store_explicit(p, value, memory_order_release);
        return FMPL_SUCCESS;
    }
    /* A CMA write is synchronous, so earlier puts are already in place. */
    return fmpl_fab_cma_write(flag.rank, flag.addr, &value, sizeof value);
}

/* Remote atomics need load/store reach (shared memory). */
static inline uint64_t fmpl_fab_fetch_add(fmpl_raddr r, uint64_t add)
{
    return atomic_fetch_add_explicit((_Atomic uint64_t *)fmpl_fab_ptr(r), add,
                                     memory_order_acq_rel);
}

static inline uint64_t fmpl_fab_cswap(fmpl_raddr r, uint64_t expected, uint64_t desired)
{
    atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)fmpl_fab_ptr(r), &expected,
                                            desired, memory_order_acq_rel,
                                            memory_order_acquire);
    return expected;
}

static inline void fmpl_fab_flush(int rank)
{
    (void)rank;
    atomic_thread_fence(memory_order_seq_cst);
}

/* Pre-built control write: the target is resolved once. */
typedef struct fmpl_ctl_desc {
    _Atomic uint64_t *direct;  /* load/store reach, or NULL */
    fmpl_raddr target;
} fmpl_ctl_desc;

static inline void fmpl_ctl_prepare(fmpl_ctl_desc *d, fmpl_raddr target)
{
    d->target = target;
    d->direct = (_Atomic uint64_t *)fmpl_fab_ptr(target);
}

static inline int fmpl_ctl_write(const fmpl_ctl_desc *d, uint64_t value)
{
    if (d->direct) {
        atomic_store_explicit(d->direct, value, memory_order_release);
        return FMPL_SUCCESS;
    }
    return fmpl_fab_cma_write(d->target.rank, d->target.addr, &value, sizeof value);
}

#endif
