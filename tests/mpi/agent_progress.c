/* The agent (FMPL_AGENT=thread) progresses a rank's communication while
 * that rank computes without calling MPI:
 *  p2p      rank 0 MPI_Isend 4 MiB (rendezvous: the receiver moves the
 *           data) to rank 1, which posted MPI_Irecv and then computes until
 *           rank 0's MPI_Wait has returned, signalled through a shared page
 *           outside MPI.  Without progress on rank 1 that wait never ends.
 *  iallreduce / ibcast / persistent allreduce: the last rank computes
 *           until every other rank's MPI_Wait has returned.
 *  rma      rank 1 locks rank 0's window, puts 1 MiB and unlocks while rank
 *           0 computes (over the network a passive target's memory is
 *           written only while it polls: its agent does).
 *  idle     with nothing outstanding, a rank that sleeps 400 ms uses
 *           almost no CPU time: the agent sleeps too.
 * Data are checked word for word afterwards. */
#include "check.h"

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BIG (4 << 20)
#define INTS (256 * 1024)
#define LIMIT_S 30.0

static int me, np;
static volatile int *oob; /* [round * 64 + rank]: rank finished its wait in round */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void oob_open(void)
{
    char name[64];
    if (me == 0)
        snprintf(name, sizeof name, "/fmpl-agent-test-%d", (int)getpid());
    CHECK_OK(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD));
    int fd = me == 0 ? shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600) : -1;
    if (me == 0)
        CHECK(fd >= 0 && ftruncate(fd, 65536) == 0, "shared page %s", name);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me != 0)
        fd = shm_open(name, O_RDWR, 0600);
    CHECK(fd >= 0, "shm_open %s", name);
    oob = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(oob != MAP_FAILED, "mmap");
    close(fd);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        shm_unlink(name);
}

static void mark_done(int round) { __atomic_store_n(&oob[round * 64 + me], 1, __ATOMIC_SEQ_CST); }

/* Compute, without any MPI call, until the ranks in [first, last] have
 * marked `round` done; fails after LIMIT_S. */
static double compute_until(int round, int first, int last, const char *what)
{
    double x = 1.0, t0 = now();
    for (;;) {
        int all = 1;
        for (int r = first; r <= last; r++)
            if (r != me && !__atomic_load_n(&oob[round * 64 + r], __ATOMIC_SEQ_CST))
                all = 0;
        if (all)
            return x;
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
        if (now() - t0 > LIMIT_S) {
            fprintf(stderr,
                    "FAIL [rank %d] %s: the other ranks did not complete within %.0f s while "
                    "this rank computed: nothing progressed its part (is the agent on? "
                    "FMPL_AGENT=thread)\n",
                    me, what, LIMIT_S);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        sched_yield();
    }
}

static void test_p2p(int round)
{
    if (np < 2 || me > 1)
        return;
    unsigned char *buf = malloc(BIG);
    CHECK(buf, "no memory");
    MPI_Request r;
    if (me == 0) {
        for (int i = 0; i < BIG; i++)
            buf[i] = (unsigned char)(i * 7 + 3);
        CHECK_OK(MPI_Isend(buf, BIG, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        mark_done(round);
    } else {
        memset(buf, 0, BIG);
        CHECK_OK(MPI_Irecv(buf, BIG, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &r));
        compute_until(round, 0, 0, "4 MiB MPI_Isend to a receiver that computes");
        MPI_Status st;
        CHECK_OK(MPI_Wait(&r, &st));
        int n;
        MPI_Get_count(&st, MPI_BYTE, &n);
        CHECK(n == BIG, "received %d bytes, expected %d", n, BIG);
        for (int i = 0; i < BIG; i++)
            CHECK(buf[i] == (unsigned char)(i * 7 + 3), "byte %d is %d", i, buf[i]);
    }
    free(buf);
}

/* kind 0: MPI_Iallreduce, 1: MPI_Ibcast, 2: MPI_Allreduce_init started twice */
static void test_coll(int kind, int round)
{
    int *in = malloc(INTS * sizeof(int)), *out = malloc(INTS * sizeof(int));
    CHECK(in && out, "no memory");
    const char *what = kind == 0 ? "MPI_Iallreduce 1 MiB"
                                 : kind == 1 ? "MPI_Ibcast 1 MiB" : "MPI_Allreduce_init 1 MiB";
    MPI_Request r;
    if (kind == 2)
        CHECK_OK(MPI_Allreduce_init(in, out, INTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &r));
    int starts = kind == 2 ? 2 : 1;
    for (int s = 0; s < starts; s++) {
        int rd = round + s;
        for (int i = 0; i < INTS; i++) {
            in[i] = kind == 1 ? (me == 0 ? i ^ (rd * 31) : -1) : i + me * 3 + rd;
            out[i] = -1;
        }
        if (kind == 0)
            CHECK_OK(MPI_Iallreduce(in, out, INTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
        else if (kind == 1)
            CHECK_OK(MPI_Ibcast(in, INTS, MPI_INT, 0, MPI_COMM_WORLD, &r));
        else
            CHECK_OK(MPI_Start(&r));
        if (me == np - 1 && np > 1)
            compute_until(rd, 0, np - 2, what);
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        mark_done(rd);
        long base = (long)np * (np - 1) / 2 * 3;
        for (int i = 0; i < INTS; i++) {
            if (kind == 1)
                CHECK(in[i] == (i ^ (rd * 31)), "%s: element %d is %d", what, i, in[i]);
            else
                CHECK(out[i] == (int)((long)np * (i + rd) + base), "%s: element %d is %d",
                      what, i, out[i]);
        }
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (kind == 2)
        CHECK_OK(MPI_Request_free(&r));
    free(in);
    free(out);
}

static void test_rma(int round)
{
    int *mem;
    MPI_Win win;
    CHECK_OK(MPI_Win_allocate(INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &mem, &win));
    for (int i = 0; i < INTS; i++)
        mem[i] = -1;
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (np >= 2 && me == 1) {
        int *src = malloc(INTS * sizeof(int));
        CHECK(src, "no memory");
        for (int i = 0; i < INTS; i++)
            src[i] = i * 5 + 1;
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_OK(MPI_Put(src, INTS, MPI_INT, 0, 0, INTS, MPI_INT, win));
        CHECK_OK(MPI_Win_unlock(0, win));
        mark_done(round);
        free(src);
    } else if (np >= 2 && me == 0) {
        compute_until(round, 1, 1, "a passive-target put of 1 MiB into a rank that computes");
        CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (int i = 0; i < INTS; i++)
            CHECK(mem[i] == i * 5 + 1, "window element %d is %d", i, mem[i]);
        CHECK_OK(MPI_Win_unlock(0, win));
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_OK(MPI_Win_free(&win));
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void test_idle(void)
{
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    usleep(50 * 1000); /* let the agent finish watching and fall asleep */
    double c0 = cpu_seconds();
    usleep(400 * 1000);
    double used = cpu_seconds() - c0;
    /* Busy polling would use about 0.4 s; a sleeping agent next to nothing. */
    CHECK(used < 0.05, "an idle rank used %.3f s of CPU time in 0.4 s with the agent on", used);
    printf("rank %d: idle 0.4 s cost %.4f s of CPU time\n", me, used);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    oob_open();
    test_p2p(0);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    test_coll(0, 1);
    test_coll(1, 2);
    test_coll(2, 3); /* rounds 3 and 4 */
    test_rma(5);
    test_idle();
    munmap((void *)oob, 65536);
    MPI_Finalize();
    if (me == 0)
        printf("PASS agent_progress (%d ranks)\n", np);
    return 0;
}
