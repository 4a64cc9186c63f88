/* Partitioned point-to-point (MPI-4.0 chapter 4): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready, MPI_Pready_range, MPI_Pready_list and
 * MPI_Parrived, on the tag-matched protocol (protocols/tag_match.c).
 *
 * A partitioned request is a persistent FMPL_MREQ_ASYNC request
 * (request_async.c) with its state (part_op) made at init: MPI_Start and
 * MPI_Startall restart it, the Wait and Test families complete it (and
 * MPI_Request_get_status looks at it), MPI_Request_free of an inactive one
 * releases it; freeing or cancelling an active one is refused (erroneous,
 * MPI-4.0 4.2.1).  Every partition moves as an ordinary tag-matched
 * message of the communicator's team, on a library tag (below -1: never a
 * user's message, out of MPI_ANY_TAG's reach; this file's range is below
 * the schedules' and the neighbourhood plans', PART_TAG_* below).
 *
 * Sequence, for a send by S of `ns` partitions of `sb` bytes to R, tag t,
 * and a receive by R of `nr` partitions of `rb` bytes from S, tag t.  The
 * k-th partitioned send S initialises towards (R, t) on a communicator
 * matches the k-th partitioned receive R initialises from (S, t) on it (the
 * init order, MPI's rule; each side counts, nothing is sent at init):
 *   init       S: takes a block of ns library tags, top - ns + 1 .. top,
 *              none of them held by another of its live partitioned sends
 *              on the team (pc->live).  S and R: staging for a
 *              non-contiguous datatype (the whole packed stream).
 *   1st start  S: HELLO {t, k, top, ns, sb} to R on PART_TAG_HELLO.
 *              R, in its progress poll until matched: takes each HELLO
 *              from S out of the unexpected queue into the communicator's
 *              list (pc->hellos) and picks the one with (t, k); it then
 *              allocates its ns receive slots.  The match holds for good.
 *   each start R (matched): one receive per SEND partition i, tag top - i,
 *              into bytes [i*sb, (i+1)*sb) of its buffer, clipped to its
 *              size (a longer message truncates: MPI_ERR_TRUNCATE).
 *   Pready(i)  S: sends bytes [i*sb, (i+1)*sb) on tag top - i at once
 *              (eager or rendezvous, like any message; a non-contiguous
 *              type packs that range into the staging buffer first).
 *   complete   S: every partition readied and its send complete, and the
 *              HELLO's.  R: every send partition's receive complete.
 * Receive partitions map onto send partitions by bytes: receive partition
 * j is bytes [j*rb, (j+1)*rb) of the packed stream and has arrived
 * (MPI_Parrived) once every send partition overlapping that range has
 * been received (a non-contiguous type unpacks j's range then); one that
 * holds no byte of the sender's message (empty partitions, or bytes past
 * its end, which are never written) arrives with the send partition at
 * its place, never before the sender readied it.  So 8 send
 * partitions into 2 receive partitions make each receive partition wait
 * for 4 messages, and 2 into 8 make 4 receive partitions arrive with each.
 * Instances: a partition's tag carries one message per instance, and R
 * posts instance n+1's receives only after instance n completed, while S's
 * instance n+1 messages follow its instance n ones on the same channel:
 * tag matching keeps them apart.  MPI_PROC_NULL: every instance completes
 * at once (Pready still checks its arguments).  Wildcards are not allowed
 * (no MPI_ANY_SOURCE / MPI_ANY_TAG in MPI_Precv_init).
 * Allocation: at init (state, staging, the sender's tag block) and at R's
 * first match (its ns receive slots); none in MPI_Start or MPI_Pready.
 * A sender's tag block is reused only after the communicator's cursor has
 * wrapped around PART_TAG_SPAN tags (so a freed sender's late messages
 * cannot meet a new one). */
#include "api/mpi/mpi_impl.h"
#include "api/mpi/mpi_objects.h"
#include "progress/async.h"
#include "progress/progress.h"

#include <stdlib.h>
#include <string.h>

/* Library tags: HELLO, then the data blocks below it, down to
 * PART_TAG_DATA_TOP - (PART_TAG_SPAN - 1) = -2^31 + 2.  The schedules'
 * tags (sched.c) end above -2^29 - 16, create_group's (tag_match.h) lie
 * between -2^29 - 32 and -2^30 + 32, the neighbourhood plans' (neighbor.h)
 * above -2^25. */
