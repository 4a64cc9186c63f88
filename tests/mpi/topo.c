/* Process topologies: MPI_Dims_create against hand-computed answers,
 * Cartesian grids (coordinates, ranks, periodic and non-periodic shifts,
 * MPI_Cart_sub, fewer nodes than processes), graphs, distributed graphs
 * (adjacent and general, weighted and not), MPI_Comm_dup keeping the
 * topology, and the errors: invalid dimensions, ranks out of range, a
 * communicator without (or with another) topology. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;

static void dims_create(void)
{
    static const struct {
        int n, nd, in[4], out[4];
    } cases[] = {
        {6, 2, {0, 0}, {3, 2}},       {12, 3, {0, 0, 0}, {3, 2, 2}},
        {16, 3, {0, 0, 0}, {4, 2, 2}}, {7, 2, {0, 0}, {7, 1}},
        {1, 3, {0, 0, 0}, {1, 1, 1}},  {60, 3, {0, 0, 0}, {5, 4, 3}},
        {24, 3, {0, 3, 0}, {4, 3, 2}}, {8, 2, {0, 8}, {1, 8}},
        {6, 2, {2, 3}, {2, 3}},        {4, 1, {0}, {4}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int d[4];
        memcpy(d, cases[c].in, sizeof d);
        CHECK_OK(MPI_Dims_create(cases[c].n, cases[c].nd, d));
        for (int i = 0; i < cases[c].nd; i++)
            CHECK(d[i] == cases[c].out[i], "dims_create(%d, %d) case %zu: dims[%d] = %d, not %d",
                  cases[c].n, cases[c].nd, c, i, d[i], cases[c].out[i]);
    }
    int d[2] = {2, 0};
    CHECK_CLASS(MPI_Dims_create(5, 2, d), MPI_ERR_DIMS); /* 5 is not a multiple of 2 */
    int e[2] = {2, 2};
    CHECK_CLASS(MPI_Dims_create(5, 2, e), MPI_ERR_DIMS); /* fixed product 4 != 5 */
    int f[2] = {-1, 0};
    CHECK_CLASS(MPI_Dims_create(4, 2, f), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Dims_create(4, -1, f), MPI_ERR_DIMS);
}

/* A 2-D grid over every process, periodic in dimension 0 only. */
static void cart_2d(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CHECK_OK(MPI_Dims_create(size, 2, dims));
    MPI_Comm cart;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK(cart != MPI_COMM_NULL, "no cart communicator");
    int status, nd, r;
    CHECK_OK(MPI_Topo_test(cart, &status));
    CHECK(status == MPI_CART, "topo_test %d", status);
    CHECK_OK(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2, "ndims %d", nd);
    CHECK_OK(MPI_Comm_rank(cart, &r));
    CHECK(r == rank, "no reordering: rank %d in cart, %d in world", r, rank);
    int gd[2], gp[2], gc[2];
    CHECK_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "cart_get");
    /* row-major: the last dimension varies fastest */
    CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1], "coords (%d,%d) of %d", gc[0],
          gc[1], rank);
    for (int q = 0; q < size; q++) {
        int c[2], back;
        CHECK_OK(MPI_Cart_coords(cart, q, 2, c));
        CHECK(c[0] == q / dims[1] && c[1] == q % dims[1], "coords of %d", q);
        CHECK_OK(MPI_Cart_rank(cart, c, &back));
        CHECK(back == q, "cart_rank %d != %d", back, q);
    }
    /* periodic wrap in dimension 0; dimension 1 is not periodic */
    int wrap[2] = {-1, 0}, w;
    CHECK_OK(MPI_Cart_rank(cart, wrap, &w));
    CHECK(w == (dims[0] - 1) * dims[1], "wrapped rank %d", w);
    int outside[2] = {0, dims[1]};
    CHECK_CLASS(MPI_Cart_rank(cart, outside, &w), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_coords(cart, size, 2, gc), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cart_coords(cart, -1, 2, gc), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cart_shift(cart, 2, 1, &w, &r), MPI_ERR_ARG);

    /* Hand-computed shifts for the 4-process 2x2 grid. */
    if (size == 4) {
        static const int src0[4] = {2, 3, 0, 1}, dst0[4] = {2, 3, 0, 1};
        static const int src1[4] = {MPI_PROC_NULL, 0, MPI_PROC_NULL, 2};
        static const int dst1[4] = {1, MPI_PROC_NULL, 3, MPI_PROC_NULL};
        int s, d;
        CHECK_OK(MPI_Cart_shift(cart, 0, 1, &s, &d));
        CHECK(s == src0[rank] && d == dst0[rank], "shift(0,1): %d %d", s, d);
        CHECK_OK(MPI_Cart_shift(cart, 1, 1, &s, &d));
        CHECK(s == src1[rank] && d == dst1[rank], "shift(1,1): %d %d", s, d);
        CHECK_OK(MPI_Cart_shift(cart, 1, -1, &s, &d));
        CHECK(s == dst1[rank] && d == src1[rank], "shift(1,-1): %d %d", s, d);
        CHECK_OK(MPI_Cart_shift(cart, 0, 3, &s, &d)); /* 3 = 1 mod 2 */
        CHECK(s == src0[rank] && d == dst0[rank], "shift(0,3): %d %d", s, d);
    }
    /* A duplicate keeps the topology, with a separate copy. */
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(cart, &dup));
    CHECK_OK(MPI_Comm_free(&cart));
    CHECK_OK(MPI_Topo_test(dup, &status));
    CHECK(status == MPI_CART, "dup topo_test %d", status);
    CHECK_OK(MPI_Cart_get(dup, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gc[1] == rank % dims[1], "dup cart_get");
    int nn, ne;
    CHECK_CLASS(MPI_Graphdims_get(dup, &nn, &ne), MPI_ERR_TOPOLOGY);
    CHECK_OK(MPI_Comm_free(&dup));
}

