/* Matched probes: every rank sends rank 0 five messages (eager and
 * rendezvous sizes, increasing tags); rank 0 takes them with
 * MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG), sizes its buffer from the status,
 * and receives with MPI_Mrecv or MPI_Imrecv (the _c forms too), checking
 * data, per-sender order, and that a probed message is no longer visible
 * to MPI_Iprobe or receivable by MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG);
 * MPI_Improbe false before the message is sent and true after (eager and
 * rendezvous); MPI_PROC_NULL (MPI_MESSAGE_NO_PROC); errors: MPI_MESSAGE_NULL,
 * a message handle given to MPI_Wait, a request given to MPI_Mrecv,
 * truncation. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "mpi_mprobe rank %d line %d: ", rank, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

enum { K = 5, BIG = 10000 };

static int value(int from, int tag, int i) { return from * 100000 + tag * 1000 + i; }
static int count_of(int k) { return k % 2 ? BIG : 10 + k; }

static void check_message(const int *buf, int n, int source, int tag)
{
    int k = tag - 100;
    EXPECT(k >= 0 && k < K && n == count_of(k), "source %d tag %d count %d", source, tag, n);
    for (int i = 0; i < n; i++)
        EXPECT(buf[i] == value(source, tag, i), "source %d tag %d i %d: %d", source, tag, i,
               buf[i]);
}

static int error_class(int rc)
{
    int cls;
    MPI_Error_class(rc, &cls);
    return cls;
}

static void any_source(void)
{
    int *sbuf[K];
    MPI_Request sreq[K];
    for (int k = 0; k < K; k++) {
        int n = count_of(k);
        sbuf[k] = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++)
            sbuf[k][i] = value(rank, 100 + k, i);
        MPI_Isend(sbuf[k], n, MPI_INT, 0, 100 + k, MPI_COMM_WORLD, &sreq[k]);
    }
    if (rank == 0) {
        int total = size * K, got = 0;
        int *next = calloc(size, sizeof *next); /* the next tag expected per sender */
        int *extra = malloc(BIG * sizeof *extra);
        while (got < total) {
            MPI_Message msg;
            MPI_Status st;
            MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
            EXPECT(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "message handle");
            int src = st.MPI_SOURCE, tag = st.MPI_TAG, n;
            MPI_Get_count(&st, MPI_INT, &n);
            EXPECT(src >= 0 && src < size && tag == 100 + next[src],
                   "from %d: tag %d, expected %d (order)", src, tag, 100 + next[src]);
            next[src]++;
            /* The probed message is out of the queue: a probe does not see
             * it, and a wildcard receive takes another message. */
            int flag;
            MPI_Status st2;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st2);
            EXPECT(!flag || st2.MPI_SOURCE != src || st2.MPI_TAG != tag,
                   "Iprobe sees the probed message");
            if (got % 3 == 0 && got + 1 < total) {
                MPI_Recv(extra, BIG, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st2);
                EXPECT(st2.MPI_SOURCE != src || st2.MPI_TAG != tag,
                       "a receive took the probed message");
                int n2;
                MPI_Get_count(&st2, MPI_INT, &n2);
                EXPECT(st2.MPI_TAG == 100 + next[st2.MPI_SOURCE], "order (Recv)");
                next[st2.MPI_SOURCE]++;
                check_message(extra, n2, st2.MPI_SOURCE, st2.MPI_TAG);
                got++;
            }
            int *buf = malloc(n * sizeof *buf);
            MPI_Status st3;
            switch (got % 4) {
            case 0:
                MPI_Mrecv(buf, n, MPI_INT, &msg, &st3);
                break;
            case 1:
                MPI_Mrecv_c(buf, n, MPI_INT, &msg, &st3);
                break;
            case 2: {
                MPI_Request r;
                MPI_Imrecv(buf, n, MPI_INT, &msg, &r);
                MPI_Wait(&r, &st3);
                break;
            }
            default: {
                MPI_Request r;
                MPI_Imrecv_c(buf, n, MPI_INT, &msg, &r);
                MPI_Wait(&r, &st3);
            }
            }
            EXPECT(msg == MPI_MESSAGE_NULL, "the message handle was not reset");
            int n3;
            MPI_Get_count(&st3, MPI_INT, &n3);
            EXPECT(st3.MPI_SOURCE == src && st3.MPI_TAG == tag && n3 == n, "receive status");
            check_message(buf, n, src, tag);
            free(buf);
            got++;
        }
        for (int s = 0; s < size; s++)
            EXPECT(next[s] == K, "%d messages from %d", next[s], s);
        free(next);
        free(extra);
    }
    MPI_Status sst[K]; /* not MPI_STATUSES_IGNORE: GCC 12 -Wstringop-overflow */
    MPI_Waitall(K, sreq, sst);
    for (int k = 0; k < K; k++)
        free(sbuf[k]);
}

