/* fmpl.h — the native FMPL API.
 *
 * FMPL is message passing built on remote memory operations.  Point-to-point
 * messages are matched at the sender: a receive writes a header (where its
 * buffer is, how large it is) straight into a matching slot owned by the
 * sender; the send waits for that header and puts the payload directly into
 * the receive buffer.  There are no queues, no allocation and no search on
 * that path.
 *
 * Conventions
 *  - Every function returns FMPL_SUCCESS or an FMPL_ERR_* code; on error a
 *    one-line message naming the call and the problem is also written to
 *    standard error (set FMPL_ERRORS_QUIET=1 to silence it), and nothing has
 *    been sent, received or changed unless the code says otherwise
 *    (FMPL_ERR_TRUNCATE).  The exception is a failure inside fmpl_init after
 *    the ranks have started to connect (a launcher or shared-memory failure):
 *    no rank could continue alone, so it ends the job with the reason.
 *  - Progress: every call that takes a communicator (and fmpl_sendbuf_check)
 *    moves pending sends, spooled messages and staged receives along; no
 *    progress thread is needed, and none runs.
 *  - Sizes of point-to-point messages and broadcasts are in bytes; counts of
 *    reductions are in elements.  Sizes and counts are signed so that a
 *    negative value is reported (FMPL_ERR_SIZE) instead of wrapping.
 *  - A matching index ("mai" in the paper) plays the role of a tag.  It
 *    names one exclusive slot per (sender, receiver, communicator), one
 *    direction: index 3 from A to B and index 3 from B to A are different
 *    slots.  An index may not be reused in the same direction while an
 *    operation on it is outstanding (FMPL_ERR_BUSY).  Indices run from 0 to
 *    count-1, where count is the value given to fmpl_init.
 *  - Every `fmpl_status *` argument may be NULL.
 *  - Messages are contiguous bytes.  Buffers may be anywhere in the process;
 *    buffers obtained from fmpl_alloc are reached by the peer with plain
 *    loads and stores, others by a single kernel-assisted copy (Linux CMA)
 *    or, where that is refused, through shared staging buffers.  This holds
 *    for collectives too.
 *  - Not thread safe: call FMPL from one thread at a time.
 */
#ifndef FMPL_H
#define FMPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FMPL_VERSION_MAJOR 0
#define FMPL_VERSION_MINOR 1
#define FMPL_VERSION_PATCH 0
#define FMPL_VERSION_STRING "0.1.0"

/* Error codes. */
enum {
    FMPL_SUCCESS = 0,
    FMPL_ERR_ARG,                 /* invalid argument (NULL where a pointer is needed, ...) */
    FMPL_ERR_RANK,                /* rank outside the communicator */
    FMPL_ERR_COMM,                /* invalid or freed communicator */
    FMPL_ERR_INDEX,               /* matching index outside 0..count-1 */
    FMPL_ERR_SIZE,                /* negative size or count */
    FMPL_ERR_TRUNCATE,            /* message larger than the receive buffer; the
                                     buffer holds its first bytes, nothing past it */
    FMPL_ERR_BUSY,                /* the index (or spool) is still used by an outstanding operation */
    FMPL_ERR_NOT_PENDING,         /* a wait or test names no outstanding operation */
    FMPL_ERR_NOT_INITIALIZED,     /* called before fmpl_init */
    FMPL_ERR_FINALIZED,           /* called after fmpl_finalize */
    FMPL_ERR_ALREADY_INITIALIZED, /* fmpl_init called twice */
    FMPL_ERR_NO_MEMORY,           /* shared heap or staging exhausted */
    FMPL_ERR_SPOOL_FULL,          /* timed-out send does not fit in the spool */
    FMPL_ERR_OP,                  /* invalid reduction operation */
    FMPL_ERR_ROOT,                /* root outside the communicator */
    FMPL_ERR_UNSUPPORTED,         /* a valid request this build or machine cannot serve */
    FMPL_ERR_BOOTSTRAP,           /* launcher or process-manager failure */
    FMPL_ERR_INTERNAL,            /* a bug in FMPL: please report it */
    FMPL_ERR_LAST
};

