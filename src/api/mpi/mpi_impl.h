/* The MPI binding: internal objects, handles, error dispatch.
 *
 * The binding is thin: each MPI function checks its arguments, turns
 * handles into objects, and calls FMPL's core (teams, the tag-matched
 * protocol, the collective catalogue, the datatype engine).
 *
 * Handles follow the MPICH ABI: an int whose bits 31-30 say builtin (01) or
 * dynamic (10), bits 29-26 the object kind, the rest an index.  Predefined
 * handles keep MPICH's values; dynamic ones are 0x80000000 | kind << 26 |
 * index into that kind's table.
 *
 * Profiling interface: every function is defined as PMPI_<name> and MPI_<name>
 * is a weak alias of it; the binding calls PMPI_ names internally so that a
 * tool interposing MPI_ names sees only the application's calls. */
#ifndef FMPL_API_MPI_IMPL_H
#define FMPL_API_MPI_IMPL_H

#include <stdint.h>

#include "base/hidden.h"
#include "collectives/op.h"
#include "datatype/datatype.h"
#include "mpi.h"
#include "protocols/tag_match.h"
#include "protocols/team.h"
#include "progress/agent.h"

#define FMPL_MPI_WEAK(name) _Pragma(FMPL_MPI_STR(weak MPI_##name = PMPI_##name))
#define FMPL_MPI_STR(x) #x

enum {
    FMPL_HK_COMM = 0x1,
    FMPL_HK_GROUP = 0x2,
    FMPL_HK_DATATYPE = 0x3,
    FMPL_HK_ERRHANDLER = 0x5,
    FMPL_HK_OP = 0x6,
    FMPL_HK_INFO = 0x7,
    FMPL_HK_WIN = 0x8,
    FMPL_HK_KEYVAL = 0x9,
    FMPL_HK_REQUEST = 0xb,
    FMPL_HK_SESSION = 0xe, /* MPI_SESSION_NULL is 0x38000000 */
    FMPL_HK_FILE = 0xf,    /* an error handler's object kind only: MPI_File
                              handles are pointers (file.c) */
};

static inline int fmpl_handle_kind(int h) { return (int)(((unsigned)h >> 26) & 0xf); }
static inline int fmpl_handle_is_builtin(int h) { return ((unsigned)h >> 30) == 1; }
static inline int fmpl_handle_is_dynamic(int h) { return ((unsigned)h >> 30) == 2; }
static inline int fmpl_handle_index(int h) { return (int)((unsigned)h & 0x03ffffff); }
static inline int fmpl_handle_make(int kind, int index)
{
    return (int)(0x80000000u | ((unsigned)kind << 26) | (unsigned)index);
}

/* ------------------------------------------------------------ state */

enum { FMPL_MPI_NEW = 0, FMPL_MPI_READY, FMPL_MPI_DONE };
extern int fmpl_mpi_state;
extern int fmpl_mpi_thread_level;
/* The core shared by the world model and the sessions (init.c): each
 * MPI_Init and MPI_Session_init takes a reference (the first starts the
 * runtime; errors reported from func), each MPI_Finalize and
 * MPI_Session_finalize drops one (MPI_SUCCESS, or the teardown's error). */
int fmpl_mpi_core_start(int required, int *provided, const char *func);
int fmpl_mpi_core_stop(void);

/* ------------------------------------------------------------ communicators */

typedef struct fmpl_mpi_comm {
    int handle;
    fmpl_team *team;
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    int refs;                    /* the handle's, and one per pending operation that uses
                                    the teams (fmpl_mpi_comm_hold) */
    /* objects layer (mpi_objects.h); zero in a new communicator */
    struct fmpl_mpi_attr *attrs; /* cached attributes, newest first (attr.c) */
    MPI_Info info;               /* hints of MPI_Comm_set_info (0: none) */
    struct fmpl_mpi_inter *inter; /* intercommunicators only (intercomm.h); team is then
                                     a view whose peers are the remote group */
    struct fmpl_mpi_topo *topo;   /* process topology (topo.h), NULL if none */
    struct fmpl_mpi_part_comm *part; /* partitioned communication (partitioned.c): init
                                        counters, library tags, HELLOs; NULL until used */
    struct fmpl_bsend_pool *bsend;   /* MPI_Comm_attach_buffer's (bsend_pool.h), or NULL */
    MPI_Session session;             /* the session it derives from, 0 if none (world
                                        model): its buffer serves buffered sends */
} fmpl_mpi_comm;

