/* Many nonblocking and persistent data-movement collectives of different
 * sizes outstanding at once on one communicator: gather, scatter,
 * allgather(v), alltoall(v), scan, exscan, reduce_scatter(_block), each
 * with small blocks (inside a cache line), medium ones (several KiB) and
 * large ones (more than FMPL_COLL_AREA, so several rounds or staged
 * chunks), posted in one order, interleaved with blocking collectives
 * (checked at once), completed with one MPI_Waitall over the requests in
 * reverse order; then the same set as persistent requests started 50 times,
 * with new input each time and a poison pattern written into every receive
 * buffer between the completion and the next start.  Every received byte
 * is checked (and exscan's rank 0 buffer must stay poisoned). */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#define POISON (-0x5a5a5a5b)
#define RESTARTS 50

enum { GATHER, SCATTER, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, SCAN, EXSCAN, RSB, RS,
       NKINDS };
static const char *const kind_names[] = {"gather", "scatter", "allgather", "allgatherv",
                                         "alltoall", "alltoallv", "scan", "exscan",
                                         "reduce_scatter_block", "reduce_scatter"};
/* ints per block: 8 bytes, 12 KiB, 320 KiB (FMPL_COLL_AREA is 256 KiB) */
static const int sizes[] = {2, 3000, 80000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int me, np, it;

typedef struct coll {
    int kind, n, id;
    int *sbuf, *rbuf;
    size_t slen, rlen;            /* ints */
    int *scounts, *sdispls, *rcounts, *rdispls;
} coll;

/* A block's count in the v forms: differs per member (and pair). */
static int vcount(const coll *c, int from, int to) { return c->n + (from + 2 * to) % 3; }
static int root_of(const coll *c) { return (c->id + 1) % np; }
static int val(const coll *c, int from, int to, int i)
{
    return from * 1000003 + to * 7919 + i * 7 + it * 131 + c->id * 17 + 1;
}
/* Reduction inputs: sums over the ranks never overflow. */
static int red(const coll *c, int p, int j) { return (p + 1) * ((j + it + c->id) % 1000 + 1); }

static void *alloc_ints(size_t n)
{
    void *p = malloc((n ? n : 1) * sizeof(int));
    CHECK(p != NULL, "no memory");
    return p;
}

static int *counts_array(void) { return alloc_ints((size_t)np); }

/* Packed displacements of counts c[0..np-1]; returns the total. */
static int pack(const int *cnt, int *displ)
{
    int total = 0;
    for (int p = 0; p < np; p++) {
        displ[p] = total;
        total += cnt[p];
    }
    return total;
}

static void setup(coll *c, int kind, int n, int id)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->n = n;
    c->id = id;
    c->scounts = counts_array();
    c->sdispls = counts_array();
    c->rcounts = counts_array();
    c->rdispls = counts_array();
    size_t all = (size_t)n * (size_t)np;
    switch (kind) {
    case GATHER:
        c->slen = (size_t)n;
        c->rlen = all;
        break;
    case SCATTER:
        c->slen = all;
        c->rlen = (size_t)n;
        break;
    case ALLGATHER:
        c->slen = (size_t)n;
        c->rlen = all;
        break;
    case ALLGATHERV:
        for (int p = 0; p < np; p++)
            c->rcounts[p] = vcount(c, p, 0);
        c->slen = (size_t)c->rcounts[me];
        c->rlen = (size_t)pack(c->rcounts, c->rdispls);
        break;
    case ALLTOALL:
        c->slen = c->rlen = all;
        break;
    case ALLTOALLV:
        for (int p = 0; p < np; p++) {
            c->scounts[p] = vcount(c, me, p);
            c->rcounts[p] = vcount(c, p, me);
        }
        c->slen = (size_t)pack(c->scounts, c->sdispls);
        c->rlen = (size_t)pack(c->rcounts, c->rdispls);
        break;
    case SCAN:
    case EXSCAN:
        c->slen = c->rlen = (size_t)n;
        break;
    case RSB:
        c->slen = all;
        c->rlen = (size_t)n;
        break;
    case RS:
        for (int p = 0; p < np; p++)
            c->rcounts[p] = vcount(c, p, 0);
        c->slen = (size_t)pack(c->rcounts, c->rdispls);
        c->rlen = (size_t)c->rcounts[me];
        break;
    }
    c->sbuf = alloc_ints(c->slen);
    c->rbuf = alloc_ints(c->rlen);
}

static void release(coll *c)
{
    free(c->sbuf);
    free(c->rbuf);
    free(c->scounts);
    free(c->sdispls);
    free(c->rcounts);
    free(c->rdispls);
}

