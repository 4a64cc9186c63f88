/* Internal to the bootstrap layer: the constructors bootstrap.c chooses
 * between, and the argument checks every implementation shares. */
#ifndef FMPL_BOOTSTRAP_IMPL_H
#define FMPL_BOOTSTRAP_IMPL_H

#include "bootstrap/bootstrap.h"
#include "bootstrap/pmi1_wire.h"

#include <stddef.h>

/* Fill in *bs (zeroed by the caller); FMPL_SUCCESS or an error already
 * reported.  On failure nothing stays allocated. */
int fmpl_bootstrap_pmi1_open(fmpl_bootstrap *bs, const char *pmi_fd);
int fmpl_bootstrap_pmi2_open(fmpl_bootstrap *bs, const char *pmi_fd);
int fmpl_bootstrap_singleton_open(fmpl_bootstrap *bs);
#ifdef FMPL_HAVE_PMIX
int fmpl_bootstrap_pmix_open(fmpl_bootstrap *bs); /* pmix.c, only with libpmix */
#endif

/* Build "<rank>.<key>" into full[FMPL_BOOTSTRAP_KEY_MAX] after checking key
 * (a PMI-1 word, short enough); FMPL_SUCCESS or FMPL_ERR_ARG, reported. */
int fmpl_bootstrap_full_key(const char *func, int rank, const char *key, char *full);
/* Read what a launcher that sets PMI_FD (text pmi_fd) passes in the
 * environment: the descriptor (marked close-on-exec), PMI_RANK and
 * PMI_SIZE; FMPL_SUCCESS or FMPL_ERR_BOOTSTRAP, reported. */
int fmpl_bootstrap_pmi_env(const char *pmi_fd, int *fd, int *rank, int *size);
/* Send len bytes of buf on the launcher's socket fd; FMPL_SUCCESS or
 * FMPL_ERR_BOOTSTRAP, reported for func. */
int fmpl_bootstrap_send_all(int fd, const char *func, const char *buf, size_t len);
/* Check a PMI reply: its cmd must be `cmd` and its rc, when present, 0
 * (else the text under msg_key explains).  `field` reads one key of the
 * reply in the wire format at hand (fmpl_pmi1_field, fmpl_pmi2_field):
 * 0 found, otherwise not. */
typedef int (*fmpl_pmi_field_fn)(const char *reply, const char *key, char *out, size_t len);
int fmpl_bootstrap_check_reply(const char *func, const char *reply, const char *cmd,
                               fmpl_pmi_field_fn field, const char *msg_key);
/* Check a value to put: a PMI-1 word shorter than FMPL_BOOTSTRAP_VALUE_MAX. */
int fmpl_bootstrap_check_value(const char *func, const char *value);

/* Exit status abort() ends a job with (the rule fmplrun applies too). */
static inline int fmpl_bootstrap_abort_status(int code) { return fmpl_pmi1_abort_status(code); }

/* Write "fmpl[<rank>] abort: <message> (exit code N)" to stderr in one write. */
void fmpl_bootstrap_print_abort(int rank, int code, const char *message);

#endif
