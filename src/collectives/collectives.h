/* Collectives: the algorithm catalogue and its selection.  One file per
 * algorithm; select.c decides which runs.  Arguments arrive checked. */
#ifndef FMPL_COLLECTIVES_H
#define FMPL_COLLECTIVES_H

#include <stdint.h>
#include <string.h>

#include "collectives/coll_run.h"
#include "collectives/coll_team.h"
#include "collectives/op.h"
#include "protocols/team.h"

/* Blocks of the gather/scatter/allgather/alltoall families, in bytes: member
 * p's block is counts[p] bytes at byte displacement displs[p] of the buffer.
 * The regular forms pass NULL arrays: every block is `block` bytes and
 * member p's is at p * block.  Blocks of one buffer must not overlap.
 * A layout with NULL counts and block > 0 is "uniform": every member knows
 * it (root-only arrays of a v form that are not significant here arrive as
 * NULL with block 0, which is not uniform). */
typedef struct fmpl_coll_layout {
    const int64_t *counts;
    const int64_t *displs;
    int64_t block;
} fmpl_coll_layout;

static inline int64_t fmpl_layout_count(const fmpl_coll_layout *l, int p)
{
    return l->counts ? l->counts[p] : l->block;
}
static inline int64_t fmpl_layout_displ(const fmpl_coll_layout *l, int p)
{
    return l->displs ? l->displs[p] : (int64_t)p * l->block;
}
static inline int fmpl_layout_uniform(const fmpl_coll_layout *l)
{
    return l && !l->counts && l->block > 0;
}

static inline int64_t fmpl_clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* memcpy of n >= 0 bytes where a pointer may be NULL when n == 0 (MPI allows
 * it); callers never form `NULL + offset` either. */
static inline void fmpl_coll_copy(void *dst, const void *src, int64_t n)
{
    if (n > 0)
        memcpy(dst, src, (size_t)n);
}

/* flags of the collectives below.  FMPL_COLL_IN_PLACE is MPI_IN_PLACE:
 *   gather(v)          root: its own block is already at its place in recvbuf
 *                      (sendbuf and sendbytes are ignored on the root)
 *   scatter(v)         root: its own block stays in sendbuf (recvbuf ignored)
 *   allgather(v)       every member: its block is already in recvbuf
 *   reduce_scatter(_block)  the input vector is in recvbuf; the result goes to
 *                      the start of recvbuf
 *   scan, exscan       the input is in recvbuf
 *   alltoall(v)        not supported here (FMPL_ERR_UNSUPPORTED): the MPI
 *                      binding copies recvbuf aside and passes the copy. */
#define FMPL_COLL_IN_PLACE 1

/* Entry points (select.c): pick an algorithm, run it. */
int fmpl_coll_barrier(fmpl_team *t);
int fmpl_coll_bcast(fmpl_team *t, void *buf, int64_t size, int root);
int fmpl_coll_reduce(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, int root,
                     void *work);
int fmpl_coll_allreduce(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, void *work);
/* Every member contributes `len` bytes (len <= FMPL_COLL_AREA / size);
 * `all` receives size * len bytes in rank order. */
int fmpl_coll_allgather_small(fmpl_team *t, const void *mine, int64_t len, void *all);

/* Data movement (blocking, bytes).  Counts and displacements are significant
 * where MPI says so: recvcounts/displs of gatherv and sendcounts/displs of
 * scatterv on the root only; the other arrays on every member.  Each pair's
 * two views of a block size must agree (the MPI type-signature rule).
 * alltoallw: the MPI binding calls alltoallv with byte displacements when
 * every datatype is contiguous, else packs the send blocks into one buffer
 * and unpacks the received ones around an alltoallv of packed bytes. */
int fmpl_coll_gatherv(fmpl_team *t, const void *sendbuf, int64_t sendbytes, void *recvbuf,
                      const int64_t *recvcounts, const int64_t *displs, int root, int flags);
int fmpl_coll_gather(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t bytes, int root,
                     int flags);
int fmpl_coll_scatterv(fmpl_team *t, const void *sendbuf, const int64_t *sendcounts,
                       const int64_t *displs, void *recvbuf, int64_t recvbytes, int root,
                       int flags);
int fmpl_coll_scatter(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t bytes, int root,
                      int flags);
/* Member p contributes recvcounts[p] bytes (from sendbuf, or in place). */
int fmpl_coll_allgatherv(fmpl_team *t, const void *sendbuf, void *recvbuf,
                         const int64_t *recvcounts, const int64_t *displs, int flags);
int fmpl_coll_allgather(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t bytes,
                        int flags);
int fmpl_coll_alltoallv(fmpl_team *t, const void *sendbuf, const int64_t *sendcounts,
                        const int64_t *sdispls, void *recvbuf, const int64_t *recvcounts,
                        const int64_t *rdispls, int flags);
int fmpl_coll_alltoall(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t bytes,
                       int flags);

