/* After the job, remove the shared-memory files it left in /dev/shm: every
 * name starting with "fmpl-<job_id>-" (FMPL_SHM_PREFIX without its '/').
 * Ranks that were killed cannot unlink their own files, so the launcher
 * does it whatever way the job ended. */
#include "fmplrun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

void fr_cleanup_shm(const fr_job *job)
{
    char prefix[FMPL_JOB_ID_MAX + 16];
    fmpl_shm_job_prefix(job->job_id, prefix, sizeof prefix);
    const char *name_prefix = prefix + 1; /* drop the leading '/' */
    size_t plen = strlen(name_prefix);

    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, name_prefix, plen) != 0)
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
        else if (errno != ENOENT)
            fr_msg("cannot remove /dev/shm/%s: %s", e->d_name, strerror(errno));
    }
    closedir(d);
    fr_verbose(job, 1, "removed %d leftover shared-memory file(s) /dev/shm/%s*", removed,
               name_prefix);
}
