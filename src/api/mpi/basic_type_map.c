/* Predefined MPI datatype handles <-> the engine's basic element types.
 *
 * MPICH's builtin datatype handles are 0x4c00SSII: SS the size in bytes, II
 * an index unique among the builtin datatypes.  The table is indexed by II
 * (a designated initializer per type: two types with the same II would not
 * compile under -Werror, -Woverride-init) and each entry keeps the whole
 * handle, so a lookup is one load and one comparison.  The pair types
 * MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT are 0x8c000000 .. 0x8c000004 (MPICH
 * makes them "direct" handles; the dynamic datatype table therefore starts
 * above index 4, see datatype.c). */
#include "api/mpi/mpi_impl.h"
#include "datatype/basic_types.h"

typedef fmpl_mpi_builtin_entry entry;

/* MPICH's MPIX_C_FLOAT16 (MPICH 4.2 on): 2 bytes, index 0x46. */
#define MPIX_C_FLOAT16_HANDLE ((MPI_Datatype)0x4c000246)

#define E(h, b) [(unsigned)(h) & 0xffu] = {(h), (b)}

/* Shared with fmpl_mpi_builtin_size (mpi_impl.h). */
const entry fmpl_mpi_builtin[256] = {
    E(MPI_CHAR, FMPL_BT_CHAR), E(MPI_SIGNED_CHAR, FMPL_BT_SIGNED_CHAR),
    E(MPI_UNSIGNED_CHAR, FMPL_BT_UNSIGNED_CHAR), E(MPI_BYTE, FMPL_BT_BYTE),
    E(MPI_WCHAR, FMPL_BT_WCHAR), E(MPI_SHORT, FMPL_BT_SHORT),
    E(MPI_UNSIGNED_SHORT, FMPL_BT_UNSIGNED_SHORT), E(MPI_INT, FMPL_BT_INT),
    E(MPI_UNSIGNED, FMPL_BT_UNSIGNED), E(MPI_LONG, FMPL_BT_LONG),
    E(MPI_UNSIGNED_LONG, FMPL_BT_UNSIGNED_LONG), E(MPI_LONG_LONG, FMPL_BT_LONG_LONG),
    E(MPI_UNSIGNED_LONG_LONG, FMPL_BT_UNSIGNED_LONG_LONG), E(MPI_INT8_T, FMPL_BT_INT8),
    E(MPI_INT16_T, FMPL_BT_INT16), E(MPI_INT32_T, FMPL_BT_INT32), E(MPI_INT64_T, FMPL_BT_INT64),
    E(MPI_UINT8_T, FMPL_BT_UINT8), E(MPI_UINT16_T, FMPL_BT_UINT16),
    E(MPI_UINT32_T, FMPL_BT_UINT32), E(MPI_UINT64_T, FMPL_BT_UINT64), E(MPI_AINT, FMPL_BT_AINT),
    E(MPI_OFFSET, FMPL_BT_OFFSET), E(MPI_COUNT, FMPL_BT_COUNT), E(MPI_FLOAT, FMPL_BT_FLOAT),
    E(MPI_DOUBLE, FMPL_BT_DOUBLE), E(MPI_LONG_DOUBLE, FMPL_BT_LONG_DOUBLE),
    E(MPI_C_FLOAT_COMPLEX, FMPL_BT_C_FLOAT_COMPLEX),
    E(MPI_C_DOUBLE_COMPLEX, FMPL_BT_C_DOUBLE_COMPLEX),
    E(MPI_C_LONG_DOUBLE_COMPLEX, FMPL_BT_C_LONG_DOUBLE_COMPLEX), E(MPI_C_BOOL, FMPL_BT_C_BOOL),
    E(MPI_PACKED, FMPL_BT_PACKED), E(MPI_2INT, FMPL_BT_2INT),
    E(MPI_CHARACTER, FMPL_BT_F_CHARACTER), E(MPI_INTEGER, FMPL_BT_F_INTEGER),
    E(MPI_REAL, FMPL_BT_F_REAL), E(MPI_DOUBLE_PRECISION, FMPL_BT_F_DOUBLE_PRECISION),
    E(MPI_LOGICAL, FMPL_BT_F_LOGICAL), E(MPI_COMPLEX, FMPL_BT_F_COMPLEX),
    E(MPI_DOUBLE_COMPLEX, FMPL_BT_F_DOUBLE_COMPLEX), E(MPI_INTEGER1, FMPL_BT_F_INTEGER1),
    E(MPI_INTEGER2, FMPL_BT_F_INTEGER2), E(MPI_INTEGER4, FMPL_BT_F_INTEGER4),
    E(MPI_INTEGER8, FMPL_BT_F_INTEGER8), E(MPI_REAL4, FMPL_BT_F_REAL4),
    E(MPI_REAL8, FMPL_BT_F_REAL8), E(MPI_REAL16, FMPL_BT_F_REAL16),
    E(MPI_COMPLEX8, FMPL_BT_F_COMPLEX8), E(MPI_COMPLEX16, FMPL_BT_F_COMPLEX16),
    E(MPI_COMPLEX32, FMPL_BT_F_COMPLEX32), E(MPI_2INTEGER, FMPL_BT_F_2INTEGER),
    E(MPI_2REAL, FMPL_BT_F_2REAL), E(MPI_2DOUBLE_PRECISION, FMPL_BT_F_2DOUBLE_PRECISION),
    E(MPI_CXX_BOOL, FMPL_BT_CXX_BOOL), E(MPI_CXX_FLOAT_COMPLEX, FMPL_BT_CXX_FLOAT_COMPLEX),
    E(MPI_CXX_DOUBLE_COMPLEX, FMPL_BT_CXX_DOUBLE_COMPLEX),
    E(MPI_CXX_LONG_DOUBLE_COMPLEX, FMPL_BT_CXX_LONG_DOUBLE_COMPLEX),
    E(MPI_LOGICAL1, FMPL_BT_F_LOGICAL1), E(MPI_LOGICAL2, FMPL_BT_F_LOGICAL2),
    E(MPI_LOGICAL4, FMPL_BT_F_LOGICAL4), E(MPI_LOGICAL8, FMPL_BT_F_LOGICAL8),
    E(MPI_LOGICAL16, FMPL_BT_F_LOGICAL16), E(MPI_REAL2, FMPL_BT_F_REAL2),
    E(MPI_COMPLEX4, FMPL_BT_F_COMPLEX4),
    /* MPICH's MPIX_C_FLOAT16 (an extension mpi.h does not name): programs
     * built with MPICH's header send it */
    E(MPIX_C_FLOAT16_HANDLE, FMPL_BT_C_FLOAT16),
    /* the MPI-1 bound markers: builtin handles without a basic type */
    E(MPI_LB, FMPL_BT_NONE), E(MPI_UB, FMPL_BT_NONE),
};

