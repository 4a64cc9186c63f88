/* Shared-heap allocator.  See shm_heap.h for the contract.
 *
 * Layout of the region (all positions are byte offsets from its base):
 *
 *   [0, first)        struct fmpl_heap: magic, lock, counters, bitmaps and
 *                     free-list heads (fits in the first page)
 *   [first, end)      chunks, tiling the range exactly; end = size rounded
 *                     down to 64
 *
 * A chunk is a 64-byte header line followed by its block (the user's
 * memory).  Chunk sizes count the header, are multiples of 64 and at least
 * MIN_CHUNK (header + one line).
 *
 * Invariants (fmpl_heap_check verifies all of them)
 *  I1  chunks tile [first, end): the next chunk starts at off + size.
 *  I2  boundary tags: a chunk's prev_size is the size of the chunk just
 *      before it (0 for the first), so both neighbours are found in O(1)
 *      without footers (which would have to live in the user's memory).
 *  I3  no two adjacent chunks are free (free coalesces at once).
 *  I4  a free chunk is on exactly one doubly linked list, the one of class
 *      mapping(size); heads[fl][sl] != 0 iff bit sl of sl_bitmap[fl] is set,
 *      and sl_bitmap[fl] != 0 iff bit fl of fl_bitmap is set.
 *  I5  free_chunks / free_chunk_bytes count the free chunks and their sizes.
 *  I6  a live header has tag == tag_of(off) and state FREE or USED; a header
 *      swallowed by coalescing gets tag 0, so a stale pointer to it is
 *      reported instead of corrupting the heap.
 *  Offsets, never pointers, are stored; offset 0 (the heap header) means
 *  "none" in free-list links.
 *
 * Size classes (two-level segregated fits, after TLSF): for n = size / 64
 * lines, n < 8 maps to class (0, n); otherwise with l = floor(log2 n),
 * fl = l - 2 and sl = the 3 bits of n below its leading one.  A search
 * rounds n up to the next class boundary, so the head of any non-empty list
 * at or above the searched class fits: O(1) through the bitmaps.
 */
#include "fabric/shm/shm_heap.h"
#include "base/error.h"
#include "base/log.h"
#include "base/wait.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define LINE 64u
#define MIN_CHUNK (2 * LINE)
#define SL_BITS 3
#define SL_COUNT (1u << SL_BITS)
#define FL_COUNT 56 /* classes up to 2^58 lines: beyond any address space */

#define HEAP_MAGIC 0x504145484c504d46ull /* "FMPLHEAP" */
#define CHUNK_TAG 0x4b4e4843u /* "CHNK" */
#define CHUNK_FREE 0x46524545u
#define CHUNK_USED 0x55534544u

typedef struct chunk {
    uint64_t size;      /* bytes, header included, multiple of 64 */
    uint64_t prev_size; /* size of the chunk just before (0 for the first) */
    uint32_t tag;       /* tag_of(offset) while this header is live */
    uint32_t state;     /* CHUNK_FREE or CHUNK_USED */
    uint64_t next_free; /* free-list links (free chunks only), offsets */
    uint64_t prev_free;
    uint64_t requested; /* bytes asked for (used chunks) */
    uint64_t reserved[2];
} chunk;
_Static_assert(sizeof(chunk) == LINE, "a chunk header is one cache line");

struct fmpl_heap {
    uint64_t magic;
    uint64_t region_size;      /* as given to create */
    uint64_t first;            /* offset of the first chunk */
    uint64_t end;              /* offset just past the last chunk */
    _Atomic uint32_t lock;
    uint32_t pad;
    uint64_t free_chunks;      /* I5 */
    uint64_t free_chunk_bytes; /* I5 */
    uint64_t fl_bitmap;
    uint32_t sl_bitmap[FL_COUNT];
    uint64_t heads[FL_COUNT][SL_COUNT];
};
_Static_assert(sizeof(struct fmpl_heap) + LINE <= FMPL_HEAP_REGION_ALIGN,
               "the heap header and the first chunk header fit in the first page");

#define HEADER_BYTES ((sizeof(struct fmpl_heap) + LINE - 1) / LINE * LINE)

/* ---------------------------------------------------------------- helpers */

static inline chunk *at(const fmpl_heap *h, uint64_t off)
{
    return (chunk *)((char *)h + off);
}