/* A one-line description of an error code (never NULL). */
const char *fmpl_error_string(int code);

/* ---------------------------------------------------------------- setup */

typedef int fmpl_comm;
#define FMPL_COMM_WORLD 0
#define FMPL_COMM_NULL (-1)

#define FMPL_TAG_ANY (-1)          /* receive: match a send on any index */
#define FMPL_TIMEOUT_NONE (-1)     /* fmpl_sendbuf_set: never spool (synchronous) */
#define FMPL_KEY_NONE (-1)         /* fmpl_comm_create: do not join */
#define FMPL_DEFAULT_COUNT 64      /* matching slots per peer when count is 0 */

/* Start FMPL.  `count` is the number of matching slots per peer and
 * communicator (0 selects FMPL_DEFAULT_COUNT).  `ma` and `fa` are optional
 * caller-provided matching and completion-flag areas for FMPL_COMM_WORLD,
 * each of fmpl_area_size(count) bytes and 64-byte aligned; pass NULL for
 * both to let FMPL place them in shared memory (recommended: remote writes
 * into caller memory cost a system call each).  Either both or neither.
 * A program not started by a launcher runs as a single rank. */
int fmpl_init(void *ma, void *fa, int count);

/* Bytes each caller-provided area must have for `count` slots in this job. */
int fmpl_area_size(int count, size_t *bytes);

/* Finish.  Collective over all ranks (a barrier), then releases every
 * resource; outstanding operations are abandoned.  FMPL cannot be
 * initialised again afterwards (FMPL_ERR_FINALIZED). */
int fmpl_finalize(void);

/* End the whole job: every rank is terminated by the launcher, which reports
 * this rank, `code` and `message`.  Does not return. */
void fmpl_abort(int code, const char *message) __attribute__((noreturn));

/* The matching indices of `comm` (per peer): fmpl_init's count; see
 * below for communicators made by MPI. */
int fmpl_comm_indices(fmpl_comm comm, int *count);

/* Both APIs in one program (libmpi holds both): MPI_Init and fmpl_init
 * may be called in either order; the second joins the runtime the first
 * started, and the runtime ends at the last of MPI_Finalize and
 * fmpl_finalize.  When fmpl_init joins MPI_Init's runtime, ma and fa
 * must be NULL; FMPL_COMM_WORLD and MPI's communicators keep MPI's one
 * matching index, communicators created afterwards get `count` (every
 * rank must join with the same count), and no communicator has an
 * any-source ring (fmpl_send_any/fmpl_recv_any: FMPL_ERR_UNSUPPORTED).
 * fmpl_comm_from_mpi gives the native communicator of an
 * MPI intracommunicator (`mpi_comm` is an MPI_Comm: an int under the MPICH
 * ABI); both name the same group and ranks.  MPI_COMM_WORLD is
 * FMPL_COMM_WORLD even when MPI is not initialized; any other needs
 * MPI_Init (FMPL_ERR_COMM), and libfmpl, which has no MPI layer, answers
 * FMPL_ERR_UNSUPPORTED. */
int fmpl_comm_from_mpi(int mpi_comm, fmpl_comm *comm);

/* *flag: fmpl_init has been called (it stays 1 after fmpl_finalize). */
int fmpl_initialized(int *flag);
/* *flag: fmpl_finalize has been called. */
int fmpl_finalized(int *flag);

int fmpl_comm_rank(fmpl_comm comm, int *rank);
int fmpl_comm_size(fmpl_comm comm, int *size);

/* Collective over FMPL_COMM_WORLD.  Processes that pass the same key >= 0
 * form one new communicator, ranked in the order of their world ranks; a
 * process passing FMPL_KEY_NONE gets FMPL_COMM_NULL. */
int fmpl_comm_create(int key, fmpl_comm *comm);
/* Collective over `parent`: members passing the same color >= 0 form one
 * new communicator, ranked by key, then by rank in parent (MPI_Comm_split);
 * a member passing FMPL_KEY_NONE as color gets FMPL_COMM_NULL. */
