/* fmplrun: FMPL's launcher.  Starts N ranks of a program, serves their PMI-1
 * requests, and ends the whole job as soon as one rank fails.  Standalone:
 * it links nothing from libfmpl, only shares header-only protocol helpers
 * with src/bootstrap.  One thread; one poll loop; no busy waiting.
 *
 * Across hosts (--hosts, --hostfile) the same program plays two parts:
 *   head   the fmplrun the user started: the PMI server of the whole job
 *          (key-value store, barriers) and its failure judge;
 *   proxy  one per host, `fmplrun --proxy ...` started through ssh (or
 *          --launcher-exec): starts that host's ranks, relays their PMI
 *          lines to the head over TCP, reports their exits, kills them when
 *          told to or when it loses the head.  See head.c and proxy.c.
 *
 * MPI dynamic processes (dynamic.c): a process may ask for new processes
 * (PMI-1 mcmd=spawn); across hosts the head places them on the job's hosts
 * and each host's proxy starts its share (head.c, proxy.c).  Every process of the job has a universe index, its
 * slot in job->ranks: the initial ranks 0..n-1, then each spawn's processes
 * in turn, never reused.  Each spawn makes one group, a world of its own
 * (group 0: the initial ranks); all groups share the job's kvsname and
 * key-value store, barriers are per group.  Name publishing and FMPL's
 * rendezvous queues (names.c) serve MPI_Comm_connect/accept. */
#ifndef FMPLRUN_H
#define FMPLRUN_H

#include "bootstrap/jobid.h"
#include "bootstrap/pmi1_wire.h"

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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
    int universe_size; /* --universe-size; 0: the default */
    char **argv;     /* program and its arguments, NULL-terminated */
    /* Across hosts (head). */
    const char *hosts;          /* --hosts h1[:slots],h2[:slots],... */
    const char *hostfile;       /* --hostfile FILE */
    const char *launcher_exec;  /* --launcher-exec CMD (default: ssh) */
    const char *head_address;   /* --head-address: where proxies connect */
    double connect_timeout;     /* seconds a proxy has to connect */
    /* Proxy (internal: started by the head). */
    const char *proxy_head;     /* --proxy HOST:PORT */
    const char *proxy_job;      /* --proxy-job KVSNAME */
    const char *proxy_wdir;     /* --proxy-wdir DIR */
    int proxy_host;             /* --proxy-host INDEX */
    int proxy_first, proxy_count; /* --proxy-ranks FIRST:COUNT */
} fr_options;

/* One rank's stdout or stderr relayed line by line (--tag-output). */
typedef struct fr_stream {
    int fd;          /* read end of the rank's pipe; -1 when closed */
    int dest;        /* STDOUT_FILENO or STDERR_FILENO */
    char tag[32];    /* "[r] ", "[g:r] ", or "" (a proxy's, tagged already) */
    size_t len;
    char *buf;       /* FR_STREAM_BUF bytes */
} fr_stream;
#define FR_STREAM_BUF 65536

typedef struct fr_spawn_req fr_spawn_req;

/* One process of the job: job->ranks[rank], rank being its universe index. */
typedef struct fr_rank {
    int rank;        /* universe index (= world rank in group 0) */
    int group;       /* its group: 0 for the initial ranks */
    int world_rank;  /* rank in its group's world */
    int appnum;      /* index of its command within its spawn (0: initial) */
    int local_id;    /* spawned: its index among its group's processes on its */
    int local_n;     /*   host, and how many of them run there */
    int starting;    /* head: placed by a spawn, its host has not answered */
    char label[24];  /* "r" in group 0, "g:r" in group g: tags, messages */
    int host;        /* head: index in job->hosts; -1: started here */
    pid_t pid;
    int alive;       /* not reaped yet */
    int status;      /* wait status once reaped */
    int cpu;         /* CPU it is bound to, or -1 */
    int pmi_fd;      /* our end of its PMI socket; -1 when closed */
    int in_barrier;
    int finalized;
    int reported;    /* its failure is already in the report */
    int skip_line;   /* discarding the rest of an over-long request */
    fr_spawn_req *mcmd; /* a multi-line request being received, or NULL */
    size_t pmi_len;
    char pmi_buf[FMPL_PMI1_LINE_MAX];
    fr_stream out, err;
} fr_rank;

