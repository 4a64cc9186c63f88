/* mpi-suite: options, the per-size driver and the output (see suite.h for
 * the method and bench/README.md for the options and the JSON lines).
 *
 *   mpirun -n 2 mpi-suite [--bench LIST] [--quick] [--min-size B] [--max-size B]
 *                         [--sizes LIST] [--iters N] [--budget SEC] [--json FILE]
 *                         [--alloc-mem] [--list] */
#include "suite.h"
#include "../json_string.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64
#define MAX_SIZE_LIMIT (256L << 20)

int rank, nranks;
unsigned char *sbuf, *rbuf, *ebuf;
size_t buf_bytes;

static struct {
    int quick, alloc_mem, list;
    long min_size, max_size, max_iters;
    double budget;           /* seconds of timed loop per size */
    long sizes[MAX_SIZES];
    int nsizes;
    const char *only;
    const char *json_path;
} opt = {.min_size = 0, .max_size = -1, .budget = -1};

static FILE *json;
static int errors;

static const struct {
    const struct bench *table;
    const int *n;
} tables[] = {{pt2pt_benches, &n_pt2pt_benches},
              {coll_benches, &n_coll_benches},
              {rma_benches, &n_rma_benches}};
#define NTABLES ((int)(sizeof tables / sizeof tables[0]))

#define die(...) bench_die("mpi-suite", rank, __VA_ARGS__)

void fail_mismatch(struct run *r, const char *what, long offset, int want, int got)
{
    if (offset >= 0)
        snprintf(r->msg, MSG_LEN, "rank %d, size %ld: %s: byte %ld is 0x%02x, expected 0x%02x",
                 rank, r->size, what, offset, got, want);
    else
        snprintf(r->msg, MSG_LEN,
                 "rank %d, size %ld: %s: byte %ld past the message was overwritten (0x%02x)", rank,
                 r->size, what, -1 - offset, got);
    r->mismatch = 1;
}

/* ---- output: a table on stdout and JSON lines in --json FILE (rank 0) ---- */

static void json_str(FILE *f, const char *key, const char *s)
{
    fprintf(f, ",\"%s\":", key);
    json_string(f, s);
}

static void emit_status(const struct bench *b, long size, const char *status, const char *why)
{
    if (rank != 0)
        return;
    if (size >= 0)
        printf("  %10ld %s: %s\n", size, status, why);
    else
        printf("  %s: %s\n", status, why);
    fflush(stdout);
    if (json) {
        fprintf(json, "{\"type\":\"result\"");
        json_str(json, "bench", b->name);
        if (size >= 0)
            fprintf(json, ",\"size\":%ld", size);
        json_str(json, "status", status);
        json_str(json, "error", why);
        fprintf(json, "}\n");
        fflush(json);
    }
}

struct figures {
    long iters;
    double value;            /* the headline, in unit */
    const char *unit;
    double usec, usec_min, usec_max; /* per iteration: this rank / min / max over ranks */
    double overall_usec, compute_usec, overlap_pct; /* overlap tests */
};

static void emit_header(const struct bench *b)
{
    if (rank != 0)
        return;
    const char *unit = b->metric == METRIC_BW || b->metric == METRIC_BIBW ? "MB/s"
                       : b->metric == METRIC_RATE                         ? "msg/s"
                                                                          : "us";
    printf("\n# %s: %s\n", b->name, b->what);
    if (b->overlap)
        printf("# %10s %12s %12s %12s %10s %8s\n", "size", "pure us", "overall us", "compute us",
               "overlap %", "iters");
    else if (b->metric == METRIC_COLL)
        printf("# %10s %12s %12s %12s %8s\n", b->min_size < 0 ? "" : "size", "avg us", "min us",
               "max us", "iters");
    else
        printf("# %10s %12s %8s\n", b->min_size < 0 ? "" : "size", unit, "iters");
    fflush(stdout);
}