int fmpl_comm_split(fmpl_comm parent, int color, int key, fmpl_comm *comm);
/* Collective over `comm`; sets *comm to FMPL_COMM_NULL.  FMPL_COMM_WORLD
 * cannot be freed (FMPL_ERR_COMM); a communicator with outstanding
 * operations, spooled sends included, is refused with FMPL_ERR_BUSY. */
int fmpl_comm_free(fmpl_comm *comm);

/* Memory in the shared heap: peers reach it with plain loads and stores, so
 * transfers into and out of it make no system call.  64-byte aligned.
 * Returns NULL when the heap is exhausted: each rank has FMPL_HEAP_SIZE
 * bytes (default 256 MiB, taken from memory only when touched), shared with
 * FMPL's own areas (about 1 MiB per communicator). */
void *fmpl_alloc(size_t size);
void fmpl_free(void *ptr);

/* Seconds since an arbitrary point, for timing (CLOCK_MONOTONIC through the
 * vDSO: nanosecond resolution, no system call, comparable across ranks of
 * one host). */
double fmpl_wtime(void);

/* ---------------------------------------------------------- point-to-point */

typedef struct fmpl_status {
    int source;   /* rank of the sender in the communicator */
    int index;    /* matching index the message was sent on */
    long size;    /* bytes delivered */
    int error;    /* FMPL_SUCCESS or FMPL_ERR_TRUNCATE */
} fmpl_status;

/* Blocking send of `size` bytes to `dst` on matching index `index`.  Returns
 * when `buf` may be reused: once the data is in the receive buffer (or, for a
 * private receive buffer reached through the staging ring, in the ring), or
 * (with a spool set) after the timeout, once the data is copied to the spool.
 * If the receive buffer is smaller than the message, its first bytes are
 * delivered and both sides get FMPL_ERR_TRUNCATE (a spooled message's sender
 * has already returned and does not learn of it). */
int fmpl_send(const void *buf, long size, int dst, int index, fmpl_comm comm);

/* Blocking receive into `buf` (capacity `size`) from `src` on `index`, or on
 * any index with FMPL_TAG_ANY.  Returns when the data is in place; bytes of
 * buf past the message are never written.  One FMPL_TAG_ANY receive per
 * (source, communicator) may be outstanding; it matches a send on any index,
 * with no ordering promise against receives naming the index (the paper's
 * rule).  A rank may send to itself. */
int fmpl_recv(void *buf, long size, int src, int index, fmpl_comm comm,
              fmpl_status *status);

/* Nonblocking forms.  fmpl_irecv writes its header to the sender at once and
 * returns; fmpl_isend returns at once and sends when the header is there.
 * Neither buffer may be touched until the matching wait returns (several
 * receives may target one buffer; its contents are then whichever arrived
 * last).  Operations
 * are named by (peer, index, comm); there are no request objects.  A pending
 * send progresses inside every FMPL call. */
int fmpl_isend(const void *buf, long size, int dst, int index, fmpl_comm comm);
int fmpl_irecv(void *buf, long size, int src, int index, fmpl_comm comm);
int fmpl_isend_wait(int dst, int index, fmpl_comm comm);
int fmpl_irecv_wait(int src, int index, fmpl_comm comm, fmpl_status *status);
/* Like the waits, but return at once; *flag is 1 when complete (the
 * operation is then finished and its index free), else 0. */
int fmpl_isend_test(int dst, int index, fmpl_comm comm, int *flag);
int fmpl_irecv_test(int src, int index, fmpl_comm comm, int *flag, fmpl_status *status);

