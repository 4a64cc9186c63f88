/* A channel record must not be taken for there before it is: payload of an
 * earlier lap at the position where the next record starts, equal to that
 * record's sequence word, once passed for it ("corrupt channel record",
 * seen over the network).  Run with FMPL_CHANNEL_SIZE=8k (a lap of 128
 * units of 64 bytes) on 2 ranks: rank 0 fills one lap with 2-unit messages
 * whose second unit starts with the sequence a record starting there one
 * lap later would carry (channel.c: position / 64 + 1; the test's pair has
 * no other traffic, so positions count from 0), then one 1-unit message
 * shifts the records by a unit, and it pauses before each of the next ones
 * so that rank 1 polls a position its stale payload occupies.  Every
 * message's bytes are checked. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "chan_stale: " __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                 \
        }                                                                                 \
    } while (0)

enum { LAP_UNITS = 128, PAYLOAD = 96, FIRST = LAP_UNITS / 2, LATER = 8 };

static void pattern(int *m, int k)
{
    for (int i = 0; i < PAYLOAD / 4; i++)
        m[i] = k * 1000 + i;
    /* the second unit starts at payload byte 32: unit 2k + 1 of the first
     * lap, where a record of the second lap would carry 2k + 1 + 128 + 1 */
    if (k < FIRST)
        m[8] = 2 * k + 1 + LAP_UNITS + 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "needs 2 ranks, has %d", size);
    int m[PAYLOAD / 4], want[PAYLOAD / 4];
    struct timespec pause = {0, 20 * 1000 * 1000};
    if (rank == 0) {
        for (int k = 0; k < FIRST; k++) {
            pattern(m, k);
            MPI_Send(m, PAYLOAD, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        }
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* lap consumed */
        MPI_Send(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD);                    /* one unit */
        for (int k = FIRST; k < FIRST + LATER; k++) {
            nanosleep(&pause, NULL); /* rank 1 polls the stale position meanwhile */
            pattern(m, k);
            MPI_Send(m, PAYLOAD, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        }
    } else {
        for (int k = 0; k < FIRST + LATER; k++) {
            if (k == FIRST) {
                MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
                MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            MPI_Status st;
            int n;
            memset(m, 0, sizeof m);
            MPI_Recv(m, PAYLOAD, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &n);
            pattern(want, k);
            CHECK(n == PAYLOAD && memcmp(m, want, sizeof m) == 0,
                  "message %d: %d bytes, or its bytes differ", k, n);
        }
        printf("chan_stale: ok\n");
    }
    MPI_Finalize();
    return 0;
}
