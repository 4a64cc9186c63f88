/* PMI-1 client: talks the PMI-1 wire protocol (see pmi1_wire.h) over the
 * socket inherited in PMI_FD, with PMI_RANK and PMI_SIZE from the
 * environment.  Works with fmplrun and MPICH's mpiexec.hydra.
 *
 * Every call is one request line and one reply line; the socket stays
 * blocking because the caller has nothing else to do meanwhile.  PMI-1 puts
 * become visible at the next barrier, so fence is a barrier. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_impl.h"
#include "bootstrap/jobid.h"
#include "bootstrap/pmi1_client.h"
#include "bootstrap/pmi1_wire.h"
#include "base/error.h"
#include "base/tunable.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

FMPL_TUNABLE(tunable_launcher, "FMPL_LAUNCHER", "",
             "set by fmplrun to 'fmplrun' for its ranks; not meant to be set by hand");


/* Send one request line built from fmt.  FMPL_SUCCESS or reported error. */
int fmpl_pmi1_send_line(pmi1 *p, const char *func, const char *fmt, ...)
{
    char line[FMPL_PMI1_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof line)
        return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "PMI request too long");
    return fmpl_bootstrap_send_all(p->fd, func, line, (size_t)n);
}

/* Read one reply line (without its newline) into line[FMPL_PMI1_LINE_MAX]. */
int fmpl_pmi1_read_line(pmi1 *p, const char *func, char *line)
{
    for (;;) {
        char *nl = memchr(p->rbuf, '\n', p->rlen);
        if (nl) {
            size_t len = (size_t)(nl - p->rbuf);
            memcpy(line, p->rbuf, len);
            line[len] = '\0';
            p->rlen -= len + 1;
            memmove(p->rbuf, nl + 1, p->rlen);
            return FMPL_SUCCESS;
        }
        if (p->rlen == sizeof p->rbuf)
            return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func,
                                     "launcher sent a PMI line longer than %d bytes",
                                     FMPL_PMI1_LINE_MAX);
        ssize_t r = read(p->fd, p->rbuf + p->rlen, sizeof p->rbuf - p->rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func,
                                     "cannot read from the launcher (PMI_FD %d): %s", p->fd,
                                     strerror(errno));
        if (r == 0)
            return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func,
                                     "the launcher closed the PMI connection");
        p->rlen += (size_t)r;
    }
}

/* Read the reply to a request: it must be cmd=<cmd>, and rc (if present)
 * must be 0.  The whole line is left in line[FMPL_PMI1_LINE_MAX]. */
int fmpl_pmi1_expect(pmi1 *p, const char *func, const char *cmd, char *line)
{
    int rc = fmpl_pmi1_read_line(p, func, line);
    if (rc != FMPL_SUCCESS)
        return rc;
    return fmpl_bootstrap_check_reply(func, line, cmd, fmpl_pmi1_field, "msg");
}

int fmpl_pmi1_reply_is(const char *line, const char *cmd, char *why, size_t why_len)
{
    char got[64], rcval[16];
    if (fmpl_pmi1_field(line, "cmd", got, sizeof got) != 0 || strcmp(got, cmd) != 0)
        return -1;
    if (fmpl_pmi1_field(line, "rc", rcval, sizeof rcval) != 0 || strcmp(rcval, "0") == 0)
        return 0;
    if (fmpl_pmi1_field(line, "msg", why, why_len) != 0)
        snprintf(why, why_len, "no reason given");
    for (char *c = why; *c; c++)
        if (*c == '_')
            *c = ' ';
    return 1;
}

int fmpl_pmi1_answer(pmi1 *p, const char *func, const char *cmd, char *line, char *why,
                     size_t why_len)
{
    int rc = fmpl_pmi1_read_line(p, func, line);
    if (rc != FMPL_SUCCESS)
        return rc;
    int is = fmpl_pmi1_reply_is(line, cmd, why, why_len);
    if (is < 0)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "expected cmd=%s from the launcher, got '%.200s'",
                          cmd, line);
    return is;
}

static int int_field(const char *line, const char *key, int *out)
{
    char buf[32], *end;
    if (fmpl_pmi1_field(line, key, buf, sizeof buf) != 0)
        return -1;
    long v = strtol(buf, &end, 10);
    if (end == buf || *end || v < 0 || v > 1 << 30)
        return -1;
    *out = (int)v;
    return 0;
}