/* One-copy spool.  After this call a blocking fmpl_send waits at least
 * `timeout_ms` milliseconds for the receiver's header; if it has not come,
 * the message is copied into the spool `buf` (`size` bytes, owned by FMPL
 * until replaced) and the send returns.  timeout 0: always spool when the
 * receive is not posted yet (buffered mode); FMPL_TIMEOUT_NONE (the default,
 * also before any call): never spool (synchronous mode).  Spooled messages go
 * out when their receive is posted, inside fmpl_sendbuf_check and every other
 * FMPL call; a spool obtained from fmpl_alloc (or a large malloc, which FMPL
 * places in the shared heap) also lets a receiver on the same host copy the
 * message itself while it waits, so a sender that computes after a spooled
 * send does not hold its receiver up (FMPL_TAG_ANY receives excepted).  If a timed-out message does not fit in the free part of the
 * spool, the send returns FMPL_ERR_SPOOL_FULL having sent nothing: post the
 * receives or call fmpl_sendbuf_check, and send again.  Each message takes
 * its size rounded up to 64 bytes plus a 64-byte record header; space is
 * reclaimed in order, and an empty spool starts over at its beginning.  A
 * spooled message keeps its index busy until it is delivered
 * (fmpl_isend_wait does not apply to it).  Replacing or removing (buf NULL,
 * size 0) the spool while it holds messages is FMPL_ERR_BUSY. */
int fmpl_sendbuf_set(void *buf, long size, int timeout_ms);

/* Send every spooled message whose receive is now posted.  *nsend: messages
 * this call found delivered: sent by it, or copied by their receivers since
 * this rank's previous FMPL call; *nspool: messages still waiting.  Either
 * may be NULL. */
int fmpl_sendbuf_check(int *nsend, int *nspool);

/* Any-source domain: separate from the indexed domain above (a message sent
 * with fmpl_send is never received by fmpl_recv_any, nor the reverse).
 * fmpl_recv_any takes the earliest-arrived message on `index` (or on any
 * index with FMPL_TAG_ANY) from any member of `comm`; status reports the
 * source, index and size; messages from all senders are taken in the order
 * they arrived.  Messages up to FMPL_ANY_EAGER_MAX bytes (default 8 KiB) are
 * buffered in the receiver's ring (FMPL_ANY_QUEUE_SIZE, default 256 KiB per
 * communicator) and fmpl_send_any returns once the message is there; when
 * the ring is full it waits for the receiver to take messages.  Larger
 * messages wait for the receiver's fmpl_recv_any, then move with a single
 * copy (synchronous). */
int fmpl_send_any(const void *buf, long size, int dst, int index, fmpl_comm comm);
int fmpl_recv_any(void *buf, long size, int index, fmpl_comm comm, fmpl_status *status);

/* ------------------------------------------------------------- collectives */

/* Reduction operations.  Built-ins, by BLACS type letter
 * (i: int, s: float, d: double, c: float complex, z: double complex):
 *   fmpl_Xsum  sum
 *   fmpl_Xmax  the element of largest absolute value (BLACS AMX); for the
 *              complex types the absolute value is |re| + |im|, as in BLACS
 *   fmpl_Xmin  the element of smallest absolute value (BLACS AMN)
 * Ties keep the value from the lower rank, so every rank gets the same bits. */
typedef struct fmpl_op fmpl_op;
extern const fmpl_op *const fmpl_isum, *const fmpl_imax, *const fmpl_imin;
extern const fmpl_op *const fmpl_ssum, *const fmpl_smax, *const fmpl_smin;
extern const fmpl_op *const fmpl_dsum, *const fmpl_dmax, *const fmpl_dmin;
extern const fmpl_op *const fmpl_csum, *const fmpl_cmax, *const fmpl_cmin;
extern const fmpl_op *const fmpl_zsum, *const fmpl_zmax, *const fmpl_zmin;

/* A user-defined operation: combine `count` elements of `in` into `inout`
 * (inout[i] = in[i] op inout[i]).  `in` holds the lower-ranked operand.
 * The function must be associative; FMPL applies it in rank order, but the
 * grouping of operands depends on the algorithm, so floating-point sums may
 * differ in the last bits between algorithms (never between ranks of one
 * call).  `in` and `inout` are at least 8-byte aligned. */
