/* collectives: barrier, broadcast, reduce/allreduce (built-in and user
 * operations) and sub-communicators, checked against local references.
 * Registered again with each algorithm forced through the environment
 * (see CMakeLists.txt): the results must be identical.
 *
 *  barrier  R21: every rank sleeps a different, varying time, records when it
 *           entered (CLOCK_MONOTONIC, shared by the processes of a machine),
 *           and after the barrier sends that time to every other rank by
 *           point-to-point; each rank checks that every entry time is before
 *           its own exit time.  A barrier that lets a rank out early fails.
 *           Also 500 back-to-back barriers.
 *  bcast    every root, root rotating between calls, sizes 0 B .. 16 MiB,
 *           buffers of mixed kinds across ranks (shared, heap, heap+1, stack);
 *           data, guard zones and the root's buffer are checked.
 *  reduce / allreduce: every built-in (i, s, d, c, z x sum, max, min), counts
 *           0, 1, 7, 1000, 300000, against a serial reference computed
 *           locally from the known per-rank inputs.  Inputs are chosen so
 *           every sum is exact (multiples of 0.25), and so that equal absolute
 *           values with different signs / components are frequent: max/min
 *           must return the element (with its sign) of the LOWEST rank among
 *           those of largest/smallest absolute value.  Results compared bit
 *           for bit.  reduce: every root for small counts.
 *  user ops a max-by-key on a struct (ties: lower rank) and a non-commutative
 *           one (2x2 matrix product mod 65521) that fails unless operands are
 *           combined in rank order with `in` the lower-ranked one; ctx passed.
 *  comms    fmpl_comm_create with key rank%2 and FMPL_KEY_NONE for the last
 *           rank (-> FMPL_COMM_NULL); ranks/sizes; p2p, barrier, bcast,
 *           allreduce, reduce inside; a duplicate of WORLD whose messages do
 *           not mix with WORLD's on the same index; two communicators at
 *           once; 30 create/free cycles.
 */
#include "test_util.h"

#define COUNT 64
#define BAR_IDX 60

static int me, n;

/* ------------------------------------------------------------ barrier */

static void barrier_check(fmpl_comm comm, int iters, int max_delay_ms, int one_slow,
                          const char *what)
{
    int cr, m;
    CALL(fmpl_comm_rank(comm, &cr));
    CALL(fmpl_comm_size(comm, &m));
    double *tin = malloc(sizeof(double) * (size_t)m);
    for (int it = 0; it < iters; it++) {
        char sub[160];
        snprintf(sub, sizeof sub, "barrier: %s, iteration %d", what, it);
        tu_sub = sub;
        double delay;
        if (one_slow)
            delay = cr == it % m ? 1 + (double)(tu_mix64((uint64_t)it) % 3) : 0;
        else
            delay = (double)(tu_mix64((uint64_t)it * 1000 + (uint64_t)cr) %
                             (uint64_t)(max_delay_ms + 1));
        if (delay > 0)
            tu_sleep_ms(delay);
        double t_in = tu_now();
        CALL(fmpl_barrier(comm));
        double t_out = tu_now();
        for (int j = 0; j < m; j++)
            if (j != cr)
                CALL(fmpl_irecv(&tin[j], sizeof(double), j, BAR_IDX, comm));
        for (int j = 0; j < m; j++)
            if (j != cr)
                CALL(fmpl_isend(&t_in, sizeof(double), j, BAR_IDX, comm));
        for (int j = 0; j < m; j++)
            if (j != cr) {
                fmpl_status st;
                CALL(fmpl_irecv_wait(j, BAR_IDX, comm, &st));
                CHECK_STATUS(st, j, BAR_IDX, sizeof(double), FMPL_SUCCESS, "entry time of %d", j);
            }
        for (int j = 0; j < m; j++)
            if (j != cr)
                CALL(fmpl_isend_wait(j, BAR_IDX, comm));
        for (int j = 0; j < m; j++)
            if (j != cr && tin[j] > t_out)
                TU_FAIL("rank %d (of the communicator) left the barrier %.3f ms BEFORE rank %d "
                        "entered it (own delay %.0f ms)", cr, 1e3 * (tin[j] - t_out), j, delay);
    }
    free(tin);
}

static void test_barrier(void)
{
    barrier_check(FMPL_COMM_WORLD, 8, 25, 0, "random delays");
    barrier_check(FMPL_COMM_WORLD, 40, 0, 1, "one slow rank, rotating");
    tu_sub = "barrier: 500 back to back";
    for (int i = 0; i < 500; i++)
        CALL(fmpl_barrier(FMPL_COMM_WORLD));
    barrier_check(FMPL_COMM_WORLD, 2, 10, 0, "after the back-to-back ones");
}

