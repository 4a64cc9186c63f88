/* Prepared messages: the SEND/RECV pairs of a persistent schedule as one
 * put each (seed 002: the schedule prepared once at init, the start a
 * doorbell, the wait one word; sched.h).
 *
 * A persistent schedule all of whose messages hold at most PREPARED_MAX
 * (16 KiB, the eager limit) bytes (every MPI_Bcast_init or
 * MPI_Allreduce_init of up to 16 KiB that runs as messages, on any team,
 * across hosts too) sends none of them through the tag-matched protocol.
 * Per SEND/RECV pair, sender S, receiver R, instance k (counted per step: a
 * persistent request completes before it starts again):
 *   prepare  R allocates a mailbox in its shared heap: line 0 holds
 *            `taken`, how many entries R has copied out; then `slots`
 *            entries of `stride` bytes each, {sequence (32 bits), length
 *            (32 bits), data}, the stride the entry rounded up to whole
 *            lines, as many slots as fit 64 KiB (4 to 64: mailbox_slots).
 *            R sends {the mailbox's packed address, stride} to S (one
 *            eager message on the lane's ready tag; address 0 when R has
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
 * prepared (MPICH 5.9-9.7 us). */
#include "collectives/sched.h"
#include "fabric/fabric.h"
#include "base/error.h"
#include "base/tunable.h"

#include <string.h>

FMPL_TUNABLE(tunable_prepared, "FMPL_PREPARED_MESSAGES", "on",
             "persistent collectives whose messages all hold 16 KiB at most send each as one "
             "put into a mailbox the receiver prepared at init (on), or through "
             "the tag-matched protocol with a READY token per instance (off)");

#define PREPARED_MAX 16384
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

int fmpl_sched_prepared_eligible(const fmpl_sched *s)
{
    static int on = -1;
    if (on < 0) {
        static const char *const choices[] = {"off", "on", NULL};
        on = fmpl_tunable_choice(&tunable_prepared, choices);
    }
    int messages = 0;
    for (int i = 0; i < s->nsteps; i++) {
        const fmpl_step *st = &s->steps[i];
        if (st->kind != FMPL_STEP_SEND && st->kind != FMPL_STEP_RECV)
            continue;
        if (st->bytes > PREPARED_MAX)
            return 0;
        messages = 1;
    }
    return on == 1 && messages;
}

static fmpl_raddr lane_peer(const fmpl_sched *s, const fmpl_step *st, uint64_t packed)
{
    const fmpl_team *t = s->lanes[st->lane].team;
    return fmpl_raddr_unpack(packed, t->world[st->peer]);
}

void fmpl_sched_prepared_setup(fmpl_sched *s, fmpl_step *st)
{
    const fmpl_sched_lane *l = &s->lanes[st->lane];
    st->instance = 0;
    st->room = 0;
    st->pending = 0;
    if (st->kind == FMPL_STEP_SEND) {
        st->mailbox_at[0] = st->mailbox_at[1] = 0;
        st->staging = fmpl_sched_alloc(s, entry_stride(st->bytes));
        fmpl_tm_irecv(&st->ready, l->team, st->mailbox_at, sizeof st->mailbox_at, st->peer,
                      l->ready_tag);
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
    fmpl_tm_send_eager(l->team, msg, sizeof msg, st->peer, l->ready_tag);
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
    uint64_t head = atomic_load_explicit(&e->head, memory_order_acquire);
    if ((uint32_t)head != (uint32_t)(k + 1))
        return 0;
    if ((int64_t)(head >> 32) != st->bytes)
        *err = FMPL_ERROR(FMPL_ERR_TRUNCATE, "a persistent collective's message of %llu bytes "
                          "met a receive of %lld", (unsigned long long)(head >> 32),
                          (long long)st->bytes);
    else
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
    if (!(st->kind == FMPL_STEP_SEND ? send_entry(s, st, err) : take_entry(st, err)))
        return 0;
    st->pending = 0;
    return 1;
}

void fmpl_sched_prepared_free(fmpl_sched *s, fmpl_step *st)
{
    const fmpl_sched_lane *l = &s->lanes[st->lane];
    if (st->kind == FMPL_STEP_SEND) {
        if (fmpl_teams[l->team_id] == l->team)
            fmpl_tm_cancel_recv(&st->ready);
        return;
    }
    fmpl_fab_free(st->mailbox);
    st->mailbox = NULL;
}