typedef void (*fmpl_user_fn)(const void *in, void *inout, long count, void *ctx);
int fmpl_op_create(fmpl_user_fn fn, size_t elem_size, void *ctx, fmpl_op **op);
int fmpl_op_free(fmpl_op **op);

/* Returns on every member only after all members have entered. */
int fmpl_barrier(fmpl_comm comm);

/* Broadcast `size` bytes from `root`'s buf to every member's buf. */
int fmpl_bcast(void *buf, long size, int root, fmpl_comm comm);

/* Reduce `count` elements of buf over all members with `op`; the result
 * replaces buf on root (reduce; other members' buf is then unspecified) or on
 * every member (allreduce).  `work` is caller workspace of the same size as
 * buf, used by the tree algorithms for incoming partial results. */
int fmpl_reduce(void *buf, long count, const fmpl_op *op, int root, fmpl_comm comm,
                void *work);
int fmpl_allreduce(void *buf, long count, const fmpl_op *op, fmpl_comm comm, void *work);

/* Nonblocking and persistent collectives: prepared schedules advanced by
 * every FMPL call (progress).  fmpl_ibarrier, fmpl_ibcast and
 * fmpl_iallreduce start at once; the *_init forms only prepare (buffers,
 * peers, messages) and each fmpl_coll_start runs one instance, allocating
 * nothing; every member starts its instances in the same order.  Buffers
 * may not be touched while an instance runs.  fmpl_iallreduce needs no
 * work area (the schedule owns one).  fmpl_coll_wait and fmpl_coll_test
 * (flag 1 when complete) release a nonblocking request (*req = NULL) and
 * leave a persistent one ready for the next start; fmpl_coll_free frees a
 * persistent request that is not running (FMPL_ERR_BUSY while it runs).
 * Collectives must be called in the same order on every member, the
 * *_init calls included. */
typedef struct fmpl_coll_req *fmpl_coll_req;
int fmpl_ibarrier(fmpl_comm comm, fmpl_coll_req *req);
int fmpl_ibcast(void *buf, long size, int root, fmpl_comm comm, fmpl_coll_req *req);
int fmpl_iallreduce(void *buf, long count, const fmpl_op *op, fmpl_comm comm,
                    fmpl_coll_req *req);
int fmpl_barrier_init(fmpl_comm comm, fmpl_coll_req *req);
int fmpl_bcast_init(void *buf, long size, int root, fmpl_comm comm, fmpl_coll_req *req);
int fmpl_allreduce_init(void *buf, long count, const fmpl_op *op, fmpl_comm comm,
                        fmpl_coll_req *req);
int fmpl_coll_start(fmpl_coll_req req);
int fmpl_coll_wait(fmpl_coll_req *req);
int fmpl_coll_test(fmpl_coll_req *req, int *flag);
int fmpl_coll_free(fmpl_coll_req *req);

/* ------------------------------------- symmetric memory and remote copies */

/* Symmetric memory: collective over `comm`; every member passes the same
 * size and gets the same address, so a pointer into the block names the
 * same bytes of every member's block (the target of the remote copies
 * below is one address for all ranks).  Blocks come from each rank's
 * symmetric arena (FMPL_SYMMETRIC_SIZE, default 128 MiB, taken from memory
 * only when touched), are 64-byte aligned and are not zeroed.  The same
 * sequence of allocations gives the same addresses; members that allocated
 * differently on other communicators in between still agree (the block
 * goes where it fits on all).  Returns NULL on every member, with a
 * message, when size is 0 or differs between members, or some member's
 * arena has no room.  Allocate over FMPL_COMM_WORLD first when several
 * communicators will use symmetric memory: the first allocation places
 * each member's arena at an address all members of that communicator
 * could map. */
