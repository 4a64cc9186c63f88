/* Starting processes: the initial ranks (fr_spawn) and each group a rank
 * asks for (fr_spawn_group, dynamic.c).  Find the program, plan the CPU
 * binding, then for each process create its PMI socket (and output pipes
 * with --tag-output), fork, and in the child start a session, set the
 * parent-death signal, the environment, the working directory and the
 * affinity before exec.  An exec failure travels back through a
 * close-on-exec pipe, so "cannot execute" is reported once. */
#include "fmplrun.h"
#include "bootstrap/spawn_rules.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

int fr_resolve_program(const char *prog, const char *dirs, const char *base, char *path,
                       size_t len)
{
    return fmpl_spawn_find_program(prog, dirs, base, path, len);
}

static int exec_failure_status(int err)
{
    return err == ENOENT ? FR_EXIT_NOTFOUND : FR_EXIT_NOEXEC;
}

/* Make room for the descriptors we hold open: a few per process. */
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
    int ncpus = 0;
    job->cpus = malloc(CPU_SETSIZE * sizeof *job->cpus);
    if (job->cpus && sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &allowed))
                job->cpus[ncpus++] = c;
    job->ncpus = ncpus;
    int bind = job->opt.bind;
    if (bind == FR_BIND_DEFAULT)
        bind = (ncpus > 0 && job->nlocal <= ncpus) ? FR_BIND_CORE : FR_BIND_NONE;
    if (ncpus == 0)
        bind = FR_BIND_NONE;
    job->bound = bind == FR_BIND_CORE;
    for (int r = job->first; r < job->first + job->nlocal; r++)
        job->ranks[r].cpu = job->bound ? job->cpus[(r - job->first) % ncpus] : -1;
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

/* A spawned process's CPU under core binding: the allowed CPU with the
 * fewest processes bound to it, counting the live ones and the new group's
 * members [from, to) planned before it (the first such CPU). */
static int least_loaded_cpu(const fr_job *job, int from, int to)
{
    int best = 0, best_load = -1;
    for (int k = 0; k < job->ncpus; k++) {
        int load = 0;
        for (int i = 0; i < to; i++) {
            const fr_rank *rk = &job->ranks[i];
            load += (i >= from || (rk->alive && rk->host < 0)) && rk->cpu == job->cpus[k];
        }
        if (best_load < 0 || load < best_load) {
            best = k;
            best_load = load;
        }
    }
    return job->cpus[best];
}

/* Variables an outer launcher may have left that would mislead a rank. */
static int inherited_launcher_var(const char *v)
{
    static const char *const drop[] = {"PMI_", "PMIX_", "HYDI_", "OMPI_COMM_WORLD_",
                                       "OMPI_UNIVERSE_SIZE=", "MPI_LOCALRANKID=",
                                       "MPI_LOCALNRANKS=", "FMPL_LAUNCHER=", "FMPL_UNIVERSE_",
                                       NULL};
    for (int i = 0; drop[i]; i++)
        if (strncmp(v, drop[i], strlen(drop[i])) == 0)
            return 1;
    return 0;
}

/* Per process: PMI_FD, PMI_RANK, PMI_SIZE, FMPL_LAUNCHER, MPI_LOCALRANKID,
 * MPI_LOCALNRANKS, FMPL_UNIVERSE_RANK, FMPL_UNIVERSE_BASE and, for spawned
 * processes only, PMI_SPAWNED=1 (MPICH's clients read it). */
enum { NRANKVARS = 9 };

typedef struct child_env {
    char **envp;
    size_t nbase;    /* the inherited variables come first */
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
    ce->nbase = k;
    for (int v = 0; v < NRANKVARS; v++)
        ce->envp[k++] = ce->vars[v];
    ce->envp[k] = NULL;
    return 0;
}

static void env_set_rank(child_env *ce, const fr_job *job, const fr_rank *rk, int fd)
{
    const fr_group *g = &job->groups[rk->group];
    int spawned = rk->group > 0;
    /* Group 0's ranks on this host are [first, first + nlocal); a spawned
     * group's were counted by whoever placed them. */
    int local_id = spawned ? rk->local_id : rk->rank - job->first;
    int local_n = spawned ? rk->local_n : job->nlocal;
    snprintf(ce->vars[0], sizeof ce->vars[0], "PMI_FD=%d", fd);
    snprintf(ce->vars[1], sizeof ce->vars[1], "PMI_RANK=%d", rk->world_rank);
    snprintf(ce->vars[2], sizeof ce->vars[2], "PMI_SIZE=%d", g->size);
    snprintf(ce->vars[3], sizeof ce->vars[3], "FMPL_LAUNCHER=fmplrun");
    snprintf(ce->vars[4], sizeof ce->vars[4], "MPI_LOCALRANKID=%d", local_id);
    snprintf(ce->vars[5], sizeof ce->vars[5], "MPI_LOCALNRANKS=%d", local_n);
    snprintf(ce->vars[6], sizeof ce->vars[6], "FMPL_UNIVERSE_RANK=%d", rk->rank);
    snprintf(ce->vars[7], sizeof ce->vars[7], "FMPL_UNIVERSE_BASE=%d", g->first);
    snprintf(ce->vars[8], sizeof ce->vars[8], "PMI_SPAWNED=1");
    ce->envp[ce->nbase + NRANKVARS - 1] = spawned ? ce->vars[8] : NULL;
}

