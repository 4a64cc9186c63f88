/* scalapack-bench: ScaLAPACK's PDGEMM and PDGESV timed on every rank of the
 * job (issue 15, section 3).  Plain C and standard MPI, calling ScaLAPACK's
 * Fortran entry points and BLACS's C interface: bench/compare --scalapack
 * builds this file with mpicc.mpich against Debian's libscalapack-mpich
 * (run on MPICH, on FMPL's libmpich.so.12 with ScaLAPACK's MPI BLACS, and on
 * FMPL with libblacs-fmpl.so preloaded) and with mpicc.openmpi against
 * libscalapack-openmpi; the build tree's scalapack-bench is the same source
 * against FMPL's mpi.h.
 *
 *   mpirun -n 4 scalapack-bench [--sizes 2000,3000,4000] [--nb 64] [--iters 3]
 *                               [--ops pdgemm,pdgesv] [--threshold 16]
 *                               [--json FILE]
 *
 * Set-up: a process grid of all P ranks, as square as P allows (rows: the
 * largest divisor of P not above sqrt(P); 2 ranks 1 x 2, 4 ranks 2 x 2),
 * row-major; every matrix N x N (vectors N x 1) in NB x NB blocks
 * distributed block-cyclically from process (0,0).  Each process fills its
 * own elements from a hash of (matrix, global row, global column): the same
 * matrices on any grid and any MPI, and any process can compute any
 * element, which the checks use.  Elements are uniform in [-0.5, 0.5).
 *
 * Timing, per size and operation, --iters times: a BLACS barrier over the
 * grid, then MPI_Wtime around the one call on each rank; the time of a call
 * is the slowest rank's (a BLACS max-combine after the loop).  Reported: the
 * median and the best of the calls, and GFLOP/s of each:
 *   PDGEMM  C = A B (no transposes, alpha 1, beta 0): 2 N^3 flops;
 *   PDGESV  A x = b, one right-hand side (LU with partial pivoting and the
 *           two triangular solves): 2/3 N^3 + 3/2 N^2 flops, HPL's count.
 * PDGESV overwrites A and b, so both are filled again before each call
 * (untimed).  Every matrix is written in full before any call is timed, so
 * that no first-touch page fault falls in a timed call.
 *
 * Checks, after the timed calls (eps = 2^-53, LAPACK's relative machine
 * precision; each figure must stay below --threshold, default 16, as
 * ScaLAPACK's own testers' SCALED RESIDUAL):
 *   PDGEMM  with a random vector v: ||C v - A (B v)||_inf /
 *           (||A||_inf ||B||_inf ||v||_inf N eps), by PDGEMV and PDLANGE
 *           (the whole of C), and a few elements of C on every process
 *           against their dot product computed directly from the generator
 *           in long double: |c_ij - ref| / (sum_k |a_ik b_kj| N eps) (the
 *           layout: a C that is the product of other matrices than the
 *           intended ones passes the first check, not this one);
 *   PDGESV  INFO = 0 and ||A x - b||_inf / (||A||_inf ||x||_inf N eps), A
 *           and b filled again, by PDGEMV and PDLANGE.
 * A failed check makes the result's status "error"; the program then exits 1.
 *
 * The header names which library each entry point came from (dladdr of
 * what the dynamic linker binds first): "blacs" is libblacs-fmpl.so when
 * BLACS-FMPL is in effect, the ScaLAPACK library when its MPI BLACS is.
 * OpenBLAS starts a thread per core unless OPENBLAS_NUM_THREADS=1: the
 * header records the variable, and a warning says when it is not 1.
 *
 * Output: a line per result on standard output; with --json one JSON
 * object per line, as bench/mpi's suite writes them (bench/README.md,
 * "scalapack-bench"). */
#define _GNU_SOURCE
#include <mpi.h>

#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_string.h"
#include "median.h"
#include "mpi_common.h"

/* BLACS's C interface (Netlib's, which BLACS-FMPL implements too). */
void Cblacs_get(int context, int what, int *val);
void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int cont);
void Cblacs_barrier(int context, const char *scope);
void Cdgamx2d(int context, const char *scope, const char *top, int m, int n, double *a, int lda,
              int *ra, int *ca, int ldia, int rdest, int cdest);

