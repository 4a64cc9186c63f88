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
 * An element whose address is not aligned to its size is updated the same
 * way under T's accumulate mutex (T.acc, as in rma.c), with plain loads and
 * stores.  Every update is one atomic read-modify-write of its element, so
 * any operation is atomic per element with respect to every other on the
 * same element, as MPI requires.  Which of the two an element takes depends
 * only on the element (its memory kind, size and address), never on the
 * call, so accumulates to one element of one basic type never mix the
 * atomic instruction with the mutex. */
#include "rma/rma.h"

#include <string.h>

typedef struct atomic_walk {
    fmpl_rma_win *w;
    int t;
    size_t esize;
    fmpl_rma_combine_fn combine;
    void *ctx;
    char *base;               /* the stream's start, to find each element's place */
    const char *origin;       /* stream of origin elements, or NULL (no-op) */
    const char *compare;      /* compare-and-swap: the element to compare with */
    char *fetched;            /* stream of old values, or NULL */
} atomic_walk;

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

/* A piece whose elements are not aligned: under the mutex. */
static void update_unaligned(const atomic_walk *a, char *addr, int64_t off, int64_t n)
{
    uint64_t old, nw;
    fmpl_rma_acc_lock(a->w, a->t);
    for (int64_t i = 0; i < n; i += (int64_t)a->esize) {
        memcpy(&old, addr + i, a->esize);
        combine(a, &old, &nw, off + i);
        memcpy(addr + i, &nw, a->esize);
        if (a->fetched)
            memcpy(a->fetched + off + i, &old, a->esize);
    }
    fmpl_rma_acc_unlock(a->w, a->t);
}

static int update_chunk(void *ctx, uintptr_t addr, char *pk, int64_t n)
{
    const atomic_walk *a = ctx;
    int64_t off = pk - a->base;
    if (addr % a->esize) {
        update_unaligned(a, (char *)addr, off, n);
        return 0;
    }
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
    atomic_walk a = {.w = w, .t = t, .esize = es, .combine = el->combine, .ctx = el->ctx,
                     .base = stream, .origin = el->origin, .compare = el->compare,
                     .fetched = el->fetched};
    fmpl_dt_for_each_chunk((uintptr_t)p, tcount, ttype, stream, update_chunk, &a);
    return 1;
}
