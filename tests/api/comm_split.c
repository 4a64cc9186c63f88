/* fmpl_comm_split and fmpl_comm_indices: splits of a parent that is not
 * FMPL_COMM_WORLD, ranked by key (reversed here) then parent rank; a member
 * passing FMPL_KEY_NONE gets FMPL_COMM_NULL; messages and a reduction on the
 * result; argument errors. */
#include "test_util.h"

int main(void)
{
    tu_init("comm_split", 64);
    int rank = tu_rank, size = tu_size;
    fmpl_comm all; /* every rank but the last when size > 1, in reverse world order */
    int color = size > 1 && rank == size - 1 ? FMPL_KEY_NONE : 0;
    CALL(fmpl_comm_split(FMPL_COMM_WORLD, color, size - rank, &all));
    if (color == FMPL_KEY_NONE) {
        CHECK(all == FMPL_COMM_NULL, "outside the split: comm %d", all);
    } else {
        int n = size > 1 ? size - 1 : 1, r, s, count;
        CALL(fmpl_comm_rank(all, &r));
        CALL(fmpl_comm_size(all, &s));
        CHECK(s == n && r == n - 1 - rank, "rank %d of %d in the split", r, s);
        CALL(fmpl_comm_indices(all, &count));
        CHECK(count == 64, "indices %d", count);
        /* a split of the split: halves by parity of the new rank, same key */
        fmpl_comm half;
        CALL(fmpl_comm_split(all, r % 2, 0, &half));
        int hr, hs;
        CALL(fmpl_comm_rank(half, &hr));
        CALL(fmpl_comm_size(half, &hs));
        CHECK(hr == r / 2 && hs == (n - r % 2 + 1) / 2, "half: rank %d of %d", hr, hs);
        int v = rank, work; /* the world ranks of the half */
        CALL(fmpl_allreduce(&v, 1, fmpl_isum, half, &work));
        int expect = 0;
        for (int k = r % 2; k < n; k += 2)
            expect += n - 1 - k;
        CHECK(v == expect, "sum over the half %d, expected %d", v, expect);
        int token = rank, got = -1, next = (r + 1) % s, prev = (r + s - 1) % s;
        CALL(fmpl_irecv(&got, sizeof got, prev, 63, all));
        CALL(fmpl_send(&token, sizeof token, next, 63, all));
        CALL(fmpl_irecv_wait(prev, 63, all, NULL));
        CHECK(got == n - 1 - prev, "ring: got %d from rank %d", got, prev);
        CALL(fmpl_comm_free(&half));
        CALL(fmpl_comm_free(&all));
    }
    fmpl_comm bad;
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, -5, 0, &bad), FMPL_ERR_ARG, "color -5");
    CHECK_RC(fmpl_comm_split(4000, 0, 0, &bad), FMPL_ERR_COMM, "no such parent");
    CHECK_RC(fmpl_comm_split(FMPL_COMM_WORLD, 0, 0, NULL), FMPL_ERR_ARG, "NULL comm");
    CHECK_RC(fmpl_comm_indices(FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG, "NULL count");
    return tu_finish();
}
