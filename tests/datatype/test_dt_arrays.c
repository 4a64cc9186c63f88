/* Unit test of the datatype engine: subarray and darray.
 *
 *  - subarray: hand-written index sequences in C and Fortran order; then
 *    every (subsize, start) of a small 3-D array, both orders, against the
 *    reference model; derived old types; lb = 0 and extent = the full
 *    array's.
 *  - darray: block, cyclic, cyclic(k), block(k) and none over 1-D, 2-D and
 *    3-D process grids, both orders: every rank's type against the
 *    reference model (which decides ownership straight from the
 *    distribution's definition), and the union over all ranks covers every
 *    global element exactly once, each rank's elements in storage order.
 *  - invalid parameters: FMPL_ERR_ARG (FMPL_ERR_SIZE for negative ndims).
 */
#include "dt_ref.h"
#include "base/error.h"
#include "fmpl.h"

#include <stdlib.h>
#include <string.h>

static fmpl_datatype *B(fmpl_basic_type bt) { return fmpl_dt_basic(bt); }

static void check_ref(ref *r, const char *what, int64_t max_count)
{
    ref_check_queries(r, what);
    CHECK_OK(fmpl_dt_commit(r->t));
    ref_check_queries(r, what);
    for (int64_t count = 1; count <= max_count; count++)
        ref_check_pack(r, count, what);
}

/* Pack one element of t over a global int array holding 0, 1, 2, ... and
 * return the indices (caller frees); *n = how many. */
static int *packed_indices(const fmpl_datatype *t, int64_t global, int64_t *n)
{
    int *g = malloc(sizeof(int) * (size_t)global);
    for (int64_t k = 0; k < global; k++)
        g[k] = (int)k;
    *n = fmpl_dt_size(t) / (int64_t)sizeof(int);
    int *out = malloc(sizeof(int) * (size_t)(*n + 1));
    int64_t w;
    CHECK_OK(fmpl_dt_pack(g, 1, t, 0, out, *n * (int64_t)sizeof(int), &w));
    free(g);
    return out;
}

/* ------------------------------------------------------------- subarray */

static void test_subarray_fixed(void)
{
    int64_t sizes[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2}, n;
    fmpl_datatype *t;
    /* C: element (i, j) at i * 5 + j, last index fastest */
    CHECK_OK(fmpl_dt_subarray(2, sizes, sub, st, FMPL_DT_ORDER_C, B(FMPL_BT_INT), &t));
    CHECK_OK(fmpl_dt_commit(t));
    CHECK(fmpl_dt_lb(t) == 0 && fmpl_dt_extent(t) == 20 * 4, "C subarray bounds");
    CHECK(fmpl_dt_true_lb(t) == 7 * 4 && fmpl_dt_true_extent(t) == 8 * 4, "C true bounds");
    int *ix = packed_indices(t, 20, &n);
    int c_expect[6] = {7, 8, 9, 12, 13, 14};
    CHECK(n == 6 && !memcmp(ix, c_expect, sizeof c_expect), "C order %d %d %d %d %d %d", ix[0],
          ix[1], ix[2], ix[3], ix[4], ix[5]);
    free(ix);
    fmpl_dt_unref(t);
    /* Fortran: element (i, j) at i + j * 4, first index fastest */
    CHECK_OK(fmpl_dt_subarray(2, sizes, sub, st, FMPL_DT_ORDER_FORTRAN, B(FMPL_BT_INT), &t));
    CHECK_OK(fmpl_dt_commit(t));
    CHECK(fmpl_dt_lb(t) == 0 && fmpl_dt_extent(t) == 20 * 4, "Fortran subarray bounds");
    ix = packed_indices(t, 20, &n);
    int f_expect[6] = {9, 10, 13, 14, 17, 18};
    CHECK(n == 6 && !memcmp(ix, f_expect, sizeof f_expect), "Fortran order %d %d %d %d %d %d",
          ix[0], ix[1], ix[2], ix[3], ix[4], ix[5]);
    free(ix);
    fmpl_dt_unref(t);
    /* the whole array is contiguous, a full-width slab too (C), but extent
     * = the full array keeps a slab from being an array type */
    int64_t full_sub[2] = {4, 5}, zero[2] = {0, 0}, slab_sub[2] = {2, 5}, slab_st[2] = {1, 0};
    CHECK_OK(fmpl_dt_subarray(2, sizes, full_sub, zero, FMPL_DT_ORDER_C, B(FMPL_BT_INT), &t));
    CHECK_OK(fmpl_dt_commit(t));
    CHECK(fmpl_dt_is_contiguous(t), "full subarray is contiguous");
    fmpl_dt_unref(t);
    CHECK_OK(fmpl_dt_subarray(2, sizes, slab_sub, slab_st, FMPL_DT_ORDER_C, B(FMPL_BT_INT), &t));
    CHECK_OK(fmpl_dt_commit(t));
    CHECK(!fmpl_dt_is_contiguous(t), "slab: extent 80, size 40");
    CHECK(fmpl_dt_true_lb(t) == 20 && fmpl_dt_true_extent(t) == 40, "slab true bounds");
    fmpl_dt_unref(t);
}

