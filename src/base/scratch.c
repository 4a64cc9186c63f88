/* Per-thread grow-only scratch (scratch.h).  The areas live in thread-local
 * storage; the first growth in a thread registers them with a pthread key
 * whose destructor frees them when the thread ends. */
#include "base/hidden.h"
#include "base/scratch.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct scratch_set {
    void *buf[FMPL_SCRATCH_SLOTS];
    size_t have[FMPL_SCRATCH_SLOTS];
} scratch_set;

static FMPL_TLS scratch_set mine;
static FMPL_TLS int registered;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void free_set(void *arg)
{
    scratch_set *s = arg;
    for (int i = 0; i < FMPL_SCRATCH_SLOTS; i++) {
        free(s->buf[i]);
        s->buf[i] = NULL;
        s->have[i] = 0;
    }
}

static void make_exit_key(void)
{
    if (pthread_key_create(&exit_key, free_set) != 0)
        exit_key = (pthread_key_t)-1; /* areas then live until exit */
}

void *fmpl_scratch(fmpl_scratch_slot slot, size_t bytes)
{
    if (bytes <= mine.have[slot])
        return mine.buf[slot];
    void *p = realloc(mine.buf[slot], bytes);
    if (!p)
        return NULL;
    mine.buf[slot] = p;
    mine.have[slot] = bytes;
    if (!registered) {
        pthread_once(&exit_key_once, make_exit_key);
        if (exit_key != (pthread_key_t)-1)
            pthread_setspecific(exit_key, &mine);
        registered = 1;
    }
    return p;
}
