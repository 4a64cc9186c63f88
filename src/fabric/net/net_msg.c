/* Flagged puts in one network operation: a record and its flag.
 *
 * A channel record (protocols/channel.c) is bytes 4.. of a block and then
 * its first 32-bit word, the flag its reader polls.  As two RMA writes
 * (put, then notify) each is an operation of the provider's own, with a
 * header and a completion waited for.  Two routes carry both in one:
 *
 * Messages (FI_MSG), where the provider offers them without registered
 * local buffers:
 *   S: fi_sendmsg {segment offset, length, magic} + the block to R, copied
 *      into one of TX_SLOTS send buffers, and returns: the completion frees
 *      the buffer when a later progress pass reads it (a send waits only
 *      for a free buffer); earlier puts to R stay ahead of it by
 *      the provider's order of sends after writes (FI_ORDER_SAW); without
 *      it, while puts to R may be on their way, S sends the record as the
 *      put and notify below instead, which follow them (net_ep.c)
 *   R, polling its completion queue (it does anyway: manual progress), finds
 *      the message in one of its posted receive buffers:
 *        1. checks the magic and that [offset, offset + length) lies in its
 *           own segment (nothing else may be written this way)
 *        2. copies bytes 4.. of the block to segment + offset + 4
 *        3. release-stores the first 32-bit word at segment + offset  <- flag
 *        4. re-posts the buffer
 *   The flag is stored by R's own CPU after the rest: no flag is ever seen
 *   in pieces, and no settle is needed for it (nothing of it is in flight
 *   once R has seen the flag).
 *
 * One write of two segments (tcp providers, FMPL_NET_RECORDS=write):
 *   S: copies the block into a send buffer as above and posts one
 *      fi_writemsg whose local and remote segments are [4, len) and then
 *      [0, 4): the flag is the operation's last four bytes; returns (the
 *      completion frees the buffer)
 *   R: nothing of its own: the provider, inside R's completion-queue poll
 *      (manual progress), receives the operation from the byte stream
 *      straight into the ring, segment after segment, so the flag is
 *      stored last, by R's own thread, as with messages.
 *   Earlier puts to R stay ahead of it by FI_ORDER_WAW (the notify mode
 *   "ordered" is required).  Against messages R matches no receive buffer,
 *   copies nothing and reports no completion: across the namespace hosts
 *   8-byte one-way latency went from 5.5-5.6 to 4.6-4.8 us and a 2-rank
 *   exchange from 9.3 to 7.3-7.8 us (MPI_Sendrecv).  The order of the
 *   segments is how a stream provider works, not a libfabric promise, so
 *   auto takes this route only for providers whose name begins "tcp".
 *
 * Messages or writes from one sender are applied in the order sent where
 * the provider orders them (FI_ORDER_SAS, FI_ORDER_WAW); records do not
 * rely on it, each sits at its own position and is complete when its flag
 * is.  Neither route is used for blocks larger than a send buffer: those
 * go as the put and notify of net_ep.c. */
#include "fabric/net/net.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"
#include "base/wait.h"

#include <stdlib.h>
#include <string.h>

#define N fmpl_net_state

FMPL_TUNABLE(tunable_records, "FMPL_NET_RECORDS", "auto",
             "how a channel record and its flag reach a network peer: auto (one message "
             "applied by the peer's progress, where the provider offers messages without "
             "registered local buffers; for tcp providers one RMA write, flag last), message, "
             "put (an RMA put, then the flag's write), write (one RMA write of two segments, "
             "the flag last: providers that apply a write's segments in order)");

/* 16 KiB receive buffers: eager messages of up to almost 16 KiB go as one
 * message (with 4 KiB ones, 8 KiB one-way latency across the namespace
 * hosts was 15.8 us, now 12-14 us).  Not more: tcp;ofi_rxm sends larger
 * messages by its own rendezvous (FI_OFI_RXM_BUFFER_SIZE, 16 KiB), and a
 * 16 KiB record with its headers took 42-47 us as one message, 17-20 us
 * as a put and a notify. */
enum { MSG_MAGIC = 0x464d5052u, /* "FMPR" */
       RX_BUFFERS = 256,
       RX_BYTES = 16384 };

