/* MPI dynamic processes: spawn requests (MPI_Comm_spawn, _multiple).
 *
 * A request spans several lines (pmi1_wire.h has the format): "mcmd=spawn",
 * key=value lines, "endcmd"; one such block per command, the blocks
 * numbered spawnssofar = 1..totspawns, one answer after the last.  Lines
 * arrive one at a time (across hosts, relayed one by one by the proxy), so
 * each process has a fr_spawn_req gathering its current block and the
 * blocks of its spawn so far.
 *
 * At the last block the request is checked whole before anything starts:
 * each program is looked up as the initial launch does (in info "path"
 * instead of $PATH when given, relative names from info "wdir"), "wdir"
 * must be a directory we can enter, "host"/"hosts" must name this host, the
 * universe must have room (FR_MAX_RANKS processes in the job's life).  Then
 * the new group starts (spawn.c: its world ranks 0..K-1 on consecutive
 * universe indices, appnum = the block's index, the last block's preput
 * keys its own) and the spawner gets its first universe index.  Any
 * problem: rc=-1 with the reason in msg (spaces made '_'), nothing started.
 *
 * Across hosts (the head) "host"/"hosts" must name hosts of the job
 * (h1,h2:3: the listed hosts in turn, each taking its count, default 1, of
 * consecutive processes); without it each process goes to the first host
 * with a free slot (default_host).  The head sends each host's share to its
 * proxy (starting one if the host has none yet), which looks the program up
 * and checks wdir there, forks the processes and answers "R group rc
 * [reason]"; when every host has answered, the spawner gets the group's
 * first index, or the first refusal ("on HOST: reason") after the hosts
 * that started theirs have killed them ("D group"). */
#include "fmplrun.h"
#include "bootstrap/spawn_rules.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK_MAX (256 * 1024) /* one block's lines, at most */
#define ARGS_MAX 4096          /* arguments of one command, at most */

struct fr_spawn_req {
    char *block;     /* the current block's lines, each ending in '\n' */
    size_t len, cap;
    int in_block;
    int too_long;    /* the block outgrew BLOCK_MAX: refused at its end */
    char **blocks;   /* the spawn's complete blocks so far */
    int nblocks;
    int total;       /* their totspawns */
};

static void drop_blocks(fr_spawn_req *q)
{
    for (int i = 0; i < q->nblocks; i++)
        free(q->blocks[i]);
    free(q->blocks);
    q->blocks = NULL;
    q->nblocks = q->total = 0;
}

void fr_mcmd_free(fr_rank *r)
{
    if (!r->mcmd)
        return;
    drop_blocks(r->mcmd);
    free(r->mcmd->block);
    free(r->mcmd);
    r->mcmd = NULL;
}

/* Append one line (and its newline) to the current block. */
static void block_append(fr_spawn_req *q, const char *line)
{
    size_t llen = strlen(line);
    if (q->too_long || q->len + llen + 2 > BLOCK_MAX) {
        q->too_long = 1;
        return;
    }
    if (q->len + llen + 2 > q->cap) {
        size_t cap = q->cap ? q->cap : 4096;
        while (cap < q->len + llen + 2)
            cap *= 2;
        char *more = realloc(q->block, cap);
        if (!more) {
            q->too_long = 1; /* refused at the end, as a request we cannot take */
            return;
        }
        q->block = more;
        q->cap = cap;
    }
    memcpy(q->block + q->len, line, llen);
    q->len += llen;
    q->block[q->len++] = '\n';
    q->block[q->len] = '\0';
}

/* ------------------------------------------------------------ checking */

typedef struct spawn_check {
    char err[600];   /* the first problem found; "" while none */
} spawn_check;

