/* Basic (predefined, non-derived) element types of the datatype engine.
 *
 * Every predefined MPI datatype is one of these; derived datatypes are built
 * from them.  The engine and the reduction kernels know element types only
 * by this enumeration and the table below; the MPI binding maps MPI_Datatype
 * handles to it.  Categories decide which reduction operations apply:
 *   INT       signed integers        arithmetic, logical, bitwise, min/max
 *   UINT      unsigned integers      the same
 *   FLOAT     real floating point    arithmetic, min/max
 *   COMPLEX   complex floating point sum and product only
 *   LOGICAL   C _Bool, Fortran LOGICAL  logical operations only
 *   BYTE      byte, char, packed     bitwise (byte) or none (char: min/max)
 *   PAIR      value-index pairs       MINLOC / MAXLOC only
 * The pair types' layout is the C struct {value; int index;} with natural
 * alignment (so MPI_DOUBLE_INT is 16 bytes, MPI_FLOAT_INT 8). */
#ifndef FMPL_DATATYPE_BASIC_TYPES_H
#define FMPL_DATATYPE_BASIC_TYPES_H

#include <stddef.h>

typedef enum fmpl_basic_type {
    FMPL_BT_NONE = 0,
    /* C integers */
    FMPL_BT_CHAR, FMPL_BT_SIGNED_CHAR, FMPL_BT_UNSIGNED_CHAR, FMPL_BT_BYTE, FMPL_BT_WCHAR,
    FMPL_BT_SHORT, FMPL_BT_UNSIGNED_SHORT, FMPL_BT_INT, FMPL_BT_UNSIGNED, FMPL_BT_LONG,
    FMPL_BT_UNSIGNED_LONG, FMPL_BT_LONG_LONG, FMPL_BT_UNSIGNED_LONG_LONG,
    FMPL_BT_INT8, FMPL_BT_INT16, FMPL_BT_INT32, FMPL_BT_INT64,
    FMPL_BT_UINT8, FMPL_BT_UINT16, FMPL_BT_UINT32, FMPL_BT_UINT64,
    FMPL_BT_AINT, FMPL_BT_OFFSET, FMPL_BT_COUNT,
    /* C floating point */
    FMPL_BT_FLOAT, FMPL_BT_DOUBLE, FMPL_BT_LONG_DOUBLE,
    FMPL_BT_C_FLOAT_COMPLEX, FMPL_BT_C_DOUBLE_COMPLEX, FMPL_BT_C_LONG_DOUBLE_COMPLEX,
    FMPL_BT_C_BOOL,
    FMPL_BT_PACKED,
    /* pair types for MINLOC/MAXLOC */
    FMPL_BT_FLOAT_INT, FMPL_BT_DOUBLE_INT, FMPL_BT_LONG_INT, FMPL_BT_2INT, FMPL_BT_SHORT_INT,
    FMPL_BT_LONG_DOUBLE_INT,
    /* Fortran (the MPICH ABI names them; sizes as gfortran on x86-64) */
    FMPL_BT_F_CHARACTER, FMPL_BT_F_INTEGER, FMPL_BT_F_REAL, FMPL_BT_F_DOUBLE_PRECISION,
    FMPL_BT_F_LOGICAL, FMPL_BT_F_COMPLEX, FMPL_BT_F_DOUBLE_COMPLEX,
    FMPL_BT_F_INTEGER1, FMPL_BT_F_INTEGER2, FMPL_BT_F_INTEGER4, FMPL_BT_F_INTEGER8,
    FMPL_BT_F_REAL4, FMPL_BT_F_REAL8, FMPL_BT_F_REAL16,
    FMPL_BT_F_COMPLEX8, FMPL_BT_F_COMPLEX16, FMPL_BT_F_COMPLEX32,
    FMPL_BT_F_2INTEGER, FMPL_BT_F_2REAL, FMPL_BT_F_2DOUBLE_PRECISION,
    /* C++ */
    FMPL_BT_CXX_BOOL, FMPL_BT_CXX_FLOAT_COMPLEX, FMPL_BT_CXX_DOUBLE_COMPLEX,
    FMPL_BT_CXX_LONG_DOUBLE_COMPLEX,
    /* MPI-4.1: Fortran LOGICAL(n) and half precision REAL(2), COMPLEX(2);
     * MPICH's C half precision (MPIX_C_FLOAT16) */
    FMPL_BT_F_LOGICAL1, FMPL_BT_F_LOGICAL2, FMPL_BT_F_LOGICAL4, FMPL_BT_F_LOGICAL8,
    FMPL_BT_F_LOGICAL16, FMPL_BT_F_REAL2, FMPL_BT_F_COMPLEX4, FMPL_BT_C_FLOAT16,
    FMPL_BT_COUNT_OF_TYPES
} fmpl_basic_type;

typedef enum fmpl_type_category {
    FMPL_CAT_NONE = 0,
    FMPL_CAT_INT,
    FMPL_CAT_UINT,
    FMPL_CAT_FLOAT,
    FMPL_CAT_COMPLEX,
    FMPL_CAT_LOGICAL,
    FMPL_CAT_BYTE,
    FMPL_CAT_PAIR
} fmpl_type_category;

typedef struct fmpl_basic_type_info {
    const char *name;           /* MPI name, e.g. "MPI_INT" */
    size_t size;                /* bytes of one element (extent of the pair types) */
    size_t align;               /* natural alignment */
    fmpl_type_category category;
    fmpl_basic_type component;  /* COMPLEX: the real component type; PAIR: the value type;
                                   else itself */
} fmpl_basic_type_info;

/* Indexed by fmpl_basic_type (defined in basic_types.c). */
extern const fmpl_basic_type_info fmpl_basic_types[FMPL_BT_COUNT_OF_TYPES];

#endif