void *fmpl_alloc_symmetric(size_t size, fmpl_comm comm);
/* Collective over `comm`, with the pointer fmpl_alloc_symmetric returned
 * (NULL on every member does nothing).  Waits until the copies this member
 * issued are delivered (fmpl_copy_sync) and every member has called it:
 * no copy lands in the block after it is freed anywhere.  FMPL_ERR_ARG:
 * members passed different pointers, or not a live block (nothing is
 * freed); or, as fmpl_copy_sync reports it, a copy this member forwarded
 * was refused at its source (the block is freed all the same). */
int fmpl_free_symmetric(void *ptr, fmpl_comm comm);

/* A notification at the rank whose memory a copy writes, applied once the
 * copy's data is all there (a rank that sees the word sees the data):
 *   FMPL_NOTIFY_NONE   nothing (a NULL fmpl_notify pointer means the same)
 *   FMPL_NOTIFY_SET    store `value` into *word
 *   FMPL_NOTIFY_COUNT  add 1 to *word (`value` is ignored); N copies
 *                      counting into one word add N, whatever their order
 * `word` is a 64-bit, 8-byte-aligned word in symmetric memory, named by its
 * address, which is the same on every rank.  With SET, prefer sequence
 * values (1, 2, 3, ... one per transfer, waited for with fmpl_wait_count)
 * to sense values (alternating 0/1, waited for with fmpl_wait_flag): with
 * sense values a sender that runs two transfers ahead of a receiver that
 * has not yet seen the first stores the value the receiver is waiting for
 * again, and the receiver takes the third transfer for the first (the
 * hazard of NICAM's cshift, seed 004 §5.3); a sequence value never comes
 * back, so waiting for "at least k" is never fooled and never stuck. */
enum { FMPL_NOTIFY_NONE = 0, FMPL_NOTIFY_SET = 1, FMPL_NOTIFY_COUNT = 2 };
typedef struct fmpl_notify {
    int kind;       /* FMPL_NOTIFY_* */
    uint64_t *word; /* symmetric address of the word at the notified rank */
    uint64_t value; /* SET: the value stored */
} fmpl_notify;

/* Copy `size` bytes from local `src` (any memory) to `dst` (a symmetric
 * address) at `dst_rank`, then apply `note` at dst_rank.  Returns when src
 * may be reused; the data is then placed, or on its way (over the
 * network), before the note.  size 0 with a note is a pure notification
 * (dst may then be NULL).  A rank may copy to itself. */
int fmpl_put_notify(const void *src, void *dst, size_t size, int dst_rank, fmpl_comm comm,
                    const fmpl_notify *note);
/* Copy `size` bytes from `src` (a symmetric address) at `src_rank` to
 * local `dst` (any memory), then apply `note` here, at the caller.  Returns
 * with the data in dst and the note applied. */
int fmpl_get_notify(void *dst, const void *src, size_t size, int src_rank, fmpl_comm comm,
                    const fmpl_notify *note);
/* Copy `size` bytes from `src` at `src_rank` to `dst` (a symmetric address)
 * at `dst_rank`, then apply `note` at dst_rank; neither need be the caller.
 * src_rank == caller: a put (src any local memory; as fmpl_put_notify).
 * Otherwise src is a symmetric address, and the request is forwarded to
 * src_rank, whose progress does the put and the note (NICAM's forwarding):
 * dst_rank == caller is a get, anything else a third-party copy.  A
 * forwarded copy returns at once; it is carried out when src_rank next
 * runs FMPL's progress: while it waits or tests in fmpl_wait_flag,
 * fmpl_wait_count, their test forms, fmpl_copy_sync, a collective or
 * fmpl_coll_wait/test (not in the waits of the indexed point-to-point
 * calls, which serve their own messages only), or at once by src_rank's
 * agent where it runs on the caller's host (FMPL_AGENT).  Its note, or
 * fmpl_copy_sync here, tells when it is done.  Checks at src_rank that
 * fail (a block freed there) are logged there and reported by the next
 * fmpl_copy_sync here. */
int fmpl_copy(int src_rank, const void *src, int dst_rank, void *dst, size_t size,
              fmpl_comm comm, const fmpl_notify *note);
