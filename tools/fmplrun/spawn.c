/* Starting the ranks: find the program, plan the CPU binding, then for each
 * rank create its PMI socket (and output pipes with --tag-output), fork, and
 * in the child start a session, set the parent-death signal, the
 * environment and the affinity before exec.  An exec failure travels back
 * through a close-on-exec pipe, so "cannot execute" is reported once. */
#include "fmplrun.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* errno-style result of looking PROGRAM up like execvp would. */
static int resolve_program(const char *prog, char *path, size_t len)
{
    struct stat st;
    if (strchr(prog, '/')) {
        snprintf(path, len, "%s", prog);
        if (stat(path, &st) != 0)
            return errno;
        if (S_ISDIR(st.st_mode))
            return EISDIR;
        return access(path, X_OK) == 0 ? 0 : errno;
    }
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    while (*dirs) {
        const char *colon = strchr(dirs, ':');
        size_t dlen = colon ? (size_t)(colon - dirs) : strlen(dirs);
        snprintf(path, len, "%.*s/%s", (int)(dlen ? dlen : 1), dlen ? dirs : ".", prog);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(path, X_OK) == 0)
                return 0;
            err = EACCES;
        }
        dirs += dlen + (colon ? 1 : 0);
    }
    return err;
}

static int exec_failure_status(int err)
{
    return err == ENOENT ? FR_EXIT_NOTFOUND : FR_EXIT_NOEXEC;
}

/* Make room for the descriptors we hold open: a few per rank. */
static int raise_fd_limit(int n, int tag)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)n * (tag ? 3 : 1) + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
        return -1;
    rl.rlim_cur = need;
    return setrlimit(RLIMIT_NOFILE, &rl);
}

static void plan_binding(fr_job *job)
{
    cpu_set_t allowed;
    int cpus[CPU_SETSIZE], ncpus = 0;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &allowed))
                cpus[ncpus++] = c;
    int bind = job->opt.bind;
    if (bind == FR_BIND_DEFAULT)
        bind = (ncpus > 0 && job->nlocal <= ncpus) ? FR_BIND_CORE : FR_BIND_NONE;
    if (ncpus == 0)
        bind = FR_BIND_NONE;
    for (int r = job->first; r < job->first + job->nlocal; r++)
        job->ranks[r].cpu = bind == FR_BIND_CORE ? cpus[(r - job->first) % ncpus] : -1;
    if (job->opt.verbose < 1)
        return;
    if (bind == FR_BIND_NONE) {
        fr_msg("binding: none (%s; %d ranks, %d CPUs allowed)",
               job->opt.bind == FR_BIND_NONE ? "--bind none" : "oversubscribed", job->nlocal,
               ncpus);
        return;
    }
    char text[1024];
    size_t off = 0;
    for (int r = job->first; r < job->first + job->nlocal && off < sizeof text - 32; r++)
        off += (size_t)snprintf(text + off, sizeof text - off, "%s%d->%d",
                                r > job->first ? " " : "", r,
                                job->ranks[r].cpu);
    fr_msg("binding: core (rank->CPU): %s%s", text, off >= sizeof text - 32 ? " ..." : "");
}

/* Variables an outer launcher may have left that would mislead a rank. */
static int inherited_launcher_var(const char *v)
{
    static const char *const drop[] = {"PMI_", "PMIX_", "HYDI_", "OMPI_COMM_WORLD_",
                                       "OMPI_UNIVERSE_SIZE=", "MPI_LOCALRANKID=",
                                       "MPI_LOCALNRANKS=", "FMPL_LAUNCHER=", NULL};
    for (int i = 0; drop[i]; i++)
        if (strncmp(v, drop[i], strlen(drop[i])) == 0)
            return 1;
    return 0;
}

enum { NRANKVARS = 6 };

typedef struct child_env {
    char **envp;
    char vars[NRANKVARS][64];
} child_env;

static int env_build(child_env *ce)
{
    size_t count = 0, k = 0;
    while (environ[count])
        count++;
    ce->envp = malloc((count + NRANKVARS + 1) * sizeof *ce->envp);
    if (!ce->envp)
        return -1;
    for (size_t i = 0; i < count; i++)
        if (!inherited_launcher_var(environ[i]))
            ce->envp[k++] = environ[i];
    for (int v = 0; v < NRANKVARS; v++)
        ce->envp[k++] = ce->vars[v];
    ce->envp[k] = NULL;
    return 0;
}

static void env_set_rank(child_env *ce, const fr_job *job, int rank, int fd)
{
    snprintf(ce->vars[0], sizeof ce->vars[0], "PMI_FD=%d", fd);
    snprintf(ce->vars[1], sizeof ce->vars[1], "PMI_RANK=%d", rank);
    snprintf(ce->vars[2], sizeof ce->vars[2], "PMI_SIZE=%d", job->n);
    snprintf(ce->vars[3], sizeof ce->vars[3], "FMPL_LAUNCHER=fmplrun");
    snprintf(ce->vars[4], sizeof ce->vars[4], "MPI_LOCALRANKID=%d", rank - job->first);
    snprintf(ce->vars[5], sizeof ce->vars[5], "MPI_LOCALNRANKS=%d", job->nlocal);
}

