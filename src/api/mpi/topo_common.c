/* The topology object, MPI_Topo_test, and the communicator behind a new
 * topology (topo.h). */
#include "api/mpi/topo.h"

#include <stdlib.h>
#include <string.h>

fmpl_mpi_topo *fmpl_mpi_topo_new(int kind, int nints)
{
    fmpl_mpi_topo *t = calloc(1, sizeof *t + (size_t)(nints > 0 ? nints : 0) * sizeof(int));
    if (t) {
        t->kind = kind;
        t->nints = nints;
    }
    return t;
}

int *fmpl_mpi_topo_take(fmpl_mpi_topo *t, int *used, int n)
{
    int *p = t->data + *used;
    *used += n;
    return p;
}

/* A pointer into old->data[] moved to the same place in new->data[]. */
static int *rebase(const fmpl_mpi_topo *old, fmpl_mpi_topo *new, const int *p)
{
    return p ? new->data + (p - old->data) : NULL;
}

fmpl_mpi_topo *fmpl_mpi_topo_copy(const fmpl_mpi_topo *t)
{
    if (!t)
        return NULL;
    fmpl_mpi_topo *n = fmpl_mpi_topo_new(t->kind, t->nints);
    if (!n)
        return NULL;
    memcpy(n, t, sizeof *t + (size_t)t->nints * sizeof(int));
    n->dims = rebase(t, n, t->dims);
    n->periods = rebase(t, n, t->periods);
    n->coords = rebase(t, n, t->coords);
    n->index = rebase(t, n, t->index);
    n->edges = rebase(t, n, t->edges);
    n->sources = rebase(t, n, t->sources);
    n->sourceweights = rebase(t, n, t->sourceweights);
    n->destinations = rebase(t, n, t->destinations);
    n->destweights = rebase(t, n, t->destweights);
    n->neighbor_seq = 0; /* a new communicator: its own messages */
    return n;
}

void fmpl_mpi_topo_free(fmpl_mpi_topo *t) { free(t); }

int fmpl_mpi_topo_attach(MPI_Comm old, int color, int key, fmpl_mpi_topo *t,
                         MPI_Comm *newcomm, const char *func)
{
    *newcomm = MPI_COMM_NULL;
    /* Every member takes part in the split, even one that is out of memory
     * (t NULL): it then leaves the new communicator again. */
    MPI_Comm c = MPI_COMM_NULL;
    int rc = PMPI_Comm_split(old, color, key, &c);
    if (rc != MPI_SUCCESS) {
        fmpl_mpi_topo_free(t);
        return rc; /* reported by the split */
    }
    if (c == MPI_COMM_NULL) {
        fmpl_mpi_topo_free(t);
        return MPI_SUCCESS;
    }
    if (!t) {
        PMPI_Comm_free(&c);
        return fmpl_mpi_error(old, MPI_ERR_NO_MEM, func, "no memory for the topology");
    }
    fmpl_mpi_comm_get(c)->topo = t;
    *newcomm = c;
    return MPI_SUCCESS;
}

int fmpl_mpi_topo_parent(MPI_Comm comm, const char *func, fmpl_mpi_comm **out)
{
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    if (c->inter)
        return fmpl_mpi_error(comm, MPI_ERR_COMM, func,
                              "a topology needs an intra-communicator");
    *out = c;
    return MPI_SUCCESS;
}

fmpl_mpi_topo *fmpl_mpi_topo_get(MPI_Comm comm, int kind, const char *func, int *rc)
{
    static const char *const names[] = {"", "graph", "Cartesian", "distributed graph"};
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c || c->inter) {
        *rc = fmpl_mpi_error(c ? comm : MPI_COMM_WORLD, MPI_ERR_COMM, func,
                             c ? "an inter-communicator has no topology"
                               : "invalid communicator 0x%x", (unsigned)comm);
        return NULL;
    }
    if (!c->topo || (kind && c->topo->kind != kind)) {
        *rc = fmpl_mpi_error(comm, MPI_ERR_TOPOLOGY, func, "the communicator has %s%s topology",
                             c->topo ? "a " : "no", c->topo ? names[c->topo->kind] : "");
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return c->topo;
}

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return FMPL_MPI_ERR(MPI_COMM_WORLD, MPI_ERR_COMM, "invalid communicator 0x%x",
                            (unsigned)comm);
    if (!status)
        return FMPL_MPI_ERR(comm, MPI_ERR_ARG, "status is NULL");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Topo_test)
