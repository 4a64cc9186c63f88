/* Unit test of the datatype engine: envelope and contents, names, lifetime,
 * dup, deep nesting, and the constructors' error cases.
 *
 *  - the envelope's counts for every combiner, in MPI-4.0's layout and in
 *    the large-count layout;
 *  - round trip: for random types, rebuild a type from get_envelope /
 *    get_contents with the same constructor; it must have the same
 *    queries and pack the same bytes;
 *  - get_contents hands out references (the components outlive the type);
 *  - names: predefined names, set/get, truncation at 127 characters;
 *  - dup keeps the committed state;
 *  - a 100-level nest commits (flattened) and packs right; a nest too deep
 *    and too large to flatten is refused with FMPL_ERR_UNSUPPORTED;
 *  - every constructor's argument errors, with *newtype untouched.
 */
#include "dt_ref.h"
#include "base/error.h"
#include "fmpl.h"

#include <stdlib.h>
#include <string.h>

static fmpl_datatype *B(fmpl_basic_type bt) { return fmpl_dt_basic(bt); }

static void envelope_is(const char *what, fmpl_datatype *t, fmpl_dt_combiner comb, int64_t ni,
                        int64_t na, int64_t nc, int64_t nd)
{
    fmpl_dt_envelope e;
    CHECK_OK(fmpl_dt_get_envelope(t, &e));
    CHECK(e.combiner == comb && e.num_integers == ni && e.num_addresses == na &&
              e.num_large_counts == nc && e.num_datatypes == nd,
          "%s: envelope %d %lld %lld %lld %lld, expected %d %lld %lld %lld %lld", what,
          e.combiner, (long long)e.num_integers, (long long)e.num_addresses,
          (long long)e.num_large_counts, (long long)e.num_datatypes, comb, (long long)ni,
          (long long)na, (long long)nc, (long long)nd);
}

typedef struct contents {
    fmpl_dt_envelope env;
    int64_t ints[64], addrs[64], counts[64];
    fmpl_datatype *types[64];
} contents;

static void get(fmpl_datatype *t, contents *c)
{
    CHECK_OK(fmpl_dt_get_envelope(t, &c->env));
    CHECK_OK(fmpl_dt_get_contents(t, 64, 64, 64, 64, c->ints, c->addrs, c->counts, c->types));
}

static void put(contents *c)
{
    for (int64_t i = 0; i < c->env.num_datatypes; i++)
        fmpl_dt_unref(c->types[i]);
}

static bool same_ints(const int64_t *a, const int64_t *b, int64_t n)
{
    return !memcmp(a, b, (size_t)n * sizeof(int64_t));
}

/* ---------------------------------------------------------------- layouts */

