/* fmpl_init, fmpl_finalize, communicators and the shared heap: checks, then
 * the runtime (src/runtime/). */
#include "api/fmpl/api.h"
#include "collectives/barrier_split.h"
#include "collectives/collectives.h"
#include "fabric/fabric.h"
#include "runtime/runtime.h"
#include "base/timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fmpl_api_state = FMPL_STATE_NEW;

int fmpl_area_size(int count, size_t *bytes)
{
    FMPL_CORE_GUARD();
    if (!bytes)
        return FMPL_ERROR(FMPL_ERR_ARG, "bytes is NULL");
    if (count < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "count %d is negative", count);
    fmpl_bootstrap *bs;
    int rc = fmpl_runtime_bootstrap(&bs);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (count == 0)
        count = FMPL_DEFAULT_COUNT;
    *bytes = fmpl_sm_area_bytes(bs->size, count + FMPL_IDX_INTERNAL);
    return FMPL_SUCCESS;
}

int fmpl_init(void *ma, void *fa, int count)
{
    FMPL_CORE_GUARD();
    fmpl_error_caller = __func__;
    if (fmpl_api_state == FMPL_STATE_READY)
        return FMPL_ERROR(FMPL_ERR_ALREADY_INITIALIZED, "fmpl_init was already called");
    if (fmpl_api_state == FMPL_STATE_FINALIZED)
        return FMPL_ERROR(FMPL_ERR_FINALIZED, "FMPL cannot be initialized after fmpl_finalize");
    if (count < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "count %d is negative", count);
    if (count > (1 << 24))
        return FMPL_ERROR(FMPL_ERR_ARG, "count %d is above 16777216", count);
    if ((ma == NULL) != (fa == NULL))
        return FMPL_ERROR(FMPL_ERR_ARG, "give both the matching and the completion area, or neither");
    if (((uintptr_t)ma | (uintptr_t)fa) & 63)
        return FMPL_ERROR(FMPL_ERR_ARG, "caller-provided areas must be 64-byte aligned");
    if (fmpl_runtime_state == FMPL_RUNTIME_DONE)
        return FMPL_ERROR(FMPL_ERR_FINALIZED, "MPI_Finalize ended the runtime");
    if (fmpl_runtime_state == FMPL_RUNTIME_READY && ma)
        return FMPL_ERROR(FMPL_ERR_ARG, "MPI_Init started the runtime: the native API joins it "
                                        "and cannot take caller-provided areas");
    int joining = fmpl_runtime_state == FMPL_RUNTIME_READY;
    int rc = fmpl_runtime_init(ma, fa, count ? count : FMPL_DEFAULT_COUNT);
    if (rc == FMPL_SUCCESS && joining && count) /* MPI's teams keep theirs; new ones get count */
        fmpl_team_count = count;
    if (rc == FMPL_SUCCESS)
        fmpl_api_state = FMPL_STATE_READY;
    return rc;
}

int fmpl_finalize(void)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_state(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = fmpl_runtime_finalize();
    fmpl_api_state = FMPL_STATE_FINALIZED;
    return rc;
}

void fmpl_abort(int code, const char *message)
{
    FMPL_CORE_GUARD();
    fmpl_runtime_abort(code, message ? message : "fmpl_abort called");
}

int fmpl_initialized(int *flag)
{
    FMPL_CORE_GUARD();
    if (!flag)
        return FMPL_ERROR(FMPL_ERR_ARG, "flag is NULL");
    *flag = fmpl_api_state != FMPL_STATE_NEW;
    return FMPL_SUCCESS;
}

int fmpl_finalized(int *flag)
{
    FMPL_CORE_GUARD();
    if (!flag)
        return FMPL_ERROR(FMPL_ERR_ARG, "flag is NULL");
    *flag = fmpl_api_state == FMPL_STATE_FINALIZED;
    return FMPL_SUCCESS;
}

int fmpl_comm_rank(fmpl_comm comm, int *rank)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    if (!rank)
        return FMPL_ERROR(FMPL_ERR_ARG, "rank is NULL");
    *rank = t->rank;
    return FMPL_SUCCESS;
}

int fmpl_comm_size(fmpl_comm comm, int *size)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    if (!size)
        return FMPL_ERROR(FMPL_ERR_ARG, "size is NULL");
    *size = t->size;
    return FMPL_SUCCESS;
}

