/* Logging.  One line per message, written with a single write(2) so lines
 * from different ranks do not interleave. */
#include "base/log.h"
#include "base/tunable.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int fmpl_log_level = 0;
static int log_rank = -1;

FMPL_TUNABLE(tunable_verbose, "FMPL_VERBOSE", "0",
             "log level: 0 errors and warnings, 1 also info (paths chosen), 2 also debug");

void fmpl_log_init(void) { fmpl_log_level = (int)fmpl_tunable_long(&tunable_verbose); }

void fmpl_log_set_rank(int rank) { log_rank = rank; }

void fmpl_log_print(const char *kind, const char *fmt, ...)
{
    char line[1024];
    int n;
    if (log_rank >= 0)
        n = snprintf(line, sizeof line, "fmpl[%d] %s: ", log_rank, kind);
    else
        n = snprintf(line, sizeof line, "fmpl %s: ", kind);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
    (void)ignored;
}
