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
 * advance the sequence alike. */
#include "collectives/collectives.h"
#include "progress/progress.h"

#include <string.h>

enum { DESC_RING = 1, DESC_DIRECT = 2 };

typedef struct bcast_desc {
    uint64_t kind;
    uint64_t addr; /* fmpl_raddr_pack of the root's buffer */
} bcast_desc;

int fmpl_bcast_shm_direct(fmpl_team *t, void *buf, int64_t size, int root)
{
    fmpl_coll_team *c = t->coll;
    uint64_t q = c->bc_seq++;
    fmpl_coll_scratch *rs = c->peer[root];
    if (t->rank == root) {
        if (q + 1 > FMPL_BCAST_SLOTS)
            FMPL_COLL_WAIT_ALL(t, bc_consumed, q + 1 - FMPL_BCAST_SLOTS);
        bcast_desc *d = (bcast_desc *)fmpl_coll_ring(fmpl_coll_areas(c, root), q);
        int direct = fmpl_fab_is_shared(buf);
        d->kind = direct ? DESC_DIRECT : DESC_RING;
        d->addr = direct ? fmpl_raddr_pack(fmpl_fab_raddr(buf)) : 0;
        fmpl_line_set(&rs->bc_produced, q + 1);
        if (!direct)
            return fmpl_bcast_shm_pipelined(t, buf, size, root);
        FMPL_COLL_WAIT_ALL(t, bc_consumed, q + 1);
        fmpl_line_set(&c->mine->bc_consumed, c->bc_seq);
        return FMPL_SUCCESS;
    }
    FMPL_WAIT_UNTIL(fmpl_line_get(&rs->bc_produced) >= q + 1);
    const bcast_desc *d = (const bcast_desc *)fmpl_coll_ring(fmpl_coll_areas(c, root), q);
    if (d->kind == DESC_RING) {
        fmpl_line_set(&c->mine->bc_consumed, q + 1);
        return fmpl_bcast_shm_pipelined(t, buf, size, root);
    }
    memcpy(buf, fmpl_fab_ptr(fmpl_raddr_unpack(d->addr, t->world[root])), (size_t)size);
    fmpl_line_set(&c->mine->bc_consumed, q + 1);
    return FMPL_SUCCESS;
}