/* ScaLAPACK's and PBLAS's Fortran entry points: every argument by
 * reference, and gfortran's hidden length after the arguments for each
 * character argument (PBLAS's C routines ignore it). */
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *context, const int *lld, int *info);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc, size_t transa_len,
             size_t transb_len);
void pdgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
             const int *ia, const int *ja, const int *desca, const double *x, const int *ix,
             const int *jx, const int *descx, const int *incx, const double *beta, double *y,
             const int *iy, const int *jy, const int *descy, const int *incy, size_t trans_len);
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia, const int *ja,
             const int *desca, int *ipiv, double *b, const int *ib, const int *jb,
             const int *descb, int *info);
double pdlange_(const char *norm, const int *m, const int *n, const double *a, const int *ia,
                const int *ja, const int *desca, double *work, size_t norm_len);

#define MAX_SIZES 32
#define MAX_N 100000 /* the generator packs row and column into 29 bits each */
#define SAMPLES 8    /* elements of C per process checked against a direct dot product */
#define LAPACK_EPS (DBL_EPSILON / 2)

enum matrix_id { MAT_A = 1, MAT_B, MAT_V, MAT_RHS };
enum op { OP_PDGEMM, OP_PDGESV, NOPS };
static const char *const op_name[] = {"pdgemm", "pdgesv"};

static int rank, nranks;
static int context, nprow, npcol, myrow, mycol;
static struct {
    int sizes[MAX_SIZES], nsizes, nb, iters, ops[NOPS];
    double threshold;
    const char *json_path;
} opt;

static const int ione = 1, izero = 0;
static const double one = 1.0, zero = 0.0;

#define die(...) bench_die("scalapack-bench", rank, __VA_ARGS__)

/* ---- the matrices ---- */

/* A matrix distributed over the grid: global m x n, this process's
 * mloc x nloc block-cyclic share in column-major order. */
struct dist_matrix {
    int m, n, mloc, nloc, lld;
    int desc[9];
    double *a;
};

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Element (i, j) of matrix id, in [-0.5, 0.5): a function of its place
 * only (splitmix64 is a bijection, so distinct places get independent
 * values). */
static double element(enum matrix_id id, long i, long j)
{
    uint64_t key = ((uint64_t)id << 58) ^ ((uint64_t)i << 29) ^ (uint64_t)j;
    return (double)(splitmix64(key) >> 11) * 0x1.0p-53 - 0.5;
}

/* The global index of local index local on the process at coordinate
 * coord of nprocs, blocks of nb starting on process 0. */
static long global_index(int local, int nb, int coord, int nprocs)
{
    return ((long)(local / nb) * nprocs + coord) * nb + local % nb;
}

static void matrix_make(struct dist_matrix *x, int m, int n)
{
    int info = 0;
    x->m = m;
    x->n = n;
    x->mloc = numroc_(&m, &opt.nb, &myrow, &izero, &nprow);
    x->nloc = numroc_(&n, &opt.nb, &mycol, &izero, &npcol);
    x->lld = x->mloc > 1 ? x->mloc : 1;
    descinit_(x->desc, &m, &n, &opt.nb, &opt.nb, &izero, &izero, &context, &x->lld, &info);
    if (info != 0)
        die("DESCINIT of a %d x %d matrix failed: INFO %d", m, n, info);
    size_t count = (size_t)x->lld * (size_t)(x->nloc > 1 ? x->nloc : 1);
    x->a = malloc(count * sizeof *x->a);
    if (!x->a)
        die("rank %d: cannot allocate %zu bytes", rank, count * sizeof *x->a);
    memset(x->a, 0, count * sizeof *x->a); /* touched now, not in a timed call */
}

static void matrix_fill(struct dist_matrix *x, enum matrix_id id)
{
    for (int lj = 0; lj < x->nloc; lj++) {
        long gj = global_index(lj, opt.nb, mycol, npcol);
        for (int li = 0; li < x->mloc; li++)
            x->a[li + (size_t)lj * x->lld] = element(id, global_index(li, opt.nb, myrow, nprow),
                                                     gj);
    }
}

static void matrix_free(struct dist_matrix *x)
{
    free(x->a);
    x->a = NULL;
}