typedef struct fr_kvs fr_kvs;
typedef struct fr_queues fr_queues;

/* A world: group 0 holds the initial ranks, each spawn makes one more. */
typedef struct fr_group {
    int first, size;     /* its processes: universe indices [first, first + size) */
    int barrier_count;   /* members inside its current PMI barrier */
    fr_kvs *preput;      /* the spawn's preput keys (found before the shared
                            store by its members' gets); NULL: none */
    /* Head across hosts, while the hosts start it: */
    int spawner;         /* universe index waiting for the answer; -1: none */
    int pending;         /* hosts that have not answered yet */
    char *err;           /* the first host's refusal (malloc'd), or NULL */
} fr_group;

/* One command of a spawn request, ready to start. */
typedef struct fr_app {
    int nprocs;
    char path[4096];     /* the program, resolved to an absolute path */
    char **argv;         /* argv[0]: the execname as requested */
    const char *wdir;    /* NULL: fmplrun's working directory */
    const char *search;  /* info path: where to look for it; NULL: $PATH */
} fr_app;

/* A line-oriented TCP connection between the head and a proxy. */
typedef struct fr_conn {
    int fd;          /* -1 when closed */
    size_t len;
    char buf[FMPL_PMI1_LINE_MAX + 64];
} fr_conn;

/* Head: one host of the job and its proxy. */
typedef struct fr_host {
    char name[256];
    int slots;
    int first, count;   /* its initial ranks */
    int started;        /* its launcher was started (at start-up when it has
                           initial ranks, else at the first spawn onto it) */
    uint64_t connect_by; /* its proxy's deadline to connect */
    char *backlog;      /* spawn lines waiting for its proxy to connect */
    size_t backlog_len;
    pid_t pid;          /* the launcher process (ssh, --launcher-exec, or the proxy) */
    int alive;          /* that process not reaped yet */
    pid_t cleanup_pid;  /* after the host was lost: removing its /dev/shm files */
    int status;
    int stdin_fd;       /* the secret goes in here */
    fr_conn conn;       /* once its proxy has authenticated */
    int connected;
    int ready;          /* its proxy started its ranks ("UP"): spawn lines may go */
    int lost;           /* reported lost */
    uint64_t gone_at;   /* its launcher ended with ranks unreported: lost then,
                           unless its connection ends first (0: not so) */
    char gone_why[128];
    fr_stream out, err; /* the proxy's stdout, stderr (the ranks' output) */
} fr_host;

typedef struct fr_job {
    fr_options opt;
    char kvsname[FMPL_PMI1_KVSNAME_MAX];
    char job_id[FMPL_JOB_ID_MAX];
    int n;                 /* initial ranks (group 0) */
    int nprocs;            /* universe indices used: initial plus spawned */
    fr_rank *ranks;        /* FR_MAX_RANKS slots, so pointers stay valid */
    fr_group *groups;      /* FR_MAX_RANKS slots */
    int ngroups;
    int universe_size;     /* get_universe_size's answer */
    int nalive;
    int sigfd;             /* signalfd for SIGCHLD and the forwarded signals */
    sigset_t child_mask;   /* signal mask to restore in the ranks */
    fr_kvs *kvs;
    fr_kvs *names;         /* published service names -> ports */
    fr_queues *queues;     /* FMPL's rendezvous queues */
    uint64_t deadline;     /* --timeout, monotonic ns; 0: none */

    /* Failures seen in the current loop iteration, reported as one line. */
    char fail_text[1024];
    int fail_status;       /* exit status of the first, -1 when none pending */

    int ending;            /* the job is being torn down */
    int exit_status;
    uint64_t kill_at;      /* when to escalate to SIGKILL; 0: done */

    /* The ranks this process starts: [first, first + nlocal). */
    int first, nlocal;
    /* Binding in force after the start (spawned processes follow it). */
    int bound;             /* 1: each process pinned to one CPU */
    int *cpus, ncpus;      /* the CPUs we may use */

    /* Head across hosts. */
    fr_host *hosts;        /* NULL: one host, no proxies */
    int nhosts;
    int listen_fd;
    char secret[33];
    fr_conn *pending;      /* connections not yet authenticated */
    int npending;
    int nhosts_alive;      /* launcher processes not reaped */
    uint64_t proxy_kill_at; /* after the ranks: when to kill slow proxies */
    uint64_t cleanup_kill_at; /* when to give up the lost hosts' cleanups */
    char head_addr[300];   /* what the proxies connect to: HOST:PORT */
    int quit_sent;         /* every process gone: the proxies were told to quit */

    /* Proxy. */
    fr_conn head;          /* head.fd >= 0 in a proxy */
    int quit;              /* the head said the job is over ("Q") */
} fr_job;

