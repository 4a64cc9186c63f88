/* MPI windows: creation (the four flavours), free, and the window's
 * objects (group, attributes, name, info, error handler).  The memory and
 * synchronisation protocol is src/rma; communication is win_ops.c,
 * synchronisation win_sync.c.
 *
 * Creation is collective over the communicator; the window keeps a
 * private duplicate of it for its own synchronisation (fence, free: the
 * user may free the communicator, or run collectives on it in any order
 * relative to the window's).  The creation exchanges run on the user's
 * communicator, whose collective areas exist already: on the duplicate
 * they would cost each window the duplicate's areas (fences and free are
 * barriers, which use only its header lines).
 *   1. each member makes its descriptor (fmpl_rma_win_create) and, for the
 *      allocating flavours, its memory; after each of the two an allreduce
 *      agrees that every member succeeded (a member that fails still takes
 *      part, so that nobody waits for it);
 *   2. an allgather of FMPL_RMA_ENTRY_WORDS words per member gives every
 *      member every other's memory and descriptor addresses.
 * Memory: MPI_Win_allocate takes the shared heap (direct loads and stores
 * for every peer), falling back to malloc (CMA) when the heap is full;
 * MPI_Win_allocate_shared makes one block in member 0's heap holding every
 * member's part in rank order, contiguous as MPI's default requires;
 * MPI_Win_create uses the caller's memory (shared if it came from
 * MPI_Alloc_mem, else CMA); dynamic windows address targets by absolute
 * address (disp_unit 1) through CMA. */
#include "api/mpi/win.h"
#include "api/mpi/mpi_objects.h"
#include "progress/async.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct fmpl_mpi_win_region {
    void *base;
    MPI_Aint size;
    struct fmpl_mpi_win_region *next;
} region;

fmpl_mpi_table fmpl_mpi_wins = FMPL_MPI_TABLE_INIT(FMPL_HK_WIN);

fmpl_mpi_win *fmpl_mpi_win_get(MPI_Win h) { return fmpl_mpi_win_lookup(h); }

/* ------------------------------------------------------------ creation */

/* Release everything of a window that is not (or no longer) registered. */
static void win_destroy(fmpl_mpi_win *w)
{
    fmpl_rma_win_destroy(w->rma);
    if (w->owned)
        w->owned_heap ? fmpl_fab_free(w->owned) : free(w->owned);
    while (w->regions) {
        region *r = w->regions;
        w->regions = r->next;
        free(r);
    }
    fmpl_mpi_attr_list_drop(&w->attrs);
    if (w->info)
        fmpl_mpi_info_release(w->info);
    fmpl_mpi_errhandler_unref(w->errhandler);
    if (w->team) {
        fmpl_mpi_comm *c = fmpl_mpi_comm_get(w->comm);
        fmpl_team_retire(w->team);
        if (c)
            fmpl_mpi_comm_release(c);
    }
    free(w->locks);
    free(w->access);
    free(w);
}

/* Did any member fail (rc: this member's MPI_SUCCESS or error class)?
 * Collective over comm: a member that fails locally still takes part, so
 * that every member leaves creation the same way. */
static int agree(int rc, MPI_Comm comm)
{
    int mine = rc != MPI_SUCCESS, any = 0;
    PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    return any;
}

/* Step 1 of every flavour: argument checks, the private communicator, the
 * descriptor.  Collective (the duplication); on error nothing is left. */