__attribute__((format(printf, 2, 3))) static void refuse(spawn_check *c, const char *fmt, ...)
{
    if (c->err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

/* A field of block b (number `which` of the spawn, for messages). */
static int field(spawn_check *c, const char *b, int which, const char *key, char *out, size_t len)
{
    int rc = fmpl_pmi1_mcmd_field(b, key, out, len);
    if (rc == -1)
        refuse(c, "block %d lacks %s", which, key);
    else if (rc == -2)
        refuse(c, "block %d: %s is too long", which, key);
    return rc;
}

static int int_field(spawn_check *c, const char *b, int which, const char *key, int lo, int hi,
                     int missing)
{
    char text[32], *end;
    int rc = fmpl_pmi1_mcmd_field(b, key, text, sizeof text);
    if (rc == -1 && missing >= 0)
        return missing;
    if (rc != 0 && field(c, b, which, key, text, sizeof text) != 0)
        return lo;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi) {
        refuse(c, "block %d: %s=%s is not a number in %d..%d", which, key, text, lo, hi);
        return lo;
    }
    return (int)v;
}

/* Pair i of a list: "<list>_key_<i>" and "<list>_val_<i>" (preput, info). */
static int pair_field(spawn_check *c, const char *b, int which, const char *list, int i,
                      char *key, size_t klen, char *value, size_t vlen)
{
    char name[64];
    snprintf(name, sizeof name, "%s_key_%d", list, i);
    if (field(c, b, which, name, key, klen) != 0)
        return -1;
    snprintf(name, sizeof name, "%s_val_%d", list, i);
    return field(c, b, which, name, value, vlen) == 0 ? 0 : -1;
}

/* Where a command's processes go when its info names hosts ("host" or
 * "hosts": h1,h2:3,...): the listed job hosts in turn, each taking its
 * count (default 1) of consecutive processes. */
typedef struct host_list {
    int n;
    int host[64];
    int count[64];
} host_list;

/* The job host named `name` (its name as given to --hosts, or this
 * machine's name or "localhost" for a job host that is this machine), or -1. */
static int job_host(const fr_job *job, const char *name)
{
    for (int h = 0; h < job->nhosts; h++)
        if (strcmp(job->hosts[h].name, name) == 0)
            return h;
    for (int h = 0; h < job->nhosts && fr_is_this_host(name); h++)
        if (fr_is_this_host(job->hosts[h].name))
            return h;
    return -1;
}

/* Every name of the list must be one of the job's hosts (one host: this
 * one); across hosts the list is kept in hl. */
static void parse_hosts(spawn_check *c, const fr_job *job, const char *list, host_list *hl)
{
    char copy[FMPL_PMI1_LINE_MAX];
    snprintf(copy, sizeof copy, "%s", list);
    char *save = NULL;
    for (char *h = strtok_r(copy, ", ", &save); h && !c->err[0]; h = strtok_r(NULL, ", ", &save)) {
        char *colon = strchr(h, ':'), *end = NULL;
        long count = 1;
        if (colon) {
            *colon = '\0';
            count = strtol(colon + 1, &end, 10);
            if (end == colon + 1 || *end || count < 1 || count > FR_MAX_RANKS) {
                refuse(c, "bad count in '%s:%s' in info host (expected HOST or HOST:N)", h,
                       colon + 1);
                return;
            }
        }
        if (!job->hosts) {
            if (!fr_is_this_host(h))
                refuse(c, "unknown host '%s' in info host: fmplrun spawns on its own host only "
                          "(without --hosts)", h);
            continue;
        }
        int idx = job_host(job, h);
        if (idx < 0) {
            char names[512];
            size_t off = 0;
            for (int k = 0; k < job->nhosts && off < sizeof names - 8; k++)
                off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", k ? "," : "",
                                        job->hosts[k].name);
            refuse(c, "unknown host '%s' in info host: not one of the job's hosts (%s)", h, names);
        } else if (hl->n == (int)(sizeof hl->host / sizeof hl->host[0])) {
            refuse(c, "more than %d hosts in info host", hl->n);
        } else {
            hl->host[hl->n] = idx;
            hl->count[hl->n++] = (int)count;
        }
    }
}

/* Block b (number `which`) into app a: its program, arguments, working
 * directory, search path and hosts.  On one host the program is looked up
 * here; across hosts by the proxy of each host it goes to.  Problems go to c. */