fmpl_mpi_comm *fmpl_mpi_comm_get(MPI_Comm c);   /* NULL if invalid */
int fmpl_mpi_comm_register(fmpl_team *t, MPI_Comm *handle);
void fmpl_mpi_comm_release(fmpl_mpi_comm *c);
/* MPI_Comm_free only drops the handle: a nonblocking or persistent
 * collective, or a neighbourhood plan, still using the communicator keeps
 * its teams (an intercommunicator's view and hidden teams too) until it is
 * done (MPI-4.0 7.4.3: pending operations complete normally).  The last
 * unhold retires them and frees the object (comm.c). */
void fmpl_mpi_comm_hold(fmpl_mpi_comm *c);
void fmpl_mpi_comm_unhold(fmpl_mpi_comm *c);
/* The handle no longer names c (the object itself stays). */
void fmpl_mpi_comm_unregister(fmpl_mpi_comm *c);
/* Release c->part (partitioned.c) when the object goes (no request holds it
 * then) or at MPI_Finalize. */
void fmpl_mpi_part_comm_free(fmpl_mpi_comm *c);
int fmpl_mpi_comms_init(void);
void fmpl_mpi_comms_finalize(void);

/* ------------------------------------------------------------ windows */

/* An MPI window (win.c, win_sync.c, win_ops.c) on the one-sided layer
 * (src/rma).  The window keeps a duplicate of its communicator for the
 * collective steps (creation, fence, free) and the access epochs it has
 * open, so that every operation outside one is MPI_ERR_RMA_SYNC. */
enum { FMPL_WIN_LOCK_NONE = 0, FMPL_WIN_LOCK_SHARED, FMPL_WIN_LOCK_EXCL };

typedef struct fmpl_mpi_win {
    int handle;
    MPI_Comm comm;               /* private duplicate of the creating communicator */
    fmpl_team *team;             /* its team */
    struct fmpl_rma_win *rma;
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    struct fmpl_mpi_attr *attrs; /* attr.c */
    MPI_Info info;               /* hints given at creation / Win_set_info (0: none) */
    int flavor;                  /* MPI_WIN_FLAVOR_* */
    int model;                   /* MPI_WIN_UNIFIED */
    void *base;
    MPI_Aint size;
    int disp_unit;
    void *owned;                 /* memory the window allocated (freed with it) */
    int owned_heap;              /* owned is in the shared heap (else malloc) */
    struct fmpl_mpi_win_region *regions; /* dynamic: attached memory */
    /* epochs (win_sync.c) */
    int fence;                   /* after a fence without MPI_MODE_NOSUCCEED */
    int lock_all;                /* inside Win_lock_all */
    int nlocks;                  /* targets locked by Win_lock */
    unsigned char *locks;        /* [size] FMPL_WIN_LOCK_* per target */
    int *access;                 /* PSCW access group (members), NULL: none */
    int naccess;
    int nexpose;                 /* PSCW exposure group size, -1: none */
} fmpl_mpi_win;

fmpl_mpi_win *fmpl_mpi_win_get(MPI_Win w); /* NULL if invalid */
void fmpl_mpi_wins_finalize(void);

/* ------------------------------------------------------------ data of a transfer */

/* One side of a transfer: `count` elements of a datatype at `user`
 * (fmpl_mpi_buf_describe).  A contiguous type (every predefined one, and
 * derived ones whose fmpl_dt_is_contiguous holds) is just bytes:
 * data = user + true_lb, type = NULL, and nothing else is needed.  A
 * non-contiguous one moves as its packed stream of `bytes` bytes through a
 * staging buffer (dt_staging.c): fmpl_mpi_buf_stage sets data to the
 * staging buffer (packing the user's data into it for a send), and
 * fmpl_mpi_buf_unstage unpacks what was received and gives it back. */
typedef struct fmpl_mpi_buf {
    void *user;                 /* the caller's buffer (NULL: MPI_BOTTOM) */
    MPI_Aint count;
    MPI_Aint bytes;             /* count * size: the bytes on the wire */
    fmpl_datatype *type;        /* non-contiguous: the engine's type; NULL: contiguous */
    void *data;                 /* where the bytes are: user + true_lb, or the staging
                                   buffer while staged (NULL before) */
} fmpl_mpi_buf;

/* Describe (buf, count, t) for communication: MPI_SUCCESS, or MPI_ERR_TYPE
 * (invalid, uncommitted) / MPI_ERR_BUFFER (NULL buffer while the data
 * would start at address 0; a NULL buffer with a non-zero true_lb is
 * MPI_BOTTOM with absolute addresses; checked when null_is_error, as the
 * point-to-point calls do) reported on comm from func.
 * Predefined types take a fast path that does not touch the engine. */
int fmpl_mpi_buf_describe_slow(MPI_Comm comm, const char *func, const void *buf,
                               MPI_Aint count, MPI_Datatype t, int null_is_error,
                               fmpl_mpi_buf *b);
