/* pmpi_profile: calls, time and bytes per MPI function, through the MPI
 * profiling interface, for any program, without rebuilding it:
 *
 *   LD_PRELOAD=build/bench/libpmpi_profile.so fmplrun -n 4 ./cg.A.x
 *
 * Each wrapper below (MPI_Send, and the Fortran mpi_send_) counts the call,
 * times it with CLOCK_MONOTONIC and adds the bytes it names, then calls the
 * library's own PMPI_Send (pmpi_send_ for Fortran).  At MPI_Finalize rank 0
 * gathers every rank's figures and prints one table (the sum over the
 * ranks, and the slowest rank's time), sorted by time, to stderr or to
 * $PMPI_PROFILE_OUT; PMPI_PROFILE_PER_RANK=1 adds a table per rank, and
 * $PMPI_PROFILE_JSON receives every figure as JSON (bench/compare
 * --npb-profile reads it).
 *
 * Why both C and Fortran wrappers: libraries differ in what their Fortran
 * binding calls.  FMPL's mpi_send_ calls PMPI_Send and Open MPI's calls
 * PMPI_Send too, so a C wrapper alone never sees a Fortran program's calls;
 * MPICH's calls MPI_Send, so with both wrappers a Fortran call would pass
 * two of them.  A thread-local depth makes only the outermost wrapper of a
 * call count it.
 *
 * It is built against FMPL's mpi.h, which is MPICH's binary interface, and
 * linked against no MPI library (the PMPI_ symbols resolve to the program's),
 * so the same file preloads under FMPL and MPICH.  Open MPI's interface is
 * another: build a copy with Open MPI's mpi.h (bench/compare does:
 * gcc $(mpicc.openmpi --showme:compile) -shared -fPIC) and give it to the
 * ranks alone (mpirun.openmpi -x LD_PRELOAD=...): Open MPI's handles are
 * addresses of its library's data, which the launcher does not load.  The
 * Fortran library's pmpi_ functions are looked up with dlsym(RTLD_NEXT) on
 * first use, so a C program that has none still loads it, with lazy or
 * eager binding.
 *
 * Bytes are the ones each call names on this rank: a send's message, a
 * receive's buffer (count x type size, not what arrived), both of a
 * sendrecv, what a rank contributes to a collective (a broadcast's or
 * reduction's count x size, an all-to-all's whole send buffer, an
 * allgather's block); none for waits and barriers.
 *
 * Single-threaded use (a program calling MPI from one thread at a time).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The library functions called here are weak references: a launcher (not
 * an MPI program) that inherits LD_PRELOAD then loads this library even
 * with LD_BIND_NOW=1.  (PMPI_Type_f2c and PMPI_Comm_f2c are macros in
 * MPICH's interface.) */
#pragma weak PMPI_Send
#pragma weak PMPI_Ssend
#pragma weak PMPI_Recv
#pragma weak PMPI_Isend
#pragma weak PMPI_Irecv
#pragma weak PMPI_Sendrecv
#pragma weak PMPI_Wait
#pragma weak PMPI_Waitall
#pragma weak PMPI_Waitany
#pragma weak PMPI_Test
#pragma weak PMPI_Barrier
#pragma weak PMPI_Bcast
#pragma weak PMPI_Reduce
#pragma weak PMPI_Allreduce
#pragma weak PMPI_Alltoall
#pragma weak PMPI_Alltoallv
#pragma weak PMPI_Allgather
#pragma weak PMPI_Gather
#pragma weak PMPI_Scatter
#pragma weak PMPI_Init
#pragma weak PMPI_Init_thread
#pragma weak PMPI_Finalize
#pragma weak PMPI_Comm_rank
#pragma weak PMPI_Comm_size
#pragma weak PMPI_Type_size
#ifndef PMPI_Type_f2c
#pragma weak PMPI_Type_f2c
#endif
#ifndef PMPI_Comm_f2c
#pragma weak PMPI_Comm_f2c
#endif

