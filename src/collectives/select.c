/* Algorithm selection: for each collective, a table of rules scanned in
 * order; the first whose process-count and size limits hold picks the
 * algorithm.  FMPL_<COLL>_ALGO=<name> overrides the table.  Selection uses
 * only values every member shares (size of the team, bytes, never buffer
 * locations), so all members always run the same algorithm.
 * The same algorithm serves every form: while fmpl_coll_capture is set (a
 * nonblocking or persistent collective, sched_coll.h) an entry point adds
 * it to the captured schedule (a RUN step of a resumable algorithm,
 * coll_run.h, or a point-to-point builder's steps); otherwise it runs it to
 * completion (resumable: on the stack; point-to-point: a schedule built
 * for the call).
 * A team with a network member (fmpl_coll_team.net) runs the point-to-point
 * algorithms (their messages take each pair's own path, shared memory or
 * network) and the dissemination barrier (its flag writes are remote
 * notifies): the shared-memory algorithms read members' memory directly.
 * When it spans nodes some of which hold several members
 * (fmpl_coll_team.nodes), the barrier runs as a schedule too, so that
 * sched_select.c can pick the node-aware ones for it, the broadcast and the
 * reductions.
 * The limits come from fmpl-bench on the development machine (2 cores,
 * shared L3): see docs/architecture.md. */
#include "collectives/collectives.h"
#include "collectives/barrier_split.h"
#include "collectives/sched_coll.h"
#include "collectives/sched_nodes.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

FMPL_TUNABLE(tunable_barrier_algo, "FMPL_BARRIER_ALGO", "auto",
             "barrier algorithm: auto, dissemination, binomial or central");
FMPL_TUNABLE(tunable_barrier_split_algo, "FMPL_BARRIER_SPLIT_ALGO", "auto",
             "split-phase barrier (fmpl_barrier_start): auto (butterfly when the communicator's "
             "size is a power of two, else dissemination), butterfly (powers of two only) or "
             "dissemination");
FMPL_TUNABLE(tunable_bcast_algo, "FMPL_BCAST_ALGO", "auto",
             "broadcast algorithm: auto, binomial (point-to-point tree) or shm_pipelined");
FMPL_TUNABLE(tunable_reduce_algo, "FMPL_REDUCE_ALGO", "auto",
             "reduce algorithm: auto, binomial, shm_flat or shm_slices");
FMPL_TUNABLE(tunable_allreduce_algo, "FMPL_ALLREDUCE_ALGO", "auto",
             "allreduce algorithm: auto, binomial, shm_flat or shm_slices");

FMPL_TUNABLE(tunable_gather_algo, "FMPL_GATHER_ALGO", "auto",
             "gather/gatherv algorithm: auto, linear (point-to-point) or shm");
FMPL_TUNABLE(tunable_scatter_algo, "FMPL_SCATTER_ALGO", "auto",
             "scatter/scatterv algorithm: auto, linear (point-to-point) or shm");
FMPL_TUNABLE(tunable_allgather_algo, "FMPL_ALLGATHER_ALGO", "auto",
             "allgather/allgatherv algorithm: auto, ring (point-to-point) or shm");
FMPL_TUNABLE(tunable_alltoall_algo, "FMPL_ALLTOALL_ALGO", "auto",
             "alltoall/alltoallv algorithm: auto, pairwise (point-to-point) or shm");
FMPL_TUNABLE(tunable_reduce_scatter_algo, "FMPL_REDUCE_SCATTER_ALGO", "auto",
             "reduce_scatter(_block) algorithm: auto, pairwise (point-to-point) or shm");
FMPL_TUNABLE(tunable_scan_algo, "FMPL_SCAN_ALGO", "auto",
             "scan algorithm: auto, recursive_doubling (point-to-point) or shm");
FMPL_TUNABLE(tunable_exscan_algo, "FMPL_EXSCAN_ALGO", "auto",
             "exscan algorithm: auto, recursive_doubling (point-to-point) or shm");

enum { ALGO_AUTO = 0 };
enum { BARRIER_DISSEMINATION = 1, BARRIER_BINOMIAL, BARRIER_CENTRAL };
enum { BCAST_BINOMIAL = 1, BCAST_SHM_PIPELINED, BCAST_SHM_DIRECT };
enum { REDUCE_BINOMIAL = 1, REDUCE_SHM_FLAT, REDUCE_SHM_SLICES };

