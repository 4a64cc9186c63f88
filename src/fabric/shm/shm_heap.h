/* Shared-heap allocator: one process's heap inside a shared-memory segment.
 *
 * FMPL carves fmpl_alloc buffers, staging buffers and control structures
 * from a heap that lives in a segment other processes map too, possibly at
 * other addresses.  Only the owning process allocates and frees (from any of
 * its threads); peers merely read and write inside allocated blocks.
 *
 * Invariants
 *  - The heap's bookkeeping lives inside the region itself (at its start) and
 *    holds only offsets from the region's base, never absolute addresses: the
 *    region may be mapped anywhere.  The fmpl_heap pointer IS the region's
 *    base in the owner, so a block's offset is (char *)p - (char *)h.
 *  - Every block starts on a cache line (64 bytes) and is a whole number of
 *    cache lines long; the 64 bytes before it are its header, so no block
 *    shares a cache line with another block or with bookkeeping.
 *  - Creating the heap writes only its first page; allocating writes only
 *    the headers next to the block handed out; freeing writes headers only.
 *    Pages of a lazily backed (tmpfs) segment are not touched before they
 *    are allocated.
 *  - alloc is O(1) in the common case (two-level segregated fits over
 *    size classes, with bitmaps) and falls back to a first-fit scan of the
 *    free lists only when no class guarantees a fit; alloc returns NULL only
 *    when no free block can hold the request.  free is O(1) and coalesces
 *    immediately with both neighbours (boundary tags), so no two free blocks
 *    are ever adjacent: freeing everything restores a single free block.
 *  - Thread safe: one spinlock per heap, held for O(1) work (the fallback
 *    scan aside).
 */
#ifndef FMPL_FABRIC_SHM_HEAP_H
#define FMPL_FABRIC_SHM_HEAP_H

#include <stddef.h>

typedef struct fmpl_heap fmpl_heap;

#define FMPL_HEAP_ALIGN 64          /* minimum alignment and granularity */
#define FMPL_HEAP_REGION_ALIGN 4096 /* the region must be page aligned */

/* Smallest region fmpl_heap_create accepts. */
size_t fmpl_heap_min_region(void);

/* Make a heap covering `size` bytes at `region` (4 KiB aligned).  Returns
 * the heap (== region), or NULL, with a message, if the region is NULL,
 * misaligned or smaller than fmpl_heap_min_region(). */
fmpl_heap *fmpl_heap_create(void *region, size_t size);

/* A block of at least `size` bytes (0 gives a valid unique block) whose
 * address is a multiple of `align`: a power of two; values below 64, and 0,
 * mean 64.  Alignments up to 4096 hold in every mapping of the region;
 * larger ones only in the mapping `h` belongs to (the owner's).  Returns
 * NULL when no free block fits; also NULL, with a message, when align is not
 * a power of two.  The block's contents are not initialised. */
void *fmpl_heap_alloc(fmpl_heap *h, size_t size, size_t align);

/* Release a block.  NULL is accepted (FMPL_SUCCESS).  A pointer that is not
 * a live block of this heap (foreign, interior, or already freed) is
 * reported and returns FMPL_ERR_ARG, changing nothing. */
int fmpl_heap_free(fmpl_heap *h, void *p);

/* Usable bytes of the live block `p` (at least what was asked for); p
 * must be a block this heap handed out and has not taken back. */
size_t fmpl_heap_block_size(const fmpl_heap *h, const void *p);

/* 1 if `p` points into the heap's block area (allocated or not), else 0. */
int fmpl_heap_contains(const fmpl_heap *h, const void *p);

/* Bytes of all free blocks (what they could hand out, headers excluded). */
size_t fmpl_heap_free_bytes(const fmpl_heap *h);

/* The largest `size` for which fmpl_heap_alloc(h, size, 64) succeeds now
 * (0 when full). */
size_t fmpl_heap_largest_free(const fmpl_heap *h);

/* Walk every block and check every invariant (tiling, boundary tags, no
 * adjacent free blocks, free lists and bitmaps, counters).  Touches every
 * header: for tests and debugging only.  FMPL_SUCCESS or FMPL_ERR_INTERNAL
 * with a message naming the first violation. */
int fmpl_heap_check(const fmpl_heap *h);

#endif