/* The profiled functions, in the table's order when times tie. */
#define PROFILED_CALLS(X)                                                                       \
    X(SEND, "MPI_Send") X(SSEND, "MPI_Ssend") X(RECV, "MPI_Recv") X(ISEND, "MPI_Isend")        \
    X(IRECV, "MPI_Irecv") X(SENDRECV, "MPI_Sendrecv") X(WAIT, "MPI_Wait")                      \
    X(WAITALL, "MPI_Waitall") X(WAITANY, "MPI_Waitany") X(TEST, "MPI_Test")                    \
    X(BARRIER, "MPI_Barrier") X(BCAST, "MPI_Bcast") X(REDUCE, "MPI_Reduce")                    \
    X(ALLREDUCE, "MPI_Allreduce") X(ALLTOALL, "MPI_Alltoall") X(ALLTOALLV, "MPI_Alltoallv")    \
    X(ALLGATHER, "MPI_Allgather") X(GATHER, "MPI_Gather") X(SCATTER, "MPI_Scatter")

enum profiled_call {
#define CALL_ENUM(id, name) CALL_##id,
    PROFILED_CALLS(CALL_ENUM)
#undef CALL_ENUM
    NCALLS
};

static const char *const call_names[NCALLS] = {
#define CALL_NAME(id, name) name,
    PROFILED_CALLS(CALL_NAME)
#undef CALL_NAME
};

/* This rank's figures; index NCALLS of seconds holds the wall time from
 * MPI_Init's return (or the library's loading, without an MPI_Init seen)
 * to MPI_Finalize. */
static uint64_t calls[NCALLS], bytes[NCALLS];
static double seconds[NCALLS + 1];
static double t_start;
static int reported;
static __thread int depth;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__attribute__((constructor)) static void profile_loaded(void)
{
    t_start = now();
}

/* A call begins: its start time, or a negative one when it runs inside
 * another profiled call (MPICH's Fortran binding calling its C one). */
static double span_begin(void)
{
    return depth++ == 0 ? now() : -1.0;
}

/* A call ends: counted when it was the outermost; returns whether. */
static int span_end(enum profiled_call id, double t0)
{
    if (--depth != 0 || t0 < 0)
        return 0;
    seconds[id] += now() - t0;
    calls[id]++;
    return 1;
}

/* Time one call (an expression, evaluated once) and, when it counted, add
 * its bytes (evaluated after the clock stopped). */