/* New input for iteration `it`; the receive buffer poisoned. */
static void fill(coll *c)
{
    for (size_t i = 0; i < c->rlen; i++)
        c->rbuf[i] = POISON;
    switch (c->kind) {
    case GATHER:
    case ALLGATHER:
    case ALLGATHERV:
        for (size_t i = 0; i < c->slen; i++)
            c->sbuf[i] = val(c, me, 0, (int)i);
        break;
    case SCATTER:
        for (int p = 0; p < np; p++)
            for (int i = 0; i < c->n; i++)
                c->sbuf[p * c->n + i] = val(c, me, p, i);
        break;
    case ALLTOALL:
        for (int p = 0; p < np; p++)
            for (int i = 0; i < c->n; i++)
                c->sbuf[p * c->n + i] = val(c, me, p, i);
        break;
    case ALLTOALLV:
        for (int p = 0; p < np; p++)
            for (int i = 0; i < c->scounts[p]; i++)
                c->sbuf[c->sdispls[p] + i] = val(c, me, p, i);
        break;
    default: /* reductions */
        for (size_t j = 0; j < c->slen; j++)
            c->sbuf[j] = red(c, me, (int)j);
    }
}

enum { NONBLOCKING, PERSISTENT, BLOCKING };

static int post(coll *c, int mode, MPI_Request *r)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info i = MPI_INFO_NULL;
    int n = c->n, root = root_of(c);
    switch (c->kind) {
    case GATHER:
        return mode == BLOCKING ? MPI_Gather(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, root, w)
               : mode == NONBLOCKING
                   ? MPI_Igather(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, root, w, r)
                   : MPI_Gather_init(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, root, w, i, r);
    case SCATTER:
        return mode == BLOCKING ? MPI_Scatter(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, root, w)
               : mode == NONBLOCKING
                   ? MPI_Iscatter(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, root, w, r)
                   : MPI_Scatter_init(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, root, w, i, r);
    case ALLGATHER:
        return mode == BLOCKING ? MPI_Allgather(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, w)
               : mode == NONBLOCKING
                   ? MPI_Iallgather(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, w, r)
                   : MPI_Allgather_init(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, w, i, r);
    case ALLGATHERV: {
        int k = (int)c->slen;
        return mode == BLOCKING
                   ? MPI_Allgatherv(c->sbuf, k, MPI_INT, c->rbuf, c->rcounts, c->rdispls, MPI_INT,
                                    w)
               : mode == NONBLOCKING
                   ? MPI_Iallgatherv(c->sbuf, k, MPI_INT, c->rbuf, c->rcounts, c->rdispls,
                                     MPI_INT, w, r)
                   : MPI_Allgatherv_init(c->sbuf, k, MPI_INT, c->rbuf, c->rcounts, c->rdispls,
                                         MPI_INT, w, i, r);
    }
    case ALLTOALL:
        return mode == BLOCKING ? MPI_Alltoall(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, w)
               : mode == NONBLOCKING
                   ? MPI_Ialltoall(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, w, r)
                   : MPI_Alltoall_init(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, w, i, r);
    case ALLTOALLV:
        return mode == BLOCKING
                   ? MPI_Alltoallv(c->sbuf, c->scounts, c->sdispls, MPI_INT, c->rbuf, c->rcounts,
                                   c->rdispls, MPI_INT, w)
               : mode == NONBLOCKING
                   ? MPI_Ialltoallv(c->sbuf, c->scounts, c->sdispls, MPI_INT, c->rbuf,
                                    c->rcounts, c->rdispls, MPI_INT, w, r)
                   : MPI_Alltoallv_init(c->sbuf, c->scounts, c->sdispls, MPI_INT, c->rbuf,
                                        c->rcounts, c->rdispls, MPI_INT, w, i, r);
    case SCAN:
        return mode == BLOCKING ? MPI_Scan(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, w)
               : mode == NONBLOCKING
                   ? MPI_Iscan(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, w, r)
                   : MPI_Scan_init(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, w, i, r);
    case EXSCAN:
        return mode == BLOCKING ? MPI_Exscan(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, w)
               : mode == NONBLOCKING
                   ? MPI_Iexscan(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, w, r)
                   : MPI_Exscan_init(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, w, i, r);
    case RSB:
        return mode == BLOCKING ? MPI_Reduce_scatter_block(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM,
                                                           w)
               : mode == NONBLOCKING
                   ? MPI_Ireduce_scatter_block(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, w, r)
                   : MPI_Reduce_scatter_block_init(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, w, i,
                                                   r);
    default:
        return mode == BLOCKING
                   ? MPI_Reduce_scatter(c->sbuf, c->rbuf, c->rcounts, MPI_INT, MPI_SUM, w)
               : mode == NONBLOCKING
                   ? MPI_Ireduce_scatter(c->sbuf, c->rbuf, c->rcounts, MPI_INT, MPI_SUM, w, r)
                   : MPI_Reduce_scatter_init(c->sbuf, c->rbuf, c->rcounts, MPI_INT, MPI_SUM, w,
                                             i, r);
    }
}

#define EXPECT(c, idx, want)                                                        \
    CHECK((c)->rbuf[idx] == (want), "%s of %d ints (iteration %d): element %zu is %d, " \
          "expected %d", kind_names[(c)->kind], (c)->n, it, (size_t)(idx), (c)->rbuf[idx], \
          (want))

/* Sum over members p in [lo, hi) of red(p, j). */
static int red_sum(const coll *c, int lo, int hi, int j)
{
    int s = 0;
    for (int p = lo; p < hi; p++)
        s += red(c, p, j);
    return s;
}

