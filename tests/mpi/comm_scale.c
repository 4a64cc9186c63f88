/* Communicators scale: 200 alive at once, each used by a collective that
 * needs no areas (a small allreduce) and one that does (a broadcast
 * through the shared-memory ring), then 5000 MPI_Comm_dup / MPI_Comm_free
 * pairs.  Nothing leaks: once every member has freed them and they are
 * reclaimed, the number of teams and the free bytes of this rank's shared
 * heap are back at their start values.  (Looks at the library's internals:
 * the team table and the heap.) */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fabric/fabric.h"
#include "fabric/shm/shm_heap.h"
#include "protocols/team.h"
#include "runtime/runtime.h"

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

enum { ALIVE = 200, LOOPS = 5000, BCAST_INTS = 300 };

static int teams_in_table(int *retired)
{
    int n = 0;
    *retired = 0;
    for (int id = 0; id < FMPL_MAX_TEAMS; id++)
        if (fmpl_teams[id]) {
            n++;
            *retired += fmpl_teams[id]->retired;
        }
    return n;
}

/* After everybody freed: release retired teams (each member does so once
 * all have retired them, member 0 last), then count. */
static int settle(void)
{
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int retired, n;
    for (;;) {
        fmpl_team_reclaim_retired();
        n = teams_in_table(&retired);
        if (!retired)
            break;
        int flag;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        sched_yield();
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    return n;
}

static void bcast_check(MPI_Comm c, int salt)
{
    int buf[BCAST_INTS], rank;
    OK(MPI_Comm_rank(c, &rank));
    for (int i = 0; i < BCAST_INTS; i++)
        buf[i] = rank == 0 ? salt * 1000 + i : -1;
    OK(MPI_Bcast(buf, BCAST_INTS, MPI_INT, 0, c));
    for (int i = 0; i < BCAST_INTS; i++)
        CHECK(buf[i] == salt * 1000 + i, "comm %d: element %d is %d", salt, i, buf[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Warm up what the world communicator allocates at first use. */
    bcast_check(MPI_COMM_WORLD, 1);
    int start_teams = settle();
    size_t start_free = fmpl_heap_free_bytes(fmpl_fab.heap);

    static MPI_Comm comms[ALIVE];
    for (int i = 0; i < ALIVE; i++)
        OK(MPI_Comm_dup(i % 3 || i == 0 ? MPI_COMM_WORLD : comms[i - 1], &comms[i]));
    int retired;
    CHECK(teams_in_table(&retired) == start_teams + ALIVE, "%d teams with %d alive",
          teams_in_table(&retired), ALIVE);
    for (int i = 0; i < ALIVE; i++) {
        int sum = -1;
        OK(MPI_Allreduce(&i, &sum, 1, MPI_INT, MPI_SUM, comms[i]));
        CHECK(sum == i * size, "comm %d: allreduce %d", i, sum);
        bcast_check(comms[i], i);
    }
    for (int i = ALIVE - 1; i >= 0; i--)
        OK(MPI_Comm_free(&comms[i]));
    int n = settle();
    CHECK(n == start_teams, "%d teams after freeing, %d at the start", n, start_teams);
    size_t now_free = fmpl_heap_free_bytes(fmpl_fab.heap);
    CHECK(now_free == start_free, "heap: %zu bytes free, %zu at the start", now_free, start_free);

    for (int i = 0; i < LOOPS; i++) {
        MPI_Comm c;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 500 == 0)
            bcast_check(c, i);
        OK(MPI_Comm_free(&c));
    }
    n = settle();
    CHECK(n == start_teams, "%d teams after the loop, %d at the start", n, start_teams);
    now_free = fmpl_heap_free_bytes(fmpl_fab.heap);
    CHECK(now_free == start_free, "heap after the loop: %zu bytes free, %zu at the start",
          now_free, start_free);

    if (rank == 0)
        printf("mpi comm_scale ok on %d ranks: %d alive, %d dup/free pairs\n", size, ALIVE,
               LOOPS);
    MPI_Finalize();
    return 0;
}