#define PROFILED(id, nbytes, invocation)                                                        \
    do {                                                                                        \
        double t0_ = span_begin();                                                              \
        invocation;                                                                             \
        if (span_end(CALL_##id, t0_))                                                           \
            bytes[CALL_##id] += (uint64_t)(nbytes);                                             \
    } while (0)

static uint64_t typed_bytes(MPI_Count count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return 0;
    return (uint64_t)count * (uint64_t)(size > 0 ? size : 0);
}

static uint64_t fortran_bytes(const MPI_Fint *count, const MPI_Fint *type)
{
    return typed_bytes(*count, PMPI_Type_f2c(*type));
}

static uint64_t alltoallv_bytes(const int *counts, MPI_Datatype type, MPI_Comm comm)
{
    int n = 0;
    MPI_Count total = 0;
    PMPI_Comm_size(comm, &n);
    for (int i = 0; i < n; i++)
        total += counts[i];
    return typed_bytes(total, type);
}

static uint64_t per_rank_bytes(int count, MPI_Datatype type, MPI_Comm comm)
{
    int n = 0;
    PMPI_Comm_size(comm, &n);
    return typed_bytes((MPI_Count)count * n, type);
}

/* ---- the report ---- */

static int by_time_desc(const void *a, const void *b, void *ctx)
{
    const double *t = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    return t[y] > t[x] ? 1 : t[y] < t[x] ? -1 : x - y;
}

/* Call indices with calls, sorted by descending time; returns how many. */
static int table_order(const double *t, const uint64_t *n, int *order)
{
    int k = 0;
    for (int i = 0; i < NCALLS; i++)
        if (n[i])
            order[k++] = i;
    qsort_r(order, (size_t)k, sizeof(int), by_time_desc, (void *)t);
    return k;
}

static void print_table(FILE *out, const char *title, const uint64_t *n, const double *t,
                        const double *t_max, const uint64_t *b, double wall, int ranks)
{
    int order[NCALLS];
    int k = table_order(t, n, order);
    double in_mpi = 0;
    for (int i = 0; i < NCALLS; i++)
        in_mpi += t[i];
    fprintf(out, "pmpi_profile: %s: %.6f s from MPI_Init to MPI_Finalize%s, %.6f s in these calls "
            "(%.1f%%)\n", title, wall, ranks > 1 ? " (slowest rank)" : "", in_mpi / ranks,
            wall > 0 ? 100.0 * in_mpi / ranks / wall : 0.0);
    fprintf(out, "%-14s %12s %12s %12s %7s %16s %12s\n", "call", "calls", "time s", "max rank s",
            "% wall", "bytes", "bytes/call");
    for (int j = 0; j < k; j++) {
        int i = order[j];
        fprintf(out, "%-14s %12llu %12.6f %12.6f %7.2f %16llu %12.0f\n", call_names[i],
                (unsigned long long)n[i], t[i], t_max[i],
                wall > 0 ? 100.0 * t[i] / ranks / wall : 0.0, (unsigned long long)b[i],
                (double)b[i] / (double)n[i]);
    }
}

static void json_numbers(FILE *f, const char *key, const uint64_t *n, const double *t)
{
    fprintf(f, "\"%s\": [", key);
    for (int i = 0; i < NCALLS; i++)
        if (n)
            fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)n[i]);
        else
            fprintf(f, "%s%.9g", i ? ", " : "", t[i]);
    fputc(']', f);
}

static void write_json(const char *path, int ranks, const uint64_t *all_calls,
                       const double *all_seconds, const uint64_t *all_bytes)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    fprintf(f, "{\"tool\": \"pmpi_profile\", \"ranks\": %d, \"calls_named\": [", ranks);
    for (int i = 0; i < NCALLS; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "", call_names[i]);
    fprintf(f, "],\n \"per_rank\": [");
    for (int r = 0; r < ranks; r++) {
        fprintf(f, "%s\n  {\"rank\": %d, \"wall_seconds\": %.9g, ", r ? "," : "", r,
                all_seconds[r * (NCALLS + 1) + NCALLS]);
        json_numbers(f, "calls", all_calls + r * NCALLS, NULL);
        fputs(", ", f);
        json_numbers(f, "seconds", NULL, all_seconds + r * (NCALLS + 1));
        fputs(", ", f);
        json_numbers(f, "bytes", all_bytes + r * NCALLS, NULL);
        fputc('}', f);
    }
    fprintf(f, "]}\n");
    fclose(f);
}

/* Rank 0 gathers every rank's figures and prints them; called once, before
 * the library's own MPI_Finalize. */
