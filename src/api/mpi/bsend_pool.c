/* The buffers of buffered sends (bsend_pool.h): copying a message in,
 * sending it from there, reclaiming its space, flushes.
 *
 * A buffered send copies the message into a pool (a non-contiguous
 * datatype is packed straight into it) and sends it from there with the
 * tag-matched protocol, so it completes as soon as the copy is made.  The
 * space is reclaimed once the protocol's send completes: at once for an
 * eager message (the protocol copies it into the channel), at FIN for a
 * rendezvous one.
 *
 * A user buffer is managed as MPI's model implementation describes it
 * (MPI-4.0 3.6.1): a circular queue of entries, each a header followed by
 * the message.  A new entry goes after the newest one, or at the start of
 * the buffer when the end is too close; completed entries are reclaimed
 * from the oldest on; a message that does not fit is an error
 * (MPI_ERR_BUFFER), never a wait.  So FMPL buffers at least what the model
 * promises; an empty queue starts again at the beginning of the buffer.
 * An automatic pool (MPI_BUFFER_AUTOMATIC, MPI-4.1 3.6) has the same queue
 * with each entry malloc'ed for its message and freed when reclaimed.
 *
 * Overhead, against mpi.h's MPI_BSEND_OVERHEAD (96, MPICH's value): an entry
 * is a 32-byte header plus the message rounded up to 16 bytes, so at most
 * 32 + 15 = 47 bytes per message, and aligning the buffer's start costs at
 * most 15 bytes once.  A buffer of sum(size_i + MPI_BSEND_OVERHEAD) bytes
 * therefore holds those messages at the same time.  The protocol's request
 * (fmpl_tm_req, 112 bytes) would not fit in the overhead: it lives outside
 * the buffer, in a grow-only pool of records the header points to, so after
 * warm-up a buffered send to a user buffer allocates nothing.
 *
 * Flushes count messages: `posted` entered the pool, `retired` were
 * reclaimed (oldest first), so a flush called when posted was n is done
 * once retired reaches n, whatever was sent after it.  A pending iflush
 * holds the pool (`flushes`): a pool detached or orphaned meanwhile is
 * freed by the last of them. */
#include "api/mpi/bsend_pool.h"
#include "progress/async.h"
#include "progress/progress.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 16

typedef struct bsend_msg {
    fmpl_tm_req tm;              /* the send from the buffer; the protocol points here */
    struct bsend_msg *next_free;
} bsend_msg;

/* At the start of every entry. */
typedef struct entry {
    uint64_t len;                /* bytes of the entry, header included */
    struct entry *next;          /* the next newer entry, or NULL */
    bsend_msg *msg;
    uint64_t bytes;              /* the message's size */
} entry;

_Static_assert(sizeof(entry) % ALIGN == 0, "entries keep the alignment");
_Static_assert(sizeof(entry) + ALIGN - 1 <= MPI_BSEND_OVERHEAD,
               "an entry's bookkeeping fits in MPI_BSEND_OVERHEAD");

struct fmpl_bsend_pool {
    fmpl_bsend_pool *next_pool;  /* every pool, for MPI_Finalize */
    fmpl_bsend_pool **slot;      /* the owner's pointer to it; NULL once detached */
    int automatic;
    void *user;                  /* as attached */
    MPI_Count user_size;
    char *base;                  /* user buffer: first aligned byte */
    uint64_t cap;                /* user buffer: usable bytes from base */
    entry *head, *tail;          /* the oldest and newest entries */
    uint64_t used;               /* bytes in entries */
    int pending;                 /* entries */
    uint64_t posted, retired;    /* messages entered, reclaimed */
    int flushes;                 /* pending iflush requests */
};

static fmpl_bsend_pool *pools; /* every pool not yet freed */

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

static uint64_t off(const fmpl_bsend_pool *p, const entry *e)
{
    return (uint64_t)((const char *)e - p->base);
}

/* Free the entries of completed sends, oldest first, up to the first one
 * still in flight. */
static void reclaim(fmpl_bsend_pool *p)
{
    while (p->head && p->head->msg->tm.complete) {
        entry *e = p->head;
        msg_put(e->msg);
        p->used -= e->len;
        p->pending--;
        p->retired++;
        p->head = e->next;
        if (p->automatic)
            free(e);
    }
    if (!p->head)
        p->tail = NULL;
}