/* -------------------------------------------------------------- bcast */

static const long bc_sizes[] = {0, 1, 8, 1000, 65536, 1L << 20, 16L << 20};

static void one_bcast(fmpl_comm comm, int cr, long size, int root, int kind, long iter)
{
    unsigned char stk[TU_STACK_BYTES] __attribute__((aligned(64)));
    char sub[200];
    snprintf(sub, sizeof sub, "bcast %ld B, root %d, my buffer %s, iter %ld", size, root,
             tu_kind_names[kind], iter);
    tu_sub = sub;
    tu_buf b;
    tu_buf_get(&b, kind, size, stk);
    tu_buf_arm(&b);
    uint64_t seed = tu_seed(root, 0, size, iter);
    if (cr == root)
        tu_fill(b.p, size, seed);
    CALL(fmpl_bcast(b.p, size, root, comm));
    CHECK_PATTERN(b.p, size, seed, cr == root ? "root's buffer changed by fmpl_bcast"
                                              : "broadcast data from root %d", root);
    CHECK_BUF_UNTOUCHED_FROM(&b, size, "bcast buffer");
    tu_buf_put(&b);
}

static void test_bcast(void)
{
    long iter = 0;
    for (size_t si = 0; si < sizeof bc_sizes / sizeof bc_sizes[0]; si++) {
        long size = bc_sizes[si];
        int kinds[TU_NKINDS], nk = 0;
        kinds[nk++] = TU_SHARED;
        kinds[nk++] = TU_HEAP;
        if (size <= (1L << 20))
            kinds[nk++] = TU_HEAP_ODD;
        if (size <= 65536)
            kinds[nk++] = TU_STACK;
        int ksets = size > (1L << 20) ? 2 : nk;
        for (int rs = 0; rs < n; rs++)
            for (int ks = 0; ks < ksets; ks++, iter++) {
                int root = (int)((rs + iter) % n); /* every root, rotating */
                one_bcast(FMPL_COMM_WORLD, me, size, root, kinds[(ks + me) % nk], iter);
            }
    }
}

/* ------------------------------------------------------ built-in ops */

enum { T_I, T_S, T_D, T_C, T_Z, NT };
enum { O_SUM, O_MAX, O_MIN, NO };
static const char *const tname = "isdcz";
static const char *const oname[NO] = {"sum", "max", "min"};
static const size_t esize[NT] = {4, 4, 8, 8, 16};
static const fmpl_op *optab[NT][NO];

static void init_optab(void)
{
    const fmpl_op *t[NT][NO] = {{fmpl_isum, fmpl_imax, fmpl_imin},
                                {fmpl_ssum, fmpl_smax, fmpl_smin},
                                {fmpl_dsum, fmpl_dmax, fmpl_dmin},
                                {fmpl_csum, fmpl_cmax, fmpl_cmin},
                                {fmpl_zsum, fmpl_zmax, fmpl_zmin}};
    memcpy(optab, t, sizeof t);
}

/* Element i of rank r's input (written to dst, esize[t] bytes). */
static void gen(int t, int o, int r, long i, long salt, void *dst)
{
    uint64_t h = tu_mix64(tu_seed(r, t * 3 + o, i, salt));
    long a, b;
    if (o == O_SUM) {
        a = (long)(h % 2001) - 1000;
        b = (long)((h >> 32) % 2001) - 1000;
    } else if (t == T_C || t == T_Z) {
        /* |re| + |im| ties between different (re, im) are frequent */
        a = (long)(h % 5) - 2;
        b = (long)((h >> 16) % 5) - 2;
    } else {
        long mag = (long)(h % 5);
        a = (h >> 8) & 1 ? -mag : mag;
        b = 0;
    }
    switch (t) {
    case T_I: {
        int32_t v = (int32_t)a;
        memcpy(dst, &v, 4);
        break;
    }
    case T_S: {
        float v = (float)a * (o == O_SUM ? 0.25f : 0.5f);
        memcpy(dst, &v, 4);
        break;
    }
    case T_D: {
        double v = (double)a * (o == O_SUM ? 0.25 : 0.5);
        memcpy(dst, &v, 8);
        break;
    }
    case T_C: {
        float v[2] = {(float)a * 0.25f, (float)b * 0.25f};
        memcpy(dst, v, 8);
        break;
    }
    case T_Z: {
        double v[2] = {(double)a * 0.25, (double)b * 0.25};
        memcpy(dst, v, 16);
        break;
    }
    }
}

