/* BLACS-FMPL internals: contexts, system contexts, the element types and
 * the packing of strided and trapezoidal blocks.  The layer stands on
 * fmpl.h only (the MPI layer is reached for nothing but naming an MPI
 * communicator's native twin: fmpl_comm_from_mpi). */
#ifndef FMPL_BLACS_BLACS_H
#define FMPL_BLACS_BLACS_H

#include "fmpl.h"
#include "fmpl_blacs.h"

#include <stddef.h>
#include <stdint.h>

/* A channel of BLACS messages: on `comm`, the k-th message from one member
 * to another takes matching index k mod `indices`, so messages between a
 * pair are received in the order they were sent, and up to `indices` may
 * wait for their receive at once. */
typedef struct blacs_link {
    fmpl_comm comm;
    int indices;
    uint32_t *sent, *received; /* [members] messages to / from each member */
} blacs_link;

/* A process grid.  `all` ranks its members row-major (rank = prow * npcol +
 * pcol, BLACS's numbering: Cblacs_pnum); `row` and `col` are the members
 * of this process's row (ranked by column) and column (ranked by row): the
 * combines' communicators.  Point-to-point messages travel on `p2p` (a
 * link on `all`), broadcasts on links of their own per scope (bcast[0]
 * row, [1] column, [2] all): BLACS lets a scope's processes take
 * broadcasts from different roots, and broadcasts and combines, in
 * different orders, which a collective could not serve. */
/* BLACS_GET's and BLACS_SET's WHAT. */
enum {
    GET_SYSCONTEXT = 0,
    GET_MSGIDS = 1,
    GET_DEBUGLEVEL = 2,
    GET_BLACSCONTEXT = 10,
    GET_NR_BS = 11,
    GET_NB_BS = 12,
    GET_NR_CO = 13,
    GET_NB_CO = 14,
    GET_TOPSREPEAT = 15,
    GET_TOPSCOHRNT = 16
};

typedef struct blacs_ctx {
    int sys;                 /* the system context it was made from */
    int nprow, npcol, myrow, mycol;
    fmpl_comm all, row, col;
    blacs_link p2p, bcast[3];
    /* What BLACS_SET stored for GET_NR_BS .. GET_TOPSCOHRNT (index what -
     * GET_NR_BS), returned by BLACS_GET: they tune MPI's BLACS's own
     * topologies, which BLACS-FMPL does not have (FMPL picks its
     * algorithms), so they change nothing else. */
    int tuning[GET_TOPSCOHRNT - GET_NR_BS + 1];
} blacs_ctx;

/* Send (locally blocking) and receive `bytes` to / from member `peer` of
 * the link's communicator. */
void blacs_link_send(blacs_link *l, const void *buf, long bytes, int peer, const char *func);
void blacs_link_recv(blacs_link *l, void *buf, long bytes, int peer, const char *func);

/* Element types: BLACS's letters i s d c z. */
typedef enum { BLACS_I, BLACS_S, BLACS_D, BLACS_C, BLACS_Z } blacs_type;
extern const size_t blacs_type_size[5];

/* Started on first use (any call that needs FMPL): fmpl_init unless the
 * program started FMPL (either API) already. */
void blacs_start(void);
/* Cblacs_get; `fortran`: answer GET_SYSCONTEXT as the Fortran interface. */
void blacs_get(int context, int what, int *val, int fortran);
/* The context of a handle; a BLACS error (the job ends) if it is not one. */
blacs_ctx *blacs_context(int handle, const char *func);
/* Report a BLACS error on this process and end the job (BLACS's own
 * behaviour for illegal arguments). */
void blacs_error(const char *func, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
/* An FMPL call that must succeed. */
void blacs_check(int rc, const char *func, const char *what);

/* The communicator of a scope ("R", "C", "A"; case-insensitive) and this
 * process's rank in it; the rank there of grid position (r, c). */
fmpl_comm blacs_scope(const blacs_ctx *ctx, const char *scope, const char *func, char *which);
int blacs_scope_rank(const blacs_ctx *ctx, char which, int r, int c);
/* A topology argument: every BLACS topology is accepted (and ignored: FMPL
 * chooses the algorithm); anything else is a BLACS error. */
void blacs_topology(const char *top, const char *func);

/* Shapes.  A general m x n block with leading dimension lda, or a
 * trapezoid (uplo 'U' or 'L', diag 'U': the diagonal left out).  Element
 * (i, j) of an upper trapezoid is in when i <= j + max(m - n, 0), of a
 * lower one when i >= j - max(n - m, 0); with a unit diagonal the
 * inequality is strict.  count: the elements in the shape. */
typedef struct blacs_shape {
    int m, n, lda;
    char uplo; /* 'G' general, 'U' or 'L' */
    int unit;  /* trapezoid: the diagonal is left out */
} blacs_shape;
blacs_shape blacs_general(int m, int n, int lda, const char *func);
blacs_shape blacs_trapezoid(const char *uplo, const char *diag, int m, int n, int lda,
                            const char *func);
long blacs_shape_count(const blacs_shape *s);
/* The shape's elements are one run in memory (no packing needed). */
int blacs_shape_contiguous(const blacs_shape *s);
/* Copy the shape's elements between the matrix and a packed buffer. */
void blacs_pack(const blacs_shape *s, size_t esize, const void *a, void *packed);
void blacs_unpack(const blacs_shape *s, size_t esize, const void *packed, void *a);

/* A barrier over comm that keeps the spool delivering while it waits. */
void blacs_barrier_delivering(fmpl_comm comm, const char *func);

/* Give the send spool back to FMPL (Cblacs_exit; it must be empty). */
void blacs_spool_release(void);
/* Free the reduction operations of combines with locations (Cblacs_exit;
 * made again if BLACS is used after it). */
void blacs_coll_release(void);

/* Scratch buffers (0: packing, 1: the (value, rank) pairs of combines with
 * locations), from FMPL's shared heap, grown on demand and kept until
 * Cblacs_freebuff. */
void *blacs_scratch(int which, size_t bytes);
void blacs_scratch_free(void);

#endif