#define PART_TAG_HELLO (-(1 << 30))
#define PART_TAG_DATA_TOP (PART_TAG_HELLO - 1)
#define PART_TAG_SPAN ((1 << 30) - 2)

/* What S tells R at its first start. */
typedef struct part_hello {
    int32_t tag;            /* the user's tag */
    int32_t partitions;     /* ns */
    uint64_t seq;           /* k */
    int64_t part_bytes;     /* sb */
    int32_t tag_top;        /* partition i travels on tag_top - i */
    int32_t pad;
} part_hello;

/* A HELLO received by R, waiting for its receive (pc->hellos). */
typedef struct part_hello_in {
    struct part_hello_in *next;
    int source;
    fmpl_tm_req tm;         /* complete once `hello` holds it */
    part_hello hello;
} part_hello_in;

/* How many partitioned operations this process initialised per (direction,
 * peer, tag) on a communicator: an open-addressing table. */
typedef struct part_seq {
    int32_t peer, tag;
    int32_t dir;            /* 0: empty slot, FMPL_MPI_PART_SEND / _RECV */
    uint64_t count;
} part_seq;

struct part_op;

typedef struct fmpl_mpi_part_comm {
    part_seq *seq;
    int seq_cap, seq_used;
    int64_t tag_cursor;     /* next data tag offset to try, 0 .. PART_TAG_SPAN */
    struct part_op *live;   /* live partitioned sends: their tag blocks */
    part_hello_in *hellos;  /* in arrival order */
} fmpl_mpi_part_comm;

typedef struct part_op {
    fmpl_async async;           /* first: the engine's handle */
    fmpl_mpi_request *req;
    fmpl_mpi_comm *held;        /* its teams stay while the request exists */
    fmpl_team *team;
    int is_send;
    int peer, tag;
    int proc_null;
    uint64_t seq;               /* k: the init-order match number */
    int partitions;             /* this side's */
    int64_t part_bytes;         /* this side's, of the packed stream */
    int64_t total;              /* partitions * part_bytes */
    fmpl_mpi_buf buf;           /* the whole message; a non-contiguous type referenced */
    char *stage;                /* non-contiguous: the packed stream */
    int error;                  /* this instance's MPI error class */
    /* send */
    unsigned char *ready;       /* [partitions], this instance */
    int nready;
    int tag_top;                /* send: own block; receive: the sender's (once matched) */
    struct part_op *live_next;  /* pc->live */
    int hello_sent;
    fmpl_tm_req hello_req;
    part_hello hello;
    /* receive */
    int matched;
    int peer_partitions;        /* ns */
    int64_t peer_part_bytes;    /* sb */
    int64_t peer_total;
    unsigned char *arrived;     /* [partitions], this instance */
    /* messages: send [partitions]; receive [peer_partitions] once matched */
    fmpl_tm_req *msg;
    int nmsg;
    int cursor;                 /* messages 0 .. cursor-1 known complete this instance */
    int64_t delivered;          /* receive: bytes received so far (of those) */
} part_op;

/* ------------------------------------------------------------ communicator state */

static fmpl_mpi_part_comm *part_comm(fmpl_mpi_comm *c)
{
    if (!c->part)
        c->part = calloc(1, sizeof *c->part);
    return c->part;
}

static uint32_t seq_hash(int dir, int peer, int tag)
{
    uint32_t h = (uint32_t)peer * 0x9e3779b1u ^ (uint32_t)tag * 0x85ebca77u ^ (uint32_t)dir;
    h ^= h >> 15;
    return h * 0xc2b2ae3du;
}

static part_seq *seq_slot(part_seq *table, int cap, int dir, int peer, int tag)
{
    for (uint32_t i = seq_hash(dir, peer, tag) & (uint32_t)(cap - 1);;
         i = (i + 1) & (uint32_t)(cap - 1)) {
        part_seq *s = &table[i];
        if (!s->dir || (s->dir == dir && s->peer == peer && s->tag == tag))
            return s;
    }
}

/* The next match number of (dir, peer, tag) on the communicator: 0 for the
 * first; -1 without memory. */
