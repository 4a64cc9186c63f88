/* The head fmplrun of a job across hosts (--hosts, --hostfile).
 *
 * Start-up, for each host that gets ranks:
 *   1. head: listen on a TCP port (every address), draw a 128-bit secret;
 *   2. head: start `fmplrun --proxy ADDR:PORT ...` on the host, through
 *      `ssh HOST 'COMMAND'` (or --launcher-exec CMD, called the same way;
 *      a host named localhost or like this machine is started directly),
 *      and write the secret to its standard input (never on a command line,
 *      where `ps` would show it);
 *   3. proxy: connect, send "HELLO <secret> <host index> <hostname>";
 *      head: refuse any connection whose secret or index is wrong, else
 *      send the environment ("V <hex of NAME=VALUE>" lines) and "GO";
 *   4. proxy: start its ranks, send "S <rank> <pid>" for each, then "UP".
 * Running: proxy -> head "P <rank> <PMI request>", head -> proxy
 * "P <rank> <PMI reply>" (the head is the one PMI server: its key-value
 * store and barriers span the hosts); "X <rank> <wait status>" when a rank
 * ends.  <rank> is a universe index: spawned processes are relayed alike.
 * Spawns (dynamic.c): head -> proxy "C", "A", "W", "Y", "N" lines and
 * "L <group> <first> <size>": start these; proxy -> head "S" per process
 * started, "R <group> <rc> [reason]", "X" for each one it did not start;
 * head -> proxy "D <group>": kill that group's processes (the spawn failed
 * elsewhere).  A host without initial ranks gets its proxy at the first
 * spawn onto it, the lines wait for its "UP".  A proxy stays while
 * the job runs, even without processes, until the head says "Q" (every
 * process of the job has ended).  Ending: head -> proxy "K <signal>".
 * Failures: a rank's failure ends the job as on one host; a host whose
 * connection ends or whose launcher exits before all its ranks reported is
 * lost, which ends the job with one line naming the host and its ranks.  A
 * proxy that loses the head kills its ranks (and the ranks die with their
 * proxy: parent-death signal), so nothing is left on any host. */
#include "fmplrun.h"
#include "bootstrap/spawn_rules.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PROXY_EXIT_GRACE_MS 5000 /* proxies' time to clean up after their ranks */
#define CLEANUP_GRACE_MS 2000    /* a lost host's cleanup, at most */
#define LAUNCHER_GONE_GRACE_MS 2000 /* a proxy's last lines after its launcher ended */

/* Environment variables not sent to the proxies: they describe this login,
 * this machine or this launcher, not the job. */
static int local_only(const char *v)
{
    static const char *const skip[] = {"HOSTNAME=", "PWD=", "OLDPWD=", "SHLVL=", "_=", "SSH_",
                                       "DISPLAY=", "TERM=", "HOME=", "USER=", "LOGNAME=",
                                       "SHELL=", "MAIL=", "XDG_", "LS_COLORS=", "PMI_", "PMIX_",
                                       NULL};
    for (int i = 0; skip[i]; i++)
        if (strncmp(v, skip[i], strlen(skip[i])) == 0)
            return 1;
    return 0;
}

const char *fr_rank_where(const fr_job *job, const fr_rank *r)
{
    static char where[300];
    if (!job->hosts || r->host < 0)
        return "";
    snprintf(where, sizeof where, " on %s", job->hosts[r->host].name);
    return where;
}

void fr_head_send(fr_job *job, int host, const char *fmt, ...)
{
    fr_host *h = &job->hosts[host];
    if (!h->connected)
        return;
    char line[sizeof h->conn.buf];
    va_list ap;
    va_start(ap, fmt);
    size_t n = fr_vline(line, sizeof line, fmt, ap);
    va_end(ap);
    fr_conn_send(&h->conn, line, n);
}

/* ------------------------------------------------------------ start-up */

int fr_is_this_host(const char *name) { return fmpl_spawn_host_is_here(name); }

