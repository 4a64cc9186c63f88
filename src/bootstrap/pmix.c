/* PMIx client: serves jobs started by a PMIx process manager, such as Open
 * MPI's mpirun (PRRTE/ORTE), or Slurm's srun --mpi=pmix.  Compiled only when
 * the build found libpmix (FMPL_HAVE_PMIX); nothing else in the library
 * includes pmix.h.
 *
 * Mapping onto the bootstrap table:
 *   rank, size   PMIx_Init's proc.rank; PMIX_JOB_SIZE of (nspace, wildcard)
 *   job_id       the nspace, through the PMI-1 kvsname rule of jobid.h
 *   put          PMIx_Put(PMIX_GLOBAL, "fmpl.<rank>.<key>") of a string (rank:
 *                the world rank); after the first fence it commits at once,
 *                so that processes of other worlds can read it (runtime/
 *                link.c's keys, the meetings of api/mpi/dynamic.c)
 *   fence        PMIx_Commit, then PMIx_Fence over the nspace with
 *                PMIX_COLLECT_DATA: every value put before it can be read
 *   get          universe rank -> (nspace, world rank): this world's by
 *                universe_base, another world's through the records of
 *                pmix_dynamic.c; then
 *                PMIx_Get((nspace, rank), "fmpl.<rank>.<key>") with
 *                PMIX_IMMEDIATE: a key nobody put is an error at once, never
 *                a wait for data that will not come.  A process of another
 *                world instead gets PMIX_TIMEOUT (5 s): with IMMEDIATE the
 *                local server answers from what it holds, and it holds
 *                nothing of a world on another host (mpirun fetches that
 *                from the other host's server only for a get that may
 *                wait); a key that host has not got yet is then
 *                PROC-ENTRY-NOT-FOUND, which try_get also takes as "not
 *                yet" (the next get asks again).  (Not PMIX_OPTIONAL:
 *                that looks only in the client's own store, where collected
 *                data is not found when the server uses the "hash" GDS
 *                instead of the shared-memory dstore.)  A key put again
 *                after a fence may keep returning the value a peer read
 *                first (the client caches it; PMIX_GET_REFRESH_CACHE makes
 *                mpirun 4.1 answer "not found"), hence the rule in
 *                bootstrap.h: put each key once.
 *   try_get      the same get, "not found" answered as FMPL_ERR_NOT_PENDING
 *   barrier      PMIx_Fence without data
 *   abort        message on stderr, PMIx_Abort(status) for the nspace: the
 *                process manager ends every rank and exits with the status
 *   finalize     PMIx_Finalize
 *   lost server  an event handler for PMIX_ERR_LOST_CONNECTION ends the
 *                process with a message: the process manager is gone
 *                (mpirun killed), so no peer it ran can be relied on, and a
 *                rank waiting on one would otherwise spin as an orphan
 *                (and a segment file still named is removed:
 *                base/exit_cleanup.h)
 *   spawn, the name service, the rendezvous queues: pmix_dynamic.c
 *
 * Keys and values obey the same rules as under PMI-1 (fmpl_bootstrap_full_key
 * and fmpl_bootstrap_check_value), so a program behaves the same under every
 * launcher.  The "fmpl." prefix keeps our keys apart from the reserved
 * "pmix." ones. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_impl.h"
#include "bootstrap/jobid.h"
#include "bootstrap/pmix_client.h"
#include "base/error.h"
#include "base/exit_cleanup.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_PREFIX "fmpl."

const char *fmpl_pmix_status_text(pmix_status_t st)
{
    const char *s = PMIx_Error_string(st);
    return s ? s : "unknown PMIx status";
}

/* "fmpl.<rank>.<key>" into out[FMPL_BOOTSTRAP_KEY_MAX + sizeof KEY_PREFIX]. */
static int pmix_key(const char *func, int rank, const char *key, char *out)
{
    char full[FMPL_BOOTSTRAP_KEY_MAX];
    int rc = fmpl_bootstrap_full_key(func, rank, key, full);
    if (rc == FMPL_SUCCESS)
        snprintf(out, FMPL_BOOTSTRAP_KEY_MAX + sizeof KEY_PREFIX, "%s%s", KEY_PREFIX, full);
    return rc;
}

