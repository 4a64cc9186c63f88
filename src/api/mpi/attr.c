/* Attribute caching on communicators and windows: keyvals, attributes, and the
 * predefined attributes.
 *
 * A keyval holds the copy and delete callbacks and the extra state; it is
 * reference counted (the user's handle, plus one per attribute using it),
 * so MPI_Comm_free_keyval leaves attributes that still use it working, and
 * their callbacks still run (MPI 7.7.2); freeing it again while attributes
 * still use it does nothing more (as MPICH), and once the last attribute is
 * gone the handle is invalid (MPI_ERR_KEYVAL).  A communicator's attributes
 * are a list, newest first (c->attrs).
 *   MPI_Comm_dup       copy callback of each attribute, oldest first; the
 *                      attribute is copied when the callback sets *flag
 *                      (MPI_COMM_NULL_COPY_FN: never copied)
 *   MPI_Comm_free      delete callback of each, newest first
 *   set on a key present: delete callback on the old value, then replace
 *   MPI_Finalize       MPI_COMM_SELF's attributes deleted, newest first
 * A callback returning an error stops the operation and its code is
 * returned through the communicator's error handler.
 *
 * The predefined keyvals (MPI_TAG_UB ...) are builtin handles with values
 * read on every communicator: they cannot be set, deleted or freed.
 *
 * Windows (win.c) cache attributes the same way: a keyval is made for one
 * kind of object (keyval.object), and the functions below work on any kind
 * given its fmpl_mpi_attr_kind (where its lists are, which attributes are
 * predefined: MPI_WIN_BASE ... for windows); FMPL_MPI_ATTR_BINDINGS makes
 * the MPI functions of each kind. */
#include "api/mpi/mpi_objects.h"
#include "runtime/runtime.h"

#include <stdlib.h>

typedef struct keyval {
    MPI_Comm_copy_attr_function *copy_fn;
    MPI_Comm_delete_attr_function *delete_fn;
    void *extra_state;
    int object;     /* FMPL_HK_COMM or FMPL_HK_WIN: the kind of object it is for */
    int refs;
    int freed;      /* MPI_Comm_free_keyval was called */
} keyval;

typedef struct fmpl_mpi_attr {
    int keyval;
    void *value;
    struct fmpl_mpi_attr *next;
} attr;

static fmpl_mpi_table keyvals = FMPL_MPI_TABLE_INIT(FMPL_HK_KEYVAL);

/* ------------------------------------------------------------ predefined */

static int tag_ub = FMPL_MPI_TAG_UB;
static int host = MPI_PROC_NULL;          /* no host process */
static int io = MPI_ANY_SOURCE;           /* every process can do I/O */
static int wtime_is_global = 1;           /* one CLOCK_MONOTONIC on one host */
static int universe_size;
static int appnum = 0;

/* The bootstrap, which holds what the launcher said: MPI_UNIVERSE_SIZE
 * (the processes it offers room for, spawned ones included) and MPI_APPNUM
 * (the command of a spawn this process runs).  Up while MPI is. */
static const fmpl_bootstrap *launcher(void)
{
    fmpl_bootstrap *bs = NULL;
    return fmpl_runtime_bootstrap(&bs) == FMPL_SUCCESS ? bs : NULL;
}

/* The value of a predefined attribute, or NULL if k is none. */
static int *predefined(int k)
{
    switch (k) {
    case MPI_TAG_UB: return &tag_ub;
    case MPI_HOST: return &host;
    case MPI_IO: return &io;
    case MPI_WTIME_IS_GLOBAL: return &wtime_is_global;
    case MPI_UNIVERSE_SIZE:
        universe_size = launcher() ? launcher()->universe_size : 0;
        return &universe_size;
    case MPI_LASTUSEDCODE: return &fmpl_mpi_lastusedcode;
    case MPI_APPNUM:
        appnum = launcher() ? launcher()->appnum : 0;
        return &appnum;
    default: return NULL;
    }
}

/* ------------------------------------------------------------ keyvals */

static keyval *keyval_get(int k, int object)
{
    keyval *kv = fmpl_mpi_table_get(&keyvals, k);
    return kv && kv->object == object ? kv : NULL;
}

static void keyval_unref(int k)
{
    keyval *kv = fmpl_mpi_table_get(&keyvals, k);
    if (kv && --kv->refs == 0) {
        fmpl_mpi_table_remove(&keyvals, k);
        free(kv);
    }
}

void fmpl_mpi_attrs_finalize(void) { fmpl_mpi_table_clear(&keyvals, free); }

