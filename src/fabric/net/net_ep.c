/* Network operations to one peer: the fmpl_fab_ops table for network peers.
 *
 * Remote operations, as libfabric calls (every one with a net_op context and
 * a completion, waited for before returning):
 *   put        fi_writemsg; FI_INJECT up to the provider's inject size (no
 *              local descriptor), else with the source's descriptor when
 *              FI_MR_LOCAL; FI_DELIVERY_COMPLETE in delivery mode; in pieces
 *              of FMPL_NET_RMA_CHUNK (256 KiB, at most the provider's
 *              max_msg_size), one after the other (rma_pieces)
 *   get        fi_readmsg into the destination (descriptor when FI_MR_LOCAL),
 *              in pieces as a put
 *   notify     the 64-bit flag: fi_atomicmsg(FI_ATOMIC_WRITE, FI_UINT64) when
 *              offered (the owner's loads never see half a flag), else an
 *              8-byte fi_writemsg; FI_FENCE in fenced mode
 *   fetch-add  fi_fetch_atomicmsg(FI_SUM, FI_UINT64)
 *   cswap      fi_compare_atomicmsg(FI_CSWAP, FI_UINT64)
 *   flush      settle (below) the writes to one rank or to all
 *   ctl_write  notify with the target resolved by ctl_prepare
 * Operands and results of atomics live in scratch lines of the segment, so
 * they are registered (FI_MR_LOCAL) without a cache lookup.
 *
 * Ordering guarantee of put-then-notify (fabric.h: a peer that sees the flag
 * sees the data), by the mode net_iface.c picked:
 *   ordered   the provider applies writes (RMA and atomic; or RMA only, and
 *             then the flag goes as an RMA write) from one endpoint to one
 *             peer in order (FI_ORDER_WAW), so a write returns as soon as its
 *             source is reusable (at once for an injected one): a small
 *             message costs the sender no round trip;
 *   delivery  each put returns only once its data is placed in the target's
 *             memory (FI_DELIVERY_COMPLETE), before the flag is even sent;
 *   fenced    the flag write carries FI_FENCE: it starts only after every
 *             earlier operation on the endpoint completed at the target.
 * Settling (ordered and fenced modes): fabric.h promises more than the
 * flag's order.  A get or an atomic at a rank acts after the caller's
 * earlier writes there (an accumulate's unlock, a fence's counter), and
 * fmpl_fab_flush returns only once they are placed (MPI_Win_flush).  So a
 * rank with writes on their way (unsettled[rank]) is settled by an 8-byte
 * read of its segment header's net_settle word, ordered after the writes
 * (FI_ORDER_RAW, else FI_FENCE): once the read completes, they are placed.
 * A get or atomic settles first only where the provider does not order
 * reads and atomics after writes itself (FI_ORDER_WAW | FI_ORDER_RAW).
 * unsettled[rank] tells puts (NET_UNSETTLED_PUT) from flags and records:
 * a flagged put sent as a message must follow earlier puts, not earlier
 * flags (net_put_flagged).
 * The flag is seen by the owner's ordinary loads; with manual-progress
 * providers the owner's thread itself applies both writes while it polls
 * its completion queue, data first.
 *
 * Remote addresses: FMPL_MEM_SHARED is an offset in the owner's segment,
 * added to the owner's published base (0 for offset-addressed providers)
 * and used with the owner's segment key, bounds-checked against its size.
 * FMPL_MEM_PRIVATE needs the key fmpl_fab_register stored in the address
 * (r.key is the provider's key plus one: 0 means "not registered"); with
 * an offset-addressed provider that key is one FMPL picked, holding the
 * registration's start address (net_md.c), so the offset is addr - start. */
#include "fabric/net/net.h"
#include "base/error.h"
#include "fabric/shm/shm_segment.h"

#include <stddef.h>
#include <string.h>

#define N fmpl_net_state

