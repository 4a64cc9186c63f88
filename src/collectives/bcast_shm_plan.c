/* Prepared persistent broadcast of a few bytes on shared memory: seed 002's
 * schedule prepared once at init, on the shared heap.  MPI_Bcast_init and
 * fmpl_bcast_init of at most PLAN_INLINE (56) bytes on a team whose members
 * all share memory take this form when their schedule is prepared
 * (fmpl_sched_prepare calls the ring broadcast's `prepare`).
 *
 * Every member's collective header holds a ring of FMPL_PLAN_SLOTS lines,
 * each {sequence, data}, in which it publishes the broadcasts it roots, and
 * an array plan_cons[root] of how many entries of each root's ring it has
 * copied out (coll_team.h).  Instance k (from 0) of the prepared broadcasts
 * rooted at r, counted over all of r's plans on the team in start order
 * (MPI has every member start the persistent collectives of a communicator
 * in the same order, so all members agree on k):
 *   root r:   slot k % SLOTS is free once every member's plan_cons[r] >=
 *             k + 1 - SLOTS (a cached minimum, read again only when short);
 *             copy the data into the slot; release-store its sequence = k + 1,
 *             with the root's size in its top byte.
 *             The root's instance is complete: the data left its buffer.
 *   member q: wait until the slot's sequence == k + 1 (acquire); copy the
 *             data out (a size other than its own, an erroneous program:
 *             the first bytes that fit, and an error); once the entries it
 *             has copied out, all of them up to some count n, reach the
 *             next multiple of SLOTS / 2, release-store plan_cons[r] = n in
 *             its own header.
 * Data and flag travel in one cache line, so the root's start is the
 * doorbell and a member's completion is the one word it waits on.
 * Publishing consumption every SLOTS / 2 entries leaves the root one line
 * to fetch back per SLOTS / 2 entries, and cannot stall it for good: a root
 * stopped at instance k needs k + 1 - SLOTS, and a member that has copied
 * out all k entries has published at least k + 1 - SLOTS / 2.
 * The plan reads and writes nothing another algorithm uses, so its runs
 * take no turn in the team's order (coll_run.h, `unordered`): a start that
 * finds its data runs to completion at once (sched.c). */
#include "collectives/collectives.h"

#include <string.h>

#define PLAN_INLINE ((int64_t)FMPL_LINE_DATA)
#define PLAN_SIZE_SHIFT 56 /* an entry's sequence word: the root's size above */
_Static_assert(PLAN_INLINE < 256, "the size fits the sequence word's top byte");

typedef struct plan_entry {
    _Atomic uint64_t seq;
    char data[FMPL_LINE_DATA];
} plan_entry;
_Static_assert(sizeof(plan_entry) == sizeof(fmpl_line), "an entry is one line");

/* The instance number, taken when the instance starts (in start order). */
static uint64_t take_instance(fmpl_coll_algo *a)
{
    fmpl_bcast_ring *st = (fmpl_bcast_ring *)a;
    return a->coll->plans[st->root].started++;
}

/* Root: every member has copied out the entry that slot k held before. */
static int slot_free(fmpl_coll_team *c, uint64_t k)
{
    if (k < FMPL_PLAN_SLOTS)
        return 1;
    uint64_t need = k + 1 - FMPL_PLAN_SLOTS;
    if (c->plan_room >= need)
        return 1;
    uint64_t room = UINT64_MAX;
    for (int p = 0; p < c->size; p++) {
        if (p == c->rank)
            continue;
        uint64_t v = atomic_load_explicit(fmpl_coll_plan_cons(c->peer[p], c->size, c->rank),
                                          memory_order_acquire);
        if (v < room)
            room = v;
    }
    c->plan_room = room;
    return room >= need;
}

/* A member copied out entry k of root's ring.  Entries complete in any
 * order (a member may wait for its requests in any order), and only the
 * count below which all are copied out may be published: the root reuses a
 * slot on its strength.  Entries copied out lie within SLOTS of that count
 * (the root has produced no further), so one word of bits covers them. */
static void consumed(fmpl_coll_team *c, int size, int root, uint64_t k)
{
    fmpl_plan_root *r = &c->plans[root];
    uint64_t before = r->base;
    r->bits |= 1ull << (k - before);
    while (r->bits & 1) {
        r->bits >>= 1;
        r->base++;
    }
    if (r->base / (FMPL_PLAN_SLOTS / 2) != before / (FMPL_PLAN_SLOTS / 2))
        atomic_store_explicit(fmpl_coll_plan_cons(c->mine, size, root), r->base,
                              memory_order_release);
}

static int plan_body(fmpl_coll_algo *a)
{
    fmpl_bcast_ring *st = (fmpl_bcast_ring *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    uint64_t k = a->ticket;
    plan_entry *e = (plan_entry *)&c->peer[st->root]->plan_ring[k % FMPL_PLAN_SLOTS];
    if (t->rank == st->root) {
        if (!slot_free(c, k))
            return FMPL_RUN_PENDING;
        memcpy(e->data, st->buf, (size_t)st->size);
        atomic_store_explicit(&e->seq, (k + 1) | (uint64_t)st->size << PLAN_SIZE_SHIFT,
                              memory_order_release);
        return FMPL_SUCCESS;
    }
    uint64_t seq = atomic_load_explicit(&e->seq, memory_order_acquire);
    if ((seq & ((1ull << PLAN_SIZE_SHIFT) - 1)) != k + 1)
        return FMPL_RUN_PENDING;
    int64_t sent = (int64_t)(seq >> PLAN_SIZE_SHIFT);
    memcpy(st->buf, e->data, (size_t)(sent < st->size ? sent : st->size));
    consumed(c, t->size, st->root, k);
    return fmpl_bcast_size_check(st->root, sent, st->size);
}

void fmpl_bcast_plan_prepare(fmpl_coll_algo *a)
{
    fmpl_bcast_ring *st = (fmpl_bcast_ring *)a;
    fmpl_coll_team *c = a->coll;
    if (st->size > PLAN_INLINE || c->net)
        return; /* stays the ring broadcast */
    a->body = plan_body;
    a->unordered = take_instance;
}
