/* Error reporting: every public entry point that fails says why, once, on
 * standard error, and returns the code.  FMPL_ERRORS_QUIET=1 silences the
 * messages (tests that provoke errors on purpose use it). */
#ifndef FMPL_BASE_ERROR_H
#define FMPL_BASE_ERROR_H

#include "fmpl.h"

/* Log "<function>: <message>" unless quiet, and return `code`. */
int fmpl_error_report(int code, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The public function being executed: set at every API entry so that errors
 * found deep in the core name the call the user made. */
extern const char *fmpl_error_caller;

#define FMPL_ERROR(code, ...)                                                      \
    fmpl_error_report((code), fmpl_error_caller ? fmpl_error_caller : __func__, __VA_ARGS__)

void fmpl_error_init(void);

#endif
