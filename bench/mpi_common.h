/* What the plain-MPI benchmarks (mpi-suite in bench/mpi/, mpi-overlap,
 * jacobi) share: leaving on a bad option, agreeing on a failure, the
 * header's identity lines, comma lists, buffers.  Header-only and standard
 * MPI only, so that each program builds alone with any MPI's mpicc. */
#ifndef BENCH_MPI_COMMON_H
#define BENCH_MPI_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json_string.h"

/* Return the MPI error code of a failing call. */
#define TRY(call)                                                                                  \
    do {                                                                                           \
        int try_rc_ = (call);                                                                      \
        if (try_rc_ != MPI_SUCCESS)                                                                \
            return try_rc_;                                                                        \
    } while (0)

/* A bad option or an impossible set-up: "prog: message" from rank 0, then
 * every rank leaves with status 2. */
static inline void bench_die(const char *prog, int rank, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (rank == 0) {
        fprintf(stderr, "%s: ", prog);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
    }
    va_end(ap);
    MPI_Finalize();
    exit(2);
}

/* MPI_Init, errors returned rather than fatal (every call is checked), the
 * rank and the size of MPI_COMM_WORLD. */
static inline void bench_init(int *argc, char ***argv, int *rank, int *nranks)
{
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
}

/* An argument that no option took: --help (-h) prints the usage and leaves
 * with status 0; anything else prints it to standard error and leaves with
 * status 2. */
static inline void bench_not_an_option(const char *prog, int rank, const char *arg,
                                       void (*usage)(FILE *))
{
    int help = !strcmp(arg, "--help") || !strcmp(arg, "-h");
    if (rank == 0)
        usage(help ? stdout : stderr);
    if (!help)
        bench_die(prog, rank, "unknown or incomplete option '%s'", arg);
    MPI_Finalize();
    exit(0);
}

/* Every rank calls it after a step: returns 1 if any rank failed (rc is
 * not MPI_SUCCESS, or failed is set), and rank 0 then holds the lowest
 * failing rank's message in msg (len bytes on every rank; an rc is written
 * there as "rank R: <error string>").  The ranks leave a benchmark together,
 * none stuck in a collective the others left. */
static inline int bench_any_failed(int rc, int failed, char *msg, int len, int tag)
{
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int slen = 0;
        if (MPI_Error_string(rc, s, &slen) != MPI_SUCCESS)
            snprintf(s, sizeof s, "error code %d", rc);
        snprintf(msg, (size_t)len, "rank %d: %.*s", rank, len / 2, s);
    }
    int mine = rc != MPI_SUCCESS || failed ? rank : nranks, first = nranks;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == nranks)
        return 0;
    if (first != 0 && rank == first)
        MPI_Send(msg, len, MPI_CHAR, 0, tag, MPI_COMM_WORLD);
    if (first != 0 && rank == 0)
        MPI_Recv(msg, len, MPI_CHAR, first, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return 1;
}

/* What a report's header names: the library (its first line), the host,
 * the date (UTC). */
struct bench_ident {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    char host[256];
    char date[64];
};

static inline void bench_ident(struct bench_ident *id)
{
    int len = 0;
    time_t now = time(NULL);
    strcpy(id->lib, "?");
    strcpy(id->host, "?");
    strcpy(id->date, "?");
    MPI_Get_library_version(id->lib, &len);
    id->lib[strcspn(id->lib, "\n")] = 0;
    gethostname(id->host, sizeof id->host);
    id->host[sizeof id->host - 1] = 0;
    strftime(id->date, sizeof id->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

/* The JSON header's last keys: ,"date":...,"host":... */
static inline void bench_json_ident(FILE *f, const struct bench_ident *id)
{
    fprintf(f, ",\"date\":");
    json_string(f, id->date);
    fprintf(f, ",\"host\":");
    json_string(f, id->host);
}

/* The end: the JSON's last line, {"type":"end","errors":N} (json may be
 * NULL), MPI_Finalize; returns main's exit status (1 after errors). */
static inline int bench_finish(FILE *json, int errors)
{
    if (json) {
        fprintf(json, "{\"type\":\"end\",\"errors\":%d}\n", errors);
        fclose(json);
    }
    MPI_Finalize();
    return errors ? 1 : 0;
}

/* Whether name is an item of the comma-separated list. */
static inline int bench_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* n bytes, zeroed (touched before any timing), from MPI_Alloc_mem (FMPL: its
 * shared heap) or malloc; NULL if there are none. */
static inline void *bench_alloc(size_t n, int alloc_mem)
{
    void *p = NULL;
    if (alloc_mem) {
        if (MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p) != MPI_SUCCESS)
            p = NULL;
    } else {
        p = malloc(n);
    }
    if (p)
        memset(p, 0, n);
    return p;
}

static inline void bench_free(void *p, int alloc_mem)
{
    if (alloc_mem)
        MPI_Free_mem(p);
    else
        free(p);
}

#endif