static void test_envelopes(void)
{
    fmpl_datatype *t, *in = B(FMPL_BT_INT), *db = B(FMPL_BT_DOUBLE);
    contents c;
    int64_t bl[3] = {1, 2, 3}, d[3] = {4, 8, 40};

    CHECK_OK(fmpl_dt_contiguous(7, in, &t));
    envelope_is("contiguous", t, FMPL_DT_COMBINER_CONTIGUOUS, 1, 0, 0, 1);
    get(t, &c);
    CHECK(c.ints[0] == 7 && c.types[0] == in, "contiguous contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("contiguous_c", t, FMPL_DT_COMBINER_CONTIGUOUS, 0, 0, 1, 1);
    get(t, &c);
    CHECK(c.counts[0] == 7, "contiguous_c contents");
    put(&c);
    fmpl_dt_unref(t);

    CHECK_OK(fmpl_dt_vector(3, 2, -5, in, &t));
    envelope_is("vector", t, FMPL_DT_COMBINER_VECTOR, 3, 0, 0, 1);
    get(t, &c);
    CHECK(same_ints(c.ints, (int64_t[]){3, 2, -5}, 3), "vector contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("vector_c", t, FMPL_DT_COMBINER_VECTOR, 0, 0, 3, 1);
    fmpl_dt_unref(t);

    CHECK_OK(fmpl_dt_hvector(3, 2, -40, in, &t));
    envelope_is("hvector", t, FMPL_DT_COMBINER_HVECTOR, 2, 1, 0, 1);
    get(t, &c);
    CHECK(same_ints(c.ints, (int64_t[]){3, 2}, 2) && c.addrs[0] == -40, "hvector contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("hvector_c", t, FMPL_DT_COMBINER_HVECTOR, 0, 0, 3, 1);
    get(t, &c);
    CHECK(same_ints(c.counts, (int64_t[]){3, 2, -40}, 3), "hvector_c contents");
    put(&c);
    fmpl_dt_unref(t);

    CHECK_OK(fmpl_dt_indexed(3, bl, d, in, &t));
    envelope_is("indexed", t, FMPL_DT_COMBINER_INDEXED, 7, 0, 0, 1);
    get(t, &c);
    CHECK(same_ints(c.ints, (int64_t[]){3, 1, 2, 3, 4, 8, 40}, 7), "indexed contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("indexed_c", t, FMPL_DT_COMBINER_INDEXED, 0, 0, 7, 1);
    fmpl_dt_unref(t);

    CHECK_OK(fmpl_dt_hindexed(3, bl, d, in, &t));
    envelope_is("hindexed", t, FMPL_DT_COMBINER_HINDEXED, 4, 3, 0, 1);
    get(t, &c);
    CHECK(same_ints(c.ints, (int64_t[]){3, 1, 2, 3}, 4) && same_ints(c.addrs, d, 3),
          "hindexed contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("hindexed_c", t, FMPL_DT_COMBINER_HINDEXED, 0, 0, 7, 1);
    get(t, &c);
    CHECK(same_ints(c.counts, (int64_t[]){3, 1, 2, 3, 4, 8, 40}, 7), "hindexed_c contents");
    put(&c);
    fmpl_dt_unref(t);

    CHECK_OK(fmpl_dt_indexed_block(3, 2, d, in, &t));
    envelope_is("indexed_block", t, FMPL_DT_COMBINER_INDEXED_BLOCK, 5, 0, 0, 1);
    get(t, &c);
    CHECK(same_ints(c.ints, (int64_t[]){3, 2, 4, 8, 40}, 5), "indexed_block contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("indexed_block_c", t, FMPL_DT_COMBINER_INDEXED_BLOCK, 0, 0, 5, 1);
    fmpl_dt_unref(t);

    CHECK_OK(fmpl_dt_hindexed_block(3, 2, d, in, &t));
    envelope_is("hindexed_block", t, FMPL_DT_COMBINER_HINDEXED_BLOCK, 2, 3, 0, 1);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("hindexed_block_c", t, FMPL_DT_COMBINER_HINDEXED_BLOCK, 0, 0, 5, 1);
    get(t, &c);
    CHECK(same_ints(c.counts, (int64_t[]){3, 2, 4, 8, 40}, 5), "hindexed_block_c contents");
    put(&c);
    fmpl_dt_unref(t);

    fmpl_datatype *ty[3] = {in, db, fmpl_dt_ub_marker()};
    CHECK_OK(fmpl_dt_struct(3, bl, d, ty, &t));
    envelope_is("struct", t, FMPL_DT_COMBINER_STRUCT, 4, 3, 0, 3);
    get(t, &c);
    CHECK(same_ints(c.ints, (int64_t[]){3, 1, 2, 3}, 4) && same_ints(c.addrs, d, 3) &&
              c.types[0] == in && c.types[1] == db && c.types[2] == fmpl_dt_ub_marker(),
          "struct contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("struct_c", t, FMPL_DT_COMBINER_STRUCT, 0, 0, 7, 3);
    fmpl_dt_unref(t);

    int64_t sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
    CHECK_OK(fmpl_dt_subarray(2, sz, sub, st, FMPL_DT_ORDER_FORTRAN, in, &t));
    envelope_is("subarray", t, FMPL_DT_COMBINER_SUBARRAY, 8, 0, 0, 1);
    get(t, &c);
    CHECK(same_ints(c.ints, (int64_t[]){2, 4, 5, 2, 3, 1, 2, FMPL_DT_ORDER_FORTRAN}, 8),
          "subarray contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("subarray_c", t, FMPL_DT_COMBINER_SUBARRAY, 2, 0, 6, 1);
    get(t, &c);
    CHECK(same_ints(c.ints, (int64_t[]){2, FMPL_DT_ORDER_FORTRAN}, 2) &&
              same_ints(c.counts, (int64_t[]){4, 5, 2, 3, 1, 2}, 6),
          "subarray_c contents");
    put(&c);
    fmpl_dt_unref(t);

    int64_t g[2] = {10, 6};
    int ps[2] = {2, 2}, dist[2] = {FMPL_DT_DISTRIBUTE_BLOCK, FMPL_DT_DISTRIBUTE_CYCLIC};
    int darg[2] = {FMPL_DT_DISTRIBUTE_DFLT_DARG, 2};
    CHECK_OK(fmpl_dt_darray(4, 3, 2, g, dist, darg, ps, FMPL_DT_ORDER_C, in, &t));
    envelope_is("darray", t, FMPL_DT_COMBINER_DARRAY, 12, 0, 0, 1);
    get(t, &c);
    CHECK(same_ints(c.ints,
                    (int64_t[]){4, 3, 2, 10, 6, FMPL_DT_DISTRIBUTE_BLOCK, FMPL_DT_DISTRIBUTE_CYCLIC,
                                FMPL_DT_DISTRIBUTE_DFLT_DARG, 2, 2, 2, FMPL_DT_ORDER_C},
                    12),
          "darray contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("darray_c", t, FMPL_DT_COMBINER_DARRAY, 10, 0, 2, 1);
    get(t, &c);
    CHECK(same_ints(c.ints,
                    (int64_t[]){4, 3, 2, FMPL_DT_DISTRIBUTE_BLOCK, FMPL_DT_DISTRIBUTE_CYCLIC,
                                FMPL_DT_DISTRIBUTE_DFLT_DARG, 2, 2, 2, FMPL_DT_ORDER_C},
                    10) &&
              same_ints(c.counts, (int64_t[]){10, 6}, 2),
          "darray_c contents");
    put(&c);
    fmpl_dt_unref(t);

    CHECK_OK(fmpl_dt_resized(in, -4, 12, &t));
    envelope_is("resized", t, FMPL_DT_COMBINER_RESIZED, 0, 2, 0, 1);
    get(t, &c);
    CHECK(c.addrs[0] == -4 && c.addrs[1] == 12, "resized contents");
    put(&c);
    fmpl_dt_set_large_count_contents(t);
    envelope_is("resized_c", t, FMPL_DT_COMBINER_RESIZED, 0, 0, 2, 1);
    get(t, &c);
    CHECK(c.counts[0] == -4 && c.counts[1] == 12, "resized_c contents");
    put(&c);
    fmpl_dt_unref(t);

    CHECK_OK(fmpl_dt_dup(in, &t));
    envelope_is("dup", t, FMPL_DT_COMBINER_DUP, 0, 0, 0, 1);
    CHECK(fmpl_dt_is_committed(t), "dup of a predefined type is committed");
    CHECK(!fmpl_dt_is_predefined(t), "dup is not predefined");
    fmpl_dt_unref(t);

    /* predefined: NAMED, no contents; too-small arrays */
    CHECK(fmpl_dt_get_contents(in, 64, 64, 64, 64, c.ints, c.addrs, c.counts, c.types) ==
              FMPL_ERR_ARG,
          "contents of a predefined type");
    CHECK_OK(fmpl_dt_vector(3, 2, 1, in, &t));
    CHECK(fmpl_dt_get_contents(t, 2, 0, 0, 1, c.ints, c.addrs, c.counts, c.types) == FMPL_ERR_ARG,
          "too few integers");
    CHECK(fmpl_dt_get_contents(t, 3, 0, 0, 0, c.ints, c.addrs, c.counts, c.types) == FMPL_ERR_ARG,
          "too few datatypes");
    fmpl_dt_unref(t);
}

/* Rebuild a type from its contents with the same constructor. */
static fmpl_datatype *rebuild(fmpl_datatype *t)
{
    contents c;
    get(t, &c);
    fmpl_datatype *n = NULL, *old = c.types[0];
    const int64_t *ip = c.ints;
    int rc = FMPL_SUCCESS;
    switch (c.env.combiner) {
    case FMPL_DT_COMBINER_DUP: rc = fmpl_dt_dup(old, &n); break;
    case FMPL_DT_COMBINER_CONTIGUOUS: rc = fmpl_dt_contiguous(ip[0], old, &n); break;
    case FMPL_DT_COMBINER_VECTOR: rc = fmpl_dt_vector(ip[0], ip[1], ip[2], old, &n); break;
    case FMPL_DT_COMBINER_HVECTOR: rc = fmpl_dt_hvector(ip[0], ip[1], c.addrs[0], old, &n); break;
    case FMPL_DT_COMBINER_INDEXED:
        rc = fmpl_dt_indexed(ip[0], ip + 1, ip + 1 + ip[0], old, &n);
        break;
    case FMPL_DT_COMBINER_HINDEXED: rc = fmpl_dt_hindexed(ip[0], ip + 1, c.addrs, old, &n); break;
    case FMPL_DT_COMBINER_INDEXED_BLOCK:
        rc = fmpl_dt_indexed_block(ip[0], ip[1], ip + 2, old, &n);
        break;
    case FMPL_DT_COMBINER_HINDEXED_BLOCK:
        rc = fmpl_dt_hindexed_block(ip[0], ip[1], c.addrs, old, &n);
        break;
    case FMPL_DT_COMBINER_STRUCT: rc = fmpl_dt_struct(ip[0], ip + 1, c.addrs, c.types, &n); break;
    case FMPL_DT_COMBINER_SUBARRAY: {
        int nd = (int)ip[0];
        rc = fmpl_dt_subarray(nd, ip + 1, ip + 1 + nd, ip + 1 + 2 * nd, (int)ip[1 + 3 * nd], old,
                              &n);
        break;
    }
    case FMPL_DT_COMBINER_DARRAY: {
        int nd = (int)ip[2], dist[8], darg[8], ps[8];
        for (int i = 0; i < nd; i++) {
            dist[i] = (int)ip[3 + nd + i];
            darg[i] = (int)ip[3 + 2 * nd + i];
            ps[i] = (int)ip[3 + 3 * nd + i];
        }
        rc = fmpl_dt_darray((int)ip[0], (int)ip[1], nd, ip + 3, dist, darg, ps,
                            (int)ip[3 + 4 * nd], old, &n);
        break;
    }
    case FMPL_DT_COMBINER_RESIZED: rc = fmpl_dt_resized(old, c.addrs[0], c.addrs[1], &n); break;
    default: CHECK(0, "unexpected combiner %d", c.env.combiner); break;
    }
    CHECK_OK(rc);
    put(&c);
    return n;
}

static void test_roundtrip(void)
{
    for (int k = 0; k < 1500; k++) {
        ref *r = ref_random(3, 2000);
        fmpl_dt_envelope e;
        CHECK_OK(fmpl_dt_get_envelope(r->t, &e));
        if (e.combiner == FMPL_DT_COMBINER_NAMED) {
            ref_free(r);
            continue;
        }
        fmpl_datatype *n = rebuild(r->t);
        /* the rebuilt type stands in for the original in the reference */
        fmpl_datatype *orig = r->t;
        r->t = n;
        CHECK_OK(fmpl_dt_commit(n));
        ref_check_queries(r, "rebuilt from contents");
        ref_check_pack(r, 2, "rebuilt from contents");
        fmpl_dt_envelope e2;
        CHECK_OK(fmpl_dt_get_envelope(n, &e2));
        CHECK(e.combiner == e2.combiner && e.num_integers == e2.num_integers &&
                  e.num_addresses == e2.num_addresses &&
                  e.num_large_counts == e2.num_large_counts &&
                  e.num_datatypes == e2.num_datatypes,
              "same envelope");
        fmpl_dt_unref(orig);
        ref_free(r);
    }
}

/* ------------------------------------------------------- names, lifetime */

static void test_names(void)
{
    fmpl_datatype *t;
    CHECK(!strcmp(fmpl_dt_get_name(B(FMPL_BT_DOUBLE)), "MPI_DOUBLE"), "predefined name");
    CHECK(!strcmp(fmpl_dt_get_name(B(FMPL_BT_F_2INTEGER)), "MPI_2INTEGER"), "predefined name");
    CHECK_OK(fmpl_dt_contiguous(2, B(FMPL_BT_INT), &t));
    CHECK(!strcmp(fmpl_dt_get_name(t), ""), "derived types start unnamed");
    CHECK_OK(fmpl_dt_set_name(t, "pair of ints"));
    CHECK(!strcmp(fmpl_dt_get_name(t), "pair of ints"), "set name");
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK_OK(fmpl_dt_set_name(t, longname));
    CHECK(strlen(fmpl_dt_get_name(t)) == FMPL_DT_MAX_NAME - 1, "truncated to 127");
    CHECK(fmpl_dt_set_name(t, NULL) == FMPL_ERR_ARG, "NULL name");
    fmpl_datatype *d;
    CHECK_OK(fmpl_dt_dup(t, &d));
    CHECK(!strcmp(fmpl_dt_get_name(d), ""), "dup does not copy the name");
    fmpl_dt_unref(d);
    fmpl_dt_unref(t);
    CHECK_OK(fmpl_dt_set_name(B(FMPL_BT_INT), "renamed int"));
    CHECK(!strcmp(fmpl_dt_get_name(B(FMPL_BT_INT)), "renamed int"), "rename predefined");
    CHECK_OK(fmpl_dt_set_name(B(FMPL_BT_INT), "MPI_INT"));
}

static void test_lifetime(void)
{
    /* components may be released right after use: the derived type keeps them */
    fmpl_datatype *c, *v, *s, *d;
    CHECK_OK(fmpl_dt_contiguous(3, B(FMPL_BT_SHORT), &c));
    CHECK_OK(fmpl_dt_vector(4, 1, 2, c, &v));
    fmpl_dt_unref(c);
    fmpl_datatype *ty[2] = {v, B(FMPL_BT_DOUBLE)};
    int64_t bl[2] = {2, 1}, dd[2] = {0, 200};
    CHECK_OK(fmpl_dt_struct(2, bl, dd, ty, &s));
    fmpl_dt_unref(v);
    CHECK(!fmpl_dt_is_committed(s), "not committed yet");
    CHECK_OK(fmpl_dt_dup(s, &d));
    CHECK(!fmpl_dt_is_committed(d), "dup of an uncommitted type is uncommitted");
    fmpl_dt_unref(d);
    CHECK_OK(fmpl_dt_commit(s));
    CHECK_OK(fmpl_dt_dup(s, &d));
    CHECK(fmpl_dt_is_committed(d), "dup of a committed type is committed");
    char buf[512] = {0}, out[256], out2[256];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (char)i;
    int64_t w, w2;
    CHECK_OK(fmpl_dt_pack(buf, 1, s, 0, out, sizeof out, &w));
    CHECK_OK(fmpl_dt_pack(buf, 1, d, 0, out2, sizeof out2, &w2));
    CHECK(w == 2 * 4 * 6 + 8 && w2 == w && !memcmp(out, out2, (size_t)w), "dup packs the same");
    /* contents outlive the type */
    contents ct;
    get(s, &ct);
    fmpl_dt_unref(s);
    fmpl_dt_unref(d);
    CHECK_EQ(fmpl_dt_size(ct.types[0]), 4 * 6);
    CHECK_OK(fmpl_dt_commit(ct.types[0]));
    CHECK_OK(fmpl_dt_pack(buf, 1, ct.types[0], 0, out, sizeof out, &w));
    CHECK_EQ(w, 24);
    put(&ct);
}

/* ------------------------------------------------------------ deep nests */

static void test_deep(void)
{
    /* 100 levels of struct{T; char}: the loop would be 100 deep; commit
     * flattens it (101 chunks) */
    ref *r = ref_basic(FMPL_BT_INT), *ch = ref_basic(FMPL_BT_CHAR);
    for (int level = 0; level < 100; level++) {
        int64_t bl[2] = {1, 1}, d[2] = {0, 1000 + 3 * level};
        ref *ty[2] = {r, ch};
        ref *n = ref_struct(2, bl, d, ty);
        ref_free(r);
        r = n;
    }
    CHECK_OK(fmpl_dt_commit(r->t));
    ref_check_queries(r, "100-level struct nest");
    ref_check_pack(r, 2, "100-level struct nest");
    ref_free(r);
    ref_free(ch);

    /* 23 doublings (8 M chunks) under 70 struct levels: too deep to walk,
     * too large to flatten */
    fmpl_datatype *t = B(FMPL_BT_CHAR), *n;
    fmpl_dt_ref(t);
    int64_t stride = 2;
    for (int level = 0; level < 23; level++, stride *= 3) {
        CHECK_OK(fmpl_dt_hvector(2, 1, stride, t, &n));
        fmpl_dt_unref(t);
        t = n;
    }
    for (int level = 0; level < 70; level++) {
        int64_t bl[2] = {1, 1}, d[2] = {0, -1 - level};
        fmpl_datatype *ty[2] = {t, B(FMPL_BT_CHAR)};
        CHECK_OK(fmpl_dt_struct(2, bl, d, ty, &n));
        fmpl_dt_unref(t);
        t = n;
    }
    CHECK(fmpl_dt_commit(t) == FMPL_ERR_UNSUPPORTED, "too deep and too large");
    CHECK(!fmpl_dt_is_committed(t), "stays uncommitted");
    fmpl_dt_unref(t);
}

/* ------------------------------------------------------------------ errors */

static void test_errors(void)
{
    fmpl_datatype *t = (fmpl_datatype *)&t, *const sentinel = t, *in = B(FMPL_BT_INT);
    int64_t bl[2] = {1, 1}, nbl[2] = {1, -1}, d[2] = {0, 8};
    fmpl_datatype *ty[2] = {in, in}, *nty[2] = {in, NULL};
#define E(call, code, what) CHECK((call) == (code) && t == sentinel, "%s", what)
    E(fmpl_dt_contiguous(-1, in, &t), FMPL_ERR_SIZE, "contiguous count < 0");
    E(fmpl_dt_contiguous(1, NULL, &t), FMPL_ERR_ARG, "contiguous NULL old");
    E(fmpl_dt_contiguous(1, in, NULL), FMPL_ERR_ARG, "contiguous NULL newtype");
    E(fmpl_dt_contiguous(INT64_MAX, B(FMPL_BT_DOUBLE), &t), FMPL_ERR_SIZE, "contiguous overflow");
    E(fmpl_dt_vector(-1, 1, 1, in, &t), FMPL_ERR_SIZE, "vector count < 0");
    E(fmpl_dt_vector(1, -1, 1, in, &t), FMPL_ERR_SIZE, "vector blocklen < 0");
    E(fmpl_dt_vector(3, 1, INT64_MAX / 4, in, &t), FMPL_ERR_SIZE, "vector stride overflow");
    E(fmpl_dt_hvector(2, -3, 8, in, &t), FMPL_ERR_SIZE, "hvector blocklen < 0");
    E(fmpl_dt_hvector(2, 1, 8, NULL, &t), FMPL_ERR_ARG, "hvector NULL old");
    E(fmpl_dt_indexed(-2, bl, d, in, &t), FMPL_ERR_SIZE, "indexed count < 0");
    E(fmpl_dt_indexed(2, NULL, d, in, &t), FMPL_ERR_ARG, "indexed NULL blocklens");
    E(fmpl_dt_indexed(2, bl, NULL, in, &t), FMPL_ERR_ARG, "indexed NULL displs");
    E(fmpl_dt_indexed(2, nbl, d, in, &t), FMPL_ERR_SIZE, "indexed blocklen < 0");
    E(fmpl_dt_hindexed(2, nbl, d, in, &t), FMPL_ERR_SIZE, "hindexed blocklen < 0");
    E(fmpl_dt_hindexed(2, bl, NULL, in, &t), FMPL_ERR_ARG, "hindexed NULL displs");
    E(fmpl_dt_indexed_block(2, -1, d, in, &t), FMPL_ERR_SIZE, "indexed_block blocklen < 0");
    E(fmpl_dt_indexed_block(2, 1, NULL, in, &t), FMPL_ERR_ARG, "indexed_block NULL displs");
    E(fmpl_dt_hindexed_block(-1, 1, d, in, &t), FMPL_ERR_SIZE, "hindexed_block count < 0");
    E(fmpl_dt_struct(-1, bl, d, ty, &t), FMPL_ERR_SIZE, "struct count < 0");
    E(fmpl_dt_struct(2, NULL, d, ty, &t), FMPL_ERR_ARG, "struct NULL blocklens");
    E(fmpl_dt_struct(2, bl, NULL, ty, &t), FMPL_ERR_ARG, "struct NULL displs");
    E(fmpl_dt_struct(2, bl, d, NULL, &t), FMPL_ERR_ARG, "struct NULL types");
    E(fmpl_dt_struct(2, bl, d, nty, &t), FMPL_ERR_ARG, "struct NULL type");
    E(fmpl_dt_struct(2, nbl, d, ty, &t), FMPL_ERR_SIZE, "struct blocklen < 0");
    E(fmpl_dt_struct(2, bl, d, ty, NULL), FMPL_ERR_ARG, "struct NULL newtype");
    int64_t far[2] = {INT64_MAX - 2, 0};
    E(fmpl_dt_hindexed(2, bl, far, in, &t), FMPL_ERR_SIZE, "hindexed bound overflow");
    E(fmpl_dt_struct(2, bl, far, ty, &t), FMPL_ERR_SIZE, "struct bound overflow");
    E(fmpl_dt_resized(in, INT64_MAX, 1, &t), FMPL_ERR_SIZE, "resized ub overflow");
    E(fmpl_dt_resized(NULL, 0, 1, &t), FMPL_ERR_ARG, "resized NULL old");
    E(fmpl_dt_dup(NULL, &t), FMPL_ERR_ARG, "dup NULL old");
    E(fmpl_dt_dup(in, NULL), FMPL_ERR_ARG, "dup NULL newtype");
#undef E
    /* zero counts with NULL arrays are fine */
    CHECK_OK(fmpl_dt_indexed(0, NULL, NULL, in, &t));
    fmpl_dt_unref(t);
    CHECK_OK(fmpl_dt_hindexed_block(0, 5, NULL, in, &t));
    fmpl_dt_unref(t);
    /* queries */
    int64_t e;
    CHECK(fmpl_dt_get_elements(in, -1, &e) == FMPL_ERR_SIZE, "get_elements bytes < 0");
    CHECK(fmpl_dt_get_elements(in, 4, NULL) == FMPL_ERR_ARG, "get_elements NULL");
    CHECK(fmpl_dt_elements_to_bytes(in, -1, &e) == FMPL_ERR_SIZE, "elements < 0");
    CHECK(fmpl_dt_elements_to_bytes(fmpl_dt_lb_marker(), 1, &e) == FMPL_ERR_ARG,
          "elements of an element-less type");
    CHECK(fmpl_dt_get_envelope(NULL, NULL) == FMPL_ERR_ARG, "envelope NULL");
    int64_t ps;
    CHECK(fmpl_dt_pack_size(1, NULL, &ps) == FMPL_ERR_ARG, "pack_size NULL type");
}

int main(void)
{
    setenv("FMPL_ERRORS_QUIET", "1", 1);
    fmpl_error_init();
    test_envelopes();
    test_roundtrip();
    test_names();
    test_lifetime();
    test_deep();
    test_errors();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("datatype contents: all passed\n");
    return 0;
}
