/* BLACS-FMPL: start-up, system contexts, process grids and their queries.
 *
 *   Cblacs_pinfo        fmpl_init (unless FMPL runs already), world rank/size
 *   Cblacs_gridmap      fmpl_comm_split of the system context's communicator
 *                       (members colored in, ranked row-major), then of that
 *                       into rows and columns
 *   Cblacs_gridexit     fmpl_comm_free of the three (collective over the grid)
 *   Cblacs_barrier      fmpl_barrier on the scope's communicator
 *   Cblacs_exit         every grid freed; fmpl_finalize when BLACS started FMPL
 *                       and cont is 0 */
#include "blacs/blacs.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* MPICH ABI values (mpi.h): system contexts are MPI communicators. */
#define BLACS_MPI_COMM_WORLD 0x44000000
#define BLACS_MPI_COMM_NULL 0x04000000

/* Matching indices BLACS asks for when it starts FMPL: the messages that
 * may wait for their receive between one pair in one grid. */
#define BLACS_INDICES 1024

static int started;        /* blacs_start ran */
static int started_fmpl;   /* ... and called fmpl_init (so Cblacs_exit finalizes) */
static int world_rank, world_size;

/* System contexts: [0] is MPI_COMM_WORLD. */
typedef struct {
    int in_use;
    int mpi_comm;
    fmpl_comm comm;
} blacs_sys;
static blacs_sys *systems;
static int nsystems;

static blacs_ctx **contexts;
static int ncontexts;

void blacs_error(const char *func, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "BLACS ERROR on process {%d}: %s: %s\n", world_rank, func, msg);
    fflush(stderr);
    fmpl_abort(1, "BLACS error");
}

void blacs_check(int rc, const char *func, const char *what)
{
    if (rc != FMPL_SUCCESS)
        blacs_error(func, "%s failed: %s", what, fmpl_error_string(rc));
}

void blacs_start(void)
{
    if (started)
        return;
    int flag = 0, done = 0;
    fmpl_initialized(&flag);
    fmpl_finalized(&done);
    if (done)
        blacs_error("BLACS_PINFO", "FMPL was finalized");
    if (!flag) { /* a BLACS program, or an MPI one (fmpl_init then joins MPI_Init's runtime) */
        blacs_check(fmpl_init(NULL, NULL, BLACS_INDICES), "BLACS_PINFO", "fmpl_init");
        started_fmpl = 1;
    }
    blacs_check(fmpl_comm_rank(FMPL_COMM_WORLD, &world_rank), "BLACS_PINFO", "fmpl_comm_rank");
    blacs_check(fmpl_comm_size(FMPL_COMM_WORLD, &world_size), "BLACS_PINFO", "fmpl_comm_size");
    systems = calloc(1, sizeof *systems);
    if (!systems)
        blacs_error("BLACS_PINFO", "out of memory");
    systems[0] = (blacs_sys){1, BLACS_MPI_COMM_WORLD, FMPL_COMM_WORLD};
    nsystems = 1;
    started = 1;
}

void Cblacs_pinfo(int *mypnum, int *nprocs)
{
    blacs_start();
    *mypnum = world_rank;
    *nprocs = world_size;
}

void Cblacs_setup(int *mypnum, int *nprocs) { Cblacs_pinfo(mypnum, nprocs); }

/* ------------------------------------------------------ system contexts */

static int sys_add(int mpi_comm, fmpl_comm comm)
{
    int h = 0;
    while (h < nsystems && systems[h].in_use)
        h++;
    if (h == nsystems) {
        blacs_sys *grown = realloc(systems, (size_t)(nsystems + 8) * sizeof *grown);
        if (!grown)
            blacs_error("Csys2blacs_handle", "out of memory");
        memset(grown + nsystems, 0, 8 * sizeof *grown);
        systems = grown;
        nsystems += 8;
    }
    systems[h] = (blacs_sys){1, mpi_comm, comm};
    return h;
}

int Csys2blacs_handle(int mpi_comm)
{
    blacs_start();
    for (int h = 0; h < nsystems; h++)
        if (systems[h].in_use && systems[h].mpi_comm == mpi_comm)
            return h;
    fmpl_comm comm;
    blacs_check(fmpl_comm_from_mpi(mpi_comm, &comm), "Csys2blacs_handle",
                "naming the MPI communicator's FMPL communicator");
    return sys_add(mpi_comm, comm);
}

int Cblacs2sys_handle(int handle)
{
    blacs_start();
    if (handle < 0 || handle >= nsystems || !systems[handle].in_use)
        blacs_error("Cblacs2sys_handle", "%d is not a system handle", handle);
    return systems[handle].mpi_comm;
}

