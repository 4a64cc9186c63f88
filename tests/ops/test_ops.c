/* Unit test of the reduction operations (src/collectives/reduce_ops.c).
 *
 * Single process, no launcher.  Checks, bit for bit against a plain
 * reference: every built-in on its type, counts 0, 1, 7, 1000 (and a few
 * more), buffers at odd byte offsets, values drawn from small sets so that
 * ties (including +0/-0 and, for complex, equal |re|+|im| from different
 * pairs) are frequent, in == inout, and that nothing outside the buffers is
 * written.  Then user-defined operations (a non-commutative one, so operand
 * order is checked) and every error path.
 *
 * `test_ops --bench` also times the double sum against memcpy.
 */
#include "collectives/op.h"
#include "base/error.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

static int failures;

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            failures++;                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
        }                                                                          \
    } while (0)

/* ------------------------------------------------------------ random */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static int rnd_range(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }

/* ----------------------------------------------------- the built-ins */

enum { T_I, T_S, T_D, T_C, T_Z };
static const size_t type_size[] = {4, 4, 8, 8, 16};
static const char type_letter[] = "isdcz";
enum { O_SUM, O_MAX, O_MIN };
static const char *const op_name[] = {"sum", "max", "min"};

static const fmpl_op *builtin(int t, int o)
{
    const fmpl_op *const table[5][3] = {
        {fmpl_isum, fmpl_imax, fmpl_imin}, {fmpl_ssum, fmpl_smax, fmpl_smin},
        {fmpl_dsum, fmpl_dmax, fmpl_dmin}, {fmpl_csum, fmpl_cmax, fmpl_cmin},
        {fmpl_zsum, fmpl_zmax, fmpl_zmin}};
    return table[t][o];
}

/* Random element values from small sets, to make ties common. */
static int32_t rand_int(void)
{
    switch (rnd() % 16) {
    case 0: return INT32_MIN;
    case 1: return INT32_MAX;
    case 2: return -INT32_MAX;
    case 3: return (int32_t)rnd();
    default: return rnd_range(-4, 4);
    }
}
static double rand_real(void)
{
    switch (rnd() % 16) {
    case 0: return -0.0;
    case 1: return 0.0;
    case 2: return 1e30 * rnd_range(-3, 3);
    case 3: return (double)(int32_t)rnd() / 7.0;
    default: return 0.5 * rnd_range(-6, 6);
    }
}

static void fill_random(int t, unsigned char *p, long n)
{
    for (long i = 0; i < n; i++) {
        unsigned char *e = p + (size_t)i * type_size[t];
        if (t == T_I) {
            int32_t v = rand_int();
            memcpy(e, &v, 4);
        } else if (t == T_S || t == T_C) {
            for (int k = 0; k < (t == T_C ? 2 : 1); k++) {
                float v = (float)rand_real();
                memcpy(e + 4 * k, &v, 4);
            }
        } else {
            for (int k = 0; k < (t == T_Z ? 2 : 1); k++) {
                double v = rand_real();
                memcpy(e + 8 * k, &v, 8);
            }
        }
    }
}

/* The reference: one element at a time, through memcpy, in the most obvious
 * way.  |x| of an int in 64 bits; |z| = |re| + |im| in the component's
 * precision (as BLACS). */
static void ref_apply(int t, int o, const unsigned char *in, unsigned char *io, long n)
{
    for (long i = 0; i < n; i++) {
        const unsigned char *a = in + (size_t)i * type_size[t];
        unsigned char *b = io + (size_t)i * type_size[t];
        int take_b = 0; /* for max/min: result is b (else a) */
        if (t == T_I) {
            int32_t x, y;
            memcpy(&x, a, 4);
            memcpy(&y, b, 4);
            if (o == O_SUM) {
                int64_t s = (int64_t)x + y;
                int32_t r = (int32_t)(uint32_t)(uint64_t)s;
                memcpy(b, &r, 4);
                continue;
            }
            long long ax = llabs((long long)x), ay = llabs((long long)y);
            take_b = o == O_MAX ? ay > ax : ay < ax;
        } else if (t == T_S || t == T_C) {
            float x[2] = {0, 0}, y[2] = {0, 0};
            int nc = t == T_C ? 2 : 1;
            memcpy(x, a, 4 * nc);
            memcpy(y, b, 4 * nc);
            if (o == O_SUM) {
                for (int k = 0; k < nc; k++)
                    y[k] = x[k] + y[k];
                memcpy(b, y, 4 * nc);
                continue;
            }
            float ax = fabsf(x[0]) + fabsf(x[1]), ay = fabsf(y[0]) + fabsf(y[1]);
            take_b = o == O_MAX ? ay > ax : ay < ax;
        } else {
            double x[2] = {0, 0}, y[2] = {0, 0};
            int nc = t == T_Z ? 2 : 1;
            memcpy(x, a, 8 * nc);
            memcpy(y, b, 8 * nc);
            if (o == O_SUM) {
                for (int k = 0; k < nc; k++)
                    y[k] = x[k] + y[k];
                memcpy(b, y, 8 * nc);
                continue;
            }
            double ax = fabs(x[0]) + fabs(x[1]), ay = fabs(y[0]) + fabs(y[1]);
            take_b = o == O_MAX ? ay > ax : ay < ax;
        }
        if (!take_b)
            memcpy(b, a, type_size[t]);
    }
}