static double absval(int t, const void *p)
{
    switch (t) {
    case T_I: {
        int32_t v;
        memcpy(&v, p, 4);
        return v < 0 ? -(double)v : (double)v;
    }
    case T_S: {
        float v;
        memcpy(&v, p, 4);
        return v < 0 ? -(double)v : (double)v;
    }
    case T_D: {
        double v;
        memcpy(&v, p, 8);
        return v < 0 ? -v : v;
    }
    case T_C: {
        float v[2];
        memcpy(v, p, 8);
        return (v[0] < 0 ? -(double)v[0] : (double)v[0]) + (v[1] < 0 ? -(double)v[1] : (double)v[1]);
    }
    default: {
        double v[2];
        memcpy(v, p, 16);
        return (v[0] < 0 ? -v[0] : v[0]) + (v[1] < 0 ? -v[1] : v[1]);
    }
    }
}

/* ref = ref op x, where ref holds the lower ranks' result. */
static void ref_combine(int t, int o, void *ref, const void *x)
{
    if (o == O_MAX) {
        if (absval(t, x) > absval(t, ref))
            memcpy(ref, x, esize[t]);
        return;
    }
    if (o == O_MIN) {
        if (absval(t, x) < absval(t, ref))
            memcpy(ref, x, esize[t]);
        return;
    }
    switch (t) {
    case T_I: {
        int32_t a, b;
        memcpy(&a, ref, 4);
        memcpy(&b, x, 4);
        a += b;
        memcpy(ref, &a, 4);
        break;
    }
    case T_S:
    case T_C: {
        float a[2], b[2];
        size_t k = t == T_S ? 1 : 2;
        memcpy(a, ref, 4 * k);
        memcpy(b, x, 4 * k);
        for (size_t j = 0; j < k; j++)
            a[j] += b[j];
        memcpy(ref, a, 4 * k);
        break;
    }
    default: {
        double a[2], b[2];
        size_t k = t == T_D ? 1 : 2;
        memcpy(a, ref, 8 * k);
        memcpy(b, x, 8 * k);
        for (size_t j = 0; j < k; j++)
            a[j] += b[j];
        memcpy(ref, a, 8 * k);
        break;
    }
    }
}

static void fmt_elem(int t, const void *p, char *out, size_t len)
{
    switch (t) {
    case T_I: {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(out, len, "%d", v);
        break;
    }
    case T_S: {
        float v;
        memcpy(&v, p, 4);
        snprintf(out, len, "%.9g", (double)v);
        break;
    }
    case T_D: {
        double v;
        memcpy(&v, p, 8);
        snprintf(out, len, "%.17g", v);
        break;
    }
    case T_C: {
        float v[2];
        memcpy(v, p, 8);
        snprintf(out, len, "(%.9g, %.9g)", (double)v[0], (double)v[1]);
        break;
    }
    default: {
        double v[2];
        memcpy(v, p, 16);
        snprintf(out, len, "(%.17g, %.17g)", v[0], v[1]);
        break;
    }
    }
}

static void fill_inputs(int t, int o, long count, long salt, unsigned char *buf)
{
    for (long i = 0; i < count; i++)
        gen(t, o, me, i, salt, buf + (size_t)i * esize[t]);
}

static void compare_result(int t, int o, long count, long salt, const unsigned char *got,
                           const unsigned char *ref, const char *what)
{
    for (long i = 0; i < count; i++) {
        const unsigned char *g = got + (size_t)i * esize[t], *e = ref + (size_t)i * esize[t];
        if (memcmp(g, e, esize[t]) != 0) {
            char gs[96], es[96], ins[600];
            size_t len = 0;
            fmt_elem(t, g, gs, sizeof gs);
            fmt_elem(t, e, es, sizeof es);
            ins[0] = 0;
            for (int r = 0; r < n && len < sizeof ins - 100; r++) {
                unsigned char x[16];
                char xs[96];
                gen(t, o, r, i, salt, x);
                fmt_elem(t, x, xs, sizeof xs);
                len += (size_t)snprintf(ins + len, sizeof ins - len, " rank %d: %s;", r, xs);
            }
            TU_FAIL("%s: %c%s, count %ld: element %ld is %s, expected %s (inputs:%s the "
                    "reference is the exact sum, or the value of the lowest rank among those "
                    "of largest/smallest absolute value)", what, tname[t], oname[o], count, i,
                    gs, es, ins);
        }
    }
}

static const long rd_counts[] = {0, 1, 7, 1000, 300000};