/* args.c */
/* -1: run the job; otherwise exit with the returned status (--help: 0). */
int fr_parse_args(int argc, char **argv, fr_options *opt);

/* spawn.c: fork and exec every rank; returns 0 or an exit status. */
int fr_spawn(fr_job *job);
/* Fill in job->ranks[idx]'s identity; no descriptors, not started. */
void fr_process_init(fr_job *job, int idx, int group, int world_rank, int appnum);
/* errno-style result of looking PROG up like execvp would: in DIRS
 * (colon-separated; NULL: $PATH) unless it holds a '/'.  BASE (NULL: none)
 * is the directory relative names are taken from; the result is then
 * absolute. */
int fr_resolve_program(const char *prog, const char *dirs, const char *base, char *path,
                       size_t len);
/* Start a new group of the apps' processes (universe indices from
 * job->nprocs on, consecutive), preput (NULL: none) becoming its own.  Its
 * group index, or -1 with the reason in err (nothing of the group is left
 * running then). */
int fr_spawn_group(fr_job *job, const fr_app *apps, int napps, fr_kvs *preput, char *err,
                   size_t errlen);
/* Find app a's program (a->path) where it will run: in a->search or $PATH,
 * relative names from a->wdir (else our directory), which must be a
 * directory we can enter.  0, or -1 with the reason in err. */
int fr_app_resolve(fr_app *a, char *err, size_t errlen);
/* Start the processes members[0..count) (initialised: identity, local_id,
 * local_n), member i running app[i], here.  0, or -1 with the reason in err
 * (then none of them is left running: those started are killed, marked
 * reported). */
int fr_start_members(fr_job *job, const int *members, const fr_app *const *app, int count,
                     char *err, size_t errlen);

/* dynamic.c: requests of several lines (mcmd=spawn ... endcmd). */
int fr_mcmd_line(fr_job *job, fr_rank *r, const char *line); /* 1: it was one of those */
void fr_mcmd_free(fr_rank *r);
/* Head across hosts: host `host` answered its share of group g's start
 * (err NULL: started); when every host has, answer the spawner. */
void fr_spawn_host_answered(fr_job *job, int g, int host, const char *err);

/* names.c: name publishing and rendezvous queues. */
fr_queues *fr_queues_new(void);
void fr_queues_free(fr_queues *q);
/* 0, -1: out of memory or too many queued values. */
int fr_queue_post(fr_queues *q, const char *queue, const char *value);
/* The oldest value of the queue, removed (free it), or NULL when empty. */
char *fr_queue_take(fr_queues *q, const char *queue);
/* Serve the name and queue commands; 1 if cmd was one of them. */
int fr_names_handle(fr_job *job, fr_rank *r, const char *cmd, const char *line);

/* pmi_server.c */
void fr_pmi_readable(fr_job *job, fr_rank *r);  /* one read, then serve lines */
void fr_pmi_drain(fr_job *job, fr_rank *r);     /* serve all buffered requests */
/* Release the barrier when all ranks are in it; fail the job when a rank
 * that has not entered it is gone (the barrier could never complete). */
