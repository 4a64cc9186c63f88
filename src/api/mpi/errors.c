/* MPI error classes, strings and error handlers on communicators and windows.
 * An error is reported on a communicator: MPI_ERRORS_ARE_FATAL (the
 * default) and MPI_ERRORS_ABORT print the message and end the job through
 * the launcher; MPI_ERRORS_RETURN returns the code; a user handler is
 * called with the communicator and the code, and the code is returned. */
#include "api/mpi/mpi_impl.h"
#include "api/mpi/mpi_objects.h"
#include "runtime/runtime.h"
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_strings[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_KEYVAL] = "invalid key value",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_INFO_NOKEY] = "info key not found",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_DISP] = "invalid displacement",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_ASSERT] = "invalid assertion",
    [MPI_ERR_RMA_CONFLICT] = "conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "wrong synchronization of RMA calls",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported",
};

int fmpl_mpi_error_class_of(int fmpl_code)
{
    switch (fmpl_code) {
    case FMPL_SUCCESS: return MPI_SUCCESS;
    case FMPL_ERR_ARG: return MPI_ERR_ARG;
    case FMPL_ERR_RANK: return MPI_ERR_RANK;
    case FMPL_ERR_COMM: return MPI_ERR_COMM;
    case FMPL_ERR_SIZE: return MPI_ERR_COUNT;
    case FMPL_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case FMPL_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case FMPL_ERR_OP: return MPI_ERR_OP;
    case FMPL_ERR_ROOT: return MPI_ERR_ROOT;
    case FMPL_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case FMPL_ERR_INTERNAL: return MPI_ERR_INTERN;
    default: return MPI_ERR_OTHER;
    }
}

static const char *class_string(int code)
{
    const char *user = fmpl_mpi_user_error_string(code); /* errhandler.c */
    if (user)
        return *user ? user : "user-defined error";
    if (code >= 0 && code < (int)(sizeof class_strings / sizeof *class_strings) &&
        class_strings[code])
        return class_strings[code];
    return "unknown error class";
}

static int raise_error(MPI_Errhandler h, int handle, int code, const char *func, const char *fmt,
                       va_list ap)
{
    if (fmpl_mpi_nbc_func) /* the blocking body of an I* or *_init call */
        func = fmpl_mpi_nbc_func;
    if (h == MPI_ERRORS_RETURN)
        return code;
    /* A user handler (errhandler.c) is called with the object the error
     * happened on. */
    if (fmpl_mpi_state == FMPL_MPI_READY && fmpl_mpi_errhandler_call_user(h, handle, code))
        return code;
    char msg[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT, or MPI is not running */
    char line[800];
    snprintf(line, sizeof line, "%s: %s (%s)", func, msg, class_string(code));
    fmpl_log_print("MPI error", "%s", line);
    fmpl_runtime_abort(code ? code : 1, line);
}

int fmpl_mpi_error(MPI_Comm comm, int code, const char *func, const char *fmt, ...)
{
    /* `comm` may be a window handle (win.c): its own handler decides;
     * MPI_COMM_WORLD's if comm is invalid. */
    fmpl_mpi_win *w = fmpl_handle_kind(comm) == FMPL_HK_WIN ? fmpl_mpi_win_get(comm) : NULL;
    fmpl_mpi_comm *c = w ? NULL : fmpl_mpi_comm_get(comm);
    if (!c && !w)
        c = fmpl_mpi_comm_get(MPI_COMM_WORLD);
    MPI_Errhandler h = w ? w->errhandler : c ? c->errhandler : MPI_ERRORS_ARE_FATAL;
    va_list ap;
    va_start(ap, fmt);
    int rc = raise_error(h, w ? w->handle : c ? c->handle : comm, code, func, fmt, ap);
    va_end(ap);
    return rc;
}

int fmpl_mpi_error_handler(MPI_Errhandler h, int handle, int code, const char *func,
                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = raise_error(h, handle, code, func, fmt, ap);
    va_end(ap);
    return rc;
}

int PMPI_Error_class(int errorcode, int *errorclass)
{
    FMPL_CORE_GUARD();
    if (!errorclass)
        return MPI_ERR_ARG;
    int user = fmpl_mpi_user_error_class(errorcode); /* errhandler.c */
    if (user >= 0) {
        *errorclass = user;
        return MPI_SUCCESS;
    }
    if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
        return MPI_ERR_ARG;
    *errorclass = errorcode;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Error_class)

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    FMPL_CORE_GUARD();
    if (!string || !resultlen)
        return MPI_ERR_ARG;
    const char *user = fmpl_mpi_user_error_string(errorcode); /* errhandler.c */
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", user ? user : class_string(errorcode));
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Error_string)