static void emit_row(const struct bench *b, long size, const struct figures *f)
{
    if (rank != 0)
        return;
    char sz[32] = "";
    if (b->min_size >= 0)
        snprintf(sz, sizeof sz, "%ld", size);
    if (b->overlap)
        printf("  %10s %12.2f %12.2f %12.2f %10.1f %8ld\n", sz, f->value, f->overall_usec,
               f->compute_usec, f->overlap_pct, f->iters);
    else if (b->metric == METRIC_COLL)
        printf("  %10s %12.2f %12.2f %12.2f %8ld\n", sz, f->value, f->usec_min, f->usec_max,
               f->iters);
    else
        printf("  %10s %12.*f %8ld\n", sz, f->value >= 1000 ? 0 : 3, f->value, f->iters);
    fflush(stdout);
    if (!json)
        return;
    fprintf(json, "{\"type\":\"result\"");
    json_str(json, "bench", b->name);
    if (b->min_size >= 0)
        fprintf(json, ",\"size\":%ld", size);
    json_str(json, "status", "ok");
    json_str(json, "unit", f->unit);
    fprintf(json, ",\"value\":%.6g,\"iters\":%ld", f->value, f->iters);
    if (b->metric == METRIC_COLL)
        fprintf(json, ",\"usec_min\":%.6g,\"usec_max\":%.6g", f->usec_min, f->usec_max);
    if (b->overlap)
        fprintf(json, ",\"overall_usec\":%.6g,\"compute_usec\":%.6g,\"overlap_pct\":%.4g",
                f->overall_usec, f->compute_usec, f->overlap_pct);
    fprintf(json, "}\n");
    fflush(json);
}

/* ---- agreement: every rank leaves a benchmark together ---- */

/* Returns 1 if any rank failed (rc != MPI_SUCCESS or r->mismatch); rank 0
 * then holds the lowest failing rank's message in r->msg. */
static int agree_failure(struct run *r, int rc)
{
    return bench_any_failed(rc, r->mismatch, r->msg, MSG_LEN, 99);
}

static long iter_cap(long size)
{
    long cap = size <= 8192 ? 10000 : size <= (1L << 20) ? 1000 : 100;
    if (opt.quick)
        cap /= 5;
    if (opt.max_iters > 0 && cap > opt.max_iters)
        cap = opt.max_iters;
    return cap;
}

static long choose_iters(double secs_per_iter, long size)
{
    long cap = iter_cap(size), floor_ = opt.quick || size > (1L << 20) ? 3 : 5;
    long n = secs_per_iter > 0 ? (long)(opt.budget / secs_per_iter) : cap;
    if (n > cap)
        n = cap;
    if (n < floor_)
        n = floor_;
    return n < cap ? n : cap;
}

/* The first call of a size (the first use can cost more, and its failure
 * means "unsupported"), then runs of 1, 4, 16 ... iterations until one takes
 * an eighth of the budget or reaches the cap: *per_iter is the slowest rank's
 * time per iteration in the last run.  On a loaded machine two or three
 * iterations say little about the next thousand. */
static int probe(struct run *r, long cap, double *per_iter)
{
    double secs, v[2];
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = r->b->kernel(r, 1, &secs);
    for (long n = 1;; n *= 4) {
        if (n > cap)
            n = cap;
        if (rc == MPI_SUCCESS)
            rc = MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rc == MPI_SUCCESS)
            rc = r->b->kernel(r, n, &secs);
        v[0] = MPI_Wtime() - t0;
        v[1] = rc != MPI_SUCCESS; /* one allreduce: the ranks stop together */
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        *per_iter = v[0] / (double)n;
        if (v[1] != 0 || v[0] >= opt.budget / 8 || n >= cap)
            return rc;
    }
}

