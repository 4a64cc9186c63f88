/* MPI-4.1's predefined datatypes MPI_LOGICAL1/2/4/8/16, MPI_REAL2,
 * MPI_COMPLEX4, and MPICH's MPIX_C_FLOAT16 (0x4c000246: mpi.h does not name
 * MPICH's extensions, but a program built with MPICH's header sends it):
 *  - size, extent, envelope (MPI_COMBINER_NAMED), name;
 *  - MPI_Type_match_size finds MPI_REAL2 and MPI_COMPLEX4 by their size;
 *  - point-to-point around the ring, bytes checked;
 *  - MPI_Pack/MPI_Unpack and external32 (big-endian);
 *  - reductions: LAND, LOR, LXOR on the LOGICALs (MPI_SUM refused with
 *    MPI_ERR_OP), SUM/MAX on the half-precision reals and SUM/PROD on
 *    COMPLEX4, computed in _Float16 (refused with MPI_ERR_OP where the
 *    compiler has no _Float16). */
#include "check.h"

#include <stdint.h>
#include <string.h>

#define MPIX_C_FLOAT16_MPICH ((MPI_Datatype)0x4c000246)

static int rank, size;

static const struct {
    MPI_Datatype t;
    int bytes;
    const char *name;
} types[] = {
    {MPI_LOGICAL1, 1, "MPI_LOGICAL1"},   {MPI_LOGICAL2, 2, "MPI_LOGICAL2"},
    {MPI_LOGICAL4, 4, "MPI_LOGICAL4"},   {MPI_LOGICAL8, 8, "MPI_LOGICAL8"},
    {MPI_LOGICAL16, 16, "MPI_LOGICAL16"}, {MPI_REAL2, 2, "MPI_REAL2"},
    {MPI_COMPLEX4, 4, "MPI_COMPLEX4"},   {MPIX_C_FLOAT16_MPICH, 2, "MPIX_C_FLOAT16"},
};
enum { NTYPES = sizeof types / sizeof types[0] };

static void queries(void)
{
    for (int k = 0; k < NTYPES; k++) {
        int sz, ni, na, nd, comb, len;
        MPI_Aint lb, ext;
        char name[MPI_MAX_OBJECT_NAME];
        CHECK_OK(MPI_Type_size(types[k].t, &sz));
        CHECK(sz == types[k].bytes, "%s: size %d", types[k].name, sz);
        CHECK_OK(MPI_Type_get_extent(types[k].t, &lb, &ext));
        CHECK(lb == 0 && ext == types[k].bytes, "%s: lb %ld extent %ld", types[k].name,
              (long)lb, (long)ext);
        CHECK_OK(MPI_Type_get_envelope(types[k].t, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "%s: combiner %d",
              types[k].name, comb);
        CHECK_OK(MPI_Type_get_name(types[k].t, name, &len));
        CHECK(strcmp(name, types[k].name) == 0, "%s: name %s", types[k].name, name);
    }
    MPI_Datatype m = MPI_DATATYPE_NULL;
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &m));
    CHECK(m == MPI_REAL2, "match_size(REAL, 2): 0x%x", (unsigned)m);
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 4, &m));
    CHECK(m == MPI_COMPLEX4, "match_size(COMPLEX, 4): 0x%x", (unsigned)m);
}

