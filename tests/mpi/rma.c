/* One-sided communication (src/rma, src/api/mpi/win*.c), at 1, 2 and 4
 * ranks: every window flavour (shared-heap memory reached by loads and
 * stores, private memory reached by CMA, a shared allocation, a dynamic
 * window), every communication call, every synchronisation mode, data
 * checked byte for byte, derived datatypes on both sides, accumulate
 * atomicity under contention, passive-target progress while the target
 * computes without calling MPI, window objects, and the error classes.
 * When the ranks do not all share memory (another host, FMPL_FABRIC=net or
 * split): the shared allocation and dynamic windows must be refused with
 * their error classes, and the target that computes without calling MPI
 * does so for a bounded time, then meets the origins in a barrier (over tcp
 * its memory is served only while it polls: docs/cluster.md, "Progress"):
 * their epochs must still complete, with every byte in place. */
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

#define N 128 /* ints per rank in the data windows */

static int rank, size;
static int spans_network; /* some pair of ranks does not share memory */

static int val(int r, int i) { return r * 1000 + i; }

/* A window of N ints in memory of each kind, and the displacement (in
 * units of the window's disp_unit) of each target's int 0. */
typedef struct win_case {
    const char *what;
    MPI_Win win;
    int *mem;            /* this rank's N ints */
    MPI_Aint *base;      /* [size] displacement of int 0 at each target */
    int unit;            /* bytes per displacement unit */
    void *to_free;       /* malloc'd / MPI_Alloc_mem'd memory */
    int alloc_mem;
} win_case;

