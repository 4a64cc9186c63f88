/* Persistent requests: MPI_Send_init/MPI_Recv_init restarted 1000 times
 * (eager and rendezvous sizes) with the data checked every time, and, with
 * malloc/calloc/realloc counted (outside AddressSanitizer, which owns
 * malloc), no allocation by MPI_Start after warm-up; MPI_Startall over a
 * mix of Send_init, Ssend_init, Bsend_init (rendezvous size, source buffer
 * overwritten right after the start) and Recv_init with MPI_ANY_SOURCE;
 * Rsend_init after the receive is known to be posted; inactive requests in
 * Wait, Test, Waitall, Testall, Waitany, Testany, Waitsome, Testsome and
 * Request_get_status (empty status, flag true); MPI_PROC_NULL; errors for
 * starting an active or a non-persistent request; MPI_Request_free on
 * inactive and active requests (it is local: it does not wait for the
 * receiver). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"

static int rank, size;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "mpi_persistent rank %d line %d: ", rank, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

static int value(int from, int it, int i) { return from * 1000003 + it * 7919 + i; }

static void expect_empty(const MPI_Status *st, int line)
{
    int n;
    MPI_Get_count(st, MPI_BYTE, &n);
    if (st->MPI_SOURCE != MPI_ANY_SOURCE || st->MPI_TAG != MPI_ANY_TAG ||
        st->MPI_ERROR != MPI_SUCCESS || n != 0) {
        fprintf(stderr, "mpi_persistent rank %d line %d: status not empty (%d %d %d %d)\n",
                rank, line, st->MPI_SOURCE, st->MPI_TAG, st->MPI_ERROR, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* 1000 restarts of one Send_init/Recv_init pair with a partner (or
 * oneself); returns the allocations counted inside MPI_Start after the
 * first 10 iterations, and in *loop_allocs those of the whole loop. */