/* Reductions in rank order (`in` of fmpl_op_apply is always the lower
 * ranks' operand).  Counts are in elements of the operation.
 * reduce_scatter: member p gets elements [sum(counts[0..p-1]), + counts[p])
 * of the reduced vector (counts on every member); _block: count each. */
int fmpl_coll_reduce_scatter(fmpl_team *t, const void *sendbuf, void *recvbuf,
                             const int64_t *counts, const fmpl_op *op, int flags);
int fmpl_coll_reduce_scatter_block(fmpl_team *t, const void *sendbuf, void *recvbuf,
                                   int64_t count, const fmpl_op *op, int flags);
/* Inclusive: member p gets x0 op .. op xp.  Exclusive: x0 op .. op x(p-1);
 * member 0's recvbuf is not written. */
int fmpl_coll_scan(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t count,
                   const fmpl_op *op, int flags);
int fmpl_coll_exscan(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t count,
                     const fmpl_op *op, int flags);

/* The catalogue.  The shared-memory algorithms are resumable (coll_run.h):
 * a *_setup fills a run's state with the arguments (the caller owns it: on
 * its stack for a blocking call, in the schedule for the others), and the
 * run takes its sequence numbers when it starts. */
typedef struct fmpl_barrier_run {
    fmpl_coll_algo a;
    uint64_t epoch;
    int k;
} fmpl_barrier_run;
void fmpl_barrier_dissemination_setup(fmpl_barrier_run *st, fmpl_team *t);
void fmpl_barrier_binomial_setup(fmpl_barrier_run *st, fmpl_team *t);
void fmpl_barrier_central_setup(fmpl_barrier_run *st, fmpl_team *t);

typedef struct fmpl_bcast_ring {
    fmpl_coll_algo a;
    char *buf;
    int64_t size;
    int root;
    int cursor;
    uint64_t first, nchunks, i;
    /* A member whose size is not the root's (bcast_shm_mismatch.c): the
     * root's size, the unit to consume next, the root's first chunk unit
     * (after its descriptor, if any) and the end of its units, the error
     * to return. */
    int64_t root_size;
    uint64_t drain_next, drain_chunk0, drain_end;
    int drain_err;
} fmpl_bcast_ring;
void fmpl_bcast_shm_pipelined_setup(fmpl_bcast_ring *st, fmpl_team *t, void *buf,
                                    int64_t size, int root);
int fmpl_bcast_ring_body(fmpl_coll_algo *a);
/* The descriptor unit of bcast_shm_direct.c, in the root's ring slot. */
enum { FMPL_BCAST_DESC_RING = 1, FMPL_BCAST_DESC_DIRECT = 2 };
typedef struct fmpl_bcast_desc {
    uint64_t kind;
    uint64_t addr; /* fmpl_raddr_pack of the root's buffer */
} fmpl_bcast_desc;
/* Member, at its first unit u0 of a call: does the root's unit match this
 * member's call (its size, and kind: FMPL_BCAST_UNIT_*)?  If not, the state
 * is set to follow the root's units instead (fmpl_bcast_drain) and 1 is
 * returned. */
int fmpl_bcast_mismatch(fmpl_bcast_ring *st, fmpl_coll_team *c, uint64_t u0, int kind);
/* After fmpl_bcast_mismatch: consume the root's units of the call as they
 * come, keeping what fits this member's buffer; 1 once done (then the
 * team's sequence is at the root's end and st->drain_err holds the error). */
int fmpl_bcast_drain(fmpl_bcast_ring *st, fmpl_coll_team *c);
/* A member's error when the root sent `sent` bytes and it expected `mine`
 * (FMPL_ERR_TRUNCATE: more; FMPL_ERR_ARG: fewer; FMPL_SUCCESS: equal). */
int fmpl_bcast_size_check(int root, int64_t sent, int64_t mine);
/* The ring broadcast's prepared form (bcast_shm_plan.c): a persistent
 * broadcast of a few bytes on shared memory becomes one line per instance. */
void fmpl_bcast_plan_prepare(fmpl_coll_algo *a);
/* Members copy straight from a root buffer in the shared heap (else the
 * pipelined ring): large messages. */
typedef struct fmpl_bcast_run {
    fmpl_coll_algo a;
    fmpl_bcast_ring ring; /* the arguments; the ring broadcast when it falls back */
    uint64_t q;
    uint64_t nchunks;     /* the buffer's chunks (bcast_shm_direct.c) */
    const char *from;     /* the root's buffer, mapped here */
    int cursor, direct;
} fmpl_bcast_run;
void fmpl_bcast_shm_direct_setup(fmpl_bcast_run *st, fmpl_team *t, void *buf, int64_t size,
                                 int root);