static void make_case(win_case *c, int kind)
{
    memset(c, 0, sizeof *c);
    c->base = calloc((size_t)size, sizeof *c->base);
    c->unit = 1;
    switch (kind) {
    case 0:
        c->what = "Win_allocate";
        c->unit = sizeof(int);
        CHECK_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &c->mem, &c->win));
        break;
    case 1:
        c->what = "Win_create(malloc)";
        c->mem = c->to_free = malloc(N * sizeof(int));
        CHECK_OK(MPI_Win_create(c->mem, N * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                &c->win));
        break;
    case 2:
        c->what = "Win_create(MPI_Alloc_mem)";
        CHECK_OK(MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &c->mem));
        c->to_free = c->mem;
        c->alloc_mem = 1;
        CHECK_OK(MPI_Win_create(c->mem, N * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                &c->win));
        break;
    case 3:
        c->what = "Win_allocate_shared";
        if (spans_network) { /* refused: some members do not share memory */
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int rc = MPI_Win_allocate_shared(N * sizeof(int), 1, MPI_INFO_NULL,
                                             MPI_COMM_WORLD, &c->mem, &c->win);
            CHECK(error_class(rc) == MPI_ERR_RMA_SHARED, "allocate_shared across hosts: "
                  "class %d", error_class(rc));
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            c->win = MPI_WIN_NULL;
            return;
        }
        CHECK_OK(MPI_Win_allocate_shared(N * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                         &c->mem, &c->win));
        break;
    default: {
        c->what = "Win_create_dynamic";
        if (spans_network) {
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &c->win);
            CHECK(error_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION,
                  "dynamic window across hosts: class %d", error_class(rc));
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            c->win = MPI_WIN_NULL;
            return;
        }
        c->mem = c->to_free = malloc(N * sizeof(int));
        CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &c->win));
        CHECK_OK(MPI_Win_attach(c->win, c->mem, N * sizeof(int)));
        MPI_Aint mine;
        CHECK_OK(MPI_Get_address(c->mem, &mine));
        CHECK_OK(MPI_Allgather(&mine, 1, MPI_AINT, c->base, 1, MPI_AINT, MPI_COMM_WORLD));
        break;
    }
    }
    for (int i = 0; i < N; i++)
        c->mem[i] = -1;
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void free_case(win_case *c)
{
    if (c->to_free && !c->alloc_mem && c->base[rank])
        CHECK_OK(MPI_Win_detach(c->win, c->mem));
    CHECK_OK(MPI_Win_free(&c->win));
    CHECK(c->win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
    if (c->alloc_mem)
        CHECK_OK(MPI_Free_mem(c->to_free));
    else
        free(c->to_free);
    free(c->base);
}

/* Displacement of int i at target t. */
static MPI_Aint disp(const win_case *c, int t, int i)
{
    return c->base[t] + (MPI_Aint)i * (MPI_Aint)sizeof(int) / c->unit;
}

static void fill(int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        a[i] = v;
}

/* ------------------------------------------------------------ fence */

static void fence_put_get(win_case *c)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = val(rank, i);
    CHECK_OK(MPI_Win_fence(0, c->win));
    /* contiguous put of ints [0, 32) to the right */
    CHECK_OK(MPI_Put(src, 32, MPI_INT, right, disp(c, right, 0), 32, MPI_INT, c->win));
    /* vector origin (every other int of src[32..47]) into an indexed target:
     * blocks of 2 at ints 40, 44, 48, 52 */
    MPI_Datatype vec, idx;
    int bl[4] = {2, 2, 2, 2}, dl[4] = {40, 44, 48, 52};
    CHECK_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &vec));
    CHECK_OK(MPI_Type_commit(&vec));
    CHECK_OK(MPI_Type_indexed(4, bl, dl, MPI_INT, &idx));
    CHECK_OK(MPI_Type_commit(&idx));
    CHECK_OK(MPI_Put(src + 32, 1, vec, right, disp(c, right, 0), 1, idx, c->win));
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int i = 0; i < N; i++) {
        int want = -1;
        if (i < 32)
            want = val(left, i);
        else if (i >= 40 && i < 54 && (i - 40) % 4 < 2)
            want = val(left, 32 + 2 * ((i - 40) / 4 * 2 + (i - 40) % 4));
        CHECK(c->mem[i] == want, "%s: put: int %d is %d, want %d", c->what, i, c->mem[i], want);
    }
    /* get the right neighbour's ints back: contiguous, then the indexed
     * ones into a vector */
    int got[N], got2[16];
    fill(got, N, -7);
    fill(got2, 16, -7);
    CHECK_OK(MPI_Get(got, 32, MPI_INT, right, disp(c, right, 0), 32, MPI_INT, c->win));
    CHECK_OK(MPI_Get(got2, 1, vec, right, disp(c, right, 0), 1, idx, c->win));
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int i = 0; i < 32; i++)
        CHECK(got[i] == val(rank, i), "%s: get int %d is %d", c->what, i, got[i]);
    for (int i = 0; i < 16; i++) {
        int want = i % 2 ? -7 : val(rank, 32 + i);
        CHECK(got2[i] == want, "%s: derived get %d is %d, want %d", c->what, i, got2[i], want);
    }
    CHECK_OK(MPI_Type_free(&vec));
    CHECK_OK(MPI_Type_free(&idx));
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win));
}