#define GUARD 64
#define GUARD_BYTE 0xa5

/* One random case: `n` elements, `in` at byte offset oi and `inout` at oo. */
static void check_case(int t, int o, long n, size_t oi, size_t oo)
{
    size_t bytes = (size_t)n * type_size[t];
    size_t total = bytes + 2 * GUARD + 64;
    unsigned char *bin = malloc(total), *bio = malloc(total), *want = malloc(total);
    memset(bin, GUARD_BYTE, total);
    memset(bio, GUARD_BYTE, total);
    unsigned char *in = bin + GUARD + oi, *io = bio + GUARD + oo;
    fill_random(t, in, n);
    fill_random(t, io, n);
    /* Make a share of the elements exact copies or sign flips of the other
     * operand: ties on the absolute value. */
    for (long i = 0; i < n; i++) {
        if (rnd() % 4 == 0) {
            unsigned char *a = in + (size_t)i * type_size[t], *b = io + (size_t)i * type_size[t];
            memcpy(b, a, type_size[t]);
            if (rnd() % 2) {
                /* flip the sign bits of every component */
                size_t comp = t == T_I ? 4 : (t == T_S || t == T_C) ? 4 : 8;
                for (size_t c = 0; c < type_size[t]; c += comp) {
                    if (t == T_I) {
                        int32_t v;
                        memcpy(&v, b, 4);
                        v = (int32_t)(0u - (uint32_t)v);
                        memcpy(b, &v, 4);
                    } else {
                        b[c + comp - 1] ^= 0x80; /* little endian sign bit */
                    }
                }
            }
        }
    }
    memcpy(want, bio, total);
    ref_apply(t, o, in, want + GUARD + oo, n);
    unsigned char *in_copy = malloc(bytes + 1);
    memcpy(in_copy, in, bytes);

    fmpl_op_apply(builtin(t, o), in, io, n);

    CHECK(memcmp(bio, want, total) == 0, "%c%s n=%ld offsets %zu/%zu: result differs",
          type_letter[t], op_name[o], n, oi, oo);
    if (memcmp(bio, want, total) != 0) {
        for (size_t k = 0; k < total; k++)
            if (bio[k] != want[k]) {
                fprintf(stderr, "  first difference at byte %zd of inout (element %zd)\n",
                        (ssize_t)k - GUARD - (ssize_t)oo,
                        ((ssize_t)k - GUARD - (ssize_t)oo) / (ssize_t)type_size[t]);
                break;
            }
    }
    CHECK(memcmp(in, in_copy, bytes) == 0, "%c%s: `in` was modified", type_letter[t], op_name[o]);
    for (size_t k = 0; k < GUARD + oi; k++)
        CHECK(bin[k] == GUARD_BYTE, "guard before in");

    /* in == inout */
    memcpy(want + GUARD + oo, in, bytes);
    ref_apply(t, o, in_copy, want + GUARD + oo, n);
    fmpl_op_apply(builtin(t, o), in, in, n);
    CHECK(memcmp(in, want + GUARD + oo, bytes) == 0, "%c%s n=%ld: in == inout differs",
          type_letter[t], op_name[o], n);

    free(in_copy);
    free(bin);
    free(bio);
    free(want);
}