static long pingpong(int n, long *loop_allocs)
{
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    int *sbuf = calloc(n, sizeof *sbuf), *rbuf = calloc(n, sizeof *rbuf);
    MPI_Request sreq, rreq;
    MPI_Send_init(sbuf, n, MPI_INT, peer, 11, MPI_COMM_WORLD, &sreq);
    MPI_Recv_init(rbuf, n, MPI_INT, peer, 11, MPI_COMM_WORLD, &rreq);
    long in_start = 0, loop_start = 0;
    for (int it = 0; it < 1000; it++) {
        if (it == 10)
            loop_start = alloc_count();
        for (int i = 0; i < n; i++)
            sbuf[i] = value(rank, it, i);
        long before = alloc_count();
        MPI_Start(&rreq);
        MPI_Start(&sreq);
        if (it >= 10)
            in_start += alloc_count() - before;
        MPI_Status st;
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        MPI_Wait(&rreq, &st);
        EXPECT(sreq != MPI_REQUEST_NULL && rreq != MPI_REQUEST_NULL, "persistent request freed");
        int got;
        MPI_Get_count(&st, MPI_INT, &got);
        EXPECT(st.MPI_SOURCE == peer && st.MPI_TAG == 11 && got == n,
               "n=%d it=%d status %d %d %d", n, it, st.MPI_SOURCE, st.MPI_TAG, got);
        for (int i = 0; i < n; i++)
            EXPECT(rbuf[i] == value(peer, it, i), "n=%d it=%d i=%d got %d", n, it, i, rbuf[i]);
    }
    *loop_allocs = alloc_count() - loop_start;
    /* Nobody goes on to the next test (whose messages would arrive
     * unexpectedly, growing the protocol's pool) before all have counted. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
    EXPECT(sreq == MPI_REQUEST_NULL && rreq == MPI_REQUEST_NULL, "Request_free left a handle");
    free(sbuf);
    free(rbuf);
    return in_start;
}

static void inactive_semantics(void)
{
    int x = 5, y = 0;
    MPI_Request r[3];
    MPI_Status st, sts[3];
    int flag = 0, index = 0, outcount = 0, indices[3];
    MPI_Send_init(&x, 1, MPI_INT, rank, 21, MPI_COMM_WORLD, &r[0]);
    MPI_Recv_init(&y, 1, MPI_INT, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &r[1]);
    r[2] = MPI_REQUEST_NULL;
    /* never started */
    MPI_Test(&r[0], &flag, &st);
    EXPECT(flag && r[0] != MPI_REQUEST_NULL, "Test on an inactive request");
    expect_empty(&st, __LINE__);
    MPI_Wait(&r[1], &st);
    EXPECT(r[1] != MPI_REQUEST_NULL, "Wait freed an inactive request");
    expect_empty(&st, __LINE__);
    MPI_Waitall(3, r, sts);
    for (int i = 0; i < 3; i++)
        expect_empty(&sts[i], __LINE__);
    MPI_Testall(3, r, &flag, sts);
    EXPECT(flag, "Testall on inactive requests");
    MPI_Testany(3, r, &index, &flag, &st);
    EXPECT(flag && index == MPI_UNDEFINED, "Testany: flag %d index %d", flag, index);
    expect_empty(&st, __LINE__);
    MPI_Waitany(3, r, &index, &st);
    EXPECT(index == MPI_UNDEFINED, "Waitany: index %d", index);
    MPI_Testsome(3, r, &outcount, indices, sts);
    EXPECT(outcount == MPI_UNDEFINED, "Testsome: outcount %d", outcount);
    MPI_Waitsome(3, r, &outcount, indices, sts);
    EXPECT(outcount == MPI_UNDEFINED, "Waitsome: outcount %d", outcount);
    MPI_Request_get_status(r[0], &flag, &st);
    EXPECT(flag, "Request_get_status on an inactive request");
    expect_empty(&st, __LINE__);

    /* started: a message to oneself; Waitany reports the receive once the
     * send is done, and the requests are inactive again afterwards */
    for (int round = 0; round < 3; round++) {
        x = 100 + round;
        MPI_Startall(2, r);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Start(&r[1]);
        int cls;
        MPI_Error_class(rc, &cls);
        EXPECT(cls == MPI_ERR_REQUEST, "starting an active request: class %d", cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        int done = 0, seen_recv = 0;
        while (done < 2) {
            MPI_Waitany(3, r, &index, &st);
            EXPECT(index == 0 || index == 1, "Waitany index %d", index);
            if (index == 1) {
                EXPECT(st.MPI_SOURCE == rank && st.MPI_TAG == 21, "Waitany status");
                seen_recv++;
            }
            done++;
        }
        EXPECT(seen_recv == 1 && y == 100 + round, "round %d: y %d", round, y);
        MPI_Testany(3, r, &index, &flag, &st);
        EXPECT(flag && index == MPI_UNDEFINED, "Testany after completion");
    }

    /* Request_get_status leaves an active persistent request active */
    MPI_Start(&r[1]);
    MPI_Request_get_status(r[1], &flag, MPI_STATUS_IGNORE);
    EXPECT(!flag, "a receive nobody sent to completed");
    x = 77;
    MPI_Start(&r[0]);
    do
        MPI_Request_get_status(r[1], &flag, &st);
    while (!flag);
    EXPECT(st.MPI_SOURCE == rank && st.MPI_TAG == 21 && y == 77, "get_status %d %d", st.MPI_SOURCE, y);
    MPI_Request_get_status(r[1], &flag, &st);
    EXPECT(flag && st.MPI_SOURCE == rank, "get_status is not repeatable");
    MPI_Waitall(2, r, sts);
    EXPECT(sts[1].MPI_SOURCE == rank && sts[1].MPI_TAG == 21, "Waitall after get_status");

    /* starting a non-persistent request is an error */
    MPI_Request nb;
    MPI_Irecv(&y, 1, MPI_INT, rank, 22, MPI_COMM_WORLD, &nb);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Start(&nb), cls;
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_REQUEST, "starting a nonpersistent request: class %d", cls);
    MPI_Request null = MPI_REQUEST_NULL;
    rc = MPI_Start(&null);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_REQUEST, "starting MPI_REQUEST_NULL: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Send(&x, 1, MPI_INT, rank, 22, MPI_COMM_WORLD);
    MPI_Wait(&nb, MPI_STATUS_IGNORE);

    /* Request_free: inactive ones go at once */
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    EXPECT(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "Request_free");

    /* MPI_PROC_NULL: the status names MPI_PROC_NULL while active, is empty
     * once inactive */
    MPI_Request pn[2];
    MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pn[0]);
    MPI_Recv_init(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pn[1]);
    for (int round = 0; round < 3; round++) {
        MPI_Startall(2, pn);
        MPI_Waitall(2, pn, sts);
        int n;
        MPI_Get_count(&sts[1], MPI_INT, &n);
        EXPECT(sts[1].MPI_SOURCE == MPI_PROC_NULL && sts[1].MPI_TAG == MPI_ANY_TAG && n == 0,
               "PROC_NULL status %d %d %d", sts[1].MPI_SOURCE, sts[1].MPI_TAG, n);
        MPI_Wait(&pn[1], &st);
        expect_empty(&st, __LINE__);
    }
    MPI_Request_free(&pn[0]);
    MPI_Request_free(&pn[1]);
}