static const char *const barrier_names[] = {"auto", "dissemination", "binomial", "central",
                                            NULL};
static const char *const bcast_names[] = {"auto", "binomial", "shm_pipelined", "shm_direct",
                                          NULL};
static const char *const reduce_names[] = {"auto", "binomial", "shm_flat", "shm_slices", NULL};
/* The new families: 1 = over point-to-point, 2 = shared memory. */
enum { X_P2P = 1, X_SHM };
static const char *const gather_names[] = {"auto", "linear", "shm", NULL};
static const char *const allgather_names[] = {"auto", "ring", "shm", NULL};
static const char *const alltoall_names[] = {"auto", "pairwise", "shm", NULL};
static const char *const scan_names[] = {"auto", "recursive_doubling", "shm", NULL};

typedef struct rule {
    int max_procs;      /* team size at most */
    int64_t max_bytes;  /* message or vector bytes at most */
    int algo;
} rule;

/* With more ranks than cores on the node (fmpl_oversubscribed, the same on
 * every member of one world: coll_team.h, central_barrier) the central counter: 4 ranks on 2 cores,
 * barrier 5.9-7.3 us (dissemination 5.5-6.1, Open MPI 6.1-7.7), and a
 * broadcast after it 0.12-0.14 us against 2.6-3.3 after dissemination
 * (barrier_central.c says why). */
static const rule barrier_table[] = {
    {INT_MAX, INT64_MAX, BARRIER_DISSEMINATION},
};
/* Direct reads of the root's buffer (when it is in the shared heap) from
 * 64 KiB: one copy per member instead of two. */
static const rule bcast_table[] = {
    {INT_MAX, 65535, BCAST_SHM_PIPELINED},
    {INT_MAX, INT64_MAX, BCAST_SHM_DIRECT},
};
/* shm_flat moves every input to every member: best while inputs are small. */
static const rule reduce_table[] = {
    {INT_MAX, 2048, REDUCE_SHM_FLAT},
    {INT_MAX, INT64_MAX, REDUCE_SHM_SLICES},
};
/* A rooted reduce of 32 KiB to 2 MiB on a few members: the binomial tree
 * over point-to-point messages (whose rendezvous reads shared-heap buffers
 * in place) beat the slices at 2 and 4 members (1 MiB: 106 against 182 us
 * at 2, 178 against 307 at 4); at 4 MiB on 4 members the slices win. */
static const rule rooted_reduce_table[] = {
    {INT_MAX, 2048, REDUCE_SHM_FLAT},
    {INT_MAX, 32767, REDUCE_SHM_SLICES},
    {4, 2097152, REDUCE_BINOMIAL},
    {INT_MAX, INT64_MAX, REDUCE_SHM_SLICES},
};

/* Gather, scatter, allgather, alltoall (bytes: one block; the v forms of
 * gather, scatter and alltoall do not know every block, so they look up
 * INT64_MAX; allgatherv uses the mean block).  The engine of the shm
 * algorithms copies blocks straight between buffers whenever one of the two
 * is in the shared heap, so it wins at every size measured; point-to-point
 * is what remains when the staging slots get too small (many members). */
static const rule gather_table[] = {
    {INT_MAX, INT64_MAX, X_SHM},
};
static const rule scatter_table[] = {
    {INT_MAX, INT64_MAX, X_SHM},
};
static const rule allgather_table[] = {
    {INT_MAX, INT64_MAX, X_SHM},
};
static const rule alltoall_table[] = {
    {INT_MAX, INT64_MAX, X_SHM},
};
/* Reduce-scatter (bytes: the mean block) and scans (bytes: the vector).
 * Pairwise sends raw contributions straight into the peers' work areas and
 * wins by 5-10% from 64 KiB blocks on; shm (one handoff) below. */
static const rule reduce_scatter_table[] = {
    {INT_MAX, 16384, X_SHM},
    {INT_MAX, INT64_MAX, X_P2P},
};
static const rule scan_table[] = {
    {8, INT64_MAX, X_SHM},
    {INT_MAX, INT64_MAX, X_P2P},
};