static void p2p_and_pack(void)
{
    enum { N = 37 };
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    unsigned char s[N * 16], r[N * 16], packed[N * 16 + 64], back[N * 16];
    for (int k = 0; k < NTYPES; k++) {
        int n = N * types[k].bytes;
        for (int i = 0; i < n; i++)
            s[i] = (unsigned char)(rank * 13 + k * 5 + i);
        memset(r, 0, sizeof r);
        CHECK_OK(MPI_Sendrecv(s, N, types[k].t, right, k, r, N, types[k].t, left, k,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(r[i] == (unsigned char)(left * 13 + k * 5 + i), "%s: byte %d",
                  types[k].name, i);
        int pos = 0, psize;
        CHECK_OK(MPI_Pack_size(N, types[k].t, MPI_COMM_WORLD, &psize));
        CHECK(psize >= n, "%s: pack size %d", types[k].name, psize);
        CHECK_OK(MPI_Pack(s, N, types[k].t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
        int upos = 0;
        CHECK_OK(MPI_Unpack(packed, pos, &upos, back, N, types[k].t, MPI_COMM_WORLD));
        CHECK(memcmp(back, s, n) == 0, "%s: pack/unpack", types[k].name);
        /* external32: each scalar big-endian (COMPLEX4: two 2-byte ones) */
        MPI_Aint epos = 0, esize;
        CHECK_OK(MPI_Pack_external_size("external32", N, types[k].t, &esize));
        CHECK(esize == n, "%s: external32 size %ld", types[k].name, (long)esize);
        CHECK_OK(MPI_Pack_external("external32", s, N, types[k].t, packed, sizeof packed,
                                   &epos));
        int scalar = types[k].t == MPI_COMPLEX4 ? 2 : types[k].bytes;
        for (int i = 0; i < n; i++)
            CHECK(packed[i] == s[i / scalar * scalar + scalar - 1 - i % scalar],
                  "%s: external32 byte %d", types[k].name, i);
        MPI_Aint eupos = 0;
        CHECK_OK(MPI_Unpack_external("external32", packed, epos, &eupos, back, N, types[k].t));
        CHECK(memcmp(back, s, n) == 0, "%s: external32 round trip", types[k].name);
    }
}

/* Element i of rank r's logical vector: true or false by a pattern that
 * gives every op a mix of results; stray nonzero values count as true. */
static int truth(int r, int i) { return (r + i) % 3 == 0 || (i % 5 == 0 && r % 2); }

static void logicals(void)
{
    enum { N = 30 };
    MPI_Op ops[3] = {MPI_LAND, MPI_LOR, MPI_LXOR};
    for (int k = 0; k < 5; k++) {
        int w = types[k].bytes;
        unsigned char in[N * 16], out[N * 16];
        memset(in, 0, sizeof in);
        for (int i = 0; i < N; i++)
            if (truth(rank, i))
                in[i * w + (i % w)] = (unsigned char)(1 + i); /* any nonzero byte is true */
        for (int o = 0; o < 3; o++) {
            memset(out, 0xcc, sizeof out);
            CHECK_OK(MPI_Allreduce(in, out, N, types[k].t, ops[o], MPI_COMM_WORLD));
            for (int i = 0; i < N; i++) {
                int want = o == 0;
                for (int r = 0; r < size; r++) {
                    int t = truth(r, i);
                    want = o == 0 ? want && t : o == 1 ? want || t : want ^ t;
                }
                int got = 0, bad = 0;
                for (int b = 0; b < w; b++)
                    got |= out[i * w + b] != 0;
                /* combined, a true result is 1 in the integer of its size
                 * (alone, a rank's input comes back as it was) */
                for (int b = 1; b < w; b++)
                    bad |= out[i * w + b] != 0;
                CHECK(got == want && (!got || size == 1 || (out[i * w] == 1 && !bad)),
                      "%s op %d element %d: got %d want %d", types[k].name, o, i, got, want);
            }
        }
        CHECK_CLASS(MPI_Allreduce(in, out, N, types[k].t, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    }
}

static void halves(void)
{
    enum { N = 8 };
#if defined(__FLT16_MANT_DIG__)
    _Float16 h[N], hs[N];
    for (int i = 0; i < N; i++)
        h[i] = (_Float16)(rank + 0.5 * i);
    for (int which = 0; which < 2; which++) {
        MPI_Datatype t = which ? MPIX_C_FLOAT16_MPICH : MPI_REAL2;
        CHECK_OK(MPI_Allreduce(h, hs, N, t, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            double want = size * (size - 1) / 2.0 + size * 0.5 * i;
            CHECK((double)hs[i] == want, "REAL2 sum %d: %g, not %g", i, (double)hs[i], want);
        }
        CHECK_OK(MPI_Allreduce(h, hs, N, t, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK((double)hs[i] == size - 1 + 0.5 * i, "REAL2 max %d: %g", i, (double)hs[i]);
    }
    /* COMPLEX4: (1 + i) on every rank; the product is (1+i)^size */
    _Float16 c[2] = {1, 1}, cp[2], cs[2];
    CHECK_OK(MPI_Allreduce(c, cs, 1, MPI_COMPLEX4, MPI_SUM, MPI_COMM_WORLD));
    CHECK((double)cs[0] == size && (double)cs[1] == size, "COMPLEX4 sum");
    CHECK_OK(MPI_Allreduce(c, cp, 1, MPI_COMPLEX4, MPI_PROD, MPI_COMM_WORLD));
    double re = 1, im = 0;
    for (int r = 0; r < size; r++) {
        double nre = re - im, nim = re + im;
        re = nre, im = nim;
    }
    CHECK((double)cp[0] == re && (double)cp[1] == im, "COMPLEX4 prod: %g %g, not %g %g",
          (double)cp[0], (double)cp[1], re, im);
    CHECK_CLASS(MPI_Allreduce(c, cs, 1, MPI_COMPLEX4, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP);
#else
    uint16_t h[N] = {0}, hs[N];
    CHECK_CLASS(MPI_Allreduce(h, hs, N, MPI_REAL2, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
#endif
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    queries();
    p2p_and_pack();
    logicals();
    halves();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_types41: ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