/* Timed run: warm-up, then iters; fills the per-iteration figures. */
static int timed(struct run *r, long iters, struct figures *f)
{
    long warm = iters / 10; /* none for a few slow iterations: the probe warmed up */
    long warm_max = opt.quick ? 50 : 200;
    double secs = 0;
    if (warm > warm_max)
        warm = warm_max;
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && warm > 0)
        rc = r->b->kernel(r, warm, &secs);
    if (rc == MPI_SUCCESS)
        rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = r->b->kernel(r, iters, &secs);
    if (agree_failure(r, rc))
        return -1;
    double u = secs / (double)iters * 1e6, mm[2] = {u, -u}, sum = 0;
    MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&u, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    f->iters = iters;
    f->usec = u;
    f->usec_max = mm[0];
    f->usec_min = -mm[1];
    double bytes = (double)r->size * WINDOW;
    f->unit = "us";
    switch (r->b->metric) {
    case METRIC_PINGPONG:
        f->value = u / 2;
        break;
    case METRIC_RANK0:
        f->value = u;
        break;
    case METRIC_COLL:
        f->value = sum / nranks;
        break;
    case METRIC_BW:
        f->value = u > 0 ? bytes / u : 0; /* bytes per usec = MB/s */
        f->unit = "MB/s";
        break;
    case METRIC_BIBW:
        f->value = u > 0 ? 2 * bytes / u : 0;
        f->unit = "MB/s";
        break;
    case METRIC_RATE:
        f->value = u > 0 ? WINDOW / u * 1e6 : 0;
        f->unit = "msg/s";
        break;
    }
    return 0;
}

/* One size of one benchmark; returns nonzero when the benchmark must stop. */
static int run_size(struct run *r, long size, int first)
{
    const struct bench *b = r->b;
    struct figures f = {0};
    r->size = size;
    r->count = (int)(size / b->elem);
    r->mismatch = 0;
    r->compute_usec = 0;
    r->msg[0] = 0;
    /* The first call: its failure on the first size means "unsupported". */
    double per_iter = 0;
    int rc = b->setup ? b->setup(r) : MPI_SUCCESS;
    int failed = agree_failure(r, rc);
    if (!failed)
        failed = agree_failure(r, probe(r, iter_cap(size), &per_iter));
    if (failed) {
        emit_status(b, first ? -1 : size, first ? "unsupported" : "error", r->msg);
        errors += !first;
        if (b->teardown)
            b->teardown(r);
        return 1;
    }
    long iters = choose_iters(per_iter, size);
    int bad = timed(r, iters, &f);
    if (!bad && b->overlap) {
        /* osu_ibcast: compute as long as the pure communication took. */
        struct figures pure = f;
        r->compute_usec = f.usec_max;
        bad = timed(r, iters, &f);
        f.overall_usec = f.value;
        f.compute_usec = r->compute_usec;
        f.value = pure.value;
        double ov = 100.0 * (1.0 - (f.overall_usec - f.compute_usec) / pure.value);
        f.overlap_pct = ov < 0 ? 0 : ov > 100 ? 100 : ov;
    }
    if (!bad) {
        rc = b->verify(r);
        bad = agree_failure(r, rc);
    }
    if (b->teardown)
        b->teardown(r);
    if (bad) {
        emit_status(b, size, "error", r->msg);
        errors++;
        return 1;
    }
    emit_row(b, size, &f);
    return 0;
}

static int selected(const char *name)
{
    return !opt.only || bench_listed(opt.only, name);
}

