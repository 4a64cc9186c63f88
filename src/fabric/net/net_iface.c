/* Network backend set-up, capabilities, progress (libfabric).
 *
 * Start-up sequence (every rank, collective, inside fmpl_fabric_init):
 *   1. fi_getinfo for an FI_EP_RDM endpoint with FI_RMA | FI_ATOMIC | FI_MSG,
 *      FI_CONTEXT mode, the mr_mode bits FMPL handles (FI_MR_LOCAL,
 *      FI_MR_VIRT_ADDR, FI_MR_PROV_KEY, FI_MR_ENDPOINT, FI_MR_ALLOCATED) and
 *      FI_THREAD_SAFE; first asking for FI_DELIVERY_COMPLETE, then without.
 *      FMPL_NET_PROVIDER names the provider; unset, libfabric's FI_PROVIDER
 *      or its own preference order decides.  The first match is used.
 *   2. fabric, domain, CQ (with a wait object when the provider has one),
 *      AV (table), endpoint bound to both, enabled;
 *   3. register the whole segment (net_md.c), pick the notify ordering;
 *   4. publish "<hex endpoint name>:<segment base>:<segment key>" under
 *      "net", fence, fetch every rank's and insert them in rank order;
 *   5. barrier: no operation may reach a peer before its AV is complete.
 *
 * Progress: completions are read by whoever waits (fmpl_net_wait) and by the
 * progress engine (fmpl_fab_progress).  Providers with manual data progress
 * (tcp;ofi_rxm) serve incoming RMA only while the target reads its CQ, so a
 * rank that waits for a flag in its own memory must keep calling
 * fmpl_fab_progress (or fmpl_net_idle, which spins FMPL_NET_SPIN polls and
 * then sleeps in poll() on the CQ's file descriptor for at most a
 * millisecond after fi_trywait agrees, or yields when the CQ has none).
 * Incoming RMA generates no completion at the target, so no wait may block
 * on the CQ without a timeout.
 * A rank computing outside FMPL polls nothing, and with manual progress its
 * memory is then out of reach until it calls FMPL again: a window's passive
 * target, or a sender whose rendezvous buffer the receiver reads.  A
 * progress thread (FMPL_NET_PROGRESS_THREAD=on) watches the owner's
 * progress passes: while they go on it only sleeps; once a whole interval
 * (FMPL_NET_PROGRESS_INTERVAL) passes without one, it serves the endpoint
 * itself, a pass every interval.  It is off by default: with tcp;ofi_rxm
 * (libfabric 1.17) its passes hang jobs across two namespace hosts (see
 * owner_lock); the offload agent of issue 14 is to take this over. */
#include "fabric/net/net.h"
#include "fabric/fabric.h"
#include "base/error.h"
#include "base/hex.h"
#include "base/log.h"
#include "base/tunable.h"
#include "base/wait.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

FMPL_TUNABLE(tunable_provider, "FMPL_NET_PROVIDER", "",
             "libfabric provider for the network backend, e.g. \"tcp;ofi_rxm\", \"sockets\" "
             "(empty: FI_PROVIDER, else libfabric's first match)");
FMPL_TUNABLE(tunable_spin, "FMPL_NET_SPIN", "0",
             "completion-queue polls of an idle network wait before it blocks (or yields); "
             "every poll is a system call already, and a spinning rank holds off the kernel's "
             "packet work (base/wait.c)");
FMPL_TUNABLE(tunable_cq_wait, "FMPL_NET_CQ_WAIT", "auto",
             "the completion queue's wait object: auto (none, unless the machine runs more "
             "ranks than it has cores: then a file descriptor), fd or none");
FMPL_TUNABLE(tunable_mr_local, "FMPL_NET_MR_LOCAL", "auto",
             "local buffers of network operations: auto (registered when the provider asks, "
             "FI_MR_LOCAL), always (registered anyway: tests that path on any provider)");
FMPL_TUNABLE(tunable_notify, "FMPL_NET_NOTIFY", "auto",
             "how a notify's flag stays behind earlier puts: auto (ordered with reads after "
             "writes, else delivery, else ordered, else fence), delivery (FI_DELIVERY_COMPLETE), "
             "ordered (FI_ORDER_WAW), fence "
             "(FI_FENCE)");