/* More dimensions than the constructors keep on the stack. */
static void test_many_dims(void)
{
    enum { ND = 20 };
    int64_t sizes[ND], sub[ND], st[ND];
    int psz[ND], dist[ND], darg[ND];
    for (int i = 0; i < ND; i++) {
        sizes[i] = i % 5 == 0 ? 3 : 1;
        sub[i] = i % 5 == 0 ? 2 : 1;
        st[i] = i % 10 == 0 ? 1 : 0;
        psz[i] = i == 5 ? 3 : 1;
        dist[i] = i == 5 ? FMPL_DT_DISTRIBUTE_CYCLIC : FMPL_DT_DISTRIBUTE_BLOCK;
        darg[i] = FMPL_DT_DISTRIBUTE_DFLT_DARG;
    }
    ref *in = ref_basic(FMPL_BT_INT);
    for (int order = 0; order < 2; order++) {
        ref *r = ref_subarray(ND, sizes, sub, st, order, in);
        check_ref(r, "20-D subarray", 2);
        ref_free(r);
        for (int rank = 0; rank < 3; rank++) {
            r = ref_darray(3, rank, ND, sizes, dist, darg, psz, order, in);
            check_ref(r, "20-D darray", 1);
            ref_free(r);
        }
    }
    ref_free(in);
}

static void test_subarray_exhaustive(void)
{
    ref *old[3] = {ref_basic(FMPL_BT_INT), ref_basic(FMPL_BT_SHORT_INT), NULL};
    /* a derived old type: {char; double} resized to 12 bytes */
    ref *t2[2] = {ref_basic(FMPL_BT_CHAR), ref_basic(FMPL_BT_DOUBLE)};
    int64_t bl[2] = {1, 1}, d[2] = {0, 4};
    ref *s = ref_struct(2, bl, d, t2);
    old[2] = ref_resized(s, 0, 12);
    char what[256];
    int64_t sizes[3] = {3, 2, 4};
    int cases = 0;
    for (int o = 0; o < 3; o++)
        for (int order = 0; order < 2; order++)
            for (int64_t a = 1; a <= sizes[0]; a++)
                for (int64_t b = 1; b <= sizes[1]; b++)
                    for (int64_t c = 1; c <= sizes[2]; c++)
                        for (int64_t x = 0; x <= sizes[0] - a; x++)
                            for (int64_t y = 0; y <= sizes[1] - b; y++)
                                for (int64_t z = 0; z <= sizes[2] - c; z++) {
                                    int64_t sub[3] = {a, b, c}, st[3] = {x, y, z};
                                    snprintf(what, sizeof what,
                                             "subarray old %d order %d sub %lld,%lld,%lld at "
                                             "%lld,%lld,%lld",
                                             o, order, (long long)a, (long long)b, (long long)c,
                                             (long long)x, (long long)y, (long long)z);
                                    ref *r = ref_subarray(3, sizes, sub, st, order, old[o]);
                                    check_ref(r, what, (cases++ % 7) == 0 ? 2 : 1);
                                    ref_free(r);
                                }
    for (int o = 0; o < 3; o++)
        ref_free(old[o]);
    ref_free(s);
    ref_free(t2[0]);
    ref_free(t2[1]);
}