static void report(void)
{
    int rank = 0, ranks = 1;
    if (reported)
        return;
    reported = 1;
    depth++; /* the report's own calls are not the program's */
    seconds[NCALLS] = now() - t_start;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
    uint64_t *all_calls = NULL, *all_bytes = NULL;
    double *all_seconds = NULL;
    if (rank == 0) {
        all_calls = calloc((size_t)ranks * NCALLS, sizeof *all_calls);
        all_bytes = calloc((size_t)ranks * NCALLS, sizeof *all_bytes);
        all_seconds = calloc((size_t)ranks * (NCALLS + 1), sizeof *all_seconds);
        if (!all_calls || !all_bytes || !all_seconds) {
            fprintf(stderr, "pmpi_profile: out of memory: no report\n");
            free(all_calls), free(all_bytes), free(all_seconds);
            all_calls = all_bytes = NULL, all_seconds = NULL;
        }
    }
    PMPI_Gather(calls, NCALLS, MPI_UINT64_T, all_calls, NCALLS, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    PMPI_Gather(bytes, NCALLS, MPI_UINT64_T, all_bytes, NCALLS, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    PMPI_Gather(seconds, NCALLS + 1, MPI_DOUBLE, all_seconds, NCALLS + 1, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    depth--;
    if (rank != 0 || !all_calls)
        return;
    uint64_t sum_calls[NCALLS] = {0}, sum_bytes[NCALLS] = {0};
    double sum_seconds[NCALLS] = {0}, max_seconds[NCALLS] = {0}, wall = 0;
    for (int r = 0; r < ranks; r++) {
        const double *t = all_seconds + r * (NCALLS + 1);
        for (int i = 0; i < NCALLS; i++) {
            sum_calls[i] += all_calls[r * NCALLS + i];
            sum_bytes[i] += all_bytes[r * NCALLS + i];
            sum_seconds[i] += t[i];
            if (t[i] > max_seconds[i])
                max_seconds[i] = t[i];
        }
        if (t[NCALLS] > wall)
            wall = t[NCALLS];
    }
    const char *path = getenv("PMPI_PROFILE_OUT");
    FILE *out = path && *path ? fopen(path, "w") : stderr;
    if (!out) {
        perror(path);
        out = stderr;
    }
    char title[64];
    snprintf(title, sizeof title, "all %d ranks", ranks);
    print_table(out, title, sum_calls, sum_seconds, max_seconds, sum_bytes, wall, ranks);
    const char *per_rank = getenv("PMPI_PROFILE_PER_RANK");
    if (per_rank && atoi(per_rank) > 0)
        for (int r = 0; r < ranks; r++) {
            const double *t = all_seconds + r * (NCALLS + 1);
            snprintf(title, sizeof title, "rank %d", r);
            print_table(out, title, all_calls + r * NCALLS, t, t, all_bytes + r * NCALLS,
                        t[NCALLS], 1);
        }
    if (out != stderr)
        fclose(out);
    const char *json = getenv("PMPI_PROFILE_JSON");
    if (json && *json)
        write_json(json, ranks, all_calls, all_seconds, all_bytes);
    free(all_calls);
    free(all_bytes);
    free(all_seconds);
}

/* ---- the C wrappers ----
 * Functions of one signature share a macro that writes the wrapper; the
 * bytes are an expression of its parameters. */

/* MPI_Send, MPI_Ssend. */
#define WRAP_SEND(name, id, nbytes)                                                            \
    int MPI_##name(const void *buf, int count, MPI_Datatype type, int dest, int tag,           \
                   MPI_Comm comm)                                                              \
    {                                                                                          \
        int rc;                                                                                \
        PROFILED(id, nbytes, rc = PMPI_##name(buf, count, type, dest, tag, comm));             \
        return rc;                                                                             \
    }
WRAP_SEND(Send, SEND, typed_bytes(count, type))
WRAP_SEND(Ssend, SSEND, typed_bytes(count, type))

/* MPI_Isend (buf const), MPI_Irecv. */
#define WRAP_NONBLOCKING(name, id, qualifier, nbytes)                                          \
    int MPI_##name(qualifier void *buf, int count, MPI_Datatype type, int peer, int tag,       \
                   MPI_Comm comm, MPI_Request *request)                                        \
    {                                                                                          \
        int rc;                                                                                \
        PROFILED(id, nbytes, rc = PMPI_##name(buf, count, type, peer, tag, comm, request));    \
        return rc;                                                                             \
    }
WRAP_NONBLOCKING(Isend, ISEND, const, typed_bytes(count, type))
WRAP_NONBLOCKING(Irecv, IRECV, , typed_bytes(count, type))

/* MPI_Alltoall, MPI_Allgather. */
#define WRAP_EXCHANGE(name, id, nbytes)                                                        \
    int MPI_##name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,   \
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)                        \
    {                                                                                          \
        int rc;                                                                                \
        PROFILED(id, nbytes, rc = PMPI_##name(sendbuf, sendcount, sendtype, recvbuf,           \
                                              recvcount, recvtype, comm));                     \
        return rc;                                                                             \
    }
WRAP_EXCHANGE(Alltoall, ALLTOALL, per_rank_bytes(sendcount, sendtype, comm))
WRAP_EXCHANGE(Allgather, ALLGATHER, typed_bytes(sendcount, sendtype))

/* MPI_Gather, MPI_Scatter: a rank's bytes are its own block. */
#define WRAP_ROOTED_EXCHANGE(name, id, nbytes)                                                 \
    int MPI_##name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,   \
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)              \
    {                                                                                          \
        int rc;                                                                                \
        PROFILED(id, nbytes, rc = PMPI_##name(sendbuf, sendcount, sendtype, recvbuf,           \
                                              recvcount, recvtype, root, comm));               \
        return rc;                                                                             \
    }
