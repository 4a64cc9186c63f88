/* Buffered mode: MPI_Buffer_attach/detach, MPI_Bsend, MPI_Ibsend (and the
 * _c forms); MPI_Bsend_init starts through fmpl_mpi_bsend_start too
 * (persistent.c).
 *
 * A buffered send copies the message into the attached buffer (a
 * non-contiguous datatype is packed straight into it) and sends it from there with the tag-matched protocol, so it completes as soon as the
 * copy is made.  The space is reclaimed once the protocol's send completes:
 * at once for an eager message (the protocol copies it into the channel), at
 * FIN for a rendezvous one.  MPI_Buffer_detach waits until every message in
 * the buffer has been delivered.
 *
 * Layout: the buffer is managed as MPI's model implementation describes it
 * (MPI-4.0 3.6.1): a circular queue of entries, each a header followed by
 * the message.  A new entry goes after the newest one, or at the start of
 * the buffer when the end is too close; completed entries are reclaimed
 * from the oldest on; a message that does not fit is an error
 * (MPI_ERR_BUFFER), never a wait.  So FMPL buffers at least what the model
 * promises; an empty queue starts again at the beginning of the buffer.
 *
 * Overhead, against mpi.h's MPI_BSEND_OVERHEAD (96, MPICH's value): an entry
 * is a 32-byte header plus the message rounded up to 16 bytes, so at most
 * 32 + 15 = 47 bytes per message, and aligning the buffer's start costs at
 * most 15 bytes once.  A buffer of sum(size_i + MPI_BSEND_OVERHEAD) bytes
 * therefore holds those messages at the same time.  The protocol's request
 * (fmpl_tm_req, 112 bytes) would not fit in the overhead: it lives outside
 * the buffer, in a grow-only pool of records the header points to, so after
 * warm-up a buffered send allocates nothing. */
#include "api/mpi/mpi_impl.h"
#include "progress/progress.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 16
#define NONE UINT64_MAX

typedef struct bsend_msg {
    fmpl_tm_req tm;              /* the send from the buffer; the protocol points here */
    struct bsend_msg *next_free;
} bsend_msg;

/* At the start of every entry in the attached buffer. */
typedef struct entry {
    uint64_t len;                /* bytes of the entry, header included */
    uint64_t next;               /* offset of the next newer entry, or NONE */
    bsend_msg *msg;
    uint64_t bytes;              /* the message's size */
} entry;

_Static_assert(sizeof(entry) % ALIGN == 0, "entries keep the alignment");
_Static_assert(sizeof(entry) + ALIGN - 1 <= MPI_BSEND_OVERHEAD,
               "an entry's bookkeeping fits in MPI_BSEND_OVERHEAD");

static struct {
    int attached;
    void *user;                  /* as attached */
    MPI_Count user_size;
    char *base;                  /* first aligned byte */
    uint64_t cap;                /* usable bytes from base */
    uint64_t head, tail;         /* offsets of the oldest and newest entries */
    uint64_t used;               /* bytes in entries */
    int pending;                 /* entries */
} B = {.head = NONE, .tail = NONE};

/* ------------------------------------------------------------ records */

#define MSG_CHUNK 64

typedef struct msg_chunk {
    struct msg_chunk *next;
    bsend_msg m[MSG_CHUNK];
} msg_chunk;

static msg_chunk *chunks;        /* kept for the life of the process */
static bsend_msg *msg_free;

static bsend_msg *msg_get(void)
{
    if (!msg_free) {
        msg_chunk *c = calloc(1, sizeof *c);
        if (!c)
            return NULL;
        c->next = chunks;
        chunks = c;
        for (int i = MSG_CHUNK - 1; i >= 0; i--) {
            c->m[i].next_free = msg_free;
            msg_free = &c->m[i];
        }
    }
    bsend_msg *m = msg_free;
    msg_free = m->next_free;
    return m;
}

static void msg_put(bsend_msg *m)
{
    m->next_free = msg_free;
    msg_free = m;
}

