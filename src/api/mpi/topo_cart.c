/* Cartesian topologies: MPI_Dims_create, MPI_Cart_create and its queries,
 * MPI_Cart_shift, MPI_Cart_sub, MPI_Cart_map (topo.h).  Ranks are laid out
 * in row-major order (the last dimension varies fastest), MPI 8.5.1. */
#include "api/mpi/topo.h"

#include <stdlib.h>

/* ------------------------------------------------------------ MPI_Dims_create */

/* The free dimensions get the factors of n, as balanced as possible and in
 * non-increasing order: the prime factors, largest first, each multiplied
 * into the currently smallest dimension. */
static void spread(int n, int nfree, int *out)
{
    for (int i = 0; i < nfree; i++)
        out[i] = 1;
    int primes[32], np = 0;
    for (int p = 2; (long)p * p <= n; p++)
        while (n % p == 0) {
            primes[np++] = p;
            n /= p;
        }
    if (n > 1)
        primes[np++] = n;
    for (int i = np - 1; i >= 0; i--) {
        int smallest = 0;
        for (int j = 1; j < nfree; j++)
            if (out[j] < out[smallest])
                smallest = j;
        out[smallest] *= primes[i];
    }
    for (int i = 1; i < nfree; i++) /* insertion sort, non-increasing */
        for (int j = i; j > 0 && out[j] > out[j - 1]; j--) {
            int x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
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
    if (!free_dims)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "no memory");
    spread(nnodes == 0 ? 0 : (int)(nnodes / fixed), nfree, free_dims);
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
    (void)reorder; /* allowed, not done */
    FMPL_MPI_CHECK_READY(comm_old);
    fmpl_mpi_comm *c;
    int rc = fmpl_mpi_topo_parent(comm_old, "MPI_Cart_create", &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!comm_cart)
        return FMPL_MPI_ERR(comm_old, MPI_ERR_ARG, "comm_cart is NULL");
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
    FMPL_MPI_GET_TOPO(comm, MPI_CART, t);
    if (!ndims)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "ndims is NULL");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Cartdim_get)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
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
    FMPL_MPI_GET_TOPO(comm, MPI_CART, t);
    if (!newcomm || (t->ndims > 0 && !remain_dims))
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "remain_dims or newcomm is NULL");
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
    fmpl_mpi_topo *sub = cart_make(kept, dims, periods, key);
    free(dims);
    return fmpl_mpi_topo_attach(comm, color, key, sub, newcomm, "MPI_Cart_sub");
}
FMPL_MPI_WEAK(Cart_sub)