typedef struct msg_header {
    uint64_t offset;  /* in the target's segment */
    uint32_t len;     /* of the block that follows */
    uint32_t magic;
} msg_header;

typedef struct rx_buffer {
    struct fi_context ctx; /* first: the completion names it */
    int posted;
    _Alignas(64) unsigned char bytes[RX_BYTES];
} rx_buffer;

/* A send in flight: its message stays here until its completion is read.
 * Sends do not wait for their completions: with each send waiting, 8-byte
 * messages across the namespace hosts went at 150 000/s, peers at 270 000/s. */
enum { TX_SLOTS = 64 };
typedef struct tx_buffer {
    struct fi_context ctx; /* first */
    _Atomic int busy;
    int rank;
    _Alignas(64) unsigned char bytes[RX_BYTES];
} tx_buffer;

static rx_buffer *rx;     /* [RX_BUFFERS] */
static tx_buffer *tx;     /* [TX_SLOTS] */
static unsigned tx_next;  /* the slot the next send tries first */
static int tx_depth;      /* FMPL_NET_SEND_DEPTH */
static _Atomic int tx_in_flight;
static int reposts_owed;  /* buffers whose fi_recv met -FI_EAGAIN */

FMPL_TUNABLE(tunable_send_depth, "FMPL_NET_SEND_DEPTH", "64",
             "record messages in flight before a send waits for the oldest (1..64; 1: each "
             "waits for its own completion, which udp;ofi_rxd of libfabric 1.17 needs: with "
             "more it crashes in fi_cq_read)");

static const char *const record_choices[] = {"auto", "message", "put", "write", NULL};

static int post(rx_buffer *b)
{
    /* Called with the data lock held (progress_pass), or before any peer
     * knows this endpoint. */
    ssize_t rc = fi_recv(N.ep, b->bytes, sizeof b->bytes, NULL, FI_ADDR_UNSPEC, &b->ctx);
    b->posted = rc == 0;
    if (rc == -FI_EAGAIN) {
        reposts_owed++;
        return FMPL_SUCCESS;
    }
    return rc ? FMPL_ERROR(FMPL_ERR_INTERNAL, "posting a network receive buffer failed: %s",
                           fi_strerror((int)-rc))
              : FMPL_SUCCESS;
}

/* One write of two segments: RMA without registered local buffers, the
 * flag's order after earlier puts by FI_ORDER_WAW, two segments per side. */
static int write_usable(void)
{
    return (N.info->caps & FI_RMA) && !N.mr_local && N.notify_mode == NET_NOTIFY_ORDERED &&
           N.info->tx_attr->iov_limit >= 2 && N.info->tx_attr->rma_iov_limit >= 2;
}

int fmpl_net_msg_open(void)
{
    int choice = fmpl_tunable_choice(&tunable_records, record_choices);
    int usable = (N.info->caps & FI_MSG) && !N.mr_local;
    const char *prov = N.info->fabric_attr->prov_name;
    N.msg_records = 0;
    if (choice == 2)
        return FMPL_SUCCESS;
    int route = 0;
    if (write_usable() && (choice == 3 || (choice == 0 && !strncmp(prov, "tcp", 3))))
        route = NET_RECORDS_WRITE;
    else if (usable && choice != 3)
        route = NET_RECORDS_MESSAGE;
    if (choice == 3 && route != NET_RECORDS_WRITE)
        fmpl_log_warn("FMPL_NET_RECORDS=write: provider %s %s; records go as puts", prov,
                      N.mr_local ? "needs registered local buffers (FI_MR_LOCAL)"
                      : N.notify_mode != NET_NOTIFY_ORDERED
                          ? "does not order writes (FI_ORDER_WAW)"
                          : "has no RMA writes of two segments");
    if (choice == 1 && !usable)
        fmpl_log_warn("FMPL_NET_RECORDS=message: provider %s %s; records go as puts", prov,
                      N.mr_local ? "needs registered local buffers (FI_MR_LOCAL)"
                                 : "has no messages (FI_MSG)");
    if (!route)
        return FMPL_SUCCESS;
    rx = usable ? aligned_alloc(64, sizeof *rx * RX_BUFFERS) : NULL;
    tx = aligned_alloc(64, sizeof *tx * TX_SLOTS);
    if ((usable && !rx) || !tx)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d network message buffers",
                          RX_BUFFERS + TX_SLOTS);
    memset(tx, 0, sizeof *tx * TX_SLOTS);
    tx_next = 0;
    long long depth = fmpl_tunable_long(&tunable_send_depth);
    tx_depth = depth < 1 ? 1 : depth > TX_SLOTS ? TX_SLOTS : (int)depth;
    atomic_store(&tx_in_flight, 0);
    reposts_owed = 0;
    /* Receive buffers whenever messages work, writes chosen too: a peer
     * that chose messages (another FMPL_NET_RECORDS) is still served. */
    if (rx) {
        memset(rx, 0, sizeof *rx * RX_BUFFERS);
        for (int i = 0; i < RX_BUFFERS; i++) {
            int rc = post(&rx[i]);
            if (rc != FMPL_SUCCESS)
                return rc;
        }
    }
    N.msg_records = route;
    return FMPL_SUCCESS;
}