static int64_t seq_next(fmpl_mpi_part_comm *pc, int dir, int peer, int tag)
{
    if (2 * (pc->seq_used + 1) > pc->seq_cap) {
        int cap = pc->seq_cap ? 2 * pc->seq_cap : 16;
        part_seq *t = calloc((size_t)cap, sizeof *t);
        if (!t)
            return -1;
        for (int i = 0; i < pc->seq_cap; i++)
            if (pc->seq[i].dir)
                *seq_slot(t, cap, pc->seq[i].dir, pc->seq[i].peer, pc->seq[i].tag) = pc->seq[i];
        free(pc->seq);
        pc->seq = t;
        pc->seq_cap = cap;
    }
    part_seq *s = seq_slot(pc->seq, pc->seq_cap, dir, peer, tag);
    if (!s->dir) {
        *s = (part_seq){.peer = peer, .tag = tag, .dir = dir};
        pc->seq_used++;
    }
    return (int64_t)s->count++;
}

/* A block of n data tags no live send of the communicator holds: its
 * offset (tags PART_TAG_DATA_TOP - offset - i), or -1. */
static int64_t tags_take(fmpl_mpi_part_comm *pc, int n)
{
    int64_t at = pc->tag_cursor;
    int wrapped = 0;
    for (;;) {
        if (at + n > PART_TAG_SPAN) {
            if (wrapped++)
                return -1;
            at = 0;
        }
        part_op *clash = NULL;
        for (part_op *o = pc->live; o && !clash; o = o->live_next) {
            int64_t start = PART_TAG_DATA_TOP - o->tag_top;
            if (at < start + o->partitions && start < at + n)
                clash = o;
        }
        if (!clash)
            break;
        at = PART_TAG_DATA_TOP - clash->tag_top + clash->partitions;
    }
    pc->tag_cursor = at + n;
    return at;
}

void fmpl_mpi_part_comm_free(fmpl_mpi_comm *c)
{
    fmpl_mpi_part_comm *pc = c->part;
    if (!pc)
        return;
    while (pc->hellos) {
        part_hello_in *h = pc->hellos;
        pc->hellos = h->next;
        /* A receive still posted leaves the queue; one the protocol is
         * still filling (a rendezvous HELLO) must keep its memory. */
        if (h->tm.complete || fmpl_tm_cancel_recv(&h->tm))
            free(h);
    }
    free(pc->seq);
    free(pc);
    c->part = NULL;
}

/* ------------------------------------------------------------ matching (R) */

/* The HELLO of R's receive op among those taken in: take it out of the
 * list (freed) and adopt the sender's layout.  1 if found. */
static int hello_adopt(part_op *op, fmpl_mpi_part_comm *pc)
{
    for (part_hello_in **link = &pc->hellos; *link; link = &(*link)->next) {
        part_hello_in *h = *link;
        if (!h->tm.complete || h->source != op->peer || h->hello.tag != op->tag ||
            h->hello.seq != op->seq)
            continue;
        *link = h->next;
        op->peer_partitions = h->hello.partitions;
        op->peer_part_bytes = h->hello.part_bytes;
        op->peer_total = (int64_t)h->hello.partitions * h->hello.part_bytes;
        op->tag_top = h->hello.tag_top;
        free(h);
        return 1;
    }
    return 0;
}

/* Match a receive (its first instance): 1 once matched, with its receive
 * slots allocated (or op->error set), 0 while its HELLO has not come. */
static int try_match(part_op *op)
{
    fmpl_mpi_part_comm *pc = op->held->part;
    int found = hello_adopt(op, pc);
    while (!found && fmpl_tm_probe(op->team, op->peer, PART_TAG_HELLO)) {
        part_hello_in *h = calloc(1, sizeof *h);
        if (!h) {
            op->error = MPI_ERR_NO_MEM;
            return 1;
        }
        h->source = op->peer;
        part_hello_in **tail = &pc->hellos;
        while (*tail)
            tail = &(*tail)->next;
        *tail = h;
        /* Takes the message probed: the first HELLO from that source. */
        fmpl_tm_irecv(&h->tm, op->team, &h->hello, sizeof h->hello, op->peer, PART_TAG_HELLO);
        found = hello_adopt(op, pc);
    }
    if (!found)
        return 0;
    if (op->peer_partitions < 0 || op->peer_part_bytes < 0) {
        op->error = MPI_ERR_INTERN;
        return 1;
    }
    op->msg = calloc((size_t)op->peer_partitions + 1, sizeof *op->msg);
    if (!op->msg) {
        op->error = MPI_ERR_NO_MEM;
        return 1;
    }
    op->nmsg = op->peer_partitions;
    op->matched = 1;
    return 1;
}

