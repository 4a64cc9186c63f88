/* Cartesian topologies: MPI_Dims_create, MPI_Cart_create and its queries,
 * MPI_Cart_shift, MPI_Cart_sub, MPI_Cart_map (topo.h).  Ranks are laid out
 * in row-major order (the last dimension varies fastest), MPI 8.5.1. */
#include "api/mpi/topo.h"

#include <stdlib.h>

/* ------------------------------------------------------------ MPI_Dims_create */

/* The free dimensions get the most balanced factorization of n: the
 * smallest difference between the largest and the smallest factor, and
 * among those the one whose factors, smallest first, are largest (what
 * MPICH answers, e.g. 72 = 9 x 8, 5040 = 21 x 16 x 15), in non-increasing
 * order.  A depth-first search over the divisors of n, largest first, with
 * the difference so far as the bound. */
typedef struct dims_search {
    const int *div;  /* the divisors of n, ascending */
    int ndiv, k;
    int *cur, *best;
    long bestdiff;
} dims_search;

static int dims_better(const dims_search *s, long diff)
{
    if (diff != s->bestdiff)
        return diff < s->bestdiff;
    for (int j = s->k - 1; j >= 0; j--)
        if (s->cur[j] != s->best[j])
            return s->cur[j] > s->best[j];
    return 0;
}

/* Factors i.. of the remaining n, each at most maxf. */
static void dims_search_from(dims_search *s, long n, int i, int maxf)
{
    if (i == s->k) {
        long diff = s->cur[0] - s->cur[s->k - 1];
        if (n == 1 && dims_better(s, diff)) {
            s->bestdiff = diff;
            for (int j = 0; j < s->k; j++)
                s->best[j] = s->cur[j];
        }
        return;
    }
    int left = s->k - i;
    for (int j = s->ndiv - 1; j >= 0; j--) {
        int f = s->div[j];
        if (f > maxf || n % f)
            continue;
        long p = 1; /* f is the largest of the `left` factors still to choose */
        int enough = 0;
        for (int t = 0; t < left && !enough; t++)
            enough = (p *= f) >= n;
        if (!enough || (i > 0 && s->cur[0] - f > s->bestdiff))
            break; /* smaller factors only make it worse */
        s->cur[i] = f;
        dims_search_from(s, n / f, i + 1, f);
    }
}

static int spread(int n, int nfree, int *out)
{
    int ndiv = 0;
    for (long d = 1; d * d <= n; d++)
        if (n % d == 0)
            ndiv += d * d == n ? 1 : 2;
    int *div = malloc(sizeof(int) * (size_t)(ndiv + nfree));
    if (!div)
        return MPI_ERR_NO_MEM;
    int lo = 0, hi = ndiv - 1;
    for (long d = 1; d * d <= n; d++)
        if (n % d == 0) {
            div[lo++] = (int)d;
            if (d * d != n)
                div[hi--] = (int)(n / d);
        }
    dims_search s = {.div = div, .ndiv = ndiv, .k = nfree, .cur = div + ndiv, .best = out,
                     .bestdiff = 1L << 62};
    dims_search_from(&s, n, 0, n);
    free(div);
    return MPI_SUCCESS;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (ndims < 0)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_DIMS, "ndims %d is negative", ndims);
    if (nnodes < 0)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_ARG, "nnodes %d is negative", nnodes);
    if (ndims > 0 && !dims)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_ARG, "dims is NULL");
    long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_DIMS, "dims[%d] = %d is negative", i,
                                dims[i]);
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            nfree++;
    }
    if (nnodes == 0 ? fixed != 1 && nfree == 0 : nnodes % fixed != 0)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_DIMS,
                            "%d nodes cannot be divided by the fixed dimensions (product %ld)",
                            nnodes, fixed);
    if (nfree == 0) {
        if (fixed != nnodes)
            return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_DIMS,
                                "the dimensions multiply to %ld, not %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    int *free_dims = malloc((size_t)nfree * sizeof *free_dims);
    if (!free_dims || (nnodes > 0 && spread((int)(nnodes / fixed), nfree, free_dims))) {
        free(free_dims);
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "no memory");
    }
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = nnodes == 0 ? 0 : free_dims[k++];
    free(free_dims);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Dims_create)

/* ------------------------------------------------------------ layout */

