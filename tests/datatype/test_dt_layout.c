/* Unit test of the datatype engine: sizes, bounds and the other queries.
 *
 * Hand-computed expectations from MPI-4.0's rules (and C's struct layout)
 * for: every predefined type, the MPI-1 LB/UB example, sticky markers,
 * resized types, negative displacements and strides, struct padding
 * (epsilon), empty types, contiguity, homogeneity and basic arrays, and
 * MPI_Get_elements with partial elements.  Then the same queries on random
 * nested types against the reference model (dt_ref.c).
 */
#include "dt_ref.h"
#include "base/error.h"
#include "fmpl.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static fmpl_datatype *B(fmpl_basic_type bt) { return fmpl_dt_basic(bt); }

static void commit(fmpl_datatype *t) { CHECK_OK(fmpl_dt_commit(t)); }

static void check_bounds(const char *what, const fmpl_datatype *t, int64_t size, int64_t lb,
                         int64_t extent, int64_t true_lb, int64_t true_extent)
{
    CHECK(fmpl_dt_size(t) == size && fmpl_dt_lb(t) == lb && fmpl_dt_extent(t) == extent &&
              fmpl_dt_ub(t) == lb + extent && fmpl_dt_true_lb(t) == true_lb &&
              fmpl_dt_true_extent(t) == true_extent,
          "%s: size %lld lb %lld extent %lld true_lb %lld true_extent %lld; expected %lld %lld "
          "%lld %lld %lld",
          what, (long long)fmpl_dt_size(t), (long long)fmpl_dt_lb(t),
          (long long)fmpl_dt_extent(t), (long long)fmpl_dt_true_lb(t),
          (long long)fmpl_dt_true_extent(t), (long long)size, (long long)lb, (long long)extent,
          (long long)true_lb, (long long)true_extent);
}

/* ------------------------------------------------------------ predefined */

