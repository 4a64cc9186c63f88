/* fmplrun: start an FMPL (or any PMI-1) job of N ranks on this machine or,
 * with --hosts / --hostfile, across hosts (head.c, proxy.c).  Parses the
 * command line, names the job, starts the ranks (or the proxies), serves
 * them and the processes they spawn until they are all gone, and removes
 * the job's shared-memory files. */
#include "fmplrun.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void fr_msg(const char *fmt, ...)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "fmplrun: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
    (void)ignored;
}

static void name_job(fr_job *job)
{
    uint32_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)fr_now_ns() ^ (uint32_t)time(NULL);
    snprintf(job->kvsname, sizeof job->kvsname, "fmplrun-%ld-%08x", (long)getpid(), (unsigned)r);
    fmpl_job_id_from_kvsname(job->kvsname, job->job_id);
}

/* MPI_UNIVERSE_SIZE: --universe-size, else what the job may usefully run:
 * the slots across hosts, this machine's CPUs on one; never below N. */
static int universe_size(const fr_job *job)
{
    if (job->opt.universe_size > 0)
        return job->opt.universe_size;
    long room = 0;
    if (job->hosts)
        for (int h = 0; h < job->nhosts; h++)
            room += job->hosts[h].slots;
    else
        room = sysconf(_SC_NPROCESSORS_ONLN);
    if (room > FR_MAX_RANKS)
        room = FR_MAX_RANKS;
    return room > job->n ? (int)room : job->n;
}

static void free_job(fr_job *job)
{
    close(job->sigfd);
    fr_kvs_free(job->kvs);
    fr_kvs_free(job->names);
    fr_queues_free(job->queues);
    for (int g = 0; job->groups && g < job->ngroups; g++)
        fr_kvs_free(job->groups[g].preput);
    free(job->groups);
    free(job->ranks);
    free(job->cpus);
}

int main(int argc, char **argv)
{
    static fr_job job; /* large (per-rank buffers live in ranks[]) */
    int rc = fr_parse_args(argc, argv, &job.opt);
    if (rc >= 0)
        return rc;
    job.fail_status = -1;
    job.sigfd = job.listen_fd = job.head.fd = -1;
    signal(SIGPIPE, SIG_IGN); /* a rank or reader gone is seen as EPIPE */
    if ((job.opt.hosts || job.opt.hostfile) && (rc = fr_hosts_plan(&job)) != 0)
        return rc;
    job.n = job.opt.nranks;
    job.first = 0;
    job.nlocal = job.n;
    if (job.opt.universe_size > 0 && job.opt.universe_size < job.n) {
        fr_msg("--universe-size %d is smaller than the job's %d ranks", job.opt.universe_size,
               job.n);
        return FR_EXIT_LAUNCHER;
    }
    job.universe_size = universe_size(&job);
    if (job.opt.proxy_head) { /* the job is named by its head */
        snprintf(job.kvsname, sizeof job.kvsname, "%s", job.opt.proxy_job);
        fmpl_job_id_from_kvsname(job.kvsname, job.job_id);
    } else {
        name_job(&job);
    }
    job.kvs = fr_kvs_new();
    job.names = fr_kvs_new();
    job.queues = fr_queues_new();
    /* Room for every process the job may ever have (spawns add some), so
     * that no fr_rank moves while it is being served; untouched pages cost
     * nothing. */
    job.ranks = calloc(FR_MAX_RANKS, sizeof *job.ranks);
    job.groups = calloc(FR_MAX_RANKS, sizeof *job.groups);
    if (!job.kvs || !job.names || !job.queues || !job.ranks || !job.groups ||
        fr_signals_setup(&job) != 0) {
        fr_msg("cannot set up the launcher");
        return FR_EXIT_LAUNCHER;
    }
    job.groups[0] = (fr_group){.first = 0, .size = job.n};
    job.ngroups = 1;
    job.nprocs = job.n;
    if (job.opt.proxy_head) {
        int status = fr_proxy_main(&job);
        free_job(&job);
        return status;
    }
    if (job.hosts)
        job.nlocal = 0; /* every rank runs under a proxy, even on this host */
    /* Whether the job spans hosts, for every process, spawned ones too (the
     * proxies get it with the rest of this environment): the library then
     * opens its network backend in every world, so that worlds on
     * different hosts can link later.  An outer job's value must not leak
     * into this one. */
    if (job.hosts && job.nhosts > 1) {
        char hosts[16];
        snprintf(hosts, sizeof hosts, "%d", job.nhosts);
        setenv("FMPL_JOB_HOSTS", hosts, 1);
    } else {
        unsetenv("FMPL_JOB_HOSTS");
    }
    int spawn_status = job.hosts ? fr_head_start(&job) : fr_spawn(&job);
    if (spawn_status != 0) {
        job.exit_status = spawn_status;
        if (job.nalive > 0)
            fr_end_job(&job, SIGTERM, 300);
    }
    int status = fr_run(&job);
    fr_cleanup_shm(&job);
    fr_verbose(&job, 1, "job %s ended: exit status %d", job.kvsname, status);
    free_job(&job);
    return status;
}