static int forced_barrier = -1, forced_bcast = -1, forced_reduce = -1, forced_allreduce = -1;
static int forced_gather = -1, forced_scatter = -1, forced_allgather = -1, forced_alltoall = -1;
static int forced_reduce_scatter = -1, forced_scan = -1, forced_exscan = -1;

FMPL_TUNABLE(tunable_schedules, "FMPL_COLL_SCHEDULES", "0",
             "1 (a test mode): the blocking calls of the shared-memory algorithms run "
             "them as the RUN step of a schedule of their own, as the nonblocking forms do");

/* Where a point-to-point algorithm (a schedule builder, sched_coll.h)
 * builds: the schedule being captured (a nonblocking or persistent
 * collective), else a fresh one that the blocking call runs (NULL: no
 * memory). */
static fmpl_sched *p2p_schedule(void)
{
    return fmpl_coll_capture ? fmpl_coll_capture : fmpl_sched_new(FMPL_SCHED_BLOCKING);
}

/* After building into s: a captured schedule is the caller's; a blocking
 * one runs to completion here. */
static int scheduled(fmpl_sched *s, int rc)
{
    if (!s)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a collective schedule");
    if (s == fmpl_coll_capture)
        return rc;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_sched_run(s);
    fmpl_sched_free(s);
    return rc;
}

static int lookup(const rule *table, size_t n, int procs, int64_t bytes)
{
    for (size_t i = 0; i < n; i++)
        if (procs <= table[i].max_procs && bytes <= table[i].max_bytes)
            return table[i].algo;
    return table[n - 1].algo;
}
#define LOOKUP(table, procs, bytes) lookup(table, sizeof table / sizeof table[0], procs, bytes)

static int forced(int *cache, const fmpl_tunable *t, const char *const *names)
{
    if (*cache < 0)
        *cache = fmpl_tunable_choice(t, names);
    return *cache;
}

/* A RUN step holding a copy of the state `a` (size bytes) in s. */
static int add_run(fmpl_sched *s, fmpl_coll_algo *a, size_t size)
{
    fmpl_sched_bind(s, a->team);
    fmpl_sched_phase(s);
    fmpl_coll_algo *copy = fmpl_sched_alloc(s, size);
    if (!copy)
        return s->error;
    memcpy(copy, a, size);
    return fmpl_sched_run_algo(s, 0, copy);
}

/* A resumable algorithm (coll_run.h) whose state is in `a`: while
 * capturing, a RUN step of the captured schedule; else run to completion
 * here (with FMPL_COLL_SCHEDULES=1 through a schedule of its own). */
static int run_algo(fmpl_coll_algo *a, size_t size)
{
    static int as_schedule = -1;
    if (fmpl_coll_capture)
        return add_run(fmpl_coll_capture, a, size);
    if (as_schedule < 0)
        as_schedule = fmpl_tunable_long(&tunable_schedules) > 0;
    if (!as_schedule)
        return fmpl_coll_run(a);
    fmpl_sched *s = fmpl_sched_new(FMPL_SCHED_BLOCKING);
    return scheduled(s, s ? add_run(s, a, size) : FMPL_ERR_NO_MEMORY);
}

/* A point-to-point algorithm: `build` (an expression using the schedule
 * `s`) appends its steps to the captured schedule, or to a fresh one that
 * this blocking call runs to completion. */
#define RUN_P2P(s, build)                                                              \
    do {                                                                               \
        fmpl_sched *s = p2p_schedule();                                                \
        return scheduled(s, s ? (build) : FMPL_ERR_NO_MEMORY);                         \
    } while (0)

int fmpl_coll_barrier(fmpl_team *t)
{
    if (t->size == 1)
        return FMPL_SUCCESS;
    int algo = forced(&forced_barrier, &tunable_barrier_algo, barrier_names);
    if (algo == ALGO_AUTO && t->coll->net && (t->coll->nodes & FMPL_NODES_HIER))
        RUN_P2P(s, fmpl_sched_coll_barrier(s, t));
    if (algo == ALGO_AUTO)
        algo = t->coll->central_barrier ? BARRIER_CENTRAL : LOOKUP(barrier_table, t->size, 0);
    fmpl_barrier_run st;
    /* binomial and central store into the peers' lines directly: shared
     * memory only (a network member segfaulted a forced binomial) */
    if (algo == BARRIER_BINOMIAL && !t->coll->net)
        fmpl_barrier_binomial_setup(&st, t);
    else if (algo == BARRIER_CENTRAL && !t->coll->net)
        fmpl_barrier_central_setup(&st, t);
    else
        fmpl_barrier_dissemination_setup(&st, t);
    return run_algo(&st.a, sizeof st);
}

