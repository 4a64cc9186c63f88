/* One-sided communication: windows over FMPL's remote memory operations.
 *
 * The origin does everything itself; the target never takes part (passive
 * target progresses while it computes).  Each member of a window owns a
 * descriptor in its shared heap (locks, PSCW counters) and exposes a memory
 * region reached through the fabric: direct loads and stores when the
 * region is in a shared heap, kernel-assisted copies (CMA) when it is
 * private memory, remote reads and writes (registered private memory: its
 * key travels in the exchange) when the member is a network peer.  See rma.c for the sequence of remote operations.
 *
 * Layer: rma -> progress -> protocols -> fabric; uses the datatype engine.
 * Creation exchanges FMPL_RMA_ENTRY_WORDS words per member; the caller
 * (which owns a communicator's collectives) does the allgather between
 * fmpl_rma_win_entry and fmpl_rma_win_connect. */
#ifndef FMPL_RMA_RMA_H
#define FMPL_RMA_RMA_H

#include <stdatomic.h>
#include <stdint.h>

#include "datatype/datatype.h"
#include "fabric/fabric.h"

typedef struct fmpl_rma_line {
    _Atomic uint64_t v;
    char pad[56];
} fmpl_rma_line;

/* In each member's shared heap.  Every counter only grows. */
typedef struct fmpl_rma_desc {
    fmpl_rma_line lock;      /* passive target: FMPL_RMA_EXCL | shared holders */
    fmpl_rma_line acc;       /* accumulates: FMPL_RMA_EXCL (bulk) | atomic-path holders */
    fmpl_rma_line completed; /* PSCW: Win_complete calls that named me as target */
    _Atomic uint64_t posted[]; /* [size] PSCW: Win_post calls of member t naming me */
} fmpl_rma_desc;

#define FMPL_RMA_EXCL (1ull << 62)

typedef struct fmpl_rma_peer {
    fmpl_raddr base;      /* the window memory (dynamic: address 0, private) */
    uint64_t size;        /* bytes (dynamic: unbounded) */
    int64_t disp_unit;
    fmpl_raddr desc;      /* the member's fmpl_rma_desc */
    char *direct;         /* the memory in load/store reach (fmpl_fab_ptr of base,
                             resolved at connection), NULL: not (private memory
                             of another process, dynamic windows) */
} fmpl_rma_peer;

typedef struct fmpl_rma_win {
    int rank, size;
    int dynamic;
    fmpl_rma_desc *mine;
    fmpl_rma_peer *peer;       /* [size] */
    uint64_t *posts_used;      /* [size] posts of each member consumed by start */
    uint64_t completes_used;   /* completions consumed by wait / test */
    const void *reg_base;      /* private memory registered for network peers */
    size_t reg_len;
    uint64_t reg_key;
    int watched;           /* holds an agent watch: over the network a passive
                              target's memory is written only while it polls */
} fmpl_rma_win;

#define FMPL_RMA_ENTRY_WORDS 6

/* A window of `size` members in which this process is `rank`: allocates
 * the descriptor.  FMPL_SUCCESS or FMPL_ERR_NO_MEMORY. */
int fmpl_rma_win_create(int rank, int size, int dynamic, fmpl_rma_win **out);
/* Expose this member's private memory to network peers (a registration,
 * dropped by fmpl_rma_win_destroy); nothing to do on one host or for the
 * shared heap.  FMPL_SUCCESS, or why the provider refused it. */
int fmpl_rma_win_expose(fmpl_rma_win *w, fmpl_raddr base, uint64_t size);
/* This member's words for the exchange: its memory (base, bytes, unit). */
void fmpl_rma_win_entry(const fmpl_rma_win *w, fmpl_raddr base, uint64_t size,
                        int64_t disp_unit, uint64_t entry[FMPL_RMA_ENTRY_WORDS]);
/* All members' entries ([size][FMPL_RMA_ENTRY_WORDS]); world[] maps
 * members to world ranks. */
void fmpl_rma_win_connect(fmpl_rma_win *w, const uint64_t *entries, const int *world);
void fmpl_rma_win_destroy(fmpl_rma_win *w);

/* Is [disp, disp + span) inside member t's window?  (dynamic: always) */
static inline int fmpl_rma_in_window(const fmpl_rma_win *w, int t, int64_t disp, int64_t span)
{
    if (w->dynamic)
        return 1;
    return disp >= 0 && span >= 0 && (uint64_t)disp + (uint64_t)span <= w->peer[t].size;
}