FMPL_TUNABLE(tunable_rma_chunk, "FMPL_NET_RMA_CHUNK", "256k",
             "network puts and gets larger than this go as pieces of this size, one after "
             "the other (0: the provider's largest message)");

FMPL_TUNABLE(tunable_thread, "FMPL_NET_PROGRESS_THREAD", "off",
             "a thread that serves remote operations on this rank's memory while the rank "
             "computes outside FMPL: off (the default: with tcp;ofi_rxm of libfabric 1.17 "
             "its passes hang jobs that span hosts), on, auto (on when the provider's data "
             "progress is manual)");
FMPL_TUNABLE(tunable_thread_us, "FMPL_NET_PROGRESS_INTERVAL", "500",
             "microseconds without a progress pass of the rank before the progress thread "
             "serves the network itself (and its sleep between checks)");
FMPL_TUNABLE(tunable_flag_pieces, "FMPL_NET_FLAG_PIECES", "1",
             "testing: a flag sent as an RMA write (no network atomics) goes in 1, 2, 4 or 8 "
             "ordered writes, lowest address first, as a stream provider may place it when its "
             "segments arrive; protocols must never act on a flag seen in part (fabric.h)");

fmpl_net fmpl_net_state;

#define N fmpl_net_state

static const char *const mr_local_choices[] = {"auto", "always", NULL};
static const char *const thread_choices[] = {"auto", "on", "off", NULL};
static const char *const notify_choices[] = {"auto", "delivery", "ordered", "fence", NULL};
static const char *const notify_names[] = {"", "delivery-complete", "ordered (FI_ORDER_WAW)",
                                           "fenced (FI_FENCE)"};

#define MR_MODES (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_ALLOCATED)

static struct fi_info *make_hints(uint64_t op_flags, uint64_t msg_order)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->caps = FI_RMA | FI_ATOMIC | FI_MSG;
    h->mode = FI_CONTEXT;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = MR_MODES;
    h->domain_attr->threading = FI_THREAD_SAFE;
    h->tx_attr->op_flags = op_flags;
    h->tx_attr->msg_order = msg_order;
    const char *prov = fmpl_tunable_string(&tunable_provider);
    if (prov && *prov)
        h->fabric_attr->prov_name = strdup(prov);
    return h;
}

/* What fi_getinfo is asked for, in the order FMPL_NET_NOTIFY allows:
 * in-order writes whose reads and atomics follow them (the cheapest: a
 * write waits only until its source is reusable), delivery-complete writes
 * (each write waits for its placement), or neither (the ordering the
 * provider happens to offer, or a fence). */
enum { ASK_ORDERED, ASK_DELIVERY, ASK_ANY, ASK_NONE };
/* The least in-order writes need: RMA writes after RMA writes (the flag then
 * goes as an RMA write) and an RMA read after them (it settles them). */
#define ORDER_ASKED (FI_ORDER_RMA_WAW | FI_ORDER_RMA_RAW)
/* Reads and atomics after writes of either kind: nothing to settle first. */
#define ORDER_FULL (FI_ORDER_WAW | FI_ORDER_RAW)

/* fi_getinfo as step 1 says; *why tells what was asked and found, *asked
 * which request matched. */
