/* The PMIx client's part in dynamic processes (bootstrap.h: spawn, the name
 * service, the rendezvous queues, universe ranks), for process managers
 * that serve PMIx_Spawn and PMIx_Publish/Lookup: Open MPI's mpirun (ORTE
 * 4.1 with PMIx 4.2 here).  A server that does not (Slurm's srun) answers
 * the first PMIx call of an operation with an error, and the operation
 * fails at once with it.
 *
 * What ORTE 4.1's data server (the store behind PMIx_Publish/Lookup, in
 * mpirun) does, found by experiment and its source, and what follows:
 *   - publish never refuses a key that is already there: a second copy is
 *     stored, and a lookup answers one of them.  So publish alone is no
 *     test-and-set;
 *   - a lookup without PMIX_WAIT answers "not found" at once; unpublish
 *     removes only the caller's own data and answers success even when
 *     there is none;
 *   - data published with PMIX_PERSIST_FIRST_READ is removed by the lookup
 *     that returns it (the server serves one request at a time, so exactly
 *     one lookup gets it: an atomic take).  A waiting lookup (PMIX_WAIT)
 *     answered later does not remove it, so takes never wait.
 * The one lock of the universe is therefore a token, key "fmpl.next",
 * always published FIRST_READ: taking it (polled lookups) enters the
 * critical section, publishing it again leaves it.  Its value is the next
 * unused universe rank.  World 0's rank 0 publishes it at start-up.
 *
 * Universe ranks (the library's peer tables are indexed by them, up to
 * FMPL_UNIVERSE_MAX): world 0, the one mpirun started, holds 0..N-1; a
 * spawn takes the token, reserves the next K ranks, publishes
 * "fmpl.size.<base>" = K and the token advanced by K, then spawns with
 * FMPL_PMIX_UNIVERSE_BASE=<base> in the new processes' environment, and
 * publishes "fmpl.nspace.<base>" = the new nspace ("-" when the spawn
 * failed).  A process finds the world of a universe rank r by walking
 * the sizes from 0 (every step is published before the token that allows
 * later ones) and remembers each world it learns; the nspace may lag a
 * spawn by a moment, so that one lookup is polled.  Why not the nspace
 * itself: the tables need small dense numbers, and nspace names (ORTE's
 * job ids, PRRTE's "prterun-host-pid@n") are neither dense nor portable.
 *
 * Keys with another world's processes (runtime/link.c's "lk<r>", the
 * meetings of api/mpi/dynamic.c) are ordinary puts and gets: after start-
 * up a put commits at once and PMIx_Get reaches any nspace of the job.
 *
 * Spawn: the programs are checked here first (found, executable, wdir a
 * directory, the host one of the job's), since ORTE ends the whole job when
 * it cannot start one; the preput keys travel in the environment,
 * FMPL_PMIX_PREPUT_<key>=<value>.  A new world goes to the spawner's host
 * unless info "host" names another of the job's hosts.
 *
 * Hosts: world 0 counts the hosts mpirun placed it on (PMIX_NUM_NODES); a
 * spawned world gets its spawner's count in FMPL_PMIX_JOB_HOSTS.  Above 1,
 * every world opens the network backend at start-up (fabric.c, net_needed)
 * and so can link with worlds on other hosts; a world 0 on one host keeps
 * to shared memory, and its spawns to its host.
 *
 * Name service: "fmpl.name.<service>" = port, published and removed under
 * the token, so that a name is published once; unpublish works only for
 * the process that published (ORTE's rule).
 *
 * Rendezvous queues: post, under the token, reads the queue's length from
 * "fmpl.qn.<queue>" (FIRST_READ: absent means 0), publishes the value as
 * "fmpl.q.<queue>.<n>" and the length n+1 (both FIRST_READ); take, done
 * only by the port's owner, looks up "fmpl.q.<queue>.<i>" for its own
 * next i, which removes it. */
