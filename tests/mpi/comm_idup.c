/* MPI_Comm_idup and MPI_Comm_idup_with_info are nonblocking: the other
 * ranks do point-to-point on the parent while a duplication is pending,
 * several are outstanding at once (same parent, different parents, pairs
 * overlapping like MPICH's comm_idup_overlap) and complete in any order;
 * the new communicators work, carry the info given, and get the parent's
 * attributes through their copy callbacks (at the call: the parent may be
 * freed before completion); the same for intercommunicators. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

static int copies; /* copy callback runs */

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

/* A collective and point-to-point on c, data checked. */
static void use(MPI_Comm c, int salt)
{
    int rank, size;
    OK(MPI_Comm_rank(c, &rank));
    OK(MPI_Comm_size(c, &size));
    int sum = -1, mine = rank + salt;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2 + size * salt, "allreduce %d (salt %d)", sum, salt);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {rank, salt, 7 * rank + salt}, in[3] = {-1, -1, -1};
    OK(MPI_Sendrecv(out, 3, MPI_INT, right, 5, in, 3, MPI_INT, left, 5, c, MPI_STATUS_IGNORE));
    CHECK(in[0] == left && in[1] == salt && in[2] == 7 * left + salt, "ring got %d %d %d",
          in[0], in[1], in[2]);
}

/* Intercommunicator checks: both groups' ranks summed across, a message
 * from every local rank to every remote rank, the same groups as ic. */
static void use_inter(MPI_Comm ic, MPI_Comm nc, int salt)
{
    int flag, lrank, lsize, rsize, nl, nr, cmp;
    OK(MPI_Comm_test_inter(nc, &flag));
    CHECK(flag, "the duplicate of an intercommunicator is not one");
    OK(MPI_Comm_rank(ic, &lrank));
    OK(MPI_Comm_size(ic, &lsize));
    OK(MPI_Comm_remote_size(ic, &rsize));
    OK(MPI_Comm_size(nc, &nl));
    OK(MPI_Comm_remote_size(nc, &nr));
    CHECK(nl == lsize && nr == rsize, "sizes %d/%d, expected %d/%d", nl, nr, lsize, rsize);
    OK(MPI_Comm_compare(ic, nc, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare with the parent gave %d", cmp);
    int mine = lrank + salt, sum = -1;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, nc)); /* the remote group's sum */
    CHECK(sum == rsize * (rsize - 1) / 2 + rsize * salt, "intercomm allreduce %d", sum);
    for (int r = 0; r < rsize; r++) {
        int out[2] = {lrank, salt}, in[2] = {-1, -1};
        MPI_Status st;
        OK(MPI_Sendrecv(out, 2, MPI_INT, r, 9, in, 2, MPI_INT, MPI_ANY_SOURCE, 9, nc, &st));
        CHECK(in[0] == st.MPI_SOURCE && in[1] == salt, "from remote %d: %d %d", st.MPI_SOURCE,
              in[0], in[1]);
    }
}

/* 8. MPI_Comm_idup of an intercommunicator is nonblocking (MPICH's
 * comm/comm_idup pattern: local rank 0 of each group receives from every
 * other remote rank before it starts its idup, and those send only after
 * theirs, synchronously); several outstanding, with attributes, info, and
 * the parent freed while one is pending. */