static void child_warn(const char *what, const fr_rank *rk, int err)
{
    char line[256];
    int n = snprintf(line, sizeof line, "fmplrun: rank %s: %s: %s\n", rk->label, what,
                     strerror(err));
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
    (void)ignored;
}

/* What a process runs and with what. */
typedef struct launch {
    const char *path;   /* resolved program */
    char **argv;
    const char *wdir;   /* NULL: ours */
    child_env *ce;
    int devnull;
} launch;

/* In the child, between fork and exec.  Only async-signal-safe work. */
__attribute__((noreturn)) static void child(fr_job *job, const fr_rank *rk, pid_t parent,
                                            const launch *l, int pmi_fd, int out_w, int err_w,
                                            int status_w)
{
    /* Each rank leads a process group of its own (the launcher signals the
     * rank and its group, loop.c) but stays in the launcher's session: with
     * autogroup scheduling (the kernel's default) a session is one
     * scheduling group, and sched_yield() only gives the core to a task of
     * the yielder's own group.  With ranks in sessions of their own (as
     * Hydra starts them) an oversubscribed wait's yields could not hand
     * the core to the rank it waited for: the waiter kept it up to its
     * group's fair share (4 ranks on 2 cores, bench/mpi-suite: the
     * 8-byte latency 0.56-0.78 us against 0.28-0.39 in one session, in 6
     * of 7 interleaved runs each; NPB LU.A 22.4 s against 20.0, medians of
     * 5 interleaved runs, level in another 3).  Like setsid(), the rank
     * gives up the controlling terminal, so it cannot stop on terminal
     * I/O. */
    setpgid(0, 0);
    int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (tty >= 0) {
        ioctl(tty, TIOCNOTTY);
        close(tty);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the launcher died before prctl */
        _exit(FR_EXIT_LAUNCHER);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &job->child_mask, NULL);
    if (rk->rank != 0 || isatty(STDIN_FILENO)) /* only the first rank reads our input */
        dup2(l->devnull, STDIN_FILENO);
    if (out_w >= 0) {
        dup2(out_w, STDOUT_FILENO);
        dup2(err_w, STDERR_FILENO);
    }
    fcntl(pmi_fd, F_SETFD, 0); /* the one descriptor the rank inherits */
    if (rk->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(rk->cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            child_warn("cannot bind to its CPU", rk, errno);
    }
    if (!l->wdir || chdir(l->wdir) == 0)
        execve(l->path, l->argv, l->ce->envp);
    int err = errno;
    ssize_t ignored = write(status_w, &err, sizeof err);
    (void)ignored;
    _exit(exec_failure_status(err));
}

/* Create process rk's descriptors and fork it.  Returns the exec-status
 * read end or -1 after a message. */
static int start_process(fr_job *job, fr_rank *rk, const launch *l)
{
    int sv[2], out[2] = {-1, -1}, err[2] = {-1, -1}, st[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        pipe2(st, O_CLOEXEC) != 0 ||
        (job->opt.tag_output && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0))) {
        fr_msg("cannot create descriptors for rank %s: %s", rk->label, strerror(errno));
        return -1;
    }
    env_set_rank(l->ce, job, rk, sv[1]);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fr_msg("cannot fork rank %s: %s", rk->label, strerror(errno));
        return -1;
    }
    if (pid == 0)
        child(job, rk, parent, l, sv[1], out[1], err[1], st[1]);
    rk->pid = pid;
    rk->alive = 1;
    job->nalive++;
    rk->pmi_fd = sv[0];
    close(sv[1]);
    close(st[1]);
    if (job->opt.tag_output) {
        char tag[sizeof rk->out.tag];
        snprintf(tag, sizeof tag, "[%s] ", rk->label);
        close(out[1]);
        close(err[1]);
        if (fr_stream_open(&rk->out, out[0], STDOUT_FILENO, tag) != 0 ||
            fr_stream_open(&rk->err, err[0], STDERR_FILENO, tag) != 0)
            fr_msg("out of memory for rank %s's output", rk->label);
    }
    if (rk->group == 0)
        fr_verbose(job, 1, "rank %d: pid %ld%s", rk->rank, (long)pid,
                   rk->cpu >= 0 ? "" : " (not bound)");
    else
        fr_verbose(job, 1, "group %d rank %d: universe index %d, pid %ld%s", rk->group,
                   rk->world_rank, rk->rank, (long)pid, rk->cpu >= 0 ? "" : " (not bound)");
    return st[0];
}