/* ||x||_inf (the largest row sum of absolute values), on every process. */
static double norm_inf(const struct dist_matrix *x)
{
    /* PDLANGE's workspace for "I": the local rows of the first block row
     * and after, at most mloc + nb. */
    double *work = malloc(((size_t)x->mloc + (size_t)opt.nb) * sizeof *work);
    if (!work)
        die("rank %d: out of memory", rank);
    double norm = pdlange_("I", &x->m, &x->n, x->a, &ione, &ione, x->desc, work, 1);
    free(work);
    return norm;
}

/* y = alpha a x + beta y (x and y N x 1). */
static void matvec(double alpha, const struct dist_matrix *a, const struct dist_matrix *x,
                   double beta, struct dist_matrix *y)
{
    pdgemv_("N", &a->m, &a->n, &alpha, a->a, &ione, &ione, a->desc, x->a, &ione, &ione, x->desc,
            &ione, &beta, y->a, &ione, &ione, y->desc, &ione, 1);
}

/* The largest of each rank's v[0..n-1] (n <= 64), element by element, on
 * every rank (ldia -1: no locations wanted; the arrays are there for a
 * BLACS that touches them anyway). */
static void max_over_grid(double *v, int n)
{
    int rows[64], cols[64];
    Cdgamx2d(context, "All", " ", n, 1, v, n, rows, cols, -1, -1, -1);
}

/* ---- the operations ---- */

struct result {
    double seconds[64]; /* each timed call's, the slowest rank's */
    double median, best, check, sample_check;
    int info;
};

static double flops(enum op op, int n)
{
    double x = n;
    return op == OP_PDGEMM ? 2 * x * x * x : 2.0 / 3.0 * x * x * x + 1.5 * x * x;
}

static void time_start(double *t0)
{
    Cblacs_barrier(context, "All");
    *t0 = MPI_Wtime();
}

/* C's SAMPLES elements on this process (its first and last, the others
 * spread by a multiplicative hash) against their dot products computed
 * from the generator: the largest |c - ref| / (sum |a b| N eps). */
static double check_samples(const struct dist_matrix *c)
{
    double worst = 0;
    if (c->mloc == 0 || c->nloc == 0)
        return 0;
    for (unsigned s = 0; s < SAMPLES; s++) {
        int li = s == 0 ? 0 : s == 1 ? c->mloc - 1 : (int)((s * 2654435761u) % (unsigned)c->mloc);
        int lj = s == 0 ? 0 : s == 1 ? c->nloc - 1 : (int)((s * 40503u + 7) % (unsigned)c->nloc);
        long gi = global_index(li, opt.nb, myrow, nprow);
        long gj = global_index(lj, opt.nb, mycol, npcol);
        long double ref = 0, magnitude = 0;
        for (long k = 0; k < c->n; k++) {
            long double p = (long double)element(MAT_A, gi, k) * element(MAT_B, k, gj);
            ref += p;
            magnitude += fabsl(p);
        }
        double err = fabs((double)((long double)c->a[li + (size_t)lj * c->lld] - ref));
        double scaled = magnitude > 0 ? err / ((double)magnitude * c->n * LAPACK_EPS) : err;
        if (scaled > worst)
            worst = scaled;
    }
    return worst;
}

static void run_pdgemm(int n, struct result *r)
{
    struct dist_matrix a, b, c, v, bv, cv;
    matrix_make(&a, n, n);
    matrix_make(&b, n, n);
    matrix_make(&c, n, n);
    matrix_fill(&a, MAT_A);
    matrix_fill(&b, MAT_B);
    for (int it = 0; it < opt.iters; it++) {
        double t0;
        time_start(&t0);
        pdgemm_("N", "N", &n, &n, &n, &one, a.a, &ione, &ione, a.desc, b.a, &ione, &ione, b.desc,
                &zero, c.a, &ione, &ione, c.desc, 1, 1);
        r->seconds[it] = MPI_Wtime() - t0;
    }
    matrix_make(&v, n, 1);
    matrix_make(&bv, n, 1);
    matrix_make(&cv, n, 1);
    matrix_fill(&v, MAT_V);
    matvec(1, &b, &v, 0, &bv);         /* B v */
    matvec(1, &c, &v, 0, &cv);         /* C v */
    matvec(-1, &a, &bv, 1, &cv);       /* C v - A (B v) */
    double denom = norm_inf(&a) * norm_inf(&b) * norm_inf(&v) * n * LAPACK_EPS;
    double diff = norm_inf(&cv);
    r->check = denom > 0 ? diff / denom : diff;
    r->sample_check = check_samples(&c);
    max_over_grid(&r->sample_check, 1);
    r->info = 0;
    matrix_free(&cv);
    matrix_free(&bv);
    matrix_free(&v);
    matrix_free(&c);
    matrix_free(&b);
    matrix_free(&a);
}

