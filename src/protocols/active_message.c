/* Active messages over the per-pair channels (channel.c).
 *
 * Record AM (type FMPL_CHAN_TYPE_AM):
 *   {context: R's id of the communicator, tag: handler id, source: S's rank
 *    in it, flags: nargs | reply << 8, size: payload bytes}
 *   then nargs argument words, then the payload (8-byte aligned both).
 *
 * S sends a message to R (fmpl_am_send from the program):
 *   1. if messages that S's handlers queued for R still wait, S first sends
 *      them, oldest first, as long as R's ring has room (step 2);
 *   2. S reserves a record in S->R (channel.c steps 1-3; a remote read of
 *      R's head when its cached copy says the ring may be full);
 *   3. S writes the record's fields, the arguments and the payload, and
 *      publishes it (channel.c step 4: release-store of its sequence word,
 *      or one flagged put to a network peer).
 *   While 1 leaves messages queued, or 2 finds no room, S progresses
 *   (the API loop) and tries again: R drains its rings in its progress.
 * S sends from inside a handler (fmpl_am_send, fmpl_am_reply):
 *   2h. S tries 2 once, and only when nothing is queued for R;
 *   3h. on success as 3; otherwise S copies the message to the tail of
 *       its queue for R and returns.  Every later progress pass does 1
 *       (fmpl_am_progress, called while anything is queued).  So a handler
 *       never waits for R, and never re-enters progress (which would take
 *       the record being handled a second time).
 * R, in progress (channel.c step 5, through tag_match.c's dispatch):
 *   4. finds the record at its head and looks the id up: no handler ends
 *      the job, naming the id and S (a message lost would leave the
 *      program waiting for ever);
 *   5. calls the handler with the arguments and payload where they are in
 *      the ring, then releases the record (channel.c step 6).
 * Order: each pair's channel is first-in first-out, and queued messages go
 * before any later one to the same target (1, 2h), so R runs S's messages
 * in the order S sent them. */
#include "protocols/active_message.h"
#include "protocols/channel.h"
#include "base/error.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct am_slot {
    fmpl_am_handler fn;
    void *ctx;
} am_slot;
static am_slot handlers[FMPL_AM_MAX_ID + 1];

/* A queued message: its record's fields, then the body as in the record. */
typedef struct am_entry {
    uint32_t body;    /* bytes: nargs words, then the payload */
    int32_t context;
    int32_t id;
    int32_t source;
    uint32_t flags;
    uint32_t pad;
    int64_t size;
} am_entry;

/* One per target world rank: entries [head, tail) of buf, oldest first.
 * No memory until a handler first finds that target's ring full. */
typedef struct am_queue {
    char *buf;
    size_t head, tail, cap;
} am_queue;
static am_queue *queues;
static int nqueues;

uint64_t fmpl_am_queued;
int fmpl_am_handler_depth;
uint64_t fmpl_am_handled;

static size_t entry_bytes(size_t body) { return sizeof(am_entry) + ((body + 7) & ~(size_t)7); }

size_t fmpl_am_payload_max(void)
{
    if (fmpl_chan_max_record <= 0)
        return 0;
    return (size_t)fmpl_chan_max_record - FMPL_CHAN_HEADER - 8 * FMPL_AM_MAX_ARGS;
}

void fmpl_am_set_handler(int id, fmpl_am_handler fn, void *ctx)
{
    handlers[id].ctx = ctx;
    handlers[id].fn = fn;
}

/* Step 4: an id nobody registered here.  The job cannot go on correctly. */
__attribute__((noreturn)) static void no_handler(int id, int from, const fmpl_chan_rec *rec)
{
    char msg[400];
    snprintf(msg, sizeof msg,
             "active message for handler id %d from rank %d (rank %d of communicator %d): no "
             "handler is registered for id %d on this rank (every rank registers its ids "
             "with fmpl_am_register before any rank sends to them)",
             id, from, rec->source, rec->context, id);
    fmpl_log_print("error", "%s; ending the job", msg);
    fflush(NULL);
    fmpl_fab.bs->abort(fmpl_fab.bs, 1, msg);
}

/* Steps 4-5. */
static void handle(fmpl_chan_rec *rec, int from)
{
    int id = rec->tag;
    if (id < 0 || id > FMPL_AM_MAX_ID || !handlers[id].fn)
        no_handler(id, from, rec);
    int nargs = (int)(rec->flags & 0xff);
    const uint64_t *args = fmpl_chan_payload(rec);
    fmpl_am_token token = {.source = rec->source,
                           .comm = rec->context,
                           .is_reply = (int)((rec->flags >> 8) & 1)};
    fmpl_am_handler_depth++;
    handlers[id].fn(&token, nargs ? args : NULL, nargs, rec->size ? args + nargs : NULL,
                    (size_t)rec->size, handlers[id].ctx);
    fmpl_am_handler_depth--;
    fmpl_am_handled++;
}

int fmpl_am_init(void)
{
    nqueues = fmpl_fab.capacity;
    queues = calloc((size_t)nqueues, sizeof *queues);
    if (!queues)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d active-message queues",
                          nqueues);
    fmpl_am_queued = 0;
    fmpl_chan_register_type(FMPL_CHAN_TYPE_AM, handle);
    return FMPL_SUCCESS;
}

