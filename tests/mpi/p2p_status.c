/* Request and status queries, and MPI_Sendrecv_replace:
 * MPI_Request_get_status on a receive (false until the partner sends, then
 * true, repeatedly, without freeing the request), on a send, on
 * MPI_REQUEST_NULL; MPI_Sendrecv_replace around a ring (eager and
 * rendezvous sizes, repeated, a shorter message than the buffer,
 * MPI_PROC_NULL on either side); MPI_Get_elements/_x/_c and MPI_Get_count_c
 * on basic and pair types; MPI_Status_set_elements/_x and
 * MPI_Status_set_cancelled. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "mpi_p2p_status rank %d line %d: ", rank, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

static void get_status(void)
{
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    int in = -1, out = 1000 + rank, flag = 1;
    MPI_Status st;
    MPI_Request rq, sq;
    MPI_Irecv(&in, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &rq);
    MPI_Request_get_status(rq, &flag, &st);
    EXPECT(!flag, "a receive completed before anything was sent");
    /* tell the partner it may send now */
    int go = 0;
    MPI_Sendrecv_replace(&go, 1, MPI_INT, peer, 8, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Isend(&out, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &sq);
    do
        MPI_Request_get_status(rq, &flag, &st);
    while (!flag);
    EXPECT(rq != MPI_REQUEST_NULL, "Request_get_status freed the request");
    EXPECT(st.MPI_SOURCE == peer && st.MPI_TAG == 7 && in == 1000 + peer, "status %d %d %d",
           st.MPI_SOURCE, st.MPI_TAG, in);
    MPI_Status again;
    MPI_Request_get_status(rq, &flag, &again);
    EXPECT(flag && again.MPI_SOURCE == peer && again.MPI_TAG == 7, "not repeatable");
    do
        MPI_Request_get_status(sq, &flag, MPI_STATUS_IGNORE);
    while (!flag);
    MPI_Wait(&rq, &st);
    EXPECT(rq == MPI_REQUEST_NULL && st.MPI_SOURCE == peer, "Wait after Request_get_status");
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    EXPECT(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
           "MPI_REQUEST_NULL");
}

static void replace_ring(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int counts[3] = {5, 4096, 100000}; /* 16 KiB is the eager limit */
    int *buf = malloc(100000 * sizeof *buf);
    for (int c = 0; c < 3; c++) {
        int n = counts[c];
        for (int round = 0; round < 5; round++) {
            for (int i = 0; i < n; i++)
                buf[i] = rank * 1000000 + round * 1000 + i;
            MPI_Status st;
            MPI_Sendrecv_replace(buf, n, MPI_INT, right, 9, left, 9, MPI_COMM_WORLD, &st);
            int got;
            MPI_Get_count(&st, MPI_INT, &got);
            EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 9 && got == n, "status n=%d", n);
            for (int i = 0; i < n; i++)
                EXPECT(buf[i] == left * 1000000 + round * 1000 + i, "n=%d round %d i=%d: %d", n,
                       round, i, buf[i]);
        }
    }
    /* a message shorter than the buffer: the rest stays */
    for (int i = 0; i < 10; i++)
        buf[i] = rank;
    MPI_Status st;
    if (size == 1) {
        MPI_Sendrecv_replace(buf, 10, MPI_INT, 0, 10, 0, 10, MPI_COMM_WORLD, &st);
    } else if (rank == 0) {
        int four[4] = {-1, -2, -3, -4};
        MPI_Send(four, 4, MPI_INT, 1, 10, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Sendrecv_replace(buf, 10, MPI_INT, MPI_PROC_NULL, 0, 0, 10, MPI_COMM_WORLD, &st);
        int got;
        MPI_Get_count(&st, MPI_INT, &got);
        EXPECT(got == 4 && buf[0] == -1 && buf[3] == -4 && buf[4] == rank && buf[9] == rank,
               "short message: %d ints, %d %d %d", got, buf[0], buf[3], buf[4]);
    }
    /* MPI_PROC_NULL on both sides: nothing changes */
    for (int i = 0; i < 10; i++)
        buf[i] = 42;
    MPI_Sendrecv_replace(buf, 10, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                         &st);
    EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && buf[0] == 42,
           "PROC_NULL");
    /* send only */
    MPI_Request rq;
    int in = 0;
    MPI_Irecv(&in, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &rq);
    buf[0] = rank + 7;
    MPI_Sendrecv_replace(buf, 1, MPI_INT, right, 11, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    EXPECT(buf[0] == rank + 7 && st.MPI_SOURCE == MPI_PROC_NULL, "send only");
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    EXPECT(in == left + 7, "send only: received %d", in);
    /* large count form */
    buf[0] = rank;
    MPI_Sendrecv_replace_c(buf, 1, MPI_INT, right, 12, left, 12, MPI_COMM_WORLD, &st);
    EXPECT(buf[0] == left, "Sendrecv_replace_c");
    free(buf);
}

