/* Distributed graph topologies: MPI_Dist_graph_create_adjacent (each member
 * gives its own sources and destinations), MPI_Dist_graph_create (each
 * member gives any edges; they are sent to both ends), and the neighbour
 * queries (topo.h).
 *
 * MPI_Dist_graph_create's exchange, on the old communicator: every edge
 * s -> d (weight w) given by a member becomes the record {OUT, d, w} for s
 * and {IN, s, w} for d; an MPI_Alltoall of the record counts, then an
 * MPI_Alltoallv of the records.  A member's neighbours are its records in
 * the order of the members that gave them, then in the order given. */
#include "api/mpi/topo.h"
#include "api/mpi/mpi_objects.h"

#include <stdlib.h>
#include <string.h>

/* Ranks (and weights) of one side. */
static int check_side(MPI_Comm comm, const char *func, int size, int degree, const int ranks[],
                      const int weights[], const char *what)
{
    if (degree < 0)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "%s degree %d is negative", what, degree);
    if (degree > 0 && (!ranks || !weights))
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "the %s ranks or weights are NULL", what);
    if (degree > 0 && weights == MPI_WEIGHTS_EMPTY)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func,
                              "MPI_WEIGHTS_EMPTY with %d %s neighbours", degree, what);
    for (int i = 0; i < degree; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            return fmpl_mpi_error(comm, MPI_ERR_RANK, func, "%s rank %d is not in [0, %d)",
                                  what, ranks[i], size);
        if (weights != MPI_UNWEIGHTED && weights[i] < 0)
            return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "%s weight %d is negative", what,
                                  weights[i]);
    }
    return MPI_SUCCESS;
}

static fmpl_mpi_topo *dist_make(int indegree, int outdegree, int weighted)
{
    fmpl_mpi_topo *t = fmpl_mpi_topo_new(MPI_DIST_GRAPH, 2 * (indegree + outdegree));
    if (!t)
        return NULL;
    int used = 0;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    t->sources = fmpl_mpi_topo_take(t, &used, indegree);
    t->sourceweights = fmpl_mpi_topo_take(t, &used, indegree);
    t->destinations = fmpl_mpi_topo_take(t, &used, outdegree);
    t->destweights = fmpl_mpi_topo_take(t, &used, outdegree);
    return t;
}

static int check_common(MPI_Comm comm, const char *func, MPI_Info info, MPI_Comm *newcomm,
                        fmpl_mpi_comm **c)
{
    int rc = fmpl_mpi_topo_parent(comm, func, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!newcomm)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "comm_dist_graph is NULL");
    *newcomm = MPI_COMM_NULL; /* also on error */
    if (!fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(comm, MPI_ERR_INFO, func, "invalid info 0x%x", (unsigned)info);
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    FMPL_CORE_GUARD();
    (void)reorder; /* allowed, not done */
    FMPL_MPI_CHECK_READY(comm_old);
    const char *func = "MPI_Dist_graph_create_adjacent";
    fmpl_mpi_comm *c;
    int rc = check_common(comm_old, func, info, comm_dist_graph, &c);
    if (rc == MPI_SUCCESS)
        rc = check_side(comm_old, func, c->team->size, indegree, sources, sourceweights,
                        "source");
    if (rc == MPI_SUCCESS)
        rc = check_side(comm_old, func, c->team->size, outdegree, destinations, destweights,
                        "destination");
    if (rc != MPI_SUCCESS)
        return rc;
    int weighted = sourceweights != MPI_UNWEIGHTED;
    fmpl_mpi_topo *t = dist_make(indegree, outdegree, weighted);
    if (t) {
        memcpy(t->sources, sources, (size_t)indegree * sizeof(int));
        memcpy(t->destinations, destinations, (size_t)outdegree * sizeof(int));
        for (int i = 0; i < indegree; i++)
            t->sourceweights[i] = weighted ? sourceweights[i] : 1;
        for (int i = 0; i < outdegree; i++)
            t->destweights[i] = weighted ? destweights[i] : 1;
    }
    return fmpl_mpi_topo_attach(comm_old, 0, c->team->rank, t, comm_dist_graph, func);
}
FMPL_MPI_WEAK(Dist_graph_create_adjacent)

