/* Partitioned point-to-point (MPI_Psend_init, MPI_Precv_init, MPI_Pready,
 * MPI_Pready_range, MPI_Pready_list, MPI_Parrived), every rank sending to
 * the next one and receiving from the previous one at once (at 2 ranks, a
 * pair both ways), the data checked byte for byte:
 *   - send and receive partition counts differing both ways (8 -> 2, 2 -> 8,
 *     5 -> 3 with partitions that do not line up), equal ones, tiny (1 byte,
 *     16 x 1 -> 4 x 4), empty (count 0), large (4 MiB in 512 KiB and 2 MiB
 *     partitions), a vector datatype on either side (and on both, 1 MiB);
 *   - partitions readied forward, in reverse, in random order, with
 *     MPI_Pready_range and with MPI_Pready_list; 10 or more instances with
 *     fresh data each, started with MPI_Start and MPI_Startall, completed
 *     with Wait, Waitall, Testall and Request_get_status + Waitany;
 *   - MPI_Parrived: false for every partition before the sender readies
 *     any (it waits for a message from its receiver; also when the
 *     partitions are empty, in every instance), then polled until each
 *     partition arrives, whose bytes are checked at once; true on an
 *     inactive request and on MPI_REQUEST_NULL;
 *   - a wildcard user receive (MPI_ANY_SOURCE, MPI_ANY_TAG) posted while the
 *     partitions travel gets only the user's message;
 *   - matching in init order: two sends with one tag started in the other
 *     order, and receives initialised in another tag order, on a duplicate
 *     communicator;
 *   - MPI_PROC_NULL; no allocation in MPI_Start or MPI_Pready* after the
 *     first instances (malloc counted, outside AddressSanitizer);
 *   - errors under MPI_ERRORS_RETURN: Pready on an inactive request, on a
 *     receive request, on a non-partitioned request; partitions out of
 *     range, readied twice, an empty range, a list naming one twice (none
 *     readied then); Parrived on a send request; freeing, cancelling or
 *     starting an active request; wildcards and bad arguments at init; a
 *     sender's message longer than the receive buffer (MPI_ERR_TRUNCATE at
 *     the receiver, eager and rendezvous sizes, with what fits delivered);
 *     a shorter one (delivered, its size in the status). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "check.h"

#define TAG 7
#define TAG_GO 8
#define TAG_DONE 9
#define SENTINEL 0xee

static int rank, size, next, prev;
/* The go messages travel apart from the wildcard receive's communicator: a
 * neighbour may send the next instance's go while this one waits. */
static MPI_Comm go_comm;

enum { ORDER_FORWARD, ORDER_REVERSE, ORDER_RANDOM, ORDER_RANGE, ORDER_LIST, NORDERS };

/* One side of a transfer: `partitions` partitions of `count` elements. */
typedef struct side {
    MPI_Datatype type;
    int partitions;
    MPI_Count count;
} side;

static unsigned char byte_of(int from, int it, size_t i)
{
    return (unsigned char)(from * 131 + it * 31 + i * 7 + (i >> 8) + (i >> 16));
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t, &lb, &extent);
    return extent;
}

/* Bytes of memory a side's buffer spans, and of one of its partitions. */
static size_t span_of(const side *s) { return (size_t)(s->partitions * s->count * extent_of(s->type)); }
static size_t part_span(const side *s) { return (size_t)(s->count * extent_of(s->type)); }

static void fill_send(unsigned char *buf, size_t n, int from, int it)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = byte_of(from, it, i);
}

/* What the receive buffer holds once `from`'s instance `it` has arrived:
 * the sender's packed stream unpacked with the receive side's type over
 * the sentinel (a longer message: what fits). */
static void expected(unsigned char *exp, const side *snd, const side *rcv, int from, int it)
{
    size_t sspan = span_of(snd);
    unsigned char *sbuf = malloc(sspan + 1);
    fill_send(sbuf, sspan, from, it);
    int packed_size = 0, pos = 0, upos = 0, rsize = 0;
    MPI_Pack_size((int)(snd->partitions * snd->count), snd->type, MPI_COMM_WORLD, &packed_size);
    unsigned char *packed = malloc((size_t)packed_size + 1);
    CHECK_OK(MPI_Pack(sbuf, (int)(snd->partitions * snd->count), snd->type, packed,
                      packed_size, &pos, MPI_COMM_WORLD));
    memset(exp, SENTINEL, span_of(rcv));
    MPI_Type_size(rcv->type, &rsize);
    int fits = (int)(rcv->partitions * rcv->count * rsize);
    int bytes = pos < fits ? pos : fits;
    /* Whole elements of the receive type, then the rest (none here). */
    CHECK_OK(MPI_Unpack(packed, bytes, &upos, exp, rsize ? bytes / rsize : 0, rcv->type,
                        MPI_COMM_WORLD));
    free(packed);
    free(sbuf);
}