static void run_pdgesv(int n, struct result *r)
{
    struct dist_matrix a, x, res;
    int info = 0, worst_info = 0;
    matrix_make(&a, n, n);
    matrix_make(&x, n, 1);
    int *ipiv = malloc(((size_t)a.mloc + (size_t)opt.nb) * sizeof *ipiv);
    if (!ipiv)
        die("rank %d: out of memory", rank);
    for (int it = 0; it < opt.iters; it++) {
        matrix_fill(&a, MAT_A);
        matrix_fill(&x, MAT_RHS); /* b, overwritten with x */
        double t0;
        time_start(&t0);
        pdgesv_(&n, &ione, a.a, &ione, &ione, a.desc, ipiv, x.a, &ione, &ione, x.desc, &info);
        r->seconds[it] = MPI_Wtime() - t0;
        if (info != 0 && worst_info == 0)
            worst_info = info;
    }
    matrix_fill(&a, MAT_A);
    matrix_make(&res, n, 1);
    matrix_fill(&res, MAT_RHS);
    matvec(-1, &a, &x, 1, &res); /* b - A x */
    double denom = norm_inf(&a) * norm_inf(&x) * n * LAPACK_EPS;
    double diff = norm_inf(&res);
    r->check = denom > 0 ? diff / denom : diff;
    r->sample_check = 0;
    /* INFO is the same on every process; the combine makes sure of it. */
    double info_d = fabs((double)worst_info);
    max_over_grid(&info_d, 1);
    r->info = (int)info_d;
    free(ipiv);
    matrix_free(&res);
    matrix_free(&x);
    matrix_free(&a);
}

/* ---- output ---- */

/* The file that defines what the dynamic linker binds symbol to, by its
 * last path component (of its real path for the BLAS, which Debian reaches
 * through an alternatives link), or "?". */
static const char *defining_library(const char *symbol, char *buf, size_t len)
{
    Dl_info info;
    void *addr = dlsym(RTLD_DEFAULT, symbol);
    if (!addr || !dladdr(addr, &info) || !info.dli_fname) {
        snprintf(buf, len, "?");
        return buf;
    }
    char *real = realpath(info.dli_fname, NULL);
    const char *path = real ? real : info.dli_fname;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    /* Keep the directory too when it names the implementation
     * (openblas-pthread/libblas.so.3). */
    if (slash && slash > path && !strncmp(name, "libblas", 7)) {
        const char *dir = slash - 1;
        while (dir > path && dir[-1] != '/')
            dir--;
        name = dir;
    }
    snprintf(buf, len, "%s", name);
    free(real);
    return buf;
}