static void test_predefined(void)
{
    CHECK(fmpl_dt_basic(FMPL_BT_NONE) == NULL, "NONE has no type");
    CHECK(fmpl_dt_basic(FMPL_BT_COUNT_OF_TYPES) == NULL, "out of range");
    for (int b = 1; b < FMPL_BT_COUNT_OF_TYPES; b++) {
        fmpl_datatype *t = B((fmpl_basic_type)b);
        const fmpl_basic_type_info *info = &fmpl_basic_types[b];
        CHECK(t && fmpl_dt_is_predefined(t) && fmpl_dt_is_committed(t), "%s", info->name);
        CHECK(t == B((fmpl_basic_type)b), "%s: one static object", info->name);
        CHECK(!strcmp(fmpl_dt_get_name(t), info->name), "%s: name %s", info->name,
              fmpl_dt_get_name(t));
        CHECK_EQ(fmpl_dt_extent(t), info->size);
        CHECK_EQ(fmpl_dt_lb(t), 0);
        CHECK_EQ(fmpl_dt_basic_type_of(t), b);
        CHECK_EQ(fmpl_dt_homogeneous_basic(t), b);
        CHECK(info->size > 0 && info->align > 0 && (info->size % info->align) == 0,
              "%s: size %zu align %zu", info->name, info->size, info->align);
        fmpl_dt_envelope env;
        CHECK_OK(fmpl_dt_get_envelope(t, &env));
        CHECK(env.combiner == FMPL_DT_COMBINER_NAMED && !env.num_integers &&
                  !env.num_addresses && !env.num_large_counts && !env.num_datatypes,
              "%s: envelope", info->name);
        if (info->category != FMPL_CAT_PAIR) {
            CHECK_EQ(fmpl_dt_size(t), info->size);
            CHECK(fmpl_dt_is_contiguous(t), "%s contiguous", info->name);
            CHECK_EQ(fmpl_dt_num_elements(t), 1);
        } else {
            CHECK_EQ(fmpl_dt_num_elements(t), 2);
        }
        fmpl_dt_ref(t); /* no-ops on predefined types */
        fmpl_dt_unref(t);
        fmpl_dt_unref(t);
    }
    /* pair types: the C structs' layouts */
    struct si { short v; int i; };
    struct di { double v; int i; };
    struct li { long v; int i; };
    struct ldi { long double v; int i; };
    struct { fmpl_basic_type bt; int64_t size, extent; bool contiguous; } pairs[] = {
        {FMPL_BT_FLOAT_INT, 8, 8, true},
        {FMPL_BT_2INT, 8, 8, true},
        {FMPL_BT_SHORT_INT, sizeof(short) + sizeof(int), sizeof(struct si), false},
        {FMPL_BT_DOUBLE_INT, 12, sizeof(struct di), false},
        {FMPL_BT_LONG_INT, sizeof(long) + sizeof(int), sizeof(struct li), false},
        {FMPL_BT_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int), sizeof(struct ldi), false},
        {FMPL_BT_F_2INTEGER, 8, 8, true},
        {FMPL_BT_F_2REAL, 8, 8, true},
        {FMPL_BT_F_2DOUBLE_PRECISION, 16, 16, true},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        fmpl_datatype *t = B(pairs[i].bt);
        CHECK(fmpl_dt_size(t) == pairs[i].size && fmpl_dt_extent(t) == pairs[i].extent &&
                  fmpl_dt_is_contiguous(t) == pairs[i].contiguous,
              "%s: size %lld extent %lld contiguous %d", fmpl_dt_get_name(t),
              (long long)fmpl_dt_size(t), (long long)fmpl_dt_extent(t),
              fmpl_dt_is_contiguous(t));
        fmpl_basic_type bt;
        int64_t n;
        CHECK(fmpl_dt_basic_array(t, &bt, &n) && bt == pairs[i].bt && n == 1, "%s array",
              fmpl_dt_get_name(t));
    }
    /* the MPI_2INTEGER fix: two INTEGERs, 4-byte aligned (the table had int64_t) */
    CHECK_EQ(fmpl_basic_types[FMPL_BT_F_2INTEGER].align, 4);
    fmpl_datatype *ty[2] = {B(FMPL_BT_CHAR), B(FMPL_BT_F_2INTEGER)}, *s;
    int64_t bl[2] = {1, 1}, d[2] = {0, 4};
    CHECK_OK(fmpl_dt_struct(2, bl, d, ty, &s));
    check_bounds("struct{char; 2INTEGER}", s, 9, 0, 12, 0, 12);
    fmpl_dt_unref(s);

    fmpl_datatype *lbm = fmpl_dt_lb_marker(), *ubm = fmpl_dt_ub_marker();
    CHECK(fmpl_dt_is_predefined(lbm) && fmpl_dt_is_predefined(ubm), "markers predefined");
    check_bounds("MPI_LB", lbm, 0, 0, 0, 0, 0);
    check_bounds("MPI_UB", ubm, 0, 0, 0, 0, 0);
    CHECK(!strcmp(fmpl_dt_get_name(lbm), "MPI_LB") && !strcmp(fmpl_dt_get_name(ubm), "MPI_UB"),
          "marker names");
    CHECK_EQ(fmpl_dt_homogeneous_basic(lbm), FMPL_BT_NONE);
}

/* -------------------------------------------------------------- markers */