static int select_info(struct fi_info **out, char *why, size_t len, int *asked)
{
    static const int tries[4][3] = {
        {ASK_ORDERED, ASK_DELIVERY, ASK_ANY}, /* auto */
        {ASK_DELIVERY, ASK_NONE, ASK_NONE},   /* delivery */
        {ASK_ORDERED, ASK_ANY, ASK_NONE},     /* ordered */
        {ASK_ANY, ASK_NONE, ASK_NONE},        /* fence */
    };
    static const char *const found[] = {"in-order RMA writes, RMA reads after them",
                                        "delivery-complete writes",
                                        "neither in-order nor delivery-complete writes"};
    int want = fmpl_tunable_choice(&tunable_notify, notify_choices);
    const char *prov = fmpl_tunable_string(&tunable_provider);
    const char *env = getenv("FI_PROVIDER");
    char from[96];
    if (prov && *prov)
        snprintf(from, sizeof from, "FMPL_NET_PROVIDER=%s", prov);
    else if (env && *env)
        snprintf(from, sizeof from, "FI_PROVIDER=%s", env);
    else
        snprintf(from, sizeof from, "libfabric's first match");
    int rc = -FI_ENODATA;
    for (int i = 0; i < 3 && rc != 0 && tries[want < 0 ? 0 : want][i] != ASK_NONE; i++) {
        *asked = tries[want < 0 ? 0 : want][i];
        struct fi_info *h = make_hints(*asked == ASK_DELIVERY ? FI_DELIVERY_COMPLETE : 0,
                                       *asked == ASK_ORDERED ? ORDER_ASKED : 0);
        if (!h)
            return -FI_ENOMEM;
        rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, h, out);
        fi_freeinfo(h);
    }
    if (rc != 0) {
        snprintf(why, len, "no provider offers an RDM endpoint with RMA, atomics and messages "
                 "(%s): %s", from, fi_strerror(-rc));
        return rc;
    }
    snprintf(why, len, "%s, RDM with RMA+atomics+messages, %s", from, found[*asked]);
    return 0;
}

static int atomic_ok(enum fi_op op, uint64_t flags)
{
    struct fi_atomic_attr attr;
    return fi_query_atomic(N.domain, FI_UINT64, op, &attr, flags) == 0 && attr.count >= 1;
}

/* Choose how a notify keeps its flag behind the data (net_ep.c relies on
 * it): in-order writes (FI_ORDER_WAW: RMA and atomic writes alike; or
 * FI_ORDER_RMA_WAW, the flag then going as an RMA write), settled before
 * whatever must see them by a read that follows them (FI_ORDER_RAW, else
 * fenced); else delivery-complete writes, which make every put's return
 * mean "placed"; else a fenced flag write. */
static int choose_notify(int asked)
{
    int want = fmpl_tunable_choice(&tunable_notify, notify_choices);
    uint64_t order = N.info->tx_attr->msg_order;
    int fence = (N.info->caps & FI_FENCE) != 0;
    int ordered = (order & (FI_ORDER_WAW | FI_ORDER_RMA_WAW)) != 0 &&
                  ((order & (FI_ORDER_RAW | FI_ORDER_RMA_RAW)) != 0 || fence);
    if (!(order & FI_ORDER_WAW))
        N.flag_by_rma = 1;
    N.raw_ordered = (order & ORDER_FULL) == ORDER_FULL;
    int delivery = asked == ASK_DELIVERY;
    int mode = want == 1 ? (delivery ? NET_NOTIFY_DELIVERY : 0)
             : want == 2 ? (ordered ? NET_NOTIFY_ORDERED : 0)
             : want == 3 ? (fence ? NET_NOTIFY_FENCE : 0)
             : delivery  ? NET_NOTIFY_DELIVERY
             : ordered   ? NET_NOTIFY_ORDERED
             : fence     ? NET_NOTIFY_FENCE
                         : 0;
    if (!mode)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "provider %s cannot order a flag after data (%s): no delivery-"
                          "complete writes, no FI_ORDER_WAW with reads after writes, no "
                          "FI_FENCE",
                          N.info->fabric_attr->prov_name,
                          want ? "as FMPL_NET_NOTIFY asks" : "by any means FMPL knows");
    N.notify_mode = mode;
    N.write_flags = mode == NET_NOTIFY_DELIVERY ? FI_DELIVERY_COMPLETE : 0;
    if (mode != NET_NOTIFY_DELIVERY) {
        N.unsettled = calloc((size_t)fmpl_fab.capacity, 1);
        if (!N.unsettled)
            return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for the network's write states");
    }
    return FMPL_SUCCESS;
}

static int fi_fail(int rc, const char *what)
{
    return FMPL_ERROR(FMPL_ERR_INTERNAL, "libfabric %s failed: %s", what, fi_strerror(-rc));
}

