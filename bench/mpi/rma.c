/* mpi-suite: one-sided benchmarks, rank 0 the origin and rank 1 the target
 * (osu_put_latency, osu_get_latency, osu_put_bw, osu_get_bw with passive
 * target synchronisation, flush variant):
 *   every rank: MPI_Win_allocate(buffer bytes), MPI_ERRORS_RETURN on it;
 *   rank 0:     MPI_Win_lock(MPI_LOCK_SHARED, 1) before the timed loop, then
 *               per iteration one MPI_Put (or MPI_Get) to displacement 0 and
 *               MPI_Win_flush(1) -- latency; or WINDOW of them and one flush
 *               -- bandwidth; MPI_Win_unlock after the loop;
 *   rank 1:     no call: passive target.
 * Checks, with lock/unlock epochs and a barrier between writer and reader:
 *   put: rank 1 fills its window with the pattern's complement, rank 0 puts
 *        the pattern, rank 1 compares its window memory;
 *   get: rank 1 writes the pattern into its window, rank 0 gets it into a
 *        buffer filled with the complement and compares. */
#include "suite.h"

#include <string.h>

#define SEED_PUT 31
#define SEED_GET 37

static int rma_init(struct run *r)
{
    TRY(MPI_Win_allocate((MPI_Aint)buf_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &r->win_base,
                         &r->win));
    TRY(MPI_Win_set_errhandler(r->win, MPI_ERRORS_RETURN));
    TRY(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, r->win));
    memset(r->win_base, 0, buf_bytes); /* touched before timing */
    return MPI_Win_unlock(rank, r->win);
}

static void rma_fini(struct run *r)
{
    if (r->win != MPI_WIN_NULL)
        MPI_Win_free(&r->win);
}

static int rma_kernel(struct run *r, long iters, double *secs, int get, int per_flush)
{
    *secs = 0;
    if (rank != 0)
        return MPI_SUCCESS;
    TRY(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, r->win));
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        for (int j = 0; j < per_flush; j++) {
            if (get)
                TRY(MPI_Get(rbuf, r->count, MPI_BYTE, 1, 0, r->count, MPI_BYTE, r->win));
            else
                TRY(MPI_Put(sbuf, r->count, MPI_BYTE, 1, 0, r->count, MPI_BYTE, r->win));
        }
        TRY(MPI_Win_flush(1, r->win));
    }
    *secs = MPI_Wtime() - t0;
    return MPI_Win_unlock(1, r->win);
}

static int put_lat_kernel(struct run *r, long iters, double *secs)
{
    return rma_kernel(r, iters, secs, 0, 1);
}

static int get_lat_kernel(struct run *r, long iters, double *secs)
{
    return rma_kernel(r, iters, secs, 1, 1);
}

static int put_bw_kernel(struct run *r, long iters, double *secs)
{
    return rma_kernel(r, iters, secs, 0, WINDOW);
}

static int get_bw_kernel(struct run *r, long iters, double *secs)
{
    return rma_kernel(r, iters, secs, 1, WINDOW);
}

static int put_verify(struct run *r)
{
    if (rank == 1) {
        TRY(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, r->win));
        fill_not_pattern(r->win_base, r->size, SEED_PUT);
        fill_guard(r->win_base + r->size);
        TRY(MPI_Win_unlock(1, r->win));
    }
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        fill_pattern(sbuf, r->size, SEED_PUT);
        TRY(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, r->win));
        TRY(MPI_Put(sbuf, r->count, MPI_BYTE, 1, 0, r->count, MPI_BYTE, r->win));
        TRY(MPI_Win_unlock(1, r->win));
    }
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        TRY(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, r->win));
        check_pattern(r, "put into the target window", r->win_base, r->size, SEED_PUT);
        TRY(MPI_Win_unlock(1, r->win));
    }
    return MPI_SUCCESS;
}

static int get_verify(struct run *r)
{
    if (rank == 1) {
        TRY(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, r->win));
        fill_pattern(r->win_base, r->size, SEED_GET);
        TRY(MPI_Win_unlock(1, r->win));
    }
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        fill_not_pattern(rbuf, r->size, SEED_GET);
        fill_guard(rbuf + r->size);
        TRY(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, r->win));
        TRY(MPI_Get(rbuf, r->count, MPI_BYTE, 1, 0, r->count, MPI_BYTE, r->win));
        TRY(MPI_Win_unlock(1, r->win));
        check_pattern(r, "get from the target window", rbuf, r->size, SEED_GET);
    }
    return MPI_Barrier(MPI_COMM_WORLD);
}

#define RMA(nm, desc, m, k, v)                                                                     \
    {.name = nm, .what = desc, .metric = m, .min_size = 1, .elem = 1, .pairwise = 1,               \
     .init = rma_init, .fini = rma_fini, .kernel = k, .verify = v}

const struct bench rma_benches[] = {
    RMA("put_lat", "MPI_Put + MPI_Win_flush latency (osu_put_latency)", METRIC_RANK0,
        put_lat_kernel, put_verify),
    RMA("get_lat", "MPI_Get + MPI_Win_flush latency (osu_get_latency)", METRIC_RANK0,
        get_lat_kernel, get_verify),
    RMA("put_bw", "64 MPI_Put per MPI_Win_flush bandwidth (osu_put_bw)", METRIC_BW, put_bw_kernel,
        put_verify),
    RMA("get_bw", "64 MPI_Get per MPI_Win_flush bandwidth (osu_get_bw)", METRIC_BW, get_bw_kernel,
        get_verify),
};
const int n_rma_benches = (int)(sizeof rma_benches / sizeof rma_benches[0]);
