/* Unit test of the datatype engine: pack, unpack, cursors, copies.
 *
 *  - every constructor on fixed arguments, then thousands of random nested
 *    types: packed bytes equal the reference model's naive walk; piecewise
 *    packing (random piece sizes, by offset and by cursor) equals the whole;
 *    unpack writes exactly the typemap's bytes (gaps untouched); copies to,
 *    from and between typed buffers;
 *  - large regular types stay small when committed (vector of vectors,
 *    3-D subarray, darray, struct arrays: a handful of loop nodes, not one
 *    per block) and pack correctly through a fixed 64 KiB staging buffer;
 *  - MPI_BOTTOM (NULL buffer, absolute displacements);
 *  - no malloc during pack/unpack/copy (interposed allocator; skipped
 *    under AddressSanitizer, which owns malloc);
 *  - errors: uncommitted type, negative sizes, offsets past the end, NULL
 *    buffers, truncating copies.
 *
 * `test_dt_pack --bench` times a few packs against memcpy.
 */
#include "dt_ref.h"
#include "base/error.h"
#include "datatype/dt_impl.h"
#include "fmpl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The counting malloc of the MPI hot-path tests (nothing under
 * AddressSanitizer). */
#include "../mpi/alloc_count.h"
#define HAVE_COUNTING_MALLOC ALLOC_COUNTING

static fmpl_datatype *B(fmpl_basic_type bt) { return fmpl_dt_basic(bt); }

static void check_ref(ref *r, const char *what)
{
    ref_check_queries(r, what);
    CHECK_OK(fmpl_dt_commit(r->t));
    ref_check_queries(r, what);
    for (int64_t count = 0; count <= 3; count++)
        ref_check_pack(r, count, what);
}

/* ------------------------------------------------------------- fixed cases */

