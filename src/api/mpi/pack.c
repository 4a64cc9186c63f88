/* MPI_Pack, MPI_Unpack, MPI_Pack_size (and _c), and the "external32"
 * forms MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size.
 *
 * Native packing is the engine's packed stream (fmpl_dt_pack): the basic
 * elements' bytes in typemap order, no padding; MPI_Pack_size is therefore
 * exact (count * MPI_Type_size), whatever the communicator.
 *
 * external32 (MPI-4.0 13.5.2): every basic element in big-endian canonical
 * form, byte aligned, with the standard's sizes, which differ from the
 * native ones for MPI_LONG / MPI_UNSIGNED_LONG (4 bytes: values that do not
 * fit are MPI_ERR_CONVERSION), MPI_WCHAR (2 bytes, UCS-2: code points above
 * 0xffff are MPI_ERR_CONVERSION) and long double (IEEE binary128: x86's
 * 80-bit format is converted, the 49 extra fraction bits are zero going
 * out and dropped (truncated) coming back).  The conversion walks the
 * type's signature, built from its envelope and contents: every combiner
 * but STRUCT repeats its one component size(t)/size(old) times, a struct
 * concatenates its blocks.  The data is packed natively into a scratch
 * buffer first (unpacked from one, coming back), then converted element by
 * element. */
#include "api/mpi/mpi_impl.h"
#include "datatype/basic_types.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ERRC FMPL_MPI_TYPE_ERR_COMM

/* ------------------------------------------------------------ native */

static int check_comm(MPI_Comm comm, const char *func)
{
    if (!fmpl_mpi_comm_get(comm))
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    return MPI_SUCCESS;
}

static int pack(const char *func, const void *inbuf, int64_t incount, MPI_Datatype t,
                void *outbuf, int64_t outsize, int64_t *position, MPI_Comm comm)
{
    FMPL_MPI_CHECK_READY(comm);
    int rc;
    if ((rc = check_comm(comm, func)) || (rc = fmpl_mpi_type_check(comm, t, func)))
        return rc;
    if (incount < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "incount %lld is negative",
                              (long long)incount);
    if (!position)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "position is NULL");
    if (outsize < 0 || *position < 0 || *position > outsize)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "position %lld outside 0 .. outsize %lld",
                              (long long)*position, (long long)outsize);
    const fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    int64_t need;
    if (fmpl_dt_pack_size(incount, d, &need) != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "%lld elements are too many bytes",
                              (long long)incount);
    if (need > outsize - *position)
        return fmpl_mpi_error(comm, MPI_ERR_TRUNCATE, func,
                              "%lld bytes to pack at position %lld do not fit in outsize %lld",
                              (long long)need, (long long)*position, (long long)outsize);
    if (need == 0)
        return MPI_SUCCESS;
    if (!outbuf)
        return fmpl_mpi_error(comm, MPI_ERR_BUFFER, func, "outbuf is NULL");
    int64_t written = 0;
    rc = fmpl_dt_pack(inbuf, incount, d, 0, (char *)outbuf + *position, need, &written);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func, "packing failed: %s",
                              fmpl_error_string(rc));
    *position += written;
    return MPI_SUCCESS;
}

