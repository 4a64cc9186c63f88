/* PMI-2 client: talks the PMI-2 wire protocol over the socket inherited in
 * PMI_FD, as Slurm's srun --mpi=pmi2 (and mpiexec.hydra) serve it.
 *
 * Wire sequence it performs (-> to the server, <- from it):
 *   -> "cmd=init pmi_version=2 pmi_subversion=0\n"          (a PMI-1 line:
 *   <- "cmd=response_to_init rc=0 pmi_version=2 ...\n"       picks the version)
 * then every message is a 6-character decimal length, "%-6d", followed by
 * that many bytes of "key=value;" pairs, the first pair being cmd=<name>:
 *   -> cmd=fullinit;pmijobid=<PMI_JOBID>;pmirank=<PMI_RANK>;threaded=FALSE;
 *   <- cmd=fullinit-response;rc=0;...;rank=<r>;size=<n>;...
 *   -> cmd=job-getid;              <- cmd=job-getid-response;rc=0;jobid=<id>;
 * and afterwards, as FMPL asks:
 *   put:     -> cmd=kvs-put;key=<k>;value=<v>;   <- cmd=kvs-put-response;rc=0;
 *   fence, barrier:
 *            -> cmd=kvs-fence;                   <- cmd=kvs-fence-response;rc=0;
 *   get:     -> cmd=kvs-get;jobid=<id>;srcid=<my rank>;key=<k>;
 *            <- cmd=kvs-get-response;rc=0;found=TRUE;value=<v>;
 *   abort:   -> cmd=abort;isworld=TRUE;msg=<text>;   (no reply: the server
 *                                                      kills the whole step)
 *   finalize:-> cmd=finalize;                    <- cmd=finalize-response;rc=0;
 *
 * Slurm's server requires pmijobid, pmirank and threaded in fullinit, and
 * answers kvs-get from the data of the last fence without waiting, so a key
 * not fenced yet is "found=FALSE" (reported as an error, as PMI-1 does).
 * Limits: keys 64 and values 1024 bytes including the NUL (PMI2_MAX_KEYLEN,
 * PMI2_MAX_VALLEN), the same as FMPL's bootstrap limits, so values go
 * unsplit.  The server does not unescape ';' in values; FMPL's values are
 * PMI-1 words (fmpl_pmi1_word_ok) and never hold ';' or '=', so nothing
 * needs encoding.  Every call is one request and one reply on a blocking
 * socket, as in pmi1.c. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_impl.h"
#include "bootstrap/jobid.h"
#include "bootstrap/pmi2_wire.h"
#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

_Static_assert(FMPL_BOOTSTRAP_VALUE_MAX <= FMPL_PMI2_VALLEN_MAX, "value limit");
_Static_assert(FMPL_BOOTSTRAP_KEY_MAX <= FMPL_PMI2_KEYLEN_MAX, "key limit");

typedef struct pmi2 {
    int fd;
    char jobid[FMPL_PMI2_JOBID_MAX]; /* the server's name for the job (job-getid) */
} pmi2;

static int read_exactly(int fd, const char *func, char *buf, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t r = read(fd, buf + off, len - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func,
                                     "cannot read from the launcher (PMI_FD %d): %s", fd,
                                     strerror(errno));
        if (r == 0)
            return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func,
                                     "the launcher closed the PMI connection");
        off += (size_t)r;
    }
    return FMPL_SUCCESS;
}

/* Send one length-prefixed command built from fmt. */
__attribute__((format(printf, 3, 4))) static int send_command(pmi2 *p, const char *func,
                                                              const char *fmt, ...)
{
    char msg[FMPL_PMI2_HEADER_LEN + FMPL_PMI2_MSG_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + FMPL_PMI2_HEADER_LEN, FMPL_PMI2_MSG_MAX + 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n > FMPL_PMI2_MSG_MAX)
        return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "PMI-2 command too long");
    fmpl_pmi2_header(msg, n);
    return fmpl_bootstrap_send_all(p->fd, func, msg, FMPL_PMI2_HEADER_LEN + (size_t)n);
}

/* Read one length-prefixed reply into msg[FMPL_PMI2_MSG_MAX + 1], NUL-ended. */
static int read_reply(pmi2 *p, const char *func, char *msg)
{
    char header[FMPL_PMI2_HEADER_LEN + 1];
    int rc = read_exactly(p->fd, func, header, FMPL_PMI2_HEADER_LEN);
    if (rc != FMPL_SUCCESS)
        return rc;
    header[FMPL_PMI2_HEADER_LEN] = '\0';
    int len = fmpl_pmi2_parse_header(header);
    if (len < 0 || len > FMPL_PMI2_MSG_MAX)
        return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func,
                                 "bad PMI-2 length header '%s' from the launcher", header);
    rc = read_exactly(p->fd, func, msg, (size_t)len);
    msg[rc == FMPL_SUCCESS ? len : 0] = '\0';
    return rc;
}

