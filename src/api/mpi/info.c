/* Info objects: ordered (key, value) string pairs, in the order keys were
 * first set (MPI_Info_get_nthkey follows it).  Keys are 1 .. MPI_MAX_INFO_KEY
 * characters, values 1 .. MPI_MAX_INFO_VAL.
 *
 * MPI_INFO_ENV is built on first use from what this process knows of its
 * start: command and argv (/proc/self/cmdline), maxprocs (the world size),
 * host, arch, wdir and thread_level.  It is read-only.
 *
 * Communicators keep a copy of the info given to MPI_Comm_set_info;
 * MPI_Comm_get_info returns a new copy (an empty info if none was set), and
 * MPI_Comm_dup passes the hints on.
 *
 * Like MPI-4.0 allows, info objects work before MPI_Init and after
 * MPI_Finalize (they need nothing of the runtime; MPI_INFO_ENV built before
 * MPI_Init lacks maxprocs). */
#include "api/mpi/mpi_objects.h"
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef struct info_entry {
    char *key, *value;
} info_entry;

typedef struct info {
    int n, cap;
    info_entry *e;
} info;

static fmpl_mpi_table infos = FMPL_MPI_TABLE_INIT(FMPL_HK_INFO);
static info env;
static int env_built;

#define ERR(code, func, ...) fmpl_mpi_error(MPI_COMM_WORLD, (code), (func), __VA_ARGS__)

static void info_clear(info *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->e[i].key);
        free(in->e[i].value);
    }
    free(in->e);
    *in = (info){0};
}

static void info_destroy(void *p)
{
    info_clear(p);
    free(p);
}

static int find(const info *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (!strcmp(in->e[i].key, key))
            return i;
    return -1;
}

/* Set key to value: MPI_SUCCESS or MPI_ERR_NO_MEM (in unchanged). */
static int put(info *in, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = find(in, key);
    if (i >= 0) {
        free(in->e[i].value);
        in->e[i].value = v;
        return MPI_SUCCESS;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 8;
        info_entry *e = realloc(in->e, (size_t)cap * sizeof *e);
        if (!e) {
            free(k);
            free(v);
            return MPI_ERR_NO_MEM;
        }
        in->e = e;
        in->cap = cap;
    }
    in->e[in->n++] = (info_entry){k, v};
    return MPI_SUCCESS;
}

static int copy_into(info *dst, const info *src)
{
    for (int i = 0; i < src->n; i++)
        if (put(dst, src->e[i].key, src->e[i].value) != MPI_SUCCESS) {
            info_clear(dst);
            return MPI_ERR_NO_MEM;
        }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ MPI_INFO_ENV */

static void build_env(void)
{
    if (env_built)
        return;
    env_built = 1;
    char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        if (n > 0 && buf[0]) {
            put(&env, "command", buf);
            /* the arguments after the command, separated by spaces */
            size_t start = strlen(buf) + 1;
            if (start < n) {
                for (size_t i = start; i < n; i++)
                    if (buf[i] == '\0' && i + 1 < n)
                        buf[i] = ' ';
                if (buf[start])
                    put(&env, "argv", buf + start);
            }
        }
    }
    if (fmpl_teams[0]) {
        snprintf(buf, sizeof buf, "%d", fmpl_teams[0]->size);
        put(&env, "maxprocs", buf);
    }
    if (gethostname(buf, 256) == 0) {
        buf[255] = '\0';
        put(&env, "host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0)
        put(&env, "arch", u.machine);
    if (getcwd(buf, sizeof buf))
        put(&env, "wdir", buf);
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    if (fmpl_mpi_thread_level >= 0 && fmpl_mpi_thread_level <= 3)
        put(&env, "thread_level", levels[fmpl_mpi_thread_level]);
}

/* ------------------------------------------------------------ lookup */

static info *info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        build_env();
        return &env;
    }
    return fmpl_mpi_table_get(&infos, h);
}

int fmpl_mpi_info_valid(MPI_Info h)
{
    return h == MPI_INFO_NULL || info_get(h) != NULL;
}

static int new_handle(info *in, MPI_Info *out)
{
    int rc = fmpl_mpi_table_add(&infos, in, out);
    if (rc != MPI_SUCCESS)
        info_destroy(in);
    return rc;
}

int fmpl_mpi_info_copy(MPI_Info h, MPI_Info *out)
{
    if (h == MPI_INFO_NULL) {
        *out = MPI_INFO_NULL;
        return MPI_SUCCESS;
    }
    info *src = info_get(h);
    if (!src)
        return MPI_ERR_INFO;
    info *in = calloc(1, sizeof *in);
    if (!in || copy_into(in, src) != MPI_SUCCESS) {
        free(in);
        return MPI_ERR_NO_MEM;
    }
    return new_handle(in, out);
}

