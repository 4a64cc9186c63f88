/* BLACS-FMPL broadcasts and combines within a scope (the grid's row,
 * column or all; fmpl_comm_split made their communicators).
 *
 *   xGEBS2D / xGEBR2D, xTRBS2D / xTRBR2D   the sender's BLACS message to each
 *                                          member on the scope's broadcast
 *                                          link, received from the root
 *   xGSUM2D                                fmpl_iallreduce (tested while
 *                                          the spool is delivered), the
 *                                          result kept by the destination
 *                                          (rdest != -1) or by all
 *   xGAMX2D / xGAMN2D                      the same with fmpl_Xmax / fmpl_Xmin,
 *                                          FMPL's absolute-value max and min
 *                                          (BLACS's AMX / AMN, |re| + |im| for
 *                                          complex, ties to the lower rank);
 *                                          with locations (ldia != -1) one
 *                                          allreduce of (value, rank) pairs
 *                                          with an operation of this file's
 *                                          (made once, the same selection
 *                                          as fmpl_Xmax / fmpl_Xmin, the
 *                                          rank travelling with its value)
 *
 * Broadcasts are messages, not a collective: BLACS lets a scope's
 * processes take broadcasts from different roots, and broadcasts and
 * combines, in different orders, and a root's send completes locally
 * (the spool) as MPI's BLACS's does.
 * A block that is one run in memory is sent from and received into A;
 * others are packed into FMPL-allocated buffers.  Combines work on a packed copy
 * unless every process gets the result of a block that is one run, so
 * that A is left as it was on the processes that get no result.  Every
 * BLACS topology gives the same result: FMPL chooses the combines'
 * algorithm (tree, shared-memory) by size and process count.  The
 * processes of a scope take part in its combines in the same order. */
#include "blacs/blacs.h"

#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

static void bcast_shape(int context, const char *scope, const char *top, const blacs_shape *s,
                        blacs_type t, void *a, int sender, int rsrc, int csrc, const char *func)
{
    blacs_ctx *ctx = blacs_context(context, func);
    char which;
    blacs_scope(ctx, scope, func, &which);
    blacs_topology(top, func);
    blacs_link *l = &ctx->bcast[which == 'R' ? 0 : which == 'C' ? 1 : 2];
    int me = blacs_scope_rank(ctx, which, ctx->myrow, ctx->mycol);
    int members = which == 'R' ? ctx->npcol : which == 'C' ? ctx->nprow : ctx->nprow * ctx->npcol;
    int root = sender ? me : blacs_scope_rank(ctx, which, rsrc, csrc);
    if (rsrc < 0 || csrc < 0 || root < 0 || root >= members)
        blacs_error(func, "source {%d,%d} is outside the scope", rsrc, csrc);
    size_t esize = blacs_type_size[t];
    long bytes = blacs_shape_count(s) * (long)esize;
    if (bytes == 0)
        return;
    int contiguous = blacs_shape_contiguous(s);
    void *packed = contiguous ? a : blacs_scratch(0, (size_t)bytes);
    if (sender) {
        if (!contiguous)
            blacs_pack(s, esize, a, packed);
        for (int k = 1; k < members; k++) /* the members after the root first */
            blacs_link_send(l, packed, bytes, (me + k) % members, func);
        return;
    }
    blacs_link_recv(l, packed, bytes, root, func);
    if (!contiguous)
        blacs_unpack(s, esize, packed, a);
}

/* An allreduce that keeps this process's spooled sends going while it
 * waits: a peer of the scope may be waiting for one of them before it
 * joins the combine (a send spooled before the combine, whose receive was
 * posted after it), and a blocking collective would not deliver it.  The
 * nonblocking form, tested in a loop with fmpl_sendbuf_check, does.  A
 * combine to one destination is an allreduce too (the others drop it). */
static void allreduce_delivering(void *buf, long count, const fmpl_op *op, fmpl_comm comm,
                                 const char *func)
{
    fmpl_coll_req req;
    blacs_check(fmpl_iallreduce(buf, count, op, comm, &req), func, "fmpl_iallreduce");
    for (int done = 0; !done;) {
        blacs_check(fmpl_coll_test(&req, &done), func, "fmpl_coll_test");
        if (!done) {
            blacs_check(fmpl_sendbuf_check(NULL, NULL), func, "fmpl_sendbuf_check");
            sched_yield();
        }
    }
}

