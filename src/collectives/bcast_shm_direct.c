/* Broadcast by direct reads of the root's buffer, for large messages.
 *
 * When the root's buffer is in its shared heap (MPI_Alloc_mem, fmpl_alloc,
 * or a large malloc block: fabric/shm/shm_malloc.c), every member can copy
 * the data straight out of it: one copy per member, all in parallel,
 * instead of the ring's copy in and copy out.  The root only publishes
 * where the data is and waits until everyone has read it.
 *
 * The call takes one unit of the team's broadcast chunk sequence for a
 * descriptor, in the root's ring slot like a chunk (so the slot protocol of
 * bcast_shm_pipelined.c keeps it from being overwritten early):
 *   root, unit q:  wait until every member's bc_consumed >= q + 1 - SLOTS;
 *                  write {DIRECT, packed address of buf} or {RING} into
 *                  ring[q % SLOTS]; release-store bc_produced = q + 1
 *     DIRECT:      wait until every member's bc_consumed >= q + 1 (all have
 *                  read buf); bc_consumed = q + 1
 *     RING:        the buffer is private: the pipelined ring broadcast
 *                  follows, its chunks numbered from q + 1
 *   others:        wait for the root's bc_produced >= q + 1; read the
 *                  descriptor; DIRECT: copy from the root's buffer, then
 *                  release-store bc_consumed = q + 1; RING: bc_consumed =
 *                  q + 1, then the ring broadcast.
 * Every member learns from the descriptor which way the data comes, so all
 * advance the sequence alike.  Resumable (coll_run.h). */
#include "collectives/collectives.h"

#include <string.h>

enum { DESC_RING = 1, DESC_DIRECT = 2 };

typedef struct bcast_desc {
    uint64_t kind;
    uint64_t addr; /* fmpl_raddr_pack of the root's buffer */
} bcast_desc;

static int body(fmpl_coll_algo *a)
{
    fmpl_bcast_run *st = (fmpl_bcast_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = t->coll;
    fmpl_bcast_ring *ring = &st->ring;
    fmpl_coll_scratch *rs = c->peer[ring->root];
    int rc;
    FMPL_RUN_BEGIN(a);
    st->q = c->bc_seq++;
    st->cursor = 0;
    ring->a.line = 0;
    ring->a.blocking = a->blocking;
    if (t->rank == ring->root) {
        if (st->q + 1 > FMPL_BCAST_SLOTS)
            FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(t, bc_consumed, st->q + 1 - FMPL_BCAST_SLOTS,
                                                    &st->cursor));
        bcast_desc *d = (bcast_desc *)fmpl_coll_ring(fmpl_coll_areas(c, ring->root), st->q);
        st->direct = fmpl_fab_is_shared(ring->buf);
        d->kind = st->direct ? DESC_DIRECT : DESC_RING;
        d->addr = st->direct ? fmpl_raddr_pack(fmpl_fab_raddr(ring->buf)) : 0;
        fmpl_line_set(&rs->bc_produced, st->q + 1);
        if (st->direct) {
            st->cursor = 0;
            FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(t, bc_consumed, st->q + 1, &st->cursor));
            fmpl_line_set(&c->mine->bc_consumed, c->bc_seq);
        }
    } else {
        FMPL_RUN_AWAIT(a, fmpl_line_get(&rs->bc_produced) >= st->q + 1);
        const bcast_desc *d =
            (const bcast_desc *)fmpl_coll_ring(fmpl_coll_areas(c, ring->root), st->q);
        st->direct = d->kind == DESC_DIRECT;
        if (st->direct)
            memcpy(ring->buf, fmpl_fab_ptr(fmpl_raddr_unpack(d->addr, t->world[ring->root])),
                   (size_t)ring->size);
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
