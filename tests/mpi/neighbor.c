/* Neighbourhood collectives, data checked element by element: on a 2-D
 * periodic grid (where a dimension of size 1 or 2 makes one process both
 * neighbours, so the block sent towards + must land in the block from -),
 * on a non-periodic grid (MPI_PROC_NULL neighbours leave their blocks
 * alone), and on an irregular distributed graph with repeated edges and
 * self-loops; blocking, nonblocking (two at once, completed out of order),
 * persistent (restarted many times, MPI_Startall, freeing an active one is
 * an error), a non-contiguous datatype, and the errors. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* MPI_Start and MPI_Startall of a persistent neighbourhood collective
 * allocate nothing (counted outside AddressSanitizer).  (The waits are not
 * counted: the tag-matched protocol keeps records of unexpected messages
 * on a free list that grows when more are outstanding than ever before.) */
#include "alloc_count.h"

#define SENTINEL (-7)
#define MAXN 16
static int rank, size;

/* What member q puts in element k of its send block j (iteration it). */
static int value(int q, int j, int k, int it) { return it * 100000 + q * 1000 + j * 10 + k; }

/* The in-neighbours of this member and, for each, which of the sender's
 * blocks it receives (alltoall semantics). */
typedef struct {
    int indeg, outdeg;
    int src[MAXN], src_block[MAXN];
    int dst[MAXN];
} hood;

/* Cartesian: neighbours from MPI_Cart_shift; the block from the - side
 * (even index) is the one its sender sent towards + (odd), and back. */
static hood cart_hood(MPI_Comm c)
{
    hood h;
    int nd;
    CHECK_OK(MPI_Cartdim_get(c, &nd));
    h.indeg = h.outdeg = 2 * nd;
    for (int d = 0; d < nd; d++) {
        int s, t;
        CHECK_OK(MPI_Cart_shift(c, d, 1, &s, &t));
        h.src[2 * d] = h.dst[2 * d] = s;
        h.src[2 * d + 1] = h.dst[2 * d + 1] = t;
        h.src_block[2 * d] = 2 * d + 1;
        h.src_block[2 * d + 1] = 2 * d;
    }
    return h;
}

/* The irregular graph: even members send to r+1 twice and to themselves,
 * odd members to r+2 (mod size). */
static int outs(int r, int *o)
{
    if (r % 2 == 0) {
        o[0] = o[1] = (r + 1) % size;
        o[2] = r;
        return 3;
    }
    o[0] = (r + 2) % size;
    return 1;
}

static MPI_Comm graph_comm(hood *h)
{
    h->outdeg = outs(rank, h->dst);
    h->indeg = 0;
    for (int q = 0; q < size; q++) { /* in order of sender, then of its blocks */
        int o[3], n = outs(q, o);
        for (int j = 0; j < n; j++)
            if (o[j] == rank) {
                h->src[h->indeg] = q;
                h->src_block[h->indeg++] = j;
            }
    }
    MPI_Comm g;
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, h->indeg, h->src, MPI_UNWEIGHTED,
                                            h->outdeg, h->dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                            &g));
    int s[MAXN], d[MAXN], in, out, w;
    CHECK_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == h->indeg && out == h->outdeg, "degrees %d %d", in, out);
    CHECK_OK(MPI_Dist_graph_neighbors(g, in, s, MPI_UNWEIGHTED, out, d, MPI_UNWEIGHTED));
    CHECK(!memcmp(s, h->src, sizeof(int) * (size_t)in), "sources");
    return g;
}

static void fill_send(int *sbuf, const hood *h, int cnt, int it)
{
    for (int j = 0; j < h->outdeg; j++)
        for (int k = 0; k < cnt; k++)
            sbuf[j * cnt + k] = value(rank, j, k, it);
}

/* recv block i of cnt elements: the sender's block (alltoall) or its
 * block 0 (allgather: it sends one block, value(q, 0, k)). */
static void check_recv(const int *rbuf, const hood *h, int cnt, int it, int gather,
                       const char *what)
{
    for (int i = 0; i < h->indeg; i++)
        for (int k = 0; k < cnt; k++) {
            int q = h->src[i];
            int want = q == MPI_PROC_NULL ? SENTINEL : value(q, gather ? 0 : h->src_block[i], k, it);
            CHECK(rbuf[i * cnt + k] == want, "%s it %d: block %d (from %d) elem %d = %d, not %d",
                  what, it, i, q, k, rbuf[i * cnt + k], want);
        }
}