#include "bootstrap/pmix_client.h"
#include "bootstrap/spawn_rules.h"
#include "base/error.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOKEN_KEY "fmpl.next"
#define BASE_ENV "FMPL_PMIX_UNIVERSE_BASE"
#define PREPUT_ENV "FMPL_PMIX_PREPUT_"
#define JOB_HOSTS_ENV "FMPL_PMIX_JOB_HOSTS"
/* How long a take of the token or a world's nspace may keep finding
 * nothing: each is published a few round trips after it was taken or
 * reserved, so only a lost process manager record takes this long. */
#define POLL_LIMIT_S 60

/* ------------------------------------------------------------ the data server */

static pmix_status_t publish_status(const char *key, const char *value, int first_read)
{
    pmix_info_t info[3];
    pmix_data_range_t range = PMIX_RANGE_GLOBAL;
    pmix_persistence_t persist = first_read ? PMIX_PERSIST_FIRST_READ : PMIX_PERSIST_SESSION;
    PMIX_INFO_LOAD(&info[0], key, value, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    PMIX_INFO_LOAD(&info[2], PMIX_PERSISTENCE, &persist, PMIX_PERSIST);
    pmix_status_t st = PMIx_Publish(info, 3);
    PMIX_INFO_DESTRUCT(&info[0]);
    return st;
}

/* A failed call's report: a server that does not serve it (srun --mpi=pmix
 * answers PMIX_ERR_NOT_SUPPORTED) is FMPL_ERR_UNSUPPORTED, which the MPI
 * calls turn into MPI_ERR_UNSUPPORTED_OPERATION, as under launchers without
 * the operations. */
static int failed(const char *func, const char *call, const char *key, pmix_status_t st)
{
    if (st == PMIX_ERR_NOT_SUPPORTED)
        return fmpl_error_report(FMPL_ERR_UNSUPPORTED, func, "this PMIx server does not serve "
                                 "%s, which FMPL's dynamic processes need (srun --mpi=pmix does "
                                 "not); start the job with fmplrun or Open MPI's mpirun", call);
    return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "%s(%s) failed: %s", call, key,
                             fmpl_pmix_status_text(st));
}

static int publish(const char *func, const char *key, const char *value, int first_read)
{
    if (strlen(key) > PMIX_MAX_KEYLEN)
        return fmpl_error_report(FMPL_ERR_UNSUPPORTED, func, "the key '%.60s...' is longer than "
                                 "PMIx's %d characters", key, PMIX_MAX_KEYLEN);
    pmix_status_t st = publish_status(key, value, first_read);
    if (st != PMIX_SUCCESS)
        return failed(func, "PMIx_Publish", key, st);
    return FMPL_SUCCESS;
}

/* Lookup without waiting: FMPL_SUCCESS (value copied, its publisher in
 * *owner when not NULL), FMPL_ERR_NOT_PENDING unreported when nobody
 * published it, or a reported error. */
static int lookup(const char *func, const char *key, char *value, size_t len,
                  pmix_proc_t *owner)
{
    if (strlen(key) > PMIX_MAX_KEYLEN)
        return fmpl_error_report(FMPL_ERR_UNSUPPORTED, func, "the key '%.60s...' is longer than "
                                 "PMIx's %d characters", key, PMIX_MAX_KEYLEN);
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    pmix_info_t info;
    pmix_data_range_t range = PMIX_RANGE_GLOBAL;
    PMIX_INFO_LOAD(&info, PMIX_RANGE, &range, PMIX_DATA_RANGE);
    pmix_status_t st = PMIx_Lookup(&pd, 1, &info, 1);
    int rc = FMPL_SUCCESS;
    if (st == PMIX_ERR_NOT_FOUND)
        rc = FMPL_ERR_NOT_PENDING;
    else if (st != PMIX_SUCCESS)
        rc = failed(func, "PMIx_Lookup", key, st);
    else if (pd.value.type != PMIX_STRING || !pd.value.data.string)
        rc = fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "PMIx_Lookup(%s): a value of type %d",
                               key, (int)pd.value.type);
    else if (strlen(pd.value.data.string) >= len)
        rc = fmpl_error_report(FMPL_ERR_ARG, func, "the value of %s does not fit %zu bytes", key,
                               len);
    else
        strcpy(value, pd.value.data.string);
    if (rc == FMPL_SUCCESS && owner)
        *owner = pd.proc;
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}

