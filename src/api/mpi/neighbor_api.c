/* MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w), their _c forms,
 * the nonblocking MPI_Ineighbor_* and the persistent MPI_Neighbor_*_init:
 * the arguments become an fmpl_nbr_args, then one plan (neighbor.c) runs
 * in one of three ways. */
#include "api/mpi/mpi_objects.h"
#include "api/mpi/neighbor.h"

enum { BLOCKING, NONBLOCKING, PERSISTENT };

/* Nonblocking: the plan goes with the request's completion. */
static int complete_once(fmpl_mpi_request *r)
{
    fmpl_nbr_plan *p = r->async_state;
    int err = p->error;
    fmpl_nbr_plan_free(p);
    return err;
}

/* Persistent: the plan stays for the next MPI_Start. */
static int complete_keep(fmpl_mpi_request *r) { return ((fmpl_nbr_plan *)r->async_state)->error; }

static int restart(fmpl_mpi_request *r, const char *func, fmpl_async **a)
{
    fmpl_nbr_plan *p = r->async_state;
    if (fmpl_mpi_comm_get(p->comm) != p->held)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func,
                              "the communicator of request 0x%x was freed", (unsigned)r->handle);
    *a = &p->async;
    return fmpl_nbr_plan_start(p, func);
}

static int release(fmpl_mpi_request *r)
{
    fmpl_nbr_plan_free(r->async_state);
    r->async_state = NULL;
    return MPI_SUCCESS;
}

static int run(const fmpl_nbr_args *a, MPI_Comm comm, const char *func, int mode, MPI_Info info,
               MPI_Request *request)
{
    if (fmpl_mpi_state != FMPL_MPI_READY)
        return fmpl_mpi_error(comm, MPI_ERR_OTHER, func, "MPI is not initialized");
    if (mode != BLOCKING && !request)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "request is NULL");
    if (mode == PERSISTENT && !fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(comm, MPI_ERR_INFO, func, "invalid info 0x%x", (unsigned)info);
    fmpl_nbr_plan *p;
    int rc = fmpl_nbr_plan_make(a, comm, func, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_request *r = NULL;
    if (mode != BLOCKING && !(r = fmpl_mpi_request_new())) {
        fmpl_nbr_plan_free(p);
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a request");
    }
    if (mode == PERSISTENT) {
        fmpl_mpi_async_request_persistent(r, comm, p, complete_keep, restart, release);
        *request = r->handle;
        return MPI_SUCCESS;
    }
    rc = fmpl_nbr_plan_start(p, func);
    if (rc != MPI_SUCCESS) {
        fmpl_nbr_plan_free(p);
        if (r)
            fmpl_mpi_request_free(r);
        return rc;
    }
    if (mode == NONBLOCKING) {
        fmpl_mpi_async_request_start(r, comm, &p->async, complete_once, p);
        *request = r->handle;
        return MPI_SUCCESS;
    }
    fmpl_async_wait(&p->async);
    int err = p->error;
    fmpl_nbr_plan_free(p);
    return err == MPI_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, err, func, "a received message was truncated");
}