static void test_markers(void)
{
    /* MPI-1 3.12.3's example: {(lb,-3), (int,0), (ub,6)}, extent 9 */
    fmpl_datatype *ty[3] = {fmpl_dt_lb_marker(), B(FMPL_BT_INT), fmpl_dt_ub_marker()};
    int64_t bl[3] = {1, 1, 1}, d[3] = {-3, 0, 6};
    fmpl_datatype *t1, *t2, *t3;
    CHECK_OK(fmpl_dt_struct(3, bl, d, ty, &t1));
    check_bounds("type1", t1, 4, -3, 9, 0, 4);
    /* contiguous(2, type1) = {(lb,-3),(int,0),(ub,6),(lb,6),(int,9),(ub,15)}: lb -3, ub 15 */
    CHECK_OK(fmpl_dt_contiguous(2, t1, &t2));
    check_bounds("contiguous(2, type1)", t2, 8, -3, 18, 0, 13);
    commit(t2);
    CHECK(!fmpl_dt_is_contiguous(t2), "holes");
    char buf[32] = {0};
    int out[2];
    char *base = buf + 4; /* ints at 0 and at 9 (unaligned) */
    memcpy(base + 0, &(int){11}, 4);
    memcpy(base + 9, &(int){22}, 4);
    CHECK_OK(fmpl_dt_pack(base, 1, t2, 0, out, sizeof out, NULL));
    CHECK(out[0] == 11 && out[1] == 22, "pack %d %d", out[0], out[1]);

    /* markers are sticky: an explicit bound wins over data beyond it */
    fmpl_datatype *r;
    CHECK_OK(fmpl_dt_resized(B(FMPL_BT_INT), -4, 16, &r));
    fmpl_datatype *ty2[2] = {r, B(FMPL_BT_INT)};
    int64_t bl2[2] = {1, 1}, d2[2] = {0, 100};
    CHECK_OK(fmpl_dt_struct(2, bl2, d2, ty2, &t3));
    check_bounds("struct{resized@0, int@100}", t3, 8, -4, 16, 0, 104);
    fmpl_dt_unref(t3);
    /* only an upper marker: lb from the data; no padding (explicit ub) */
    fmpl_datatype *ty3[2] = {B(FMPL_BT_DOUBLE), fmpl_dt_ub_marker()};
    int64_t d3[2] = {8, 20};
    CHECK_OK(fmpl_dt_struct(2, bl2, d3, ty3, &t3));
    check_bounds("struct{double@8, UB@20}", t3, 8, 8, 12, 8, 8);
    fmpl_dt_unref(t3);
    /* only a lower marker, no data: lb = the marker, ub = 0 (MPICH's
     * datatype/struct_no_real_types: {(LB,10)} has extent -10) */
    fmpl_datatype *ty4[1] = {fmpl_dt_lb_marker()};
    int64_t d4[1] = {10};
    CHECK_OK(fmpl_dt_struct(1, bl2, d4, ty4, &t3));
    check_bounds("struct{LB@10}", t3, 0, 10, -10, 0, 0);
    fmpl_dt_unref(t3);
    /* and the mirror: only an upper marker, no data: lb = 0 */
    fmpl_datatype *ty4u[1] = {fmpl_dt_ub_marker()};
    CHECK_OK(fmpl_dt_struct(1, bl2, d4, ty4u, &t3));
    check_bounds("struct{UB@10}", t3, 0, 0, 10, 0, 0);
    fmpl_dt_unref(t3);
    /* several markers: the lowest LB, the highest UB */
    fmpl_datatype *ty5[4] = {fmpl_dt_lb_marker(), fmpl_dt_lb_marker(), fmpl_dt_ub_marker(),
                             fmpl_dt_ub_marker()};
    int64_t bl5[4] = {1, 1, 1, 1}, d5[4] = {4, -2, 30, 10};
    CHECK_OK(fmpl_dt_struct(4, bl5, d5, ty5, &t3));
    check_bounds("struct{LB@4, LB@-2, UB@30, UB@10}", t3, 0, -2, 32, 0, 0);
    fmpl_dt_unref(t3);
    /* a marker inside a vector: copies at each stride */
    CHECK_OK(fmpl_dt_vector(3, 1, 2, t1, &t3)); /* copies at 0, 18, 36 */
    check_bounds("vector(3,1,2,type1)", t3, 12, -3, 36 + 6 + 3, 0, 40);
    fmpl_dt_unref(t3);
    fmpl_dt_unref(r);
    fmpl_dt_unref(t1);
    fmpl_dt_unref(t2);
}

/* -------------------------------------------------------------- resized */

