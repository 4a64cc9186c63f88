/* mpi_startup: how long an MPI job takes to start (issue 13, "Start-up").
 *
 * Plain MPI (builds with any mpicc). Each rank reads CLOCK_REALTIME first
 * thing in main, calls MPI_Init, reads it again, calls MPI_Barrier and reads
 * it a third time. Rank 0 gathers every rank's figures and prints one JSON
 * line:
 *   {"startup":1,"ranks":N,"hosts":H,
 *    "init_max":s,"init_median":s,              MPI_Init alone
 *    "init_barrier_max":s,"init_barrier_median":s,  MPI_Init + first MPI_Barrier
 *    "launch_to_main_max":s,"launch_to_barrier_max":s}  (only with MPI_STARTUP_T0)
 * in seconds. If the environment variable MPI_STARTUP_T0 holds the time the
 * launcher was started (seconds since the epoch, CLOCK_REALTIME, as a
 * decimal number), the last two figures say how long after it the slowest
 * rank entered main and left the first barrier; they are meaningful only
 * when all hosts read the same clock (namespace hosts of one machine) or
 * well synchronised ones. "hosts" counts the distinct processor names.
 *
 *   mpirun -n 4 ./mpi_startup
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "median.h"

enum { F_INIT, F_INIT_BARRIER, F_LAUNCH_MAIN, F_LAUNCH_BARRIER, F_COUNT };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

int main(int argc, char **argv)
{
    double t_main = now();
    MPI_Init(&argc, &argv);
    double t_init = now();
    MPI_Barrier(MPI_COMM_WORLD);
    double t_barrier = now();

    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *t0_env = getenv("MPI_STARTUP_T0");
    double t_launch = t0_env ? strtod(t0_env, NULL) : 0.0;
    double mine[F_COUNT] = {t_init - t_main, t_barrier - t_main, t_main - t_launch,
                            t_barrier - t_launch};
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    memset(name, 0, sizeof name);
    MPI_Get_processor_name(name, &len);

    double *all = NULL;
    char *names = NULL;
    if (rank == 0) {
        all = malloc(sizeof *all * F_COUNT * (size_t)size);
        names = malloc((size_t)MPI_MAX_PROCESSOR_NAME * (size_t)size);
        if (!all || !names) {
            fprintf(stderr, "mpi_startup: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(mine, F_COUNT, MPI_DOUBLE, all, F_COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
               0, MPI_COMM_WORLD);

    if (rank == 0) {
        double *v = malloc(sizeof *v * (size_t)size);
        double max[F_COUNT], med[F_COUNT];
        if (!v) {
            fprintf(stderr, "mpi_startup: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int f = 0; f < F_COUNT; f++) {
            for (int r = 0; r < size; r++)
                v[r] = all[r * F_COUNT + f];
            med[f] = median_of(v, size);
            max[f] = v[size - 1];
        }
        qsort(names, (size_t)size, MPI_MAX_PROCESSOR_NAME, cmp_name);
        int hosts = 1;
        for (int r = 1; r < size; r++)
            hosts += strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME,
                            names + (size_t)(r - 1) * MPI_MAX_PROCESSOR_NAME) != 0;
        printf("{\"startup\":1,\"ranks\":%d,\"hosts\":%d,\"init_max\":%.6f,\"init_median\":%.6f,"
               "\"init_barrier_max\":%.6f,\"init_barrier_median\":%.6f",
               size, hosts, max[F_INIT], med[F_INIT], max[F_INIT_BARRIER], med[F_INIT_BARRIER]);
        if (t0_env)
            printf(",\"launch_to_main_max\":%.6f,\"launch_to_barrier_max\":%.6f",
                   max[F_LAUNCH_MAIN], max[F_LAUNCH_BARRIER]);
        printf("}\n");
        fflush(stdout);
        free(v);
        free(all);
        free(names);
    }
    MPI_Finalize();
    return 0;
}