static void test_constructors(void)
{
    ref *i = ref_basic(FMPL_BT_INT), *d = ref_basic(FMPL_BT_DOUBLE);
    ref *c = ref_basic(FMPL_BT_CHAR), *si = ref_basic(FMPL_BT_SHORT_INT);
    ref *r, *s, *v;

    r = ref_contiguous(5, d);
    check_ref(r, "contiguous(5, double)");
    CHECK(fmpl_dt_is_contiguous(r->t), "contiguous(5, double) is contiguous");
    ref_free(r);
    r = ref_contiguous(3, si);
    check_ref(r, "contiguous(3, SHORT_INT)");
    ref_free(r);

    r = ref_vector(4, 2, 3, i);
    check_ref(r, "vector(4,2,3,int)");
    ref_free(r);
    r = ref_vector(3, 2, -3, d);
    check_ref(r, "vector(3,2,-3,double)");
    ref_free(r);
    r = ref_vector(4, 3, 3, i); /* stride == blocklen: contiguous */
    check_ref(r, "vector(4,3,3,int)");
    CHECK(fmpl_dt_is_contiguous(r->t), "vector with stride == blocklen");
    ref_free(r);
    r = ref_vector(3, 2, 1, c); /* overlapping blocks */
    check_ref(r, "vector(3,2,1,char) (overlapping)");
    ref_free(r);

    r = ref_hvector(3, 2, 20, i);
    check_ref(r, "hvector(3,2,20,int)");
    ref_free(r);
    r = ref_hvector(4, 1, -7, si);
    check_ref(r, "hvector(4,1,-7,SHORT_INT)");
    ref_free(r);

    int64_t bl[4] = {2, 0, 3, 1}, di[4] = {5, 1, -4, 9}, dh[4] = {40, 0, -30, 3};
    r = ref_indexed(4, bl, di, d);
    check_ref(r, "indexed(double)");
    ref_free(r);
    r = ref_hindexed(4, bl, dh, i);
    check_ref(r, "hindexed(int)");
    ref_free(r);
    r = ref_indexed_block(4, 2, di, i);
    check_ref(r, "indexed_block(int)");
    ref_free(r);
    r = ref_hindexed_block(4, 3, dh, c);
    check_ref(r, "hindexed_block(char)");
    ref_free(r);

    ref *types[4] = {i, d, c, si};
    int64_t sd[4] = {0, 8, 16, 20};
    r = ref_struct(4, bl, sd, types);
    check_ref(r, "struct{int,double,char,SHORT_INT}");
    ref_free(r);

    /* nesting: indexed of a struct (INDEXED loop with a non-contiguous child) */
    int64_t bl2[2] = {1, 1}, sd2[2] = {0, 8};
    ref *t2[2] = {c, d};
    s = ref_struct(2, bl2, sd2, t2);
    int64_t bl3[3] = {2, 1, 3}, d3[3] = {0, 5, 2};
    r = ref_indexed(3, bl3, d3, s);
    check_ref(r, "indexed(3 blocks, struct{char,double})");
    ref_free(r);
    v = ref_vector(3, 2, 4, s);
    r = ref_hvector(2, 2, -200, v);
    check_ref(r, "hvector(vector(struct))");
    ref_free(r);
    ref_free(v);

    r = ref_resized(s, -8, 40);
    check_ref(r, "resized(struct, -8, 40)");
    v = ref_contiguous(3, r);
    check_ref(v, "contiguous(3, resized)");
    ref_free(v);
    ref_free(r);
    r = ref_dup(s);
    check_ref(r, "dup(struct)");
    ref_free(r);
    ref_free(s);

    int64_t sizes[3] = {4, 5, 3}, sub[3] = {2, 3, 2}, st[3] = {1, 2, 0};
    r = ref_subarray(3, sizes, sub, st, FMPL_DT_ORDER_C, i);
    check_ref(r, "subarray C");
    ref_free(r);
    r = ref_subarray(3, sizes, sub, st, FMPL_DT_ORDER_FORTRAN, si);
    check_ref(r, "subarray Fortran");
    ref_free(r);

    int64_t g[2] = {7, 5};
    int dist[2] = {FMPL_DT_DISTRIBUTE_CYCLIC, FMPL_DT_DISTRIBUTE_BLOCK};
    int darg[2] = {2, FMPL_DT_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    for (int rank = 0; rank < 4; rank++) {
        r = ref_darray(4, rank, 2, g, dist, darg, ps, FMPL_DT_ORDER_C, d);
        check_ref(r, "darray");
        ref_free(r);
    }
    ref_free(i);
    ref_free(d);
    ref_free(c);
    ref_free(si);
}

static void test_random(int n)
{
    char what[64];
    int64_t elems = 0, nonempty = 0, comb[FMPL_DT_COMBINER_RESIZED + 1] = {0};
    for (int k = 0; k < n; k++) {
        ref *r = ref_random(4, 3000);
        elems += r->n;
        nonempty += r->n > 0;
        fmpl_dt_envelope env;
        fmpl_dt_get_envelope(r->t, &env);
        comb[env.combiner]++;
        snprintf(what, sizeof what, "random type %d", k);
        CHECK_OK(fmpl_dt_commit(r->t));
        ref_check_queries(r, what);
        ref_check_pack(r, rnd_range(0, 4), what);
        ref_free(r);
    }
    printf("%d random types: %lld non-empty, %.1f basic elements on average; by combiner:", n,
           (long long)nonempty, (double)elems / n);
    for (int k = 0; k <= FMPL_DT_COMBINER_RESIZED; k++)
        printf(" %lld", (long long)comb[k]);
    printf("\n");
}

/* -------------------------------------------------------- large types */

static int64_t loop_nodes(const dl_node *n)
{
    if (!n)
        return 0;
    switch (n->kind) {
    case DL_VECTOR:
    case DL_INDEXED:
        return 1 + loop_nodes(n->child);
    case DL_STRUCT: {
        int64_t k = 1;
        for (int64_t i = 0; i < n->count; i++)
            k += loop_nodes(n->children[i]);
        return k;
    }
    default:
        return 1;
    }
}

/* Pack (buf, count, t) through a 64 KiB staging buffer with a cursor,
 * compare with `expect`; then unpack the same way into a zeroed copy and
 * compare with `image` (the bytes the typemap covers, others zero). */
static void staged_roundtrip(const char *what, const void *buf, int64_t count,
                             const fmpl_datatype *t, const char *expect, size_t buflen,
                             const char *image)
{
    enum { STAGE = 65536 };
    static char stage[STAGE];
    int64_t total = count * fmpl_dt_size(t), got, pos = 0;
    fmpl_dt_cursor c;
    CHECK_OK(fmpl_dt_cursor_init(&c, buf, count, t));
    bool same = true;
    while (fmpl_dt_cursor_remaining(&c) > 0) {
        CHECK_OK(fmpl_dt_cursor_pack(&c, stage, STAGE, &got));
        same = same && !memcmp(stage, expect + pos, (size_t)got);
        pos += got;
    }
    CHECK(same && pos == total, "%s: staged pack differs", what);
    if (!image)
        return;
    char *dst = calloc(1, buflen);
    CHECK_OK(fmpl_dt_cursor_init(&c, dst, count, t));
    for (pos = 0; pos < total; pos += got)
        CHECK_OK(fmpl_dt_cursor_unpack(&c, expect + pos, STAGE, &got));
    CHECK(!memcmp(dst, image, buflen), "%s: staged unpack differs", what);
    free(dst);
}

static void test_large(void)
{
    /* a 1000 x 1000 column block of a 1000 x 2000 row-major double matrix,
     * built as a vector of vectors: 1e6 blocks, one loop nest */
    enum { R = 1000, C = 2000, W = 1000 };
    double *m = malloc(sizeof(double) * R * C), *expect = malloc(sizeof(double) * R * W);
    char *image = calloc(1, sizeof(double) * R * C);
    for (int64_t k = 0; k < (int64_t)R * C; k++)
        m[k] = (double)k;
    fmpl_datatype *col, *blk;
    CHECK_OK(fmpl_dt_vector(W, 1, 1, B(FMPL_BT_DOUBLE), &col)); /* W contiguous doubles */
    CHECK_OK(fmpl_dt_hvector(R, 1, C * (int64_t)sizeof(double), col, &blk));
    CHECK_OK(fmpl_dt_commit(blk));
    CHECK(loop_nodes(blk->loop) <= 2, "vector of rows: %lld loop nodes",
          (long long)loop_nodes(blk->loop));
    for (int64_t r = 0; r < R; r++)
        for (int64_t k = 0; k < W; k++) {
            expect[r * W + k] = m[r * C + k];
            memcpy(image + (r * C + k) * sizeof(double), &m[r * C + k], sizeof(double));
        }
    staged_roundtrip("row block", m, 1, blk, (char *)expect, sizeof(double) * R * C, image);
    fmpl_dt_unref(blk);
    fmpl_dt_unref(col);

    /* a strided column-of-columns: vector(R, 1, C, vector(2, 1, 3, double)) */
    fmpl_datatype *pair, *cols;
    CHECK_OK(fmpl_dt_vector(2, 1, 3, B(FMPL_BT_DOUBLE), &pair));
    fmpl_datatype *pr;
    CHECK_OK(fmpl_dt_resized(pair, 0, sizeof(double), &pr));
    CHECK_OK(fmpl_dt_vector(R, W / 2, C, pr, &cols)); /* rows of W/2 pairs */
    CHECK_OK(fmpl_dt_commit(cols));
    CHECK(loop_nodes(cols->loop) <= 4, "vector of vector of vector: %lld loop nodes",
          (long long)loop_nodes(cols->loop));
    int64_t n = 0;
    for (int64_t r = 0; r < R; r++)
        for (int64_t k = 0; k < W / 2; k++) {
            expect[n++] = m[r * C + k];
            expect[n++] = m[r * C + k + 3];
        }
    staged_roundtrip("vector of vectors", m, 1, cols, (char *)expect, 0, NULL);
    fmpl_dt_unref(cols);
    fmpl_dt_unref(pr);
    fmpl_dt_unref(pair);
    free(image);
    free(expect);
    free(m);

    /* a 3-D subarray of a 256^3 float array: 3 loop nodes, 1.7 M elements */
    enum { N = 256 };
    int64_t sizes[3] = {N, N, N}, sub[3] = {120, 100, 140}, st[3] = {3, 50, 100};
    float *a = malloc(sizeof(float) * N * N * N);
    float *ex = malloc(sizeof(float) * 120 * 100 * 140);
    for (int64_t k = 0; k < (int64_t)N * N * N; k++)
        a[k] = (float)k;
    n = 0;
    for (int64_t x = 0; x < sub[0]; x++)
        for (int64_t y = 0; y < sub[1]; y++)
            for (int64_t z = 0; z < sub[2]; z++)
                ex[n++] = a[((x + st[0]) * N + y + st[1]) * N + z + st[2]];
    fmpl_datatype *sa;
    CHECK_OK(fmpl_dt_subarray(3, sizes, sub, st, FMPL_DT_ORDER_C, B(FMPL_BT_FLOAT), &sa));
    CHECK_OK(fmpl_dt_commit(sa));
    CHECK(loop_nodes(sa->loop) == 3, "3-D subarray: %lld loop nodes",
          (long long)loop_nodes(sa->loop));
    staged_roundtrip("3-D subarray", a, 1, sa, (char *)ex, 0, NULL);
    fmpl_dt_unref(sa);

    /* cyclic(3) x block darray of the same array, rank 5 of a 4 x 2 grid */
    int dist[3] = {FMPL_DT_DISTRIBUTE_CYCLIC, FMPL_DT_DISTRIBUTE_BLOCK, FMPL_DT_DISTRIBUTE_NONE};
    int darg[3] = {3, FMPL_DT_DISTRIBUTE_DFLT_DARG, 0}, ps[3] = {4, 2, 1};
    fmpl_datatype *da;
    CHECK_OK(fmpl_dt_darray(8, 5, 3, sizes, dist, darg, ps, FMPL_DT_ORDER_C, B(FMPL_BT_FLOAT),
                            &da));
    CHECK_OK(fmpl_dt_commit(da));
    CHECK(loop_nodes(da->loop) <= 8, "darray: %lld loop nodes", (long long)loop_nodes(da->loop));
    /* rank 5 = coordinates (2, 1, 0): rows x with (x / 3) % 4 == 2, y in [128, 256) */
    float *dx = malloc(sizeof(float) * N * N * N);
    n = 0;
    for (int64_t x = 0; x < N; x++)
        if ((x / 3) % 4 == 2)
            for (int64_t y = 128; y < N; y++)
                for (int64_t z = 0; z < N; z++)
                    dx[n++] = a[(x * N + y) * N + z];
    CHECK_EQ(fmpl_dt_size(da), n * (int64_t)sizeof(float));
    staged_roundtrip("darray", a, 1, da, (char *)dx, 0, NULL);
    fmpl_dt_unref(da);
    free(dx);
    free(ex);
    free(a);

    /* a million small structs: one node for the element, repeated */
    struct rec { int i; double d; char c; };
    fmpl_datatype *ty[3] = {B(FMPL_BT_INT), B(FMPL_BT_DOUBLE), B(FMPL_BT_CHAR)}, *rt, *arr;
    int64_t bl[3] = {1, 1, 1};
    int64_t d[3] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, c)};
    CHECK_OK(fmpl_dt_struct(3, bl, d, ty, &rt));
    CHECK_OK(fmpl_dt_contiguous(1000000, rt, &arr));
    CHECK_OK(fmpl_dt_commit(arr));
    CHECK_OK(fmpl_dt_commit(rt));
    CHECK_EQ(fmpl_dt_extent(arr), 1000000 * (int64_t)sizeof(struct rec));
    CHECK(loop_nodes(arr->loop) <= 2, "struct array: %lld loop nodes",
          (long long)loop_nodes(arr->loop));
    struct rec *recs = malloc(sizeof(struct rec) * 1000000);
    char *px = malloc(13 * 1000000), *q = px;
    for (int k = 0; k < 1000000; k++) {
        recs[k].i = k;
        recs[k].d = k * 0.5;
        recs[k].c = (char)k;
        memcpy(q, &recs[k].i, 4);
        memcpy(q + 4, &recs[k].d, 8);
        q[12] = recs[k].c;
        q += 13;
    }
    staged_roundtrip("struct array", recs, 1, arr, px, 0, NULL);
    staged_roundtrip("struct array (count)", recs, 1000000, rt, px, 0, NULL);
    fmpl_dt_unref(arr);
    fmpl_dt_unref(rt);
    free(px);
    free(recs);
}