static int p_put(fmpl_bootstrap *bs, const char *key, const char *value)
{
    pmi1 *p = bs->impl;
    char full[FMPL_BOOTSTRAP_KEY_MAX], line[FMPL_PMI1_LINE_MAX];
    int rc = fmpl_bootstrap_full_key(__func__, bs->universe_rank, key, full);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_bootstrap_check_value(__func__, value);
    if (rc != FMPL_SUCCESS)
        return rc;
    if ((int)strlen(full) >= p->keylen_max || (int)strlen(value) >= p->vallen_max)
        return FMPL_ERROR(FMPL_ERR_ARG, "key '%s' or its value exceeds the launcher's limits "
                          "(key %d, value %d)", full, p->keylen_max - 1, p->vallen_max - 1);
    rc = fmpl_pmi1_send_line(p, __func__, "cmd=put kvsname=%s key=%s value=%s\n", p->kvsname, full, value);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_expect(p, __func__, "put_result", line);
    return rc;
}

/* A get whose absence is an answer: FMPL_ERR_NOT_PENDING, unreported, when
 * the launcher has no such key (quiet), else reported like any failure. */
static int get_key(fmpl_bootstrap *bs, const char *func, int rank, const char *key, char *value,
                   size_t len, int quiet)
{
    pmi1 *p = bs->impl;
    char full[FMPL_BOOTSTRAP_KEY_MAX], line[FMPL_PMI1_LINE_MAX], why[128];
    /* Spawned worlds may name any universe rank; others only their world. */
    int limit = bs->spawn ? FMPL_UNIVERSE_MAX : bs->universe_base + bs->size;
    if (rank < 0 || rank >= limit)
        return FMPL_ERROR(FMPL_ERR_RANK, "rank %d outside 0..%d", rank, limit - 1);
    if (!value)
        return FMPL_ERROR(FMPL_ERR_ARG, "value buffer is NULL");
    int rc = fmpl_bootstrap_full_key(func, rank, key, full);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = fmpl_pmi1_send_line(p, func, "cmd=get kvsname=%s key=%s\n", p->kvsname, full);
    if (rc == FMPL_SUCCESS && quiet) {
        rc = fmpl_pmi1_answer(p, func, "get_result", line, why, sizeof why);
        if (rc == 1)
            return FMPL_ERR_NOT_PENDING;
    } else if (rc == FMPL_SUCCESS) {
        rc = fmpl_pmi1_expect(p, func, "get_result", line);
    }
    if (rc != FMPL_SUCCESS)
        return rc;
    int f = fmpl_pmi1_field(line, "value", value, len);
    if (f == -2)
        return FMPL_ERROR(FMPL_ERR_ARG, "value of '%s' does not fit in %zu bytes", full, len);
    if (f != 0)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "get_result without a value: '%.200s'", line);
    return FMPL_SUCCESS;
}

static int p_get(fmpl_bootstrap *bs, int rank, const char *key, char *value, size_t len)
{
    return get_key(bs, __func__, rank, key, value, len, 0);
}

static int p_try_get(fmpl_bootstrap *bs, int rank, const char *key, char *value, size_t len)
{
    return get_key(bs, __func__, rank, key, value, len, 1);
}

static int p_barrier(fmpl_bootstrap *bs)
{
    pmi1 *p = bs->impl;
    char line[FMPL_PMI1_LINE_MAX];
    int rc = fmpl_pmi1_send_line(p, __func__, "cmd=barrier_in\n");
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_expect(p, __func__, "barrier_out", line);
    return rc;
}

__attribute__((noreturn)) static void p_abort(fmpl_bootstrap *bs, int code, const char *message)
{
    pmi1 *p = bs->impl;
    fmpl_bootstrap_print_abort(bs->rank, code, message);
    if (p) { /* NULL after finalize: then only the fallback below is left */
        char line[64];
        int n = snprintf(line, sizeof line, "cmd=abort exitcode=%d\n",
                         fmpl_bootstrap_abort_status(code));
        ssize_t ignored = send(p->fd, line, (size_t)n, MSG_NOSIGNAL);
        (void)ignored;
    }
    /* The launcher ends the job; exiting ourselves is the fallback. */
    _exit(fmpl_bootstrap_abort_status(code));
}