/* The three forms of one operation; Suffix is empty or _c. */
#define UNPAREN(...) __VA_ARGS__
#define FAMILY(Name, Suffix, PARAMS, ARGS, big)                                    \
    int PMPI_Neighbor_##Name##Suffix(UNPAREN PARAMS, MPI_Comm comm)                \
    { FMPL_CORE_GUARD();                                                                              \
        fmpl_nbr_args a = ARGS(big);                                               \
        return run(&a, comm, "MPI_Neighbor_" #Name #Suffix, BLOCKING, MPI_INFO_NULL, NULL); \
    }                                                                              \
    FMPL_MPI_WEAK(Neighbor_##Name##Suffix)                                         \
    int PMPI_Ineighbor_##Name##Suffix(UNPAREN PARAMS, MPI_Comm comm, MPI_Request *request) \
    { FMPL_CORE_GUARD();                                                                              \
        fmpl_nbr_args a = ARGS(big);                                               \
        return run(&a, comm, "MPI_Ineighbor_" #Name #Suffix, NONBLOCKING, MPI_INFO_NULL, \
                   request);                                                       \
    }                                                                              \
    FMPL_MPI_WEAK(Ineighbor_##Name##Suffix)                                        \
    int PMPI_Neighbor_##Name##_init##Suffix(UNPAREN PARAMS, MPI_Comm comm, MPI_Info info, \
                                            MPI_Request *request)                  \
    { FMPL_CORE_GUARD();                                                                              \
        fmpl_nbr_args a = ARGS(big);                                               \
        return run(&a, comm, "MPI_Neighbor_" #Name "_init" #Suffix, PERSISTENT, info, request); \
    }                                                                              \
    FMPL_MPI_WEAK(Neighbor_##Name##_init##Suffix)

/* ---- allgather, alltoall: one count and type per side */
#define ARGS_ALLGATHER(b)                                                          \
    {.op = FMPL_NBR_ALLGATHER, .big = b, .sendbuf = sendbuf, .recvbuf = recvbuf,   \
     .scount = sendcount, .rcount = recvcount, .stype = sendtype, .rtype = recvtype}
#define ARGS_ALLTOALL(b)                                                           \
    {.op = FMPL_NBR_ALLTOALL, .big = b, .sendbuf = sendbuf, .recvbuf = recvbuf,    \
     .scount = sendcount, .rcount = recvcount, .stype = sendtype, .rtype = recvtype}
#define PARAMS_ONE(CountT)                                                         \
    (const void *sendbuf, CountT sendcount, MPI_Datatype sendtype, void *recvbuf,  \
     CountT recvcount, MPI_Datatype recvtype)
FAMILY(allgather, , PARAMS_ONE(int), ARGS_ALLGATHER, 0)
FAMILY(allgather, _c, PARAMS_ONE(MPI_Count), ARGS_ALLGATHER, 1)
FAMILY(alltoall, , PARAMS_ONE(int), ARGS_ALLTOALL, 0)
FAMILY(alltoall, _c, PARAMS_ONE(MPI_Count), ARGS_ALLTOALL, 1)

/* ---- allgatherv: a count and displacement per in-neighbour */
#define ARGS_ALLGATHERV(b)                                                         \
    {.op = FMPL_NBR_ALLGATHERV, .big = b, .sendbuf = sendbuf, .recvbuf = recvbuf,  \
     .scount = sendcount, .rcounts = recvcounts, .rdispls = displs, .stype = sendtype, \
     .rtype = recvtype}
#define PARAMS_ALLGATHERV(CountT, DisplT)                                          \
    (const void *sendbuf, CountT sendcount, MPI_Datatype sendtype, void *recvbuf,  \
     const CountT recvcounts[], const DisplT displs[], MPI_Datatype recvtype)
FAMILY(allgatherv, , PARAMS_ALLGATHERV(int, int), ARGS_ALLGATHERV, 0)
FAMILY(allgatherv, _c, PARAMS_ALLGATHERV(MPI_Count, MPI_Aint), ARGS_ALLGATHERV, 1)

/* ---- alltoallv: counts and displacements (in extents) per neighbour */
#define ARGS_ALLTOALLV(b)                                                          \
    {.op = FMPL_NBR_ALLTOALLV, .big = b, .sendbuf = sendbuf, .recvbuf = recvbuf,   \
     .scounts = sendcounts, .rcounts = recvcounts, .sdispls = sdispls, .rdispls = rdispls, \
     .stype = sendtype, .rtype = recvtype}
#define PARAMS_ALLTOALLV(CountT, DisplT)                                           \
    (const void *sendbuf, const CountT sendcounts[], const DisplT sdispls[],       \
     MPI_Datatype sendtype, void *recvbuf, const CountT recvcounts[], const DisplT rdispls[], \
     MPI_Datatype recvtype)
FAMILY(alltoallv, , PARAMS_ALLTOALLV(int, int), ARGS_ALLTOALLV, 0)
FAMILY(alltoallv, _c, PARAMS_ALLTOALLV(MPI_Count, MPI_Aint), ARGS_ALLTOALLV, 1)

/* ---- alltoallw: byte displacements and a datatype per neighbour */
#define ARGS_ALLTOALLW(b)                                                          \
    {.op = FMPL_NBR_ALLTOALLW, .big = b, .sendbuf = sendbuf, .recvbuf = recvbuf,   \
     .scounts = sendcounts, .rcounts = recvcounts, .sdispls = sdispls, .rdispls = rdispls, \
     .stypes = sendtypes, .rtypes = recvtypes}
#define PARAMS_ALLTOALLW(CountT)                                                   \
    (const void *sendbuf, const CountT sendcounts[], const MPI_Aint sdispls[],     \
     const MPI_Datatype sendtypes[], void *recvbuf, const CountT recvcounts[],     \
     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[])
FAMILY(alltoallw, , PARAMS_ALLTOALLW(int), ARGS_ALLTOALLW, 0)
FAMILY(alltoallw, _c, PARAMS_ALLTOALLW(MPI_Count), ARGS_ALLTOALLW, 1)