static int target(fmpl_raddr r, size_t len, uint64_t *addr, uint64_t *key, const char *what)
{
    *addr = *key = 0; /* set on every path: callers read them only on success */
    const fmpl_peer *peer = &fmpl_fab.peers[r.rank];
    if (r.kind == FMPL_MEM_SHARED) {
        if (r.addr > peer->seg_size || len > peer->seg_size - r.addr)
            return FMPL_ERROR(FMPL_ERR_ARG,
                              "%s of %zu bytes at offset %#llx: outside rank %d's segment "
                              "(%zu bytes)",
                              what, len, (unsigned long long)r.addr, r.rank, peer->seg_size);
        *addr = peer->net_base + r.addr;
        *key = peer->net_key;
        return FMPL_SUCCESS;
    }
    if (r.kind == FMPL_MEM_PRIVATE && r.key) {
        *key = r.key - 1;
        /* Offset-addressed: the key FMPL picked holds the region's start. */
        *addr = N.virt_addr ? r.addr : r.addr - (*key & ((1ull << 48) - 1));
        return FMPL_SUCCESS;
    }
    return FMPL_ERROR(FMPL_ERR_ARG,
                      "%s at rank %d: %s has no network key (register it with "
                      "fmpl_fab_register)",
                      what, r.rank, r.kind == FMPL_MEM_PRIVATE ? "private memory" : "address");
}

static int posted(ssize_t rc, const char *what, int rank)
{
    return FMPL_ERROR(FMPL_ERR_INTERNAL, "posting a network %s to rank %d failed: %s", what,
                      rank, fi_strerror((int)-rc));
}

/* One fi_writemsg or fi_readmsg of n bytes between buf (descriptor desc)
 * and (rank, addr, key), waited for. */
static int rma_one(int write, void *buf, size_t n, void *desc, int rank, uint64_t addr,
                   uint64_t key, uint64_t flags, const char *what)
{
    /* write: 0 for a read, else the NET_UNSETTLED_* kind of the write. */
    struct iovec iov = {.iov_base = buf, .iov_len = n};
    struct fi_rma_iov riov = {.addr = addr, .len = n, .key = key};
    net_op op = {0};
    struct fi_msg_rma msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1,
                             .addr = fmpl_fab.peers[rank].net_dest, .rma_iov = &riov,
                             .rma_iov_count = 1, .context = &op};
    /* Every write waits for its completion, injected ones too: posted
     * without one (selective completion), they doubled the 8-byte message
     * rate across hosts, but nothing bounded how many were outstanding, and
     * tcp;ofi_rxm's buffer pools grew by 17 MB in a test that creates and
     * frees communicators (mpi_comm_scale over FMPL_FABRIC=net). */
    fmpl_net_owner_enter();
    ssize_t rc = write ? NET_POST(fi_writemsg(N.ep, &msg, flags | FI_COMPLETION))
                       : NET_POST(fi_readmsg(N.ep, &msg, flags | FI_COMPLETION));
    int ret = rc ? posted(rc, what, rank) : fmpl_net_wait(&op, what, rank);
    fmpl_net_owner_exit();
    if (write && N.unsettled)
        N.unsettled[rank] |= (unsigned char)write;
    return ret;
}

/* Wait until every earlier write to rank is placed (see the top). */
static int settle(int rank)
{
    if (!N.unsettled || !N.unsettled[rank])
        return FMPL_SUCCESS;
    N.unsettled[rank] = 0;
    int line = fmpl_net_scratch_get();
    const fmpl_peer *peer = &fmpl_fab.peers[rank];
    uint64_t fence = N.info->tx_attr->msg_order & (FI_ORDER_RAW | FI_ORDER_RMA_RAW) ? 0 : FI_FENCE;
    int ret = rma_one(0, N.scratch + 8 * line, 8, N.seg_desc, rank,
                      peer->net_base + offsetof(fmpl_shm_header, net_settle), peer->net_key,
                      fence, "flush");
    fmpl_net_scratch_put(line);
    return ret;
}

/* Before a get or an atomic at rank: its earlier writes first. */
static int settle_before_read(int rank)
{
    return N.raw_ordered ? FMPL_SUCCESS : settle(rank);
}