enum { REC_OUT = 0, REC_IN = 1, REC_INTS = 3 };

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    FMPL_CORE_GUARD();
    (void)reorder;
    FMPL_MPI_CHECK_READY(comm_old);
    const char *func = "MPI_Dist_graph_create";
    fmpl_mpi_comm *c;
    int rc = check_common(comm_old, func, info, comm_dist_graph, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    int size = c->team->size;
    if (n < 0 || (n > 0 && (!sources || !degrees)))
        return FMPL_MPI_ERR(comm_old, MPI_ERR_ARG, "n %d is negative or an array is NULL", n);
    long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= size)
            return FMPL_MPI_ERR(comm_old, MPI_ERR_RANK, "source %d is not in [0, %d)",
                                sources[i], size);
        if (degrees[i] < 0)
            return FMPL_MPI_ERR(comm_old, MPI_ERR_ARG, "degrees[%d] = %d is negative", i,
                                degrees[i]);
        nedges += degrees[i];
    }
    rc = check_side(comm_old, func, size, (int)nedges, destinations, weights, "destination");
    if (rc != MPI_SUCCESS)
        return rc;
    int weighted = weights != MPI_UNWEIGHTED;

    /* counts[4 * size]: send counts, receive counts, send and receive displacements */
    int *counts = calloc((size_t)4 * size, sizeof(int));
    int *out = malloc((size_t)(2 * nedges * REC_INTS + 1) * sizeof(int));
    if (!counts || !out) {
        free(counts);
        free(out);
        return FMPL_MPI_ERR(comm_old, MPI_ERR_NO_MEM, "no memory for %ld edges", nedges);
    }
    int *scount = counts, *rcount = counts + size, *sdispl = counts + 2 * size,
        *rdispl = counts + 3 * size;
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            scount[sources[i]] += REC_INTS;
            scount[destinations[e]] += REC_INTS;
        }
    for (int r = 1; r < size; r++)
        sdispl[r] = sdispl[r - 1] + scount[r - 1];
    int *fill = rdispl; /* the send displacements as they advance, before rdispl is needed */
    memcpy(fill, sdispl, (size_t)size * sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int w = weighted ? weights[e] : 1, s = sources[i], d = destinations[e];
            int *o = out + fill[s], *in = out + fill[d] + (s == d ? REC_INTS : 0);
            o[0] = REC_OUT, o[1] = d, o[2] = w;
            in[0] = REC_IN, in[1] = s, in[2] = w;
            fill[s] += REC_INTS;
            fill[d] += REC_INTS;
        }
    rc = PMPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm_old);
    long total = 0;
    for (int r = 0; r < size; r++) {
        rdispl[r] = (int)total;
        total += rcount[r];
    }
    int *in = rc == MPI_SUCCESS ? malloc((size_t)(total + 1) * sizeof(int)) : NULL;
    if (rc == MPI_SUCCESS && !in)
        rc = FMPL_MPI_ERR(comm_old, MPI_ERR_NO_MEM, "no memory for %ld records", total);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Alltoallv(out, scount, sdispl, MPI_INT, in, rcount, rdispl, MPI_INT, comm_old);
    free(out);
    free(counts);
    if (rc != MPI_SUCCESS) {
        free(in);
        return rc;
    }
    int indeg = 0, outdeg = 0;
    for (long i = 0; i < total; i += REC_INTS)
        if (in[i] == REC_IN)
            indeg++;
        else
            outdeg++;
    fmpl_mpi_topo *t = dist_make(indeg, outdeg, weighted);
    if (t) {
        int ni = 0, no = 0;
        for (long i = 0; i < total; i += REC_INTS) {
            if (in[i] == REC_IN) {
                t->sources[ni] = in[i + 1];
                t->sourceweights[ni++] = in[i + 2];
            } else {
                t->destinations[no] = in[i + 1];
                t->destweights[no++] = in[i + 2];
            }
        }
    }
    free(in);
    return fmpl_mpi_topo_attach(comm_old, 0, c->team->rank, t, comm_dist_graph, func);
}
FMPL_MPI_WEAK(Dist_graph_create)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_DIST_GRAPH, t);
    if (!indegree || !outdegree || !weighted)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "an output argument is NULL");
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Dist_graph_neighbors_count)

static void copy_side(int max, const int *ranks, const int *weights, int degree, int *out_ranks,
                      int *out_weights, int weighted)
{
    int n = max < degree ? max : degree;
    if (n > 0)
        memcpy(out_ranks, ranks, (size_t)n * sizeof(int));
    if (weighted && n > 0 && out_weights != MPI_UNWEIGHTED && out_weights != MPI_WEIGHTS_EMPTY &&
        out_weights)
        memcpy(out_weights, weights, (size_t)n * sizeof(int));
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_GET_TOPO(comm, MPI_DIST_GRAPH, t);
    if (maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && !sources) ||
        (maxoutdegree > 0 && !destinations))
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "invalid output arrays");
    copy_side(maxindegree, t->sources, t->sourceweights, t->indegree, sources, sourceweights,
              t->weighted);
    copy_side(maxoutdegree, t->destinations, t->destweights, t->outdegree, destinations,
              destweights, t->weighted);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Dist_graph_neighbors)
