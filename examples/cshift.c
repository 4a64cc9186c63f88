/* Seed 004's cyclic shift (NICAM, Fig. 8) in its two versions.
 *
 * A distributed N x N array of doubles, block rows per rank, is shifted by
 * one row along the first dimension, again and again: after a shift, row i
 * holds what row i - 1 held (cyclically).  Each rank moves its own rows
 * down by one locally and pushes its last row into row 0 of its right
 * neighbour's new array with fmpl_put_notify.  Every shift writes into a
 * freshly allocated array (as the data-parallel library of the seed does),
 * taken in turn from a ring of SLOTS symmetric arrays: one address on
 * every rank, so the push names it directly.
 *
 *   bsp      a barrier at entry (nobody still reads or writes the arrays
 *            of earlier shifts), push, wait for the neighbour's push; the
 *            array the shift consumed is free at once.
 *   relaxed  no barrier at entry.  The push carries a COUNT note: the
 *            receiver waits until its counter reaches the shift's number,
 *            so a sender that runs ahead (and pushes the next shift into
 *            the next array) is never mistaken for this one (a sense value
 *            could flip twice).  The consumed array is retired instead of
 *            freed: fmpl_barrier_start with the array's own first word as
 *            the flag, and the array is taken again only once that barrier
 *            has completed, which proves that every rank has retired it
 *            too, so nobody can still push into it.  The barrier runs in
 *            the background (the agent, or any later call's progress).
 * Both check every element after the last shift.
 *
 *   cshift [--n N] [--shifts S] [--mode bsp|relaxed|both] [--bench]
 * --bench prints the time per shift of both versions for N = 64 .. 2048
 * (bench/cshift is this program built with --bench as the default). */
#include <fmpl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(call) try_call((call), #call)
static void try_call(int rc, const char *what)
{
    if (rc != FMPL_SUCCESS)
        fmpl_abort(rc, what);
}

/* More arrays than barriers can be outstanding: a retired array is
 * normally complete long before its turn comes again. */
enum { SLOTS = 72, MODE_BSP = 0, MODE_RELAXED = 1 };

typedef struct grid {
    int rank, size, left, right;
    long n, rows;         /* N, and rows per rank (N / size) */
    size_t bytes;         /* one array: rows * N doubles, one line for the flag */
    char *slot[SLOTS];    /* symmetric arrays */
    uint64_t *arrivals;   /* symmetric: COUNT notes from the left neighbour */
    uint64_t shifts_done; /* shifts completed (relaxed: the counter's target) */
    int cur;              /* slot holding the current array */
    int nslots;           /* slots in use: SLOTS, fewer for large arrays */
    int retired[SLOTS];   /* relaxed: a barrier was started on this slot */
} grid;

/* The array of slot s: its data starts one cache line in, so the first
 * word can be a barrier's flag without touching the data. */
static double *data_of(const grid *g, int s) { return (double *)(g->slot[s] + 64); }

static double value(long row, long col, long n) { return (double)(row * n + col); }

static void setup(grid *g, long n)
{
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &g->rank));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &g->size));
    g->left = (g->rank + g->size - 1) % g->size;
    g->right = (g->rank + 1) % g->size;
    g->n = n;
    g->rows = n / g->size;
    if (g->rows < 1 || n % g->size)
        fmpl_abort(2, "cshift: N must be a positive multiple of the number of ranks");
    g->bytes = 64 + (size_t)g->rows * (size_t)n * sizeof(double);
    /* At most ~96 MiB of arrays (the symmetric arena's default is 128 MiB):
     * fewer slots only make a retired array's barrier matter sooner. */
    size_t fit = (size_t)96 << 20;
    g->nslots = g->bytes * SLOTS <= fit ? SLOTS : (int)(fit / g->bytes);
    if (g->nslots < 3)
        g->nslots = 3;
    for (int s = 0; s < g->nslots; s++) {
        g->slot[s] = fmpl_alloc_symmetric(g->bytes, FMPL_COMM_WORLD);
        if (!g->slot[s])
            fmpl_abort(1, "cshift: fmpl_alloc_symmetric failed (raise FMPL_SYMMETRIC_SIZE)");
        g->retired[s] = 0;
    }
    g->arrivals = fmpl_alloc_symmetric(sizeof *g->arrivals, FMPL_COMM_WORLD);
    if (!g->arrivals)
        fmpl_abort(1, "cshift: fmpl_alloc_symmetric failed");
    *g->arrivals = 0;
    g->shifts_done = 0;
    g->cur = 0;
    double *a = data_of(g, 0);
    for (long i = 0; i < g->rows; i++)
        for (long j = 0; j < n; j++)
            a[i * n + j] = value(g->rank * g->rows + i, j, n);
    TRY(fmpl_barrier(FMPL_COMM_WORLD));
}

static void teardown(grid *g)
{
    for (int s = 0; s < g->nslots; s++)
        if (g->retired[s])
            TRY(fmpl_barrier_wait((uint64_t *)g->slot[s]));
    TRY(fmpl_barrier(FMPL_COMM_WORLD));
    for (int s = g->nslots - 1; s >= 0; s--)
        TRY(fmpl_free_symmetric(g->slot[s], FMPL_COMM_WORLD));
    TRY(fmpl_free_symmetric(g->arrivals, FMPL_COMM_WORLD));
}