static int unpack(const char *func, const void *inbuf, int64_t insize, int64_t *position,
                  void *outbuf, int64_t outcount, MPI_Datatype t, MPI_Comm comm)
{
    FMPL_MPI_CHECK_READY(comm);
    int rc;
    if ((rc = check_comm(comm, func)) || (rc = fmpl_mpi_type_check(comm, t, func)))
        return rc;
    if (outcount < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "outcount %lld is negative",
                              (long long)outcount);
    if (!position)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "position is NULL");
    if (insize < 0 || *position < 0 || *position > insize)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "position %lld outside 0 .. insize %lld",
                              (long long)*position, (long long)insize);
    const fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    int64_t need;
    if (fmpl_dt_pack_size(outcount, d, &need) != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "%lld elements are too many bytes",
                              (long long)outcount);
    if (need > insize - *position)
        return fmpl_mpi_error(comm, MPI_ERR_TRUNCATE, func,
                              "%lld bytes to unpack at position %lld, but insize is %lld",
                              (long long)need, (long long)*position, (long long)insize);
    if (need == 0)
        return MPI_SUCCESS;
    if (!inbuf)
        return fmpl_mpi_error(comm, MPI_ERR_BUFFER, func, "inbuf is NULL");
    int64_t consumed = 0;
    rc = fmpl_dt_unpack((const char *)inbuf + *position, need, outbuf, outcount, d, 0, &consumed);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func, "unpacking failed: %s",
                              fmpl_error_string(rc));
    *position += consumed;
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    int64_t pos = position ? *position : 0;
    int rc = pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL,
                  comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;   /* <= outsize */
    return rc;
}
FMPL_MPI_WEAK(Pack)

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, (int64_t *)position,
                comm);
}
FMPL_MPI_WEAK(Pack_c)

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    int64_t pos = position ? *position : 0;
    int rc = unpack("MPI_Unpack", inbuf, insize, position ? &pos : NULL, outbuf, outcount,
                    datatype, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
FMPL_MPI_WEAK(Unpack)

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    FMPL_CORE_GUARD();
    return unpack("MPI_Unpack_c", inbuf, insize, (int64_t *)position, outbuf, outcount, datatype,
                  comm);
}
FMPL_MPI_WEAK(Unpack_c)

/* The type need not be committed to ask (MPICH does not require it). */
static int pack_size(const char *func, int64_t incount, MPI_Datatype t, MPI_Comm comm,
                     int64_t *size)
{
    FMPL_MPI_CHECK_READY(comm);
    int rc = check_comm(comm, func);
    if (rc)
        return rc;
    const fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    if (!d)
        return fmpl_mpi_error(comm, MPI_ERR_TYPE, func, "0x%x is not a valid datatype",
                              (unsigned)t);
    if (incount < 0)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "incount %lld is negative",
                              (long long)incount);
    if (!size)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "size is NULL");
    if (fmpl_dt_pack_size(incount, d, size) != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, MPI_ERR_COUNT, func, "%lld elements are too many bytes",
                              (long long)incount);
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    FMPL_CORE_GUARD();
    int64_t s;
    int rc = pack_size("MPI_Pack_size", incount, datatype, comm, &s);
    if (rc)
        return rc;
    if (s > INT_MAX)
        return fmpl_mpi_error(comm, MPI_ERR_VALUE_TOO_LARGE, "MPI_Pack_size",
                              "%lld bytes do not fit in an int: use MPI_Pack_size_c",
                              (long long)s);
    *size = (int)s;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Pack_size)

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    FMPL_CORE_GUARD();
    return pack_size("MPI_Pack_size_c", incount, datatype, comm, (int64_t *)size);
}
FMPL_MPI_WEAK(Pack_size_c)

/* ------------------------------------------------------------ external32 scalars */

enum {
    K_RAW,      /* bytes as they are (1-byte types) */
    K_SWAP,     /* same size, big-endian */
    K_SNARROW,  /* signed integer, narrower outside */
    K_UNARROW,  /* unsigned integer, narrower outside */
    K_LDBL,     /* long double <-> binary128 */
};

typedef struct scalar {
    unsigned char kind, nsize, esize;
} scalar;

typedef struct ext_desc {
    int n;            /* scalars per basic element: 1, or 2 (complex, pairs) */
    scalar s[2];
} ext_desc;

#define S_RAW1 {K_RAW, 1, 1}
#define S_SW(n) {K_SWAP, n, n}
#if LDBL_MANT_DIG == 64 || LDBL_MANT_DIG == 113
#define HAVE_LDBL 1
#define S_LD {K_LDBL, sizeof(long double), 16}
#else
#define HAVE_LDBL 0
#define S_LD {K_LDBL, 0, 0}
#endif