void blacs_barrier_delivering(fmpl_comm comm, const char *func)
{
    fmpl_coll_req req;
    blacs_check(fmpl_ibarrier(comm, &req), func, "fmpl_ibarrier");
    for (int done = 0; !done;) {
        blacs_check(fmpl_coll_test(&req, &done), func, "fmpl_coll_test");
        if (!done) {
            blacs_check(fmpl_sendbuf_check(NULL, NULL), func, "fmpl_sendbuf_check");
            sched_yield();
        }
    }
}

enum { SUM, AMX, AMN };

static const fmpl_op *const *const ops[5][3] = {
    {&fmpl_isum, &fmpl_imax, &fmpl_imin}, {&fmpl_ssum, &fmpl_smax, &fmpl_smin},
    {&fmpl_dsum, &fmpl_dmax, &fmpl_dmin}, {&fmpl_csum, &fmpl_cmax, &fmpl_cmin},
    {&fmpl_zsum, &fmpl_zmax, &fmpl_zmin}};

/* Combines with locations: each element travels with the rank of the
 * scope that holds it, {value, int32 rank}, the value first (so a pair's
 * value is at offset 0 and its rank at blacs_type_size[t]).  The
 * operations select as fmpl_Xmax / fmpl_Xmin do (fmpl.h): the
 * higher-ranked operand only when its absolute value is strictly larger
 * (smaller), so a NaN or a tie keeps the lower rank's value and rank.
 * The rank settles a tie itself, whatever order the operands come in:
 * the result is the value of the lowest rank holding the largest
 * (smallest) absolute value, with that rank, as BLACS reports it. */
typedef struct { int32_t v, rank; } pair_i;
typedef struct { float v; int32_t rank; } pair_s;
typedef struct { double v; int32_t rank, pad; } pair_d;
typedef struct { float re, im; int32_t rank; } pair_c;
typedef struct { double re, im; int32_t rank, pad; } pair_z;
static const size_t pair_size[5] = {sizeof(pair_i), sizeof(pair_s), sizeof(pair_d),
                                    sizeof(pair_c), sizeof(pair_z)};
_Static_assert(offsetof(pair_i, rank) == sizeof(int) && offsetof(pair_s, rank) == sizeof(float) &&
                   offsetof(pair_d, rank) == sizeof(double) &&
                   offsetof(pair_c, rank) == 2 * sizeof(float) &&
                   offsetof(pair_z, rank) == 2 * sizeof(double),
               "a pair's rank follows its value");

static inline uint32_t abs_i(const pair_i *p) /* unsigned: INT_MIN is the largest */
{
    return p->v < 0 ? 0u - (uint32_t)p->v : (uint32_t)p->v;
}
static inline float abs_s(const pair_s *p) { return fabsf(p->v); }
static inline double abs_d(const pair_d *p) { return fabs(p->v); }
static inline float abs_c(const pair_c *p) { return fabsf(p->re) + fabsf(p->im); }
static inline double abs_z(const pair_z *p) { return fabs(p->re) + fabs(p->im); }

/* inout[k] = in[k] unless inout[k] wins: its |value| strictly larger (AMX,
 * CMP >) or smaller (AMN, CMP <), or equal with a lower rank. */