/* Accumulates of every rank into every rank, fence-synchronised. */
static void fence_accumulate(win_case *c)
{
    fill(c->mem, N, 0);
    c->mem[10] = 5;
    CHECK_OK(MPI_Win_fence(0, c->win));
    int ones[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int t = 0; t < size; t++) {
        CHECK_OK(MPI_Accumulate(ones, 8, MPI_INT, t, disp(c, t, 0), 8, MPI_INT, MPI_SUM, c->win));
        int mx = rank;
        CHECK_OK(MPI_Accumulate(&mx, 1, MPI_INT, t, disp(c, t, 9), 1, MPI_INT, MPI_MAX, c->win));
    }
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int i = 0; i < 8; i++)
        CHECK(c->mem[i] == size * (i + 1), "%s: sum %d is %d", c->what, i, c->mem[i]);
    CHECK(c->mem[9] == size - 1, "%s: max is %d", c->what, c->mem[9]);
    /* Get_accumulate: rank r replaces int 20 + r at every target and
     * fetches what was there; NO_OP fetch of int 10 */
    int old = -9, mine = val(rank, 1), ten = -9;
    for (int t = 0; t < size; t++) {
        CHECK_OK(MPI_Get_accumulate(&mine, 1, MPI_INT, &old, 1, MPI_INT, t, disp(c, t, 20 + rank),
                                    1, MPI_INT, MPI_REPLACE, c->win));
        CHECK(old == 0, "%s: get_accumulate fetched %d", c->what, old);
        CHECK_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, &ten, 1, MPI_INT, t, disp(c, t, 10), 1,
                                    MPI_INT, MPI_NO_OP, c->win));
        CHECK(ten == 5, "%s: no_op fetched %d", c->what, ten);
    }
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int r = 0; r < size; r++)
        CHECK(c->mem[20 + r] == val(r, 1), "%s: replaced %d", c->what, c->mem[20 + r]);
    /* a derived target (every other int from 30) with a contiguous origin */
    MPI_Datatype vec;
    CHECK_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    CHECK_OK(MPI_Type_commit(&vec));
    for (int t = 0; t < size; t++)
        CHECK_OK(MPI_Accumulate(ones, 4, MPI_INT, t, disp(c, t, 30), 1, vec, MPI_SUM, c->win));
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int i = 0; i < 8; i++) {
        int want = i % 2 ? 0 : size * (i / 2 + 1);
        CHECK(c->mem[30 + i] == want, "%s: derived accumulate %d is %d want %d", c->what, i,
              c->mem[30 + i], want);
    }
    CHECK_OK(MPI_Type_free(&vec));
    /* a pair type (padded in C, not in the packed stream): MINLOC of
     * (value, rank) pairs at ints 40.. (8-byte aligned in every window) */
    struct {
        int v, r;
    } pair = {100 - rank, rank}, seen;
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int t = 0; t < size; t++)
        CHECK_OK(MPI_Accumulate(&pair, 1, MPI_2INT, t, disp(c, t, 40), 1, MPI_2INT, MPI_MAXLOC,
                                c->win));
    CHECK_OK(MPI_Win_fence(0, c->win));
    memcpy(&seen, &c->mem[40], sizeof seen);
    CHECK(seen.v == 100 && seen.r == 0, "%s: maxloc (%d, %d)", c->what, seen.v, seen.r);
    struct {
        double d;
        int i;
    } dp = {1.5 * rank, rank}, dseen;
    fill(c->mem + 44, 4, 0);
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int t = 0; t < size; t++)
        CHECK_OK(MPI_Accumulate(&dp, 1, MPI_DOUBLE_INT, t, disp(c, t, 44), 1, MPI_DOUBLE_INT,
                                MPI_MAXLOC, c->win));
    CHECK_OK(MPI_Win_fence(0, c->win));
    memcpy(&dseen, &c->mem[44], sizeof dseen); /* the C struct, padding and all */
    CHECK(dseen.d == 1.5 * (size - 1) && dseen.i == size - 1, "%s: double_int maxloc (%g, %d)",
          c->what, dseen.d, dseen.i);
    /* zero bytes: an empty datatype, a NULL result */
    MPI_Datatype empty;
    CHECK_OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    CHECK_OK(MPI_Type_commit(&empty));
    CHECK_OK(MPI_Accumulate(NULL, 1, empty, 0, disp(c, 0, 0), 1, empty, MPI_SUM, c->win));
    CHECK_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, disp(c, 0, 0), 0, MPI_INT,
                                MPI_SUM, c->win));
    CHECK_OK(MPI_Type_free(&empty));
    /* large enough to stage (more than the stack's 256 bytes) on both
     * sides: every other int of 200 into blocks of 4 every 5 ints */
    int big[200];
    for (int i = 0; i < 200; i++)
        big[i] = i % 2 ? -1000 : i / 2 + 1;
    MPI_Datatype every_other, blocks;
    CHECK_OK(MPI_Type_vector(100, 1, 2, MPI_INT, &every_other));
    CHECK_OK(MPI_Type_commit(&every_other));
    CHECK_OK(MPI_Type_vector(25, 4, 5, MPI_INT, &blocks));
    CHECK_OK(MPI_Type_commit(&blocks));
    CHECK_OK(MPI_Win_fence(0, c->win));
    fill(c->mem, N, 0);
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int t = 0; t < size; t++)
        CHECK_OK(MPI_Accumulate(big, 1, every_other, t, disp(c, t, 0), 1, blocks, MPI_SUM,
                                c->win));
    CHECK_OK(MPI_Win_fence(0, c->win));
    for (int i = 0; i < N; i++) {
        int want = i < 125 && i % 5 < 4 ? size * (i / 5 * 4 + i % 5 + 1) : 0;
        CHECK(c->mem[i] == want, "%s: staged accumulate int %d is %d, want %d", c->what, i,
              c->mem[i], want);
    }
    CHECK_OK(MPI_Type_free(&every_other));
    CHECK_OK(MPI_Type_free(&blocks));
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win));
}

