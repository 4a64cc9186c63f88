/* Split-phase barriers for deferred reclamation (NICAM's use): a region
 * that peers may still write into is freed only once a barrier started
 * when it was retired has completed, and that barrier's flag is the
 * region's own first word.  fmpl_barrier_start returns at once, so the
 * rank goes on computing; completed regions are freed whenever it looks. */
#include <fmpl.h>
#include <stdint.h>
#include <stdio.h>

#define TRY(call)                                                              \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != FMPL_SUCCESS)                                               \
            fmpl_abort(rc_, #call);                                            \
    } while (0)

enum { STEPS = 200, PENDING = 64 };

static double work(int step)                  /* the computation between retirements */
{
    double x = step;
    for (int i = 0; i < 1000; i++)
        x = x * 0.999 + 1.0;
    return x;
}

int main(void)
{
    int rank;
    TRY(fmpl_init(NULL, NULL, 0));
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &rank));

    uint64_t *pending[PENDING];               /* retired regions, oldest first */
    int head = 0, tail = 0, freed = 0;
    double sum = 0;
    for (int step = 0; step < STEPS; step++) {
        uint64_t *region = fmpl_alloc(4096);
        if (!region)
            fmpl_abort(1, "no memory");
        sum += work(step);
        /* Retire it: its first word becomes the barrier's flag (0 now). */
        TRY(fmpl_barrier_start(FMPL_COMM_WORLD, region));
        pending[tail++ % PENDING] = region;
        /* Free what every rank has moved past, oldest first. */
        int done = 1;
        while (head < tail && done) {
            TRY(fmpl_barrier_test(pending[head % PENDING], &done));
            if (done) {
                fmpl_free(pending[head++ % PENDING]);
                freed++;
            }
        }
        if (tail - head == PENDING) {         /* never more than PENDING outstanding */
            TRY(fmpl_barrier_wait(pending[head % PENDING]));
            fmpl_free(pending[head++ % PENDING]);
            freed++;
        }
    }
    if (head < tail)                          /* instances complete in order: the last suffices */
        TRY(fmpl_barrier_wait(pending[(tail - 1) % PENDING]));
    for (; head < tail; head++, freed++)
        fmpl_free(pending[head % PENDING]);
    printf("rank %d: %d regions freed after their barriers (work %.1f): %s\n", rank, freed, sum,
           freed == STEPS ? "ok" : "WRONG");
    fflush(stdout);
    TRY(fmpl_finalize());
    return freed != STEPS;
}
