/* jacobi: a 2-D five-point Jacobi solver whose halo exchange can overlap the
 * interior update (seed 004, section 5.1; issue 14, section 5).  Standard MPI
 * C API only: bench/compare builds it with FMPL's, Open MPI's and MPICH's
 * mpicc.
 *
 *   mpirun -n 2 jacobi [--n N] [--iters K] [--mode overlap|plain|both]
 *                      [--check] [--quick] [--json FILE]
 *
 * The grid: N x N doubles (default 2048), its outer ring fixed (the top row
 * 1, the left column rising from 0 to 1 down the rows, the rest 0), the inside
 * starting from a pseudo-random field (so that every row changes from the
 * first iteration and a wrong ghost row shows at once).  Each iteration sets
 * every inside point to the mean of its four neighbours in the previous grid.
 *
 * Decomposition: strips of rows, rank r owning rows [r N / P, (r+1) N / P),
 * held with a ghost row above and below.  Per iteration each rank posts
 * MPI_Irecv for its two ghost rows and MPI_Isend of its first and last owned
 * rows to the ranks above and below (MPI_PROC_NULL at the ends), then:
 *   plain    MPI_Waitall, then updates all its rows;
 *   overlap  updates the rows that read no ghost row (the interior of the
 *            strip) while the messages are in flight, MPI_Waitall, then the
 *            first and last rows.
 * Both modes compute every point with the same arithmetic in the same order,
 * so their grids are equal bit for bit.
 *
 * Reported per mode: time per iteration (each rank times its K iterations
 * after a barrier; the maximum over ranks, and the minimum), the time spent
 * in MPI_Waitall per iteration (maximum over ranks), and a checksum: the sum
 * of each rank's points in row order, the ranks' sums added in rank order on
 * rank 0 (the same whatever the timing).  Two warm-up iterations come first;
 * the grid is then reset.  With --mode both (the default) the two checksums
 * must be equal, or the program fails.
 *
 * --check: a small grid (default N 128, K 50 unless --n, --iters say
 * otherwise); after the timed iterations rank 0 gathers the grid, runs the
 * same iterations serially and compares every point exactly; a difference
 * prints the first point and exits 1.
 *
 * Output: one line per mode on standard output; with --json one JSON object
 * per line (bench/README.md, "jacobi"). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_string.h"
#include "mpi_common.h"

#define TAG_DOWN 21 /* a row sent to the rank below (its top ghost row) */
#define TAG_UP 22   /* a row sent to the rank above */
#define WARMUP 2

enum mode { MODE_PLAIN, MODE_OVERLAP };
static const char *const mode_name[] = {"plain", "overlap"};

static int rank, nranks;
static struct {
    long n, iters;
    int modes[2], nmodes, check, quick;
    const char *json_path;
} opt;

/* This rank's strip: rows [row0, row0 + rows) of the grid, stored with a
 * ghost row before and after; u is the current grid, v the next. */
static struct {
    long row0, rows, n;
    double *u, *v;
    int up, down; /* neighbour ranks or MPI_PROC_NULL */
} strip;

#define die(...) bench_die("jacobi", rank, __VA_ARGS__)