int fmpl_mpi_cart_rank_of(const fmpl_mpi_topo *t, const int *coords)
{
    int rank = 0;
    for (int d = 0; d < t->ndims; d++)
        rank = rank * t->dims[d] + coords[d];
    return rank;
}

void fmpl_mpi_cart_coords_of(const fmpl_mpi_topo *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

int fmpl_mpi_cart_shift_rank(const fmpl_mpi_topo *t, const int *coords, int d, int disp)
{
    long c = (long)coords[d] + disp, n = t->dims[d];
    if (c < 0 || c >= n) {
        if (!t->periods[d])
            return MPI_PROC_NULL;
        c = ((c % n) + n) % n;
    }
    int saved = coords[d], rank;
    ((int *)coords)[d] = (int)c; /* restored below: the caller's array is not changed */
    rank = fmpl_mpi_cart_rank_of(t, coords);
    ((int *)coords)[d] = saved;
    return rank;
}

/* The Cartesian topology of member `rank`: dims, periods (0/1), its
 * coordinates and its 2 * ndims neighbours. */
static fmpl_mpi_topo *cart_make(int ndims, const int *dims, const int *periods, int rank)
{
    fmpl_mpi_topo *t = fmpl_mpi_topo_new(MPI_CART, 5 * ndims);
    if (!t)
        return NULL;
    int used = 0;
    t->ndims = ndims;
    t->dims = fmpl_mpi_topo_take(t, &used, ndims);
    t->periods = fmpl_mpi_topo_take(t, &used, ndims);
    t->coords = fmpl_mpi_topo_take(t, &used, ndims);
    t->sources = t->destinations = fmpl_mpi_topo_take(t, &used, 2 * ndims);
    t->indegree = t->outdegree = 2 * ndims;
    for (int d = 0; d < ndims; d++) {
        t->dims[d] = dims[d];
        t->periods[d] = periods[d] != 0;
    }
    fmpl_mpi_cart_coords_of(t, rank, t->coords);
    for (int d = 0; d < ndims; d++) {
        t->sources[2 * d] = fmpl_mpi_cart_shift_rank(t, t->coords, d, -1);
        t->sources[2 * d + 1] = fmpl_mpi_cart_shift_rank(t, t->coords, d, 1);
    }
    return t;
}

/* dims valid for a communicator of `size`: *nodes gets their product. */
static int check_dims(MPI_Comm comm, const char *func, int size, int ndims, const int dims[],
                      const int periods[], int *nodes)
{
    if (ndims < 0)
        return fmpl_mpi_error(comm, MPI_ERR_DIMS, func, "ndims %d is negative", ndims);
    if (ndims > 0 && (!dims || !periods))
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "dims or periods is NULL");
    long n = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return fmpl_mpi_error(comm, MPI_ERR_DIMS, func, "dims[%d] = %d is not positive", d,
                                  dims[d]);
        n *= dims[d];
        if (n > size)
            return fmpl_mpi_error(comm, MPI_ERR_TOPOLOGY, func,
                                  "the grid needs more than the communicator's %d processes",
                                  size);
    }
    *nodes = (int)n;
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    FMPL_CORE_GUARD();
    (void)reorder; /* allowed, not done */
    FMPL_MPI_CHECK_READY(comm_old);
    fmpl_mpi_comm *c;
    int rc = fmpl_mpi_topo_parent(comm_old, "MPI_Cart_create", &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!comm_cart)
        return FMPL_MPI_ERR(comm_old, MPI_ERR_ARG, "comm_cart is NULL");
    *comm_cart = MPI_COMM_NULL; /* also on error (MPICH's cartsmall) */
    int nodes;
    rc = check_dims(comm_old, "MPI_Cart_create", c->team->size, ndims, dims, periods, &nodes);
    if (rc != MPI_SUCCESS)
        return rc;
    int rank = c->team->rank;
    fmpl_mpi_topo *t = rank < nodes ? cart_make(ndims, dims, periods, rank) : NULL;
    return fmpl_mpi_topo_attach(comm_old, rank < nodes ? 0 : MPI_UNDEFINED, rank, t, comm_cart,
                                "MPI_Cart_create");
}
FMPL_MPI_WEAK(Cart_create)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    int rc = fmpl_mpi_topo_parent(comm, "MPI_Cart_map", &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!newrank)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "newrank is NULL");
    int nodes;
    rc = check_dims(comm, "MPI_Cart_map", c->team->size, ndims, dims, periods, &nodes);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = c->team->rank < nodes ? c->team->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Cart_map)