static void pause_ms(int *polls)
{
    struct timespec ts = {0, ++*polls < 20 ? 100000 : 1000000};
    nanosleep(&ts, NULL);
}

/* lookup(), polled while nothing is there, for at most POLL_LIMIT_S. */
static int lookup_polled(const char *func, const char *key, char *value, size_t len,
                         const char *what)
{
    time_t start = time(NULL);
    int polls = 0, rc;
    while ((rc = lookup(func, key, value, len, NULL)) == FMPL_ERR_NOT_PENDING) {
        if (time(NULL) - start > POLL_LIMIT_S)
            return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "%s (PMIx key %s) did not appear "
                                     "in %d s", what, key, POLL_LIMIT_S);
        pause_ms(&polls);
    }
    return rc;
}

/* The universe's lock: *next is the next unused universe rank. */
static int lock_universe(const char *func, int *next)
{
    char value[32];
    int rc = lookup_polled(func, TOKEN_KEY, value, sizeof value,
                           "the universe's token (held by another process, or never published "
                           "by world 0's rank 0)");
    if (rc == FMPL_SUCCESS && sscanf(value, "%d", next) != 1)
        rc = fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "the universe's token '%s' is malformed",
                               value);
    return rc;
}

static int unlock_universe(const char *func, int next)
{
    char value[32];
    snprintf(value, sizeof value, "%d", next);
    return publish(func, TOKEN_KEY, value, 1);
}

/* ------------------------------------------------------------ worlds */

static pmix_world *remember(pmixbs *p, int base, int size)
{
    for (int i = 0; i < p->nworlds; i++)
        if (p->worlds[i].base == base)
            return &p->worlds[i];
    pmix_world *w = realloc(p->worlds, (size_t)(p->nworlds + 1) * sizeof *w);
    if (!w)
        return NULL;
    p->worlds = w;
    w = &p->worlds[p->nworlds++];
    memset(w, 0, sizeof *w);
    w->base = base;
    w->size = size;
    return w;
}

int fmpl_pmix_proc_of(fmpl_bootstrap *bs, int r, pmix_proc_t *proc)
{
    pmixbs *p = bs->impl;
    static const char func[] = "fmpl_bootstrap_get";
    pmix_world *w = NULL;
    for (int i = 0; i < p->nworlds && !w; i++)
        if (r >= p->worlds[i].base && r < p->worlds[i].base + p->worlds[i].size)
            w = &p->worlds[i];
    /* Walk the sizes from 0: each world's size is published before the
     * token that lets anyone reserve the ranks after it. */
    for (int base = 0; !w;) {
        pmix_world *known = NULL;
        for (int i = 0; i < p->nworlds && !known; i++)
            if (p->worlds[i].base == base)
                known = &p->worlds[i];
        int size = known ? known->size : 0;
        if (!known) {
            char key[64], value[32];
            snprintf(key, sizeof key, "fmpl.size.%d", base);
            int rc = lookup(func, key, value, sizeof value, NULL);
            if (rc == FMPL_ERR_NOT_PENDING)
                return fmpl_error_report(FMPL_ERR_RANK, func, "universe rank %d belongs to no "
                                         "world of this job", r);
            if (rc == FMPL_SUCCESS && (sscanf(value, "%d", &size) != 1 || size < 1))
                rc = fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "%s is '%s'", key, value);
            if (rc == FMPL_SUCCESS && !(known = remember(p, base, size)))
                rc = fmpl_error_report(FMPL_ERR_NO_MEMORY, func, "no memory");
            if (rc != FMPL_SUCCESS)
                return rc;
        }
        if (r < base + size)
            w = known;
        base += size;
    }
    if (!w->nspace[0]) {
        char key[64];
        snprintf(key, sizeof key, "fmpl.nspace.%d", w->base);
        int rc = lookup_polled(func, key, w->nspace, sizeof w->nspace,
                               "the nspace of a spawned world");
        if (rc != FMPL_SUCCESS) {
            w->nspace[0] = '\0';
            return rc;
        }
    }
    if (strcmp(w->nspace, "-") == 0)
        return fmpl_error_report(FMPL_ERR_RANK, func, "universe rank %d belongs to a spawn that "
                                 "failed", r);
    PMIX_PROC_LOAD(proc, w->nspace, (pmix_rank_t)(r - w->base));
    return FMPL_SUCCESS;
}