void fmpl_am_finalize(void)
{
    for (int w = 0; queues && w < nqueues; w++)
        free(queues[w].buf);
    free(queues);
    queues = NULL;
    nqueues = 0;
    fmpl_am_queued = 0;
    fmpl_chan_register_type(FMPL_CHAN_TYPE_AM, NULL);
}

/* Step 3: fill a reserved record and publish it. */
static void publish(int w, fmpl_chan_rec *rec, int32_t context, int id, int32_t source,
                    uint32_t flags, const uint64_t *args, int nargs, const void *payload,
                    size_t size)
{
    rec->type = FMPL_CHAN_TYPE_AM;
    rec->context = context;
    rec->tag = id;
    rec->source = source;
    rec->flags = flags;
    rec->size = (int64_t)size;
    uint64_t *body = fmpl_chan_payload(rec);
    if (nargs)
        memcpy(body, args, 8 * (size_t)nargs);
    if (size)
        memcpy(body + nargs, payload, size);
    fmpl_chan_publish(w, rec);
}

/* Step 1 for one target: 1 once nothing is queued for it. */
static int flush(int w)
{
    am_queue *q = &queues[w];
    while (q->head < q->tail) {
        am_entry *e = (am_entry *)(q->buf + q->head);
        fmpl_chan_rec *rec = fmpl_chan_try_reserve(w, e->body);
        if (!rec)
            return 0;
        int nargs = (int)(e->flags & 0xff);
        const uint64_t *body = (const uint64_t *)(e + 1);
        publish(w, rec, e->context, e->id, e->source, e->flags, body, nargs, body + nargs,
                (size_t)e->size);
        q->head += entry_bytes(e->body);
        fmpl_am_queued--;
    }
    q->head = q->tail = 0;
    return 1;
}

int fmpl_am_progress(void)
{
    int sent = 0;
    for (int w = 0; w < nqueues && fmpl_am_queued; w++) {
        am_queue *q = &queues[w];
        if (q->head == q->tail)
            continue;
        uint64_t before = fmpl_am_queued;
        flush(w);
        sent += (int)(before - fmpl_am_queued);
    }
    return sent;
}

static uint32_t flags_of(int nargs, int reply) { return (uint32_t)nargs | (uint32_t)reply << 8; }

int fmpl_am_try_send(fmpl_team *t, int dst, int id, const uint64_t *args, int nargs,
                     const void *payload, size_t size, int reply)
{
    int w = t->world[dst];
    if (queues[w].head != queues[w].tail && !flush(w))
        return 0;
    fmpl_chan_rec *rec = fmpl_chan_try_reserve(w, 8 * (int64_t)nargs + (int64_t)size);
    if (!rec)
        return 0;
    publish(w, rec, t->peer_id[dst], id, t->rank, flags_of(nargs, reply), args, nargs, payload,
            size);
    return 1;
}

/* Step 3h: room for `need` more bytes at the queue's tail (compacting
 * first, then growing: outside the usual path, a handler found a ring
 * full). */
static int queue_room(am_queue *q, size_t need)
{
    if (q->tail + need <= q->cap)
        return FMPL_SUCCESS;
    if (q->head) {
        memmove(q->buf, q->buf + q->head, q->tail - q->head);
        q->tail -= q->head;
        q->head = 0;
    }
    if (q->tail + need <= q->cap)
        return FMPL_SUCCESS;
    size_t cap = q->cap ? q->cap : 64 * 1024;
    while (cap < q->tail + need)
        cap *= 2;
    char *buf = realloc(q->buf, cap);
    if (!buf)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY,
                          "no memory to queue an active message (%zu bytes queued for one "
                          "target)", q->tail);
    q->buf = buf;
    q->cap = cap;
    return FMPL_SUCCESS;
}

int fmpl_am_send_or_queue(fmpl_team *t, int dst, int id, const uint64_t *args, int nargs,
                          const void *payload, size_t size, int reply)
{
    int w = t->world[dst];
    am_queue *q = &queues[w];
    if (q->head == q->tail && fmpl_am_try_send(t, dst, id, args, nargs, payload, size, reply))
        return FMPL_SUCCESS;
    size_t body = 8 * (size_t)nargs + size;
    int rc = queue_room(q, entry_bytes(body));
    if (rc != FMPL_SUCCESS)
        return rc;
    am_entry *e = (am_entry *)(q->buf + q->tail);
    *e = (am_entry){.body = (uint32_t)body,
                    .context = t->peer_id[dst],
                    .id = id,
                    .source = t->rank,
                    .flags = flags_of(nargs, reply),
                    .size = (int64_t)size};
    uint64_t *to = (uint64_t *)(e + 1);
    if (nargs)
        memcpy(to, args, 8 * (size_t)nargs);
    if (size)
        memcpy(to + nargs, payload, size);
    q->tail += entry_bytes(body);
    fmpl_am_queued++;
    return FMPL_SUCCESS;
}