int fmpl_mpi_is_predefined_type(MPI_Datatype t); /* basic_type_map.c, see below */
static inline int fmpl_mpi_buf_describe(MPI_Comm comm, const char *func, const void *buf,
                                        MPI_Aint count, MPI_Datatype t, int null_is_error,
                                        fmpl_mpi_buf *b)
{
    /* The basic predefined types (MPICH handles 0x4c00ssxx: size in bits
     * 8-15) decide here, without the engine: every message comes this way. */
    if (__builtin_expect(((unsigned)t & 0xff000000u) == 0x4c000000u, 1) &&
        fmpl_mpi_is_predefined_type(t) && (buf || !null_is_error || count == 0)) {
        b->user = b->data = (void *)buf;
        b->count = count;
        b->bytes = count * (MPI_Aint)(((unsigned)t >> 8) & 0xff);
        b->type = NULL;
        return MPI_SUCCESS;
    }
    return fmpl_mpi_buf_describe_slow(comm, func, buf, count, t, null_is_error, b);
}
/* Non-contiguous: take a staging buffer for b->bytes (pack the user's data
 * into it when `pack`); MPI_SUCCESS or MPI_ERR_NO_MEM (not reported).
 * Contiguous: nothing. */
int fmpl_mpi_buf_stage_slow(fmpl_mpi_buf *b, int pack);
static inline int fmpl_mpi_buf_stage(fmpl_mpi_buf *b, int pack)
{
    return b->type ? fmpl_mpi_buf_stage_slow(b, pack) : MPI_SUCCESS;
}
/* Non-contiguous and staged: unpack the first `received` bytes (at most
 * b->bytes; <= 0: none) into the user's buffer, return the staging buffer. */
void fmpl_mpi_buf_unstage_slow(fmpl_mpi_buf *b, MPI_Aint received);
static inline void fmpl_mpi_buf_unstage(fmpl_mpi_buf *b, MPI_Aint received)
{
    if (b->type)
        fmpl_mpi_buf_unstage_slow(b, received);
}
/* The data's bytes (the packed stream of a non-contiguous type) copied to
 * dst, which holds b->bytes; and `bytes` (at most b->bytes) of them copied
 * from src into the user's buffer.  The staging above, and the private
 * copies of the replace calls (replace.c, isendrecv.c). */
void fmpl_mpi_buf_pack_to(const fmpl_mpi_buf *b, void *dst);
void fmpl_mpi_buf_unpack_from(const fmpl_mpi_buf *b, const void *src, MPI_Aint bytes);

/* The staging pool (dt_staging.c): FMPL_MPI_STAGE_SLOTS buffers of
 * FMPL_MPI_STAGE_SLOT bytes from the shared heap, allocated at first use;
 * larger requests and requests while all are taken use malloc.  get
 * returns NULL only when malloc fails; put takes either kind (NULL: no-op). */
#define FMPL_MPI_STAGE_SLOTS 8
#define FMPL_MPI_STAGE_SLOT (64 * 1024)
void *fmpl_mpi_stage_get(size_t bytes);
void fmpl_mpi_stage_put(void *p);
int fmpl_mpi_stage_pool_free_slots(void);
void fmpl_mpi_stage_finalize(void);   /* MPI_Finalize, after the requests' */

/* ------------------------------------------------------------ requests */

enum {
    FMPL_MREQ_FREE = 0,
    FMPL_MREQ_SEND,
    FMPL_MREQ_RECV,
    FMPL_MREQ_DONE,    /* complete on creation (MPI_PROC_NULL, errors) */
    FMPL_MREQ_MESSAGE, /* an MPI_Message (mprobe.c): not a request */
    FMPL_MREQ_ASYNC,   /* driven by a progress function (request_async.c) */
};

/* r->mode of a persistent send (persistent.c): FMPL_TM_MODE_STANDARD,
 * FMPL_TM_MODE_SYNC, or this one (copied into the attached buffer). */
#define FMPL_MPI_MODE_BUFFERED 0x100

/* r->partitioned: a partitioned request (partitioned.c), a persistent
 * FMPL_MREQ_ASYNC one; Pready takes only sends, Parrived only receives. */
enum { FMPL_MPI_PART_SEND = 1, FMPL_MPI_PART_RECV };