static void test_builtins(void)
{
    static const long counts[] = {0, 1, 2, 3, 7, 8, 15, 16, 17, 33, 1000, 1001, 4099};
    static const size_t offsets[][2] = {{0, 0}, {1, 0}, {0, 3}, {5, 7}, {4, 8}, {8, 4},
                                        {16, 32}, {13, 13}, {2, 6}};
    for (int t = 0; t < 5; t++)
        for (int o = 0; o < 3; o++) {
            const fmpl_op *op = builtin(t, o);
            CHECK(op != NULL, "builtin %c%s is NULL", type_letter[t], op_name[o]);
            CHECK(fmpl_op_check(op) == FMPL_SUCCESS, "builtin %c%s invalid", type_letter[t],
                  op_name[o]);
            CHECK(fmpl_op_elem_size(op) == type_size[t], "%c%s elem_size %zu", type_letter[t],
                  op_name[o], fmpl_op_elem_size(op));
            CHECK(fmpl_op_is_builtin(op), "%c%s is not built-in", type_letter[t], op_name[o]);
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
                for (size_t k = 0; k < sizeof offsets / sizeof *offsets; k++)
                    for (int rep = 0; rep < 3; rep++)
                        check_case(t, o, counts[c], offsets[k][0], offsets[k][1]);
        }
    /* Distinct built-ins. */
    for (int a = 0; a < 15; a++)
        for (int b = a + 1; b < 15; b++)
            CHECK(builtin(a / 3, a % 3) != builtin(b / 3, b % 3), "built-ins %d and %d alias", a, b);
}

/* Hand-written cases: the documented semantics, independent of ref_apply. */
static void test_explicit(void)
{
    /* int max/min: largest/smallest |x|, sign kept, ties keep `in`. */
    {
        int32_t in[] = {3, -3, -7, 2, INT32_MIN, 0, -1, 5};
        int32_t io[] = {-3, 3, 6, -9, INT32_MAX, 0, 1, -5};
        int32_t want_max[] = {3, -3, -7, -9, INT32_MIN, 0, -1, 5};
        int32_t want_min[] = {3, -3, 6, 2, INT32_MAX, 0, -1, 5};
        int32_t a[8], b[8];
        memcpy(a, io, sizeof a);
        fmpl_op_apply(fmpl_imax, in, a, 8);
        CHECK(memcmp(a, want_max, sizeof a) == 0, "imax explicit");
        memcpy(b, io, sizeof b);
        fmpl_op_apply(fmpl_imin, in, b, 8);
        CHECK(memcmp(b, want_min, sizeof b) == 0, "imin explicit");
        int32_t s_in[] = {INT32_MAX, -4, 1}, s_io[] = {1, 4, -8}, s_want[] = {INT32_MIN, 0, -7};
        fmpl_op_apply(fmpl_isum, s_in, s_io, 3);
        CHECK(memcmp(s_io, s_want, sizeof s_io) == 0, "isum wraps");
    }
    /* double: -0.0 vs +0.0 is a tie: keep `in`. */
    {
        double in[] = {-0.0, 0.0, -2.5, 1.0, -4.0};
        double io[] = {0.0, -0.0, 2.5, -3.0, 3.0};
        double mx[5], mn[5];
        memcpy(mx, io, sizeof mx);
        memcpy(mn, io, sizeof mn);
        fmpl_op_apply(fmpl_dmax, in, mx, 5);
        fmpl_op_apply(fmpl_dmin, in, mn, 5);
        CHECK(signbit(mx[0]) && !signbit(mx[1]), "dmax: zero tie keeps in");
        CHECK(signbit(mn[0]) && !signbit(mn[1]), "dmin: zero tie keeps in");
        CHECK(mx[2] == -2.5 && mn[2] == -2.5, "d tie keeps in: %g %g", mx[2], mn[2]);
        CHECK(mx[3] == -3.0 && mn[3] == 1.0, "d: %g %g", mx[3], mn[3]);
        CHECK(mx[4] == -4.0 && mn[4] == 3.0, "d: %g %g", mx[4], mn[4]);
        float fin[] = {-1.5f, 2.0f}, fio[] = {1.5f, -2.5f};
        fmpl_op_apply(fmpl_smax, fin, fio, 2);
        CHECK(fio[0] == -1.5f && fio[1] == -2.5f, "smax %g %g", fio[0], fio[1]);
    }
    /* complex: |re| + |im|, not the modulus.  (3,0) vs (2,2): by modulus
     * (3 vs 2.83) (3,0) is larger; by |re|+|im| (3 vs 4) (2,2) is. */
    {
        double in[] = {3, 0, 1, -2, -5, 0};
        double io[] = {2, 2, -3, 0, 0, 5};
        double mx[6], mn[6];
        memcpy(mx, io, sizeof mx);
        memcpy(mn, io, sizeof mn);
        fmpl_op_apply(fmpl_zmax, in, mx, 3);
        fmpl_op_apply(fmpl_zmin, in, mn, 3);
        CHECK(mx[0] == 2 && mx[1] == 2, "zmax uses |re|+|im|: (%g,%g)", mx[0], mx[1]);
        CHECK(mn[0] == 3 && mn[1] == 0, "zmin uses |re|+|im|: (%g,%g)", mn[0], mn[1]);
        CHECK(mx[2] == 1 && mx[3] == -2 && mn[2] == 1 && mn[3] == -2, "z tie keeps in");
        CHECK(mx[4] == -5 && mx[5] == 0 && mn[4] == -5 && mn[5] == 0, "z tie keeps in (2)");
        float cin[] = {3, 0, 1, -2}, cio[] = {2, 2, -3, 0};
        fmpl_op_apply(fmpl_cmax, cin, cio, 2);
        CHECK(cio[0] == 2 && cio[1] == 2 && cio[2] == 1 && cio[3] == -2, "cmax");
        float sin_[] = {1, 2, -3, 4}, sio[] = {10, 20, 30, -40};
        fmpl_op_apply(fmpl_csum, sin_, sio, 2);
        CHECK(sio[0] == 11 && sio[1] == 22 && sio[2] == 27 && sio[3] == -36, "csum componentwise");
    }
}