static void verify(const coll *c)
{
    int n = c->n;
    switch (c->kind) {
    case GATHER:
        if (me != root_of(c)) {
            for (size_t i = 0; i < c->rlen; i++)
                EXPECT(c, i, POISON); /* not significant: not written */
            return;
        }
        for (int p = 0; p < np; p++)
            for (int i = 0; i < n; i++)
                EXPECT(c, (size_t)(p * n + i), val(c, p, 0, i));
        return;
    case SCATTER:
        for (int i = 0; i < n; i++)
            EXPECT(c, i, val(c, root_of(c), me, i));
        return;
    case ALLGATHER:
        for (int p = 0; p < np; p++)
            for (int i = 0; i < n; i++)
                EXPECT(c, (size_t)(p * n + i), val(c, p, 0, i));
        return;
    case ALLGATHERV:
        for (int p = 0; p < np; p++)
            for (int i = 0; i < c->rcounts[p]; i++)
                EXPECT(c, (size_t)(c->rdispls[p] + i), val(c, p, 0, i));
        return;
    case ALLTOALL:
        for (int p = 0; p < np; p++)
            for (int i = 0; i < n; i++)
                EXPECT(c, (size_t)(p * n + i), val(c, p, me, i));
        return;
    case ALLTOALLV:
        for (int p = 0; p < np; p++)
            for (int i = 0; i < c->rcounts[p]; i++)
                EXPECT(c, (size_t)(c->rdispls[p] + i), val(c, p, me, i));
        return;
    case SCAN:
        for (int i = 0; i < n; i++)
            EXPECT(c, i, red_sum(c, 0, me + 1, i));
        return;
    case EXSCAN:
        for (int i = 0; i < n; i++)
            EXPECT(c, i, me == 0 ? POISON : red_sum(c, 0, me, i));
        return;
    case RSB:
        for (int i = 0; i < n; i++)
            EXPECT(c, i, red_sum(c, 0, np, me * n + i));
        return;
    default:
        for (int i = 0; i < c->rcounts[me]; i++)
            EXPECT(c, i, red_sum(c, 0, np, c->rdispls[me] + i));
    }
}

#define NCOLLS (NKINDS * NSIZES)
static coll colls[NCOLLS];
static coll blocking[3];

/* A blocking collective between the posts: it runs after every outstanding
 * one of the same communicator and is complete (and checked) on return. */
static void interleave(int k)
{
    coll *b = &blocking[k % 3];
    fill(b);
    CHECK_OK(post(b, BLOCKING, NULL));
    verify(b);
}

/* Post every collective (mode NONBLOCKING: a new request; PERSISTENT:
 * MPI_Start of reqs), blocking ones in between, then MPI_Waitall over the
 * requests in reverse order, then check everything. */
static void round_of(int mode, MPI_Request *reqs)
{
    MPI_Request rev[NCOLLS];
    for (int k = 0; k < NCOLLS; k++) {
        fill(&colls[k]);
        if (mode == NONBLOCKING)
            CHECK_OK(post(&colls[k], NONBLOCKING, &reqs[k]));
        else
            CHECK_OK(MPI_Start(&reqs[k]));
        if (k % 7 == 3)
            interleave(k);
    }
    for (int k = 0; k < NCOLLS; k++)
        rev[k] = reqs[NCOLLS - 1 - k];
    CHECK_OK(MPI_Waitall(NCOLLS, rev, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NCOLLS; k++) {
        if (mode == NONBLOCKING)
            CHECK(rev[k] == MPI_REQUEST_NULL, "a completed nonblocking request is freed");
        else
            CHECK(rev[k] == reqs[NCOLLS - 1 - k], "a persistent request stays after completion");
        verify(&colls[k]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* Sizes interleaved with kinds, so that neighbours in the posting
     * order differ in both. */
    for (int k = 0; k < NCOLLS; k++)
        setup(&colls[k], k % NKINDS, sizes[(k / NKINDS + k) % NSIZES], k);
    setup(&blocking[0], ALLTOALL, sizes[1], NCOLLS);
    setup(&blocking[1], SCAN, sizes[0], NCOLLS + 1);
    setup(&blocking[2], ALLGATHER, sizes[2], NCOLLS + 2);

    MPI_Request reqs[NCOLLS];
    for (it = 0; it < 3; it++)
        round_of(NONBLOCKING, reqs);

    for (int k = 0; k < NCOLLS; k++)
        CHECK_OK(post(&colls[k], PERSISTENT, &reqs[k]));
    for (it = 0; it < RESTARTS; it++)
        round_of(PERSISTENT, reqs);
    for (int k = 0; k < NCOLLS; k++)
        CHECK_OK(MPI_Request_free(&reqs[k]));

    for (int k = 0; k < NCOLLS; k++)
        release(&colls[k]);
    for (int k = 0; k < 3; k++)
        release(&blocking[k]);
    if (me == 0)
        printf("mpi_nbc_sizes ok on %d ranks\n", np);
    MPI_Finalize();
    return 0;
}