static int p_finalize(fmpl_bootstrap *bs)
{
    pmi1 *p = bs->impl;
    if (!p)
        return FMPL_SUCCESS;
    char line[FMPL_PMI1_LINE_MAX];
    int rc = fmpl_pmi1_send_line(p, __func__, "cmd=finalize\n");
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_expect(p, __func__, "finalize_ack", line);
    close(p->fd);
    free(p);
    bs->impl = NULL;
    return rc;
}

static int handshake(fmpl_bootstrap *bs, pmi1 *p)
{
    char line[FMPL_PMI1_LINE_MAX];
    int rc = fmpl_pmi1_send_line(p, __func__, "cmd=init pmi_version=1 pmi_subversion=1\n");
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_expect(p, __func__, "response_to_init", line);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_send_line(p, __func__, "cmd=get_maxes\n");
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_expect(p, __func__, "maxes", line);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (int_field(line, "keylen_max", &p->keylen_max) || int_field(line, "vallen_max", &p->vallen_max))
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "malformed maxes reply '%.200s'", line);
    rc = fmpl_pmi1_send_line(p, __func__, "cmd=get_my_kvsname\n");
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_expect(p, __func__, "my_kvsname", line);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (fmpl_pmi1_field(line, "kvsname", p->kvsname, sizeof p->kvsname) != 0 || !p->kvsname[0])
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "malformed my_kvsname reply '%.200s'", line);
    fmpl_job_id_from_kvsname(p->kvsname, bs->job_id);
    return FMPL_SUCCESS;
}

/* Under Hydra a rank is a child of hydra_pmi_proxy.  When that proxy dies
 * (killed, out of memory), nothing else ends the rank: mpiexec waits for
 * its output, and a rank computing outside MPI never asks the proxy again.
 * So a rank whose parent is that proxy has the kernel kill it when the
 * parent goes (fmplrun's proxies arrange the same for their ranks,
 * tools/fmplrun/spawn.c); the mpiexec then ends, its ranks' output closed.
 * Only for that parent: a program started through a wrapper script must
 * not die with the script. */
static void end_with_hydra_proxy(void)
{
    pid_t parent = getppid();
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)parent);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int named = fgets(comm, sizeof comm, f) != NULL;
    fclose(f);
    if (!named || strncmp(comm, "hydra_pmi_proxy", 15) != 0 ||
        prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return;
    if (getppid() != parent) { /* it went before prctl */
        FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "the process manager's proxy (hydra_pmi_proxy, pid %d) "
                   "is gone: ending", (int)parent);
        _exit(1);
    }
}

int fmpl_bootstrap_pmi1_open(fmpl_bootstrap *bs, const char *pmi_fd)
{
    int fd = -1, rank = -1, size = 0;
    if (fmpl_bootstrap_pmi_env(pmi_fd, &fd, &rank, &size) != FMPL_SUCCESS)
        return FMPL_ERR_BOOTSTRAP;
    pmi1 *p = calloc(1, sizeof *p);
    if (!p)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "out of memory");
    p->fd = fd;
    bs->rank = rank;
    bs->size = size;
    int rc = handshake(bs, p);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_bootstrap_pmi1_universe(bs, p);
    if (rc != FMPL_SUCCESS) {
        free(p);
        return rc;
    }
    bs->launcher = strcmp(fmpl_tunable_string(&tunable_launcher), "fmplrun") == 0 ? "fmplrun"
                                                                                  : "pmi1";
    if (strcmp(bs->launcher, "pmi1") == 0)
        end_with_hydra_proxy();
    bs->put = p_put;
    bs->fence = p_barrier; /* PMI-1 commits puts at the barrier */
    bs->get = p_get;
    bs->barrier = p_barrier;
    bs->abort = p_abort;
    bs->finalize = p_finalize;
    bs->try_get = p_try_get;
    bs->impl = p;
    if (strcmp(bs->launcher, "fmplrun") == 0)
        fmpl_bootstrap_pmi1_dynamic_ops(bs);
    return FMPL_SUCCESS;
}