/* ----------------------------------------------------------- MPI_BOTTOM */

static void test_bottom(void)
{
    static int a[4] = {1, 2, 3, 4};
    static double b = 2.5;
    int64_t bl[2] = {2, 1}, d[2] = {(int64_t)(intptr_t)&a[1], (int64_t)(intptr_t)&b};
    fmpl_datatype *ty[2] = {B(FMPL_BT_INT), B(FMPL_BT_DOUBLE)}, *t;
    CHECK_OK(fmpl_dt_struct(2, bl, d, ty, &t));
    CHECK_OK(fmpl_dt_commit(t));
    char out[16];
    int64_t w;
    CHECK_OK(fmpl_dt_pack(NULL, 1, t, 0, out, sizeof out, &w));
    int x[2];
    double y;
    memcpy(x, out, 8);
    memcpy(&y, out + 8, 8);
    CHECK(w == 16 && x[0] == 2 && x[1] == 3 && y == 2.5, "MPI_BOTTOM pack");
    memcpy(out, &(int[2]){7, 8}, 8);
    CHECK_OK(fmpl_dt_unpack(out, 16, NULL, 1, t, 0, &w));
    CHECK(a[1] == 7 && a[2] == 8 && b == 2.5, "MPI_BOTTOM unpack");
    fmpl_dt_unref(t);
}

