/* General graph topologies: MPI_Graph_create and its queries, MPI_Graph_map
 * (topo.h).  Every member gives the whole graph: index[i] is the number of
 * edges of nodes 0..i, edges the neighbours of each node in turn. */
#include "api/mpi/topo.h"

#include <string.h>

/* The graph is well formed for a communicator of `size`. */
static int check_graph(MPI_Comm comm, const char *func, int size, int nnodes, const int index[],
                       const int edges[])
{
    if (nnodes < 0 || nnodes > size)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "nnodes %d is not in [0, %d]", nnodes,
                              size);
    if (nnodes > 0 && !index)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return fmpl_mpi_error(comm, MPI_ERR_ARG, func,
                                  "index[%d] = %d is less than the edges before it", i,
                                  index[i]);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "edges is NULL");
    for (int e = 0; e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return fmpl_mpi_error(comm, MPI_ERR_ARG, func,
                                  "edges[%d] = %d is not a node in [0, %d)", e, edges[e],
                                  nnodes);
    return MPI_SUCCESS;
}

static fmpl_mpi_topo *graph_make(int nnodes, const int index[], const int edges[], int rank)
{
    int nedges = nnodes ? index[nnodes - 1] : 0;
    fmpl_mpi_topo *t = fmpl_mpi_topo_new(MPI_GRAPH, nnodes + nedges);
    if (!t)
        return NULL;
    int used = 0;
    t->nnodes = nnodes;
    t->nedges = nedges;
    t->index = fmpl_mpi_topo_take(t, &used, nnodes);
    t->edges = fmpl_mpi_topo_take(t, &used, nedges);
    memcpy(t->index, index, (size_t)nnodes * sizeof(int));
    memcpy(t->edges, edges, (size_t)nedges * sizeof(int));
    int first = rank ? index[rank - 1] : 0;
    t->sources = t->destinations = t->edges + first;
    t->indegree = t->outdegree = index[rank] - first;
    return t;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    FMPL_CORE_GUARD();
    (void)reorder; /* allowed, not done */
    FMPL_MPI_CHECK_READY(comm_old);
    fmpl_mpi_comm *c;
    int rc = fmpl_mpi_topo_parent(comm_old, "MPI_Graph_create", &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!comm_graph)
        return FMPL_MPI_ERR(comm_old, MPI_ERR_ARG, "comm_graph is NULL");
    *comm_graph = MPI_COMM_NULL; /* also on error (MPICH's cartsmall) */
    rc = check_graph(comm_old, "MPI_Graph_create", c->team->size, nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return rc;
    int rank = c->team->rank;
    fmpl_mpi_topo *t = rank < nnodes ? graph_make(nnodes, index, edges, rank) : NULL;
    return fmpl_mpi_topo_attach(comm_old, rank < nnodes ? 0 : MPI_UNDEFINED, rank, t,
                                comm_graph, "MPI_Graph_create");
}
FMPL_MPI_WEAK(Graph_create)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                   int *newrank)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    int rc = fmpl_mpi_topo_parent(comm, "MPI_Graph_map", &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!newrank)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "newrank is NULL");
    rc = check_graph(comm, "MPI_Graph_map", c->team->size, nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = c->team->rank < nnodes ? c->team->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Graph_map)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_GRAPH, t);
    if (!nnodes || !nedges)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "nnodes or nedges is NULL");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_GRAPH, t);
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && !index) || (maxedges > 0 && !edges))
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "invalid output arrays");
    /* MPI: the first maxindex / maxedges entries. */
    memcpy(index, t->index, (size_t)(maxindex < t->nnodes ? maxindex : t->nnodes) * sizeof(int));
    memcpy(edges, t->edges, (size_t)(maxedges < t->nedges ? maxedges : t->nedges) * sizeof(int));
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Graph_get)

/* Node `rank`'s edges: *first and *n. */
static int node_edges(MPI_Comm comm, const char *func, const fmpl_mpi_topo *t, int rank,
                      int *first, int *n)
{
    *first = *n = 0; /* set on every path: callers read them only on success */
    if (rank < 0 || rank >= t->nnodes)
        return fmpl_mpi_error(comm, MPI_ERR_RANK, func, "rank %d is not a node in [0, %d)",
                              rank, t->nnodes);
    *first = rank ? t->index[rank - 1] : 0;
    *n = t->index[rank] - *first;
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_GRAPH, t);
    if (!nneighbors)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "nneighbors is NULL");
    int first;
    return node_edges(comm, "MPI_Graph_neighbors_count", t, rank, &first, nneighbors);
}
FMPL_MPI_WEAK(Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_GRAPH, t);
    int first, n;
    int rc = node_edges(comm, "MPI_Graph_neighbors", t, rank, &first, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (maxneighbors < 0 || (maxneighbors > 0 && !neighbors))
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "invalid neighbors array");
    memcpy(neighbors, t->edges + first, (size_t)(maxneighbors < n ? maxneighbors : n) * sizeof(int));
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Graph_neighbors)
