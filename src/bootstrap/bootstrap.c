/* Bootstrap entry points: pick the implementation from the environment
 * (PMI_FD set: the PMI-1 client, which serves fmplrun and mpiexec.hydra;
 * else PMIX_RANK or PMIX_NAMESPACE set: the PMIx client, which serves Open
 * MPI's mpirun, if this build has PMIx support; otherwise a singleton), and
 * the argument checks shared by all. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_impl.h"
#include "bootstrap/jobid.h"
#include "bootstrap/pmi1_wire.h"
#include "base/error.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(((fmpl_bootstrap *)0)->job_id) == FMPL_JOB_ID_MAX,
               "jobid.h and bootstrap.h disagree on the job id size");
_Static_assert(FMPL_BOOTSTRAP_VALUE_MAX <= FMPL_PMI1_VALLEN_MAX, "value limit");
_Static_assert(FMPL_BOOTSTRAP_KEY_MAX <= FMPL_PMI1_KEYLEN_MAX, "key limit");

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
        rc = fmpl_bootstrap_pmi1_open(bs, pmi_fd);
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
}
