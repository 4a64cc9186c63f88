/* fmplrun --proxy: one host's part of a job across hosts (see head.c for
 * the whole sequence).
 *   1. read the job's secret from standard input (the head wrote it there);
 *   2. connect to the head (--proxy HOST:PORT; HOST "auto": the address the
 *      ssh connection came from, SSH_CONNECTION's first field, else
 *      127.0.0.1) and send "HELLO <secret> <host index> <hostname>";
 *   3. take the environment ("V" lines) until "GO", enter --proxy-wdir;
 *   4. start ranks [FIRST, FIRST + COUNT) of N as fmplrun does on one host
 *      (PMI_FD sockets, parent-death signal), send "S <rank> <pid>" each,
 *      then "UP" (spawn lines may come from then on);
 *   5. relay each rank's PMI lines to the head ("P <rank> <line>") and the
 *      head's replies back; report each exit ("X <rank> <wait status>");
 *      on "K <signal>" signal the ranks;
 *   6. start the spawned processes the head places here (the "C", "A",
 *      "W", "Y", "N" lines of a group's share, then "L"): look their
 *      programs up and check their working directories here, fork them as
 *      the initial ranks, answer "S" for each, then "R <group> 0", or
 *      "R <group> -1 <reason>" with "X" for each one not started; on
 *      "D <group>" kill that group's processes (it failed elsewhere);
 *   7. stay, even with no process left, until the head says "Q" or "K":
 *      a later spawn may place processes here;
 *   8. when the head's connection ends before the processes do, kill them:
 *      a proxy never outlives its job, nor do its processes; remove this
 *      host's shared-memory files of the job either way. */
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

/* A group's share being received from the head ("C" ... "L"). */
typedef struct share_member {
    int idx, world_rank, local_id, local_n, app;
} share_member;

static struct share {
    fr_app *apps;
    int *appnum;         /* apps[i]'s index within its spawn */
    int *nargs;          /* apps[i]'s arguments received so far */
    int *argc;           /* and announced ("C") */
    int napps;
    share_member *m;
    int nm;
    int bad;             /* a line out of place: refuse the share */
} share;

static void share_free(void)
{
    for (int a = 0; a < share.napps; a++) {
        for (int i = 0; share.apps[a].argv && share.apps[a].argv[i]; i++)
            free(share.apps[a].argv[i]);
        free(share.apps[a].argv);
        free((char *)share.apps[a].wdir);
        free((char *)share.apps[a].search);
    }
    free(share.apps);
    free(share.appnum);
    free(share.nargs);
    free(share.argc);
    free(share.m);
    memset(&share, 0, sizeof share);
}

/* "C appnum argc": a command follows. */
static void share_command(int appnum, int argc)
{
    int n = share.napps + 1;
    fr_app *apps = realloc(share.apps, (size_t)n * sizeof *apps);
    if (apps)
        share.apps = apps;
    int *num = realloc(share.appnum, (size_t)n * sizeof *num);
    if (num)
        share.appnum = num;
    int *nargs = realloc(share.nargs, (size_t)n * sizeof *nargs);
    if (nargs)
        share.nargs = nargs;
    int *want = realloc(share.argc, (size_t)n * sizeof *want);
    if (want)
        share.argc = want;
    if (!apps || !num || !nargs || !want || argc < 1 || argc > 1 << 20) {
        share.bad = 1;
        return;
    }
    memset(&apps[share.napps], 0, sizeof *apps);
    apps[share.napps].argv = calloc((size_t)argc + 1, sizeof(char *));
    num[share.napps] = appnum;
    nargs[share.napps] = 0;
    want[share.napps] = argc;
    share.napps = n;
    if (!apps[n - 1].argv)
        share.bad = 1;
}

/* "A", "W", "Y": the last command's argument, wdir, search path. */
static void share_text(char kind, const char *text)
{
    if (share.napps == 0) {
        share.bad = 1;
        return;
    }
    fr_app *a = &share.apps[share.napps - 1];
    char *copy = strdup(text);
    if (!copy) {
        share.bad = 1;
    } else if (kind == 'A' && share.nargs[share.napps - 1] < share.argc[share.napps - 1]) {
        a->argv[share.nargs[share.napps - 1]++] = copy;
    } else if (kind == 'W' && !a->wdir) {
        a->wdir = copy;
    } else if (kind == 'Y' && !a->search) {
        a->search = copy;
    } else {
        free(copy);
        share.bad = 1;
    }
}

static void share_member_add(const char *args)
{
    share_member m;
    share_member *more = realloc(share.m, (size_t)(share.nm + 1) * sizeof *more);
    if (!more || share.napps == 0 ||
        sscanf(args, "%d %d %d %d", &m.idx, &m.world_rank, &m.local_id, &m.local_n) != 4 ||
        m.idx < 0 || m.idx >= FR_MAX_RANKS) {
        if (more)
            share.m = more;
        share.bad = 1;
        return;
    }
    m.app = share.napps - 1;
    share.m = more;
    share.m[share.nm++] = m;
}