/* A 1-D non-periodic line: shifts by 1 and 2 end in MPI_PROC_NULL. */
static void cart_line(void)
{
    int dims[1] = {size}, periods[1] = {0}, s, d;
    MPI_Comm line;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 1, &line));
    CHECK_OK(MPI_Cart_shift(line, 0, 1, &s, &d));
    CHECK(s == (rank > 0 ? rank - 1 : MPI_PROC_NULL), "line source %d", s);
    CHECK(d == (rank < size - 1 ? rank + 1 : MPI_PROC_NULL), "line dest %d", d);
    CHECK_OK(MPI_Cart_shift(line, 0, 2, &s, &d));
    CHECK(s == (rank >= 2 ? rank - 2 : MPI_PROC_NULL), "line source(2) %d", s);
    CHECK(d == (rank + 2 < size ? rank + 2 : MPI_PROC_NULL), "line dest(2) %d", d);
    CHECK_OK(MPI_Cart_shift(line, 0, 0, &s, &d));
    CHECK(s == rank && d == rank, "shift 0");
    CHECK_OK(MPI_Comm_free(&line));

    /* fewer nodes than processes: only rank 0 is in a 1-node grid */
    int one[1] = {1}, nr;
    MPI_Comm small;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, one, periods, 0, &small));
    CHECK((rank == 0) == (small != MPI_COMM_NULL), "1-node grid on rank %d", rank);
    CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, one, periods, &nr));
    CHECK(nr == (rank == 0 ? 0 : MPI_UNDEFINED), "cart_map %d", nr);
    if (small != MPI_COMM_NULL)
        CHECK_OK(MPI_Comm_free(&small));
    /* errors: too many nodes, a zero dimension, negative ndims */
    int big[1] = {size + 1}, zero[2] = {size, 0};
    small = MPI_COMM_SELF;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, big, periods, 0, &small), MPI_ERR_TOPOLOGY);
    CHECK(small == MPI_COMM_NULL, "a failed Cart_create leaves its output");
    int p2[2] = {0, 0};
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, p2, 0, &small), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, zero, p2, 0, &small), MPI_ERR_DIMS);
}