/* ------------------------------------------------------------ the queue */

static entry *at(uint64_t off) { return (entry *)(void *)(B.base + off); }

/* Free the entries of completed sends, oldest first, up to the first one
 * still in flight. */
static void reclaim(void)
{
    while (B.head != NONE && at(B.head)->msg->tm.complete) {
        entry *e = at(B.head);
        msg_put(e->msg);
        B.used -= e->len;
        B.pending--;
        B.head = e->next;
    }
    if (B.head == NONE)
        B.tail = NONE;
}

/* Where an entry of n bytes fits: after the newest entry, or at the start
 * of the buffer when the end is too close (the model's rule). */
static int find_space(uint64_t n, uint64_t *off)
{
    if (B.head == NONE) {
        *off = 0;
        return n <= B.cap;
    }
    uint64_t first = B.head, end = B.tail + at(B.tail)->len;
    if (end > first) { /* not wrapped: [first, end) in use */
        if (n <= B.cap - end) {
            *off = end;
            return 1;
        }
        *off = 0;
        return n <= first;
    }
    /* wrapped: [first, cap) and [0, end) in use */
    *off = end;
    return n <= first - end;
}

int fmpl_mpi_bsend_start(const char *func, MPI_Comm comm, fmpl_team *team,
                         const fmpl_mpi_buf *b, int dest, int tag)
{
    MPI_Aint bytes = b->bytes;
    if (!B.attached)
        return fmpl_mpi_error(comm, MPI_ERR_BUFFER, func,
                              "no buffer is attached for buffered sends (MPI_Buffer_attach)");
    uint64_t n = sizeof(entry) + ((uint64_t)bytes + ALIGN - 1) / ALIGN * ALIGN;
    uint64_t off;
    reclaim();
    if (!find_space(n, &off)) {
        fmpl_progress();
        reclaim();
        if (!find_space(n, &off))
            return fmpl_mpi_error(
                comm, MPI_ERR_BUFFER, func,
                "a buffered message of %ld bytes needs %lu bytes of the attached buffer, which "
                "has %lu of %ld bytes in use by %d pending messages (attach a larger buffer: "
                "MPI_BSEND_OVERHEAD = %d bytes per message)",
                (long)bytes, (unsigned long)n, (unsigned long)B.used, (long)B.user_size,
                B.pending, MPI_BSEND_OVERHEAD);
    }
    bsend_msg *m = msg_get();
    if (!m)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a buffered send");
    entry *e = at(off);
    e->len = n;
    e->next = NONE;
    e->msg = m;
    e->bytes = (uint64_t)bytes;
    char *payload = (char *)(e + 1);
    int64_t packed;
    if (b->type) /* non-contiguous: packed straight into the attached buffer */
        fmpl_dt_pack(b->user, b->count, b->type, 0, payload, bytes, &packed);
    else if (bytes)
        memcpy(payload, b->data, (size_t)bytes);
    if (B.tail != NONE)
        at(B.tail)->next = off;
    else
        B.head = off;
    B.tail = off;
    B.used += n;
    B.pending++;
    fmpl_tm_isend(&m->tm, team, payload, bytes, dest, tag, FMPL_TM_MODE_STANDARD);
    reclaim(); /* an eager message is already out of the buffer */
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ attach, detach */

static int attach(const char *func, void *buffer, MPI_Count size)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (size < 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "size %ld is negative",
                              (long)size);
    if (!buffer && size > 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, func,
                              "buffer is NULL with size %ld", (long)size);
    if (B.attached)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, func,
                              "a buffer of %ld bytes is already attached (detach it first)",
                              (long)B.user_size);
    uintptr_t p = (uintptr_t)buffer, a = (p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    B.user = buffer;
    B.user_size = size;
    B.base = (char *)buffer + (a - p);
    B.cap = (uint64_t)size > a - p ? (uint64_t)size - (a - p) : 0;
    B.head = B.tail = NONE;
    B.used = 0;
    B.pending = 0;
    B.attached = 1;
    return MPI_SUCCESS;
}

