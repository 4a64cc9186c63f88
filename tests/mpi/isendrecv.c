/* MPI_Isendrecv and MPI_Isendrecv_replace (and _c): a ring exchange with
 * data and statuses checked, derived datatypes on both sides, the replace
 * form with a large (rendezvous) message, several outstanding at once,
 * MPI_PROC_NULL, and the errors. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* 1. ring, contiguous, status of the receive */
    int out[4], in[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++)
        out[i] = rank * 100 + i;
    MPI_Request rq;
    MPI_Status st;
    CHECK_OK(MPI_Isendrecv(out, 4, MPI_INT, right, 11, in, 4, MPI_INT, left, 11, MPI_COMM_WORLD,
                           &rq));
    CHECK_OK(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL, "request not freed");
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == left * 100 + i, "in[%d] = %d", i, in[i]);
    int n;
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 11 && n == 4, "status %d %d %d", st.MPI_SOURCE,
          st.MPI_TAG, n);

    /* 2. three at once with different tags, completed with Waitall */
    int o3[3], i3[3] = {-1, -1, -1};
    MPI_Request r3[3];
    for (int k = 0; k < 3; k++) {
        o3[k] = rank * 10 + k;
        CHECK_OK(MPI_Isendrecv_c(&o3[k], 1, MPI_INT, right, 20 + k, &i3[k], 1, MPI_INT,
                                 MPI_ANY_SOURCE, 20 + k, MPI_COMM_WORLD, &r3[k]));
    }
    MPI_Status s3[3];
    CHECK_OK(MPI_Waitall(3, r3, s3));
    for (int k = 0; k < 3; k++)
        CHECK(i3[k] == left * 10 + k && s3[k].MPI_TAG == 20 + k && s3[k].MPI_SOURCE == left,
              "waitall %d: %d tag %d", k, i3[k], s3[k].MPI_TAG);

    /* 3. derived types: send every other int, receive contiguous */
    MPI_Datatype strided;
    CHECK_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &strided));
    CHECK_OK(MPI_Type_commit(&strided));
    int wide[8];
    for (int i = 0; i < 8; i++)
        wide[i] = i % 2 ? -5 : rank * 1000 + i;
    memset(in, 0xff, sizeof in);
    CHECK_OK(MPI_Isendrecv(wide, 1, strided, right, 3, in, 4, MPI_INT, left, 3, MPI_COMM_WORLD,
                           &rq));
    int flag = 0;
    while (!flag)
        CHECK_OK(MPI_Test(&rq, &flag, &st));
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == left * 1000 + 2 * i, "strided in[%d] = %d", i, in[i]);

    /* 4. replace, large enough for a rendezvous, and strided */
    enum { BIG = 1 << 18 };
    int *buf = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        buf[i] = rank * 7 + i;
    CHECK_OK(MPI_Isendrecv_replace(buf, BIG, MPI_INT, right, 5, left, 5, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Wait(&rq, &st));
    for (int i = 0; i < BIG; i += 997)
        CHECK(buf[i] == left * 7 + i, "replace buf[%d] = %d", i, buf[i]);
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == BIG && st.MPI_SOURCE == left, "replace status %d", n);
    for (int i = 0; i < 8; i++)
        wide[i] = i % 2 ? -5 : rank * 1000 + i;
    CHECK_OK(MPI_Isendrecv_replace_c(wide, 1, strided, right, 6, left, 6, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(wide[i] == (i % 2 ? -5 : left * 1000 + i), "strided replace wide[%d] = %d", i,
              wide[i]);
    free(buf);
    CHECK_OK(MPI_Type_free(&strided));

    /* 5. MPI_PROC_NULL on both sides: complete, status from MPI_PROC_NULL */
    in[0] = -3;
    CHECK_OK(MPI_Isendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 0, in, 1, MPI_INT, MPI_PROC_NULL, 0,
                           MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Wait(&rq, &st));
    CHECK(in[0] == -3 && st.MPI_SOURCE == MPI_PROC_NULL, "proc_null source %d", st.MPI_SOURCE);

    /* 5b. cancel: a receive nobody sends to is cancelled, the send completes */
    int lone = rank, got = -9;
    CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &r3[0])); /* takes the send */
    CHECK_OK(MPI_Isendrecv(&lone, 1, MPI_INT, right, 77, in, 1, MPI_INT, left, 78,
                           MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Cancel(&rq));
    CHECK_OK(MPI_Wait(&rq, &st));
    int cancelled = 0;
    CHECK_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled, "the receive of MPI_Isendrecv was not cancelled");
    CHECK_OK(MPI_Wait(&r3[0], MPI_STATUS_IGNORE));
    CHECK(got == left, "the cancelled exchange's send: %d", got);

    /* 5c. freed while pending: both messages still complete */
    got = -9;
    CHECK_OK(MPI_Isendrecv(&lone, 1, MPI_INT, right, 79, &got, 1, MPI_INT, left, 79,
                           MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Request_free(&rq));
    CHECK(rq == MPI_REQUEST_NULL, "not freed");
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every exchange posted */
    int spin = 0;
    while (got != left && spin++ < 1000000) {
        int f;
        CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE));
    }
    CHECK(got == left, "freed exchange received %d", got);

    /* 6. errors */
    CHECK_CLASS(MPI_Isendrecv(out, 1, MPI_INT, size, 0, in, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                              &rq), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Isendrecv(out, 1, MPI_INT, right, 0, in, -1, MPI_INT, left, 0,
                              MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Isendrecv_replace(out, 1, MPI_DATATYPE_NULL, right, 0, left, 0,
                                      MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Isendrecv(out, 1, MPI_INT, right, 0, in, 1, MPI_INT, left, 0, MPI_COMM_NULL,
                              &rq), MPI_ERR_COMM);
    /* truncation: 2 ints into room for 1 */
    CHECK_OK(MPI_Isendrecv(out, 2, MPI_INT, right, 9, in, 1, MPI_INT, left, 9, MPI_COMM_WORLD,
                           &rq));
    CHECK_CLASS(MPI_Wait(&rq, &st), MPI_ERR_TRUNCATE);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi isendrecv ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
