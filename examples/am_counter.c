/* Active messages: every rank adds to a counter on every rank (itself
 * included) by running a handler there, and the handler replies with the
 * counter's value before the addition, like a remote fetch-and-add.  The
 * handlers run inside the target's progress: here inside fmpl_am_poll and
 * the collectives, since no agent thread runs. */
#include <fmpl.h>
#include <stdio.h>

#define TRY(call)                                                              \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != FMPL_SUCCESS)                                               \
            fmpl_abort(rc_, #call);                                            \
    } while (0)

enum { ADD = 1, OLD = 2, ROUNDS = 100 };   /* handler ids, the same on every rank */

static long counter;                       /* what the ADD handlers change */
static long replies, old_sum;              /* what the OLD handlers collect */

/* At the target: add args[0], reply with the value before. */
static void on_add(const fmpl_am_token *token, const uint64_t *args, int nargs,
                   const void *payload, size_t size, void *ctx)
{
    (void)nargs, (void)payload, (void)size, (void)ctx;
    uint64_t old = (uint64_t)counter;
    counter += (long)args[0];
    fmpl_am_reply(token, OLD, &old, 1, NULL, 0);   /* never waits, even when the ring is full */
}

/* Back at the sender. */
static void on_old(const fmpl_am_token *token, const uint64_t *args, int nargs,
                   const void *payload, size_t size, void *ctx)
{
    (void)token, (void)nargs, (void)payload, (void)size, (void)ctx;
    old_sum += (long)args[0];
    replies++;
}

int main(void)
{
    int rank, size;
    TRY(fmpl_init(NULL, NULL, 0));
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &rank));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &size));
    TRY(fmpl_am_register(ADD, on_add, NULL));
    TRY(fmpl_am_register(OLD, on_old, NULL));
    TRY(fmpl_barrier(FMPL_COMM_WORLD));    /* registered everywhere before anyone sends */

    for (int i = 0; i < ROUNDS; i++)
        for (int dst = 0; dst < size; dst++) {
            uint64_t amount = (uint64_t)rank + 1;
            TRY(fmpl_am_send(dst, ADD, &amount, 1, NULL, 0, FMPL_COMM_WORLD));
        }
    while (replies < (long)ROUNDS * size)  /* run handlers until every reply is back */
        TRY(fmpl_am_poll(NULL));
    TRY(fmpl_barrier(FMPL_COMM_WORLD));    /* every rank's additions are done */

    /* Every rank added rank + 1, ROUNDS times, to every counter. */
    long want = (long)ROUNDS * size * (size + 1) / 2;
    int bad = counter != want;
    printf("rank %d: counter %ld (expected %ld), %ld replies: %s\n", rank, counter, want,
           replies, bad ? "WRONG" : "ok");
    fflush(stdout);
    TRY(fmpl_finalize());
    return bad;
}
