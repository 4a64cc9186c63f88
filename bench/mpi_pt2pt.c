/* mpi-pt2pt: point-to-point latency and bandwidth through the standard MPI
 * C API, measured the way the OSU Micro-Benchmarks do (osu_latency:
 * blocking MPI_Send/MPI_Recv ping-pong, one-way = round trip / 2;
 * osu_bw: a window of 64 MPI_Isend against 64 pre-posted MPI_Irecv, then a
 * 4-byte acknowledgement).  It is a plain MPI program: built with FMPL's
 * mpicc it measures FMPL, built with mpicc.mpich or mpicc.openmpi it
 * measures those, so `/work/shared/peers.md`'s figures and FMPL's can be
 * taken side by side in one run (interleave the runs: timings drift).
 *
 *   mpirun -n 2 mpi-pt2pt [--only latency|bw] [--min-size B] [--max-size B]
 *                         [--iters N] [--alloc-mem]
 *
 * Buffers come from malloc (as in OSU) or, with --alloc-mem, from
 * MPI_Alloc_mem (FMPL's shared heap: the zero-copy path).  Before timing,
 * each size makes one verified round trip: the received bytes must be the
 * sender's pattern, or the program aborts. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static int rank, nranks;

static void fill(unsigned char *p, long n, unsigned seed)
{
    for (long i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 131u + (unsigned)i * 7u + (unsigned)(i >> 8));
}

static void verify_round_trip(unsigned char *sb, unsigned char *rb, long size)
{
    int peer = 1 - rank;
    fill(sb, size, (unsigned)rank + 1);
    memset(rb, 0xee, (size_t)size);
    if (rank == 0) {
        MPI_Send(sb, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(rb, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rb, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sb, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
    fill(sb, size, (unsigned)peer + 1); /* what the peer sent */
    if (memcmp(sb, rb, (size_t)size) != 0) {
        fprintf(stderr, "mpi-pt2pt: rank %d received wrong data at size %ld\n", rank, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static long iterations(long size, long max_iters)
{
    long n = size <= 8192 ? max_iters : size <= 1048576 ? max_iters / 10 : max_iters / 100;
    return n < 10 ? 10 : n;
}

/* One-way latency in microseconds. */
static double latency(unsigned char *sb, unsigned char *rb, long size, long iters)
{
    long skip = iters / 10 + 10;
    double t0 = 0;
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < skip + iters; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(sb, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            MPI_Recv(rb, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rb, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sb, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * (double)iters);
}

/* Bandwidth in MB/s (10^6 bytes per second), as osu_bw reports it. */
static double bandwidth(unsigned char *sb, unsigned char *rb, long size, long iters)
{
    long windows = iters / WINDOW + 5, skip = 2;
    MPI_Request req[WINDOW];
    int ack = 0;
    double t0 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long w = 0; w < skip + windows; w++) {
        if (w == skip)
            t0 = MPI_Wtime();
        if (rank == 0) {
            for (int j = 0; j < WINDOW; j++)
                MPI_Isend(sb, (int)size, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < WINDOW; j++)
                MPI_Irecv(rb, (int)size, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    return (double)size * WINDOW * (double)windows / t / 1e6;
}

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    return v;
}

int main(int argc, char **argv)
{
    long min_size = 0, max_size = 4L << 20, max_iters = 10000;
    int do_lat = 1, do_bw = 1, alloc_mem = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            i++;
            do_lat = strstr(argv[i], "latency") != NULL;
            do_bw = strstr(argv[i], "bw") != NULL;
        } else if (!strcmp(argv[i], "--min-size") && i + 1 < argc) {
            min_size = parse_size(argv[++i]);
        } else if (!strcmp(argv[i], "--max-size") && i + 1 < argc) {
            max_size = parse_size(argv[++i]);
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            max_iters = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--alloc-mem")) {
            alloc_mem = 1;
        } else {
            if (rank == 0)
                fprintf(stderr,
                        "usage: mpirun -n 2 mpi-pt2pt [--only latency|bw] [--min-size B] "
                        "[--max-size B] [--iters N] [--alloc-mem]\n");
            MPI_Finalize();
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi-pt2pt: needs exactly 2 ranks (got %d)\n", nranks);
        MPI_Finalize();
        return 1;
    }
    unsigned char *sb, *rb;
    if (alloc_mem) {
        MPI_Alloc_mem(max_size + 1, MPI_INFO_NULL, &sb);
        MPI_Alloc_mem(max_size + 1, MPI_INFO_NULL, &rb);
    } else {
        sb = malloc((size_t)max_size + 1);
        rb = malloc((size_t)max_size + 1);
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (rank == 0)
        printf("# mpi-pt2pt, %s buffers; library: %.*s\n", alloc_mem ? "MPI_Alloc_mem" : "malloc",
               (int)strcspn(lib, "\n"), lib);
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0 && !do_lat) || (pass == 1 && !do_bw))
            continue;
        if (rank == 0)
            printf("# %-10s %14s\n", "size", pass == 0 ? "latency (us)" : "bandwidth (MB/s)");
        for (long size = min_size; size <= max_size; size = size ? size * 2 : 1) {
            if (pass == 1 && size == 0)
                continue;
            verify_round_trip(sb, rb, size);
            long iters = iterations(size, max_iters);
            double v = pass == 0 ? latency(sb, rb, size, iters) : bandwidth(sb, rb, size, iters);
            if (rank == 0) {
                printf("  %-10ld %14.*f\n", size, pass == 0 ? 3 : 0, v);
                fflush(stdout);
            }
        }
    }
    if (alloc_mem) {
        MPI_Free_mem(sb);
        MPI_Free_mem(rb);
    } else {
        free(sb);
        free(rb);
    }
    MPI_Finalize();
    return 0;
}