static inline uint32_t tag_of(uint64_t off) { return CHUNK_TAG ^ (uint32_t)(off / LINE); }

static inline unsigned log2_u64(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }

static void mapping(uint64_t lines, unsigned *fl, unsigned *sl)
{
    if (lines < SL_COUNT) {
        *fl = 0;
        *sl = (unsigned)lines;
    } else {
        unsigned l = log2_u64(lines);
        *fl = l - SL_BITS + 1;
        *sl = (unsigned)(lines >> (l - SL_BITS)) - SL_COUNT;
    }
}

/* The class from which every chunk fits `lines`. */
static void mapping_search(uint64_t lines, unsigned *fl, unsigned *sl)
{
    if (lines >= SL_COUNT)
        lines += (1ull << (log2_u64(lines) - SL_BITS)) - 1;
    mapping(lines, fl, sl);
}

static void heap_lock(const fmpl_heap *hc)
{
    fmpl_heap *h = (fmpl_heap *)hc;
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(&h->lock, memory_order_relaxed) == 0 &&
            atomic_exchange_explicit(&h->lock, 1, memory_order_acquire) == 0)
            return;
        if (spins < 100)
            fmpl_cpu_relax();
        else
            sched_yield();
    }
}

static void heap_unlock(const fmpl_heap *hc)
{
    fmpl_heap *h = (fmpl_heap *)hc;
    atomic_store_explicit(&h->lock, 0, memory_order_release);
}

/* ------------------------------------------------------------- free lists */

static void list_insert(fmpl_heap *h, uint64_t off)
{
    chunk *c = at(h, off);
    unsigned fl, sl;
    mapping(c->size / LINE, &fl, &sl);
    uint64_t head = h->heads[fl][sl];
    c->state = CHUNK_FREE;
    c->prev_free = 0;
    c->next_free = head;
    if (head)
        at(h, head)->prev_free = off;
    h->heads[fl][sl] = off;
    h->sl_bitmap[fl] |= 1u << sl;
    h->fl_bitmap |= 1ull << fl;
    h->free_chunks++;
    h->free_chunk_bytes += c->size;
}

static void list_remove(fmpl_heap *h, uint64_t off)
{
    chunk *c = at(h, off);
    unsigned fl, sl;
    mapping(c->size / LINE, &fl, &sl);
    if (c->prev_free)
        at(h, c->prev_free)->next_free = c->next_free;
    else
        h->heads[fl][sl] = c->next_free;
    if (c->next_free)
        at(h, c->next_free)->prev_free = c->prev_free;
    if (!h->heads[fl][sl]) {
        h->sl_bitmap[fl] &= ~(1u << sl);
        if (!h->sl_bitmap[fl])
            h->fl_bitmap &= ~(1ull << fl);
    }
    c->next_free = c->prev_free = 0;
    h->free_chunks--;
    h->free_chunk_bytes -= c->size;
}

/* Head of the first non-empty list at class (fl, sl) or above; 0 if none. */
static uint64_t find_from(const fmpl_heap *h, unsigned fl, unsigned sl)
{
    if (fl >= FL_COUNT)
        return 0;
    uint32_t slmap = sl < SL_COUNT ? h->sl_bitmap[fl] & (~0u << sl) : 0;
    if (!slmap) {
        uint64_t flmap = fl + 1 < 64 ? h->fl_bitmap & (~0ull << (fl + 1)) : 0;
        if (!flmap)
            return 0;
        fl = (unsigned)__builtin_ctzll(flmap);
        slmap = h->sl_bitmap[fl];
    }
    sl = (unsigned)__builtin_ctz(slmap);
    return h->heads[fl][sl];
}

/* ------------------------------------------------------------ chunk work */

/* Make a header at `off` of `size` bytes after a chunk of `prev_size`. */
static void write_header(fmpl_heap *h, uint64_t off, uint64_t size, uint64_t prev_size)
{
    chunk *c = at(h, off);
    c->size = size;
    c->prev_size = prev_size;
    c->tag = tag_of(off);
    c->state = CHUNK_USED;
    c->next_free = c->prev_free = 0;
    c->requested = 0;
}

/* I2: tell the chunk after `off` (if any) the size of `off`. */
static void fix_next_prev(fmpl_heap *h, uint64_t off)
{
    uint64_t next = off + at(h, off)->size;
    if (next < h->end)
        at(h, next)->prev_size = at(h, off)->size;
}

