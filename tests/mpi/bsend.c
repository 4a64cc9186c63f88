/* Buffered mode: MPI_Bsend and MPI_Ibsend with small (eager) and large
 * (rendezvous, > 16 KiB) messages; the source buffer is reusable as soon as
 * the call returns; a buffer of sum(size + MPI_BSEND_OVERHEAD) bytes holds
 * those messages at once, even starting at an odd address, and one more
 * of 3 * MPI_BSEND_OVERHEAD bytes is MPI_ERR_BUFFER; eager messages give their space back at once
 * (1000 sends through room for one); no buffer attached, a second attach,
 * detach with nothing attached; MPI_Buffer_detach blocks until the
 * receiver has the message (its receive is posted 300 ms late, and the
 * detached buffer is scribbled over at once). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, left, right;
static char *still_attached;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "mpi_bsend rank %d line %d: ", rank, __LINE__);        \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

static int error_class(int rc)
{
    int cls;
    MPI_Error_class(rc, &cls);
    return cls;
}

static unsigned char byte_of(int from, int tag, int i) { return (unsigned char)(from * 31 + tag * 7 + i); }

static void fill(unsigned char *p, int n, int from, int tag)
{
    for (int i = 0; i < n; i++)
        p[i] = byte_of(from, tag, i);
}

static void check(const unsigned char *p, int n, int from, int tag, int line)
{
    for (int i = 0; i < n; i++)
        if (p[i] != byte_of(from, tag, i)) {
            fprintf(stderr, "mpi_bsend rank %d line %d: tag %d byte %d is %d, not %d\n", rank,
                    line, tag, i, p[i], byte_of(from, tag, i));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

static void errors(void)
{
    int x = 1;
    MPI_Request req;
    EXPECT(error_class(MPI_Bsend(&x, 1, MPI_INT, right, 0, MPI_COMM_WORLD)) == MPI_ERR_BUFFER,
           "Bsend without a buffer");
    EXPECT(error_class(MPI_Ibsend(&x, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req)) ==
               MPI_ERR_BUFFER, "Ibsend without a buffer");
    EXPECT(MPI_Bsend(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD) == MPI_SUCCESS,
           "Bsend to MPI_PROC_NULL needs no buffer");
    void *addr = &x;
    int n = -1;
    EXPECT(MPI_Buffer_detach(&addr, &n) == MPI_SUCCESS && addr == NULL && n == 0,
           "detach with nothing attached");
    char *b = malloc(1000);
    EXPECT(MPI_Buffer_attach(b, 1000) == MPI_SUCCESS, "attach");
    EXPECT(error_class(MPI_Buffer_attach(b, 1000)) == MPI_ERR_BUFFER, "second attach");
    /* bigger than the whole buffer */
    char big[2000] = {0};
    EXPECT(error_class(MPI_Bsend(big, 2000, MPI_BYTE, right, 0, MPI_COMM_WORLD)) ==
               MPI_ERR_BUFFER, "2000 bytes through a 1000-byte buffer");
    EXPECT(error_class(MPI_Bsend(big, 1000, MPI_BYTE, right, 0, MPI_COMM_WORLD)) ==
               MPI_ERR_BUFFER, "1000 bytes and the overhead through a 1000-byte buffer");
    EXPECT(MPI_Buffer_detach(&addr, &n) == MPI_SUCCESS && addr == b && n == 1000, "detach");
    MPI_Count nc;
    EXPECT(MPI_Buffer_attach_c(b, 1000) == MPI_SUCCESS &&
               MPI_Buffer_detach_c(&addr, &nc) == MPI_SUCCESS && addr == b && nc == 1000,
           "attach_c/detach_c");
    free(b);
}

/* Eager messages leave the buffer at once: 1000 of them through room for
 * one, with Bsend and Ibsend alternating. */