/* Wait for each exec: EOF means it happened, an errno means it did not.
 * The first such errno (*which: its index), or 0.  Closes the descriptors. */
static int wait_execs(const int *status_fd, int count, int *which)
{
    int first_err = 0;
    for (int i = 0; i < count; i++) {
        int child_err;
        ssize_t got;
        while ((got = read(status_fd[i], &child_err, sizeof child_err)) < 0 && errno == EINTR)
            ;
        if (got == (ssize_t)sizeof child_err && first_err == 0) {
            first_err = child_err;
            *which = i;
        }
        close(status_fd[i]);
    }
    return first_err;
}

void fr_process_init(fr_job *job, int idx, int group, int world_rank, int appnum)
{
    fr_rank *rk = &job->ranks[idx];
    rk->rank = idx;
    rk->group = group;
    rk->world_rank = world_rank;
    rk->appnum = appnum;
    if (group == 0)
        snprintf(rk->label, sizeof rk->label, "%d", world_rank);
    else
        snprintf(rk->label, sizeof rk->label, "%d:%d", group, world_rank);
    rk->host = -1;
    rk->cpu = -1;
    rk->pmi_fd = rk->out.fd = rk->err.fd = -1;
}

int fr_spawn(fr_job *job)
{
    for (int r = 0; r < job->n; r++) /* those of other hosts too: no descriptors */
        fr_process_init(job, r, 0, r, 0);
    if (job->nlocal == 0) { /* a proxy started for spawned processes only */
        int verbose = job->opt.verbose;
        job->opt.verbose = 0; /* nothing to tell yet */
        plan_binding(job);
        job->opt.verbose = verbose;
        return 0;
    }
    char path[4096];
    const char *prog = job->opt.argv[0];
    int err = fr_resolve_program(prog, NULL, NULL, path, sizeof path);
    if (err) {
        fr_msg("cannot execute '%s': %s", prog, strerror(err));
        return exec_failure_status(err);
    }
    if (raise_fd_limit(job->nlocal, job->opt.tag_output) != 0) {
        fr_msg("the open-file limit is too low for %d ranks (ulimit -n)", job->nlocal);
        return FR_EXIT_LAUNCHER;
    }
    plan_binding(job);
    child_env ce;
    launch l = {.path = path, .argv = job->opt.argv, .ce = &ce};
    l.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (l.devnull < 0 || env_build(&ce) != 0) {
        fr_msg("cannot prepare the ranks' environment");
        return FR_EXIT_LAUNCHER;
    }
    int *status_fd = malloc((size_t)job->nlocal * sizeof *status_fd);
    int started = 0, result = 0;
    for (; status_fd && started < job->nlocal; started++) {
        status_fd[started] = start_process(job, &job->ranks[job->first + started], &l);
        if (status_fd[started] < 0)
            break;
    }
    if (!status_fd || started < job->nlocal)
        result = FR_EXIT_LAUNCHER;
    int which = 0;
    int child_err = status_fd ? wait_execs(status_fd, started, &which) : 0;
    if (child_err && result == 0) {
        fr_msg("cannot execute '%s': %s", prog, strerror(child_err));
        result = exec_failure_status(child_err);
    }
    free(status_fd);
    free(ce.envp);
    close(l.devnull);
    if (job->opt.verbose >= 1)
        fr_msg("job %s: %d rank(s) of %s started", job->kvsname, started, prog);
    return result;
}

