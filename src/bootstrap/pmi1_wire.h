/* PMI-1 wire format, shared by the client (pmi1.c) and fmplrun's server.
 *
 * A request or reply is one line of space-separated key=value words ending
 * in '\n', the first word being cmd=<name>.  Keys and values therefore may
 * hold neither spaces nor '=' nor newlines; FMPL only ever sends words made
 * of the characters fmpl_pmi1_word_ok() accepts.  The limits are those
 * MPICH's mpiexec.hydra announces in its "maxes" reply.  Header-only so the
 * launcher can use it without linking libfmpl. */
#ifndef FMPL_BOOTSTRAP_PMI1_WIRE_H
#define FMPL_BOOTSTRAP_PMI1_WIRE_H

#include <stddef.h>
#include <string.h>

#define FMPL_PMI1_KVSNAME_MAX 256
#define FMPL_PMI1_KEYLEN_MAX 64
#define FMPL_PMI1_VALLEN_MAX 1024
#define FMPL_PMI1_LINE_MAX 4096 /* longest request or reply, newline included */

/* Exit status of a job a rank ended with cmd=abort exitcode=<code>: the
 * code's low byte, or 1 when that is 0 (an abort is always a failure). */
static inline int fmpl_pmi1_abort_status(int code)
{
    return (code & 0xff) ? (code & 0xff) : 1;
}

/* 1 when every character of s is one FMPL may put in a PMI-1 key or value
 * (letters, digits and -_.:,/+@), and s is not empty. */
static inline int fmpl_pmi1_word_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("-_.:,/+@", c)))
            return 0;
    }
    return 1;
}

/* Copy the value of `key`=... from text made of key=value words split by
 * any of `seps` (PMI-1: spaces, up to a line break; PMI-2: ';') into
 * out[len].  Returns 0, -1 when there is no such word, -2 when the value
 * does not fit. */
static inline int fmpl_pmi_field(const char *text, const char *seps, const char *key, char *out,
                                 size_t len)
{
    size_t klen = strlen(key);
    const char *p = text;
    while (*p && *p != '\n') {
        const char *word = p;
        while (*p && *p != '\n' && !strchr(seps, *p))
            p++;
        if ((size_t)(p - word) > klen && strncmp(word, key, klen) == 0 && word[klen] == '=') {
            size_t vlen = (size_t)(p - word) - klen - 1;
            if (vlen + 1 > len)
                return -2;
            memcpy(out, word + klen + 1, vlen);
            out[vlen] = '\0';
            return 0;
        }
        if (*p && *p != '\n')
            p++; /* past the separator */
    }
    return -1;
}

static inline int fmpl_pmi1_field(const char *line, const char *key, char *out, size_t len)
{
    return fmpl_pmi_field(line, " ", key, out, len);
}

#endif
