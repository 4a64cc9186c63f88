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

#include "mpi.h"
#include "protocols/tag_match.h"
#include "protocols/team.h"

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

/* ------------------------------------------------------------ communicators */

typedef struct fmpl_mpi_comm {
    int handle;
    fmpl_team *team;
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    int refs;
    /* objects layer (mpi_objects.h); zero in a new communicator */
    struct fmpl_mpi_attr *attrs; /* cached attributes, newest first (attr.c) */
    MPI_Info info;               /* hints of MPI_Comm_set_info (0: none) */
} fmpl_mpi_comm;

fmpl_mpi_comm *fmpl_mpi_comm_get(MPI_Comm c);   /* NULL if invalid */
int fmpl_mpi_comm_register(fmpl_team *t, MPI_Comm *handle);
void fmpl_mpi_comm_release(fmpl_mpi_comm *c);
int fmpl_mpi_comms_init(void);
void fmpl_mpi_comms_finalize(void);

/* ------------------------------------------------------------ requests */

enum {
    FMPL_MREQ_FREE = 0,
    FMPL_MREQ_SEND,
    FMPL_MREQ_RECV,
    FMPL_MREQ_DONE,    /* complete on creation (MPI_PROC_NULL, errors) */
    FMPL_MREQ_MESSAGE, /* an MPI_Message (mprobe.c): not a request */
};

/* r->mode of a persistent send (persistent.c): FMPL_TM_MODE_STANDARD,
 * FMPL_TM_MODE_SYNC, or this one (copied into the attached buffer). */
#define FMPL_MPI_MODE_BUFFERED 0x100

typedef struct fmpl_mpi_request {
    fmpl_tm_req tm;
    int handle;
    int kind;
    int persistent;      /* created by *_init: survives completion */
    int active;          /* persistent: started and not yet completed */
    int proc_null;       /* completes with an empty status */
    int error;           /* an MPI error code found when it was started */
    int freed;           /* MPI_Request_free on an active request */
    /* the call's arguments, for persistent starts and unpacking */
    MPI_Comm comm;
    void *ubuf;
    MPI_Aint count;
    MPI_Datatype dtype;
    int peer, tag, mode;
    void *packed;        /* staging for non-contiguous data, or NULL */
    fmpl_tm_unexp *msg;  /* FMPL_MREQ_MESSAGE: the dequeued message */
    struct fmpl_mpi_request *next_free;
} fmpl_mpi_request;

fmpl_mpi_request *fmpl_mpi_request_new(void);     /* from the pool */
void fmpl_mpi_request_free(fmpl_mpi_request *r);
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
void fmpl_mpi_status_set(MPI_Status *s, int source, int tag, int error, MPI_Count bytes,
                         int cancelled);
void fmpl_mpi_status_empty(MPI_Status *s);
MPI_Count fmpl_mpi_status_bytes(const MPI_Status *s);   /* status.c */

/* ------------------------------------------------------------ point-to-point helpers */

/* pt2pt.c's argument checks (communicator, count, datatype, peer, tag,
 * buffer), reporting through the error handler; *bytes = count * size. */
int fmpl_mpi_p2p_check(const char *func, MPI_Comm comm, const void *buf, MPI_Aint count,
                       MPI_Datatype type, int peer, int tag, int is_recv, fmpl_mpi_comm **c,
                       MPI_Aint *bytes);
/* Buffered send (bsend.c): copy `bytes` into the attached buffer and send
 * from there to `dest` (not MPI_PROC_NULL); MPI_SUCCESS, or MPI_ERR_BUFFER
 * reported through the error handler of `comm`. */
int fmpl_mpi_bsend_start(const char *func, MPI_Comm comm, fmpl_team *team, const void *buf,
                         MPI_Aint bytes, int dest, int tag);
/* MPI_Finalize: deliver what the attached buffer still holds, detach it. */
void fmpl_mpi_bsend_finalize(void);

/* ------------------------------------------------------------ datatypes */

/* Bytes of one element and whether elements are plain contiguous bytes;
 * returns MPI_SUCCESS or MPI_ERR_TYPE. */
int fmpl_mpi_type_layout(MPI_Datatype t, MPI_Aint *size, int *contiguous);
/* The basic element type of a predefined datatype (fmpl_basic_type), or
 * FMPL_BT_NONE. */
int fmpl_mpi_basic_type(MPI_Datatype t);

/* ------------------------------------------------------------ operations */

struct fmpl_op;
/* An fmpl_op on the caller's stack applying `op` to elements of `type`:
 * MPI_SUCCESS, MPI_ERR_OP (invalid, or not defined on the type) or
 * MPI_ERR_TYPE.  `ctx_storage` must live as long as the operation. */
typedef struct fmpl_mpi_user_ctx {
    MPI_User_function *fn;
    MPI_Datatype type;
} fmpl_mpi_user_ctx;
int fmpl_mpi_op_make(MPI_Op op, MPI_Datatype type, struct fmpl_op *out,
                     fmpl_mpi_user_ctx *ctx_storage);

/* ------------------------------------------------------------ errors */

/* Map an FMPL_ERR_* code to an MPI error class. */
int fmpl_mpi_error_class_of(int fmpl_code);
/* Report an error on a communicator: runs its error handler (fatal by
 * default: ends the job with the message) and returns the code for
 * MPI_ERRORS_RETURN. */
int fmpl_mpi_error(MPI_Comm comm, int code, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

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
