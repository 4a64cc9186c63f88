/* BLACS-FMPL point-to-point: xGESD2D / xGERV2D and xTRSD2D / xTRRV2D.
 *
 * One BLACS message is one FMPL indexed message on the grid's `all`
 * communicator, on index (k mod indices) for the k-th message between the
 * pair: the receive writes its header into the sender's slot, the sender
 * puts the data straight into the receive buffer (sender-side matching,
 * zero copy).  A block that is one run in memory (lda == m, or one column)
 * goes from and into the caller's matrix as it is; a strided block or a
 * trapezoid is packed into an FMPL-allocated buffer.
 *
 * BLACS sends are locally blocking: they return once the matrix may be
 * reused, whether or not the receive is posted.  FMPL's spool gives that
 * (the paper's buffer mode): with timeout 0 a send whose receive is not
 * posted yet is copied into the spool and delivered when it is.  A message
 * larger than the spool's free room waits for its receive instead (the
 * rendezvous of MPI's large messages). */
#include "blacs/blacs.h"

#include <stdio.h>
#include <stdlib.h>

#define BLACS_SPOOL_DEFAULT (64L << 20)

static int spool_ready;
static void *spool;

/* The spool, on the first send: FMPL_BLACS_SPOOL bytes (default 64 MiB;
 * pages are taken only when touched), timeout 0. */
static void spool_start(void)
{
    const char *env = getenv("FMPL_BLACS_SPOOL");
    long bytes = env ? strtol(env, NULL, 0) : BLACS_SPOOL_DEFAULT;
    if (bytes > 0) {
        spool = malloc((size_t)bytes);
        if (!spool)
            blacs_error("BLACS", "no memory for a %ld-byte send spool", bytes);
        blacs_check(fmpl_sendbuf_set(spool, bytes, 0), "BLACS", "fmpl_sendbuf_set");
    }
    spool_ready = 1;
}

void blacs_spool_release(void)
{
    if (!spool_ready)
        return;
    /* The spool was handed to FMPL: take it back (empty) before freeing. */
    blacs_check(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE), "BLACS_EXIT", "fmpl_sendbuf_set");
    free(spool);
    spool = NULL;
    spool_ready = 0;
}

void blacs_link_send(blacs_link *l, const void *buf, long bytes, int dest, const char *func)
{
    if (!spool_ready)
        spool_start();
    int index = (int)(l->sent[dest]++ % (uint32_t)l->indices);
    int rc = fmpl_send(buf, bytes, dest, index, l->comm);
    while (rc == FMPL_ERR_BUSY) {
        /* `indices` earlier messages to dest still wait in the spool for
         * their receives: deliver until one has gone, then send again. */
        int before, now;
        blacs_check(fmpl_sendbuf_check(NULL, &before), func, "fmpl_sendbuf_check");
        do
            blacs_check(fmpl_sendbuf_check(NULL, &now), func, "fmpl_sendbuf_check");
        while (now >= before && now > 0);
        rc = fmpl_send(buf, bytes, dest, index, l->comm);
    }
    if (rc == FMPL_ERR_SPOOL_FULL) { /* nothing was sent: wait for the receive */
        blacs_check(fmpl_isend(buf, bytes, dest, index, l->comm), func, "fmpl_isend");
        rc = fmpl_isend_wait(dest, index, l->comm);
    }
    blacs_check(rc, func, "fmpl_send");
}

void blacs_link_recv(blacs_link *l, void *buf, long bytes, int src, const char *func)
{
    int index = (int)(l->received[src]++ % (uint32_t)l->indices);
    fmpl_status st;
    blacs_check(fmpl_recv(buf, bytes, src, index, l->comm, &st), func, "fmpl_recv");
    if (st.size != bytes)
        blacs_error(func, "received %ld bytes from member %d, expected %ld", st.size, src,
                    bytes);
}

static int peer(const blacs_ctx *ctx, int r, int c, const char *func)
{
    if (r < 0 || r >= ctx->nprow || c < 0 || c >= ctx->npcol)
        blacs_error(func, "process {%d,%d} is outside the %d x %d grid", r, c, ctx->nprow,
                    ctx->npcol);
    return r * ctx->npcol + c;
}

static void send_shape(int context, const blacs_shape *s, blacs_type t, const void *a, int r,
                       int c, const char *func)
{
    blacs_ctx *ctx = blacs_context(context, func);
    int dest = peer(ctx, r, c, func);
    size_t esize = blacs_type_size[t];
    long bytes = blacs_shape_count(s) * (long)esize;
    if (blacs_shape_contiguous(s)) {
        blacs_link_send(&ctx->p2p, a, bytes, dest, func);
        return;
    }
    void *packed = blacs_scratch(0, (size_t)bytes);
    blacs_pack(s, esize, a, packed);
    blacs_link_send(&ctx->p2p, packed, bytes, dest, func);
}

static void recv_shape(int context, const blacs_shape *s, blacs_type t, void *a, int r, int c,
                       const char *func)
{
    blacs_ctx *ctx = blacs_context(context, func);
    int src = peer(ctx, r, c, func);
    size_t esize = blacs_type_size[t];
    long bytes = blacs_shape_count(s) * (long)esize;
    if (blacs_shape_contiguous(s)) {
        blacs_link_recv(&ctx->p2p, a, bytes, src, func);
        return;
    }
    void *packed = blacs_scratch(0, (size_t)bytes);
    blacs_link_recv(&ctx->p2p, packed, bytes, src, func);
    blacs_unpack(s, esize, packed, a);
}

#define BLACS_P2P(t, T, TYPE)                                                                  \
    void C##t##gesd2d(int context, int m, int n, const T *a, int lda, int rdest, int cdest)    \
    {                                                                                          \
        blacs_shape s = blacs_general(m, n, lda, #t "GESD2D");                                 \
        send_shape(context, &s, TYPE, a, rdest, cdest, #t "GESD2D");                           \
    }                                                                                          \
    void C##t##gerv2d(int context, int m, int n, T *a, int lda, int rsrc, int csrc)            \
    {                                                                                          \
        blacs_shape s = blacs_general(m, n, lda, #t "GERV2D");                                 \
        recv_shape(context, &s, TYPE, a, rsrc, csrc, #t "GERV2D");                             \
    }                                                                                          \
    void C##t##trsd2d(int context, const char *uplo, const char *diag, int m, int n,           \
                      const T *a, int lda, int rdest, int cdest)                               \
    {                                                                                          \
        blacs_shape s = blacs_trapezoid(uplo, diag, m, n, lda, #t "TRSD2D");                   \
        send_shape(context, &s, TYPE, a, rdest, cdest, #t "TRSD2D");                           \
    }                                                                                          \
    void C##t##trrv2d(int context, const char *uplo, const char *diag, int m, int n, T *a,     \
                      int lda, int rsrc, int csrc)                                             \
    {                                                                                          \
        blacs_shape s = blacs_trapezoid(uplo, diag, m, n, lda, #t "TRRV2D");                   \
        recv_shape(context, &s, TYPE, a, rsrc, csrc, #t "TRRV2D");                             \
    }

BLACS_P2P(i, int, BLACS_I)
BLACS_P2P(s, float, BLACS_S)
BLACS_P2P(d, double, BLACS_D)
BLACS_P2P(c, void, BLACS_C)
BLACS_P2P(z, void, BLACS_Z)
