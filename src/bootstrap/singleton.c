/* Singleton bootstrap: a program started without a launcher is rank 0 of 1.
 * The key-value space is a small in-memory list (only this process reads
 * it); fence and barrier have nobody to wait for. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_impl.h"
#include "base/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

typedef struct kv {
    struct kv *next;
    char key[FMPL_BOOTSTRAP_KEY_MAX];
    char value[FMPL_BOOTSTRAP_VALUE_MAX];
} kv;

typedef struct singleton {
    kv *head;
} singleton;

static kv *find(singleton *s, const char *key)
{
    for (kv *e = s->head; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static int s_put(fmpl_bootstrap *bs, const char *key, const char *value)
{
    char full[FMPL_BOOTSTRAP_KEY_MAX];
    int rc = fmpl_bootstrap_full_key(__func__, 0, key, full);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_bootstrap_check_value(__func__, value);
    if (rc != FMPL_SUCCESS)
        return rc;
    singleton *s = bs->impl;
    kv *e = find(s, full);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "out of memory");
        strcpy(e->key, full);
        e->next = s->head;
        s->head = e;
    }
    strcpy(e->value, value);
    return FMPL_SUCCESS;
}

static int s_get(fmpl_bootstrap *bs, int rank, const char *key, char *value, size_t len)
{
    if (rank != 0)
        return FMPL_ERROR(FMPL_ERR_RANK, "rank %d: a singleton job has only rank 0", rank);
    if (!value)
        return FMPL_ERROR(FMPL_ERR_ARG, "value buffer is NULL");
    char full[FMPL_BOOTSTRAP_KEY_MAX];
    int rc = fmpl_bootstrap_full_key(__func__, 0, key, full);
    if (rc != FMPL_SUCCESS)
        return rc;
    kv *e = find(bs->impl, full);
    if (!e)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "key '%s' was never put", full);
    if (strlen(e->value) + 1 > len)
        return FMPL_ERROR(FMPL_ERR_ARG, "value of '%s' needs %zu bytes, buffer has %zu", full,
                          strlen(e->value) + 1, len);
    strcpy(value, e->value);
    return FMPL_SUCCESS;
}

static int s_nop(fmpl_bootstrap *bs)
{
    (void)bs;
    return FMPL_SUCCESS;
}

__attribute__((noreturn)) static void s_abort(fmpl_bootstrap *bs, int code, const char *message)
{
    fmpl_bootstrap_print_abort(bs->rank, code, message);
    _exit(fmpl_bootstrap_abort_status(code));
}

static int s_finalize(fmpl_bootstrap *bs)
{
    singleton *s = bs->impl;
    if (!s)
        return FMPL_SUCCESS;
    while (s->head) {
        kv *e = s->head;
        s->head = e->next;
        free(e);
    }
    free(s);
    bs->impl = NULL;
    return FMPL_SUCCESS;
}

int fmpl_bootstrap_singleton_open(fmpl_bootstrap *bs)
{
    singleton *s = calloc(1, sizeof *s);
    if (!s)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "out of memory");
    uint32_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec;
    }
    bs->rank = 0;
    bs->size = 1;
    bs->launcher = "singleton";
    snprintf(bs->job_id, sizeof bs->job_id, "single-%ld-%08x", (long)getpid(), (unsigned)r);
    bs->put = s_put;
    bs->fence = s_nop;
    bs->get = s_get;
    bs->barrier = s_nop;
    bs->abort = s_abort;
    bs->finalize = s_finalize;
    bs->impl = s;
    return FMPL_SUCCESS;
}