/* ------------------------------------------------------------ allocation */

static void test_no_malloc(void)
{
#if HAVE_COUNTING_MALLOC
    ref *r = NULL;
    while (!r || r->n < 10) { /* something non-trivial */
        ref_free(r);
        r = ref_random(3, 2000);
    }
    CHECK_OK(fmpl_dt_commit(r->t));
    int64_t lo, hi, total = 3 * ref_size(r), got;
    ref_span(r, 3, &lo, &hi);
    char *buf = calloc(1, (size_t)(hi - lo)), *pk = malloc((size_t)total + 1);
    char *dst = calloc(1, (size_t)(hi - lo));
    char *base = buf - lo, *dbase = dst - lo;
    fmpl_dt_cursor c;
    unsigned long before = (unsigned long)alloc_count();
    CHECK_OK(fmpl_dt_pack(base, 3, r->t, 0, pk, total, &got));
    CHECK_OK(fmpl_dt_pack(base, 3, r->t, total / 3, pk, total, &got));
    CHECK_OK(fmpl_dt_unpack(pk, total, dbase, 3, r->t, 0, &got));
    CHECK_OK(fmpl_dt_cursor_init(&c, base, 3, r->t));
    CHECK_OK(fmpl_dt_cursor_pack(&c, pk, 7, &got));
    CHECK_OK(fmpl_dt_cursor_pack(&c, pk, total, &got));
    CHECK_OK(fmpl_dt_copy(base, 3, r->t, dbase, 3, r->t, &got));
    CHECK_OK(fmpl_dt_copy(base, 3, r->t, pk, total, B(FMPL_BT_BYTE), &got));
    unsigned long after = (unsigned long)alloc_count();
    CHECK(after == before, "%lu allocations while moving data", after - before);
    void *volatile probe = malloc(1);
    free(probe);
    CHECK((unsigned long)alloc_count() > after, "the counting malloc is live");
    free(buf);
    free(dst);
    free(pk);
    ref_free(r);
#else
    printf("no-malloc check skipped (AddressSanitizer owns malloc)\n");
#endif
}