static int pmixbs_put(fmpl_bootstrap *bs, const char *key, const char *value)
{
    char k[FMPL_BOOTSTRAP_KEY_MAX + sizeof KEY_PREFIX];
    int rc = pmix_key(__func__, bs->rank, key, k);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_bootstrap_check_value(__func__, value);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!bs->impl)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx bootstrap already finalized");
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies it */
    pmix_status_t st = PMIx_Put(PMIX_GLOBAL, k, &v);
    if (st != PMIX_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx_Put(%s) failed: %s", k, fmpl_pmix_status_text(st));
    if (((pmixbs *)bs->impl)->fenced && (st = PMIx_Commit()) != PMIX_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx_Commit of %s failed: %s", k,
                          fmpl_pmix_status_text(st));
    return FMPL_SUCCESS;
}

static int pmixbs_fence(fmpl_bootstrap *bs)
{
    if (!bs->impl)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx bootstrap already finalized");
    pmix_status_t st = PMIx_Commit();
    if (st != PMIX_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx_Commit failed: %s", fmpl_pmix_status_text(st));
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    st = PMIx_Fence(NULL, 0, &info, 1); /* NULL: every process of our nspace */
    PMIX_INFO_DESTRUCT(&info);
    if (st != PMIX_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx_Fence (collecting data) failed: %s",
                          fmpl_pmix_status_text(st));
    ((pmixbs *)bs->impl)->fenced = 1;
    return FMPL_SUCCESS;
}

/* get and try_get: a key that is absent is FMPL_ERR_NOT_PENDING, unreported,
 * when quiet. */
static int get_key(fmpl_bootstrap *bs, const char *func, int urank, const char *key,
                   char *value, size_t len, int quiet)
{
    pmixbs *p = bs->impl;
    int limit = bs->spawn ? FMPL_UNIVERSE_MAX : bs->universe_base + bs->size;
    if (urank < 0 || urank >= limit)
        return FMPL_ERROR(FMPL_ERR_RANK, "rank %d outside 0..%d", urank, limit - 1);
    if (!value)
        return FMPL_ERROR(FMPL_ERR_ARG, "value buffer is NULL");
    if (!p)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx bootstrap already finalized");
    pmix_proc_t proc;
    int rc = fmpl_pmix_proc_of(bs, urank, &proc);
    char k[FMPL_BOOTSTRAP_KEY_MAX + sizeof KEY_PREFIX];
    if (rc == FMPL_SUCCESS)
        rc = pmix_key(func, (int)proc.rank, key, k);
    if (rc != FMPL_SUCCESS)
        return rc;
    pmix_info_t info;
    bool immediate = true;
    int timeout = 5; /* seconds; another world's process (see the top) */
    PMIX_INFO_CONSTRUCT(&info);
    if (PMIX_CHECK_NSPACE(proc.nspace, p->me.nspace))
        PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &immediate, PMIX_BOOL);
    else
        PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_value_t *v = NULL;
    pmix_status_t st = PMIx_Get(&proc, k, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (st != PMIX_SUCCESS || !v) {
        if (v)
            PMIX_VALUE_RELEASE(v);
        if (quiet && (st == PMIX_ERR_NOT_FOUND || st == PMIX_ERR_PROC_ENTRY_NOT_FOUND))
            return FMPL_ERR_NOT_PENDING;
        return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "PMIx_Get(rank %d, %s) failed: %s",
                                 urank, k, st == PMIX_SUCCESS ? "no value"
                                                              : fmpl_pmix_status_text(st));
    }
    if (v->type != PMIX_STRING || !v->data.string) {
        int type = (int)v->type;
        PMIX_VALUE_RELEASE(v);
        return fmpl_error_report(FMPL_ERR_BOOTSTRAP, func, "PMIx_Get(rank %d, %s): value of "
                                 "type %d, not a string", urank, k, type);
    }
    size_t need = strlen(v->data.string) + 1;
    if (need > len) {
        PMIX_VALUE_RELEASE(v);
        return fmpl_error_report(FMPL_ERR_ARG, func, "value of '%s' needs %zu bytes, buffer "
                                 "has %zu", k, need, len);
    }
    memcpy(value, v->data.string, need);
    PMIX_VALUE_RELEASE(v);
    return FMPL_SUCCESS;
}