/* 0 and the descriptor, or -1 for a type without an external32 form. */
static int desc_of(int bt, ext_desc *d)
{
    static const scalar raw1 = S_RAW1, sw2 = S_SW(2), sw4 = S_SW(4), sw8 = S_SW(8), sw16 = S_SW(16), ld = S_LD,
                        long4 = {K_SNARROW, sizeof(long), 4},
                        ulong4 = {K_UNARROW, sizeof(unsigned long), 4},
                        wchar2 = {K_UNARROW, sizeof(wchar_t), 2};
#define ONE(a) (d->n = 1, d->s[0] = (a), 0)
#define TWO(a, b) (d->n = 2, d->s[0] = (a), d->s[1] = (b), 0)
    switch (bt) {
    case FMPL_BT_CHAR: case FMPL_BT_SIGNED_CHAR: case FMPL_BT_UNSIGNED_CHAR: case FMPL_BT_BYTE:
    case FMPL_BT_PACKED: case FMPL_BT_F_CHARACTER: case FMPL_BT_C_BOOL: case FMPL_BT_CXX_BOOL:
    case FMPL_BT_INT8: case FMPL_BT_UINT8: case FMPL_BT_F_INTEGER1: case FMPL_BT_F_LOGICAL1:
        return ONE(raw1);
    case FMPL_BT_WCHAR:
        return ONE(wchar2);
    case FMPL_BT_SHORT: case FMPL_BT_UNSIGNED_SHORT: case FMPL_BT_INT16: case FMPL_BT_UINT16:
    case FMPL_BT_F_INTEGER2: case FMPL_BT_F_LOGICAL2: case FMPL_BT_F_REAL2:
    case FMPL_BT_C_FLOAT16:
        return ONE(sw2);
    case FMPL_BT_INT: case FMPL_BT_UNSIGNED: case FMPL_BT_INT32: case FMPL_BT_UINT32:
    case FMPL_BT_F_INTEGER: case FMPL_BT_F_INTEGER4: case FMPL_BT_F_LOGICAL: case FMPL_BT_FLOAT:
    case FMPL_BT_F_REAL: case FMPL_BT_F_REAL4: case FMPL_BT_F_LOGICAL4:
        return ONE(sw4);
    case FMPL_BT_LONG:
        return ONE(long4);
    case FMPL_BT_UNSIGNED_LONG:
        return ONE(ulong4);
    case FMPL_BT_LONG_LONG: case FMPL_BT_UNSIGNED_LONG_LONG: case FMPL_BT_INT64:
    case FMPL_BT_UINT64: case FMPL_BT_AINT: case FMPL_BT_OFFSET: case FMPL_BT_COUNT:
    case FMPL_BT_F_INTEGER8: case FMPL_BT_DOUBLE: case FMPL_BT_F_DOUBLE_PRECISION:
    case FMPL_BT_F_REAL8: case FMPL_BT_F_LOGICAL8:
        return ONE(sw8);
    case FMPL_BT_F_LOGICAL16:
        return ONE(sw16);
    case FMPL_BT_F_COMPLEX4:
        return TWO(sw2, sw2);
    case FMPL_BT_LONG_DOUBLE: case FMPL_BT_F_REAL16:
        return HAVE_LDBL ? ONE(ld) : -1;
    case FMPL_BT_C_FLOAT_COMPLEX: case FMPL_BT_CXX_FLOAT_COMPLEX: case FMPL_BT_F_COMPLEX:
    case FMPL_BT_F_COMPLEX8: case FMPL_BT_F_2REAL: case FMPL_BT_FLOAT_INT: case FMPL_BT_2INT:
    case FMPL_BT_F_2INTEGER:
        return TWO(sw4, sw4);
    case FMPL_BT_C_DOUBLE_COMPLEX: case FMPL_BT_CXX_DOUBLE_COMPLEX:
    case FMPL_BT_F_DOUBLE_COMPLEX: case FMPL_BT_F_COMPLEX16: case FMPL_BT_F_2DOUBLE_PRECISION:
        return TWO(sw8, sw8);
    case FMPL_BT_C_LONG_DOUBLE_COMPLEX: case FMPL_BT_CXX_LONG_DOUBLE_COMPLEX:
    case FMPL_BT_F_COMPLEX32:
        return HAVE_LDBL ? TWO(ld, ld) : -1;
    case FMPL_BT_DOUBLE_INT:
        return TWO(sw8, sw4);
    case FMPL_BT_LONG_INT:
        return TWO(long4, sw4);
    case FMPL_BT_SHORT_INT:
        return TWO(sw2, sw4);
    case FMPL_BT_LONG_DOUBLE_INT:
        return HAVE_LDBL ? TWO(ld, sw4) : -1;
    default:
        return -1;
    }
#undef ONE
#undef TWO
}

static void to_big(unsigned char *out, const unsigned char *in, int n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (int i = 0; i < n; i++)
        out[i] = in[n - 1 - i];
#else
    memcpy(out, in, (size_t)n);
#endif
}

