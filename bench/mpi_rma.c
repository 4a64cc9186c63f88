/* mpi-rma: one-sided latency and bandwidth through the standard MPI C API,
 * measured the way the OSU Micro-Benchmarks do with their default
 * synchronisation (lock_all + flush): osu_put_latency / osu_get_latency
 * time one MPI_Put (MPI_Get) followed by MPI_Win_flush; osu_put_bw /
 * osu_get_bw time a window of 64 accesses followed by one flush.  Rank 0
 * accesses rank 1's window; rank 1 does nothing meanwhile (passive target).
 * A plain MPI program: built with another MPI's mpicc it measures that one.
 *
 *   mpirun -n 2 mpi-rma [--only put|get] [--min-size B] [--max-size B]
 *                       [--iters N] [--create]
 *
 * The window comes from MPI_Win_allocate (FMPL: the shared heap, direct
 * loads and stores) or, with --create, from MPI_Win_create over malloc'd
 * memory (FMPL: kernel-assisted copies).  Each size first makes one
 * verified put and get: the target must hold the origin's pattern, and
 * the get must return it, or the program aborts. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static int rank;

static void fill(unsigned char *p, long n, unsigned seed)
{
    for (long i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 131u + (unsigned)i * 7u + (unsigned)(i >> 8));
}

static void verify(MPI_Win win, unsigned char *mem, unsigned char *buf, long size)
{
    if (rank == 0) {
        fill(buf, size, (unsigned)size);
        MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
        MPI_Win_flush(1, win);
        memset(buf, 0, (size_t)size);
        MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *check = rank == 0 ? buf : mem;
    unsigned char *want = malloc((size_t)size);
    fill(want, size, (unsigned)size);
    if (memcmp(check, want, (size_t)size) != 0) {
        fprintf(stderr, "mpi-rma: rank %d: wrong data at size %ld\n", rank, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(want);
    MPI_Barrier(MPI_COMM_WORLD);
}

static long iterations(long size, long max_iters)
{
    long n = size <= 8192 ? max_iters : size <= 1048576 ? max_iters / 10 : max_iters / 100;
    return n < 10 ? 10 : n;
}

static void one_access(MPI_Win win, unsigned char *buf, long size, int put)
{
    if (put)
        MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
    else
        MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
}

/* Microseconds per access + flush. */
static double latency(MPI_Win win, unsigned char *buf, long size, long iters, int put)
{
    double t = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        one_access(win, buf, size, put);
        MPI_Win_flush(1, win);
    }
    return (MPI_Wtime() - t) * 1e6 / (double)iters;
}

/* MB/s (10^6 bytes) of windows of WINDOW accesses, each closed by a flush. */
static double bandwidth(MPI_Win win, unsigned char *buf, long size, long iters, int put)
{
    double t = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        for (int k = 0; k < WINDOW; k++)
            one_access(win, buf, size, put);
        MPI_Win_flush(1, win);
    }
    t = MPI_Wtime() - t;
    return (double)size * WINDOW * (double)iters / t / 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long min = 1, max = 4l << 20, iters = 10000;
    int create = 0, do_put = 1, do_get = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--create"))
            create = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            do_put = !strcmp(argv[++i], "put");
            do_get = !do_put;
        }
        else if (!strcmp(argv[i], "--min-size") && i + 1 < argc)
            min = strtol(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--max-size") && i + 1 < argc) {
            const char *v = argv[++i];
            max = strtol(v, NULL, 0) * (strchr(v, 'K') ? 1024 : strchr(v, 'M') ? 1048576 : 1);
        }
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = strtol(argv[++i], NULL, 0);
    }
    if (n != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi-rma: run with 2 ranks\n");
        MPI_Finalize();
        return n == 1 ? 0 : 1;
    }
    unsigned char *mem, *buf = malloc((size_t)max);
    void *priv = NULL;
    MPI_Win win;
    if (create) {
        mem = priv = malloc((size_t)max);
        MPI_Win_create(mem, max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate(max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    }
    MPI_Win_lock_all(0, win);
    if (rank == 0)
        printf("# mpi-rma (%s window, lock_all + flush)\n# %10s %12s %12s %12s %12s\n",
               create ? "MPI_Win_create(malloc)" : "MPI_Win_allocate", "bytes",
               do_put ? "put us" : "", do_put ? "put MB/s" : "", do_get ? "get us" : "",
               do_get ? "get MB/s" : "");
    for (long size = min; size <= max; size *= 2) {
        verify(win, mem, buf, size);
        long it = iterations(size, iters), bw_it = it / 10 < 10 ? 10 : it / 10;
        double r[4] = {0, 0, 0, 0};
        if (rank == 0) {
            if (do_put) {
                r[0] = latency(win, buf, size, it, 1);
                r[1] = bandwidth(win, buf, size, bw_it, 1);
            }
            if (do_get) {
                r[2] = latency(win, buf, size, it, 0);
                r[3] = bandwidth(win, buf, size, bw_it, 0);
            }
            printf("  %10ld %12.2f %12.1f %12.2f %12.1f\n", size, r[0], r[1], r[2], r[3]);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    free(priv);
    free(buf);
    MPI_Finalize();
    return 0;
}