/* Every copy this rank issued with fmpl_put_notify, fmpl_get_notify or
 * fmpl_copy to or from members of `comm` is delivered at its destination,
 * data and note (the remote-delivery point).  Not collective.
 * FMPL_ERR_ARG: some forwarded copy was refused at its source. */
int fmpl_copy_sync(fmpl_comm comm);

/* Wait until *flag == value (fmpl_wait_flag) or *counter >= count
 * (fmpl_wait_count): spin, then yield the core, progressing meanwhile (over
 * the network the remote writes that set the word land only while this
 * rank progresses).  Any 8-byte-aligned local word; notes write symmetric
 * ones. */
int fmpl_wait_flag(const uint64_t *flag, uint64_t value);
int fmpl_wait_count(const uint64_t *counter, uint64_t count);
/* The same without waiting: one progress pass unless the word is already
 * there, then *done is 1 when *flag == value (*counter >= count), else 0.
 * For a rank that has other work between polls (a sender running ahead
 * while it also receives); reading the word directly would not serve the
 * network's writes to it. */
int fmpl_test_flag(const uint64_t *flag, uint64_t value, int *done);
int fmpl_test_count(const uint64_t *counter, uint64_t count, int *done);
/* ---------------------------------------------------- active messages */

/* An active message names a handler by id (0..FMPL_AM_MAX_ID, the same
 * function on every rank), carries up to FMPL_AM_MAX_ARGS 64-bit argument
 * words and a payload of up to fmpl_am_max_payload() bytes, and runs that
 * handler at the target.
 *
 * Where handlers run: inside the target's progress engine, on the progress
 * agent thread when it is on, otherwise inside the calls that run the whole
 * engine: fmpl_am_poll, fmpl_am_send while it waits for room,
 * fmpl_barrier_test and fmpl_barrier_wait, the collectives (and the waits
 * and tests of the nonblocking ones), communicator creation.  The waits of
 * the indexed and any-source point-to-point domains poll their own protocol
 * only: a rank blocked in fmpl_recv runs no handler.
 * A handler is called with the arguments and payload still in the channel
 * (no copy): both are valid until it returns, 8-byte aligned; args is NULL
 * when nargs is 0 and payload NULL when size is 0.
 *
 * What a handler may call: fmpl_am_reply and fmpl_am_send (they never wait:
 * when the target's ring is full the message is queued here and sent by a
 * later progress pass), the remote-copy calls, fmpl_barrier_start and
 * fmpl_barrier_test (which then only reads the flag), fmpl_comm_rank,
 * fmpl_comm_size, fmpl_wtime.  It may not block or progress: no blocking
 * send or receive, no wait, no collective, no fmpl_am_poll or
 * fmpl_barrier_wait (those two return FMPL_ERR_UNSUPPORTED there), no
 * communicator creation or freeing.
 *
 * Order: messages from one rank to another run in the order they were sent
 * (on any communicator; queued ones included: a send waits behind the
 * messages still queued to the same target).  Nothing is promised between
 * different senders, nor against point-to-point messages.
 *
 * Flow control: each ordered pair of ranks has one ring of FMPL_CHANNEL_SIZE
 * bytes (default 128 KiB) at the target.  When it is full, fmpl_am_send
 * from the program waits, progressing everything (so this rank's own
 * handlers keep running and nothing deadlocks); from inside a handler it
 * queues the message locally (memory taken the first time a queue fills,
 * and kept) and returns.  Over the network a handler may still wait inside
 * the network layer for the target to serve a read of its ring's head, but
 * never re-enters progress.
 *
 * Every rank registers an id before any rank sends to it (register, then a
 * barrier).  A message for an id with no handler at the target ends the
 * job with a message naming the id and the sender.  A communicator is freed
 * only once its active messages have run. */
#define FMPL_AM_MAX_ID 255
#define FMPL_AM_MAX_ARGS 8

/* Who sent the message being handled; valid while the handler runs. */
typedef struct fmpl_am_token {
    int source;     /* the sender's rank in comm */
    fmpl_comm comm; /* the communicator it was sent on */
    int is_reply;   /* sent with fmpl_am_reply */
    int reserved;
} fmpl_am_token;

