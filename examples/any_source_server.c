/* Rank 0 serves requests from all other ranks in the order they arrive.
 * Requests travel in the any-source domain (fmpl_send_any / fmpl_recv_any);
 * each reply goes back with an ordinary indexed send on the index the
 * client named in its request.  Clients post the receives for their replies
 * before sending the requests, so the server's sends find the receive
 * already posted and never wait for a slow client. */
#include <fmpl.h>
#include <stdio.h>
#include <string.h>

#define TRY(call)                                                              \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != FMPL_SUCCESS)                                               \
            fmpl_abort(rc_, #call);                                            \
    } while (0)

enum { NREQ = 4, REQUEST = 0 };      /* requests per client; their any-source index */

struct request { int reply_index; int x; };

static long answer(int x) { return (long)x * x; }

int main(void)
{
    int rank, size, bad = 0;
    TRY(fmpl_init(NULL, NULL, 0));
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &rank));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &size));

    if (rank == 0) {
        int served[64] = {0};            /* per client (examples run with few ranks) */
        char order[256] = "";
        for (int n = 0; n < (size - 1) * NREQ; n++) {
            struct request rq;
            fmpl_status st;
            /* The earliest-arrived request from any rank; status says who. */
            TRY(fmpl_recv_any(&rq, sizeof rq, REQUEST, FMPL_COMM_WORLD, &st));
            long y = answer(rq.x);
            TRY(fmpl_send(&y, sizeof y, st.source, rq.reply_index, FMPL_COMM_WORLD));
            if (st.source < 64)
                served[st.source]++;
            if (strlen(order) < sizeof order - 4)
                snprintf(order + strlen(order), sizeof order - strlen(order), " %d", st.source);
        }
        for (int c = 1; c < size && c < 64; c++)
            bad += served[c] != NREQ;
        printf("server: %d requests, sources in arrival order:%s: %s\n", (size - 1) * NREQ,
               order, bad ? "WRONG COUNTS" : "ok");
    } else {
        long reply[NREQ];
        struct request rq[NREQ];
        for (int k = 0; k < NREQ; k++)   /* replies on indices 0 .. NREQ-1 */
            TRY(fmpl_irecv(&reply[k], sizeof reply[k], 0, k, FMPL_COMM_WORLD));
        for (int k = 0; k < NREQ; k++) {
            rq[k] = (struct request){.reply_index = k, .x = rank * 10 + k};
            TRY(fmpl_send_any(&rq[k], sizeof rq[k], 0, REQUEST, FMPL_COMM_WORLD));
        }
        for (int k = 0; k < NREQ; k++) {
            TRY(fmpl_irecv_wait(0, k, FMPL_COMM_WORLD, NULL));
            bad += reply[k] != answer(rq[k].x);
        }
        printf("client %d: %d replies: %s\n", rank, NREQ, bad ? "WRONG DATA" : "ok");
    }
    fflush(stdout);   /* a failing rank ends the job: get our line out first */
    TRY(fmpl_finalize());
    return bad != 0;
}