WRAP_ROOTED_EXCHANGE(Gather, GATHER, typed_bytes(sendcount, sendtype))
WRAP_ROOTED_EXCHANGE(Scatter, SCATTER, typed_bytes(recvcount, recvtype))

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    int rc;
    PROFILED(RECV, typed_bytes(count, type),
             rc = PMPI_Recv(buf, count, type, source, tag, comm, status));
    return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    int rc;
    PROFILED(SENDRECV, typed_bytes(sendcount, sendtype) + typed_bytes(recvcount, recvtype),
             rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                                recvtype, source, recvtag, comm, status));
    return rc;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int rc;
    PROFILED(WAIT, 0, rc = PMPI_Wait(request, status));
    return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    int rc;
    PROFILED(WAITALL, 0, rc = PMPI_Waitall(count, requests, statuses));
    return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int rc;
    PROFILED(WAITANY, 0, rc = PMPI_Waitany(count, requests, index, status));
    return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int rc;
    PROFILED(TEST, 0, rc = PMPI_Test(request, flag, status));
    return rc;
}

int MPI_Barrier(MPI_Comm comm)
{
    int rc;
    PROFILED(BARRIER, 0, rc = PMPI_Barrier(comm));
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int rc;
    PROFILED(BCAST, typed_bytes(count, type), rc = PMPI_Bcast(buf, count, type, root, comm));
    return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    int rc;
    PROFILED(REDUCE, typed_bytes(count, type),
             rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm));
    return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    int rc;
    PROFILED(ALLREDUCE, typed_bytes(count, type),
             rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm));
    return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc;
    PROFILED(ALLTOALLV, alltoallv_bytes(sendcounts, sendtype, comm),
             rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm));
    return rc;
}

/* The wall time counts from here: a library's start-up is not the
 * program's time in MPI. */
int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    t_start = now();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    t_start = now();
    return rc;
}

int MPI_Finalize(void)
{
    report();
    return PMPI_Finalize();
}

/* ---- the Fortran wrappers (gfortran's names: lower case, one underscore;
 * every argument by reference, handles as MPI_Fint) ---- */

typedef MPI_Fint fint;
typedef void f_p2p_fn(void *, fint *, fint *, fint *, fint *, fint *, fint *);
typedef void f_p2p_more_fn(void *, fint *, fint *, fint *, fint *, fint *, fint *, fint *);
typedef void f_sendrecv_fn(void *, fint *, fint *, fint *, fint *, void *, fint *, fint *, fint *,
                           fint *, fint *, fint *, fint *);
typedef void f_wait_fn(fint *, fint *, fint *);
typedef void f_waitall_fn(fint *, fint *, fint *, fint *);
typedef void f_waitany_fn(fint *, fint *, fint *, fint *, fint *);
typedef void f_test_fn(fint *, fint *, fint *, fint *);
typedef void f_comm_fn(fint *, fint *);
typedef void f_bcast_fn(void *, fint *, fint *, fint *, fint *, fint *);
typedef void f_reduce_fn(void *, void *, fint *, fint *, fint *, fint *, fint *, fint *);
typedef void f_allreduce_fn(void *, void *, fint *, fint *, fint *, fint *, fint *);
typedef void f_exchange_fn(void *, fint *, fint *, void *, fint *, fint *, fint *, fint *);
typedef void f_rooted_exchange_fn(void *, fint *, fint *, void *, fint *, fint *, fint *, fint *,
                                  fint *);