static void run_bench(const struct bench *b)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.preq = MPI_REQUEST_NULL;
    r.win = MPI_WIN_NULL;
    emit_header(b);
    if (b->pairwise && nranks < 2) {
        emit_status(b, -1, "skipped", "needs at least 2 ranks");
        return;
    }
    if (b->needs_mpi4 && !SUITE_HAVE_MPI4) {
        char why[MSG_LEN];
        snprintf(why, sizeof why, "needs MPI 4 (this mpi.h is MPI %d.%d)", MPI_VERSION,
                 MPI_SUBVERSION);
        emit_status(b, -1, "n/a", why);
        return;
    }
    int rc = b->init ? b->init(&r) : MPI_SUCCESS;
    if (agree_failure(&r, rc)) {
        emit_status(b, -1, "unsupported", r.msg);
        if (b->fini)
            b->fini(&r);
        return;
    }
    if (b->min_size < 0) {
        run_size(&r, 0, 1);
    } else {
        int first = 1;
        for (int i = 0; i < opt.nsizes; i++) {
            long s = opt.sizes[i];
            if (s < b->min_size || s % b->elem != 0 || (b->max_size && s > b->max_size))
                continue;
            if (run_size(&r, s, first))
                break;
            first = 0;
        }
    }
    if (b->fini)
        b->fini(&r);
}

/* ---- options ---- */

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : 0;
    if (shift)
        end++;
    if (end == s || *end || v < 0 || v > (MAX_SIZE_LIMIT >> shift))
        die("invalid size '%s' (bytes, with an optional K or M suffix, at most 256M)", s);
    return v << shift;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -n N mpi-suite [options]\n"
            "  --bench LIST     comma-separated benchmarks (default: all; see --list)\n"
            "  --only LIST      the same as --bench\n"
            "  --quick          sizes 0 8 64 1K 8K 64K 1M 4M, shorter loops\n"
            "  --min-size B     smallest size (K and M suffixes)\n"
            "  --max-size B     largest size (default 16M, --quick 4M)\n"
            "  --sizes LIST     exactly these sizes, comma-separated\n"
            "  --iters N        at most N timed iterations per size\n"
            "  --budget SEC     timed loop per size (default 0.1, --quick 0.03)\n"
            "  --json FILE      also write one JSON line per result to FILE\n"
            "  --alloc-mem      buffers from MPI_Alloc_mem instead of malloc\n"
            "  --list           list the benchmarks and exit\n");
}

static void parse_options(int argc, char **argv)
{
    const char *sizes = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if ((!strcmp(a, "--bench") || !strcmp(a, "--only")) && has)
            opt.only = argv[++i];
        else if (!strcmp(a, "--quick"))
            opt.quick = 1;
        else if (!strcmp(a, "--min-size") && has)
            opt.min_size = parse_size(argv[++i]);
        else if (!strcmp(a, "--max-size") && has)
            opt.max_size = parse_size(argv[++i]);
        else if (!strcmp(a, "--sizes") && has)
            sizes = argv[++i];
        else if (!strcmp(a, "--iters") && has)
            opt.max_iters = atol(argv[++i]);
        else if (!strcmp(a, "--budget") && has)
            opt.budget = atof(argv[++i]);
        else if (!strcmp(a, "--json") && has)
            opt.json_path = argv[++i];
        else if (!strcmp(a, "--alloc-mem"))
            opt.alloc_mem = 1;
        else if (!strcmp(a, "--list"))
            opt.list = 1;
        else
            bench_not_an_option("mpi-suite", rank, a, usage);
    }
    if (opt.max_size < 0)
        opt.max_size = opt.quick ? 4L << 20 : 16L << 20;
    if (opt.budget < 0)
        opt.budget = opt.quick ? 0.03 : 0.1;
    if (sizes) {
        char *copy = strdup(sizes), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (opt.nsizes == MAX_SIZES)
                die("too many sizes");
            opt.sizes[opt.nsizes++] = parse_size(t);
        }
        free(copy);
    } else if (opt.quick) {
        static const long quick[] = {0, 8, 64, 1024, 8192, 65536, 1L << 20, 4L << 20};
        for (int i = 0; i < (int)(sizeof quick / sizeof quick[0]); i++)
            if (quick[i] >= opt.min_size && quick[i] <= opt.max_size)
                opt.sizes[opt.nsizes++] = quick[i];
    } else {
        for (long s = opt.min_size; s <= opt.max_size; s = s ? s * 2 : 1)
            opt.sizes[opt.nsizes++] = s;
    }
    if (opt.only) {
        for (const char *p = opt.only; *p;) {
            size_t len = strcspn(p, ",");
            int known = 0;
            for (int t = 0; t < NTABLES; t++)
                for (int j = 0; j < *tables[t].n; j++)
                    known |= strlen(tables[t].table[j].name) == len &&
                             !strncmp(p, tables[t].table[j].name, len);
            if (!known && len)
                die("unknown benchmark '%.*s' (see --list)", (int)len, p);
            p += len + (p[len] == ',');
        }
    }
}

