/* Job ids and shared-memory names, shared by libfmpl and fmplrun.
 *
 * The PMI-1 bootstrap derives the job id from the launcher's kvsname, and
 * fmplrun removes /dev/shm/fmpl-<job_id>-* when a job ends; both must turn a
 * kvsname into the same job id, so the rule lives here, header-only.
 * Rule: keep [A-Za-z0-9._-], turn anything else into '_'; a kvsname too long
 * for the job id is cut and ends with a hash of the whole name, so two long
 * names sharing a prefix still give different ids. */
#ifndef FMPL_BOOTSTRAP_JOBID_H
#define FMPL_BOOTSTRAP_JOBID_H

#include "bootstrap/bootstrap.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FMPL_JOB_ID_MAX 128  /* = sizeof(fmpl_bootstrap.job_id) */

static inline void fmpl_job_id_from_kvsname(const char *kvsname, char out[FMPL_JOB_ID_MAX])
{
    const size_t keep = 100; /* characters kept from a too-long name */
    size_t n = strlen(kvsname);
    size_t m = n < FMPL_JOB_ID_MAX - 1 ? n : keep;
    for (size_t i = 0; i < m; i++) {
        char c = kvsname[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        out[i] = ok ? c : '_';
    }
    out[m] = '\0';
    if (m < n) {
        uint32_t h = 2166136261u; /* FNV-1a */
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)kvsname[i]) * 16777619u;
        snprintf(out + m, FMPL_JOB_ID_MAX - m, "-%08x", (unsigned)h);
    }
    if (m == 0)
        snprintf(out, FMPL_JOB_ID_MAX, "unnamed");
}

/* "/fmpl-<job_id>-": the name every shared-memory file of the job starts with
 * (as given to shm_open; in /dev/shm without the leading '/'). */
static inline void fmpl_shm_job_prefix(const char *job_id, char *out, size_t len)
{
    snprintf(out, len, "%s%s-", FMPL_SHM_PREFIX, job_id);
}

#endif
