/* Derived datatypes in the blocking collectives, verified element by
 * element with the holes checked untouched.
 *
 * The main type is VEC: 3 ints, one every other int (extent 5 ints), so
 * element e holds ints 5e, 5e+2, 5e+4 and ints 5e+1, 5e+3 are holes.  Each
 * collective runs with VEC on both sides, with VEC against plain MPI_INT on
 * the other side (same signature), and in place where MPI allows it.
 * Reductions: MPI_SUM element-wise on VEC, MPI_MAXLOC on a vector of
 * MPI_2INT, a user operation that must receive VEC itself with operands in
 * VEC's layout, and a predefined operation on a struct mixing basic types,
 * which is MPI_ERR_OP.  Also a contiguous type offset from the buffer
 * (true_lb != 0) in a v-collective. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#define HOLE (-99)
#define C 2 /* elements of VEC per block */

static int rank, size;
static MPI_Datatype VEC;

static int pos(int j) { return (j / 3) * 5 + (j % 3) * 2; } /* int index of stream int j */

/* A buffer of k VEC elements: stream int j = value(j), holes HOLE. */
static int *vec_new(int k)
{
    int *b = malloc(sizeof(int) * (size_t)(5 * k + 8));
    CHECK(b, "no memory");
    for (int i = 0; i < 5 * k + 8; i++)
        b[i] = HOLE;
    return b;
}

static void vec_fill(int *b, int first, int k, int base)
{
    for (int j = 0; j < 3 * k; j++)
        b[pos(3 * first + j)] = base + j;
}

/* Stream ints [3 first, 3 (first + k)) must be base + j; with holes_too,
 * every other int of the buffer (n ints in all) must still be HOLE. */
static void vec_check(const int *b, int first, int k, int base, const char *what)
{
    for (int j = 0; j < 3 * k; j++)
        CHECK(b[pos(3 * first + j)] == base + j, "%s: stream int %d is %d, expected %d", what,
              3 * first + j, b[pos(3 * first + j)], base + j);
}

static void holes_check(const int *b, int k, const char *what)
{
    for (int i = 0; i < 5 * k + 8; i++) {
        int data = i < 5 * k && i % 5 % 2 == 0;
        CHECK(data || b[i] == HOLE, "%s: hole int %d was written (%d)", what, i, b[i]);
    }
}

static int val(int p, int j) { return p * 1000 + j; }

/* ------------------------------------------------------------ movers */

static void bcast(void)
{
    int *b = vec_new(C), root = size - 1;
    if (rank == root)
        vec_fill(b, 0, C, val(root, 0));
    CHECK_OK(MPI_Bcast(b, C, VEC, root, MPI_COMM_WORLD));
    vec_check(b, 0, C, val(root, 0), "bcast");
    holes_check(b, C, "bcast");
    free(b);
}

