/* The pairwise shared-memory engine: gather, scatter, allgather and alltoall
 * (and their v forms) as a set of pairs "q sends a block to d", every pair
 * moved in the way its two buffers allow, with one exchange sequence s for
 * the whole call.  Sequence of member `me` (half s % 2 of its scratch):
 *
 *   1. fmpl_coll_exchange_ready(s): nobody reads half s % 2 of my scratch
 *      from sequence s - 2 any more.
 *   2. Eager blocks (a pair of at most FMPL_COLL_EAGER bytes, and at most one
 *      staging slot): I copy each of my outgoing ones into slot 0 of its
 *      channel in my staging space now (gather and allgather: a block of at
 *      most 16 bytes into the descriptor's own line instead).
 *   3. I write my tables (send / receive {displacement, count} per member,
 *      where the peers need them: the root's in gatherv and scatterv,
 *      everyone's in alltoallv; the regular forms need none) and my
 *      descriptor {send buffer raddr, receive buffer raddr, my block sizes,
 *      "I can CMA to every member"} into posted[s % 2]'s spare bytes;
 *      release-store posted[s % 2] = s.  That store also publishes the eager
 *      blocks of step 2.
 *   4. My own block is copied locally (not with FMPL_COLL_IN_PLACE).
 *   5. Every other pair is advanced in one polling loop, so no member ever
 *      waits on one pair while a peer waits on another.  Once the peer's
 *      posted[s % 2] >= s, both members of a pair derive the same mode from
 *      the pair's size and the two descriptors:
 *        eager    the reader copies the block out of the owner's slot 0
 *        PUSH     the receive buffer is in the shared heap (or both are and
 *                 the collective is gather, or both are private, the block
 *                 is >= 16 KiB, the sender can CMA and the collective is not
 *                 scatter): the sender copies straight into it (memcpy, or
 *                 one process_vm_writev) and release-stores its
 *                 prod[d] = (s << 32) | DONE
 *        PULL     the mirror image: the receiver copies straight out of the
 *                 sender's buffer and release-stores its cons[q] = (s << 32) |
 *                 DONE; the sender returns only after seeing it
 *        STAGED   through the sender's channel for d: four slots; chunk k goes
 *                 to slot k % 4 once d's cons[me] >= (s << 32) + k - 3, then
 *                 prod[d] = (s << 32) + k + 1; the reader copies it out and
 *                 sets cons[q] = (s << 32) + k + 1.
 *      Allgather sends the same block to everyone: its staged chunks are
 *      written once, counted in prod[me], and a slot is reused once every
 *      staged reader has copied it out.
 *      A DONE already in the peer's line settles a pair before its
 *      descriptor is even read (a DONE of sequence s means nothing else).
 *   6. When every pair is complete: release-store finished = s.
 *
 * Staging space of sequence s: input half s % 2 followed by output half
 * s % 2, cut into 4 slots per channel; one channel (gather, allgather) or
 * one per destination (scatter, alltoall).  Large blocks therefore move in
 * bounded rounds, and no call allocates.  The mode of a pair depends on
 * where its buffers are, which only the two members of the pair need to
 * know: the algorithm and the sequence of s are the same on every member.
 * Resumable (coll_run.h): the body returns wherever step 1 or step 5 would
 * wait; the plan (layouts included) is a copy in the run's state. */
#include "collectives/collectives.h"
#include "base/error.h"
#include "base/tunable.h"

#include <string.h>

FMPL_TUNABLE(tunable_coll_eager, "FMPL_COLL_EAGER", "4k",
             "shared-memory gather/scatter/allgather/alltoall: blocks up to this size are "
             "staged with the entry handshake (two copies, one handoff); larger ones are "
             "copied directly when either buffer is in the shared heap, by CMA when both "
             "are private, else staged in chunks");

#define SLOTS 4
#define PAIR_CMA_MIN 16384

enum { PAIR_IDLE = 0, PAIR_WAIT, PAIR_EAGER, PAIR_STAGED, PAIR_PUSH, PAIR_PULL, PAIR_DONE };