static int open_endpoint(void)
{
    int rc = fi_fabric(N.info->fabric_attr, &N.fabric, NULL);
    if (rc)
        return fi_fail(rc, "fi_fabric");
    rc = fi_domain(N.fabric, N.info, &N.domain, NULL);
    if (rc)
        return fi_fail(rc, "fi_domain");
    /* The wait object, measured with tcp;ofi_rxm between two namespace
     * hosts: without one, every read of the queue polls the connections,
     * and 8-byte latency at 2 x 1 ranks fell from 7.2-7.7 to 5.7-6.0 us;
     * with four ranks on the machine's two cores, the barrier and 8-byte
     * allreduce took 42-56 us without, 29-54 us with a file descriptor
     * (fewer polls of the sockets, so more of the cores for the ranks).
     * The idle wait (fmpl_net_idle) sleeps on the descriptor when there is
     * one, with its own timeout (fi_cq_sread's is not honoured by every
     * provider, and a target's incoming RMA completes nothing here). */
    static const char *const wait_choices[] = {"auto", "fd", "none", NULL};
    int wait_choice = fmpl_tunable_choice(&tunable_cq_wait, wait_choices);
    int want_fd = wait_choice == 1 || (wait_choice == 0 && fmpl_oversubscribed);
    struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_CONTEXT,
                            .wait_obj = want_fd ? FI_WAIT_FD : FI_WAIT_NONE};
    N.cq_fd = -1;
    if (fi_cq_open(N.domain, &cq, &N.cq, NULL) == 0) {
        if (want_fd && fi_control(&N.cq->fid, FI_GETWAIT, &N.cq_fd) != 0)
            N.cq_fd = -1;
    } else {
        cq.wait_obj = FI_WAIT_NONE;
        rc = fi_cq_open(N.domain, &cq, &N.cq, NULL);
        if (rc)
            return fi_fail(rc, "fi_cq_open");
    }
    struct fi_av_attr av = {.type = FI_AV_TABLE};
    rc = fi_av_open(N.domain, &av, &N.av, NULL);
    if (rc)
        return fi_fail(rc, "fi_av_open");
    rc = fi_endpoint(N.domain, N.info, &N.ep, NULL);
    if (rc)
        return fi_fail(rc, "fi_endpoint");
    if ((rc = fi_ep_bind(N.ep, &N.av->fid, 0)) != 0)
        return fi_fail(rc, "fi_ep_bind(av)");
    if ((rc = fi_ep_bind(N.ep, &N.cq->fid, FI_TRANSMIT | FI_RECV)) != 0)
        return fi_fail(rc, "fi_ep_bind(cq)");
    if ((rc = fi_enable(N.ep)) != 0)
        return fi_fail(rc, "fi_enable");
    return FMPL_SUCCESS;
}

/* Universe rank r's endpoint, segment base and key (its "net" key, put at
 * its start-up) into the address vector and its peer entry. */
static int insert_peer(fmpl_bootstrap *bs, int r)
{
    unsigned char name[256];
    char value[FMPL_BOOTSTRAP_VALUE_MAX];
    fmpl_peer *peer = &fmpl_fab.peers[r];
    unsigned long long b, k;
    size_t n;
    if (bs->get(bs, r, "net", value, sizeof value) != FMPL_SUCCESS ||
        fmpl_hex_decode(name, sizeof name, value, ':', &n) != 0 ||
        sscanf(value + 2 * n, ":%llx:%llx", &b, &k) != 2)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "process %d published no network endpoint", r);
    fi_addr_t dest = FI_ADDR_NOTAVAIL;
    int rc = fi_av_insert(N.av, name, 1, &dest, 0, NULL);
    if (rc != 1)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "fi_av_insert of process %d's address failed: %s",
                          r, rc < 0 ? fi_strerror(-rc) : "not inserted");
    peer->net_dest = dest;
    peer->net_base = b;
    peer->net_key = k;
    return FMPL_SUCCESS;
}

