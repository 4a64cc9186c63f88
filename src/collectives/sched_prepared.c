/* Prepared messages: the SEND/RECV pairs of a persistent schedule as one
 * put each (seed 002: the schedule prepared once at init, the start a
 * doorbell, the wait one word; sched.h).
 *
 * Which pairs (fmpl_sched_prepared_mode): both ends must choose alike, so
 * the choice rests on what both see, the message's size and whether the
 * peer is reached over the network, never on the rest of either's schedule
 * (a gatherv's root receives large and small messages, its leaves send one
 * each).  Mailbox: messages of at most PREPARED_MAX (16 KiB, the eager
 * limit) bytes, on any team, across hosts too.  Direct: larger ones to a
 * network peer (FMPL_PREPARED_DIRECT).  Others keep the READY tokens and
 * the tag-matched protocol (sched.c).  The setup message (below) goes on
 * the lane's data tag: each end sends and posts its setups at prepare, in
 * step order, before any data message of the schedule is sent or its
 * receive posted, so on every (sender, tag) the setups come first and
 * match the setup receives, whatever mix of kinds the pair has.
 *
 * Mailbox, per SEND/RECV pair, sender S, receiver R, instance k (counted
 * per step: a persistent request completes before it starts again):
 *   prepare  R allocates a mailbox in its shared heap: line 0 holds
 *            `taken`, how many entries R has copied out; then `slots`
 *            entries of `stride` bytes each, {sequence (32 bits), length
 *            (32 bits), data}, the stride the entry rounded up to whole
 *            lines, as many slots as fit 64 KiB (4 to 64: mailbox_slots).
 *            R sends {the mailbox's packed address, stride} to S (one
 *            eager message on the lane's data tag; address 0 when R has
 *            no memory for it); S posts its receive.  Both are done at
 *            *_init, once.
 *   S, k     (first instance: the address has arrived; S's message must
 *            fit R's entries, else the instance fails with a truncation
 *            error, nothing written) entry slot k % slots is free once
 *            taken >= k + 1 - slots: S keeps the last value it read and
 *            reads R's line 0 again (a get: a load on shared memory, a
 *            round trip over the network) only when that is short, so
 *            once per `slots` entries while R keeps up; S builds
 *            {k + 1, length, data} in its staging buffer and puts it there
 *            with the flag last (fmpl_fab_put_flagged: one network
 *            operation up to 16 KiB).  S's instance is complete: its buffer
 *            may be rewritten.
 *   R, k     wait until the slot's first word carries sequence k + 1
 *            (acquire); copy the data out; release-store taken = k + 1.
 * Nothing is written into S's memory, so R never touches memory S may have
 * freed: S reads R's mailbox only before its own puts, and R frees the
 * mailbox only after it has taken every entry S put (both sides run the
 * same number of instances, as MPI requires).  A request freed before its
 * first start may leave R's address message unread in S's unexpected
 * queue (one small message; its tag is never used again).
 * Against the readiness protocol (sched.c), an instance costs the receiver
 * no READY message and the sender no wait for one: the data goes at once.
 * Across the namespace hosts (2 x 1 rank, TCP), 64 B to 8 KiB persistent
 * broadcasts took 12.3-17.8 us with the tokens and take 5.2-11.5 us
 * prepared (MPICH 5.9-9.7 us).
 *
 * Direct (a message above 16 KiB to a network peer), same names:
 *   prepare  R registers its buffer (fmpl_fab_register: the key travels)
 *            and allocates a completion line in its shared heap; R sends
 *            {buffer address, kind, key, the line's packed address, its
 *            size} to S as above; S posts that receive, and the receive
 *            of instance 0's READY token (a zero-byte message on the
 *            lane's ready tag, as sched.c's tokens).
 *   R, k     (issue) send the token: its buffer may be written.
 *   S, k     once the setup and the token are in: post the receive of the
 *            next token, put the data straight into R's buffer
 *            (fmpl_fab_put: 256 KiB pieces over the network), then the
 *            line {k + 1, length} with the flag last (fmpl_fab_put_flagged,
 *            placed after the data); a message larger than R's buffer puts
 *            only the line, whose length R reports as a truncation.  S's
 *            instance is complete (a put's source is free on return).
 *   R, k     wait until the line's first word carries k + 1: the data is
 *            in its buffer.
 * Against the tokens: no RTS, no get and no FIN; one network operation of
 * R's per instance (the token) and two of S's. */
#include "collectives/sched.h"
#include "fabric/fabric.h"
#include "base/error.h"
#include "base/tunable.h"

#include <string.h>

