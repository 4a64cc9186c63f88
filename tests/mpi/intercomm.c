/* Intercommunicators: creation from two halves of MPI_COMM_WORLD (block and
 * interleaved splits, odd sizes too), point-to-point in both directions
 * (ranks name remote processes; ANY_SOURCE; statuses; probes, Mprobe,
 * persistent, Sendrecv, Bsend, Ssend; a rendezvous-sized message), every
 * blocking collective with MPI_ROOT / MPI_PROC_NULL roots, merge with both
 * orderings, dup/split/create/compare/free, names and attributes, and the
 * operations an intercommunicator refuses.  Data is checked element by
 * element. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int wrank, wsize;

/* The split: groups by color; *lworld / *rworld: the world ranks of the
 * local and remote groups in group order. */
typedef struct setup {
    int color, lsize, rsize, lrank;
    int lworld[64], rworld[64];
    MPI_Comm local, inter;
} setup;

static int color_of(int w, int mode) { return mode == 0 ? w >= (wsize + 1) / 2 : w % 2; }

static void make(setup *s, int mode)
{
    s->color = color_of(wrank, mode);
    s->lsize = s->rsize = 0;
    for (int w = 0; w < wsize; w++) {
        if (color_of(w, mode) == s->color)
            s->lworld[s->lsize++] = w;
        else
            s->rworld[s->rsize++] = w;
    }
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, s->color, wrank, &s->local));
    CHECK_OK(MPI_Intercomm_create(s->local, 0, MPI_COMM_WORLD, s->rworld[0], 77, &s->inter));
    CHECK_OK(MPI_Comm_set_errhandler(s->inter, MPI_ERRORS_RETURN));
    MPI_Comm_rank(s->local, &s->lrank);
}

static int value(int from, int to, int i) { return (int)((unsigned)from * 1000003u + (unsigned)to * 1009u + (unsigned)i) & 0x3fffffff; }

