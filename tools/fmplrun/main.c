/* fmplrun: start an FMPL (or any PMI-1) job of N ranks on this machine or,
 * with --hosts / --hostfile, across hosts (head.c, proxy.c).  Parses the
 * command line, names the job, starts the ranks (or the proxies), serves
 * them until they are all gone, and removes the job's shared-memory files. */
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
    if (job.opt.proxy_head) { /* the job is named by its head */
        snprintf(job.kvsname, sizeof job.kvsname, "%s", job.opt.proxy_job);
        fmpl_job_id_from_kvsname(job.kvsname, job.job_id);
    } else {
        name_job(&job);
    }
    job.kvs = fr_kvs_new();
    job.ranks = calloc((size_t)job.n, sizeof *job.ranks);
    if (!job.kvs || !job.ranks || fr_signals_setup(&job) != 0) {
        fr_msg("cannot set up the launcher");
        return FR_EXIT_LAUNCHER;
    }
    if (job.opt.proxy_head) {
        int status = fr_proxy_main(&job);
        close(job.sigfd);
        fr_kvs_free(job.kvs);
        free(job.ranks);
        return status;
    }
    if (job.hosts)
        job.nlocal = 0; /* every rank runs under a proxy, even on this host */
    int spawn_status = job.hosts ? fr_head_start(&job) : fr_spawn(&job);
    if (spawn_status != 0) {
        job.exit_status = spawn_status;
        if (job.nalive > 0)
            fr_end_job(&job, SIGTERM, 300);
    }
    int status = fr_run(&job);
    fr_cleanup_shm(&job);
    fr_verbose(&job, 1, "job %s ended: exit status %d", job.kvsname, status);
    close(job.sigfd);
    fr_kvs_free(job.kvs);
    free(job.ranks);
    return status;
}
