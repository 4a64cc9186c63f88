/* Handle tables of the MPI objects beside communicators, and the hooks
 * that tie those objects to a communicator's life (mpi_objects.h).
 *
 * A table is a growable array of pointers; a handle's index is its slot.
 * A new object takes the lowest free slot, so handles stay small and a
 * freed handle is reused (as MPICH does). */
#include "api/mpi/bsend_pool.h"
#include "api/mpi/mpi_objects.h"
#include "api/mpi/topo.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

#define TABLE_MAX_INDEX 0x03ffffff

int fmpl_mpi_table_add(fmpl_mpi_table *t, void *obj, int *handle)
{
    int i = 0;
    if (t->used < t->cap)
        while (t->slots[i])
            i++;
    else
        i = t->cap;
    if (i == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        if (cap > TABLE_MAX_INDEX)
            return MPI_ERR_NO_MEM;
        void **s = realloc(t->slots, (size_t)cap * sizeof *s);
        if (!s)
            return MPI_ERR_NO_MEM;
        memset(s + t->cap, 0, (size_t)(cap - t->cap) * sizeof *s);
        t->slots = s;
        t->cap = cap;
    }
    t->slots[i] = obj;
    t->used++;
    *handle = fmpl_handle_make(t->kind, i);
    return MPI_SUCCESS;
}

void fmpl_mpi_table_remove(fmpl_mpi_table *t, int handle)
{
    if (!fmpl_mpi_table_get(t, handle))
        return;
    t->slots[fmpl_handle_index(handle)] = NULL;
    t->used--;
}

void fmpl_mpi_table_clear(fmpl_mpi_table *t, void (*fn)(void *obj))
{
    for (int i = 0; i < t->cap; i++)
        if (t->slots[i] && fn)
            fn(t->slots[i]);
    free(t->slots);
    t->slots = NULL;
    t->cap = t->used = 0;
}

/* ------------------------------------------------------------ communicator hooks */

void fmpl_mpi_comm_inherit(fmpl_mpi_comm *parent, fmpl_mpi_comm *child)
{
    fmpl_mpi_errhandler_ref(parent->errhandler);
    fmpl_mpi_errhandler_unref(child->errhandler);
    child->errhandler = parent->errhandler;
    child->session = parent->session; /* not the buffer: that one is parent's own */
}

int fmpl_mpi_comm_adopt(fmpl_mpi_comm *parent, fmpl_team *t, MPI_Comm *newcomm)
{
    *newcomm = MPI_COMM_NULL;
    if (!t)
        return MPI_SUCCESS;
    int rc = fmpl_mpi_comm_register(t, newcomm);
    if (rc != MPI_SUCCESS)
        return rc; /* the team stays registered; MPI_Finalize frees it */
    fmpl_mpi_comm_inherit(parent, fmpl_mpi_comm_get(*newcomm));
    return MPI_SUCCESS;
}

int fmpl_mpi_comm_dup_stage(fmpl_mpi_comm *oldc, fmpl_mpi_comm **staged)
{
    fmpl_mpi_comm *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_ERR_NO_MEM;
    s->handle = MPI_COMM_NULL;
    s->errhandler = MPI_ERRORS_ARE_FATAL;
    fmpl_mpi_comm_inherit(oldc, s);
    int rc = fmpl_mpi_info_copy(oldc->info ? oldc->info : MPI_INFO_NULL, &s->info);
    if (rc == MPI_SUCCESS)
        rc = fmpl_mpi_attr_copy_all(oldc, s);
    if (rc == MPI_SUCCESS && oldc->topo && !(s->topo = fmpl_mpi_topo_copy(oldc->topo)))
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        fmpl_mpi_comm_dup_discard(s);
        return rc;
    }
    *staged = s;
    return MPI_SUCCESS;
}

void fmpl_mpi_comm_dup_discard(fmpl_mpi_comm *staged)
{
    fmpl_mpi_comm_drop_objects(staged);
    free(staged);
}

int fmpl_mpi_comm_dup_adopt(fmpl_mpi_comm *staged, fmpl_team *t, MPI_Comm *newcomm)
{
    *newcomm = MPI_COMM_NULL;
    int rc = fmpl_mpi_comm_register(t, newcomm);
    if (rc != MPI_SUCCESS) {
        /* The others hold the new communicator: its team is not freed
         * (that takes every member); this member retires it. */
        fmpl_team_retire(t);
        fmpl_mpi_comm_dup_discard(staged);
        return rc;
    }
    fmpl_mpi_comm_dup_install(staged, fmpl_mpi_comm_get(*newcomm));
    return MPI_SUCCESS;
}

void fmpl_mpi_comm_dup_install(fmpl_mpi_comm *staged, fmpl_mpi_comm *n)
{
    fmpl_mpi_errhandler_unref(n->errhandler);
    n->errhandler = staged->errhandler; /* the staged references move over */
    n->info = staged->info;
    n->attrs = staged->attrs;
    n->topo = staged->topo;
    n->session = staged->session;
    free(staged);
}

int fmpl_mpi_comm_free_objects(fmpl_mpi_comm *c)
{
    int rc = fmpl_mpi_attr_delete_all(c);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_comm_drop_objects(c);
    return MPI_SUCCESS;
}

void fmpl_mpi_comm_drop_objects(fmpl_mpi_comm *c)
{
    fmpl_mpi_attr_drop_all(c);
    if (c->info && c->info != MPI_INFO_NULL)
        fmpl_mpi_info_release(c->info);
    c->info = 0;
    fmpl_mpi_errhandler_unref(c->errhandler);
    c->errhandler = MPI_ERRORS_ARE_FATAL;
    fmpl_mpi_topo_free(c->topo);
    c->topo = NULL;
    fmpl_bsend_pool_orphan(&c->bsend); /* its messages still go out */
}

void fmpl_mpi_objects_finalize_begin(void)
{
    fmpl_mpi_comm *self = fmpl_mpi_comm_get(MPI_COMM_SELF);
    if (self)
        fmpl_mpi_attr_delete_all(self); /* errors are the callbacks' own */
}

void fmpl_mpi_objects_finalize(void)
{
    fmpl_mpi_groups_finalize();
    fmpl_mpi_attrs_finalize();
    /* Info objects outlive MPI_Finalize (MPI-4.0: the MPI_Info functions
     * may be called before initialization and after finalization). */
    fmpl_mpi_errhandlers_finalize();
}