/* Progress until the send in t completed. */
static void tx_wait(const tx_buffer *t)
{
    fmpl_waiter w = FMPL_WAITER_INIT;
    while (atomic_load_explicit(&t->busy, memory_order_acquire))
        if (!fmpl_net_progress())
            fmpl_wait_once(&w);
}

/* Before the endpoint is closed: every send handed to the provider. */
void fmpl_net_msg_drain(void)
{
    for (int i = 0; tx && i < TX_SLOTS; i++)
        tx_wait(&tx[i]);
}

/* After the endpoint is closed: nothing can complete into the buffers. */
void fmpl_net_msg_close(void)
{
    free(rx);
    free(tx);
    rx = NULL;
    tx = NULL;
    N.msg_records = 0;
}

size_t fmpl_net_msg_max(void)
{
    return N.msg_records == NET_RECORDS_WRITE     ? RX_BYTES
           : N.msg_records == NET_RECORDS_MESSAGE ? RX_BYTES - sizeof(msg_header)
                                                  : 0;
}

/* Steps 1-3. */
static void apply(const unsigned char *m)
{
    msg_header h;
    memcpy(&h, m, sizeof h);
    if (h.magic != MSG_MAGIC || h.len < 8 || h.len > RX_BYTES - sizeof h ||
        h.offset > fmpl_fab.my_size || h.len > fmpl_fab.my_size - h.offset || (h.offset & 7)) {
        fmpl_log_error("network message dropped: not a record for this rank's segment "
                       "(offset %#llx, %u bytes)",
                       (unsigned long long)h.offset, h.len);
        return;
    }
    char *dst = fmpl_fab.my_base + h.offset;
    const unsigned char *block = m + sizeof h;
    memcpy(dst + 4, block + 4, h.len - 4);
    uint32_t flag;
    memcpy(&flag, block, sizeof flag);
    atomic_store_explicit((_Atomic uint32_t *)dst, flag, memory_order_release);
}

int fmpl_net_msg_completed(void *context, int err)
{
    if (tx && (char *)context >= (char *)tx && (char *)context < (char *)(tx + TX_SLOTS)) {
        tx_buffer *t = (tx_buffer *)context;
        if (err && err != FI_ECANCELED) {
            /* The record is lost: its reader would wait for ever.  The
             * peer is gone or the network failed; say so and end. */
            fmpl_log_print("error", "a network record to rank %d was lost (%s): ending the job",
                           t->rank, fi_strerror(err));
            abort();
        }
        atomic_store_explicit(&t->busy, 0, memory_order_release);
        atomic_fetch_sub_explicit(&tx_in_flight, 1, memory_order_relaxed);
        return 1;
    }
    if (!rx || (char *)context < (char *)rx || (char *)context >= (char *)(rx + RX_BUFFERS))
        return 0;
    rx_buffer *b = (rx_buffer *)context;
    b->posted = 0;
    if (err) {
        if (err != FI_ECANCELED)
            fmpl_log_error("network receive failed: %s", fi_strerror(err));
        return 1; /* not re-posted: the endpoint is going */
    }
    apply(b->bytes);
    (void)post(b);
    return 1;
}