/* An unsigned integer of any PMIx integer type, or -1. */
static long long integer_value(const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_UINT32: return v->data.uint32;
    case PMIX_INT32: return v->data.int32;
    case PMIX_UINT16: return v->data.uint16;
    case PMIX_INT: return v->data.integer;
    case PMIX_UINT: return v->data.uint;
    case PMIX_UINT64: return v->data.uint64 > INT32_MAX ? -1 : (long long)v->data.uint64;
    case PMIX_INT64: return v->data.int64;
    case PMIX_SIZE: return v->data.size > INT32_MAX ? -1 : (long long)v->data.size;
    default: return -1;
    }
}

/* An integer the server may or may not know: the value stays when not. */
static void optional_int(const pmix_proc_t *proc, const char *key, int *out)
{
    pmix_value_t *v = NULL;
    if (PMIx_Get(proc, key, NULL, 0, &v) == PMIX_SUCCESS && v) {
        long long n = integer_value(v);
        if (n >= 0 && n <= 1 << 30)
            *out = (int)n;
    }
    if (v)
        PMIX_VALUE_RELEASE(v);
}

int fmpl_bootstrap_pmix_universe(fmpl_bootstrap *bs, pmixbs *p)
{
    pmix_proc_t wild;
    PMIX_PROC_LOAD(&wild, p->me.nspace, PMIX_RANK_WILDCARD);
    optional_int(&wild, PMIX_UNIV_SIZE, &bs->universe_size);
    optional_int(&p->me, PMIX_APPNUM, &bs->appnum);
    const char *hosts = getenv(JOB_HOSTS_ENV);
    if (hosts) {
        char *end;
        long v = strtol(hosts, &end, 10);
        if (!*hosts || *end || v < 1 || v > 1 << 20)
            return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "%s='%s' is not a number of hosts (FMPL sets "
                              "it for the worlds it spawns, not by hand)", JOB_HOSTS_ENV, hosts);
        bs->universe_hosts = (int)v;
    } else {
        optional_int(&wild, PMIX_NUM_NODES, &bs->universe_hosts);
    }
    const char *env = getenv(BASE_ENV);
    int base = 0;
    if (env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (!*env || *end || v < 1 || v + bs->size > FMPL_UNIVERSE_MAX)
            return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "%s='%s' does not fit a world of %d (FMPL sets "
                              "it for the worlds it spawns, not by hand)", BASE_ENV, env,
                              bs->size);
        base = (int)v;
    }
    bs->universe_base = base;
    bs->universe_rank = base + bs->rank;
    bs->spawned = base > 0;
    pmix_world *w = remember(p, base, bs->size);
    if (!w)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "out of memory");
    memcpy(w->nspace, p->me.nspace, PMIX_MAX_NSLEN);
    if (base == 0 && bs->rank == 0) {
        /* World 0's records and the universe's token.  A server without a
         * data server (srun) refuses: then spawn and the name service fail
         * when called, with its answer, and nothing else changes. */
        char value[32];
        snprintf(value, sizeof value, "%d", bs->size);
        if (publish_status("fmpl.size.0", value, 0) == PMIX_SUCCESS &&
            publish_status("fmpl.nspace.0", w->nspace, 0) == PMIX_SUCCESS)
            publish_status(TOKEN_KEY, value, 1);
    }
    return FMPL_SUCCESS;
}

void fmpl_pmix_dynamic_free(pmixbs *p)
{
    free(p->worlds);
    p->worlds = NULL;
    p->nworlds = 0;
    for (int i = 0; i < p->ncursors; i++)
        free(p->cursors[i].name);
    free(p->cursors);
    p->cursors = NULL;
    p->ncursors = 0;
}

/* ------------------------------------------------------------ spawn */