/* Append `word` to the shell command line `out`, single-quoted. */
static int shell_quote(char *out, size_t cap, size_t *len, const char *word)
{
    if (*len + 3 >= cap)
        return -1;
    out[(*len)++] = ' ';
    out[(*len)++] = '\'';
    for (const char *p = word; *p; p++) {
        if (*len + 6 >= cap)
            return -1;
        if (*p == '\'') {
            memcpy(out + *len, "'\\''", 4);
            *len += 4;
        } else {
            out[(*len)++] = *p;
        }
    }
    out[(*len)++] = '\'';
    out[*len] = '\0';
    return 0;
}

/* The proxy's argument vector (argv[0]: this program). */
static char **proxy_argv(const fr_job *job, int host, int *argc_out)
{
    static char self[4096], ranks[32], idx[16], nranks[16], timeout[32];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return NULL;
    self[sl] = '\0';
    const fr_host *h = &job->hosts[host];
    snprintf(ranks, sizeof ranks, "%d:%d", h->first, h->count);
    snprintf(idx, sizeof idx, "%d", host);
    snprintf(nranks, sizeof nranks, "%d", job->n);
    snprintf(timeout, sizeof timeout, "%g", job->opt.connect_timeout);
    static char wdir[4096];
    if (!getcwd(wdir, sizeof wdir))
        snprintf(wdir, sizeof wdir, "/");
    int nprog = 0;
    while (job->opt.argv[nprog])
        nprog++;
    char **v = calloc((size_t)nprog + 32, sizeof *v);
    if (!v)
        return NULL;
    int a = 0;
    v[a++] = self;
    v[a++] = "--proxy";
    v[a++] = (char *)job->head_addr;
    v[a++] = "--proxy-job";
    v[a++] = (char *)job->kvsname;
    v[a++] = "--proxy-host";
    v[a++] = idx;
    v[a++] = "--proxy-ranks";
    v[a++] = ranks;
    v[a++] = "--proxy-wdir";
    v[a++] = wdir;
    v[a++] = "--connect-timeout";
    v[a++] = timeout;
    v[a++] = "-n";
    v[a++] = nranks;
    if (job->opt.tag_output)
        v[a++] = "--tag-output";
    if (job->opt.bind == FR_BIND_CORE)
        v[a++] = "--bind=core";
    else if (job->opt.bind == FR_BIND_NONE)
        v[a++] = "--bind=none";
    for (int i = 0; i < job->opt.verbose && i < 2; i++)
        v[a++] = "-v";
    v[a++] = "--";
    for (int i = 0; i < nprog; i++)
        v[a++] = job->opt.argv[i];
    v[a] = NULL;
    *argc_out = a;
    return v;
}

/* CMD HOST 'COMMAND': the launcher's words (default ssh), the host, one
 * shell command line (calloc'd vector; the words live in a static buffer). */
static char **remote_argv(const fr_job *job, int host, const char *cmdline)
{
    const char *launcher = job->opt.launcher_exec ? job->opt.launcher_exec
                                                  : "ssh -x -o BatchMode=yes";
    static char words[1024];
    snprintf(words, sizeof words, "%s", launcher);
    char **v = calloc(64, sizeof *v);
    if (!v)
        return NULL;
    int a = 0;
    for (char *w = strtok(words, " \t"); w && a < 60; w = strtok(NULL, " \t"))
        v[a++] = w;
    v[a++] = (char *)job->hosts[host].name;
    v[a++] = (char *)cmdline;
    v[a] = NULL;
    return v;
}

/* argv of the launcher for host h: the proxy itself, or CMD HOST 'exec
 * PROXY...' (exec: no shell stays between sshd and the proxy, so the ssh
 * session lives exactly as long as the proxy). */
static char **launcher_argv(const fr_job *job, int host, char **pv, int pc, char *cmdline,
                            size_t cap)
{
    if (fr_is_this_host(job->hosts[host].name))
        return pv;
    size_t len = (size_t)snprintf(cmdline, cap, "exec");
    for (int i = 0; i < pc; i++)
        if (shell_quote(cmdline, cap, &len, pv[i]) != 0)
            return NULL;
    return remote_argv(job, host, cmdline);
}