void fr_pmi_barrier_check(fr_job *job);
/* Serve one request line of rank r (the head serves remote ranks' too). */
void fr_pmi_handle(fr_job *job, fr_rank *r, const char *line);
/* Answer rank r (one line, newline added). */
void fr_pmi_reply(fr_job *job, fr_rank *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* hosts.c: parse --hosts / --hostfile into job->hosts and give each host
 * its ranks (block order, wrapping around when N exceeds the slots). */
int fr_hosts_plan(fr_job *job);

/* head.c */
int fr_head_start(fr_job *job);                 /* listen, start the proxies */
void fr_head_send(fr_job *job, int host, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Send a spawn line to host's proxy, kept until it connects; its proxy is
 * started first if the host has none yet.  0, or -1 after a message. */
int fr_head_queue(fr_job *job, int host, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void fr_head_signal(fr_job *job, int sig);      /* every proxy's ranks */
int fr_head_pollfds(fr_job *job, struct pollfd *pfd, int *who, int n);
int fr_head_pollfd_count(const fr_job *job);     /* at most this many */
void fr_head_ready(fr_job *job, int who, short revents);
void fr_head_reaped(fr_job *job, pid_t pid, int status); /* a launcher process */
void fr_head_tick(fr_job *job, uint64_t now);    /* deadlines */
uint64_t fr_head_next_deadline(const fr_job *job);
int fr_head_done(const fr_job *job);             /* every proxy finished */
const char *fr_rank_where(const fr_job *job, const fr_rank *r); /* " on HOST" or "" */
int fr_is_this_host(const char *name);          /* localhost, or this machine's name */

/* proxy.c */
int fr_proxy_main(fr_job *job);
void fr_proxy_forward(fr_job *job, fr_rank *r, const char *line); /* a PMI request */
void fr_proxy_reaped(fr_job *job, fr_rank *r);
void fr_proxy_ready(fr_job *job);               /* the head's connection */

/* conn.c: line-oriented connections. */
/* Format one protocol line into line[cap], newline added; its length. */
size_t fr_vline(char *line, size_t cap, const char *fmt, va_list ap);
int fr_send_all(int fd, const char *p, size_t len);           /* 0, or -1: gone */
int fr_conn_send(fr_conn *c, const char *line, size_t len); /* 0, or -1: gone */
int fr_conn_sendf(fr_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read what is there; call fn for each complete line.  -1 at end/error. */
int fr_conn_read(fr_conn *c, void (*fn)(void *ctx, char *line), void *ctx);

/* kvs.c */
fr_kvs *fr_kvs_new(void);
int fr_kvs_put(fr_kvs *kvs, const char *key, const char *value);
const char *fr_kvs_get(fr_kvs *kvs, const char *key);
int fr_kvs_del(fr_kvs *kvs, const char *key);   /* 0, or -1: no such key */
void fr_kvs_free(fr_kvs *kvs);

/* output.c: tag "" relays the lines as they are. */
int fr_stream_open(fr_stream *s, int fd, int dest, const char *tag);
void fr_stream_readable(fr_stream *s);  /* relay complete lines */
void fr_stream_close(fr_stream *s);     /* flush the tail, close */

/* loop.c */
int fr_signals_setup(fr_job *job);  /* block the signals we read from sigfd */
int fr_run(fr_job *job);   /* serve until every rank is gone; exit status */
/* Record rank r's failure (r may be NULL); all failures seen in one loop
 * iteration are reported together in one line, then the job is ended. */
void fr_fail(fr_job *job, fr_rank *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void fr_end_job(fr_job *job, int sig, int grace_ms);
void fr_judge_exit(fr_job *job, fr_rank *r); /* r has ended: was it a failure? */
/* How messages name a process: "rank 2 (pid 123 on h)" in group 0, else
 * "group 1 rank 0 (universe index 4, pid 125)". */
typedef struct fr_who {
    char s[400];
} fr_who;
fr_who fr_rank_who(const fr_job *job, const fr_rank *r);
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