/* The array the next shift writes into: the next slot, once nobody can
 * still use it (relaxed: the barrier of its retirement has completed;
 * NICAM's deferred free). */
static int take_next(grid *g)
{
    int s = (g->cur + 1) % g->nslots;
    if (g->retired[s]) {
        TRY(fmpl_barrier_wait((uint64_t *)g->slot[s]));
        g->retired[s] = 0;
    }
    return s;
}

static void shift(grid *g, int mode)
{
    long n = g->n, rows = g->rows;
    if (mode == MODE_BSP)
        TRY(fmpl_barrier(FMPL_COMM_WORLD));
    int next = take_next(g);
    double *src = data_of(g, g->cur), *dst = data_of(g, next);
    /* Push the last row into row 0 of the right neighbour's next array,
     * then count one arrival there. */
    fmpl_notify note = {FMPL_NOTIFY_COUNT, g->arrivals, 0};
    TRY(fmpl_put_notify(src + (rows - 1) * n, dst, (size_t)n * sizeof(double), g->right,
                        FMPL_COMM_WORLD, &note));
    /* Meanwhile move the own rows down by one. */
    memcpy(dst + n, src, (size_t)(rows - 1) * (size_t)n * sizeof(double));
    g->shifts_done++;
    TRY(fmpl_wait_count(g->arrivals, g->shifts_done));
    if (mode == MODE_RELAXED) {
        /* Retire the consumed array: its first word is the barrier's flag. */
        TRY(fmpl_barrier_start(FMPL_COMM_WORLD, (uint64_t *)g->slot[g->cur]));
        g->retired[g->cur] = 1;
    }
    g->cur = next;
}

/* After `shifts` shifts, global row r holds what row r - shifts held. */
static long check(const grid *g, long shifts)
{
    long n = g->n, bad = 0;
    const double *a = data_of(g, g->cur);
    for (long i = 0; i < g->rows; i++) {
        long from = ((g->rank * g->rows + i - shifts) % n + n) % n;
        for (long j = 0; j < n; j++)
            if (a[i * n + j] != value(from, j, n) && bad++ < 3)
                fprintf(stderr, "rank %d: row %ld col %ld is %g, expected %g\n", g->rank,
                        g->rank * g->rows + i, j, a[i * n + j], value(from, j, n));
    }
    return bad;
}

/* Runs `shifts` shifts in `mode` on an N x N array; returns seconds per
 * shift (the slowest rank's) or -1 when the data were wrong. */
static double run(long n, long shifts, int mode)
{
    grid g;
    setup(&g, n);
    double t0 = fmpl_wtime();
    for (long s = 0; s < shifts; s++)
        shift(&g, mode);
    double t = (fmpl_wtime() - t0) / (double)shifts;
    long bad = check(&g, shifts);
    double worst[2] = {t, (double)bad}, work[2];
    TRY(fmpl_allreduce(worst, 2, fmpl_dmax, FMPL_COMM_WORLD, work));
    teardown(&g);
    return worst[1] > 0 ? -1.0 : worst[0];
}

int main(int argc, char **argv)
{
#ifdef CSHIFT_BENCH
    int bench = 1;
#else
    int bench = 0;
#endif
    long n = 256, shifts = 200;
    const char *mode = "both";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--shifts") && i + 1 < argc)
            shifts = atol(argv[++i]);
        else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
            mode = argv[++i];
        else if (!strcmp(argv[i], "--bench"))
            bench = 1;
        else {
            fprintf(stderr, "usage: cshift [--n N] [--shifts S] [--mode bsp|relaxed|both] [--bench]\n");
            return 2;
        }
    }
    TRY(fmpl_init(NULL, NULL, 0));
    int rank, size;
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &rank));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &size));
    int failed = 0;
    if (bench) {
        if (rank == 0)
            printf("# cshift, %d ranks: microseconds per shift (slowest rank)\n"
                   "#      N        bsp    relaxed   relaxed/bsp\n",
                   size);
        for (long nn = 64; nn <= 2048; nn *= 2) {
            long reps = nn <= 256 ? 2000 : nn <= 1024 ? 400 : 100;
            if (nn % size)
                continue;
            run(nn, reps / 10, MODE_BSP); /* warm-up */
            double b = run(nn, reps, MODE_BSP), r = run(nn, reps, MODE_RELAXED);
            failed |= b < 0 || r < 0;
            if (rank == 0)
                printf("%8ld %10.2f %10.2f %13.2f\n", nn, b * 1e6, r * 1e6, r / b);
        }
    } else {
        for (int m = MODE_BSP; m <= MODE_RELAXED; m++) {
            const char *name = m == MODE_BSP ? "bsp" : "relaxed";
            if (strcmp(mode, "both") && strcmp(mode, name))
                continue;
            double t = run(n, shifts, m);
            failed |= t < 0;
            if (rank == 0)
                printf("cshift %s: N=%ld, %ld shifts, %d ranks: %s (%.2f us per shift)\n", name,
                       n, shifts, size, t < 0 ? "WRONG" : "ok", t * 1e6);
        }
    }
    TRY(fmpl_finalize());
    return failed;
}
