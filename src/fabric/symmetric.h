/* The symmetric arena: memory that sits at one virtual address on every rank.
 *
 * Every rank's shared segment (shm/shm_segment.h) ends with an arena of
 * FMPL_SYMMETRIC_SIZE bytes, after the heap, at the same offset `seg_off` in
 * every segment.  The file is sparse: pages are taken when touched.  Peers
 * on the host map the whole segment at start-up and the network backend
 * registers the whole segment once (its key is published then), so the
 * arena needs no file, mapping, registration or key of its own, and a
 * killed job leaves nothing behind: the segment's clean-up covers it.
 *
 * The owner maps its arena a second time, from the segment's file, at
 * `base`: an address every member of a communicator agreed on at the first
 * symmetric allocation (runtime/symmetric.c places it; MAP_FIXED_NOREPLACE,
 * so nothing of the process is ever replaced).  That view is the program's:
 * fmpl_alloc_symmetric returns base + offset, the same pointer on every
 * member.  The segment view and the program's view are the same pages.
 *
 * Invariants
 *  - base, size and seg_off are the same on every rank that placed its arena
 *    (checked by every allocation's agreement; size and seg_off come from
 *    FMPL_SYMMETRIC_SIZE and FMPL_HEAP_SIZE, which must then be equal).
 *  - A symmetric address p of this rank is rank r's memory at segment offset
 *    seg_off + (p - base): fmpl_sym_raddr.  For r on this host loads and
 *    stores reach it (fmpl_fab_ptr); for a network peer, one remote
 *    operation under r's segment key.
 *  - Blocks (sym_blocks.c) are byte ranges of the arena, sorted, disjoint,
 *    64-byte aligned.  A rank hands out an offset only when every member of
 *    the allocating communicator agreed on it, so the same sequence of
 *    collective allocations gives the same offsets everywhere. */
#ifndef FMPL_FABRIC_SYMMETRIC_H
#define FMPL_FABRIC_SYMMETRIC_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define FMPL_SYM_NONE UINT64_MAX /* "no offset": the arena has no room */
#define FMPL_SYM_ALIGN 64

typedef struct fmpl_sym_block {
    uint64_t off, size;
} fmpl_sym_block;

typedef struct fmpl_symmetric {
    char *base;        /* the program's view at the agreed address; NULL until placed */
    uint64_t size;     /* arena bytes (a multiple of the page size; 0: no arena) */
    uint64_t seg_off;  /* where the arena starts in every rank's segment */
    int fd;            /* the segment's file (-1 when there is no arena) */
    fmpl_sym_block *blocks; /* [nblocks] sorted by offset */
    int nblocks, cap;
} fmpl_symmetric;

extern fmpl_symmetric fmpl_sym;

/* The fabric at start-up and shut-down: the arena is [seg_off, + size) of
 * this rank's segment, whose file is fd (taken over: closed at finalize). */
void fmpl_sym_setup(uint64_t seg_off, uint64_t size, int fd);
void fmpl_sym_finalize(void);

/* Placement (runtime/symmetric.c drives it over a team). */
/* Map the program's view at exactly `addr`; 1 on success, 0 if anything is
 * mapped there, the address is unusable, or the mapping failed. */
int fmpl_sym_try_place(uint64_t addr);
/* Undo a successful fmpl_sym_try_place (another member failed). */
void fmpl_sym_unplace(void);
/* An address where this process has room for the arena now (the kernel's
 * choice), for the others to try; 0 if none. */
uint64_t fmpl_sym_propose(void);

/* Blocks (sym_blocks.c). */
/* The lowest offset >= from where `size` bytes (rounded up to
 * FMPL_SYM_ALIGN) are free in this rank's arena, or FMPL_SYM_NONE. */
uint64_t fmpl_sym_first_fit(uint64_t from, uint64_t size);
/* Take [off, off + size): FMPL_SUCCESS, or FMPL_ERR_NO_MEMORY (bookkeeping)
 * / FMPL_ERR_INTERNAL (not free). */
int fmpl_sym_take(uint64_t off, uint64_t size);
/* Give back the block starting at off; FMPL_ERR_ARG if none starts there. */
int fmpl_sym_give(uint64_t off);
/* The live block holding offset off, or NULL. */
const fmpl_sym_block *fmpl_sym_find(uint64_t off);

/* ----------------------------------------------------------- fast paths */

/* Offset of p in the arena, or FMPL_SYM_NONE when p is not in it. */
static inline uint64_t fmpl_sym_offset(const void *p)
{
    uint64_t off = (uint64_t)((uintptr_t)p - (uintptr_t)fmpl_sym.base);
    return fmpl_sym.base && off < fmpl_sym.size ? off : FMPL_SYM_NONE;
}

/* [off, off + len) lies inside one live block (len 0: off is inside one). */
static inline int fmpl_sym_in_block(uint64_t off, uint64_t len)
{
    if (off == FMPL_SYM_NONE)
        return 0;
    const fmpl_sym_block *b = fmpl_sym_find(off);
    return b && len <= b->off + b->size - off;
}

/* Rank `world_rank`'s memory at arena offset off; fmpl_fab_ptr of it is a
 * local pointer to those bytes when loads and stores reach that rank. */
static inline fmpl_raddr fmpl_sym_raddr(uint64_t off, int world_rank)
{
    fmpl_raddr r = {.addr = fmpl_sym.seg_off + off, .rank = world_rank,
                    .kind = FMPL_MEM_SHARED, .key = 0};
    return r;
}

/* This rank's arena at offset off, through the segment view: what the
 * fabric recognises as shared (registered) memory. */
static inline void *fmpl_sym_local(uint64_t off)
{
    return fmpl_fab.my_base + fmpl_sym.seg_off + off;
}

/* p itself, or, when it is a symmetric address of this rank, the same
 * bytes through the segment view (so the network backend uses the
 * segment's registration instead of registering the arena again). */
static inline void *fmpl_sym_fabric_view(const void *p)
{
    uint64_t off = fmpl_sym_offset(p);
    return off == FMPL_SYM_NONE ? (void *)(uintptr_t)p : fmpl_sym_local(off);
}

#endif
