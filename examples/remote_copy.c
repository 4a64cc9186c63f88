/* Symmetric memory and remote copies with notification (seed 004, NICAM).
 *
 * 1. A cyclic shift without a barrier: every rank pushes its row into the
 *    same symmetric array of its right neighbour with fmpl_put_notify, and
 *    the note stores a sequence value (the step number) into a symmetric
 *    flag there.  The left neighbour waits for "at least step k" and may
 *    run ahead: a sequence value never comes back, so nothing is missed or
 *    taken twice.  Two buffers, used in turn, keep a fast sender from
 *    overwriting a row its neighbour has not read yet.
 * 2. Counting: every rank puts one value into rank 0's table with a COUNT
 *    note; rank 0 waits until the counter says all have arrived.
 * 3. A third-party copy: rank 0 asks the last rank to copy its row into
 *    rank 1's array, without being either end; fmpl_copy_sync tells rank 0
 *    when it is delivered. */
#include <fmpl.h>
#include <stdio.h>
#include <string.h>

/* Any error ends the job, naming the call (the launcher reports it). */
#define TRY(call) try_call((call), #call)
static void try_call(int rc, const char *what)
{
    if (rc != FMPL_SUCCESS)
        fmpl_abort(rc, what);
}

enum { ROW = 1024, STEPS = 100 };

int main(void)
{
    int rank, size, bad = 0;
    TRY(fmpl_init(NULL, NULL, 0));
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &rank));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &size));
    const fmpl_comm world = FMPL_COMM_WORLD;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* One call on every rank, one address on every rank. */
    double (*row)[ROW] = fmpl_alloc_symmetric(2 * sizeof *row, world); /* two buffers */
    uint64_t *words = fmpl_alloc_symmetric(3 * sizeof *words, world);
    double *table = fmpl_alloc_symmetric((size_t)size * sizeof *table, world);
    if (!row || !words || !table)
        fmpl_abort(FMPL_ERR_NO_MEMORY, "fmpl_alloc_symmetric");
    uint64_t *step_flag = &words[0], *ack = &words[1], *arrived = &words[2];
    memset(words, 0, 3 * sizeof *words);
    TRY(fmpl_barrier(world)); /* every word is 0 before anyone writes one */

    /* 1. Shift a row to the right STEPS times. */
    double mine[ROW];
    for (int i = 0; i < ROW; i++)
        mine[i] = rank * 1000.0 + i;
    for (int k = 1; k <= STEPS; k++) {
        /* Buffer k % 2 of the right neighbour is free once it has read step
         * k - 2: its acknowledgement (a sequence value too) says so. */
        if (k > 2)
            TRY(fmpl_wait_count(ack, (uint64_t)(k - 2)));
        fmpl_notify note = {FMPL_NOTIFY_SET, step_flag, (uint64_t)k};
        TRY(fmpl_put_notify(mine, row[k % 2], sizeof mine, right, world, &note));
        TRY(fmpl_wait_count(step_flag, (uint64_t)k)); /* the left neighbour's step k */
        memcpy(mine, row[k % 2], sizeof mine);       /* what we pass on next */
        fmpl_notify done = {FMPL_NOTIFY_SET, ack, (uint64_t)k};
        TRY(fmpl_put_notify(NULL, NULL, 0, left, world, &done)); /* a pure notification */
    }
    /* After STEPS shifts the row came from rank - STEPS (mod size). */
    int from = ((rank - STEPS) % size + size) % size;
    for (int i = 0; i < ROW; i++)
        bad += mine[i] != from * 1000.0 + i;

    /* 2. Everyone reports into rank 0's table, counted there. */
    double value = rank + 0.5;
    fmpl_notify count = {FMPL_NOTIFY_COUNT, arrived, 0};
    TRY(fmpl_put_notify(&value, &table[rank], sizeof value, 0, world, &count));
    if (rank == 0) {
        TRY(fmpl_wait_count(arrived, (uint64_t)size));
        for (int r = 0; r < size; r++)
            bad += table[r] != r + 0.5;
    }

    /* 3. Rank 0 has the last rank copy its row into rank 1's first buffer. */
    TRY(fmpl_barrier(world)); /* everyone is done with the shift's buffers */
    if (rank == 0 && size > 2) {
        TRY(fmpl_copy(size - 1, row[STEPS % 2], 1, row[0], sizeof *row, world, NULL));
        TRY(fmpl_copy_sync(world)); /* delivered at rank 1 */
    }
    TRY(fmpl_barrier(world));
    if (rank == 1 && size > 2) {
        int last_from = ((size - 1 - STEPS) % size + size) % size;
        for (int i = 0; i < ROW; i++)
            bad += row[0][i] != last_from * 1000.0 + i;
    }

    TRY(fmpl_free_symmetric(table, world));
    TRY(fmpl_free_symmetric(words, world));
    TRY(fmpl_free_symmetric(row, world));
    if (bad)
        fprintf(stderr, "rank %d: %d wrong values\n", rank, bad);
    else if (rank == 0)
        printf("remote_copy: %d shifts, %d reports and a third-party copy checked on %d ranks\n",
               STEPS, size, size);
    fmpl_finalize();
    return bad != 0;
}
