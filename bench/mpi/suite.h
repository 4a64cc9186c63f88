/* mpi-suite: an OSU-style benchmark suite written to the standard MPI C API
 * only, so that the same sources build with FMPL's mpicc, Open MPI's and
 * MPICH's (bench/compare runs the three side by side).  See bench/README.md.
 *
 * Shape: main.c owns the options, the size loop and the output; each
 * benchmark is a row of a table (struct bench) that names the hooks it needs.
 * Per size the driver (main.c, run_size) does:
 *   setup      per-size preparation, e.g. MPI_Bcast_init (its failure on the
 *              first size marks the benchmark "unsupported");
 *   probe      kernel(1), then kernel(1, 4, 16 ... iterations) until a run
 *              takes an eighth of the budget: the slowest rank's time per
 *              iteration chooses the iteration count (the same on every
 *              rank); a failure of the first size's first call also marks
 *              the benchmark "unsupported";
 *   warm-up    kernel(iters / 10), untimed (the probe warmed up too);
 *   timed run  kernel(iters), each rank its own time;
 *   verify     one checked operation with a known pattern, every byte
 *              compared (and the bytes past the message untouched); a mismatch
 *              is an error and makes the program exit non-zero;
 *   teardown.
 * Every return code is checked (MPI_ERRORS_RETURN on MPI_COMM_WORLD and the
 * windows); all ranks agree on a failure through an allreduce so that they
 * leave a benchmark together. */
#ifndef MPI_SUITE_H
#define MPI_SUITE_H

#include <mpi.h>
#include <stddef.h>

#include "../mpi_common.h" /* TRY, bench_any_failed, ... */

#define WINDOW 64   /* bandwidth and message rate: sends in flight (osu_bw) */
#define GUARD 64    /* bytes after each received message checked untouched */
#define MSG_LEN 1024

#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define SUITE_HAVE_MPI4 1
#else
#define SUITE_HAVE_MPI4 0
#endif

enum metric {
    METRIC_PINGPONG,   /* one-way latency = rank 0's round trip / 2, usec */
    METRIC_RANK0,      /* rank 0's time per iteration, usec (one-sided) */
    METRIC_COLL,       /* time per iteration, average over ranks, usec */
    METRIC_BW,         /* size * WINDOW per iteration, MB/s (1e6 B/s) */
    METRIC_BIBW,       /* 2 * size * WINDOW per iteration, MB/s */
    METRIC_RATE,       /* WINDOW messages per iteration, messages/s */
};

struct run;

struct bench {
    const char *name;
    const char *what;        /* one line for --list and the table header */
    enum metric metric;
    long min_size;           /* smallest size run; -1: the benchmark has no size */
    long max_size;           /* largest size run (0: no limit of its own) */
    int elem;                /* sizes are counts of this many bytes (8: doubles) */
    int pairwise;            /* uses ranks 0 and 1 only (needs 2 ranks) */
    int needs_mpi4;          /* MPI_Bcast_init and friends */
    int overlap;             /* Ibcast/Iallreduce overlap: pure, then with compute */
    enum mode { MODE_BLOCKING, MODE_NONBLOCKING, MODE_PERSISTENT } mode; /* collectives */
    size_t (*buffer_bytes)(long max_size, int nranks); /* NULL: max_size */
    int (*init)(struct run *);        /* once per benchmark (e.g. the window) */
    void (*fini)(struct run *);
    int (*setup)(struct run *);       /* per size, before the probe */
    void (*teardown)(struct run *);
    /* The measured loop: iters iterations, *secs = this rank's timed part. */
    int (*kernel)(struct run *, long iters, double *secs);
    /* One checked operation: returns an MPI error code, or sets r->mismatch. */
    int (*verify)(struct run *);
    /* Collectives (coll.c's generic kernel and verify): start the operation,
     * blocking when req is NULL; fill the buffers with the check pattern;
     * check the result. */
    int (*start)(struct run *, MPI_Request *req);
    void (*fill)(struct run *);
    int (*check)(struct run *);
};

struct run {
    const struct bench *b;
    long size;               /* bytes per message / per rank block */
    int count;               /* size / b->elem */
    double compute_usec;     /* overlap benchmarks: compute per iteration (0: none) */
    MPI_Request preq;        /* persistent collective request */
    MPI_Win win;
    unsigned char *win_base;
    int mismatch;            /* verify found wrong data (message in msg) */
    char msg[MSG_LEN];
};

/* main.c */
extern int rank, nranks;
extern unsigned char *sbuf, *rbuf, *ebuf; /* send, receive, expected */
extern size_t buf_bytes;                  /* each, including GUARD */
void fail_mismatch(struct run *r, const char *what, long offset, int want, int got);

/* verify.c: patterns and checks */
unsigned char pattern_byte(unsigned seed, long i);
void fill_pattern(unsigned char *p, long n, unsigned seed);
void fill_not_pattern(unsigned char *p, long n, unsigned seed); /* every byte differs */
void fill_guard(unsigned char *p);                 /* GUARD bytes at p */
/* 0 if p[0..n) is pattern(seed) and p[n..n+GUARD) the guard; else sets r->mismatch. */
int check_pattern(struct run *r, const char *what, const unsigned char *p, long n, unsigned seed);
int check_bytes(struct run *r, const char *what, const unsigned char *got,
                const unsigned char *want, long n);
void spin_usec(double usec);                       /* the "compute" of the overlap tests */

/* The benchmark tables. */
extern const struct bench pt2pt_benches[];
extern const int n_pt2pt_benches;
extern const struct bench coll_benches[];
extern const int n_coll_benches;
extern const struct bench rma_benches[];
extern const int n_rma_benches;

#endif
