/* mpi-suite: collective benchmarks over all ranks, as the OSU collectives
 * measure them: the root is rank 0, each iteration times the operation
 * alone and an MPI_Barrier separates iterations; the figure is the average
 * over ranks of each rank's mean time (minimum and maximum reported too).
 * Sizes: bytes for bcast and the persistent bcast, bytes per rank block for
 * allgather, alltoall, gather and scatter, bytes of MPI_DOUBLE for the
 * reductions (MPI_SUM).
 *
 * One kernel serves the blocking, nonblocking (Ibcast, Iallreduce) and
 * persistent (MPI_Bcast_init, MPI_Allreduce_init: MPI_Start to MPI_Wait)
 * forms; with r->compute_usec set it spins that long between the start and
 * the wait (the overlap test, osu_ibcast's method).
 *
 * Checks: bcast sends a pattern from the root; the reductions sum
 * (rank + 1) * (i mod 7 + 1), exact in doubles; the block collectives give
 * every (source, destination) pair its own pattern.  While timing, the
 * reductions' input holds 1.0 (no NaN or subnormal from earlier patterns). */
#include "suite.h"

#include <stdio.h>
#include <string.h>

#define ROOT 0

static int barrier_kernel(struct run *r, long iters, double *secs)
{
    (void)r;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        TRY(MPI_Barrier(MPI_COMM_WORLD));
    *secs = MPI_Wtime() - t0;
    return MPI_SUCCESS;
}

/* A barrier's check: no rank leaves before the last one arrived.  After
 * a first barrier lines the ranks up, the last rank arrives 50 ms late; every
 * other rank's barrier must then take at least half of that (a generous
 * margin for a loaded machine; a barrier that does not wait returns in
 * microseconds). */
#define BARRIER_DELAY_USEC 50000.0

static int barrier_verify(struct run *r)
{
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == nranks - 1)
        spin_usec(BARRIER_DELAY_USEC);
    double t0 = MPI_Wtime();
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    double waited = (MPI_Wtime() - t0) * 1e6;
    if (rank != nranks - 1 && waited < BARRIER_DELAY_USEC / 2) {
        snprintf(r->msg, MSG_LEN, "rank %d left the barrier after %.0f us, before the last rank "
                 "arrived (%.0f us late)", rank, waited, BARRIER_DELAY_USEC);
        r->mismatch = 1;
    }
    return MPI_SUCCESS;
}

/* The generic collective kernel (see the top). */
static int coll_kernel(struct run *r, long iters, double *secs)
{
    double total = 0;
    for (long i = 0; i < iters; i++) {
        MPI_Request req = MPI_REQUEST_NULL, *wait = &req;
        double t0 = MPI_Wtime();
        switch (r->b->mode) {
        case MODE_BLOCKING:
            TRY(r->b->start(r, NULL));
            break;
        case MODE_NONBLOCKING:
            TRY(r->b->start(r, &req));
            break;
        case MODE_PERSISTENT:
            TRY(MPI_Start(&r->preq));
            wait = &r->preq;
            break;
        }
        if (r->compute_usec > 0)
            spin_usec(r->compute_usec);
        if (r->b->mode != MODE_BLOCKING)
            TRY(MPI_Wait(wait, MPI_STATUS_IGNORE));
        total += MPI_Wtime() - t0;
        TRY(MPI_Barrier(MPI_COMM_WORLD));
    }
    *secs = total;
    return MPI_SUCCESS;
}

static int coll_verify(struct run *r)
{
    double compute = r->compute_usec;
    r->b->fill(r);
    r->compute_usec = 0;
    int rc = coll_kernel(r, 1, &(double){0});
    r->compute_usec = compute;
    if (rc == MPI_SUCCESS)
        r->b->check(r);
    return rc;
}

static void persistent_teardown(struct run *r)
{
    if (r->preq != MPI_REQUEST_NULL)
        MPI_Request_free(&r->preq);
}

/* ---- bcast: rbuf is the buffer on every rank ---- */

static int bcast_start(struct run *r, MPI_Request *req)
{
    if (!req)
        return MPI_Bcast(rbuf, r->count, MPI_BYTE, ROOT, MPI_COMM_WORLD);
    return MPI_Ibcast(rbuf, r->count, MPI_BYTE, ROOT, MPI_COMM_WORLD, req);
}

static void bcast_fill(struct run *r)
{
    if (rank == ROOT)
        fill_pattern(rbuf, r->size, 11);
    else
        fill_not_pattern(rbuf, r->size, 11);
    fill_guard(rbuf + r->size);
}

static int bcast_check(struct run *r)
{
    return check_pattern(r, "bcast", rbuf, r->size, 11);
}