/* Descriptor in posted[s % 2]'s spare bytes. */
#define PAIR_INLINE 16
typedef struct pair_desc {
    uint64_t send;    /* packed raddr of my send buffer (allgather: my block) */
    uint64_t recv;    /* packed raddr of my receive buffer */
    int64_t sbytes;   /* gather: my block */
    int64_t rbytes;   /* scatter: my block */
    uint32_t cma;     /* 1: I can CMA to every member */
    uint32_t pad;
    char data[PAIR_INLINE]; /* gather, allgather: my block if it fits */
} pair_desc;
_Static_assert(sizeof(pair_desc) <= FMPL_LINE_DATA, "descriptor must fit in a line");

/* The run's view during one call of its body: the team's state of the
 * run's kind (the per-pair states are that state's, serialised by its turns,
 * coll_run.h) and the state that survives between calls (fmpl_pairs_run,
 * collectives.h). */
typedef struct engine {
    fmpl_team *t;
    fmpl_coll_team *c;
    fmpl_pairs_run *r;
    const fmpl_pairs_plan *x; /* &r->x */
    int me, P;
    fmpl_pair_state *out, *in;
} engine;

static int64_t eager_limit = -1;

static int nchan_of(int kind, int P)
{
    return kind == FMPL_PAIRS_SCATTER || kind == FMPL_PAIRS_ALLTOALL ? P : 1;
}

static int64_t slot_bytes(int nchan)
{
    return (fmpl_coll_half() / (2 * (int64_t)nchan)) & ~63ll;
}

int fmpl_shm_pairs_usable(const fmpl_team *t, int kind)
{
    if (t->coll->net)
        return 0; /* members' memory is not all in reach */
    return slot_bytes(nchan_of(kind, t->size)) >= 64;
}

/* Staging slot k of channel chan of member `owner` (its areas block: the
 * owner allocates it when it first stages, before publishing). */
static char *slot_ptr(const engine *e, int owner, int chan, uint64_t k)
{
    uint64_t spp = 2 * (uint64_t)e->r->nchan; /* slots per half */
    uint64_t g = (uint64_t)chan * SLOTS + k % SLOTS;
    char *areas = fmpl_coll_areas(e->c, owner);
    char *piece = g < spp ? fmpl_coll_input_half(areas, e->r->s) : fmpl_coll_output_half(areas, e->r->s);
    return piece + (g % spp) * (uint64_t)e->r->slot;
}

static int chan_of(const engine *e, int d)
{
    return e->r->nchan == 1 ? 0 : d;
}

/* Where an eager block of n bytes is: inside the owner's descriptor when
 * it has a single channel and the block fits, else in slot 0. */
static char *eager_ptr(const engine *e, int owner, int chan, int64_t n)
{
    if (e->r->nchan == 1 && n <= PAIR_INLINE)
        return ((pair_desc *)fmpl_line_data(&e->c->peer[owner]->posted[e->r->s % 2]))->data;
    return slot_ptr(e, owner, chan, 0);
}

/* ------------------------------------------------ my view of each pair */

static int64_t out_bytes(const engine *e, int d)
{
    const fmpl_pairs_plan *x = e->x;
    switch (x->kind) {
    case FMPL_PAIRS_GATHER:
        return e->me != x->root && d == x->root ? x->sbytes : 0;
    case FMPL_PAIRS_SCATTER:
        return e->me == x->root ? fmpl_layout_count(&x->sl, d) : 0;
    case FMPL_PAIRS_ALLGATHER:
        return fmpl_layout_count(&x->rl, e->me);
    default:
        return fmpl_layout_count(&x->sl, d);
    }
}

static const char *send_base(const engine *e)
{
    const fmpl_pairs_plan *x = e->x;
    if (x->kind == FMPL_PAIRS_ALLGATHER && x->in_place)
        return fmpl_layout_count(&x->rl, e->me) > 0 ? x->rbuf + fmpl_layout_displ(&x->rl, e->me)
                                                   : NULL;
    return x->sbuf;
}

static const char *out_ptr(const engine *e, int d)
{
    const fmpl_pairs_plan *x = e->x;
    if (x->kind == FMPL_PAIRS_SCATTER || x->kind == FMPL_PAIRS_ALLTOALL)
        return x->sbuf + fmpl_layout_displ(&x->sl, d);
    return send_base(e);
}

