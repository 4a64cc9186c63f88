/* fmplrun's event loop and failure handling.
 *
 * One poll(2) waits on a signalfd (SIGCHLD and the signals we forward),
 * every rank's PMI socket and, with --tag-output, every output pipe.  Its
 * timeout is the nearest deadline (--timeout, the SIGKILL escalation), so
 * nothing spins.  The first failure ends the job: SIGTERM to every rank and
 * to its process group, SIGKILL 300 ms later for any still alive.
 * Across hosts the head's loop also serves the proxies' connections and
 * output (head.c) and a proxy's loop its connection to the head (proxy.c);
 * the head signals remote ranks through their proxies.  Processes spawned
 * during the job (dynamic.c) are served, judged and ended like the initial
 * ranks: the job ends when every process of every group has ended.  A
 * proxy's loop goes on without processes until the head says the job is
 * over (proxy.c). */
#include "fmplrun.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAIL_GRACE_MS 300      /* SIGTERM -> SIGKILL when a rank failed */
#define SIGNAL_GRACE_MS 1000   /* the same when fmplrun was signalled */
#define OUTPUT_DRAIN_MS 200    /* wait for output pipes after the last rank */

uint64_t fr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int fr_signals_setup(fr_job *job)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTSTP);
    sigaddset(&set, SIGCONT);
    if (sigprocmask(SIG_BLOCK, &set, &job->child_mask) != 0)
        return -1;
    job->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    return job->sigfd < 0 ? -1 : 0;
}

static void signal_ranks(fr_job *job, int sig)
{
    if (job->hosts)
        fr_head_signal(job, sig);
    /* Each rank leads its own process group (spawn.c); while it is unreaped
     * its pid cannot be reused, so its group is its own: signalling the
     * group reaches the rank's children too.  (A rank that has not yet
     * called setpgid has no group: it gets the signal itself.) */
    for (int i = 0; i < job->nprocs; i++) /* remote pids (host >= 0) are not ours */
        if (job->ranks[i].alive && job->ranks[i].host < 0 && job->ranks[i].pid > 0) {
            kill(job->ranks[i].pid, sig);
            kill(-job->ranks[i].pid, sig);
        }
}

void fr_end_job(fr_job *job, int sig, int grace_ms)
{
    job->ending = 1;
    signal_ranks(job, sig);
    if (sig == SIGKILL) {
        job->kill_at = 0;
        return;
    }
    uint64_t at = fr_now_ns() + (uint64_t)grace_ms * 1000000ull;
    if (job->kill_at == 0 || at < job->kill_at)
        job->kill_at = at;
}

void fr_fail(fr_job *job, fr_rank *r, int status, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (r) {
        if (r->reported)
            return;
        r->reported = 1;
    }
    if (job->ending) {
        fr_verbose(job, 1, "while ending the job: %s", text);
        return;
    }
    size_t len = strlen(job->fail_text);
    snprintf(job->fail_text + len, sizeof job->fail_text - len, "%s%s", len ? ", " : "", text);
    if (job->fail_status < 0)
        job->fail_status = status;
}

/* Report the failures of this iteration in one line and end the job. */
static void flush_failures(fr_job *job)
{
    if (job->fail_status < 0)
        return;
    fr_msg("%s; ending the job", job->fail_text);
    job->exit_status = job->fail_status;
    job->fail_status = -1;
    job->fail_text[0] = '\0';
    fr_end_job(job, SIGTERM, FAIL_GRACE_MS);
}

fr_who fr_rank_who(const fr_job *job, const fr_rank *r)
{
    fr_who w;
    if (r->group == 0)
        snprintf(w.s, sizeof w.s, "rank %d (pid %ld%s)", r->rank, (long)r->pid,
                 fr_rank_where(job, r));
    else
        snprintf(w.s, sizeof w.s, "group %d rank %d (universe index %d, pid %ld%s)", r->group,
                 r->world_rank, r->rank, (long)r->pid, fr_rank_where(job, r));
    return w;
}

void fr_judge_exit(fr_job *job, fr_rank *r)
{
    int st = r->status;
    fr_who who = fr_rank_who(job, r);
    if (WIFSIGNALED(st)) {
        fr_verbose(job, 1, "%s killed by signal %d", who.s, WTERMSIG(st));
        fr_fail(job, r, 128 + WTERMSIG(st), "%s killed by signal %d (%s)", who.s, WTERMSIG(st),
                strsignal(WTERMSIG(st)));
    } else if (WEXITSTATUS(st) != 0) {
        fr_verbose(job, 1, "%s exited with status %d", who.s, WEXITSTATUS(st));
        fr_fail(job, r, WEXITSTATUS(st), "%s exited with status %d", who.s, WEXITSTATUS(st));
    } else {
        fr_verbose(job, 1, "%s exited with status 0", who.s);
        fr_pmi_barrier_check(job);
    }
}