#define PAIR_OP(L, KIND, CMP)                                                                  \
    static void located_##L##KIND(const void *in_, void *inout_, long count, void *unused)     \
    {                                                                                          \
        (void)unused;                                                                          \
        const pair_##L *in = in_;                                                              \
        pair_##L *inout = inout_;                                                              \
        for (long k = 0; k < count; k++) {                                                     \
            int keep = abs_##L(&inout[k]) CMP abs_##L(&in[k]) ||                               \
                       (abs_##L(&inout[k]) == abs_##L(&in[k]) && inout[k].rank < in[k].rank);  \
            if (!keep)                                                                         \
                inout[k] = in[k];                                                              \
        }                                                                                      \
    }
#define PAIR_OPS(L) PAIR_OP(L, amx, >) PAIR_OP(L, amn, <)
PAIR_OPS(i)
PAIR_OPS(s)
PAIR_OPS(d)
PAIR_OPS(c)
PAIR_OPS(z)

static const fmpl_user_fn located_fns[5][2] = {
    {located_iamx, located_iamn}, {located_samx, located_samn}, {located_damx, located_damn},
    {located_camx, located_camn}, {located_zamx, located_zamn}};
static fmpl_op *located_ops[5][2]; /* made on first use, freed by Cblacs_exit */

static const fmpl_op *located_op(blacs_type t, int kind, const char *func)
{
    fmpl_op **op = &located_ops[t][kind == AMX ? 0 : 1];
    if (!*op)
        blacs_check(fmpl_op_create(located_fns[t][kind == AMX ? 0 : 1], pair_size[t], NULL, op),
                    func, "fmpl_op_create");
    return *op;
}

void blacs_coll_release(void)
{
    for (int t = 0; t < 5; t++)
        for (int k = 0; k < 2; k++)
            if (located_ops[t][k])
                blacs_check(fmpl_op_free(&located_ops[t][k]), "BLACS_EXIT", "fmpl_op_free");
}

/* AMX / AMN with locations: the pairs of A's elements and this process's
 * rank, one allreduce, then on the processes that get the result its
 * values into A and its ranks, as grid coordinates, into ra/ca (ldia x n).
 * A is only read until then, so it stays as it was elsewhere. */
static void combine_located(const blacs_ctx *ctx, fmpl_comm comm, char which,
                            const blacs_shape *s, blacs_type t, int kind, void *a, int *ra,
                            int *ca, int ldia, int me, int dest, const char *func)
{
    size_t esize = blacs_type_size[t], psize = pair_size[t];
    long count = (long)s->m * s->n;
    char *pairs = blacs_scratch(1, (size_t)count * psize), *matrix = a;
    int32_t rank = me;
    for (int j = 0; j < s->n; j++)
        for (int i = 0; i < s->m; i++) {
            char *p = pairs + ((size_t)j * s->m + i) * psize;
            memcpy(p, matrix + ((size_t)j * s->lda + i) * esize, esize);
            memcpy(p + esize, &rank, sizeof rank);
            memset(p + esize + sizeof rank, 0, psize - esize - sizeof rank); /* pad */
        }
    allreduce_delivering(pairs, count, located_op(t, kind, func), comm, func);
    if (dest >= 0 && dest != me)
        return;
    for (int j = 0; j < s->n; j++)
        for (int i = 0; i < s->m; i++) {
            const char *p = pairs + ((size_t)j * s->m + i) * psize;
            memcpy(matrix + ((size_t)j * s->lda + i) * esize, p, esize);
            memcpy(&rank, p + esize, sizeof rank);
            ra[(long)j * ldia + i] = which == 'R'   ? ctx->myrow
                                     : which == 'C' ? rank
                                                    : rank / ctx->npcol;
            ca[(long)j * ldia + i] = which == 'R'   ? rank
                                     : which == 'C' ? ctx->mycol
                                                    : rank % ctx->npcol;
        }
}

static void combine(int context, const char *scope, const char *top, int m, int n, void *a,
                    int lda, blacs_type t, int kind, int *ra, int *ca, int ldia, int rdest,
                    int cdest, const char *func)
{
    blacs_ctx *ctx = blacs_context(context, func);
    char which;
    fmpl_comm comm = blacs_scope(ctx, scope, func, &which);
    blacs_topology(top, func);
    blacs_shape s = blacs_general(m, n, lda, func);
    int located = kind != SUM && ldia != -1;
    if (located && ldia < m)
        blacs_error(func, "ldia %d is less than m %d", ldia, m);
    int dest = rdest == -1 ? -1 : blacs_scope_rank(ctx, which, rdest, cdest);
    int me, size;
    blacs_check(fmpl_comm_rank(comm, &me), func, "fmpl_comm_rank");
    blacs_check(fmpl_comm_size(comm, &size), func, "fmpl_comm_size");
    if (dest >= size)
        blacs_error(func, "destination {%d,%d} is outside the scope", rdest, cdest);
    long count = (long)m * n;
    if (count == 0)
        return;
    if (located) {
        combine_located(ctx, comm, which, &s, t, kind, a, ra, ca, ldia, me, dest, func);
        return;
    }
    size_t esize = blacs_type_size[t];
    /* In place only when every process gets the result. */
    int in_place = dest < 0 && blacs_shape_contiguous(&s);
    void *buf = in_place ? a : blacs_scratch(0, (size_t)count * esize);
    if (!in_place)
        blacs_pack(&s, esize, a, buf);
    allreduce_delivering(buf, count, *ops[t][kind], comm, func);
    if (!in_place && (dest < 0 || dest == me))
        blacs_unpack(&s, esize, buf, a);
}

#define BLACS_COLL(t, T, TYPE)                                                                 \
    void C##t##gebs2d(int context, const char *scope, const char *top, int m, int n,           \
                      const T *a, int lda)                                                     \
    {                                                                                          \
        blacs_shape s = blacs_general(m, n, lda, #t "GEBS2D");                                 \
        bcast_shape(context, scope, top, &s, TYPE, (void *)a, 1, 0, 0, #t "GEBS2D");           \
    }                                                                                          \
    void C##t##gebr2d(int context, const char *scope, const char *top, int m, int n, T *a,     \
                      int lda, int rsrc, int csrc)                                             \
    {                                                                                          \
        blacs_shape s = blacs_general(m, n, lda, #t "GEBR2D");                                 \
        bcast_shape(context, scope, top, &s, TYPE, a, 0, rsrc, csrc, #t "GEBR2D");             \
    }                                                                                          \
    void C##t##trbs2d(int context, const char *scope, const char *top, const char *uplo,       \
                      const char *diag, int m, int n, const T *a, int lda)                     \
    {                                                                                          \
        blacs_shape s = blacs_trapezoid(uplo, diag, m, n, lda, #t "TRBS2D");                   \
        bcast_shape(context, scope, top, &s, TYPE, (void *)a, 1, 0, 0, #t "TRBS2D");           \
    }                                                                                          \
    void C##t##trbr2d(int context, const char *scope, const char *top, const char *uplo,       \
                      const char *diag, int m, int n, T *a, int lda, int rsrc, int csrc)       \
    {                                                                                          \
        blacs_shape s = blacs_trapezoid(uplo, diag, m, n, lda, #t "TRBR2D");                   \
        bcast_shape(context, scope, top, &s, TYPE, a, 0, rsrc, csrc, #t "TRBR2D");             \
    }                                                                                          \
    void C##t##gsum2d(int context, const char *scope, const char *top, int m, int n, T *a,     \
                      int lda, int rdest, int cdest)                                           \
    {                                                                                          \
        combine(context, scope, top, m, n, a, lda, TYPE, SUM, NULL, NULL, -1, rdest, cdest,    \
                #t "GSUM2D");                                                                  \
    }                                                                                          \
    void C##t##gamx2d(int context, const char *scope, const char *top, int m, int n, T *a,     \
                      int lda, int *ra, int *ca, int ldia, int rdest, int cdest)               \
    {                                                                                          \
        combine(context, scope, top, m, n, a, lda, TYPE, AMX, ra, ca, ldia, rdest, cdest,      \
                #t "GAMX2D");                                                                  \
    }                                                                                          \
    void C##t##gamn2d(int context, const char *scope, const char *top, int m, int n, T *a,     \
                      int lda, int *ra, int *ca, int ldia, int rdest, int cdest)               \
    {                                                                                          \
        combine(context, scope, top, m, n, a, lda, TYPE, AMN, ra, ca, ldia, rdest, cdest,      \
                #t "GAMN2D");                                                                  \
    }

BLACS_COLL(i, int, BLACS_I)
BLACS_COLL(s, float, BLACS_S)
BLACS_COLL(d, double, BLACS_D)
BLACS_COLL(c, void, BLACS_C)
BLACS_COLL(z, void, BLACS_Z)