/* Fork and exec a launcher process for host `host` with standard input,
 * output and error on in, out, err (-1: /dev/null, or for err this
 * process's).  Its own group, so a terminal's Ctrl-C reaches the head only
 * (which forwards it); it ends with the head: SIGTERM, so that a proxy
 * started directly still kills its ranks and removes their files (through
 * ssh the proxy sees its connection end instead).  The pid, or -1. */
static pid_t spawn_launcher(fr_job *job, char **argv, const char *host, int in, int out, int err)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fr_msg("cannot fork host %s's launcher: %s", host, strerror(errno));
        return -1;
    }
    if (pid > 0)
        return pid;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(FR_EXIT_LAUNCHER);
    sigprocmask(SIG_SETMASK, &job->child_mask, NULL);
    int devnull = open("/dev/null", O_RDWR);
    dup2(in >= 0 ? in : devnull, STDIN_FILENO);
    dup2(out >= 0 ? out : devnull, STDOUT_FILENO);
    if (err >= 0)
        dup2(err, STDERR_FILENO);
    execvp(argv[0], argv);
    char msg[512];
    int n = snprintf(msg, sizeof msg, "fmplrun: cannot start '%s' for host %s: %s\n", argv[0],
                     host, strerror(errno));
    ssize_t ignored = write(STDERR_FILENO, msg, (size_t)n);
    (void)ignored;
    _exit(FR_EXIT_LAUNCHER);
}

/* A lost host may be alive (only its proxy died): remove the job's
 * /dev/shm files there, through the launcher, best effort and bounded by the
 * head's wait for its proxies.  The job id has only [A-Za-z0-9._-]. */
static void start_cleanup(fr_job *job, int host)
{
    fr_host *h = &job->hosts[host];
    if (fr_is_this_host(h->name) || h->cleanup_pid > 0)
        return; /* this host: the head's own cleanup at the end covers it */
    static char cmdline[FMPL_JOB_ID_MAX + 64];
    snprintf(cmdline, sizeof cmdline, "rm -f /dev/shm/fmpl-%s-*", job->job_id);
    char **v = remote_argv(job, host, cmdline);
    if (!v)
        return;
    pid_t pid = spawn_launcher(job, v, h->name, -1, -1, -1);
    free(v);
    if (pid > 0) {
        h->cleanup_pid = pid;
        job->nhosts_alive++;
        uint64_t limit = fr_now_ns() + CLEANUP_GRACE_MS * 1000000ull;
        if (job->cleanup_kill_at == 0 || limit < job->cleanup_kill_at)
            job->cleanup_kill_at = limit;
        fr_verbose(job, 1, "host %s: removing the job's /dev/shm files there (pid %ld)", h->name,
                   (long)pid);
    }
}

static int start_proxy(fr_job *job, int host)
{
    fr_host *h = &job->hosts[host];
    int pc = 0;
    char **pv = proxy_argv(job, host, &pc);
    static char cmdline[65536];
    char **lv = pv ? launcher_argv(job, host, pv, pc, cmdline, sizeof cmdline) : NULL;
    if (!lv) {
        fr_msg("cannot build the command that starts host %s's proxy (too long?)", h->name);
        free(pv);
        return -1;
    }
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        fr_msg("cannot create pipes for host %s: %s", h->name, strerror(errno));
        return -1;
    }
    pid_t pid = spawn_launcher(job, lv, h->name, in[0], out[1], err[1]);
    if (pid < 0)
        return -1;
    if (lv != pv)
        free(lv);
    free(pv);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    h->pid = pid;
    h->alive = 1;
    h->started = 1;
    h->connect_by = fr_now_ns() + (uint64_t)(job->opt.connect_timeout * 1e9);
    job->nhosts_alive++;
    h->stdin_fd = in[1];
    char secret_line[64];
    int n = snprintf(secret_line, sizeof secret_line, "%s\n", job->secret);
    if (write(h->stdin_fd, secret_line, (size_t)n) != n)
        fr_verbose(job, 1, "host %s: could not hand its proxy the secret", h->name);
    close(h->stdin_fd);
    h->stdin_fd = -1;
    if (fr_stream_open(&h->out, out[0], STDOUT_FILENO, "") != 0 ||
        fr_stream_open(&h->err, err[0], STDERR_FILENO, "") != 0) {
        fr_msg("out of memory for host %s's output", h->name);
        return -1;
    }
    if (h->count > 0)
        fr_verbose(job, 1, "host %s: ranks %d-%d, launcher pid %ld%s", h->name, h->first,
                   h->first + h->count - 1, (long)pid,
                   fr_is_this_host(h->name) ? " (this host: no ssh)" : "");
    else
        fr_verbose(job, 1, "host %s: proxy for spawned processes, launcher pid %ld%s", h->name,
                   (long)pid, fr_is_this_host(h->name) ? " (this host: no ssh)" : "");
    return 0;
}

