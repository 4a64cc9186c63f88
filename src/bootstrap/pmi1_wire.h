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

/* Requests of several lines, as MPICH's simple PMI client sends
 * PMI_Spawn_multiple: a first line "mcmd=<name>", then one "key=value"
 * line each (the value is the rest of its line, spaces included), then a
 * line "endcmd".  Through fmplrun:
 *
 *   mcmd=spawn / nprocs=K / execname=PROG / totspawns=T / spawnssofar=S /
 *   argcnt=A / arg1=... / ... / argA=... / preput_num=P / preput_key_0=... /
 *   preput_val_0=... / ... / info_num=I / info_key_0=... / info_val_0=... /
 *   ... / endcmd
 *
 * one block per command of MPI_Comm_spawn_multiple (S = 1..T), answered
 * once, after the last, with "cmd=spawn_result rc=0 fmpl_universe_first=F"
 * (F: the universe index of the new world's rank 0) or "cmd=spawn_result
 * rc=-1 msg=<reason>".  Info keys: wdir, path (where to look for PROG),
 * host (must name the launcher's host); others are ignored. */
#define FMPL_PMI1_MCMD_END "endcmd"

/* Copy the value of the line "`key`=..." of a multi-line block (lines end
 * in '\n') into out[len].  Returns 0, -1 when there is no such line, -2
 * when the value does not fit. */
static inline int fmpl_pmi1_mcmd_field(const char *block, const char *key, char *out,
                                       size_t len)
{
    size_t klen = strlen(key);
    for (const char *line = block; *line;) {
        const char *end = strchr(line, '\n');
        size_t llen = end ? (size_t)(end - line) : strlen(line);
        if (llen > klen && strncmp(line, key, klen) == 0 && line[klen] == '=') {
            size_t vlen = llen - klen - 1;
            if (vlen + 1 > len)
                return -2;
            memcpy(out, line + klen + 1, vlen);
            out[vlen] = '\0';
            return 0;
        }
        line += llen + (end ? 1 : 0);
    }
    return -1;
}

#endif