void fmpl_mpi_info_release(MPI_Info h)
{
    info *in = fmpl_mpi_table_get(&infos, h);
    if (!in)
        return;
    fmpl_mpi_table_remove(&infos, h);
    info_destroy(in);
}

int fmpl_mpi_info_lookup(MPI_Info h, const char *key, char *value, int len)
{
    info *in = h == MPI_INFO_NULL ? NULL : info_get(h);
    int i = in ? find(in, key) : -1;
    if (i < 0)
        return 0;
    snprintf(value, (size_t)len, "%s", in->e[i].value);
    return 1;
}

/* ------------------------------------------------------------ checks */

#define GET_INFO(h, in, func)                                                      \
    info *in = (h) == MPI_INFO_NULL ? NULL : info_get(h);                          \
    if (!in)                                                                       \
        return ERR(MPI_ERR_INFO, func, "invalid info object 0x%x", (unsigned)(h))

static int check_key(const char *key, const char *func)
{
    if (!key)
        return ERR(MPI_ERR_INFO_KEY, func, "key is NULL");
    size_t len = strlen(key);
    if (len == 0 || len > MPI_MAX_INFO_KEY)
        return ERR(MPI_ERR_INFO_KEY, func, "key of %zu characters (1 .. %d allowed)", len,
                   MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ MPI_Info_* */

int PMPI_Info_create(MPI_Info *info_out)
{
    FMPL_CORE_GUARD();
    if (!info_out)
        return ERR(MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
    info *in = calloc(1, sizeof *in);
    if (!in || new_handle(in, info_out) != MPI_SUCCESS)
        return ERR(MPI_ERR_NO_MEM, "MPI_Info_create", "no memory for an info object");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_create)

/* Before MPI_Init too (MPI 11.4): MPI_INFO_ENV's contents. */
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info_out)
{
    FMPL_CORE_GUARD();
    (void)argc;
    (void)argv;
    if (!info_out)
        return ERR(MPI_ERR_ARG, "MPI_Info_create_env", "info is NULL");
    int rc = fmpl_mpi_info_copy(MPI_INFO_ENV, info_out);
    if (rc != MPI_SUCCESS)
        return ERR(rc, "MPI_Info_create_env", "no memory for an info object");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_create_env)

int PMPI_Info_set(MPI_Info h, const char *key, const char *value)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Info_set";
    GET_INFO(h, in, func);
    if (in == &env)
        return ERR(MPI_ERR_INFO, func, "MPI_INFO_ENV cannot be changed");
    int rc = check_key(key, func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!value)
        return ERR(MPI_ERR_INFO_VALUE, func, "value is NULL");
    size_t len = strlen(value);
    if (len == 0 || len > MPI_MAX_INFO_VAL)
        return ERR(MPI_ERR_INFO_VALUE, func, "value of %zu characters (1 .. %d allowed)", len,
                   MPI_MAX_INFO_VAL);
    if (put(in, key, value) != MPI_SUCCESS)
        return ERR(MPI_ERR_NO_MEM, func, "no memory");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_set)

int PMPI_Info_delete(MPI_Info h, const char *key)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Info_delete";
    GET_INFO(h, in, func);
    if (in == &env)
        return ERR(MPI_ERR_INFO, func, "MPI_INFO_ENV cannot be changed");
    int rc = check_key(key, func);
    if (rc != MPI_SUCCESS)
        return rc;
    int i = find(in, key);
    if (i < 0)
        return ERR(MPI_ERR_INFO_NOKEY, func, "no key \"%s\"", key);
    free(in->e[i].key);
    free(in->e[i].value);
    memmove(&in->e[i], &in->e[i + 1], (size_t)(in->n - i - 1) * sizeof in->e[0]);
    in->n--;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_delete)

