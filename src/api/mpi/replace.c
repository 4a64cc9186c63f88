/* MPI_Sendrecv_replace (and _c): the message is received into a scratch
 * buffer while the buffer's old contents are sent, then copied back.  The
 * receive is posted before the send starts, so a ring of these calls
 * cannot deadlock on rendezvous sends.
 *
 * The scratch buffer grows to the largest message seen and is kept, so a
 * repeated exchange allocates nothing after the first one.  With a
 * non-contiguous datatype the old contents are packed into a staging
 * buffer (dt_staging.c) and sent from there, and the scratch buffer, which
 * then holds the packed stream, is unpacked into the user's buffer.  Both transfers
 * use fmpl_tm_req objects on the stack, like the blocking calls in pt2pt.c. */
#include "api/mpi/mpi_impl.h"
#include "progress/progress.h"
#include "base/scratch.h"

#include <stdlib.h>
#include <string.h>

static void *scratch_get(size_t bytes)
{
    return fmpl_scratch(FMPL_SCRATCH_REPLACE, bytes); /* per thread: base/scratch.h */
}

int fmpl_mpi_replace_check(const char *func, MPI_Comm comm, void *buf, MPI_Aint count,
                           MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                           fmpl_mpi_comm **c, fmpl_mpi_buf *b)
{
    FMPL_MPI_CHECK_READY(comm);
    int rc = fmpl_mpi_p2p_check(func, comm, buf, count, type, dest, sendtag, 0, c, b);
    if (rc == MPI_SUCCESS)
        rc = fmpl_mpi_p2p_check(func, comm, buf, count, type, source, recvtag, 1, c, b);
    return rc;
}

static int sendrecv_replace(const char *func, void *buf, MPI_Aint count, MPI_Datatype type,
                            int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Status *status)
{
    FMPL_MPI_REPLACE_BEGIN(func, comm, buf, count, type, dest, sendtag, source, recvtag, c, b);
    MPI_Aint bytes = b.bytes;
    fmpl_tm_req rr, sr;
    rr.complete = sr.complete = 1;
    void *tmp = NULL;
    if (source != MPI_PROC_NULL) {
        static char empty; /* the buffer of an empty message */
        tmp = bytes > 0 ? scratch_get((size_t)bytes) : &empty;
        if (!tmp)
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func,
                                  "no memory for a %ld-byte scratch buffer", (long)bytes);
        fmpl_tm_irecv(&rr, c->team, tmp, bytes, source, recvtag);
    }
    if (dest != MPI_PROC_NULL) {
        if (fmpl_mpi_buf_stage(&b, 1) != MPI_SUCCESS) {
            if (source != MPI_PROC_NULL && !fmpl_tm_cancel_recv(&rr))
                FMPL_WAIT_UNTIL(rr.complete); /* matched already: let it land */
            return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func,
                                  "no memory for a %ld-byte staging buffer (non-contiguous "
                                  "datatype)", (long)bytes);
        }
        fmpl_tm_isend(&sr, c->team, b.data, bytes, dest, sendtag, FMPL_TM_MODE_STANDARD);
    }
    FMPL_WAIT_UNTIL(rr.complete && sr.complete);
    if (dest != MPI_PROC_NULL)
        fmpl_mpi_buf_unstage(&b, 0); /* the send's packed copy */
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
        return MPI_SUCCESS;
    }
    int err = rr.st_error == FMPL_SUCCESS ? MPI_SUCCESS : fmpl_mpi_error_class_of(rr.st_error);
    fmpl_mpi_buf_unpack_from(&b, tmp, rr.st_bytes); /* tmp holds the packed stream */
    if (status != MPI_STATUS_IGNORE)
        fmpl_mpi_status_set(status, rr.st_source, rr.st_tag, rr.st_bytes, 0);
    if (err != MPI_SUCCESS)
        return fmpl_mpi_error(comm, err, func,
                              "message of more than %ld bytes from rank %d, tag %d",
                              (long)bytes, rr.st_source, rr.st_tag);
    return MPI_SUCCESS;
}

FMPL_MPI_REPLACE_FORMS(Sendrecv_replace, sendrecv_replace, MPI_Status *)
