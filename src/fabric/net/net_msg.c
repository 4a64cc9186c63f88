/* Flagged puts as messages: a record and its flag in one network operation.
 *
 * A channel record (protocols/channel.c) is bytes 4.. of a block and then
 * its first 32-bit word, the flag its reader polls.  As RMA that is two
 * writes (put, then notify), each a message of the provider's own with a
 * header and a completion.  Where the provider offers messages, one send
 * carries both, and the target applies it:
 *   S: fi_sendmsg {segment offset, length, magic} + the block to R (waits
 *      for its local completion only); earlier puts to R stay ahead of it by
 *      the provider's order of sends after writes (FI_ORDER_SAW), else S
 *      settles them first (net_ep.c)
 *   R, polling its completion queue (it does anyway: manual progress), finds
 *      the message in one of its posted receive buffers:
 *        1. checks the magic and that [offset, offset + length) lies in its
 *           own segment (nothing else may be written this way)
 *        2. copies bytes 4.. of the block to segment + offset + 4
 *        3. release-stores the first 32-bit word at segment + offset  <- flag
 *        4. re-posts the buffer
 * The flag is stored by R's own CPU after the rest: no flag is ever seen in
 * pieces, and no settle is needed for it (nothing of it is in flight once
 * R has seen the flag).  Messages from one sender are applied in the order
 * sent where the provider orders sends (FI_ORDER_SAS); records do not rely
 * on it, each sits at its own position and is complete when its flag is.
 * Used when the provider has FI_MSG and needs no registration of local
 * buffers (the message is built on the stack); otherwise, and for blocks
 * larger than a receive buffer, the put and notify of net_ep.c. */
#include "fabric/net/net.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"

#include <stdlib.h>
#include <string.h>

#define N fmpl_net_state

FMPL_TUNABLE(tunable_records, "FMPL_NET_RECORDS", "auto",
             "how a channel record and its flag reach a network peer: auto (one message "
             "applied by the peer's progress, where the provider offers messages without "
             "registered local buffers), message, put (an RMA put, then the flag's write)");

enum { MSG_MAGIC = 0x464d5052u, /* "FMPR" */
       RX_BUFFERS = 256,
       RX_BYTES = 4096 };

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

static rx_buffer *rx;     /* [RX_BUFFERS] */
static int reposts_owed;  /* buffers whose fi_recv met -FI_EAGAIN */

static const char *const record_choices[] = {"auto", "message", "put", NULL};

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

int fmpl_net_msg_open(void)
{
    int choice = fmpl_tunable_choice(&tunable_records, record_choices);
    int usable = (N.info->caps & FI_MSG) && !N.mr_local;
    N.msg_records = 0;
    if (choice == 2)
        return FMPL_SUCCESS;
    if (!usable) {
        if (choice == 1)
            fmpl_log_warn("FMPL_NET_RECORDS=message: provider %s %s; records go as puts",
                          N.info->fabric_attr->prov_name,
                          N.mr_local ? "needs registered local buffers (FI_MR_LOCAL)"
                                     : "has no messages (FI_MSG)");
        return FMPL_SUCCESS;
    }
    rx = aligned_alloc(64, sizeof *rx * RX_BUFFERS);
    if (!rx)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d network receive buffers",
                          RX_BUFFERS);
    memset(rx, 0, sizeof *rx * RX_BUFFERS);
    reposts_owed = 0;
    for (int i = 0; i < RX_BUFFERS; i++) {
        int rc = post(&rx[i]);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    N.msg_records = 1;
    return FMPL_SUCCESS;
}

/* After the endpoint is closed: nothing can complete into the buffers. */
void fmpl_net_msg_close(void)
{
    free(rx);
    rx = NULL;
    N.msg_records = 0;
}

size_t fmpl_net_msg_max(void)
{
    return N.msg_records ? RX_BYTES - sizeof(msg_header) : 0;
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
    if (!reposts_owed)
        return;
    reposts_owed = 0;
    for (int i = 0; i < RX_BUFFERS; i++)
        if (!rx[i].posted)
            (void)post(&rx[i]);
}

int fmpl_net_msg_send(int rank, uint64_t offset, const void *src, size_t len)
{
    msg_header h = {.offset = offset, .len = (uint32_t)len, .magic = MSG_MAGIC};
    /* Header and record straight from where they are (two entries; the
     * provider gathers them), else copied together once. */
    unsigned char m[RX_BYTES];
    struct iovec iov[2] = {{.iov_base = &h, .iov_len = sizeof h},
                           {.iov_base = (void *)src, .iov_len = len}};
    size_t count = 2;
    if (N.info->tx_attr->iov_limit < 2) {
        memcpy(m, &h, sizeof h);
        memcpy(m + sizeof h, src, len);
        iov[0] = (struct iovec){.iov_base = m, .iov_len = sizeof h + len};
        count = 1;
    }
    void *desc[2] = {NULL, NULL};
    net_op op = {0};
    struct fi_msg msg = {.msg_iov = iov, .desc = desc, .iov_count = count,
                         .addr = fmpl_fab.peers[rank].net_dest, .context = &op};
    /* No FI_INJECT: udp;ofi_rxd (1.17) never completes an injected send
     * that asks for a completion (a wait for ever), and the buffer is on
     * the stack until the completion anyway. */
    uint64_t flags = FI_COMPLETION;
    fmpl_net_owner_enter();
    ssize_t rc = NET_POST(fi_sendmsg(N.ep, &msg, flags));
    int ret = rc ? FMPL_ERROR(FMPL_ERR_INTERNAL, "posting a network record to rank %d failed: %s",
                              rank, fi_strerror((int)-rc))
                 : fmpl_net_wait(&op, "record", rank);
    fmpl_net_owner_exit();
    return ret;
}