FMPL_TUNABLE(tunable_prepared, "FMPL_PREPARED_MESSAGES", "on",
             "persistent collectives send each message of 16 KiB at most as one put into a "
             "mailbox the receiver prepared at init (on), or through the tag-matched "
             "protocol with a READY token per instance (off)");
FMPL_TUNABLE(tunable_direct, "FMPL_PREPARED_DIRECT", "on",
             "persistent collectives put each message above 16 KiB to a network peer straight "
             "into the receiver's buffer, registered at init, after its READY token (on), or "
             "send it through the tag-matched protocol (off)");

#define PREPARED_MAX 16384
/* The words of a direct receiver's setup message (fmpl_step.mailbox_at). */
enum { DIRECT_BUF_ADDR, DIRECT_BUF_KIND, DIRECT_BUF_KEY, DIRECT_LINE, DIRECT_SIZE, DIRECT_WORDS };
_Static_assert(DIRECT_WORDS * sizeof(uint64_t) == sizeof ((fmpl_step *)0)->mailbox_at,
               "fmpl_step.mailbox_at holds a direct setup message");
#define LINE 64
#define MAILBOX_TARGET (64 * 1024)

/* An entry's first word: sequence (low 32 bits), length (high 32 bits). */
typedef struct entry_head {
    _Atomic uint64_t head;
} entry_head;

static size_t entry_stride(int64_t bytes)
{
    return ((size_t)bytes + 8 + LINE - 1) / LINE * LINE;
}

/* Slots per mailbox: the sender reads `taken` once per this many entries,
 * a network round trip (9-10 us across the namespace hosts): with 16 slots
 * that added 0.6 us to every 8-byte instance, with 64 it adds 0.15. */
static uint64_t mailbox_slots(size_t stride)
{
    size_t n = MAILBOX_TARGET / stride;
    return n < 4 ? 4 : n > 64 ? 64 : n;
}

static fmpl_raddr lane_peer(const fmpl_sched *s, const fmpl_step *st, uint64_t packed)
{
    const fmpl_team *t = s->lanes[st->lane].team;
    return fmpl_raddr_unpack(packed, t->world[st->peer]);
}

int fmpl_sched_prepared_mode(const fmpl_sched *s, const fmpl_step *st)
{
    static const char *const choices[] = {"off", "on", NULL};
    static _Atomic int mailbox = -1, direct = -1;
    if (atomic_load_explicit(&mailbox, memory_order_relaxed) < 0) {
        atomic_store_explicit(&mailbox, fmpl_tunable_choice(&tunable_prepared, choices),
                              memory_order_relaxed);
        atomic_store_explicit(&direct, fmpl_tunable_choice(&tunable_direct, choices),
                              memory_order_relaxed);
    }
    if (st->bytes <= PREPARED_MAX)
        return atomic_load_explicit(&mailbox, memory_order_relaxed) == 1 ? FMPL_PREP_MAILBOX
                                                                         : FMPL_PREP_NONE;
    const fmpl_team *t = s->lanes[st->lane].team;
    return atomic_load_explicit(&direct, memory_order_relaxed) == 1 &&
                   st->bytes < INT32_MAX && fmpl_fab.peers[t->world[st->peer]].net
               ? FMPL_PREP_DIRECT
               : FMPL_PREP_NONE;
}

/* Direct, receiver: register the buffer, send the setup. */
static void setup_direct_recv(fmpl_sched *s, fmpl_step *st)
{
    const fmpl_sched_lane *l = &s->lanes[st->lane];
    uint64_t msg[DIRECT_WORDS] = {0};
    fmpl_raddr buf;
    st->mailbox = fmpl_fab_alloc(LINE);
    st->registered = st->mailbox && fmpl_fab_register(st->dst, (size_t)st->bytes, &buf) ==
                                        FMPL_SUCCESS;
    if (st->registered) {
        memset(st->mailbox, 0, LINE);
        msg[DIRECT_BUF_ADDR] = buf.addr;
        msg[DIRECT_BUF_KIND] = buf.kind;
        msg[DIRECT_BUF_KEY] = buf.key;
        msg[DIRECT_LINE] = fmpl_raddr_pack(fmpl_fab_raddr(st->mailbox));
        msg[DIRECT_SIZE] = (uint64_t)st->bytes;
    } else {
        FMPL_ERROR(FMPL_ERR_NO_MEMORY, "a persistent collective's receive of %lld bytes could "
                   "not be prepared (no completion line, or its buffer not registered): its "
                   "instances fail", (long long)st->bytes);
    }
    fmpl_tm_send_eager(l->team, msg, sizeof msg, st->peer, l->tag);
}