static void test_builtin_reductions(void)
{
    init_optab();
    long combo = 0;
    for (int t = 0; t < NT; t++)
        for (int o = 0; o < NO; o++)
            for (size_t ci = 0; ci < sizeof rd_counts / sizeof rd_counts[0]; ci++, combo++) {
                long count = rd_counts[ci];
                size_t bytes = (size_t)count * esize[t];
                long salt = combo;
                char sub[160];
                snprintf(sub, sizeof sub, "reductions: %c%s, count %ld", tname[t], oname[o], count);
                tu_sub = sub;
                /* serial reference from every rank's known inputs */
                unsigned char *ref = malloc(bytes + 16), *x = malloc(esize[t]);
                for (long i = 0; i < count; i++) {
                    unsigned char *e = ref + (size_t)i * esize[t];
                    gen(t, o, 0, i, salt, e);
                    for (int r = 1; r < n; r++) {
                        gen(t, o, r, i, salt, x);
                        ref_combine(t, o, e, x);
                    }
                }
                static const int kinds[3] = {TU_SHARED, TU_HEAP, TU_HEAP_ODD};
                tu_buf b, w;
                tu_buf_get(&b, kinds[combo % 3], (long)bytes, NULL);
                tu_buf_get(&w, kinds[(combo + 1) % 3], (long)bytes, NULL);
                tu_buf_arm(&b);
                tu_buf_arm(&w);

                snprintf(sub, sizeof sub, "allreduce %c%s, count %ld, buf %s, work %s", tname[t],
                         oname[o], count, tu_kind_names[b.kind], tu_kind_names[w.kind]);
                tu_sub = sub;
                fill_inputs(t, o, count, salt, b.p);
                CALL(fmpl_allreduce(b.p, count, optab[t][o], FMPL_COMM_WORLD, w.p));
                compare_result(t, o, count, salt, b.p, ref, "allreduce");
                CHECK_BUF_UNTOUCHED_FROM(&b, (long)bytes, "allreduce buffer");
                CHECK_BUF_UNTOUCHED_FROM(&w, (long)bytes, "allreduce work (guards)");

                for (int rs = 0; rs < n; rs++) {
                    int root = count <= 1000 ? rs : (int)(combo % n);
                    if (count > 1000 && rs > 0)
                        break;
                    snprintf(sub, sizeof sub, "reduce %c%s, count %ld, root %d, buf %s, work %s",
                             tname[t], oname[o], count, root, tu_kind_names[b.kind],
                             tu_kind_names[w.kind]);
                    tu_sub = sub;
                    fill_inputs(t, o, count, salt, b.p);
                    CALL(fmpl_reduce(b.p, count, optab[t][o], root, FMPL_COMM_WORLD, w.p));
                    if (me == root)
                        compare_result(t, o, count, salt, b.p, ref, "reduce, at the root");
                    CHECK_BUF_UNTOUCHED_FROM(&b, (long)bytes, "reduce buffer");
                    CHECK_BUF_UNTOUCHED_FROM(&w, (long)bytes, "reduce work (guards)");
                }
                tu_buf_put(&b);
                tu_buf_put(&w);
                free(ref);
                free(x);
            }
}

/* ----------------------------------------------------------- user ops */

typedef struct kv {
    int32_t key;
    int32_t rank;
    double val;
} kv;

static int ctx_tag;
static long user_calls;

static void kv_max(const void *in_, void *inout_, long count, void *ctx)
{
    if (ctx != &ctx_tag)
        TU_FAIL("user function called with ctx %p, expected %p", ctx, (void *)&ctx_tag);
    if (count < 0)
        TU_FAIL("user function called with count %ld", count);
    user_calls++;
    const unsigned char *in = in_;
    unsigned char *io = inout_;
    for (long i = 0; i < count; i++) {
        kv a, b;
        memcpy(&a, in + i * (long)sizeof(kv), sizeof a);
        memcpy(&b, io + i * (long)sizeof(kv), sizeof b);
        if (!(b.key > a.key)) /* ties keep `in` (lower rank) */
            memcpy(io + i * (long)sizeof(kv), &a, sizeof a);
    }
}

static kv kv_gen(int r, long i, long salt)
{
    uint64_t h = tu_mix64(tu_seed(r, 77, i, salt));
    kv x = {(int32_t)(h % 4), r, r * 1000.0 + (double)i};
    return x;
}

#define PMOD 65521u
typedef struct mat {
    uint32_t a[4]; /* row-major 2x2 */
} mat;

static mat mat_mul(mat x, mat y)
{
    mat z;
    z.a[0] = (uint32_t)(((uint64_t)x.a[0] * y.a[0] + (uint64_t)x.a[1] * y.a[2]) % PMOD);
    z.a[1] = (uint32_t)(((uint64_t)x.a[0] * y.a[1] + (uint64_t)x.a[1] * y.a[3]) % PMOD);
    z.a[2] = (uint32_t)(((uint64_t)x.a[2] * y.a[0] + (uint64_t)x.a[3] * y.a[2]) % PMOD);
    z.a[3] = (uint32_t)(((uint64_t)x.a[2] * y.a[1] + (uint64_t)x.a[3] * y.a[3]) % PMOD);
    return z;
}