void Cfree_blacs_system_handle(int handle)
{
    blacs_start();
    if (handle > 0 && handle < nsystems && systems[handle].in_use)
        systems[handle].in_use = 0; /* the communicator is the program's */
    else if (handle != 0)
        fprintf(stderr, "BLACS WARNING on process {%d}: Cfree_blacs_system_handle: %d is not "
                        "a system handle\n", world_rank, handle);
}

/* A system context argument: a handle, or (as the Fortran interface of
 * MPI's BLACS takes them) an MPI communicator, never a small number. */
static int sys_resolve(int value, const char *func)
{
    if (value >= 0 && value < nsystems && systems[value].in_use)
        return value;
    if (value < 0 || value >= 0x04000000)
        return Csys2blacs_handle(value);
    blacs_error(func, "%d is neither a system context nor an MPI communicator", value);
}

/* ------------------------------------------------------------- grids */

blacs_ctx *blacs_context(int handle, const char *func)
{
    if (handle < 0 || handle >= ncontexts || !contexts[handle])
        blacs_error(func, "invalid context handle %d", handle);
    return contexts[handle];
}

static int ctx_add(blacs_ctx *ctx)
{
    int h = 0;
    while (h < ncontexts && contexts[h])
        h++;
    if (h == ncontexts) {
        blacs_ctx **grown = realloc(contexts, (size_t)(ncontexts + 16) * sizeof *grown);
        if (!grown)
            blacs_error("BLACS_GRIDMAP", "out of memory");
        memset(grown + ncontexts, 0, 16 * sizeof *grown);
        contexts = grown;
        ncontexts += 16;
    }
    contexts[h] = ctx;
    return h;
}

/* A link on `comm`, whose members are `members`. */
static void link_open(blacs_link *l, fmpl_comm comm, int members)
{
    static const char func[] = "BLACS_GRIDMAP";
    l->comm = comm;
    blacs_check(fmpl_comm_indices(comm, &l->indices), func, "fmpl_comm_indices");
    l->sent = calloc((size_t)members, sizeof *l->sent);
    l->received = calloc((size_t)members, sizeof *l->received);
    if (!l->sent || !l->received)
        blacs_error(func, "out of memory");
}

/* A communicator of its own for a scope's broadcasts: members of the grid
 * splitting it as the scope's communicator was split. */
static fmpl_comm bcast_comm(fmpl_comm all, int color, int key)
{
    fmpl_comm c;
    blacs_check(fmpl_comm_split(all, color, key, &c), "BLACS_GRIDMAP",
                "fmpl_comm_split (broadcasts)");
    return c;
}

static void link_close(blacs_link *l, int own_comm)
{
    if (own_comm)
        blacs_check(fmpl_comm_free(&l->comm), "BLACS_GRIDEXIT", "fmpl_comm_free (broadcasts)");
    free(l->sent);
    free(l->received);
}

void Cblacs_gridmap(int *context, const int *usermap, int ldumap, int nprow, int npcol)
{
    static const char func[] = "BLACS_GRIDMAP";
    blacs_start();
    int sys = sys_resolve(*context, func);
    fmpl_comm parent = systems[sys].comm;
    int me, np;
    blacs_check(fmpl_comm_rank(parent, &me), func, "fmpl_comm_rank");
    blacs_check(fmpl_comm_size(parent, &np), func, "fmpl_comm_size");
    if (nprow < 1 || npcol < 1 || (long)nprow * npcol > np)
        blacs_error(func, "illegal grid (%d x %d), #procs=%d", nprow, npcol, np);
    if (ldumap < nprow)
        blacs_error(func, "ldumap %d is less than nprow %d", ldumap, nprow);
    int mine = -1;
    char *seen = calloc((size_t)np, 1);
    if (!seen)
        blacs_error(func, "out of memory");
    for (int j = 0; j < npcol; j++)
        for (int i = 0; i < nprow; i++) {
            int p = usermap[(size_t)j * ldumap + i];
            if (p < 0 || p >= np || seen[p]) {
                free(seen);
                blacs_error(func, "usermap(%d,%d) = %d: %s", i + 1, j + 1, p,
                            p < 0 || p >= np ? "no such process" : "process mapped twice");
            }
            seen[p] = 1;
            if (p == me)
                mine = i * npcol + j;
        }
    free(seen);
    fmpl_comm all;
    blacs_check(fmpl_comm_split(parent, mine >= 0 ? 0 : FMPL_KEY_NONE, mine, &all), func,
                "fmpl_comm_split (grid)");
    if (mine < 0) {
        *context = -1;
        return;
    }
    blacs_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        blacs_error(func, "out of memory");
    ctx->sys = sys;
    /* MPI's BLACS's defaults: one ring, one branch, no repeatability or
     * coherence asked for. */
    for (int w = GET_NR_BS; w <= GET_NB_CO; w++)
        ctx->tuning[w - GET_NR_BS] = 1;
    ctx->nprow = nprow;
    ctx->npcol = npcol;
    ctx->myrow = mine / npcol;
    ctx->mycol = mine % npcol;
    ctx->all = all;
    blacs_check(fmpl_comm_split(all, ctx->myrow, ctx->mycol, &ctx->row), func,
                "fmpl_comm_split (row)");
    blacs_check(fmpl_comm_split(all, ctx->mycol, ctx->myrow, &ctx->col), func,
                "fmpl_comm_split (column)");
    link_open(&ctx->p2p, all, nprow * npcol);
    link_open(&ctx->bcast[0], bcast_comm(all, ctx->myrow, ctx->mycol), npcol);
    link_open(&ctx->bcast[1], bcast_comm(all, ctx->mycol, ctx->myrow), nprow);
    link_open(&ctx->bcast[2], bcast_comm(all, 0, mine), nprow * npcol);
    *context = ctx_add(ctx);
}

