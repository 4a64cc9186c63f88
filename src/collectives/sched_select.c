/* Selection of the schedule builders (sched_coll.h): each entry binds the
 * schedule to the team (drawing its tags), opens a phase and picks the
 * builder.  FMPL_IBCAST_ALGO overrides the broadcast's table.  A team
 * spanning nodes over the network (its shape, t->coll->nodes, from
 * sched_nodes.c) runs the barrier, broadcast, reduce and allreduce through
 * node leaders, so that one member per node pays network latency; a
 * reduction does only when its nodes hold consecutive ranks (rank-order
 * combining), else the flat binomial tree.  Like select.c, the choice uses
 * only values every member shares (all members compute the same shape). */
#include "collectives/sched_coll.h"
#include "collectives/coll_team.h"
#include "collectives/sched_nodes.h"
#include "base/error.h"
#include "base/tunable.h"

#include <limits.h>

FMPL_TUNABLE(tunable_ibcast_algo, "FMPL_IBCAST_ALGO", "auto",
             "nonblocking/persistent broadcast schedule: auto, binomial, leaders (relay "
             "through node leaders) or split (two-phase, fragments per copy engine)");

/* 2 namespace hosts x 2 ranks, 1 MiB: 0.85-1.14 ms split, 1.4-2.4 ms through
 * the leaders; at 64 and 256 KiB neither won clearly. */
FMPL_TUNABLE(tunable_allreduce_split, "FMPL_ALLREDUCE_SPLIT_MIN", "512k",
             "allreduce across nodes: from this many bytes every node member carries a "
             "block over the network (sched_allreduce_split.c), below it the node leaders "
             "carry the whole vector");

FMPL_TLS fmpl_sched *fmpl_coll_capture; /* per thread: threads.c */

enum { ALGO_AUTO = 0, BCAST_BINOMIAL, BCAST_LEADERS, BCAST_SPLIT };
static const char *const bcast_names[] = {"auto", "binomial", "leaders", "split", NULL};

typedef struct rule {
    int max_procs;
    int64_t max_bytes;
    int algo;
} rule;
/* Within one node (and with FMPL_COLL_NODES=off); a team spanning nodes
 * relays through the leaders (spanning(), above the table's choice). */
static const rule bcast_table[] = {
    {INT_MAX, INT64_MAX, BCAST_BINOMIAL},
};

/* The team spans nodes over the network, some of them shared by members:
 * the node-aware algorithms apply (flags: FMPL_NODES_HIER and maybe more). */
static int spanning(const fmpl_team *t, int flags)
{
    return t->coll && (t->coll->nodes & flags) == flags;
}

static void begin(fmpl_sched *s, fmpl_team *t, const fmpl_op *op)
{
    fmpl_sched_bind(s, t);
    if (op)
        fmpl_sched_set_op(s, op);
    fmpl_sched_phase(s);
}

int fmpl_sched_bcast_forced(void)
{
    static int forced = -1;
    if (forced < 0)
        forced = fmpl_tunable_choice(&tunable_ibcast_algo, bcast_names);
    return forced != ALGO_AUTO;
}

int fmpl_sched_coll_barrier(fmpl_sched *s, fmpl_team *t)
{
    begin(s, t, NULL);
    if (spanning(t, FMPL_NODES_HIER))
        return fmpl_sched_barrier_nodes(s, t);
    return fmpl_sched_barrier_dissemination(s, t);
}

int fmpl_sched_coll_bcast(fmpl_sched *s, fmpl_team *t, void *buf, int64_t size, int root)
{
    begin(s, t, NULL);
    if (t->size == 1 || size == 0)
        return s->error;
    static int forced = -1;
    if (forced < 0)
        forced = fmpl_tunable_choice(&tunable_ibcast_algo, bcast_names);
    int algo = forced;
    if (algo == ALGO_AUTO && spanning(t, FMPL_NODES_HIER))
        algo = BCAST_LEADERS;
    size_t n = sizeof bcast_table / sizeof bcast_table[0];
    for (size_t i = 0; algo == ALGO_AUTO && i < n; i++)
        if (i == n - 1 || (t->size <= bcast_table[i].max_procs && size <= bcast_table[i].max_bytes))
            algo = bcast_table[i].algo;
    switch (algo) {
    case BCAST_LEADERS:
        return fmpl_sched_bcast_leaders(s, t, buf, size, root);
    case BCAST_SPLIT:
        return fmpl_sched_bcast_split(s, t, buf, size, root);
    default:
        return fmpl_sched_bcast_binomial(s, t, buf, size, root);
    }
}

