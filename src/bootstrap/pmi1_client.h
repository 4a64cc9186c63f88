/* Internal to the PMI-1 client (pmi1.c, pmi1_dynamic.c): its connection
 * state and the request/reply helpers both files use. */
#ifndef FMPL_BOOTSTRAP_PMI1_CLIENT_H
#define FMPL_BOOTSTRAP_PMI1_CLIENT_H

#include "bootstrap/bootstrap.h"
#include "bootstrap/pmi1_wire.h"

#include <stddef.h>

typedef struct pmi1 {
    int fd;
    int keylen_max, vallen_max;
    char kvsname[FMPL_PMI1_KVSNAME_MAX];
    size_t rlen;                     /* bytes buffered in rbuf */
    char rbuf[FMPL_PMI1_LINE_MAX];   /* received, not yet consumed */
} pmi1;

/* Send one request line built from fmt: FMPL_SUCCESS or a reported error. */
int fmpl_pmi1_send_line(pmi1 *p, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Read one reply line (without its newline) into line[FMPL_PMI1_LINE_MAX]. */
int fmpl_pmi1_read_line(pmi1 *p, const char *func, char *line);
/* Read the reply to a request: it must be cmd=<cmd> with rc 0 (when present). */
int fmpl_pmi1_expect(pmi1 *p, const char *func, const char *cmd, char *line);

/* What a reply line says: -1 when it is not cmd=<cmd>, 0 when rc is 0 (or
 * absent), 1 when the launcher refused (its msg, '_' as spaces, in why). */
int fmpl_pmi1_reply_is(const char *line, const char *cmd, char *why, size_t why_len);
/* Read the reply to a request whose refusal is an answer: 0, 1 when
 * refused (why filled), or a reported error (wrong reply, lost launcher). */
int fmpl_pmi1_answer(pmi1 *p, const char *func, const char *cmd, char *line, char *why,
                     size_t why_len);

/* pmi1_dynamic.c: the universe this process belongs to (FMPL_UNIVERSE_*,
 * PMI_SPAWNED, get_universe_size), and the dynamic-process operations,
 * which only fmplrun serves. */
int fmpl_bootstrap_pmi1_universe(fmpl_bootstrap *bs, pmi1 *p);
void fmpl_bootstrap_pmi1_dynamic_ops(fmpl_bootstrap *bs);

#endif