typedef void (*fmpl_am_handler)(const fmpl_am_token *token, const uint64_t *args, int nargs,
                                const void *payload, size_t size, void *ctx);

/* Install `handler` (with `ctx`, passed back to it) for `id`, replacing any
 * earlier one.  Not while messages for that id may arrive. */
int fmpl_am_register(int id, fmpl_am_handler handler, void *ctx);

/* Run handler `id` at `dst` (a rank of comm, itself included) with nargs
 * words of args and `size` bytes of payload (copied: both may be reused on
 * return).  Returns once the message is in the target's ring, or, inside a
 * handler, queued.  Errors: FMPL_ERR_ARG (id outside 0..FMPL_AM_MAX_ID,
 * nargs outside 0..FMPL_AM_MAX_ARGS, NULL args or payload with a nonzero
 * count), FMPL_ERR_SIZE (size above fmpl_am_max_payload()), FMPL_ERR_RANK,
 * FMPL_ERR_COMM. */
int fmpl_am_send(int dst, int id, const uint64_t *args, int nargs, const void *payload,
                 size_t size, fmpl_comm comm);

/* From inside a handler only: run handler `id` at the sender of the message
 * being handled (token->source on token->comm).  Never waits.  Errors as
 * fmpl_am_send; FMPL_ERR_ARG outside a handler or with a NULL token. */
int fmpl_am_reply(const fmpl_am_token *token, int id, const uint64_t *args, int nargs,
                  const void *payload, size_t size);

/* The largest payload of one active message: half a channel ring less the
 * record header and the argument words (65440 bytes with the default
 * FMPL_CHANNEL_SIZE of 128 KiB).  0 before fmpl_init. */
size_t fmpl_am_max_payload(void);

/* One pass of the progress engine, for programs that run handlers without
 * the agent: runs the handlers of every message that has arrived, sends
 * queued messages the targets now have room for, advances split-phase
 * barriers and every other outstanding operation.  *handled (may be NULL):
 * the handlers it ran.  FMPL_ERR_UNSUPPORTED inside a handler. */
int fmpl_am_poll(int *handled);

/* ------------------------------------------------ split-phase barriers */

/* A barrier in two halves (seed 004's NICAM barrier): fmpl_barrier_start
 * stores 0 in *flag and returns at once; once every member of comm has
 * started this instance, progress stores 1 in *flag (a release store: what
 * the members did before starting is visible to a reader that sees 1).
 * Instances on one communicator complete in the order they were started,
 * and instance k only after every member has started its k-th.  Up to
 * FMPL_BARRIER_SPLIT_MAX instances may be outstanding per communicator and
 * rank; one more is refused with FMPL_ERR_BUSY until the oldest completes.
 *
 * `flag` is any 8-byte aligned word of the caller's memory (for instance
 * the first word of a region to be freed once nobody can write into it any
 * more); it must stay valid until it holds 1.  The barrier advances inside
 * progress (the agent, or any FMPL call: fmpl_barrier_test makes one pass
 * when the flag is still 0).  Split-phase barriers are independent of
 * fmpl_barrier and of the nonblocking collectives.  Errors: FMPL_ERR_ARG
 * (NULL or misaligned flag), FMPL_ERR_COMM, FMPL_ERR_BUSY (too many
 * outstanding). */
#define FMPL_BARRIER_SPLIT_MAX 256
int fmpl_barrier_start(fmpl_comm comm, uint64_t *flag);
/* *done: the instance of `flag` is complete (*flag is 1).  A flag holding
 * neither 0 nor 1 is FMPL_ERR_ARG. */
int fmpl_barrier_test(uint64_t *flag, int *done);
/* Spin, then yield, progressing, until *flag is 1.  FMPL_ERR_UNSUPPORTED
 * inside an active-message handler. */
int fmpl_barrier_wait(uint64_t *flag);

#ifdef __cplusplus
}
#endif
#endif