void fmpl_sched_prepared_setup(fmpl_sched *s, fmpl_step *st)
{
    const fmpl_sched_lane *l = &s->lanes[st->lane];
    st->instance = 0;
    st->room = 0;
    st->pending = 0;
    st->registered = 0;
    st->mailbox = NULL;
    if (st->kind == FMPL_STEP_SEND) {
        memset(st->mailbox_at, 0, sizeof st->mailbox_at);
        if (st->prep == FMPL_PREP_DIRECT) {
            st->staging = NULL;
            fmpl_tm_irecv(&st->req, l->team, st->mailbox_at,
                          DIRECT_WORDS * sizeof st->mailbox_at[0], st->peer, l->tag);
            fmpl_sched_token_expect(s, st);
            return;
        }
        st->staging = fmpl_sched_alloc(s, entry_stride(st->bytes));
        fmpl_tm_irecv(&st->ready, l->team, st->mailbox_at, 2 * sizeof st->mailbox_at[0],
                      st->peer, l->tag);
        return;
    }
    if (st->prep == FMPL_PREP_DIRECT) {
        setup_direct_recv(s, st);
        return;
    }
    size_t stride = entry_stride(st->bytes);
    size_t bytes = LINE + stride * mailbox_slots(stride);
    st->mailbox = fmpl_fab_alloc(bytes);
    uint64_t msg[2] = {0, stride};
    if (st->mailbox) {
        memset(st->mailbox, 0, bytes);
        msg[0] = fmpl_raddr_pack(fmpl_fab_raddr(st->mailbox));
    } else {
        FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no shared memory for a persistent collective's "
                   "mailbox (%zu bytes): its instances fail", bytes);
    }
    fmpl_tm_send_eager(l->team, msg, sizeof msg, st->peer, l->tag);
}

void fmpl_sched_prepared_issue(fmpl_sched *s, fmpl_step *st)
{
    st->pending = 1;
    if (st->prep == FMPL_PREP_DIRECT && st->kind == FMPL_STEP_RECV)
        fmpl_sched_token_send(s, st); /* this instance's buffer may be written */
}

/* Direct, sender: put instance k's data and line once the setup and the
 * token are in.  Returns 0 while it must wait, else 1 with *err set. */
static int send_direct(fmpl_sched *s, fmpl_step *st, int *err)
{
    if (!st->req.complete || !st->ready.complete)
        return 0; /* the setup or the token has not arrived */
    if (!st->mailbox_at[DIRECT_LINE]) {
        *err = FMPL_ERROR(FMPL_ERR_NO_MEMORY, "rank %d of the team could not prepare its "
                          "receive of this persistent collective", st->peer);
        return 1;
    }
    uint64_t k = st->instance++;
    fmpl_sched_token_expect(s, st); /* instance k + 1's */
    const fmpl_team *t = s->lanes[st->lane].team;
    int64_t room = (int64_t)st->mailbox_at[DIRECT_SIZE];
    if (st->bytes <= room && st->bytes > 0) {
        fmpl_raddr buf = {st->mailbox_at[DIRECT_BUF_ADDR], t->world[st->peer],
                          (uint32_t)st->mailbox_at[DIRECT_BUF_KIND], st->mailbox_at[DIRECT_BUF_KEY]};
        *err = fmpl_fab_put(st->src, (size_t)st->bytes, buf);
        if (*err != FMPL_SUCCESS)
            return 1;
    }
    entry_head line;
    atomic_init(&line.head, (uint64_t)(uint32_t)(k + 1) | (uint64_t)st->bytes << 32);
    *err = fmpl_fab_put_flagged(&line, sizeof line, lane_peer(s, st, st->mailbox_at[DIRECT_LINE]));
    if (*err == FMPL_SUCCESS && st->bytes > room)
        *err = FMPL_ERROR(FMPL_ERR_TRUNCATE, "a persistent collective's message of %lld "
                          "bytes to rank %d, whose receive holds %lld",
                          (long long)st->bytes, st->peer, (long long)room);
    return 1;
}

/* Receiver: has the entry (or line) of instance st->instance arrived?  0:
 * not yet; 1: yes, with *err the truncation when its length is not the
 * receive's. */
static int entry_arrived(entry_head *e, const fmpl_step *st, int *err)
{
    uint64_t head = atomic_load_explicit(&e->head, memory_order_acquire);
    if ((uint32_t)head != (uint32_t)(st->instance + 1))
        return 0;
    if ((int64_t)(head >> 32) != st->bytes)
        *err = FMPL_ERROR(FMPL_ERR_TRUNCATE, "a persistent collective's message of %llu bytes "
                          "met a receive of %lld", (unsigned long long)(head >> 32),
                          (long long)st->bytes);
    return 1;
}

