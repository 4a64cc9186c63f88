/* MPI_THREAD_MULTIPLE under a storm of threads (progress/threads.c): 8
 * threads per rank, each at once:
 *   ring      blocking and nonblocking sends around the ranks with its own
 *             tag, sizes from 8 B to 256 KiB (eager and rendezvous), every
 *             byte checked;
 *   order     a stream of small blocking sends and receives around the
 *             ranks with its own tag: each message is the next in sequence
 *             (MPI's non-overtaking rule while other threads' progress
 *             handles the same channel: MPICH's threads/pt2pt/mt_bsendrecv
 *             once received 5, 3, 4);
 *   any       receives from MPI_ANY_SOURCE with its own tag, each peer's
 *             message counted once;
 *   probe     MPI_Mprobe / MPI_Mrecv races: every thread of a rank probes
 *             with MPI_ANY_TAG on one communicator while the other ranks'
 *             threads send to it; each message is taken exactly once;
 *   coll      MPI_Allreduce, MPI_Bcast and MPI_Barrier on a communicator of
 *             its own (dup'd in order before the threads start);
 *   rma       MPI_Accumulate + MPI_Win_flush into rank 0's window, in one
 *             passive epoch opened by the main thread;
 *   groups    MPI_Comm_create_group on MPI_COMM_WORLD, every thread at once
 *             with its own tag (of the world, then of the ranks of the
 *             thread's parity), an allreduce on each new communicator;
 * then the main thread checks the totals.  Also MPI_Query_thread and
 * MPI_Is_thread_main from the main and the other threads.  A blocking
 * receive in one thread whose message another thread of the same process
 * sends later (self-send across threads) must not hang: the waiting call
 * lets the lock go (threads.c). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { NT = 8, ROUNDS = 100, PROBES = 200, ORDERED = 2000 };

static int rank, size;
static MPI_Comm own[NT], probe_comm, any_comm;
static MPI_Win win;
static long *win_base;
static long probe_taken[NT];

static unsigned char pattern(int src, int t, int round, size_t i)
{
    return (unsigned char)(src * 131 + t * 31 + round * 7 + i);
}

static void ring(int t)
{
    static const size_t sizes[] = {8, 1000, 16384, 70000, 262144};
    size_t max = 262144;
    unsigned char *out = malloc(max), *in = malloc(max);
    CHECK(out && in, "no memory");
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = sizes[(r + t) % 5];
        for (size_t i = 0; i < n; i++)
            out[i] = pattern(rank, t, r, i);
        memset(in, 0, n);
        MPI_Status st;
        if (r % 2) {
            MPI_Request rq[2];
            CHECK_OK(MPI_Irecv(in, (int)n, MPI_BYTE, prev, t, MPI_COMM_WORLD, &rq[0]));
            CHECK_OK(MPI_Isend(out, (int)n, MPI_BYTE, next, t, MPI_COMM_WORLD, &rq[1]));
            CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        } else {
            CHECK_OK(MPI_Sendrecv(out, (int)n, MPI_BYTE, next, t, in, (int)n, MPI_BYTE, prev, t,
                                  MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == t && st.MPI_SOURCE == prev, "status %d %d", st.MPI_SOURCE,
                  st.MPI_TAG);
        }
        for (size_t i = 0; i < n; i++)
            CHECK(in[i] == pattern(prev, t, r, i), "thread %d round %d byte %zu of %zu", t, r,
                  i, n);
    }
    free(out);
    free(in);
}

static void order(int t)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < ORDERED; i++) {
        int got = -1;
        CHECK_OK(MPI_Send(&i, 1, MPI_INT, next, 100 + t, MPI_COMM_WORLD)); /* eager: local */
        CHECK_OK(MPI_Recv(&got, 1, MPI_INT, prev, 100 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == i, "thread %d: message %d of its stream from rank %d arrived as number %d",
              t, got, prev, i);
    }
}