/* Where the block would start if chunk `off` served `need` chunk bytes at
 * `align`; 0 if it cannot.  The gap before the block must be empty or a
 * whole chunk. */
static uint64_t fit(const fmpl_heap *h, uint64_t off, uint64_t need, size_t align)
{
    uint64_t size = at(h, off)->size;
    uint64_t block = off + LINE;
    if (align > LINE) {
        uintptr_t base = (uintptr_t)h;
        uint64_t aligned = ((base + block + align - 1) & ~(uintptr_t)(align - 1)) - base;
        if (aligned != block && aligned - block < MIN_CHUNK)
            aligned += align;
        block = aligned;
    }
    uint64_t gap = block - LINE - off;
    if (gap > size || size - gap < need)
        return 0;
    return block;
}

/* Take free chunk `off` out of its list and carve a used chunk of `need`
 * bytes whose block starts at `block`; leftovers before and after become
 * free chunks.  Returns the offset of the used chunk. */
static uint64_t carve(fmpl_heap *h, uint64_t off, uint64_t block, uint64_t need)
{
    list_remove(h, off);
    chunk *c = at(h, off);
    uint64_t size = c->size;
    uint64_t gap = block - LINE - off;
    if (gap) {
        /* Leading free chunk; its predecessor is used (I3). */
        c->size = gap;
        write_header(h, off + gap, size - gap, gap);
        list_insert(h, off);
        off += gap;
        size -= gap;
        c = at(h, off);
    }
    if (size - need >= MIN_CHUNK) {
        /* Trailing free chunk; its successor is used (I3). */
        c->size = need;
        write_header(h, off + need, size - need, need);
        fix_next_prev(h, off + need);
        list_insert(h, off + need);
    } else {
        c->size = size;
        fix_next_prev(h, off);
    }
    c->state = CHUNK_USED;
    c->tag = tag_of(off);
    return off;
}

/* ---------------------------------------------------------------- the API */

size_t fmpl_heap_min_region(void) { return HEADER_BYTES + MIN_CHUNK; }

fmpl_heap *fmpl_heap_create(void *region, size_t size)
{
    if (!region) {
        FMPL_ERROR(FMPL_ERR_ARG, "the region is NULL");
        return NULL;
    }
    if ((uintptr_t)region % FMPL_HEAP_REGION_ALIGN) {
        FMPL_ERROR(FMPL_ERR_ARG, "the region %p is not %u-byte aligned", region,
                   FMPL_HEAP_REGION_ALIGN);
        return NULL;
    }
    uint64_t end = (uint64_t)size / LINE * LINE;
    if (end < HEADER_BYTES + MIN_CHUNK) {
        FMPL_ERROR(FMPL_ERR_ARG, "a region of %zu bytes is too small for a heap (at least %zu)",
                   size, fmpl_heap_min_region());
        return NULL;
    }
    /* Only the header and the first chunk header are written: both are in
     * the first page. */
    fmpl_heap *h = region;
    memset(h, 0, HEADER_BYTES);
    h->region_size = size;
    h->first = HEADER_BYTES;
    h->end = end;
    atomic_init(&h->lock, 0);
    write_header(h, h->first, end - h->first, 0);
    list_insert(h, h->first);
    h->magic = HEAP_MAGIC;
    return h;
}

void *fmpl_heap_alloc(fmpl_heap *h, size_t size, size_t align)
{
    fmpl_assert(h && h->magic == HEAP_MAGIC);
    if (align < LINE)
        align = LINE;
    if (align & (align - 1)) {
        FMPL_ERROR(FMPL_ERR_ARG, "alignment %zu is not a power of two", align);
        return NULL;
    }
    if (size > h->end || align > h->end)
        return NULL; /* cannot fit; also keeps the sums below from overflowing */
    uint64_t need = LINE + (size ? ((uint64_t)size + LINE - 1) / LINE * LINE : LINE);
    /* A chunk this large fits at any alignment (see fit()). */
    uint64_t sure = need + (align > LINE ? align + LINE : 0);

    heap_lock(h);
    uint64_t off = 0, block = 0;
    unsigned fl, sl;
    mapping_search(sure / LINE, &fl, &sl);
    uint64_t cand = find_from(h, fl, sl);
    if (cand) {
        off = cand;
        block = fit(h, off, need, align);
        fmpl_assert(block != 0);
    } else {
        /* Slow path: first fit over every list that may hold a fitting
         * chunk (those below the guaranteed classes). */
        unsigned f0, s0;
        mapping(need / LINE, &f0, &s0);
        for (unsigned f = f0; f < FL_COUNT && !off; f++) {
            if (!(h->fl_bitmap & (1ull << f)))
                continue;
            for (unsigned s = f == f0 ? s0 : 0; s < SL_COUNT && !off; s++)
                for (uint64_t o = h->heads[f][s]; o; o = at(h, o)->next_free)
                    if ((block = fit(h, o, need, align)) != 0) {
                        off = o;
                        break;
                    }
        }
    }
    void *p = NULL;
    if (off) {
        uint64_t used = carve(h, off, block, need);
        at(h, used)->requested = size;
        p = (char *)h + block;
    }
    heap_unlock(h);
    return p;
}

