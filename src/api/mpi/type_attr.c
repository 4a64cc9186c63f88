/* Attribute caching on datatypes (MPI 7.7.4): type keyvals and per-type
 * attribute lists.
 *
 * Kept apart from the communicator attributes (attr.c): its own keyval
 * table, and keyval handles that say so.  MPICH puts the kind of object a
 * keyval is for in bits 22-25 of the keyval handle; type keyvals here are
 * 0x80000000 | FMPL_HK_KEYVAL << 26 | FMPL_HK_DATATYPE << 22 | index, so a
 * communicator keyval is never taken for a type keyval (MPI_ERR_KEYVAL).
 *
 * A keyval is reference counted: the user's handle plus one per attribute
 * using it, so that MPI_Type_free_keyval leaves the attributes that still
 * use it working, callbacks included.  A type's attributes are a list,
 * newest first, held by the datatype table (fmpl_mpi_type_attr_list):
 *   MPI_Type_dup   copy callback of each attribute, oldest first; copied
 *                  when the callback sets *flag (MPI_TYPE_NULL_COPY_FN:
 *                  never copied)
 *   MPI_Type_free  delete callback of each, newest first
 *   set on a key present: the delete callback on the old value, then the
 *   value is replaced.
 * A callback returning an error stops the operation; its code is returned. */
#include "api/mpi/mpi_impl.h"

#include <stdlib.h>

#define ERRC FMPL_MPI_TYPE_ERR_COMM
#define KV_MAX (1 << 22)

typedef struct keyval {
    MPI_Type_copy_attr_function *copy_fn;
    MPI_Type_delete_attr_function *delete_fn;
    void *extra_state;
    int refs;
    int freed;      /* MPI_Type_free_keyval was called */
} keyval;

struct fmpl_mpi_type_attr {
    int keyval;
    void *value;
    struct fmpl_mpi_type_attr *next;
};
typedef struct fmpl_mpi_type_attr attr;

static keyval **kvs;
static int nkvs, kv_cap;

static int kv_handle(int i) { return fmpl_handle_make(FMPL_HK_KEYVAL, FMPL_HK_DATATYPE << 22 | i); }

static int kv_index(int k)
{
    if (!fmpl_handle_is_dynamic(k) || fmpl_handle_kind(k) != FMPL_HK_KEYVAL ||
        ((unsigned)k >> 22 & 0xf) != FMPL_HK_DATATYPE)
        return -1;
    int i = (int)((unsigned)k & (KV_MAX - 1));
    return i < nkvs && kvs[i] ? i : -1;
}

/* A live keyval (not freed by the user), or NULL. */
static keyval *kv_get(int k)
{
    int i = kv_index(k);
    return i >= 0 && !kvs[i]->freed ? kvs[i] : NULL;
}

static void kv_unref(int k)
{
    int i = kv_index(k);
    if (i >= 0 && --kvs[i]->refs == 0) {
        free(kvs[i]);
        kvs[i] = NULL;
    }
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                            MPI_Type_delete_attr_function *delete_fn, int *type_keyval,
                            void *extra_state)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_create_keyval";
    FMPL_MPI_CHECK_READY(ERRC);
    if (!type_keyval)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "type_keyval is NULL");
    int i = 0;
    while (i < nkvs && kvs[i])
        i++;
    if (i == nkvs) {
        if (nkvs == KV_MAX)
            return fmpl_mpi_error(ERRC, MPI_ERR_INTERN, func, "more than %d type keyvals",
                                  KV_MAX);
        if (nkvs == kv_cap) {
            int ncap = kv_cap ? kv_cap * 2 : 16;
            keyval **n = realloc(kvs, (size_t)ncap * sizeof *n);
            if (!n)
                return fmpl_mpi_error(ERRC, MPI_ERR_NO_MEM, func, "no memory for a keyval");
            kvs = n;
            kv_cap = ncap;
        }
        kvs[nkvs++] = NULL;
    }
    keyval *kv = malloc(sizeof *kv);
    if (!kv)
        return fmpl_mpi_error(ERRC, MPI_ERR_NO_MEM, func, "no memory for a keyval");
    *kv = (keyval){.copy_fn = copy_fn, .delete_fn = delete_fn, .extra_state = extra_state,
                   .refs = 1};
    kvs[i] = kv;
    *type_keyval = kv_handle(i);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_create_keyval)

int PMPI_Type_free_keyval(int *type_keyval)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_free_keyval";
    FMPL_MPI_CHECK_READY(ERRC);
    if (!type_keyval)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "type_keyval is NULL");
    int i = kv_index(*type_keyval);
    if (i < 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_KEYVAL, func,
                              "0x%x is not a datatype keyval (or was freed and is no longer "
                              "used by any attribute)",
                              (unsigned)*type_keyval);
    /* Freed again while attributes still use it (a copy of the handle):
     * nothing more to release, as for communicator keyvals (attr.c). */
    if (!kvs[i]->freed) {
        kvs[i]->freed = 1;
        kv_unref(*type_keyval);
    }
    *type_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_free_keyval)