/* ------------------------------------------------------------ PSCW */

static void pscw(win_case *c)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group world, gl, gr;
    CHECK_OK(MPI_Win_get_group(c->win, &world));
    CHECK_OK(MPI_Group_incl(world, 1, &left, &gl));
    CHECK_OK(MPI_Group_incl(world, 1, &right, &gr));
    for (int round = 0; round < 3; round++) {
        fill(c->mem, N, -1);
        CHECK_OK(MPI_Win_post(gl, 0, c->win)); /* the left neighbour accesses me */
        CHECK_OK(MPI_Win_start(gr, 0, c->win));
        int v[4] = {val(rank, round), 1, 2, 3};
        CHECK_OK(MPI_Put(v, 4, MPI_INT, right, disp(c, right, 4), 4, MPI_INT, c->win));
        CHECK_OK(MPI_Win_complete(c->win));
        if (round == 1) {
            int flag = 0;
            while (!flag)
                CHECK_OK(MPI_Win_test(c->win, &flag));
        } else {
            CHECK_OK(MPI_Win_wait(c->win));
        }
        CHECK(c->mem[4] == val(left, round) && c->mem[7] == 3 && c->mem[3] == -1 &&
                  c->mem[8] == -1,
              "%s: pscw round %d: %d %d %d %d", c->what, round, c->mem[3], c->mem[4], c->mem[7],
              c->mem[8]);
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody refills before all checked */
    }
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);
}

/* ------------------------------------------------------------ passive target */