/* Is `host` in the PMIx node list of nspace `ns` (a comma-separated list)? */
static bool in_node_list(const char *ns, const char *host)
{
    pmix_proc_t wild;
    PMIX_PROC_LOAD(&wild, ns, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    bool found = false;
    if (PMIx_Get(&wild, PMIX_NODE_LIST, NULL, 0, &v) == PMIX_SUCCESS && v &&
        v->type == PMIX_STRING && v->data.string) {
        size_t n = strlen(host);
        for (const char *s = v->data.string; *s;) {
            size_t len = strcspn(s, ",");
            if (len == n && strncmp(s, host, n) == 0)
                found = true;
            s += len + (s[len] == ',');
        }
    }
    if (v)
        PMIX_VALUE_RELEASE(v);
    return found;
}

/* The host a command's processes go to: info "host" when it names one of
 * the job's hosts (this world's or world 0's) and the worlds link over the
 * network, else this host. */
static int spawn_host(const char *func, fmpl_bootstrap *bs, const fmpl_spawn_cmd *c,
                      char *host, size_t len)
{
    if (gethostname(host, len) != 0)
        return fmpl_error_report(FMPL_ERR_ARG, func, "cannot read this host's name: %s",
                                 strerror(errno));
    host[len - 1] = '\0';
    if (!c->host || fmpl_spawn_host_is_here(c->host))
        return FMPL_SUCCESS;
    if (bs->universe_hosts <= 1)
        return fmpl_error_report(FMPL_ERR_ARG, func, "host '%s' is not this host: under PMIx, a "
                                 "job on one host spawns on that host only", c->host);
    const pmixbs *p = bs->impl;
    pmix_proc_t world0;
    if (!in_node_list(p->me.nspace, c->host) &&
        !(fmpl_pmix_proc_of(bs, 0, &world0) == FMPL_SUCCESS &&
          in_node_list(world0.nspace, c->host)))
        return fmpl_error_report(FMPL_ERR_ARG, func, "host '%s' is none of the job's hosts "
                                 "(PMIx's node list)", c->host);
    if (strlen(c->host) >= len)
        return fmpl_error_report(FMPL_ERR_ARG, func, "host name '%s' is too long", c->host);
    strcpy(host, c->host);
    return FMPL_SUCCESS;
}

/* Check a command as fmplrun does (spawn_rules.h) and fill its app (cmd,
 * cwd: allocated). */
static int prepare_app(const char *func, fmpl_bootstrap *bs, const fmpl_spawn_cmd *c,
                       pmix_app_t *app)
{
    char dir[2 * PATH_MAX], prog[4 * PATH_MAX];
    int bad = fmpl_spawn_start_dir(c->wdir, dir, sizeof dir);
    if (bad < 0)
        return fmpl_error_report(FMPL_ERR_ARG, func, "cannot read the working directory: %s",
                                 strerror(-bad));
    if (bad)
        return fmpl_error_report(FMPL_ERR_ARG, func, "cannot enter wdir '%s': %s", c->wdir,
                                 strerror(bad));
    char host[256];
    int hrc = spawn_host(func, bs, c, host, sizeof host);
    if (hrc != FMPL_SUCCESS)
        return hrc;
    int err = fmpl_spawn_find_program(c->command, c->path, dir, prog, sizeof prog);
    if (err)
        return fmpl_error_report(FMPL_ERR_ARG, func, "cannot execute '%s': %s", c->command,
                                 strerror(err));
    app->cmd = strdup(prog);
    app->cwd = strdup(dir);
    app->maxprocs = c->maxprocs;
    /* Always a host: the mapper would otherwise place them anywhere, also
     * where a world on one host cannot link with them. */
    PMIX_INFO_CREATE(app->info, 1);
    if (app->info) {
        app->ninfo = 1;
        PMIX_INFO_LOAD(&app->info[0], PMIX_HOST, host, PMIX_STRING);
    }
    return app->cmd && app->cwd && app->info
               ? FMPL_SUCCESS
               : fmpl_error_report(FMPL_ERR_NO_MEMORY, func, "no memory");
}

/* NULL-terminated copy of a NULL-terminated list with `first` in front
 * (when not NULL); NULL when out of memory. */
static char **string_list(const char *first, const char *const *rest)
{
    int n = 0;
    while (rest && rest[n])
        n++;
    char **list = calloc((size_t)n + 2, sizeof *list);
    int k = 0, ok = list != NULL;
    if (ok && first)
        ok = (list[k++] = strdup(first)) != NULL;
    for (int i = 0; ok && i < n; i++)
        ok = (list[k++] = strdup(rest[i])) != NULL;
    if (!ok && list) {
        for (int i = 0; i < k; i++)
            free(list[i]);
        free(list);
        return NULL;
    }
    return list;
}

static void free_list(char **list)
{
    for (int i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
}

static int env_key_ok(const char *key)
{
    if (!key || !*key)
        return 0;
    for (const char *c = key; *c; c++)
        if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
              (*c >= '0' && *c <= '9')))
            return 0;
    return 1;
}