/* Read the reply to a command: it must be cmd=<cmd>, and rc (if present)
 * must be 0.  The reply is left in msg[FMPL_PMI2_MSG_MAX + 1]. */
static int expect(pmi2 *p, const char *func, const char *cmd, char *msg)
{
    int rc = read_reply(p, func, msg);
    if (rc != FMPL_SUCCESS)
        return rc;
    return fmpl_bootstrap_check_reply(func, msg, cmd, fmpl_pmi2_field, "errmsg");
}

static int p2_put(fmpl_bootstrap *bs, const char *key, const char *value)
{
    pmi2 *p = bs->impl;
    char full[FMPL_BOOTSTRAP_KEY_MAX], msg[FMPL_PMI2_MSG_MAX + 1];
    int rc = fmpl_bootstrap_full_key(__func__, bs->rank, key, full);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_bootstrap_check_value(__func__, value);
    if (rc == FMPL_SUCCESS)
        rc = send_command(p, __func__, "cmd=kvs-put;key=%s;value=%s;", full, value);
    if (rc == FMPL_SUCCESS)
        rc = expect(p, __func__, "kvs-put-response", msg);
    return rc;
}

static int p2_get(fmpl_bootstrap *bs, int rank, const char *key, char *value, size_t len)
{
    pmi2 *p = bs->impl;
    char full[FMPL_BOOTSTRAP_KEY_MAX], msg[FMPL_PMI2_MSG_MAX + 1], found[16];
    if (rank < 0 || rank >= bs->size)
        return FMPL_ERROR(FMPL_ERR_RANK, "rank %d outside 0..%d", rank, bs->size - 1);
    if (!value)
        return FMPL_ERROR(FMPL_ERR_ARG, "value buffer is NULL");
    int rc = fmpl_bootstrap_full_key(__func__, rank, key, full);
    if (rc == FMPL_SUCCESS)
        rc = send_command(p, __func__, "cmd=kvs-get;jobid=%s;srcid=%d;key=%s;", p->jobid,
                          bs->rank, full);
    if (rc == FMPL_SUCCESS)
        rc = expect(p, __func__, "kvs-get-response", msg);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (fmpl_pmi2_field(msg, "found", found, sizeof found) != 0 || strcmp(found, "TRUE") != 0)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "key '%s' not found (put, then fenced, by rank "
                          "%d?)", full, rank);
    int f = fmpl_pmi2_field(msg, "value", value, len);
    if (f == -2)
        return FMPL_ERROR(FMPL_ERR_ARG, "value of '%s' does not fit in %zu bytes", full, len);
    if (f != 0)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "kvs-get-response without a value: '%.200s'",
                          msg);
    return FMPL_SUCCESS;
}

/* PMI-2 has no separate barrier: a fence is one, and commits the puts. */
static int p2_fence(fmpl_bootstrap *bs)
{
    pmi2 *p = bs->impl;
    char msg[FMPL_PMI2_MSG_MAX + 1];
    int rc = send_command(p, __func__, "cmd=kvs-fence;");
    if (rc == FMPL_SUCCESS)
        rc = expect(p, __func__, "kvs-fence-response", msg);
    return rc;
}

__attribute__((noreturn)) static void p2_abort(fmpl_bootstrap *bs, int code, const char *message)
{
    pmi2 *p = bs->impl;
    /* Slurm logs no abort message and passes on no exit code (it kills the
     * step), so the reason goes to stderr here, where srun shows it. */
    fmpl_bootstrap_print_abort(bs->rank, code, message);
    if (p) { /* NULL after finalize: then only the fallback below is left */
        char text[256];
        fmpl_pmi2_sanitize(message ? message : "aborted", text, sizeof text);
        (void)send_command(p, __func__, "cmd=abort;isworld=TRUE;msg=%s;", text);
    }
    /* The server ends the job; exiting ourselves is the fallback. */
    _exit(fmpl_bootstrap_abort_status(code));
}

static int p2_finalize(fmpl_bootstrap *bs)
{
    pmi2 *p = bs->impl;
    if (!p)
        return FMPL_SUCCESS;
    char msg[FMPL_PMI2_MSG_MAX + 1];
    int rc = send_command(p, __func__, "cmd=finalize;");
    if (rc == FMPL_SUCCESS)
        rc = expect(p, __func__, "finalize-response", msg);
    close(p->fd);
    free(p);
    bs->impl = NULL;
    return rc;
}