static void elements(void)
{
    MPI_Status st;
    int x[10];
    for (int i = 0; i < 10; i++)
        x[i] = i;
    MPI_Sendrecv_replace(x, 10, MPI_INT, rank, 13, rank, 13, MPI_COMM_WORLD, &st);
    int n;
    MPI_Count nc;
    MPI_Get_elements(&st, MPI_INT, &n);
    EXPECT(n == 10, "elements of MPI_INT: %d", n);
    MPI_Get_elements(&st, MPI_BYTE, &n);
    EXPECT(n == 40, "elements of MPI_BYTE: %d", n);
    MPI_Get_elements(&st, MPI_DOUBLE, &n);
    EXPECT(n == 5, "elements of MPI_DOUBLE: %d", n);
    MPI_Get_elements(&st, MPI_LONG_DOUBLE, &n);
    EXPECT(n == MPI_UNDEFINED, "elements of MPI_LONG_DOUBLE: %d", n);
    MPI_Get_elements_x(&st, MPI_SHORT, &nc);
    EXPECT(nc == 20, "elements_x of MPI_SHORT: %ld", (long)nc);
    MPI_Get_elements_c(&st, MPI_2INT, &nc);
    EXPECT(nc == 10, "elements_c of MPI_2INT: %ld", (long)nc);
    MPI_Get_count_c(&st, MPI_2INT, &nc);
    EXPECT(nc == 5, "count_c of MPI_2INT: %ld", (long)nc);
    MPI_Get_count_c(&st, MPI_LONG_DOUBLE, &nc);
    EXPECT(nc == MPI_UNDEFINED, "count_c of MPI_LONG_DOUBLE: %ld", (long)nc);

    /* pair types: two elements per item, one for a lone value */
    struct { double v; int i; } di[3] = {{1.5, 1}, {2.5, 2}, {3.5, 3}};
    MPI_Sendrecv_replace(di, 3, MPI_DOUBLE_INT, rank, 14, rank, 14, MPI_COMM_WORLD, &st);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
    EXPECT(n == 6 && di[2].i == 3, "elements of MPI_DOUBLE_INT: %d", n);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
    EXPECT(n == 3, "count of MPI_DOUBLE_INT: %d", n);

    /* setting elements */
    MPI_Status_set_elements(&st, MPI_INT, 7);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(n == 7, "set 7 ints: count %d", n);
    MPI_Get_count(&st, MPI_BYTE, &n);
    EXPECT(n == 28, "set 7 ints: %d bytes", n);
    MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 5);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
    EXPECT(n == 5, "set 5 elements of MPI_DOUBLE_INT: %d", n);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
    EXPECT(n == MPI_UNDEFINED, "5 elements are 2.5 MPI_DOUBLE_INT: count %d", n);
    MPI_Status_set_elements_x(&st, MPI_CHAR, (MPI_Count)5 << 32);
    MPI_Get_elements_x(&st, MPI_CHAR, &nc);
    EXPECT(nc == (MPI_Count)5 << 32, "large element count %ld", (long)nc);
    MPI_Get_elements(&st, MPI_CHAR, &n);
    EXPECT(n == MPI_UNDEFINED, "a large count in an int: %d", n);

    /* cancelled flag, independent of the count */
    int flag;
    MPI_Status_set_cancelled(&st, 1);
    MPI_Test_cancelled(&st, &flag);
    MPI_Get_elements_x(&st, MPI_CHAR, &nc);
    EXPECT(flag && nc == (MPI_Count)5 << 32, "set_cancelled 1");
    MPI_Status_set_elements(&st, MPI_INT, 3);
    MPI_Test_cancelled(&st, &flag);
    EXPECT(flag, "set_elements cleared the cancelled flag");
    MPI_Status_set_cancelled(&st, 0);
    MPI_Test_cancelled(&st, &flag);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(!flag && n == 3, "set_cancelled 0");

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls;
    MPI_Error_class(MPI_Status_set_elements(&st, MPI_INT, -1), &cls);
    EXPECT(cls == MPI_ERR_COUNT, "negative element count: class %d", cls);
    MPI_Error_class(MPI_Get_elements(&st, MPI_DATATYPE_NULL, &n), &cls);
    EXPECT(cls == MPI_ERR_TYPE, "MPI_DATATYPE_NULL: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* status.MPI_ERROR: single-completion calls leave it alone (their return
 * value is the error), MPI_PROC_NULL included; Waitall/Testsome set it in
 * every status only when they return MPI_ERR_IN_STATUS. */