static void mat_op(const void *in_, void *inout_, long count, void *ctx)
{
    if (ctx != &ctx_tag)
        TU_FAIL("user function called with ctx %p, expected %p", ctx, (void *)&ctx_tag);
    user_calls++;
    const unsigned char *in = in_;
    unsigned char *io = inout_;
    for (long i = 0; i < count; i++) {
        mat a, b;
        memcpy(&a, in + i * (long)sizeof(mat), sizeof a);
        memcpy(&b, io + i * (long)sizeof(mat), sizeof b);
        b = mat_mul(a, b); /* inout = in x inout, in = lower rank */
        memcpy(io + i * (long)sizeof(mat), &b, sizeof b);
    }
}

static mat mat_gen(int r, long i, long salt)
{
    mat m;
    for (int k = 0; k < 4; k++)
        m.a[k] = (uint32_t)(tu_mix64(tu_seed(r, 88 + k, i, salt)) % PMOD);
    return m;
}

static void test_user_ops(void)
{
    static const long counts[] = {0, 1, 7, 1000};
    fmpl_op *kvop = NULL, *matop = NULL;
    tu_sub = "user ops: fmpl_op_create";
    CALL(fmpl_op_create(kv_max, sizeof(kv), &ctx_tag, &kvop));
    CHECK(kvop != NULL, "fmpl_op_create set no operation");
    CALL(fmpl_op_create(mat_op, sizeof(mat), &ctx_tag, &matop));
    for (size_t ci = 0; ci < 4; ci++) {
        long count = counts[ci];
        for (int which = 0; which < 2; which++) {
            size_t es = which == 0 ? sizeof(kv) : sizeof(mat);
            unsigned char *ref = malloc((size_t)count * es + 1);
            for (long i = 0; i < count; i++) {
                if (which == 0) {
                    kv e = kv_gen(0, i, (long)ci);
                    for (int r = 1; r < n; r++) {
                        kv x = kv_gen(r, i, (long)ci);
                        if (x.key > e.key)
                            e = x;
                    }
                    memcpy(ref + (size_t)i * es, &e, es);
                } else {
                    mat e = mat_gen(0, i, (long)ci);
                    for (int r = 1; r < n; r++)
                        e = mat_mul(e, mat_gen(r, i, (long)ci));
                    memcpy(ref + (size_t)i * es, &e, es);
                }
            }
            tu_buf b, w;
            tu_buf_get(&b, ci % 2 ? TU_SHARED : TU_HEAP, count * (long)es, NULL);
            tu_buf_get(&w, ci % 2 ? TU_HEAP : TU_SHARED, count * (long)es, NULL);
            for (int rs = -1; rs < n; rs++) { /* -1: allreduce */
                char sub[160];
                snprintf(sub, sizeof sub, "user op %s, count %ld, %s%d",
                         which == 0 ? "max-by-key" : "matrix product (non-commutative)", count,
                         rs < 0 ? "allreduce" : "reduce root ", rs < 0 ? 0 : rs);
                tu_sub = sub;
                tu_buf_arm(&b);
                tu_buf_arm(&w);
                for (long i = 0; i < count; i++) {
                    if (which == 0) {
                        kv x = kv_gen(me, i, (long)ci);
                        memcpy(b.p + (size_t)i * es, &x, es);
                    } else {
                        mat x = mat_gen(me, i, (long)ci);
                        memcpy(b.p + (size_t)i * es, &x, es);
                    }
                }
                const fmpl_op *op = which == 0 ? kvop : matop;
                if (rs < 0)
                    CALL(fmpl_allreduce(b.p, count, op, FMPL_COMM_WORLD, w.p));
                else
                    CALL(fmpl_reduce(b.p, count, op, rs, FMPL_COMM_WORLD, w.p));
                if (rs < 0 || rs == me)
                    for (long i = 0; i < count; i++)
                        if (memcmp(b.p + (size_t)i * es, ref + (size_t)i * es, es) != 0) {
                            if (which == 0) {
                                kv g, e;
                                memcpy(&g, b.p + (size_t)i * es, es);
                                memcpy(&e, ref + (size_t)i * es, es);
                                TU_FAIL("element %ld is {key %d, rank %d, val %g}, expected "
                                        "{key %d, rank %d, val %g} (max key, ties: lowest rank)",
                                        i, g.key, g.rank, g.val, e.key, e.rank, e.val);
                            } else {
                                mat g, e;
                                memcpy(&g, b.p + (size_t)i * es, es);
                                memcpy(&e, ref + (size_t)i * es, es);
                                TU_FAIL("element %ld is [%u %u; %u %u], expected [%u %u; %u %u] "
                                        "= M(rank 0) x M(rank 1) x ... (operands out of rank "
                                        "order?)", i, g.a[0], g.a[1], g.a[2], g.a[3], e.a[0],
                                        e.a[1], e.a[2], e.a[3]);
                            }
                        }
                CHECK_BUF_UNTOUCHED_FROM(&b, b.cap, "user op buffer (guards)");
                CHECK_BUF_UNTOUCHED_FROM(&w, w.cap, "user op work (guards)");
            }
            tu_buf_put(&b);
            tu_buf_put(&w);
            free(ref);
        }
    }
    tu_sub = "user ops: fmpl_op_free";
    CALL(fmpl_op_free(&kvop));
    CHECK(kvop == NULL, "fmpl_op_free must set the handle to NULL");
    CALL(fmpl_op_free(&matop));
    CHECK(matop == NULL, "fmpl_op_free must set the handle to NULL");
    /* Summed over the ranks: a leaf of a tree algorithm (the point-to-point
     * ones, run when ranks span hosts) never combines anything itself. */
    int called = user_calls > 0, work = 0;
    CALL(fmpl_allreduce(&called, 1, fmpl_isum, FMPL_COMM_WORLD, &work));
    if (n > 1)
        CHECK(called > 0, "the user functions were never called (%d ranks)", n);
}