/* Native unsigned integers of 1-8 bytes <-> uint64_t. */
static uint64_t load_u(const unsigned char *p, int n)
{
    switch (n) {
    case 1: return *p;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void store_u(unsigned char *p, int n, uint64_t x)
{
    switch (n) {
    case 1: *p = (unsigned char)x; break;
    case 2: { uint16_t v = (uint16_t)x; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)x; memcpy(p, &v, 4); break; }
    default: memcpy(p, &x, 8); break;
    }
}

static uint64_t load_be(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x = x << 8 | p[i];
    return x;
}

static void store_be(unsigned char *p, int n, uint64_t x)
{
    for (int i = n - 1; i >= 0; i--, x >>= 8)
        p[i] = (unsigned char)x;
}

#if LDBL_MANT_DIG == 64
/* x87 80-bit extended (little-endian: 64-bit significand with an explicit
 * integer bit, then sign and 15-bit exponent) <-> binary128 (big-endian:
 * sign, the same 15-bit exponent and bias, 112-bit fraction). */
static void ldbl_out(unsigned char *out, const unsigned char *in)
{
    uint64_t m;
    uint16_t se;
    memcpy(&m, in, 8);
    memcpy(&se, in + 8, 2);
    uint64_t exp = se & 0x7fff, frac = m & 0x7fffffffffffffffull;
    if (exp == 0 && (m >> 63))    /* pseudo-denormal: the smallest normal exponent */
        exp = 1;
    uint64_t hi = (uint64_t)(se >> 15) << 63 | exp << 48 | frac >> 15;
    uint64_t lo = frac << 49;
    store_be(out, 8, hi);
    store_be(out + 8, 8, lo);
}

static void ldbl_in(unsigned char *out, const unsigned char *in)
{
    uint64_t hi = load_be(in, 8), lo = load_be(in + 8, 8);
    uint64_t exp = hi >> 48 & 0x7fff;
    uint64_t frac = (hi & 0xffffffffffffull) << 15 | lo >> 49;
    uint64_t m = frac | (exp != 0 ? 1ull << 63 : 0);
    uint16_t se = (uint16_t)(hi >> 63 << 15 | exp);
    memset(out, 0, sizeof(long double));
    memcpy(out, &m, 8);
    memcpy(out + 8, &se, 2);
}
#elif LDBL_MANT_DIG == 113
static void ldbl_out(unsigned char *out, const unsigned char *in) { to_big(out, in, 16); }
static void ldbl_in(unsigned char *out, const unsigned char *in) { to_big(out, in, 16); }
#else
static void ldbl_out(unsigned char *out, const unsigned char *in) { (void)out; (void)in; }
static void ldbl_in(unsigned char *out, const unsigned char *in) { (void)out; (void)in; }
#endif

/* One scalar: native `in` -> external `out` (out_ext) or back.  0, or -1
 * when the value does not fit the destination. */
static int conv_scalar(const scalar *s, const unsigned char *in, unsigned char *out, int out_ext)
{
    switch (s->kind) {
    case K_RAW:
        memcpy(out, in, s->nsize);
        return 0;
    case K_SWAP:
        to_big(out, in, s->nsize);   /* a byte reversal is its own inverse */
        return 0;
    case K_SNARROW: {
        int ebits = 8 * s->esize;
        if (out_ext) {
            int64_t v = (int64_t)load_u(in, s->nsize);
            if (v < -((int64_t)1 << (ebits - 1)) || v >= ((int64_t)1 << (ebits - 1)))
                return -1;
            store_be(out, s->esize, (uint64_t)v);
        } else {
            uint64_t u = load_be(in, s->esize);
            int64_t v = (u >> (ebits - 1)) ? (int64_t)(u | ~(((uint64_t)1 << ebits) - 1))
                                           : (int64_t)u;
            store_u(out, s->nsize, (uint64_t)v);
        }
        return 0;
    }
    case K_UNARROW:
        if (out_ext) {
            uint64_t u = load_u(in, s->nsize);
            if (u >> (8 * s->esize))
                return -1;
            store_be(out, s->esize, u);
        } else {
            store_u(out, s->nsize, load_be(in, s->esize));
        }
        return 0;
    default:
        if (out_ext)
            ldbl_out(out, in);
        else
            ldbl_in(out, in);
        return 0;
    }
}

/* ------------------------------------------------------------ signatures */

/* A type signature as a tree: a leaf is `reps` basic elements of type bt;
 * an inner node repeats the concatenation of its children `reps` times. */
typedef struct sig {
    int64_t reps;
    int bt;                /* leaf: the basic type; inner: FMPL_BT_NONE */
    int64_t nkids;
    struct sig *kids;
} sig;

static void sig_free(sig *s)
{
    for (int64_t i = 0; i < s->nkids; i++)
        sig_free(&s->kids[i]);
    free(s->kids);
    s->kids = NULL;
    s->nkids = 0;
}

/* MPI_SUCCESS, MPI_ERR_NO_MEM, or MPI_ERR_UNSUPPORTED_OPERATION with *bad
 * the basic type without an external32 form. */
static int sig_build(const fmpl_datatype *t, int64_t reps, sig *out, int *bad)
{
    *out = (sig){.reps = reps, .bt = FMPL_BT_NONE};
    if (reps == 0 || fmpl_dt_size(t) == 0) {
        out->reps = 0;
        return MPI_SUCCESS;
    }
    fmpl_dt_envelope env;
    if (fmpl_dt_get_envelope(t, &env) != FMPL_SUCCESS)
        return MPI_ERR_INTERN;
    if (env.combiner == FMPL_DT_COMBINER_NAMED) {
        ext_desc d;
        out->bt = fmpl_dt_basic_type_of(t);
        if (desc_of(out->bt, &d) != 0) {
            *bad = out->bt;
            return MPI_ERR_UNSUPPORTED_OPERATION;
        }
        return MPI_SUCCESS;
    }
    int64_t *ints = malloc((size_t)(env.num_integers + env.num_addresses +
                                    env.num_large_counts + 1) * sizeof *ints);
    fmpl_datatype **types = malloc((size_t)(env.num_datatypes + 1) * sizeof *types);
    if (!ints || !types) {
        free(ints);
        free(types);
        return MPI_ERR_NO_MEM;
    }
    int64_t *addrs = ints + env.num_integers, *large = addrs + env.num_addresses;
    if (fmpl_dt_get_contents(t, env.num_integers, env.num_addresses, env.num_large_counts,
                             env.num_datatypes, ints, addrs, large, types) != FMPL_SUCCESS) {
        free(ints);
        free(types);
        return MPI_ERR_INTERN;
    }
    int rc = MPI_SUCCESS;
    if (env.combiner == FMPL_DT_COMBINER_STRUCT) {
        /* blocklens: ints[1..] (int layout) or large[1..] (large layout) */
        const int64_t *bl = (env.num_large_counts ? large : ints) + 1;
        out->kids = calloc((size_t)env.num_datatypes + 1, sizeof *out->kids);
        if (!out->kids)
            rc = MPI_ERR_NO_MEM;
        for (int64_t i = 0; rc == MPI_SUCCESS && i < env.num_datatypes; i++) {
            rc = sig_build(types[i], bl[i], &out->kids[out->nkids], bad);
            if (out->kids[out->nkids].reps > 0 || rc != MPI_SUCCESS)
                out->nkids++;
        }
    } else {
        /* one component, repeated size(t) / size(old) times */
        int64_t os = fmpl_dt_size(types[0]);
        out->kids = calloc(1, sizeof *out->kids);
        if (!out->kids)
            rc = MPI_ERR_NO_MEM;
        else {
            out->nkids = 1;
            rc = sig_build(types[0], fmpl_dt_size(t) / os, &out->kids[0], bad);
        }
    }
    for (int64_t i = 0; i < env.num_datatypes; i++)
        fmpl_dt_unref(types[i]);
    free(ints);
    free(types);
    if (rc != MPI_SUCCESS)
        sig_free(out);
    return rc;
}

/* external32 bytes of the signature; -1 on overflow. */
static int64_t sig_ext_size(const sig *s)
{
    int64_t one = 0;
    if (s->bt != FMPL_BT_NONE) {
        ext_desc d;
        desc_of(s->bt, &d);
        for (int i = 0; i < d.n; i++)
            one += d.s[i].esize;
    } else {
        for (int64_t i = 0; i < s->nkids; i++) {
            int64_t k = sig_ext_size(&s->kids[i]);
            if (k < 0 || __builtin_add_overflow(one, k, &one))
                return -1;
        }
    }
    int64_t r;
    return __builtin_mul_overflow(one, s->reps, &r) ? -1 : r;
}

typedef struct conv {
    const unsigned char *in;
    unsigned char *out;
    int out_ext;
    int bad_bt;     /* the basic type of a value that did not fit */
} conv;

static int sig_convert(const sig *s, conv *c)
{
    if (s->bt != FMPL_BT_NONE) {
        ext_desc d;
        desc_of(s->bt, &d);
        for (int64_t r = 0; r < s->reps; r++) {
            for (int i = 0; i < d.n; i++) {
                if (conv_scalar(&d.s[i], c->in, c->out, c->out_ext) != 0) {
                    c->bad_bt = s->bt;
                    return -1;
                }
                c->in += c->out_ext ? d.s[i].nsize : d.s[i].esize;
                c->out += c->out_ext ? d.s[i].esize : d.s[i].nsize;
            }
        }
        return 0;
    }
    for (int64_t r = 0; r < s->reps; r++)
        for (int64_t i = 0; i < s->nkids; i++)
            if (sig_convert(&s->kids[i], c) != 0)
                return -1;
    return 0;
}

/* ------------------------------------------------------------ external32 calls */

static int check_datarep(const char *func, const char *datarep)
{
    if (!datarep)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "datarep is NULL");
    if (strcmp(datarep, "external32") != 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_UNSUPPORTED_DATAREP, func,
                              "data representation \"%s\": only \"external32\" is supported",
                              datarep);
    return MPI_SUCCESS;
}