static void error_field(void)
{
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    int out[4] = {1, 2, 3, 4}, in[4], small[1], cls;
    MPI_Status st, sts[3];
    MPI_Request rq[3];
    st.MPI_ERROR = MPI_ERR_DIMS;
    EXPECT(MPI_Sendrecv(out, 1, MPI_INT, peer, 20, in, 1, MPI_INT, peer, 20, MPI_COMM_WORLD,
                        &st) == MPI_SUCCESS && st.MPI_ERROR == MPI_ERR_DIMS,
           "Sendrecv wrote MPI_ERROR = %d", st.MPI_ERROR);
    EXPECT(MPI_Recv(in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st) == MPI_SUCCESS &&
               st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_ERROR == MPI_ERR_DIMS,
           "Recv from MPI_PROC_NULL wrote MPI_ERROR = %d", st.MPI_ERROR);
    MPI_Message msg;
    EXPECT(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st) == MPI_SUCCESS &&
               st.MPI_ERROR == MPI_ERR_DIMS && msg == MPI_MESSAGE_NO_PROC,
           "Mprobe of MPI_PROC_NULL wrote MPI_ERROR = %d", st.MPI_ERROR);
    EXPECT(MPI_Mrecv(in, 0, MPI_INT, &msg, &st) == MPI_SUCCESS && st.MPI_ERROR == MPI_ERR_DIMS,
           "Mrecv of MPI_MESSAGE_NO_PROC wrote MPI_ERROR = %d", st.MPI_ERROR);

    /* No failure: Waitall leaves every MPI_ERROR as it was. */
    for (int i = 0; i < 2; i++)
        sts[i].MPI_ERROR = MPI_ERR_DIMS;
    MPI_Irecv(in, 4, MPI_INT, peer, 21, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(out, 4, MPI_INT, peer, 21, MPI_COMM_WORLD, &rq[1]);
    EXPECT(MPI_Waitall(2, rq, sts) == MPI_SUCCESS, "Waitall failed");
    EXPECT(sts[0].MPI_ERROR == MPI_ERR_DIMS && sts[1].MPI_ERROR == MPI_ERR_DIMS,
           "a successful Waitall wrote MPI_ERROR (%d %d)", sts[0].MPI_ERROR, sts[1].MPI_ERROR);

    /* One truncated receive among three: MPI_ERR_IN_STATUS, and each
     * status says which. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < 3; i++)
        sts[i].MPI_ERROR = MPI_ERR_DIMS;
    MPI_Irecv(in, 4, MPI_INT, peer, 22, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(small, 1, MPI_INT, peer, 23, MPI_COMM_WORLD, &rq[1]);
    MPI_Irecv(in + 2, 2, MPI_INT, peer, 24, MPI_COMM_WORLD, &rq[2]);
    MPI_Send(out, 2, MPI_INT, peer, 22, MPI_COMM_WORLD);
    MPI_Send(out, 4, MPI_INT, peer, 23, MPI_COMM_WORLD);
    MPI_Send(out, 2, MPI_INT, peer, 24, MPI_COMM_WORLD);
    int rc = MPI_Waitall(3, rq, sts);
    EXPECT(rc == MPI_ERR_IN_STATUS, "Waitall with a truncation returned %d", rc);
    MPI_Error_class(sts[1].MPI_ERROR, &cls);
    EXPECT(sts[0].MPI_ERROR == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE &&
               sts[2].MPI_ERROR == MPI_SUCCESS,
           "Waitall statuses' MPI_ERROR %d %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR,
           sts[2].MPI_ERROR);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    get_status();
    replace_ring();
    elements();
    error_field();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi p2p status ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