static int win_begin(MPI_Comm comm, MPI_Info info, int flavor, MPI_Win *win, const char *func,
                     fmpl_mpi_win **out)
{
    *out = NULL; /* set on every path: callers read it only on success */
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    if (c->inter)
        return fmpl_mpi_error(comm, MPI_ERR_COMM, func,
                              "windows are created on intracommunicators only");
    if (!win)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "win is NULL");
    if (!fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(comm, MPI_ERR_INFO, func, "invalid info 0x%x", (unsigned)info);
    *win = MPI_WIN_NULL;
    fmpl_team_build *b;
    int rc = fmpl_team_dup_start(c->team, &b);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                              "cannot duplicate the communicator");
    fmpl_async_wait(fmpl_team_build_async(b));
    fmpl_team *t;
    rc = fmpl_team_build_finish(b, &t);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                              "cannot duplicate the communicator");
    fmpl_mpi_win *w = calloc(1, sizeof *w);
    if (!w) {
        fmpl_team_retire(t);
        agree(MPI_ERR_NO_MEM, comm); /* the others wait for this member's verdict */
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory for a window");
    }
    w->team = t;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->nexpose = -1;
    w->handle = MPI_WIN_NULL;
    rc = fmpl_mpi_comm_register(t, &w->comm);
    if (rc != MPI_SUCCESS) {
        w->comm = MPI_COMM_NULL;
        fmpl_team_retire(t);
        w->team = NULL;
    }
    if (rc == MPI_SUCCESS)
        rc = fmpl_rma_win_create(t->rank, t->size, flavor == MPI_WIN_FLAVOR_DYNAMIC, &w->rma)
                 ? MPI_ERR_NO_MEM
                 : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && !(w->locks = calloc((size_t)t->size, 1)))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
        rc = fmpl_mpi_info_copy(info, &w->info);
    if (agree(rc, comm)) {
        win_destroy(w);
        return fmpl_mpi_error(comm, rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER, func,
                              rc != MPI_SUCCESS ? "cannot create the window"
                                                : "another member could not create its window");
    }
    *out = w;
    return MPI_SUCCESS;
}

/* The end of every flavour: agree on the memory, register, exchange.  `ok` is
 * this member's verdict (MPI_SUCCESS or its error class); a failure anywhere
 * fails everyone. */
static int win_finish(fmpl_mpi_win *w, int ok, fmpl_raddr base, MPI_Aint size,
                      MPI_Aint disp_unit, MPI_Comm comm, MPI_Win *win, const char *func)
{
    /* Everything that can fail locally happens before the agreement, so
     * that after it every member goes on and nobody is left alone. */
    int n = w->team->size;
    uint64_t entry[FMPL_RMA_ENTRY_WORDS];
    uint64_t *all = malloc((size_t)n * sizeof entry);
    if (ok == MPI_SUCCESS && !all)
        ok = MPI_ERR_NO_MEM;
    if (ok == MPI_SUCCESS && fmpl_mpi_table_add(&fmpl_mpi_wins, w, &w->handle) != MPI_SUCCESS)
        ok = MPI_ERR_NO_MEM; /* too many windows */
    if (ok == MPI_SUCCESS && fmpl_rma_win_expose(w->rma, base, (uint64_t)size) != FMPL_SUCCESS)
        ok = MPI_ERR_WIN; /* the network provider cannot register the memory */
    if (agree(ok, comm)) {
        if (ok == MPI_SUCCESS)
            fmpl_mpi_table_remove(&fmpl_mpi_wins, w->handle);
        free(all);
        win_destroy(w);
        return fmpl_mpi_error(comm, ok != MPI_SUCCESS ? ok : MPI_ERR_OTHER, func,
                              ok != MPI_SUCCESS ? "cannot make this member's window"
                                                : "another member could not make its window");
    }
    fmpl_rma_win_entry(w->rma, base, (uint64_t)size, disp_unit, entry);
    PMPI_Allgather(entry, FMPL_RMA_ENTRY_WORDS, MPI_UINT64_T, all, FMPL_RMA_ENTRY_WORDS,
                   MPI_UINT64_T, comm);
    fmpl_rma_win_connect(w->rma, all, w->team->world);
    free(all);
    *win = w->handle;
    return MPI_SUCCESS;
}

static int check_size(MPI_Comm comm, MPI_Aint size, MPI_Aint disp_unit, const char *func)
{
    if (size < 0)
        return fmpl_mpi_error(comm, MPI_ERR_SIZE, func, "size %ld is negative", (long)size);
    if (disp_unit <= 0 || disp_unit > 0x7fffffff)
        return fmpl_mpi_error(comm, MPI_ERR_DISP, func, "disp_unit %ld is not positive",
                              (long)disp_unit);
    return MPI_SUCCESS;
}