/* ----------------------------------------------------------------- errors */

static void test_errors(void)
{
    fmpl_datatype *t;
    int x[4] = {0}, got = 0;
    int64_t w = -7;
    char out[64];
    CHECK_OK(fmpl_dt_vector(2, 1, 2, B(FMPL_BT_INT), &t));
    CHECK(fmpl_dt_pack(x, 1, t, 0, out, 8, &w) == FMPL_ERR_ARG, "uncommitted pack");
    CHECK(fmpl_dt_unpack(out, 8, x, 1, t, 0, &w) == FMPL_ERR_ARG, "uncommitted unpack");
    fmpl_dt_cursor c;
    CHECK(fmpl_dt_cursor_init(&c, x, 1, t) == FMPL_ERR_ARG, "uncommitted cursor");
    CHECK(fmpl_dt_copy(x, 1, t, out, 8, B(FMPL_BT_BYTE), NULL) == FMPL_ERR_ARG,
          "uncommitted copy");
    CHECK(w == -7, "nothing written on error");
    CHECK_OK(fmpl_dt_commit(t));
    CHECK_OK(fmpl_dt_commit(t)); /* twice is fine */
    CHECK(fmpl_dt_commit(NULL) == FMPL_ERR_ARG, "commit NULL");
    CHECK(fmpl_dt_pack(x, -1, t, 0, out, 8, &w) == FMPL_ERR_SIZE, "negative count");
    CHECK(fmpl_dt_pack(x, 1, t, -1, out, 8, &w) == FMPL_ERR_SIZE, "negative offset");
    CHECK(fmpl_dt_pack(x, 1, t, 0, out, -8, &w) == FMPL_ERR_SIZE, "negative length");
    CHECK(fmpl_dt_pack(x, 1, t, 9, out, 8, &w) == FMPL_ERR_ARG, "offset past the end");
    CHECK(fmpl_dt_pack(x, 1, t, 0, NULL, 8, &w) == FMPL_ERR_ARG, "NULL out");
    CHECK(fmpl_dt_pack(x, 1, NULL, 0, out, 8, &w) == FMPL_ERR_ARG, "NULL type");
    CHECK(fmpl_dt_unpack(NULL, 8, x, 1, t, 0, &w) == FMPL_ERR_ARG, "NULL in");
    CHECK(fmpl_dt_pack(x, INT64_MAX / 2, t, 0, out, 8, &w) == FMPL_ERR_SIZE, "count overflow");
    CHECK_OK(fmpl_dt_pack(x, 1, t, 8, out, 8, &w)); /* at the end: nothing */
    CHECK_EQ(w, 0);
    CHECK_OK(fmpl_dt_pack(x, 1, t, 4, NULL, 0, &w));
    CHECK_EQ(w, 0);
    CHECK_OK(fmpl_dt_cursor_init(&c, x, 1, t));
    CHECK(fmpl_dt_cursor_seek(&c, 9) == FMPL_ERR_ARG && fmpl_dt_cursor_seek(&c, -1) == FMPL_ERR_ARG,
          "seek outside");
    CHECK(fmpl_dt_cursor_pack(&c, out, -1, &w) == FMPL_ERR_SIZE, "cursor negative length");
    int64_t ps;
    CHECK(fmpl_dt_pack_size(-1, t, &ps) == FMPL_ERR_SIZE, "pack_size negative");
    CHECK_OK(fmpl_dt_pack_size(5, t, &ps));
    CHECK_EQ(ps, 40);
    /* truncation: the destination is filled, then FMPL_ERR_TRUNCATE */
    int src[6] = {1, 2, 3, 4, 5, 6}, dst[4] = {0};
    int64_t copied;
    CHECK(fmpl_dt_copy(src, 3, t, dst, 2, B(FMPL_BT_INT), &copied) == FMPL_ERR_TRUNCATE,
          "truncating copy");
    CHECK(copied == 8 && dst[0] == 1 && dst[1] == 3 && dst[2] == 0, "partial copy %d %d %d",
          dst[0], dst[1], dst[2]);
    CHECK_OK(fmpl_dt_copy(src, 1, t, dst, 4, B(FMPL_BT_INT), &copied)); /* shorter source: fine */
    CHECK_EQ(copied, 8);
    (void)got;
    fmpl_dt_unref(t);
}

