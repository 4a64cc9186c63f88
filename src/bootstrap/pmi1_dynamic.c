/* The PMI-1 client's part in dynamic processes: which universe this process
 * belongs to, spawning, the name service and rendezvous queues.
 *
 * Only fmplrun serves the operations (tools/fmplrun/pmi_server.c): it keeps
 * every world of a job in one key-value space, which is what lets spawned
 * processes and their parents reach each other's keys.  Other PMI-1
 * launchers (mpiexec.hydra) give a spawned world a key-value space of its
 * own, so there the operations stay NULL and MPI's dynamic-process calls
 * fail at once.
 *
 * Requests (one reply line each):
 *   cmd=get_universe_size                  -> cmd=universe_size size=U
 *   cmd=get_appnum                         -> cmd=appnum appnum=A
 *   mcmd=spawn, one field per line, endcmd (once per command; the last has
 *     spawnssofar=totspawns)               -> cmd=spawn_result rc=0 fmpl_universe_first=G
 *   cmd=publish_name service=S port=P      -> cmd=publish_result rc=0|-1
 *   cmd=unpublish_name service=S           -> cmd=unpublish_result rc=0|-1
 *   cmd=lookup_name service=S              -> cmd=lookup_result rc=0 port=P | rc=-1
 *   cmd=fmpl_post queue=Q value=V          -> cmd=fmpl_post_result rc=0
 *   cmd=fmpl_take queue=Q                  -> cmd=fmpl_take_result rc=0 value=V | rc=-1
 * A spawned world's preput keys are read with an ordinary get of the bare
 * key: fmplrun answers it from the world's preput table. */
#include "bootstrap/pmi1_client.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int env_int(const char *name, int *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 1 << 30)
        return -1;
    *out = (int)x;
    return 1;
}

/* A query every launcher may not know: its int field, or nothing when the
 * reply is not `reply_cmd` with rc 0 (the value stays); reported errors
 * only for the connection itself. */
static int optional_int(pmi1 *p, const char *request, const char *reply_cmd, const char *field,
                        int *out)
{
    char line[FMPL_PMI1_LINE_MAX], why[64], buf[32];
    int rc = fmpl_pmi1_send_line(p, __func__, "cmd=%s\n", request);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_read_line(p, __func__, line);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (fmpl_pmi1_reply_is(line, reply_cmd, why, sizeof why) == 0 &&
        fmpl_pmi1_field(line, field, buf, sizeof buf) == 0 && atoi(buf) > 0)
        *out = atoi(buf);
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_pmi1_universe(fmpl_bootstrap *bs, pmi1 *p)
{
    /* Answered by fmplrun and mpiexec.hydra; a launcher that does not know
     * a request leaves the value unknown (0). */
    int rc = optional_int(p, "get_universe_size", "universe_size", "size", &bs->universe_size);
    if (rc == FMPL_SUCCESS)
        rc = optional_int(p, "get_appnum", "appnum", "appnum", &bs->appnum);
    if (rc != FMPL_SUCCESS)
        return rc;
    /* fmplrun's spawned worlds: their place in the universe. */
    int base = 0, urank = bs->rank, spawned = 0;
    if (env_int("FMPL_UNIVERSE_BASE", &base) < 0 || env_int("FMPL_UNIVERSE_RANK", &urank) < 0 ||
        urank != base + bs->rank)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP,
                          "FMPL_UNIVERSE_BASE='%s' and FMPL_UNIVERSE_RANK='%s' do not fit rank %d "
                          "(they are set by fmplrun, not by hand)",
                          getenv("FMPL_UNIVERSE_BASE") ? getenv("FMPL_UNIVERSE_BASE") : "",
                          getenv("FMPL_UNIVERSE_RANK") ? getenv("FMPL_UNIVERSE_RANK") : "",
                          bs->rank);
    if (env_int("PMI_SPAWNED", &spawned) < 0)
        spawned = 0;
    if (env_int("FMPL_JOB_HOSTS", &bs->universe_hosts) < 0)
        bs->universe_hosts = 0;
    bs->universe_base = base;
    bs->universe_rank = urank;
    bs->spawned = spawned != 0;
    return FMPL_SUCCESS;
}