/* The environment every process of the new world gets from FMPL. */
static char **spawn_env(int base, int hosts, int npreput, const char *const *keys,
                        const char *const *values)
{
    char **env = calloc((size_t)npreput + 3, sizeof *env);
    int ok = env != NULL, n = 0;
    if (ok)
        ok = asprintf(&env[n++], BASE_ENV "=%d", base) >= 0;
    if (ok && hosts > 1)
        ok = asprintf(&env[n++], JOB_HOSTS_ENV "=%d", hosts) >= 0;
    for (int i = 0; ok && i < npreput; i++)
        ok = asprintf(&env[n++], PREPUT_ENV "%s=%s", keys[i], values[i]) >= 0;
    if (!ok && env) {
        free_list(env);
        return NULL;
    }
    return env;
}

static void free_apps(pmix_app_t *apps, int n)
{
    for (int i = 0; apps && i < n; i++) {
        free(apps[i].cmd);
        free(apps[i].cwd);
        free_list(apps[i].argv);
        free_list(apps[i].env);
        if (apps[i].info)
            PMIX_INFO_FREE(apps[i].info, apps[i].ninfo);
    }
    free(apps);
}

/* Reserve `total` universe ranks: *base is the first. */
static int reserve(const char *func, int total, int *base)
{
    int next, rc = lock_universe(func, &next);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (next + total > FMPL_UNIVERSE_MAX) {
        unlock_universe(func, next);
        return fmpl_error_report(FMPL_ERR_ARG, func, "%d more processes do not fit the universe: "
                                 "%d of its %d ranks are used", total, next, FMPL_UNIVERSE_MAX);
    }
    char key[64], value[32];
    snprintf(key, sizeof key, "fmpl.size.%d", next);
    snprintf(value, sizeof value, "%d", total);
    rc = publish(func, key, value, 0);
    int urc = unlock_universe(func, rc == FMPL_SUCCESS ? next + total : next);
    *base = next;
    return rc != FMPL_SUCCESS ? rc : urc;
}

