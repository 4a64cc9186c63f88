/* Broadcast by direct copies out of the root's buffer, for large messages.
 *
 * When the root's buffer is in its shared heap (MPI_Alloc_mem, fmpl_alloc,
 * or a large malloc block: fabric/shm/shm_malloc.c), every member can copy
 * the data straight out of it: one copy per member, all in parallel,
 * instead of the ring's copy in and copy out.  When a member's buffer is in
 * its shared heap too, whoever arrives copies: the member and the root (its
 * call, or its agent) claim the member's chunks one by one, so a member
 * that computes is served by the root, and two cores copy at once.
 *
 * The call takes one unit q of the team's broadcast chunk sequence for a
 * descriptor, in the root's ring slot like a chunk (so the slot protocol of
 * bcast_shm_pipelined.c keeps it from being overwritten early); tag =
 * (q + 1) mod 2^32 names the call in the claim words.
 *   root, unit q:  wait until every member's bc_consumed >= q + 1 - SLOTS;
 *                  write {DIRECT, packed address of buf} or {RING} into
 *                  ring[q % SLOTS]; note {its size, DESC} for the slot in
 *                  the produced line; release-store bc_produced = q + 1
 *     DIRECT:      until every member's bc_consumed >= q + 1: for each
 *                  member m whose bc_claim carries tag and a buffer address,
 *                  claim chunks (compare-and-swap bc_claim from (tag << 32)
 *                  + c to + c + 1, while c < chunks), copy chunk c from buf
 *                  into m's buffer, fetch-add m's bc_done (release);
 *                  then bc_consumed = q + 1
 *     RING:        the buffer is private: the pipelined ring broadcast
 *                  follows, its chunks numbered from q + 1
 *   member m:      wait for the root's bc_produced >= q + 1 (the unit notes
 *                  the root's size of the call: checked against the
 *                  member's, bcast_shm_mismatch.c); read the descriptor;
 *                  DIRECT: store bc_done = tag << 32, its buffer's packed
 *                  address in bc_claim's spare bytes (0 for
 *                  a private buffer), then release-store bc_claim = tag << 32;
 *                  claim and copy chunks as the root does, until bc_done =
 *                  (tag << 32) + chunks (acquire: the root's copies are in);
 *                  then release-store bc_consumed = q + 1.  RING:
 *                  bc_consumed = q + 1, then the ring broadcast.
 * The tag in the claim words keeps a late helper off a later call's chunks:
 * a claim of call q succeeds only while the word still carries q's tag.
 * Every member learns from the descriptor which way the data comes, so all
 * advance the sequence alike.  Resumable (coll_run.h). */
#include "collectives/collectives.h"

#include <string.h>

#define DIRECT_CHUNK ((int64_t)64 * 1024)

static uint64_t call_tag(uint64_t q) { return (q + 1) & 0xffffffffu; }

/* Claim and copy member m's chunks while any are left; m's buffer is `to`. */
static void copy_claimed(fmpl_coll_scratch *m, uint64_t tag, uint64_t nchunks, const char *from,
                         char *to, int64_t size)
{
    uint64_t w = fmpl_line_get(&m->bc_claim);
    while (w >> 32 == tag && (w & 0xffffffffu) < nchunks) {
        if (!atomic_compare_exchange_weak_explicit(&m->bc_claim.v, &w, w + 1,
                                                   memory_order_acquire, memory_order_acquire))
            continue;
        int64_t off = (int64_t)(w & 0xffffffffu) * DIRECT_CHUNK;
        size_t len = (size_t)(size - off < DIRECT_CHUNK ? size - off : DIRECT_CHUNK);
        memcpy(to + off, from + off, len);
        atomic_fetch_add_explicit(&m->bc_done.v, 1, memory_order_release);
        w = fmpl_line_get(&m->bc_claim);
    }
}

/* The root: help every member that has opened its buffer to claims. */
static void root_helps(fmpl_bcast_run *st, fmpl_coll_team *c)
{
    uint64_t tag = call_tag(st->q);
    for (int p = 0; p < c->size; p++) {
        if (p == c->rank)
            continue;
        fmpl_coll_scratch *m = c->peer[p];
        uint64_t addr;
        if (fmpl_line_get(&m->bc_claim) >> 32 != tag)
            continue; /* not opened for this call yet: its address is not there */
        memcpy(&addr, fmpl_line_data(&m->bc_claim), sizeof addr);
        if (addr)
            copy_claimed(m, tag, st->nchunks, st->ring.buf,
                         fmpl_fab_ptr(fmpl_raddr_unpack(addr, c->world[p])), st->ring.size);
    }
}