static void eager_reuse(void)
{
    enum { N = 100 };
    int bsize = N + MPI_BSEND_OVERHEAD;
    char *b = malloc(bsize);
    MPI_Buffer_attach(b, bsize);
    unsigned char s[N], r[N];
    for (int it = 0; it < 1000; it++) {
        fill(s, N, rank, it % 100);
        if (it % 2) {
            EXPECT(MPI_Bsend(s, N, MPI_BYTE, right, it % 100, MPI_COMM_WORLD) == MPI_SUCCESS,
                   "Bsend %d", it);
        } else {
            MPI_Request req;
            int flag = 0;
            EXPECT(MPI_Ibsend(s, N, MPI_BYTE, right, it % 100, MPI_COMM_WORLD, &req) ==
                       MPI_SUCCESS, "Ibsend %d", it);
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            EXPECT(flag && req == MPI_REQUEST_NULL, "an Ibsend is complete once copied");
        }
        memset(s, 0, N);
        MPI_Recv(r, N, MPI_BYTE, left, it % 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(r, N, left, it % 100, __LINE__);
    }
    void *addr;
    int n;
    MPI_Buffer_detach(&addr, &n);
    EXPECT(addr == b && n == bsize, "detach");
    free(b);
}

/* Three rendezvous messages of odd sizes held at once in exactly
 * sum(size + MPI_BSEND_OVERHEAD) bytes starting at an odd address. */
static void overhead(void)
{
    int sizes[3] = {17001, 20003, 30005};
    int bsize = 0;
    for (int k = 0; k < 3; k++)
        bsize += sizes[k] + MPI_BSEND_OVERHEAD;
    char *mem = malloc(bsize + 1);
    char *b = mem + 1;
    MPI_Buffer_attach(b, bsize);
    unsigned char *s = malloc(30005), *r = malloc(30005);
    for (int k = 0; k < 3; k++) {
        fill(s, sizes[k], rank, 40 + k);
        EXPECT(MPI_Bsend(s, sizes[k], MPI_BYTE, right, 40 + k, MPI_COMM_WORLD) == MPI_SUCCESS,
               "message %d of %d bytes did not fit", k, sizes[k]);
        memset(s, 0, 30005); /* the copy is in the attached buffer */
    }
    /* Nobody receives before everyone has tried a fourth message.  FMPL
     * takes less than MPI_BSEND_OVERHEAD per message, so some room is left,
     * but less than 3 * MPI_BSEND_OVERHEAD bytes. */
    MPI_Request req;
    EXPECT(error_class(MPI_Bsend(s, 3 * MPI_BSEND_OVERHEAD, MPI_BYTE, right, 43,
                                 MPI_COMM_WORLD)) == MPI_ERR_BUFFER,
           "a fourth message fitted");
    EXPECT(error_class(MPI_Ibsend(s, 3 * MPI_BSEND_OVERHEAD, MPI_BYTE, right, 43,
                                  MPI_COMM_WORLD, &req)) == MPI_ERR_BUFFER,
           "a fourth message fitted (Ibsend)");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 2; k >= 0; k--) { /* any order: the tags differ */
        MPI_Status st;
        MPI_Recv(r, 30005, MPI_BYTE, left, 40 + k, MPI_COMM_WORLD, &st);
        int n;
        MPI_Get_count(&st, MPI_BYTE, &n);
        EXPECT(n == sizes[k], "message %d: %d bytes", k, n);
        check(r, sizes[k], left, 40 + k, __LINE__);
    }
    void *addr;
    int n;
    MPI_Buffer_detach(&addr, &n);
    EXPECT(addr == b && n == bsize, "detach");
    free(mem);
    free(s);
    free(r);
}