static void test_resized(void)
{
    fmpl_datatype *r, *c, *rr, *v;
    CHECK_OK(fmpl_dt_resized(B(FMPL_BT_INT), -4, 16, &r));
    check_bounds("resized(int,-4,16)", r, 4, -4, 16, 0, 4);
    CHECK_OK(fmpl_dt_contiguous(3, r, &c)); /* ints at 0, 16, 32 */
    check_bounds("contiguous(3, resized)", c, 12, -4, 48, 0, 36);
    /* resizing again replaces the markers */
    CHECK_OK(fmpl_dt_resized(c, 2, 6, &rr));
    check_bounds("resized(contiguous, 2, 6)", rr, 12, 2, 6, 0, 36);
    /* a resized type with extent == size and data at true_lb is contiguous,
     * even though lb != true_lb */
    fmpl_datatype *shift;
    CHECK_OK(fmpl_dt_resized(B(FMPL_BT_INT), -4, 4, &shift));
    commit(shift);
    check_bounds("resized(int,-4,4)", shift, 4, -4, 4, 0, 4);
    CHECK(fmpl_dt_is_contiguous(shift), "contiguous");
    fmpl_basic_type sbt;
    int64_t sn;
    CHECK(fmpl_dt_basic_array(shift, &sbt, &sn) && sbt == FMPL_BT_INT && sn == 1,
          "resized(int,-4,4) is an array of one int at true_lb");
    /* zero and negative extents */
    CHECK_OK(fmpl_dt_resized(B(FMPL_BT_DOUBLE), 0, 0, &v));
    check_bounds("resized(double,0,0)", v, 8, 0, 0, 0, 8);
    fmpl_dt_unref(v);
    CHECK_OK(fmpl_dt_resized(B(FMPL_BT_DOUBLE), 8, -8, &v));
    check_bounds("resized(double,8,-8)", v, 8, 8, -8, 0, 8);
    fmpl_datatype *cv;
    CHECK_OK(fmpl_dt_contiguous(3, v, &cv)); /* doubles at 0, -8, -16 */
    /* lb markers at 8, 0, -8; ub markers at 0, -8, -16 */
    check_bounds("contiguous(3, extent -8)", cv, 24, -8, 8, -16, 24);
    commit(cv);
    double dv[3] = {1, 2, 3}, out[3];
    CHECK_OK(fmpl_dt_pack(&dv[2], 1, cv, 0, out, sizeof out, NULL));
    CHECK(out[0] == 3 && out[1] == 2 && out[2] == 1, "reverse order %g %g %g", out[0], out[1],
          out[2]);
    CHECK(!fmpl_dt_is_contiguous(cv), "reverse order is not contiguous");
    fmpl_dt_unref(cv);
    fmpl_dt_unref(v);
    fmpl_dt_unref(shift);
    fmpl_dt_unref(rr);
    fmpl_dt_unref(c);
    fmpl_dt_unref(r);
}

/* ------------------------------------------------- negative displacements */

static void test_negative(void)
{
    fmpl_datatype *t;
    int64_t bl[2] = {1, 2}, d[2] = {-8, 16};
    CHECK_OK(fmpl_dt_hindexed(2, bl, d, B(FMPL_BT_INT), &t));
    check_bounds("hindexed{-8:1, 16:2}", t, 12, -8, 32, -8, 32);
    fmpl_dt_unref(t);
    CHECK_OK(fmpl_dt_vector(3, 1, -2, B(FMPL_BT_INT), &t)); /* ints at 0, -8, -16 */
    check_bounds("vector(3,1,-2,int)", t, 12, -16, 20, -16, 20);
    commit(t);
    int a[5] = {0, 1, 2, 3, 4}, out[3];
    CHECK_OK(fmpl_dt_pack(&a[4], 1, t, 0, out, sizeof out, NULL));
    CHECK(out[0] == 4 && out[1] == 2 && out[2] == 0, "negative stride %d %d %d", out[0], out[1],
          out[2]);
    fmpl_dt_unref(t);
    int64_t d2[3] = {-3, 5, -1};
    CHECK_OK(fmpl_dt_indexed_block(3, 2, d2, B(FMPL_BT_SHORT), &t)); /* shorts -6..-2, 10..14, -2..2 */
    check_bounds("indexed_block", t, 12, -6, 20, -6, 20);
    fmpl_dt_unref(t);
}

/* ---------------------------------------------------------- struct padding */

