/* A by-reference eager send does not wait for a receiver that is away.
 *
 * Rank 0 sends 4 KiB from the shared heap (MPI_Alloc_mem) with MPI_Send:
 * by reference (tag_match.c), so rank 1 could copy straight from it.  Rank
 * 1 sleeps for 1.5 s before it receives.  FMPL_EAGER_REF_WAIT is set to a
 * minute (CMakeLists.txt), so only the spin budget (FMPL_SPIN_COUNT idle
 * polls) can end the sender's wait: it must copy the payload into the
 * channel and return long before rank 1 wakes, instead of yielding its
 * core and polling until then.  Rank 0 then overwrites its buffer and
 * sends how long MPI_Send took; rank 1 checks it received the bytes as
 * they were at the send, and that the send returned in well under the
 * 1.5 s sleep (a bound 30 000 times the expected microseconds, so that a
 * loaded machine cannot fail it; the old behaviour took the full sleep). */
#include "check.h"

#include <string.h>
#include <unistd.h>

#define BYTES 4096

static unsigned char pattern(size_t i) { return (unsigned char)(i * 37u + 11u); }

int main(int argc, char **argv)
{
    int rank, size;
    CHECK_OK(MPI_Init(&argc, &argv));
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 2, "run with 2 ranks, not %d", size);
    unsigned char *buf;
    CHECK_OK(MPI_Alloc_mem(BYTES, MPI_INFO_NULL, &buf));
    for (int round = 0; round < 3; round++) {
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            for (size_t i = 0; i < BYTES; i++)
                buf[i] = pattern(i + (size_t)round);
            double t0 = MPI_Wtime();
            CHECK_OK(MPI_Send(buf, BYTES, MPI_BYTE, 1, round, MPI_COMM_WORLD));
            double took = MPI_Wtime() - t0;
            memset(buf, 0xee, BYTES); /* the receiver must not see this */
            CHECK_OK(MPI_Send(&took, 1, MPI_DOUBLE, 1, 100 + round, MPI_COMM_WORLD));
        } else {
            usleep(1500 * 1000);
            MPI_Status st;
            memset(buf, 0, BYTES);
            CHECK_OK(MPI_Recv(buf, BYTES, MPI_BYTE, 0, round, MPI_COMM_WORLD, &st));
            int count;
            CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK(count == BYTES, "round %d: received %d bytes, expected %d", round, count, BYTES);
            for (size_t i = 0; i < BYTES; i++)
                CHECK(buf[i] == pattern(i + (size_t)round),
                      "round %d: byte %zu is 0x%02x, expected 0x%02x", round, i, buf[i],
                      pattern(i + (size_t)round));
            double took;
            CHECK_OK(MPI_Recv(&took, 1, MPI_DOUBLE, 0, 100 + round, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
            CHECK(took < 0.5,
                  "round %d: MPI_Send waited %.3f s for a receiver that was asleep 1.5 s "
                  "(it should have inlined the payload once its spin budget was spent)",
                  round, took);
        }
    }
    CHECK_OK(MPI_Free_mem(buf));
    CHECK_OK(MPI_Finalize());
    return 0;
}