static void check_queries(const setup *s)
{
    int flag, size, rank, rsize;
    CHECK_OK(MPI_Comm_test_inter(s->inter, &flag));
    CHECK(flag == 1, "test_inter %d", flag);
    CHECK_OK(MPI_Comm_test_inter(s->local, &flag));
    CHECK(flag == 0, "test_inter on an intracomm %d", flag);
    CHECK_OK(MPI_Comm_size(s->inter, &size));
    CHECK_OK(MPI_Comm_rank(s->inter, &rank));
    CHECK_OK(MPI_Comm_remote_size(s->inter, &rsize));
    CHECK(size == s->lsize && rank == s->lrank && rsize == s->rsize, "size %d rank %d remote %d",
          size, rank, rsize);
    MPI_Group wg, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    CHECK_OK(MPI_Comm_group(s->inter, &lg));
    CHECK_OK(MPI_Comm_remote_group(s->inter, &rg));
    int ranks[64], out[64];
    for (int i = 0; i < 64; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(lg, s->lsize, ranks, wg, out);
    for (int i = 0; i < s->lsize; i++)
        CHECK(out[i] == s->lworld[i], "local group %d: %d", i, out[i]);
    MPI_Group_translate_ranks(rg, s->rsize, ranks, wg, out);
    for (int i = 0; i < s->rsize; i++)
        CHECK(out[i] == s->rworld[i], "remote group %d: %d", i, out[i]);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    CHECK_CLASS(MPI_Comm_remote_size(s->local, &rsize), MPI_ERR_COMM);
}

static void check_p2p(const setup *s, MPI_Comm ic)
{
    int me = wrank;
    /* Directed: to every remote rank, tag = my local rank. */
    MPI_Request rq[128];
    int sbuf[64][4], rbuf[64][4];
    for (int r = 0; r < s->rsize; r++) {
        for (int i = 0; i < 4; i++)
            sbuf[r][i] = value(me, s->rworld[r], i);
        CHECK_OK(MPI_Isend(sbuf[r], 4, MPI_INT, r, s->lrank, ic, &rq[r]));
    }
    for (int r = 0; r < s->rsize; r++) {
        MPI_Status st;
        CHECK_OK(MPI_Recv(rbuf[r], 4, MPI_INT, r, r, ic, &st));
        CHECK(st.MPI_SOURCE == r && st.MPI_TAG == r, "status %d %d", st.MPI_SOURCE, st.MPI_TAG);
        for (int i = 0; i < 4; i++)
            CHECK(rbuf[r][i] == value(s->rworld[r], me, i), "from %d [%d] = %d", r, i,
                  rbuf[r][i]);
    }
    CHECK_OK(MPI_Waitall(s->rsize, rq, MPI_STATUSES_IGNORE));

    /* ANY_SOURCE / ANY_TAG: each remote process once. */
    for (int r = 0; r < s->rsize; r++)
        CHECK_OK(MPI_Send(sbuf[r], 4, MPI_INT, r, 100 + s->lrank, ic));
    int seen[64] = {0};
    for (int k = 0; k < s->rsize; k++) {
        MPI_Status st;
        int got[4], count;
        CHECK_OK(MPI_Recv(got, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &st));
        int src = st.MPI_SOURCE;
        CHECK(src >= 0 && src < s->rsize && !seen[src], "any source gave %d tag %d (k %d)", src, st.MPI_TAG, k);
        seen[src] = 1;
        CHECK(st.MPI_TAG == 100 + src, "tag %d from %d", st.MPI_TAG, src);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == 4, "count %d", count);
        for (int i = 0; i < 4; i++)
            CHECK(got[i] == value(s->rworld[src], me, i), "any-source data");
    }

    /* Everybody has received before the wildcards below could steal. */
    CHECK_OK(MPI_Barrier(ic));
    /* Probe, Mprobe, Sendrecv, persistent, Ssend, Bsend between local rank
     * 0 of each side (and the rest on the side with more members idle). */
    if (s->lrank == 0) {
        int x[3] = {me, me + 1, me + 2}, y[3];
        MPI_Status st;
        CHECK_OK(MPI_Send(x, 3, MPI_INT, 0, 7, ic));
        CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, 7, ic, &st));
        CHECK(st.MPI_SOURCE == 0, "probe source %d", st.MPI_SOURCE);
        CHECK_OK(MPI_Recv(y, 3, MPI_INT, 0, 7, ic, MPI_STATUS_IGNORE));
        CHECK(y[0] == s->rworld[0] && y[2] == s->rworld[0] + 2, "probed data");

        CHECK_OK(MPI_Send(x, 3, MPI_INT, 0, 8, ic));
        MPI_Message msg;
        CHECK_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &msg, &st));
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 8, "mprobe %d %d", st.MPI_SOURCE, st.MPI_TAG);
        CHECK_OK(MPI_Mrecv(y, 3, MPI_INT, &msg, &st));
        CHECK(st.MPI_SOURCE == 0 && y[1] == s->rworld[0] + 1, "mrecv");

        CHECK_OK(MPI_Sendrecv(x, 3, MPI_INT, 0, 9, y, 3, MPI_INT, MPI_ANY_SOURCE, 9, ic, &st));
        CHECK(st.MPI_SOURCE == 0 && y[0] == s->rworld[0], "sendrecv");

        MPI_Request ps[2];
        CHECK_OK(MPI_Send_init(x, 3, MPI_INT, 0, 10, ic, &ps[0]));
        CHECK_OK(MPI_Recv_init(y, 3, MPI_INT, 0, 10, ic, &ps[1]));
        for (int round = 0; round < 2; round++) {
            y[0] = -1;
            CHECK_OK(MPI_Startall(2, ps));
            CHECK_OK(MPI_Waitall(2, ps, MPI_STATUSES_IGNORE));
            CHECK(y[0] == s->rworld[0], "persistent round %d", round);
        }
        MPI_Request_free(&ps[0]);
        MPI_Request_free(&ps[1]);

        int bsize = 1024 + MPI_BSEND_OVERHEAD;
        void *bbuf = malloc((size_t)bsize);
        CHECK_OK(MPI_Buffer_attach(bbuf, bsize));
        CHECK_OK(MPI_Bsend(x, 3, MPI_INT, 0, 11, ic));
        CHECK_OK(MPI_Recv(y, 3, MPI_INT, 0, 11, ic, &st));
        CHECK(st.MPI_SOURCE == 0 && y[2] == s->rworld[0] + 2, "bsend");
        CHECK_OK(MPI_Buffer_detach(&bbuf, &bsize));
        free(bbuf);

        /* Ssend A -> B, and a large (rendezvous) message B -> A. */
        enum { BIG = 300000 };
        unsigned char *big = malloc(BIG);
        if (s->color == 0) {
            CHECK_OK(MPI_Ssend(x, 3, MPI_INT, 0, 12, ic));
            CHECK_OK(MPI_Recv(big, BIG, MPI_BYTE, MPI_ANY_SOURCE, 13, ic, &st));
            CHECK(st.MPI_SOURCE == 0, "big source");
            for (int i = 0; i < BIG; i++)
                CHECK(big[i] == (unsigned char)(i * 7 + s->rworld[0]), "big byte %d", i);
        } else {
            CHECK_OK(MPI_Recv(y, 3, MPI_INT, 0, 12, ic, MPI_STATUS_IGNORE));
            CHECK(y[0] == s->rworld[0], "ssend");
            for (int i = 0; i < BIG; i++)
                big[i] = (unsigned char)(i * 7 + me);
            CHECK_OK(MPI_Send(big, BIG, MPI_BYTE, 0, 13, ic));
        }
        free(big);
        /* Errors: no such remote rank. */
        CHECK_CLASS(MPI_Send(x, 1, MPI_INT, s->rsize, 0, ic), MPI_ERR_RANK);
    }
    /* MPI_PROC_NULL */
    MPI_Status st;
    int z = 5;
    CHECK_OK(MPI_Recv(&z, 1, MPI_INT, MPI_PROC_NULL, 0, ic, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && z == 5, "proc null");
}