/* MPI_Cart_sub of a 3-D grid {size/2 or 1, 2 or size, 1}. */
static void cart_sub(void)
{
    int dims[3] = {size % 2 == 0 ? size / 2 : size, size % 2 == 0 ? 2 : 1, 1};
    int periods[3] = {0, 1, 0};
    MPI_Comm cart, sub, point;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart));
    int keep[3] = {1, 0, 1};
    CHECK_OK(MPI_Cart_sub(cart, keep, &sub));
    int sr, ss, nd, gd[2], gp[2], gc[2];
    CHECK_OK(MPI_Comm_rank(sub, &sr));
    CHECK_OK(MPI_Comm_size(sub, &ss));
    CHECK(ss == dims[0], "sub size %d", ss);
    CHECK(sr == rank / dims[1], "sub rank %d", sr);
    CHECK_OK(MPI_Cartdim_get(sub, &nd));
    CHECK(nd == 2, "sub ndims %d", nd);
    CHECK_OK(MPI_Cart_get(sub, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == 1 && gp[0] == 0 && gp[1] == 0 && gc[0] == sr && gc[1] == 0,
          "sub cart_get");
    /* the members of one sub-grid share their dimension-1 coordinate */
    int col = rank % dims[1], sum = 0;
    CHECK_OK(MPI_Allreduce(&col, &sum, 1, MPI_INT, MPI_SUM, sub));
    CHECK(sum == col * ss, "sub-grid members differ in the dropped coordinate");
    int none[3] = {0, 0, 0};
    CHECK_OK(MPI_Cart_sub(cart, none, &point)); /* one 0-dimensional grid, on rank 0 */
    CHECK((rank == 0) == (point != MPI_COMM_NULL), "0-dimensional sub on rank %d", rank);
    if (point != MPI_COMM_NULL) {
        CHECK_OK(MPI_Comm_size(point, &ss));
        CHECK_OK(MPI_Cartdim_get(point, &nd));
        CHECK(ss == 1 && nd == 0, "0-dimensional sub: size %d ndims %d", ss, nd);
        CHECK_OK(MPI_Comm_free(&point));
    }
    CHECK_OK(MPI_Comm_free(&sub));
    CHECK_OK(MPI_Comm_free(&cart));
}

static void graph(void)
{
    /* a ring: node i -> i+1, i-1 */
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + 1) % size;
        edges[2 * i + 1] = (i + size - 1) % size;
    }
    MPI_Comm g;
    CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    int status, nn, ne, cnt, nb[2];
    CHECK_OK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_GRAPH, "topo_test %d", status);
    CHECK_OK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == size && ne == 2 * size, "graphdims %d %d", nn, ne);
    int *gi = malloc(sizeof(int) * (size_t)size), *ge = malloc(sizeof(int) * 2 * (size_t)size);
    CHECK_OK(MPI_Graph_get(g, size, 2 * size, gi, ge));
    CHECK(!memcmp(gi, index, sizeof(int) * (size_t)size) &&
          !memcmp(ge, edges, sizeof(int) * 2 * (size_t)size), "graph_get");
    for (int q = 0; q < size; q++) {
        CHECK_OK(MPI_Graph_neighbors_count(g, q, &cnt));
        CHECK(cnt == 2, "neighbours of %d: %d", q, cnt);
        CHECK_OK(MPI_Graph_neighbors(g, q, 2, nb));
        CHECK(nb[0] == (q + 1) % size && nb[1] == (q + size - 1) % size, "neighbours of %d", q);
    }
    CHECK_CLASS(MPI_Graph_neighbors_count(g, size, &cnt), MPI_ERR_RANK);
    int cd;
    CHECK_CLASS(MPI_Cartdim_get(g, &cd), MPI_ERR_TOPOLOGY);
    int nr;
    CHECK_OK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &nr));
    CHECK(nr == rank, "graph_map %d", nr);
    CHECK_OK(MPI_Comm_free(&g));
    edges[0] = size; /* not a node */
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g), MPI_ERR_ARG);
    free(index);
    free(edges);
    free(gi);
    free(ge);
}

/* sort (rank, weight) pairs, for comparing neighbour sets */
static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? x[0] - y[0] : x[1] - y[1];
}

