/* Bootstrap entry points: pick the implementation from the environment,
 * and the argument checks shared by all.
 *
 * The rule, in order:
 *   1. PMI_FD set: a PMI server waits on that socket.  fmplrun, Hydra
 *      (mpiexec.hydra) and Slurm's srun --mpi=pmi2 all set PMI_FD, PMI_RANK
 *      and PMI_SIZE, so those alone do not tell the protocol:
 *        - FMPL_PMI_VERSION=1 or 2 chooses by hand;
 *        - else (auto) PMI-2 when SLURM_MPI_TYPE=pmi2 and PMI_JOBID is set
 *          and FMPL_LAUNCHER is not "fmplrun".  srun's pmi2 plugin sets both
 *          for each task (PMI_JOBID="<job>.<step>"); Hydra sets neither, and
 *          sbatch's batch shell, where mpiexec.hydra runs, has no
 *          SLURM_MPI_TYPE.  fmplrun marks its ranks with FMPL_LAUNCHER, which
 *          wins even inside an srun step.  (Hydra 4.0 accepts the PMI-2
 *          handshake but its fence does not order the ranks' start-up and
 *          it refuses abort, so "2" is for Slurm only);
 *        - otherwise PMI-1 (fmplrun, Hydra).
 *   2. PMIX_RANK or PMIX_NAMESPACE set: the PMIx client (Open MPI's mpirun,
 *      srun --mpi=pmix), if this build has PMIx support, else an error.
 *   3. Nothing: a singleton. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_impl.h"
#include "bootstrap/jobid.h"
#include "bootstrap/pmi1_wire.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(((fmpl_bootstrap *)0)->job_id) == FMPL_JOB_ID_MAX,
               "jobid.h and bootstrap.h disagree on the job id size");
_Static_assert(FMPL_BOOTSTRAP_VALUE_MAX <= FMPL_PMI1_VALLEN_MAX, "value limit");
_Static_assert(FMPL_BOOTSTRAP_KEY_MAX <= FMPL_PMI1_KEYLEN_MAX, "key limit");

FMPL_TUNABLE(tunable_pmi_version, "FMPL_PMI_VERSION", "auto",
             "PMI wire protocol when PMI_FD is set: auto (PMI-2 under srun --mpi=pmi2, "
             "else PMI-1), 1, or 2 (Slurm's pmi2 server only)");

/* PMI-2 under PMI_FD?  The rule is at the top of this file. */
static int pmi2_wanted(void)
{
    static const char *const choices[] = {"auto", "1", "2", NULL};
    switch (fmpl_tunable_choice(&tunable_pmi_version, choices)) {
    case 1:
        return 0;
    case 2:
        return 1;
    default: {
        const char *mpi_type = getenv("SLURM_MPI_TYPE"), *jobid = getenv("PMI_JOBID");
        const char *launcher = getenv("FMPL_LAUNCHER");
        return mpi_type && strcmp(mpi_type, "pmi2") == 0 && jobid && *jobid &&
               !(launcher && strcmp(launcher, "fmplrun") == 0);
    }
    }
}

/* Started by a PMIx server (mpirun of Open MPI, srun --mpi=pmix, prterun). */
static int pmix_environment(void)
{
    const char *rank = getenv("PMIX_RANK"), *nspace = getenv("PMIX_NAMESPACE");
    return (rank && *rank) || (nspace && *nspace);
}

int fmpl_bootstrap_init(fmpl_bootstrap **bsp)
{
    if (!bsp)
        return FMPL_ERROR(FMPL_ERR_ARG, "bs is NULL");
    *bsp = NULL;
    fmpl_bootstrap *bs = calloc(1, sizeof *bs);
    if (!bs)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "out of memory");
    const char *pmi_fd = getenv("PMI_FD");
    int rc;
    if (pmi_fd && *pmi_fd)
        rc = pmi2_wanted() ? fmpl_bootstrap_pmi2_open(bs, pmi_fd)
                           : fmpl_bootstrap_pmi1_open(bs, pmi_fd);
    else if (pmix_environment())
#ifdef FMPL_HAVE_PMIX
        rc = fmpl_bootstrap_pmix_open(bs);
#else
        /* Running each rank as its own singleton would look like success
         * while the job silently falls apart: refuse instead. */
        rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP,
                        "started by a PMIx process manager (PMIX_RANK/PMIX_NAMESPACE are set, "
                        "e.g. by Open MPI's mpirun), but this FMPL was built without PMIx "
                        "support; rebuild with libpmix-dev installed, or start the program "
                        "with fmplrun or mpiexec.hydra");
#endif
    else
        rc = fmpl_bootstrap_singleton_open(bs);
    if (rc != FMPL_SUCCESS) {
        free(bs);
        return FMPL_ERR_BOOTSTRAP;
    }
    if (bs->universe_base == 0) /* no spawned worlds: the universe is the world */
        bs->universe_rank = bs->rank;
    if (bs->universe_size < bs->size)
        bs->universe_size = bs->size;
    fmpl_log_set_rank(bs->rank);
    fmpl_log_debug("bootstrap: rank %d of %d, launcher %s, job %s", bs->rank, bs->size,
                   bs->launcher, bs->job_id);
    *bsp = bs;
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_has_pmix(void)
{
#ifdef FMPL_HAVE_PMIX
    return 1;
#else
    return 0;
#endif
}