static int win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                      MPI_Comm comm, MPI_Win *win, const char *func)
{
    FMPL_MPI_CHECK_READY(comm);
    int rc = check_size(comm, size, disp_unit, func);
    if (rc == MPI_SUCCESS && size > 0 && !base)
        rc = fmpl_mpi_error(comm, MPI_ERR_BASE, func, "base is NULL with size %ld",
                            (long)size);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_win *w;
    if ((rc = win_begin(comm, info, MPI_WIN_FLAVOR_CREATE, win, func, &w)) != MPI_SUCCESS)
        return rc;
    w->base = base;
    w->size = size;
    w->disp_unit = (int)disp_unit;
    return win_finish(w, MPI_SUCCESS, fmpl_fab_raddr(base), size, disp_unit, comm, win, func);
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    FMPL_CORE_GUARD();
    return win_create(base, size, disp_unit, info, comm, win, "MPI_Win_create");
}
FMPL_MPI_WEAK(Win_create)

int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win)
{
    FMPL_CORE_GUARD();
    return win_create(base, size, disp_unit, info, comm, win, "MPI_Win_create_c");
}
FMPL_MPI_WEAK(Win_create_c)

/* The start of the allocating flavours: their checks, then win_begin. */
static int alloc_begin(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void *baseptr, int flavor, MPI_Win *win, const char *func,
                       fmpl_mpi_win **w)
{
    FMPL_MPI_CHECK_READY(comm);
    int rc = check_size(comm, size, disp_unit, func);
    if (rc == MPI_SUCCESS && !baseptr)
        rc = fmpl_mpi_error(comm, MPI_ERR_ARG, func, "baseptr is NULL");
    return rc != MPI_SUCCESS ? rc : win_begin(comm, info, flavor, win, func, w);
}

