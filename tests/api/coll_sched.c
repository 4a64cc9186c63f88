/* Native nonblocking and persistent collectives (fmpl.h: fmpl_ibarrier,
 * fmpl_ibcast, fmpl_iallreduce, their *_init forms, fmpl_coll_start / wait /
 * test / free): data checked for every root, sizes 0 B .. 1 MiB (eager and
 * rendezvous), persistent requests restarted with new data and the buffers
 * poisoned in between, three outstanding at once completed in reverse
 * order, and the errors (start of a running or non-persistent request,
 * free of a running one, bad root, size, request). */
#include "test_util.h"

#define COUNT 8

static int me, n;

static void bcasts(long size)
{
    unsigned char *buf = malloc((size_t)size + 1);
    CHECK(buf, "no memory");
    for (int root = 0; root < n; root++) {
        fmpl_coll_req r, p;
        for (int k = 0; k < 2; k++) {
            memset(buf, me == root ? 0 : 0xee, (size_t)size);
            if (me == root)
                tu_fill(buf, size, tu_seed(root, k, size, 0));
            CALL(fmpl_ibcast(buf, size, root, FMPL_COMM_WORLD, &r));
            CALL(fmpl_coll_wait(&r));
            CHECK(r == NULL, "a nonblocking request stays after its wait");
            CHECK(tu_find_mismatch_at(buf, 0, size, tu_seed(root, k, size, 0)) < 0,
                  "ibcast of %ld bytes from %d: wrong data", size, root);
        }
        CALL(fmpl_bcast_init(buf, size, root, FMPL_COMM_WORLD, &p));
        for (int k = 0; k < 3; k++) {
            memset(buf, 0xee, (size_t)size); /* poison between instances */
            if (me == root)
                tu_fill(buf, size, tu_seed(root, 10 + k, size, 0));
            CALL(fmpl_coll_start(p));
            int flag = 0;
            while (!flag)
                CALL(fmpl_coll_test(&p, &flag));
            CHECK(p != NULL, "a persistent request was released");
            CHECK(tu_find_mismatch_at(buf, 0, size, tu_seed(root, 10 + k, size, 0)) < 0,
                  "bcast_init instance %d of %ld bytes from %d: wrong data", k, size, root);
        }
        CALL(fmpl_coll_free(&p));
        CHECK(p == NULL, "fmpl_coll_free must set the handle to NULL");
    }
    free(buf);
}

static void allreduces(long count)
{
    double *buf = malloc(sizeof(double) * (size_t)(count + 1));
    CHECK(buf, "no memory");
    fmpl_coll_req r, p;
    for (long i = 0; i < count; i++)
        buf[i] = me + i;
    CALL(fmpl_iallreduce(buf, count, fmpl_dsum, FMPL_COMM_WORLD, &r));
    CALL(fmpl_coll_wait(&r));
    for (long i = 0; i < count; i++)
        CHECK(buf[i] == n * (n - 1) / 2.0 + (double)n * i, "iallreduce[%ld] = %g", i, buf[i]);
    CALL(fmpl_allreduce_init(buf, count, fmpl_dmax, FMPL_COMM_WORLD, &p));
    for (int k = 0; k < 3; k++) {
        for (long i = 0; i < count; i++)
            buf[i] = (me == (k + i) % n) ? 100.0 + k : (double)me;
        CALL(fmpl_coll_start(p));
        CALL(fmpl_coll_wait(&p));
        for (long i = 0; i < count; i++)
            CHECK(buf[i] == 100.0 + k, "allreduce_init[%ld] = %g", i, buf[i]);
    }
    CALL(fmpl_coll_free(&p));
    free(buf);
}

static void outstanding(void)
{
    int a[COUNT], b[COUNT];
    fmpl_coll_req r[3];
    for (int i = 0; i < COUNT; i++) {
        a[i] = me * i;
        b[i] = me == n - 1 ? 7 * i : -1;
    }
    CALL(fmpl_iallreduce(a, COUNT, fmpl_isum, FMPL_COMM_WORLD, &r[0]));
    CALL(fmpl_ibcast(b, sizeof b, n - 1, FMPL_COMM_WORLD, &r[1]));
    CALL(fmpl_ibarrier(FMPL_COMM_WORLD, &r[2]));
    for (int k = 2; k >= 0; k--)
        CALL(fmpl_coll_wait(&r[k]));
    for (int i = 0; i < COUNT; i++) {
        CHECK(a[i] == i * n * (n - 1) / 2, "outstanding iallreduce[%d] = %d", i, a[i]);
        CHECK(b[i] == 7 * i, "outstanding ibcast[%d] = %d", i, b[i]);
    }
}

static void errors(void)
{
    fmpl_coll_req r = NULL, p;
    int x = 0;
    CHECK_RC(fmpl_ibcast(&x, sizeof x, n, FMPL_COMM_WORLD, &r), FMPL_ERR_ROOT, "bad root");
    CHECK_RC(fmpl_ibcast(&x, -1, 0, FMPL_COMM_WORLD, &r), FMPL_ERR_SIZE, "bad size");
    CHECK_RC(fmpl_ibarrier(FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG, "no request");
    CHECK_RC(fmpl_coll_start(NULL), FMPL_ERR_ARG, "no request");
    CALL(fmpl_ibarrier(FMPL_COMM_WORLD, &r));
    CHECK_RC(fmpl_coll_start(r), FMPL_ERR_ARG, "start of a nonblocking request");
    CALL(fmpl_coll_wait(&r));
    /* rank 0 starts a barrier the others join only after its checks */
    CALL(fmpl_barrier_init(FMPL_COMM_WORLD, &p));
    if (me != 0)
        CALL(fmpl_recv(&x, sizeof x, 0, 0, FMPL_COMM_WORLD, NULL));
    CALL(fmpl_coll_start(p));
    if (me == 0) {
        CHECK_RC(fmpl_coll_start(p), FMPL_ERR_BUSY, "start of a running request");
        CHECK_RC(fmpl_coll_free(&p), FMPL_ERR_BUSY, "free of a running request");
        for (int q = 1; q < n; q++)
            CALL(fmpl_send(&x, sizeof x, q, 0, FMPL_COMM_WORLD));
    }
    CALL(fmpl_coll_wait(&p));
    CALL(fmpl_coll_free(&p));
}

int main(void)
{
    tu_init("coll_sched", COUNT);
    me = tu_rank;
    n = tu_size;
    const long sizes[] = {0, 1, 1000, 65536 + 3, 1 << 20};
    tu_sub = "bcast";
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        bcasts(sizes[i]);
    tu_sub = "allreduce";
    allreduces(0);
    allreduces(1);
    allreduces(5000);
    tu_sub = "outstanding";
    outstanding();
    tu_sub = "errors";
    errors();
    return tu_finish();
}