/* A process of another world, after start-up (fabric_link.c).  Its "net"
 * key was put before its world's start-up fence, so before it could take
 * part in any link. */
int fmpl_net_link(int r)
{
    fmpl_net_lock(); /* the progress thread may read the address vector */
    int rc = insert_peer(fmpl_fab.bs, r);
    fmpl_net_unlock();
    return rc;
}

static int exchange_addresses(fmpl_bootstrap *bs)
{
    unsigned char name[256];
    size_t namelen = sizeof name;
    int rc = fi_getname(&N.ep->fid, name, &namelen);
    if (rc)
        return fi_fail(rc, "fi_getname");
    char value[FMPL_BOOTSTRAP_VALUE_MAX];
    fmpl_hex_encode(value, name, namelen);
    uint64_t base = N.virt_addr ? (uint64_t)(uintptr_t)fmpl_fab.my_base : 0;
    snprintf(value + 2 * namelen, sizeof value - 2 * namelen, ":%llx:%llx",
             (unsigned long long)base, (unsigned long long)fi_mr_key(N.seg_mr));
    if (bs->put(bs, "net", value) != FMPL_SUCCESS || bs->fence(bs) != FMPL_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "publishing the network endpoint failed");
    FMPL_FAB_FOR_WORLD(r) {
        rc = insert_peer(bs, r);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

int fmpl_net_open(fmpl_bootstrap *bs)
{
    memset(&N, 0, sizeof N);
    if (fmpl_ofi_load(N.why, sizeof N.why) != 0)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "network backend: %s", N.why);
    int asked = ASK_ANY;
    int rc = select_info(&N.info, N.why, sizeof N.why, &asked);
    if (rc)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "network backend: %s", N.why);
    uint64_t mr = N.info->domain_attr->mr_mode;
    N.virt_addr = (mr & FI_MR_VIRT_ADDR) != 0;
    /* Descriptors are ignored where FI_MR_LOCAL is not required, so
     * "always" runs the registration path without changing the transfers. */
    N.mr_local = (mr & FI_MR_LOCAL) != 0 || fmpl_tunable_choice(&tunable_mr_local, mr_local_choices) == 1;
    N.prov_key = (mr & FI_MR_PROV_KEY) != 0;
    N.mr_endpoint = (mr & FI_MR_ENDPOINT) != 0;
    N.inject_size = N.info->tx_attr->inject_size;
    N.max_msg = N.info->ep_attr->max_msg_size ? N.info->ep_attr->max_msg_size : SIZE_MAX;
    long long chunk = fmpl_tunable_long(&tunable_rma_chunk);
    N.rma_chunk = chunk <= 0 || (unsigned long long)chunk > N.max_msg ? N.max_msg : (size_t)chunk;
    long long spin = fmpl_tunable_long(&tunable_spin);
    N.spin = spin < 0 ? 0 : (long)spin;
    long long pieces = fmpl_tunable_long(&tunable_flag_pieces);
    N.flag_pieces = pieces == 2 || pieces == 4 || pieces == 8 ? (int)pieces : 1;
    rc = open_endpoint();
    if (rc == FMPL_SUCCESS && (!atomic_ok(FI_SUM, FI_FETCH_ATOMIC) ||
                                !atomic_ok(FI_CSWAP, FI_COMPARE_ATOMIC)))
        rc = FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                        "provider %s has no 64-bit fetch-add or compare-and-swap (emulation "
                        "by the target's progress is not written yet)",
                        N.info->fabric_attr->prov_name);
    if (rc == FMPL_SUCCESS) {
        N.atomic_write = atomic_ok(FI_ATOMIC_WRITE, 0);
        rc = choose_notify(asked);
        if (N.notify_mode == NET_NOTIFY_ORDERED && N.flag_by_rma)
            N.atomic_write = 0;
    }
    if (rc == FMPL_SUCCESS)
        rc = fmpl_net_md_open();
    if (rc == FMPL_SUCCESS) /* before any peer can know this endpoint */
        rc = fmpl_net_msg_open();
    if (rc == FMPL_SUCCESS)
        rc = exchange_addresses(bs);
    if (bs->barrier(bs) != FMPL_SUCCESS && rc == FMPL_SUCCESS)
        rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "barrier after the address exchange failed");
    if (rc != FMPL_SUCCESS) {
        fmpl_net_close();
        return rc;
    }
    fmpl_fab.net = &fmpl_net_ops;
    fmpl_fab.net_atomics = 1;
    snprintf(N.chosen, sizeof N.chosen,
             "%s on %s (%s); notify %s%s; records %s; cq wait %s; mr_mode%s%s%s%s; "
             "inject %zu",
             N.info->fabric_attr->prov_name, N.info->domain_attr->name, N.why,
             notify_names[N.notify_mode],
             N.notify_mode == NET_NOTIFY_ORDERED && N.flag_by_rma
                 ? " of RMA writes only: the flag goes as an RMA write"
                 : "",
             N.msg_records == NET_RECORDS_WRITE     ? "as one write, the flag last"
             : N.msg_records == NET_RECORDS_MESSAGE ? "as messages (FI_MSG)"
                                                    : "as put and notify",
             N.cq_fd >= 0 ? "fd" : "none",
             N.virt_addr ? " virt_addr" : " offsets",
             N.mr_local ? " local" : "", N.prov_key ? " prov_key" : "",
             N.mr_endpoint ? " endpoint" : "", N.inject_size);
    if (fmpl_fab.rank == 0)
        fmpl_log_info("network backend: %s", N.chosen);
    return FMPL_SUCCESS;
}