int PMPI_Info_get(MPI_Info h, const char *key, int valuelen, char *value, int *flag)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Info_get";
    GET_INFO(h, in, func);
    int rc = check_key(key, func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (valuelen < 0 || !flag || (!value && valuelen > 0))
        return ERR(MPI_ERR_ARG, func, "valuelen %d is negative, or value or flag is NULL",
                   valuelen);
    int i = find(in, key);
    *flag = i >= 0;
    if (i >= 0 && value) {
        /* at most valuelen characters and the terminating null (MPI 10.1) */
        size_t n = strlen(in->e[i].value);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, in->e[i].value, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_get)

int PMPI_Info_get_string(MPI_Info h, const char *key, int *buflen, char *value, int *flag)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Info_get_string";
    GET_INFO(h, in, func);
    int rc = check_key(key, func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!buflen || *buflen < 0 || !flag || (!value && *buflen > 0))
        return ERR(MPI_ERR_ARG, func, "buflen, value or flag is invalid");
    int i = find(in, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    /* Copy up to *buflen - 1 characters and a null; *buflen becomes the
     * size the whole value needs, its null included. */
    size_t len = strlen(in->e[i].value);
    if (*buflen > 0) {
        size_t n = len < (size_t)*buflen - 1 ? len : (size_t)*buflen - 1;
        memcpy(value, in->e[i].value, n);
        value[n] = '\0';
    }
    *buflen = (int)len + 1;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_get_string)

int PMPI_Info_get_valuelen(MPI_Info h, const char *key, int *valuelen, int *flag)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Info_get_valuelen";
    GET_INFO(h, in, func);
    int rc = check_key(key, func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!valuelen || !flag)
        return ERR(MPI_ERR_ARG, func, "valuelen or flag is NULL");
    int i = find(in, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(in->e[i].value);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_get_valuelen)

int PMPI_Info_get_nkeys(MPI_Info h, int *nkeys)
{
    FMPL_CORE_GUARD();
    GET_INFO(h, in, "MPI_Info_get_nkeys");
    if (!nkeys)
        return ERR(MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys is NULL");
    *nkeys = in->n;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info h, int n, char *key)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Info_get_nthkey";
    GET_INFO(h, in, func);
    if (n < 0 || n >= in->n)
        return ERR(MPI_ERR_ARG, func, "n = %d is outside 0 .. %d", n, in->n - 1);
    if (!key)
        return ERR(MPI_ERR_ARG, func, "key is NULL");
    strcpy(key, in->e[n].key); /* at most MPI_MAX_INFO_KEY characters */
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_get_nthkey)

int PMPI_Info_dup(MPI_Info h, MPI_Info *newinfo)
{
    FMPL_CORE_GUARD();
    GET_INFO(h, in, "MPI_Info_dup");
    (void)in;
    if (!newinfo)
        return ERR(MPI_ERR_ARG, "MPI_Info_dup", "newinfo is NULL");
    int rc = fmpl_mpi_info_copy(h, newinfo);
    if (rc != MPI_SUCCESS)
        return ERR(rc, "MPI_Info_dup", "no memory for an info object");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_dup)

int PMPI_Info_free(MPI_Info *h)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Info_free";
    if (!h)
        return ERR(MPI_ERR_ARG, func, "info is NULL");
    if (*h == MPI_INFO_ENV)
        return ERR(MPI_ERR_INFO, func, "MPI_INFO_ENV cannot be freed");
    if (!fmpl_mpi_table_get(&infos, *h))
        return ERR(MPI_ERR_INFO, func, "invalid info object 0x%x", (unsigned)*h);
    fmpl_mpi_info_release(*h);
    *h = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Info_free)

/* ------------------------------------------------------------ communicator hints */

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info h)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_set_info";
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return ERR(MPI_ERR_COMM, func, "invalid communicator 0x%x", (unsigned)comm);
    if (!fmpl_mpi_info_valid(h))
        return fmpl_mpi_error(comm, MPI_ERR_INFO, func, "invalid info object 0x%x", (unsigned)h);
    MPI_Info copy;
    int rc = fmpl_mpi_info_copy(h, &copy);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, "no memory for the hints");
    /* No hint changes FMPL's behaviour yet: every one is kept as given. */
    if (c->info && c->info != MPI_INFO_NULL)
        fmpl_mpi_info_release(c->info);
    c->info = copy;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_get_info";
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return ERR(MPI_ERR_COMM, func, "invalid communicator 0x%x", (unsigned)comm);
    if (!info_used)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "info_used is NULL");
    int rc;
    if (c->info && c->info != MPI_INFO_NULL) {
        rc = fmpl_mpi_info_copy(c->info, info_used);
    } else {
        info *in = calloc(1, sizeof *in);
        rc = in ? new_handle(in, info_used) : MPI_ERR_NO_MEM;
    }
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, "no memory for an info object");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_get_info)

/* MPI-4.1: the hardware resources this process may use, as info keys.  The
 * standard defines none yet; the object is new and empty, the caller's to
 * free. */
int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!hw_info)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_hw_resource_info",
                              "hw_info is NULL");
    return PMPI_Info_create(hw_info);
}
FMPL_MPI_WEAK(Get_hw_resource_info)