/* The fast path of contiguous accesses: where the bytes [disp * disp_unit
 * + lb, + bytes) of member t's window are when loads and stores reach them
 * and they lie inside the window; NULL otherwise (the general path below
 * decides, and the caller reports any error).  A put or get is then one
 * memcpy, complete on return like every access. */
static inline char *fmpl_rma_direct_span(const fmpl_rma_win *w, int t, int64_t disp, int64_t lb,
                                         uint64_t bytes)
{
    const fmpl_rma_peer *p = &w->peer[t];
    int64_t off;
    if (!p->direct || __builtin_mul_overflow(disp, p->disp_unit, &off) ||
        __builtin_add_overflow(off, lb, &off) || off < 0 || bytes > p->size ||
        (uint64_t)off > p->size - bytes)
        return NULL;
    return p->direct + off;
}

/* ------------------------------------------------------------ data
 * The target side of every access: tcount elements of ttype at byte
 * displacement `disp` of member t's window.  Complete on return. */
int fmpl_rma_put(fmpl_rma_win *w, int t, int64_t disp, const void *obuf, int64_t ocount,
                 const fmpl_datatype *otype, int64_t tcount, const fmpl_datatype *ttype);
int fmpl_rma_get(fmpl_rma_win *w, int t, int64_t disp, void *obuf, int64_t ocount,
                 const fmpl_datatype *otype, int64_t tcount, const fmpl_datatype *ttype);
/* Read-modify-write under member t's accumulate mutex: fn sees the
 * target's data as its packed stream (`bytes` bytes) and changes it in
 * place; the result is written back.  Atomic with respect to every other
 * fmpl_rma_update on that member. */
typedef void (*fmpl_rma_update_fn)(void *ctx, char *stream, int64_t bytes);
int fmpl_rma_update(fmpl_rma_win *w, int t, int64_t disp, int64_t tcount,
                    const fmpl_datatype *ttype, fmpl_rma_update_fn fn, void *ctx);

/* Member t's accumulate lock: exclusive for a bulk update (fmpl_rma_update
 * takes it itself), shared for the atomic path. */
void fmpl_rma_acc_lock(fmpl_rma_win *w, int t, int exclusive);
void fmpl_rma_acc_unlock(fmpl_rma_win *w, int t, int exclusive);
/* The same update with the processor's atomics, for small updates
 * (FMPL_RMA_ATOMIC_MAX elements at most) of 1, 2, 4 or 8-byte elements,
 * all aligned to their size, in a shared heap (rma_atomic.c): the
 * accumulate lock is taken shared, so such updates from several origins
 * run at once, each element one atomic read-modify-write, while bulk
 * updates exclude them all.  The elements are the packed stream's: not for
 * types whose C layout differs (pair types).  Returns 1 when done, 0 when
 * the update cannot take this path (then use fmpl_rma_update). */
#define FMPL_RMA_ATOMIC_MAX 64
typedef void (*fmpl_rma_combine_fn)(void *ctx, const void *in, void *inout); /* one element */
typedef struct fmpl_rma_elements {
    size_t esize;
    fmpl_rma_combine_fn combine;  /* inout = in op inout */
    void *ctx;
    const char *origin;           /* origin stream, NULL: MPI_NO_OP */
    const char *compare;          /* compare-and-swap: the compare element, else NULL */
    char *fetched;                /* the old values' stream, or NULL */
} fmpl_rma_elements;
int fmpl_rma_update_atomic(fmpl_rma_win *w, int t, int64_t disp, int64_t tcount,
                           const fmpl_datatype *ttype, const fmpl_rma_elements *el);

/* ------------------------------------------------------------ synchronisation */

void fmpl_rma_lock(fmpl_rma_win *w, int t, int exclusive);
void fmpl_rma_unlock(fmpl_rma_win *w, int t, int exclusive);
/* Every access issued so far is visible to its target. */
static inline void fmpl_rma_flush(void) { fmpl_fab_flush(-1); }
/* PSCW.  post: tell each origin in members[n] it may access me; start:
 * wait for each target's post; complete: tell each target I am done;
 * wait / test: n origins have completed. */
void fmpl_rma_post(fmpl_rma_win *w, const int *members, int n);
void fmpl_rma_start(fmpl_rma_win *w, const int *members, int n);
void fmpl_rma_complete(fmpl_rma_win *w, const int *members, int n);
void fmpl_rma_wait(fmpl_rma_win *w, int n);
int fmpl_rma_test(fmpl_rma_win *w, int n);

#endif