static int win_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win, const char *func)
{
    fmpl_mpi_win *w;
    int rc = alloc_begin(size, disp_unit, info, comm, baseptr, MPI_WIN_FLAVOR_ALLOCATE, win,
                         func, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    int ok = MPI_SUCCESS;
    if (size > 0) {
        w->owned = fmpl_fab_alloc((size_t)size);
        w->owned_heap = w->owned != NULL;
        if (!w->owned) /* the heap is full: private memory, reached by CMA */
            w->owned = malloc((size_t)size);
        if (!w->owned)
            ok = MPI_ERR_NO_MEM;
    }
    w->base = w->owned;
    w->size = size;
    w->disp_unit = (int)disp_unit;
    *(void **)baseptr = w->base;
    return win_finish(w, ok, fmpl_fab_raddr(w->base), size, disp_unit, comm, win, func);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    FMPL_CORE_GUARD();
    return win_allocate(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate");
}
FMPL_MPI_WEAK(Win_allocate)

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win)
{
    FMPL_CORE_GUARD();
    return win_allocate(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_c");
}
FMPL_MPI_WEAK(Win_allocate_c)

/* One block in member 0's heap, every member's part at the prefix sum of
 * the sizes before it. */
static int win_allocate_shared(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win, const char *func)
{
    fmpl_mpi_win *w;
    int rc = alloc_begin(size, disp_unit, info, comm, baseptr, MPI_WIN_FLAVOR_SHARED, win,
                         func, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (fmpl_team_spans_network(w->team)) { /* some member's memory is on another host */
        win_destroy(w);
        return fmpl_mpi_error(comm, MPI_ERR_RMA_SHARED, func,
                              "the communicator's members do not all share this host's memory "
                              "(split it with MPI_COMM_TYPE_SHARED first)");
    }
    MPI_Aint before = 0, total = 0;
    PMPI_Exscan(&size, &before, 1, MPI_AINT, MPI_SUM, comm);
    PMPI_Allreduce(&size, &total, 1, MPI_AINT, MPI_SUM, comm);
    if (w->team->rank == 0)
        before = 0; /* MPI_Exscan leaves member 0's result undefined */
    uint64_t block = 0; /* member 0's packed raddr of the block, 0: none */
    if (w->team->rank == 0 && total > 0) {
        w->owned = fmpl_fab_alloc((size_t)total);
        w->owned_heap = 1;
        if (w->owned)
            block = fmpl_raddr_pack(fmpl_fab_raddr(w->owned));
    }
    PMPI_Bcast(&block, 1, MPI_UINT64_T, 0, comm);
    int ok = total > 0 && !block ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    fmpl_raddr base = {0};
    if (block) {
        base = fmpl_raddr_unpack(block, w->team->world[0]);
        base.addr += (uint64_t)before;
        w->base = size > 0 ? fmpl_fab_ptr(base) : NULL;
    }
    w->size = size;
    w->disp_unit = (int)disp_unit;
    *(void **)baseptr = w->base;
    return win_finish(w, ok, base, size, disp_unit, comm, win, func);
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    FMPL_CORE_GUARD();
    return win_allocate_shared(size, disp_unit, info, comm, baseptr, win,
                               "MPI_Win_allocate_shared");
}
FMPL_MPI_WEAK(Win_allocate_shared)

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win)
{
    FMPL_CORE_GUARD();
    return win_allocate_shared(size, disp_unit, info, comm, baseptr, win,
                               "MPI_Win_allocate_shared_c");
}
FMPL_MPI_WEAK(Win_allocate_shared_c)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_create_dynamic";
    fmpl_mpi_win *w;
    int rc = win_begin(comm, info, MPI_WIN_FLAVOR_DYNAMIC, win, func, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    w->disp_unit = 1;
    if (fmpl_team_spans_network(w->team)) { /* attached memory would need a key per region */
        win_destroy(w);
        return fmpl_mpi_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, func,
                              "dynamic windows over the network (a member on another host, "
                              "or FMPL_FABRIC=net) are not supported yet");
    }
    /* Targets are addressed by absolute address: the base is address 0 of
     * the member's process. */
    fmpl_raddr base = {.addr = 0, .rank = w->team->world[w->team->rank],
                       .kind = FMPL_MEM_PRIVATE};
    return win_finish(w, MPI_SUCCESS, base, 0, 1, comm, win, func);
}
FMPL_MPI_WEAK(Win_create_dynamic)

/* ------------------------------------------------------------ dynamic memory */

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_attach";
    FMPL_GET_WIN(win, w, func);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return fmpl_mpi_error(win, MPI_ERR_RMA_FLAVOR, func,
                              "memory is attached to dynamic windows only");
    if (size < 0)
        return fmpl_mpi_error(win, MPI_ERR_SIZE, func, "size %ld is negative", (long)size);
    if (size > 0 && !base)
        return fmpl_mpi_error(win, MPI_ERR_BASE, func, "base is NULL");
    region *r = malloc(sizeof *r);
    if (!r)
        return fmpl_mpi_error(win, MPI_ERR_NO_MEM, func, "no memory");
    *r = (region){.base = base, .size = size, .next = w->regions};
    w->regions = r;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_detach";
    FMPL_GET_WIN(win, w, func);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return fmpl_mpi_error(win, MPI_ERR_RMA_FLAVOR, func,
                              "memory is detached from dynamic windows only");
    for (region **p = &w->regions; *p; p = &(*p)->next)
        if ((*p)->base == base) {
            region *r = *p;
            *p = r->next;
            free(r);
            return MPI_SUCCESS;
        }
    return fmpl_mpi_error(win, MPI_ERR_BASE, func, "%p is not attached to this window", base);
}
FMPL_MPI_WEAK(Win_detach)

/* ------------------------------------------------------------ free */