/* ------------------------------------------------------------------ bench */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bench_one(const char *what, const void *buf, int64_t count, const fmpl_datatype *t)
{
    int64_t total = count * fmpl_dt_size(t), got;
    char *out = malloc((size_t)total);
    enum { STAGE = 65536 };
    static char stage[STAGE];
    double t0 = now();
    int reps = 0;
    do {
        CHECK_OK(fmpl_dt_pack(buf, count, t, 0, out, total, &got));
        reps++;
    } while (now() - t0 < 0.3);
    double whole = (now() - t0) / reps;
    t0 = now();
    reps = 0;
    do {
        fmpl_dt_cursor c;
        fmpl_dt_cursor_init(&c, buf, count, t);
        while (fmpl_dt_cursor_remaining(&c) > 0)
            fmpl_dt_cursor_pack(&c, stage, STAGE, &got);
        reps++;
    } while (now() - t0 < 0.3);
    double staged = (now() - t0) / reps;
    t0 = now();
    reps = 0;
    do {
        memcpy(out, buf, (size_t)total);
        reps++;
    } while (now() - t0 < 0.3);
    double mc = (now() - t0) / reps;
    printf("%-34s %8.1f MB: pack %6.2f GB/s, 64 KiB pieces %6.2f GB/s, memcpy %6.2f GB/s\n",
           what, total / 1e6, total / whole / 1e9, total / staged / 1e9, total / mc / 1e9);
    free(out);
}