static void reset(int *rbuf, int n)
{
    for (int i = 0; i < n; i++)
        rbuf[i] = SENTINEL;
}

static void blocking(MPI_Comm c, const hood *h, const char *what)
{
    int sbuf[MAXN * 4], rbuf[MAXN * 4];
    enum { CNT = 3 };
    /* allgather: one block to all */
    for (int k = 0; k < CNT; k++)
        sbuf[k] = value(rank, 0, k, 0);
    reset(rbuf, MAXN * 4);
    CHECK_OK(MPI_Neighbor_allgather(sbuf, CNT, MPI_INT, rbuf, CNT, MPI_INT, c));
    check_recv(rbuf, h, CNT, 0, 1, what);
    /* alltoall */
    fill_send(sbuf, h, CNT, 1);
    reset(rbuf, MAXN * 4);
    CHECK_OK(MPI_Neighbor_alltoall(sbuf, CNT, MPI_INT, rbuf, CNT, MPI_INT, c));
    check_recv(rbuf, h, CNT, 1, 0, what);
    /* _c form */
    reset(rbuf, MAXN * 4);
    CHECK_OK(MPI_Neighbor_alltoall_c(sbuf, CNT, MPI_INT, rbuf, CNT, MPI_INT, c));
    check_recv(rbuf, h, CNT, 1, 0, what);
    /* alltoallv with blocks reversed in memory: block j at displacement
     * (outdeg-1-j)*CNT, received block i at (indeg-1-i)*CNT */
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN];
    for (int j = 0; j < h->outdeg; j++)
        sc[j] = CNT, sd[j] = (h->outdeg - 1 - j) * CNT;
    for (int i = 0; i < h->indeg; i++)
        rc[i] = CNT, rd[i] = (h->indeg - 1 - i) * CNT;
    int tmp[MAXN * 4];
    for (int j = 0; j < h->outdeg; j++)
        for (int k = 0; k < CNT; k++)
            tmp[sd[j] + k] = value(rank, j, k, 2);
    reset(rbuf, MAXN * 4);
    CHECK_OK(MPI_Neighbor_alltoallv(tmp, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c));
    int back[MAXN * 4];
    for (int i = 0; i < h->indeg; i++)
        memcpy(back + i * CNT, rbuf + rd[i], CNT * sizeof(int));
    check_recv(back, h, CNT, 2, 0, what);
    /* allgatherv into the reversed places */
    for (int k = 0; k < CNT; k++)
        sbuf[k] = value(rank, 0, k, 3);
    reset(rbuf, MAXN * 4);
    CHECK_OK(MPI_Neighbor_allgatherv(sbuf, CNT, MPI_INT, rbuf, rc, rd, MPI_INT, c));
    for (int i = 0; i < h->indeg; i++)
        memcpy(back + i * CNT, rbuf + rd[i], CNT * sizeof(int));
    check_recv(back, h, CNT, 3, 1, what);
    /* alltoallw: byte displacements, received through a vector type
     * (every other int: staged and unpacked) */
    MPI_Datatype strided;
    CHECK_OK(MPI_Type_vector(CNT, 1, 2, MPI_INT, &strided));
    CHECK_OK(MPI_Type_commit(&strided));
    MPI_Aint swd[MAXN], rwd[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
    int wide[MAXN * 8];
    fill_send(sbuf, h, CNT, 4);
    for (int j = 0; j < h->outdeg; j++)
        swd[j] = (MPI_Aint)(j * CNT * sizeof(int)), st[j] = MPI_INT;
    for (int i = 0; i < h->indeg; i++)
        rc[i] = 1, rwd[i] = (MPI_Aint)(i * 2 * CNT * sizeof(int)), rt[i] = strided;
    reset(wide, MAXN * 8);
    CHECK_OK(MPI_Neighbor_alltoallw(sbuf, sc, swd, st, wide, rc, rwd, rt, c));
    for (int i = 0; i < h->indeg; i++)
        for (int k = 0; k < CNT; k++) {
            back[i * CNT + k] = wide[i * 2 * CNT + 2 * k];
            CHECK(wide[i * 2 * CNT + 2 * k + 1] == SENTINEL, "%s: a gap was written", what);
        }
    check_recv(back, h, CNT, 4, 0, what);
    /* alltoallw from MPI_BOTTOM with absolute addresses */
    fill_send(sbuf, h, CNT, 10);
    for (int j = 0; j < h->outdeg; j++)
        CHECK_OK(MPI_Get_address(sbuf + j * CNT, &swd[j]));
    for (int i = 0; i < h->indeg; i++)
        rc[i] = CNT, rwd[i] = (MPI_Aint)(i * CNT * sizeof(int)), rt[i] = MPI_INT;
    reset(rbuf, MAXN * 4);
    CHECK_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, sc, swd, st, rbuf, rc, rwd, rt, c));
    check_recv(rbuf, h, CNT, 10, 0, "alltoallw from MPI_BOTTOM");
    CHECK_OK(MPI_Type_free(&strided));
}

