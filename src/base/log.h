/* Logging with the rank as prefix.  Errors and warnings always print;
 * info and debug follow FMPL_VERBOSE. */
#ifndef FMPL_BASE_LOG_H
#define FMPL_BASE_LOG_H

enum { FMPL_LOG_ERROR = 0, FMPL_LOG_WARN = 0, FMPL_LOG_INFO = 1, FMPL_LOG_DEBUG = 2 };

extern int fmpl_log_level;

/* Called once the rank is known; before that messages say "fmpl".  */
void fmpl_log_set_rank(int rank);
void fmpl_log_init(void);
void fmpl_log_print(const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define fmpl_log_error(...) fmpl_log_print("error", __VA_ARGS__)
#define fmpl_log_warn(...) fmpl_log_print("warning", __VA_ARGS__)
#define fmpl_log_info(...)                                                         \
    do {                                                                           \
        if (fmpl_log_level >= FMPL_LOG_INFO)                                       \
            fmpl_log_print("info", __VA_ARGS__);                                   \
    } while (0)
#define fmpl_log_debug(...)                                                        \
    do {                                                                           \
        if (fmpl_log_level >= FMPL_LOG_DEBUG)                                      \
            fmpl_log_print("debug", __VA_ARGS__);                                  \
    } while (0)

/* Debug-build assertion of an internal invariant; free in release builds. */
#ifdef FMPL_DEBUG
#include <stdlib.h>
#define fmpl_assert(cond)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fmpl_log_print("assertion", "%s:%d: %s", __FILE__, __LINE__, #cond);   \
            abort();                                                               \
        }                                                                          \
    } while (0)
#else
#define fmpl_assert(cond) ((void)0)
#endif

#endif