int fr_head_start(fr_job *job)
{
    unsigned char raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        fr_msg("cannot draw the job's secret: %s", strerror(errno));
        return FR_EXIT_LAUNCHER;
    }
    for (int i = 0; i < 16; i++)
        snprintf(job->secret + 2 * i, 3, "%02x", raw[i]);
    job->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t salen = sizeof sa;
    if (job->listen_fd < 0 || bind(job->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(job->listen_fd, 128) != 0 ||
        getsockname(job->listen_fd, (struct sockaddr *)&sa, &salen) != 0) {
        fr_msg("cannot listen for the proxies: %s", strerror(errno));
        return FR_EXIT_LAUNCHER;
    }
    snprintf(job->head_addr, sizeof job->head_addr, "%s:%d",
             job->opt.head_address ? job->opt.head_address : "auto", ntohs(sa.sin_port));
    fr_verbose(job, 1, "job %s: %d rank(s) on %d host(s); proxies connect to port %d", job->kvsname,
               job->n, job->nhosts, ntohs(sa.sin_port));
    for (int r = 0; r < job->n; r++) {
        fr_process_init(job, r, 0, r, 0);
        job->ranks[r].alive = 1;
        job->nalive++;
    }
    for (int h = 0; h < job->nhosts; h++) {
        for (int r = job->hosts[h].first; r < job->hosts[h].first + job->hosts[h].count; r++)
            job->ranks[r].host = h;
        if (job->hosts[h].count > 0 && start_proxy(job, h) != 0)
            return FR_EXIT_LAUNCHER;
    }
    return 0;
}

int fr_head_queue(fr_job *job, int host, const char *fmt, ...)
{
    fr_host *h = &job->hosts[host];
    /* No proxy there yet, or its proxy is gone (it had nothing left to
     * run): start one; the lines wait for it. */
    if ((!h->started || (!h->alive && !h->connected)) && start_proxy(job, host) != 0)
        return -1;
    char line[sizeof h->conn.buf];
    va_list ap;
    va_start(ap, fmt);
    size_t n = fr_vline(line, sizeof line, fmt, ap);
    va_end(ap);
    if (h->ready) {
        fr_conn_send(&h->conn, line, n); /* a broken connection is judged where it is read */
        return 0;
    }
    char *more = realloc(h->backlog, h->backlog_len + n);
    if (!more) {
        fr_msg("out of memory for host %s's spawn", h->name);
        return -1;
    }
    memcpy(more + h->backlog_len, line, n);
    h->backlog = more;
    h->backlog_len += n;
    return 0;
}

