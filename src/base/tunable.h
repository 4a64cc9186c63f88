/* Tunables: every environment variable FMPL reads is declared next to the code
 * that reads it, with FMPL_TUNABLE().  The declarations land in one linker
 * section, so fmpl_info can list them all without a central table.
 *
 * Invariant: a tunable is read once (at init or first use) and cached by the
 * caller; reading one is never on a message's hot path. */
#ifndef FMPL_BASE_TUNABLE_H
#define FMPL_BASE_TUNABLE_H

#include <stddef.h>

typedef struct fmpl_tunable {
    const char *name;          /* environment variable, e.g. "FMPL_SPIN_COUNT" */
    const char *default_value; /* as text, parsed like the environment value */
    const char *help;          /* one line */
} fmpl_tunable;

#define FMPL_TUNABLE(var, NAME, DEFAULT, HELP)                                     \
    static const fmpl_tunable var = {NAME, DEFAULT, HELP};                          \
    static const fmpl_tunable *const var##_entry                                    \
        __attribute__((used, section("fmpl_tunables"))) = &var

/* The value in the environment, or the default when unset or empty. */
const char *fmpl_tunable_string(const fmpl_tunable *t);
/* Integer value; accepts k/m/g suffixes (powers of 1024).  An unparsable
 * value is reported once and the default is used. */
long long fmpl_tunable_long(const fmpl_tunable *t);
/* Index of the value in a NULL-terminated list of choices, or -1 after
 * reporting an invalid value (the default's index is then returned). */
int fmpl_tunable_choice(const fmpl_tunable *t, const char *const *choices);

/* Walk every tunable linked into this library. */
typedef void (*fmpl_tunable_visit_fn)(const fmpl_tunable *t, void *ctx);
void fmpl_tunable_foreach(fmpl_tunable_visit_fn fn, void *ctx);

#endif
