/* Internal to the PMIx client (pmix.c, pmix_dynamic.c): its state and the
 * helpers both files use.  Only these two files see pmix.h. */
#ifndef FMPL_BOOTSTRAP_PMIX_CLIENT_H
#define FMPL_BOOTSTRAP_PMIX_CLIENT_H

#include "bootstrap/bootstrap.h"

#include <pmix.h>

/* A world of the universe this process knows: its universe ranks
 * base..base+size-1 are ranks 0..size-1 of nspace (empty until known). */
typedef struct pmix_world {
    int base, size;
    char nspace[PMIX_MAX_NSLEN + 1];
} pmix_world;

/* Where take() has got to in one rendezvous queue (this process only
 * takes from queues of its own ports). */
typedef struct pmix_queue_cursor {
    char *name;
    int next;
} pmix_queue_cursor;

typedef struct pmixbs {
    pmix_proc_t me;
    int fenced;          /* after the first fence every put commits at once */
    pmix_world *worlds;  /* known worlds, this process's first */
    int nworlds;
    pmix_queue_cursor *cursors;
    int ncursors;
    pmix_status_t lost_handler; /* registration of on_lost_server (>= 0), or -1 */
} pmixbs;

const char *fmpl_pmix_status_text(pmix_status_t st);

/* pmix_dynamic.c: this process's place in the universe (universe_base,
 * universe_rank, spawned, universe_size, appnum; world 0's rank 0 also
 * starts the universe's records), then the dynamic-process operations. */
int fmpl_bootstrap_pmix_universe(fmpl_bootstrap *bs, pmixbs *p);
void fmpl_bootstrap_pmix_dynamic_ops(fmpl_bootstrap *bs);
/* The (nspace, rank) of universe rank r: FMPL_SUCCESS or a reported error. */
int fmpl_pmix_proc_of(fmpl_bootstrap *bs, int r, pmix_proc_t *proc);
void fmpl_pmix_dynamic_free(pmixbs *p);

#endif