/* The signature of `count` elements of t and its external32 size. */
static int ext_prepare(const char *func, MPI_Datatype t, int64_t count, int need_commit,
                       const fmpl_datatype **d, sig *s, int64_t *ext_bytes)
{
    int rc;
    if (need_commit) {
        if ((rc = fmpl_mpi_type_check(ERRC, t, func)))
            return rc;
    } else if (!fmpl_mpi_datatype_get(t)) {
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func, "0x%x is not a valid datatype",
                              (unsigned)t);
    }
    if (count < 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_COUNT, func, "count %lld is negative",
                              (long long)count);
    *d = fmpl_mpi_datatype_get(t);
    int bad = FMPL_BT_NONE;
    rc = sig_build(*d, count, s, &bad);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION)
        return fmpl_mpi_error(ERRC, rc, func, "%s has no external32 form on this platform",
                              fmpl_basic_types[bad].name);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(ERRC, rc, func, "cannot walk the datatype's signature");
    *ext_bytes = sig_ext_size(s);
    if (*ext_bytes < 0) {
        sig_free(s);
        return fmpl_mpi_error(ERRC, MPI_ERR_COUNT, func, "%lld elements are too many bytes",
                              (long long)count);
    }
    return MPI_SUCCESS;
}

static int conversion_error(const char *func, const conv *c)
{
    return fmpl_mpi_error(ERRC, MPI_ERR_CONVERSION, func,
                          "a value of %s does not fit its external32 size",
                          fmpl_basic_types[c->bad_bt].name);
}