/* Every rank's thread t sends one message per round to every other rank
 * (tag: thread and round); thread t receives them with MPI_ANY_SOURCE. */
static void any_source(int t)
{
    for (int r = 0; r < ROUNDS / 3; r++) {
        MPI_Request rq[64];
        int k = 0, got[64];
        for (int p = 0; p < size; p++)
            if (p != rank) {
                int v = rank * 1000 + t * 10 + r % 10;
                CHECK_OK(MPI_Isend(&v, 1, MPI_INT, p, t * 1000 + r, any_comm, &rq[k]));
                CHECK_OK(MPI_Wait(&rq[k], MPI_STATUS_IGNORE)); /* eager: local */
            }
        int seen = 0;
        for (int m = 0; m < size - 1; m++) {
            MPI_Status st;
            CHECK_OK(MPI_Recv(&got[m], 1, MPI_INT, MPI_ANY_SOURCE, t * 1000 + r, any_comm, &st));
            CHECK(got[m] / 1000 == st.MPI_SOURCE && (got[m] / 10) % 100 == t,
                  "any-source message %d from %d", got[m], st.MPI_SOURCE);
            CHECK(!(seen & (1 << st.MPI_SOURCE)), "two messages from %d in round %d",
                  st.MPI_SOURCE, r);
            seen |= 1 << st.MPI_SOURCE;
        }
    }
}

/* Each rank's threads together send PROBES messages to every other rank;
 * all threads of the receiving rank mprobe with MPI_ANY_TAG until the
 * rank's share is taken (counted in probe_taken). */
static void probes(int t)
{
    int per_thread = PROBES / NT + (t < PROBES % NT);
    for (int p = 0; p < size; p++)
        if (p != rank)
            for (int k = 0; k < per_thread; k++) {
                long v = (long)rank << 32 | (long)(t * 100 + k);
                CHECK_OK(MPI_Send(&v, 1, MPI_LONG, p, t * 100 + k, probe_comm));
            }
    int expect = PROBES * (size - 1);
    for (;;) {
        long taken = 0;
        for (int i = 0; i < NT; i++)
            taken += __atomic_load_n(&probe_taken[i], __ATOMIC_RELAXED);
        if (taken >= expect)
            break;
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        CHECK_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, probe_comm, &flag, &msg, &st));
        if (!flag)
            continue;
        long v = -1;
        CHECK_OK(MPI_Mrecv(&v, 1, MPI_LONG, &msg, &st));
        CHECK((v >> 32) == st.MPI_SOURCE && (v & 0xffffffff) == st.MPI_TAG,
              "probed message %lx from %d tag %d", v, st.MPI_SOURCE, st.MPI_TAG);
        __atomic_fetch_add(&probe_taken[t], 1, __ATOMIC_RELAXED);
    }
}

static void collectives(int t)
{
    for (int r = 0; r < ROUNDS; r++) {
        long v = rank + t + r, sum = 0;
        CHECK_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, own[t]));
        CHECK(sum == (long)size * (size - 1) / 2 + (long)size * (t + r), "allreduce %ld", sum);
        int b[64];
        for (int i = 0; i < 64; i++)
            b[i] = rank == r % size ? t * 1000 + r + i : -1;
        CHECK_OK(MPI_Bcast(b, 64, MPI_INT, r % size, own[t]));
        for (int i = 0; i < 64; i++)
            CHECK(b[i] == t * 1000 + r + i, "bcast thread %d round %d", t, r);
        CHECK_OK(MPI_Barrier(own[t]));
    }
}

static void rma(int t)
{
    for (int r = 0; r < ROUNDS; r++) {
        long one = 1;
        CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, t, 1, MPI_LONG, MPI_SUM, win));
        CHECK_OK(MPI_Win_flush(0, win));
    }
}

