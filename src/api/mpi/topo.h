/* Process topologies (MPI-4.0 chapter 8): what hangs off a communicator
 * made by MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create(_adjacent).
 *
 *   topo_common.c      the object (one allocation), MPI_Topo_test, the
 *                      creation of the communicator behind a topology, and
 *                      the neighbour lists the neighbourhood collectives use
 *   topo_cart.c        MPI_Dims_create and the MPI_Cart_* functions
 *   topo_graph.c       MPI_Graph_* and MPI_Graphdims_get
 *   topo_dist_graph.c  MPI_Dist_graph_*
 *
 * Reordering is allowed by MPI but not done: rank i of the new communicator
 * is rank i of the old one.  MPI_Comm_dup copies the topology
 * (fmpl_mpi_comm_dup_stage), MPI_Comm_free and MPI_Finalize release it
 * (fmpl_mpi_comm_drop_objects). */
#ifndef FMPL_API_MPI_TOPO_H
#define FMPL_API_MPI_TOPO_H

#include "api/mpi/mpi_impl.h"

typedef struct fmpl_mpi_topo {
    int kind;            /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    /* MPI_CART: ndims dimensions (0 allowed) and this member's coordinates */
    int ndims;
    int *dims, *periods, *coords;
    /* MPI_GRAPH: index[nnodes] and edges[index[nnodes - 1]] as given */
    int nnodes, nedges;
    int *index, *edges;
    /* The neighbour lists of this member, in MPI's order (8.6): a
     * Cartesian topology has 2 * ndims of each (per dimension the source
     * then the destination of MPI_Cart_shift(d, 1), MPI_PROC_NULL at a
     * non-periodic border); a graph has its edges as both; a distributed
     * graph its sources and destinations, with weights when `weighted`. */
    int indegree, outdegree, weighted;
    int *sources, *sourceweights, *destinations, *destweights;
    /* Neighbourhood collectives started on the communicator (neighbor.c):
     * each takes the next number, which keeps its messages apart. */
    unsigned neighbor_seq;
    int nints;           /* size of data[] */
    int data[];          /* every array above points in here */
} fmpl_mpi_topo;

/* A zeroed topology of `kind` with room for nints ints (arrays are then
 * carved from data[] by fmpl_mpi_topo_take); NULL without memory. */
fmpl_mpi_topo *fmpl_mpi_topo_new(int kind, int nints);
/* The next n ints of t->data[] (allocation order = creation order). */
int *fmpl_mpi_topo_take(fmpl_mpi_topo *t, int *used, int n);
/* A copy (MPI_Comm_dup), NULL without memory; NULL copies to NULL. */
fmpl_mpi_topo *fmpl_mpi_topo_copy(const fmpl_mpi_topo *t);
void fmpl_mpi_topo_free(fmpl_mpi_topo *t);

/* The communicator of a new topology: MPI_Comm_split(old, color, key)
 * (MPI_UNDEFINED: not a member), then the topology `t` (consumed; freed on
 * non-members and on error) hangs off the new communicator.  Collective
 * over old.  MPI_SUCCESS or the error reported on old from func. */
int fmpl_mpi_topo_attach(MPI_Comm old, int color, int key, fmpl_mpi_topo *t,
                         MPI_Comm *newcomm, const char *func);

/* comm may carry a new topology (an intra-communicator): MPI_SUCCESS with
 * *out, or MPI_ERR_COMM reported from func. */
int fmpl_mpi_topo_parent(MPI_Comm comm, const char *func, fmpl_mpi_comm **out);
/* The topology of comm: an intracommunicator with a topology of `kind`
 * (0: any kind).  Otherwise NULL with the error reported from func in *rc:
 * MPI_ERR_COMM for an invalid or inter-communicator, MPI_ERR_TOPOLOGY for
 * no topology or another kind. */
fmpl_mpi_topo *fmpl_mpi_topo_get(MPI_Comm comm, int kind, const char *func, int *rc);

/* The start of a topology query: t is comm's topology of `kind`, or the
 * function returns the error. */
#define FMPL_MPI_GET_TOPO(comm, kind, t)                                           \
    FMPL_MPI_CHECK_READY(comm);                                                    \
    int rc_;                                                                       \
    fmpl_mpi_topo *t = fmpl_mpi_topo_get((comm), (kind), __func__ + 1, &rc_);     \
    if (!t)                                                                        \
        return rc_

/* The Cartesian neighbour of this member in dimension d at displacement
 * disp (MPI_PROC_NULL past a non-periodic border). */
int fmpl_mpi_cart_shift_rank(const fmpl_mpi_topo *t, const int *coords, int d, int disp);
/* Rank of coordinates (each within range), and the reverse. */
int fmpl_mpi_cart_rank_of(const fmpl_mpi_topo *t, const int *coords);
void fmpl_mpi_cart_coords_of(const fmpl_mpi_topo *t, int rank, int *coords);

#endif
