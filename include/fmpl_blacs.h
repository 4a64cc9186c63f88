/* fmpl_blacs.h — BLACS-FMPL: the BLACS (Basic Linear Algebra Communication
 * Subprograms, the communication layer of ScaLAPACK) on the native FMPL
 * API.  libblacs-fmpl exports the C interface declared here (Cblacs_* and
 * C<t>xxxx2d, t one of i s d c z) and the Fortran interface ScaLAPACK calls
 * (blacs_gridinit_, dgesd2d_, ...: lower case, trailing underscore, every
 * argument by reference).  docs/blacs.md describes both and the design.
 *
 * Types: i int, s float, d double, c float complex, z double complex
 * (complex arguments are pointers to pairs).  Matrices are column-major
 * with a leading dimension, as in Fortran.  `scope` is "R" (row), "C"
 * (column) or "A" (all); `top` is any BLACS topology (" ", "I", "D", "S",
 * "M", "H", "T", "F", "1".."9"): all give the same results, FMPL picks the
 * algorithm.  System contexts are MPI communicators: handles from
 * Cblacs_get(.., 0, ..) or Csys2blacs_handle. */
#ifndef FMPL_BLACS_H
#define FMPL_BLACS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Process grids. */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_setup(int *mypnum, int *nprocs);
void Cblacs_get(int context, int what, int *val);
void Cblacs_set(int context, int what, const int *val);
void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
void Cblacs_gridmap(int *context, const int *usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int cont);
void Cblacs_abort(int context, int errornum);
void Cblacs_barrier(int context, const char *scope);
void Cblacs_freebuff(int context, int wait);
int Cblacs_pnum(int context, int prow, int pcol);
void Cblacs_pcoord(int context, int pnum, int *prow, int *pcol);

/* System contexts and MPI communicators (int: an MPI_Comm of the MPICH ABI). */
int Csys2blacs_handle(int mpi_comm);
int Cblacs2sys_handle(int handle);
void Cfree_blacs_system_handle(int handle);

double Cdwalltime00(void);
double Cdcputime00(void);

#define FMPL_BLACS_DECLARE(t, T)                                                              \
    void C##t##gesd2d(int context, int m, int n, const T *a, int lda, int rdest, int cdest);  \
    void C##t##gerv2d(int context, int m, int n, T *a, int lda, int rsrc, int csrc);          \
    void C##t##trsd2d(int context, const char *uplo, const char *diag, int m, int n,          \
                      const T *a, int lda, int rdest, int cdest);                              \
    void C##t##trrv2d(int context, const char *uplo, const char *diag, int m, int n, T *a,    \
                      int lda, int rsrc, int csrc);                                            \
    void C##t##gebs2d(int context, const char *scope, const char *top, int m, int n,          \
                      const T *a, int lda);                                                    \
    void C##t##gebr2d(int context, const char *scope, const char *top, int m, int n, T *a,    \
                      int lda, int rsrc, int csrc);                                            \
    void C##t##trbs2d(int context, const char *scope, const char *top, const char *uplo,      \
                      const char *diag, int m, int n, const T *a, int lda);                    \
    void C##t##trbr2d(int context, const char *scope, const char *top, const char *uplo,      \
                      const char *diag, int m, int n, T *a, int lda, int rsrc, int csrc);      \
    void C##t##gsum2d(int context, const char *scope, const char *top, int m, int n, T *a,    \
                      int lda, int rdest, int cdest);                                          \
    void C##t##gamx2d(int context, const char *scope, const char *top, int m, int n, T *a,    \
                      int lda, int *ra, int *ca, int ldia, int rdest, int cdest);              \
    void C##t##gamn2d(int context, const char *scope, const char *top, int m, int n, T *a,    \
                      int lda, int *ra, int *ca, int ldia, int rdest, int cdest);

FMPL_BLACS_DECLARE(i, int)
FMPL_BLACS_DECLARE(s, float)
FMPL_BLACS_DECLARE(d, double)
FMPL_BLACS_DECLARE(c, void)
FMPL_BLACS_DECLARE(z, void)
#undef FMPL_BLACS_DECLARE

#ifdef __cplusplus
}
#endif
#endif
