/* The nonblocking and persistent collective tests' harness: one collective
 * under test runs nonblocking twice, then persistent started three times,
 * each with the inputs of iteration *it refilled and the outputs checked. */
#ifndef FMPL_TESTS_MPI_COLL_FORMS_H
#define FMPL_TESTS_MPI_COLL_FORMS_H

#include "check.h"

/* fill the inputs of iteration `it` (and poison the outputs), start the
 * collective in one form (persistent: build only), check the outputs */
typedef struct coll_test {
    const char *name;
    void (*fill)(void);
    int (*post)(int persistent, MPI_Request *r);
    void (*check)(void);
} coll_test;

static inline void run_forms(const coll_test *t, int *it)
{
    MPI_Request r;
    for (*it = 0; *it < 2; ++*it) { /* nonblocking */
        t->fill();
        CHECK_OK(t->post(0, &r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(r == MPI_REQUEST_NULL, "%s: request not released", t->name);
        t->check();
    }
    *it = 0;
    t->fill();
    CHECK_OK(t->post(1, &r));
    for (*it = 0; *it < 3; ++*it) { /* persistent, restarted */
        t->fill();
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(r != MPI_REQUEST_NULL, "%s: persistent request released", t->name);
        t->check();
    }
    CHECK_OK(MPI_Request_free(&r));
}

#endif