/* ------------------------------------------------------------ queries */

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_CART, t);
    if (!ndims)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "ndims is NULL");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Cartdim_get)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_CART, t);
    if (maxdims < t->ndims)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "maxdims %d < the %d dimensions", maxdims,
                            t->ndims);
    if (t->ndims > 0 && (!dims || !periods || !coords))
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "an output array is NULL");
    for (int d = 0; d < t->ndims; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
        coords[d] = t->coords[d];
    }
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Cart_get)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_CART, t);
    if (!rank || (t->ndims > 0 && !coords))
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "coords or rank is NULL");
    int *c = malloc((size_t)(t->ndims + 1) * sizeof *c);
    if (!c)
        return FMPL_MPI_ERR(comm, MPI_ERR_NO_MEM, "no memory");
    for (int d = 0; d < t->ndims; d++) {
        c[d] = coords[d];
        if (c[d] < 0 || c[d] >= t->dims[d]) {
            if (!t->periods[d]) {
                free(c);
                return FMPL_MPI_ERR(comm, MPI_ERR_ARG,
                                    "coords[%d] = %d is outside the non-periodic dimension "
                                    "of %d", d, coords[d], t->dims[d]);
            }
            c[d] = ((c[d] % t->dims[d]) + t->dims[d]) % t->dims[d];
        }
    }
    *rank = fmpl_mpi_cart_rank_of(t, c);
    free(c);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Cart_rank)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_CART, t);
    int size = fmpl_mpi_comm_get(comm)->team->size;
    if (rank < 0 || rank >= size)
        return FMPL_MPI_ERR(comm, MPI_ERR_RANK, "rank %d is not in [0, %d)", rank, size);
    if (maxdims < t->ndims)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "maxdims %d < the %d dimensions", maxdims,
                            t->ndims);
    if (t->ndims > 0 && !coords)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "coords is NULL");
    fmpl_mpi_cart_coords_of(t, rank, coords);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Cart_coords)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_CART, t);
    if (direction < 0 || direction >= t->ndims)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "direction %d is not in [0, %d)", direction,
                            t->ndims);
    if (!rank_source || !rank_dest)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "rank_source or rank_dest is NULL");
    *rank_source = fmpl_mpi_cart_shift_rank(t, t->coords, direction, -disp);
    *rank_dest = fmpl_mpi_cart_shift_rank(t, t->coords, direction, disp);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Cart_shift)

/* The members with the same coordinates in the dropped dimensions form one
 * sub-grid (color: those coordinates in row-major order); the rank order
 * inside it is the old one, which is row-major in the kept dimensions. */
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_CART, t);
    if (!newcomm || (t->ndims > 0 && !remain_dims))
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "remain_dims or newcomm is NULL");
    *newcomm = MPI_COMM_NULL;
    int nd = t->ndims, kept = 0, color = 0;
    int *dims = malloc((size_t)(2 * nd + 1) * sizeof *dims), *periods = dims + nd;
    if (!dims)
        return FMPL_MPI_ERR(comm, MPI_ERR_NO_MEM, "no memory");
    int key = 0;
    for (int d = 0; d < nd; d++) {
        if (remain_dims[d]) {
            dims[kept] = t->dims[d];
            periods[kept++] = t->periods[d];
            key = key * t->dims[d] + t->coords[d];
        } else {
            color = color * t->dims[d] + t->coords[d];
        }
    }
    /* Nothing kept: one 0-dimensional grid, on the first member only (like
     * MPI_Cart_create with ndims 0; MPICH's cartsuball expects this). */
    if (kept == 0)
        color = fmpl_mpi_comm_get(comm)->team->rank == 0 ? 0 : MPI_UNDEFINED;
    fmpl_mpi_topo *sub = color == MPI_UNDEFINED ? NULL : cart_make(kept, dims, periods, key);
    free(dims);
    return fmpl_mpi_topo_attach(comm, color, key, sub, newcomm, "MPI_Cart_sub");
}
FMPL_MPI_WEAK(Cart_sub)