static void child_warn(const char *what, int rank, int err)
{
    char line[256];
    int n = snprintf(line, sizeof line, "fmplrun: rank %d: %s: %s\n", rank, what, strerror(err));
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
    (void)ignored;
}

/* In the child, between fork and exec.  Only async-signal-safe work. */
__attribute__((noreturn)) static void child(fr_job *job, int r, pid_t parent, const char *path,
                                            char **envp, int pmi_fd, int out_w, int err_w,
                                            int devnull, int status_w)
{
    /* Each rank leads a session of its own, as Hydra's ranks do: with
     * autogroup scheduling (the kernel's default) every session is one
     * scheduling group, so ranks sharing the launcher's session would share
     * one group's CPU on a busy machine while a peer's ranks get one group
     * each.  The launcher signals every rank and its group (loop.c). */
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the launcher died before prctl */
        _exit(FR_EXIT_LAUNCHER);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &job->child_mask, NULL);
    if (r != 0 || isatty(STDIN_FILENO))
        dup2(devnull, STDIN_FILENO);
    if (out_w >= 0) {
        dup2(out_w, STDOUT_FILENO);
        dup2(err_w, STDERR_FILENO);
    }
    fcntl(pmi_fd, F_SETFD, 0); /* the one descriptor the rank inherits */
    if (job->ranks[r].cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(job->ranks[r].cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            child_warn("cannot bind to its CPU", r, errno);
    }
    execve(path, job->opt.argv, envp);
    int err = errno;
    ssize_t ignored = write(status_w, &err, sizeof err);
    (void)ignored;
    _exit(exec_failure_status(err));
}

/* Create rank r's descriptors and fork it.  Returns the exec-status read end
 * or -1 after a message. */
static int start_rank(fr_job *job, int r, const char *path, child_env *ce, int devnull)
{
    fr_rank *rk = &job->ranks[r];
    int sv[2], out[2] = {-1, -1}, err[2] = {-1, -1}, st[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        pipe2(st, O_CLOEXEC) != 0 ||
        (job->opt.tag_output && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0))) {
        fr_msg("cannot create descriptors for rank %d: %s", r, strerror(errno));
        return -1;
    }
    env_set_rank(ce, job, r, sv[1]);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fr_msg("cannot fork rank %d: %s", r, strerror(errno));
        return -1;
    }
    if (pid == 0)
        child(job, r, parent, path, ce->envp, sv[1], out[1], err[1], devnull, st[1]);
    rk->pid = pid;
    rk->alive = 1;
    job->nalive++;
    rk->pmi_fd = sv[0];
    close(sv[1]);
    close(st[1]);
    if (job->opt.tag_output) {
        close(out[1]);
        close(err[1]);
        if (fr_stream_open(&rk->out, out[0], STDOUT_FILENO) != 0 ||
            fr_stream_open(&rk->err, err[0], STDERR_FILENO) != 0)
            fr_msg("out of memory for rank %d's output", r);
    }
    fr_verbose(job, 1, "rank %d: pid %ld%s", r, (long)pid, rk->cpu >= 0 ? "" : " (not bound)");
    return st[0];
}

int fr_spawn(fr_job *job)
{
    char path[4096];
    const char *prog = job->opt.argv[0];
    int err = resolve_program(prog, path, sizeof path);
    if (err) {
        fr_msg("cannot execute '%s': %s", prog, strerror(err));
        return exec_failure_status(err);
    }
    if (raise_fd_limit(job->nlocal, job->opt.tag_output) != 0) {
        fr_msg("the open-file limit is too low for %d ranks (ulimit -n)", job->nlocal);
        return FR_EXIT_LAUNCHER;
    }
    for (int r = 0; r < job->n; r++) {
        fr_rank *rk = &job->ranks[r];
        rk->rank = r;
        rk->host = -1;
        rk->pmi_fd = rk->out.fd = rk->err.fd = -1;
    }
    plan_binding(job);
    child_env ce;
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0 || env_build(&ce) != 0) {
        fr_msg("cannot prepare the ranks' environment");
        return FR_EXIT_LAUNCHER;
    }
    int *status_fd = malloc((size_t)job->nlocal * sizeof *status_fd);
    int started = 0, result = 0;
    for (; status_fd && started < job->nlocal; started++) {
        status_fd[started] = start_rank(job, job->first + started, path, &ce, devnull);
        if (status_fd[started] < 0)
            break;
    }
    if (!status_fd || started < job->nlocal)
        result = FR_EXIT_LAUNCHER;
    /* Wait for each exec: EOF means it happened, an errno means it did not. */
    for (int r = 0; r < started; r++) {
        int child_err;
        ssize_t got;
        while ((got = read(status_fd[r], &child_err, sizeof child_err)) < 0 && errno == EINTR)
            ;
        if (got == (ssize_t)sizeof child_err && result == 0) {
            fr_msg("cannot execute '%s': %s", prog, strerror(child_err));
            result = exec_failure_status(child_err);
        }
        close(status_fd[r]);
    }
    free(status_fd);
    free(ce.envp);
    close(devnull);
    if (job->opt.verbose >= 1)
        fr_msg("job %s: %d rank(s) of %s started", job->kvsname, started, prog);
    return result;
}
