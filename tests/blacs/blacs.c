/* BLACS-FMPL through its C interface (and the Fortran one for a few calls),
 * at any number of ranks: process grids of several shapes (row-major,
 * column-major, a user map, a grid smaller than the job), and in each, for
 * every type I S D C Z:
 *   - point-to-point: every process sends four general blocks (strided,
 *     contiguous, and a row: one element per column) to every process,
 *     itself included, before receiving any; received in order, checked
 *     element by element, the rows past m left alone;
 *   - trapezoids (uplo U/L x diag U/N, m < n, m = n, m > n) sent to the next
 *     process: exactly the trapezoid's elements arrive, the rest untouched;
 *   - broadcasts in each scope, from every root, with every topology, general
 *     (strided and contiguous) and trapezoidal;
 *   - combines: sum, absolute max and min in each scope, to all (rdest -1)
 *     and to each destination, with and without the locations, on a block
 *     and on a row, with spread values and with values made to tie (both
 *     signs, |re| + |im| equal for different complex numbers), checked
 *     against values computed here: AMX / AMN give, bit for bit, the value
 *     of the lowest-ranked member of the scope holding the largest
 *     (smallest) absolute value, and name that member as the location; A
 *     is unchanged where no result goes.
 * Exits non-zero with a FAIL line on the first mismatch. */
#include "fmpl_blacs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Fortran interface, as ScaLAPACK calls it. */
void blacs_pinfo_(int *, int *);
void blacs_get_(const int *, const int *, int *);
void blacs_gridinit_(int *, const char *, const int *, const int *);
void blacs_gridinfo_(const int *, int *, int *, int *, int *);
void blacs_gridexit_(const int *);
void dgesd2d_(const int *, const int *, const int *, const double *, const int *, const int *,
              const int *);
void dgerv2d_(const int *, const int *, const int *, double *, const int *, const int *,
              const int *);
void dgamx2d_(const int *, const char *, const char *, const int *, const int *, double *,
              const int *, int *, int *, const int *, const int *, const int *);
int blacs_pnum_(const int *, const int *, const int *);

static int me, np;
static const char *where = "-";

#define FAIL(...)                                                                              \
    do {                                                                                       \
        fprintf(stderr, "FAIL [%d/%d] %s: ", me, np, where);                                  \
        fprintf(stderr, __VA_ARGS__);                                                          \
        fprintf(stderr, "\n");                                                                 \
        fflush(NULL);                                                                          \
        Cblacs_abort(0, 1);                                                                    \
    } while (0)
#define EXPECT(cond, ...)                                                                      \
    do {                                                                                       \
        if (!(cond))                                                                           \
            FAIL(__VA_ARGS__);                                                                 \
    } while (0)

/* ------------------------------------------------------------ types */

enum { TI, TS, TD, TC, TZ, NTYPES };
static const char letters[] = "isdcz";
static const size_t esize[] = {sizeof(int), sizeof(float), sizeof(double), 2 * sizeof(float),
                               2 * sizeof(double)};

static void put(int t, void *a, long k, double re, double im)
{
    switch (t) {
    case TI: ((int *)a)[k] = (int)re; break;
    case TS: ((float *)a)[k] = (float)re; break;
    case TD: ((double *)a)[k] = re; break;
    case TC: ((float *)a)[2 * k] = (float)re; ((float *)a)[2 * k + 1] = (float)im; break;
    default: ((double *)a)[2 * k] = re; ((double *)a)[2 * k + 1] = im; break;
    }
}

static void get(int t, const void *a, long k, double *re, double *im)
{
    *im = 0;
    switch (t) {
    case TI: *re = ((const int *)a)[k]; break;
    case TS: *re = ((const float *)a)[k]; break;
    case TD: *re = ((const double *)a)[k]; break;
    case TC: *re = ((const float *)a)[2 * k]; *im = ((const float *)a)[2 * k + 1]; break;
    default: *re = ((const double *)a)[2 * k]; *im = ((const double *)a)[2 * k + 1]; break;
    }
}

/* The value process (r, c) holds at (i, j) in test `seed`: small integers,
 * exact in every type, of both signs. */