static void parse_app(spawn_check *c, const fr_job *job, const char *b, int which, fr_app *a,
                      host_list *hl)
{
    char execname[FMPL_PMI1_LINE_MAX], key[32], val[FMPL_PMI1_LINE_MAX];
    a->nprocs = int_field(c, b, which, "nprocs", 1, FR_MAX_RANKS, -1);
    if (field(c, b, which, "execname", execname, sizeof execname) != 0)
        return;
    if (!execname[0])
        refuse(c, "block %d: empty execname", which);
    int argc = int_field(c, b, which, "argcnt", 0, ARGS_MAX, 0);
    a->argv = calloc((size_t)argc + 2, sizeof *a->argv);
    if (!a->argv || !(a->argv[0] = strdup(execname))) {
        refuse(c, "out of memory");
        return;
    }
    for (int i = 1; i <= argc && !c->err[0]; i++) {
        snprintf(key, sizeof key, "arg%d", i);
        if (field(c, b, which, key, val, sizeof val) == 0 && !(a->argv[i] = strdup(val)))
            refuse(c, "out of memory");
    }
    int ninfo = int_field(c, b, which, "info_num", 0, 1024, 0);
    for (int i = 0; i < ninfo && !c->err[0]; i++) {
        char info_key[FMPL_PMI1_LINE_MAX];
        if (pair_field(c, b, which, "info", i, info_key, sizeof info_key, val, sizeof val) != 0)
            break;
        const char **slot = strcmp(info_key, "wdir") == 0   ? &a->wdir
                            : strcmp(info_key, "path") == 0 ? &a->search
                                                            : NULL;
        if (slot) {
            free((char *)*slot);
            if (!(*slot = strdup(val)))
                refuse(c, "out of memory");
        } else if (strcmp(info_key, "host") == 0 || strcmp(info_key, "hosts") == 0) {
            parse_hosts(c, job, val, hl);
        } /* other keys (MPI's "arch", "file", "soft", ...) mean nothing here */
    }
    if (c->err[0] || job->hosts)
        return;
    char err[sizeof c->err];
    if (fr_app_resolve(a, err, sizeof err) != 0)
        refuse(c, "%s", err);
}

static void free_apps(fr_app *apps, int napps)
{
    for (int a = 0; apps && a < napps; a++) {
        for (int i = 0; apps[a].argv && apps[a].argv[i]; i++)
            free(apps[a].argv[i]);
        free(apps[a].argv);
        free((char *)apps[a].wdir);
        free((char *)apps[a].search);
    }
    free(apps);
}

/* The spawn's preput keys (the last block's: MPICH's client repeats them
 * in every block), or NULL when there are none or on a problem. */
