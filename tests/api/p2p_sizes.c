/* p2p_sizes: every message size from 0 B to 16 MiB, between every kind of
 * send and receive buffer, with blocking and nonblocking calls, between every
 * ordered pair of ranks.
 *
 * For each shift d = 1..n-1, rank r sends to r+d and receives from r-d (mod n),
 * so every ordered pair is covered.  Per message it checks:
 *  - the receive buffer holds the sender's pattern byte for byte;
 *  - when the receive buffer is larger than the message, the bytes past the
 *    message are untouched, and so are the guard zones around the buffer;
 *  - the send buffer was not modified;
 *  - status = {source, index, size, FMPL_SUCCESS}.
 * Run also with FMPL_SHM_CMA=off / on (see CMakeLists.txt) to force the
 * copy paths.
 */
#include "test_util.h"

#define COUNT 64

static const long sizes[] = {0, 1, 7, 64, 4096, 65536, 1L << 20, 16L << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

enum { API_BLOCKING, API_NONBLOCKING };

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Buffer kinds tried for a size: stack only up to 64 KiB, heap+1 (odd
 * address) up to 1 MiB, shared and heap always. */
static int kind_ok(int kind, long size)
{
    if (kind == TU_STACK)
        return size <= 64 * 1024;
    if (kind == TU_HEAP_ODD)
        return size <= (1L << 20);
    return 1;
}

static void one_transfer(int dst, int src, int send_first, long size, int skind, int rkind,
                         int api, long iter)
{
    unsigned char sstack[TU_STACK_BYTES] __attribute__((aligned(64)));
    unsigned char rstack[TU_STACK_BYTES] __attribute__((aligned(64)));
    int idx = (int)(iter % COUNT);
    /* Every third message goes into a receive buffer 100 bytes larger. */
    long rcap = (iter % 3 == 1) ? size + 100 : size;
    char what[256];
    snprintf(what, sizeof what,
             "%s, %ld bytes, %s -> %s buffer, rank %d -> %d (from %d), index %d, rcap %ld, iter %ld",
             api == API_BLOCKING ? "send/recv" : "isend/irecv", size, tu_kind_names[skind],
             tu_kind_names[rkind], tu_rank, dst, src, idx, rcap, iter);
    tu_sub = what;

    tu_buf sb, rb;
    tu_buf_get(&sb, skind, size, sstack);
    tu_buf_get(&rb, rkind, rcap, rstack);
    uint64_t sseed = tu_seed(tu_rank, idx, size, iter);
    uint64_t rseed = tu_seed(src, idx, size, iter);
    tu_buf_arm(&sb);
    tu_fill(sb.p, size, sseed);
    tu_buf_arm(&rb);

    fmpl_status st;
    memset(&st, 0xff, sizeof st);
    if (api == API_BLOCKING) {
        if (send_first) {
            CALL(fmpl_send(sb.p, size, dst, idx, FMPL_COMM_WORLD));
            CALL(fmpl_recv(rb.p, rcap, src, idx, FMPL_COMM_WORLD, &st));
        } else {
            CALL(fmpl_recv(rb.p, rcap, src, idx, FMPL_COMM_WORLD, &st));
            CALL(fmpl_send(sb.p, size, dst, idx, FMPL_COMM_WORLD));
        }
    } else {
        /* Vary the order of posting and of waiting. */
        if (iter & 2) {
            CALL(fmpl_isend(sb.p, size, dst, idx, FMPL_COMM_WORLD));
            CALL(fmpl_irecv(rb.p, rcap, src, idx, FMPL_COMM_WORLD));
        } else {
            CALL(fmpl_irecv(rb.p, rcap, src, idx, FMPL_COMM_WORLD));
            CALL(fmpl_isend(sb.p, size, dst, idx, FMPL_COMM_WORLD));
        }
        if (iter & 1) {
            CALL(fmpl_irecv_wait(src, idx, FMPL_COMM_WORLD, &st));
            CALL(fmpl_isend_wait(dst, idx, FMPL_COMM_WORLD));
        } else {
            CALL(fmpl_isend_wait(dst, idx, FMPL_COMM_WORLD));
            CALL(fmpl_irecv_wait(src, idx, FMPL_COMM_WORLD, &st));
        }
    }
    CHECK_STATUS(st, src, idx, size, FMPL_SUCCESS, "receive status");
    CHECK_PATTERN(rb.p, size, rseed, "received data (sender %d, %ld bytes)", src, size);
    CHECK_BUF_UNTOUCHED_FROM(&rb, size, "receive buffer");
    CHECK_PATTERN(sb.p, size, sseed, "send buffer modified by the send (%ld bytes)", size);
    tu_buf_put(&sb);
    tu_buf_put(&rb);
}

int main(void)
{
    tu_init("p2p_sizes", COUNT);
    int n = tu_size;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    long iter = 0;
    for (int d = 1; d < n; d++) {
        int dst = (tu_rank + d) % n, src = (tu_rank - d + n) % n;
        /* Blocking sends are synchronous: in each cycle of r -> r+d, the
         * lowest rank sends first, the others receive first. */
        int send_first = tu_rank < gcd(d, n);
        for (int si = 0; si < NSIZES; si++) {
            long size = sizes[si];
            for (int sk = 0; sk < TU_NKINDS; sk++) {
                if (!kind_ok(sk, size))
                    continue;
                for (int rk = 0; rk < TU_NKINDS; rk++) {
                    if (!kind_ok(rk, size))
                        continue;
                    for (int api = API_BLOCKING; api <= API_NONBLOCKING; api++)
                        one_transfer(dst, src, send_first, size, sk, rk, api, iter++);
                }
            }
        }
        tu_sub = "shift done";
        tu_p2p_sync_all(COUNT - 1, FMPL_COMM_WORLD);
    }
    tu_sub = "finalize";
    return tu_finish();
}