static void passive(win_case *c)
{
    int right = (rank + 1) % size;
    fill(c->mem, N, 0);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    int v = val(rank, 7), back = 0;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, c->win));
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, disp(c, right, rank), 1, MPI_INT, c->win));
    CHECK_OK(MPI_Win_flush(right, c->win));
    CHECK_OK(MPI_Get(&back, 1, MPI_INT, right, disp(c, right, rank), 1, MPI_INT, c->win));
    CHECK_OK(MPI_Win_unlock(right, c->win));
    CHECK(back == v, "%s: read back %d", c->what, back);
    /* request-based calls in a lock_all epoch */
    CHECK_OK(MPI_Win_lock_all(0, c->win));
    MPI_Request rq[4];
    int w2 = val(rank, 8), g = 0, acc = 3, fetched = -1;
    CHECK_OK(MPI_Rput(&w2, 1, MPI_INT, right, disp(c, right, 16 + rank), 1, MPI_INT, c->win, &rq[0]));
    CHECK_OK(MPI_Raccumulate(&acc, 1, MPI_INT, right, disp(c, right, 32), 1, MPI_INT, MPI_SUM,
                             c->win, &rq[1]));
    CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK_OK(MPI_Win_flush_all(c->win));
    CHECK_OK(MPI_Rget(&g, 1, MPI_INT, right, disp(c, right, 16 + rank), 1, MPI_INT, c->win, &rq[2]));
    CHECK_OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, &fetched, 1, MPI_INT, right, disp(c, right, 32), 1,
                                 MPI_INT, MPI_NO_OP, c->win, &rq[3]));
    CHECK_OK(MPI_Waitall(2, rq + 2, MPI_STATUSES_IGNORE));
    CHECK_OK(MPI_Win_flush_local_all(c->win));
    CHECK_OK(MPI_Win_unlock_all(c->win));
    CHECK(g == w2, "%s: rget %d", c->what, g);
    CHECK(fetched >= 3 && fetched % 3 == 0, "%s: rget_accumulate %d", c->what, fetched);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    int left = (rank + size - 1) % size;
    CHECK(c->mem[left] == val(left, 7) && c->mem[16 + left] == val(left, 8) &&
              c->mem[32] == 3 * (size == 1 ? 1 : 1),
          "%s: passive data %d %d %d", c->what, c->mem[left], c->mem[16 + left], c->mem[32]);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Every rank adds to one int at rank 0, 1000 times each way (200 across
 * the network, where each is a round trip: 1000 took 40-56 s of a 2 x 2
 * run on this 2-core machine under load, against launchers.sh's 90 s), in
 * shared and exclusive epochs: the total is exact. */
static void contention(win_case *c)
{
    fill(c->mem, N, 0);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    const int iters = spans_network ? 200 : 1000;
    long long lsum = 0;
    int ones80[80];
    fill(ones80, 80, 1);
    CHECK_OK(MPI_Win_lock_all(0, c->win));
    for (int i = 0; i < iters; i++) {
        int one = 1, prev = -1;
        CHECK_OK(MPI_Fetch_and_op(&one, &prev, MPI_INT, 0, disp(c, 0, 0), MPI_SUM, c->win));
        CHECK(prev >= 0 && prev < size * iters, "fetch_and_op fetched %d", prev);
        CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, disp(c, 0, 1), 1, MPI_INT, MPI_SUM, c->win));
        long long l = 2;
        CHECK_OK(MPI_Accumulate(&l, 1, MPI_LONG_LONG, 0, disp(c, 0, 2), 1, MPI_LONG_LONG,
                                MPI_SUM, c->win));
        lsum += l;
        /* int 40: one-element atomic updates against bulk ones (80 ints,
         * more than the atomic path takes) that cover it */
        CHECK_OK(MPI_Fetch_and_op(&one, &prev, MPI_INT, 0, disp(c, 0, 40), MPI_SUM, c->win));
        if (i % 10 == 0)
            CHECK_OK(MPI_Accumulate(ones80, 80, MPI_INT, 0, disp(c, 0, 40), 80, MPI_INT,
                                    MPI_SUM, c->win));
        if (c->unit == 1) { /* an int not aligned to 4 bytes: byte 1 of int 24 */
            CHECK_OK(MPI_Fetch_and_op(&one, &prev, MPI_INT, 0, disp(c, 0, 24) + 1, MPI_SUM,
                                      c->win));
            CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, disp(c, 0, 24) + 1, 1, MPI_INT, MPI_SUM,
                                    c->win));
        }
    }
    /* compare-and-swap: each rank claims slot 6 + r once */
    int mine = rank + 1, zero = 0, old = -1;
    CHECK_OK(MPI_Compare_and_swap(&mine, &zero, &old, MPI_INT, 0, disp(c, 0, 6 + (rank % 8) * 2),
                                  c->win));
    CHECK(old == 0, "cas found %d", old);
    CHECK_OK(MPI_Compare_and_swap(&zero, &zero, &old, MPI_INT, 0, disp(c, 0, 6 + (rank % 8) * 2),
                                  c->win));
    CHECK(old == mine, "failing cas fetched %d", old);
    CHECK_OK(MPI_Win_unlock_all(c->win));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(c->mem[0] == size * iters, "%s: fetch_and_op total %d", c->what, c->mem[0]);
        CHECK(c->mem[1] == size * iters, "%s: accumulate total %d", c->what, c->mem[1]);
        long long t;
        memcpy(&t, &c->mem[2], sizeof t);
        CHECK(t == (long long)size * 2 * iters, "%s: long long total %lld", c->what, t);
        CHECK(c->mem[40] == size * (iters + iters / 10) && c->mem[41] == size * iters / 10,
              "%s: mixed atomic and bulk totals %d %d", c->what, c->mem[40], c->mem[41]);
        if (c->unit == 1) {
            int u;
            memcpy(&u, (char *)&c->mem[24] + 1, sizeof u);
            CHECK(u == 2 * size * iters, "%s: unaligned total %d", c->what, u);
        }
        for (int r = 0; r < size && r < 8; r++)
            CHECK(c->mem[6 + r * 2] == r + 1, "%s: cas slot %d is %d", c->what, r, c->mem[6 + r * 2]);
    }
    (void)lsum;
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Rank 0 computes (spins on its own memory without calling MPI) until
 * every other rank has locked it, put its flag and unlocked.  Across the
 * network it computes for 0.3 s only, without looking, then waits in a
 * barrier: the origins' epochs complete while it is back in MPI. */