static fr_kvs *parse_preput(spawn_check *c, const char *b, int which)
{
    int n = int_field(c, b, which, "preput_num", 0, 1024, 0);
    if (n == 0 || c->err[0])
        return NULL;
    fr_kvs *kvs = fr_kvs_new();
    if (!kvs) {
        refuse(c, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n && !c->err[0]; i++) {
        char pkey[FMPL_PMI1_KEYLEN_MAX], pval[FMPL_PMI1_VALLEN_MAX];
        if (pair_field(c, b, which, "preput", i, pkey, sizeof pkey, pval, sizeof pval) != 0)
            break;
        if (fr_kvs_put(kvs, pkey, pval) != 0)
            refuse(c, "out of memory");
    }
    if (c->err[0]) {
        fr_kvs_free(kvs);
        return NULL;
    }
    return kvs;
}

/* A reason as one PMI word: spaces become '_'. */
static void reply_refusal(fr_job *job, fr_rank *r, char *reason)
{
    fr_verbose(job, 1, "rank %s: spawn refused: %s", r->label, reason);
    for (char *p = reason; *p; p++)
        if (*p == ' ' || *p == '\t')
            *p = '_';
    fr_pmi_reply(job, r, "cmd=spawn_result rc=-1 msg=%s", reason);
}

/* Default placement across hosts: the first host, in the job's order,
 * with a free slot (fewer of the job's live processes than its slots);
 * when none has one, the first with fewer than twice its slots, and so on.
 * As Hydra does, the initial ranks and earlier spawns count.  -1: every
 * host is lost. */
static int default_host(const fr_job *job, const int *load)
{
    for (int k = 1; k <= FR_MAX_RANKS; k++)
        for (int h = 0; h < job->nhosts; h++)
            if (!job->hosts[h].lost && load[h] < k * job->hosts[h].slots)
                return h;
    return -1;
}

/* Host h's share of group gi to its proxy: for each command with members
 * there "C appnum argc", its arguments "A arg", "W wdir", "Y path", then
 * "N index world_rank local_id local_n" per member; "L group first size"
 * starts them.  Arguments, wdir and path come from PMI lines: no newline. */
static int queue_share(fr_job *job, int h, int gi, const fr_app *apps, int napps)
{
    const fr_group *g = &job->groups[gi];
    int rc = 0;
    for (int a = 0; a < napps && rc == 0; a++) {
        int here = 0;
        for (int i = g->first; i < g->first + g->size; i++)
            here += job->ranks[i].host == h && job->ranks[i].appnum == a;
        if (!here)
            continue;
        int argc = 0;
        while (apps[a].argv[argc])
            argc++;
        rc |= fr_head_queue(job, h, "C %d %d", a, argc);
        for (int k = 0; k < argc; k++)
            rc |= fr_head_queue(job, h, "A %s", apps[a].argv[k]);
        if (apps[a].wdir)
            rc |= fr_head_queue(job, h, "W %s", apps[a].wdir);
        if (apps[a].search)
            rc |= fr_head_queue(job, h, "Y %s", apps[a].search);
        for (int i = g->first; i < g->first + g->size; i++) {
            const fr_rank *m = &job->ranks[i];
            if (m->host == h && m->appnum == a)
                rc |= fr_head_queue(job, h, "N %d %d %d %d", i, m->world_rank, m->local_id,
                                    m->local_n);
        }
    }
    return rc | fr_head_queue(job, h, "L %d %d %d", gi, g->first, g->size);
}

/* Across hosts: place the group's processes (info host, else
 * default_host), hand each host's share to its proxy (started now if the
 * host has none), and leave the answer to fr_spawn_host_answered. */
static void spawn_across(fr_job *job, fr_rank *r, const fr_app *apps, int napps,
                         const host_list *hls, fr_kvs *preput, int total, spawn_check *c)
{
    int *load = calloc((size_t)job->nhosts, sizeof *load);
    int *where = malloc((size_t)total * sizeof *where);
    if (!load || !where) {
        refuse(c, "out of memory");
        goto out;
    }
    for (int i = 0; i < job->nprocs; i++)
        if (job->ranks[i].alive && job->ranks[i].host >= 0)
            load[job->ranks[i].host]++;
    for (int a = 0, w = 0; a < napps; a++) {
        const host_list *hl = &hls[a];
        for (int i = 0, e = 0, left = hl->n ? hl->count[0] : 0; i < apps[a].nprocs; i++, w++) {
            if (hl->n == 0) {
                where[w] = default_host(job, load);
            } else {
                where[w] = hl->host[e];
                if (--left == 0) {
                    e = (e + 1) % hl->n;
                    left = hl->count[e];
                }
            }
            if (where[w] < 0) {
                refuse(c, "every host of the job is lost");
                goto out;
            }
            if (job->hosts[where[w]].lost) {
                refuse(c, "host %s is lost", job->hosts[where[w]].name);
                goto out;
            }
            load[where[w]]++;
        }
    }
    int gi = job->ngroups++;
    fr_group *g = &job->groups[gi];
    *g = (fr_group){.first = job->nprocs, .size = total, .preput = preput, .spawner = r->rank};
    preput = NULL; /* the group's now */
    int *seen = load; /* reused: members placed on each host so far */
    memset(seen, 0, (size_t)job->nhosts * sizeof *seen);
    for (int a = 0, w = 0; a < napps; a++)
        for (int i = 0; i < apps[a].nprocs; i++, w++) {
            fr_process_init(job, g->first + w, gi, w, a);
            fr_rank *m = &job->ranks[g->first + w];
            m->host = where[w];
            m->local_id = seen[where[w]]++;
            m->alive = 1; /* from now on the job waits for it */
            m->starting = 1;
            job->nalive++;
        }
    for (int w = 0; w < total; w++)
        job->ranks[g->first + w].local_n = seen[where[w]];
    job->nprocs = g->first + total;
    char hosts_text[512] = "";
    size_t off = 0;
    for (int h = 0; h < job->nhosts; h++)
        if (seen[h]) {
            g->pending++;
            if (off < sizeof hosts_text - 8)
                off += (size_t)snprintf(hosts_text + off, sizeof hosts_text - off, "%s%s (%d)",
                                        off ? ", " : "", job->hosts[h].name, seen[h]);
        }
    fr_verbose(job, 1, "rank %s spawns group %d: %d process(es) of %s%s, universe indices %d-%d, "
               "on %s", r->label, gi, total, apps[0].argv[0], napps > 1 ? " ..." : "", g->first,
               g->first + total - 1, hosts_text);
    for (int h = 0; h < job->nhosts; h++) {
        if (!seen[h] || queue_share(job, h, gi, apps, napps) == 0)
            continue;
        /* Its proxy could not be started: its members never will be. */
        for (int w = 0; w < total; w++) {
            fr_rank *m = &job->ranks[g->first + w];
            if (m->host == h && m->alive) {
                m->alive = 0;
                m->starting = 0;
                job->nalive--;
            }
        }
        fr_spawn_host_answered(job, gi, h, "cannot start a proxy there (see fmplrun's message)");
    }
out:
    free(load);
    free(where);
    fr_kvs_free(preput);
}

void fr_spawn_host_answered(fr_job *job, int gi, int host, const char *err)
{
    fr_group *g = &job->groups[gi];
    if (g->pending <= 0)
        return;
    if (err && !g->err) {
        size_t len = strlen(err) + strlen(job->hosts[host].name) + 16;
        g->err = malloc(len);
        if (g->err)
            snprintf(g->err, len, "on %s: %s", job->hosts[host].name, err);
        for (int i = g->first; i < g->first + g->size; i++)
            job->ranks[i].reported = 1; /* their ends are no failure of the job */
    }
    if (--g->pending > 0)
        return;
    fr_rank *r = &job->ranks[g->spawner];
    g->spawner = -1;
    if (!err && !g->err) {
        fr_verbose(job, 1, "group %d started: universe indices %d-%d", gi, g->first,
                   g->first + g->size - 1);
        fr_pmi_reply(job, r, "cmd=spawn_result rc=0 fmpl_universe_first=%d", g->first);
        return;
    }
    /* Whatever of the group started elsewhere goes ("D group"). */
    for (int h = 0; h < job->nhosts; h++)
        for (int i = g->first; i < g->first + g->size; i++)
            if (job->ranks[i].host == h) {
                fr_head_send(job, h, "D %d", gi);
                break;
            }
    char reason[sizeof ((spawn_check *)0)->err];
    snprintf(reason, sizeof reason, "%s", g->err ? g->err : "out of memory");
    free(g->err);
    g->err = NULL;
    reply_refusal(job, r, reason);
}

/* The whole spawn request is in: check it, start the group (across hosts:
 * hand it to the proxies), answer (across hosts: once they have). */
static void spawn(fr_job *job, fr_rank *r, char **blocks, int nblocks)
{
    spawn_check c = {.err = ""};
    fr_app *apps = calloc((size_t)nblocks, sizeof *apps);
    host_list *hls = calloc((size_t)nblocks, sizeof *hls);
    if (!apps || !hls)
        refuse(&c, "out of memory");
    if (job->ending)
        refuse(&c, "the job is ending");
    long total = 0;
    for (int i = 0; i < nblocks && !c.err[0]; i++) {
        parse_app(&c, job, blocks[i], i + 1, &apps[i], &hls[i]);
        total += apps[i].nprocs;
    }
    if (!c.err[0] && total > FR_MAX_RANKS - job->nprocs)
        refuse(&c, "universe full: %d processes started in this job, %ld more asked, at most %d",
               job->nprocs, total, FR_MAX_RANKS);
    fr_kvs *preput = c.err[0] ? NULL : parse_preput(&c, blocks[nblocks - 1], nblocks);
    if (!c.err[0] && job->hosts) {
        spawn_across(job, r, apps, nblocks, hls, preput, (int)total, &c); /* owns preput */
        if (c.err[0])
            reply_refusal(job, r, c.err);
        free_apps(apps, nblocks);
        free(hls);
        return;
    }
    int g = -1;
    if (!c.err[0])
        g = fr_spawn_group(job, apps, nblocks, preput, c.err, sizeof c.err); /* owns preput */
    if (g < 0) {
        reply_refusal(job, r, c.err);
    } else {
        const fr_group *ng = &job->groups[g];
        fr_verbose(job, 1, "rank %s spawned group %d: %d process(es) of %s%s, universe indices "
                   "%d-%d", r->label, g, ng->size, apps[0].argv[0], nblocks > 1 ? " ..." : "",
                   ng->first, ng->first + ng->size - 1);
        fr_pmi_reply(job, r, "cmd=spawn_result rc=0 fmpl_universe_first=%d", ng->first);
    }
    free_apps(apps, nblocks);
    free(hls);
}

/* A block is complete ("endcmd"): keep it, or act when it is the last. */
static void end_block(fr_job *job, fr_rank *r)
{
    fr_spawn_req *q = r->mcmd;
    char name[64] = "";
    q->in_block = 0;
    if (q->block)
        fmpl_pmi1_mcmd_field(q->block, "mcmd", name, sizeof name);
    if (strcmp(name, "spawn") != 0) {
        fr_msg("rank %s sent an unknown PMI command 'mcmd=%s'", r->label, name);
        fr_pmi_reply(job, r, "cmd=error rc=-1 msg=unknown_command_%s", name);
        return;
    }
    spawn_check c = {.err = ""};
    if (q->too_long)
        refuse(&c, "spawn request longer than %d bytes", BLOCK_MAX);
    int which = q->nblocks + 1;
    int total = int_field(&c, q->block, which, "totspawns", 1, FR_MAX_RANKS, -1);
    int sofar = int_field(&c, q->block, which, "spawnssofar", 1, FR_MAX_RANKS, -1);
    if (!c.err[0] && (sofar != which || sofar > total || (q->nblocks && total != q->total)))
        refuse(&c, "spawn block %d/%d out of order (expected %d)", sofar, total, which);
    char **more = c.err[0] ? NULL : realloc(q->blocks, (size_t)which * sizeof *more);
    if (!c.err[0] && !more)
        refuse(&c, "out of memory");
    if (c.err[0]) {
        drop_blocks(q);
        reply_refusal(job, r, c.err);
        return;
    }
    q->blocks = more;
    q->blocks[q->nblocks++] = q->block; /* the block moves; the next one starts afresh */
    q->block = NULL;
    q->len = q->cap = 0;
    q->total = total;
    if (sofar < total)
        return;
    spawn(job, r, q->blocks, q->nblocks);
    drop_blocks(q);
}

int fr_mcmd_line(fr_job *job, fr_rank *r, const char *line)
{
    int starts = strncmp(line, "mcmd=", 5) == 0;
    if (!starts && !(r->mcmd && r->mcmd->in_block))
        return 0;
    if (!r->mcmd && !(r->mcmd = calloc(1, sizeof *r->mcmd))) {
        fr_msg("out of memory for rank %s's request", r->label);
        fr_pmi_reply(job, r, "cmd=error rc=-1 msg=out_of_memory");
        return 1;
    }
    fr_spawn_req *q = r->mcmd;
    if (starts) {
        if (q->in_block)
            fr_msg("rank %s began a request before ending the last one (no '%s')", r->label,
                   FMPL_PMI1_MCMD_END);
        q->in_block = 1;
        q->len = 0;
        q->too_long = 0;
        if (q->block)
            q->block[0] = '\0';
    }
    if (strcmp(line, FMPL_PMI1_MCMD_END) == 0)
        end_block(job, r);
    else
        block_append(q, line);
    return 1;
}