/* ------------------------------------------------------ communicators */

/* Members (world ranks, in order) of the group with key `key`, given
 * every rank's key; returns the count, sets *myrank to my position. */
static int members(const int *keys, int key, int *list, int *myrank)
{
    int m = 0;
    *myrank = -1;
    for (int r = 0; r < n; r++)
        if (keys[r] == key) {
            if (r == me)
                *myrank = m;
            list[m++] = r;
        }
    return m;
}

static void exercise_comm(fmpl_comm c, const int *list, int m, int cr, const char *name)
{
    char sub[200];
    snprintf(sub, sizeof sub, "%s: rank and size", name);
    tu_sub = sub;
    int r = -1, s = -1;
    CALL(fmpl_comm_rank(c, &r));
    CALL(fmpl_comm_size(c, &s));
    CHECK(r == cr && s == m, "%s: fmpl_comm_rank/size give %d/%d, expected %d/%d (members are "
          "ranked in world order)", name, r, s, cr, m);

    barrier_check(c, 3, 10, 0, name);

    snprintf(sub, sizeof sub, "%s: p2p ring", name);
    tu_sub = sub;
    if (m > 1) {
        int nx = (cr + 1) % m, pv = (cr - 1 + m) % m;
        long ssz = 1000 + list[cr], rsz = 1000 + list[pv];
        tu_buf sb, rb;
        tu_buf_get(&sb, TU_HEAP, ssz, NULL);
        tu_buf_get(&rb, TU_SHARED, rsz, NULL);
        tu_fill(sb.p, ssz, tu_seed(cr, 3, ssz, 9));
        tu_buf_arm(&rb);
        fmpl_status st;
        CALL(fmpl_irecv(rb.p, rsz, pv, 3, c));
        CALL(fmpl_isend(sb.p, ssz, nx, 3, c));
        CALL(fmpl_irecv_wait(pv, 3, c, &st));
        CALL(fmpl_isend_wait(nx, 3, c));
        CHECK_STATUS(st, pv, 3, rsz, FMPL_SUCCESS,
                     "status.source must be the sender's rank in the communicator (world %d)",
                     list[pv]);
        CHECK_PATTERN(rb.p, rsz, tu_seed(pv, 3, rsz, 9), "ring message from comm rank %d", pv);
        CHECK_BUF_UNTOUCHED_FROM(&rb, rsz, "ring");
        tu_buf_put(&sb);
        tu_buf_put(&rb);
    }

    for (int root = 0; root < m; root++) {
        one_bcast(c, cr, 1, root, TU_HEAP, 5000 + root);
        one_bcast(c, cr, 100000, root, TU_SHARED, 6000 + root);
    }

    snprintf(sub, sizeof sub, "%s: allreduce isum", name);
    tu_sub = sub;
    int32_t v[3] = {list[cr], 1, cr}, w[3];
    CALL(fmpl_allreduce(v, 3, fmpl_isum, c, w));
    int32_t sumw = 0;
    for (int k = 0; k < m; k++)
        sumw += list[k];
    CHECK(v[0] == sumw && v[1] == m && v[2] == m * (m - 1) / 2,
          "%s: allreduce isum of {world rank, 1, comm rank} = {%d, %d, %d}, expected {%d, %d, %d}",
          name, v[0], v[1], v[2], sumw, m, m * (m - 1) / 2);

    for (int root = 0; root < m; root++) {
        snprintf(sub, sizeof sub, "%s: reduce dsum root %d", name, root);
        tu_sub = sub;
        double d[2] = {(double)list[cr] * 0.5, 1.0}, dw[2];
        CALL(fmpl_reduce(d, 2, fmpl_dsum, root, c, dw));
        if (cr == root)
            CHECK(d[0] == (double)sumw * 0.5 && d[1] == (double)m,
                  "%s: reduce dsum at root %d = {%g, %g}, expected {%g, %g}", name, root, d[0],
                  d[1], (double)sumw * 0.5, (double)m);
    }
}