/* The split-phase barrier's pairing: the butterfly needs a power of two
 * (NICAM's restriction, R21); the dissemination pairing takes any size. */
void fmpl_coll_barrier_split_select(fmpl_bsplit *b, fmpl_team *t)
{
    static const char *const names[] = {"auto", "butterfly", "dissemination", NULL};
    static int forced_split = -1;
    int algo = forced(&forced_split, &tunable_barrier_split_algo, names);
    int pow2 = (t->size & (t->size - 1)) == 0;
    if (algo == 1 && !pow2)
        fmpl_log_warn("FMPL_BARRIER_SPLIT_ALGO=butterfly needs a power-of-two communicator; "
                      "%d members use dissemination", t->size);
    if (algo == 2 || !pow2)
        fmpl_barrier_split_dissemination_setup(b, t);
    else
        fmpl_barrier_split_butterfly_setup(b, t);
}

int fmpl_coll_bcast(fmpl_team *t, void *buf, int64_t size, int root)
{
    if (t->size == 1 || size == 0)
        return FMPL_SUCCESS;
    if (fmpl_coll_capture && fmpl_sched_bcast_forced())
        return fmpl_sched_coll_bcast(fmpl_coll_capture, t, buf, size, root);
    int algo = forced(&forced_bcast, &tunable_bcast_algo, bcast_names);
    if (algo == ALGO_AUTO)
        algo = LOOKUP(bcast_table, t->size, size);
    if (algo == BCAST_BINOMIAL || t->coll->net)
        RUN_P2P(s, fmpl_sched_coll_bcast(s, t, buf, size, root));
    if (algo == BCAST_SHM_DIRECT) {
        fmpl_bcast_run st;
        fmpl_bcast_shm_direct_setup(&st, t, buf, size, root);
        return run_algo(&st.a, sizeof st);
    }
    fmpl_bcast_ring st;
    fmpl_bcast_shm_pipelined_setup(&st, t, buf, size, root);
    return run_algo(&st.a, sizeof st);
}

static int run_reduce(int algo, fmpl_team *t, void *buf, int64_t count, const fmpl_op *op,
                      int root, void *work)
{
    if (t->size == 1 || count == 0)
        return FMPL_SUCCESS;
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(op);
    if (algo == ALGO_AUTO)
        algo = root >= 0 ? LOOKUP(rooted_reduce_table, t->size, bytes)
                         : LOOKUP(reduce_table, t->size, bytes);
    /* The flat exchange holds every input at once: too large a vector
     * falls through to the slices. */
    if (algo == REDUCE_SHM_FLAT && bytes > fmpl_coll_area / 2)
        algo = REDUCE_SHM_SLICES;
    if (t->coll->net)
        algo = REDUCE_BINOMIAL;
    if (algo == REDUCE_BINOMIAL)
        RUN_P2P(s, fmpl_sched_coll_reduce(s, t, buf, count, op, root,
                                          s == fmpl_coll_capture ? NULL : work));
    fmpl_reduce_run st;
    if (algo == REDUCE_SHM_FLAT)
        fmpl_reduce_shm_flat_setup(&st, t, buf, count, op, root);
    else
        fmpl_reduce_shm_slices_setup(&st, t, buf, count, op, root);
    return run_algo(&st.a, sizeof st);
}

int fmpl_coll_reduce(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, int root,
                     void *work)
{
    int algo = forced(&forced_reduce, &tunable_reduce_algo, reduce_names);
    return run_reduce(algo, t, buf, count, op, root, work);
}

int fmpl_coll_allreduce(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, void *work)
{
    int algo = forced(&forced_allreduce, &tunable_allreduce_algo, reduce_names);
    return run_reduce(algo, t, buf, count, op, -1, work);
}

/* ------------------------------------------------ gather, scatter, allgather, alltoall */