/* Where the message's bytes are: the user's (contiguous) or the staging. */
static char *stream(const part_op *op)
{
    return op->buf.type ? op->stage : (char *)op->buf.data;
}

/* One receive per send partition, for this instance. */
static void post_receives(part_op *op)
{
    char *base = stream(op);
    for (int i = 0; i < op->nmsg; i++) {
        int64_t at = (int64_t)i * op->peer_part_bytes;
        int64_t room = op->total - at;
        if (room > op->peer_part_bytes)
            room = op->peer_part_bytes;
        if (room < 0)
            room = 0;
        fmpl_tm_irecv(&op->msg[i], op->team, room > 0 ? base + at : base, room, op->peer,
                      op->tag_top - i);
    }
}

/* Receive partition j: arrived this instance?  Every send partition that
 * overlaps its bytes must have been received; the first call that finds
 * it so unpacks a non-contiguous type's range.  A partition that covers
 * no byte of the sender's message (zero-size partitions, or a receive
 * buffer longer than the message) waits for the send partition at its
 * place instead: it must not arrive before the sender readied anything
 * (mpi4py's test_p2p_buf_part checks that with empty buffers). */
static int recv_partition_arrived(part_op *op, int j)
{
    if (op->arrived[j])
        return 1;
    if (!op->matched)
        return 0;
    int64_t from = (int64_t)j * op->part_bytes, to = from + op->part_bytes;
    if (to > op->peer_total)
        to = op->peer_total;
    if (from < to) {
        int64_t last = (to - 1) / op->peer_part_bytes;
        for (int64_t i = from / op->peer_part_bytes; i <= last; i++)
            if (!op->msg[i].complete)
                return 0;
        if (op->buf.type)
            fmpl_dt_unpack(op->stage + from, to - from, op->buf.user, op->buf.count,
                           op->buf.type, from, NULL);
    } else if (op->nmsg > 0) {
        int64_t i = op->peer_part_bytes > 0 ? from / op->peer_part_bytes
                                            : (int64_t)j * op->nmsg / op->partitions;
        if (i >= op->nmsg)
            i = op->nmsg - 1;
        if (!op->msg[i].complete)
            return 0;
    }
    op->arrived[j] = 1;
    return 1;
}

/* ------------------------------------------------------------ progress */

/* Messages complete in any order; completion needs them all, so the
 * cursor only moves past complete ones (amortised O(1) per poll). */
static void advance_cursor(part_op *op)
{
    while (op->cursor < op->nmsg) {
        fmpl_tm_req *m = &op->msg[op->cursor];
        if ((op->is_send && !op->ready[op->cursor]) || !m->complete)
            return;
        if (m->st_error != FMPL_SUCCESS && op->error == MPI_SUCCESS)
            op->error = fmpl_mpi_error_class_of(m->st_error);
        if (!op->is_send)
            op->delivered += m->st_bytes;
        op->cursor++;
    }
}

static int send_poll(fmpl_async *a)
{
    part_op *op = (part_op *)a;
    if (op->proc_null)
        return 1;
    advance_cursor(op);
    return op->cursor == op->nmsg && op->hello_req.complete;
}

static int recv_poll(fmpl_async *a)
{
    part_op *op = (part_op *)a;
    if (op->proc_null)
        return 1;
    if (!op->matched) {
        if (!try_match(op))
            return 0;
        if (!op->matched) /* no memory */
            return 1;
        post_receives(op);
    }
    advance_cursor(op);
    return op->cursor == op->nmsg;
}

/* ------------------------------------------------------------ the request */

