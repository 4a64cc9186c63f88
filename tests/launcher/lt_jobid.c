/* Unit test of jobid.h, the rule libfmpl and fmplrun share to turn a
 * kvsname into a job id (and so into /dev/shm names): unsafe characters
 * become '_', long names are cut and end in a hash of the whole name. */
#include "bootstrap/jobid.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void expect_eq(const char *got, const char *want, const char *what)
{
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "lt_jobid: %s: got '%s', want '%s'\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    char id[FMPL_JOB_ID_MAX], id2[FMPL_JOB_ID_MAX], prefix[FMPL_JOB_ID_MAX + 16];
    fmpl_job_id_from_kvsname("fmplrun-123-0a1b2c3d", id);
    expect_eq(id, "fmplrun-123-0a1b2c3d", "fmplrun name kept");
    fmpl_job_id_from_kvsname("kvs_4281_0_1150628016_vm", id);
    expect_eq(id, "kvs_4281_0_1150628016_vm", "hydra name kept");
    fmpl_job_id_from_kvsname("a/b c:d$e", id);
    expect_eq(id, "a_b_c_d_e", "unsafe characters replaced");
    fmpl_job_id_from_kvsname("", id);
    expect_eq(id, "unnamed", "empty name");

    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    fmpl_job_id_from_kvsname(longname, id);
    longname[250] = 'y';
    fmpl_job_id_from_kvsname(longname, id2);
    if (strlen(id) >= FMPL_JOB_ID_MAX || strlen(id) <= 100 || strcmp(id, id2) == 0) {
        fprintf(stderr, "lt_jobid: long names: '%s' vs '%s'\n", id, id2);
        failures++;
    }
    fmpl_shm_job_prefix("job1", prefix, sizeof prefix);
    expect_eq(prefix, FMPL_SHM_PREFIX "job1-", "shm prefix");
    expect_eq(prefix, "/fmpl-job1-", "shm prefix spelled out");
    if (failures == 0)
        printf("lt_jobid: ok\n");
    return failures ? 1 : 0;
}