typedef struct fmpl_mpi_request {
    fmpl_tm_req tm;
    int handle;
    int kind;
    int persistent;      /* created by *_init: survives completion */
    int active;          /* persistent: started and not yet completed */
    int proc_null;       /* completes with an empty status */
    int error;           /* an MPI error code found when it was started */
    int freed;           /* MPI_Request_free on an active request */
    int partitioned;     /* FMPL_MPI_PART_SEND / _RECV (partitioned.c), else 0 */
    /* the call's arguments, for persistent starts and unpacking */
    MPI_Comm comm;
    fmpl_mpi_buf buf;    /* the data; a non-contiguous type is referenced while
                            the request holds it (fmpl_mpi_request_hold) */
    int peer, tag, mode;
    fmpl_tm_unexp *msg;  /* FMPL_MREQ_MESSAGE: the dequeued message */
    /* FMPL_MREQ_ASYNC: the operation, NULL once complete; its completion
     * step and that step's state (fmpl_mpi_async_request_start) */
    struct fmpl_async *async;
    int (*async_complete)(struct fmpl_mpi_request *r);
    void *async_state;
    /* persistent FMPL_MREQ_ASYNC (fmpl_mpi_async_request_persistent): each
     * MPI_Start runs restart, which starts the operation again and gives
     * its fmpl_async; MPI_Request_free (and MPI_Finalize) runs release.
     * Its error (a generalised request's free_fn's) is the freeing call's. */
    int (*async_restart)(struct fmpl_mpi_request *r, const char *func, struct fmpl_async **a);
    int (*async_release)(struct fmpl_mpi_request *r);
    /* MPI_Cancel of an FMPL_MREQ_ASYNC request (generalised requests,
     * MPI_Isendrecv), NULL: nothing to cancel; its error is MPI_Cancel's */
    int (*async_cancel)(struct fmpl_mpi_request *r);
    /* MPI_Request_free may free it while pending (point-to-point and
     * generalised requests; not collective operations, MPI 6.12) */
    int async_freeable;
    /* set by `complete` when the operation has a status of its own
     * (MPI_Isendrecv: the receive's; generalised requests: query_fn's);
     * otherwise an ASYNC request's status is empty */
    int async_has_status;
    MPI_Status async_status;
    struct fmpl_mpi_request *next_free;
} fmpl_mpi_request;

fmpl_mpi_request *fmpl_mpi_request_new(void);     /* from the pool */
/* Back to the pool: unstages (a complete, uncancelled receive unpacks
 * first) and drops the request's datatype reference.  Returns the error of
 * its release step (a generalised request's free_fn), else MPI_SUCCESS. */
int fmpl_mpi_request_free(fmpl_mpi_request *r);
/* Keep b in the request, with a reference on a non-contiguous type so that
 * MPI_Type_free before completion is harmless. */
static inline void fmpl_mpi_request_hold(fmpl_mpi_request *r, const fmpl_mpi_buf *b)
{
    r->buf = *b;
    if (b->type)
        fmpl_dt_ref(b->type);
}
/* Completion of the data: a receive unpacks what arrived (unless
 * cancelled); the staging buffer goes back.  Idempotent; contiguous data
 * costs one test. */
void fmpl_mpi_request_unstage_slow(fmpl_mpi_request *r);
static inline void fmpl_mpi_request_unstage(fmpl_mpi_request *r)
{
    if (r->buf.type)
        fmpl_mpi_request_unstage_slow(r);
}
/* Return the requests freed while active (MPI_Request_free) that have
 * completed to the pool; a non-contiguous receive among them unpacks its
 * data then.  Runs when a request is created or completed and after a
 * blocking receive, so such data lands before anything the caller could
 * learn of its completion from. */
extern fmpl_mpi_request *fmpl_mpi_req_freed_active;
void fmpl_mpi_requests_reap_slow(void);
static inline void fmpl_mpi_requests_reap(void)
{
    if (__builtin_expect(fmpl_mpi_req_freed_active != NULL, 0))
        fmpl_mpi_requests_reap_slow();
}
/* MPI_Finalize: release what requests still hold. */
void fmpl_mpi_requests_finalize(void);
/* MPI_Request_free on an active request: back to the pool once the
 * protocol has completed it (its fmpl_tm_req stays put until then). */
void fmpl_mpi_request_free_when_done(fmpl_mpi_request *r);
fmpl_mpi_request *fmpl_mpi_request_get(MPI_Request h); /* NULL if invalid */
/* Messages (MPI_Mprobe) are pool objects of kind FMPL_MREQ_MESSAGE: they
 * share the handle kind 0xb with requests, as in MPICH, and each lookup
 * accepts only its own. */