void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol)
{
    if (nprow < 1 || npcol < 1)
        blacs_error("BLACS_GRIDINIT", "illegal grid (%d x %d)", nprow, npcol);
    int *map = malloc((size_t)nprow * npcol * sizeof *map);
    if (!map)
        blacs_error("BLACS_GRIDINIT", "out of memory");
    int column_major = order && toupper((unsigned char)order[0]) == 'C';
    for (int j = 0; j < npcol; j++)
        for (int i = 0; i < nprow; i++)
            map[(size_t)j * nprow + i] = column_major ? j * nprow + i : i * npcol + j;
    Cblacs_gridmap(context, map, nprow, nprow, npcol);
    free(map);
}

void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol)
{
    if (context < 0 || context >= ncontexts || !contexts[context]) {
        *nprow = *npcol = *myrow = *mycol = -1;
        return;
    }
    const blacs_ctx *ctx = contexts[context];
    *nprow = ctx->nprow;
    *npcol = ctx->npcol;
    *myrow = ctx->myrow;
    *mycol = ctx->mycol;
}

/* Spooled sends hold their communicator: let them go before freeing it
 * (their receivers have posted them, or will: BLACS programs receive what
 * is sent to them before leaving the grid). */
static void drain_spool(void)
{
    int nspool = 1;
    while (nspool > 0)
        blacs_check(fmpl_sendbuf_check(NULL, &nspool), "BLACS_GRIDEXIT", "fmpl_sendbuf_check");
}

void Cblacs_gridexit(int context)
{
    blacs_ctx *ctx = blacs_context(context, "BLACS_GRIDEXIT");
    drain_spool();
    for (int k = 2; k >= 0; k--)
        link_close(&ctx->bcast[k], 1);
    link_close(&ctx->p2p, 0);
    blacs_check(fmpl_comm_free(&ctx->col), "BLACS_GRIDEXIT", "fmpl_comm_free (column)");
    blacs_check(fmpl_comm_free(&ctx->row), "BLACS_GRIDEXIT", "fmpl_comm_free (row)");
    blacs_check(fmpl_comm_free(&ctx->all), "BLACS_GRIDEXIT", "fmpl_comm_free (grid)");
    free(ctx);
    contexts[context] = NULL;
}

void Cblacs_exit(int cont)
{
    if (!started)
        return;
    for (int h = 0; h < ncontexts; h++)
        if (contexts[h])
            Cblacs_gridexit(h);
    free(contexts);
    contexts = NULL;
    ncontexts = 0;
    drain_spool();
    blacs_scratch_free();
    blacs_spool_release();
    blacs_coll_release();
    free(systems);
    systems = NULL;
    nsystems = 0;
    started = 0;
    if (!cont && started_fmpl) {
        blacs_check(fmpl_finalize(), "BLACS_EXIT", "fmpl_finalize");
        started_fmpl = 0;
    }
}

void Cblacs_abort(int context, int errornum)
{
    (void)context;
    fprintf(stderr, "{%d}: BLACS_ABORT called with error number %d\n", world_rank, errornum);
    fflush(NULL);
    fmpl_abort(errornum ? errornum : 1, "BLACS_ABORT");
}

void Cblacs_barrier(int context, const char *scope)
{
    blacs_ctx *ctx = blacs_context(context, "BLACS_BARRIER");
    char which;
    blacs_barrier_delivering(blacs_scope(ctx, scope, "BLACS_BARRIER", &which), "BLACS_BARRIER");
}

void Cblacs_freebuff(int context, int wait)
{
    (void)context;
    (void)wait; /* sends complete locally: no buffer is ever still in use */
    if (started)
        blacs_scratch_free();
}

int Cblacs_pnum(int context, int prow, int pcol)
{
    const blacs_ctx *ctx = blacs_context(context, "BLACS_PNUM");
    if (prow < 0 || prow >= ctx->nprow || pcol < 0 || pcol >= ctx->npcol)
        return -1;
    return prow * ctx->npcol + pcol;
}

