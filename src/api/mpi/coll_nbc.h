/* Nonblocking (MPI_I*) and persistent (*_init) collectives: the blocking
 * bodies of coll.c and coll_move.c run with a schedule being captured
 * (collectives/sched_coll.h), so their checks, handle conversion and
 * datatype staging serve all three forms.  What a blocking body does to
 * the data before and after the algorithm goes through the helpers below:
 * blocking, they act at once; while capturing they become steps of the
 * schedule (before the algorithm's, or after), so a persistent request
 * packs at every start and unpacks at every completion, and the staging
 * buffers belong to the schedule until the request is freed. */
#ifndef FMPL_API_MPI_COLL_NBC_H
#define FMPL_API_MPI_COLL_NBC_H

#include "api/mpi/coll_stage.h"
#include "collectives/sched_coll.h"

static inline int fmpl_mpi_capturing(void) { return fmpl_coll_capture != NULL; }

/* Before the algorithm. */
void fmpl_mpi_coll_copy(void *dst, const void *src, size_t bytes);
void fmpl_mpi_coll_pack_all(const fmpl_mpi_blocks *b);
void fmpl_mpi_coll_pack(const fmpl_mpi_blocks *b, int p);
int fmpl_mpi_coll_buf_stage(fmpl_mpi_buf *b, int pack);
void fmpl_mpi_coll_reduction_in(const fmpl_mpi_reduction *r, const void *user, int64_t count,
                                void *stream);
/* After the algorithm (rc: the algorithm's result, FMPL_*). */
void fmpl_mpi_coll_unstage_blocks(int rc, fmpl_mpi_blocks *send, fmpl_mpi_blocks *recv);
void fmpl_mpi_coll_buf_unstage(fmpl_mpi_buf *b, MPI_Aint received);
void fmpl_mpi_coll_reduction_out(const fmpl_mpi_reduction *r, const void *stream,
                                 int64_t count, void *user);
/* A staging buffer the algorithm uses: given back now, or with the schedule. */
void fmpl_mpi_coll_stage_put(void *p);
/* Memory for the algorithm's operands: the schedule's while capturing
 * (NULL: use your own). */
void *fmpl_mpi_coll_scratch(size_t bytes);
/* The reduction as the algorithm must see it: while capturing, a copy
 * owned by the schedule (its operation's context points into it). */
const fmpl_mpi_reduction *fmpl_mpi_coll_reduction(const fmpl_mpi_reduction *r);

/* The I* and *_init entry points (coll_nbc_api.c) wrap the blocking body:
 * begin starts the capture, end turns the
 * schedule into a request: started at once (I*) or prepared (persistent). */
int fmpl_mpi_nbc_begin(const char *func, MPI_Comm comm, MPI_Request *request);
int fmpl_mpi_nbc_end(const char *func, MPI_Comm comm, MPI_Request *request, int persistent,
                     int rc);
#define FMPL_MPI_NBC(func, comm, request, persistent, body)                       \
    do {                                                                           \
        int b_ = fmpl_mpi_nbc_begin((func), (comm), (request));                    \
        if (b_ != MPI_SUCCESS)                                                     \
            return b_;                                                             \
        return fmpl_mpi_nbc_end((func), (comm), (request), (persistent), (body));  \
    } while (0)

#endif