/* ------------------------------------------------------------ user ops */

/* 2x2 integer matrix product: associative, not commutative.
 * inout = in * inout. */
typedef struct { int64_t m[4]; } mat2;
typedef struct { int calls; long elems; } user_ctx;

static void mat_mul(const void *in_, void *io_, long n, void *ctx)
{
    const mat2 *in = in_;
    mat2 *io = io_;
    user_ctx *c = ctx;
    c->calls++;
    c->elems += n;
    for (long i = 0; i < n; i++) {
        const int64_t *a = in[i].m, *b = io[i].m;
        mat2 r = {{a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                   a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]}};
        io[i] = r;
    }
}

static void never_called(const void *in, void *io, long n, void *ctx)
{
    (void)in, (void)io, (void)n, (void)ctx;
    failures++;
    fprintf(stderr, "FAIL: user function called with count %ld\n", n);
}

static void test_user(void)
{
    user_ctx ctx = {0, 0};
    fmpl_op *op = NULL;
    CHECK(fmpl_op_new(mat_mul, sizeof(mat2), &ctx, &op) == FMPL_SUCCESS, "create");
    CHECK(op != NULL, "create gave NULL");
    CHECK(fmpl_op_check(op) == FMPL_SUCCESS, "user op invalid");
    CHECK(fmpl_op_elem_size(op) == sizeof(mat2), "user elem_size");
    CHECK(!fmpl_op_is_builtin(op), "user op claims built-in");

    mat2 in[3] = {{{1, 1, 0, 1}}, {{2, 0, 0, 1}}, {{0, 1, 1, 0}}};
    mat2 io[3] = {{{1, 0, 1, 1}}, {{1, 3, 0, 1}}, {{5, 6, 7, 8}}};
    mat2 want[3] = {{{2, 1, 1, 1}}, {{2, 6, 0, 1}}, {{7, 8, 5, 6}}};
    fmpl_op_apply(op, in, io, 3);
    CHECK(memcmp(io, want, sizeof io) == 0, "user op: inout = in * inout");
    CHECK(ctx.calls == 1 && ctx.elems == 3, "one call for all elements: %d calls, %ld elems",
          ctx.calls, ctx.elems);
    fmpl_op_apply(op, in, io, 0);
    CHECK(ctx.calls == 1, "count 0 must not call the user function");
    CHECK(fmpl_op_delete(&op) == FMPL_SUCCESS, "free");
    CHECK(op == NULL, "free did not clear the handle");

    fmpl_op *z = NULL;
    CHECK(fmpl_op_new(never_called, 1, NULL, &z) == FMPL_SUCCESS, "create (1-byte elements)");
    char a = 1, b = 2;
    fmpl_op_apply(z, &a, &b, 0);
    fmpl_op_apply(z, &a, &b, -5);
    CHECK(fmpl_op_delete(&z) == FMPL_SUCCESS, "free z");

    /* Many create/free cycles: exercises the quarantine (ASan checks it). */
    for (int i = 0; i < 500; i++) {
        fmpl_op *t = NULL;
        CHECK(fmpl_op_new(mat_mul, sizeof(mat2), &ctx, &t) == FMPL_SUCCESS, "create %d", i);
        CHECK(fmpl_op_delete(&t) == FMPL_SUCCESS, "free %d", i);
    }
}