static void check_rc(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return;
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    fprintf(stderr, "jacobi: rank %d: %s failed: %s\n", rank, call, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---- the grid ---- */

/* The starting value of point (i, j) of the n x n grid. */
static double initial(long i, long j, long n)
{
    if (i == 0)
        return 1.0;
    if (j == 0)
        return (double)i / (double)(n - 1);
    if (i == n - 1 || j == n - 1)
        return 0.0;
    uint64_t x = (uint64_t)(i * n + j) * 0x9e3779b97f4a7c15u;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
}

/* One row of the next grid from three rows of the current one: the inside
 * points only (the first and last columns are fixed). */
static void update_row(double *restrict out, const double *above, const double *row,
                       const double *below, long n)
{
    for (long j = 1; j < n - 1; j++)
        out[j] = 0.25 * (above[j] + below[j] + row[j - 1] + row[j + 1]);
}

/* Local row l (1 .. rows; 0 and rows + 1 are the ghosts) of grid g. */
static double *lrow(double *g, long l)
{
    return g + l * strip.n;
}

/* Updates local rows [first, last] of the strip, leaving the grid's fixed
 * top and bottom rows alone. */
static void update_rows(long first, long last)
{
    for (long l = first; l <= last; l++) {
        long i = strip.row0 + l - 1;
        if (i == 0 || i == strip.n - 1)
            continue;
        update_row(lrow(strip.v, l), lrow(strip.u, l - 1), lrow(strip.u, l), lrow(strip.u, l + 1),
                   strip.n);
    }
}

/* Both grids to the starting values (ghost rows included: they are
 * overwritten before they are read, except at the grid's ends where they are
 * never read). */
static void reset_strip(void)
{
    for (long l = 0; l <= strip.rows + 1; l++) {
        long i = strip.row0 + l - 1;
        for (long j = 0; j < strip.n; j++) {
            double x = i >= 0 && i < strip.n ? initial(i, j, strip.n) : 0.0;
            lrow(strip.u, l)[j] = x;
            lrow(strip.v, l)[j] = x;
        }
    }
}

static void setup_strip(long n)
{
    strip.n = n;
    strip.row0 = (long)((int64_t)rank * n / nranks);
    strip.rows = (long)((int64_t)(rank + 1) * n / nranks) - strip.row0;
    strip.up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    strip.down = rank < nranks - 1 ? rank + 1 : MPI_PROC_NULL;
    size_t bytes = (size_t)(strip.rows + 2) * (size_t)n * sizeof(double);
    strip.u = malloc(bytes);
    strip.v = malloc(bytes);
    if (!strip.u || !strip.v) {
        fprintf(stderr, "jacobi: rank %d: cannot allocate 2 x %zu bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* ---- one iteration ---- */

static void post_exchange(MPI_Request req[4])
{
    int n = (int)strip.n;
    check_rc(MPI_Irecv(lrow(strip.u, 0), n, MPI_DOUBLE, strip.up, TAG_DOWN, MPI_COMM_WORLD, &req[0]),
             "MPI_Irecv");
    check_rc(MPI_Irecv(lrow(strip.u, strip.rows + 1), n, MPI_DOUBLE, strip.down, TAG_UP,
                       MPI_COMM_WORLD, &req[1]),
             "MPI_Irecv");
    check_rc(MPI_Isend(lrow(strip.u, 1), n, MPI_DOUBLE, strip.up, TAG_UP, MPI_COMM_WORLD, &req[2]),
             "MPI_Isend");
    check_rc(MPI_Isend(lrow(strip.u, strip.rows), n, MPI_DOUBLE, strip.down, TAG_DOWN,
                       MPI_COMM_WORLD, &req[3]),
             "MPI_Isend");
}

/* One iteration; returns the seconds spent in MPI_Waitall. */
static double iterate(enum mode mode)
{
    MPI_Request req[4];
    MPI_Status st[4];
    post_exchange(req);
    if (mode == MODE_OVERLAP)
        update_rows(2, strip.rows - 1); /* rows that read no ghost row */
    double t0 = MPI_Wtime();
    check_rc(MPI_Waitall(4, req, st), "MPI_Waitall");
    double waited = MPI_Wtime() - t0;
    if (mode == MODE_OVERLAP) {
        update_rows(1, 1);
        if (strip.rows > 1)
            update_rows(strip.rows, strip.rows);
    } else {
        update_rows(1, strip.rows);
    }
    double *t = strip.u;
    strip.u = strip.v;
    strip.v = t;
    return waited;
}

/* The sum of this rank's points in row order, the ranks' sums added in rank
 * order on rank 0 (other ranks get 0). */
static double checksum(void)
{
    double mine = 0, *all = NULL, sum = 0;
    for (long l = 1; l <= strip.rows; l++)
        for (long j = 0; j < strip.n; j++)
            mine += lrow(strip.u, l)[j];
    if (rank == 0 && !(all = malloc((size_t)nranks * sizeof *all)))
        MPI_Abort(MPI_COMM_WORLD, 2);
    check_rc(MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Gather");
    for (int r = 0; rank == 0 && r < nranks; r++)
        sum += all[r];
    free(all);
    return sum;
}

/* --check: rank 0 gathers the grid, computes it serially from the start and
 * compares every point.  Returns 0 on every rank when they match. */
static int check_against_serial(long iters)
{
    long n = strip.n;
    int *counts = NULL, *displs = NULL, bad = 0;
    double *grid = NULL, *a = NULL, *b = NULL;
    if (rank == 0) {
        counts = malloc((size_t)nranks * sizeof *counts);
        displs = malloc((size_t)nranks * sizeof *displs);
        grid = malloc((size_t)(n * n) * sizeof *grid);
        a = malloc((size_t)(n * n) * sizeof *a);
        b = malloc((size_t)(n * n) * sizeof *b);
        if (!counts || !displs || !grid || !a || !b)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int r = 0; r < nranks; r++) {
            long r0 = (long)((int64_t)r * n / nranks), r1 = (long)((int64_t)(r + 1) * n / nranks);
            counts[r] = (int)((r1 - r0) * n);
            displs[r] = (int)(r0 * n);
        }
    }
    check_rc(MPI_Gatherv(lrow(strip.u, 1), (int)(strip.rows * n), MPI_DOUBLE, grid, counts, displs,
                         MPI_DOUBLE, 0, MPI_COMM_WORLD),
             "MPI_Gatherv");
    if (rank == 0) {
        for (long i = 0; i < n; i++)
            for (long j = 0; j < n; j++)
                a[i * n + j] = b[i * n + j] = initial(i, j, n);
        for (long k = 0; k < iters; k++) {
            for (long i = 1; i < n - 1; i++)
                update_row(b + i * n, a + (i - 1) * n, a + i * n, a + (i + 1) * n, n);
            double *t = a;
            a = b;
            b = t;
        }
        for (long p = 0; p < n * n && !bad; p++)
            if (memcmp(&grid[p], &a[p], sizeof(double)) != 0) {
                fprintf(stderr,
                        "jacobi: --check: point (%ld, %ld) after %ld iterations is %.17g, the "
                        "serial computation gives %.17g\n",
                        p / n, p % n, iters, grid[p], a[p]);
                bad = 1;
            }
        free(counts);
        free(displs);
        free(grid);
        free(a);
        free(b);
    }
    check_rc(MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return bad;
}

/* ---- a mode: warm-up, reset, timed iterations, figures ---- */

struct result {
    double usec, usec_min, wait_usec, sum;
};

static int run_mode(enum mode mode, struct result *res)
{
    for (int k = 0; k < WARMUP; k++)
        iterate(mode);
    reset_strip();
    double waited = 0;
    check_rc(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double t0 = MPI_Wtime();
    for (long k = 0; k < opt.iters; k++)
        waited += iterate(mode);
    double per_iter = (MPI_Wtime() - t0) / (double)opt.iters * 1e6;
    double v[3] = {per_iter, -per_iter, waited / (double)opt.iters * 1e6};
    check_rc(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
             "MPI_Allreduce");
    *res = (struct result){v[0], -v[1], v[2], checksum()};
    int bad = opt.check ? check_against_serial(opt.iters) : 0;
    reset_strip();
    return bad;
}

/* ---- options and output ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -n P jacobi [options]\n"
               "  --n N          grid of N x N points (default 2048; --check: 128)\n"
               "  --iters K      timed iterations per mode (default 100, --quick 20; --check: 50)\n"
               "  --mode MODE    overlap, plain or both (default both)\n"
               "  --check        compare the grid with a serial computation on rank 0\n"
               "  --quick        fewer iterations\n"
               "  --json FILE    also write one JSON line per mode to FILE\n");
}

static void parse_options(int argc, char **argv)
{
    const char *mode = "both";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--n") && has)
            opt.n = atol(argv[++i]);
        else if (!strcmp(a, "--iters") && has)
            opt.iters = atol(argv[++i]);
        else if (!strcmp(a, "--mode") && has)
            mode = argv[++i];
        else if (!strcmp(a, "--check"))
            opt.check = 1;
        else if (!strcmp(a, "--quick"))
            opt.quick = 1;
        else if (!strcmp(a, "--json") && has)
            opt.json_path = argv[++i];
        else
            bench_not_an_option("jacobi", rank, a, usage);
    }
    if (!strcmp(mode, "overlap") || !strcmp(mode, "both"))
        opt.modes[opt.nmodes++] = MODE_OVERLAP;
    if (!strcmp(mode, "plain") || !strcmp(mode, "both"))
        opt.modes[opt.nmodes++] = MODE_PLAIN;
    if (!opt.nmodes)
        die("--mode: '%s' is not overlap, plain or both", mode);
    if (opt.n == 0)
        opt.n = opt.check ? 128 : 2048;
    if (opt.iters == 0)
        opt.iters = opt.check ? 50 : opt.quick ? 20 : 100;
    if (opt.n < 3 || opt.n > 1L << 16)
        die("--n: %ld is out of range (3 to 65536)", opt.n);
    if (opt.n < nranks)
        die("--n: %ld rows cannot give each of %d ranks a row", opt.n, nranks);
    if (opt.iters < 1)
        die("--iters: %ld is out of range (at least 1)", opt.iters);
}

static void print_start(FILE *json)
{
    struct bench_ident id;
    bench_ident(&id);
    printf("# jacobi: %ld x %ld grid, %d ranks (strips of %ld-%ld rows), %ld iterations; %s on "
           "%s\n# library: %s\n",
           opt.n, opt.n, nranks, opt.n / nranks, (opt.n + nranks - 1) / nranks, opt.iters, id.date,
           id.host, id.lib);
    printf("# %-8s %14s %14s %14s %24s\n", "mode", "us/iter (max)", "us/iter (min)", "waitall us",
           "checksum");
    fflush(stdout);
    if (!json)
        return;
    fprintf(json, "{\"type\":\"header\",\"suite\":\"jacobi\",\"ranks\":%d,\"library\":", nranks);
    json_string(json, id.lib);
    fprintf(json, ",\"n\":%ld,\"iters\":%ld,\"check\":%s", opt.n, opt.iters,
            opt.check ? "true" : "false");
    bench_json_ident(json, &id);
    fprintf(json, "}\n");
}

int main(int argc, char **argv)
{
    FILE *json = NULL;
    int errors = 0;
    struct result res[2];
    bench_init(&argc, &argv, &rank, &nranks);
    parse_options(argc, argv);
    if (rank == 0 && opt.json_path && !(json = fopen(opt.json_path, "w")))
        die("cannot write %s", opt.json_path);
    setup_strip(opt.n);
    reset_strip();
    if (rank == 0)
        print_start(json);
    for (int m = 0; m < opt.nmodes; m++) {
        enum mode mode = (enum mode)opt.modes[m];
        int bad = run_mode(mode, &res[m]);
        errors += bad;
        if (rank != 0)
            continue;
        printf("  %-8s %14.1f %14.1f %14.2f %24.17g%s\n", mode_name[mode], res[m].usec,
               res[m].usec_min, res[m].wait_usec, res[m].sum,
               opt.check ? bad ? "  check FAILED" : "  checked" : "");
        fflush(stdout);
        if (json) {
            fprintf(json,
                    "{\"type\":\"result\",\"bench\":\"jacobi\",\"mode\":\"%s\",\"n\":%ld,"
                    "\"status\":\"%s\",\"unit\":\"us\",\"value\":%.6g,\"usec_min\":%.6g,"
                    "\"wait_usec\":%.6g,\"iters\":%ld,\"checksum\":%.17g%s}\n",
                    mode_name[mode], opt.n, bad ? "error" : "ok", res[m].usec, res[m].usec_min,
                    res[m].wait_usec, opt.iters, res[m].sum,
                    opt.check ? bad ? ",\"check\":\"mismatch\"" : ",\"check\":\"ok\"" : "");
            fflush(json);
        }
    }
    if (rank == 0 && opt.nmodes == 2 && memcmp(&res[0].sum, &res[1].sum, sizeof(double)) != 0) {
        fprintf(stderr, "jacobi: the overlap and plain checksums differ: %.17g and %.17g\n",
                res[0].sum, res[1].sum);
        errors++;
    }
    check_rc(MPI_Bcast(&errors, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    free(strip.u);
    free(strip.v);
    return bench_finish(json, errors);
}