/* The Wait or Test that finds the instance done: the status, the error. */
static int part_complete(fmpl_mpi_request *r)
{
    part_op *op = r->async_state;
    r->async_has_status = 1;
    if (op->is_send) {
        fmpl_mpi_status_set(&r->async_status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0);
    } else if (op->proc_null) {
        fmpl_mpi_status_set(&r->async_status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
    } else {
        for (int j = 0; j < op->partitions; j++)
            if (!recv_partition_arrived(op, j))
                op->arrived[j] = 1; /* failed before matching: nothing will come */
        fmpl_mpi_status_set(&r->async_status, op->peer, op->tag, op->delivered, 0);
    }
    return op->error;
}

static int part_restart(fmpl_mpi_request *r, const char *func, fmpl_async **a)
{
    part_op *op = r->async_state;
    op->error = MPI_SUCCESS;
    op->cursor = 0;
    op->delivered = 0;
    if (op->is_send) {
        memset(op->ready, 0, (size_t)op->partitions);
        op->nready = 0;
        if (!op->proc_null && !op->hello_sent) {
            int rc = fmpl_tm_isend(&op->hello_req, op->team, &op->hello, sizeof op->hello,
                                   op->peer, PART_TAG_HELLO, FMPL_TM_MODE_STANDARD);
            if (rc != FMPL_SUCCESS)
                return fmpl_mpi_error(op->req->comm, fmpl_mpi_error_class_of(rc), func,
                                      "partitioned send to rank %d could not start", op->peer);
            op->hello_sent = 1;
        }
    } else {
        memset(op->arrived, 0, (size_t)op->partitions);
        if (op->matched)
            post_receives(op);
    }
    fmpl_async_start(&op->async, op->is_send ? send_poll : recv_poll);
    *a = &op->async;
    return MPI_SUCCESS;
}

static void op_free(part_op *op)
{
    if (!op)
        return;
    if (op->is_send && op->held && op->held->part) {
        part_op **link = &op->held->part->live;
        while (*link && *link != op)
            link = &(*link)->live_next;
        if (*link)
            *link = op->live_next;
    }
    if (op->buf.type)
        fmpl_dt_unref(op->buf.type);
    if (op->held)
        fmpl_mpi_comm_unhold(op->held);
    free(op->stage);
    free(op->ready);
    free(op->arrived);
    free(op->msg);
    free(op);
}

static int part_release(fmpl_mpi_request *r)
{
    op_free(r->async_state);
    r->async_state = NULL;
    return MPI_SUCCESS;
}

/* MPI_Psend_init and MPI_Precv_init. */
static int part_init(const char *func, const void *buf, int partitions, MPI_Count count,
                     MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Info info,
                     int is_send, MPI_Request *request)
{
    FMPL_MPI_CHECK_READY(comm);
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    if (!fmpl_mpi_comm_get(comm))
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    if (partitions < 0)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "partitions %d is negative", partitions);
    if (count < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "count %lld is negative",
                              (long long)count);
    if (partitions > 0 && count > INT64_MAX / partitions)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func,
                              "%d partitions of %lld elements overflow", partitions,
                              (long long)count);
    if (!is_send && peer == MPI_ANY_SOURCE)
        return fmpl_mpi_error(comm, MPI_ERR_RANK, func,
                              "partitioned receives take no wildcard: MPI_ANY_SOURCE");
    if (!is_send && tag == MPI_ANY_TAG)
        return fmpl_mpi_error(comm, MPI_ERR_TAG, func,
                              "partitioned receives take no wildcard: MPI_ANY_TAG");
    if (!fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(comm, MPI_ERR_INFO, func, "invalid info 0x%x", (unsigned)info);
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = fmpl_mpi_p2p_check(func, comm, buf, (MPI_Aint)partitions * count, type, peer, tag,
                                0, &c, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint size;
    int contiguous;
    fmpl_mpi_type_layout(type, &size, &contiguous); /* valid: checked above */
    if (size > 0 && (MPI_Aint)partitions * count > INT64_MAX / size)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func,
                              "%d partitions of %lld elements of %ld bytes overflow",
                              partitions, (long long)count, (long)size);
    fmpl_mpi_part_comm *pc = part_comm(c);
    part_op *op = calloc(1, sizeof *op);
    fmpl_mpi_request *r = NULL;
    if (!pc || !op)
        goto no_memory;
    op->is_send = is_send;
    op->peer = peer;
    op->tag = tag;
    op->proc_null = peer == MPI_PROC_NULL;
    op->team = c->team;
    op->partitions = partitions;
    op->total = b.bytes;
    op->part_bytes = partitions ? b.bytes / partitions : 0;
    op->buf = b;
    if (b.type)
        fmpl_dt_ref(b.type);
    fmpl_mpi_comm_hold(c);
    op->held = c;
    if (b.type && !(op->stage = malloc((size_t)b.bytes)))
        goto no_memory;
    if (is_send) {
        op->ready = calloc((size_t)partitions + 1, 1);
        op->msg = calloc((size_t)partitions + 1, sizeof *op->msg);
        op->nmsg = partitions;
        if (!op->ready || !op->msg)
            goto no_memory;
    } else if (!(op->arrived = calloc((size_t)partitions + 1, 1))) {
        goto no_memory;
    }
    if (!op->proc_null) {
        int64_t seq = seq_next(pc, is_send ? FMPL_MPI_PART_SEND : FMPL_MPI_PART_RECV, peer, tag);
        if (seq < 0)
            goto no_memory;
        op->seq = (uint64_t)seq;
    }
    if (is_send && !op->proc_null) {
        int64_t at = tags_take(pc, partitions);
        if (at < 0) {
            op_free(op);
            return fmpl_mpi_error(comm, MPI_ERR_OTHER, func,
                                  "no block of %d library tags is free on this communicator "
                                  "(too many partitions in live partitioned sends)",
                                  partitions);
        }
        op->tag_top = PART_TAG_DATA_TOP - (int)at;
        op->live_next = pc->live;
        pc->live = op;
        op->hello = (part_hello){.tag = tag, .partitions = partitions, .seq = op->seq,
                                 .part_bytes = op->part_bytes, .tag_top = op->tag_top};
    }
    if (!(r = fmpl_mpi_request_new()))
        goto no_memory;
    op->req = r;
    fmpl_mpi_async_request_persistent(r, comm, op, part_complete, part_restart, part_release);
    r->partitioned = is_send ? FMPL_MPI_PART_SEND : FMPL_MPI_PART_RECV;
    *request = r->handle;
    return MPI_SUCCESS;
no_memory:
    op_free(op);
    return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a partitioned request");
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return part_init("MPI_Psend_init", buf, partitions, count, datatype, dest, tag, comm, info,
                     1, request);
}
FMPL_MPI_WEAK(Psend_init)

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return part_init("MPI_Precv_init", buf, partitions, count, datatype, source, tag, comm,
                     info, 0, request);
}
FMPL_MPI_WEAK(Precv_init)

