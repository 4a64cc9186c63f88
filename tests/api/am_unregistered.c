/* am_unregistered: a message for a handler id that the target never
 * registered ends the job with a message naming the id (CMake checks the
 * launcher's output for it).  Rank 0 sends id 77 to the last rank, which
 * registered only id 1; everybody then polls.  The last rank's handler
 * lookup ends the job; should it not, every rank gives up after 20 s with
 * a line that does not match what CMake looks for. */
#include "test_util.h"

static void on_one(const fmpl_am_token *t, const uint64_t *args, int nargs,
                   const void *payload, size_t size, void *ctx)
{
    (void)t, (void)args, (void)nargs, (void)payload, (void)size, (void)ctx;
}

int main(void)
{
    tu_init("am_unregistered", 0);
    CALL(fmpl_am_register(1, on_one, NULL));
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    if (tu_rank == 0) {
        uint64_t a = 5;
        CALL(fmpl_am_send(tu_size - 1, 77, &a, 1, NULL, 0, FMPL_COMM_WORLD));
    }
    int handled = 0;
    double t0 = tu_now();
    while (tu_now() - t0 < 20)
        CALL(fmpl_am_poll(&handled));
    printf("am_unregistered: the job went on after an unregistered id (rank %d)\n", tu_rank);
    return 1;
}
