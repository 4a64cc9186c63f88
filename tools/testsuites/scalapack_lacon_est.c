/* Preloaded under ScaLAPACK's test programs by tools/testsuites/scalapack.py:
 * gives PSLACON and PDLACON a defined EST on entry.
 *
 * Why: ScaLAPACK up to 2.2.2 (Debian bookworm has 2.2.1) starts p?lacon
 * with ESTWORK(1) = EST, and EST is the caller's variable, which p?gerfs
 * and p?porfs never set before their first call; at its third step
 * p?lacon compares the new estimate with ESTOLD = ESTWORK(1), that is with
 * whatever the caller's stack held.  The processes of a process column
 * replicate p?lacon and must take the same branch; when their stack
 * garbage differs (0 on one, 0x41414141 on another, seen under FMPL's MPI
 * and under MPICH alike) one goes on to p?amax and the other to p?asum, and
 * the program waits forever or matches the wrong messages.  ScaLAPACK 2.2.3
 * sets EST = 0 at p?lacon's entry (Reference-ScaLAPACK/scalapack issue 121);
 * this does the same from outside, before each call.  The complex versions
 * write EST themselves before they read it, so they are left alone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* Fortran's PxLACON( N, V, IV, JV, DESCV, X, IX, JX, DESCX, ISGN, EST, KASE ),
 * every argument by reference; EST is REAL (s) or DOUBLE PRECISION (d). */
typedef void lacon_fn(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx,
                      int *descx, int *isgn, void *est, int *kase);

void pslacon_(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx, int *descx,
              int *isgn, void *est, int *kase);
void pdlacon_(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx, int *descx,
              int *isgn, void *est, int *kase);

static lacon_fn *next_definition(const char *name) {
    lacon_fn *f = (lacon_fn *)dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "scalapack_lacon_est: %s is not defined after this library\n", name);
        abort();
    }
    return f;
}

void pslacon_(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx, int *descx,
              int *isgn, void *est, int *kase) {
    static lacon_fn *real;
    if (!real) real = next_definition("pslacon_");
    *(float *)est = 0.0f;
    real(n, v, iv, jv, descv, x, ix, jx, descx, isgn, est, kase);
}

void pdlacon_(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx, int *descx,
              int *isgn, void *est, int *kase) {
    static lacon_fn *real;
    if (!real) real = next_definition("pdlacon_");
    *(double *)est = 0.0;
    real(n, v, iv, jv, descv, x, ix, jx, descx, isgn, est, kase);
}