static int64_t in_bytes(const engine *e, int q)
{
    const fmpl_pairs_plan *x = e->x;
    switch (x->kind) {
    case FMPL_PAIRS_GATHER:
        return e->me == x->root ? fmpl_layout_count(&x->rl, q) : 0;
    case FMPL_PAIRS_SCATTER:
        return e->me != x->root && q == x->root ? x->rbytes : 0;
    default:
        return fmpl_layout_count(&x->rl, q);
    }
}

static char *in_ptr(const engine *e, int q)
{
    const fmpl_pairs_plan *x = e->x;
    if (x->kind == FMPL_PAIRS_SCATTER)
        return x->rbuf;
    return x->rbuf + fmpl_layout_displ(&x->rl, q);
}

/* ------------------------------------------------ peers' published state */

static int peer_ready(const engine *e, int p)
{
    return fmpl_line_get(&e->c->peer[p]->posted[e->r->s % 2]) >= e->r->s;
}

static const pair_desc *desc_of(const engine *e, int p)
{
    return (const pair_desc *)fmpl_line_data(&e->c->peer[p]->posted[e->r->s % 2]);
}

static int shared(uint64_t packed) { return (uint32_t)(packed >> 62) == FMPL_MEM_SHARED; }

/* Who moves the block of pair (sender sd -> receiver rd) of n bytes. */
static int pair_mode(const engine *e, int64_t n, const pair_desc *sd, const pair_desc *rd)
{
    if (n <= e->r->eager)
        return PAIR_EAGER;
    int ss = shared(sd->send), rs = shared(rd->recv);
    if (ss && rs)
        return e->r->pull ? PAIR_PULL : PAIR_PUSH;
    if (rs)
        return PAIR_PUSH;
    if (ss)
        return PAIR_PULL;
    if (n >= PAIR_CMA_MIN) {
        if (e->r->cma_pull)
            return rd->cma ? PAIR_PULL : sd->cma ? PAIR_PUSH : PAIR_STAGED;
        return sd->cma ? PAIR_PUSH : rd->cma ? PAIR_PULL : PAIR_STAGED;
    }
    return PAIR_STAGED;
}

/* Where my block for d goes in d's receive buffer, and how much it takes. */
static fmpl_raddr push_target(const engine *e, int d, int64_t *limit)
{
    const fmpl_pairs_plan *x = e->x;
    const pair_desc *dd = desc_of(e, d);
    fmpl_raddr r = fmpl_raddr_unpack(dd->recv, e->t->world[d]);
    switch (x->kind) {
    case FMPL_PAIRS_GATHER:
    case FMPL_PAIRS_ALLTOALL: {
        if (fmpl_layout_uniform(&x->rl)) { /* the regular forms: no table */
            r.addr += (uint64_t)fmpl_layout_displ(&x->rl, e->me);
            *limit = x->rl.block;
            break;
        }
        const fmpl_coll_entry *en = fmpl_coll_table(e->c->peer[d], e->P, e->r->s, 1) + e->me;
        r.addr += (uint64_t)en->displ;
        *limit = en->count;
        break;
    }
    case FMPL_PAIRS_SCATTER:
        *limit = dd->rbytes;
        break;
    default:
        r.addr += (uint64_t)fmpl_layout_displ(&x->rl, e->me);
        *limit = fmpl_layout_count(&x->rl, e->me);
    }
    return r;
}

/* Where q's block for me is in q's send buffer, and its size. */
static fmpl_raddr pull_source(const engine *e, int q, int64_t *limit)
{
    const fmpl_pairs_plan *x = e->x;
    const pair_desc *qd = desc_of(e, q);
    fmpl_raddr r = fmpl_raddr_unpack(qd->send, e->t->world[q]);
    switch (x->kind) {
    case FMPL_PAIRS_SCATTER:
    case FMPL_PAIRS_ALLTOALL: {
        if (fmpl_layout_uniform(&x->sl)) {
            r.addr += (uint64_t)fmpl_layout_displ(&x->sl, e->me);
            *limit = x->sl.block;
            break;
        }
        const fmpl_coll_entry *en = fmpl_coll_table(e->c->peer[q], e->P, e->r->s, 0) + e->me;
        r.addr += (uint64_t)en->displ;
        *limit = en->count;
        break;
    }
    case FMPL_PAIRS_GATHER:
        *limit = qd->sbytes;
        break;
    default:
        *limit = fmpl_layout_count(&x->rl, q);
    }
    return r;
}

