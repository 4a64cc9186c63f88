/* fmplrun's PMI-1 server: reads each rank's request lines from its socket
 * and answers them the way mpiexec.hydra does (see pmi1_wire.h).  A barrier
 * completes when all members of the caller's group (its world: the N
 * initial ranks, or one spawn's processes) have entered it; a put is stored
 * at once in the one store all groups share, so a get already sees it
 * (PMI-1 only promises that after the barrier); a get finds the caller's
 * group's preput keys first.  Spawn requests span several lines
 * (dynamic.c); name publishing and FMPL's rendezvous queues are names.c's.
 * Requests we do not know get rc=-1 with a message, and a warning here.
 * Across hosts the head serves every rank: a remote rank's requests and
 * replies travel through its host's proxy (head.c, proxy.c), line by line. */
#include "fmplrun.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void fr_pmi_reply(fr_job *job, fr_rank *r, const char *fmt, ...)
{
    char line[FMPL_PMI1_LINE_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    size_t n = fr_vline(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n == 0)
        return;
    fr_verbose(job, 2, "rank %s <- %.*s", r->label, (int)n - 1, line);
    if (r->host >= 0) {
        fr_head_send(job, r->host, "P %d %.*s", r->rank, (int)n - 1, line);
        return;
    }
    fr_send_all(r->pmi_fd, line, n); /* fails when the rank is gone: its exit is handled elsewhere */
}

/* Group g's barrier: fail the job when a member that has not entered it is
 * gone (it could never complete), release it when every member is in. */
static void group_barrier_check(fr_job *job, fr_group *g)
{
    if (g->barrier_count == 0)
        return;
    fr_rank *m = &job->ranks[g->first];
    if (!job->ending) {
        for (int i = 0; i < g->size; i++) {
            fr_rank *gone = &m[i];
            if (gone->alive || gone->in_barrier || gone->reported)
                continue;
            char waiting[512];
            size_t off = 0;
            for (int j = 0; j < g->size && off < sizeof waiting - 16; j++)
                if (m[j].in_barrier)
                    off += (size_t)snprintf(waiting + off, sizeof waiting - off, " %d",
                                            m[j].world_rank);
            fr_fail(job, gone, 1,
                    "%s exited with status 0 while rank(s)%s%s waited for it in a PMI barrier "
                    "it never entered",
                    fr_rank_who(job, gone).s, waiting, gone->group ? " of its group" : "");
        }
    }
    if (g->barrier_count < g->size)
        return;
    for (int i = 0; i < g->size; i++) {
        m[i].in_barrier = 0;
        fr_pmi_reply(job, &m[i], "cmd=barrier_out");
    }
    g->barrier_count = 0;
}

void fr_pmi_barrier_check(fr_job *job)
{
    for (int g = 0; g < job->ngroups; g++)
        group_barrier_check(job, &job->groups[g]);
}

static void put(fr_job *job, fr_rank *r, const char *line)
{
    char kvsname[FMPL_PMI1_KVSNAME_MAX], key[FMPL_PMI1_KEYLEN_MAX], value[FMPL_PMI1_VALLEN_MAX];
    if (fmpl_pmi1_field(line, "kvsname", kvsname, sizeof kvsname) != 0 ||
        strcmp(kvsname, job->kvsname) != 0) {
        fr_pmi_reply(job, r, "cmd=put_result rc=-1 msg=unknown_kvsname");
        return;
    }
    if (fmpl_pmi1_field(line, "key", key, sizeof key) != 0 ||
        fmpl_pmi1_field(line, "value", value, sizeof value) != 0) {
        fr_pmi_reply(job, r, "cmd=put_result rc=-1 msg=missing_or_too_long_key_or_value");
        return;
    }
    if (fr_kvs_put(job->kvs, key, value) != 0) {
        fr_pmi_reply(job, r, "cmd=put_result rc=-1 msg=out_of_memory");
        return;
    }
    fr_pmi_reply(job, r, "cmd=put_result rc=0 msg=success");
}

static void get(fr_job *job, fr_rank *r, const char *line)
{
    char kvsname[FMPL_PMI1_KVSNAME_MAX], key[FMPL_PMI1_KEYLEN_MAX];
    if (fmpl_pmi1_field(line, "kvsname", kvsname, sizeof kvsname) != 0 ||
        strcmp(kvsname, job->kvsname) != 0) {
        fr_pmi_reply(job, r, "cmd=get_result rc=-1 msg=unknown_kvsname");
        return;
    }
    if (fmpl_pmi1_field(line, "key", key, sizeof key) != 0) {
        fr_pmi_reply(job, r, "cmd=get_result rc=-1 msg=missing_or_too_long_key");
        return;
    }
    fr_kvs *preput = job->groups[r->group].preput;
    const char *value = preput ? fr_kvs_get(preput, key) : NULL;
    if (!value)
        value = fr_kvs_get(job->kvs, key);
    if (value)
        fr_pmi_reply(job, r, "cmd=get_result rc=0 msg=success value=%s", value);
    else
        fr_pmi_reply(job, r, "cmd=get_result rc=-1 msg=key_%s_not_found", key);
}

void fr_pmi_handle(fr_job *job, fr_rank *r, const char *line)
{
    char cmd[64], arg[32];
    fr_verbose(job, 2, "rank %s -> %s", r->label, line);
    if (fr_mcmd_line(job, r, line)) {
        /* one line of a multi-line request: dynamic.c's */
    } else if (fmpl_pmi1_field(line, "cmd", cmd, sizeof cmd) != 0) {
        fr_msg("rank %s sent a PMI request without cmd=: '%.100s'", r->label, line);
        fr_pmi_reply(job, r, "cmd=error rc=-1 msg=request_without_cmd");
    } else if (strcmp(cmd, "init") == 0) {
        int v1 = fmpl_pmi1_field(line, "pmi_version", arg, sizeof arg) == 0 &&
                 strcmp(arg, "1") == 0;
        fr_pmi_reply(job, r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=%d%s",
              v1 ? 0 : -1, v1 ? "" : " msg=fmplrun_serves_only_PMI-1");
    } else if (strcmp(cmd, "get_maxes") == 0) {
        fr_pmi_reply(job, r, "cmd=maxes kvsname_max=%d keylen_max=%d vallen_max=%d",
              FMPL_PMI1_KVSNAME_MAX, FMPL_PMI1_KEYLEN_MAX, FMPL_PMI1_VALLEN_MAX);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        fr_pmi_reply(job, r, "cmd=my_kvsname kvsname=%s", job->kvsname);
    } else if (strcmp(cmd, "get_appnum") == 0) {
        fr_pmi_reply(job, r, "cmd=appnum appnum=%d", r->appnum);
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        /* Without --universe-size, never fewer than the processes running:
         * a spawned world asking would otherwise see a universe no larger
         * than itself while its parents run too (MPICH's spawn tests then
         * take the children for parents that cannot spawn). */
        int size = job->universe_size;
        if (job->opt.universe_size == 0 && job->nalive > size)
            size = job->nalive;
        fr_pmi_reply(job, r, "cmd=universe_size size=%d", size);
    } else if (strcmp(cmd, "put") == 0) {
        put(job, r, line);
    } else if (strcmp(cmd, "get") == 0) {
        get(job, r, line);
    } else if (strcmp(cmd, "barrier_in") == 0) {
        if (r->in_barrier) {
            fr_pmi_reply(job, r, "cmd=barrier_out rc=-1 msg=already_in_the_barrier");
            return;
        }
        r->in_barrier = 1;
        job->groups[r->group].barrier_count++;
        group_barrier_check(job, &job->groups[r->group]);
    } else if (strcmp(cmd, "finalize") == 0) {
        r->finalized = 1;
        fr_pmi_reply(job, r, "cmd=finalize_ack");
    } else if (strcmp(cmd, "abort") == 0) {
        char *end;
        long code = 1;
        if (fmpl_pmi1_field(line, "exitcode", arg, sizeof arg) == 0) {
            code = strtol(arg, &end, 10);
            if (*end || end == arg)
                code = 1;
        }
        fr_fail(job, r, fmpl_pmi1_abort_status((int)code), "%s called abort with code %ld",
                fr_rank_who(job, r).s, code);
    } else if (fr_names_handle(job, r, cmd, line)) {
        /* name publishing, rendezvous queues */
    } else {
        fr_msg("rank %s sent an unknown PMI command '%s'", r->label, cmd);
        fr_pmi_reply(job, r, "cmd=error rc=-1 msg=unknown_command_%s", cmd);
    }
}

/* Serve every complete line in the rank's buffer. */
static void serve_lines(fr_job *job, fr_rank *r)
{
    size_t start = 0;
    char *nl;
    while ((nl = memchr(r->pmi_buf + start, '\n', r->pmi_len - start)) != NULL) {
        *nl = '\0';
        if (r->skip_line)
            ;
        else if (job->opt.proxy_head)
            fr_proxy_forward(job, r, r->pmi_buf + start); /* a proxy: the head serves it */
        else
            fr_pmi_handle(job, r, r->pmi_buf + start);
        r->skip_line = 0;
        start = (size_t)(nl - r->pmi_buf) + 1;
    }
    r->pmi_len -= start;
    memmove(r->pmi_buf, r->pmi_buf + start, r->pmi_len);
    if (r->pmi_len == sizeof r->pmi_buf) {
        fr_msg("rank %s sent a PMI request longer than %d bytes", r->label, FMPL_PMI1_LINE_MAX);
        fr_pmi_reply(job, r, "cmd=error rc=-1 msg=request_too_long");
        r->pmi_len = 0;
        r->skip_line = 1;
    }
}

/* One read; 0 when more may follow, -1 at end of stream or error. */
static int read_once(fr_job *job, fr_rank *r)
{
    ssize_t got = recv(r->pmi_fd, r->pmi_buf + r->pmi_len, sizeof r->pmi_buf - r->pmi_len,
                       MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return -1;
    if (got <= 0) {
        close(r->pmi_fd);
        r->pmi_fd = -1;
        return -1;
    }
    r->pmi_len += (size_t)got;
    serve_lines(job, r);
    return 0;
}

void fr_pmi_readable(fr_job *job, fr_rank *r)
{
    if (r->pmi_fd >= 0)
        read_once(job, r);
}

void fr_pmi_drain(fr_job *job, fr_rank *r)
{
    for (int rounds = 0; rounds < 64 && r->pmi_fd >= 0; rounds++)
        if (read_once(job, r) != 0)
            break;
}
