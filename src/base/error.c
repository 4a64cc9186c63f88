#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"

#include <stdarg.h>
#include <stdio.h>

FMPL_TUNABLE(tunable_quiet, "FMPL_ERRORS_QUIET", "0",
             "1: return error codes without printing a message for each");

static int errors_quiet;
const char *fmpl_error_caller;

void fmpl_error_init(void) { errors_quiet = fmpl_tunable_long(&tunable_quiet) != 0; }

static const char *const error_strings[FMPL_ERR_LAST] = {
    [FMPL_SUCCESS] = "success",
    [FMPL_ERR_ARG] = "invalid argument",
    [FMPL_ERR_RANK] = "invalid rank",
    [FMPL_ERR_COMM] = "invalid communicator",
    [FMPL_ERR_INDEX] = "invalid matching index",
    [FMPL_ERR_SIZE] = "invalid (negative) size or count",
    [FMPL_ERR_TRUNCATE] = "message truncated: larger than the receive buffer",
    [FMPL_ERR_BUSY] = "busy: an outstanding operation still uses it",
    [FMPL_ERR_NOT_PENDING] = "no outstanding operation on this index",
    [FMPL_ERR_NOT_INITIALIZED] = "FMPL is not initialized",
    [FMPL_ERR_FINALIZED] = "FMPL is already finalized",
    [FMPL_ERR_ALREADY_INITIALIZED] = "FMPL is already initialized",
    [FMPL_ERR_NO_MEMORY] = "out of shared memory",
    [FMPL_ERR_SPOOL_FULL] = "spool buffer full",
    [FMPL_ERR_OP] = "invalid reduction operation",
    [FMPL_ERR_ROOT] = "invalid root",
    [FMPL_ERR_UNSUPPORTED] = "unsupported operation",
    [FMPL_ERR_BOOTSTRAP] = "launcher (bootstrap) failure",
    [FMPL_ERR_INTERNAL] = "internal error",
};

const char *fmpl_error_string(int code)
{
    if (code < 0 || code >= FMPL_ERR_LAST)
        return "unknown error code";
    return error_strings[code];
}

int fmpl_error_report(int code, const char *func, const char *fmt, ...)
{
    if (errors_quiet)
        return code;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fmpl_log_print("error", "%s: %s (%s)", func, msg, fmpl_error_string(code));
    return code;
}