static void test_padding(void)
{
    struct cases {
        const char *what;
        int n;
        fmpl_basic_type bt[3];
        int64_t bl[3], d[3];
        int64_t size, lb, extent;
    } cases[] = {
        {"{double; char}", 2, {FMPL_BT_DOUBLE, FMPL_BT_CHAR}, {1, 1}, {0, 8}, 9, 0, 16},
        {"{int; char}", 2, {FMPL_BT_INT, FMPL_BT_CHAR}, {1, 1}, {0, 4}, 5, 0, 8},
        {"{char; char}", 2, {FMPL_BT_CHAR, FMPL_BT_CHAR}, {1, 1}, {0, 1}, 2, 0, 2},
        {"{char; short}", 2, {FMPL_BT_CHAR, FMPL_BT_SHORT}, {1, 1}, {0, 2}, 3, 0, 4},
        {"{char[3]; int at 4; char}", 3, {FMPL_BT_CHAR, FMPL_BT_INT, FMPL_BT_CHAR}, {3, 1, 1},
         {0, 4, 8}, 8, 0, 12},
        {"{long double; char}", 2, {FMPL_BT_LONG_DOUBLE, FMPL_BT_CHAR}, {1, 1}, {0, 16}, 17, 0,
         (int64_t)sizeof(struct { long double a; char b; })},
        {"{double at 4; char at 12} (lb 4)", 2, {FMPL_BT_DOUBLE, FMPL_BT_CHAR}, {1, 1}, {4, 12}, 9,
         4, 16},
        {"{int at -4; char at 0}", 2, {FMPL_BT_INT, FMPL_BT_CHAR}, {1, 1}, {-4, 0}, 5, -4, 8},
        {"{DOUBLE_INT; char}", 2, {FMPL_BT_DOUBLE_INT, FMPL_BT_CHAR}, {1, 1}, {0, 16}, 13, 0, 24},
        {"{2INTEGER; char}", 2, {FMPL_BT_F_2INTEGER, FMPL_BT_CHAR}, {1, 1}, {0, 8}, 9, 0, 12},
        {"{C_DOUBLE_COMPLEX; char}", 2, {FMPL_BT_C_DOUBLE_COMPLEX, FMPL_BT_CHAR}, {1, 1}, {0, 16},
         17, 0, 24},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fmpl_datatype *ty[3], *t;
        for (int k = 0; k < cases[i].n; k++)
            ty[k] = B(cases[i].bt[k]);
        CHECK_OK(fmpl_dt_struct(cases[i].n, cases[i].bl, cases[i].d, ty, &t));
        int64_t tl = cases[i].d[0], te = 0;
        for (int k = 0; k < cases[i].n; k++) {
            int64_t lo = cases[i].d[k], hi = cases[i].d[k] +
                                             cases[i].bl[k] * (int64_t)fmpl_basic_types[cases[i].bt[k]].size;
            if (cases[i].bt[k] == FMPL_BT_DOUBLE_INT)
                hi = cases[i].d[k] + 12;
            tl = lo < tl ? lo : tl;
            te = hi > te ? hi : te;
        }
        check_bounds(cases[i].what, t, cases[i].size, cases[i].lb, cases[i].extent, tl, te - tl);
        fmpl_dt_unref(t);
    }
    /* C's own layout agrees */
    struct cdc { char a; double b; char c; };
    fmpl_datatype *ty[3] = {B(FMPL_BT_CHAR), B(FMPL_BT_DOUBLE), B(FMPL_BT_CHAR)}, *t;
    int64_t bl[3] = {1, 1, 1};
    int64_t d[3] = {offsetof(struct cdc, a), offsetof(struct cdc, b), offsetof(struct cdc, c)};
    CHECK_OK(fmpl_dt_struct(3, bl, d, ty, &t));
    CHECK_EQ(fmpl_dt_extent(t), sizeof(struct cdc));
    /* a struct of that struct: padding from the inner alignment */
    fmpl_datatype *ty2[2] = {t, B(FMPL_BT_CHAR)}, *t2;
    int64_t bl2[2] = {2, 1}, d2[2] = {0, 2 * sizeof(struct cdc)};
    CHECK_OK(fmpl_dt_struct(2, bl2, d2, ty2, &t2));
    struct outer { struct cdc x[2]; char y; };
    CHECK_EQ(fmpl_dt_extent(t2), sizeof(struct outer));
    fmpl_dt_unref(t2);
    /* no padding after an explicit upper bound (MPI_UB, or a resized member) */
    fmpl_datatype *ty3[3] = {B(FMPL_BT_DOUBLE), B(FMPL_BT_CHAR), fmpl_dt_ub_marker()};
    int64_t d3[3] = {0, 8, 9};
    CHECK_OK(fmpl_dt_struct(3, bl, d3, ty3, &t2));
    check_bounds("{double; char; UB@9}", t2, 9, 0, 9, 0, 9);
    fmpl_dt_unref(t2);
    fmpl_datatype *r;
    CHECK_OK(fmpl_dt_resized(t, 0, 17, &r));
    fmpl_datatype *ty4[1] = {r};
    int64_t d4[1] = {0};
    CHECK_OK(fmpl_dt_struct(1, bl, d4, ty4, &t2));
    check_bounds("{resized to 17}", t2, 10, 0, 17, 0, 17);
    fmpl_dt_unref(t2);
    fmpl_dt_unref(r);
    /* vectors and contiguous do not pad: they keep the component's extent */
    CHECK_OK(fmpl_dt_hvector(2, 1, 12, B(FMPL_BT_DOUBLE), &t2));
    check_bounds("hvector(2,1,12,double)", t2, 16, 0, 20, 0, 20);
    fmpl_dt_unref(t2);
    CHECK_OK(fmpl_dt_contiguous(3, t, &t2));
    CHECK_EQ(fmpl_dt_extent(t2), 3 * sizeof(struct cdc));
    fmpl_dt_unref(t2);
    fmpl_dt_unref(t);
}