static int64_t chunk_len(const engine *e, int64_t n, uint64_t k)
{
    int64_t off = (int64_t)k * e->r->slot;
    return n - off < e->r->slot ? n - off : e->r->slot;
}

static void note(engine *e, int rc)
{
    if (rc != FMPL_SUCCESS && e->r->err == FMPL_SUCCESS)
        e->r->err = rc;
}

/* ------------------------------------------------ one step of a pair */

static int advance_out(engine *e, int d)
{
    fmpl_pair_state *ps = &e->out[d];
    fmpl_coll_scratch *mine = e->c->mine;
    int allgather = e->x->kind == FMPL_PAIRS_ALLGATHER;
    if (ps->mode == PAIR_WAIT) {
        /* d may already have pulled: a DONE of sequence s in its cons[me]
         * can mean nothing else, and saves reading its descriptor. */
        if (fmpl_line_get(fmpl_coll_cons(e->c->peer[d], e->P, e->me)) >= (e->r->base | FMPL_PAIR_DONE)) {
            ps->mode = PAIR_DONE;
            return 1;
        }
        if (!peer_ready(e, d))
            return 0;
        ps->mode = pair_mode(e, ps->n, desc_of(e, e->me), desc_of(e, d));
        if (allgather && ps->mode == PAIR_STAGED)
            return 1; /* the stream (advance_stream) stages it for everyone */
    }
    switch (ps->mode) {
    case PAIR_PUSH: {
        int64_t limit;
        fmpl_raddr r = push_target(e, d, &limit);
        int64_t n = ps->n < limit ? ps->n : limit;
        if (n > 0)
            note(e, fmpl_fab_put(ps->local, (size_t)n, r));
        fmpl_line_set(fmpl_coll_prod(mine, e->P, d), e->r->base | FMPL_PAIR_DONE);
        ps->mode = PAIR_DONE;
        return 1;
    }
    case PAIR_PULL:
        if (fmpl_line_get(fmpl_coll_cons(e->c->peer[d], e->P, e->me)) < (e->r->base | FMPL_PAIR_DONE))
            return 0;
        ps->mode = PAIR_DONE;
        return 1;
    case PAIR_STAGED: {
        if (allgather)
            return 0;
        int moved = 0;
        const fmpl_line *cons = fmpl_coll_cons(e->c->peer[d], e->P, e->me);
        while (ps->next < ps->nchunks) {
            uint64_t k = ps->next;
            if (k >= SLOTS && fmpl_line_get(cons) < e->r->base + k - SLOTS + 1)
                break;
            memcpy(slot_ptr(e, e->me, chan_of(e, d), k), ps->local + (int64_t)k * e->r->slot,
                   (size_t)chunk_len(e, ps->n, k));
            fmpl_line_set(fmpl_coll_prod(mine, e->P, d), e->r->base + k + 1);
            ps->next++;
            moved = 1;
        }
        if (ps->next == ps->nchunks)
            ps->mode = PAIR_DONE;
        return moved;
    }
    default:
        return 0;
    }
}