fmpl_mpi_request *fmpl_mpi_message_get(MPI_Message h); /* NULL if invalid */
/* Is it complete now (progressing once)? */
int fmpl_mpi_request_test(fmpl_mpi_request *r);
/* Fill the status, release a non-persistent request, return its error. */
int fmpl_mpi_request_finish(fmpl_mpi_request *r, MPI_Request *handle, MPI_Status *status);
/* The status of a complete request, changing nothing; returns its error. */
int fmpl_mpi_request_status(const fmpl_mpi_request *r, MPI_Status *status);
void fmpl_mpi_status_set(MPI_Status *s, int source, int tag, MPI_Count bytes,
                         int cancelled);
void fmpl_mpi_status_empty(MPI_Status *s);
MPI_Count fmpl_mpi_status_bytes(const MPI_Status *s);   /* status.c */

/* Requests driven by a progress function (request_async.c).  An operation
 * of several steps (nonblocking communicator creation; the nonblocking
 * collectives) is a state machine embedding an fmpl_async
 * (progress/async.h): every progress call of every wait polls it, so it
 * advances while this process is blocked in anything else.  The request
 * (kind FMPL_MREQ_ASYNC) points at it; the first Wait/Test that finds it
 * done runs `complete` once, in the caller's context (it may run user
 * callbacks, e.g. attribute copy functions, and must release the state),
 * and the value `complete` returns is the request's error; the status is
 * empty.  MPI_Request_free of a pending one is refused (the completion
 * step would have no caller); MPI_Cancel does nothing. */
void fmpl_mpi_async_request_start(fmpl_mpi_request *r, MPI_Comm comm, struct fmpl_async *a,
                                  int (*complete)(fmpl_mpi_request *r), void *state);
/* A persistent request on a state machine (persistent collectives): made
 * inactive here; MPI_Start calls restart (fmpl_mpi_async_request_restart),
 * each completion runs `complete` (which keeps the state: it is the next
 * start's), MPI_Request_free of an inactive one runs release.  Freeing an
 * active one is MPI_ERR_REQUEST. */
void fmpl_mpi_async_request_persistent(fmpl_mpi_request *r, MPI_Comm comm, void *state,
                                       int (*complete)(fmpl_mpi_request *r),
                                       int (*restart)(fmpl_mpi_request *r, const char *func,
                                                      struct fmpl_async **a),
                                       int (*release)(fmpl_mpi_request *r));
/* MPI_Start of such a request: MPI_SUCCESS (active) or restart's error. */
int fmpl_mpi_async_request_restart(fmpl_mpi_request *r, const char *func);
/* fmpl_mpi_request_test of an FMPL_MREQ_ASYNC request. */
int fmpl_mpi_async_request_test(fmpl_mpi_request *r);
/* A request of its own around *request, a request an MPI call has just
 * returned (request_wrap.c): it completes with the inner one, with its
 * status and error, and runs the hooks in the program's thread: `start`
 * before each MPI_Start (persistent), `complete` after each completion,
 * `release` when the request goes (after `complete` unless persistent;
 * MPI_Request_free of an inactive persistent one).  Each gets the state:
 * state_size zeroed bytes, returned here for the caller to fill, freed with
 * the request.  *request becomes the new handle.  NULL: no memory; the
 * operation was ended here then (waited for; a persistent request, not
 * started yet, freed) and *request is MPI_REQUEST_NULL (or *request was
 * not a request at all, and is left alone). */
typedef struct fmpl_mpi_request_hooks {
    void (*start)(void *state);
    void (*complete)(void *state);
    void (*release)(void *state);
} fmpl_mpi_request_hooks;
void *fmpl_mpi_request_wrap(MPI_Request *request, const fmpl_mpi_request_hooks *hooks,
                            size_t state_size);
/* Persistent collectives (coll_nbc.c): an FMPL_MREQ_ASYNC request with
 * `persistent` set keeps its schedule in async_state.  Start restarts it;
 * release frees it unless an instance is still running (then 0). */
int fmpl_mpi_nbc_start(fmpl_mpi_request *r);
int fmpl_mpi_nbc_release(fmpl_mpi_request *r);
/* While a nonblocking or persistent collective is being built from its
 * blocking body: the name its errors are reported under. */
extern FMPL_TLS const char *fmpl_mpi_nbc_func;

/* ------------------------------------------------------------ point-to-point helpers */

/* pt2pt.c's argument checks (communicator, count, datatype, peer, tag,
 * buffer), reporting through the error handler; *b describes the data
 * (not staged). */
int fmpl_mpi_p2p_check(const char *func, MPI_Comm comm, const void *buf, MPI_Aint count,
                       MPI_Datatype type, int peer, int tag, int is_recv, fmpl_mpi_comm **c,
                       fmpl_mpi_buf *b);
/* The replace calls (MPI_Sendrecv_replace: replace.c, MPI_Isendrecv_replace:
 * isendrecv.c): both directions of their one buffer checked, the send's
 * first; *b describes it. */