/* ---------------------------------------------------------------- empty */

static void test_empty(void)
{
    fmpl_datatype *t, *s;
    CHECK_OK(fmpl_dt_contiguous(0, B(FMPL_BT_INT), &t));
    commit(t);
    check_bounds("contiguous(0)", t, 0, 0, 0, 0, 0);
    CHECK(fmpl_dt_is_contiguous(t), "empty is contiguous");
    CHECK_EQ(fmpl_dt_homogeneous_basic(t), FMPL_BT_NONE);
    CHECK(!fmpl_dt_basic_array(t, NULL, NULL), "no array");
    int64_t w = -1, e = -1;
    char c;
    CHECK_OK(fmpl_dt_pack(NULL, 10, t, 0, &c, 1, &w));
    CHECK_EQ(w, 0);
    CHECK_OK(fmpl_dt_get_elements(t, 0, &e));
    CHECK_EQ(e, 0);
    /* empty components contribute nothing to the bounds */
    fmpl_datatype *ty[2] = {t, B(FMPL_BT_INT)};
    int64_t bl[2] = {1, 1}, d[2] = {-100, 8};
    CHECK_OK(fmpl_dt_struct(2, bl, d, ty, &s));
    check_bounds("struct{empty@-100, int@8}", s, 4, 8, 4, 8, 4);
    fmpl_dt_unref(s);
    CHECK_OK(fmpl_dt_struct(0, NULL, NULL, NULL, &s));
    check_bounds("struct()", s, 0, 0, 0, 0, 0);
    fmpl_dt_unref(s);
    int64_t zero[2] = {0, 0};
    CHECK_OK(fmpl_dt_indexed(2, zero, d, B(FMPL_BT_INT), &s));
    check_bounds("indexed with zero blocks", s, 0, 0, 0, 0, 0);
    fmpl_dt_unref(s);
    /* resized empty type keeps its markers through constructors */
    CHECK_OK(fmpl_dt_resized(t, 0, 8, &s));
    fmpl_datatype *c3;
    CHECK_OK(fmpl_dt_contiguous(3, s, &c3));
    check_bounds("contiguous(3, resized empty)", c3, 0, 0, 24, 0, 0);
    fmpl_dt_unref(c3);
    fmpl_dt_unref(s);
    fmpl_dt_unref(t);
}

/* ------------------------------------------------------ contiguity, homogeneity */