int fmpl_bootstrap_finalize(fmpl_bootstrap **bsp)
{
    if (!bsp || !*bsp)
        return FMPL_ERROR(FMPL_ERR_ARG, "no bootstrap to finalize");
    fmpl_bootstrap *bs = *bsp;
    int rc = bs->finalize(bs); /* frees bs->impl */
    free(bs);
    *bsp = NULL;
    return rc;
}

/* Parse a non-negative decimal environment variable. */
static int env_int(const char *name, const char *text, int *out)
{
    char *end;
    if (!text || !*text)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMI_FD is set but %s is not", name);
    long v = strtol(text, &end, 10);
    if (*end || v < 0 || v > 1 << 30)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "%s='%s' is not a valid number", name, text);
    *out = (int)v;
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_pmi_env(const char *pmi_fd, int *fd, int *rank, int *size)
{
    if (env_int("PMI_FD", pmi_fd, fd) || env_int("PMI_RANK", getenv("PMI_RANK"), rank) ||
        env_int("PMI_SIZE", getenv("PMI_SIZE"), size))
        return FMPL_ERR_BOOTSTRAP;
    if (*size < 1 || *rank >= *size)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMI_RANK=%d is not below PMI_SIZE=%d", *rank,
                          *size);
    if (fcntl(*fd, F_SETFD, FD_CLOEXEC) != 0) /* programs we exec must not hold it */
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMI_FD=%d is not an open descriptor: %s", *fd,
                          strerror(errno));
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_send_all(int fd, const char *func, const char *buf, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, buf + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func,
                                     "cannot write to the launcher (PMI_FD %d): %s", fd,
                                     strerror(errno));
        off += (size_t)w;
    }
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_check_reply(const char *func, const char *reply, const char *cmd,
                               fmpl_pmi_field_fn field, const char *msg_key)
{
    char got[64], rcval[16], msg[256];
    if (field(reply, "cmd", got, sizeof got) != 0 || strcmp(got, cmd) != 0)
        return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func,
                                 "expected cmd=%s from the launcher, got '%.200s'", cmd, reply);
    if (field(reply, "rc", rcval, sizeof rcval) == 0 && strcmp(rcval, "0") != 0) {
        if (field(reply, msg_key, msg, sizeof msg) != 0)
            strcpy(msg, "no message");
        return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "launcher refused (rc=%s): %s",
                                 rcval, msg);
    }
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_full_key(const char *func, int rank, const char *key, char *full)
{
    if (!key)
        return fmpl_error_report(FMPL_ERR_ARG, func, "key is NULL");
    if (!fmpl_pmi1_word_ok(key))
        return fmpl_error_report(FMPL_ERR_ARG, func,
                                 "key '%.80s' is empty or has characters other than "
                                 "letters, digits and -_.:,/+@",
                                 key);
    int n = snprintf(full, FMPL_BOOTSTRAP_KEY_MAX, "%d.%s", rank, key);
    if (n < 0 || n >= FMPL_BOOTSTRAP_KEY_MAX)
        return fmpl_error_report(FMPL_ERR_ARG, func,
                                 "key '%.80s' is too long (with the rank prefix it must "
                                 "stay under %d characters)",
                                 key, FMPL_BOOTSTRAP_KEY_MAX);
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_check_value(const char *func, const char *value)
{
    if (!value)
        return fmpl_error_report(FMPL_ERR_ARG, func, "value is NULL");
    if (strlen(value) >= FMPL_BOOTSTRAP_VALUE_MAX)
        return fmpl_error_report(FMPL_ERR_ARG, func, "value of %zu characters is too long "
                                 "(limit %d)", strlen(value), FMPL_BOOTSTRAP_VALUE_MAX - 1);
    if (!fmpl_pmi1_word_ok(value))
        return fmpl_error_report(FMPL_ERR_ARG, func,
                                 "value is empty or has characters other than letters, "
                                 "digits and -_.:,/+@ (PMI-1 values cannot hold spaces)");
    return FMPL_SUCCESS;
}

void fmpl_bootstrap_print_abort(int rank, int code, const char *message)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "fmpl[%d] abort: %s (exit code %d)\n", rank,
                     message ? message : "(no message)", fmpl_bootstrap_abort_status(code));
    if (n < 0)
        return;
    if (n >= (int)sizeof line) {
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
    (void)ignored;
    /* The abort request to the launcher follows at once, on another
     * connection, and a launcher that tears the job down on it can drop
     * this line still in the pipe (Hydra did, in CI): give its output
     * forwarding a head start. */
    struct timespec head_start = {0, 50 * 1000 * 1000};
    nanosleep(&head_start, NULL);
}
