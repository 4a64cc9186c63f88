/* Neighbourhood collectives (MPI-4.0 8.6-8.8) as one small state machine
 * over tag-matched messages (neighbor.c), and the MPI functions on it
 * (neighbor_api.c).
 *
 * A plan is every message of one operation, decided when it is made: for
 * each in-neighbour a receive (buffer, count, datatype), for each
 * out-neighbour a send.  Starting it posts the receives then the sends
 * (fmpl_tm_irecv / fmpl_tm_isend on the communicator's team) and hands it
 * to the progress engine (progress/async.h), which polls it until every
 * message has completed; non-contiguous data is packed into staging
 * buffers at the start and unpacked when its receive completes
 * (fmpl_mpi_buf_*).  Blocking = start + wait; nonblocking = start + an
 * FMPL_MREQ_ASYNC request that frees the plan at completion; persistent =
 * the plan made at *_init and started by each MPI_Start (which allocates
 * nothing for contiguous data), freed by MPI_Request_free.
 *
 * Tags: the library's own (out of MPI_ANY_TAG's reach), one pair per plan:
 * FMPL_NBR_TAG_BASE - 2 * (seq mod 2^22) - direction, where seq is the
 * communicator's count of neighbourhood plans (fmpl_mpi_topo.neighbor_seq;
 * every member makes them in the same order, MPI's rule for collectives),
 * so that concurrent operations never match each other's messages, and a
 * persistent plan keeps its number for every start.  Messages of one
 * sender on one tag match in order, which pairs the k-th send to a
 * neighbour with the k-th receive from it (repeated edges of graphs).
 * Cartesian grids need more: in a periodic dimension of size 1 or 2 the
 * same process is both neighbours, and the block sent towards + must land
 * in the receiver's block from - (MPI-4.0 8.6).  So a send carries its
 * direction (0: towards the source side, even neighbour index; 1: towards
 * the destination side) and a receive from the - side (even index) expects
 * direction 1, from the + side direction 0.  Graphs use direction 0. */
#ifndef FMPL_API_MPI_NEIGHBOR_H
#define FMPL_API_MPI_NEIGHBOR_H

#include "api/mpi/topo.h"
#include "progress/async.h"

#define FMPL_NBR_TAG_BASE (-(1 << 24))

/* One message of a plan. */
typedef struct fmpl_nbr_msg {
    fmpl_tm_req tm;
    fmpl_mpi_buf buf;   /* holds a reference on a non-contiguous type */
    int peer;           /* team rank, or MPI_PROC_NULL: nothing is sent */
    int tag;
} fmpl_nbr_msg;

typedef struct fmpl_nbr_plan {
    fmpl_async async;   /* first: the engine's handle */
    MPI_Comm comm;
    fmpl_mpi_comm *held; /* its teams stay while the plan exists, even past MPI_Comm_free */
    fmpl_team *team;
    int nrecv, nsend;
    fmpl_nbr_msg *msg;  /* nrecv receives, then nsend sends */
    int error;          /* of the last run: MPI_SUCCESS or MPI_ERR_TRUNCATE */
} fmpl_nbr_plan;

/* The arguments of any neighbourhood collective, as an alltoallw: */
enum { FMPL_NBR_ALLGATHER, FMPL_NBR_ALLGATHERV, FMPL_NBR_ALLTOALL, FMPL_NBR_ALLTOALLV,
       FMPL_NBR_ALLTOALLW };
typedef struct fmpl_nbr_args {
    int op;                     /* FMPL_NBR_* */
    int big;                    /* the _c forms: counts MPI_Count, displacements MPI_Aint */
    const void *sendbuf;
    void *recvbuf;
    MPI_Count scount, rcount;   /* allgather(v) send, allgather / alltoall both */
    const void *scounts, *rcounts; /* arrays: int or MPI_Count */
    const void *sdispls, *rdispls; /* arrays: int or MPI_Aint (alltoallw: MPI_Aint bytes) */
    MPI_Datatype stype, rtype;
    const MPI_Datatype *stypes, *rtypes; /* alltoallw */
} fmpl_nbr_args;

/* Check the arguments and make the plan (tag taken from the communicator);
 * MPI_SUCCESS or the error reported on comm from func. */
int fmpl_nbr_plan_make(const fmpl_nbr_args *a, MPI_Comm comm, const char *func,
                       fmpl_nbr_plan **out);
/* Post every message and join the progress engine; MPI_SUCCESS or
 * MPI_ERR_NO_MEM (a staging buffer, reported from func). */
int fmpl_nbr_plan_start(fmpl_nbr_plan *p, const char *func);
void fmpl_nbr_plan_free(fmpl_nbr_plan *p);

#endif