/* Allgather: my block staged once for every reader whose pair is STAGED. */
static int advance_stream(engine *e)
{
    if (e->r->bc_state == 1) {
        int staged = 0;
        for (int d = 0; d < e->P; d++) {
            if (d == e->me)
                continue;
            if (e->out[d].mode == PAIR_WAIT)
                return 0;
            staged |= e->out[d].mode == PAIR_STAGED;
        }
        e->r->bc_state = staged ? 2 : 0;
        if (!staged)
            return 1;
    }
    if (e->r->bc_state != 2)
        return 0;
    int moved = 0;
    fmpl_coll_scratch *mine = e->c->mine;
    while (e->r->bc_next < e->r->bc_nchunks) {
        uint64_t k = e->r->bc_next;
        if (k >= SLOTS) {
            int free_slot = 1;
            for (int d = 0; d < e->P && free_slot; d++)
                if (d != e->me && e->out[d].mode == PAIR_STAGED &&
                    fmpl_line_get(fmpl_coll_cons(e->c->peer[d], e->P, e->me)) <
                        e->r->base + k - SLOTS + 1)
                    free_slot = 0;
            if (!free_slot)
                break;
        }
        memcpy(slot_ptr(e, e->me, 0, k), send_base(e) + (int64_t)k * e->r->slot,
               (size_t)chunk_len(e, e->r->bc_n, k));
        fmpl_line_set(fmpl_coll_prod(mine, e->P, e->me), e->r->base + k + 1);
        e->r->bc_next++;
        moved = 1;
    }
    if (e->r->bc_next == e->r->bc_nchunks) {
        e->r->bc_state = 0;
        for (int d = 0; d < e->P; d++)
            if (d != e->me && e->out[d].mode == PAIR_STAGED)
                e->out[d].mode = PAIR_DONE;
    }
    return moved;
}

static int advance_in(engine *e, int q)
{
    fmpl_pair_state *ps = &e->in[q];
    fmpl_coll_scratch *qs = e->c->peer[q];
    int allgather = e->x->kind == FMPL_PAIRS_ALLGATHER;
    int chan = allgather ? 0 : chan_of(e, e->me);
    if (ps->mode == PAIR_WAIT) {
        /* q may already have pushed (see advance_out). */
        if (fmpl_line_get(fmpl_coll_prod(qs, e->P, e->me)) >= (e->r->base | FMPL_PAIR_DONE)) {
            ps->mode = PAIR_DONE;
            return 1;
        }
        if (!peer_ready(e, q))
            return 0;
        ps->mode = pair_mode(e, ps->n, desc_of(e, q), desc_of(e, e->me));
    }
    switch (ps->mode) {
    case PAIR_EAGER: /* published with posted[s % 2] */
        memcpy(ps->local, eager_ptr(e, q, chan, ps->n), (size_t)ps->n);
        ps->mode = PAIR_DONE;
        return 1;
    case PAIR_PULL: {
        int64_t limit;
        fmpl_raddr r = pull_source(e, q, &limit);
        int64_t n = ps->n < limit ? ps->n : limit;
        if (n > 0)
            note(e, fmpl_fab_get(ps->local, (size_t)n, r));
        fmpl_line_set(fmpl_coll_cons(e->c->mine, e->P, q), e->r->base | FMPL_PAIR_DONE);
        ps->mode = PAIR_DONE;
        return 1;
    }
    case PAIR_PUSH:
        if (fmpl_line_get(fmpl_coll_prod(qs, e->P, e->me)) < (e->r->base | FMPL_PAIR_DONE))
            return 0;
        ps->mode = PAIR_DONE;
        return 1;
    case PAIR_STAGED: {
        int moved = 0;
        const fmpl_line *prod = fmpl_coll_prod(qs, e->P, allgather ? q : e->me);
        while (ps->next < ps->nchunks) {
            uint64_t k = ps->next;
            if (fmpl_line_get(prod) < e->r->base + k + 1)
                break;
            memcpy(ps->local + (int64_t)k * e->r->slot, slot_ptr(e, q, chan, k),
                   (size_t)chunk_len(e, ps->n, k));
            fmpl_line_set(fmpl_coll_cons(e->c->mine, e->P, q), e->r->base + k + 1);
            ps->next++;
            moved = 1;
        }
        if (ps->next == ps->nchunks)
            ps->mode = PAIR_DONE;
        return moved;
    }
    default:
        return 0;
    }
}

/* ------------------------------------------------ the call */

