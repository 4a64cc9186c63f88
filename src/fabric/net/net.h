/* The network backend (libfabric): state shared by its three files.
 *
 *   net_iface.c  fabric, domain, endpoint, completion queue, address vector;
 *                provider choice and capabilities; progress and idle wait
 *   net_md.c     memory registration: the segment (once) and the
 *                registration cache for private buffers (cap, LRU, invalidated
 *                on free/munmap)
 *   net_ep.c     the operations (put, get, notify, atomics, control writes)
 *
 * Only files under src/fabric/net include libfabric's headers; the rest of
 * FMPL sees the operation table fmpl_fab_ops (fabric.h).
 *
 * Invariants
 *  - One FI_EP_RDM endpoint per rank, one completion queue for both
 *    directions, one address vector whose entry for world rank r is
 *    fmpl_fab.peers[r].net_dest (every rank is inserted, itself included:
 *    the rank's own atomics go through its endpoint, see fabric.h).
 *  - Every operation passes a net_op (starting with struct fi_context, so
 *    FI_CONTEXT mode is met) and waits for its completion before it returns:
 *    whichever thread reads a completion marks its net_op done.  A write's
 *    completion means "placed at the target" in delivery mode, and only
 *    "source reusable" in the ordered and fenced modes, where net_ep.c
 *    settles the writes to a rank before anything that must see them.
 *  - Posts and CQ reads hold fmpl_net_lock (see there); the registration
 *    cache has its own lock and never holds both.
 *  - Nothing here runs unless fmpl_net_open succeeded (fmpl_fab.net set). */
#ifndef FMPL_FABRIC_NET_H
#define FMPL_FABRIC_NET_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <stdatomic.h>
#include <stdint.h>

#include "fabric/fabric.h"

/* libfabric's six real functions, loaded by fmpl_ofi_load (net_lib.c): the
 * library is opened only when the backend is first needed.  The names below
 * route this directory's calls through them. */
typedef struct fmpl_ofi_lib {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
    uint32_t (*version)(void);
} fmpl_ofi_lib;
extern fmpl_ofi_lib fmpl_ofi;
/* 0, or -1 with why (the library missing, or too old). */
int fmpl_ofi_load(char *why, size_t len);
static inline struct fi_info *fmpl_ofi_allocinfo(void) { return fmpl_ofi.dupinfo(NULL); }
#define fi_getinfo fmpl_ofi.getinfo
#define fi_freeinfo fmpl_ofi.freeinfo
#define fi_dupinfo fmpl_ofi.dupinfo
#define fi_allocinfo fmpl_ofi_allocinfo
#define fi_fabric fmpl_ofi.fabric
#define fi_strerror fmpl_ofi.strerror
#define fi_version fmpl_ofi.version

/* How a notify's flag is kept behind the data of earlier puts. */
enum {
    NET_NOTIFY_DELIVERY = 1, /* every write completes only once placed at the target */
    NET_NOTIFY_ORDERED,      /* the provider applies writes in order (FI_ORDER_WAW); a
                                write returns once the source is reusable */
    NET_NOTIFY_FENCE         /* the flag write carries FI_FENCE */
};

/* How a record and its flag go in one operation (fmpl_net.msg_records). */
enum {
    NET_RECORDS_MESSAGE = 1, /* a message applied by the target's progress */
    NET_RECORDS_WRITE        /* one RMA write of two segments, the flag last */
};

/* What may still be on its way to a rank (fmpl_net.unsettled). */
enum {
    NET_UNSETTLED_PUT = 1,  /* data (fmpl_fab_put): a later flagged put must follow it */
    NET_UNSETTLED_FLAG = 2  /* flags and records: only flush, gets and atomics wait */
};

