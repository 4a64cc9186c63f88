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
 * must be a directory we can enter, "host" must name this host, the
 * universe must have room (FR_MAX_RANKS processes in the job's life).  Then
 * the new group starts (spawn.c: its world ranks 0..K-1 on consecutive
 * universe indices, appnum = the block's index, the last block's preput
 * keys its own) and the spawner gets its first universe index.  Any
 * problem: rc=-1 with the reason in msg (spaces made '_'), nothing started.
 * Across hosts the head refuses spawns: nothing would run the new group's
 * processes on a host of the job's choosing yet. */
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

/* Every name in a comma-separated host list must be this host. */
static void check_hosts(spawn_check *c, const char *list)
{
    char copy[FMPL_PMI1_LINE_MAX];
    snprintf(copy, sizeof copy, "%s", list);
    char *save = NULL;
    for (char *h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save))
        if (!fr_is_this_host(h))
            refuse(c, "unknown host '%s' in info host: fmplrun spawns on its own host only", h);
}

/* Block b (number `which`) into app a: its program resolved, arguments,
 * working directory.  Problems go to c. */
static void parse_app(spawn_check *c, const char *b, int which, fr_app *a)
{
    char execname[FMPL_PMI1_LINE_MAX], key[32], val[FMPL_PMI1_LINE_MAX];
    char search[FMPL_PMI1_LINE_MAX] = "";
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
        if (strcmp(info_key, "wdir") == 0) {
            free((char *)a->wdir);
            if (!(a->wdir = strdup(val)))
                refuse(c, "out of memory");
        } else if (strcmp(info_key, "path") == 0) {
            snprintf(search, sizeof search, "%s", val);
        } else if (strcmp(info_key, "host") == 0 || strcmp(info_key, "hosts") == 0) {
            check_hosts(c, val);
        } /* other keys (MPI's "arch", "file", "soft", ...) mean nothing here */
    }
    if (c->err[0])
        return;
    /* Relative names count from where the process will start: info wdir,
     * else our own directory; absolute, because the child changes into wdir. */
    char base[2 * PATH_MAX];
    int bad = fmpl_spawn_start_dir(a->wdir, base, sizeof base);
    if (bad < 0) {
        refuse(c, "cannot read fmplrun's working directory: %s", strerror(-bad));
        return;
    }
    if (bad) {
        refuse(c, "cannot enter wdir '%s': %s", a->wdir, strerror(bad));
        return;
    }
    int err = fr_resolve_program(execname, search[0] ? search : NULL, base, a->path,
                                 sizeof a->path);
    if (err)
        refuse(c, "cannot execute '%s': %s", execname, strerror(err));
}

static void free_apps(fr_app *apps, int napps)
{
    for (int a = 0; apps && a < napps; a++) {
        for (int i = 0; apps[a].argv && apps[a].argv[i]; i++)
            free(apps[a].argv[i]);
        free(apps[a].argv);
        free((char *)apps[a].wdir);
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

/* The whole spawn request is in: check it, start the group, answer. */
static void spawn(fr_job *job, fr_rank *r, char **blocks, int nblocks)
{
    spawn_check c = {.err = ""};
    fr_app *apps = calloc((size_t)nblocks, sizeof *apps);
    if (!apps)
        refuse(&c, "out of memory");
    if (job->hosts)
        refuse(&c, "spawn is not supported in jobs across hosts (--hosts, --hostfile)");
    if (job->ending)
        refuse(&c, "the job is ending");
    long total = 0;
    for (int i = 0; i < nblocks && !c.err[0]; i++) {
        parse_app(&c, blocks[i], i + 1, &apps[i]);
        total += apps[i].nprocs;
    }
    if (!c.err[0] && total > FR_MAX_RANKS - job->nprocs)
        refuse(&c, "universe full: %d processes started in this job, %ld more asked, at most %d",
               job->nprocs, total, FR_MAX_RANKS);
    fr_kvs *preput = c.err[0] ? NULL : parse_preput(&c, blocks[nblocks - 1], nblocks);
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
