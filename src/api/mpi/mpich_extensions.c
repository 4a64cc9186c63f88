/* MPICH's own extensions (MPIX_*) that its libmpich.so.12 exports, so that
 * a binary built against MPICH's header that names one loads and runs on
 * FMPL's library (also with LD_BIND_NOW=1).  FMPL's mpi.h does not declare
 * them: a program written for FMPL does not use MPICH's extensions, and
 * one that tests `#ifdef MPICH` is not talking to MPICH.  The signatures
 * are MPICH 4.0's.
 *
 * What each does here:
 *  - the GPU queries answer truthfully: FMPL moves no device memory;
 *  - MPIX_Delete_error_class/code/string are MPI-4.1's
 *    MPI_Remove_error_class/code/string under their earlier names;
 *  - fault tolerance (MPIX_Comm_revoke, _shrink, _agree, _failure_*) and
 *    MPICH's generalized-request classes report
 *    MPI_ERR_UNSUPPORTED_OPERATION on the communicator (or MPI_COMM_WORLD),
 *    like every function FMPL does not provide (unsupported.c). */
#include "api/mpi/mpi_impl.h"

typedef int MPIX_Grequest_class;
typedef int MPIX_Grequest_poll_function(void *extra_state, MPI_Status *status);
typedef int MPIX_Grequest_wait_function(int count, void **array_of_states, double timeout,
                                        MPI_Status *status);

/* Defined here, with MPICH's prototypes: each PMPIX_name, and MPIX_name a
 * weak alias of it, as for the MPI_ functions. */
#define FMPL_MPIX_WEAK(name) _Pragma(FMPL_MPI_STR(weak MPIX_##name = PMPIX_##name))
#define FMPL_MPIX_DECLARE(ret, name, params)                                                 \
    ret PMPIX_##name params;                                                                 \
    ret MPIX_##name params

FMPL_MPIX_DECLARE(int, Query_cuda_support, (void));
FMPL_MPIX_DECLARE(int, Query_hip_support, (void));
FMPL_MPIX_DECLARE(int, Query_ze_support, (void));
FMPL_MPIX_DECLARE(int, GPU_query_support, (int gpu_type, int *is_supported));
FMPL_MPIX_DECLARE(int, Delete_error_class, (int errorclass));
FMPL_MPIX_DECLARE(int, Delete_error_code, (int errorcode));
FMPL_MPIX_DECLARE(int, Delete_error_string, (int errorcode));
FMPL_MPIX_DECLARE(int, Comm_revoke, (MPI_Comm comm));
FMPL_MPIX_DECLARE(int, Comm_shrink, (MPI_Comm comm, MPI_Comm *newcomm));
FMPL_MPIX_DECLARE(int, Comm_failure_ack, (MPI_Comm comm));
FMPL_MPIX_DECLARE(int, Comm_failure_get_acked, (MPI_Comm comm, MPI_Group *failedgrp));
FMPL_MPIX_DECLARE(int, Comm_agree, (MPI_Comm comm, int *flag));
FMPL_MPIX_DECLARE(int, Grequest_start,
                  (MPI_Grequest_query_function * query_fn, MPI_Grequest_free_function *free_fn,
                   MPI_Grequest_cancel_function *cancel_fn, MPIX_Grequest_poll_function *poll_fn,
                   MPIX_Grequest_wait_function *wait_fn, void *extra_state,
                   MPI_Request *request));
FMPL_MPIX_DECLARE(int, Grequest_class_create,
                  (MPI_Grequest_query_function * query_fn, MPI_Grequest_free_function *free_fn,
                   MPI_Grequest_cancel_function *cancel_fn, MPIX_Grequest_poll_function *poll_fn,
                   MPIX_Grequest_wait_function *wait_fn, MPIX_Grequest_class *greq_class));
FMPL_MPIX_DECLARE(int, Grequest_class_allocate,
                  (MPIX_Grequest_class greq_class, void *extra_state, MPI_Request *request));

/* ------------------------------------------------------------ device memory */

