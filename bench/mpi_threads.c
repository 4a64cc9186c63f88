/* mpi-threads: message rate of several threads per rank, each on its own
 * communicator (MPI_THREAD_MULTIPLE), ranks 0 and 1 (more ranks idle).
 *
 *   mpirun -n 2 mpi-threads [--threads 1,2,4] [--size 8] [--window 64]
 *                           [--seconds 0.5]
 *
 * Per thread count T: T threads on each of ranks 0 and 1; thread t of rank
 * 0 sends windows of --window nonblocking messages of --size bytes to
 * thread t of rank 1 on communicator t (dup'd in order beforehand), which
 * receives them with preposted MPI_Irecv and answers each window with one
 * 4-byte acknowledgement (osu_mbw_mr's pattern, one pair per thread).  The
 * threads start together and run for --seconds; the figure is all threads'
 * messages over the longest thread's time, in millions of messages per
 * second, and its ratio to T = 1.  Data are checked on the first window of
 * every thread (each byte names its thread and window).
 * Not a test: run it beside Open MPI's and MPICH's to compare. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_THREADS = 64, MAX_WINDOW = 1024 };

static int rank, size_bytes = 8, window = 64;
static double seconds = 0.5;
static MPI_Comm comms[MAX_THREADS];
static pthread_barrier_t start;

typedef struct result {
    long messages;
    double elapsed;
    int bad;
} result;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *pair(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm c = comms[t];
    char *buf = malloc((size_t)size_bytes * MAX_WINDOW);
    MPI_Request req[MAX_WINDOW];
    result *r = calloc(1, sizeof *r);
    int ack = 0, go = 1;
    pthread_barrier_wait(&start);
    double t0 = now();
    for (long w = 0; go; w++) {
        if (rank == 0) {
            for (int i = 0; i < window * size_bytes; i++)
                buf[i] = (char)(t * 7 + w + i);
            for (int i = 0; i < window; i++)
                MPI_Isend(buf + (size_t)i * size_bytes, size_bytes, MPI_BYTE, 1, 1, c, &req[i]);
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            go = now() - t0 < seconds;
            MPI_Recv(&ack, 1, MPI_INT, 1, 2, c, MPI_STATUS_IGNORE);
            MPI_Send(&go, 1, MPI_INT, 1, 3, c); /* rank 1 stops when rank 0 does */
        } else {
            for (int i = 0; i < window; i++)
                MPI_Irecv(buf + (size_t)i * size_bytes, size_bytes, MPI_BYTE, 0, 1, c, &req[i]);
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            if (w == 0)
                for (int i = 0; i < window * size_bytes; i++)
                    r->bad |= buf[i] != (char)(t * 7 + w + i);
            MPI_Send(&ack, 1, MPI_INT, 0, 2, c);
            MPI_Recv(&go, 1, MPI_INT, 0, 3, c, MPI_STATUS_IGNORE);
        }
        r->messages += window;
    }
    r->elapsed = now() - t0;
    free(buf);
    return r;
}

int main(int argc, char **argv)
{
    int provided, nranks;
    int counts[8] = {1, 2, 4}, ncounts = 3;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            ncounts = 0;
            for (char *p = strtok(argv[++i], ","); p && ncounts < 8; p = strtok(NULL, ","))
                counts[ncounts++] = atoi(p);
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            size_bytes = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--window") && i + 1 < argc) {
            window = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: mpi-threads [--threads 1,2,4] [--size B] "
                                "[--window N] [--seconds S]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (provided < MPI_THREAD_MULTIPLE || nranks < 2 || window > MAX_WINDOW || size_bytes < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi-threads: needs MPI_THREAD_MULTIPLE (got %d), 2 ranks and "
                            "a window of at most %d\n", provided, MAX_WINDOW);
        MPI_Finalize();
        return 1;
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (rank == 0)
        printf("# mpi-threads: %d-byte messages, windows of %d, %.2f s per count\n"
               "# library: %.*s\n# threads   Mmsg/s   vs 1 thread\n",
               size_bytes, window, seconds, (int)strcspn(lib, "\n"), lib);
    double base = 0;
    for (int k = 0; k < ncounts; k++) {
        int nt = counts[k] < 1 ? 1 : counts[k] > MAX_THREADS ? MAX_THREADS : counts[k];
        for (int t = 0; t < nt; t++)
            MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
        long messages = 0;
        double longest = 0;
        int bad = 0;
        if (rank < 2) {
            pthread_t th[MAX_THREADS];
            pthread_barrier_init(&start, NULL, (unsigned)nt);
            for (int t = 0; t < nt; t++)
                pthread_create(&th[t], NULL, pair, (void *)(long)t);
            for (int t = 0; t < nt; t++) {
                result *r;
                pthread_join(th[t], (void **)&r);
                messages += r->messages;
                longest = r->elapsed > longest ? r->elapsed : longest;
                bad |= r->bad;
                free(r);
            }
            pthread_barrier_destroy(&start);
        }
        int any_bad = 0;
        MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        double rate = longest > 0 ? (double)messages / longest / 1e6 : 0;
        if (k == 0)
            base = rate;
        if (rank == 0)
            printf("%9d %8.3f %8.2f%s\n", nt, rate, base > 0 ? rate / base : 0,
                   any_bad ? "   DATA ERROR" : "");
        for (int t = 0; t < nt; t++)
            MPI_Comm_free(&comms[t]);
        if (any_bad) {
            MPI_Finalize();
            return 1;
        }
    }
    MPI_Finalize();
    return 0;
}