static void groups(int t)
{
    MPI_Group world, part;
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    /* Thread t's half: the ranks of t's parity. */
    int half[64], n = 0;
    for (int r = t % 2; r < size && n < 64; r += 2)
        half[n++] = r;
    CHECK_OK(MPI_Group_incl(world, n, half, &part));
    int in_part = 0;
    for (int i = 0; i < n; i++)
        in_part |= half[i] == rank;
    for (int r = 0; r < ROUNDS / 10; r++) {
        MPI_Comm c;
        CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, world, t, &c));
        long one = 1, sum = 0;
        CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, c));
        CHECK(sum == size, "thread %d: allreduce over the world's copy gave %ld", t, sum);
        CHECK_OK(MPI_Comm_free(&c));
        if (!in_part)
            continue;
        CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, part, NT + t, &c));
        CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, c));
        CHECK(sum == n, "thread %d: allreduce over %d members gave %ld", t, n, sum);
        CHECK_OK(MPI_Comm_free(&c));
    }
    MPI_Group_free(&part);
    MPI_Group_free(&world);
}

/* A blocking receive that only another thread of this process satisfies. */
static pthread_barrier_t self_gate;
static void *self_receiver(void *arg)
{
    (void)arg;
    int v = 0;
    pthread_barrier_wait(&self_gate);
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, rank, 4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(v == 77, "self message %d", v);
    return NULL;
}

/* The threads start each phase together, so that their calls overlap. */
static pthread_barrier_t phase;

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    int flag = 1;
    CHECK_OK(MPI_Is_thread_main(&flag));
    CHECK(!flag, "thread %d is not the main thread", t);
    pthread_barrier_wait(&phase);
    ring(t);
    pthread_barrier_wait(&phase);
    order(t);
    pthread_barrier_wait(&phase);
    any_source(t);
    pthread_barrier_wait(&phase);
    probes(t);
    pthread_barrier_wait(&phase);
    collectives(t);
    pthread_barrier_wait(&phase);
    rma(t);
    pthread_barrier_wait(&phase);
    groups(t);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int level = -1, flag = 0;
    CHECK_OK(MPI_Query_thread(&level));
    CHECK(level == MPI_THREAD_MULTIPLE, "MPI_Query_thread: %d", level);
    CHECK_OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "the main thread is not the main thread");

    /* The receiver blocks first; the main thread sends after it. */
    pthread_t rt;
    pthread_barrier_init(&self_gate, NULL, 2);
    pthread_create(&rt, NULL, self_receiver, NULL);
    pthread_barrier_wait(&self_gate);
    int v = 77;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, rank, 4242, MPI_COMM_WORLD));
    pthread_join(rt, NULL);

    for (int t = 0; t < NT; t++)
        CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &own[t]));
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &probe_comm));
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &any_comm));
    CHECK_OK(MPI_Win_allocate(NT * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &win_base, &win));
    memset(win_base, 0, NT * sizeof(long));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_OK(MPI_Win_lock_all(0, win));

    pthread_t th[NT];
    pthread_barrier_init(&phase, NULL, NT);
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(long)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);

    CHECK_OK(MPI_Win_unlock_all(win));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        for (int t = 0; t < NT; t++)
            CHECK(win_base[t] == (long)size * ROUNDS, "window slot %d holds %ld", t, win_base[t]);
    long taken = 0;
    for (int t = 0; t < NT; t++)
        taken += probe_taken[t];
    CHECK(taken == (long)PROBES * (size - 1), "probed %ld messages", taken);
    CHECK_OK(MPI_Win_free(&win));
    for (int t = 0; t < NT; t++)
        CHECK_OK(MPI_Comm_free(&own[t]));
    CHECK_OK(MPI_Comm_free(&probe_comm));
    CHECK_OK(MPI_Comm_free(&any_comm));
    MPI_Finalize();
    if (rank == 0)
        printf("threads ok: %d ranks x %d threads\n", size, NT);
    return 0;
}