static int pick(int *cache, const fmpl_tunable *tun, const char *const *names,
                const rule *table, size_t n, int procs, int64_t bytes)
{
    int algo = forced(cache, tun, names);
    return algo == ALGO_AUTO ? lookup(table, n, procs, bytes) : algo;
}
#define PICK(coll, names, procs, bytes)                                                   \
    pick(&forced_##coll, &tunable_##coll##_algo, names, coll##_table,                   \
         sizeof coll##_table / sizeof coll##_table[0], procs, bytes)

/* While capturing, *a (n entries, if any) becomes a copy owned by the
 * schedule: the MPI binding passes arrays of its reusable scratch, which its
 * next call rewrites while the run still needs them. */
static int keep_array(const int64_t **a, int n)
{
    fmpl_sched *s = fmpl_coll_capture;
    if (!s || !*a)
        return FMPL_SUCCESS;
    int64_t *k = fmpl_sched_alloc(s, (size_t)n * sizeof *k);
    if (!k)
        return s->error;
    memcpy(k, *a, (size_t)n * sizeof *k);
    *a = k;
    return FMPL_SUCCESS;
}

static int keep_layout(fmpl_coll_layout *l, int n)
{
    int rc = l ? keep_array(&l->counts, n) : FMPL_SUCCESS;
    return rc == FMPL_SUCCESS && l ? keep_array(&l->displs, n) : rc;
}

/* The pairwise engine, with the layouts it reads (`keep`, NULL: none) kept. */
static int run_pairs(fmpl_pairs_run *st, fmpl_coll_layout *keep1, fmpl_coll_layout *keep2)
{
    int n = st->a.team->size, rc = keep_layout(keep1, n);
    if (rc == FMPL_SUCCESS)
        rc = keep_layout(keep2, n);
    return rc == FMPL_SUCCESS ? run_algo(&st->a, sizeof *st) : rc;
}

static int run_gatherv(fmpl_team *t, const void *sendbuf, int64_t sendbytes, void *recvbuf,
                       const fmpl_coll_layout *l, int root, int flags, int64_t bytes)
{
    int algo = PICK(gather, gather_names, t->size, bytes);
    if (algo == X_SHM && t->size > 1 && fmpl_shm_pairs_usable(t, FMPL_PAIRS_GATHER)) {
        fmpl_pairs_run st;
        fmpl_gatherv_shm_setup(&st, t, sendbuf, sendbytes, recvbuf, l, root, flags);
        return run_pairs(&st, t->rank == root ? &st.x.rl : NULL, NULL);
    }
    RUN_P2P(s, fmpl_sched_coll_gatherv(s, t, sendbuf, sendbytes, recvbuf, l, root, flags));
}

int fmpl_coll_gatherv(fmpl_team *t, const void *sendbuf, int64_t sendbytes, void *recvbuf,
                      const int64_t *recvcounts, const int64_t *displs, int root, int flags)
{
    fmpl_coll_layout l = {recvcounts, displs, 0};
    return run_gatherv(t, sendbuf, sendbytes, recvbuf, &l, root, flags, INT64_MAX);
}

int fmpl_coll_gather(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t bytes, int root,
                     int flags)
{
    if (bytes == 0)
        return FMPL_SUCCESS;
    fmpl_coll_layout l = {NULL, NULL, bytes};
    return run_gatherv(t, sendbuf, bytes, recvbuf, &l, root, flags, bytes);
}

static int run_scatterv(fmpl_team *t, const void *sendbuf, const fmpl_coll_layout *l,
                        void *recvbuf, int64_t recvbytes, int root, int flags, int64_t bytes)
{
    int algo = PICK(scatter, gather_names, t->size, bytes);
    if (algo == X_SHM && t->size > 1 && fmpl_shm_pairs_usable(t, FMPL_PAIRS_SCATTER)) {
        fmpl_pairs_run st;
        fmpl_scatterv_shm_setup(&st, t, sendbuf, l, recvbuf, recvbytes, root, flags);
        return run_pairs(&st, t->rank == root ? &st.x.sl : NULL, NULL);
    }
    RUN_P2P(s, fmpl_sched_coll_scatterv(s, t, sendbuf, l, recvbuf, recvbytes, root, flags));
}

int fmpl_coll_scatterv(fmpl_team *t, const void *sendbuf, const int64_t *sendcounts,
                       const int64_t *displs, void *recvbuf, int64_t recvbytes, int root,
                       int flags)
{
    fmpl_coll_layout l = {sendcounts, displs, 0};
    return run_scatterv(t, sendbuf, &l, recvbuf, recvbytes, root, flags, INT64_MAX);
}

int fmpl_coll_scatter(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t bytes, int root,
                      int flags)
{
    if (bytes == 0)
        return FMPL_SUCCESS;
    fmpl_coll_layout l = {NULL, NULL, bytes};
    return run_scatterv(t, sendbuf, &l, recvbuf, bytes, root, flags, bytes);
}

static int run_allgatherv(fmpl_team *t, const void *sendbuf, void *recvbuf,
                          const fmpl_coll_layout *l, int flags, int64_t bytes)
{
    int algo = PICK(allgather, allgather_names, t->size, bytes);
    if (algo == X_SHM && t->size > 1 && fmpl_shm_pairs_usable(t, FMPL_PAIRS_ALLGATHER)) {
        fmpl_pairs_run st;
        fmpl_allgatherv_shm_setup(&st, t, sendbuf, recvbuf, l, flags);
        return run_pairs(&st, &st.x.rl, NULL);
    }
    RUN_P2P(s, fmpl_sched_coll_allgatherv(s, t, sendbuf, recvbuf, l, flags));
}

int fmpl_coll_allgatherv(fmpl_team *t, const void *sendbuf, void *recvbuf,
                         const int64_t *recvcounts, const int64_t *displs, int flags)
{
    int64_t total = 0;
    for (int p = 0; p < t->size; p++)
        total += recvcounts[p];
    if (total == 0)
        return FMPL_SUCCESS;
    fmpl_coll_layout l = {recvcounts, displs, 0};
    return run_allgatherv(t, sendbuf, recvbuf, &l, flags, total / t->size);
}

int fmpl_coll_allgather(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t bytes,
                        int flags)
{
    if (bytes == 0)
        return FMPL_SUCCESS;
    fmpl_coll_layout l = {NULL, NULL, bytes};
    return run_allgatherv(t, sendbuf, recvbuf, &l, flags, bytes);
}

static int run_alltoallv(fmpl_team *t, const void *sendbuf, const fmpl_coll_layout *sl,
                         void *recvbuf, const fmpl_coll_layout *rl, int flags, int64_t bytes)
{
    int algo = PICK(alltoall, alltoall_names, t->size, bytes);
    if (algo == X_SHM && t->size > 1 && fmpl_shm_pairs_usable(t, FMPL_PAIRS_ALLTOALL) &&
        !(flags & FMPL_COLL_IN_PLACE)) {
        fmpl_pairs_run st;
        fmpl_alltoallv_shm_setup(&st, t, sendbuf, sl, recvbuf, rl);
        return run_pairs(&st, &st.x.sl, &st.x.rl);
    }
    RUN_P2P(s, fmpl_sched_coll_alltoallv(s, t, sendbuf, sl, recvbuf, rl, flags));
}

int fmpl_coll_alltoallv(fmpl_team *t, const void *sendbuf, const int64_t *sendcounts,
                        const int64_t *sdispls, void *recvbuf, const int64_t *recvcounts,
                        const int64_t *rdispls, int flags)
{
    fmpl_coll_layout sl = {sendcounts, sdispls, 0}, rl = {recvcounts, rdispls, 0};
    return run_alltoallv(t, sendbuf, &sl, recvbuf, &rl, flags, INT64_MAX);
}

int fmpl_coll_alltoall(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t bytes,
                       int flags)
{
    if (bytes == 0)
        return FMPL_SUCCESS;
    fmpl_coll_layout l = {NULL, NULL, bytes};
    return run_alltoallv(t, sendbuf, &l, recvbuf, &l, flags, bytes);
}

/* ------------------------------------------------ reduce-scatter, scans */

/* counts NULL: reduce_scatter_block (block elements each); total: the
 * elements of the whole vector. */
static int run_reduce_scatter(fmpl_team *t, const void *sendbuf, void *recvbuf,
                              const int64_t *counts, int64_t block, int64_t total,
                              const fmpl_op *op, int flags)
{
    fmpl_coll_team *c = t->coll;
    int p = t->size;
    int64_t es = (int64_t)fmpl_op_elem_size(op);
    if (total > 0 && p > 1) {
        int algo = PICK(reduce_scatter, alltoall_names, p, total * es / p);
        /* The shm rounds need a 64-byte stride per member holding an element. */
        if (algo == X_SHM && !c->net && ((fmpl_coll_half() / p) & ~63ll) >= es) {
            int rc = keep_array(&counts, p);
            if (rc != FMPL_SUCCESS)
                return rc;
            fmpl_reduce_scatter_run st;
            fmpl_reduce_scatter_shm_setup(&st, t, sendbuf, recvbuf, counts, block, op, flags);
            return run_algo(&st.a, sizeof st);
        }
    }
    if (!counts) {
        for (int q = 0; q < p; q++)
            c->bcounts[q] = block;
        counts = c->bcounts;
    }
    RUN_P2P(s, fmpl_sched_coll_reduce_scatter(s, t, sendbuf, recvbuf, counts, op, flags,
                                              s == fmpl_coll_capture ? NULL : fmpl_coll_tmp(t)));
}

int fmpl_coll_reduce_scatter(fmpl_team *t, const void *sendbuf, void *recvbuf,
                             const int64_t *counts, const fmpl_op *op, int flags)
{
    int64_t total = 0;
    for (int p = 0; p < t->size; p++)
        total += counts[p];
    return run_reduce_scatter(t, sendbuf, recvbuf, counts, 0, total, op, flags);
}

int fmpl_coll_reduce_scatter_block(fmpl_team *t, const void *sendbuf, void *recvbuf,
                                   int64_t count, const fmpl_op *op, int flags)
{
    if (count == 0)
        return FMPL_SUCCESS;
    return run_reduce_scatter(t, sendbuf, recvbuf, NULL, count, count * t->size, op, flags);
}

static int run_scan(int *cache, const fmpl_tunable *tun, fmpl_team *t, const void *sendbuf,
                    void *recvbuf, int64_t count, const fmpl_op *op, int flags, int exclusive)
{
    int64_t es = (int64_t)fmpl_op_elem_size(op);
    if (count > 0 && t->size > 1 && !t->coll->net && es <= fmpl_coll_half() &&
        pick(cache, tun, scan_names, scan_table, sizeof scan_table / sizeof scan_table[0],
             t->size, count * es) == X_SHM) {
        fmpl_scan_run st;
        fmpl_scan_shm_setup(&st, t, sendbuf, recvbuf, count, op, flags, exclusive);
        return run_algo(&st.a, sizeof st);
    }
    RUN_P2P(s, fmpl_sched_coll_scan(s, t, sendbuf, recvbuf, count, op, flags, exclusive,
                                    s == fmpl_coll_capture ? NULL : fmpl_coll_tmp(t)));
}

int fmpl_coll_scan(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t count,
                   const fmpl_op *op, int flags)
{
    return run_scan(&forced_scan, &tunable_scan_algo, t, sendbuf, recvbuf, count, op, flags, 0);
}

int fmpl_coll_exscan(fmpl_team *t, const void *sendbuf, void *recvbuf, int64_t count,
                     const fmpl_op *op, int flags)
{
    return run_scan(&forced_exscan, &tunable_exscan_algo, t, sendbuf, recvbuf, count, op, flags,
                    1);
}

const char *fmpl_coll_describe_selection(void)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "barrier: dissemination (central counter when ranks outnumber cores); split-phase "
             "barrier: butterfly on powers of two, else dissemination; bcast: shm_pipelined, shm_direct from 64 KiB; "
             "reduce/allreduce: shm_flat up to "
             "%lld bytes, shm_slices above (a rooted reduce on up to 4 members: binomial "
             "from 32 KiB to 2 MiB);\n  gather(v), scatter(v), allgather(v), "
             "alltoall(v): shm (point-to-point when the staging slots are too small);\n  "
             "reduce_scatter(_block): shm up to %lld bytes per member, pairwise above;\n  "
             "scan/exscan: shm up to %d members, recursive_doubling above "
             "(FMPL_*_ALGO overrides);\n  teams spanning hosts: point-to-point, barrier, "
             "bcast, reduce and allreduce through node leaders (FMPL_COLL_NODES)",
             (long long)reduce_table[0].max_bytes, (long long)reduce_scatter_table[0].max_bytes,
             scan_table[0].max_procs);
    return text;
}