/* MPI_Buffer_detach returns only once the message has been received. */
static void detach_blocks(void)
{
    enum { N = 100000 };
    int bsize = N + MPI_BSEND_OVERHEAD;
    char *b = malloc(bsize);
    unsigned char *s = malloc(N), *r = malloc(N);
    MPI_Buffer_attach(b, bsize);
    MPI_Barrier(MPI_COMM_WORLD);
    if (size == 1) {
        /* nobody else: receive it first */
        fill(s, N, rank, 50);
        EXPECT(MPI_Bsend(s, N, MPI_BYTE, rank, 50, MPI_COMM_WORLD) == MPI_SUCCESS, "Bsend");
        MPI_Recv(r, N, MPI_BYTE, rank, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(r, N, rank, 50, __LINE__);
        void *addr;
        int n;
        MPI_Buffer_detach(&addr, &n);
        EXPECT(addr == b && n == bsize, "detach");
    } else {
        /* even ranks send to the next odd one, which posts its receive late */
        if (rank % 2 == 0 && rank + 1 < size) {
            fill(s, N, rank, 50);
            EXPECT(MPI_Bsend(s, N, MPI_BYTE, rank + 1, 50, MPI_COMM_WORLD) == MPI_SUCCESS,
                   "Bsend");
            memset(s, 0, N);
            void *addr;
            int n;
            MPI_Buffer_detach(&addr, &n);
            double returned = MPI_Wtime();
            EXPECT(addr == b && n == bsize, "detach");
            memset(b, 0xee, bsize); /* the receiver must not see this */
            double posted;
            MPI_Recv(&posted, 1, MPI_DOUBLE, rank + 1, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT(returned >= posted,
                   "MPI_Buffer_detach returned %.3f s before the receive was posted",
                   posted - returned);
        } else if (rank % 2 == 1) {
            usleep(300 * 1000);
            double posted = MPI_Wtime();
            MPI_Recv(r, N, MPI_BYTE, rank - 1, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(r, N, rank - 1, 50, __LINE__);
            MPI_Send(&posted, 1, MPI_DOUBLE, rank - 1, 51, MPI_COMM_WORLD);
            void *addr;
            int n;
            MPI_Buffer_detach(&addr, &n);
        } else {
            void *addr;
            int n;
            MPI_Buffer_detach(&addr, &n);
        }
    }
    free(b);
    free(s);
    free(r);
}

/* A small and a large message in one buffer, through MPI_Ibsend and
 * MPI_Bsend_init; the buffer stays attached until MPI_Finalize, which
 * delivers what is left. */
static void mixed(void)
{
    enum { SMALL = 64, LARGE = 65536 };
    /* room for all three: the first large one may still be in the buffer
     * when the last is sent (until the right neighbour has received it) */
    int bsize = SMALL + 2 * LARGE + 3 * MPI_BSEND_OVERHEAD;
    char *b = malloc(bsize);
    MPI_Buffer_attach(b, bsize);
    unsigned char *s = malloc(LARGE), *r = malloc(LARGE);
    fill(s, SMALL, rank, 60);
    MPI_Request req[2];
    EXPECT(MPI_Ibsend(s, SMALL, MPI_BYTE, right, 60, MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS,
           "Ibsend");
    fill(s, LARGE, rank, 61);
    MPI_Bsend_init(s, LARGE, MPI_BYTE, right, 61, MPI_COMM_WORLD, &req[1]);
    EXPECT(MPI_Start(&req[1]) == MPI_SUCCESS, "Start of a Bsend_init request");
    memset(s, 0, LARGE);
    MPI_Status st[2];
    MPI_Waitall(2, req, st);
    EXPECT(req[0] == MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL, "handles");
    MPI_Request_free(&req[1]);
    MPI_Recv(r, LARGE, MPI_BYTE, left, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(r, LARGE, left, 61, __LINE__);
    MPI_Recv(r, SMALL, MPI_BYTE, left, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(r, SMALL, left, 60, __LINE__);
    /* One more, and the buffer stays attached: MPI_Finalize waits until
     * it has been delivered. */
    fill(s, LARGE, rank, 62);
    EXPECT(MPI_Bsend(s, LARGE, MPI_BYTE, right, 62, MPI_COMM_WORLD) == MPI_SUCCESS, "Bsend");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(r, LARGE, MPI_BYTE, left, 62, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(r, LARGE, left, 62, __LINE__);
    free(s);
    free(r);
    still_attached = b; /* freed after MPI_Finalize */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    errors();
    eager_reuse();
    overhead();
    detach_blocks();
    mixed();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi bsend ok on %d ranks (MPI_BSEND_OVERHEAD %d)\n", size, MPI_BSEND_OVERHEAD);
    MPI_Finalize();
    free(still_attached);
    return 0;
}