/* ----------------------------------------------------------------- darray */

typedef struct darray_case {
    int ndims;
    int64_t gsizes[3];
    int psizes[3];
    int distribs[3];
    int dargs[3];
} darray_case;

static int cases_run;

static void run_darray(const darray_case *dc, int order, ref *old)
{
    int size = 1;
    int64_t global = 1;
    for (int i = 0; i < dc->ndims; i++) {
        size *= dc->psizes[i];
        global *= dc->gsizes[i];
    }
    int *seen = calloc((size_t)global, sizeof(int));
    char what[400];
    int len = snprintf(what, sizeof what, "darray order %d:", order);
    for (int i = 0; i < dc->ndims; i++)
        len += snprintf(what + len, sizeof what - (size_t)len, " [g %lld p %d dist %d darg %d]",
                        (long long)dc->gsizes[i], dc->psizes[i], dc->distribs[i], dc->dargs[i]);
    for (int rank = 0; rank < size; rank++) {
        ref *r = ref_darray(size, rank, dc->ndims, dc->gsizes, dc->distribs, dc->dargs,
                            dc->psizes, order, old);
        check_ref(r, what, rank == 0 ? 2 : 1);
        CHECK(fmpl_dt_lb(r->t) == 0 && fmpl_dt_extent(r->t) == global * fmpl_dt_extent(old->t),
              "%s: bounds", what);
        if (old->t == B(FMPL_BT_INT)) {
            int64_t n;
            int *ix = packed_indices(r->t, global, &n);
            for (int64_t k = 0; k < n; k++) {
                CHECK(ix[k] >= 0 && ix[k] < global, "%s: index %d", what, ix[k]);
                if (ix[k] >= 0 && ix[k] < global)
                    seen[ix[k]]++;
                CHECK(k == 0 || ix[k] > ix[k - 1], "%s rank %d: not in storage order", what,
                      rank);
            }
            free(ix);
        }
        ref_free(r);
        cases_run++;
    }
    if (old->t == B(FMPL_BT_INT))
        for (int64_t k = 0; k < global; k++)
            CHECK(seen[k] == 1, "%s: element %lld owned %d times", what, (long long)k, seen[k]);
    free(seen);
}

/* Distribution choices for a dimension of gsize g on p processes. */
static int dim_choices(int64_t g, int p, int *dist, int *darg)
{
    int n = 0;
    if (p == 1) {
        dist[n] = FMPL_DT_DISTRIBUTE_NONE, darg[n++] = 0;
    }
    dist[n] = FMPL_DT_DISTRIBUTE_BLOCK, darg[n++] = FMPL_DT_DISTRIBUTE_DFLT_DARG;
    int big = (int)((g + p - 1) / p) + 1; /* a larger explicit block: some ranks get nothing */
    dist[n] = FMPL_DT_DISTRIBUTE_BLOCK, darg[n++] = big;
    dist[n] = FMPL_DT_DISTRIBUTE_CYCLIC, darg[n++] = FMPL_DT_DISTRIBUTE_DFLT_DARG;
    dist[n] = FMPL_DT_DISTRIBUTE_CYCLIC, darg[n++] = 2;
    dist[n] = FMPL_DT_DISTRIBUTE_CYCLIC, darg[n++] = 3;
    return n;
}