int fmpl_mpi_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                           MPI_Comm_delete_attr_function *delete_fn, int *k, void *extra,
                           int object, const char *func)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!k)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "keyval is NULL");
    keyval *kv = malloc(sizeof *kv);
    if (!kv)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, func, "no memory for a keyval");
    *kv = (keyval){.copy_fn = copy_fn, .delete_fn = delete_fn, .extra_state = extra,
                   .object = object, .refs = 1};
    int rc = fmpl_mpi_table_add(&keyvals, kv, k);
    if (rc != MPI_SUCCESS) {
        free(kv);
        return fmpl_mpi_error(MPI_COMM_WORLD, rc, func, "no memory for a keyval");
    }
    return MPI_SUCCESS;
}

int fmpl_mpi_keyval_free(int *k, int object, const char *func)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!k)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "keyval is NULL");
    if (predefined(*k))
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, func,
                              "predefined keyval 0x%x cannot be freed", (unsigned)*k);
    keyval *kv = keyval_get(*k, object);
    if (!kv)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, func,
                              *k == MPI_KEYVAL_INVALID
                                  ? "keyval is MPI_KEYVAL_INVALID (freed already?)"
                                  : "invalid keyval 0x%x (never created, or freed and no "
                                    "longer used by any attribute)",
                              (unsigned)*k);
    /* Freeing again a keyval that attributes still use (a copy of the
     * handle, e.g. in a delete callback) releases nothing more: the user's
     * reference is gone already.  MPICH accepts it (attr/keyval_double_free). */
    if (!kv->freed) {
        kv->freed = 1;
        keyval_unref(*k);
    }
    *k = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ attributes */

static attr **find(attr **list, int k)
{
    attr **p = list;
    while (*p && (*p)->keyval != k)
        p = &(*p)->next;
    return p;
}

/* Run the delete callback of a (unlinked) attribute of the object `handle`;
 * on success release it. */
static int delete_one(int handle, attr *a)
{
    keyval *kv = fmpl_mpi_table_get(&keyvals, a->keyval);
    int rc = MPI_SUCCESS;
    if (kv && kv->delete_fn)
        rc = kv->delete_fn(handle, a->keyval, a->value, kv->extra_state);
    if (rc != MPI_SUCCESS)
        return rc;
    keyval_unref(a->keyval);
    free(a);
    return MPI_SUCCESS;
}

int fmpl_mpi_attr_list_delete_all(int handle, attr **list)
{
    while (*list) {
        attr *a = *list;
        *list = a->next; /* unlinked while its callback runs */
        int rc = delete_one(handle, a);
        if (rc != MPI_SUCCESS) {
            a->next = *list;
            *list = a;
            return rc;
        }
    }
    return MPI_SUCCESS;
}

int fmpl_mpi_attr_delete_all(fmpl_mpi_comm *c)
{
    return fmpl_mpi_attr_list_delete_all(c->handle, &c->attrs);
}

void fmpl_mpi_attr_list_drop(attr **list)
{
    while (*list) {
        attr *a = *list;
        *list = a->next;
        keyval_unref(a->keyval);
        free(a);
    }
}

void fmpl_mpi_attr_drop_all(fmpl_mpi_comm *c) { fmpl_mpi_attr_list_drop(&c->attrs); }

int fmpl_mpi_attr_copy_all(fmpl_mpi_comm *oldc, fmpl_mpi_comm *newc)
{
    int n = 0;
    for (attr *a = oldc->attrs; a; a = a->next)
        n++;
    if (!n)
        return MPI_SUCCESS;
    attr **list = malloc((size_t)n * sizeof *list);
    if (!list)
        return MPI_ERR_NO_MEM;
    int i = n;
    for (attr *a = oldc->attrs; a; a = a->next)
        list[--i] = a;
    int rc = MPI_SUCCESS;
    for (i = 0; i < n && rc == MPI_SUCCESS; i++) { /* oldest first */
        keyval *kv = fmpl_mpi_table_get(&keyvals, list[i]->keyval);
        if (!kv || !kv->copy_fn)
            continue;
        void *out = NULL;
        int flag = 0;
        rc = kv->copy_fn(oldc->handle, list[i]->keyval, kv->extra_state, list[i]->value, &out,
                         &flag);
        if (rc != MPI_SUCCESS || !flag)
            continue;
        attr *a = malloc(sizeof *a);
        if (!a) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        *a = (attr){.keyval = list[i]->keyval, .value = out, .next = newc->attrs};
        newc->attrs = a;
        kv->refs++;
    }
    free(list);
    if (rc != MPI_SUCCESS)
        fmpl_mpi_attr_delete_all(newc); /* the copies made so far */
    return rc;
}

/* The checks of setting (or deleting) attribute k: a valid handle, k not
 * predefined, k a keyval of this kind (and, to set, not freed).  *kv,
 * *list: its keyval and the object's list. */