static void passive_progress(win_case *c)
{
    fill(c->mem, N, 0);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0 && spans_network) {
        volatile double x = 1;
        for (double t0 = now_s(); now_s() - t0 < 0.3;)
            x = x * 1.0000001 + 1e-9;
        (void)x;
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int r = 1; r < size; r++)
            CHECK(c->mem[r] == val(r, 3), "%s: after computing, rank %d's flag is %d", c->what,
                  r, c->mem[r]);
        return;
    }
    if (rank == 0) {
        int seen = 0;
        long long spins = 0;
        while (seen < size - 1) {
            seen = 0;
            for (int r = 1; r < size; r++)
                seen += atomic_load_explicit((_Atomic int *)&c->mem[r], memory_order_acquire) ==
                        val(r, 3);
            spins++;
        }
        (void)spins;
    } else {
        int v = val(rank, 3);
        for (int k = 0; k < 10; k++) { /* several epochs, each complete on unlock */
            CHECK_OK(MPI_Win_lock(k % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, c->win));
            int w = k < 9 ? -k : v;
            CHECK_OK(MPI_Put(&w, 1, MPI_INT, 0, disp(c, 0, rank), 1, MPI_INT, c->win));
            CHECK_OK(MPI_Win_unlock(0, c->win));
        }
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}


/* ------------------------------------------------------------ objects */

static int deleted;
static int del_fn(MPI_Win w, int k, void *v, void *extra)
{
    (void)w, (void)k, (void)extra;
    deleted += *(int *)v;
    return MPI_SUCCESS;
}

static int handler_calls, handler_code;
static void handler(MPI_Win *w, int *code, ...)
{
    (void)w;
    handler_calls++;
    handler_code = *code;
}

