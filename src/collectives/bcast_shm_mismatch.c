/* Broadcast members whose counts disagree with the root's (an erroneous
 * program; MPICH reports it as a truncation).  Before this, such a member
 * took the root's first bytes without a word, or waited for units the root
 * never published, or read the root's descriptor unit as data.
 *
 * Every unit of a root's broadcast sequence carries the root's size of its
 * call and the unit's kind (coll_team.h, fmpl_bcast_unit_publish).  A
 * member checks its first unit u0 of a call against its own size S_m and
 * the kind its own algorithm expects; on a mismatch it follows the root's
 * units instead of its own:
 *   the root's call (size S_r)     its units
 *   ring (a CHUNK at u0)           u0 .. u0 + chunks(S_r) - 1, chunks
 *   direct (a DESC at u0), DIRECT  u0 only: the root copies into the members
 *                                  that claimed (this one does not) and
 *                                  waits for every bc_consumed >= u0 + 1
 *   direct (a DESC at u0), RING    u0, then chunks(S_r) chunk units
 * For each unit u: wait until the root's bc_produced >= u + 1; copy the part
 * that falls inside this member's buffer (its first min(S_m, S_r) bytes:
 * from the slot for a chunk, from the root's shared-heap buffer for DIRECT,
 * which stays there until this member's consumption below); release-store
 * bc_consumed = u + 1.  Then the team's sequence goes on at the root's end,
 * as on every other member, and the call fails: FMPL_ERR_TRUNCATE when the
 * root sent more than the member's buffer takes (the buffer holds the
 * message's first bytes), FMPL_ERR_ARG when it sent less; equal sizes by
 * different algorithms (FMPL_BCAST_ALGO set differently) deliver the data
 * and succeed.  Not caught: a broadcast of 0 bytes on some members only (it
 * publishes no unit), and a prepared broadcast of a few bytes
 * (bcast_shm_plan.c) met by a ring broadcast. */
#include "collectives/collectives.h"
#include "base/error.h"

#include <string.h>

int fmpl_bcast_mismatch(fmpl_bcast_ring *st, fmpl_coll_team *c, uint64_t u0, int kind)
{
    fmpl_coll_scratch *rs = c->peer[st->root];
    uint64_t meta = fmpl_bcast_unit_meta(rs, u0);
    if (fmpl_bcast_meta_kind(meta) == kind && fmpl_bcast_meta_size(meta) == st->size)
        return 0;
    st->root_size = fmpl_bcast_meta_size(meta);
    st->drain_next = u0;
    st->drain_chunk0 = u0;
    st->drain_end = u0 + fmpl_bcast_chunks(st->root_size);
    if (fmpl_bcast_meta_kind(meta) == FMPL_BCAST_UNIT_DESC) {
        const fmpl_bcast_desc *d =
            (const fmpl_bcast_desc *)fmpl_coll_ring(fmpl_coll_areas(c, st->root), u0);
        st->drain_chunk0 = u0 + 1;
        st->drain_end = d->kind == FMPL_BCAST_DESC_DIRECT ? u0 + 1 : st->drain_end + 1;
    }
    return 1;
}

int fmpl_bcast_drain(fmpl_bcast_ring *st, fmpl_coll_team *c)
{
    fmpl_coll_scratch *rs = c->peer[st->root];
    char *areas = fmpl_coll_areas(c, st->root);
    int64_t keep = st->size < st->root_size ? st->size : st->root_size;
    while (st->drain_next < st->drain_end) {
        uint64_t u = st->drain_next;
        if (fmpl_line_get(&rs->bc_produced) < u + 1)
            return 0;
        const char *slot = fmpl_coll_ring(areas, u);
        if (u < st->drain_chunk0) {
            const fmpl_bcast_desc *d = (const fmpl_bcast_desc *)slot;
            if (d->kind == FMPL_BCAST_DESC_DIRECT && keep > 0)
                memcpy(st->buf,
                       fmpl_fab_ptr(fmpl_raddr_unpack(d->addr, st->a.team->world[st->root])),
                       (size_t)keep);
        } else {
            int64_t off = (int64_t)(u - st->drain_chunk0) * fmpl_bcast_chunk;
            if (off < keep)
                memcpy(st->buf + off, slot,
                       (size_t)(keep - off < fmpl_bcast_chunk ? keep - off : fmpl_bcast_chunk));
        }
        fmpl_line_set(&c->mine->bc_consumed, u + 1);
        st->drain_next = u + 1;
    }
    c->bc_seq = st->drain_end;
    st->drain_err = fmpl_bcast_size_check(st->root, st->root_size, st->size);
    return 1;
}

int fmpl_bcast_size_check(int root, int64_t sent, int64_t mine)
{
    if (sent > mine)
        return FMPL_ERROR(FMPL_ERR_TRUNCATE,
                          "broadcast from rank %d: the root sends %lld bytes, this member's "
                          "buffer takes %lld (the members' counts and datatypes must match)",
                          root, (long long)sent, (long long)mine);
    if (sent < mine)
        return FMPL_ERROR(FMPL_ERR_ARG,
                          "broadcast from rank %d: the root sends %lld bytes, this member "
                          "expects %lld (the members' counts and datatypes must match)",
                          root, (long long)sent, (long long)mine);
    return FMPL_SUCCESS;
}
