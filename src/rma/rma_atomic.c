/* Small accumulates, element by element with the processor's atomics,
 * under the target's accumulate lock taken shared (rma.c takes it
 * exclusively for bulk updates): for at most FMPL_RMA_ATOMIC_MAX elements
 * of 1, 2, 4 or 8 bytes, each aligned to its size, in a shared heap.
 *
 * Remote operations, origin O updating target T:
 *   fetch_add(T.acc, +1); if EXCL was set, undo and retry once it clears
 *   for each element e of the target datatype, in stream order:
 *     old = atomic load of e
 *     repeat: new = compare-and-swap ? (old == compare ? origin : old)
 *                                    : combine(origin, old)
 *             until new == old (nothing to write: the load was the atomic
 *             read) or cswap(e, old -> new) succeeds (else old = what it saw)
 *     fetched[e] = old (Get_accumulate, Fetch_and_op, Compare_and_swap)
 *   fetch_add(T.acc, -1)
 * Two such updates are atomic per element with respect to each other (one
 * atomic instruction each); a bulk update holds T.acc exclusively, so it
 * never overlaps one.  Every accumulate is thus atomic per element with
 * respect to every other, as MPI requires, and small updates from several
 * origins do not wait for each other. */
#include "rma/rma.h"

#include <string.h>

typedef struct atomic_walk {
    size_t esize;
    fmpl_rma_combine_fn combine;
    void *ctx;
    char *base;               /* the stream's start, to find each element's place */
    const char *origin;       /* stream of origin elements, or NULL (no-op) */
    const char *compare;      /* compare-and-swap: the element to compare with */
    char *fetched;            /* stream of old values, or NULL */
} atomic_walk;

/* The new value of one element from its old one. */
static void combine(const atomic_walk *a, const void *old, void *nw, int64_t at)
{
    memcpy(nw, old, a->esize);
    if (a->compare) {
        if (!memcmp(old, a->compare, a->esize))
            memcpy(nw, a->origin, a->esize);
    } else if (a->origin) {
        a->combine(a->ctx, a->origin + at, nw);
    }
}

#define ELEMENT_LOOP(T)                                                            \
    for (int64_t i = 0; i < n; i += (int64_t)sizeof(T)) {                          \
        T *e = (T *)(addr + (uintptr_t)i);                                         \
        int64_t at = off + i;                                                      \
        T old = __atomic_load_n(e, __ATOMIC_ACQUIRE), nw;                          \
        for (;;) {                                                                 \
            combine(a, &old, &nw, at);                                             \
            if (!memcmp(&nw, &old, sizeof(T)) ||                                   \
                __atomic_compare_exchange_n(e, &old, nw, 1, __ATOMIC_ACQ_REL,      \
                                            __ATOMIC_ACQUIRE))                     \
                break;                                                             \
        }                                                                          \
        if (a->fetched)                                                            \
            memcpy(a->fetched + at, &old, sizeof(T));                              \
    }

static int update_chunk(void *ctx, uintptr_t addr, char *pk, int64_t n)
{
    const atomic_walk *a = ctx;
    int64_t off = pk - a->base;
    switch (a->esize) {
    case 1: ELEMENT_LOOP(uint8_t) break;
    case 2: ELEMENT_LOOP(uint16_t) break;
    case 4: ELEMENT_LOOP(uint32_t) break;
    default: ELEMENT_LOOP(uint64_t) break;
    }
    return 0;
}

static int misaligned(void *ctx, uintptr_t addr, char *pk, int64_t n)
{
    const atomic_walk *a = ctx;
    (void)pk;
    return addr % a->esize != 0 || (uint64_t)n % a->esize != 0;
}

int fmpl_rma_update_atomic(fmpl_rma_win *w, int t, int64_t disp, int64_t tcount,
                           const fmpl_datatype *ttype, const fmpl_rma_elements *el)
{
    fmpl_raddr dst = w->peer[t].base;
    dst.addr += (uint64_t)disp;
    size_t es = el->esize;
    if (dst.kind != FMPL_MEM_SHARED || !(es == 1 || es == 2 || es == 4 || es == 8) ||
        tcount * fmpl_dt_size(ttype) > FMPL_RMA_ATOMIC_MAX * (int64_t)es)
        return 0;
    char *p = fmpl_fab_ptr(dst);
    if (!p)
        return 0; /* a network peer's memory: the locked update (rma.c) */
    /* The walk needs a stream pointer to count positions: the origin's, the
     * fetch buffer's, or (a pure no-op without fetch) nothing to do. */
    char *stream = el->fetched ? el->fetched : (char *)el->origin;
    if (!stream)
        return 1;
    atomic_walk a = {.esize = es, .combine = el->combine, .ctx = el->ctx, .base = stream,
                     .origin = el->origin, .compare = el->compare, .fetched = el->fetched};
    if (fmpl_dt_for_each_chunk((uintptr_t)p, tcount, ttype, stream, misaligned, &a))
        return 0;
    fmpl_rma_acc_lock(w, t, 0);
    fmpl_dt_for_each_chunk((uintptr_t)p, tcount, ttype, stream, update_chunk, &a);
    fmpl_rma_acc_unlock(w, t, 0);
    return 1;
}