static void print_header(FILE *json)
{
    struct bench_ident id;
    char blacs[256], scalapack[256], blas[256];
    const char *blas_threads = getenv("OPENBLAS_NUM_THREADS");
    const char *omp_threads = getenv("OMP_NUM_THREADS");
    bench_ident(&id);
    defining_library("Cblacs_gridinit", blacs, sizeof blacs);
    defining_library("pdgesv_", scalapack, sizeof scalapack);
    defining_library("dgemm_", blas, sizeof blas);
    printf("# scalapack-bench: %d ranks, grid %d x %d, NB %d, %d timed calls per size; %s on %s\n"
           "# library: %s\n# BLACS from %s, ScaLAPACK from %s, BLAS from %s "
           "(OPENBLAS_NUM_THREADS=%s)\n",
           nranks, nprow, npcol, opt.nb, opt.iters, id.date, id.host, id.lib, blacs, scalapack,
           blas, blas_threads ? blas_threads : "unset");
    printf("# %-7s %6s %11s %11s %11s %11s %10s %s\n", "op", "n", "median s", "best s",
           "GFLOP/s", "best GF/s", "check", "verdict");
    fflush(stdout);
    if (!blas_threads || strcmp(blas_threads, "1"))
        fprintf(stderr, "scalapack-bench: OPENBLAS_NUM_THREADS is %s, not 1: OpenBLAS may run "
                "threads beside the ranks\n", blas_threads ? blas_threads : "unset");
    if (!json)
        return;
    fprintf(json, "{\"type\":\"header\",\"suite\":\"scalapack-bench\",\"ranks\":%d,"
            "\"grid\":[%d,%d],\"nb\":%d,\"iters\":%d,\"threshold\":%g,\"library\":",
            nranks, nprow, npcol, opt.nb, opt.iters, opt.threshold);
    json_string(json, id.lib);
    fprintf(json, ",\"blacs\":");
    json_string(json, blacs);
    fprintf(json, ",\"scalapack\":");
    json_string(json, scalapack);
    fprintf(json, ",\"blas\":");
    json_string(json, blas);
    fprintf(json, ",\"openblas_num_threads\":");
    json_string(json, blas_threads ? blas_threads : "");
    fprintf(json, ",\"omp_num_threads\":");
    json_string(json, omp_threads ? omp_threads : "");
    bench_json_ident(json, &id);
    fprintf(json, "}\n");
    fflush(json);
}

/* Prints one result on rank 0; returns 1 if its check failed. */
static int report(FILE *json, enum op op, int n, struct result *r)
{
    double sorted[64];
    memcpy(sorted, r->seconds, (size_t)opt.iters * sizeof *sorted);
    r->median = median_of(sorted, opt.iters);
    r->best = sorted[0];
    char why[160] = "";
    if (r->info != 0)
        snprintf(why, sizeof why, "PDGESV returned INFO %d", r->info);
    else if (!(r->check < opt.threshold))
        snprintf(why, sizeof why, "scaled residual %.3g is not below %g", r->check,
                 opt.threshold);
    else if (!(r->sample_check < opt.threshold))
        snprintf(why, sizeof why, "a sampled element's scaled error %.3g is not below %g",
                 r->sample_check, opt.threshold);
    if (rank != 0)
        return why[0] != 0;
    double gf = flops(op, n) * 1e-9;
    printf("  %-7s %6d %11.4f %11.4f %11.2f %11.2f %10.3g %s\n", op_name[op], n, r->median,
           r->best, gf / r->median, gf / r->best, r->check, why[0] ? why : "ok");
    fflush(stdout);
    if (!json)
        return why[0] != 0;
    fprintf(json, "{\"type\":\"result\",\"bench\":\"%s\",\"size\":%d,\"status\":\"%s\"",
            op_name[op], n, why[0] ? "error" : "ok");
    if (why[0]) {
        fprintf(json, ",\"error\":");
        json_string(json, why);
    }
    fprintf(json, ",\"unit\":\"GFLOP/s\",\"value\":%.6g,\"gflops_best\":%.6g,\"seconds\":%.6g,"
            "\"seconds_best\":%.6g,\"seconds_all\":[", gf / r->median, gf / r->best, r->median,
            r->best);
    for (int i = 0; i < opt.iters; i++)
        fprintf(json, "%s%.6g", i ? "," : "", r->seconds[i]);
    fprintf(json, "],\"flops\":%.6g,\"nb\":%d,\"grid\":[%d,%d],\"check\":%.4g", flops(op, n),
            opt.nb, nprow, npcol, r->check);
    if (op == OP_PDGEMM)
        fprintf(json, ",\"sample_check\":%.4g", r->sample_check);
    fprintf(json, ",\"threshold\":%g}\n", opt.threshold);
    fflush(json);
    return why[0] != 0;
}

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -n P scalapack-bench [options]\n"
               "  --sizes LIST       matrix orders N, comma-separated (default 2000,3000,4000)\n"
               "  --nb NB            block size (default 64)\n"
               "  --iters K          timed calls per size and operation, 1 to 64 (default 3)\n"
               "  --ops LIST         pdgemm,pdgesv or one of them (default both)\n"
               "  --threshold T      largest scaled residual that passes (default 16)\n"
               "  --json FILE        also write one JSON line per result to FILE\n"
               "Set OPENBLAS_NUM_THREADS=1: one BLAS thread per rank.\n");
}