/* With the data lock held: buffers that could not be re-posted. */
void fmpl_net_msg_repost(void)
{
    if (!reposts_owed || !rx)
        return;
    reposts_owed = 0;
    for (int i = 0; i < RX_BUFFERS; i++)
        if (!rx[i].posted)
            (void)post(&rx[i]);
}

/* A free send buffer, progressing until one completes (and until fewer
 * than FMPL_NET_SEND_DEPTH are in flight). */
static tx_buffer *tx_slot(void)
{
    fmpl_waiter w = FMPL_WAITER_INIT;
    while (atomic_load_explicit(&tx_in_flight, memory_order_relaxed) >= tx_depth)
        if (!fmpl_net_progress())
            fmpl_wait_once(&w);
    for (;;) {
        for (unsigned k = 0; k < TX_SLOTS; k++) {
            tx_buffer *t = &tx[(tx_next + k) % TX_SLOTS];
            if (!atomic_load_explicit(&t->busy, memory_order_acquire)) {
                tx_next = (unsigned)(t - tx + 1) % TX_SLOTS;
                return t;
            }
        }
        if (!fmpl_net_progress())
            fmpl_wait_once(&w);
    }
}

/* Take a send buffer for a record to rank (the owner lock held). */
static tx_buffer *tx_take(int rank)
{
    tx_buffer *t = tx_slot();
    t->rank = rank;
    atomic_store_explicit(&t->busy, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&tx_in_flight, 1, memory_order_relaxed);
    return t;
}

/* After posting from t (rc: the post's result): a failed post gives t
 * back; a send depth of 1 waits for the completion.  Releases the owner. */
static int tx_posted(tx_buffer *t, ssize_t rc)
{
    int rank = t->rank;
    if (rc) {
        atomic_store_explicit(&t->busy, 0, memory_order_relaxed);
        atomic_fetch_sub_explicit(&tx_in_flight, 1, memory_order_relaxed);
    } else if (tx_depth == 1) {
        tx_wait(t);
    }
    fmpl_net_owner_exit();
    return rc ? FMPL_ERROR(FMPL_ERR_INTERNAL, "posting a network record to rank %d failed: %s",
                           rank, fi_strerror((int)-rc))
              : FMPL_SUCCESS;
}

int fmpl_net_msg_send(int rank, uint64_t offset, const void *src, size_t len)
{
    msg_header h = {.offset = offset, .len = (uint32_t)len, .magic = MSG_MAGIC};
    fmpl_net_owner_enter();
    tx_buffer *t = tx_take(rank);
    memcpy(t->bytes, &h, sizeof h);
    memcpy(t->bytes + sizeof h, src, len);
    struct iovec iov = {.iov_base = t->bytes, .iov_len = sizeof h + len};
    void *desc = NULL;
    struct fi_msg msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1,
                         .addr = fmpl_fab.peers[rank].net_dest, .context = &t->ctx};
    /* No FI_INJECT: udp;ofi_rxd (1.17) never completes an injected send
     * that asks for a completion. */
    return tx_posted(t, NET_POST(fi_sendmsg(N.ep, &msg, FI_COMPLETION)));
}

int fmpl_net_record_write(int rank, uint64_t addr, uint64_t key, const void *src, size_t len)
{
    fmpl_net_owner_enter();
    tx_buffer *t = tx_take(rank);
    memcpy(t->bytes, src, len);
    struct iovec iov[2] = {{t->bytes + 4, len - 4}, {t->bytes, 4}};
    void *desc[2] = {NULL, NULL};
    struct fi_rma_iov riov[2] = {{addr + 4, len - 4, key}, {addr, 4, key}};
    struct fi_msg_rma msg = {.msg_iov = iov, .desc = desc, .iov_count = 2,
                             .addr = fmpl_fab.peers[rank].net_dest, .rma_iov = riov,
                             .rma_iov_count = 2, .context = &t->ctx};
    return tx_posted(t, NET_POST(fi_writemsg(N.ep, &msg, FI_COMPLETION)));
}
