/* fmplrun --proxy: one host's part of a job across hosts (see head.c for
 * the whole sequence).
 *   1. read the job's secret from standard input (the head wrote it there);
 *   2. connect to the head (--proxy HOST:PORT; HOST "auto": the address the
 *      ssh connection came from, SSH_CONNECTION's first field, else
 *      127.0.0.1) and send "HELLO <secret> <host index> <hostname>";
 *   3. take the environment ("V" lines) until "GO", enter --proxy-wdir;
 *   4. start ranks [FIRST, FIRST + COUNT) of N as fmplrun does on one host
 *      (PMI_FD sockets, parent-death signal), send "S <rank> <pid>" each;
 *   5. relay each rank's PMI lines to the head ("P <rank> <line>") and the
 *      head's replies back; report each exit ("X <rank> <wait status>");
 *      on "K <signal>" signal the ranks;
 *   6. when the head's connection ends before the ranks do, kill them: a
 *      proxy never outlives its job, nor do its ranks; remove this host's
 *      shared-memory files of the job either way. */
#include "fmplrun.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int read_secret(char *secret, size_t cap, int timeout_ms)
{
    size_t n = 0;
    while (n + 1 < cap) {
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0)
            return -1;
        char c;
        ssize_t got = read(STDIN_FILENO, &c, 1);
        if (got <= 0)
            return -1;
        if (c == '\n')
            break;
        secret[n++] = c;
    }
    secret[n] = '\0';
    return n > 0 ? 0 : -1;
}

static int connect_head(const char *spec)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof host) {
        fr_msg("proxy: bad --proxy '%s' (expected HOST:PORT)", spec);
        return -1;
    }
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    if (strcmp(host, "auto") == 0) {
        const char *ssh = getenv("SSH_CONNECTION");
        size_t len = ssh ? strcspn(ssh, " ") : 0;
        if (len > 0 && len < sizeof host) {
            memcpy(host, ssh, len);
            host[len] = '\0';
        } else {
            snprintf(host, sizeof host, "127.0.0.1");
        }
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        fr_msg("proxy: cannot resolve the head's address %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        fr_msg("proxy: cannot connect to the head at %s:%s: %s (--head-address picks the "
               "address proxies use)", host, colon + 1, strerror(err));
    return fd;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

typedef struct setup_state {
    int go;
    int bad;
} setup_state;

static void setup_line(void *ctx, char *line)
{
    setup_state *st = ctx;
    if (strcmp(line, "GO") == 0) {
        st->go = 1;
        return;
    }
    if (line[0] != 'V' || line[1] != ' ') {
        st->bad = 1;
        return;
    }
    const char *hex = line + 2;
    size_t len = strlen(hex) / 2;
    char *var = malloc(len + 1);
    if (!var)
        return;
    for (size_t i = 0; i < len; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(var);
            st->bad = 1;
            return;
        }
        var[i] = (char)(hi << 4 | lo);
    }
    var[len] = '\0';
    if (!strchr(var, '=') || putenv(var) != 0) /* putenv keeps var: not freed */
        free(var);
}


void fr_proxy_forward(fr_job *job, fr_rank *r, const char *line)
{
    fr_conn_sendf(&job->head, "P %d %s", r->rank, line);
}

void fr_proxy_reaped(fr_job *job, fr_rank *r)
{
    fr_conn_sendf(&job->head, "X %d %d", r->rank, r->status);
}

static void head_line(void *ctx, char *line)
{
    fr_job *job = ctx;
    int rank, off = 0, sig;
    if (line[0] == 'P' && sscanf(line + 1, " %d %n", &rank, &off) >= 1 && rank >= job->first &&
        rank < job->first + job->nlocal) {
        fr_rank *r = &job->ranks[rank];
        char *reply = line + 1 + off;
        size_t len = strlen(reply);
        reply[len++] = '\n'; /* the line's own terminator, given back */
        fr_send_all(r->pmi_fd, reply, len);
    } else if (line[0] == 'K' && sscanf(line + 1, " %d", &sig) == 1 && sig > 0 && sig < NSIG) {
        fr_verbose(job, 1, "proxy: the head ends the job (signal %d)", sig);
        fr_end_job(job, sig, 1000);
    } else {
        fr_msg("proxy: unexpected line from the head '%.80s'", line);
    }
}

void fr_proxy_ready(fr_job *job)
{
    if (fr_conn_read(&job->head, head_line, job) == 0)
        return;
    close(job->head.fd);
    job->head.fd = -1;
    if (job->nalive > 0) {
        char me[256] = "?";
        gethostname(me, sizeof me);
        me[sizeof me - 1] = '\0';
        fr_msg("proxy on %s: lost the connection to the head fmplrun; killing ranks %d-%d here",
               me, job->first, job->first + job->nlocal - 1);
        fr_end_job(job, SIGKILL, 0);
    }
}

int fr_proxy_main(fr_job *job)
{
    int timeout_ms = (int)(job->opt.connect_timeout * 1000);
    char secret[64];
    if (read_secret(secret, sizeof secret, timeout_ms) != 0) {
        fr_msg("proxy: no job secret on standard input (started by something other than fmplrun?)");
        return FR_EXIT_LAUNCHER;
    }
    job->head.fd = connect_head(job->opt.proxy_head);
    if (job->head.fd < 0)
        return FR_EXIT_LAUNCHER;
    char me[256] = "unknown";
    gethostname(me, sizeof me);
    me[sizeof me - 1] = '\0';
    if (fr_conn_sendf(&job->head, "HELLO %s %d %s", secret, job->opt.proxy_host, me) != 0) {
        fr_msg("proxy: the head closed the connection");
        return FR_EXIT_LAUNCHER;
    }
    setup_state st = {0, 0};
    while (!st.go && !st.bad) {
        struct pollfd p = {.fd = job->head.fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0 || fr_conn_read(&job->head, setup_line, &st) != 0) {
            fr_msg("proxy on %s: the head refused this proxy or went away", me);
            return FR_EXIT_LAUNCHER;
        }
    }
    if (st.bad) {
        fr_msg("proxy on %s: unexpected start-up line from the head", me);
        return FR_EXIT_LAUNCHER;
    }
    if (job->opt.proxy_wdir && chdir(job->opt.proxy_wdir) != 0)
        fr_msg("proxy on %s: cannot enter %s (%s); the ranks start in %s", me,
               job->opt.proxy_wdir, strerror(errno), getenv("HOME") ? getenv("HOME") : "/");
    job->first = job->opt.proxy_first;
    job->nlocal = job->opt.proxy_count;
    int spawn_status = fr_spawn(job);
    for (int r = job->first; r < job->first + job->nlocal; r++) {
        fr_rank *rk = &job->ranks[r];
        if (rk->alive || rk->pid > 0)
            fr_conn_sendf(&job->head, "S %d %ld", r, (long)rk->pid);
        else if (spawn_status != 0) /* never started: it failed with the spawn's status */
            fr_conn_sendf(&job->head, "X %d %d", r, (spawn_status & 0xff) << 8);
    }
    if (spawn_status != 0 && job->nalive > 0)
        fr_end_job(job, SIGTERM, 300);
    int status = fr_run(job);
    fr_cleanup_shm(job);
    return status;
}