static void parse_sizes(const char *list)
{
    opt.nsizes = 0;
    for (const char *p = list; *p;) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || (*end && *end != ','))
            die("--sizes: '%s' is not a comma-separated list of integers", list);
        if (n < 1 || n > MAX_N)
            die("--sizes: %ld is out of range (1 to %d)", n, MAX_N);
        if (opt.nsizes == MAX_SIZES)
            die("--sizes: more than %d sizes", MAX_SIZES);
        opt.sizes[opt.nsizes++] = (int)n;
        p = *end ? end + 1 : end;
    }
    if (!opt.nsizes)
        die("--sizes: no size given");
}

static void parse_options(int argc, char **argv)
{
    const char *ops = "pdgemm,pdgesv";
    opt.nb = 64;
    opt.iters = 3;
    opt.threshold = 16;
    parse_sizes("2000,3000,4000");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--sizes") && has)
            parse_sizes(argv[++i]);
        else if (!strcmp(a, "--nb") && has)
            opt.nb = atoi(argv[++i]);
        else if (!strcmp(a, "--iters") && has)
            opt.iters = atoi(argv[++i]);
        else if (!strcmp(a, "--ops") && has)
            ops = argv[++i];
        else if (!strcmp(a, "--threshold") && has)
            opt.threshold = atof(argv[++i]);
        else if (!strcmp(a, "--json") && has)
            opt.json_path = argv[++i];
        else
            bench_not_an_option("scalapack-bench", rank, a, usage);
    }
    if (opt.nb < 1 || opt.nb > 4096)
        die("--nb: %d is out of range (1 to 4096)", opt.nb);
    if (opt.iters < 1 || opt.iters > 64)
        die("--iters: %d is out of range (1 to 64)", opt.iters);
    if (!(opt.threshold > 0))
        die("--threshold: must be positive");
    for (int op = 0; op < NOPS; op++)
        opt.ops[op] = bench_listed(ops, op_name[op]);
    for (const char *p = ops; *p;) {
        size_t len = strcspn(p, ",");
        int known = 0;
        for (int op = 0; op < NOPS; op++)
            known |= len == strlen(op_name[op]) && !strncmp(p, op_name[op], len);
        if (!known)
            die("--ops: '%.*s' is not pdgemm or pdgesv", (int)len, p);
        p += len + (p[len] == ',');
    }
}

/* The grid's rows: the largest divisor of p not above its square root. */
static int grid_rows(int p)
{
    int rows = 1;
    for (int r = 1; (long)r * r <= p; r++)
        if (p % r == 0)
            rows = r;
    return rows;
}

int main(int argc, char **argv)
{
    FILE *json = NULL;
    int errors = 0;
    bench_init(&argc, &argv, &rank, &nranks);
    parse_options(argc, argv);
    if (rank == 0 && opt.json_path && !(json = fopen(opt.json_path, "w")))
        die("cannot write %s", opt.json_path);
    nprow = grid_rows(nranks);
    npcol = nranks / nprow;
    Cblacs_get(0, 0, &context);
    Cblacs_gridinit(&context, "Row", nprow, npcol);
    int rows, cols;
    Cblacs_gridinfo(context, &rows, &cols, &myrow, &mycol);
    if (rows != nprow || cols != npcol || myrow < 0)
        die("rank %d: BLACS made a %d x %d grid, not %d x %d", rank, rows, cols, nprow, npcol);
    if (rank == 0)
        print_header(json);
    for (int s = 0; s < opt.nsizes; s++) {
        for (int op = 0; op < NOPS; op++) {
            if (!opt.ops[op])
                continue;
            struct result r;
            memset(&r, 0, sizeof r);
            if (op == OP_PDGEMM)
                run_pdgemm(opt.sizes[s], &r);
            else
                run_pdgesv(opt.sizes[s], &r);
            max_over_grid(r.seconds, opt.iters);
            errors += report(json, (enum op)op, opt.sizes[s], &r);
        }
    }
    Cblacs_gridexit(context);
    Cblacs_exit(1); /* 1: MPI goes on, bench_finish ends it */
    if (rank == 0 && errors)
        fprintf(stderr, "scalapack-bench: %d result(s) failed their check\n", errors);
    return bench_finish(json, errors);
}