static int lookup(const char *func, MPI_Datatype t, int k, attr ***list, keyval **kv)
{
    FMPL_MPI_CHECK_READY(ERRC);
    *list = fmpl_mpi_type_attr_list(t);
    if (!*list)
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func, "0x%x is not a valid datatype",
                              (unsigned)t);
    *kv = kv_get(k);
    if (!*kv)
        return fmpl_mpi_error(ERRC, MPI_ERR_KEYVAL, func, "0x%x is not a datatype keyval",
                              (unsigned)k);
    return MPI_SUCCESS;
}

int PMPI_Type_set_attr(MPI_Datatype t, int type_keyval, void *attribute_val)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_set_attr";
    attr **list = NULL;
    keyval *kv;
    int rc = lookup(func, t, type_keyval, &list, &kv);
    if (rc)
        return rc;
    for (attr *a = *list; a; a = a->next) {
        if (a->keyval != type_keyval)
            continue;
        if (kv->delete_fn) {
            rc = kv->delete_fn(t, type_keyval, a->value, kv->extra_state);
            if (rc != MPI_SUCCESS)
                return fmpl_mpi_error(ERRC, rc, func, "the delete callback failed (%d)", rc);
        }
        a->value = attribute_val;
        return MPI_SUCCESS;
    }
    attr *a = malloc(sizeof *a);
    if (!a)
        return fmpl_mpi_error(ERRC, MPI_ERR_NO_MEM, func, "no memory for an attribute");
    *a = (attr){.keyval = type_keyval, .value = attribute_val, .next = *list};
    *list = a;
    kv->refs++;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_set_attr)

/* attribute_val is a void ** in disguise (MPI's C binding). */
int PMPI_Type_get_attr(MPI_Datatype t, int type_keyval, void *attribute_val, int *flag)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_get_attr";
    attr **list = NULL;
    keyval *kv;
    int rc = lookup(func, t, type_keyval, &list, &kv);
    if (rc)
        return rc;
    if (!attribute_val || !flag)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "%s is NULL",
                              !flag ? "flag" : "attribute_val");
    for (attr *a = *list; a; a = a->next) {
        if (a->keyval == type_keyval) {
            *(void **)attribute_val = a->value;
            *flag = 1;
            return MPI_SUCCESS;
        }
    }
    *flag = 0;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype t, int type_keyval)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_delete_attr";
    attr **list = NULL;
    keyval *kv;
    int rc = lookup(func, t, type_keyval, &list, &kv);
    if (rc)
        return rc;
    for (attr **p = list; *p; p = &(*p)->next) {
        attr *a = *p;
        if (a->keyval != type_keyval)
            continue;
        if (kv->delete_fn) {
            rc = kv->delete_fn(t, type_keyval, a->value, kv->extra_state);
            if (rc != MPI_SUCCESS)
                return fmpl_mpi_error(ERRC, rc, func, "the delete callback failed (%d)", rc);
        }
        *p = a->next;
        free(a);
        kv_unref(type_keyval);
        return MPI_SUCCESS;
    }
    return MPI_SUCCESS;   /* no such attribute: nothing to delete (as MPICH) */
}
FMPL_MPI_WEAK(Type_delete_attr)

/* Copy `a` and the attributes after it (older ones) first, so that the
 * callbacks run oldest first and the new list keeps the order. */
static int copy_from(MPI_Datatype oldtype, const attr *a, attr **dst)
{
    if (!a)
        return MPI_SUCCESS;
    int rc = copy_from(oldtype, a->next, dst);
    if (rc != MPI_SUCCESS)
        return rc;
    int i = kv_index(a->keyval);
    keyval *kv = i >= 0 ? kvs[i] : NULL;
    if (!kv || !kv->copy_fn)
        return MPI_SUCCESS;
    void *out = NULL;
    int flag = 0;
    rc = kv->copy_fn(oldtype, a->keyval, kv->extra_state, a->value, &out, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return MPI_SUCCESS;
    attr *n = malloc(sizeof *n);
    if (!n)
        return MPI_ERR_NO_MEM;
    *n = (attr){.keyval = a->keyval, .value = out, .next = *dst};
    *dst = n;
    kv->refs++;
    return MPI_SUCCESS;
}

int fmpl_mpi_type_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype)
{
    attr **src = fmpl_mpi_type_attr_list(oldtype), **dst = fmpl_mpi_type_attr_list(newtype);
    if (!src || !dst)
        return MPI_ERR_TYPE;
    return copy_from(oldtype, *src, dst);
}

int fmpl_mpi_type_attr_delete_all(MPI_Datatype t)
{
    attr **list = fmpl_mpi_type_attr_list(t);
    if (!list)
        return MPI_ERR_TYPE;
    while (*list) {
        attr *a = *list;
        int i = kv_index(a->keyval);
        keyval *kv = i >= 0 ? kvs[i] : NULL;
        if (kv && kv->delete_fn) {
            int rc = kv->delete_fn(t, a->keyval, a->value, kv->extra_state);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        *list = a->next;
        kv_unref(a->keyval);
        free(a);
    }
    return MPI_SUCCESS;
}