static void test_comms(void)
{
    int *keys = malloc(sizeof(int) * (size_t)n), *list = malloc(sizeof(int) * (size_t)n);

    /* 1: key rank % 2, the last rank stays out */
    tu_sub = "comm_create: key rank%2, last rank FMPL_KEY_NONE";
    for (int r = 0; r < n; r++)
        keys[r] = r == n - 1 ? FMPL_KEY_NONE : r % 2;
    fmpl_comm c = 12345;
    CALL(fmpl_comm_create(keys[me], &c));
    if (keys[me] == FMPL_KEY_NONE) {
        CHECK(c == FMPL_COMM_NULL, "FMPL_KEY_NONE gave communicator %d, expected FMPL_COMM_NULL",
              c);
    } else {
        CHECK(c != FMPL_COMM_NULL && c != FMPL_COMM_WORLD, "key %d gave communicator %d",
              keys[me], c);
        int cr, m = members(keys, keys[me], list, &cr);
        exercise_comm(c, list, m, cr, "comm key rank%2");
        tu_sub = "comm_free";
        CALL(fmpl_comm_free(&c));
        CHECK(c == FMPL_COMM_NULL, "fmpl_comm_free left the handle %d, expected FMPL_COMM_NULL",
              c);
    }
    tu_sub = "world barrier after comm 1";
    CALL(fmpl_barrier(FMPL_COMM_WORLD));

    /* 2: a duplicate of WORLD: same index, separate matching */
    tu_sub = "comm_create: duplicate of WORLD (key 0 everywhere)";
    for (int r = 0; r < n; r++)
        keys[r] = 0;
    fmpl_comm d;
    CALL(fmpl_comm_create(0, &d));
    CHECK(d != FMPL_COMM_NULL && d != FMPL_COMM_WORLD, "duplicate communicator %d", d);
    {
        int cr, m = members(keys, 0, list, &cr);
        int nx = (me + 1) % n, pv = (me - 1 + n) % n;
        tu_sub = "dup vs WORLD: same peers, same index 5";
        for (int round = 0; round < 2; round++) {
            tu_buf sw, sd, rw, rd;
            tu_buf_get(&sw, TU_HEAP, 3000, NULL);
            tu_buf_get(&sd, TU_HEAP, 5000, NULL);
            tu_buf_get(&rw, TU_HEAP, 5000, NULL);
            tu_buf_get(&rd, TU_SHARED, 5000, NULL);
            tu_fill(sw.p, 3000, tu_seed(me, 5, 3000, 100 + round));
            tu_fill(sd.p, 5000, tu_seed(me, 5, 5000, 200 + round));
            tu_buf_arm(&rw);
            tu_buf_arm(&rd);
            fmpl_status s1, s2;
            if (round == 0) {
                CALL(fmpl_irecv(rd.p, 5000, pv, 5, d));
                CALL(fmpl_irecv(rw.p, 5000, pv, 5, FMPL_COMM_WORLD));
                CALL(fmpl_isend(sw.p, 3000, nx, 5, FMPL_COMM_WORLD));
                CALL(fmpl_isend(sd.p, 5000, nx, 5, d));
            } else {
                CALL(fmpl_isend(sd.p, 5000, nx, 5, d));
                CALL(fmpl_isend(sw.p, 3000, nx, 5, FMPL_COMM_WORLD));
                CALL(fmpl_irecv(rw.p, 5000, pv, 5, FMPL_COMM_WORLD));
                CALL(fmpl_irecv(rd.p, 5000, pv, 5, d));
            }
            CALL(fmpl_irecv_wait(pv, 5, FMPL_COMM_WORLD, &s1));
            CALL(fmpl_irecv_wait(pv, 5, d, &s2));
            CALL(fmpl_isend_wait(nx, 5, d));
            CALL(fmpl_isend_wait(nx, 5, FMPL_COMM_WORLD));
            CHECK_STATUS(s1, pv, 5, 3000, FMPL_SUCCESS, "WORLD receive (must get the WORLD send)");
            CHECK_STATUS(s2, pv, 5, 5000, FMPL_SUCCESS, "dup receive (must get the dup send)");
            CHECK_PATTERN(rw.p, 3000, tu_seed(pv, 5, 3000, 100 + round), "WORLD message");
            CHECK_PATTERN(rd.p, 5000, tu_seed(pv, 5, 5000, 200 + round), "dup message");
            CHECK_BUF_UNTOUCHED_FROM(&rw, 3000, "WORLD message");
            tu_buf_put(&sw);
            tu_buf_put(&sd);
            tu_buf_put(&rw);
            tu_buf_put(&rd);
        }
        exercise_comm(d, list, m, cr, "dup of WORLD");
    }

    /* 3: two more communicators alive at once, used interleaved */
    tu_sub = "two communicators at once";
    fmpl_comm a, b;
    CALL(fmpl_comm_create(me % 2, &a));
    CALL(fmpl_comm_create(0, &b));
    CHECK(a != b && a != d && b != d, "communicators alive at once must differ: %d %d %d", a, b,
          d);
    for (int k = 0; k < 3; k++) {
        int ra, sa_, rb_, sb_;
        CALL(fmpl_comm_rank(a, &ra));
        CALL(fmpl_comm_size(a, &sa_));
        CALL(fmpl_comm_rank(b, &rb_));
        CALL(fmpl_comm_size(b, &sb_));
        one_bcast(a, ra, 20000, k % sa_, TU_HEAP, 7000 + k);
        one_bcast(b, rb_, 20000, (n - 1 - k % n), TU_SHARED, 7100 + k);
        one_bcast(d, me, 20000, k % n, TU_HEAP, 7200 + k);
        int32_t one = 1, w;
        tu_sub = "two communicators at once: allreduce";
        CALL(fmpl_allreduce(&one, 1, fmpl_isum, a, &w));
        CHECK(one == sa_, "allreduce isum of 1 over comm a = %d, expected its size %d", one, sa_);
    }
    tu_sub = "free a, then d, then b";
    CALL(fmpl_comm_free(&a));
    CALL(fmpl_comm_free(&d));
    CALL(fmpl_comm_free(&b));
    CHECK(a == FMPL_COMM_NULL && b == FMPL_COMM_NULL && d == FMPL_COMM_NULL,
          "handles after fmpl_comm_free: %d %d %d", a, b, d);

    /* 4: create/free cycles */
    for (int it = 0; it < 30; it++) {
        char sub[100];
        snprintf(sub, sizeof sub, "create/free cycle %d", it);
        tu_sub = sub;
        for (int r = 0; r < n; r++)
            keys[r] = it % 3 == 0 ? 0 : it % 3 == 1 ? r % 2 : (r == it % n ? FMPL_KEY_NONE : 0);
        fmpl_comm c2;
        CALL(fmpl_comm_create(keys[me], &c2));
        if (keys[me] == FMPL_KEY_NONE) {
            CHECK(c2 == FMPL_COMM_NULL, "FMPL_KEY_NONE gave %d", c2);
            continue;
        }
        int cr, m = members(keys, keys[me], list, &cr);
        int r = -1, s = -1;
        CALL(fmpl_comm_rank(c2, &r));
        CALL(fmpl_comm_size(c2, &s));
        CHECK(r == cr && s == m, "rank/size %d/%d, expected %d/%d", r, s, cr, m);
        CALL(fmpl_barrier(c2));
        int32_t one = 1, w;
        CALL(fmpl_allreduce(&one, 1, fmpl_isum, c2, &w));
        CHECK(one == m, "allreduce isum of 1 = %d, expected %d", one, m);
        CALL(fmpl_comm_free(&c2));
    }
    tu_sub = "world barrier after the cycles";
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    free(keys);
    free(list);
}

int main(void)
{
    tu_init("collectives", COUNT);
    me = tu_rank;
    n = tu_size;
    if (me == 0) {
        const char *vars[] = {"FMPL_BCAST_ALGO", "FMPL_ALLREDUCE_ALGO", "FMPL_REDUCE_ALGO",
                              "FMPL_BARRIER_ALGO"};
        for (int i = 0; i < 4; i++)
            if (getenv(vars[i]))
                printf("collectives: %s=%s\n", vars[i], getenv(vars[i]));
    }
    test_barrier();
    tu_sub = "barrier before bcast";
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    test_bcast();
    tu_sub = "barrier before reductions";
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    test_builtin_reductions();
    test_user_ops();
    tu_sub = "barrier before comms";
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    test_comms();
    tu_sub = "finalize";
    return tu_finish();
}