/* Rooted collectives: each member of group `rootcolor` takes a turn as
 * root. */
static int root_arg(const setup *s, int rootcolor, int root)
{
    if (s->color == rootcolor)
        return s->lrank == root ? MPI_ROOT : MPI_PROC_NULL;
    return root;
}

static void check_rooted(const setup *s, MPI_Comm ic, int rootcolor)
{
    int me = wrank, nroots = s->color == rootcolor ? s->lsize : s->rsize;
    int rootside = s->color == rootcolor;
    for (int root = 0; root < nroots; root++) {
        int ra = root_arg(s, rootcolor, root);
        int rootw = rootside ? s->lworld[root] : s->rworld[root];
        int *big = malloc(64 * 64 * sizeof(int)), counts[64], displs[64];
        /* Bcast */
        int b[5];
        for (int i = 0; i < 5; i++)
            b[i] = ra == MPI_ROOT ? value(me, 0, i) : -1;
        CHECK_OK(MPI_Bcast(b, 5, MPI_INT, ra, ic));
        for (int i = 0; i < 5; i++)
            CHECK(b[i] == (ra == MPI_PROC_NULL ? -1 : value(rootw, 0, i)), "bcast %d", i);
        /* Gather: 3 each */
        int mine[64];
        for (int i = 0; i < 64; i++)
            mine[i] = value(me, rootw, i);
        for (int i = 0; i < 64 * 64; i++)
            big[i] = -1;
        CHECK_OK(MPI_Gather(mine, 3, MPI_INT, big, 3, MPI_INT, ra, ic));
        if (ra == MPI_ROOT)
            for (int r = 0; r < s->rsize; r++)
                for (int i = 0; i < 3; i++)
                    CHECK(big[r * 3 + i] == value(s->rworld[r], me, i), "gather %d %d", r, i);
        /* Gatherv: r + 1 from remote r, at displacement 10 * r */
        for (int r = 0; r < 64; r++) {
            counts[r] = r + 1;
            displs[r] = 10 * r;
        }
        CHECK_OK(MPI_Gatherv(mine, s->lrank + 1, MPI_INT, big, counts, displs, MPI_INT, ra, ic));
        if (ra == MPI_ROOT)
            for (int r = 0; r < s->rsize; r++)
                for (int i = 0; i <= r; i++)
                    CHECK(big[10 * r + i] == value(s->rworld[r], me, i), "gatherv %d %d", r, i);
        /* Scatter: 2 to each remote */
        for (int r = 0; r < s->rsize; r++)
            for (int i = 0; i < 2; i++)
                big[r * 2 + i] = ra == MPI_ROOT ? value(me, s->rworld[r], i) : -1;
        int got[64];
        for (int i = 0; i < 64; i++)
            got[i] = -7;
        CHECK_OK(MPI_Scatter(big, 2, MPI_INT, got, 2, MPI_INT, ra, ic));
        if (ra >= 0)
            for (int i = 0; i < 2; i++)
                CHECK(got[i] == value(rootw, me, i), "scatter %d: %d", i, got[i]);
        else
            CHECK(got[0] == -7, "scatter touched a root-group buffer");
        /* Scatterv: r + 1 to remote r from displacement 10 * r */
        for (int r = 0; r < s->rsize; r++)
            for (int i = 0; i <= r; i++)
                big[10 * r + i] = ra == MPI_ROOT ? value(me, s->rworld[r], i) : -1;
        CHECK_OK(MPI_Scatterv(big, counts, displs, MPI_INT, got, s->lrank + 1, MPI_INT, ra, ic));
        if (ra >= 0)
            for (int i = 0; i <= s->lrank; i++)
                CHECK(got[i] == value(rootw, me, i), "scatterv %d", i);
        /* Reduce: sum of value(w, rootw, i) over the non-root group */
        long long lin[4], lout[4];
        for (int i = 0; i < 4; i++) {
            lin[i] = value(me, rootw, i);
            lout[i] = -1;
        }
        CHECK_OK(MPI_Reduce(lin, lout, 4, MPI_LONG_LONG, MPI_SUM, ra, ic));
        if (ra == MPI_ROOT)
            for (int i = 0; i < 4; i++) {
                long long want = 0;
                for (int r = 0; r < s->rsize; r++)
                    want += value(s->rworld[r], rootw, i);
                CHECK(lout[i] == want, "reduce %d: %lld vs %lld", i, lout[i], want);
            }
        else
            CHECK(lout[0] == -1, "reduce wrote a non-root buffer");
        free(big);
    }
    /* Root argument errors */
    int x = 0;
    CHECK_CLASS(MPI_Bcast(&x, 1, MPI_INT, s->rsize, ic), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast(&x, 1, MPI_INT, -7, ic), MPI_ERR_ROOT);
}