static void test_darray(void)
{
    ref *i = ref_basic(FMPL_BT_INT);
    int dist[8], darg[8], dist2[8], darg2[8], dist3[8], darg3[8];
    /* 1-D */
    int64_t g1[] = {1, 7, 10, 16};
    for (size_t a = 0; a < sizeof g1 / sizeof g1[0]; a++)
        for (int p = 1; p <= 5; p++) {
            int n = dim_choices(g1[a], p, dist, darg);
            for (int k = 0; k < n; k++) {
                darray_case dc = {1, {g1[a]}, {p}, {dist[k]}, {darg[k]}};
                run_darray(&dc, FMPL_DT_ORDER_C, i);
                run_darray(&dc, FMPL_DT_ORDER_FORTRAN, i);
            }
        }
    /* 2-D */
    int64_t g2[][2] = {{7, 5}, {4, 9}};
    int p2[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 2}, {2, 3}};
    for (size_t a = 0; a < 2; a++)
        for (size_t q = 0; q < sizeof p2 / sizeof p2[0]; q++) {
            int n0 = dim_choices(g2[a][0], p2[q][0], dist, darg);
            int n1 = dim_choices(g2[a][1], p2[q][1], dist2, darg2);
            for (int k0 = 0; k0 < n0; k0++)
                for (int k1 = 0; k1 < n1; k1++) {
                    darray_case dc = {2, {g2[a][0], g2[a][1]}, {p2[q][0], p2[q][1]},
                                      {dist[k0], dist2[k1]}, {darg[k0], darg2[k1]}};
                    run_darray(&dc, (k0 + k1) % 2, i);
                }
        }
    /* 3-D, one grid, a sample of distributions, both orders */
    int64_t g3[3] = {4, 3, 5};
    int p3[3] = {2, 1, 2};
    int n0 = dim_choices(g3[0], p3[0], dist, darg);
    int n1 = dim_choices(g3[1], p3[1], dist2, darg2);
    int n2 = dim_choices(g3[2], p3[2], dist3, darg3);
    for (int k0 = 0; k0 < n0; k0++)
        for (int k1 = 0; k1 < n1; k1++)
            for (int k2 = 0; k2 < n2; k2++) {
                darray_case dc = {3, {g3[0], g3[1], g3[2]}, {p3[0], p3[1], p3[2]},
                                  {dist[k0], dist2[k1], dist3[k2]},
                                  {darg[k0], darg2[k1], darg3[k2]}};
                run_darray(&dc, FMPL_DT_ORDER_C, i);
                if ((k0 + k1 + k2) % 3 == 0)
                    run_darray(&dc, FMPL_DT_ORDER_FORTRAN, i);
            }
    /* a derived old type */
    ref *sh = ref_basic(FMPL_BT_SHORT);
    ref *c3 = ref_contiguous(3, sh);
    ref *rs = ref_resized(c3, -2, 10);
    darray_case dc = {2, {5, 6}, {2, 2}, {FMPL_DT_DISTRIBUTE_CYCLIC, FMPL_DT_DISTRIBUTE_BLOCK},
                      {2, FMPL_DT_DISTRIBUTE_DFLT_DARG}};
    run_darray(&dc, FMPL_DT_ORDER_FORTRAN, rs);
    run_darray(&dc, FMPL_DT_ORDER_C, rs);
    ref_free(rs);
    ref_free(c3);
    ref_free(sh);
    ref_free(i);
    printf("darray: %d rank types checked\n", cases_run);
}

/* ----------------------------------------------------------------- errors */