static int x_spawn(fmpl_bootstrap *bs, int ncmds, const fmpl_spawn_cmd *cmds, int npreput,
                   const char *const *keys, const char *const *values, int *first)
{
    static const char func[] = "fmpl_bootstrap_spawn";
    pmixbs *p = bs->impl;
    for (int i = 0; i < npreput; i++)
        if (!env_key_ok(keys[i]) || !values[i])
            return fmpl_error_report(FMPL_ERR_ARG, func, "preput key '%s' is not a name of "
                                     "letters, digits and '_' (or its value is NULL)",
                                     keys[i] ? keys[i] : "(null)");
    pmix_app_t *apps = calloc((size_t)ncmds, sizeof *apps);
    if (!apps)
        return fmpl_error_report(FMPL_ERR_NO_MEMORY, func, "no memory");
    int rc = FMPL_SUCCESS, total = 0;
    for (int i = 0; i < ncmds && rc == FMPL_SUCCESS; i++) {
        rc = prepare_app(func, bs, &cmds[i], &apps[i]);
        if (rc == FMPL_SUCCESS && !(apps[i].argv = string_list(apps[i].cmd, cmds[i].argv)))
            rc = fmpl_error_report(FMPL_ERR_NO_MEMORY, func, "no memory");
        total += cmds[i].maxprocs;
    }
    int base = -1;
    if (rc == FMPL_SUCCESS)
        rc = reserve(func, total, &base);
    for (int i = 0; i < ncmds && rc == FMPL_SUCCESS; i++)
        if (!(apps[i].env = spawn_env(base, bs->universe_hosts, npreput, keys, values)))
            rc = fmpl_error_report(FMPL_ERR_NO_MEMORY, func, "no memory");
    pmix_nspace_t nspace;
    memset(nspace, 0, sizeof nspace);
    if (rc == FMPL_SUCCESS) {
        pmix_status_t st = PMIx_Spawn(NULL, 0, apps, (size_t)ncmds, nspace);
        if (st != PMIX_SUCCESS)
            rc = st == PMIX_ERR_NOT_SUPPORTED
                     ? failed(func, "PMIx_Spawn", "", st)
                     : fmpl_error_report(FMPL_ERR_ARG, func, "PMIx_Spawn failed: %s",
                                         fmpl_pmix_status_text(st));
    }
    free_apps(apps, ncmds);
    if (base < 0)
        return rc;
    /* Those who walk the universe to these ranks wait for this record. */
    char key[64], ns[PMIX_MAX_NSLEN + 1];
    snprintf(key, sizeof key, "fmpl.nspace.%d", base);
    memcpy(ns, nspace, PMIX_MAX_NSLEN);
    ns[PMIX_MAX_NSLEN] = '\0';
    int prc = publish(func, key, rc == FMPL_SUCCESS ? ns : "-", 0);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (prc != FMPL_SUCCESS)
        return prc;
    pmix_world *w = remember(p, base, total);
    if (w)
        memcpy(w->nspace, ns, sizeof w->nspace);
    *first = base;
    return FMPL_SUCCESS;
}

static int x_get_preput(fmpl_bootstrap *bs, const char *key, char *value, size_t len)
{
    (void)bs;
    char name[FMPL_BOOTSTRAP_KEY_MAX + sizeof PREPUT_ENV];
    if (!env_key_ok(key) || strlen(key) >= FMPL_BOOTSTRAP_KEY_MAX)
        return FMPL_ERROR(FMPL_ERR_ARG, "'%s' is not a preput key", key ? key : "(null)");
    snprintf(name, sizeof name, PREPUT_ENV "%s", key);
    const char *v = getenv(name);
    if (!v)
        return FMPL_ERROR(FMPL_ERR_ARG, "the spawner gave this world no key '%s'", key);
    if (strlen(v) >= len)
        return FMPL_ERROR(FMPL_ERR_ARG, "the value of '%s' does not fit %zu bytes", key, len);
    strcpy(value, v);
    return FMPL_SUCCESS;
}

/* ------------------------------------------------------------ name service */

static void name_key(const char *service, char *key, size_t len)
{
    snprintf(key, len, "fmpl.name.%s", service);
}

static int x_publish(fmpl_bootstrap *bs, const char *service, const char *port)
{
    (void)bs;
    char key[PMIX_MAX_KEYLEN + 64], old[4 * FMPL_BOOTSTRAP_VALUE_MAX];
    name_key(service, key, sizeof key);
    int next, rc = lock_universe(__func__, &next);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = lookup(__func__, key, old, sizeof old, NULL);
    if (rc == FMPL_SUCCESS)
        rc = FMPL_ERR_ARG; /* taken: the caller reports it */
    else if (rc == FMPL_ERR_NOT_PENDING)
        rc = publish(__func__, key, port, 0);
    int urc = unlock_universe(__func__, next);
    return rc != FMPL_SUCCESS ? rc : urc;
}

static int x_lookup(fmpl_bootstrap *bs, const char *service, char *port, size_t len)
{
    (void)bs;
    char key[PMIX_MAX_KEYLEN + 64];
    name_key(service, key, sizeof key);
    int rc = lookup(__func__, key, port, len, NULL);
    return rc == FMPL_ERR_NOT_PENDING ? FMPL_ERR_ARG : rc;
}