static void dist_graph(void)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    /* adjacent, weighted: from left with weight 10*left+1, to right and right+1 */
    int src[1] = {left}, sw[1] = {10 * left + 1};
    int dst[2] = {right, (rank + 2) % size}, dw[2] = {10 * rank + 1, 10 * rank + 2};
    MPI_Comm d;
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, 2, dst, dw, MPI_INFO_NULL,
                                            0, &d));
    int status, in, out, wgt, s[4], w[4], o[4], ow[4];
    CHECK_OK(MPI_Topo_test(d, &status));
    CHECK(status == MPI_DIST_GRAPH, "topo_test %d", status);
    CHECK_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &wgt));
    CHECK(in == 1 && out == 2 && wgt == 1, "counts %d %d %d", in, out, wgt);
    CHECK_OK(MPI_Dist_graph_neighbors(d, 1, s, w, 2, o, ow));
    CHECK(s[0] == left && w[0] == 10 * left + 1 && o[0] == right && o[1] == (rank + 2) % size &&
          ow[0] == 10 * rank + 1 && ow[1] == 10 * rank + 2, "adjacent neighbours");
    int cd;
    CHECK_CLASS(MPI_Cartdim_get(d, &cd), MPI_ERR_TOPOLOGY);
    CHECK_OK(MPI_Comm_free(&d));

    /* adjacent, unweighted, rank 0 with no neighbours at all */
    int deg = rank == 0 ? 0 : 1;
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, src, MPI_UNWEIGHTED, deg, dst,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d));
    CHECK_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &wgt));
    CHECK(in == deg && out == deg && wgt == 0, "unweighted counts %d %d %d", in, out, wgt);
    CHECK_OK(MPI_Comm_free(&d));
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, src, MPI_WEIGHTS_EMPTY, 0, dst,
                                            MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &d));
    CHECK_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &wgt));
    CHECK(in == 0 && out == 0 && wgt == 1, "empty weighted counts %d %d %d", in, out, wgt);
    CHECK_OK(MPI_Comm_free(&d));

    /* general: rank 0 gives every edge i -> i+1 (weight 100 i + 1) and
     * i -> i+2 (weight 100 i + 2); the others give none. */
    int n = rank == 0 ? size : 0;
    int *sources = malloc(sizeof(int) * (size_t)size), *degrees = malloc(sizeof(int) * (size_t)size);
    int *dests = malloc(sizeof(int) * 2 * (size_t)size), *weights = malloc(sizeof(int) * 2 * (size_t)size);
    for (int i = 0; i < size; i++) {
        sources[i] = i;
        degrees[i] = 2;
        dests[2 * i] = (i + 1) % size;
        dests[2 * i + 1] = (i + 2) % size;
        weights[2 * i] = 100 * i + 1;
        weights[2 * i + 1] = 100 * i + 2;
    }
    CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests,
                                   n ? weights : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &d));
    CHECK_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &wgt));
    CHECK(in == 2 && out == 2 && wgt == 1, "general counts %d %d %d", in, out, wgt);
    CHECK_OK(MPI_Dist_graph_neighbors(d, 2, s, w, 2, o, ow));
    CHECK(o[0] == right && ow[0] == 100 * rank + 1 && o[1] == (rank + 2) % size &&
          ow[1] == 100 * rank + 2, "general destinations %d/%d %d/%d", o[0], ow[0], o[1], ow[1]);
    int got[4] = {s[0], w[0], s[1], w[1]};
    int l2 = (rank + 2 * size - 2) % size;
    int want[4] = {left, 100 * left + 1, l2, 100 * l2 + 2};
    qsort(got, 2, 2 * sizeof(int), cmp_pair);
    qsort(want, 2, 2 * sizeof(int), cmp_pair);
    CHECK(!memcmp(got, want, sizeof got), "general sources %d/%d %d/%d", got[0], got[1], got[2],
          got[3]);
    CHECK_OK(MPI_Comm_free(&d));

    /* general, unweighted: each gives its own edge to the right */
    int me[1] = {rank}, one[1] = {1};
    CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, one, &right, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &d));
    CHECK_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &wgt));
    CHECK(in == 1 && out == 1 && wgt == 0, "own-edge counts %d %d %d", in, out, wgt);
    CHECK_OK(MPI_Dist_graph_neighbors(d, 1, s, MPI_UNWEIGHTED, 1, o, MPI_UNWEIGHTED));
    CHECK(s[0] == left && o[0] == right, "own-edge neighbours %d %d", s[0], o[0]);
    CHECK_OK(MPI_Comm_free(&d));

    /* errors */
    int bad[1] = {size};
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, MPI_UNWEIGHTED, 0, dst,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, src, MPI_UNWEIGHTED, 0, dst,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, bad, one, dst, MPI_UNWEIGHTED,
                                      MPI_INFO_NULL, 0, &d),
                MPI_ERR_RANK);
    free(sources);
    free(degrees);
    free(dests);
    free(weights);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int status, nd, in, out, wgt;
    CHECK_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "world topo_test %d", status);
    CHECK_CLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &in, &out), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Graphdims_get(MPI_COMM_WORLD, &in, &out), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &wgt),
                MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Topo_test(MPI_COMM_NULL, &status), MPI_ERR_COMM);

    dims_create();
    cart_2d();
    cart_line();
    cart_sub();
    graph();
    dist_graph();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi topo ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