static void test_flags(void)
{
    fmpl_datatype *t;
    fmpl_basic_type bt;
    int64_t n;
    /* struct fields in order and adjacent: one block */
    fmpl_datatype *ii[2] = {B(FMPL_BT_INT), B(FMPL_BT_INT)};
    int64_t bl[2] = {1, 1}, d_in[2] = {0, 4}, d_rev[2] = {4, 0};
    CHECK_OK(fmpl_dt_struct(2, bl, d_in, ii, &t));
    commit(t);
    CHECK(fmpl_dt_is_contiguous(t), "struct{int@0,int@4}");
    CHECK(fmpl_dt_basic_array(t, &bt, &n) && bt == FMPL_BT_INT && n == 2, "array of 2 int");
    fmpl_dt_unref(t);
    /* same bytes, reverse typemap order: not a memcpy */
    CHECK_OK(fmpl_dt_struct(2, bl, d_rev, ii, &t));
    commit(t);
    CHECK(!fmpl_dt_is_contiguous(t), "struct{int@4,int@0}");
    CHECK(!fmpl_dt_basic_array(t, NULL, NULL), "reverse: no array");
    CHECK_EQ(fmpl_dt_homogeneous_basic(t), FMPL_BT_INT);
    fmpl_dt_unref(t);
    /* indexed blocks that happen to be adjacent */
    int64_t ibl[3] = {2, 1, 3}, id[3] = {0, 2, 3};
    CHECK_OK(fmpl_dt_indexed(3, ibl, id, B(FMPL_BT_DOUBLE), &t));
    CHECK(!fmpl_dt_is_contiguous(t), "uncommitted types report false");
    commit(t);
    CHECK(fmpl_dt_is_contiguous(t), "adjacent indexed blocks");
    CHECK(fmpl_dt_basic_array(t, &bt, &n) && bt == FMPL_BT_DOUBLE && n == 6, "6 doubles");
    fmpl_dt_unref(t);
    /* vector with gaps: homogeneous, not an array */
    CHECK_OK(fmpl_dt_vector(3, 2, 4, B(FMPL_BT_FLOAT), &t));
    commit(t);
    CHECK_EQ(fmpl_dt_homogeneous_basic(t), FMPL_BT_FLOAT);
    CHECK(!fmpl_dt_is_contiguous(t) && !fmpl_dt_basic_array(t, NULL, NULL), "gaps");
    fmpl_dt_unref(t);
    /* mixed */
    fmpl_datatype *id2[2] = {B(FMPL_BT_INT), B(FMPL_BT_DOUBLE)};
    int64_t dd[2] = {0, 8};
    CHECK_OK(fmpl_dt_struct(2, bl, dd, id2, &t));
    CHECK_EQ(fmpl_dt_homogeneous_basic(t), FMPL_BT_NONE);
    fmpl_dt_unref(t);
    /* markers do not break homogeneity */
    fmpl_datatype *im[2] = {B(FMPL_BT_INT), fmpl_dt_ub_marker()};
    int64_t dm[2] = {0, 8};
    CHECK_OK(fmpl_dt_struct(2, bl, dm, im, &t));
    commit(t);
    CHECK_EQ(fmpl_dt_homogeneous_basic(t), FMPL_BT_INT);
    CHECK(!fmpl_dt_basic_array(t, NULL, NULL), "extent 8 holds one int");
    fmpl_dt_unref(t);
    /* pair types: arrays including their padding */
    CHECK_OK(fmpl_dt_contiguous(3, B(FMPL_BT_SHORT_INT), &t));
    commit(t);
    CHECK(fmpl_dt_basic_array(t, &bt, &n) && bt == FMPL_BT_SHORT_INT && n == 3, "3 SHORT_INT");
    CHECK(!fmpl_dt_is_contiguous(t), "SHORT_INT has a hole");
    fmpl_dt_unref(t);
    fmpl_datatype *ss[2] = {B(FMPL_BT_SHORT_INT), B(FMPL_BT_SHORT_INT)};
    int64_t ds[2] = {0, 8};
    CHECK_OK(fmpl_dt_struct(2, bl, ds, ss, &t));
    commit(t);
    CHECK(fmpl_dt_basic_array(t, &bt, &n) && bt == FMPL_BT_SHORT_INT && n == 2,
          "struct of 2 SHORT_INT");
    fmpl_dt_unref(t);
    CHECK_OK(fmpl_dt_contiguous(4, B(FMPL_BT_DOUBLE_INT), &t));
    commit(t);
    CHECK(fmpl_dt_basic_array(t, &bt, &n) && bt == FMPL_BT_DOUBLE_INT && n == 4, "4 DOUBLE_INT");
    fmpl_dt_unref(t);
    CHECK_OK(fmpl_dt_hvector(2, 1, 24, B(FMPL_BT_DOUBLE_INT), &t));
    commit(t);
    CHECK(!fmpl_dt_basic_array(t, NULL, NULL), "DOUBLE_INT at stride 24");
    CHECK_EQ(fmpl_dt_homogeneous_basic(t), FMPL_BT_DOUBLE_INT);
    fmpl_dt_unref(t);
    /* an array needs extent == n * extent(X) */
    CHECK_OK(fmpl_dt_resized(B(FMPL_BT_INT), 0, 8, &t));
    commit(t);
    CHECK(!fmpl_dt_basic_array(t, NULL, NULL) && !fmpl_dt_is_contiguous(t), "int in 8 bytes");
    fmpl_dt_unref(t);
}