/* Request_free on an active persistent send: the message still arrives. */
static void free_active(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int n = 10000; /* rendezvous */
    int *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    for (int i = 0; i < n; i++)
        s[i] = value(rank, 3, i);
    MPI_Request req, rq;
    MPI_Irecv(r, n, MPI_INT, left, 31, MPI_COMM_WORLD, &rq);
    MPI_Send_init(s, n, MPI_INT, right, 31, MPI_COMM_WORLD, &req);
    MPI_Start(&req);
    MPI_Request_free(&req);
    EXPECT(req == MPI_REQUEST_NULL, "Request_free on an active request");
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        EXPECT(r[i] == value(left, 3, i), "free_active i=%d", i);
    /* Everyone has received: the freed sends are complete, s is ours. */
    MPI_Barrier(MPI_COMM_WORLD);
    /* MPI_Request_free is local: it must not wait for the receiver.  Here
     * the receiver sends first (a blocking rendezvous send), and receives
     * the freed request's message only after that. */
    int peer = rank ^ 1;
    if (peer < size) {
        for (int i = 0; i < n; i++)
            s[i] = value(rank, 4, i);
        if (rank % 2 == 0) {
            MPI_Send_init(s, n, MPI_INT, peer, 32, MPI_COMM_WORLD, &req);
            MPI_Start(&req);
            MPI_Request_free(&req);
            MPI_Recv(r, n, MPI_INT, peer, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(s, n, MPI_INT, peer, 33, MPI_COMM_WORLD);
            MPI_Recv(r, n, MPI_INT, peer, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < n; i++)
            EXPECT(r[i] == value(peer, 4, i), "free_active (local) i=%d", i);
        /* the sender learns that its message arrived from the reply: only
         * then may it touch the buffer */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(s);
    free(r);
}

/* Startall over sends of every mode and receives, in a ring. */
static void startall_ring(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    enum { SMALL = 16, LARGE = 40000 };
    int s1[SMALL], r1[SMALL], s2[SMALL], r2[SMALL], s4[SMALL], r4[SMALL];
    int *s3 = calloc(LARGE, sizeof *s3), *r3 = calloc(LARGE, sizeof *r3);
    /* two buffered messages may be pending: ours of this round, and the
     * previous one until our right neighbour's FIN is seen */
    int bsize = 2 * (LARGE * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);
    MPI_Request req[8];
    MPI_Recv_init(r1, SMALL, MPI_INT, left, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Send_init(s1, SMALL, MPI_INT, right, 1, MPI_COMM_WORLD, &req[1]);
    MPI_Ssend_init(s2, SMALL, MPI_INT, left, 2, MPI_COMM_WORLD, &req[2]);
    MPI_Recv_init(r2, SMALL, MPI_INT, right, 2, MPI_COMM_WORLD, &req[3]);
    MPI_Bsend_init(s3, LARGE, MPI_INT, right, 3, MPI_COMM_WORLD, &req[4]);
    MPI_Recv_init(r3, LARGE, MPI_INT, left, 3, MPI_COMM_WORLD, &req[5]);
    MPI_Recv_init(r4, SMALL, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &req[6]);
    MPI_Send_init(s4, SMALL, MPI_INT, right, 4, MPI_COMM_WORLD, &req[7]);
    for (int it = 0; it < 200; it++) {
        for (int i = 0; i < SMALL; i++) {
            s1[i] = value(rank, it, i);
            s2[i] = value(rank, it, i + 1);
            s4[i] = value(rank, it, i + 4);
        }
        for (int i = 0; i < LARGE; i++)
            s3[i] = value(rank, it, i + 3);
        MPI_Startall(8, req);
        /* the buffered send has copied its data: the buffer is ours again */
        memset(s3, 0xff, LARGE * sizeof *s3);
        MPI_Status st[8];
        MPI_Waitall(8, req, st);
        for (int i = 0; i < SMALL; i++) {
            EXPECT(r1[i] == value(left, it, i), "it %d r1[%d]", it, i);
            EXPECT(r2[i] == value(right, it, i + 1), "it %d r2[%d]", it, i);
            EXPECT(r4[i] == value(left, it, i + 4), "it %d r4[%d]", it, i);
        }
        for (int i = 0; i < LARGE; i++)
            EXPECT(r3[i] == value(left, it, i + 3), "it %d r3[%d] = %d", it, i, r3[i]);
        EXPECT(st[6].MPI_SOURCE == left && st[6].MPI_TAG == 4, "ANY_SOURCE status");
        EXPECT(st[5].MPI_SOURCE == left && st[3].MPI_SOURCE == right, "statuses");
    }
    for (int i = 0; i < 8; i++)
        MPI_Request_free(&req[i]);

    /* ready mode: the receive is posted before anyone sends */
    MPI_Request rr[2];
    MPI_Status st2[2];
    MPI_Recv_init(r1, SMALL, MPI_INT, left, 5, MPI_COMM_WORLD, &rr[0]);
    MPI_Rsend_init(s1, SMALL, MPI_INT, right, 5, MPI_COMM_WORLD, &rr[1]);
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < SMALL; i++)
            s1[i] = value(rank, it, i + 5);
        MPI_Start(&rr[0]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Start(&rr[1]);
        MPI_Waitall(2, rr, st2); /* not MPI_STATUSES_IGNORE: GCC 12 -Wstringop-overflow */
        for (int i = 0; i < SMALL; i++)
            EXPECT(r1[i] == value(left, it, i + 5), "rsend it %d i %d", it, i);
        MPI_Barrier(MPI_COMM_WORLD); /* nobody's next Rsend before our next receive */
    }
    MPI_Request_free(&rr[0]);
    MPI_Request_free(&rr[1]);

    void *addr;
    int got;
    MPI_Buffer_detach(&addr, &got);
    EXPECT(addr == bbuf && got == bsize, "detach");
    free(bbuf);
    free(s3);
    free(r3);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Warm-up for the whole-loop count: the protocol keeps entries for
     * unexpected messages in a pool that grows on first use; a message
     * can arrive before its receive is started, so fill the pool first.
     * Besides the peer's message, a faster rank's messages of the barrier
     * after the loop can arrive during it (the node-aware barrier of a job
     * spanning hosts, sched_barrier_nodes.c, is made of messages): room for
     * one from every rank. */
    /* Over the network a connection to a peer is opened on its first use
     * (libfabric's rxm over tcp allocates then): one message with every
     * rank first. */
    int *all = malloc(2 * (size_t)size * sizeof *all);
    for (int i = 0; i < size; i++)
        all[i] = rank;
    MPI_Alltoall(all, 1, MPI_INT, all + size, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        EXPECT(all[size + i] == i, "warm-up alltoall: %d from rank %d", all[size + i], i);
    free(all);
    enum { WARM_MAX = 2 + 1024 };
    int nwarm = 2 + size < WARM_MAX ? 2 + size : WARM_MAX;
    int w[WARM_MAX];
    for (int i = 0; i < nwarm; i++) {
        w[i] = i;
        MPI_Send(&w[i], 1, MPI_INT, rank, 99, MPI_COMM_WORLD);
    }
    /* A probe drains the channel into the unexpected queue (a blocking
     * receive would take the records straight from the channel). */
    MPI_Probe(rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < nwarm; i++)
        MPI_Recv(&w[i], 1, MPI_INT, rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    long loop_small, loop_large;
    long start_small = pingpong(8, &loop_small);     /* eager */
    long start_large = pingpong(16384, &loop_large); /* 64 KiB: rendezvous */
    if (ALLOC_COUNTING) {
        EXPECT(start_small == 0 && start_large == 0,
               "MPI_Start allocated %ld (eager) and %ld (rendezvous) times after warm-up",
               start_small, start_large);
        EXPECT(loop_small == 0 && loop_large == 0,
               "the Start/Wait loop allocated %ld (eager) and %ld (rendezvous) times",
               loop_small, loop_large);
    }
    inactive_semantics();
    free_active();
    startall_ring();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi persistent ok on %d ranks (malloc counted: %s)\n", size,
               ALLOC_COUNTING ? "yes, none in MPI_Start" : "no, AddressSanitizer");
    MPI_Finalize();
    return 0;
}
