/* Derived datatypes in point-to-point communication, verified byte for
 * byte: every rank sends to rank + 1 and receives from rank - 1 (itself at
 * one rank).
 *
 * For each constructor kind (vector, indexed out of address order, struct
 * with holes, subarray, resized with lb -12, negative displacements, a
 * contiguous type offset from the buffer, an hvector of a struct) and each
 * way to communicate (blocking, synchronous, buffered and persistent
 * buffered, nonblocking, persistent, Sendrecv, Sendrecv_replace,
 * Mprobe/Mrecv, Mprobe/Imrecv) the receive buffer must equal what MPI_Pack
 * of the sender's buffer unpacked into the receiver's
 * initial buffer gives: the type's bytes replaced, holes and the bytes
 * around untouched.  Also: a 1 MiB vector (larger than a staging slot),
 * many outstanding non-contiguous sends (the staging pool runs out and
 * falls back), truncation with a derived receive type, MPI_BOTTOM with
 * absolute addresses, differing send and receive types with one signature,
 * MPI_Get_count / MPI_Get_elements, a type freed while its receive is in
 * flight, cancel and free of non-contiguous receives, and the _c calls. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEM 4096
#define MID 2048 /* the buffer argument points here: negative displacements fit */

static int rank, size, to, from;

/* The sender's bytes: a pattern of (rank, kind). */
static void pattern(unsigned char *mem, int r, int kind)
{
    for (int i = 0; i < MEM; i++)
        mem[i] = (unsigned char)(r * 31 + i * 7 + kind * 13 + 1);
}

/* What a receive of (count, type) from rank `src` must leave in a buffer
 * that held `initial`: the sender's data unpacked over it. */
static void expected(unsigned char *exp, const unsigned char *initial, int src, int kind,
                     int count, MPI_Datatype type)
{
    static unsigned char srcmem[MEM], packed[MEM];
    pattern(srcmem, src, kind);
    int pos = 0;
    CHECK_OK(MPI_Pack(srcmem + MID, count, type, packed, MEM, &pos, MPI_COMM_WORLD));
    memcpy(exp, initial, MEM);
    int upos = 0;
    CHECK_OK(MPI_Unpack(packed, pos, &upos, exp + MID, count, type, MPI_COMM_WORLD));
}

static void same(const unsigned char *got, const unsigned char *exp, const char *what)
{
    for (int i = 0; i < MEM; i++)
        CHECK(got[i] == exp[i], "%s: byte %d (offset %d from the buffer) is 0x%02x, expected 0x%02x",
              what, i, i - MID, got[i], exp[i]);
}

enum { BLOCKING, SYNC, BUFFERED, NONBLOCKING, PERSISTENT, SENDRECV, REPLACE, MRECV, IMRECV,
       NMODES };
static const char *mode_name[NMODES] = {"blocking", "ssend", "bsend", "nonblocking",
                                        "persistent", "sendrecv", "sendrecv_replace", "mrecv",
                                        "imrecv"};

/* One transfer of `count` elements of `type` in the given mode; checks the
 * received bytes. */