static void *alloc_buffer(size_t n)
{
    void *p = bench_alloc(n, opt.alloc_mem);
    if (!p)
        die("cannot allocate %zu bytes", n);
    return p;
}

static void print_start(void)
{
    struct bench_ident id;
    bench_ident(&id);
    printf("# mpi-suite: %d ranks, %s buffers, %s; %s on %s\n# library: %s\n", nranks,
           opt.alloc_mem ? "MPI_Alloc_mem" : "malloc", opt.quick ? "quick" : "full", id.date,
           id.host, id.lib);
    fflush(stdout);
    if (json) {
        fprintf(json, "{\"type\":\"header\",\"suite\":\"mpi-suite\",\"ranks\":%d", nranks);
        json_str(json, "library", id.lib);
        fprintf(json, ",\"mpi_version\":\"%d.%d\",\"quick\":%s,\"budget\":%g", MPI_VERSION,
                MPI_SUBVERSION, opt.quick ? "true" : "false", opt.budget);
        bench_json_ident(json, &id);
        fprintf(json, "}\n");
    }
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv, &rank, &nranks);
    parse_options(argc, argv);
    if (opt.list) {
        for (int t = 0; rank == 0 && t < NTABLES; t++)
            for (int j = 0; j < *tables[t].n; j++)
                printf("%-15s %s\n", tables[t].table[j].name, tables[t].table[j].what);
        MPI_Finalize();
        return 0;
    }
    buf_bytes = (size_t)opt.max_size;
    for (int t = 0; t < NTABLES; t++)
        for (int j = 0; j < *tables[t].n; j++) {
            const struct bench *b = &tables[t].table[j];
            if (selected(b->name) && b->buffer_bytes &&
                b->buffer_bytes(opt.max_size, nranks) > buf_bytes)
                buf_bytes = b->buffer_bytes(opt.max_size, nranks);
        }
    for (int i = 0; i < opt.nsizes; i++)
        if ((size_t)opt.sizes[i] > buf_bytes)
            buf_bytes = (size_t)opt.sizes[i];
    buf_bytes += GUARD;
    sbuf = alloc_buffer(buf_bytes);
    rbuf = alloc_buffer(buf_bytes);
    ebuf = alloc_buffer(buf_bytes);

    if (rank == 0 && opt.json_path && !(json = fopen(opt.json_path, "w")))
        die("cannot write %s", opt.json_path);
    if (rank == 0)
        print_start();

    double start = MPI_Wtime();
    for (int t = 0; t < NTABLES; t++)
        for (int j = 0; j < *tables[t].n; j++)
            if (selected(tables[t].table[j].name)) {
                if (rank == 0) {
                    fprintf(stderr, "mpi-suite: %s (at %.1f s)\n", tables[t].table[j].name,
                            MPI_Wtime() - start);
                    fflush(stderr);
                }
                run_bench(&tables[t].table[j]);
            }

    if (rank == 0)
        fprintf(stderr, "mpi-suite: done in %.1f s\n", MPI_Wtime() - start);
    if (rank == 0 && errors)
        fprintf(stderr, "mpi-suite: %d benchmark(s) failed verification or returned errors\n",
                errors);
    bench_free(sbuf, opt.alloc_mem);
    bench_free(rbuf, opt.alloc_mem);
    bench_free(ebuf, opt.alloc_mem);
    return bench_finish(json, errors);
}