static void nonblocking(MPI_Comm c, const hood *h)
{
    enum { CNT = 2 };
    int s1[MAXN * CNT], s2[MAXN * CNT], r1[MAXN * CNT], r2[MAXN * CNT];
    fill_send(s1, h, CNT, 5);
    fill_send(s2, h, CNT, 6);
    reset(r1, MAXN * CNT);
    reset(r2, MAXN * CNT);
    MPI_Request rq[2];
    CHECK_OK(MPI_Ineighbor_alltoall(s1, CNT, MPI_INT, r1, CNT, MPI_INT, c, &rq[0]));
    CHECK_OK(MPI_Ineighbor_alltoall(s2, CNT, MPI_INT, r2, CNT, MPI_INT, c, &rq[1]));
    CHECK_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(rq[0] == MPI_REQUEST_NULL, "request not freed");
    check_recv(r1, h, CNT, 5, 0, "ineighbor 1");
    check_recv(r2, h, CNT, 6, 0, "ineighbor 2");
    int sb[CNT] = {value(rank, 0, 0, 7), value(rank, 0, 1, 7)};
    reset(r1, MAXN * CNT);
    CHECK_OK(MPI_Ineighbor_allgather(sb, CNT, MPI_INT, r1, CNT, MPI_INT, c, &rq[0]));
    int flag = 0;
    while (!flag)
        CHECK_OK(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
    check_recv(r1, h, CNT, 7, 1, "ineighbor_allgather");
}

static void persistent(MPI_Comm c, const hood *h)
{
    enum { CNT = 2, ITERS = 200 };
    int sbuf[MAXN * CNT] = {0}, rbuf[MAXN * CNT], gsend[CNT] = {0}, gbuf[MAXN * CNT];
    MPI_Request rq[2];
    CHECK_OK(MPI_Neighbor_alltoall_init(sbuf, CNT, MPI_INT, rbuf, CNT, MPI_INT, c, MPI_INFO_NULL,
                                        &rq[0]));
    CHECK_OK(MPI_Neighbor_allgather_init(gsend, CNT, MPI_INT, gbuf, CNT, MPI_INT, c,
                                         MPI_INFO_NULL, &rq[1]));
    /* inactive: completes at once */
    CHECK_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(rq[0] != MPI_REQUEST_NULL, "inactive persistent request freed");
    long in_starts = 0;
    for (int it = 0; it < ITERS; it++) {
        fill_send(sbuf, h, CNT, it);
        reset(rbuf, MAXN * CNT);
        long before = alloc_count();
        if (it % 2 == 0) {
            CHECK_OK(MPI_Start(&rq[0]));
            in_starts += it > 0 ? alloc_count() - before : 0;
            if (it == 0)
                CHECK_CLASS(MPI_Request_free(&rq[0]), MPI_ERR_REQUEST);
            CHECK_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        } else {
            for (int k = 0; k < CNT; k++)
                gsend[k] = value(rank, 0, k, it);
            reset(gbuf, MAXN * CNT);
            before = alloc_count();
            CHECK_OK(MPI_Startall(2, rq));
            in_starts += alloc_count() - before;
            CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            check_recv(gbuf, h, CNT, it, 1, "persistent allgather");
        }
        check_recv(rbuf, h, CNT, it, 0, "persistent alltoall");
    }
    CHECK(in_starts == 0, "%ld allocations in persistent starts", in_starts);
    CHECK_OK(MPI_Request_free(&rq[0]));
    CHECK_OK(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL, "freed request not null");
}

/* Blocks past the eager limit (rendezvous), two operations at once, one
 * of them received through a non-contiguous type (a staging buffer larger
 * than the pool's slots). */
static void large(MPI_Comm c, const hood *h)
{
    enum { CNT = 40000 };
    size_t n = (size_t)CNT * MAXN;
    int *s1 = malloc(n * sizeof(int)), *r1 = malloc(n * sizeof(int));
    int *s2 = malloc(n * sizeof(int)), *r2 = malloc(2 * n * sizeof(int));
    fill_send(s1, h, CNT, 8);
    fill_send(s2, h, CNT, 9);
    reset(r1, (int)n);
    reset(r2, 2 * (int)n);
    MPI_Datatype strided, spaced;
    CHECK_OK(MPI_Type_vector(CNT, 1, 2, MPI_INT, &strided));
    CHECK_OK(MPI_Type_create_resized(strided, 0, (MPI_Aint)(2 * CNT * sizeof(int)), &spaced));
    CHECK_OK(MPI_Type_commit(&spaced));
    MPI_Request rq[2];
    CHECK_OK(MPI_Ineighbor_alltoall(s1, CNT, MPI_INT, r1, CNT, MPI_INT, c, &rq[0]));
    CHECK_OK(MPI_Ineighbor_alltoall(s2, CNT, MPI_INT, r2, 1, spaced, c, &rq[1]));
    CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    check_recv(r1, h, CNT, 8, 0, "large");
    for (int i = 0; i < h->indeg; i++)
        for (int k = 0; k < CNT; k++) {
            int q = h->src[i];
            int want = q == MPI_PROC_NULL ? SENTINEL : value(q, h->src_block[i], k, 9);
            int got = r2[(size_t)i * 2 * CNT + 2 * (size_t)k];
            CHECK(got == want, "large strided block %d elem %d = %d, not %d", i, k, got, want);
            CHECK(r2[(size_t)i * 2 * CNT + 2 * (size_t)k + 1] == SENTINEL, "gap written");
        }
    CHECK_OK(MPI_Type_free(&strided));
    CHECK_OK(MPI_Type_free(&spaced));
    free(s1);
    free(r1);
    free(s2);
    free(r2);
}

static void run_all(MPI_Comm c, const hood *h, const char *what)
{
    large(c, h);
    blocking(c, h, what);
    nonblocking(c, h);
    persistent(c, h);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int dims[2] = {0, 0}, periodic[2] = {1, 1}, open[2] = {0, 0};
    CHECK_OK(MPI_Dims_create(size, 2, dims));
    MPI_Comm torus, grid, graph;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periodic, 0, &torus));
    hood h = cart_hood(torus);
    run_all(torus, &h, "torus");
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open, 0, &grid));
    h = cart_hood(grid);
    run_all(grid, &h, "grid");
    graph = graph_comm(&h);
    run_all(graph, &h, "graph");

    /* errors */
    int x[4] = {0}, y[4 * MAXN];
    MPI_Comm_set_errhandler(torus, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Neighbor_alltoall(x, -1, MPI_INT, y, 1, MPI_INT, torus), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Neighbor_allgather(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, torus),
                MPI_ERR_TYPE);
    MPI_Request rq;
    CHECK_CLASS(MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &rq),
                MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, torus),
                MPI_ERR_BUFFER);
    /* a truncated receive: send 2, receive 1 */
    if (size >= 1) {
        int big[2 * MAXN] = {0};
        int rcv[MAXN];
        CHECK_CLASS(MPI_Neighbor_alltoall(big, 2, MPI_INT, rcv, 1, MPI_INT, torus),
                    MPI_ERR_TRUNCATE);
    }
    CHECK_OK(MPI_Comm_free(&torus));
    CHECK_OK(MPI_Comm_free(&grid));
    CHECK_OK(MPI_Comm_free(&graph));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi neighbor ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