#if SUITE_HAVE_MPI4
static int bcast_init_setup(struct run *r)
{
    return MPI_Bcast_init(rbuf, r->count, MPI_BYTE, ROOT, MPI_COMM_WORLD, MPI_INFO_NULL, &r->preq);
}
#endif

/* ---- reduce, allreduce: sbuf -> rbuf, MPI_DOUBLE, MPI_SUM ---- */

static void set_ones(double *x, int count)
{
    for (int i = 0; i < count; i++)
        x[i] = 1.0;
}

static int reduce_setup(struct run *r)
{
    set_ones((double *)(void *)sbuf, r->count);
    return MPI_SUCCESS;
}

static int reduce_start(struct run *r, MPI_Request *req)
{
    (void)req;
    return MPI_Reduce(sbuf, rbuf, r->count, MPI_DOUBLE, MPI_SUM, ROOT, MPI_COMM_WORLD);
}

static int allreduce_start(struct run *r, MPI_Request *req)
{
    if (!req)
        return MPI_Allreduce(sbuf, rbuf, r->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return MPI_Iallreduce(sbuf, rbuf, r->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, req);
}

#if SUITE_HAVE_MPI4
static int allreduce_init_setup(struct run *r)
{
    reduce_setup(r);
    return MPI_Allreduce_init(sbuf, rbuf, r->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &r->preq);
}
#endif

static void sum_fill(struct run *r)
{
    double *in = (double *)(void *)sbuf, *want = (double *)(void *)ebuf;
    double ranks_sum = (double)nranks * (nranks + 1) / 2;
    for (int i = 0; i < r->count; i++) {
        in[i] = (double)(rank + 1) * (i % 7 + 1);
        want[i] = ranks_sum * (i % 7 + 1);
    }
    memset(rbuf, 0xff, (size_t)r->size); /* NaN: any element not written fails */
    fill_guard(rbuf + r->size);
}

static int sum_check(struct run *r)
{
    if (r->b->start == reduce_start && rank != ROOT)
        return 0;
    return check_bytes(r, "sum", rbuf, ebuf, r->size);
}

/* ---- allgather, alltoall, gather, scatter: blocks of r->size bytes ----
 * The block that rank s sends to rank d carries pattern block_seed(s, d). */

static size_t blocks_bytes(long max_size, int n)
{
    return (size_t)max_size * (size_t)n;
}

static unsigned block_seed(int from, int to)
{
    return 1000u + (unsigned)from * 64u + (unsigned)to;
}

/* Fill the send blocks (one per destination, or the same block to all when
 * one_block), the expected receive blocks, and the receive area. */
static void blocks_fill(struct run *r, int one_block, int send, int receive, int nrecv)
{
    long b = r->size;
    for (int p = 0; p < nranks; p++) {
        if (send && (!one_block || p == 0))
            fill_pattern(sbuf + p * b, b, block_seed(rank, one_block ? 0 : p));
        if (receive && p < nrecv)
            fill_pattern(ebuf + p * b, b, block_seed(nrecv == 1 ? ROOT : p, one_block ? 0 : rank));
    }
    if (receive) {
        memset(rbuf, 0x5c, (size_t)(nrecv * b));
        for (long i = 0; i < nrecv * b; i++)
            if (rbuf[i] == ebuf[i])
                rbuf[i] = (unsigned char)~ebuf[i];
        fill_guard(rbuf + nrecv * b);
    }
}

static int allgather_start(struct run *r, MPI_Request *req)
{
    (void)req;
    return MPI_Allgather(sbuf, r->count, MPI_BYTE, rbuf, r->count, MPI_BYTE, MPI_COMM_WORLD);
}

static void allgather_fill(struct run *r)
{
    blocks_fill(r, 1, 1, 1, nranks);
}

static int alltoall_start(struct run *r, MPI_Request *req)
{
    (void)req;
    return MPI_Alltoall(sbuf, r->count, MPI_BYTE, rbuf, r->count, MPI_BYTE, MPI_COMM_WORLD);
}

static void alltoall_fill(struct run *r)
{
    blocks_fill(r, 0, 1, 1, nranks);
}

static int gather_start(struct run *r, MPI_Request *req)
{
    (void)req;
    return MPI_Gather(sbuf, r->count, MPI_BYTE, rbuf, r->count, MPI_BYTE, ROOT, MPI_COMM_WORLD);
}

static void gather_fill(struct run *r)
{
    blocks_fill(r, 1, 1, rank == ROOT, nranks);
}

static int scatter_start(struct run *r, MPI_Request *req)
{
    (void)req;
    return MPI_Scatter(sbuf, r->count, MPI_BYTE, rbuf, r->count, MPI_BYTE, ROOT, MPI_COMM_WORLD);
}

static void scatter_fill(struct run *r)
{
    blocks_fill(r, 0, rank == ROOT, 1, 1);
}

static int blocks_check(struct run *r)
{
    int nrecv = r->b->start == scatter_start ? 1 : nranks;
    if (r->b->start == gather_start && rank != ROOT)
        return 0;
    return check_bytes(r, r->b->name, rbuf, ebuf, nrecv * r->size);
}

#define COLL(nm, desc, minsz, el, st, fl, ck)                                                      \
    {.name = nm, .what = desc, .metric = METRIC_COLL, .min_size = minsz, .elem = el,               \
     .mode = MODE_BLOCKING, .kernel = coll_kernel, .verify = coll_verify, .start = st,             \
     .fill = fl, .check = ck}
#define BLOCKS(nm, desc, st, fl)                                                                   \
    {.name = nm, .what = desc, .metric = METRIC_COLL, .min_size = 1, .elem = 1,                    \
     .mode = MODE_BLOCKING, .buffer_bytes = blocks_bytes, .kernel = coll_kernel,                   \
     .verify = coll_verify, .start = st, .fill = fl, .check = blocks_check}

const struct bench coll_benches[] = {
    {.name = "barrier", .what = "MPI_Barrier (osu_barrier)", .metric = METRIC_COLL,
     .min_size = -1, .elem = 1, .kernel = barrier_kernel, .verify = barrier_verify},
    COLL("bcast", "MPI_Bcast from rank 0 (osu_bcast)", 1, 1, bcast_start, bcast_fill, bcast_check),
    {.name = "reduce", .what = "MPI_Reduce, MPI_DOUBLE MPI_SUM to rank 0 (osu_reduce)",
     .metric = METRIC_COLL, .min_size = 8, .elem = 8, .mode = MODE_BLOCKING, .setup = reduce_setup,
     .kernel = coll_kernel, .verify = coll_verify, .start = reduce_start, .fill = sum_fill,
     .check = sum_check},
    {.name = "allreduce", .what = "MPI_Allreduce, MPI_DOUBLE MPI_SUM (osu_allreduce)",
     .metric = METRIC_COLL, .min_size = 8, .elem = 8, .mode = MODE_BLOCKING, .setup = reduce_setup,
     .kernel = coll_kernel, .verify = coll_verify, .start = allreduce_start, .fill = sum_fill,
     .check = sum_check},
    BLOCKS("allgather", "MPI_Allgather, size per rank (osu_allgather)", allgather_start,
           allgather_fill),
    BLOCKS("alltoall", "MPI_Alltoall, size per rank pair (osu_alltoall)", alltoall_start,
           alltoall_fill),
    BLOCKS("gather", "MPI_Gather to rank 0, size per rank (osu_gather)", gather_start, gather_fill),
    BLOCKS("scatter", "MPI_Scatter from rank 0, size per rank (osu_scatter)", scatter_start,
           scatter_fill),
    {.name = "bcast_init", .what = "persistent MPI_Bcast_init: MPI_Start to MPI_Wait",
     .metric = METRIC_COLL, .min_size = 1, .elem = 1, .needs_mpi4 = 1, .mode = MODE_PERSISTENT,
#if SUITE_HAVE_MPI4
     .setup = bcast_init_setup,
#endif
     .teardown = persistent_teardown, .kernel = coll_kernel, .verify = coll_verify,
     .start = bcast_start, .fill = bcast_fill, .check = bcast_check},
    {.name = "allreduce_init",
     .what = "persistent MPI_Allreduce_init (MPI_DOUBLE MPI_SUM): MPI_Start to MPI_Wait",
     .metric = METRIC_COLL, .min_size = 8, .elem = 8, .needs_mpi4 = 1, .mode = MODE_PERSISTENT,
#if SUITE_HAVE_MPI4
     .setup = allreduce_init_setup,
#endif
     .teardown = persistent_teardown, .kernel = coll_kernel, .verify = coll_verify,
     .start = allreduce_start, .fill = sum_fill, .check = sum_check},
    {.name = "ibcast", .what = "MPI_Ibcast overlap with compute (osu_ibcast)",
     .metric = METRIC_COLL, .min_size = 1, .elem = 1, .overlap = 1, .mode = MODE_NONBLOCKING,
     .kernel = coll_kernel, .verify = coll_verify, .start = bcast_start, .fill = bcast_fill,
     .check = bcast_check},
    {.name = "iallreduce", .what = "MPI_Iallreduce overlap with compute (osu_iallreduce)",
     .metric = METRIC_COLL, .min_size = 8, .elem = 8, .overlap = 1, .mode = MODE_NONBLOCKING,
     .setup = reduce_setup, .kernel = coll_kernel, .verify = coll_verify,
     .start = allreduce_start, .fill = sum_fill, .check = sum_check},
};
const int n_coll_benches = (int)(sizeof coll_benches / sizeof coll_benches[0]);