/* len bytes between buf (descriptor desc) and (rank, addr, key), piece
 * after piece (N.rma_chunk bytes each).  write: 0 for a get, else the
 * NET_UNSETTLED_* kind.  With tcp;ofi_rxm (libfabric 1.17) across the
 * namespace hosts, a 1 MiB get took 670-680 us as one operation and 207-226
 * us as four of 256 KiB one after the other (512 KiB pieces: 640; 128 KiB:
 * 280); rendezvous data is one get, so 1 MiB one-way latency went from 670
 * to 216-220 us and bandwidth from 1.5 to 4.7-5.1 GB/s.  Two or four pieces
 * in flight were no faster and far less steady (1 MiB: 190 to 490 us). */
static int rma_pieces(int write, char *buf, size_t len, void *desc, int rank, uint64_t addr,
                      uint64_t key, uint64_t flags, const char *what)
{
    size_t chunk = N.rma_chunk;
    int rc = FMPL_SUCCESS;
    for (size_t done = 0; rc == FMPL_SUCCESS && done < len;) {
        size_t n = len - done < chunk ? len - done : chunk;
        rc = rma_one(write, buf + done, n, desc, rank, addr + done, key, flags, what);
        done += n;
    }
    return rc;
}

static int write_one(const void *src, size_t n, int rank, uint64_t addr, uint64_t key,
                     int kind)
{
    void *desc = NULL, *token = NULL;
    uint64_t flags = N.write_flags;
    if (n <= N.inject_size) {
        flags |= FI_INJECT;
    } else {
        int rc = fmpl_net_local_get(src, n, &desc, &token);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    int ret = rma_pieces(kind, (char *)src, n, desc, rank, addr, key, flags, "put");
    fmpl_net_local_put(token);
    return ret;
}

static int put_kind(const void *src, size_t len, fmpl_raddr dst, int kind)
{
    uint64_t addr, key;
    int rc = target(dst, len, &addr, &key, "put");
    return rc ? rc : write_one(src, len, dst.rank, addr, key, kind);
}

static int net_put(const void *src, size_t len, fmpl_raddr dst)
{
    return put_kind(src, len, dst, NET_UNSETTLED_PUT);
}

static int net_get(void *dst, size_t len, fmpl_raddr src)
{
    uint64_t addr, key;
    int rc = target(src, len, &addr, &key, "get");
    if (rc == FMPL_SUCCESS)
        rc = settle_before_read(src.rank);
    if (rc != FMPL_SUCCESS)
        return rc;
    void *desc = NULL, *token = NULL;
    rc = fmpl_net_local_get(dst, len, &desc, &token);
    if (rc == FMPL_SUCCESS)
        rc = rma_pieces(0, dst, len, desc, src.rank, addr, key, 0, "get");
    fmpl_net_local_put(token);
    return rc;
}

/* One 64-bit atomic on (rank, addr, key): FI_ATOMIC_WRITE (result NULL),
 * FI_SUM with fetch, or FI_CSWAP; operands in a scratch line. */
static int atomic_one(enum fi_op aop, int rank, uint64_t addr, uint64_t key, uint64_t operand,
                      uint64_t compare, uint64_t *result, uint64_t extra_flags, const char *what)
{
    if (addr & 7)
        return FMPL_ERROR(FMPL_ERR_ARG, "%s at rank %d: address %#llx is not 8-byte aligned",
                          what, rank, (unsigned long long)addr);
    if (aop != FI_ATOMIC_WRITE) {
        int rc = settle_before_read(rank);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    int line = fmpl_net_scratch_get();
    uint64_t *sc = N.scratch + 8 * line;
    sc[0] = operand;
    sc[1] = 0;
    sc[2] = compare;
    void *desc = N.seg_desc;
    struct fi_ioc ioc = {.addr = &sc[0], .count = 1};
    struct fi_ioc res = {.addr = &sc[1], .count = 1};
    struct fi_ioc cmp = {.addr = &sc[2], .count = 1};
    struct fi_rma_ioc rioc = {.addr = addr, .count = 1, .key = key};
    net_op op = {0};
    struct fi_msg_atomic msg = {.msg_iov = &ioc, .desc = &desc, .iov_count = 1,
                                .addr = fmpl_fab.peers[rank].net_dest, .rma_iov = &rioc,
                                .rma_iov_count = 1, .datatype = FI_UINT64, .op = aop,
                                .context = &op};
    uint64_t flags = FI_COMPLETION | extra_flags;
    ssize_t rc;
    fmpl_net_owner_enter();
    if (aop == FI_CSWAP)
        rc = NET_POST(fi_compare_atomicmsg(N.ep, &msg, &cmp, &desc, 1, &res, &desc, 1, flags));
    else if (result)
        rc = NET_POST(fi_fetch_atomicmsg(N.ep, &msg, &res, &desc, 1, flags));
    else
        /* No FI_INJECT: the operand is registered anyway, and tcp;ofi_rxm
         * (1.17) never completes an injected atomic that asks for a
         * completion. */
        rc = NET_POST(fi_atomicmsg(N.ep, &msg, flags | N.write_flags));
    int ret = rc ? posted(rc, what, rank) : fmpl_net_wait(&op, what, rank);
    fmpl_net_owner_exit();
    if (ret == FMPL_SUCCESS && result)
        *result = sc[1];
    fmpl_net_scratch_put(line);
    if (aop == FI_ATOMIC_WRITE && N.unsettled)
        N.unsettled[rank] |= NET_UNSETTLED_FLAG;
    return ret;
}

static int flag_write(int rank, uint64_t addr, uint64_t key, uint64_t value)
{
    uint64_t fence = N.notify_mode == NET_NOTIFY_FENCE ? FI_FENCE : 0;
    if (N.atomic_write)
        return atomic_one(FI_ATOMIC_WRITE, rank, addr, key, value, 0, NULL, fence, "notify");
    if (!fence && N.flag_pieces > 1) { /* testing (net.h): the flag in pieces */
        size_t piece = sizeof value / (size_t)N.flag_pieces;
        int rc = FMPL_SUCCESS;
        for (size_t at = 0; rc == FMPL_SUCCESS && at < sizeof value; at += piece)
            rc = write_one((const char *)&value + at, piece, rank, addr + at, key,
                           NET_UNSETTLED_FLAG);
        return rc;
    }
    if (!fence)
        return write_one(&value, sizeof value, rank, addr, key, NET_UNSETTLED_FLAG);
    /* A fenced 8-byte write from a scratch line (registered). */
    int line = fmpl_net_scratch_get();
    uint64_t *sc = N.scratch + 8 * line;
    sc[0] = value;
    int ret = rma_one(NET_UNSETTLED_FLAG, sc, sizeof value, N.seg_desc, rank, addr, key,
                      FI_FENCE | N.write_flags, "notify");
    fmpl_net_scratch_put(line);
    return ret;
}

static int net_notify(fmpl_raddr flag, uint64_t value)
{
    uint64_t addr, key;
    int rc = target(flag, sizeof value, &addr, &key, "notify");
    return rc ? rc : flag_write(flag.rank, addr, key, value);
}

/* A record and its flag: one message where net_msg.c is in use, else the
 * put of bytes 4.. and the notify of the first 8 (bytes 4..7 in both: a
 * flag placed in pieces never shows the new word beside stale ones). */
static int net_put_flagged(const void *src, size_t len, fmpl_raddr dst)
{
    uint64_t addr, key;
    int rc = target(dst, len, &addr, &key, "flagged put");
    if (rc != FMPL_SUCCESS)
        return rc;
    /* Earlier puts to the rank are placed before the flag shows.  A message
     * follows them only by the provider's order of sends after writes
     * (FI_ORDER_SAW); without it, while puts may be on their way, the
     * record goes as writes, which follow them (the notify's ordering)
     * where settling would cost a round trip.  Earlier flags and records
     * need not be placed first: they are at other addresses, read by
     * their own waits. */
    int puts_pending = N.unsettled && (N.unsettled[dst.rank] & NET_UNSETTLED_PUT);
    if (N.msg_records == NET_RECORDS_WRITE && len >= 8 && len <= fmpl_net_msg_max()) {
        /* Behind earlier puts by FI_ORDER_WAW; a get or atomic settles it. */
        rc = fmpl_net_record_write(dst.rank, addr, key, src, len);
        if (rc == FMPL_SUCCESS && N.unsettled)
            N.unsettled[dst.rank] |= NET_UNSETTLED_FLAG;
        return rc;
    }
    if (dst.kind == FMPL_MEM_SHARED && len <= fmpl_net_msg_max() &&
        (!puts_pending || (N.info->tx_attr->msg_order & FI_ORDER_SAW)))
        return fmpl_net_msg_send(dst.rank, dst.addr, src, len);
    uint64_t first;
    memcpy(&first, src, sizeof first);
    rc = put_kind((const char *)src + 4, len - 4,
                  (fmpl_raddr){dst.addr + 4, dst.rank, dst.kind, dst.key}, NET_UNSETTLED_FLAG);
    return rc ? rc : flag_write(dst.rank, addr, key, first);
}

static int net_fetch_add(fmpl_raddr r, uint64_t add, uint64_t *old)
{
    uint64_t addr, key;
    int rc = target(r, 8, &addr, &key, "fetch-add");
    return rc ? rc : atomic_one(FI_SUM, r.rank, addr, key, add, 0, old, 0, "fetch-add");
}

static int net_cswap(fmpl_raddr r, uint64_t expected, uint64_t desired, uint64_t *old)
{
    uint64_t addr, key;
    int rc = target(r, 8, &addr, &key, "compare-and-swap");
    return rc ? rc
              : atomic_one(FI_CSWAP, r.rank, addr, key, desired, expected, old, 0,
                           "compare-and-swap");
}

static int net_flush(int rank)
{
    int rc = FMPL_SUCCESS;
    if (rank >= 0)
        return settle(rank);
    for (int r = 0; r < fmpl_fab.capacity && N.unsettled; r++)
        if (N.unsettled[r] && fmpl_fab.peers[r].net) {
            int e = settle(r);
            rc = rc ? rc : e;
        }
    return rc;
}

static void net_ctl_prepare(fmpl_ctl_desc *d)
{
    uint64_t addr, key;
    d->net_dest = FI_ADDR_NOTAVAIL;
    if (target(d->target, 8, &addr, &key, "control write") == FMPL_SUCCESS) {
        d->net_dest = fmpl_fab.peers[d->target.rank].net_dest;
        d->net_addr = addr;
        d->net_key = key;
    }
}

static int net_ctl_write(const fmpl_ctl_desc *d, uint64_t value)
{
    if (d->net_dest == FI_ADDR_NOTAVAIL)
        return FMPL_ERROR(FMPL_ERR_ARG, "control write to rank %d: descriptor has no target",
                          d->target.rank);
    return flag_write(d->target.rank, d->net_addr, d->net_key, value);
}

static int net_reg(const void *p, size_t len, uint64_t *key)
{
    uint64_t k = 0;
    int rc = fmpl_net_reg(p, len, &k);
    if (rc == FMPL_SUCCESS)
        *key = k + 1;
    return rc;
}

const fmpl_fab_ops fmpl_net_ops = {
    .name = "libfabric",
    .put = net_put,
    .get = net_get,
    .notify = net_notify,
    .put_flagged = net_put_flagged,
    .fetch_add = net_fetch_add,
    .cswap = net_cswap,
    .flush = net_flush,
    .drain = fmpl_net_msg_drain,
    .ctl_prepare = net_ctl_prepare,
    .ctl_write = net_ctl_write,
    .reg = net_reg,
    .dereg = fmpl_net_dereg,
    .progress = fmpl_net_progress,
    .idle = fmpl_net_idle,
    .describe = fmpl_net_describe_chosen,
};