const char *fmpl_net_describe_chosen(void) { return N.chosen; }

void fmpl_net_close(void)
{
    if (N.thread_on) {
        atomic_store_explicit(&N.thread_stop, 1, memory_order_release);
        pthread_join(N.thread, NULL);
        N.thread_on = 0;
    }
    fmpl_fab.net = NULL;
    fmpl_fab.net_atomics = 0;
    fmpl_net_msg_drain();
    fmpl_net_md_close();
    if (N.ep)
        fi_close(&N.ep->fid);
    fmpl_net_msg_close();
    if (N.av)
        fi_close(&N.av->fid);
    if (N.cq)
        fi_close(&N.cq->fid);
    if (N.domain)
        fi_close(&N.domain->fid);
    if (N.fabric)
        fi_close(&N.fabric->fid);
    if (N.info)
        fi_freeinfo(N.info);
    free(N.unsettled);
    memset(&N, 0, sizeof N);
}

/* ----------------------------------------------------------- progress */

static void complete(void *context, int err)
{
    net_op *op = context;
    if (!op)
        return;
    op->err = err;
    atomic_store_explicit(&op->done, 1, memory_order_release);
}

static int reap(ssize_t n, struct fi_cq_entry *e)
{
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++)
            if (!fmpl_net_msg_completed(e[i].op_context, 0))
                complete(e[i].op_context, 0);
        return (int)n;
    }
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        if (fi_cq_readerr(N.cq, &err, 0) > 0) {
            if (!fmpl_net_msg_completed(err.op_context, err.err ? err.err : FI_EOTHER))
                complete(err.op_context, err.err ? err.err : FI_EOTHER);
            return 1;
        }
    }
    return 0;
}

static pthread_mutex_t data_lock = PTHREAD_MUTEX_INITIALIZER;
/* Held by the owner's threads across a whole operation (post and wait) and
 * a progress pass; the progress thread only ever try-locks it.  So the
 * provider sees the owner's operations and the thread's passes strictly one
 * after the other: with passes interleaved between an operation's post and
 * its completion, tcp;ofi_rxm (1.17) hung four ranks on two namespace hosts
 * in their first puts. */
static pthread_mutex_t owner_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
/* (The strict alternation did not cure that hang: any pass of the thread,
 * even between the owner's operations, can leave four ranks on two
 * namespace hosts stuck in their first puts; one host, FMPL_FABRIC=split,
 * never hangs.  So the thread is off by default.) */

void fmpl_net_owner_enter(void) { pthread_mutex_lock(&owner_lock); }

void fmpl_net_owner_exit(void) { pthread_mutex_unlock(&owner_lock); }