/* Direct, receiver: instance k's line is there? */
static int take_direct(fmpl_step *st, int *err)
{
    if (!st->registered) {
        *err = FMPL_ERR_NO_MEMORY; /* reported at prepare */
        return 1;
    }
    if (!entry_arrived(st->mailbox, st, err))
        return 0;
    st->instance++;
    return 1;
}

/* Sender: put instance k's entry if its slot is free.  Returns 0 while it
 * must wait, else 1 with *err set. */
static int send_entry(fmpl_sched *s, fmpl_step *st, int *err)
{
    if (!st->ready.complete)
        return 0; /* the mailbox's address has not arrived yet */
    if (!st->mailbox_at[0] || !st->staging) {
        *err = st->staging ? FMPL_ERROR(FMPL_ERR_NO_MEMORY, "rank %d of the team had no "
                                        "memory for this persistent collective's mailbox",
                                        st->peer)
                           : FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a persistent "
                                        "collective's staging buffer");
        return 1;
    }
    size_t stride = (size_t)st->mailbox_at[1];
    if (entry_stride(st->bytes) > stride) {
        *err = FMPL_ERROR(FMPL_ERR_TRUNCATE, "a persistent collective's message of %lld "
                          "bytes to rank %d, whose receive holds %zu at most",
                          (long long)st->bytes, st->peer, stride - 8);
        st->instance++;
        return 1;
    }
    uint64_t slots = mailbox_slots(stride);
    uint64_t k = st->instance;
    fmpl_raddr box = lane_peer(s, st, st->mailbox_at[0]);
    if (k >= slots && st->room < k + 1 - slots) {
        uint64_t taken;
        *err = fmpl_fab_get(&taken, sizeof taken, box);
        if (*err != FMPL_SUCCESS)
            return 1;
        st->room = taken;
        if (taken < k + 1 - slots)
            return 0;
    }
    entry_head *e = st->staging;
    atomic_init(&e->head, (uint64_t)(uint32_t)(k + 1) | (uint64_t)st->bytes << 32);
    memcpy(e + 1, st->src, (size_t)st->bytes);
    box.addr += LINE + stride * (k % slots);
    *err = fmpl_fab_put_flagged(e, 8 + (size_t)st->bytes, box);
    st->instance = k + 1;
    return 1;
}

/* Receiver: take instance k's entry if it is there (as send_entry). */
static int take_entry(fmpl_step *st, int *err)
{
    if (!st->mailbox) {
        *err = FMPL_ERR_NO_MEMORY; /* reported at prepare */
        return 1;
    }
    size_t stride = entry_stride(st->bytes);
    uint64_t k = st->instance;
    entry_head *e = (entry_head *)((char *)st->mailbox + LINE + stride * (k % mailbox_slots(stride)));
    if (!entry_arrived(e, st, err))
        return 0;
    if (*err == FMPL_SUCCESS)
        memcpy(st->dst, e + 1, (size_t)st->bytes);
    st->instance = k + 1;
    atomic_store_explicit((_Atomic uint64_t *)st->mailbox, k + 1, memory_order_release);
    return 1;
}

int fmpl_sched_prepared_poll(fmpl_sched *s, fmpl_step *st, int *err)
{
    *err = FMPL_SUCCESS;
    if (!st->pending)
        return 1;
    int done = st->prep == FMPL_PREP_DIRECT
                   ? (st->kind == FMPL_STEP_SEND ? send_direct(s, st, err) : take_direct(st, err))
                   : (st->kind == FMPL_STEP_SEND ? send_entry(s, st, err) : take_entry(st, err));
    if (!done)
        return 0;
    st->pending = 0;
    return 1;
}

void fmpl_sched_prepared_free(fmpl_sched *s, fmpl_step *st)
{
    const fmpl_sched_lane *l = &s->lanes[st->lane];
    if (st->kind == FMPL_STEP_SEND) {
        if (fmpl_teams[l->team_id] == l->team) {
            fmpl_tm_cancel_recv(&st->ready);
            if (st->prep == FMPL_PREP_DIRECT)
                fmpl_tm_cancel_recv(&st->req);
        }
        return;
    }
    if (st->registered)
        fmpl_fab_deregister(st->dst, (size_t)st->bytes);
    st->registered = 0;
    fmpl_fab_free(st->mailbox);
    st->mailbox = NULL;
}
