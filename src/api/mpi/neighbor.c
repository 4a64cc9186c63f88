/* The state machine of the neighbourhood collectives (neighbor.h): a plan
 * of messages, started by posting them all, finished by the progress
 * engine when the last one completes.
 *
 * Sequence of one run, on every member:
 *   1. stage: pack each non-contiguous send into a staging buffer, take one
 *      for each non-contiguous receive;
 *   2. post a tag-matched receive from each in-neighbour (tag: the plan's
 *      number and the direction it expects), then a standard-mode send to
 *      each out-neighbour (eager, or a rendezvous the receiver completes);
 *   3. poll (progress engine): once every fmpl_tm_req is complete, unpack
 *      staged receives, return the staging buffers, note a truncation;
 *      the engine then sets async.done.
 * MPI_PROC_NULL neighbours (non-periodic Cartesian borders) have no
 * message: their receive block is left as it is. */
#include "api/mpi/neighbor.h"
#include "base/error.h"

#include <stdint.h>
#include <stdlib.h>

static MPI_Count count_at(const void *a, int big, int i)
{
    return big ? ((const MPI_Count *)a)[i] : ((const int *)a)[i];
}

static MPI_Aint displ_at(const void *a, int big, int i)
{
    return big ? ((const MPI_Aint *)a)[i] : ((const int *)a)[i];
}

/* Where block i of one side is: *ptr, *count, *type. */
static void block_of(const fmpl_nbr_args *a, int recv, int i, MPI_Aint extent, const void **ptr,
                     MPI_Count *count, MPI_Datatype *type)
{
    /* Address arithmetic, not pointer arithmetic: the buffer may be
     * MPI_BOTTOM (NULL) with absolute displacements. */
    uintptr_t buf = (uintptr_t)(recv ? (const void *)a->recvbuf : a->sendbuf);
    MPI_Count n = recv ? a->rcount : a->scount;
    const void *counts = recv ? a->rcounts : a->scounts;
    const void *displs = recv ? a->rdispls : a->sdispls;
    *type = recv ? a->rtype : a->stype;
    switch (a->op) {
    case FMPL_NBR_ALLGATHER:
    case FMPL_NBR_ALLGATHERV:
        if (!recv) { /* the same block to everyone */
            *ptr = (const void *)buf;
            *count = n;
            return;
        }
        if (a->op == FMPL_NBR_ALLGATHER) {
            *ptr = (const void *)(buf + (uintptr_t)((MPI_Aint)i * n * extent));
            *count = n;
        } else {
            *ptr = (const void *)(buf + (uintptr_t)(displ_at(displs, a->big, i) * extent));
            *count = count_at(counts, a->big, i);
        }
        return;
    case FMPL_NBR_ALLTOALL:
        *ptr = (const void *)(buf + (uintptr_t)((MPI_Aint)i * n * extent));
        *count = n;
        return;
    case FMPL_NBR_ALLTOALLV:
        *ptr = (const void *)(buf + (uintptr_t)(displ_at(displs, a->big, i) * extent));
        *count = count_at(counts, a->big, i);
        return;
    default: /* FMPL_NBR_ALLTOALLW: byte displacements, a type per block */
        *ptr = (const void *)(buf + (uintptr_t)((const MPI_Aint *)displs)[i]);
        *count = count_at(counts, a->big, i);
        *type = (recv ? a->rtypes : a->stypes)[i];
        return;
    }
}

/* The extent of the side's single datatype (not alltoallw). */
static int side_extent(const fmpl_nbr_args *a, int recv, int degree, MPI_Comm comm,
                       const char *func, MPI_Aint *extent)
{
    *extent = 0;
    if (a->op == FMPL_NBR_ALLTOALLW || degree == 0)
        return MPI_SUCCESS;
    MPI_Datatype t = recv ? a->rtype : a->stype;
    int rc = fmpl_mpi_type_check(comm, t, func);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint lb;
    return PMPI_Type_get_extent(t, &lb, extent);
}

void fmpl_nbr_plan_free(fmpl_nbr_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nrecv + p->nsend; i++)
        if (p->msg[i].buf.type)
            fmpl_dt_unref(p->msg[i].buf.type);
    if (p->held)
        fmpl_mpi_comm_unhold(p->held);
    free(p);
}