int PMPIX_Query_cuda_support(void) { return 0; }
FMPL_MPIX_WEAK(Query_cuda_support)
int PMPIX_Query_hip_support(void) { return 0; }
FMPL_MPIX_WEAK(Query_hip_support)
int PMPIX_Query_ze_support(void) { return 0; }
FMPL_MPIX_WEAK(Query_ze_support)

int PMPIX_GPU_query_support(int gpu_type, int *is_supported)
{
    (void)gpu_type;
    if (!is_supported)
        return MPI_ERR_ARG;
    *is_supported = 0;
    return MPI_SUCCESS;
}
FMPL_MPIX_WEAK(GPU_query_support)

/* ------------------------------------------------------------ error classes */

int PMPIX_Delete_error_class(int errorclass) { return PMPI_Remove_error_class(errorclass); }
FMPL_MPIX_WEAK(Delete_error_class)
int PMPIX_Delete_error_code(int errorcode) { return PMPI_Remove_error_code(errorcode); }
FMPL_MPIX_WEAK(Delete_error_code)
int PMPIX_Delete_error_string(int errorcode) { return PMPI_Remove_error_string(errorcode); }
FMPL_MPIX_WEAK(Delete_error_string)

/* ------------------------------------------------------------ not provided */

static int unsupported(MPI_Comm comm, const char *func)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!fmpl_mpi_comm_get(comm))
        comm = MPI_COMM_WORLD;
    return fmpl_mpi_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, func,
                          "%s (an MPICH extension) is not implemented by FMPL", func);
}

int PMPIX_Comm_revoke(MPI_Comm comm) { return unsupported(comm, "MPIX_Comm_revoke"); }
FMPL_MPIX_WEAK(Comm_revoke)

int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
    (void)newcomm;
    return unsupported(comm, "MPIX_Comm_shrink");
}
FMPL_MPIX_WEAK(Comm_shrink)

int PMPIX_Comm_failure_ack(MPI_Comm comm) { return unsupported(comm, "MPIX_Comm_failure_ack"); }
FMPL_MPIX_WEAK(Comm_failure_ack)

int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp)
{
    (void)failedgrp;
    return unsupported(comm, "MPIX_Comm_failure_get_acked");
}
FMPL_MPIX_WEAK(Comm_failure_get_acked)

int PMPIX_Comm_agree(MPI_Comm comm, int *flag)
{
    (void)flag;
    return unsupported(comm, "MPIX_Comm_agree");
}
FMPL_MPIX_WEAK(Comm_agree)

int PMPIX_Grequest_start(MPI_Grequest_query_function *query_fn,
                         MPI_Grequest_free_function *free_fn,
                         MPI_Grequest_cancel_function *cancel_fn,
                         MPIX_Grequest_poll_function *poll_fn,
                         MPIX_Grequest_wait_function *wait_fn, void *extra_state,
                         MPI_Request *request)
{
    (void)query_fn, (void)free_fn, (void)cancel_fn, (void)poll_fn, (void)wait_fn;
    (void)extra_state, (void)request;
    return unsupported(MPI_COMM_WORLD, "MPIX_Grequest_start");
}
FMPL_MPIX_WEAK(Grequest_start)

int PMPIX_Grequest_class_create(MPI_Grequest_query_function *query_fn,
                                MPI_Grequest_free_function *free_fn,
                                MPI_Grequest_cancel_function *cancel_fn,
                                MPIX_Grequest_poll_function *poll_fn,
                                MPIX_Grequest_wait_function *wait_fn,
                                MPIX_Grequest_class *greq_class)
{
    (void)query_fn, (void)free_fn, (void)cancel_fn, (void)poll_fn, (void)wait_fn;
    (void)greq_class;
    return unsupported(MPI_COMM_WORLD, "MPIX_Grequest_class_create");
}
FMPL_MPIX_WEAK(Grequest_class_create)

int PMPIX_Grequest_class_allocate(MPIX_Grequest_class greq_class, void *extra_state,
                                  MPI_Request *request)
{
    (void)greq_class, (void)extra_state, (void)request;
    return unsupported(MPI_COMM_WORLD, "MPIX_Grequest_class_allocate");
}
FMPL_MPIX_WEAK(Grequest_class_allocate)