static int x_unpublish(fmpl_bootstrap *bs, const char *service)
{
    pmixbs *p = bs->impl;
    char key[PMIX_MAX_KEYLEN + 64], port[4 * FMPL_BOOTSTRAP_VALUE_MAX];
    name_key(service, key, sizeof key);
    pmix_proc_t owner;
    int next, rc = lock_universe(__func__, &next);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = lookup(__func__, key, port, sizeof port, &owner);
    if (rc == FMPL_ERR_NOT_PENDING) {
        rc = FMPL_ERR_ARG; /* not published: the caller reports it */
    } else if (rc == FMPL_SUCCESS && !PMIX_CHECK_PROCID(&owner, &p->me)) {
        rc = fmpl_error_report(FMPL_ERR_UNSUPPORTED, __func__, "the name was published by "
                               "process %u of nspace %s: under PMIx only the process that "
                               "published a name can unpublish it", (unsigned)owner.rank,
                               owner.nspace);
    } else if (rc == FMPL_SUCCESS) {
        char *keys[2] = {key, NULL};
        pmix_info_t info;
        pmix_data_range_t range = PMIX_RANGE_GLOBAL;
        PMIX_INFO_LOAD(&info, PMIX_RANGE, &range, PMIX_DATA_RANGE);
        pmix_status_t st = PMIx_Unpublish(keys, &info, 1);
        if (st != PMIX_SUCCESS)
            rc = fmpl_error_report(FMPL_ERR_BOOTSTRAP, __func__, "PMIx_Unpublish(%s) failed: %s",
                                   key, fmpl_pmix_status_text(st));
    }
    int urc = unlock_universe(__func__, next);
    return rc != FMPL_SUCCESS ? rc : urc;
}

/* ------------------------------------------------------------ rendezvous queues */

static int x_post(fmpl_bootstrap *bs, const char *queue, const char *value)
{
    (void)bs;
    char key[PMIX_MAX_KEYLEN + 64], len_key[PMIX_MAX_KEYLEN + 64], text[32];
    snprintf(len_key, sizeof len_key, "fmpl.qn.%s", queue);
    int next, n = 0, rc = lock_universe(__func__, &next);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = lookup(__func__, len_key, text, sizeof text, NULL); /* takes it */
    if (rc == FMPL_ERR_NOT_PENDING)
        rc = FMPL_SUCCESS; /* an empty queue */
    else if (rc == FMPL_SUCCESS && sscanf(text, "%d", &n) != 1)
        rc = fmpl_error_report(FMPL_ERR_BOOTSTRAP, __func__, "%s is '%s'", len_key, text);
    snprintf(key, sizeof key, "fmpl.q.%s.%d", queue, n);
    snprintf(text, sizeof text, "%d", n + 1);
    if (rc == FMPL_SUCCESS)
        rc = publish(__func__, key, value, 1);
    if (rc == FMPL_SUCCESS)
        rc = publish(__func__, len_key, text, 1);
    int urc = unlock_universe(__func__, next);
    return rc != FMPL_SUCCESS ? rc : urc;
}

static int x_take(fmpl_bootstrap *bs, const char *queue, char *value, size_t len)
{
    pmixbs *p = bs->impl;
    pmix_queue_cursor *c = NULL;
    for (int i = 0; i < p->ncursors && !c; i++)
        if (strcmp(p->cursors[i].name, queue) == 0)
            c = &p->cursors[i];
    if (!c) {
        pmix_queue_cursor *more = realloc(p->cursors, (size_t)(p->ncursors + 1) * sizeof *more);
        if (!more)
            return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory");
        p->cursors = more;
        c = &p->cursors[p->ncursors];
        if (!(c->name = strdup(queue)))
            return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory");
        c->next = 0;
        p->ncursors++;
    }
    char key[PMIX_MAX_KEYLEN + 64];
    snprintf(key, sizeof key, "fmpl.q.%s.%d", queue, c->next);
    int rc = lookup(__func__, key, value, len, NULL); /* removes it */
    if (rc == FMPL_SUCCESS)
        c->next++;
    return rc;
}

void fmpl_bootstrap_pmix_dynamic_ops(fmpl_bootstrap *bs)
{
    bs->spawn = x_spawn;
    bs->get_preput = x_get_preput;
    bs->publish = x_publish;
    bs->unpublish = x_unpublish;
    bs->lookup = x_lookup;
    bs->post = x_post;
    bs->take = x_take;
}