static int int_field(const char *msg, const char *key, int *out)
{
    char buf[32], *end;
    if (fmpl_pmi2_field(msg, key, buf, sizeof buf) != 0)
        return -1;
    long v = strtol(buf, &end, 10);
    if (end == buf || *end || v < 0 || v > 1 << 30)
        return -1;
    *out = (int)v;
    return 0;
}

/* The PMI-1 style init line that tells the server to speak PMI-2. */
static int announce_version(pmi2 *p)
{
    static const char init[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    int rc = fmpl_bootstrap_send_all(p->fd, __func__, init, sizeof init - 1);
    if (rc != FMPL_SUCCESS)
        return rc;
    /* Byte by byte: the length-prefixed replies follow on the same socket. */
    char line[256];
    size_t n = 0;
    for (;;) {
        rc = read_exactly(p->fd, __func__, line + n, 1);
        if (rc != FMPL_SUCCESS)
            return rc;
        if (line[n] == '\n')
            break;
        if (++n == sizeof line - 1)
            return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "response to init too long");
    }
    line[n] = '\0';
    char rcval[16], version[16];
    if (fmpl_pmi1_field(line, "rc", rcval, sizeof rcval) != 0 || strcmp(rcval, "0") != 0 ||
        fmpl_pmi1_field(line, "pmi_version", version, sizeof version) != 0 ||
        strcmp(version, "2") != 0)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "the launcher does not accept PMI-2: '%.200s' "
                          "(set FMPL_PMI_VERSION=1 to use PMI-1)", line);
    return FMPL_SUCCESS;
}

static int handshake(fmpl_bootstrap *bs, pmi2 *p, const char *pmi_jobid)
{
    char msg[FMPL_PMI2_MSG_MAX + 1];
    int rc = announce_version(p);
    if (rc == FMPL_SUCCESS)
        rc = send_command(p, __func__, "cmd=fullinit;pmijobid=%s;pmirank=%d;threaded=FALSE;",
                          pmi_jobid, bs->rank);
    if (rc == FMPL_SUCCESS)
        rc = expect(p, __func__, "fullinit-response", msg);
    if (rc != FMPL_SUCCESS)
        return rc;
    int rank, size;
    if (int_field(msg, "rank", &rank) || int_field(msg, "size", &size) || size < 1 ||
        rank >= size)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "malformed fullinit-response '%.200s'", msg);
    if (rank != bs->rank || size != bs->size)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "the launcher says rank %d of %d, the environment "
                          "PMI_RANK=%d PMI_SIZE=%d", rank, size, bs->rank, bs->size);
    rc = send_command(p, __func__, "cmd=job-getid;");
    if (rc == FMPL_SUCCESS)
        rc = expect(p, __func__, "job-getid-response", msg);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (fmpl_pmi2_field(msg, "jobid", p->jobid, sizeof p->jobid) != 0 || !p->jobid[0])
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "malformed job-getid-response '%.200s'", msg);
    /* Slurm's id is "<job>.<step>": unique among the steps that can share
     * a node, which is what the shared-memory names need. */
    char named[FMPL_PMI2_JOBID_MAX + 8];
    snprintf(named, sizeof named, "pmi2-%s", p->jobid);
    fmpl_job_id_from_kvsname(named, bs->job_id);
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_pmi2_open(fmpl_bootstrap *bs, const char *pmi_fd)
{
    int fd = -1, rank = -1, size = 0;
    if (fmpl_bootstrap_pmi_env(pmi_fd, &fd, &rank, &size) != FMPL_SUCCESS)
        return FMPL_ERR_BOOTSTRAP;
    /* Slurm checks that pmijobid is present, not its value: a placeholder
     * serves when PMI_JOBID is missing (FMPL_PMI_VERSION=2 by hand). */
    const char *pmi_jobid = getenv("PMI_JOBID");
    if (!pmi_jobid || !*pmi_jobid || strpbrk(pmi_jobid, ";="))
        pmi_jobid = "0";
    pmi2 *p = calloc(1, sizeof *p);
    if (!p)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "out of memory");
    p->fd = fd;
    bs->rank = rank;
    bs->size = size;
    int rc = handshake(bs, p, pmi_jobid);
    if (rc != FMPL_SUCCESS) {
        free(p);
        return rc;
    }
    bs->launcher = "pmi2";
    bs->put = p2_put;
    bs->fence = p2_fence;
    bs->get = p2_get;
    bs->barrier = p2_fence;
    bs->abort = p2_abort;
    bs->finalize = p2_finalize;
    bs->impl = p;
    return FMPL_SUCCESS;
}