/* root < 0: allreduce.  The operation is copied into the state. */
typedef struct fmpl_reduce_run {
    fmpl_coll_algo a;
    char *buf;
    int64_t count;
    fmpl_op op;
    int root;
    int cursor, direct, q;
    uint64_t s;
    int64_t off, m;
} fmpl_reduce_run;
static inline void fmpl_reduce_run_init(fmpl_reduce_run *st, int (*body)(fmpl_coll_algo *),
                                        fmpl_team *t, void *buf, int64_t count,
                                        const fmpl_op *op, int root)
{
    fmpl_coll_algo_init(&st->a, body, t);
    st->buf = buf;
    st->count = count;
    st->op = *op;
    st->root = root;
}
void fmpl_reduce_shm_flat_setup(fmpl_reduce_run *st, fmpl_team *t, void *buf, int64_t count,
                                const fmpl_op *op, int root);
void fmpl_reduce_shm_slices_setup(fmpl_reduce_run *st, fmpl_team *t, void *buf, int64_t count,
                                  const fmpl_op *op, int root);

/* The pairwise shared-memory engine behind the *_shm data movers
 * (shm_pairs.c), resumable.  Which blocks go where follows from `kind`.
 * The layouts are copies; the arrays they point to are the caller's and
 * must stay valid until the run completes. */
enum { FMPL_PAIRS_GATHER, FMPL_PAIRS_SCATTER, FMPL_PAIRS_ALLGATHER, FMPL_PAIRS_ALLTOALL };
typedef struct fmpl_pairs_plan {
    int kind;
    int root;                     /* gather, scatter */
    int in_place;                 /* FMPL_COLL_IN_PLACE given (see above) */
    const char *sbuf;
    char *rbuf;
    int64_t sbytes;               /* gather: my block */
    int64_t rbytes;               /* scatter: my block */
    fmpl_coll_layout sl;          /* scatter (root), alltoall: send blocks */
    fmpl_coll_layout rl;          /* gather (root), allgather, alltoall: receive blocks */
} fmpl_pairs_plan;
typedef struct fmpl_pairs_run {
    fmpl_coll_algo a;
    fmpl_pairs_plan x;
    /* progress of the run (shm_pairs.c) */
    uint64_t s, base;             /* exchange sequence, s << 32 */
    int nchan, err, cursor;
    int pull;                     /* both buffers shared: the receiver copies */
    int cma_pull;                 /* both private: the receiver makes the CMA call */
    int64_t slot, eager;
    int bc_state;                 /* allgather stream: 0 none/done, 1 modes unknown, 2 staging */
    int64_t bc_n;
    uint64_t bc_next, bc_nchunks;
} fmpl_pairs_run;
void fmpl_shm_pairs_setup(fmpl_pairs_run *st, fmpl_team *t, const fmpl_pairs_plan *x);
/* The staging slots of `kind` on this team are large enough (>= 64 bytes). */
int fmpl_shm_pairs_usable(const fmpl_team *t, int kind);
void fmpl_gatherv_shm_setup(fmpl_pairs_run *st, fmpl_team *t, const void *sendbuf,
                            int64_t sendbytes, void *recvbuf, const fmpl_coll_layout *l,
                            int root, int flags);
void fmpl_scatterv_shm_setup(fmpl_pairs_run *st, fmpl_team *t, const void *sendbuf,
                             const fmpl_coll_layout *l, void *recvbuf, int64_t recvbytes,
                             int root, int flags);
void fmpl_allgatherv_shm_setup(fmpl_pairs_run *st, fmpl_team *t, const void *sendbuf,
                               void *recvbuf, const fmpl_coll_layout *l, int flags);
void fmpl_alltoallv_shm_setup(fmpl_pairs_run *st, fmpl_team *t, const void *sendbuf,
                              const fmpl_coll_layout *sl, void *recvbuf,
                              const fmpl_coll_layout *rl);

/* Reduce-scatter in shared memory (resumable): counts[p] elements for
 * member p, or `block` each when counts is NULL (reduce_scatter_block).
 * counts must stay valid until the run completes. */
typedef struct fmpl_reduce_scatter_run {
    fmpl_coll_algo a;
    const char *in;
    char *out;
    const int64_t *counts;
    int64_t block;
    fmpl_op op;
    int64_t maxc, stride, q, lo;
    uint64_t s;
    int cursor;
} fmpl_reduce_scatter_run;
void fmpl_reduce_scatter_shm_setup(fmpl_reduce_scatter_run *st, fmpl_team *t,
                                   const void *sendbuf, void *recvbuf, const int64_t *counts,
                                   int64_t block, const fmpl_op *op, int flags);

/* Scan and exscan in shared memory (resumable). */
typedef struct fmpl_scan_run {
    fmpl_coll_algo a;
    const char *in;
    char *out;
    int64_t count, off;
    fmpl_op op;
    int in_place, exclusive, k, cursor;
    uint64_t s;
} fmpl_scan_run;
void fmpl_scan_shm_setup(fmpl_scan_run *st, fmpl_team *t, const void *sendbuf, void *recvbuf,
                         int64_t count, const fmpl_op *op, int flags, int exclusive);

/* Names for logs, fmpl_info and the environment overrides. */
const char *fmpl_coll_describe_selection(void);

#endif