static void test_intercomm(int wrank)
{
    MPI_Comm local, ic, nc;
    MPI_Request rq;
    OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, wrank == 0 ? 1 : 0, 1234, &ic));
    int lrank, lsize, rsize, buf[2];
    OK(MPI_Comm_rank(ic, &lrank));
    OK(MPI_Comm_size(ic, &lsize));
    OK(MPI_Comm_remote_size(ic, &rsize));
    if (lrank == 0) {
        for (int i = 1; i < rsize; i++) {
            OK(MPI_Recv(buf, 2, MPI_INT, i, 0, ic, MPI_STATUS_IGNORE));
            CHECK(buf[0] == i && buf[1] == 1000 + i, "stagger message %d %d", buf[0], buf[1]);
        }
        OK(MPI_Comm_idup(ic, &nc, &rq));
    } else {
        OK(MPI_Comm_idup(ic, &nc, &rq));
        buf[0] = lrank;
        buf[1] = 1000 + lrank;
        OK(MPI_Ssend(buf, 2, MPI_INT, 0, 0, ic));
    }
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(rq == MPI_REQUEST_NULL, "the request was not released");
    use_inter(ic, nc, 70);
    OK(MPI_Comm_free(&nc));

    /* several outstanding, on ic and on the world, with a blocking
     * collective between; completed in reverse order */
    enum { M = 4 };
    MPI_Comm dups[M];
    MPI_Request reqs[M], rev[M];
    for (int i = 0; i < M; i++) {
        OK(MPI_Comm_idup(i == 1 ? MPI_COMM_WORLD : ic, &dups[i], &reqs[i]));
        if (i == 2)
            OK(MPI_Barrier(ic));
    }
    for (int i = 0; i < M; i++)
        rev[i] = reqs[M - 1 - i];
    OK(MPI_Waitall(M, rev, MPI_STATUSES_IGNORE));
    for (int i = 0; i < M; i++) {
        if (i == 1)
            use(dups[i], 80);
        else
            use_inter(ic, dups[i], 80 + i);
        OK(MPI_Comm_free(&dups[i]));
    }

    /* with info; attributes through their copy callback */
    int key, flag = 0;
    static char base[4];
    int before = copies;
    OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Comm_set_attr(ic, key, base));
    MPI_Info info, got;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    OK(MPI_Comm_idup_with_info(ic, info, &nc, &rq));
    OK(MPI_Info_free(&info));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(copies == before + 1, "copy callback ran %d times", copies - before);
    void *val = NULL;
    OK(MPI_Comm_get_attr(nc, key, &val, &flag));
    CHECK(flag && val == base + 1, "attribute not copied (flag %d)", flag);
    OK(MPI_Comm_get_info(nc, &got));
    char value[MPI_MAX_INFO_VAL + 1];
    OK(MPI_Info_get(got, "mpi_assert_no_any_source", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, "true") == 0, "hint lost (flag %d)", flag);
    OK(MPI_Info_free(&got));
    use_inter(ic, nc, 90);
    OK(MPI_Comm_free(&nc));

    /* the parent freed while its duplication is pending */
    MPI_Comm keep_ic;
    OK(MPI_Comm_dup(ic, &keep_ic)); /* to compare with afterwards */
    OK(MPI_Comm_idup(ic, &nc, &rq));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    val = NULL;
    OK(MPI_Comm_get_attr(nc, key, &val, &flag));
    CHECK(flag && val == base + 1, "attribute not copied (flag %d)", flag);
    use_inter(keep_ic, nc, 100);
    OK(MPI_Comm_free(&nc));
    OK(MPI_Comm_free(&keep_ic));
    OK(MPI_Comm_free_keyval(&key));
    OK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* 1. Rank 0 receives from rank 1 before it starts its idup; rank 1
     * starts its idup and only then sends.  A blocking dup deadlocks. */
    MPI_Comm d;
    MPI_Request rq;
    int v = -1;
    if (rank == 0) {
        OK(MPI_Recv(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v == 42, "rank 0 received %d", v);
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
    } else {
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
        if (rank == 1) {
            v = 42;
            OK(MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
        }
    }
    /* Receives with MPI_ANY_TAG on the parent meanwhile see only user
     * messages, never the duplication's own. */
    if (rank > 0) {
        OK(MPI_Send(&rank, 1, MPI_INT, 0, 11, MPI_COMM_WORLD));
    } else {
        for (int i = 1; i < size; i++) {
            MPI_Status st;
            OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == 11 && v == st.MPI_SOURCE, "any-tag receive got tag %d value %d",
                  st.MPI_TAG, v);
        }
    }
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(rq == MPI_REQUEST_NULL, "the request was not released");
    int cmp;
    OK(MPI_Comm_compare(d, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare gave %d", cmp);
    use(d, 1);

    /* 2. Several outstanding on the same and on different parents, with a
     * blocking collective on the parent started in between; completed in
     * reverse order, by Waitall, and by a Test loop. */
    enum { N = 6 };
    MPI_Comm dups[N];
    MPI_Request reqs[N], rev[N];
    for (int i = 0; i < N; i++) {
        OK(MPI_Comm_idup(i % 2 ? d : MPI_COMM_WORLD, &dups[i], &reqs[i]));
        if (i == 2)
            OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int i = 0; i < N; i++)
        rev[i] = reqs[N - 1 - i];
    if (rank % 2) {
        MPI_Status sts[N];
        OK(MPI_Waitall(N, rev, sts));
    } else {
        for (int i = 0; i < N; i++) {
            int flag = 0;
            while (!flag)
                OK(MPI_Test(&rev[i], &flag, MPI_STATUS_IGNORE));
        }
    }
    for (int i = 0; i < N; i++) {
        CHECK(rev[i] == MPI_REQUEST_NULL, "request %d not released", i);
        use(dups[i], 10 + i);
    }
    for (int i = 0; i < N; i++)
        OK(MPI_Comm_free(&dups[i]));

    /* 3. Overlapping pairs: rank r duplicates {r, r+1} then {r-1, r}, so
     * neighbours start them in opposite orders. */
    if (size > 1) {
        MPI_Comm pair[2], pdup[2];
        MPI_Request pr[2];
        for (int i = 0; i < size; i++) {
            MPI_Comm tmp;
            int color = rank == i || rank == (i + 1) % size ? 0 : 1;
            OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank == i ? 0 : 1, &tmp));
            if (rank == i)
                pair[0] = tmp;
            else if (rank == (i + 1) % size)
                pair[1] = tmp;
            else
                OK(MPI_Comm_free(&tmp));
        }
        if (size == 2) { /* both pairs are the same two ranks */
            OK(MPI_Comm_idup(pair[rank], &pdup[0], &pr[0]));
            OK(MPI_Comm_idup(pair[1 - rank], &pdup[1], &pr[1]));
        } else {
            OK(MPI_Comm_idup(pair[0], &pdup[0], &pr[0]));
            OK(MPI_Comm_idup(pair[1], &pdup[1], &pr[1]));
        }
        MPI_Status sts[2];
        OK(MPI_Waitall(2, pr, sts));
        /* Use them pair by pair in one global order (pair i = {i, i+1}). */
        for (int i = 0; i < size; i++) {
            if (size == 2)
                use(pdup[i], 20 + i);
            else if (i == rank)
                use(pdup[0], 20 + i);
            else if ((i + 1) % size == rank)
                use(pdup[1], 20 + i);
        }
        for (int i = 0; i < 2; i++) {
            OK(MPI_Comm_free(&pdup[i]));
            OK(MPI_Comm_free(&pair[i]));
        }
    }

    /* 4. idup_with_info: the hint is the new communicator's. */
    MPI_Info info, got;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_Comm wi;
    OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &wi, &rq));
    OK(MPI_Info_free(&info)); /* the call keeps its own copy */
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    OK(MPI_Comm_get_info(wi, &got));
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    OK(MPI_Info_get(got, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, "true") == 0, "hint lost (flag %d)", flag);
    OK(MPI_Info_free(&got));
    use(wi, 30);
    OK(MPI_Comm_free(&wi));

    /* 5. Attributes are copied as by MPI_Comm_dup: the copy callback runs. */
    int key;
    static char base[4];
    OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Comm_set_attr(d, key, base));
    MPI_Comm da;
    OK(MPI_Comm_idup(d, &da, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(copies == 1, "copy callback ran %d times", copies);
    void *val = NULL;
    OK(MPI_Comm_get_attr(da, key, &val, &flag));
    CHECK(flag && val == base + 1, "attribute not copied (flag %d)", flag);
    use(da, 40);
    OK(MPI_Comm_free(&da));

    /* The parent may be freed while a duplication of it is pending: the
     * duplicate still gets the attributes it had at the call. */
    OK(MPI_Comm_idup(d, &da, &rq));
    OK(MPI_Comm_free(&d));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(copies == 2, "copy callback ran %d times", copies);
    val = NULL;
    OK(MPI_Comm_get_attr(da, key, &val, &flag));
    CHECK(flag && val == base + 1, "attribute not copied (flag %d)", flag);
    use(da, 50);
    OK(MPI_Comm_free(&da));
    OK(MPI_Comm_free_keyval(&key));

    /* 6. Freeing a pending one is erroneous (MPI-4.0 6.12): refused with
     * MPI_ERR_REQUEST, the request left as it was (unless it had already
     * completed, when freeing it is fine). */
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
    MPI_Request keep = rq;
    int rc = MPI_Request_free(&rq);
    if (rc != MPI_SUCCESS) {
        CHECK(error_class(rc) == MPI_ERR_REQUEST, "Request_free on a pending idup: class %d",
              error_class(rc));
        CHECK(rq == keep, "the refused request was changed");
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        CHECK(rq == MPI_REQUEST_NULL, "freed request not MPI_REQUEST_NULL");
    }
    OK(MPI_Comm_free(&d));

    /* 7. A split (blocking) while duplications of the same parent are in
     * flight: the creations' messages must not cross. */
    MPI_Comm dw[2], sp;
    MPI_Request drq[2];
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &dw[0], &drq[0]));
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &sp));
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &dw[1], &drq[1]));
    OK(MPI_Waitall(2, drq, MPI_STATUSES_IGNORE));
    use(sp, 60);
    use(dw[1], 61);
    use(dw[0], 62);
    OK(MPI_Comm_free(&sp));
    OK(MPI_Comm_free(&dw[0]));
    OK(MPI_Comm_free(&dw[1]));

    if (size > 1)
        test_intercomm(rank);

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("mpi comm_idup ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