int fmpl_mpi_replace_check(const char *func, MPI_Comm comm, void *buf, MPI_Aint count,
                           MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                           fmpl_mpi_comm **c, fmpl_mpi_buf *b);
/* Declares c and b, checked; returns the error of a failed check. */
#define FMPL_MPI_REPLACE_BEGIN(func, comm, buf, count, type, dest, sendtag, source, recvtag, \
                               c, b)                                                     \
    fmpl_mpi_comm *c;                                                                    \
    fmpl_mpi_buf b;                                                                      \
    do {                                                                                 \
        int rc_ = fmpl_mpi_replace_check((func), (comm), (buf), (count), (type), (dest),  \
                                         (sendtag), (source), (recvtag), &c, &b);        \
        if (rc_ != MPI_SUCCESS)                                                          \
            return rc_;                                                                  \
    } while (0)
/* A replace call's int and large-count (_c) bindings, on
 * impl(func, buf, count, type, dest, sendtag, source, recvtag, comm, last). */
#define FMPL_MPI_REPLACE_FORMS(Name, impl, Last)                                          \
    int PMPI_##Name(void *buf, int count, MPI_Datatype type, int dest, int sendtag,         \
                    int source, int recvtag, MPI_Comm comm, Last last)                      \
    { FMPL_CORE_GUARD();                                                                                      \
        return impl("MPI_" #Name, buf, count, type, dest, sendtag, source, recvtag, comm,   \
                    last);                                                                 \
    }                                                                                      \
    FMPL_MPI_WEAK(Name)                                                                    \
    int PMPI_##Name##_c(void *buf, MPI_Count count, MPI_Datatype type, int dest,            \
                        int sendtag, int source, int recvtag, MPI_Comm comm, Last last)     \
    { FMPL_CORE_GUARD();                                                                                      \
        return impl("MPI_" #Name "_c", buf, count, type, dest, sendtag, source, recvtag,    \
                    comm, last);                                                           \
    }                                                                                      \
    FMPL_MPI_WEAK(Name##_c)
/* Buffered send (bsend.c): copy (or pack) b's data into the buffer that
 * serves `comm` (its own, its session's or the process's) and send from
 * there to `dest` (not MPI_PROC_NULL); MPI_SUCCESS, or MPI_ERR_BUFFER
 * reported through the error handler of `comm`. */
int fmpl_mpi_bsend_start(const char *func, MPI_Comm comm, fmpl_team *team,
                         const fmpl_mpi_buf *b, int dest, int tag);
/* MPI_Finalize: deliver what every attached buffer still holds, detach
 * them all (bsend_pool.c). */
void fmpl_mpi_bsend_finalize(void);

/* ============================================================ datatypes
 * The MPI datatype chapter on the datatype engine (src/datatype): handles
 * and constructors in datatype.c, the layout queries of the communication
 * layers in datatype_layout.c, predefined handles in basic_type_map.c,
 * MPI_Pack/Unpack/external32 in pack.c, type attributes in type_attr.c,
 * MPI_Get_elements in type_elements.c; staging for non-contiguous data in
 * dt_staging.c (above: fmpl_mpi_buf) and coll_stage.c. */

/* The engine object behind a handle: predefined handles -> the static
 * fmpl_dt_basic() objects, MPI_LB / MPI_UB -> the bound markers, derived
 * handles -> the datatype table.  NULL for MPI_DATATYPE_NULL, a freed or
 * otherwise invalid handle.  The handle keeps its reference: the caller
 * takes one (fmpl_dt_ref) only to keep the object beyond MPI_Type_free. */
fmpl_datatype *fmpl_mpi_datatype_get(MPI_Datatype t);

/* Keep a derived type's handle valid past MPI_Type_free until as many
 * unholds (a pending collective's user reduction function is called with
 * the handle).  Nothing for predefined or invalid handles. */
void fmpl_mpi_type_hold(MPI_Datatype t);
void fmpl_mpi_type_unhold(MPI_Datatype t);

/* What the point-to-point and collective layers need of a datatype:
 *   *size        bytes of data of one element (MPI_Type_size), which is
 *                also its share of the packed stream; the pair types with
 *                padding (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT,
 *                MPI_LONG_DOUBLE_INT) count value and int only, so they are
 *                not contiguous (reductions, which work on the C structs,
 *                take their element size from op.c instead);
 *   *contiguous  1 when `count` elements are exactly the bytes
 *                [buf + offset, buf + offset + count * size), in the order
 *                of the packed stream, so that moving them is one memcpy;
 *                offset is fmpl_mpi_type_offset (true_lb: 0 for every
 *                predefined type, possibly non-zero for derived ones, e.g.
 *                MPI_Type_create_resized or an indexed type starting at a
 *                non-zero displacement).  0 otherwise: move the data with
 *                the engine (fmpl_mpi_datatype_get, fmpl_dt_pack /
 *                fmpl_dt_unpack / fmpl_dt_cursor_*, fmpl_dt_copy).
 * MPI_SUCCESS, or MPI_ERR_TYPE (nothing reported) for an invalid handle or
 * an uncommitted derived type: fmpl_mpi_type_check reports either with a
 * message. */
int fmpl_mpi_type_layout(MPI_Datatype t, MPI_Aint *size, int *contiguous);
/* *true_lb of the type (where the data of a contiguous type begins,
 * relative to the buffer); MPI_SUCCESS or MPI_ERR_TYPE. */
int fmpl_mpi_type_offset(MPI_Datatype t, MPI_Aint *true_lb);
/* MPI_SUCCESS if t may be used in communication (valid, committed),
 * else report MPI_ERR_TYPE on comm from function `func` with a message
 * saying why (invalid handle, MPI_DATATYPE_NULL, not committed). */
int fmpl_mpi_type_check(MPI_Comm comm, MPI_Datatype t, const char *func);

/* The basic element type of a predefined datatype (fmpl_basic_type), or
 * FMPL_BT_NONE (derived types, MPI_LB/MPI_UB, invalid handles). */
int fmpl_mpi_basic_type(MPI_Datatype t);
/* 1 for a predefined datatype handle (MPI_LB and MPI_UB included). */
int fmpl_mpi_is_predefined_type(MPI_Datatype t);
/* A type made by MPI_Type_create_f90_real/complex/integer (type_f90.c):
 * 1 with its combiner and integer parameters (1 or 2 of them), else 0. */
int fmpl_mpi_type_f90_params(MPI_Datatype t, int *combiner, int ints[2], int *nints);
/* The table of builtin handles behind both (basic_type_map.c), indexed
 * by the handle's low byte. */
typedef struct fmpl_mpi_builtin_entry {
    MPI_Datatype handle;
    int bt; /* fmpl_basic_type */
} fmpl_mpi_builtin_entry;
extern const fmpl_mpi_builtin_entry fmpl_mpi_builtin[256];
/* The size of a builtin datatype, whose handle (0x4c00SSII) carries it:
 * SS contiguous bytes at offset 0, extent SS.  Every predefined type but
 * the pair types MPI_FLOAT_INT ...; 0 for MPI_LB / MPI_UB; -1 for every
 * other handle (pair, derived, invalid).  One load and one comparison:
 * for the fast paths. */
static inline int fmpl_mpi_builtin_size(MPI_Datatype t)
{
    unsigned u = (unsigned)t;
    if ((u & 0xff000000u) != 0x4c000000u || fmpl_mpi_builtin[u & 0xffu].handle != t)
        return -1;
    return (int)((u >> 8) & 0xffu);
}
/* The predefined handle of a basic type, MPI_DATATYPE_NULL if none. */
MPI_Datatype fmpl_mpi_basic_handle(int bt);

/* Type attributes (type_attr.c; kept apart from the communicator
 * attributes).  fmpl_mpi_type_attr_list gives the head of a type's
 * attribute list (NULL for an invalid handle): predefined types may carry
 * attributes too.  On MPI_Type_dup, copy_all runs the copy callbacks from
 * oldtype into newtype's (empty) list; on MPI_Type_free, delete_all runs
 * the delete callbacks and empties the list.  Both return MPI_SUCCESS or
 * the first callback's error code. */
struct fmpl_mpi_type_attr;
struct fmpl_mpi_type_attr **fmpl_mpi_type_attr_list(MPI_Datatype t);
int fmpl_mpi_type_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype);
int fmpl_mpi_type_attr_delete_all(MPI_Datatype t);