typedef struct fmpl_net {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_mr *seg_mr;   /* this rank's whole segment */
    void *seg_desc;          /* its local descriptor (FI_MR_LOCAL) */
    int virt_addr;           /* FI_MR_VIRT_ADDR: remote addresses are virtual */
    int mr_local;            /* FI_MR_LOCAL: local buffers need a descriptor */
    int prov_key;            /* FI_MR_PROV_KEY: the provider picks keys */
    int mr_endpoint;         /* FI_MR_ENDPOINT: bind registrations to the endpoint */
    size_t inject_size;
    size_t max_msg;
    size_t rma_chunk;        /* puts and gets go in pieces of this size (net_ep.c:
                                rma_pieces; FMPL_NET_RMA_CHUNK, at most max_msg) */
    uint64_t write_flags;    /* FI_DELIVERY_COMPLETE when the notify mode needs it */
    int notify_mode;         /* NET_NOTIFY_* */
    int atomic_write;        /* flags go by FI_ATOMIC_WRITE on FI_UINT64 */
    int flag_by_rma;         /* only RMA writes are ordered (FI_ORDER_RMA_WAW) */
    int raw_ordered;         /* reads and atomics follow earlier writes (FI_ORDER_RAW) */
    unsigned char *unsettled; /* [size]: NET_UNSETTLED_* bits, writes to that rank that
                                may still be on their way (ordered and fenced modes;
                                net_ep.c: settle) */
    int cq_fd;               /* the CQ's wait file descriptor, or -1 */
    long spin;               /* polls before an idle wait blocks */
    int msg_records;         /* flagged puts go as one operation: NET_RECORDS_* (net_msg.c) */
    int flag_pieces;         /* testing: an RMA-written flag goes in this many
                                writes, lowest address first (FMPL_NET_FLAG_PIECES) */
    _Atomic uint64_t polls;  /* progress passes of the owner's threads: the
                                progress thread serves only when it stalls */
    _Atomic int thread_stop;
    int thread_on;           /* the progress thread runs (net_iface.c) */
    long thread_ns;          /* its interval */
    pthread_t thread;
    _Atomic uint64_t next_key;
    uint64_t *scratch;       /* 64 lines of 64 bytes in the segment (registered) */
    _Atomic uint64_t scratch_free;  /* bit i: line i is free */
    char why[320];           /* why this provider */
    char chosen[512];        /* provider and modes, one line */
} fmpl_net;

extern fmpl_net fmpl_net_state;

typedef struct net_op {
    struct fi_context ctx;   /* first: the provider may use it (FI_CONTEXT) */
    _Atomic int done;
    int err;                 /* positive fi_errno value, 0 on success */
} net_op;

/* net_iface.c */
int fmpl_net_open(fmpl_bootstrap *bs);
void fmpl_net_close(void);
void fmpl_net_start_progress_thread(void);
void fmpl_net_describe(void (*line)(const char *text, void *ctx), void *ctx);
const char *fmpl_net_describe_chosen(void);
int fmpl_net_progress(void);
void fmpl_net_idle(void);
/* Wait for op's completion; FMPL_SUCCESS or an error naming `what`. */
int fmpl_net_wait(net_op *op, const char *what, int rank);
/* Data-path calls into the provider (posts, CQ reads) hold this lock:
 * providers that claim FI_THREAD_SAFE do not all survive concurrent calls
 * (udp;ofi_rxd 1.17 crashes in fi_cq_read when threads poll together), and
 * an uncontended lock is noise next to a network operation. */
/* A process of another world into the address vector (fabric_link.c). */
int fmpl_net_link(int r);
void fmpl_net_lock(void);
void fmpl_net_unlock(void);
/* Around each whole operation of the owner (see net_iface.c). */
void fmpl_net_owner_enter(void);
void fmpl_net_owner_exit(void);

/* Post `call` until it is not -FI_EAGAIN (progressing meanwhile). */
#define NET_POST(call)                                                             \
    ({                                                                             \
        ssize_t rc_;                                                               \
        for (;;) {                                                                 \
            fmpl_net_lock();                                                       \
            rc_ = (call);                                                          \
            fmpl_net_unlock();                                                     \
            if (rc_ != -FI_EAGAIN)                                                 \
                break;                                                             \
            fmpl_net_progress();                                                   \
        }                                                                          \
        rc_;                                                                       \
    })

/* net_md.c */
int fmpl_net_md_open(void);           /* register the segment, scratch, cache */
void fmpl_net_md_close(void);
int fmpl_net_reg(const void *p, size_t len, uint64_t *key);
void fmpl_net_dereg(const void *p, size_t len);
/* A local descriptor for [p, p + len) (FI_MR_LOCAL), with a reference the
 * caller drops with fmpl_net_local_put; *desc NULL when none is needed. */
int fmpl_net_local_get(const void *p, size_t len, void **desc, void **token);
void fmpl_net_local_put(void *token);
int fmpl_net_scratch_get(void);       /* a free scratch line's index */
void fmpl_net_scratch_put(int line);

void fmpl_net_rcache_stats_get(fmpl_fab_rcache_info *s);

/* net_msg.c */
int fmpl_net_msg_open(void);          /* post receive buffers, if messages are used */
void fmpl_net_msg_drain(void);        /* before: every send's completion read */
void fmpl_net_msg_close(void);        /* after the endpoint is closed */
size_t fmpl_net_msg_max(void);        /* largest block one operation carries; 0: none */
/* A completion for one of the receive buffers?  Then applied (or dropped
 * with err) and 1; else 0.  Data lock held. */
int fmpl_net_msg_completed(void *context, int err);
void fmpl_net_msg_repost(void);       /* data lock held */
int fmpl_net_msg_send(int rank, uint64_t offset, const void *src, size_t len);
/* The record route NET_RECORDS_WRITE: src[0, len) to (rank, addr, key). */
int fmpl_net_record_write(int rank, uint64_t addr, uint64_t key, const void *src, size_t len);

/* net_ep.c */
extern const fmpl_fab_ops fmpl_net_ops;

#endif