/* Does host `host` run a process of the job (or is about to)? */
static int host_has_live(const fr_job *job, int host)
{
    for (int i = 0; i < job->nprocs; i++)
        if (job->ranks[i].alive && job->ranks[i].host == host)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ failures */

/* Append "ranks 2-3" (group 0) or "group 1 ranks 0-1" to text: the
 * processes [lo, hi] of one group, a run of universe indices. */
static void name_run(const fr_job *job, int lo, int hi, char *text, size_t cap)
{
    size_t off = strlen(text);
    const fr_rank *a = &job->ranks[lo], *b = &job->ranks[hi];
    char group[32] = "";
    if (a->group > 0)
        snprintf(group, sizeof group, "group %d ", a->group);
    if (lo == hi)
        snprintf(text + off, cap - off, "%s%srank %d", off ? ", " : "", group, a->world_rank);
    else
        snprintf(text + off, cap - off, "%s%sranks %d-%d", off ? ", " : "", group, a->world_rank,
                 b->world_rank);
}

/* Its proxy's connection is over (spawn lines not sent are dropped). */
static void close_conn(fr_host *h)
{
    free(h->backlog);
    h->backlog = NULL;
    h->backlog_len = 0;
    if (h->connected)
        close(h->conn.fd);
    h->conn.fd = -1;
    h->connected = h->ready = 0;
}

static void host_lost(fr_job *job, int host, const char *why)
{
    fr_host *h = &job->hosts[host];
    if (h->lost || !host_has_live(job, host))
        return;
    h->lost = 1;
    /* Processes a spawn placed here that its proxy has not answered for:
     * that spawn fails (the spawner is told), not the job. */
    for (int i = 0; i < job->nprocs; i++) {
        fr_rank *rk = &job->ranks[i];
        if (!rk->alive || rk->host != host || !rk->starting)
            continue;
        int g = rk->group;
        for (int k = i; k < job->nprocs; k++)
            if (job->ranks[k].group == g && job->ranks[k].host == host &&
                job->ranks[k].alive) {
                job->ranks[k].starting = 0;
                job->ranks[k].alive = 0;
                job->nalive--;
            }
        char reason[300];
        snprintf(reason, sizeof reason, "host lost before it started them: %s", why);
        fr_msg("host %s lost before it started group %d's processes: %s; the spawn fails",
               h->name, g, why);
        fr_spawn_host_answered(job, g, host, reason);
    }
    /* Its other live processes, as runs of consecutive indices within a
     * group: a failure of the job. */
    char procs[300] = "";
    int lo = -1, prev = -1;
    for (int i = 0; i <= job->nprocs; i++) {
        fr_rank *rk = i < job->nprocs ? &job->ranks[i] : NULL;
        int live = rk && rk->alive && rk->host == host;
        if (lo >= 0 && (!live || i != prev + 1 || rk->group != job->ranks[lo].group)) {
            name_run(job, lo, prev, procs, sizeof procs);
            lo = -1;
        }
        if (!live)
            continue;
        if (lo < 0)
            lo = i;
        prev = i;
        rk->alive = 0;
        rk->reported = 1;
        job->nalive--;
    }
    close_conn(h);
    start_cleanup(job, host);
    if (procs[0])
        fr_fail(job, NULL, 1, "host %s (%s) lost: %s", h->name, procs, why);
    fr_pmi_barrier_check(job);
}

static void host_line(void *ctx, char *line);

void fr_head_reaped(fr_job *job, pid_t pid, int status)
{
    for (int i = 0; i < job->nhosts; i++) {
        fr_host *h = &job->hosts[i];
        if (h->cleanup_pid == pid) {
            h->cleanup_pid = -1;
            job->nhosts_alive--;
            fr_verbose(job, 1, "host %s: cleanup done (status %d)", h->name, status);
            return;
        }
        if (!h->alive || h->pid != pid)
            continue;
        h->alive = 0;
        h->status = status;
        job->nhosts_alive--;
        /* Its last lines (its ranks' exits) may still wait in the socket:
         * serve them before judging whether the host was lost. */
        void *ctx[2] = {job, (void *)(intptr_t)i};
        for (int k = 0; k < 64 && h->connected; k++)
            if (fr_conn_read(&h->conn, host_line, ctx) != 0)
                break;
        char *why = h->gone_why;
        if (WIFSIGNALED(status))
            snprintf(why, sizeof h->gone_why, "its launcher (pid %ld) was killed by signal %d",
                     (long)pid, WTERMSIG(status));
        else
            snprintf(why, sizeof h->gone_why, "its launcher (pid %ld) exited with status %d%s",
                     (long)pid, WEXITSTATUS(status),
                     WEXITSTATUS(status) == 255 && !fr_is_this_host(h->name)
                         ? " (ssh could not connect, or the host went away)"
                         : "");
        if (h->connected && host_has_live(job, i)) {
            /* The proxy's last lines travel on their own connection and may
             * arrive after the launcher's exit: the connection's end decides,
             * or this deadline. */
            h->gone_at = fr_now_ns() + LAUNCHER_GONE_GRACE_MS * 1000000ull;
            return;
        }
        host_lost(job, i, why);
        return;
    }
}

void fr_head_signal(fr_job *job, int sig)
{
    for (int i = 0; i < job->nhosts; i++) {
        fr_host *h = &job->hosts[i];
        if (h->connected)
            fr_head_send(job, i, "K %d", sig);
        else if (h->alive && (sig == SIGKILL || job->ending))
            kill(h->pid, sig); /* never connected: nothing of the job runs there */
    }
}

/* ------------------------------------------------------------ messages */

static void host_line(void *ctx, char *line)
{
    fr_job *job = ((void **)ctx)[0];
    int host = (int)(intptr_t)((void **)ctx)[1];
    fr_host *h = &job->hosts[host];
    int rank = -1, off = 0;
    char kind = line[0];
    if ((kind == 'P' || kind == 'S' || kind == 'X') &&
        (sscanf(line + 1, " %d %n", &rank, &off) < 1 || rank < 0 || rank >= job->nprocs ||
         job->ranks[rank].host != host)) {
        fr_msg("host %s's proxy sent a bad line '%.80s'", h->name, line);
        return;
    }
    fr_rank *r = rank >= 0 ? &job->ranks[rank] : NULL;
    if (strcmp(line, "UP") == 0) {
        h->ready = 1;
        if (h->backlog_len > 0) /* a spawn waited for it */
            fr_conn_send(&h->conn, h->backlog, h->backlog_len);
        free(h->backlog);
        h->backlog = NULL;
        h->backlog_len = 0;
        return;
    }
    switch (kind) {
    case 'S':
        r->pid = (pid_t)atol(line + 1 + off);
        if (r->group == 0)
            fr_verbose(job, 1, "rank %d: pid %ld on %s", rank, (long)r->pid, h->name);
        else
            fr_verbose(job, 1, "group %d rank %d: universe index %d, pid %ld on %s", r->group,
                       r->world_rank, rank, (long)r->pid, h->name);
        return;
    case 'R': {
        int g = -1, rc = 0;
        if (sscanf(line + 1, " %d %d %n", &g, &rc, &off) < 2 || g < 1 || g >= job->ngroups) {
            fr_msg("host %s's proxy sent a bad line '%.80s'", h->name, line);
            return;
        }
        for (int i = job->groups[g].first; i < job->groups[g].first + job->groups[g].size; i++)
            if (job->ranks[i].host == host)
                job->ranks[i].starting = 0;
        fr_spawn_host_answered(job, g, host, rc == 0 ? NULL : line + 1 + off);
        return;
    }
    case 'P':
        if (r->alive)
            fr_pmi_handle(job, r, line + 1 + off);
        return;
    case 'X':
        if (!r->alive)
            return;
        r->status = atoi(line + 1 + off);
        r->alive = 0;
        job->nalive--;
        fr_judge_exit(job, r);
        return;
    default:
        fr_msg("host %s's proxy sent an unknown line '%.80s'", h->name, line);
    }
}

/* The first line of a new connection must prove it is one of ours. */
static void hello_line(void *ctx, char *line)
{
    fr_job *job = ((void **)ctx)[0];
    fr_conn *c = ((void **)ctx)[1];
    char secret[64], hostname[256];
    int idx;
    if (sscanf(line, "HELLO %63s %d %255s", secret, &idx, hostname) != 3 ||
        strlen(secret) != strlen(job->secret)) {
        fr_msg("refused a connection: not an FMPL proxy of this job");
        close(c->fd);
        c->fd = -1;
        return;
    }
    /* Compare in constant time: a refused guess tells nothing. */
    unsigned diff = 0;
    for (size_t i = 0; i < strlen(job->secret); i++)
        diff |= (unsigned)(secret[i] ^ job->secret[i]);
    if (diff != 0 || idx < 0 || idx >= job->nhosts || job->hosts[idx].connected ||
        job->hosts[idx].lost) {
        fr_msg("refused a connection from %s: %s", hostname,
               diff ? "wrong job secret" : "not an expected proxy");
        close(c->fd);
        c->fd = -1;
        return;
    }
    fr_host *h = &job->hosts[idx];
    h->conn = *c;
    h->conn.len = 0;
    h->connected = 1;
    c->fd = -1; /* moved */
    fr_verbose(job, 1, "host %s: proxy connected (hostname %s)", h->name, hostname);
    /* The environment, hex-encoded (values may hold anything), then go. */
    for (char **e = environ; *e; e++) {
        if (local_only(*e))
            continue;
        char hex[sizeof h->conn.buf];
        size_t n = 0, len = strlen(*e);
        if (2 * len + 8 > sizeof hex)
            continue;
        hex[n++] = 'V';
        hex[n++] = ' ';
        for (size_t i = 0; i < len; i++)
            n += (size_t)snprintf(hex + n, 3, "%02x", (unsigned char)(*e)[i]);
        hex[n++] = '\n';
        fr_conn_send(&h->conn, hex, n);
    }
    fr_head_send(job, idx, "GO");
    if (job->ending)
        fr_head_send(job, idx, "K %d", SIGKILL);
    else if (job->quit_sent)
        fr_head_send(job, idx, "Q");
}

static void accept_all(fr_job *job)
{
    for (;;) {
        int fd = accept4(job->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        fr_conn *more = realloc(job->pending, (size_t)(job->npending + 1) * sizeof *more);
        if (!more) {
            close(fd);
            return;
        }
        job->pending = more;
        job->pending[job->npending].fd = fd;
        job->pending[job->npending].len = 0;
        job->npending++;
    }
}

/* Poll entries: who = -2 - k, where k = 0: the listening socket;
 * k = 1 + 3 * host + {0: connection, 1: stdout, 2: stderr};
 * k = 1 + 3 * nhosts + i: pending connection i (appended while serving). */
int fr_head_pollfds(fr_job *job, struct pollfd *pfd, int *who, int n)
{
    int added = 0;
    if (job->listen_fd >= 0) {
        pfd[n + added] = (struct pollfd){.fd = job->listen_fd, .events = POLLIN};
        who[n + added++] = -2;
    }
    for (int h = 0; h < job->nhosts; h++) {
        fr_host *ho = &job->hosts[h];
        int fds[3] = {ho->connected ? ho->conn.fd : -1, ho->out.fd, ho->err.fd};
        for (int k = 0; k < 3; k++)
            if (fds[k] >= 0) {
                pfd[n + added] = (struct pollfd){.fd = fds[k], .events = POLLIN};
                who[n + added++] = -2 - (1 + 3 * h + k);
            }
    }
    for (int i = 0; i < job->npending; i++)
        if (job->pending[i].fd >= 0) {
            pfd[n + added] = (struct pollfd){.fd = job->pending[i].fd, .events = POLLIN};
            who[n + added++] = -2 - (1 + 3 * job->nhosts + i);
        }
    return added;
}

int fr_head_pollfd_count(const fr_job *job)
{
    return 1 + 3 * job->nhosts + job->npending;
}

void fr_head_ready(fr_job *job, int who, short revents)
{
    (void)revents;
    int k = -2 - who;
    if (k == 0) {
        accept_all(job);
        return;
    }
    k -= 1;
    if (k >= 3 * job->nhosts) {
        fr_conn *c = &job->pending[k - 3 * job->nhosts];
        void *ctx[2] = {job, c};
        if (fr_conn_read(c, hello_line, ctx) != 0 && c->fd >= 0) {
            close(c->fd);
            c->fd = -1;
        }
        return;
    }
    int host = k / 3;
    fr_host *h = &job->hosts[host];
    switch (k % 3) {
    case 0: {
        void *ctx[2] = {job, (void *)(intptr_t)host};
        if (fr_conn_read(&h->conn, host_line, ctx) != 0) {
            host_lost(job, host, h->gone_at ? h->gone_why : "its proxy's connection ended");
            close_conn(h); /* also when nothing of the job ran there */
        }
        break;
    }
    case 1: fr_stream_readable(&h->out); break;
    default: fr_stream_readable(&h->err); break;
    }
}

uint64_t fr_head_next_deadline(const fr_job *job)
{
    uint64_t next = 0;
    for (int h = 0; h < job->nhosts; h++) {
        const fr_host *ho = &job->hosts[h];
        if (ho->started && !ho->connected && !ho->lost && host_has_live(job, h) &&
            (next == 0 || ho->connect_by < next))
            next = ho->connect_by;
    }
    if (job->proxy_kill_at && (next == 0 || job->proxy_kill_at < next))
        next = job->proxy_kill_at;
    if (job->cleanup_kill_at && (next == 0 || job->cleanup_kill_at < next))
        next = job->cleanup_kill_at;
    for (int h = 0; h < job->nhosts; h++)
        if (job->hosts[h].gone_at && !job->hosts[h].lost &&
            (next == 0 || job->hosts[h].gone_at < next))
            next = job->hosts[h].gone_at;
    return next;
}

void fr_head_tick(fr_job *job, uint64_t now)
{
    /* Forget closed pending connections (the array only grows while hosts
     * connect; it is short). */
    int k = 0;
    for (int i = 0; i < job->npending; i++)
        if (job->pending[i].fd >= 0)
            job->pending[k++] = job->pending[i];
    job->npending = k;
    for (int h = 0; h < job->nhosts; h++) {
        fr_host *ho = &job->hosts[h];
        if (ho->started && !ho->connected && !ho->lost && now >= ho->connect_by) {
            char why[128];
            snprintf(why, sizeof why, "its proxy did not connect within %g s",
                     job->opt.connect_timeout);
            host_lost(job, h, why);
        }
    }
    if (job->nalive == 0 && !job->quit_sent) {
        /* Nothing left that could spawn: the proxies may go. */
        job->quit_sent = 1;
        for (int h = 0; h < job->nhosts; h++)
            fr_head_send(job, h, "Q");
    }
    for (int h = 0; h < job->nhosts; h++)
        if (job->hosts[h].gone_at && now >= job->hosts[h].gone_at) {
            job->hosts[h].gone_at = 0;
            host_lost(job, h, job->hosts[h].gone_why);
        }
    if (job->cleanup_kill_at && now >= job->cleanup_kill_at) {
        for (int h = 0; h < job->nhosts; h++)
            if (job->hosts[h].cleanup_pid > 0) {
                fr_msg("host %s: could not remove the job's /dev/shm files there within %d ms",
                       job->hosts[h].name, CLEANUP_GRACE_MS);
                kill(job->hosts[h].cleanup_pid, SIGKILL);
            }
        job->cleanup_kill_at = 0;
    }
    if (job->nalive == 0 && job->nhosts_alive > 0) {
        if (job->proxy_kill_at == 0) {
            job->proxy_kill_at = now + PROXY_EXIT_GRACE_MS * 1000000ull;
        } else if (now >= job->proxy_kill_at) {
            for (int h = 0; h < job->nhosts; h++) {
                if (job->hosts[h].alive) {
                    fr_verbose(job, 1, "host %s: its proxy is still there after its ranks: killing it",
                               job->hosts[h].name);
                    kill(job->hosts[h].pid, SIGKILL);
                }
                if (job->hosts[h].cleanup_pid > 0)
                    kill(job->hosts[h].cleanup_pid, SIGKILL);
            }
            job->proxy_kill_at = 0;
        }
    }
}

int fr_head_done(const fr_job *job)
{
    if (job->nhosts_alive > 0)
        return 0;
    for (int h = 0; h < job->nhosts; h++)
        if (job->hosts[h].out.fd >= 0 || job->hosts[h].err.fd >= 0)
            return 0;
    return 1;
}
