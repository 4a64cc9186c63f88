/* fmplrun: FMPL's launcher.  Starts N ranks of a program, serves their PMI-1
 * requests, and ends the whole job as soon as one rank fails.  Standalone:
 * it links nothing from libfmpl, only shares header-only protocol helpers
 * with src/bootstrap.  One thread; one poll loop; no busy waiting. */
#ifndef FMPLRUN_H
#define FMPLRUN_H

#include "bootstrap/jobid.h"
#include "bootstrap/pmi1_wire.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FR_MAX_RANKS 4096

/* Exit statuses of fmplrun itself (a failing rank's own status otherwise). */
#define FR_EXIT_TIMEOUT 124
#define FR_EXIT_LAUNCHER 125   /* usage error or launcher failure */
#define FR_EXIT_NOEXEC 126     /* program found but not executable */
#define FR_EXIT_NOTFOUND 127   /* program not found */

enum { FR_BIND_DEFAULT, FR_BIND_CORE, FR_BIND_NONE };

typedef struct fr_options {
    int nranks;
    int bind;
    int tag_output;
    double timeout;  /* seconds; 0: none */
    int verbose;
    char **argv;     /* program and its arguments, NULL-terminated */
} fr_options;

/* One rank's stdout or stderr relayed line by line (--tag-output). */
typedef struct fr_stream {
    int fd;          /* read end of the rank's pipe; -1 when closed */
    int dest;        /* STDOUT_FILENO or STDERR_FILENO */
    size_t len;
    char *buf;       /* FR_STREAM_BUF bytes */
} fr_stream;
#define FR_STREAM_BUF 65536

typedef struct fr_rank {
    int rank;
    pid_t pid;
    int alive;       /* not reaped yet */
    int status;      /* wait status once reaped */
    int cpu;         /* CPU it is bound to, or -1 */
    int pmi_fd;      /* our end of its PMI socket; -1 when closed */
    int in_barrier;
    int finalized;
    int reported;    /* its failure is already in the report */
    int skip_line;   /* discarding the rest of an over-long request */
    size_t pmi_len;
    char pmi_buf[FMPL_PMI1_LINE_MAX];
    fr_stream out, err;
} fr_rank;

typedef struct fr_kvs fr_kvs;

typedef struct fr_job {
    fr_options opt;
    char kvsname[FMPL_PMI1_KVSNAME_MAX];
    char job_id[FMPL_JOB_ID_MAX];
    int n;
    fr_rank *ranks;
    int nalive;
    pid_t pgid;
    int sigfd;             /* signalfd for SIGCHLD and the forwarded signals */
    sigset_t child_mask;   /* signal mask to restore in the ranks */
    fr_kvs *kvs;
    int barrier_count;     /* ranks inside the current PMI barrier */
    uint64_t deadline;     /* --timeout, monotonic ns; 0: none */

    /* Failures seen in the current loop iteration, reported as one line. */
    char fail_text[1024];
    int fail_status;       /* exit status of the first, -1 when none pending */

    int ending;            /* the job is being torn down */
    int exit_status;
    uint64_t kill_at;      /* when to escalate to SIGKILL; 0: done */
} fr_job;

/* args.c */
/* -1: run the job; otherwise exit with the returned status (--help: 0). */
int fr_parse_args(int argc, char **argv, fr_options *opt);

/* spawn.c: fork and exec every rank; returns 0 or an exit status. */
int fr_spawn(fr_job *job);

/* pmi_server.c */
void fr_pmi_readable(fr_job *job, fr_rank *r);  /* one read, then serve lines */
void fr_pmi_drain(fr_job *job, fr_rank *r);     /* serve all buffered requests */
/* Release the barrier when all ranks are in it; fail the job when a rank
 * that has not entered it is gone (the barrier could never complete). */
void fr_pmi_barrier_check(fr_job *job);

/* kvs.c */
fr_kvs *fr_kvs_new(void);
int fr_kvs_put(fr_kvs *kvs, const char *key, const char *value);
const char *fr_kvs_get(fr_kvs *kvs, const char *key);
void fr_kvs_free(fr_kvs *kvs);

/* output.c */
int fr_stream_open(fr_stream *s, int fd, int dest);
void fr_stream_readable(fr_stream *s, int rank);  /* relay complete lines */
void fr_stream_close(fr_stream *s, int rank);     /* flush the tail, close */

/* loop.c */
int fr_signals_setup(fr_job *job);  /* block the signals we read from sigfd */
int fr_run(fr_job *job);   /* serve until every rank is gone; exit status */
/* Record rank r's failure (r may be NULL); all failures seen in one loop
 * iteration are reported together in one line, then the job is ended. */
void fr_fail(fr_job *job, fr_rank *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void fr_end_job(fr_job *job, int sig, int grace_ms);
uint64_t fr_now_ns(void);

/* cleanup.c */
void fr_cleanup_shm(const fr_job *job);

/* Messages: "fmplrun: ..." on stderr, one write per line. */
void fr_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define fr_verbose(job, level, ...)                                                 \
    do {                                                                            \
        if ((job)->opt.verbose >= (level))                                          \
            fr_msg(__VA_ARGS__);                                                    \
    } while (0)

#endif
