/* A check for the MPI object tests: on failure, say where and what on
 * stderr, and end the job with MPI_Abort. */
#ifndef FMPL_TESTS_MPI_CHECK_H
#define FMPL_TESTS_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            int r_ = -1;                                                           \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                    \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", r_, __FILE__,    \
                    __LINE__, #cond);                                              \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            fflush(stderr);                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

/* The class of an error code returned under MPI_ERRORS_RETURN. */
static inline int error_class(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

#define CHECK_CLASS(call, cls)                                                     \
    do {                                                                           \
        int rc_ = (call);                                                          \
        CHECK(error_class(rc_) == (cls), "%s returned %d (class %d), expected class %d (%s)", \
              #call, rc_, error_class(rc_), (cls), #cls);                          \
    } while (0)

#define CHECK_OK(call) CHECK_CLASS(call, MPI_SUCCESS)

#endif