/* Where an entry of n bytes fits in a user buffer: after the newest entry,
 * or at the start of the buffer when the end is too close (the model's
 * rule). */
static entry *find_space(fmpl_bsend_pool *p, uint64_t n)
{
    if (!p->head)
        return n <= p->cap ? (entry *)(void *)p->base : NULL;
    uint64_t first = off(p, p->head), end = off(p, p->tail) + p->tail->len;
    uint64_t at;
    if (end > first) { /* not wrapped: [first, end) in use */
        if (n <= p->cap - end)
            at = end;
        else if (n <= first)
            at = 0;
        else
            return NULL;
    } else { /* wrapped: [first, cap) and [0, end) in use */
        if (n > first - end)
            return NULL;
        at = end;
    }
    return (entry *)(void *)(p->base + at);
}

static void pool_free(fmpl_bsend_pool *p)
{
    fmpl_bsend_pool **link = &pools;
    while (*link != p)
        link = &(*link)->next_pool;
    *link = p->next_pool;
    free(p);
}

/* Wait until `retired` reaches target. */
static void wait_retired(fmpl_bsend_pool *p, uint64_t target)
{
    fmpl_waiter w = FMPL_WAITER_INIT;
    for (;;) {
        reclaim(p);
        if (p->retired >= target)
            return;
        if (!fmpl_progress())
            fmpl_wait_once(&w);
    }
}

int fmpl_bsend_pool_send(fmpl_bsend_pool *p, const char *func, MPI_Comm comm, fmpl_team *team,
                         const fmpl_mpi_buf *b, int dest, int tag)
{
    MPI_Aint bytes = b->bytes;
    uint64_t n = sizeof(entry) + ((uint64_t)bytes + ALIGN - 1) / ALIGN * ALIGN;
    reclaim(p);
    entry *e;
    if (p->automatic) {
        e = malloc(n);
        if (!e)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func,
                                  "no memory to buffer a message of %ld bytes "
                                  "(MPI_BUFFER_AUTOMATIC)", (long)bytes);
    } else if (!(e = find_space(p, n))) {
        fmpl_progress();
        reclaim(p);
        if (!(e = find_space(p, n)))
            return fmpl_mpi_error(
                comm, MPI_ERR_BUFFER, func,
                "a buffered message of %ld bytes needs %lu bytes of the attached buffer, which "
                "has %lu of %ld bytes in use by %d pending messages (attach a larger buffer: "
                "MPI_BSEND_OVERHEAD = %d bytes per message)",
                (long)bytes, (unsigned long)n, (unsigned long)p->used, (long)p->user_size,
                p->pending, MPI_BSEND_OVERHEAD);
    }
    bsend_msg *m = msg_get();
    if (!m) {
        if (p->automatic)
            free(e);
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a buffered send");
    }
    e->len = n;
    e->next = NULL;
    e->msg = m;
    e->bytes = (uint64_t)bytes;
    char *payload = (char *)(e + 1);
    int64_t packed;
    if (b->type) /* non-contiguous: packed straight into the buffer */
        fmpl_dt_pack(b->user, b->count, b->type, 0, payload, bytes, &packed);
    else if (bytes)
        memcpy(payload, b->data, (size_t)bytes);
    if (p->tail)
        p->tail->next = e;
    else
        p->head = e;
    p->tail = e;
    p->used += n;
    p->pending++;
    p->posted++;
    fmpl_tm_isend(&m->tm, team, payload, bytes, dest, tag, FMPL_TM_MODE_STANDARD);
    reclaim(p); /* an eager message is already out of the buffer */
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ attach, detach */