int PMPI_Win_free(MPI_Win *win)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_free";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!win)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "win is NULL");
    FMPL_GET_WIN(*win, w, func);
    if (fmpl_mpi_win_in_epoch(w))
        return fmpl_mpi_error(*win, MPI_ERR_RMA_SYNC, func,
                              "the window has an open epoch (lock, start or post)");
    int rc = fmpl_mpi_attr_list_delete_all(w->handle, &w->attrs);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(*win, rc, func, "an attribute delete callback failed");
    /* Nobody accesses this member's memory or descriptor after this. */
    fmpl_rma_flush();
    PMPI_Barrier(w->comm);
    fmpl_mpi_table_remove(&fmpl_mpi_wins, w->handle);
    win_destroy(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_free)

/* MPI_Finalize with windows never freed: their state goes; the teams and
 * private communicators go with the others'. */
static void win_drop(void *obj)
{
    fmpl_mpi_win *w = obj;
    w->team = NULL;
    win_destroy(w);
}

void fmpl_mpi_wins_finalize(void) { fmpl_mpi_table_clear(&fmpl_mpi_wins, win_drop); }

/* ------------------------------------------------------------ queries */

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    FMPL_CORE_GUARD();
    MPI_Aint unit = 0;
    int rc = PMPI_Win_shared_query_c(win, rank, size, &unit, baseptr);
    if (rc == MPI_SUCCESS && disp_unit)
        *disp_unit = (int)unit;
    return rc;
}
FMPL_MPI_WEAK(Win_shared_query)

/* Any window whose memory is in a shared heap answers (MPI-4.1); other
 * memory gives size 0 and NULL.  MPI_PROC_NULL: the lowest member with
 * memory. */
int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_shared_query";
    FMPL_GET_WIN(win, w, func);
    int n = w->team->size;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= n))
        return fmpl_mpi_error(win, MPI_ERR_RANK, func, "rank %d is not in [0, %d)", rank, n);
    if (!size || !disp_unit || !baseptr)
        return fmpl_mpi_error(win, MPI_ERR_ARG, func, "an output argument is NULL");
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        while (rank < n - 1 && w->rma->peer[rank].size == 0)
            rank++;
    }
    const fmpl_rma_peer *p = &w->rma->peer[rank];
    void *ptr = p->base.kind == FMPL_MEM_SHARED && p->size > 0 ? fmpl_fab_ptr(p->base) : NULL;
    *size = ptr ? (MPI_Aint)p->size : 0;
    *disp_unit = (MPI_Aint)p->disp_unit;
    *(void **)baseptr = ptr;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_shared_query_c)

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    FMPL_CORE_GUARD();
    FMPL_GET_WIN(win, w, "MPI_Win_get_group");
    if (!group)
        return fmpl_mpi_error(win, MPI_ERR_ARG, "MPI_Win_get_group", "group is NULL");
    int rc = fmpl_mpi_group_make(w->team->size, w->team->world, group);
    return rc == MPI_SUCCESS ? rc : fmpl_mpi_error(win, rc, "MPI_Win_get_group", "no memory");
}
FMPL_MPI_WEAK(Win_get_group)

int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    FMPL_CORE_GUARD();
    FMPL_GET_WIN(win, w, "MPI_Win_set_name");
    if (!win_name)
        return fmpl_mpi_error(win, MPI_ERR_ARG, "MPI_Win_set_name", "win_name is NULL");
    strncpy(w->name, win_name, MPI_MAX_OBJECT_NAME - 1);
    w->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    FMPL_CORE_GUARD();
    FMPL_GET_WIN(win, w, "MPI_Win_get_name");
    if (!win_name || !resultlen)
        return fmpl_mpi_error(win, MPI_ERR_ARG, "MPI_Win_get_name", "an argument is NULL");
    strcpy(win_name, w->name);
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_get_name)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_set_info";
    FMPL_GET_WIN(win, w, func);
    if (!fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(win, MPI_ERR_INFO, func, "invalid info 0x%x", (unsigned)info);
    MPI_Info copy = MPI_INFO_NULL;
    int rc = fmpl_mpi_info_copy(info, &copy);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(win, rc, func, "cannot copy the info");
    if (w->info)
        fmpl_mpi_info_release(w->info);
    w->info = copy == MPI_INFO_NULL ? 0 : copy;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_set_info)

