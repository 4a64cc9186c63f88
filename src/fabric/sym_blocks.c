/* Blocks of the symmetric arena: a deterministic first-fit allocator over
 * offsets.
 *
 * The live blocks are a sorted array of {offset, size}.  Nothing depends on
 * time, addresses or history beyond the set of live blocks, so ranks that
 * hold the same blocks propose the same offset for the same request: the
 * agreement in runtime/symmetric.c then costs one allreduce.  Ranks whose
 * blocks differ (members of other communicators allocated in between)
 * propose different offsets; the agreement retries from the largest one,
 * which is why first fit takes a lower bound.
 *
 * Allocation and release are collective calls, never on a message's path:
 * the array grows by doubling.  Lookups (every remote copy checks its
 * addresses) are a binary search. */
#include "fabric/symmetric.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

static uint64_t round_up(uint64_t n) { return (n + FMPL_SYM_ALIGN - 1) & ~(uint64_t)(FMPL_SYM_ALIGN - 1); }

/* Index of the first block whose offset is >= off. */
static int lower_bound(uint64_t off)
{
    int lo = 0, hi = fmpl_sym.nblocks;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (fmpl_sym.blocks[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t fmpl_sym_first_fit(uint64_t from, uint64_t size)
{
    if (size == 0 || size > fmpl_sym.size)
        return FMPL_SYM_NONE;
    uint64_t need = round_up(size), at = round_up(from);
    int i = lower_bound(at);
    /* The block before may reach past `at`. */
    if (i > 0) {
        const fmpl_sym_block *b = &fmpl_sym.blocks[i - 1];
        if (b->off + round_up(b->size) > at)
            at = b->off + round_up(b->size);
    }
    for (; i < fmpl_sym.nblocks; i++) {
        const fmpl_sym_block *b = &fmpl_sym.blocks[i];
        if (b->off >= at && b->off - at >= need)
            break;
        if (b->off + round_up(b->size) > at)
            at = b->off + round_up(b->size);
    }
    return at <= fmpl_sym.size && fmpl_sym.size - at >= need ? at : FMPL_SYM_NONE;
}

int fmpl_sym_take(uint64_t off, uint64_t size)
{
    if (off % FMPL_SYM_ALIGN || fmpl_sym_first_fit(off, size) != off)
        return FMPL_ERROR(FMPL_ERR_INTERNAL,
                          "symmetric block [%#llx, +%llu) is not free in this rank's arena",
                          (unsigned long long)off, (unsigned long long)size);
    if (fmpl_sym.nblocks == fmpl_sym.cap) {
        int cap = fmpl_sym.cap ? 2 * fmpl_sym.cap : 16;
        fmpl_sym_block *nb = realloc(fmpl_sym.blocks, (size_t)cap * sizeof *nb);
        if (!nb)
            return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory to track %d symmetric blocks", cap);
        fmpl_sym.blocks = nb;
        fmpl_sym.cap = cap;
    }
    int i = lower_bound(off);
    memmove(&fmpl_sym.blocks[i + 1], &fmpl_sym.blocks[i],
            (size_t)(fmpl_sym.nblocks - i) * sizeof *fmpl_sym.blocks);
    fmpl_sym.blocks[i] = (fmpl_sym_block){off, size};
    fmpl_sym.nblocks++;
    return FMPL_SUCCESS;
}

int fmpl_sym_give(uint64_t off)
{
    int i = lower_bound(off);
    if (i == fmpl_sym.nblocks || fmpl_sym.blocks[i].off != off)
        return FMPL_ERR_ARG;
    memmove(&fmpl_sym.blocks[i], &fmpl_sym.blocks[i + 1],
            (size_t)(fmpl_sym.nblocks - i - 1) * sizeof *fmpl_sym.blocks);
    fmpl_sym.nblocks--;
    return FMPL_SUCCESS;
}

const fmpl_sym_block *fmpl_sym_find(uint64_t off)
{
    int i = lower_bound(off + 1); /* first block starting after off */
    if (i == 0)
        return NULL;
    const fmpl_sym_block *b = &fmpl_sym.blocks[i - 1];
    return off - b->off < b->size ? b : NULL;
}