/* A value on a request line: a PMI-1 word (fmplrun splits lines at
 * spaces), or, for a spawn's argument lines, anything but a newline. */
static int word_ok(const char *func, const char *what, const char *v, int spaces_ok)
{
    if (!v || !*v)
        return fmpl_error_report(FMPL_ERR_ARG, func, "%s is empty", what);
    if (strlen(v) >= FMPL_PMI1_VALLEN_MAX)
        return fmpl_error_report(FMPL_ERR_ARG, func, "%s is longer than %d characters", what,
                                 FMPL_PMI1_VALLEN_MAX - 1);
    if (spaces_ok ? strchr(v, '\n') != NULL : !fmpl_pmi1_word_ok(v))
        return fmpl_error_report(FMPL_ERR_ARG, func, "%s '%.80s' has characters the launcher "
                                 "cannot carry", what, v);
    return FMPL_SUCCESS;
}

static int send_spawn_block(pmi1 *p, const fmpl_spawn_cmd *c, int total, int sofar,
                            int npreput, const char *const *keys, const char *const *values)
{
    const char *func = "fmpl_bootstrap_spawn";
    int argc = 0;
    while (c->argv && c->argv[argc])
        argc++;
    int rc = word_ok(func, "the command", c->command, 1);
    for (int i = 0; rc == FMPL_SUCCESS && i < argc; i++)
        rc = word_ok(func, "an argument", c->argv[i], 1);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = fmpl_pmi1_send_line(p, func,
                             "mcmd=spawn\nnprocs=%d\nexecname=%s\ntotspawns=%d\nspawnssofar=%d\n"
                             "argcnt=%d\n",
                             c->maxprocs, c->command, total, sofar, argc);
    for (int i = 0; rc == FMPL_SUCCESS && i < argc; i++)
        rc = fmpl_pmi1_send_line(p, func, "arg%d=%s\n", i + 1, c->argv[i]);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_send_line(p, func, "preput_num=%d\n", npreput);
    for (int i = 0; rc == FMPL_SUCCESS && i < npreput; i++)
        rc = fmpl_pmi1_send_line(p, func, "preput_key_%d=%s\npreput_val_%d=%s\n", i, keys[i], i,
                                 values[i]);
    const char *info_keys[3] = {"wdir", "path", "host"};
    const char *info_vals[3] = {c->wdir, c->path, c->host};
    int ninfo = 0;
    for (int i = 0; i < 3; i++)
        ninfo += info_vals[i] != NULL;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_send_line(p, func, "info_num=%d\n", ninfo);
    for (int i = 0, k = 0; rc == FMPL_SUCCESS && i < 3; i++)
        if (info_vals[i]) {
            rc = fmpl_pmi1_send_line(p, func, "info_key_%d=%s\ninfo_val_%d=%s\n", k, info_keys[i],
                                     k, info_vals[i]);
            k++;
        }
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_send_line(p, func, "endcmd\n");
    return rc;
}

