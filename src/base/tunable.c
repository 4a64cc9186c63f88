/* Tunables: parsing and enumeration.  See tunable.h. */
#include "base/tunable.h"
#include "base/log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

extern const fmpl_tunable *const __start_fmpl_tunables[];
extern const fmpl_tunable *const __stop_fmpl_tunables[];

const char *fmpl_tunable_string(const fmpl_tunable *t)
{
    const char *v = getenv(t->name);
    return (v && *v) ? v : t->default_value;
}

static int parse_long(const char *s, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 0);
    if (end == s)
        return -1;
    switch (tolower((unsigned char)*end)) {
    case 'k': v <<= 10; end++; break;
    case 'm': v <<= 20; end++; break;
    case 'g': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

long long fmpl_tunable_long(const fmpl_tunable *t)
{
    long long v = 0;
    const char *s = fmpl_tunable_string(t);
    if (parse_long(s, &v) == 0)
        return v;
    fmpl_log_warn("%s=%s is not a number; using the default %s", t->name, s,
                  t->default_value);
    parse_long(t->default_value, &v);
    return v;
}

int fmpl_tunable_choice(const fmpl_tunable *t, const char *const *choices)
{
    const char *s = fmpl_tunable_string(t);
    int dflt = -1;
    for (int i = 0; choices[i]; i++) {
        if (strcasecmp(s, choices[i]) == 0)
            return i;
        if (strcasecmp(t->default_value, choices[i]) == 0)
            dflt = i;
    }
    fmpl_log_warn("%s=%s is not one of the accepted values; using %s", t->name, s,
                  t->default_value);
    return dflt;
}

void fmpl_tunable_foreach(fmpl_tunable_visit_fn fn, void *ctx)
{
    for (const fmpl_tunable *const *p = __start_fmpl_tunables; p < __stop_fmpl_tunables; p++)
        fn(*p, ctx);
}