static void test_errors(void)
{
    user_ctx ctx = {0, 0};
    fmpl_op *op = (fmpl_op *)0x1;
    CHECK(fmpl_op_new(NULL, 4, &ctx, &op) == FMPL_ERR_ARG, "NULL fn");
    CHECK(op == NULL, "failed create must set *op = NULL");
    CHECK(fmpl_op_new(mat_mul, 0, &ctx, &op) == FMPL_ERR_ARG, "elem_size 0");
    CHECK(fmpl_op_new(mat_mul, 4, &ctx, NULL) == FMPL_ERR_ARG, "NULL op");

    CHECK(fmpl_op_check(NULL) == FMPL_ERR_OP, "check NULL");
    struct { uint64_t junk[8]; } garbage;
    memset(&garbage, 0x5c, sizeof garbage);
    CHECK(fmpl_op_check((const fmpl_op *)&garbage) == FMPL_ERR_OP, "check garbage");
    memset(&garbage, 0, sizeof garbage);
    CHECK(fmpl_op_check((const fmpl_op *)&garbage) == FMPL_ERR_OP, "check zeros");

    /* A live-looking op with a bad kind or no function is still rejected. */
    struct fmpl_op fake = *fmpl_dsum;
    fake.kind = 99;
    CHECK(fmpl_op_check(&fake) == FMPL_ERR_OP, "bad kind");
    fake = *fmpl_dsum;
    fake.kind = FMPL_OPK_USER;
    CHECK(fmpl_op_check(&fake) == FMPL_ERR_OP, "user kind without fn");

    /* Built-ins cannot be freed, and stay valid. */
    fmpl_op *b = (fmpl_op *)fmpl_dsum;
    CHECK(fmpl_op_delete(&b) == FMPL_ERR_OP, "free builtin");
    CHECK(b == fmpl_dsum, "failed free must leave the handle");
    CHECK(fmpl_op_check(fmpl_dsum) == FMPL_SUCCESS, "dsum still valid");

    /* Freed ops are detected through a stale handle. */
    CHECK(fmpl_op_new(mat_mul, sizeof(mat2), &ctx, &op) == FMPL_SUCCESS, "create");
    fmpl_op *stale = op;
    CHECK(fmpl_op_delete(&op) == FMPL_SUCCESS, "free");
    CHECK(fmpl_op_check(stale) == FMPL_ERR_OP, "check freed");
    CHECK(fmpl_op_delete(&stale) == FMPL_ERR_OP, "double free");
    CHECK(fmpl_op_delete(NULL) == FMPL_ERR_ARG, "free(NULL)");
    fmpl_op *null_op = NULL;
    CHECK(fmpl_op_delete(&null_op) == FMPL_ERR_OP, "free of a NULL handle");
}

/* ------------------------------------------------------------ bench */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void bench(void)
{
    static const long sizes[] = {1024, 32768, 4L << 20};  /* doubles */
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        long n = sizes[s];
        double *a = aligned_alloc(64, (size_t)n * 8), *b = aligned_alloc(64, (size_t)n * 8);
        for (long i = 0; i < n; i++)
            a[i] = (double)i, b[i] = 1.0;
        long reps = (256L << 20) / (n * 8);
        const fmpl_op *ops[] = {fmpl_dsum, fmpl_dmax, fmpl_zmax, fmpl_isum};
        const char *names[] = {"dsum", "dmax", "zmax", "isum"};
        for (int k = 0; k < 4; k++) {
            long cnt = n * 8 / (long)fmpl_op_elem_size(ops[k]);
            double t0 = now();
            for (long r = 0; r < reps; r++)
                fmpl_op_apply(ops[k], a, b, cnt);
            double t = now() - t0;
            printf("%-5s %9ld bytes: %6.2f GB/s (bytes of inout per second)\n", names[k],
                   n * 8, (double)reps * (double)n * 8 / t / 1e9);
        }
        double t0 = now();
        for (long r = 0; r < reps; r++) {
            memcpy(b, a, (size_t)n * 8);
            __asm__ volatile("" ::"r"(b) : "memory");
        }
        double t = now() - t0;
        printf("memcpy %8ld bytes: %6.2f GB/s\n", n * 8, (double)reps * (double)n * 8 / t / 1e9);
        free(a);
        free(b);
    }
}

int main(int argc, char **argv)
{
    setenv("FMPL_ERRORS_QUIET", "1", 1);  /* errors below are provoked on purpose */
    fmpl_error_init();
    test_builtins();
    test_explicit();
    test_user();
    test_errors();
    if (argc > 1 && strcmp(argv[1], "--bench") == 0)
        bench();
    if (failures) {
        fprintf(stderr, "test_ops: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_ops: all passed\n");
    return 0;
}