/* ------------------------------------------------------------ Pready, Parrived */

/* The state of an active partitioned request of the wanted direction
 * (FMPL_MPI_PART_SEND / _RECV), or an error reported from func. */
static int active_op(const char *func, MPI_Request h, int want, part_op **out)
{
    fmpl_mpi_request *r = fmpl_mpi_request_get(h);
    if (!r)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, func, "invalid request 0x%x",
                              (unsigned)h);
    if (r->partitioned != want)
        return fmpl_mpi_error(r->comm, MPI_ERR_REQUEST, func,
                              "request 0x%x is not a partitioned %s request", (unsigned)h,
                              want == FMPL_MPI_PART_SEND ? "send" : "receive");
    *out = r->async_state;
    if (!r->active)
        return fmpl_mpi_error(r->comm, MPI_ERR_REQUEST, func,
                              "partitioned request 0x%x is inactive: start it first",
                              (unsigned)h);
    return MPI_SUCCESS;
}

static int partition_check(const char *func, const part_op *op, int p)
{
    if (p < 0 || p >= op->partitions)
        return fmpl_mpi_error(op->req->comm, MPI_ERR_ARG, func,
                              "partition %d is outside 0 .. %d", p, op->partitions - 1);
    if (op->ready[p])
        return fmpl_mpi_error(op->req->comm, MPI_ERR_ARG, func,
                              "partition %d is already ready in this instance", p);
    return MPI_SUCCESS;
}

/* Partition p is ready: its bytes leave now. */
static int send_partition(const char *func, part_op *op, int p)
{
    op->ready[p] = 1;
    op->nready++;
    if (op->proc_null)
        return MPI_SUCCESS;
    int64_t at = (int64_t)p * op->part_bytes;
    char *src = stream(op) + at;
    if (op->buf.type)
        fmpl_dt_pack(op->buf.user, op->buf.count, op->buf.type, at, src, op->part_bytes, NULL);
    int rc = fmpl_tm_isend(&op->msg[p], op->team, op->part_bytes ? src : stream(op),
                           op->part_bytes, op->peer, op->tag_top - p, FMPL_TM_MODE_STANDARD);
    if (rc == FMPL_SUCCESS)
        return MPI_SUCCESS;
    /* Nothing will complete it: the instance completes with the error. */
    op->msg[p].st_error = rc;
    op->msg[p].complete = 1;
    return fmpl_mpi_error(op->req->comm, fmpl_mpi_error_class_of(rc), func,
                          "partition %d could not be sent to rank %d", p, op->peer);
}