static double value_re(int seed, int r, int c, int i, int j)
{
    return (double)((seed * 31 + r * 7 + c * 13 + i * 3 + j * 5) % 97 - 48);
}
static double value_im(int t, int seed, int r, int c, int i, int j)
{
    return t >= TC ? (double)((seed * 17 + r * 11 + c * 5 + i * 7 + j * 2) % 89 - 44) : 0;
}

static void fill(int t, void *a, int m, int n, int lda, int seed, int r, int c)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            put(t, a, (long)j * lda + i, value_re(seed, r, c, i, j),
                value_im(t, seed, r, c, i, j));
}

/* Sentinel everywhere (the "untouched" value). */
#define SENTINEL (-999.0)
static void *alloc_sentinel(int t, long elems)
{
    void *a = malloc((size_t)(elems ? elems : 1) * esize[t]);
    if (!a)
        FAIL("out of memory");
    for (long k = 0; k < elems; k++)
        put(t, a, k, SENTINEL, SENTINEL);
    return a;
}

static void expect_value(int t, const void *a, long k, double re, double im, const char *what)
{
    double gre, gim;
    get(t, a, k, &gre, &gim);
    if (t < TC)
        im = gim;
    EXPECT(gre == re && gim == im, "type %c %s element %ld: got (%g,%g), expected (%g,%g)",
           letters[t], what, k, gre, gim, re, im);
}

/* ------------------------------------------------ typed entry points */

