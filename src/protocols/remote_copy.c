/* Remote copies with notification (seed 004: nicam_bcopy_notify,
 * nicam_bcopy_countup, nicam_sync).
 *
 * Every address is a symmetric one: arena offset o names rank r's segment
 * bytes seg_off + o (fabric/symmetric.h), reached by loads and stores on
 * this host and by one remote operation under r's segment key over the
 * network.  A note is SET (store a 64-bit value into a word) or COUNT (add
 * 1 to a word), always at the rank whose memory received the data.
 *
 * Put, I -> D (fmpl_put_notify; fmpl_copy with src_rank == I):
 *   1. I puts the bytes into D's arena                 fmpl_fab_put
 *   2. I applies the note at D:
 *        SET    release-store of the value             fmpl_fab_notify
 *        COUNT  fetch-add of 1                         fmpl_fab_fetch_add
 *      Both act after step 1's bytes are placed (fabric.h, "Ordering"), so
 *      D, having seen the word with an acquire load, sees the data.  The
 *      note completes the copy for D; for I it is complete (src reusable)
 *      on return.
 * Get, I <- S (fmpl_get_notify):
 *   1. I gets the bytes from S's arena                 fmpl_fab_get
 *      (complete on return)
 *   2. I applies the note at itself, as above.
 * Forwarded, S -> D asked by I (fmpl_copy with src_rank S != I; D may be I:
 * NICAM's get, or a third rank: a third-party copy):
 *   1. I publishes a REMOTE_COPY record {src, dst, D, size, note, I's
 *      acknowledgement line} on the channel I -> S (channel.c) and counts
 *      it in issued[S]; fmpl_copy returns
 *   2. S's progress (fmpl_progress: the handler below; the agent's, once it
 *      runs) checks the record against its arena: src inside one of its
 *      live blocks, dst and the note's word inside the arena; then puts the
 *      bytes into D and applies the note at D, as Put 1-2
 *   3. if D != I: S flushes its writes to D (fmpl_fab_flush: placed there)
 *   4. S release-stores done[I] += 1 into I's line for S  fmpl_fab_notify
 *      (a refused record first stores failed[I] += 1 into the line's
 *      second word, and nothing else happens at D)
 *   Records from I to S are taken in order, so S's count of done records
 *   is the number of I's copies it has finished.
 * Sync, I (fmpl_copy_sync):
 *   1. wait until every member S's line says done == issued[S] (progressing:
 *      a rank waiting here still serves the records others send it)
 *   2. fmpl_fab_flush(-1): I's own puts and notes are placed
 *   3. a failed count above the one seen at the last sync is reported.
 *   So on return every copy I issued is delivered at its destination: the
 *   remote-delivery point (NICAM's nicam_sync; the note left it open).
 * Counts are monotonic and never reset; a line's words are each written by
 * one rank only (S), so over the network a word that arrives in pieces
 * reads smaller, never larger (fabric.h). */
#include "protocols/remote_copy.h"
#include "protocols/channel.h"
#include "fabric/symmetric.h"
#include "base/error.h"
#include "base/log.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct fwd_body {
    uint64_t src_off, dst_off;
    uint64_t word_off, value;
    uint64_t ack_off;   /* I's line for S: offset in I's segment */
    int32_t dst;        /* D, a world rank */
    int32_t kind;       /* the note's kind */
} fwd_body;

/* I's acknowledgement line for one source S, in I's heap: S writes both. */
typedef struct ack_line {
    _Atomic uint64_t done;
    _Atomic uint64_t failed;
} ack_line;

/* Remote copies run among the members of one world (the native API's
 * teams): acks is by world index, the rest by universe rank. */
static ack_line *acks;          /* [world size], mine, written by the sources */
static uint64_t *issued;        /* [capacity] records I sent to each source */
static uint64_t *failed_seen;   /* [capacity] failed counts already reported */
static uint64_t *served_done;   /* [capacity] S side: records finished per issuer */
static uint64_t *served_failed; /* [capacity] S side: records refused per issuer */

static ack_line *ack_of(int w) { return &acks[fmpl_fab_world_index(w)]; }

static void on_forward(fmpl_chan_rec *rec, int from);

int fmpl_rc_init(void)
{
    int n = fmpl_fab.size, cap = fmpl_fab.capacity;
    acks = fmpl_fab_alloc((size_t)n * sizeof *acks);
    issued = calloc((size_t)cap, sizeof *issued);
    failed_seen = calloc((size_t)cap, sizeof *failed_seen);
    served_done = calloc((size_t)cap, sizeof *served_done);
    served_failed = calloc((size_t)cap, sizeof *served_failed);
    if (!acks || !issued || !failed_seen || !served_done || !served_failed)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for remote-copy state of %d ranks", n);
    for (int r = 0; r < n; r++) {
        atomic_store(&acks[r].done, 0);
        atomic_store(&acks[r].failed, 0);
    }
    fmpl_chan_register_type(FMPL_CHAN_TYPE_REMOTE_COPY, on_forward);
    return FMPL_SUCCESS;
}

void fmpl_rc_finalize(void)
{
    if (acks)
        fmpl_fab_free(acks);
    free(issued);
    free(failed_seen);
    free(served_done);
    free(served_failed);
    acks = NULL;
    issued = failed_seen = served_done = served_failed = NULL;
}

/* Step 2 of Put and Get: the note at world rank w. */
static int apply_note(int w, int kind, uint64_t word_off, uint64_t value)
{
    fmpl_raddr word = fmpl_sym_raddr(word_off, w);
    if (kind == FMPL_NOTIFY_SET)
        return fmpl_fab_notify(word, value);
    if (kind == FMPL_NOTIFY_COUNT && fmpl_fab_fetch_add(word, 1) == UINT64_MAX &&
        fmpl_fab.net_atomics)
        return FMPL_ERR_INTERNAL; /* the network backend reported it */
    return FMPL_SUCCESS;
}