static int change_begin(const fmpl_mpi_attr_kind *kind, int handle, int k, int setting,
                        const char *func, keyval **kv, attr ***list)
{
    *kv = NULL; /* set on every path: callers read them only on success */
    *list = NULL;
    void *pre;
    int rc = kind->list(handle, func, list);
    if (rc != MPI_SUCCESS)
        return rc;
    if (kind->predefined(handle, k, &pre))
        return fmpl_mpi_error(handle, MPI_ERR_KEYVAL, func,
                              "predefined attribute 0x%x cannot be %s", (unsigned)k,
                              setting ? "set" : "deleted");
    *kv = keyval_get(k, kind->object);
    if (!*kv || ((*kv)->freed && setting))
        return fmpl_mpi_error(handle, MPI_ERR_KEYVAL, func, "invalid keyval 0x%x", (unsigned)k);
    return MPI_SUCCESS;
}

int fmpl_mpi_attr_set(const fmpl_mpi_attr_kind *kind, int handle, int k, void *value,
                      const char *func)
{
    keyval *kv;
    attr **list;
    int rc = change_begin(kind, handle, k, 1, func, &kv, &list);
    if (rc != MPI_SUCCESS)
        return rc;
    attr **p = find(list, k);
    if (*p) { /* replace: the old value's delete callback first */
        rc = kv->delete_fn ? kv->delete_fn(handle, k, (*p)->value, kv->extra_state)
                           : MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            return fmpl_mpi_error(handle, rc, func, "the delete callback of keyval 0x%x failed",
                                  (unsigned)k);
        (*p)->value = value;
        return MPI_SUCCESS;
    }
    attr *a = malloc(sizeof *a);
    if (!a)
        return fmpl_mpi_error(handle, MPI_ERR_NO_MEM, func, "no memory for an attribute");
    *a = (attr){.keyval = k, .value = value, .next = *list};
    *list = a;
    kv->refs++;
    return MPI_SUCCESS;
}

int fmpl_mpi_attr_get(const fmpl_mpi_attr_kind *kind, int handle, int k, void *value, int *flag,
                      const char *func)
{
    attr **list;
    void *pre;
    int rc = kind->list(handle, func, &list);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!value || !flag)
        return fmpl_mpi_error(handle, MPI_ERR_ARG, func, "attribute_val or flag is NULL");
    if (kind->predefined(handle, k, &pre)) {
        *(void **)value = pre;
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!keyval_get(k, kind->object))
        return fmpl_mpi_error(handle, MPI_ERR_KEYVAL, func, "invalid keyval 0x%x", (unsigned)k);
    attr *a = *find(list, k);
    *flag = a != NULL;
    if (a)
        *(void **)value = a->value;
    return MPI_SUCCESS;
}

int fmpl_mpi_attr_delete(const fmpl_mpi_attr_kind *kind, int handle, int k, const char *func)
{
    keyval *kv;
    attr **list;
    int rc = change_begin(kind, handle, k, 0, func, &kv, &list);
    if (rc != MPI_SUCCESS)
        return rc;
    attr **p = find(list, k);
    if (!*p)
        return MPI_SUCCESS; /* nothing cached under k: nothing to delete (as MPICH) */
    attr *a = *p;
    *p = a->next;
    rc = delete_one(handle, a);
    if (rc != MPI_SUCCESS) {
        a->next = *list;
        *list = a;
        return fmpl_mpi_error(handle, rc, func, "the delete callback of keyval 0x%x failed",
                              (unsigned)k);
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ communicators */

static int comm_list(int comm, const char *func, attr ***list)
{
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    *list = &c->attrs;
    return MPI_SUCCESS;
}

static int comm_predefined(int comm, int k, void **value)
{
    (void)comm;
    *value = predefined(k);
    return *value != NULL;
}

static const fmpl_mpi_attr_kind comm_attrs = {FMPL_HK_COMM, comm_list, comm_predefined};

FMPL_MPI_ATTR_BINDINGS(Comm, MPI_Comm, &comm_attrs)

/* ------------------------------------------------------------ MPI-1 names */

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    FMPL_CORE_GUARD();
    return fmpl_mpi_keyval_create(copy_fn, delete_fn, keyval, extra_state, FMPL_HK_COMM,
                                  "MPI_Keyval_create");
}
FMPL_MPI_WEAK(Keyval_create)

int PMPI_Keyval_free(int *keyval)
{
    FMPL_CORE_GUARD();
    return fmpl_mpi_keyval_free(keyval, FMPL_HK_COMM, "MPI_Keyval_free");
}
FMPL_MPI_WEAK(Keyval_free)

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    return fmpl_mpi_attr_set(&comm_attrs, comm, keyval, attribute_val, "MPI_Attr_put");
}
FMPL_MPI_WEAK(Attr_put)

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    return fmpl_mpi_attr_get(&comm_attrs, comm, keyval, attribute_val, flag, "MPI_Attr_get");
}
FMPL_MPI_WEAK(Attr_get)

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    return fmpl_mpi_attr_delete(&comm_attrs, comm, keyval, "MPI_Attr_delete");
}
FMPL_MPI_WEAK(Attr_delete)