static void transfer(int kind, const char *tname, MPI_Datatype type, int count, int mode)
{
    static unsigned char out[MEM], in[MEM], initial[MEM], exp[MEM];
    char what[128];
    snprintf(what, sizeof what, "%s, %s", tname, mode_name[mode]);
    pattern(out, rank, kind);
    memset(in, 0xee, MEM);
    memcpy(initial, in, MEM);
    int tag = 100 + kind * 16 + mode;
    MPI_Request rq[2];
    MPI_Status st;
    switch (mode) {
    case BLOCKING: /* blocking send, then blocking receive */
        CHECK_OK(MPI_Irecv(in + MID, count, type, from, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_OK(MPI_Send(out + MID, count, type, to, tag, MPI_COMM_WORLD));
        CHECK_OK(MPI_Wait(&rq[0], &st));
        same(in, (expected(exp, initial, from, kind, count, type), exp), what);
        memset(in, 0xee, MEM);
        CHECK_OK(MPI_Isend(out + MID, count, type, to, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_OK(MPI_Recv(in + MID, count, type, from, tag, MPI_COMM_WORLD, &st));
        CHECK_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        break;
    case SYNC:
        CHECK_OK(MPI_Irecv(in + MID, count, type, from, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_OK(MPI_Ssend(out + MID, count, type, to, tag, MPI_COMM_WORLD));
        CHECK_OK(MPI_Wait(&rq[0], &st));
        break;
    case BUFFERED: {
        int need;
        CHECK_OK(MPI_Pack_size(count, type, MPI_COMM_WORLD, &need));
        static char bbuf[MEM + 4 * MPI_BSEND_OVERHEAD];
        CHECK_OK(MPI_Buffer_attach(bbuf, (int)sizeof bbuf));
        CHECK_OK(MPI_Irecv(in + MID, count, type, from, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_OK(MPI_Bsend(out + MID, count, type, to, tag, MPI_COMM_WORLD));
        CHECK_OK(MPI_Ibsend(out + MID, count, type, to, tag + 1000, MPI_COMM_WORLD, &rq[1]));
        CHECK_OK(MPI_Wait(&rq[0], &st));
        CHECK_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        same(in, (expected(exp, initial, from, kind, count, type), exp), what);
        memset(in, 0xee, MEM);
        CHECK_OK(MPI_Recv(in + MID, count, type, from, tag + 1000, MPI_COMM_WORLD, &st));
        same(in, (expected(exp, initial, from, kind, count, type), exp), what);
        memset(in, 0xee, MEM);
        /* persistent buffered: packed into the attached buffer at each start */
        CHECK_OK(MPI_Bsend_init(out + MID, count, type, to, tag + 2000, MPI_COMM_WORLD, &rq[1]));
        CHECK_OK(MPI_Start(&rq[1]));
        CHECK_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Request_free(&rq[1]));
        CHECK_OK(MPI_Recv(in + MID, count, type, from, tag + 2000, MPI_COMM_WORLD, &st));
        void *b;
        int bs;
        CHECK_OK(MPI_Buffer_detach(&b, &bs));
        (void)need;
        break;
    }
    case NONBLOCKING:
        CHECK_OK(MPI_Irecv(in + MID, count, type, from, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_OK(MPI_Issend(out + MID, count, type, to, tag, MPI_COMM_WORLD, &rq[1]));
        CHECK_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(&rq[0], &st));
        break;
    case PERSISTENT:
        CHECK_OK(MPI_Recv_init(in + MID, count, type, from, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_OK(MPI_Send_init(out + MID, count, type, to, tag, MPI_COMM_WORLD, &rq[1]));
        for (int round = 0; round < 3; round++) {
            memset(in, 0xee, MEM);
            CHECK_OK(MPI_Startall(2, rq));
            MPI_Status sts[2];
            CHECK_OK(MPI_Waitall(2, rq, sts));
            st = sts[0];
            same(in, (expected(exp, initial, from, kind, count, type), exp), what);
        }
        CHECK_OK(MPI_Request_free(&rq[0]));
        CHECK_OK(MPI_Request_free(&rq[1]));
        break;
    case SENDRECV:
        CHECK_OK(MPI_Sendrecv(out + MID, count, type, to, tag, in + MID, count, type, from, tag,
                              MPI_COMM_WORLD, &st));
        break;
    case REPLACE:
        memcpy(in, out, MEM);
        memcpy(initial, in, MEM);
        CHECK_OK(MPI_Sendrecv_replace(in + MID, count, type, to, tag, from, tag, MPI_COMM_WORLD,
                                      &st));
        break;
    case MRECV:
    case IMRECV: {
        MPI_Message msg;
        CHECK_OK(MPI_Isend(out + MID, count, type, to, tag, MPI_COMM_WORLD, &rq[1]));
        CHECK_OK(MPI_Mprobe(from, tag, MPI_COMM_WORLD, &msg, &st));
        if (mode == MRECV) {
            CHECK_OK(MPI_Mrecv(in + MID, count, type, &msg, &st));
        } else {
            CHECK_OK(MPI_Imrecv(in + MID, count, type, &msg, &rq[0]));
            CHECK_OK(MPI_Wait(&rq[0], &st));
        }
        CHECK_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        break;
    }
    }
    same(in, (expected(exp, initial, from, kind, count, type), exp), what);
    int n, tsize;
    MPI_Type_size(type, &tsize);
    CHECK_OK(MPI_Get_count(&st, type, &n));
    CHECK(n == count, "%s: MPI_Get_count gave %d, expected %d", what, n, count);
    CHECK(st.MPI_SOURCE == from, "%s: source %d", what, st.MPI_SOURCE);
    CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == count * tsize, "%s: %d bytes received, expected %d", what, n, count * tsize);
}

/* ------------------------------------------------------------ the types */

#define NKINDS 8
static MPI_Datatype kinds[NKINDS];
static const char *kind_names[NKINDS];

static void make_types(void)
{
    int k = 0;
    MPI_Datatype t;
    /* vector: 5 ints, one every 3 */
    MPI_Type_vector(5, 1, 3, MPI_INT, &t);
    kind_names[k] = "vector", kinds[k++] = t;
    /* indexed, blocks out of address order */
    int bl[3] = {2, 1, 3}, dp[3] = {5, 0, 9};
    MPI_Type_indexed(3, bl, dp, MPI_INT, &t);
    kind_names[k] = "indexed", kinds[k++] = t;
    /* struct with holes: int at 0, double at 8, char at 20, extent 24 */
    int sbl[3] = {1, 1, 2};
    MPI_Aint sdp[3] = {0, 8, 20};
    MPI_Datatype sty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, sbl, sdp, sty, &t);
    kind_names[k] = "struct", kinds[k++] = t;
    /* subarray: 3 x 2 out of 6 x 5 ints at (1, 2) */
    int sizes[2] = {6, 5}, subs[2] = {3, 2}, starts[2] = {1, 2};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    kind_names[k] = "subarray", kinds[k++] = t;
    /* resized: 2 ints, 1 apart, lb -12, extent 40 */
    MPI_Datatype v2;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v2);
    MPI_Type_create_resized(v2, -12, 40, &t);
    MPI_Type_free(&v2);
    kind_names[k] = "resized", kinds[k++] = t;
    /* negative displacements: hindexed at -40 and +8 (true_lb < 0) */
    int hbl[2] = {3, 2};
    MPI_Aint hdp[2] = {8, -40};
    MPI_Type_create_hindexed(2, hbl, hdp, MPI_INT, &t);
    kind_names[k] = "negative", kinds[k++] = t;
    /* contiguous but offset from the buffer: 4 ints from int 3 */
    int ib[1] = {3};
    MPI_Type_create_indexed_block(1, 4, ib, MPI_INT, &t);
    kind_names[k] = "offset contiguous", kinds[k++] = t;
    /* a vector of a struct with holes (nested) */
    MPI_Datatype inner;
    int ibl[2] = {1, 1};
    MPI_Aint idp[2] = {0, 6};
    MPI_Datatype ity[2] = {MPI_SHORT, MPI_CHAR};
    MPI_Type_create_struct(2, ibl, idp, ity, &inner);
    MPI_Type_create_hvector(3, 2, 20, inner, &t);
    MPI_Type_free(&inner);
    kind_names[k] = "hvector of struct", kinds[k++] = t;
    for (int i = 0; i < NKINDS; i++)
        MPI_Type_commit(&kinds[i]);
}

/* ------------------------------------------------------------ the rest */

/* 1 MiB of ints, every other one: more than a staging slot. */
static void large_vector(void)
{
    const int n = 262144; /* ints sent */
    int *out = malloc(sizeof(int) * 2 * n), *in = malloc(sizeof(int) * 2 * n);
    CHECK(out && in, "no memory");
    for (int i = 0; i < 2 * n; i++) {
        out[i] = rank * 10000000 + i;
        in[i] = -1;
    }
    MPI_Datatype v;
    MPI_Type_vector(n, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Request rq[2];
    CHECK_OK(MPI_Irecv(in, 1, v, from, 7, MPI_COMM_WORLD, &rq[0]));
    CHECK_OK(MPI_Isend(out, 1, v, to, 7, MPI_COMM_WORLD, &rq[1]));
    MPI_Status sts[2];
    CHECK_OK(MPI_Waitall(2, rq, sts));
    for (int i = 0; i < 2 * n; i++)
        CHECK(in[i] == (i % 2 ? -1 : from * 10000000 + i), "large vector: in[%d] = %d", i, in[i]);
    /* received as plain ints: same signature, different type */
    for (int i = 0; i < 2 * n; i++)
        in[i] = -1;
    CHECK_OK(MPI_Irecv(in, n, MPI_INT, from, 8, MPI_COMM_WORLD, &rq[0]));
    CHECK_OK(MPI_Send(out, 1, v, to, 8, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(in[i] == from * 10000000 + 2 * i, "vector into ints: in[%d] = %d", i, in[i]);
    CHECK(in[n] == -1, "vector into ints wrote past its count");
    MPI_Type_free(&v);
    free(out);
    free(in);
}

/* More outstanding non-contiguous messages than the pool has slots, small
 * and large mixed. */
static void many_outstanding(void)
{
    enum { N = 24, INTS = 600 };
    static int out[N][2 * INTS], in[N][2 * INTS];
    MPI_Datatype v;
    MPI_Type_vector(INTS, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Request rq[2 * N];
    for (int m = 0; m < N; m++) {
        for (int i = 0; i < 2 * INTS; i++) {
            out[m][i] = rank * 1000000 + m * 10000 + i;
            in[m][i] = -7;
        }
        CHECK_OK(MPI_Irecv(in[m], 1, v, from, 200 + m, MPI_COMM_WORLD, &rq[m]));
    }
    for (int m = 0; m < N; m++)
        CHECK_OK(MPI_Isend(out[m], 1, v, to, 200 + m, MPI_COMM_WORLD, &rq[N + m]));
    static MPI_Status sts[2 * N];
    CHECK_OK(MPI_Waitall(2 * N, rq, sts));
    for (int m = 0; m < N; m++)
        for (int i = 0; i < 2 * INTS; i++)
            CHECK(in[m][i] == (i % 2 ? -7 : from * 1000000 + m * 10000 + i),
                  "outstanding message %d: in[%d] = %d", m, i, in[m][i]);
    MPI_Type_free(&v);
}

/* A message longer than the receive type describes. */
static void truncation(void)
{
    int out[16], in[24];
    for (int i = 0; i < 16; i++)
        out[i] = rank * 100 + i;
    for (int i = 0; i < 24; i++)
        in[i] = -5;
    MPI_Datatype v; /* 4 ints, every other one: 16 bytes, extent 7 ints */
    MPI_Type_vector(4, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Request rq;
    MPI_Status st;
    CHECK_OK(MPI_Isend(out, 6, MPI_INT, to, 9, MPI_COMM_WORLD, &rq));
    CHECK_CLASS(MPI_Recv(in, 1, v, from, 9, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 24; i++) {
        int want = i < 7 && i % 2 == 0 ? from * 100 + i / 2 : -5;
        CHECK(in[i] == want, "truncated receive: in[%d] = %d, expected %d", i, in[i], want);
    }
    /* the same nonblocking, larger than a staging slot */
    int n = 40000;
    int *big = malloc(sizeof(int) * n), *dst = malloc(sizeof(int) * 2 * n);
    for (int i = 0; i < n; i++)
        big[i] = i;
    for (int i = 0; i < 2 * n; i++)
        dst[i] = -5;
    MPI_Datatype w;
    MPI_Type_vector(n / 2, 1, 2, MPI_INT, &w);
    MPI_Type_commit(&w);
    MPI_Request r2;
    CHECK_OK(MPI_Irecv(dst, 1, w, from, 10, MPI_COMM_WORLD, &r2));
    CHECK_OK(MPI_Isend(big, n, MPI_INT, to, 10, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    st.MPI_ERROR = MPI_ERR_DIMS; /* MPI_Wait returns the error and leaves this alone */
    CHECK_CLASS(MPI_Wait(&r2, &st), MPI_ERR_TRUNCATE);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "MPI_Wait changed status.MPI_ERROR to %d", st.MPI_ERROR);
    for (int i = 0; i < 2 * n; i++) {
        int want = i < n - 1 && i % 2 == 0 ? i / 2 : -5;
        CHECK(dst[i] == want, "large truncated receive: dst[%d] = %d, expected %d", i, dst[i],
              want);
    }
    MPI_Type_free(&w);
    free(big);
    free(dst);
    MPI_Type_free(&v);
}

/* MPI_BOTTOM with a struct of absolute addresses. */
static void bottom(void)
{
    static int a[5];
    static double b[3];
    static int ra[5];
    static double rb[3];
    for (int i = 0; i < 5; i++)
        a[i] = rank * 10 + i, ra[i] = -1;
    for (int i = 0; i < 3; i++)
        b[i] = rank + 0.25 * i, rb[i] = -1;
    MPI_Aint adr[2], radr[2];
    MPI_Get_address(&a[1], &adr[0]);
    MPI_Get_address(&b[0], &adr[1]);
    MPI_Get_address(&ra[1], &radr[0]);
    MPI_Get_address(&rb[0], &radr[1]);
    int bl[2] = {3, 2};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, st, rt;
    MPI_Type_create_struct(2, bl, adr, ty, &st);
    MPI_Type_create_struct(2, bl, radr, ty, &rt);
    MPI_Type_commit(&st);
    MPI_Type_commit(&rt);
    MPI_Request rq;
    CHECK_OK(MPI_Irecv(MPI_BOTTOM, 1, rt, from, 11, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Send(MPI_BOTTOM, 1, st, to, 11, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 5; i++)
        CHECK(ra[i] == (i >= 1 && i <= 3 ? from * 10 + i : -1), "MPI_BOTTOM: ra[%d] = %d", i,
              ra[i]);
    for (int i = 0; i < 3; i++)
        CHECK(rb[i] == (i < 2 ? from + 0.25 * i : -1), "MPI_BOTTOM: rb[%d] = %g", i, rb[i]);
    /* an hindexed of one int at an absolute address: contiguous, offset */
    MPI_Datatype one;
    int obl = 1;
    MPI_Aint oadr;
    MPI_Get_address(&ra[4], &oadr);
    MPI_Type_create_hindexed(1, &obl, &oadr, MPI_INT, &one);
    MPI_Type_commit(&one);
    CHECK_OK(MPI_Irecv(MPI_BOTTOM, 1, one, from, 12, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Send(&a[2], 1, MPI_INT, to, 12, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(ra[4] == from * 10 + 2, "MPI_BOTTOM contiguous: ra[4] = %d", ra[4]);
    /* NULL where the data would start at address 0 is still an error */
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    CHECK_CLASS(MPI_Send(NULL, 1, v, to, 13, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Send(NULL, 1, MPI_INT, to, 13, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Type_free(&v);
    MPI_Type_free(&one);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
}

static void counts(void)
{
    int out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[16];
    MPI_Datatype v;
    MPI_Type_vector(4, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Status st;
    MPI_Request rq;
    CHECK_OK(MPI_Isend(out, 6, MPI_INT, to, 14, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Recv(in, 2, v, from, 14, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int n;
    CHECK_OK(MPI_Get_count(&st, v, &n));
    CHECK(n == MPI_UNDEFINED, "6 ints as vectors of 4: count %d", n);
    CHECK_OK(MPI_Get_elements(&st, v, &n));
    CHECK(n == 6, "6 ints as vectors of 4: %d elements", n);
    MPI_Count nc;
    CHECK_OK(MPI_Get_elements_x(&st, v, &nc));
    CHECK(nc == 6, "Get_elements_x gave %lld", (long long)nc);
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 6, "as MPI_INT: count %d", n);
    CHECK(in[0] == 1 && in[2] == 2 && in[6] == 4 && in[7] == 5 && in[9] == 6,
          "6 ints into vectors: %d %d %d %d %d", in[0], in[2], in[6], in[7], in[9]);
    MPI_Type_free(&v);
}

/* The type is freed while its receive is in flight; cancel and free of
 * non-contiguous receives give their staging back. */
static void lifetimes(void)
{
    static int out[8], in[8]; /* static: the freed receive may land after we return */
    for (int i = 0; i < 8; i++)
        out[i] = rank + i, in[i] = -1;
    MPI_Datatype v;
    MPI_Type_vector(4, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Request rq;
    CHECK_OK(MPI_Irecv(in, 1, v, from, 15, MPI_COMM_WORLD, &rq));
    MPI_Datatype keep = v;
    CHECK_OK(MPI_Type_free(&v));
    CHECK_OK(MPI_Send(out, 4, MPI_INT, to, 15, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == (i % 2 ? -1 : from + i / 2), "type freed in flight: in[%d] = %d", i,
              in[i]);
    (void)keep;
    MPI_Type_vector(4, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    CHECK_OK(MPI_Irecv(in, 1, v, MPI_PROC_NULL, 16, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Irecv(in, 1, v, from, 999, MPI_COMM_WORLD, &rq)); /* never sent */
    CHECK_OK(MPI_Cancel(&rq));
    MPI_Status st;
    CHECK_OK(MPI_Wait(&rq, &st));
    int cancelled;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled, "the receive was not cancelled");
    /* freed while active: it still completes, its data lands by the time a
     * later message from the same sender is received, and it gives its
     * staging back */
    for (int i = 0; i < 8; i++)
        in[i] = -1;
    CHECK_OK(MPI_Irecv(in, 1, v, from, 17, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Request_free(&rq));
    CHECK_OK(MPI_Send(out, 1, v, to, 17, MPI_COMM_WORLD));
    int later;
    CHECK_OK(MPI_Sendrecv(&rank, 1, MPI_INT, to, 18, &later, 1, MPI_INT, from, 18,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == (i % 2 ? -1 : from + 2 * (i / 2)), "freed receive: in[%d] = %d", i,
              in[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&v);
}

/* The large-count calls share the int versions' bodies. */
static void large_count_calls(void)
{
    int out[8], in[8];
    for (int i = 0; i < 8; i++)
        out[i] = rank * 3 + i, in[i] = -1;
    MPI_Datatype v;
    MPI_Type_vector(4, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Request rq;
    MPI_Status st;
    CHECK_OK(MPI_Irecv_c(in, (MPI_Count)1, v, from, 18, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Send_c(out, (MPI_Count)4, MPI_INT, to, 18, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&rq, &st));
    MPI_Count c;
    CHECK_OK(MPI_Get_count_c(&st, v, &c));
    CHECK(c == 1, "Get_count_c gave %lld", (long long)c);
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == (i % 2 ? -1 : from * 3 + i / 2), "Irecv_c: in[%d] = %d", i, in[i]);
    CHECK_OK(MPI_Isend_c(out, (MPI_Count)1, v, to, 19, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Recv_c(in, (MPI_Count)4, MPI_INT, from, 19, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == from * 3 + 2 * i, "Recv_c: in[%d] = %d", i, in[i]);
    CHECK_OK(MPI_Sendrecv_c(out, (MPI_Count)2, MPI_INT, to, 20, in, (MPI_Count)2, MPI_INT, from,
                            20, MPI_COMM_WORLD, &st));
    CHECK(in[0] == from * 3 && in[1] == from * 3 + 1, "Sendrecv_c: %d %d", in[0], in[1]);
    CHECK_OK(MPI_Issend_c(out, (MPI_Count)1, MPI_INT, to, 21, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Recv(in, 1, MPI_INT, from, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Irsend_c(out, (MPI_Count)1, MPI_INT, to, 22, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Recv(in, 1, MPI_INT, from, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_CLASS(MPI_Send_c(out, (MPI_Count)-1, MPI_INT, to, 23, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    to = (rank + 1) % size;
    from = (rank - 1 + size) % size;
    make_types();
    for (int k = 0; k < NKINDS; k++)
        for (int mode = 0; mode < NMODES; mode++) {
            transfer(k, kind_names[k], kinds[k], 1, mode);
            transfer(k, kind_names[k], kinds[k], 3, mode);
        }
    large_vector();
    many_outstanding();
    truncation();
    bottom();
    counts();
    lifetimes();
    large_count_calls();
    /* an uncommitted type is still refused, and sends nothing */
    MPI_Datatype loose;
    MPI_Type_contiguous(2, MPI_INT, &loose);
    int x[2] = {rank, rank};
    CHECK_CLASS(MPI_Send(x, 1, loose, to, 30, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Type_free(&loose);
    for (int k = 0; k < NKINDS; k++)
        MPI_Type_free(&kinds[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("derived_p2p ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