static int pmixbs_get(fmpl_bootstrap *bs, int rank, const char *key, char *value, size_t len)
{
    return get_key(bs, __func__, rank, key, value, len, 0);
}

static int pmixbs_try_get(fmpl_bootstrap *bs, int rank, const char *key, char *value,
                          size_t len)
{
    return get_key(bs, __func__, rank, key, value, len, 1);
}

static int pmixbs_barrier(fmpl_bootstrap *bs)
{
    if (!bs->impl)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx bootstrap already finalized");
    pmix_status_t st = PMIx_Fence(NULL, 0, NULL, 0);
    if (st != PMIX_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx_Fence failed: %s", fmpl_pmix_status_text(st));
    return FMPL_SUCCESS;
}

__attribute__((noreturn)) static void pmixbs_abort(fmpl_bootstrap *bs, int code,
                                                  const char *message)
{
    int status = fmpl_bootstrap_abort_status(code);
    fmpl_bootstrap_print_abort(bs->rank, code, message);
    if (bs->impl) { /* NULL after finalize: then only the fallback below is left */
        char msg[512];
        snprintf(msg, sizeof msg, "fmpl rank %d: %s", bs->rank,
                 message ? message : "(no message)");
        /* Blocks until the server has the request; the process manager then
         * kills every rank of the nspace, this one included. */
        PMIx_Abort(status, msg, NULL, 0);
    }
    _exit(status);
}

/* Who this process is, for on_lost_server's message (set at open). */
static char lost_server_who[PMIX_MAX_NSLEN + 64];

/* Runs on the PMIx client's thread when the connection to the server
 * closes before PMIx_Finalize: the process manager died or was killed
 * (mpirun's own clean-up needs it alive).  Its ranks may be gone, so a
 * wait on them would never end; end this process too, saying why.  Only
 * async-signal-safe calls: the other thread may hold any lock. */
static void on_lost_server(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                           size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                           void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results;
    (void)nresults, (void)cbfunc, (void)cbdata;
    fmpl_exit_cleanup_now();
    static const char tail[] = " lost its connection to the process manager (PMIx server: "
                               "mpirun or its daemon ended); ending it\n";
    ssize_t ignored = write(STDERR_FILENO, lost_server_who, strlen(lost_server_who));
    ignored = write(STDERR_FILENO, tail, sizeof tail - 1);
    (void)ignored;
    _exit(1);
}

static void watch_server(pmixbs *p)
{
    snprintf(lost_server_who, sizeof lost_server_who, "fmpl: rank %u of %.*s (pid %ld)",
             (unsigned)p->me.rank, PMIX_MAX_NSLEN, p->me.nspace, (long)getpid());
    pmix_status_t codes[] = {PMIX_ERR_LOST_CONNECTION};
    p->lost_handler = PMIx_Register_event_handler(codes, 1, NULL, 0, on_lost_server, NULL, NULL);
}

static int pmixbs_finalize(fmpl_bootstrap *bs)
{
    pmixbs *p = bs->impl;
    if (!p)
        return FMPL_SUCCESS;
    if (p->lost_handler >= 0) /* the server may close first once we are done */
        PMIx_Deregister_event_handler((size_t)p->lost_handler, NULL, NULL);
    pmix_status_t st = PMIx_Finalize(NULL, 0);
    fmpl_pmix_dynamic_free(p);
    free(p);
    bs->impl = NULL;
    if (st != PMIX_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx_Finalize failed: %s", fmpl_pmix_status_text(st));
    return FMPL_SUCCESS;
}

/* PMIX_JOB_SIZE of our nspace; servers deliver it as uint32, but accept any
 * integer type. */
static int job_size(const pmix_proc_t *me, int *size)
{
    pmix_proc_t wild;
    PMIX_PROC_LOAD(&wild, me->nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t st = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (st != PMIX_SUCCESS || !v) {
        if (v)
            PMIX_VALUE_RELEASE(v);
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx_Get(PMIX_JOB_SIZE) failed: %s",
                          st == PMIX_SUCCESS ? "no value" : fmpl_pmix_status_text(st));
    }
    long long n;
    switch (v->type) {
    case PMIX_UINT32: n = v->data.uint32; break;
    case PMIX_INT32: n = v->data.int32; break;
    case PMIX_UINT64: n = (long long)(v->data.uint64 > INT32_MAX ? 0 : v->data.uint64); break;
    case PMIX_INT64: n = v->data.int64; break;
    case PMIX_INT: n = v->data.integer; break;
    case PMIX_UINT: n = v->data.uint; break;
    case PMIX_UINT16: n = v->data.uint16; break;
    case PMIX_SIZE: n = (long long)(v->data.size > INT32_MAX ? 0 : v->data.size); break;
    default: n = -1; break;
    }
    int type = (int)v->type;
    PMIX_VALUE_RELEASE(v);
    if (n == -1)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIX_JOB_SIZE has unexpected type %d", type);
    if (n < 1 || n > 1 << 30)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIX_JOB_SIZE %lld is not a valid job size", n);
    *size = (int)n;
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_pmix_open(fmpl_bootstrap *bs)
{
    pmixbs *p = calloc(1, sizeof *p);
    if (!p)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "out of memory");
    pmix_status_t st = PMIx_Init(&p->me, NULL, 0);
    if (st != PMIX_SUCCESS) {
        free(p);
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP,
                          "PMIx_Init failed: %s (PMIX_RANK/PMIX_NAMESPACE are set, but the "
                          "PMIx server cannot be reached)",
                          fmpl_pmix_status_text(st));
    }
    int size = 0;
    int rc = job_size(&p->me, &size);
    if (rc == FMPL_SUCCESS && (p->me.rank >= (pmix_rank_t)size))
        rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "PMIx rank %u is not below the job size %d",
                        (unsigned)p->me.rank, size);
    if (rc != FMPL_SUCCESS) {
        PMIx_Finalize(NULL, 0);
        free(p);
        return rc;
    }
    watch_server(p);
    bs->rank = (int)p->me.rank;
    bs->size = size;
    bs->launcher = "pmix";
    bs->impl = p;
    rc = fmpl_bootstrap_pmix_universe(bs, p);
    if (rc != FMPL_SUCCESS) {
        if (p->lost_handler >= 0)
            PMIx_Deregister_event_handler((size_t)p->lost_handler, NULL, NULL);
        PMIx_Finalize(NULL, 0);
        fmpl_pmix_dynamic_free(p);
        free(p);
        bs->impl = NULL;
        return rc;
    }
    char nspace[PMIX_MAX_NSLEN + 1];
    memcpy(nspace, p->me.nspace, PMIX_MAX_NSLEN);
    nspace[PMIX_MAX_NSLEN] = '\0';
    fmpl_job_id_from_kvsname(nspace, bs->job_id);
    bs->put = pmixbs_put;
    bs->fence = pmixbs_fence;
    bs->get = pmixbs_get;
    bs->barrier = pmixbs_barrier;
    bs->abort = pmixbs_abort;
    bs->finalize = pmixbs_finalize;
    bs->try_get = pmixbs_try_get;
    fmpl_bootstrap_pmix_dynamic_ops(bs);
    return FMPL_SUCCESS;
}