static void local_copy(const engine *e)
{
    const fmpl_pairs_plan *x = e->x;
    int me = e->me;
    int64_t n;
    if (x->in_place)
        return;
    switch (x->kind) {
    case FMPL_PAIRS_GATHER:
        if (me == x->root && (n = fmpl_layout_count(&x->rl, me)) > 0)
            memcpy(x->rbuf + fmpl_layout_displ(&x->rl, me), x->sbuf, (size_t)n);
        break;
    case FMPL_PAIRS_SCATTER:
        if (me == x->root && (n = fmpl_layout_count(&x->sl, me)) > 0)
            memcpy(x->rbuf, x->sbuf + fmpl_layout_displ(&x->sl, me), (size_t)n);
        break;
    case FMPL_PAIRS_ALLGATHER:
        if ((n = fmpl_layout_count(&x->rl, me)) > 0)
            memcpy(x->rbuf + fmpl_layout_displ(&x->rl, me), x->sbuf, (size_t)n);
        break;
    default:
        if ((n = fmpl_layout_count(&x->rl, me)) > 0)
            memcpy(x->rbuf + fmpl_layout_displ(&x->rl, me),
                   x->sbuf + fmpl_layout_displ(&x->sl, me), (size_t)n);
    }
}

static void publish(engine *e)
{
    const fmpl_pairs_plan *x = e->x;
    fmpl_coll_scratch *mine = e->c->mine;
    int P = e->P, me = e->me, k = x->kind;
    int root_tables = (k == FMPL_PAIRS_GATHER || k == FMPL_PAIRS_SCATTER) && me == x->root;
    if ((k == FMPL_PAIRS_ALLTOALL || (root_tables && k == FMPL_PAIRS_SCATTER)) &&
        !fmpl_layout_uniform(&x->sl)) {
        fmpl_coll_entry *st = fmpl_coll_table(mine, P, e->r->s, 0);
        for (int p = 0; p < P; p++)
            st[p] = (fmpl_coll_entry){fmpl_layout_displ(&x->sl, p), fmpl_layout_count(&x->sl, p)};
    }
    if ((k == FMPL_PAIRS_ALLTOALL || (root_tables && k == FMPL_PAIRS_GATHER)) &&
        !fmpl_layout_uniform(&x->rl)) {
        fmpl_coll_entry *rt = fmpl_coll_table(mine, P, e->r->s, 1);
        for (int p = 0; p < P; p++)
            rt[p] = (fmpl_coll_entry){fmpl_layout_displ(&x->rl, p), fmpl_layout_count(&x->rl, p)};
    }
    pair_desc *d = (pair_desc *)fmpl_line_data(&mine->posted[e->r->s % 2]);
    d->send = fmpl_raddr_pack(fmpl_fab_raddr(send_base(e)));
    d->recv = fmpl_raddr_pack(fmpl_fab_raddr(x->rbuf));
    d->sbytes = k == FMPL_PAIRS_ALLGATHER ? fmpl_layout_count(&x->rl, me) : x->sbytes;
    d->rbytes = x->rbytes;
    d->cma = (uint32_t)e->c->cma_all;
    d->pad = 0;
    fmpl_line_set(&mine->posted[e->r->s % 2], e->r->s);
}

/* One sweep over every pair: nonzero while some pair is not complete.
 * Sweeps again while any pair moves, so a poll returns only when nothing
 * moved (a staged stream keeps flowing without a round through the driver). */
static int pending(engine *e)
{
    for (;;) {
        int moved = 0, left = e->r->bc_state != 0;
        for (int p = 0; p < e->P; p++) {
            if (p == e->me)
                continue;
            if (e->out[p].mode != PAIR_IDLE && e->out[p].mode != PAIR_DONE) {
                moved |= advance_out(e, p);
                left |= e->out[p].mode != PAIR_DONE;
            }
            if (e->in[p].mode == PAIR_EAGER && !peer_ready(e, p)) {
                left = 1;
                continue;
            }
            if (e->in[p].mode != PAIR_IDLE && e->in[p].mode != PAIR_DONE) {
                moved |= advance_in(e, p);
                left |= e->in[p].mode != PAIR_DONE;
            }
        }
        if (e->r->bc_state)
            moved |= advance_stream(e);
        if (!left || !moved)
            return left;
    }
}