static void gather_scatter(void)
{
    int root = 0, n = size;
    int *s = vec_new(C), *r = vec_new(n * C);
    vec_fill(s, 0, C, val(rank, 0));
    CHECK_OK(MPI_Gather(s, C, VEC, r, C, VEC, root, MPI_COMM_WORLD));
    if (rank == root) {
        for (int p = 0; p < n; p++)
            vec_check(r, p * C, C, val(p, 0), "gather");
        holes_check(r, n * C, "gather");
    }
    /* into plain ints at the root */
    int *ints = malloc(sizeof(int) * (size_t)(3 * C * n));
    CHECK_OK(MPI_Gather(s, C, VEC, ints, 3 * C, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int p = 0; p < n; p++)
            for (int j = 0; j < 3 * C; j++)
                CHECK(ints[p * 3 * C + j] == val(p, j), "gather into ints: [%d][%d] = %d", p, j,
                      ints[p * 3 * C + j]);
    /* in place at the root */
    free(r);
    r = vec_new(n * C);
    if (rank == root)
        vec_fill(r, root * C, C, val(root, 0));
    CHECK_OK(MPI_Gather(rank == root ? MPI_IN_PLACE : s, C, VEC, r, C, VEC, root,
                        MPI_COMM_WORLD));
    if (rank == root) {
        for (int p = 0; p < n; p++)
            vec_check(r, p * C, C, val(p, 0), "gather in place");
        holes_check(r, n * C, "gather in place");
    }
    /* scatter: block p of the root's VEC buffer to member p */
    free(r);
    r = vec_new(n * C);
    for (int p = 0; p < n; p++)
        vec_fill(r, p * C, C, val(p, 0));
    int *mine = vec_new(C);
    CHECK_OK(MPI_Scatter(r, C, VEC, mine, C, VEC, root, MPI_COMM_WORLD));
    vec_check(mine, 0, C, val(rank, 0), "scatter");
    holes_check(mine, C, "scatter");
    /* from plain ints into VEC */
    for (int p = 0; p < n; p++)
        for (int j = 0; j < 3 * C; j++)
            ints[p * 3 * C + j] = val(p, j) + 7;
    free(mine);
    mine = vec_new(C);
    CHECK_OK(MPI_Scatter(ints, 3 * C, MPI_INT, mine, C, VEC, root, MPI_COMM_WORLD));
    vec_check(mine, 0, C, val(rank, 7), "scatter from ints");
    holes_check(mine, C, "scatter from ints");
    /* in place at the root: its block stays */
    CHECK_OK(MPI_Scatter(r, C, VEC, rank == root ? MPI_IN_PLACE : mine, C, VEC, root,
                         MPI_COMM_WORLD));
    vec_check(mine, 0, C, rank == root ? val(rank, 7) : val(rank, 0), "scatter in place");
    if (rank == root)
        vec_check(r, root * C, C, val(root, 0), "scatter in place, root's block");
    free(mine);
    free(ints);
    free(s);
    free(r);
}

/* v forms: member p has p % 2 + 1 elements; blocks stored in reverse rank
 * order. */
static void v_layout(int *counts, int *displs)
{
    int at = 0;
    for (int p = size - 1; p >= 0; p--) {
        counts[p] = p % 2 + 1;
        displs[p] = at;
        at += counts[p];
    }
}

static void gatherv_scatterv(void)
{
    int n = size, root = n / 2, counts[64], displs[64];
    v_layout(counts, displs);
    int total = displs[0] + counts[0];
    int *s = vec_new(2), *r = vec_new(total);
    vec_fill(s, 0, counts[rank], val(rank, 0));
    CHECK_OK(MPI_Gatherv(s, counts[rank], VEC, r, counts, displs, VEC, root, MPI_COMM_WORLD));
    if (rank == root) {
        for (int p = 0; p < n; p++)
            vec_check(r, displs[p], counts[p], val(p, 0), "gatherv");
        holes_check(r, total, "gatherv");
    }
    /* in place */
    free(r);
    r = vec_new(total);
    if (rank == root)
        vec_fill(r, displs[root], counts[root], val(root, 0));
    CHECK_OK(MPI_Gatherv(rank == root ? MPI_IN_PLACE : s, counts[rank], VEC, r, counts, displs,
                         VEC, root, MPI_COMM_WORLD));
    if (rank == root) {
        for (int p = 0; p < n; p++)
            vec_check(r, displs[p], counts[p], val(p, 0), "gatherv in place");
        holes_check(r, total, "gatherv in place");
    }
    /* scatterv back, received as ints */
    int ints[6];
    for (int i = 0; i < 6; i++)
        ints[i] = HOLE;
    CHECK_OK(MPI_Scatterv(r, counts, displs, VEC, ints, 3 * counts[rank], MPI_INT, root,
                          MPI_COMM_WORLD));
    for (int j = 0; j < 6; j++)
        CHECK(ints[j] == (j < 3 * counts[rank] ? val(rank, j) : HOLE), "scatterv: ints[%d] = %d",
              j, ints[j]);
    free(s);
    s = vec_new(2);
    CHECK_OK(MPI_Scatterv(r, counts, displs, VEC, s, counts[rank], VEC, root, MPI_COMM_WORLD));
    vec_check(s, 0, counts[rank], val(rank, 0), "scatterv");
    holes_check(s, counts[rank], "scatterv");
    free(s);
    free(r);
}

static void allgathers(void)
{
    int n = size;
    int *s = vec_new(C), *r = vec_new(n * C);
    vec_fill(s, 0, C, val(rank, 0));
    CHECK_OK(MPI_Allgather(s, C, VEC, r, C, VEC, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(r, p * C, C, val(p, 0), "allgather");
    holes_check(r, n * C, "allgather");
    free(r);
    r = vec_new(n * C);
    vec_fill(r, rank * C, C, val(rank, 0));
    CHECK_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, C, VEC, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(r, p * C, C, val(p, 0), "allgather in place");
    holes_check(r, n * C, "allgather in place");
    /* plain ints sent, VEC received */
    int ints[3 * C];
    for (int j = 0; j < 3 * C; j++)
        ints[j] = val(rank, j) + 3;
    free(r);
    r = vec_new(n * C);
    CHECK_OK(MPI_Allgather(ints, 3 * C, MPI_INT, r, C, VEC, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(r, p * C, C, val(p, 3), "allgather from ints");
    holes_check(r, n * C, "allgather from ints");
    /* allgatherv, and in place */
    int counts[64], displs[64];
    v_layout(counts, displs);
    int total = displs[0] + counts[0];
    free(r);
    r = vec_new(total);
    CHECK_OK(MPI_Allgatherv(s, counts[rank], VEC, r, counts, displs, VEC, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(r, displs[p], counts[p], val(p, 0), "allgatherv");
    holes_check(r, total, "allgatherv");
    free(r);
    r = vec_new(total);
    vec_fill(r, displs[rank], counts[rank], val(rank, 0));
    CHECK_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, counts, displs, VEC,
                            MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(r, displs[p], counts[p], val(p, 0), "allgatherv in place");
    holes_check(r, total, "allgatherv in place");
    /* a contiguous type offset from the buffer: 4 ints from int 3 (lb 12,
     * extent 16), so block d lies at ints 3 + 4d .. 6 + 4d */
    MPI_Datatype off;
    int at = 3;
    MPI_Type_create_indexed_block(1, 4, &at, MPI_INT, &off);
    MPI_Type_commit(&off);
    int *o = malloc(sizeof(int) * (size_t)(4 * n + 8));
    for (int i = 0; i < 4 * n + 8; i++)
        o[i] = HOLE;
    int mine[4] = {rank * 10, rank * 10 + 1, rank * 10 + 2, rank * 10 + 3};
    int oc[64], od[64];
    for (int p = 0; p < n; p++)
        oc[p] = 1, od[p] = n - 1 - p;
    CHECK_OK(MPI_Allgatherv(mine, 4, MPI_INT, o, oc, od, off, MPI_COMM_WORLD));
    for (int i = 0; i < 4 * n + 8; i++) {
        int d = (i - 3) / 4, p = n - 1 - d, t = (i - 3) % 4;
        int want = i >= 3 && i < 3 + 4 * n ? p * 10 + t : HOLE;
        CHECK(o[i] == want, "offset type: o[%d] = %d, expected %d", i, o[i], want);
    }
    MPI_Type_free(&off);
    free(o);
    free(s);
    free(r);
}

static int a2a(int src, int dst, int j) { return (src * 16 + dst) * 1000 + j; }

static void alltoalls(void)
{
    int n = size;
    int *s = vec_new(n * C), *r = vec_new(n * C);
    for (int p = 0; p < n; p++)
        vec_fill(s, p * C, C, a2a(rank, p, 0));
    CHECK_OK(MPI_Alltoall(s, C, VEC, r, C, VEC, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(r, p * C, C, a2a(p, rank, 0), "alltoall");
    holes_check(r, n * C, "alltoall");
    /* in place */
    CHECK_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, C, VEC, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(s, p * C, C, a2a(p, rank, 0), "alltoall in place");
    holes_check(s, n * C, "alltoall in place");
    /* alltoallv: src -> dst has (src + dst) % 2 + 1 elements, reversed blocks */
    int sc[64], sd[64], rc[64], rd[64], at = 0, rat = 0;
    for (int p = n - 1; p >= 0; p--) {
        sc[p] = (rank + p) % 2 + 1, sd[p] = at, at += sc[p];
        rc[p] = (p + rank) % 2 + 1, rd[p] = rat, rat += rc[p];
    }
    free(s);
    free(r);
    s = vec_new(at);
    r = vec_new(rat);
    for (int p = 0; p < n; p++)
        vec_fill(s, sd[p], sc[p], a2a(rank, p, 0));
    CHECK_OK(MPI_Alltoallv(s, sc, sd, VEC, r, rc, rd, VEC, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(r, rd[p], rc[p], a2a(p, rank, 0), "alltoallv");
    holes_check(r, rat, "alltoallv");
    CHECK_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, s, sc, sd, VEC,
                           MPI_COMM_WORLD));
    for (int p = 0; p < n; p++)
        vec_check(s, sd[p], sc[p], a2a(p, rank, 0), "alltoallv in place");
    holes_check(s, at, "alltoallv in place");
    /* alltoallw: to even members as VEC, to odd ones as ints; received the
     * other way round; displacements in bytes */
    int *w = malloc(sizeof(int) * (size_t)(n * 8)), *wr = vec_new(n * C);
    MPI_Datatype st[64], rt[64];
    int wsc[64], wsd[64], wrc[64], wrd[64];
    int *ws = vec_new(n * C);
    for (int p = 0; p < n; p++) {
        if (p % 2 == 0) {
            st[p] = VEC, wsc[p] = C, wsd[p] = p * C * 5 * (int)sizeof(int);
            vec_fill(ws, p * C, C, a2a(rank, p, 0));
        } else {
            st[p] = MPI_INT, wsc[p] = 3 * C, wsd[p] = p * C * 5 * (int)sizeof(int);
            for (int j = 0; j < 3 * C; j++)
                ws[p * C * 5 + j] = a2a(rank, p, j);
        }
        if (rank % 2 == 0) { /* sent to me as VEC by everyone: receive as ints from odd */
            rt[p] = p % 2 ? VEC : MPI_INT;
        } else {
            rt[p] = p % 2 ? MPI_INT : VEC;
        }
        wrc[p] = rt[p] == VEC ? C : 3 * C;
        wrd[p] = p * C * 5 * (int)sizeof(int);
    }
    CHECK_OK(MPI_Alltoallw(ws, wsc, wsd, st, wr, wrc, wrd, rt, MPI_COMM_WORLD));
    for (int p = 0; p < n; p++) {
        if (rt[p] == VEC) {
            vec_check(wr, p * C, C, a2a(p, rank, 0), "alltoallw as VEC");
            for (int e = 0; e < C; e++)
                CHECK(wr[p * C * 5 + e * 5 + 1] == HOLE && wr[p * C * 5 + e * 5 + 3] == HOLE,
                      "alltoallw: a hole of block %d was written", p);
        } else {
            for (int j = 0; j < 3 * C; j++)
                CHECK(wr[p * C * 5 + j] == a2a(p, rank, j), "alltoallw as ints: [%d][%d] = %d", p,
                      j, wr[p * C * 5 + j]);
        }
    }
    free(w);
    free(wr);
    free(ws);
    free(s);
    free(r);
}

/* ------------------------------------------------------------ reductions */

static int sum_upto(int last, int j) /* sum over p <= last of val(p, j) */
{
    return 1000 * last * (last + 1) / 2 + (last + 1) * j;
}

static MPI_Datatype user_seen;
static int user_calls, user_bad;

/* inout = in + inout on VEC's layout; the datatype must be VEC itself. */
static void vec_add(void *in, void *inout, int *len, MPI_Datatype *type)
{
    user_calls++;
    if (*type != VEC)
        user_bad = 1;
    user_seen = *type;
    const int *a = in;
    int *b = inout;
    for (int e = 0; e < *len; e++)
        for (int t = 0; t < 3; t++)
            b[e * 5 + 2 * t] += a[e * 5 + 2 * t];
}

static void reductions(void)
{
    int n = size, root = n - 1;
    int *s = vec_new(C), *r = vec_new(C);
    vec_fill(s, 0, C, val(rank, 0));
    CHECK_OK(MPI_Allreduce(s, r, C, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(r[pos(j)] == sum_upto(n - 1, j), "allreduce: stream int %d = %d", j, r[pos(j)]);
    holes_check(r, C, "allreduce");
    free(r);
    r = vec_new(C);
    CHECK_OK(MPI_Reduce(s, r, C, VEC, MPI_SUM, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int j = 0; j < 3 * C; j++)
            CHECK(r[pos(j)] == sum_upto(n - 1, j), "reduce: stream int %d = %d", j, r[pos(j)]);
    holes_check(r, C, "reduce");
    /* in place */
    int *ip = vec_new(C);
    vec_fill(ip, 0, C, val(rank, 0));
    CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, ip, C, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(ip[pos(j)] == sum_upto(n - 1, j), "allreduce in place: %d = %d", j, ip[pos(j)]);
    holes_check(ip, C, "allreduce in place");
    vec_fill(ip, 0, C, val(rank, 0));
    CHECK_OK(MPI_Reduce(rank == root ? MPI_IN_PLACE : ip, ip, C, VEC, MPI_SUM, root,
                        MPI_COMM_WORLD));
    if (rank == root)
        for (int j = 0; j < 3 * C; j++)
            CHECK(ip[pos(j)] == sum_upto(n - 1, j), "reduce in place: %d = %d", j, ip[pos(j)]);
    holes_check(ip, C, "reduce in place");
    /* scan and exscan */
    free(r);
    r = vec_new(C);
    CHECK_OK(MPI_Scan(s, r, C, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(r[pos(j)] == sum_upto(rank, j), "scan: %d = %d", j, r[pos(j)]);
    holes_check(r, C, "scan");
    free(r);
    r = vec_new(C);
    CHECK_OK(MPI_Exscan(s, r, C, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(r[pos(j)] == (rank == 0 ? HOLE : sum_upto(rank - 1, j)), "exscan: %d = %d", j,
              r[pos(j)]);
    holes_check(r, C, "exscan");
    vec_fill(ip, 0, C, val(rank, 0));
    CHECK_OK(MPI_Scan(MPI_IN_PLACE, ip, C, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(ip[pos(j)] == sum_upto(rank, j), "scan in place: %d = %d", j, ip[pos(j)]);
    /* reduce_scatter_block: block q of the input is member q's */
    int *big = vec_new(n * C);
    vec_fill(big, 0, n * C, val(rank, 0));
    free(r);
    r = vec_new(C);
    CHECK_OK(MPI_Reduce_scatter_block(big, r, C, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(r[pos(j)] == sum_upto(n - 1, rank * 3 * C + j), "reduce_scatter_block: %d = %d", j,
              r[pos(j)]);
    holes_check(r, C, "reduce_scatter_block");
    CHECK_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, big, C, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(big[pos(j)] == sum_upto(n - 1, rank * 3 * C + j),
              "reduce_scatter_block in place: %d = %d", j, big[pos(j)]);
    /* reduce_scatter: member q gets q % 2 + 1 elements */
    int counts[64], total = 0, first = 0;
    for (int q = 0; q < n; q++) {
        counts[q] = q % 2 + 1;
        if (q < rank)
            first += counts[q];
        total += counts[q];
    }
    free(big);
    big = vec_new(total);
    vec_fill(big, 0, total, val(rank, 0));
    free(r);
    r = vec_new(2);
    CHECK_OK(MPI_Reduce_scatter(big, r, counts, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * counts[rank]; j++)
        CHECK(r[pos(j)] == sum_upto(n - 1, 3 * first + j), "reduce_scatter: %d = %d", j,
              r[pos(j)]);
    holes_check(r, counts[rank], "reduce_scatter");
    CHECK_OK(MPI_Reduce_scatter(MPI_IN_PLACE, big, counts, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * counts[rank]; j++)
        CHECK(big[pos(j)] == sum_upto(n - 1, 3 * first + j), "reduce_scatter in place: %d = %d",
              j, big[pos(j)]);

    /* a user operation gets VEC and VEC's layout */
    MPI_Op add;
    CHECK_OK(MPI_Op_create(vec_add, 1, &add));
    free(r);
    r = vec_new(C);
    CHECK_OK(MPI_Allreduce(s, r, C, VEC, add, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(r[pos(j)] == sum_upto(n - 1, j), "user op allreduce: %d = %d", j, r[pos(j)]);
    holes_check(r, C, "user op allreduce");
    CHECK(!user_bad, "the user function got datatype 0x%x, not VEC", (unsigned)user_seen);
    CHECK(n == 1 || user_calls > 0 || rank != 0, "the user function was never called");
    free(r);
    r = vec_new(C);
    CHECK_OK(MPI_Scan(s, r, C, VEC, add, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * C; j++)
        CHECK(r[pos(j)] == sum_upto(rank, j), "user op scan: %d = %d", j, r[pos(j)]);
    holes_check(r, C, "user op scan");
    /* MPI_Reduce_local on VEC, predefined and user */
    int *a = vec_new(C), *b = vec_new(C);
    vec_fill(a, 0, C, 10);
    vec_fill(b, 0, C, 100);
    CHECK_OK(MPI_Reduce_local(a, b, C, VEC, MPI_SUM));
    for (int j = 0; j < 3 * C; j++)
        CHECK(b[pos(j)] == 110 + 2 * j, "reduce_local: %d = %d", j, b[pos(j)]);
    holes_check(b, C, "reduce_local");
    user_bad = 0;
    CHECK_OK(MPI_Reduce_local(a, b, C, VEC, add));
    for (int j = 0; j < 3 * C; j++)
        CHECK(b[pos(j)] == 120 + 3 * j, "reduce_local user: %d = %d", j, b[pos(j)]);
    holes_check(b, C, "reduce_local user");
    CHECK(!user_bad, "Reduce_local: the user function got another datatype");
    MPI_Op_free(&add);

    /* MAXLOC on a vector of MPI_2INT: pairs 0 and 2 of 3 */
    MPI_Datatype pairs;
    MPI_Type_vector(2, 1, 2, MPI_2INT, &pairs);
    MPI_Type_commit(&pairs);
    int pin[6] = {rank, rank, HOLE, HOLE, -rank, rank}, pout[6];
    for (int i = 0; i < 6; i++)
        pout[i] = HOLE;
    CHECK_OK(MPI_Allreduce(pin, pout, 1, pairs, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(pout[0] == n - 1 && pout[1] == n - 1 && pout[4] == 0 && pout[5] == 0 &&
              pout[2] == HOLE && pout[3] == HOLE,
          "maxloc on pairs: %d %d %d %d %d %d", pout[0], pout[1], pout[2], pout[3], pout[4],
          pout[5]);
    MPI_Type_free(&pairs);

    /* a predefined operation on a struct of mixed basic types */
    MPI_Datatype mixed;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, dp, ty, &mixed);
    MPI_Type_commit(&mixed);
    char m_in[16] = {0}, m_out[16];
    CHECK_CLASS(MPI_Allreduce(m_in, m_out, 1, mixed, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(m_in, m_out, 1, mixed, MPI_SUM), MPI_ERR_OP);
    MPI_Type_free(&mixed);
    free(a);
    free(b);
    free(big);
    free(ip);
    free(s);
    free(r);
}

/* More than a staging slot (64 KiB) of VEC. */
static void large(void)
{
    enum { K = 30000 };
    int *b = vec_new(K), *r = vec_new(K);
    if (rank == 0)
        vec_fill(b, 0, K, 5);
    CHECK_OK(MPI_Bcast(b, K, VEC, 0, MPI_COMM_WORLD));
    vec_check(b, 0, K, 5, "large bcast");
    holes_check(b, K, "large bcast");
    CHECK_OK(MPI_Allreduce(b, r, K, VEC, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 3 * K; j++)
        CHECK(r[pos(j)] == size * (5 + j), "large allreduce: %d = %d", j, r[pos(j)]);
    holes_check(r, K, "large allreduce");
    free(b);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Type_vector(3, 1, 2, MPI_INT, &VEC);
    MPI_Type_commit(&VEC);
    bcast();
    gather_scatter();
    gatherv_scatterv();
    allgathers();
    alltoalls();
    reductions();
    large();
    MPI_Type_free(&VEC);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("derived_coll ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