int fmpl_comm_create(int key, fmpl_comm *comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(FMPL_COMM_WORLD, world);
    if (!comm)
        return FMPL_ERROR(FMPL_ERR_ARG, "comm is NULL");
    if (key < 0 && key != FMPL_KEY_NONE)
        return FMPL_ERROR(FMPL_ERR_ARG, "key %d is negative (use FMPL_KEY_NONE to stay out)",
                          key);
    *comm = FMPL_COMM_NULL;
    fmpl_team *t;
    int rc = fmpl_team_split(world, key == FMPL_KEY_NONE ? -1 : key, world->rank, &t);
    if (rc == FMPL_SUCCESS && t)
        *comm = t->id;
    return rc;
}

int fmpl_comm_split(fmpl_comm parent, int color, int key, fmpl_comm *comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(parent, t);
    if (!comm)
        return FMPL_ERROR(FMPL_ERR_ARG, "comm is NULL");
    if (color < 0 && color != FMPL_KEY_NONE)
        return FMPL_ERROR(FMPL_ERR_ARG, "color %d is negative (use FMPL_KEY_NONE to stay out)",
                          color);
    *comm = FMPL_COMM_NULL;
    fmpl_team *sub;
    int rc = fmpl_team_split(t, color == FMPL_KEY_NONE ? -1 : color, key, &sub);
    if (rc == FMPL_SUCCESS && sub)
        *comm = sub->id;
    return rc;
}

int fmpl_comm_indices(fmpl_comm comm, int *count)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    if (!count)
        return FMPL_ERROR(FMPL_ERR_ARG, "count is NULL");
    *count = t->count;
    return FMPL_SUCCESS;
}

/* Without the MPI layer (libfmpl) there are no MPI communicators; libmpi's
 * definition (src/api/mpi/comm.c) replaces this one. */
__attribute__((weak)) int fmpl_comm_from_mpi(int mpi_comm, fmpl_comm *comm)
{
    FMPL_CORE_GUARD();
    (void)comm;
    return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                      "MPI communicator 0x%x: this library has no MPI layer (link libmpi)",
                      (unsigned)mpi_comm);
}

int fmpl_comm_free(fmpl_comm *comm)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_state(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!comm)
        return FMPL_ERROR(FMPL_ERR_ARG, "comm is NULL");
    if (*comm == FMPL_COMM_WORLD)
        return FMPL_ERROR(FMPL_ERR_COMM, "FMPL_COMM_WORLD cannot be freed");
    fmpl_team *t = fmpl_api_team(*comm, __func__, &rc);
    if (!t)
        return rc;
    int busy = fmpl_sm_team_outstanding(t) + fmpl_barrier_split_outstanding(t);
    if (busy)
        return FMPL_ERROR(FMPL_ERR_BUSY,
                          "communicator %d still has %d outstanding operations (spooled sends "
                          "and split-phase barriers included): complete them before freeing it",
                          *comm, busy);
    rc = fmpl_coll_barrier(t); /* nobody uses it any more */
    /* Freed once every member has retired it: over the network the
     * barrier's last writes may still be landing in its areas (team_build.c). */
    fmpl_team_retire(t);
    *comm = FMPL_COMM_NULL;
    return rc;
}

void *fmpl_alloc(size_t size)
{
    FMPL_CORE_GUARD();
    if (fmpl_api_state != FMPL_STATE_READY) {
        FMPL_ERROR(FMPL_ERR_NOT_INITIALIZED, "the shared heap exists between fmpl_init and "
                                             "fmpl_finalize");
        return NULL;
    }
    void *p = fmpl_fab_alloc(size);
    if (!p)
        FMPL_ERROR(FMPL_ERR_NO_MEMORY, "%zu bytes do not fit in the shared heap (FMPL_HEAP_SIZE)",
                   size);
    return p;
}

void fmpl_free(void *ptr)
{
    FMPL_CORE_GUARD();
    if (!ptr || fmpl_api_state != FMPL_STATE_READY)
        return;
    fmpl_fab_free(ptr);
}

double fmpl_wtime(void) { FMPL_CORE_GUARD(); return (double)fmpl_now_ns() * 1e-9; }