static void check_all(const setup *s, MPI_Comm ic)
{
    int me = wrank, ls = s->lsize, rs = s->rsize;
    CHECK_OK(MPI_Barrier(ic));
    int mine[64], *out = malloc(64 * 64 * sizeof(int)), counts[64], displs[64];
    /* Allgather: 2 each */
    for (int i = 0; i < 64; i++)
        mine[i] = value(me, 0, i);
    CHECK_OK(MPI_Allgather(mine, 2, MPI_INT, out, 2, MPI_INT, ic));
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < 2; i++)
            CHECK(out[r * 2 + i] == value(s->rworld[r], 0, i), "allgather %d %d", r, i);
    /* Allgatherv: r + 1 from remote r at 8 r */
    for (int r = 0; r < 64; r++) {
        counts[r] = r + 1;
        displs[r] = 8 * r;
    }
    CHECK_OK(MPI_Allgatherv(mine, s->lrank + 1, MPI_INT, out, counts, displs, MPI_INT, ic));
    for (int r = 0; r < rs; r++)
        for (int i = 0; i <= r; i++)
            CHECK(out[8 * r + i] == value(s->rworld[r], 0, i), "allgatherv %d %d", r, i);
    /* Alltoall: 3 to each */
    int *in = malloc(64 * 64 * sizeof(int));
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < 3; i++)
            in[r * 3 + i] = value(me, s->rworld[r], i);
    CHECK_OK(MPI_Alltoall(in, 3, MPI_INT, out, 3, MPI_INT, ic));
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < 3; i++)
            CHECK(out[r * 3 + i] == value(s->rworld[r], me, i), "alltoall %d %d", r, i);
    /* Alltoallv: to remote r, (my local rank + r + 1) ints at 16 r */
    int scounts[64], sdispls[64], rcounts[64], rdispls[64];
    for (int r = 0; r < rs; r++) {
        scounts[r] = s->lrank + r + 1;
        sdispls[r] = 16 * r;
        rcounts[r] = r + s->lrank + 1;
        rdispls[r] = 16 * (rs - 1 - r);
        for (int i = 0; i < scounts[r]; i++)
            in[16 * r + i] = value(me, s->rworld[r], i);
    }
    CHECK_OK(MPI_Alltoallv(in, scounts, sdispls, MPI_INT, out, rcounts, rdispls, MPI_INT, ic));
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < rcounts[r]; i++)
            CHECK(out[rdispls[r] + i] == value(s->rworld[r], me, i), "alltoallv %d %d", r, i);
    /* Alltoallw: ints to everybody, received as pairs of shorts... keep
     * the types simple and the displacements in bytes */
    MPI_Datatype st[64], rt[64];
    for (int r = 0; r < rs; r++) {
        st[r] = rt[r] = MPI_INT;
        sdispls[r] = 16 * r * (int)sizeof(int);
        rdispls[r] = 16 * (rs - 1 - r) * (int)sizeof(int);
    }
    CHECK_OK(MPI_Alltoallw(in, scounts, sdispls, st, out, rcounts, rdispls, rt, ic));
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < rcounts[r]; i++)
            CHECK(out[16 * (rs - 1 - r) + i] == value(s->rworld[r], me, i), "alltoallw");
    /* Allreduce: sums and max over the remote group */
    double din[3], dout[3];
    for (int i = 0; i < 3; i++)
        din[i] = me * 10.0 + i;
    CHECK_OK(MPI_Allreduce(din, dout, 3, MPI_DOUBLE, MPI_SUM, ic));
    for (int i = 0; i < 3; i++) {
        double want = 0;
        for (int r = 0; r < rs; r++)
            want += s->rworld[r] * 10.0 + i;
        CHECK(dout[i] == want, "allreduce %d: %g vs %g", i, dout[i], want);
    }
    int imax;
    CHECK_OK(MPI_Allreduce(&me, &imax, 1, MPI_INT, MPI_MAX, ic));
    CHECK(imax == s->rworld[rs - 1], "allreduce max %d", imax);
    /* Reduce_scatter_block: T = 12 elements in both groups */
    enum { T = 12 };
    int vin[T], vout[T];
    for (int i = 0; i < T; i++)
        vin[i] = me * 100 + i;
    int rc = T / ls;
    CHECK_OK(MPI_Reduce_scatter_block(vin, vout, rc, MPI_INT, MPI_SUM, ic));
    for (int j = 0; j < rc; j++) {
        int want = 0;
        for (int r = 0; r < rs; r++)
            want += s->rworld[r] * 100 + s->lrank * rc + j;
        CHECK(vout[j] == want, "reduce_scatter_block %d: %d vs %d", j, vout[j], want);
    }
    /* Reduce_scatter: counts 1, 2, ... and the rest to the last */
    int rcs[64], sum = 0;
    for (int k = 0; k < ls; k++) {
        rcs[k] = k == ls - 1 ? T - sum : k + 1;
        sum += rcs[k];
    }
    int at = 0;
    for (int k = 0; k < s->lrank; k++)
        at += rcs[k];
    CHECK_OK(MPI_Reduce_scatter(vin, vout, rcs, MPI_INT, MPI_SUM, ic));
    for (int j = 0; j < rcs[s->lrank]; j++) {
        int want = 0;
        for (int r = 0; r < rs; r++)
            want += s->rworld[r] * 100 + at + j;
        CHECK(vout[j] == want, "reduce_scatter %d", j);
    }
    /* The large-count forms take the same paths. */
    long long lin = me, lsum = -1;
    CHECK_OK(MPI_Allreduce_c(&lin, &lsum, 1, MPI_LONG_LONG, MPI_SUM, ic));
    long long lwant = 0;
    for (int r = 0; r < rs; r++)
        lwant += s->rworld[r];
    CHECK(lsum == lwant, "allreduce_c %lld vs %lld", lsum, lwant);
    MPI_Count ccounts[64];
    MPI_Aint cdispls[64];
    for (int r = 0; r < rs; r++) {
        ccounts[r] = 1;
        cdispls[r] = rs - 1 - r;
    }
    CHECK_OK(MPI_Allgatherv_c(&me, 1, MPI_INT, out, ccounts, cdispls, MPI_INT, ic));
    for (int r = 0; r < rs; r++)
        CHECK(out[rs - 1 - r] == s->rworld[r], "allgatherv_c %d", r);
    CHECK_CLASS(MPI_Scan_c(vin, vout, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    /* Not defined on intercommunicators */
    CHECK_CLASS(MPI_Scan(vin, vout, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Exscan(vin, vout, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    free(in);
    free(out);
}

static void check_merge(const setup *s)
{
    for (int order = 0; order < 3; order++) {
        /* 0: group 0 low; 1: group 0 high; 2: both low (A first) */
        int high = order == 2 ? 0 : order == 0 ? s->color == 1 : s->color == 0;
        MPI_Comm m;
        CHECK_OK(MPI_Intercomm_merge(s->inter, high, &m));
        int size, rank, flag;
        MPI_Comm_size(m, &size);
        MPI_Comm_rank(m, &rank);
        MPI_Comm_test_inter(m, &flag);
        CHECK(size == wsize && !flag, "merged size %d", size);
        int first_is_mine = order == 2 ? s->lworld[0] < s->rworld[0] : !high;
        int want = first_is_mine ? s->lrank : s->rsize + s->lrank;
        CHECK(rank == want, "merge order %d: rank %d want %d", order, rank, want);
        int sum;
        CHECK_OK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, m));
        CHECK(sum == wsize * (wsize - 1) / 2, "merged allreduce");
        MPI_Comm_free(&m);
    }
    MPI_Comm m;
    CHECK_CLASS(MPI_Intercomm_merge(s->local, 0, &m), MPI_ERR_COMM);
}

static int copies;
static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)k, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void check_derived(const setup *s)
{
    /* Dup: congruent, attributes copied, names kept apart, traffic apart */
    int key;
    CHECK_OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    static int payload = 42;
    CHECK_OK(MPI_Comm_set_attr(s->inter, key, &payload));
    CHECK_OK(MPI_Comm_set_name(s->inter, "my intercomm"));
    MPI_Comm d;
    copies = 0;
    CHECK_OK(MPI_Comm_dup(s->inter, &d));
    int res, flag;
    CHECK_OK(MPI_Comm_compare(s->inter, d, &res));
    CHECK(res == MPI_CONGRUENT, "dup compare %d", res);
    CHECK_OK(MPI_Comm_compare(s->inter, s->inter, &res));
    CHECK(res == MPI_IDENT, "self compare %d", res);
    CHECK_OK(MPI_Comm_compare(s->inter, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_UNEQUAL, "inter vs world %d", res);
    void *v;
    CHECK_OK(MPI_Comm_get_attr(d, key, &v, &flag));
    CHECK(flag && v == &payload && copies == 1, "attribute on the dup: flag %d copies %d", flag, copies);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_OK(MPI_Comm_get_name(s->inter, name, &len));
    CHECK(strcmp(name, "my intercomm") == 0, "name %s", name);
    CHECK_OK(MPI_Comm_test_inter(d, &flag));
    CHECK(flag, "dup is an intercomm");
    /* Same tag on both: each arrives on its own communicator. */
    if (s->lrank == 0) {
        int a = 1, b = 2, x, y;
        CHECK_OK(MPI_Send(&a, 1, MPI_INT, 0, 3, d));
        CHECK_OK(MPI_Send(&b, 1, MPI_INT, 0, 3, s->inter));
        CHECK_OK(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, s->inter,
                          MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, MPI_STATUS_IGNORE));
        CHECK(x == 1 && y == 2, "dup traffic mixed: %d %d", x, y);
    }
    check_all(s, d);
    CHECK_OK(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL, "freed");
    MPI_Comm_free_keyval(&key);

    /* Split by local rank parity, keys reversed. */
    MPI_Comm sp;
    int color = s->lrank % 2;
    CHECK_OK(MPI_Comm_split(s->inter, color, -s->lrank, &sp));
    int nl = 0, nr = 0, rw[64];
    for (int i = 0; i < s->lsize; i++)
        nl += i % 2 == color;
    for (int i = s->rsize - 1; i >= 0; i--)
        if (i % 2 == color)
            rw[nr++] = s->rworld[i];
    if (nr == 0) {
        CHECK(sp == MPI_COMM_NULL, "split with no remote member");
    } else {
        int size, rank, rsize;
        MPI_Comm_size(sp, &size);
        MPI_Comm_rank(sp, &rank);
        MPI_Comm_remote_size(sp, &rsize);
        CHECK(size == nl && rsize == nr, "split sizes %d %d", size, rsize);
        CHECK(rank == (nl - 1 - s->lrank / 2), "split rank %d", rank);
        /* every remote member sends its world rank */
        for (int r = 0; r < rsize; r++)
            CHECK_OK(MPI_Send(&wrank, 1, MPI_INT, r, 0, sp));
        for (int r = 0; r < rsize; r++) {
            int w;
            CHECK_OK(MPI_Recv(&w, 1, MPI_INT, r, 0, sp, MPI_STATUS_IGNORE));
            CHECK(w == rw[r], "split remote %d is world %d, want %d", r, w, rw[r]);
        }
        MPI_Comm_free(&sp);
    }
    CHECK_OK(MPI_Comm_split(s->inter, MPI_UNDEFINED, 0, &sp));
    CHECK(sp == MPI_COMM_NULL, "undefined split");

    /* Create: the local group without its last member. */
    MPI_Group lg, sub;
    MPI_Comm_group(s->inter, &lg);
    int excl = s->lsize - 1;
    MPI_Group_excl(lg, s->lsize > 1 ? 1 : 0, &excl, &sub);
    MPI_Comm cr;
    CHECK_OK(MPI_Comm_create(s->inter, sub, &cr));
    int in_mine = s->lsize == 1 || s->lrank < s->lsize - 1;
    int remote_n = s->rsize > 1 ? s->rsize - 1 : 1;
    if (!in_mine) {
        CHECK(cr == MPI_COMM_NULL, "not a member");
    } else {
        int rsize;
        CHECK_OK(MPI_Comm_remote_size(cr, &rsize));
        CHECK(rsize == remote_n, "create remote size %d", rsize);
        CHECK_OK(MPI_Barrier(cr));
        MPI_Comm_free(&cr);
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&lg);

    /* Split by host: on one host, the same two groups facing each other
     * (ranks by key, reversed here); MPI_UNDEFINED gives MPI_COMM_NULL. */
    MPI_Comm sh, node;
    int node_size;
    CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    CHECK_OK(MPI_Comm_split_type(s->inter, MPI_COMM_TYPE_SHARED, -s->lrank, MPI_INFO_NULL, &sh));
    if (node_size < wsize) { /* several hosts (or the network backend): per host */
        int flag = 0;
        if (sh != MPI_COMM_NULL) {
            CHECK_OK(MPI_Comm_test_inter(sh, &flag));
            CHECK(flag, "the shared split of an intercommunicator is not one");
            MPI_Comm_free(&sh);
        }
    } else {
        int flag = 0, lsz, rsz, r;
        CHECK(sh != MPI_COMM_NULL, "no communicator for the shared split");
        CHECK_OK(MPI_Comm_test_inter(sh, &flag));
        CHECK(flag, "the shared split of an intercommunicator is not one");
        CHECK_OK(MPI_Comm_size(sh, &lsz));
        CHECK_OK(MPI_Comm_remote_size(sh, &rsz));
        CHECK_OK(MPI_Comm_rank(sh, &r));
        CHECK(lsz == s->lsize && rsz == s->rsize && r == s->lsize - 1 - s->lrank,
              "shared split: size %d remote %d rank %d", lsz, rsz, r);
        CHECK_OK(MPI_Barrier(sh));
        MPI_Comm_free(&sh);
    }
    CHECK_OK(MPI_Comm_split_type(s->inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &sh));
    CHECK(sh == MPI_COMM_NULL, "undefined shared split");

    /* Intercommunicator-invalid operations. */
    MPI_Comm bad;
    MPI_Group g;
    MPI_Comm_group(s->inter, &g);
    CHECK_CLASS(MPI_Comm_create_group(s->inter, g, 0, &bad), MPI_ERR_COMM);
    MPI_Group_free(&g);
    CHECK_CLASS(MPI_Intercomm_create(s->inter, 0, MPI_COMM_WORLD, 0, 1, &bad), MPI_ERR_COMM);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (wsize < 2 || wsize > 64) {
        if (wrank == 0)
            printf("intercomm: needs 2 .. 64 ranks, skipped\n");
        MPI_Finalize();
        return 0;
    }
    for (int mode = 0; mode < 2; mode++) {
        setup s;
        make(&s, mode);
        MPI_Comm_set_errhandler(s.local, MPI_ERRORS_RETURN);
        check_queries(&s);
        check_p2p(&s, s.inter);
        check_rooted(&s, s.inter, 0);
        check_rooted(&s, s.inter, 1);
        check_all(&s, s.inter);
        check_merge(&s);
        check_derived(&s);
        /* A second intercommunicator over the same groups: congruent. */
        MPI_Comm again;
        CHECK_OK(MPI_Intercomm_create(s.local, 0, MPI_COMM_WORLD, s.rworld[0], 78, &again));
        int res;
        CHECK_OK(MPI_Comm_compare(s.inter, again, &res));
        CHECK(res == MPI_CONGRUENT, "recreated compare %d", res);
        CHECK_OK(MPI_Comm_free(&again));
        /* The same from groups alone (MPI-4.0). */
        MPI_Group wg, lg, rg;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_incl(wg, s.lsize, s.lworld, &lg);
        MPI_Group_incl(wg, s.rsize, s.rworld, &rg);
        CHECK_OK(MPI_Intercomm_create_from_groups(lg, 0, rg, s.rsize - 1, "fmpl-test",
                                                  MPI_INFO_NULL, MPI_ERRORS_RETURN, &again));
        CHECK_OK(MPI_Comm_compare(s.inter, again, &res));
        CHECK(res == MPI_CONGRUENT, "from groups compare %d", res);
        check_p2p(&s, again);
        CHECK_OK(MPI_Comm_free(&again));
        MPI_Group_free(&wg);
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
        CHECK_OK(MPI_Comm_free(&s.inter));
        CHECK_OK(MPI_Comm_free(&s.local));
    }
    /* Leave one alive for MPI_Finalize to release. */
    setup s;
    make(&s, 0);
    check_p2p(&s, s.inter);
    MPI_Barrier(MPI_COMM_WORLD);
    if (wrank == 0)
        printf("intercomm ok on %d ranks\n", wsize);
    MPI_Finalize();
    return 0;
}