/* MPI_Pack_external (pack != 0) and MPI_Unpack_external share one body:
 * `count` elements of type t in `typed`, `packed_size` bytes of external32
 * data in `packed` from *position on.  The engine packs into (or unpacks
 * from) a native-layout temporary, and the signature walk converts that
 * to (from) external32. */
static int move_external(const char *func, int pack, const char *datarep, void *packed,
                         int64_t packed_size, int64_t *position, void *typed, int64_t count,
                         MPI_Datatype t)
{
    FMPL_MPI_CHECK_READY(ERRC);
    int rc = check_datarep(func, datarep);
    if (rc)
        return rc;
    const char *size_name = pack ? "outsize" : "insize";
    if (!position)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "position is NULL");
    if (packed_size < 0 || *position < 0 || *position > packed_size)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "position %lld outside 0 .. %s %lld",
                              (long long)*position, size_name, (long long)packed_size);
    const fmpl_datatype *d = NULL;
    sig s;
    int64_t ext = 0;
    if ((rc = ext_prepare(func, t, count, 1, &d, &s, &ext)))
        return rc;
    int64_t native;
    if (fmpl_dt_pack_size(count, d, &native) != FMPL_SUCCESS) {
        sig_free(&s);
        return fmpl_mpi_error(ERRC, MPI_ERR_COUNT, func, "too many bytes");
    }
    if (ext > packed_size - *position) {
        sig_free(&s);
        return fmpl_mpi_error(ERRC, MPI_ERR_TRUNCATE, func,
                              "%lld bytes to %s at position %lld, but %s is %lld",
                              (long long)ext, pack ? "pack" : "unpack", (long long)*position,
                              size_name, (long long)packed_size);
    }
    if (native == 0) {
        sig_free(&s);
        return MPI_SUCCESS;
    }
    unsigned char *tmp = malloc((size_t)native);
    if (!tmp || !packed) {
        free(tmp);
        sig_free(&s);
        if (tmp)
            return fmpl_mpi_error(ERRC, MPI_ERR_BUFFER, func, "%s is NULL",
                                  pack ? "outbuf" : "inbuf");
        return fmpl_mpi_error(ERRC, MPI_ERR_NO_MEM, func, "no memory for %lld bytes",
                              (long long)native);
    }
    unsigned char *ext_data = (unsigned char *)packed + *position;
    conv c;
    if (pack) {
        int64_t written;
        rc = fmpl_dt_pack(typed, count, d, 0, tmp, native, &written);
        c = (conv){.in = tmp, .out = ext_data, .out_ext = 1};
        if (rc == FMPL_SUCCESS && sig_convert(&s, &c) != 0)
            rc = -1;
    } else {
        int64_t consumed;
        c = (conv){.in = ext_data, .out = tmp, .out_ext = 0};
        rc = sig_convert(&s, &c) != 0 ? -1 : FMPL_SUCCESS; /* widening cannot fail */
        if (rc == FMPL_SUCCESS)
            rc = fmpl_dt_unpack(tmp, native, typed, count, d, 0, &consumed);
    }
    free(tmp);
    sig_free(&s);
    if (rc == -1)
        return conversion_error(func, &c);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(ERRC, fmpl_mpi_error_class_of(rc), func, "%s failed",
                              pack ? "packing" : "unpacking");
    *position += ext;
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                       MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    FMPL_CORE_GUARD();
    return move_external("MPI_Pack_external", 1, datarep, outbuf, outsize, (int64_t *)position,
                         (void *)inbuf, incount, datatype);
}
FMPL_MPI_WEAK(Pack_external)