static void reap(fr_job *job)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        fr_rank *r = NULL;
        for (int i = 0; i < job->nprocs && !r; i++)
            if (job->ranks[i].alive && job->ranks[i].host < 0 && job->ranks[i].pid == pid)
                r = &job->ranks[i];
        if (!r) {
            if (job->hosts)
                fr_head_reaped(job, pid, st);
            continue;
        }
        /* Serve what it sent before dying (an abort, say) before judging. */
        fr_pmi_drain(job, r);
        if (r->pmi_fd >= 0) {
            close(r->pmi_fd);
            r->pmi_fd = -1;
        }
        r->alive = 0;
        r->status = st;
        job->nalive--;
        if (job->opt.proxy_head)
            fr_proxy_reaped(job, r); /* the head judges */
        else
            fr_judge_exit(job, r);
    }
}

static void on_signal(fr_job *job, int sig)
{
    if (sig == SIGTSTP) { /* Ctrl-Z: stop the ranks, then ourselves */
        signal_ranks(job, SIGTSTP);
        raise(SIGSTOP);
        return;
    }
    if (sig == SIGCONT) {
        signal_ranks(job, SIGCONT);
        return;
    }
    if (job->ending) {
        fr_msg("received signal %d (%s) while ending the job; killing the ranks", sig,
               strsignal(sig));
        fr_end_job(job, SIGKILL, 0);
        return;
    }
    fr_msg("received signal %d (%s); forwarding it to the ranks and ending the job", sig,
           strsignal(sig));
    job->exit_status = 128 + sig;
    fr_end_job(job, sig, SIGNAL_GRACE_MS);
}

static void read_signals(fr_job *job)
{
    struct signalfd_siginfo si;
    int child = 0;
    while (read(job->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD)
            child = 1;
        else
            on_signal(job, (int)si.ssi_signo);
    }
    if (child)
        reap(job);
}

static void check_timeout(fr_job *job, uint64_t now)
{
    if (job->ending || job->deadline == 0 || now < job->deadline)
        return;
    char running[512];
    size_t off = 0;
    for (int i = 0; i < job->nprocs && off < sizeof running - 16; i++)
        if (job->ranks[i].alive)
            off += (size_t)snprintf(running + off, sizeof running - off, " %s",
                                    job->ranks[i].label);
    fr_msg("job exceeded --timeout %g s; ranks still running:%s; ending the job",
           job->opt.timeout, running);
    job->exit_status = FR_EXIT_TIMEOUT;
    fr_end_job(job, SIGTERM, FAIL_GRACE_MS);
}

static int streams_open(const fr_job *job)
{
    for (int i = 0; i < job->nprocs; i++)
        if (job->ranks[i].out.fd >= 0 || job->ranks[i].err.fd >= 0)
            return 1;
    return 0;
}

