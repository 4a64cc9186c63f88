/* Launcher test rank that fails on purpose, so the driver can check how
 * fmplrun ends a job.  Every rank records its pid in PIDDIR (pid.<pid>),
 * rank 0 records the job id (PIDDIR/jobid), and every rank creates a
 * shared-memory file named like the library's, /fmpl-<job_id>-lt-<rank>,
 * which fmplrun must remove.  After a fence, rank FAILRANK fails by MODE:
 *   exit3  exit(3)          segv   killed by SIGSEGV
 *   abort  bootstrap abort with code 7
 *   exit0  exit(0) without finalize while the others wait in a barrier
 *   hang   nothing: everyone blocks (for --timeout)
 *   sleep  nothing: everyone sleeps and dies on SIGTERM (signal forwarding)
 * The other ranks block: even ranks in a PMI barrier, odd ranks in pause()
 * with SIGTERM ignored, so the launcher's SIGKILL escalation is exercised.
 *
 * usage: lt_fail MODE FAILRANK PIDDIR */
#include "bootstrap/bootstrap.h"
#include "bootstrap/jobid.h"
#include "base/error.h"
#include "base/log.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static fmpl_bootstrap *bs; /* global so leak checkers see it on exit() */

static void die(const char *what)
{
    fprintf(stderr, "lt_fail: %s\n", what);
    exit(90);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        die("cannot write to PIDDIR");
}

static void block_forever(int ignore_term)
{
    if (ignore_term)
        signal(SIGTERM, SIG_IGN);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc != 4)
        die("usage: lt_fail MODE FAILRANK PIDDIR");
    const char *mode = argv[1], *dir = argv[3];
    int failrank = atoi(argv[2]);
    fmpl_log_init();
    fmpl_error_init();
    if (fmpl_bootstrap_init(&bs) != FMPL_SUCCESS)
        die("bootstrap init failed");

    char path[4096], text[256];
    snprintf(path, sizeof path, "%s/pid.%ld", dir, (long)getpid());
    snprintf(text, sizeof text, "%d\n", bs->rank);
    write_file(path, text);
    if (bs->rank == 0) {
        snprintf(path, sizeof path, "%s/jobid", dir);
        snprintf(text, sizeof text, "%s\n", bs->job_id);
        write_file(path, text);
    }
    char shm[FMPL_JOB_ID_MAX + 64];
    fmpl_shm_job_prefix(bs->job_id, shm, sizeof shm);
    snprintf(shm + strlen(shm), sizeof shm - strlen(shm), "lt-%d", bs->rank);
    int fd = shm_open(shm, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0)
        die("cannot create the shared-memory file");
    close(fd);
    if (bs->fence(bs) != FMPL_SUCCESS)
        die("fence failed");

    if (strcmp(mode, "sleep") == 0)
        block_forever(0);
    if (bs->rank == failrank) {
        if (strcmp(mode, "exit3") == 0)
            exit(3);
        if (strcmp(mode, "exit0") == 0)
            exit(0);
        if (strcmp(mode, "segv") == 0) {
            struct rlimit none = {0, 0};
            setrlimit(RLIMIT_CORE, &none);
            signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler */
            raise(SIGSEGV);
        }
        if (strcmp(mode, "abort") == 0)
            bs->abort(bs, 7, "lt_fail: deliberate abort");
        if (strcmp(mode, "hang") != 0)
            die("unknown mode");
    }
    if (strcmp(mode, "exit0") == 0 || bs->rank % 2 == 0) {
        bs->barrier(bs); /* never completes */
        die("barrier returned although a rank never entered it");
    }
    block_forever(1);
}