static void proc_null(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int x = 3, n, flag = 0;
    MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL &&
               st.MPI_TAG == MPI_ANY_TAG && n == 0, "Mprobe(MPI_PROC_NULL)");
    MPI_Mrecv(&x, 1, MPI_INT, &msg, &st);
    EXPECT(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && x == 3,
           "Mrecv(MPI_MESSAGE_NO_PROC)");
    MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
    EXPECT(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL)");
    MPI_Request r;
    MPI_Imrecv(&x, 1, MPI_INT, &msg, &r);
    EXPECT(msg == MPI_MESSAGE_NULL, "Imrecv(MPI_MESSAGE_NO_PROC) handle");
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0 && x == 3,
           "Imrecv(MPI_MESSAGE_NO_PROC) status");
}

/* Improbe is false until the partner has sent, then true. */
static void improbe(int n, int tag)
{
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    int *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    for (int i = 0; i < n; i++)
        s[i] = value(rank, tag, i);
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 1, go = 1;
    MPI_Improbe(peer, tag, MPI_COMM_WORLD, &flag, &msg, &st);
    EXPECT(!flag && msg == MPI_MESSAGE_NULL, "Improbe found a message nobody sent");
    MPI_Sendrecv_replace(&go, 1, MPI_INT, peer, tag + 1, peer, tag + 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    MPI_Request sreq;
    MPI_Isend(s, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &sreq);
    int polls = 0;
    do {
        MPI_Improbe(peer, tag, MPI_COMM_WORLD, &flag, &msg, &st);
        polls++;
    } while (!flag);
    int got;
    MPI_Get_count(&st, MPI_INT, &got);
    EXPECT(st.MPI_SOURCE == peer && st.MPI_TAG == tag && got == n, "Improbe status");
    MPI_Request rreq;
    MPI_Imrecv(r, n, MPI_INT, &msg, &rreq);
    MPI_Wait(&rreq, &st);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        EXPECT(r[i] == value(peer, tag, i), "Improbe data i %d", i);
    free(s);
    free(r);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x[100] = {0};
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    EXPECT(error_class(MPI_Mrecv(x, 1, MPI_INT, &msg, &st)) == MPI_ERR_REQUEST,
           "Mrecv(MPI_MESSAGE_NULL)");
    /* a message to oneself, probed, then misused */
    for (int i = 0; i < 100; i++)
        x[i] = i;
    MPI_Send(x, 100, MPI_INT, rank, 300, MPI_COMM_WORLD);
    MPI_Mprobe(rank, 300, MPI_COMM_WORLD, &msg, &st);
    MPI_Request as_request = msg;
    EXPECT(error_class(MPI_Wait(&as_request, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST,
           "MPI_Wait on a message handle");
    MPI_Request req;
    MPI_Irecv(x, 1, MPI_INT, rank, 301, MPI_COMM_WORLD, &req);
    MPI_Message as_message = req;
    EXPECT(error_class(MPI_Mrecv(x, 1, MPI_INT, &as_message, &st)) == MPI_ERR_REQUEST,
           "MPI_Mrecv on a request handle");
    MPI_Cancel(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* truncation: the message is consumed, the error reported */
    int y[50];
    int rc = MPI_Mrecv(y, 50, MPI_INT, &msg, &st);
    EXPECT(error_class(rc) == MPI_ERR_TRUNCATE && msg == MPI_MESSAGE_NULL, "truncation: %d",
           error_class(rc));
    for (int i = 0; i < 50; i++)
        EXPECT(y[i] == i, "truncated data");
    int flag;
    MPI_Iprobe(rank, 300, MPI_COMM_WORLD, &flag, &st);
    EXPECT(!flag, "the truncated message is still there");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int round = 0; round < 3; round++) {
        any_source();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    proc_null();
    improbe(10, 200);    /* eager */
    improbe(20000, 210); /* rendezvous */
    errors();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi mprobe ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