/* MPI_FLOAT_INT + i, in the order of the handles. */
static const fmpl_basic_type pairs[5] = {
    FMPL_BT_FLOAT_INT, FMPL_BT_DOUBLE_INT, FMPL_BT_LONG_INT, FMPL_BT_SHORT_INT,
    FMPL_BT_LONG_DOUBLE_INT,
};

int fmpl_mpi_basic_type(MPI_Datatype t)
{
    unsigned u = (unsigned)t;
    if ((u & 0xff000000u) == 0x4c000000u) {
        const entry *e = &fmpl_mpi_builtin[u & 0xffu];
        return e->handle == t ? (int)e->bt : FMPL_BT_NONE;
    }
    if (u - (unsigned)MPI_FLOAT_INT < 5u)
        return pairs[u - (unsigned)MPI_FLOAT_INT];
    return FMPL_BT_NONE;
}

int fmpl_mpi_is_predefined_type(MPI_Datatype t)
{
    unsigned u = (unsigned)t;
    if ((u & 0xff000000u) == 0x4c000000u)
        return fmpl_mpi_builtin[u & 0xffu].handle == t;
    return u - (unsigned)MPI_FLOAT_INT < 5u;
}

MPI_Datatype fmpl_mpi_basic_handle(int bt)
{
    if (bt <= FMPL_BT_NONE || bt >= FMPL_BT_COUNT_OF_TYPES)
        return MPI_DATATYPE_NULL;
    for (int i = 0; i < 5; i++)
        if (pairs[i] == (fmpl_basic_type)bt)
            return (MPI_Datatype)((unsigned)MPI_FLOAT_INT + (unsigned)i);
    for (unsigned i = 0; i < 256; i++)
        if (fmpl_mpi_builtin[i].handle && fmpl_mpi_builtin[i].bt == bt)
            return fmpl_mpi_builtin[i].handle;
    return MPI_DATATYPE_NULL;
}