int fmpl_bsend_attach_refusal(const fmpl_bsend_pool *attached, const void *buffer,
                              MPI_Count size, const char **why)
{
    if (attached) {
        *why = "a buffer is already attached (detach it first)";
        return MPI_ERR_BUFFER;
    }
    if (buffer == MPI_BUFFER_AUTOMATIC) /* the size is not looked at */
        return MPI_SUCCESS;
    if (size < 0) {
        *why = "the size is negative";
        return MPI_ERR_ARG;
    }
    if (!buffer && size > 0) {
        *why = "the buffer is NULL with a positive size";
        return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

int fmpl_bsend_size_to_int(MPI_Count n, int *size)
{
    if (n > INT_MAX) {
        *size = MPI_UNDEFINED;
        return MPI_ERR_COUNT;
    }
    *size = (int)n;
    return MPI_SUCCESS;
}

int fmpl_bsend_pool_attach(fmpl_bsend_pool **slot, void *buffer, MPI_Count size)
{
    fmpl_bsend_pool *p = calloc(1, sizeof *p);
    if (!p)
        return MPI_ERR_NO_MEM;
    p->slot = slot;
    p->user = buffer;
    if (buffer == MPI_BUFFER_AUTOMATIC) {
        p->automatic = 1;
    } else {
        uintptr_t u = (uintptr_t)buffer, a = (u + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
        p->user_size = size;
        p->base = (char *)buffer + (a - u);
        p->cap = (uint64_t)size > a - u ? (uint64_t)size - (a - u) : 0;
    }
    p->next_pool = pools;
    pools = p;
    *slot = p;
    return MPI_SUCCESS;
}

/* The owner lets go of p: freed now unless an iflush still holds it. */
static void release(fmpl_bsend_pool *p)
{
    *p->slot = NULL;
    p->slot = NULL;
    if (!p->flushes && !p->head)
        pool_free(p);
}

void fmpl_bsend_pool_detach(fmpl_bsend_pool **slot, void **buffer, MPI_Count *size)
{
    fmpl_bsend_pool *p = *slot;
    if (!p) {
        *buffer = NULL;
        *size = 0;
        return;
    }
    *buffer = p->user;
    *size = p->user_size;
    wait_retired(p, p->posted);
    release(p);
}

MPI_Count fmpl_bsend_pool_size(const fmpl_bsend_pool *p) { return p->user_size; }

void fmpl_bsend_pool_orphan(fmpl_bsend_pool **slot)
{
    if (*slot)
        release(*slot);
}

/* ------------------------------------------------------------ flushes */

void fmpl_bsend_pool_flush(fmpl_bsend_pool *p)
{
    if (p)
        wait_retired(p, p->posted);
}

typedef struct iflush {
    fmpl_async async;
    fmpl_bsend_pool *pool;
    uint64_t target;
} iflush;

static int iflush_poll(fmpl_async *a)
{
    iflush *f = (iflush *)a;
    reclaim(f->pool);
    return f->pool->retired >= f->target;
}

/* Wait/Test found it done: the pool is let go (freed if its owner has
 * detached it meanwhile), the state freed. */
static int iflush_complete(fmpl_mpi_request *r)
{
    iflush *f = r->async_state;
    fmpl_bsend_pool *p = f->pool;
    p->flushes--;
    if (!p->slot && !p->flushes && !p->head)
        pool_free(p);
    free(f);
    r->async_state = NULL;
    return MPI_SUCCESS;
}

int fmpl_bsend_pool_iflush(fmpl_bsend_pool *p, MPI_Comm comm, MPI_Request *request)
{
    iflush *f = p ? calloc(1, sizeof *f) : NULL;
    fmpl_mpi_request *r = !p || f ? fmpl_mpi_request_new() : NULL;
    if (!r) {
        free(f);
        return MPI_ERR_NO_MEM;
    }
    if (!p) { /* nothing attached: nothing to wait for */
        r->kind = FMPL_MREQ_DONE;
        r->comm = comm;
        r->error = MPI_SUCCESS;
        *request = r->handle;
        return MPI_SUCCESS;
    }
    f->pool = p;
    f->target = p->posted;
    p->flushes++;
    fmpl_mpi_async_request_start(r, comm, &f->async, iflush_complete, f);
    r->async_freeable = 1; /* a local operation: MPI_Request_free may drop it */
    fmpl_async_start(&f->async, iflush_poll); /* not self-driven: the sends need progress */
    *request = r->handle;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ finalize */

/* MPI_Finalize delivers what is still in every pool (as if each were
 * detached) before the fabric goes away.  A pool an unfinished iflush
 * request holds stays listed (drained): the request may still look at it. */
void fmpl_mpi_bsend_finalize(void)
{
    for (fmpl_bsend_pool *p = pools; p; p = p->next_pool)
        wait_retired(p, p->posted);
    fmpl_bsend_pool **link = &pools;
    while (*link) {
        fmpl_bsend_pool *p = *link;
        if (p->flushes) {
            link = &p->next_pool;
            continue;
        }
        if (p->slot)
            *p->slot = NULL;
        *link = p->next_pool;
        free(p);
    }
}