#define WRAP(t, T)                                                                             \
    static void t##_gesd(int x, int m, int n, void *a, int lda, int r, int c)                  \
    { C##t##gesd2d(x, m, n, (T *)a, lda, r, c); }                                               \
    static void t##_gerv(int x, int m, int n, void *a, int lda, int r, int c)                  \
    { C##t##gerv2d(x, m, n, (T *)a, lda, r, c); }                                               \
    static void t##_trsd(int x, const char *u, const char *d, int m, int n, void *a, int lda,  \
                         int r, int c)                                                         \
    { C##t##trsd2d(x, u, d, m, n, (T *)a, lda, r, c); }                                         \
    static void t##_trrv(int x, const char *u, const char *d, int m, int n, void *a, int lda,  \
                         int r, int c)                                                         \
    { C##t##trrv2d(x, u, d, m, n, (T *)a, lda, r, c); }                                         \
    static void t##_gebs(int x, const char *s, const char *tp, int m, int n, void *a, int lda) \
    { C##t##gebs2d(x, s, tp, m, n, (T *)a, lda); }                                              \
    static void t##_gebr(int x, const char *s, const char *tp, int m, int n, void *a, int lda, \
                         int r, int c)                                                         \
    { C##t##gebr2d(x, s, tp, m, n, (T *)a, lda, r, c); }                                        \
    static void t##_trbs(int x, const char *s, const char *tp, const char *u, const char *d,   \
                         int m, int n, void *a, int lda)                                       \
    { C##t##trbs2d(x, s, tp, u, d, m, n, (T *)a, lda); }                                        \
    static void t##_trbr(int x, const char *s, const char *tp, const char *u, const char *d,   \
                         int m, int n, void *a, int lda, int r, int c)                         \
    { C##t##trbr2d(x, s, tp, u, d, m, n, (T *)a, lda, r, c); }                                  \
    static void t##_gsum(int x, const char *s, const char *tp, int m, int n, void *a, int lda, \
                         int r, int c)                                                         \
    { C##t##gsum2d(x, s, tp, m, n, (T *)a, lda, r, c); }                                        \
    static void t##_gamx(int x, const char *s, const char *tp, int m, int n, void *a, int lda, \
                         int *ra, int *ca, int ldia, int r, int c)                             \
    { C##t##gamx2d(x, s, tp, m, n, (T *)a, lda, ra, ca, ldia, r, c); }                          \
    static void t##_gamn(int x, const char *s, const char *tp, int m, int n, void *a, int lda, \
                         int *ra, int *ca, int ldia, int r, int c)                             \
    { C##t##gamn2d(x, s, tp, m, n, (T *)a, lda, ra, ca, ldia, r, c); }
WRAP(i, int)
WRAP(s, float)
WRAP(d, double)
WRAP(c, void)
WRAP(z, void)

typedef struct {
    void (*gesd)(int, int, int, void *, int, int, int);
    void (*gerv)(int, int, int, void *, int, int, int);
    void (*trsd)(int, const char *, const char *, int, int, void *, int, int, int);
    void (*trrv)(int, const char *, const char *, int, int, void *, int, int, int);
    void (*gebs)(int, const char *, const char *, int, int, void *, int);
    void (*gebr)(int, const char *, const char *, int, int, void *, int, int, int);
    void (*trbs)(int, const char *, const char *, const char *, const char *, int, int, void *,
                 int);
    void (*trbr)(int, const char *, const char *, const char *, const char *, int, int, void *,
                 int, int, int);
    void (*gsum)(int, const char *, const char *, int, int, void *, int, int, int);
    void (*gamx)(int, const char *, const char *, int, int, void *, int, int *, int *, int, int,
                 int);
    void (*gamn)(int, const char *, const char *, int, int, void *, int, int *, int *, int, int,
                 int);
} ops_t;
#define OPS(t) {t##_gesd, t##_gerv, t##_trsd, t##_trrv, t##_gebs, t##_gebr, t##_trbs, t##_trbr, \
                t##_gsum, t##_gamx, t##_gamn}
static const ops_t ops[NTYPES] = {OPS(i), OPS(s), OPS(d), OPS(c), OPS(z)};

/* ------------------------------------------------------------- grid */

typedef struct {
    int ctx, nprow, npcol, myrow, mycol;
} grid_t;

/* Trapezoid membership, BLACS's definition. */
static int in_trapezoid(char uplo, int unit, int m, int n, int i, int j)
{
    if (uplo == 'U') {
        int d = m > n ? m - n : 0;
        return unit ? i < j + d : i <= j + d;
    }
    int d = n > m ? n - m : 0;
    return unit ? i > j - d : i >= j - d;
}

/* ------------------------------------------------- point-to-point */

static void test_p2p(const grid_t *g, int t)
{
    where = "p2p";
    const ops_t *o = &ops[t];
    /* messages 0 and 2 strided, 1 contiguous, 3 a row (as PDLASWP swaps) */
    enum { MESSAGES = 4 };
    static const int ms[MESSAGES] = {5, 5, 5, 1}, ns[MESSAGES] = {4, 4, 4, 6},
                     lda[MESSAGES] = {7, 5, 7, 3};
    int peers = g->nprow * g->npcol;
    void *out = alloc_sentinel(t, 7 * 4);
    for (int dst = 0; dst < peers; dst++) /* everything sent before anything is received */
        for (int k = 0; k < MESSAGES; k++) {
            int dr = dst / g->npcol, dc = dst % g->npcol;
            fill(t, out, ms[k], ns[k], lda[k], 100 * k + dst, g->myrow, g->mycol);
            o->gesd(g->ctx, ms[k], ns[k], out, lda[k], dr, dc);
        }
    free(out);
    for (int src = 0; src < peers; src++) {
        int sr = src / g->npcol, sc = src % g->npcol;
        int mine = g->myrow * g->npcol + g->mycol;
        for (int k = 0; k < MESSAGES; k++) {
            int m = ms[k], n = ns[k];
            void *in = alloc_sentinel(t, (long)lda[k] * n);
            o->gerv(g->ctx, m, n, in, lda[k], sr, sc);
            for (int j = 0; j < n; j++)
                for (int i = 0; i < lda[k]; i++) {
                    long e = (long)j * lda[k] + i;
                    if (i < m)
                        expect_value(t, in, e, value_re(100 * k + mine, sr, sc, i, j),
                                     value_im(t, 100 * k + mine, sr, sc, i, j), "gerv2d");
                    else
                        expect_value(t, in, e, SENTINEL, SENTINEL, "gerv2d padding");
                }
            free(in);
        }
    }
}

static const int trap_shapes[][2] = {{3, 5}, {4, 4}, {6, 3}, {1, 1}, {0, 2}};

static void test_trapezoid_p2p(const grid_t *g, int t)
{
    where = "trsd2d/trrv2d";
    const ops_t *o = &ops[t];
    int peers = g->nprow * g->npcol, mine = g->myrow * g->npcol + g->mycol;
    int next = (mine + 1) % peers, prev = (mine + peers - 1) % peers;
    for (size_t s = 0; s < sizeof trap_shapes / sizeof *trap_shapes; s++)
        for (int u = 0; u < 2; u++)
            for (int d = 0; d < 2; d++) {
                int m = trap_shapes[s][0], n = trap_shapes[s][1], lda = m + 2;
                const char *uplo = u ? "U" : "L", *diag = d ? "U" : "N";
                int seed = (int)s * 4 + u * 2 + d;
                void *out = alloc_sentinel(t, (long)lda * n);
                fill(t, out, m, n, lda, seed, g->myrow, g->mycol);
                o->trsd(g->ctx, uplo, diag, m, n, out, lda, next / g->npcol, next % g->npcol);
                void *in = alloc_sentinel(t, (long)lda * n);
                int pr = prev / g->npcol, pc = prev % g->npcol;
                o->trrv(g->ctx, uplo, diag, m, n, in, lda, pr, pc);
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < lda; i++) {
                        long e = (long)j * lda + i;
                        if (i < m && in_trapezoid(uplo[0], d, m, n, i, j))
                            expect_value(t, in, e, value_re(seed, pr, pc, i, j),
                                         value_im(t, seed, pr, pc, i, j), "trapezoid element");
                        else
                            expect_value(t, in, e, SENTINEL, SENTINEL, "outside the trapezoid");
                    }
                free(out);
                free(in);
            }
}

/* ------------------------------------------------------- broadcasts */

static const char *const tops[] = {" ", "I", "D", "S", "M", "H", "T", "F", "1", "2", "i"};
#define NTOPS (sizeof tops / sizeof *tops)

/* Scope members: (r, c) of rank k in the scope. */
static void scope_member(const grid_t *g, char scope, int k, int *r, int *c)
{
    *r = scope == 'R' ? g->myrow : scope == 'C' ? k : k / g->npcol;
    *c = scope == 'R' ? k : scope == 'C' ? g->mycol : k % g->npcol;
}
static int scope_size(const grid_t *g, char scope)
{
    return scope == 'R' ? g->npcol : scope == 'C' ? g->nprow : g->nprow * g->npcol;
}

static void test_bcast(const grid_t *g, int t)
{
    const ops_t *o = &ops[t];
    static const char scopes[] = "RCA";
    int topi = 0;
    for (int s = 0; s < 3; s++) {
        char scope[2] = {scopes[s], 0};
        for (int k = 0; k < scope_size(g, scopes[s]); k++) {
            int rr, rc;
            scope_member(g, scopes[s], k, &rr, &rc);
            int root = rr == g->myrow && rc == g->mycol;
            const char *top = tops[topi++ % NTOPS];
            /* general, strided then contiguous */
            where = "gebs2d/gebr2d";
            for (int contiguous = 0; contiguous < 2; contiguous++) {
                int m = 4, n = 3, lda = contiguous ? m : 6, seed = 50 + k + 10 * s;
                void *a = alloc_sentinel(t, (long)lda * n);
                if (root) {
                    fill(t, a, m, n, lda, seed, rr, rc);
                    o->gebs(g->ctx, scope, top, m, n, a, lda);
                } else {
                    o->gebr(g->ctx, scope, top, m, n, a, lda, rr, rc);
                }
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < lda; i++)
                        expect_value(t, a, (long)j * lda + i,
                                     i < m ? value_re(seed, rr, rc, i, j) : SENTINEL,
                                     i < m ? value_im(t, seed, rr, rc, i, j) : SENTINEL,
                                     "broadcast element");
                free(a);
            }
            /* trapezoid */
            where = "trbs2d/trbr2d";
            for (int u = 0; u < 2; u++) {
                int m = 5, n = 3, lda = 6, seed = 70 + k + u;
                const char *uplo = u ? "u" : "l", *diag = u ? "n" : "u";
                void *a = alloc_sentinel(t, (long)lda * n);
                if (root) {
                    fill(t, a, m, n, lda, seed, rr, rc);
                    o->trbs(g->ctx, scope, top, uplo, diag, m, n, a, lda);
                } else {
                    o->trbr(g->ctx, scope, top, uplo, diag, m, n, a, lda, rr, rc);
                }
                if (!root)
                    for (int j = 0; j < n; j++)
                        for (int i = 0; i < lda; i++) {
                            int in = i < m && in_trapezoid(u ? 'U' : 'L', !u, m, n, i, j);
                            expect_value(t, a, (long)j * lda + i,
                                         in ? value_re(seed, rr, rc, i, j) : SENTINEL,
                                         in ? value_im(t, seed, rr, rc, i, j) : SENTINEL,
                                         "trapezoid broadcast element");
                        }
                free(a);
            }
        }
    }
}

/* --------------------------------------------------------- combines */

static double absval(int t, double re, double im) { return t >= TC ? fabs(re) + fabs(im) : fabs(re); }

/* Combine operands: value_re / value_im, or (ties) -2, -1, 1 or 2 in each
 * part, so that members of a scope often hold the same absolute value,
 * with the same bits or not (-2 and 2; 1 - 2i, -2 + i and 2 + i). */
static double tie_part(int h) { return h % 4 == 0 ? -2 : h % 4 == 1 ? -1 : h % 4 == 2 ? 1 : 2; }
static double combine_re(int ties, int seed, int r, int c, int i, int j)
{
    return ties ? tie_part(seed + r * 5 + c * 3 + i * 7 + j) : value_re(seed, r, c, i, j);
}
static double combine_im(int t, int ties, int seed, int r, int c, int i, int j)
{
    if (!ties)
        return value_im(t, seed, r, c, i, j);
    return t >= TC ? tie_part(seed * 3 + r + c * 7 + i + j * 5) : 0;
}

/* A block and a row (one element per column); ldia * n <= 8. */
static const int combine_shapes[][4] = {{3, 2, 5, 4}, {1, 4, 3, 2}}; /* m, n, lda, ldia */

static void test_combine(const grid_t *g, int t)
{
    const ops_t *o = &ops[t];
    static const char scopes[] = "RCA";
    int topi = 0;
    for (int shape = 0; shape < 2; shape++)
        for (int ties = 0; ties < 2; ties++)
            for (int s = 0; s < 3; s++) {
                int m = combine_shapes[shape][0], n = combine_shapes[shape][1];
                int lda = combine_shapes[shape][2], ldia = combine_shapes[shape][3];
                char scope[2] = {scopes[s], 0};
                int members = scope_size(g, scopes[s]);
                for (int dk = -1; dk < members; dk++) { /* -1: every process gets the result */
                    int drow = -1, dcol = -1;
                    if (dk >= 0)
                        scope_member(g, scopes[s], dk, &drow, &dcol);
                    int gets = dk < 0 || (drow == g->myrow && dcol == g->mycol);
                    const char *top = tops[topi++ % NTOPS];
                    for (int kind = 0; kind < 3; kind++)
                        for (int located = 0; located < 2; located++) {
                            if (kind == 0 && located)
                                continue;
                            where = kind == 0 ? "gsum2d" : kind == 1 ? "gamx2d" : "gamn2d";
                            int seed = 200 + 7 * s + dk + 3 * kind;
                            void *a = alloc_sentinel(t, (long)lda * n);
                            for (int j = 0; j < n; j++)
                                for (int i = 0; i < m; i++)
                                    put(t, a, (long)j * lda + i,
                                        combine_re(ties, seed, g->myrow, g->mycol, i, j),
                                        combine_im(t, ties, seed, g->myrow, g->mycol, i, j));
                            int ra[8], ca[8];
                            for (int q = 0; q < 8; q++)
                                ra[q] = ca[q] = -7;
                            if (kind == 0)
                                o->gsum(g->ctx, scope, top, m, n, a, lda, drow, dcol);
                            else
                                (kind == 1 ? o->gamx : o->gamn)(g->ctx, scope, top, m, n, a,
                                                                lda, ra, ca,
                                                                located ? ldia : -1, drow, dcol);
                            for (int j = 0; j < n; j++)
                                for (int i = 0; i < lda; i++) {
                                    long e = (long)j * lda + i;
                                    if (i >= m) {
                                        expect_value(t, a, e, SENTINEL, SENTINEL,
                                                     "combine padding");
                                        continue;
                                    }
                                    if (!gets) { /* A as it was */
                                        expect_value(
                                            t, a, e,
                                            combine_re(ties, seed, g->myrow, g->mycol, i, j),
                                            combine_im(t, ties, seed, g->myrow, g->mycol, i, j),
                                            "unchanged where no result goes");
                                        continue;
                                    }
                                    /* The sum, and the lowest-ranked member holding the
                                     * largest (smallest) |x|: its value and place. */
                                    double sre = 0, sim = 0, best = 0, wre = 0, wim = 0;
                                    int wr = -1, wc = -1;
                                    for (int k = 0; k < members; k++) {
                                        int r, c;
                                        scope_member(g, scopes[s], k, &r, &c);
                                        double re = combine_re(ties, seed, r, c, i, j);
                                        double im = combine_im(t, ties, seed, r, c, i, j);
                                        sre += re;
                                        sim += im;
                                        double av = absval(t, re, im);
                                        if (k == 0 || (kind == 1 ? av > best : av < best)) {
                                            best = av;
                                            wre = re;
                                            wim = im;
                                            wr = r;
                                            wc = c;
                                        }
                                    }
                                    if (kind == 0) {
                                        expect_value(t, a, e, sre, sim, "sum");
                                        continue;
                                    }
                                    expect_value(t, a, e, wre, wim,
                                                 "result (the value of the lowest-ranked "
                                                 "member with the largest / smallest |x|)");
                                    if (located)
                                        EXPECT(ra[j * ldia + i] == wr && ca[j * ldia + i] == wc,
                                               "type %c %s%s (%d,%d) of %d x %d: location "
                                               "{%d,%d}, expected {%d,%d}",
                                               letters[t], where, ties ? " with ties" : "", i,
                                               j, m, n, ra[j * ldia + i], ca[j * ldia + i], wr,
                                               wc);
                                }
                            if (located) /* ra/ca past m in each column are not written */
                                for (int j = 0; j < n; j++)
                                    EXPECT(ra[j * ldia + m] == -7 && ca[j * ldia + m] == -7,
                                           "location written past m");
                            if (!located && kind)
                                for (int q = 0; q < 8; q++)
                                    EXPECT(ra[q] == -7 && ca[q] == -7,
                                           "ldia -1 wrote locations");
                            free(a);
                        }
                }
            }
}

/* ----------------------------------------------------- the grids */

static void run_grid(grid_t *g)
{
    int pr, pc;
    Cblacs_gridinfo(g->ctx, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
    EXPECT(g->myrow >= 0 && g->myrow < g->nprow && g->mycol >= 0 && g->mycol < g->npcol,
           "gridinfo %d x %d at (%d,%d)", g->nprow, g->npcol, g->myrow, g->mycol);
    int pnum = Cblacs_pnum(g->ctx, g->myrow, g->mycol);
    EXPECT(pnum == g->myrow * g->npcol + g->mycol, "pnum %d", pnum);
    Cblacs_pcoord(g->ctx, pnum, &pr, &pc);
    EXPECT(pr == g->myrow && pc == g->mycol, "pcoord (%d,%d)", pr, pc);
    EXPECT(Cblacs_pnum(g->ctx, g->nprow, 0) == -1, "pnum outside the grid");
    for (int t = 0; t < NTYPES; t++) {
        test_p2p(g, t);
        test_trapezoid_p2p(g, t);
        test_bcast(g, t);
        test_combine(g, t);
    }
    Cblacs_barrier(g->ctx, "A");
    Cblacs_barrier(g->ctx, "r");
    Cblacs_barrier(g->ctx, "C");
}

/* The Fortran interface: a grid, a message to the next process, an AMX. */
static void test_fortran(void)
{
    where = "Fortran interface";
    int rank, size, zero = 0, what = 0, ctx, one = 1, nprow, npcol, myrow, mycol;
    blacs_pinfo_(&rank, &size);
    EXPECT(rank == me && size == np, "blacs_pinfo_ %d of %d", rank, size);
    blacs_get_(&zero, &what, &ctx); /* the Fortran system context: MPI_COMM_WORLD */
    EXPECT(ctx == 0x44000000, "blacs_get_(0) gave 0x%x, expected MPI_COMM_WORLD", ctx);
    blacs_gridinit_(&ctx, "Row", &one, &size);
    blacs_gridinfo_(&ctx, &nprow, &npcol, &myrow, &mycol);
    EXPECT(nprow == 1 && npcol == np && myrow == 0 && mycol == me, "gridinfo");
    EXPECT(blacs_pnum_(&ctx, &myrow, &mycol) == me, "blacs_pnum_");
    double x[2] = {me + 0.5, -(double)me}, y[2];
    int two = 2, next = (me + 1) % np, prev = (me + np - 1) % np;
    dgesd2d_(&ctx, &two, &one, x, &two, &zero, &next);
    dgerv2d_(&ctx, &two, &one, y, &two, &zero, &prev);
    EXPECT(y[0] == prev + 0.5 && y[1] == -(double)prev, "dgerv2d_ got %g %g", y[0], y[1]);
    int ra[2], ca[2], ldia = 2, all = -1;
    dgamx2d_(&ctx, "Row", "I", &two, &one, x, &two, ra, ca, &ldia, &all, &all);
    EXPECT(x[0] == np - 0.5 && x[1] == -(double)(np - 1), "dgamx2d_ values %g %g", x[0], x[1]);
    EXPECT(ra[0] == 0 && ca[0] == np - 1 && ca[1] == np - 1, "dgamx2d_ locations");
    blacs_gridexit_(&ctx);
}

int main(void)
{
    Cblacs_pinfo(&me, &np);
    int sys;
    Cblacs_get(0, 0, &sys);
    EXPECT(Cblacs2sys_handle(sys) == 0x44000000, "the system context is not MPI_COMM_WORLD");

    /* 1 x np, np x 1 (column-major), 2 x np/2 when even */
    int shapes[3][2] = {{1, np}, {np, 1}, {2, np / 2}};
    for (int k = 0; k < 3; k++) {
        if (k == 2 && (np % 2 || np < 4))
            continue;
        grid_t g = {.ctx = sys};
        Cblacs_gridinit(&g.ctx, k == 1 ? "Col" : "Row", shapes[k][0], shapes[k][1]);
        run_grid(&g);
        Cblacs_gridexit(g.ctx);
    }
    /* a user map: the processes in reverse order, in a grid of all */
    {
        int *map = malloc((size_t)np * sizeof *map);
        for (int p = 0; p < np; p++)
            map[p] = np - 1 - p;
        grid_t g = {.ctx = sys};
        Cblacs_gridmap(&g.ctx, map, 1, 1, np);
        int nr, nc, r, c;
        Cblacs_gridinfo(g.ctx, &nr, &nc, &r, &c);
        EXPECT(r == 0 && c == np - 1 - me, "gridmap placed me at (%d,%d)", r, c);
        run_grid(&g);
        Cblacs_gridexit(g.ctx);
        free(map);
    }
    /* a grid smaller than the job: the others are not in it */
    if (np > 1) {
        grid_t g = {.ctx = sys};
        Cblacs_gridinit(&g.ctx, "R", 1, np - 1);
        if (me == np - 1) {
            EXPECT(g.ctx == -1, "outside the grid, context %d", g.ctx);
            int nr, nc, r, c;
            Cblacs_gridinfo(g.ctx, &nr, &nc, &r, &c);
            EXPECT(nr == -1 && r == -1, "gridinfo outside the grid");
        } else {
            run_grid(&g);
            Cblacs_gridexit(g.ctx);
        }
    }
    test_fortran();
    Cblacs_freebuff(0, 1);
    if (me == 0)
        printf("blacs: %d processes, grids and types checked: ok\n", np);
    fflush(stdout);
    Cblacs_exit(0);
    return 0;
}