static void test_errors(void)
{
    fmpl_datatype *t = NULL, *in = B(FMPL_BT_INT);
    int64_t sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
    int64_t bad_sub[2] = {5, 3}, zero_sub[2] = {0, 3}, bad_st[2] = {3, 2}, neg_st[2] = {-1, 0};
    int64_t zero_sz[2] = {0, 5};
    CHECK(fmpl_dt_subarray(2, sz, sub, st, 7, in, &t) == FMPL_ERR_ARG, "bad order");
    CHECK(fmpl_dt_subarray(0, sz, sub, st, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG, "ndims 0");
    CHECK(fmpl_dt_subarray(-1, sz, sub, st, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_SIZE, "ndims<0");
    CHECK(fmpl_dt_subarray(2, sz, bad_sub, st, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "subsize > size");
    CHECK(fmpl_dt_subarray(2, sz, zero_sub, st, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "subsize 0");
    CHECK(fmpl_dt_subarray(2, sz, sub, bad_st, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "start + subsize > size");
    CHECK(fmpl_dt_subarray(2, sz, sub, neg_st, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "negative start");
    CHECK(fmpl_dt_subarray(2, zero_sz, sub, st, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "size 0");
    CHECK(fmpl_dt_subarray(2, NULL, sub, st, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "NULL sizes");
    CHECK(fmpl_dt_subarray(2, sz, sub, st, FMPL_DT_ORDER_C, NULL, &t) == FMPL_ERR_ARG,
          "NULL old");
    int64_t huge[2] = {INT64_MAX / 2, 3}, hsub[2] = {1, 1}, hst[2] = {0, 0};
    CHECK(fmpl_dt_subarray(2, huge, hsub, hst, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_SIZE,
          "extent overflow");

    int64_t g[2] = {10, 6};
    int ps[2] = {2, 2}, dist[2] = {FMPL_DT_DISTRIBUTE_BLOCK, FMPL_DT_DISTRIBUTE_CYCLIC};
    int darg[2] = {FMPL_DT_DISTRIBUTE_DFLT_DARG, 2};
    CHECK_OK(fmpl_dt_darray(4, 3, 2, g, dist, darg, ps, FMPL_DT_ORDER_C, in, &t));
    fmpl_dt_unref(t);
    CHECK(fmpl_dt_darray(5, 0, 2, g, dist, darg, ps, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "psizes product != size");
    CHECK(fmpl_dt_darray(4, 4, 2, g, dist, darg, ps, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "rank >= size");
    CHECK(fmpl_dt_darray(4, -1, 2, g, dist, darg, ps, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "rank < 0");
    CHECK(fmpl_dt_darray(0, 0, 2, g, dist, darg, ps, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "size 0");
    CHECK(fmpl_dt_darray(4, 0, 2, g, dist, darg, ps, 9, in, &t) == FMPL_ERR_ARG, "bad order");
    int bad_dist[2] = {FMPL_DT_DISTRIBUTE_BLOCK, 17};
    CHECK(fmpl_dt_darray(4, 0, 2, g, bad_dist, darg, ps, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "bad distribution");
    int small_darg[2] = {4, 2}; /* 4 * 2 < 10 */
    CHECK(fmpl_dt_darray(4, 0, 2, g, dist, small_darg, ps, FMPL_DT_ORDER_C, in, &t) ==
              FMPL_ERR_ARG,
          "block darg * psize < gsize");
    int zero_darg[2] = {FMPL_DT_DISTRIBUTE_DFLT_DARG, 0};
    CHECK(fmpl_dt_darray(4, 0, 2, g, dist, zero_darg, ps, FMPL_DT_ORDER_C, in, &t) ==
              FMPL_ERR_ARG,
          "darg 0");
    int none_dist[2] = {FMPL_DT_DISTRIBUTE_NONE, FMPL_DT_DISTRIBUTE_CYCLIC};
    CHECK(fmpl_dt_darray(4, 0, 2, g, none_dist, darg, ps, FMPL_DT_ORDER_C, in, &t) ==
              FMPL_ERR_ARG,
          "NONE with psize 2");
    int64_t bad_g[2] = {0, 6};
    CHECK(fmpl_dt_darray(4, 0, 2, bad_g, dist, darg, ps, FMPL_DT_ORDER_C, in, &t) ==
              FMPL_ERR_ARG,
          "gsize 0");
    int bad_ps[2] = {4, 0};
    CHECK(fmpl_dt_darray(4, 0, 2, g, dist, darg, bad_ps, FMPL_DT_ORDER_C, in, &t) ==
              FMPL_ERR_ARG,
          "psize 0");
    CHECK(fmpl_dt_darray(4, 0, 2, g, dist, NULL, ps, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "NULL dargs");
    CHECK(fmpl_dt_darray(4, 0, 0, g, dist, darg, ps, FMPL_DT_ORDER_C, in, &t) == FMPL_ERR_ARG,
          "ndims 0");
    CHECK(fmpl_dt_darray(4, 0, 2, g, dist, darg, ps, FMPL_DT_ORDER_C, in, NULL) == FMPL_ERR_ARG,
          "NULL newtype");
}

int main(void)
{
    setenv("FMPL_ERRORS_QUIET", "1", 1);
    fmpl_error_init();
    test_subarray_fixed();
    test_subarray_exhaustive();
    test_many_dims();
    test_darray();
    test_errors();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("datatype arrays: all passed\n");
    return 0;
}