int fmpl_sched_coll_reduce(fmpl_sched *s, fmpl_team *t, void *buf, int64_t count,
                           const fmpl_op *op, int root, void *work)
{
    begin(s, t, op);
    if (t->size == 1 || count == 0)
        return s->error;
    if (spanning(t, FMPL_NODES_HIER | FMPL_NODES_ORDERED)) {
        int64_t bytes = count * (int64_t)fmpl_op_elem_size(op);
        fmpl_sched_nodes_view v;
        if (root < 0 && bytes >= fmpl_tunable_long(&tunable_allreduce_split) &&
            fmpl_sched_nodes(s, t, 0, &v) == FMPL_SUCCESS &&
            fmpl_sched_allreduce_split_fits(t, &v, count))
            return fmpl_sched_allreduce_split(s, &v, buf, count, work);
        return fmpl_sched_reduce_nodes(s, t, buf, count, root, work);
    }
    /* Every member its own node (or every pair over the network): an
     * allreduce among a power of two exchanges, as the node leaders do. */
    if (root < 0 && t->coll && t->coll->net && (t->size & (t->size - 1)) == 0) {
        fmpl_sched_allreduce_exchange(s, NULL, t->size, t->rank, buf, count, work);
        return s->error;
    }
    return fmpl_sched_reduce_binomial(s, t, buf, count, root, work);
}

int fmpl_sched_coll_gatherv(fmpl_sched *s, fmpl_team *t, const void *sendbuf, int64_t sendbytes,
                            void *recvbuf, const fmpl_coll_layout *l, int root, int flags)
{
    begin(s, t, NULL);
    return fmpl_sched_gatherv_linear(s, t, sendbuf, sendbytes, recvbuf, l, root, flags);
}

int fmpl_sched_coll_scatterv(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                             const fmpl_coll_layout *l, void *recvbuf, int64_t recvbytes,
                             int root, int flags)
{
    begin(s, t, NULL);
    return fmpl_sched_scatterv_linear(s, t, sendbuf, l, recvbuf, recvbytes, root, flags);
}

int fmpl_sched_coll_allgatherv(fmpl_sched *s, fmpl_team *t, const void *sendbuf, void *recvbuf,
                               const fmpl_coll_layout *l, int flags)
{
    begin(s, t, NULL);
    return fmpl_sched_allgatherv_ring(s, t, sendbuf, recvbuf, l, flags);
}

int fmpl_sched_coll_alltoallv(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                              const fmpl_coll_layout *sl, void *recvbuf,
                              const fmpl_coll_layout *rl, int flags)
{
    begin(s, t, NULL);
    if (flags & FMPL_COLL_IN_PLACE)
        return s->error = FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                                     "alltoall in place: pass a copy of the receive buffer");
    return fmpl_sched_alltoallv_pairwise(s, t, sendbuf, sl, recvbuf, rl);
}

int fmpl_sched_coll_reduce_scatter(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                   void *recvbuf, const int64_t *counts, const fmpl_op *op,
                                   int flags, char *work)
{
    begin(s, t, op);
    int64_t *offs = t->coll->offs;
    offs[0] = 0;
    for (int p = 0; p < t->size; p++)
        offs[p + 1] = offs[p] + counts[p];
    return fmpl_sched_reduce_scatter_pairwise(s, t, sendbuf, recvbuf, counts, flags, work);
}

int fmpl_sched_coll_scan(fmpl_sched *s, fmpl_team *t, const void *sendbuf, void *recvbuf,
                         int64_t count, const fmpl_op *op, int flags, int exclusive, char *work)
{
    begin(s, t, op);
    if (count == 0)
        return s->error;
    return fmpl_sched_scan_recursive_doubling(s, t, sendbuf, recvbuf, count, flags, exclusive,
                                              work);
}