int fmpl_heap_free(fmpl_heap *h, void *p)
{
    if (!p)
        return FMPL_SUCCESS;
    if (!h || h->magic != HEAP_MAGIC)
        return FMPL_ERROR(FMPL_ERR_ARG, "%p is not a heap", (void *)h);
    uintptr_t a = (uintptr_t)p, base = (uintptr_t)h;
    if (a < base + h->first + LINE || a >= base + h->end)
        return FMPL_ERROR(FMPL_ERR_ARG, "%p was not allocated from this heap", p);
    if ((a - base) % LINE)
        return FMPL_ERROR(FMPL_ERR_ARG, "%p is not the start of a block of this heap", p);

    uint64_t off = a - base - LINE;
    heap_lock(h);
    chunk *c = at(h, off);
    int rc = FMPL_SUCCESS;
    if (c->tag != tag_of(off) || (c->state != CHUNK_USED && c->state != CHUNK_FREE)) {
        rc = FMPL_ERROR(FMPL_ERR_ARG,
                        "%p is not a block of this heap (an interior pointer, or freed twice)",
                        p);
    } else if (c->state == CHUNK_FREE) {
        rc = FMPL_ERROR(FMPL_ERR_ARG, "%p was freed twice", p);
    } else {
        /* The header looks right; check its boundary tags too before
         * trusting it. */
        uint64_t size = c->size, next = off + size;
        int sane = size >= MIN_CHUNK && size % LINE == 0 && next <= h->end &&
                   (next == h->end || at(h, next)->prev_size == size) &&
                   (c->prev_size == 0 ? off == h->first
                                      : c->prev_size % LINE == 0 &&
                                            c->prev_size <= off - h->first &&
                                            at(h, off - c->prev_size)->size == c->prev_size);
        if (!sane)
            rc = FMPL_ERROR(FMPL_ERR_ARG, "%p: block header is corrupt (written out of bounds?)",
                            p);
    }
    if (rc != FMPL_SUCCESS) {
        heap_unlock(h);
        return rc;
    }

    uint64_t next = off + c->size;
    if (next < h->end && at(h, next)->state == CHUNK_FREE) {
        chunk *n = at(h, next);
        list_remove(h, next);
        c->size += n->size;
        n->tag = 0;
        n->state = 0;
    }
    if (c->prev_size) {
        uint64_t prev = off - c->prev_size;
        chunk *pc = at(h, prev);
        if (pc->state == CHUNK_FREE) {
            list_remove(h, prev);
            pc->size += c->size;
            c->tag = 0;
            c->state = 0;
            off = prev;
            c = pc;
        }
    }
    c->requested = 0;
    fix_next_prev(h, off);
    list_insert(h, off);
    heap_unlock(h);
    return FMPL_SUCCESS;
}

size_t fmpl_heap_block_size(const fmpl_heap *h, const void *p)
{
    uint64_t off = (uint64_t)((uintptr_t)p - (uintptr_t)h) - LINE;
    return (size_t)(at(h, off)->size - LINE);
}

int fmpl_heap_contains(const fmpl_heap *h, const void *p)
{
    uintptr_t a = (uintptr_t)p, base = (uintptr_t)h;
    return h && a >= base + h->first && a < base + h->end;
}

size_t fmpl_heap_free_bytes(const fmpl_heap *h)
{
    heap_lock(h);
    size_t n = (size_t)(h->free_chunk_bytes - h->free_chunks * LINE);
    heap_unlock(h);
    return n;
}