/* Milliseconds until the nearest deadline (rounded up), or -1. */
static int poll_timeout(const fr_job *job, uint64_t now, uint64_t drain_until)
{
    uint64_t next = 0;
    uint64_t cand[4] = {job->ending ? 0 : job->deadline, job->kill_at, drain_until,
                        job->hosts ? fr_head_next_deadline(job) : 0};
    for (int i = 0; i < 4; i++)
        if (cand[i] && (next == 0 || cand[i] < next))
            next = cand[i];
    if (next == 0)
        return -1;
    if (next <= now)
        return 0;
    uint64_t ms = (next - now + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

/* Room for n poll entries in *pfd and *who; 0, or -1 (the old arrays stay). */
static int poll_room(struct pollfd **pfd, int **who, size_t *slots, size_t n)
{
    if (n <= *slots)
        return 0;
    size_t want = n + 64;
    struct pollfd *p2 = realloc(*pfd, want * sizeof **pfd);
    if (p2)
        *pfd = p2;
    int *w2 = realloc(*who, want * sizeof **who);
    if (w2)
        *who = w2;
    if (!p2 || !w2)
        return -1;
    *slots = want;
    return 0;
}

int fr_run(fr_job *job)
{
    if (job->opt.timeout > 0 && !job->ending)
        job->deadline = fr_now_ns() + (uint64_t)(job->opt.timeout * 1e9);
    /* Processes: 3 each (more come with spawns); head: listener, pending
     * connections, 3 per host; proxy: the head. */
    size_t slots = (size_t)job->nprocs * 3 + 2 + (size_t)job->nhosts * 4 + 64;
    struct pollfd *pfd = malloc(slots * sizeof *pfd);
    int *who = malloc(slots * sizeof *who); /* rank*3 + kind; < -1: head.c's */
    if (!pfd || !who) {
        fr_msg("out of memory");
        fr_end_job(job, SIGKILL, 0);
    }
    uint64_t drain_until = 0;
    for (;;) {
        uint64_t now = fr_now_ns();
        /* A proxy waits for the head's word: a spawn may place more here. */
        int proxy_waits = job->head.fd >= 0 && !job->quit && !job->ending;
        if (job->nalive == 0 && job->hosts && !fr_head_done(job)) {
            /* The proxies still clean up and flush their output. */
        } else if (job->nalive == 0 && !proxy_waits) {
            if (!streams_open(job) || !pfd)
                break;
            if (drain_until == 0)
                drain_until = now + OUTPUT_DRAIN_MS * 1000000ull;
            else if (now >= drain_until)
                break;
        }
        if (!pfd || !who) { /* out of memory: just reap what we killed */
            int st;
            if (waitpid(-1, &st, 0) > 0)
                job->nalive--;
            else
                break;
            continue;
        }
        size_t need = 2 + (size_t)job->nprocs * 3 +
                      (job->hosts ? (size_t)fr_head_pollfd_count(job) : 0);
        if (poll_room(&pfd, &who, &slots, need) != 0) {
            fr_msg("out of memory for the poll set: ending the job");
            fr_end_job(job, SIGKILL, 0);
        }
        int n = 0;
        pfd[n] = (struct pollfd){.fd = job->sigfd, .events = POLLIN};
        who[n++] = -1;
        if (job->head.fd >= 0) {
            pfd[n] = (struct pollfd){.fd = job->head.fd, .events = POLLIN};
            who[n++] = -2;
        }
        if (job->hosts && need <= slots)
            n += fr_head_pollfds(job, pfd, who, n);
        for (int i = 0; i < job->nprocs && (size_t)n + 3 <= slots; i++) {
            fr_rank *r = &job->ranks[i];
            int fds[3] = {r->pmi_fd, r->out.fd, r->err.fd};
            for (int k = 0; k < 3; k++) {
                if (fds[k] < 0)
                    continue;
                pfd[n] = (struct pollfd){.fd = fds[k], .events = POLLIN};
                who[n++] = i * 3 + k;
            }
        }
        int ready = poll(pfd, (nfds_t)n, poll_timeout(job, now, drain_until));
        if (ready < 0 && errno != EINTR) {
            fr_msg("poll failed: %s", strerror(errno));
            break;
        }
        for (int p = 1; ready > 0 && p < n; p++) {
            if (!pfd[p].revents)
                continue;
            if (who[p] < -1) {
                if (job->opt.proxy_head)
                    fr_proxy_ready(job);
                else
                    fr_head_ready(job, who[p], pfd[p].revents);
                continue;
            }
            fr_rank *r = &job->ranks[who[p] / 3];
            switch (who[p] % 3) {
            case 0: fr_pmi_readable(job, r); break;
            case 1: fr_stream_readable(&r->out); break;
            default: fr_stream_readable(&r->err); break;
            }
        }
        if (ready > 0 && pfd[0].revents)
            read_signals(job);
        flush_failures(job);
        now = fr_now_ns();
        if (job->hosts) {
            fr_head_tick(job, now);
            flush_failures(job);
        }
        check_timeout(job, now);
        if (job->kill_at && now >= job->kill_at) {
            fr_verbose(job, 1, "ranks still alive after SIGTERM: sending SIGKILL");
            fr_end_job(job, SIGKILL, 0);
        }
    }
    for (int i = 0; i < job->nprocs; i++) {
        fr_rank *r = &job->ranks[i];
        fr_stream_close(&r->out);
        fr_stream_close(&r->err);
        if (r->pmi_fd >= 0)
            close(r->pmi_fd);
        r->pmi_fd = -1;
        fr_mcmd_free(r);
    }
    free(pfd);
    free(who);
    return job->exit_status;
}