/* A new info object with the hints in use: those given (none changes
 * behaviour), and the defaults MPI defines for the accumulate hints, which
 * describe what FMPL does (every accumulate is ordered and atomic). */
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_get_info";
    static const char *const defaults[][2] = {{"accumulate_ordering", "rar,raw,war,waw"},
                                              {"accumulate_ops", "same_op_no_op"}};
    FMPL_GET_WIN(win, w, func);
    if (!info_used)
        return fmpl_mpi_error(win, MPI_ERR_ARG, func, "info_used is NULL");
    int rc = w->info ? fmpl_mpi_info_copy(w->info, info_used) : PMPI_Info_create(info_used);
    char value[2];
    for (int i = 0; i < 2 && rc == MPI_SUCCESS; i++)
        if (!fmpl_mpi_info_lookup(*info_used, defaults[i][0], value, sizeof value))
            rc = PMPI_Info_set(*info_used, defaults[i][0], defaults[i][1]);
    return rc == MPI_SUCCESS ? rc : fmpl_mpi_error(win, rc, func, "cannot copy the info");
}
FMPL_MPI_WEAK(Win_get_info)

/* ------------------------------------------------------------ attributes */

/* The predefined window attributes: C gets a pointer to the value, except
 * MPI_WIN_BASE, whose value is the base itself. */
static int win_predefined(int win, int k, void **value)
{
    fmpl_mpi_win *w = fmpl_mpi_win_lookup(win);
    switch (k) {
    case MPI_WIN_BASE: *value = w->base; return 1;
    case MPI_WIN_SIZE: *value = &w->size; return 1;
    case MPI_WIN_DISP_UNIT: *value = &w->disp_unit; return 1;
    case MPI_WIN_CREATE_FLAVOR: *value = &w->flavor; return 1;
    case MPI_WIN_MODEL: *value = &w->model; return 1;
    default: return 0;
    }
}

static int win_list(int win, const char *func, struct fmpl_mpi_attr ***list)
{
    fmpl_mpi_win *w = fmpl_mpi_win_lookup(win);
    if (!w)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_WIN, func, "invalid window 0x%x",
                              (unsigned)win);
    *list = &w->attrs;
    return MPI_SUCCESS;
}

static const fmpl_mpi_attr_kind win_attrs = {FMPL_HK_WIN, win_list, win_predefined};

FMPL_MPI_ATTR_BINDINGS(Win, MPI_Win, &win_attrs)

/* ------------------------------------------------------------ error handlers */

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    return fmpl_mpi_errhandler_create(win_errhandler_fn, FMPL_HK_WIN, errhandler,
                                      "MPI_Win_create_errhandler");
}
FMPL_MPI_WEAK(Win_create_errhandler)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    FMPL_CORE_GUARD();
    FMPL_GET_WIN(win, w, "MPI_Win_set_errhandler");
    if (!fmpl_mpi_errhandler_valid_for(errhandler, FMPL_HK_WIN))
        return fmpl_mpi_error(win, MPI_ERR_ARG, "MPI_Win_set_errhandler",
                              "0x%x is not an error handler for windows",
                              (unsigned)errhandler);
    fmpl_mpi_errhandler_replace(&w->errhandler, errhandler);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    FMPL_GET_WIN(win, w, "MPI_Win_get_errhandler");
    if (!errhandler)
        return fmpl_mpi_error(win, MPI_ERR_ARG, "MPI_Win_get_errhandler", "errhandler is NULL");
    fmpl_mpi_errhandler_ref(w->errhandler); /* the caller frees it */
    *errhandler = w->errhandler;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    FMPL_CORE_GUARD();
    FMPL_GET_WIN(win, w, "MPI_Win_call_errhandler");
    (void)w;
    fmpl_mpi_error(win, errorcode, "MPI_Win_call_errhandler",
                   "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_call_errhandler)