static void bench(void)
{
    enum { N = 1 << 22 };
    double *a = malloc(sizeof(double) * 2 * N);
    for (int64_t k = 0; k < 2 * N; k++)
        a[k] = (double)k;
    fmpl_datatype *t;
    fmpl_dt_contiguous(N, B(FMPL_BT_DOUBLE), &t);
    fmpl_dt_commit(t);
    bench_one("contiguous doubles", a, 1, t);
    fmpl_dt_unref(t);
    fmpl_dt_vector(N, 1, 2, B(FMPL_BT_DOUBLE), &t);
    fmpl_dt_commit(t);
    bench_one("vector(N,1,2,double)", a, 1, t);
    fmpl_dt_unref(t);
    fmpl_dt_vector(N / 64, 64, 128, B(FMPL_BT_DOUBLE), &t);
    fmpl_dt_commit(t);
    bench_one("vector(N/64,64,128,double)", a, 1, t);
    fmpl_dt_unref(t);
    fmpl_datatype *ty[3] = {B(FMPL_BT_INT), B(FMPL_BT_DOUBLE), B(FMPL_BT_CHAR)};
    int64_t bl[3] = {1, 1, 1}, d[3] = {0, 8, 16};
    fmpl_dt_struct(3, bl, d, ty, &t);
    fmpl_dt_commit(t);
    bench_one("struct{int,double,char} x N/2", a, N / 2, t);
    fmpl_dt_unref(t);
    free(a);
}

int main(int argc, char **argv)
{
    setenv("FMPL_ERRORS_QUIET", "1", 1);
    fmpl_error_init();
    if (argc > 1 && !strcmp(argv[1], "--bench")) {
        bench();
        return failures ? 1 : 0;
    }
    test_constructors();
    test_random(3000);
    test_large();
    test_bottom();
    test_no_malloc();
    test_errors();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("datatype pack: all passed\n");
    return 0;
}