int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    FMPL_CORE_GUARD();
    return move_external("MPI_Pack_external_c", 1, datarep, outbuf, outsize, (int64_t *)position,
                         (void *)inbuf, incount, datatype);
}
FMPL_MPI_WEAK(Pack_external_c)

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    FMPL_CORE_GUARD();
    return move_external("MPI_Unpack_external", 0, datarep, (void *)inbuf, insize,
                         (int64_t *)position, outbuf, outcount, datatype);
}
FMPL_MPI_WEAK(Unpack_external)

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    FMPL_CORE_GUARD();
    return move_external("MPI_Unpack_external_c", 0, datarep, (void *)inbuf, insize,
                         (int64_t *)position, outbuf, outcount, datatype);
}
FMPL_MPI_WEAK(Unpack_external_c)

static int pack_external_size(const char *func, const char *datarep, int64_t incount,
                              MPI_Datatype t, int64_t *size)
{
    FMPL_MPI_CHECK_READY(ERRC);
    int rc = check_datarep(func, datarep);
    if (rc)
        return rc;
    if (!size)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "size is NULL");
    const fmpl_datatype *d;
    sig s;
    if ((rc = ext_prepare(func, t, incount, 0, &d, &s, size)))
        return rc;
    sig_free(&s);
    return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    FMPL_CORE_GUARD();
    return pack_external_size("MPI_Pack_external_size", datarep, incount, datatype,
                              (int64_t *)size);
}
FMPL_MPI_WEAK(Pack_external_size)

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size)
{
    FMPL_CORE_GUARD();
    return pack_external_size("MPI_Pack_external_size_c", datarep, incount, datatype,
                              (int64_t *)size);
}
FMPL_MPI_WEAK(Pack_external_size_c)