/* MPI_Get_elements of `bytes` bytes received with datatype t (any type:
 * the engine counts the basic elements; MPI_UNDEFINED when `bytes` ends
 * inside one), and the inverse for MPI_Status_set_elements.  MPI_SUCCESS
 * or MPI_ERR_TYPE (nothing reported). */
int fmpl_mpi_type_get_elements(MPI_Datatype t, MPI_Count bytes, MPI_Count *elements);
int fmpl_mpi_type_elements_to_bytes(MPI_Datatype t, MPI_Count elements, MPI_Count *bytes);

/* Errors of datatype functions that have no communicator argument are
 * raised on this communicator (as everywhere else in the binding). */
#define FMPL_MPI_TYPE_ERR_COMM MPI_COMM_WORLD

/* ============================================================ end of datatypes */

/* ------------------------------------------------------------ operations */

/* A reduction of elements of an MPI datatype with an MPI operation, as the
 * collective algorithms see it: `op` applies to elements of a stream.
 *  - Predefined type, or a derived one laid out like an array of one basic
 *    type (fmpl_dt_basic_array): the operands are the user's buffers at
 *    `offset` (true_lb), `per` kernel elements per element of the type.
 *  - Predefined operation on any other derived type made of one basic type
 *    (vector, indexed, ... of MPI_INT; pair types too): `type` is set and
 *    the operands are staged: fmpl_mpi_reduction_in copies them into an
 *    array of that basic type (`per` per element; C layout, so pair types
 *    keep their padding) and _out copies the result back.  A derived type
 *    mixing basic types is MPI_ERR_OP.
 *  - User operation (MPI_Op_create) on a derived type that is not
 *    contiguous from offset 0: staged as the packed stream (one stream
 *    element = one element of the type); the callback unpacks both operands
 *    into temporaries laid out with the type's extent and calls the user
 *    function with the type itself (op.c).
 * MPI_SUCCESS, or MPI_ERR_OP / MPI_ERR_TYPE (not reported) with a message
 * in *why for the caller's report.  The struct must stay where it was
 * made while the operation is used (op.ctx points into it). */