typedef void f_alltoallv_fn(void *, fint *, fint *, fint *, void *, fint *, fint *, fint *,
                            fint *, fint *);
typedef void f_finalize_fn(fint *); /* also mpi_init_ */
typedef void f_init_thread_fn(fint *, fint *, fint *);

/* The MPI library's own Fortran entry point (pmpi_x_), found on first use. */
static void *fortran_next(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn) {
        fprintf(stderr, "pmpi_profile: %s not found in the MPI library's Fortran binding\n",
                name);
        abort();
    }
    return fn;
}

#define NEXT(type, name)                                                                        \
    static type *next_;                                                                         \
    if (!next_)                                                                                 \
        next_ = (type *)fortran_next(#name)

/* mpi_send_, mpi_ssend_. */
#define WRAP_F_SEND(name, id)                                                                  \
    void mpi_##name##_(void *buf, fint *count, fint *type, fint *dest, fint *tag, fint *comm,  \
                       fint *ierr)                                                             \
    {                                                                                          \
        NEXT(f_p2p_fn, pmpi_##name##_);                                                        \
        PROFILED(id, fortran_bytes(count, type), next_(buf, count, type, dest, tag, comm, ierr)); \
    }
WRAP_F_SEND(send, SEND)
WRAP_F_SEND(ssend, SSEND)

/* mpi_recv_ (status), mpi_isend_ and mpi_irecv_ (request). */
#define WRAP_F_P2P_MORE(name, id)                                                              \
    void mpi_##name##_(void *buf, fint *count, fint *type, fint *peer, fint *tag, fint *comm,  \
                       fint *status_or_request, fint *ierr)                                    \
    {                                                                                          \
        NEXT(f_p2p_more_fn, pmpi_##name##_);                                                   \
        PROFILED(id, fortran_bytes(count, type),                                               \
                 next_(buf, count, type, peer, tag, comm, status_or_request, ierr));           \
    }
WRAP_F_P2P_MORE(recv, RECV)
WRAP_F_P2P_MORE(isend, ISEND)
WRAP_F_P2P_MORE(irecv, IRECV)

/* mpi_alltoall_, mpi_allgather_. */
#define WRAP_F_EXCHANGE(name, id, nbytes)                                                      \
    void mpi_##name##_(void *sendbuf, fint *sendcount, fint *sendtype, void *recvbuf,          \
                       fint *recvcount, fint *recvtype, fint *comm, fint *ierr)                \
    {                                                                                          \
        NEXT(f_exchange_fn, pmpi_##name##_);                                                   \
        PROFILED(id, nbytes,                                                                   \
                 next_(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr)); \
    }
WRAP_F_EXCHANGE(alltoall, ALLTOALL,
                per_rank_bytes(*sendcount, PMPI_Type_f2c(*sendtype), PMPI_Comm_f2c(*comm)))
WRAP_F_EXCHANGE(allgather, ALLGATHER, fortran_bytes(sendcount, sendtype))

/* mpi_gather_, mpi_scatter_. */
#define WRAP_F_ROOTED_EXCHANGE(name, id, nbytes)                                               \
    void mpi_##name##_(void *sendbuf, fint *sendcount, fint *sendtype, void *recvbuf,          \
                       fint *recvcount, fint *recvtype, fint *root, fint *comm, fint *ierr)    \
    {                                                                                          \
        NEXT(f_rooted_exchange_fn, pmpi_##name##_);                                            \
        PROFILED(id, nbytes, next_(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, \
                                   root, comm, ierr));                                         \
    }
WRAP_F_ROOTED_EXCHANGE(gather, GATHER, fortran_bytes(sendcount, sendtype))
WRAP_F_ROOTED_EXCHANGE(scatter, SCATTER, fortran_bytes(recvcount, recvtype))

void mpi_sendrecv_(void *sendbuf, fint *sendcount, fint *sendtype, fint *dest, fint *sendtag,
                   void *recvbuf, fint *recvcount, fint *recvtype, fint *source, fint *recvtag,
                   fint *comm, fint *status, fint *ierr)
{
    NEXT(f_sendrecv_fn, pmpi_sendrecv_);
    PROFILED(SENDRECV, fortran_bytes(sendcount, sendtype) + fortran_bytes(recvcount, recvtype),
             next_(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                   source, recvtag, comm, status, ierr));
}

void mpi_wait_(fint *request, fint *status, fint *ierr)
{
    NEXT(f_wait_fn, pmpi_wait_);
    PROFILED(WAIT, 0, next_(request, status, ierr));
}

void mpi_waitall_(fint *count, fint *requests, fint *statuses, fint *ierr)
{
    NEXT(f_waitall_fn, pmpi_waitall_);
    PROFILED(WAITALL, 0, next_(count, requests, statuses, ierr));
}

void mpi_waitany_(fint *count, fint *requests, fint *index, fint *status, fint *ierr)
{
    NEXT(f_waitany_fn, pmpi_waitany_);
    PROFILED(WAITANY, 0, next_(count, requests, index, status, ierr));
}

void mpi_test_(fint *request, fint *flag, fint *status, fint *ierr)
{
    NEXT(f_test_fn, pmpi_test_);
    PROFILED(TEST, 0, next_(request, flag, status, ierr));
}

void mpi_barrier_(fint *comm, fint *ierr)
{
    NEXT(f_comm_fn, pmpi_barrier_);
    PROFILED(BARRIER, 0, next_(comm, ierr));
}

void mpi_bcast_(void *buf, fint *count, fint *type, fint *root, fint *comm, fint *ierr)
{
    NEXT(f_bcast_fn, pmpi_bcast_);
    PROFILED(BCAST, fortran_bytes(count, type), next_(buf, count, type, root, comm, ierr));
}

void mpi_reduce_(void *sendbuf, void *recvbuf, fint *count, fint *type, fint *op, fint *root,
                 fint *comm, fint *ierr)
{
    NEXT(f_reduce_fn, pmpi_reduce_);
    PROFILED(REDUCE, fortran_bytes(count, type),
             next_(sendbuf, recvbuf, count, type, op, root, comm, ierr));
}

void mpi_allreduce_(void *sendbuf, void *recvbuf, fint *count, fint *type, fint *op, fint *comm,
                    fint *ierr)
{
    NEXT(f_allreduce_fn, pmpi_allreduce_);
    PROFILED(ALLREDUCE, fortran_bytes(count, type),
             next_(sendbuf, recvbuf, count, type, op, comm, ierr));
}

void mpi_alltoallv_(void *sendbuf, fint *sendcounts, fint *sdispls, fint *sendtype, void *recvbuf,
                    fint *recvcounts, fint *rdispls, fint *recvtype, fint *comm, fint *ierr)
{
    NEXT(f_alltoallv_fn, pmpi_alltoallv_);
    PROFILED(ALLTOALLV,
             alltoallv_bytes(sendcounts, PMPI_Type_f2c(*sendtype), PMPI_Comm_f2c(*comm)),
             next_(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                   recvtype, comm, ierr));
}

void mpi_init_(fint *ierr)
{
    NEXT(f_finalize_fn, pmpi_init_);
    next_(ierr);
    t_start = now();
}

void mpi_init_thread_(fint *required, fint *provided, fint *ierr)
{
    NEXT(f_init_thread_fn, pmpi_init_thread_);
    next_(required, provided, ierr);
    t_start = now();
}

void mpi_finalize_(fint *ierr)
{
    NEXT(f_finalize_fn, pmpi_finalize_);
    report();
    next_(ierr);
}