static int root_done(fmpl_bcast_run *st, fmpl_coll_team *c)
{
    root_helps(st, c);
    return FMPL_COLL_ALL_REACHED(c, bc_consumed, st->q + 1, &st->cursor);
}

static int member_done(fmpl_bcast_run *st, fmpl_coll_scratch *mine)
{
    copy_claimed(mine, call_tag(st->q), st->nchunks, st->from, st->ring.buf, st->ring.size);
    return fmpl_line_get(&mine->bc_done) == (call_tag(st->q) << 32) + st->nchunks;
}

static int body(fmpl_coll_algo *a)
{
    fmpl_bcast_run *st = (fmpl_bcast_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    fmpl_bcast_ring *ring = &st->ring;
    fmpl_coll_scratch *rs = c->peer[ring->root];
    int rc;
    FMPL_RUN_BEGIN(a);
    st->q = c->bc_seq++;
    st->cursor = 0;
    st->nchunks = (uint64_t)((ring->size + DIRECT_CHUNK - 1) / DIRECT_CHUNK);
    ring->a.line = 0;
    ring->a.blocking = a->blocking;
    ring->a.coll = a->coll; /* the fallback runs in the same kind's state */
    if (t->rank == ring->root) {
        if (st->q + 1 > FMPL_BCAST_SLOTS)
            FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(c, bc_consumed, st->q + 1 - FMPL_BCAST_SLOTS,
                                                    &st->cursor));
        fmpl_bcast_desc *d =
            (fmpl_bcast_desc *)fmpl_coll_ring(fmpl_coll_areas(c, ring->root), st->q);
        st->direct = fmpl_fab_is_shared(ring->buf);
        d->kind = st->direct ? FMPL_BCAST_DESC_DIRECT : FMPL_BCAST_DESC_RING;
        d->addr = st->direct ? fmpl_raddr_pack(fmpl_fab_raddr(ring->buf)) : 0;
        fmpl_bcast_unit_publish(rs, st->q, ring->size, FMPL_BCAST_UNIT_DESC);
        if (st->direct) {
            st->cursor = 0;
            FMPL_RUN_AWAIT(a, root_done(st, c));
            fmpl_line_set(&c->mine->bc_consumed, c->bc_seq);
        }
    } else {
        FMPL_RUN_AWAIT(a, fmpl_line_get(&rs->bc_produced) >= st->q + 1);
        /* The root's call is not this one (bcast_shm_mismatch.c). */
        if (fmpl_bcast_mismatch(ring, c, st->q, FMPL_BCAST_UNIT_DESC)) {
            FMPL_RUN_AWAIT(a, fmpl_bcast_drain(ring, c));
            return ring->drain_err;
        }
        const fmpl_bcast_desc *d =
            (const fmpl_bcast_desc *)fmpl_coll_ring(fmpl_coll_areas(c, ring->root), st->q);
        st->direct = d->kind == FMPL_BCAST_DESC_DIRECT;
        if (st->direct) {
            uint64_t tag = call_tag(st->q);
            uint64_t addr = fmpl_fab_is_shared(ring->buf)
                                ? fmpl_raddr_pack(fmpl_fab_raddr(ring->buf))
                                : 0;
            st->from = fmpl_fab_ptr(fmpl_raddr_unpack(d->addr, t->world[ring->root]));
            atomic_store_explicit(&c->mine->bc_done.v, tag << 32, memory_order_relaxed);
            memcpy(fmpl_line_data(&c->mine->bc_claim), &addr, sizeof addr);
            fmpl_line_set(&c->mine->bc_claim, tag << 32);
            FMPL_RUN_AWAIT(a, member_done(st, c->mine));
        }
        fmpl_line_set(&c->mine->bc_consumed, st->q + 1);
    }
    if (!st->direct) {
        FMPL_RUN_AWAIT(a, (rc = fmpl_bcast_ring_body(&ring->a)) != FMPL_RUN_PENDING);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    FMPL_RUN_END(a);
}

void fmpl_bcast_shm_direct_setup(fmpl_bcast_run *st, fmpl_team *t, void *buf, int64_t size,
                                 int root)
{
    fmpl_bcast_shm_pipelined_setup(&st->ring, t, buf, size, root);
    fmpl_coll_algo_init(&st->a, body, t);
}