int fmpl_rc_put(const void *src, size_t size, int dst_w, uint64_t dst_off,
                const fmpl_rc_note *note)
{
    int rc = size ? fmpl_fab_put(fmpl_sym_fabric_view(src), size, fmpl_sym_raddr(dst_off, dst_w))
                  : FMPL_SUCCESS;
    if (rc == FMPL_SUCCESS && note)
        rc = apply_note(dst_w, note->kind, note->word_off, note->value);
    return rc;
}

int fmpl_rc_get(void *dst, size_t size, int src_w, uint64_t src_off, const fmpl_rc_note *note)
{
    int rc = size ? fmpl_fab_get(fmpl_sym_fabric_view(dst), size, fmpl_sym_raddr(src_off, src_w))
                  : FMPL_SUCCESS;
    if (rc == FMPL_SUCCESS && note)
        rc = apply_note(fmpl_fab.rank, note->kind, note->word_off, note->value);
    return rc;
}

/* Forwarded, step 1. */
int fmpl_rc_forward(int src_w, uint64_t src_off, int dst_w, uint64_t dst_off, size_t size,
                    const fmpl_rc_note *note)
{
    fmpl_chan_rec *rec = fmpl_chan_reserve(src_w, (int64_t)sizeof(fwd_body));
    rec->type = FMPL_CHAN_TYPE_REMOTE_COPY;
    rec->context = 0;
    rec->tag = 0;
    rec->source = fmpl_fab.rank;
    rec->size = (int64_t)size;
    fwd_body *b = fmpl_chan_payload(rec);
    b->src_off = src_off;
    b->dst_off = dst_off;
    b->kind = note ? note->kind : FMPL_NOTIFY_NONE;
    b->word_off = note ? note->word_off : 0;
    b->value = note ? note->value : 0;
    b->ack_off = fmpl_fab_raddr(ack_of(src_w)).addr;
    b->dst = dst_w;
    issued[src_w]++;
    fmpl_chan_publish(src_w, rec);
    return FMPL_SUCCESS;
}

/* Forwarded, step 2's checks: why the record cannot be carried out, or NULL. */
static const char *refusal(const fwd_body *b, uint64_t size)
{
    if (b->dst < 0 || b->dst >= fmpl_fab.capacity || !fmpl_fab.peers[b->dst].linked)
        return "the destination rank does not exist";
    if (size && !fmpl_sym_in_block(b->src_off, size))
        return "the source is not inside one of this rank's symmetric blocks";
    if (size && (b->dst_off > fmpl_sym.size || size > fmpl_sym.size - b->dst_off))
        return "the destination is outside the symmetric arena";
    if (b->kind != FMPL_NOTIFY_NONE &&
        (b->kind < 0 || b->kind > FMPL_NOTIFY_COUNT || (b->word_off & 7) ||
         fmpl_sym.size < 8 || b->word_off > fmpl_sym.size - 8))
        return "the note is malformed or its word is outside the symmetric arena";
    return NULL;
}

/* Forwarded, steps 2-4, at S, inside progress. */
static void on_forward(fmpl_chan_rec *rec, int from)
{
    fwd_body b;
    memcpy(&b, fmpl_chan_payload(rec), sizeof b);
    uint64_t size = (uint64_t)rec->size;
    const char *why = refusal(&b, size);
    int rc = FMPL_SUCCESS;
    if (!why) {
        if (size)
            rc = fmpl_fab_put(fmpl_sym_local(b.src_off), size, fmpl_sym_raddr(b.dst_off, b.dst));
        if (rc == FMPL_SUCCESS)
            rc = apply_note(b.dst, b.kind, b.word_off, b.value);
        if (rc == FMPL_SUCCESS && b.dst != from)
            rc = fmpl_fab_flush(b.dst); /* step 3 */
        if (rc != FMPL_SUCCESS)
            why = fmpl_error_string(rc);
    }
    fmpl_raddr line = {.addr = b.ack_off, .rank = from, .kind = FMPL_MEM_SHARED, .key = 0};
    if (why) {
        fmpl_log_error("remote copy of %llu bytes from offset %#llx to rank %d at offset %#llx, "
                       "asked by rank %d, refused: %s",
                       (unsigned long long)size, (unsigned long long)b.src_off, b.dst,
                       (unsigned long long)b.dst_off, from, why);
        fmpl_raddr second = line;
        second.addr += offsetof(ack_line, failed);
        fmpl_fab_notify(second, ++served_failed[from]);
    }
    fmpl_fab_notify(line, ++served_done[from]); /* step 4 */
}

int fmpl_rc_acked(const int *world, int n)
{
    for (int i = 0; i < n; i++) {
        int w = world[i];
        if (atomic_load_explicit(&ack_of(w)->done, memory_order_acquire) < issued[w])
            return 0;
    }
    return 1;
}

int fmpl_rc_sync_finish(const int *world, int n)
{
    int rc = fmpl_fab_flush(-1);
    for (int i = 0; i < n; i++) {
        int w = world[i];
        uint64_t failed = atomic_load_explicit(&ack_of(w)->failed, memory_order_acquire);
        if (failed > failed_seen[w]) {
            rc = FMPL_ERROR(FMPL_ERR_ARG,
                            "rank %d refused %llu of the copies forwarded to it (its log says "
                            "why); nothing was written for those",
                            w, (unsigned long long)(failed - failed_seen[w]));
            failed_seen[w] = failed;
        }
    }
    return rc;
}