int fr_app_resolve(fr_app *a, char *err, size_t errlen)
{
    /* Relative names count from where the process will start: wdir, else
     * our own directory; absolute, because the child changes into wdir. */
    char cwd[PATH_MAX], base[2 * PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        snprintf(err, errlen, "cannot read fmplrun's working directory: %s", strerror(errno));
        return -1;
    }
    if (!a->wdir)
        snprintf(base, sizeof base, "%s", cwd);
    else if (a->wdir[0] == '/')
        snprintf(base, sizeof base, "%s", a->wdir);
    else
        snprintf(base, sizeof base, "%s/%s", cwd, a->wdir);
    struct stat st;
    if (a->wdir) {
        int bad = stat(base, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR
                                             : access(base, X_OK) != 0 ? errno : 0;
        if (bad) {
            snprintf(err, errlen, "cannot enter wdir '%s': %s", a->wdir, strerror(bad));
            return -1;
        }
    }
    const char *search = a->search && a->search[0] ? a->search : NULL;
    int e = fr_resolve_program(a->argv[0], search, base, a->path, sizeof a->path);
    if (e) {
        snprintf(err, errlen, "cannot execute '%s': %s", a->argv[0], strerror(e));
        return -1;
    }
    return 0;
}

/* Members that could not all start: kill those that did; their ends are
 * no failure of the job (the spawner gets the error instead). */
static void abandon_members(fr_job *job, const int *members, int count)
{
    for (int i = 0; i < count; i++) {
        fr_rank *rk = &job->ranks[members[i]];
        rk->reported = 1;
        if (rk->alive && rk->pid > 0) {
            kill(rk->pid, SIGKILL);
            kill(-rk->pid, SIGKILL);
        }
    }
}

int fr_start_members(fr_job *job, const int *members, const fr_app *const *app, int count,
                     char *err, size_t errlen)
{
    if (raise_fd_limit(job->nalive + count, job->opt.tag_output) != 0) {
        snprintf(err, errlen, "the open-file limit is too low for %d more processes (ulimit -n)",
                 count);
        return -1;
    }
    child_env ce;
    int *status_fd = calloc((size_t)count + 1, sizeof *status_fd);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (!status_fd || devnull < 0 || env_build(&ce) != 0) {
        snprintf(err, errlen, "cannot prepare the processes' environment");
        free(status_fd);
        if (devnull >= 0)
            close(devnull);
        return -1;
    }
    /* The default binding binds only while every process has a CPU. */
    int bind = job->bound && (job->opt.bind == FR_BIND_CORE || job->nalive + count <= job->ncpus);
    for (int i = 0; i < count; i++) {
        fr_rank *rk = &job->ranks[members[i]];
        rk->cpu = -1;
        if (bind) /* members have fresh indices: those in between are this spawn's */
            rk->cpu = least_loaded_cpu(job, members[0], members[i]);
    }
    int started = 0, failed = 0;
    while (started < count) {
        const fr_app *a = app[started];
        launch l = {.path = a->path, .argv = a->argv, .wdir = a->wdir, .ce = &ce,
                    .devnull = devnull};
        int fd = start_process(job, &job->ranks[members[started]], &l);
        if (fd < 0) {
            snprintf(err, errlen, "cannot start the processes (see fmplrun's message)");
            failed = 1;
            break;
        }
        status_fd[started++] = fd;
    }
    int which = 0;
    int child_err = wait_execs(status_fd, started, &which);
    free(status_fd);
    free(ce.envp);
    close(devnull);
    if (child_err)
        snprintf(err, errlen, "cannot execute '%s': %s", app[which]->argv[0],
                 strerror(child_err));
    if (failed || child_err) {
        abandon_members(job, members, count);
        return -1;
    }
    return 0;
}

int fr_spawn_group(fr_job *job, const fr_app *apps, int napps, fr_kvs *preput, char *err,
                   size_t errlen)
{
    int total = 0;
    for (int a = 0; a < napps; a++)
        total += apps[a].nprocs;
    if (total < 1 || total > FR_MAX_RANKS - job->nprocs) {
        snprintf(err, errlen, "universe full: %d processes started, %d more asked, at most %d",
                 job->nprocs, total, FR_MAX_RANKS);
        fr_kvs_free(preput);
        return -1;
    }
    int *members = malloc((size_t)total * sizeof *members);
    const fr_app **app = malloc((size_t)total * sizeof *app);
    if (!members || !app) {
        snprintf(err, errlen, "out of memory");
        free(members);
        free(app);
        fr_kvs_free(preput);
        return -1;
    }
    int gi = job->ngroups++;
    fr_group *g = &job->groups[gi];
    *g = (fr_group){.first = job->nprocs, .size = total, .preput = preput, .spawner = -1};
    for (int a = 0, w = 0; a < napps; a++)
        for (int i = 0; i < apps[a].nprocs; i++, w++) {
            fr_process_init(job, g->first + w, gi, w, a);
            job->ranks[g->first + w].local_id = w; /* one host: the whole group is here */
            job->ranks[g->first + w].local_n = total;
            members[w] = g->first + w;
            app[w] = &apps[a];
        }
    job->nprocs = g->first + total;
    int rc = fr_start_members(job, members, app, total, err, errlen);
    free(members);
    free(app);
    return rc == 0 ? gi : -1;
}