/* Sets up every pair of sequence r->s and publishes (steps 2 to 4). */
static void start(engine *e)
{
    fmpl_pairs_run *r = e->r;
    const fmpl_pairs_plan *x = e->x;
    int allgather = x->kind == FMPL_PAIRS_ALLGATHER;
    for (int p = 0; p < e->P; p++) {
        fmpl_pair_state *o = &e->out[p], *i = &e->in[p];
        *o = (fmpl_pair_state){0};
        *i = (fmpl_pair_state){0};
        if (p == e->me)
            continue;
        o->n = out_bytes(e, p);
        o->local = o->n > 0 ? (char *)out_ptr(e, p) : NULL;
        o->nchunks = (uint64_t)((o->n + r->slot - 1) / r->slot);
        o->mode = o->n > 0 ? PAIR_WAIT : PAIR_IDLE;
        i->n = in_bytes(e, p);
        i->local = i->n > 0 ? in_ptr(e, p) : NULL;
        i->nchunks = (uint64_t)((i->n + r->slot - 1) / r->slot);
        i->mode = i->n > 0 ? PAIR_WAIT : PAIR_IDLE;
        if (i->n > 0 && i->n <= r->eager)
            i->mode = PAIR_EAGER; /* still waits for posted: see advance_in */
        if (o->n > 0 && o->n <= r->eager) {
            o->mode = PAIR_DONE;
            if (!allgather)
                memcpy(eager_ptr(e, e->me, chan_of(e, p), o->n), o->local, (size_t)o->n);
        }
    }
    r->bc_state = 0;
    r->bc_next = 0;
    if (allgather) {
        r->bc_n = fmpl_layout_count(&x->rl, e->me);
        r->bc_nchunks = (uint64_t)((r->bc_n + r->slot - 1) / r->slot);
        if (r->bc_n > 0 && r->bc_n <= r->eager && e->P > 1)
            memcpy(eager_ptr(e, e->me, 0, r->bc_n), send_base(e), (size_t)r->bc_n);
        else if (r->bc_n > 0)
            r->bc_state = 1;
    }
    publish(e);
    local_copy(e);
}

static int body(fmpl_coll_algo *a)
{
    fmpl_pairs_run *r = (fmpl_pairs_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    engine e = {.t = t, .c = c, .r = r, .x = &r->x, .me = t->rank, .P = t->size,
                .out = c->pairs, .in = c->pairs + t->size};
    FMPL_RUN_BEGIN(a);
    if (eager_limit < 0)
        eager_limit = fmpl_tunable_long(&tunable_coll_eager) < 0
                          ? 0
                          : fmpl_tunable_long(&tunable_coll_eager);
    r->nchan = nchan_of(r->x.kind, e.P);
    r->slot = slot_bytes(r->nchan);
    if (r->slot < 64)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "shared-memory pairs: %d members leave no staging "
                          "slot (raise FMPL_COLL_AREA)", e.P);
    r->eager = eager_limit < r->slot ? eager_limit : r->slot;
    /* Shared buffers: senders copy in gather (in parallel), receivers in the
     * others.  CMA: process_vm_writev is the faster direction here, except
     * that scatter's receivers pulling in parallel beat a root writing to
     * each in turn (collx-timing, 2 cores). */
    r->pull = r->x.kind != FMPL_PAIRS_GATHER;
    r->cma_pull = r->x.kind == FMPL_PAIRS_SCATTER;
    r->err = FMPL_SUCCESS;
    r->s = ++c->exchange_seq;
    r->base = r->s << 32;
    r->cursor = 0;
    FMPL_RUN_AWAIT(a, fmpl_coll_exchange_ready(c, r->s, &r->cursor));
    start(&e);
    FMPL_RUN_AWAIT(a, !pending(&e));
    fmpl_line_set(&c->mine->finished, r->s);
    if (r->err != FMPL_SUCCESS)
        return r->err;
    FMPL_RUN_END(a);
}

void fmpl_shm_pairs_setup(fmpl_pairs_run *st, fmpl_team *t, const fmpl_pairs_plan *x)
{
    fmpl_coll_algo_init(&st->a, body, t);
    st->x = *x;
}
