/* Accumulates element by element with the processor's atomics, without the
 * target's accumulate mutex (rma.c): for targets in a shared heap whose
 * elements are 1, 2, 4 or 8 bytes at addresses aligned to their size.
 *
 * Remote operations, origin O updating target T's element e (T never
 * acts), for each element of the target datatype in stream order:
 *   old = atomic load of e
 *   repeat: new = compare-and-swap ? (old == compare ? origin : old)
 *                                  : combine(origin, old)
 *           until new == old (nothing to write: the load was the atomic
 *           read) or cswap(e, old -> new) succeeds (else old = what it saw)
 *   fetched[e] = old (Get_accumulate, Fetch_and_op, Compare_and_swap)
 * Every update is one atomic read-modify-write of its element, so any
 * operation is atomic per element with respect to every other on the same
 * element, as MPI requires.  Whether this path applies depends only on the
 * element (its memory kind, size and address), never on the caller, so all
 * accumulates to one element of one basic type take the same path: they
 * never mix this path with the mutex's. */
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

static int misaligned(void *ctx, uintptr_t addr, char *pk, int64_t n)
{
    const atomic_walk *a = ctx;
    (void)pk;
    return (addr % a->esize) != 0 || (uint64_t)n % a->esize != 0;
}

#define ELEMENT_LOOP(T)                                                            \
    for (int64_t i = 0; i < n; i += (int64_t)sizeof(T)) {                          \
        T *e = (T *)(addr + (uintptr_t)i);                                         \
        int64_t at = off + i;                                                      \
        T old = __atomic_load_n(e, __ATOMIC_ACQUIRE), nw;                          \
        for (;;) {                                                                 \
            nw = old;                                                              \
            if (a->compare) {                                                      \
                if (!memcmp(&old, a->compare, sizeof(T)))                          \
                    memcpy(&nw, a->origin, sizeof(T));                             \
            } else if (a->origin) {                                                \
                a->combine(a->ctx, a->origin + at, &nw);                           \
            }                                                                      \
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

int fmpl_rma_update_atomic(fmpl_rma_win *w, int t, int64_t disp, int64_t tcount,
                           const fmpl_datatype *ttype, const fmpl_rma_elements *el)
{
    fmpl_raddr dst = w->peer[t].base;
    dst.addr += (uint64_t)disp;
    size_t es = el->esize;
    if (dst.kind != FMPL_MEM_SHARED || !(es == 1 || es == 2 || es == 4 || es == 8))
        return 0;
    char *p = fmpl_fab_ptr(dst);
    /* The walk needs a stream pointer to count positions: the origin's, the
     * fetch buffer's, or (a pure no-op without fetch) nothing to do. */
    char *stream = el->fetched ? el->fetched : (char *)el->origin;
    if (!stream)
        return 1;
    atomic_walk a = {.esize = es, .combine = el->combine, .ctx = el->ctx, .base = stream,
                     .origin = el->origin, .compare = el->compare, .fetched = el->fetched};
    if (fmpl_dt_for_each_chunk((uintptr_t)p, tcount, ttype, stream, misaligned, &a))
        return 0; /* some element is not aligned: the mutex path, always, for it */
    fmpl_dt_for_each_chunk((uintptr_t)p, tcount, ttype, stream, update_chunk, &a);
    return 1;
}
