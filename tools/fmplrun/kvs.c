/* fmplrun's key-value store for the PMI-1 put/get requests: a chained hash
 * table of copied strings.  A later put of the same key replaces the value,
 * as mpiexec.hydra does.  Also a spawned group's preput keys and the
 * published service names (names.c). */
#include "fmplrun.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KVS_BUCKETS 1024

typedef struct kvs_entry {
    struct kvs_entry *next;
    char *key;
    char *value;
} kvs_entry;

struct fr_kvs {
    kvs_entry *bucket[KVS_BUCKETS];
};

static unsigned hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % KVS_BUCKETS;
}

fr_kvs *fr_kvs_new(void) { return calloc(1, sizeof(fr_kvs)); }

int fr_kvs_put(fr_kvs *kvs, const char *key, const char *value)
{
    kvs_entry **head = &kvs->bucket[hash(key)];
    char *v = strdup(value);
    if (!v)
        return -1;
    for (kvs_entry *e = *head; e; e = e->next) {
        if (strcmp(e->key, key) == 0) {
            free(e->value);
            e->value = v;
            return 0;
        }
    }
    kvs_entry *e = malloc(sizeof *e);
    char *k = strdup(key);
    if (!e || !k) {
        free(e);
        free(k);
        free(v);
        return -1;
    }
    e->key = k;
    e->value = v;
    e->next = *head;
    *head = e;
    return 0;
}

const char *fr_kvs_get(fr_kvs *kvs, const char *key)
{
    for (kvs_entry *e = kvs->bucket[hash(key)]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e->value;
    return NULL;
}

int fr_kvs_del(fr_kvs *kvs, const char *key)
{
    for (kvs_entry **link = &kvs->bucket[hash(key)]; *link; link = &(*link)->next) {
        kvs_entry *e = *link;
        if (strcmp(e->key, key) == 0) {
            *link = e->next;
            free(e->key);
            free(e->value);
            free(e);
            return 0;
        }
    }
    return -1;
}

void fr_kvs_free(fr_kvs *kvs)
{
    if (!kvs)
        return;
    for (int i = 0; i < KVS_BUCKETS; i++) {
        while (kvs->bucket[i]) {
            kvs_entry *e = kvs->bucket[i];
            kvs->bucket[i] = e->next;
            free(e->key);
            free(e->value);
            free(e);
        }
    }
    free(kvs);
}