/* -------------------------------------------------------- get_elements */

static void elems(const fmpl_datatype *t, int64_t bytes, int64_t want)
{
    int64_t e = -2;
    CHECK_OK(fmpl_dt_get_elements(t, bytes, &e));
    CHECK(e == want, "get_elements(%lld) = %lld, expected %lld", (long long)bytes, (long long)e,
          (long long)want);
}

static void test_elements(void)
{
    /* {int; double; char x3}: 15 bytes, 5 elements */
    fmpl_datatype *ty[3] = {B(FMPL_BT_INT), B(FMPL_BT_DOUBLE), B(FMPL_BT_CHAR)}, *t;
    int64_t bl[3] = {1, 1, 3}, d[3] = {0, 8, 16};
    CHECK_OK(fmpl_dt_struct(3, bl, d, ty, &t));
    CHECK_EQ(fmpl_dt_num_elements(t), 5);
    int64_t want[] = {0, -1, -1, -1, 1, -1, -1, -1, -1, -1, -1, -1, 2, 3, 4, 5, -1, -1, -1, 6};
    for (int64_t b = 0; b < (int64_t)(sizeof want / sizeof want[0]); b++)
        elems(t, b, want[b]);
    elems(t, 30, 10);
    elems(t, 31, -1);
    int64_t bytes;
    CHECK_OK(fmpl_dt_elements_to_bytes(t, 7, &bytes));
    CHECK_EQ(bytes, 15 + 12);
    fmpl_dt_unref(t);
    /* pair types count two elements each */
    elems(B(FMPL_BT_DOUBLE_INT), 8, 1);
    elems(B(FMPL_BT_DOUBLE_INT), 12, 2);
    elems(B(FMPL_BT_DOUBLE_INT), 10, -1);
    elems(B(FMPL_BT_DOUBLE_INT), 20, 3);
    elems(B(FMPL_BT_SHORT_INT), 2, 1);
    elems(B(FMPL_BT_SHORT_INT), 6, 2);
    elems(B(FMPL_BT_SHORT_INT), 4, -1);
    CHECK_OK(fmpl_dt_elements_to_bytes(B(FMPL_BT_SHORT_INT), 3, &bytes));
    CHECK_EQ(bytes, 8);
    /* a vector of a struct: partial copies */
    fmpl_datatype *s, *v;
    fmpl_datatype *ty2[2] = {B(FMPL_BT_SHORT), B(FMPL_BT_INT)};
    int64_t bl2[2] = {1, 1}, d2[2] = {0, 4};
    CHECK_OK(fmpl_dt_struct(2, bl2, d2, ty2, &s)); /* 6 bytes, 2 elements */
    CHECK_OK(fmpl_dt_vector(2, 2, 3, s, &v));       /* 24 bytes, 8 elements */
    elems(v, 0, 0);
    elems(v, 14, 5);
    elems(v, 16, 5 * 0 - 1);
    elems(v, 18, 6);
    elems(v, 24, 8);
    elems(v, 26, 9);
    CHECK_OK(fmpl_dt_elements_to_bytes(v, 5, &bytes));
    CHECK_EQ(bytes, 14);
    fmpl_dt_unref(v);
    fmpl_dt_unref(s);
    /* complex types are one element */
    elems(B(FMPL_BT_C_DOUBLE_COMPLEX), 16, 1);
    elems(B(FMPL_BT_C_DOUBLE_COMPLEX), 8, -1);
}

/* ----------------------------------------------------------------- random */

static void test_random(void)
{
    char what[64];
    for (int i = 0; i < 2000; i++) {
        ref *r = ref_random(3, 4000);
        snprintf(what, sizeof what, "random type %d", i);
        ref_check_queries(r, what);
        CHECK_OK(fmpl_dt_commit(r->t));
        ref_check_queries(r, what);
        ref_free(r);
    }
}

int main(void)
{
    setenv("FMPL_ERRORS_QUIET", "1", 1);
    fmpl_error_init();
    test_predefined();
    test_markers();
    test_resized();
    test_negative();
    test_padding();
    test_empty();
    test_flags();
    test_elements();
    test_random();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("datatype layout: all passed\n");
    return 0;
}