void Cblacs_pcoord(int context, int pnum, int *prow, int *pcol)
{
    const blacs_ctx *ctx = blacs_context(context, "BLACS_PCOORD");
    if (pnum < 0 || pnum >= ctx->nprow * ctx->npcol) {
        *prow = *pcol = -1;
        return;
    }
    *prow = pnum / ctx->npcol;
    *pcol = pnum % ctx->npcol;
}

/* ----------------------------------------------------- get and set */

/* The Fortran interface answers GET_SYSCONTEXT with the MPI communicator
 * itself, as MPI's BLACS does (Fortran programs pass it to MPI); both
 * interfaces accept either form (sys_resolve). */
void blacs_get(int context, int what, int *val, int fortran)
{
    blacs_start();
    switch (what) {
    case GET_SYSCONTEXT:
        *val = fortran ? BLACS_MPI_COMM_WORLD : 0;
        break;
    case GET_MSGIDS:
        val[0] = 0;
        val[1] = 32767;
        break;
    case GET_DEBUGLEVEL:
        *val = 0;
        break;
    case GET_BLACSCONTEXT: { /* a system context for the grid's processes */
        const blacs_ctx *ctx = blacs_context(context, "BLACS_GET");
        for (int h = 0; h < nsystems; h++)
            if (systems[h].in_use && systems[h].comm == ctx->all &&
                systems[h].mpi_comm == BLACS_MPI_COMM_NULL) {
                *val = h;
                return;
            }
        *val = sys_add(BLACS_MPI_COMM_NULL, ctx->all);
        break;
    }
    case GET_NR_BS:
    case GET_NR_CO:
    case GET_NB_BS:
    case GET_NB_CO:
    case GET_TOPSREPEAT:
    case GET_TOPSCOHRNT:
        *val = blacs_context(context, "BLACS_GET")->tuning[what - GET_NR_BS];
        break;
    default:
        fprintf(stderr, "BLACS WARNING on process {%d}: BLACS_GET: unknown WHAT (%d)\n",
                world_rank, what);
    }
}

void Cblacs_get(int context, int what, int *val) { blacs_get(context, what, val, 0); }

/* The settings tune MPI's BLACS's own algorithms (message ids, rings and
 * branches of its topologies): FMPL chooses its algorithms itself, so they
 * have no effect, but a context keeps its topology settings for BLACS_GET
 * (BLACS's tester checks that it reads back what it set).  Rings must not
 * be 0 and branches must be positive, as in MPI's BLACS. */
void Cblacs_set(int context, int what, const int *val)
{
    blacs_start();
    if (what == GET_MSGIDS || what == GET_DEBUGLEVEL)
        return;
    if (what >= GET_NR_BS && what <= GET_TOPSCOHRNT) {
        blacs_ctx *ctx = blacs_context(context, "BLACS_SET");
        int bad = ((what == GET_NR_BS || what == GET_NR_CO) && *val == 0) ||
                  ((what == GET_NB_BS || what == GET_NB_CO) && *val <= 0);
        if (bad)
            fprintf(stderr, "BLACS WARNING on process {%d}: BLACS_SET: %d is not a valid "
                    "value for WHAT %d (kept %d)\n", world_rank, *val, what,
                    ctx->tuning[what - GET_NR_BS]);
        else
            ctx->tuning[what - GET_NR_BS] = what >= GET_TOPSREPEAT ? *val != 0 : *val;
        return;
    }
    fprintf(stderr, "BLACS WARNING on process {%d}: BLACS_SET: unknown WHAT (%d)\n",
            world_rank, what);
}

/* ----------------------------------------------------- scopes, timers */

fmpl_comm blacs_scope(const blacs_ctx *ctx, const char *scope, const char *func, char *which)
{
    *which = scope ? (char)toupper((unsigned char)scope[0]) : '?';
    switch (*which) {
    case 'R':
        return ctx->row;
    case 'C':
        return ctx->col;
    case 'A':
        return ctx->all;
    default:
        blacs_error(func, "unknown scope '%c'", scope ? scope[0] : '?');
    }
}

int blacs_scope_rank(const blacs_ctx *ctx, char which, int r, int c)
{
    return which == 'R' ? c : which == 'C' ? r : r * ctx->npcol + c;
}

void blacs_topology(const char *top, const char *func)
{
    int t = top ? toupper((unsigned char)top[0]) : '?';
    if (!strchr(" IDSMHTF", t) && !(t >= '0' && t <= '9'))
        blacs_error(func, "unknown topology '%c'", top ? top[0] : '?');
}

double Cdwalltime00(void) { return fmpl_wtime(); }

double Cdcputime00(void) { return (double)clock() / CLOCKS_PER_SEC; }