void fmpl_net_lock(void) { pthread_mutex_lock(&data_lock); }

void fmpl_net_unlock(void) { pthread_mutex_unlock(&data_lock); }

static int progress_pass(void)
{
    struct fi_cq_entry e[16];
    fmpl_net_lock();
    int n = reap(fi_cq_read(N.cq, e, 16), e);
    fmpl_net_msg_repost();
    fmpl_net_unlock();
    return n;
}

int fmpl_net_progress(void)
{
    /* A liveness hint for the progress thread: a lost update between two
     * of the owner's threads costs nothing. */
    atomic_store_explicit(&N.polls, atomic_load_explicit(&N.polls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    fmpl_net_owner_enter();
    int n = progress_pass();
    fmpl_net_owner_exit();
    return n;
}

static void *progress_thread(void *arg)
{
    (void)arg;
    uint64_t seen = UINT64_MAX;
    struct timespec nap = {N.thread_ns / 1000000000L, N.thread_ns % 1000000000L};
    while (!atomic_load_explicit(&N.thread_stop, memory_order_acquire)) {
        uint64_t polls = atomic_load_explicit(&N.polls, memory_order_relaxed);
        if (polls != seen) { /* the owner progresses: stay out of its way */
            seen = polls;
            nanosleep(&nap, NULL);
            continue;
        }
        /* No fi_trywait and wait on the CQ's descriptor here: with
         * tcp;ofi_rxm (libfabric 1.17) a thread armed that way while the
         * owner posts and polls stalls both (four ranks on two namespace
         * hosts hung in their first puts). */
        nanosleep(&nap, NULL);
        if (pthread_mutex_trylock(&owner_lock) != 0)
            continue; /* the owner is in an operation: it progresses */
        while (progress_pass() > 0) {
        }
        pthread_mutex_unlock(&owner_lock);
    }
    return NULL;
}

/* Only once start-up is over (fmpl_fabric_started): the thread's passes
 * while every rank was still in its start-up exchanges, and making its
 * first connections, hung four ranks on two namespace hosts in their first
 * puts (tcp;ofi_rxm, libfabric 1.17; with the thread off, or idle until
 * then, the same runs pass). */
void fmpl_net_start_progress_thread(void)
{
    int choice = fmpl_tunable_choice(&tunable_thread, thread_choices);
    int manual = N.info->domain_attr->data_progress == FI_PROGRESS_MANUAL;
    if (choice == 2 || (choice == 0 && !manual))
        return;
    long long us = fmpl_tunable_long(&tunable_thread_us);
    N.thread_ns = (us < 10 ? 10 : us) * 1000L;
    atomic_store(&N.thread_stop, 0);
    atomic_store(&N.polls, 0);
    if (pthread_create(&N.thread, NULL, progress_thread, NULL) == 0)
        N.thread_on = 1;
    else
        fmpl_log_warn("network backend: no progress thread (pthread_create failed): a rank "
                      "computing outside FMPL delays remote operations on its memory");
}

void fmpl_net_idle(void)
{
    for (long i = 0; i < N.spin; i++)
        if (fmpl_net_progress())
            return;
    struct fid *f = N.cq ? &N.cq->fid : NULL;
    if (N.cq_fd >= 0 && fi_trywait(N.fabric, &f, 1) == FI_SUCCESS) {
        struct pollfd p = {.fd = N.cq_fd, .events = POLLIN};
        (void)poll(&p, 1, 1);
    } else {
        sched_yield();
    }
    fmpl_net_progress();
}

int fmpl_net_wait(net_op *op, const char *what, int rank)
{
    long polls = 0;
    while (!atomic_load_explicit(&op->done, memory_order_acquire)) {
        if (fmpl_net_progress())
            continue;
        /* Past the spin budget, yield every 64 empty polls: a long transfer,
         * or a provider whose own progress thread (sockets) needs the core
         * and the CQ lock we keep taking. */
        if (++polls > N.spin && (polls & 63) == 0)
            sched_yield();
    }
    if (op->err)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "network %s with rank %d failed: %s", what, rank,
                          fi_strerror(op->err));
    return FMPL_SUCCESS;
}

/* ------------------------------------------------------------ fmpl_info */

void fmpl_net_describe(void (*line)(const char *text, void *ctx), void *ctx)
{
    char buf[1024];
    if (fmpl_ofi_load(buf, sizeof buf) != 0) {
        char text[1100];
        snprintf(text, sizeof text, "network (libfabric): built in, but %s", buf);
        line(text, ctx);
        return;
    }
    snprintf(buf, sizeof buf, "network (libfabric %u.%u): built in (loaded when a peer needs it)",
             FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
    line(buf, ctx);
    /* Providers with RDM endpoints at all, then those that also give what
     * the backend asks for (capabilities must be asked for: unasked, a
     * provider may leave FI_ATOMIC out of what it lists). */
    char seen[32][64];
    int usable[32] = {0}, nseen = 0;
    for (int pass = 0; pass < 2; pass++) {
        struct fi_info *h = fi_allocinfo(), *all = NULL;
        if (!h)
            break;
        h->ep_attr->type = FI_EP_RDM;
        h->domain_attr->mr_mode = MR_MODES;
        h->mode = FI_CONTEXT;
        if (pass == 1)
            h->caps = FI_RMA | FI_ATOMIC | FI_MSG;
        int rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, h, &all);
        fi_freeinfo(h);
        for (struct fi_info *i = rc ? NULL : all; i; i = i->next) {
            const char *name = i->fabric_attr->prov_name;
            int k = 0;
            while (k < nseen && strcmp(seen[k], name) != 0)
                k++;
            if (k == nseen && nseen < 32 && pass == 0)
                snprintf(seen[nseen++], 64, "%s", name);
            if (k < nseen && pass == 1)
                usable[k] = 1;
        }
        if (!rc)
            fi_freeinfo(all);
    }
    if (!nseen)
        line("  providers with RDM endpoints: none", ctx);
    for (int k = 0; k < nseen; k++) {
        snprintf(buf, sizeof buf, "  provider %-14.63s %s", seen[k],
                 usable[k] ? "usable (RDM with RMA, atomics, messages)"
                           : "not usable (no RDM endpoint with RMA, atomics and messages)");
        line(buf, ctx);
    }
    struct fi_info *chosen = NULL;
    char why[320];
    int asked = ASK_ANY;
    if (select_info(&chosen, why, sizeof why, &asked) == 0) {
        uint64_t mr = chosen->domain_attr->mr_mode;
        snprintf(buf, sizeof buf,
                 "  chosen: %s on %s (%s)",
                 chosen->fabric_attr->prov_name, chosen->domain_attr->name, why);
        line(buf, ctx);
        snprintf(buf, sizeof buf, "  its mr_mode:%s%s%s%s%s%s; inject %zu bytes; "
                 "writes ordered after writes: %s; reads after writes: %s; fence: %s",
                 mr & FI_MR_VIRT_ADDR ? " virt_addr" : " offsets",
                 mr & FI_MR_LOCAL ? " local" : "", mr & FI_MR_PROV_KEY ? " prov_key" : "",
                 mr & FI_MR_ENDPOINT ? " endpoint" : "", mr & FI_MR_ALLOCATED ? " allocated" : "",
                 mr == 0 ? " (none)" : "", chosen->tx_attr->inject_size,
                 chosen->tx_attr->msg_order & FI_ORDER_WAW       ? "yes"
                 : chosen->tx_attr->msg_order & FI_ORDER_RMA_WAW ? "RMA writes only"
                                                                 : "no",
                 chosen->tx_attr->msg_order & FI_ORDER_RAW       ? "yes"
                 : chosen->tx_attr->msg_order & FI_ORDER_RMA_RAW ? "RMA only"
                                                                 : "no",
                 chosen->caps & FI_FENCE ? "yes" : "no");
        line(buf, ctx);
        fi_freeinfo(chosen);
    } else {
        snprintf(buf, sizeof buf, "  chosen: none -- %s", why);
        line(buf, ctx);
    }
}