/* Wait until every buffered message has been delivered, and forget the
 * buffer. */
static void drain_and_forget(void)
{
    fmpl_waiter w = FMPL_WAITER_INIT;
    for (;;) {
        reclaim();
        if (B.head == NONE)
            break;
        if (!fmpl_progress())
            fmpl_wait_once(&w);
    }
    B.attached = 0;
    B.user = B.base = NULL;
    B.user_size = 0;
    B.cap = 0;
}

static int detach(const char *func, void *buffer_addr, MPI_Count *size)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!buffer_addr)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "buffer_addr is NULL");
    if (!B.attached) {
        *(void **)buffer_addr = NULL;
        *size = 0;
        return MPI_SUCCESS;
    }
    *(void **)buffer_addr = B.user;
    *size = B.user_size;
    drain_and_forget();
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    FMPL_CORE_GUARD();
    return attach("MPI_Buffer_attach", buffer, size);
}
FMPL_MPI_WEAK(Buffer_attach)

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    FMPL_CORE_GUARD();
    return attach("MPI_Buffer_attach_c", buffer, size);
}
FMPL_MPI_WEAK(Buffer_attach_c)

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    FMPL_CORE_GUARD();
    if (!size)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach", "size is NULL");
    MPI_Count n = 0;
    int rc = detach("MPI_Buffer_detach", buffer_addr, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (n > INT_MAX) {
        *size = MPI_UNDEFINED;
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Buffer_detach",
                              "the detached buffer's size %ld does not fit in an int "
                              "(use MPI_Buffer_detach_c)", (long)n);
    }
    *size = (int)n;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Buffer_detach)

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    FMPL_CORE_GUARD();
    if (!size)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach_c",
                              "size is NULL");
    return detach("MPI_Buffer_detach_c", buffer_addr, size);
}
FMPL_MPI_WEAK(Buffer_detach_c)

/* ------------------------------------------------------------ sends */

static int bsend(const char *func, const void *buf, MPI_Aint count, MPI_Datatype type, int dest,
                 int tag, MPI_Comm comm)
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    fmpl_mpi_buf b;
    int rc = fmpl_mpi_p2p_check(func, comm, buf, count, type, dest, tag, 0, &c, &b);
    if (rc != MPI_SUCCESS || dest == MPI_PROC_NULL)
        return rc;
    return fmpl_mpi_bsend_start(func, comm, c->team, &b, dest, tag);
}

static int ibsend(const char *func, const void *buf, MPI_Aint count, MPI_Datatype type,
                  int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    FMPL_MPI_CHECK_READY(comm);
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    int rc = bsend(func, buf, count, type, dest, tag, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_request *r = fmpl_mpi_request_new();
    if (!r)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a request");
    /* Complete now: the message is in the attached buffer (or goes
     * nowhere, to MPI_PROC_NULL). */
    r->kind = FMPL_MREQ_SEND;
    r->comm = comm;
    if (dest == MPI_PROC_NULL) {
        r->proc_null = 1;
    } else {
        r->kind = FMPL_MREQ_DONE;
        r->error = MPI_SUCCESS;
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return bsend("MPI_Bsend", buf, count, type, dest, tag, comm);
}
FMPL_MPI_WEAK(Bsend)

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                 MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return bsend("MPI_Bsend_c", buf, count, type, dest, tag, comm);
}
FMPL_MPI_WEAK(Bsend_c)

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return ibsend("MPI_Ibsend", buf, count, type, dest, tag, comm, request);
}
FMPL_MPI_WEAK(Ibsend)

int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return ibsend("MPI_Ibsend_c", buf, count, type, dest, tag, comm, request);
}
FMPL_MPI_WEAK(Ibsend_c)

/* ------------------------------------------------------------ finalize */

/* MPI_Finalize delivers what is still in the attached buffer (as if the
 * buffer were detached) before the fabric goes away. */
void fmpl_mpi_bsend_finalize(void) { drain_and_forget(); }
