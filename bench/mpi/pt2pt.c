/* mpi-suite: point-to-point benchmarks between ranks 0 and 1 (other ranks
 * idle), as the OSU Micro-Benchmarks measure them:
 *   latency   osu_latency: blocking MPI_Send/MPI_Recv ping-pong, one-way
 *             latency = round trip / 2;
 *   bw        osu_bw: rank 0 posts WINDOW MPI_Isend, MPI_Waitall, then waits
 *             for a 4-byte acknowledgement; rank 1 pre-posts WINDOW MPI_Irecv;
 *             MB/s = size * WINDOW per round;
 *   bibw      osu_bibw: both ranks post WINDOW MPI_Irecv and WINDOW MPI_Isend;
 *   msgrate   the bw loop counted in messages per second (osu_mbw_mr with
 *             one pair), up to 64 KiB (above, it is bw divided by the size).
 * As in OSU, the timed windows reuse one send and one receive buffer; the
 * checked round gives each message its own pattern and receive area (as many
 * as the buffers hold), so every message must land where it was posted. */
#include "suite.h"

#define TAG_PINGPONG 2
#define TAG_WINDOW 3
#define TAG_ACK 4

static int round_trip(long size, unsigned char *out, unsigned char *in)
{
    int peer = 1 - rank, n = (int)size;
    if (rank == 0) {
        TRY(MPI_Send(out, n, MPI_BYTE, peer, TAG_PINGPONG, MPI_COMM_WORLD));
        return MPI_Recv(in, n, MPI_BYTE, peer, TAG_PINGPONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    TRY(MPI_Recv(in, n, MPI_BYTE, peer, TAG_PINGPONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return MPI_Send(out, n, MPI_BYTE, peer, TAG_PINGPONG, MPI_COMM_WORLD);
}

static int latency_kernel(struct run *r, long iters, double *secs)
{
    *secs = 0;
    if (rank > 1)
        return MPI_SUCCESS;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        TRY(round_trip(r->size, sbuf, rbuf));
    *secs = MPI_Wtime() - t0;
    return MPI_SUCCESS;
}

static int latency_verify(struct run *r)
{
    if (rank > 1)
        return MPI_SUCCESS;
    fill_pattern(sbuf, r->size, (unsigned)rank + 1);
    fill_not_pattern(rbuf, r->size, 2u - (unsigned)rank);
    fill_guard(rbuf + r->size);
    TRY(round_trip(r->size, sbuf, rbuf));
    check_pattern(r, "ping-pong", rbuf, r->size, 2u - (unsigned)rank);
    return MPI_SUCCESS;
}

/* One window: nmsg messages of size bytes, message j at offset j * stride of
 * the send and the receive buffer.  bidirectional: both ranks send and
 * receive; otherwise rank 0 sends, rank 1 receives and acknowledges. */
static int window_round(long size, int nmsg, long stride, int bidirectional)
{
    MPI_Request req[2 * WINDOW];
    int n = 0, peer = 1 - rank, count = (int)size;
    if (bidirectional || rank == 1)
        for (int j = 0; j < nmsg; j++)
            TRY(MPI_Irecv(rbuf + j * stride, count, MPI_BYTE, peer, TAG_WINDOW, MPI_COMM_WORLD,
                          &req[n++]));
    if (bidirectional || rank == 0)
        for (int j = 0; j < nmsg; j++)
            TRY(MPI_Isend(sbuf + j * stride, count, MPI_BYTE, peer, TAG_WINDOW, MPI_COMM_WORLD,
                          &req[n++]));
    TRY(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
    if (bidirectional)
        return MPI_SUCCESS;
    int ack = 0;
    if (rank == 0)
        return MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
}

static int window_kernel(struct run *r, long iters, double *secs, int bidirectional)
{
    *secs = 0;
    if (rank > 1)
        return MPI_SUCCESS;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        TRY(window_round(r->size, WINDOW, 0, bidirectional));
    *secs = MPI_Wtime() - t0;
    return MPI_SUCCESS;
}

static int bw_kernel(struct run *r, long iters, double *secs)
{
    return window_kernel(r, iters, secs, 0);
}

static int bibw_kernel(struct run *r, long iters, double *secs)
{
    return window_kernel(r, iters, secs, 1);
}

/* Message j from rank s carries pattern s * WINDOW + j + 1. */
static int window_verify(struct run *r, int bidirectional)
{
    if (rank > 1)
        return MPI_SUCCESS;
    long room = (long)(buf_bytes - GUARD) / (r->size > 0 ? r->size : 1);
    int nmsg = room < WINDOW ? (int)room : WINDOW;
    unsigned peer = 1u - (unsigned)rank;
    int sends = bidirectional || rank == 0, receives = bidirectional || rank == 1;
    for (int j = 0; j < nmsg; j++) {
        unsigned from_peer = peer * WINDOW + (unsigned)j + 1;
        if (sends)
            fill_pattern(sbuf + j * r->size, r->size, (unsigned)rank * WINDOW + (unsigned)j + 1);
        if (receives) {
            fill_not_pattern(rbuf + j * r->size, r->size, from_peer);
            fill_pattern(ebuf + j * r->size, r->size, from_peer);
        }
    }
    fill_guard(rbuf + nmsg * r->size);
    TRY(window_round(r->size, nmsg, r->size, bidirectional));
    if (receives)
        check_bytes(r, "window of messages", rbuf, ebuf, nmsg * r->size);
    return MPI_SUCCESS;
}

static int bw_verify(struct run *r)
{
    return window_verify(r, 0);
}

static int bibw_verify(struct run *r)
{
    return window_verify(r, 1);
}

const struct bench pt2pt_benches[] = {
    {.name = "latency", .what = "ping-pong one-way latency (osu_latency)",
     .metric = METRIC_PINGPONG, .min_size = 0, .elem = 1, .pairwise = 1,
     .kernel = latency_kernel, .verify = latency_verify},
    {.name = "bw", .what = "bandwidth, window of 64 Isend (osu_bw)", .metric = METRIC_BW,
     .min_size = 1, .elem = 1, .pairwise = 1, .kernel = bw_kernel, .verify = bw_verify},
    {.name = "bibw", .what = "bidirectional bandwidth, 64 each way (osu_bibw)",
     .metric = METRIC_BIBW, .min_size = 1, .elem = 1, .pairwise = 1, .kernel = bibw_kernel,
     .verify = bibw_verify},
    {.name = "msgrate", .what = "message rate, window of 64 Isend (osu_mbw_mr, one pair)",
     .metric = METRIC_RATE, .min_size = 0, .max_size = 64 << 10, .elem = 1, .pairwise = 1, .kernel = bw_kernel,
     .verify = bw_verify},
};
const int n_pt2pt_benches = (int)(sizeof pt2pt_benches / sizeof pt2pt_benches[0]);