/* "L group first size": start the share's processes, answer the head. */
static void share_launch(fr_job *job, int g, int first, int size)
{
    char err[700] = "";
    if (share.bad || g < 1 || g >= FR_MAX_RANKS || first < 0 || size < 1 ||
        first + size > FR_MAX_RANKS)
        snprintf(err, sizeof err, "the proxy got a malformed spawn from the head");
    for (int a = 0; !err[0] && a < share.napps; a++)
        if (share.nargs[a] != share.argc[a])
            snprintf(err, sizeof err, "the proxy got a malformed spawn from the head");
    int *members = calloc((size_t)share.nm + 1, sizeof *members);
    const fr_app **app = calloc((size_t)share.nm + 1, sizeof *app);
    if (!err[0] && (!members || !app))
        snprintf(err, sizeof err, "out of memory");
    for (int i = 0; !err[0] && i < share.nm; i++)
        if (share.m[i].idx < first || share.m[i].idx >= first + size)
            snprintf(err, sizeof err, "the proxy got a malformed spawn from the head");
    if (!err[0]) {
        /* Universe indices up to the group's end: placeholders for those
         * running elsewhere (no descriptors, never alive here). */
        for (int i = job->nprocs; i < first + size; i++)
            fr_process_init(job, i, 0, i, 0);
        if (job->nprocs < first + size)
            job->nprocs = first + size;
        if (job->ngroups <= g)
            job->ngroups = g + 1;
        job->groups[g] = (fr_group){.first = first, .size = size, .spawner = -1};
        for (int i = 0; i < share.nm; i++) {
            const share_member *m = &share.m[i];
            fr_process_init(job, m->idx, g, m->world_rank, share.appnum[m->app]);
            job->ranks[m->idx].local_id = m->local_id;
            job->ranks[m->idx].local_n = m->local_n;
            members[i] = m->idx;
            app[i] = &share.apps[m->app];
        }
        /* Where they will run: programs and working directories here. */
        for (int a = 0; !err[0] && a < share.napps; a++)
            fr_app_resolve(&share.apps[a], err, sizeof err);
    }
    if (!err[0])
        fr_start_members(job, members, app, share.nm, err, sizeof err);
    for (int i = 0; i < share.nm; i++) {
        const fr_rank *rk = &job->ranks[share.m[i].idx];
        if (rk->pid > 0)
            fr_conn_sendf(&job->head, "S %d %ld", rk->rank, (long)rk->pid);
    }
    if (err[0])
        fr_conn_sendf(&job->head, "R %d -1 %s", g, err);
    else
        fr_conn_sendf(&job->head, "R %d 0", g);
    for (int i = 0; err[0] && i < share.nm; i++) /* never forked: ended here */
        if (job->ranks[share.m[i].idx].pid <= 0)
            fr_conn_sendf(&job->head, "X %d %d", share.m[i].idx, FR_EXIT_LAUNCHER << 8);
    free(members);
    free(app);
    share_free();
}

/* "D group": the spawn failed on another host; its processes here go. */
static void drop_group(fr_job *job, int g)
{
    for (int i = 0; i < job->nprocs; i++) {
        fr_rank *rk = &job->ranks[i];
        if (rk->group == g && rk->alive && rk->host < 0 && rk->pid > 0) {
            kill(rk->pid, SIGKILL);
            kill(-rk->pid, SIGKILL);
        }
    }
}

static void head_line(void *ctx, char *line)
{
    fr_job *job = ctx;
    int rank, off = 0, sig, a, b, c;
    if (line[0] == 'P' && sscanf(line + 1, " %d %n", &rank, &off) >= 1 && rank >= 0 &&
        rank < job->nprocs && job->ranks[rank].host < 0) {
        fr_rank *r = &job->ranks[rank];
        char *reply = line + 1 + off;
        size_t len = strlen(reply);
        reply[len++] = '\n'; /* the line's own terminator, given back */
        fr_send_all(r->pmi_fd, reply, len);
    } else if (line[0] == 'K' && sscanf(line + 1, " %d", &sig) == 1 && sig > 0 && sig < NSIG) {
        fr_verbose(job, 1, "proxy: the head ends the job (signal %d)", sig);
        fr_end_job(job, sig, 1000);
    } else if (line[0] == 'C' && sscanf(line + 1, " %d %d", &a, &b) == 2) {
        share_command(a, b);
    } else if ((line[0] == 'A' || line[0] == 'W' || line[0] == 'Y') && line[1] == ' ') {
        share_text(line[0], line + 2);
    } else if (line[0] == 'N' && line[1] == ' ') {
        share_member_add(line + 2);
    } else if (line[0] == 'L' && sscanf(line + 1, " %d %d %d", &a, &b, &c) == 3) {
        share_launch(job, a, b, c);
    } else if (line[0] == 'D' && sscanf(line + 1, " %d", &a) == 1) {
        drop_group(job, a);
    } else if (strcmp(line, "Q") == 0) {
        job->quit = 1; /* fr_run returns once nothing runs here */
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
        fr_msg("proxy on %s: lost the connection to the head fmplrun; killing its %d "
               "process(es) here", me, job->nalive);
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
    fr_conn_sendf(&job->head, "UP");
    if (spawn_status != 0 && job->nalive > 0)
        fr_end_job(job, SIGTERM, 300);
    int status = fr_run(job);
    fr_cleanup_shm(job);
    return status;
}
