/* Generalised requests: MPI_Wait and MPI_Test complete one only after
 * MPI_Grequest_complete, then call query_fn (its status and error are the
 * request's) and free_fn once; MPI_Cancel calls cancel_fn with the
 * completion flag; MPI_Request_free of a pending one calls free_fn once it
 * completes; Waitall mixes them with point-to-point requests; the errors
 * free_fn and cancel_fn return are those of the calls that run them
 * (Wait, Test, Waitall's MPI_ERR_IN_STATUS, Request_free, Cancel); errors. */
#include <mpi.h>
#include <string.h>

#include "check.h"

typedef struct {
    int queries, frees, cancels, cancel_complete;
    int query_rc, free_rc, cancel_rc;
} counters;

static int query_fn(void *extra, MPI_Status *status)
{
    counters *c = extra;
    c->queries++;
    MPI_Status_set_elements(status, MPI_INT, 5);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = 3;
    status->MPI_TAG = 44;
    return c->query_rc;
}

static int free_fn(void *extra)
{
    ((counters *)extra)->frees++;
    return ((counters *)extra)->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    counters *c = extra;
    c->cancels++;
    c->cancel_complete = complete;
    return c->cancel_rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* 1. Test before completion: not done, no callback */
    counters c = {0};
    MPI_Request rq;
    MPI_Status st;
    int flag = 1;
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &rq));
    for (int i = 0; i < 10; i++) {
        CHECK_OK(MPI_Test(&rq, &flag, &st));
        CHECK(!flag, "complete before MPI_Grequest_complete");
    }
    CHECK(c.queries == 0 && c.frees == 0, "callbacks before completion");
    CHECK_OK(MPI_Cancel(&rq));
    CHECK(c.cancels == 1 && c.cancel_complete == 0, "cancel_fn %d %d", c.cancels,
          c.cancel_complete);
    CHECK_OK(MPI_Grequest_complete(rq));
    CHECK_CLASS(MPI_Grequest_complete(rq), MPI_ERR_REQUEST); /* twice */
    CHECK_OK(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL, "not freed");
    CHECK(c.queries == 1 && c.frees == 1, "query %d free %d", c.queries, c.frees);
    int n;
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 5 && st.MPI_SOURCE == 3 && st.MPI_TAG == 44, "status %d %d %d", n, st.MPI_SOURCE,
          st.MPI_TAG);

    /* 2. cancel after completion says so */
    memset(&c, 0, sizeof c);
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &rq));
    CHECK_OK(MPI_Grequest_complete(rq));
    CHECK_OK(MPI_Cancel(&rq));
    CHECK(c.cancel_complete == 1, "cancel after completion: %d", c.cancel_complete);
    flag = 0;
    while (!flag)
        CHECK_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    CHECK(c.queries == 1 && c.frees == 1, "test: query %d free %d", c.queries, c.frees);

    /* 2b. MPI_Request_get_status: the status, and the request stays */
    memset(&c, 0, sizeof c);
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &rq));
    CHECK_OK(MPI_Request_get_status(rq, &flag, &st));
    CHECK(!flag, "get_status before completion");
    CHECK_OK(MPI_Grequest_complete(rq));
    CHECK_OK(MPI_Request_get_status(rq, &flag, &st));
    CHECK(flag && c.queries >= 1 && c.frees == 0 && st.MPI_TAG == 44, "get_status: %d %d %d",
          flag, c.queries, c.frees);
    CHECK(rq != MPI_REQUEST_NULL, "get_status freed the request");
    CHECK_OK(MPI_Wait(&rq, &st));
    CHECK(c.frees == 1 && st.MPI_TAG == 44 && rq == MPI_REQUEST_NULL, "wait after get_status");

    /* 3. query_fn's error is the request's */
    memset(&c, 0, sizeof c);
    c.query_rc = MPI_ERR_OTHER;
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &rq));
    CHECK_OK(MPI_Grequest_complete(rq));
    CHECK_CLASS(MPI_Wait(&rq, &st), MPI_ERR_OTHER);
    CHECK(c.frees == 1, "free after failed query: %d", c.frees);

    /* 3b. free_fn's error is the call's (MPI-4.0 13.2): Wait, Test, and
     * also when query_fn failed too (free_fn runs last); query_fn's stands
     * when free_fn succeeds (3 above) */
    for (int how = 0; how < 3; how++) {
        memset(&c, 0, sizeof c);
        c.free_rc = MPI_ERR_BUFFER;
        c.query_rc = how == 2 ? MPI_ERR_OTHER : MPI_SUCCESS;
        CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &rq));
        CHECK_OK(MPI_Grequest_complete(rq));
        if (how == 1) {
            flag = 0;
            CHECK_CLASS(MPI_Test(&rq, &flag, &st), MPI_ERR_BUFFER);
            CHECK(flag, "Test did not complete it");
        } else {
            CHECK_CLASS(MPI_Wait(&rq, &st), MPI_ERR_BUFFER);
        }
        CHECK(rq == MPI_REQUEST_NULL && c.frees == 1 && c.queries == 1,
              "how %d: request 0x%x, free %d, query %d", how, (unsigned)rq, c.frees, c.queries);
    }
    /* ... MPI_Request_free of a complete one, MPI_Cancel's cancel_fn */
    memset(&c, 0, sizeof c);
    c.free_rc = MPI_ERR_BUFFER;
    c.cancel_rc = MPI_ERR_ARG;
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &rq));
    CHECK_CLASS(MPI_Cancel(&rq), MPI_ERR_ARG);
    CHECK(c.cancels == 1, "cancel_fn ran %d times", c.cancels);
    CHECK_OK(MPI_Grequest_complete(rq));
    CHECK_CLASS(MPI_Request_free(&rq), MPI_ERR_BUFFER);
    CHECK(rq == MPI_REQUEST_NULL && c.frees == 1, "Request_free: free %d", c.frees);
    /* ... and Waitall: MPI_ERR_IN_STATUS, the request's MPI_ERROR free_fn's */
    memset(&c, 0, sizeof c);
    c.free_rc = MPI_ERR_BUFFER;
    counters ok = {0};
    MPI_Request reqs[2];
    MPI_Status sts[2];
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &ok, &reqs[0]));
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &reqs[1]));
    CHECK_OK(MPI_Grequest_complete(reqs[0]));
    CHECK_OK(MPI_Grequest_complete(reqs[1]));
    CHECK_CLASS(MPI_Waitall(2, reqs, sts), MPI_ERR_IN_STATUS);
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && error_class(sts[1].MPI_ERROR) == MPI_ERR_BUFFER,
          "Waitall statuses: %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL && c.frees == 1 &&
              ok.frees == 1, "Waitall freed both");

    /* 4. Waitall with a receive and a generalised request */
    memset(&c, 0, sizeof c);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, v = -1, mine = rank;
    MPI_Request two[2];
    CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &two[0]));
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &two[1]));
    CHECK_OK(MPI_Send(&mine, 1, MPI_INT, right, 2, MPI_COMM_WORLD));
    CHECK_OK(MPI_Grequest_complete(two[1]));
    MPI_Status s2[2];
    CHECK_OK(MPI_Waitall(2, two, s2));
    CHECK(v == left && s2[1].MPI_TAG == 44 && c.frees == 1, "waitall: %d tag %d", v,
          s2[1].MPI_TAG);

    /* 5. freed while pending: free_fn runs once it completes */
    memset(&c, 0, sizeof c);
    CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &rq));
    MPI_Request keep = rq;
    CHECK_OK(MPI_Request_free(&rq));
    CHECK(rq == MPI_REQUEST_NULL && c.frees == 0, "freed early");
    CHECK_OK(MPI_Grequest_complete(keep));
    CHECK(c.frees == 1, "free_fn after a pending free: %d", c.frees);

    /* 6. errors */
    CHECK_CLASS(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
    CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &rq));
    CHECK_CLASS(MPI_Grequest_complete(rq), MPI_ERR_REQUEST); /* not a generalised request */
    CHECK_OK(MPI_Send(&mine, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_CLASS(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, NULL), MPI_ERR_ARG);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi grequest ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