static void objects(void)
{
    MPI_Win win;
    int *mem;
    CHECK_OK(MPI_Win_allocate(3 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &mem, &win));
    void *base;
    MPI_Aint *wsize;
    int *unit, *flavor, *model, flag;
    CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mem, "MPI_WIN_BASE");
    CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == 3 * sizeof(double), "MPI_WIN_SIZE %ld", (long)*wsize);
    CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == sizeof(double), "MPI_WIN_DISP_UNIT");
    CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavor");
    CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "model");
    /* user attributes, deleted at free */
    int key, v1 = 5;
    CHECK_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, NULL));
    CHECK_OK(MPI_Win_set_attr(win, key, &v1));
    int *got;
    CHECK_OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &v1, "user attribute");
    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_OK(MPI_Win_set_name(win, "rma window"));
    CHECK_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 10 && !strcmp(name, "rma window"), "name %s", name);
    /* group */
    MPI_Group g, wg;
    int cmp;
    CHECK_OK(MPI_Win_get_group(win, &g));
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_OK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "window group");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    /* info */
    MPI_Info info, used;
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_set(info, "no_locks", "false"));
    CHECK_OK(MPI_Win_set_info(win, info));
    CHECK_OK(MPI_Win_get_info(win, &used));
    char value[16];
    CHECK_OK(MPI_Info_get(used, "no_locks", 15, value, &flag));
    CHECK(flag && !strcmp(value, "false"), "info");
    CHECK_OK(MPI_Info_get(used, "accumulate_ops", 15, value, &flag));
    CHECK(flag && !strcmp(value, "same_op_no_op"), "default accumulate_ops");
    MPI_Info_free(&info);
    MPI_Info_free(&used);
    /* error handlers: fatal by default, a user one is called */
    MPI_Errhandler eh, cur;
    CHECK_OK(MPI_Win_get_errhandler(win, &cur));
    CHECK(cur == MPI_ERRORS_ARE_FATAL, "default window errhandler");
    CHECK_OK(MPI_Win_create_errhandler(handler, &eh));
    CHECK_OK(MPI_Win_set_errhandler(win, eh));
    CHECK_OK(MPI_Errhandler_free(&eh));
    int rc = MPI_Win_unlock(0, win);
    CHECK(error_class(rc) == MPI_ERR_RMA_SYNC && handler_calls == 1 &&
              handler_code == rc,
          "user handler: rc %d, %d calls", rc, handler_calls);
    CHECK_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler");
    CHECK_OK(MPI_Win_free(&win));
    CHECK(deleted == 5, "delete callback ran %d", deleted);
    CHECK_OK(MPI_Win_free_keyval(&key));
    if (spans_network)
        return; /* shared windows are refused (checked in make_case) */
    /* shared windows: contiguous across ranks, reachable by query */
    double *sh;
    CHECK_OK(MPI_Win_allocate_shared((rank + 1) * sizeof(double), sizeof(double), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &sh, &win));
    CHECK_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win)); /* the shared-memory idiom */
    for (int i = 0; i <= rank; i++)
        sh[i] = rank + i / 10.0;
    CHECK_OK(MPI_Win_sync(win));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_OK(MPI_Win_sync(win));
    CHECK_OK(MPI_Win_unlock_all(win));
    double *q0;
    MPI_Aint qs;
    int qu;
    CHECK_OK(MPI_Win_shared_query(win, 0, &qs, &qu, &q0));
    CHECK(qs == sizeof(double) && qu == sizeof(double), "shared_query size %ld", (long)qs);
    for (int r = 0, k = 0; r < size; r++)
        for (int i = 0; i <= r; i++, k++)
            CHECK(q0[k] == r + i / 10.0, "shared contiguous element %d", k);
    CHECK_OK(MPI_Win_free(&win));
    /* a member with no memory answers NULL */
    CHECK_OK(MPI_Win_allocate_shared(rank % 2 ? 0 : 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &sh,
                                     &win));
    for (int r = 0; r < size; r++) {
        CHECK_OK(MPI_Win_shared_query(win, r, &qs, &qu, &q0));
        CHECK(r % 2 ? qs == 0 && q0 == NULL : qs == 8 && q0 != NULL, "query of %d: %ld %p", r,
              (long)qs, (void *)q0);
    }
    CHECK_OK(MPI_Win_free(&win));
}