typedef struct fmpl_mpi_user_ctx {
    MPI_User_function *fn;        /* one of the two is set (op.c) */
    MPI_User_function_c *fn_c;
    MPI_Datatype type;
    fmpl_datatype *derived;       /* staged user operation: the type to unpack into */
} fmpl_mpi_user_ctx;

typedef struct fmpl_mpi_reduction {
    fmpl_op op;
    fmpl_mpi_user_ctx ctx;
    fmpl_datatype *type;          /* staged: the user's type; NULL: in place */
    fmpl_datatype *stream;        /* staged, predefined op: the basic type; NULL: packed */
    int64_t per;                  /* stream elements per element of the type */
    MPI_Aint offset;              /* in place: where the data starts (true_lb) */
    const char *why;
} fmpl_mpi_reduction;

int fmpl_mpi_reduction_make(MPI_Op op, MPI_Datatype type, fmpl_mpi_reduction *r);
/* Stream elements and bytes of `count` elements of the type. */
static inline int64_t fmpl_mpi_reduction_count(const fmpl_mpi_reduction *r, int64_t count)
{
    return count * r->per;
}
static inline size_t fmpl_mpi_reduction_bytes(const fmpl_mpi_reduction *r, int64_t count)
{
    return (size_t)(count * r->per) * fmpl_op_elem_size(&r->op);
}
/* Staged only: `count` elements at user -> stream, and back. */
void fmpl_mpi_reduction_in(const fmpl_mpi_reduction *r, const void *user, int64_t count,
                           void *stream);
void fmpl_mpi_reduction_out(const fmpl_mpi_reduction *r, const void *stream, int64_t count,
                            void *user);

/* Dynamic processes (dynamic.c): a spawned world meets its parent in
 * MPI_Init; a freed parent communicator is forgotten. */
int fmpl_mpi_dynamic_start(void);
void fmpl_mpi_dynamic_forget(MPI_Comm comm);

/* ------------------------------------------------------------ errors */

/* Map an FMPL_ERR_* code to an MPI error class. */
int fmpl_mpi_error_class_of(int fmpl_code);
/* Report an error on a communicator: runs its error handler (fatal by
 * default: ends the job with the message) and returns the code for
 * MPI_ERRORS_RETURN. */
int fmpl_mpi_error(MPI_Comm comm, int code, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The same through a given handler, called with `handle` (a session's
 * errors: session.c). */
int fmpl_mpi_error_handler(MPI_Errhandler h, int handle, int code, const char *func,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* An error of an MPI-IO function, through MPI_FILE_NULL's handler (file.c:
 * no file can be opened yet, so every file error goes there). */
int fmpl_mpi_file_error(int code, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define FMPL_MPI_ERR(comm, code, ...) fmpl_mpi_error((comm), (code), __func__ + 1, __VA_ARGS__)

/* Every MPI function starts with this: MPI must be initialised. */
#define FMPL_MPI_CHECK_READY(comm)                                                 \
    do {                                                                           \
        if (__builtin_expect(fmpl_mpi_state != FMPL_MPI_READY, 0))                 \
            return fmpl_mpi_error((comm), MPI_ERR_OTHER, __func__ + 1,             \
                                  fmpl_mpi_state == FMPL_MPI_NEW                   \
                                      ? "MPI is not initialized"                   \
                                      : "MPI was finalized");                      \
    } while (0)

#endif