static unsigned lcg(unsigned *s) { return *s = *s * 1103515245u + 12345u; }

static void shuffled(int *perm, int n, unsigned seed)
{
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(lcg(&seed) >> 8) % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static void ready_all(MPI_Request req, int n, int order, int *perm, unsigned seed)
{
    switch (order) {
    case ORDER_FORWARD:
        for (int p = 0; p < n; p++)
            CHECK_OK(MPI_Pready(p, req));
        break;
    case ORDER_REVERSE:
        for (int p = n - 1; p >= 0; p--)
            CHECK_OK(MPI_Pready(p, req));
        break;
    case ORDER_RANDOM:
        shuffled(perm, n, seed);
        for (int i = 0; i < n; i++)
            CHECK_OK(MPI_Pready(perm[i], req));
        break;
    case ORDER_RANGE: /* upper half first */
        if (n > 0)
            CHECK_OK(MPI_Pready_range(n / 2, n - 1, req));
        if (n / 2 > 0)
            CHECK_OK(MPI_Pready_range(0, n / 2 - 1, req));
        break;
    case ORDER_LIST:
        shuffled(perm, n, seed);
        CHECK_OK(MPI_Pready_list(n - n / 2, perm, req));
        CHECK_OK(MPI_Pready_list(n / 2, perm + (n - n / 2), req));
        break;
    }
}

/* Both requests of an instance complete, four ways in turn; *rst gets the
 * receive's status. */
static void complete(MPI_Request *sreq, MPI_Request *rreq, int how, MPI_Status *rst)
{
    MPI_Request both[2] = {*sreq, *rreq};
    MPI_Status st[2];
    int flag = 0, index = -1;
    switch (how) {
    case 0:
        CHECK_OK(MPI_Wait(sreq, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(rreq, rst));
        return;
    case 1:
        CHECK_OK(MPI_Waitall(2, both, st));
        break;
    case 2:
        while (!flag)
            CHECK_OK(MPI_Testall(2, both, &flag, st));
        break;
    default:
        while (!flag)
            CHECK_OK(MPI_Request_get_status(*rreq, &flag, &st[1]));
        CHECK(st[1].MPI_SOURCE == prev && st[1].MPI_TAG == TAG, "get_status %d %d",
              st[1].MPI_SOURCE, st[1].MPI_TAG);
        for (int k = 0; k < 2; k++) {
            MPI_Status one;
            CHECK_OK(MPI_Waitany(2, both, &index, &one));
            st[index] = one;
        }
        CHECK_OK(MPI_Waitany(2, both, &index, MPI_STATUS_IGNORE)); /* both inactive now */
        CHECK(index == MPI_UNDEFINED, "Waitany over inactive requests gave index %d", index);
        break;
    }
    CHECK(both[0] == *sreq && both[1] == *rreq, "a persistent request was freed");
    *rst = st[1];
}

/* `instances` instances of a send to `next` and a receive from `prev`;
 * with count_allocs, MPI_Start, MPI_Startall and MPI_Pready* allocate
 * nothing after the first two. */
static void transfer(const char *what, side snd, side rcv, int instances, int count_allocs)
{
    size_t sspan = span_of(&snd), rspan = span_of(&rcv), pspan = part_span(&rcv);
    unsigned char *sbuf = calloc(sspan + 1, 1), *rbuf = malloc(rspan + 1), *exp = malloc(rspan + 1);
    unsigned char *seen = malloc((size_t)rcv.partitions + 1);
    int *perm = malloc(((size_t)snd.partitions + 1) * sizeof *perm);
    int rsize;
    MPI_Type_size(rcv.type, &rsize);
    MPI_Count total = rcv.partitions * rcv.count * rsize;
    MPI_Request sreq, rreq;
    CHECK_OK(MPI_Psend_init(sbuf, snd.partitions, snd.count, snd.type, next, TAG, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &sreq));
    CHECK_OK(MPI_Precv_init(rbuf, rcv.partitions, rcv.count, rcv.type, prev, TAG, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &rreq));
    int flag = 0;
    if (rcv.partitions > 0) {
        CHECK_OK(MPI_Parrived(rreq, rcv.partitions - 1, &flag));
        CHECK(flag, "%s: Parrived on an inactive request gave false", what);
    }
    long allocs = 0;
    for (int it = 0; it < instances; it++) {
        fill_send(sbuf, sspan, rank, it);
        memset(rbuf, SENTINEL, rspan);
        expected(exp, &snd, &rcv, prev, it);
        long before = alloc_count();
        if (it % 2) {
            MPI_Request both[2] = {rreq, sreq};
            CHECK_OK(MPI_Startall(2, both));
        } else {
            CHECK_OK(MPI_Start(&rreq));
            CHECK_OK(MPI_Start(&sreq));
        }
        long in_calls = alloc_count() - before;
        /* The sender readies nothing before it hears from its receiver
         * (empty partitions too: they arrive with the sender's Pready). */
        for (int j = 0; j < rcv.partitions; j++) {
                CHECK_OK(MPI_Parrived(rreq, j, &flag));
                CHECK(!flag, "%s it %d: partition %d arrived before any was ready", what, it, j);
            }
        int go = it, go_in = -1;
        CHECK_OK(MPI_Sendrecv(&go, 1, MPI_INT, prev, TAG_GO, &go_in, 1, MPI_INT, next, TAG_GO,
                              go_comm, MPI_STATUS_IGNORE));
        CHECK(go_in == it, "%s: go message %d in instance %d", what, go_in, it);
        /* A wildcard receive waiting while the partitions travel. */
        int done_in = -1;
        MPI_Request done_rq;
        CHECK_OK(MPI_Irecv(&done_in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                           &done_rq));
        before = alloc_count();
        ready_all(sreq, snd.partitions, it % NORDERS, perm, (unsigned)(rank * 7919 + it));
        in_calls += alloc_count() - before;
        if (it >= 2)
            allocs += in_calls;
        /* Each partition's bytes are there as soon as Parrived says so. */
        memset(seen, 0, (size_t)rcv.partitions);
        for (int left = rcv.partitions; left > 0;)
            for (int j = 0; j < rcv.partitions; j++) {
                if (seen[j])
                    continue;
                CHECK_OK(MPI_Parrived(rreq, j, &flag));
                if (!flag)
                    continue;
                seen[j] = 1;
                left--;
                for (size_t b = 0; b < pspan; b++)
                    CHECK(rbuf[j * pspan + b] == exp[j * pspan + b],
                          "%s it %d: partition %d byte %zu is 0x%x, expected 0x%x", what, it, j,
                          b, rbuf[j * pspan + b], exp[j * pspan + b]);
            }
        MPI_Status rst;
        complete(&sreq, &rreq, it % 4, &rst);
        int got = -1;
        MPI_Get_count(&rst, MPI_BYTE, &got);
        CHECK(rst.MPI_SOURCE == prev && rst.MPI_TAG == TAG && got == total,
              "%s it %d: status source %d tag %d count %d, expected %d %d %lld", what, it,
              rst.MPI_SOURCE, rst.MPI_TAG, got, prev, TAG, (long long)total);
        for (size_t b = 0; b < rspan; b++)
            CHECK(rbuf[b] == exp[b], "%s it %d: byte %zu is 0x%x, expected 0x%x", what, it, b,
                  rbuf[b], exp[b]);
        if (rcv.partitions > 0) {
            CHECK_OK(MPI_Parrived(rreq, 0, &flag));
            CHECK(flag, "%s: Parrived after completion gave false", what);
        }
        int done = rank * 1000 + it;
        CHECK_OK(MPI_Send(&done, 1, MPI_INT, next, TAG_DONE, MPI_COMM_WORLD));
        MPI_Status dst;
        CHECK_OK(MPI_Wait(&done_rq, &dst));
        CHECK(dst.MPI_SOURCE == prev && dst.MPI_TAG == TAG_DONE && done_in == prev * 1000 + it,
              "%s it %d: the wildcard receive got %d from %d tag %d", what, it, done_in,
              dst.MPI_SOURCE, dst.MPI_TAG);
    }
    if (count_allocs && ALLOC_COUNTING)
        CHECK(allocs == 0, "%s: MPI_Start / MPI_Pready allocated %ld times after warm-up", what,
              allocs);
    CHECK_OK(MPI_Request_free(&sreq));
    CHECK_OK(MPI_Request_free(&rreq));
    CHECK(sreq == MPI_REQUEST_NULL && rreq == MPI_REQUEST_NULL, "%s: freed handles not null",
          what);
    free(perm);
    free(seen);
    free(exp);
    free(rbuf);
    free(sbuf);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* The k-th send initialised towards (dest, tag) meets the k-th receive
 * initialised from (source, tag), whatever order they start in. */
static void init_order(void)
{
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    int a[4], b[4], c[4], ra[4], rb[4], rc[4];
    MPI_Request s[3], r[3];
    CHECK_OK(MPI_Psend_init(a, 2, 2, MPI_INT, next, 5, dup, MPI_INFO_NULL, &s[0]));
    CHECK_OK(MPI_Psend_init(b, 2, 2, MPI_INT, next, 5, dup, MPI_INFO_NULL, &s[1]));
    CHECK_OK(MPI_Psend_init(c, 1, 4, MPI_INT, next, 6, dup, MPI_INFO_NULL, &s[2]));
    CHECK_OK(MPI_Precv_init(rc, 4, 1, MPI_INT, prev, 6, dup, MPI_INFO_NULL, &r[2]));
    CHECK_OK(MPI_Precv_init(ra, 1, 4, MPI_INT, prev, 5, dup, MPI_INFO_NULL, &r[0]));
    CHECK_OK(MPI_Precv_init(rb, 4, 1, MPI_INT, prev, 5, dup, MPI_INFO_NULL, &r[1]));
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 4; i++) {
            a[i] = rank * 10000 + it * 1000 + 100 + i;
            b[i] = rank * 10000 + it * 1000 + 200 + i;
            c[i] = rank * 10000 + it * 1000 + 300 + i;
            ra[i] = rb[i] = rc[i] = -1;
        }
        CHECK_OK(MPI_Start(&r[1]));
        CHECK_OK(MPI_Start(&s[2]));
        CHECK_OK(MPI_Start(&s[1]));
        CHECK_OK(MPI_Start(&r[2]));
        CHECK_OK(MPI_Start(&s[0]));
        CHECK_OK(MPI_Start(&r[0]));
        CHECK_OK(MPI_Pready_range(0, 1, s[1]));
        CHECK_OK(MPI_Pready(0, s[2]));
        CHECK_OK(MPI_Pready(1, s[0]));
        CHECK_OK(MPI_Pready(0, s[0]));
        CHECK_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        CHECK_OK(MPI_Waitall(3, s, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++)
            CHECK(ra[i] == prev * 10000 + it * 1000 + 100 + i &&
                      rb[i] == prev * 10000 + it * 1000 + 200 + i &&
                      rc[i] == prev * 10000 + it * 1000 + 300 + i,
                  "init order, it %d, element %d: %d %d %d", it, i, ra[i], rb[i], rc[i]);
    }
    for (int k = 0; k < 3; k++) {
        CHECK_OK(MPI_Request_free(&s[k]));
        CHECK_OK(MPI_Request_free(&r[k]));
    }
    CHECK_OK(MPI_Comm_free(&dup));
}

static void proc_null(void)
{
    int buf[8] = {0}, rbuf[8], flag = 0, got = -1;
    MPI_Request s, r;
    MPI_Status st;
    CHECK_OK(MPI_Psend_init(buf, 4, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &s));
    CHECK_OK(MPI_Precv_init(rbuf, 4, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &r));
    for (int it = 0; it < 2; it++) {
        CHECK_OK(MPI_Start(&s));
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Pready_range(0, 3, s));
        CHECK_CLASS(MPI_Pready(2, s), MPI_ERR_ARG);
        CHECK_OK(MPI_Parrived(r, 2, &flag));
        CHECK(flag, "MPI_PROC_NULL: partition not arrived");
        CHECK_OK(MPI_Wait(&r, &st));
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && got == 0,
              "MPI_PROC_NULL status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, got);
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }
    CHECK_OK(MPI_Request_free(&s));
    CHECK_OK(MPI_Request_free(&r));
}

static void errors(void)
{
    int buf[16], rbuf[16], flag = 0;
    MPI_Request s, r, other;
    for (int i = 0; i < 16; i++)
        buf[i] = rank * 100 + i;
    CHECK_OK(MPI_Psend_init(buf, 4, 4, MPI_INT, next, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    CHECK_OK(MPI_Precv_init(rbuf, 4, 4, MPI_INT, prev, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    /* Inactive. */
    CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Pready_range(0, 3, s), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Pready_list(1, (int[]){0}, s), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Parrived(r, 4, &flag), MPI_ERR_ARG);
    flag = 0;
    CHECK_OK(MPI_Parrived(r, 3, &flag));
    CHECK(flag, "Parrived on an inactive request gave false");
    flag = 0;
    CHECK_OK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
    CHECK(flag, "Parrived on MPI_REQUEST_NULL gave false");
    CHECK_CLASS(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST);
    /* Active. */
    CHECK_OK(MPI_Start(&s));
    CHECK_OK(MPI_Start(&r));
    CHECK_CLASS(MPI_Start(&s), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Pready(4, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready(-1, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready_range(2, 1, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready_range(2, 4, s), MPI_ERR_ARG);          /* readies none */
    CHECK_CLASS(MPI_Pready_list(3, (int[]){1, 3, 1}, s), MPI_ERR_ARG); /* readies none */
    CHECK_CLASS(MPI_Pready_list(2, (int[]){0, 9}, s), MPI_ERR_ARG);    /* readies none */
    CHECK_CLASS(MPI_Parrived(r, -1, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Request_free(&s), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Request_free(&r), MPI_ERR_REQUEST);
    CHECK(s != MPI_REQUEST_NULL && r != MPI_REQUEST_NULL, "an active request was freed");
    CHECK_CLASS(MPI_Cancel(&r), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Cancel(&s), MPI_ERR_REQUEST);
    CHECK_OK(MPI_Pready(1, s));
    CHECK_CLASS(MPI_Pready(1, s), MPI_ERR_ARG);
    CHECK_OK(MPI_Pready_list(2, (int[]){3, 0}, s));
    CHECK_CLASS(MPI_Pready_range(0, 0, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready_list(1, (int[]){3}, s), MPI_ERR_ARG);
    CHECK_OK(MPI_Pready_range(2, 2, s));
    CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++)
        CHECK(rbuf[i] == prev * 100 + i, "errors: element %d is %d", i, rbuf[i]);
    /* Inactive again. */
    CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST);
    /* Not partitioned. */
    CHECK_OK(MPI_Irecv(rbuf, 1, MPI_INT, prev, 99, MPI_COMM_WORLD, &other));
    CHECK_CLASS(MPI_Pready(0, other), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Parrived(other, 0, &flag), MPI_ERR_REQUEST);
    CHECK_OK(MPI_Cancel(&other));
    CHECK_OK(MPI_Wait(&other, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Request_free(&s));
    CHECK_OK(MPI_Request_free(&r));
    /* Arguments at init. */
    MPI_Request bad = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Precv_init(rbuf, 4, 4, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &bad), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Precv_init(rbuf, 4, 4, MPI_INT, prev, MPI_ANY_TAG, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &bad), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Psend_init(buf, -1, 4, MPI_INT, next, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &bad), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Psend_init(buf, 4, -1, MPI_INT, next, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &bad), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Psend_init(buf, 4, 4, MPI_INT, size, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &bad), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Psend_init(buf, 4, 4, MPI_INT, next, -5, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &bad), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Psend_init(buf, 4, 4, MPI_DATATYPE_NULL, next, TAG, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &bad), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Psend_init(buf, 4, 4, MPI_INT, next, TAG, MPI_COMM_NULL, MPI_INFO_NULL,
                               &bad), MPI_ERR_COMM);
    CHECK(bad == MPI_REQUEST_NULL, "a failed init returned a request");
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A send of snd_parts x snd_count ints into a receive of rcv_parts x
 * rcv_count ints: a longer message fails with MPI_ERR_TRUNCATE at the
 * receiver (what fits delivered), a shorter one is delivered; the sender
 * completes either way; twice, the second instance after the error. */
static void mismatch(int snd_parts, int snd_count, int rcv_parts, int rcv_count)
{
    int stotal = snd_parts * snd_count, rtotal = rcv_parts * rcv_count;
    int *sbuf = calloc((size_t)stotal, sizeof(int)), *rbuf = calloc((size_t)rtotal, sizeof(int));
    MPI_Request s, r;
    CHECK_OK(MPI_Psend_init(sbuf, snd_parts, snd_count, MPI_INT, next, TAG, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &s));
    CHECK_OK(MPI_Precv_init(rbuf, rcv_parts, rcv_count, MPI_INT, prev, TAG, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &r));
    int delivered = stotal < rtotal ? stotal : rtotal;
    for (int it = 0; it < 2; it++) {
        for (int i = 0; i < stotal; i++)
            sbuf[i] = rank * 1000003 + it * 7919 + i;
        for (int i = 0; i < rtotal; i++)
            rbuf[i] = -1;
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Start(&s));
        CHECK_OK(MPI_Pready_range(0, snd_parts - 1, s));
        MPI_Status st;
        int rc = MPI_Wait(&r, &st);
        CHECK_CLASS(rc, stotal > rtotal ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        int got = -1;
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(got == delivered && st.MPI_SOURCE == prev, "mismatch %dx%d -> %dx%d: count %d",
              snd_parts, snd_count, rcv_parts, rcv_count, got);
        for (int i = 0; i < rtotal; i++)
            CHECK(rbuf[i] == (i < delivered ? prev * 1000003 + it * 7919 + i : -1),
                  "mismatch %dx%d -> %dx%d it %d: element %d is %d", snd_parts, snd_count,
                  rcv_parts, rcv_count, it, i, rbuf[i]);
    }
    CHECK_OK(MPI_Request_free(&s));
    CHECK_OK(MPI_Request_free(&r));
    free(sbuf);
    free(rbuf);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    MPI_Comm_dup(MPI_COMM_WORLD, &go_comm);

    MPI_Datatype vec; /* 4 blocks of 2 ints, stride 3: 8 ints in 44 bytes */
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);

    transfer("8 -> 2", (side){MPI_INT, 8, 64}, (side){MPI_INT, 2, 256}, 12, 1);
    transfer("2 -> 8", (side){MPI_INT, 2, 256}, (side){MPI_INT, 8, 64}, 12, 1);
    transfer("5 -> 3", (side){MPI_CHAR, 5, 12}, (side){MPI_CHAR, 3, 20}, 10, 0);
    transfer("4 x 1000 doubles", (side){MPI_DOUBLE, 4, 1000}, (side){MPI_DOUBLE, 4, 1000}, 10,
             1);
    transfer("1 byte", (side){MPI_CHAR, 1, 1}, (side){MPI_CHAR, 1, 1}, 10, 0);
    transfer("16 x 1 -> 4 x 4", (side){MPI_CHAR, 16, 1}, (side){MPI_CHAR, 4, 4}, 10, 0);
    transfer("empty", (side){MPI_INT, 4, 0}, (side){MPI_INT, 2, 0}, 10, 0);
    transfer("vector -> int", (side){vec, 4, 2}, (side){MPI_INT, 8, 8}, 10, 1);
    transfer("int -> vector", (side){MPI_INT, 2, 32}, (side){vec, 8, 1}, 10, 1);
    transfer("4 MiB, 8 -> 2", (side){MPI_BYTE, 8, 512 * 1024}, (side){MPI_BYTE, 2, 2 << 20}, 3, 0);
    transfer("4 MiB, 2 -> 8", (side){MPI_BYTE, 2, 2 << 20}, (side){MPI_BYTE, 8, 512 * 1024}, 3, 0);
    transfer("1 MiB vector, 4 -> 16", (side){vec, 4, 8192}, (side){vec, 16, 2048}, 3, 0);
    init_order();
    proc_null();
    errors();
    mismatch(8, 4, 2, 8);           /* 128 bytes into 64: eager, truncated */
    mismatch(8, 65536, 2, 65536);   /* 2 MiB into 512 KiB: rendezvous, truncated */
    mismatch(2, 4, 4, 4);           /* 32 bytes into 64: delivered */

    MPI_Type_free(&vec);
    MPI_Comm_free(&go_comm);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi partitioned ok on %d ranks (malloc counted: %s)\n", size,
               ALLOC_COUNTING ? "yes" : "no");
    MPI_Finalize();
    return 0;
}