/* ------------------------------------------------------------ errors */

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, *mem;
    MPI_Win win;
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_sync(MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), MPI_ERR_SIZE);
    CHECK_CLASS(MPI_Win_allocate(8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), MPI_ERR_DISP);
    CHECK_CLASS(MPI_Win_create(&x, 4, 1, MPI_INFO_NULL, MPI_COMM_NULL, &win), MPI_ERR_COMM);
    CHECK_OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                              &win));
    CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    /* outside any epoch */
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Get(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock(99, 0, 0, win), MPI_ERR_LOCKTYPE);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_fence(12345678, win), MPI_ERR_ASSERT);
    /* inside a lock epoch */
    MPI_Request rq;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, 0, -1, 1, MPI_INT, win), MPI_ERR_DISP);
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 4, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(&x, 2, MPI_INT, 0, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_DATATYPE_NULL, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Put(&x, -1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_LONG_LONG, win), MPI_ERR_TYPE);
    MPI_Datatype unc;
    CHECK_OK(MPI_Type_contiguous(1, MPI_INT, &unc));
    CHECK_CLASS(MPI_Put(&x, 1, unc, 0, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    MPI_Type_free(&unc);
    float f = 1;
    CHECK_CLASS(MPI_Accumulate(&f, 1, MPI_FLOAT, 0, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_TYPE);
    MPI_Op user;
    CHECK_OK(MPI_Op_create((MPI_User_function *)(void (*)(void))handler, 1, &user));
    CHECK_CLASS(MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, user, win), MPI_ERR_OP);
    MPI_Op_free(&user);
    CHECK_CLASS(MPI_Accumulate(&f, 1, MPI_FLOAT, 0, 0, 1, MPI_FLOAT, MPI_BAND, win), MPI_ERR_OP);
    CHECK_OK(MPI_Put(&x, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_unlock(0, win));
    /* the contiguous fast path (builtin types, shared-heap target): its
     * edges, on this rank's own window */
    CHECK_OK(MPI_Win_lock_all(0, win));
    short halves[2] = {0x1234, 0x5678};
    int whole;
    memcpy(&whole, halves, sizeof whole);
    CHECK_OK(MPI_Put(halves, 2, MPI_SHORT, rank, 3, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_flush(rank, win));
    CHECK(mem[3] == whole, "put of 2 shorts into the window's last int");
    int got[2] = {0, 0};
    CHECK_OK(MPI_Get(got, 1, MPI_INT, rank, 3, 2, MPI_SHORT, win));
    CHECK(got[0] == whole && got[1] == 0, "get of the last int, nothing beyond");
    CHECK_CLASS(MPI_Put(got, 2, MPI_INT, rank, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(got, 1, MPI_INT, rank, (MPI_Aint)1 << 62, 1, MPI_INT, win),
                MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(got, 1, MPI_INT, rank, 0, 1, MPI_SHORT, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Put(got, 1, MPI_INT, -7, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_OK(MPI_Put(got, 0, MPI_INT, rank, 4, 0, MPI_INT, win));
    /* contiguous derived types, one with its data 2 bytes past lb 0 */
    MPI_Datatype two_shorts, shifted;
    int blen = 2;
    MPI_Aint at2 = 2;
    CHECK_OK(MPI_Type_contiguous(2, MPI_SHORT, &two_shorts));
    CHECK_OK(MPI_Type_create_hindexed(1, &blen, &at2, MPI_SHORT, &shifted));
    CHECK_OK(MPI_Type_commit(&two_shorts));
    CHECK_OK(MPI_Type_commit(&shifted));
    short five[5] = {9, 0x1234, 0x5678, 9, 9};
    CHECK_OK(MPI_Put(five, 1, shifted, rank, 2, 1, two_shorts, win));
    CHECK(mem[2] == whole, "put from a type whose data starts past its buffer");
    short back[4] = {0, 0, 0, 0};
    CHECK_OK(MPI_Get(back, 1, two_shorts, rank, 1, 1, shifted, win));
    short want[2];
    memcpy(want, (char *)mem + 6, sizeof want);
    CHECK(back[0] == want[0] && back[1] == want[1] && want[1] == halves[0] && back[2] == 0,
          "get of a target type whose data starts past the displacement");
    CHECK_CLASS(MPI_Get(back, 1, two_shorts, rank, 3, 1, shifted, win), MPI_ERR_RMA_RANGE);
    MPI_Type_free(&two_shorts);
    MPI_Type_free(&shifted);
    CHECK_OK(MPI_Win_unlock_all(win));
    CHECK_CLASS(MPI_Put(got, 1, MPI_INT, rank, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    /* request-based calls need a passive-target epoch */
    CHECK_OK(MPI_Win_fence(0, win));
    CHECK_CLASS(MPI_Rput(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC);
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_CLASS(MPI_Win_detach(win, mem), MPI_ERR_RMA_FLAVOR);
    CHECK_OK(MPI_Win_free(&win));
    CHECK_CLASS(MPI_Win_free(&win), MPI_ERR_WIN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    spans_network = node_size < size;
    for (int kind = 0; kind < 5; kind++) {
        win_case c;
        make_case(&c, kind);
        if (c.win == MPI_WIN_NULL) { /* refused across hosts (checked) */
            free(c.base);
            continue;
        }
        fence_put_get(&c);
        fence_accumulate(&c);
        pscw(&c);
        passive(&c);
        contention(&c);
        passive_progress(&c);
        free_case(&c);
    }
    objects();
    errors();
    MPI_Finalize();
    if (rank == 0)
        printf("rma: ok on %d ranks\n", size);
    return 0;
}
