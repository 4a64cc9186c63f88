/* fmpl_init with caller-provided matching and completion areas (the seed's
 * ma/fa): peers write headers and completions into this private memory with
 * CMA.  Every pair exchanges messages of several sizes in both directions,
 * on every index, checked byte for byte; the areas must be the ones used
 * (a header appears in ma after a peer posts a receive). */
#include <fmpl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 8

static int fail(int rank, const char *what, long a, long b)
{
    fprintf(stderr, "caller_areas: rank %d: %s (%ld vs %ld)\n", rank, what, a, b);
    exit(1);
}

int main(void)
{
    size_t bytes;
    if (fmpl_area_size(COUNT, &bytes) != FMPL_SUCCESS)
        fail(-1, "fmpl_area_size failed", 0, 0);
    void *ma = aligned_alloc(64, bytes), *fa = aligned_alloc(64, bytes);
    memset(ma, 0, bytes);
    memset(fa, 0, bytes);
    /* Misaligned areas are refused before anything starts. */
    if (fmpl_init((char *)ma + 8, fa, COUNT) != FMPL_ERR_ARG)
        fail(-1, "misaligned area accepted", 0, 0);
    if (fmpl_init(ma, NULL, COUNT) != FMPL_ERR_ARG)
        fail(-1, "one area without the other accepted", 0, 0);
    int rc = fmpl_init(ma, fa, COUNT);
    if (rc != FMPL_SUCCESS)
        fail(-1, "fmpl_init with caller areas failed", rc, 0);
    int rank, size;
    fmpl_comm_rank(FMPL_COMM_WORLD, &rank);
    fmpl_comm_size(FMPL_COMM_WORLD, &size);

    long sizes[] = {0, 1, 40, 41, 4096, 65536, 1 << 20};
    for (unsigned s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        long n = sizes[s];
        for (int shift = 1; shift < size; shift++) {
            int to = (rank + shift) % size, from = (rank - shift + size) % size;
            int index = (int)((s + (unsigned)shift) % COUNT);
            unsigned char *out = malloc((size_t)n + 1), *in = malloc((size_t)n + 1);
            for (long i = 0; i < n; i++)
                out[i] = (unsigned char)(i * 13 + rank * 7 + s);
            memset(in, 0xee, (size_t)n + 1);
            if ((rc = fmpl_irecv(in, n, from, index, FMPL_COMM_WORLD)) != FMPL_SUCCESS)
                fail(rank, "irecv", rc, 0);
            if ((rc = fmpl_send(out, n, to, index, FMPL_COMM_WORLD)) != FMPL_SUCCESS)
                fail(rank, "send", rc, 0);
            fmpl_status st;
            if ((rc = fmpl_irecv_wait(from, index, FMPL_COMM_WORLD, &st)) != FMPL_SUCCESS)
                fail(rank, "irecv_wait", rc, 0);
            if (st.size != n || st.source != from || st.index != index)
                fail(rank, "status", st.size, n);
            for (long i = 0; i < n; i++)
                if (in[i] != (unsigned char)(i * 13 + from * 7 + s))
                    fail(rank, "data mismatch at byte", i, n);
            if (in[n] != 0xee)
                fail(rank, "byte past the buffer written", n, 0);
            free(out);
            free(in);
            fmpl_barrier(FMPL_COMM_WORLD);
        }
    }
    /* The areas are really in use: some slot line of ma is non-zero. */
    int used = 0;
    for (size_t i = 0; i < bytes; i++)
        used |= ((unsigned char *)ma)[i] != 0;
    if (size > 1 && !used)
        fail(rank, "caller matching area never written", 0, 0);
    rc = fmpl_finalize();
    free(ma);
    free(fa);
    if (rank == 0)
        printf("caller_areas: %d ranks ok\n", size);
    return rc;
}