int fmpl_nbr_plan_make(const fmpl_nbr_args *a, MPI_Comm comm, const char *func,
                       fmpl_nbr_plan **out)
{
    *out = NULL;
    int rc;
    fmpl_mpi_topo *t = fmpl_mpi_topo_get(comm, 0, func, &rc);
    if (!t)
        return rc;
    if (a->sendbuf == MPI_IN_PLACE || a->recvbuf == MPI_IN_PLACE)
        return fmpl_mpi_error(comm, MPI_ERR_BUFFER, func,
                              "MPI_IN_PLACE is not allowed in neighbourhood collectives");
    MPI_Aint extent[2];
    if ((rc = side_extent(a, 0, t->outdegree, comm, func, &extent[0])) != MPI_SUCCESS ||
        (rc = side_extent(a, 1, t->indegree, comm, func, &extent[1])) != MPI_SUCCESS)
        return rc;
    int n = t->indegree + t->outdegree;
    fmpl_nbr_plan *p = calloc(1, sizeof *p + (size_t)n * sizeof(fmpl_nbr_msg));
    if (!p)
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for %d messages", n);
    p->msg = (fmpl_nbr_msg *)(p + 1);
    p->comm = comm;
    p->held = fmpl_mpi_comm_get(comm);
    fmpl_mpi_comm_hold(p->held);
    p->team = p->held->team;
    p->nrecv = t->indegree;
    p->nsend = t->outdegree;
    unsigned seq = t->neighbor_seq & ((1u << 22) - 1); /* taken below, once made */
    int cart = t->kind == MPI_CART;
    for (int k = 0; k < n; k++) {
        int recv = k < p->nrecv, i = recv ? k : k - p->nrecv;
        fmpl_nbr_msg *m = &p->msg[k];
        const void *ptr;
        MPI_Count count;
        MPI_Datatype type;
        block_of(a, recv, i, extent[recv], &ptr, &count, &type);
        if (count < 0) {
            fmpl_nbr_plan_free(p);
            return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "%s count %lld of neighbour %d is "
                                  "negative", recv ? "receive" : "send", (long long)count, i);
        }
        rc = fmpl_mpi_buf_describe(comm, func, ptr, count, type, 1, &m->buf);
        if (rc != MPI_SUCCESS) {
            fmpl_nbr_plan_free(p);
            return rc;
        }
        if (m->buf.type)
            fmpl_dt_ref(m->buf.type);
        m->peer = recv ? t->sources[i] : t->destinations[i];
        int direction = !cart ? 0 : recv ? 1 - i % 2 : i % 2;
        m->tag = FMPL_NBR_TAG_BASE - 2 * (int)seq - direction;
    }
    t->neighbor_seq++;
    *out = p;
    return MPI_SUCCESS;
}

static int plan_poll(fmpl_async *as)
{
    fmpl_nbr_plan *p = (fmpl_nbr_plan *)as;
    int n = p->nrecv + p->nsend;
    for (int k = 0; k < n; k++)
        if (!p->msg[k].tm.complete)
            return 0;
    for (int k = 0; k < n; k++) {
        fmpl_nbr_msg *m = &p->msg[k];
        int recv = k < p->nrecv;
        if (recv && m->tm.st_error != FMPL_SUCCESS)
            p->error = fmpl_mpi_error_class_of(m->tm.st_error);
        fmpl_mpi_buf_unstage(&m->buf, recv && m->peer != MPI_PROC_NULL ? m->tm.st_bytes : 0);
    }
    return 1;
}

int fmpl_nbr_plan_start(fmpl_nbr_plan *p, const char *func)
{
    int n = p->nrecv + p->nsend;
    p->error = MPI_SUCCESS;
    for (int k = 0; k < n; k++) {
        fmpl_nbr_msg *m = &p->msg[k];
        m->tm.complete = m->peer == MPI_PROC_NULL;
        if (m->peer != MPI_PROC_NULL && fmpl_mpi_buf_stage(&m->buf, k >= p->nrecv) != MPI_SUCCESS) {
            while (--k >= 0)
                fmpl_mpi_buf_unstage(&p->msg[k].buf, 0);
            return fmpl_mpi_error(p->comm, MPI_ERR_NO_MEM, func,
                                  "no memory for a %ld-byte staging buffer",
                                  (long)m->buf.bytes);
        }
    }
    for (int k = 0; k < n; k++) {
        fmpl_nbr_msg *m = &p->msg[k];
        if (m->peer == MPI_PROC_NULL)
            continue;
        if (k < p->nrecv)
            fmpl_tm_irecv(&m->tm, p->team, m->buf.data, m->buf.bytes, m->peer, m->tag);
        else
            fmpl_tm_isend(&m->tm, p->team, m->buf.data, m->buf.bytes, m->peer, m->tag,
                          FMPL_TM_MODE_STANDARD);
    }
    fmpl_async_start(&p->async, plan_poll);
    return MPI_SUCCESS;
}