size_t fmpl_heap_largest_free(const fmpl_heap *h)
{
    uint64_t best = 0;
    heap_lock(h);
    if (h->fl_bitmap) {
        unsigned fl = log2_u64(h->fl_bitmap);
        unsigned sl = log2_u64(h->sl_bitmap[fl]);
        for (uint64_t o = h->heads[fl][sl]; o; o = at(h, o)->next_free)
            if (at(h, o)->size > best)
                best = at(h, o)->size;
    }
    heap_unlock(h);
    return best ? (size_t)(best - LINE) : 0;
}

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            heap_unlock(h);                                                        \
            return FMPL_ERROR(FMPL_ERR_INTERNAL, __VA_ARGS__);                     \
        }                                                                          \
    } while (0)

int fmpl_heap_check(const fmpl_heap *h)
{
    if (!h || h->magic != HEAP_MAGIC)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "%p is not a heap", (const void *)h);
    heap_lock(h);
    uint64_t nfree = 0, free_bytes = 0, prev_size = 0;
    int prev_free = 0;
    uint64_t off = h->first;
    CHECK(h->first == HEADER_BYTES && h->end % LINE == 0 && h->end <= h->region_size,
          "heap header: first %llu, end %llu", (unsigned long long)h->first,
          (unsigned long long)h->end);
    while (off < h->end) {
        const chunk *c = at(h, off);
        CHECK(c->tag == tag_of(off), "chunk at %llu: bad tag", (unsigned long long)off);
        CHECK(c->size >= MIN_CHUNK && c->size % LINE == 0 && c->size <= h->end - off,
              "chunk at %llu: bad size %llu", (unsigned long long)off,
              (unsigned long long)c->size);
        CHECK(c->prev_size == prev_size, "chunk at %llu: prev_size %llu, previous chunk has %llu",
              (unsigned long long)off, (unsigned long long)c->prev_size,
              (unsigned long long)prev_size);
        CHECK(c->state == CHUNK_FREE || c->state == CHUNK_USED, "chunk at %llu: bad state",
              (unsigned long long)off);
        int is_free = c->state == CHUNK_FREE;
        CHECK(!(is_free && prev_free), "chunks before %llu: two adjacent free chunks",
              (unsigned long long)off);
        if (is_free) {
            nfree++;
            free_bytes += c->size;
            /* I4: on the list of its class. */
            unsigned fl, sl;
            mapping(c->size / LINE, &fl, &sl);
            uint64_t o = h->heads[fl][sl];
            while (o && o != off)
                o = at(h, o)->next_free;
            CHECK(o == off, "free chunk at %llu is not on its list", (unsigned long long)off);
        }
        prev_free = is_free;
        prev_size = c->size;
        off += c->size;
    }
    CHECK(off == h->end, "chunks overrun the end");
    CHECK(nfree == h->free_chunks && free_bytes == h->free_chunk_bytes,
          "counters: %llu free chunks of %llu bytes, recorded %llu of %llu",
          (unsigned long long)nfree, (unsigned long long)free_bytes,
          (unsigned long long)h->free_chunks, (unsigned long long)h->free_chunk_bytes);
    uint64_t listed = 0;
    for (unsigned fl = 0; fl < FL_COUNT; fl++) {
        CHECK(!!(h->fl_bitmap & (1ull << fl)) == !!h->sl_bitmap[fl], "fl bitmap bit %u", fl);
        for (unsigned sl = 0; sl < SL_COUNT; sl++) {
            uint64_t o = h->heads[fl][sl];
            CHECK(!!(h->sl_bitmap[fl] & (1u << sl)) == !!o, "sl bitmap bit %u/%u", fl, sl);
            uint64_t back = 0;
            for (; o; back = o, o = at(h, o)->next_free) {
                const chunk *c = at(h, o);
                unsigned f, s;
                mapping(c->size / LINE, &f, &s);
                CHECK(c->state == CHUNK_FREE && f == fl && s == sl && c->prev_free == back,
                      "list %u/%u: chunk at %llu misplaced", fl, sl, (unsigned long long)o);
                CHECK(++listed <= nfree, "list %u/%u: more entries than free chunks (a cycle?)",
                      fl, sl);
            }
        }
    }
    CHECK(listed == nfree, "%llu chunks listed, %llu free", (unsigned long long)listed,
          (unsigned long long)nfree);
    heap_unlock(h);
    return FMPL_SUCCESS;
}