static int p_spawn(fmpl_bootstrap *bs, int ncmds, const fmpl_spawn_cmd *cmds, int npreput,
                   const char *const *keys, const char *const *values, int *first)
{
    pmi1 *p = bs->impl;
    char line[FMPL_PMI1_LINE_MAX], why[256];
    for (int i = 0; i < npreput; i++) {
        int rc = word_ok(__func__, "a preput key", keys[i], 0);
        if (rc == FMPL_SUCCESS)
            rc = word_ok(__func__, "a preput value", values[i], 0);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    for (int i = 0; i < ncmds; i++) {
        int rc = send_spawn_block(p, &cmds[i], ncmds, i + 1, npreput, keys, values);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    int rc = fmpl_pmi1_answer(p, __func__, "spawn_result", line, why, sizeof why);
    if (rc == 1)
        return FMPL_ERROR(FMPL_ERR_ARG, "fmplrun could not spawn: %s", why);
    if (rc != 0)
        return rc;
    char buf[32];
    if (fmpl_pmi1_field(line, "fmpl_universe_first", buf, sizeof buf) != 0)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "spawn_result without fmpl_universe_first: '%.200s'",
                          line);
    *first = atoi(buf);
    return FMPL_SUCCESS;
}

/* One request of the name service, the queues or the preput keys, with
 * its arguments a and b (NULL: none) checked as words: FMPL_SUCCESS (the
 * reply's `field`, when not NULL, copied to out), `refused` unreported when
 * the launcher refuses (the caller knows what that means), or a reported
 * error. */
static int request(fmpl_bootstrap *bs, const char *func, const char *reply_cmd, int refused,
                   const char *field, char *out, size_t len, const char *fmt, const char *a,
                   const char *b)
{
    pmi1 *p = bs->impl;
    char line[FMPL_PMI1_LINE_MAX], why[128];
    int rc = word_ok(func, "the name", a, 0);
    if (rc == FMPL_SUCCESS && b)
        rc = word_ok(func, "the value", b, 0);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_send_line(p, func, fmt, a, b);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_pmi1_answer(p, func, reply_cmd, line, why, sizeof why);
    if (rc == 1)
        return refused;
    if (rc == FMPL_SUCCESS && field && fmpl_pmi1_field(line, field, out, len) != 0)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "%s without a fitting %s: '%.200s'", reply_cmd,
                          field, line);
    return rc;
}

static int p_get_preput(fmpl_bootstrap *bs, const char *key, char *value, size_t len)
{
    pmi1 *p = bs->impl;
    int rc = request(bs, __func__, "get_result", FMPL_ERR_ARG, "value", value, len,
                     "cmd=get kvsname=%s key=%s\n", p->kvsname, key);
    if (rc == FMPL_ERR_ARG)
        return FMPL_ERROR(FMPL_ERR_ARG, "the spawner gave this world no key '%s'", key);
    return rc;
}

static int p_publish(fmpl_bootstrap *bs, const char *service, const char *port)
{
    return request(bs, __func__, "publish_result", FMPL_ERR_ARG, NULL, NULL, 0,
                   "cmd=publish_name service=%s port=%s\n", service, port);
}

static int p_unpublish(fmpl_bootstrap *bs, const char *service)
{
    return request(bs, __func__, "unpublish_result", FMPL_ERR_ARG, NULL, NULL, 0,
                   "cmd=unpublish_name service=%s\n", service, NULL);
}

static int p_lookup(fmpl_bootstrap *bs, const char *service, char *port, size_t len)
{
    return request(bs, __func__, "lookup_result", FMPL_ERR_ARG, "port", port, len,
                   "cmd=lookup_name service=%s\n", service, NULL);
}

static int p_post(fmpl_bootstrap *bs, const char *queue, const char *value)
{
    return request(bs, __func__, "fmpl_post_result", FMPL_ERR_BOOTSTRAP, NULL, NULL, 0,
                   "cmd=fmpl_post queue=%s value=%s\n", queue, value);
}

static int p_take(fmpl_bootstrap *bs, const char *queue, char *value, size_t len)
{
    return request(bs, __func__, "fmpl_take_result", FMPL_ERR_NOT_PENDING, "value", value, len,
                   "cmd=fmpl_take queue=%s\n", queue, NULL);
}

void fmpl_bootstrap_pmi1_dynamic_ops(fmpl_bootstrap *bs)
{
    bs->spawn = p_spawn;
    bs->get_preput = p_get_preput;
    bs->publish = p_publish;
    bs->unpublish = p_unpublish;
    bs->lookup = p_lookup;
    bs->post = p_post;
    bs->take = p_take;
}