int PMPI_Pready(int partition, MPI_Request request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    part_op *op = NULL; /* set by active_op on success (gcc -O3 cannot tell) */
    int rc = active_op("MPI_Pready", request, FMPL_MPI_PART_SEND, &op);
    if (rc == MPI_SUCCESS)
        rc = partition_check("MPI_Pready", op, partition);
    return rc != MPI_SUCCESS ? rc : send_partition("MPI_Pready", op, partition);
}
FMPL_MPI_WEAK(Pready)

/* The range and list forms check every partition before any leaves, so a
 * failing call readies none. */
int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    const char *func = "MPI_Pready_range";
    part_op *op = NULL; /* set by active_op on success (gcc -O3 cannot tell) */
    int rc = active_op(func, request, FMPL_MPI_PART_SEND, &op);
    if (rc != MPI_SUCCESS)
        return rc;
    if (partition_low > partition_high)
        return fmpl_mpi_error(op->req->comm, MPI_ERR_ARG, func,
                              "partition_low %d is above partition_high %d", partition_low,
                              partition_high);
    for (int p = partition_low; p <= partition_high && rc == MPI_SUCCESS; p++)
        rc = partition_check(func, op, p);
    for (int p = partition_low; p <= partition_high && rc == MPI_SUCCESS; p++)
        rc = send_partition(func, op, p);
    return rc;
}
FMPL_MPI_WEAK(Pready_range)

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    const char *func = "MPI_Pready_list";
    part_op *op = NULL; /* set by active_op on success (gcc -O3 cannot tell) */
    int rc = active_op(func, request, FMPL_MPI_PART_SEND, &op);
    if (rc != MPI_SUCCESS)
        return rc;
    if (length < 0)
        return fmpl_mpi_error(op->req->comm, MPI_ERR_ARG, func, "length %d is negative", length);
    if (length > 0 && !array_of_partitions)
        return fmpl_mpi_error(op->req->comm, MPI_ERR_ARG, func, "array_of_partitions is NULL");
    /* A partition listed twice is caught by marking each as it is checked
     * (2: in this list), then unmarking. */
    int checked = 0;
    for (; checked < length && rc == MPI_SUCCESS; checked++) {
        int p = array_of_partitions[checked];
        rc = partition_check(func, op, p);
        if (rc == MPI_SUCCESS)
            op->ready[p] = 2;
        else
            break;
    }
    for (int i = 0; i < checked; i++)
        op->ready[array_of_partitions[i]] = 0;
    for (int i = 0; i < length && rc == MPI_SUCCESS; i++)
        rc = send_partition(func, op, array_of_partitions[i]);
    return rc;
}
FMPL_MPI_WEAK(Pready_list)

int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    const char *func = "MPI_Parrived";
    if (!flag)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "flag is NULL");
    /* A null or inactive request: nothing is pending (MPI-4.0 4.2.2). */
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    fmpl_mpi_request *r = fmpl_mpi_request_get(request);
    if (r && r->partitioned == FMPL_MPI_PART_RECV && !r->active) {
        part_op *op = r->async_state;
        if (partition < 0 || partition >= op->partitions)
            return fmpl_mpi_error(r->comm, MPI_ERR_ARG, func, "partition %d is outside 0 .. %d",
                                  partition, op->partitions - 1);
        *flag = 1;
        return MPI_SUCCESS;
    }
    part_op *op = NULL; /* set by active_op on success (gcc -O3 cannot tell) */
    int rc = active_op(func, request, FMPL_MPI_PART_RECV, &op);
    if (rc != MPI_SUCCESS)
        return rc;
    if (partition < 0 || partition >= op->partitions)
        return fmpl_mpi_error(op->req->comm, MPI_ERR_ARG, func,
                              "partition %d is outside 0 .. %d", partition, op->partitions - 1);
    if (op->proc_null) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!recv_partition_arrived(op, partition))
        fmpl_progress();
    *flag = recv_partition_arrived(op, partition);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Parrived)
