/* Collectives with any datatype: the blocks of one buffer argument, as the
 * byte-level algorithms of src/collectives see them (coll_stage.c).
 *
 * A collective's buffer argument is n blocks: block p is counts[p] elements
 * at displacement displs[p] (in extents of the type, or in bytes for
 * alltoallw, whose blocks each have their own type).  When every block's
 * type is contiguous the algorithms work on the user's memory: `base` is
 * the buffer (plus the true lower bound of a single type) and the byte
 * arrays say where each block is.  Otherwise the blocks are staged: `base`
 * is one contiguous buffer of the packed blocks one after the other
 * (dt_staging.c); pack copies a block in before the algorithm runs,
 * unpack copies it out after.  Packing and unpacking do nothing when not
 * staged, so the callers read the same either way. */
#ifndef FMPL_API_MPI_COLL_STAGE_H
#define FMPL_API_MPI_COLL_STAGE_H

#include "api/mpi/mpi_impl.h"

/* A per-member array argument as the caller passed it: int (the classic
 * bindings), MPI_Count (the counts of the large-count `_c` bindings) or
 * MPI_Aint (their displacements).  One body serves both bindings. */
typedef struct fmpl_mpi_array {
    const void *p; /* NULL: absent */
    int kind;
} fmpl_mpi_array;
enum { FMPL_MPI_ARRAY_INT, FMPL_MPI_ARRAY_COUNT, FMPL_MPI_ARRAY_AINT };
#define FMPL_MPI_INTS(a) ((fmpl_mpi_array){(a), FMPL_MPI_ARRAY_INT})
#define FMPL_MPI_COUNTS(a) ((fmpl_mpi_array){(a), FMPL_MPI_ARRAY_COUNT})
#define FMPL_MPI_AINTS(a) ((fmpl_mpi_array){(a), FMPL_MPI_ARRAY_AINT})

static inline int64_t fmpl_mpi_array_at(fmpl_mpi_array a, int i)
{
    switch (a.kind) {
    case FMPL_MPI_ARRAY_INT: return ((const int *)a.p)[i];
    case FMPL_MPI_ARRAY_COUNT: return ((const MPI_Count *)a.p)[i];
    default: return ((const MPI_Aint *)a.p)[i];
    }
}

typedef struct fmpl_mpi_blocks {
    char *user;
    int n;
    fmpl_mpi_array counts;      /* absent: `count` each */
    MPI_Aint count;
    fmpl_mpi_array displs;      /* absent: block p at p * count elements */
    int displs_in_bytes;        /* alltoallw */
    MPI_Datatype type;          /* the type of every block, unless `types` */
    const MPI_Datatype *types;  /* per block (alltoallw), or NULL */
    int64_t *bcounts, *bdispls; /* bytes per block and where, for the algorithm (may be NULL
                                   for the uniform forms) */
    fmpl_datatype *const *held; /* or NULL: the derived types resolved and referenced
                                   (per block with `types`, else one), NULL entries for
                                   predefined ones; used instead of the handles, which a
                                   nonblocking collective's caller may free meanwhile */
    int64_t total;              /* bytes of all blocks */
    char *base;                 /* the buffer the algorithm works on */
    char *stage;                /* staging buffer, or NULL */
} fmpl_mpi_blocks;

/* Describe (and stage if needed) the blocks.  The types must have been
 * checked (fmpl_mpi_type_layout succeeds).  MPI_SUCCESS or MPI_ERR_NO_MEM
 * (not reported). */
int fmpl_mpi_blocks_init(fmpl_mpi_blocks *b);
void fmpl_mpi_blocks_pack(const fmpl_mpi_blocks *b, int p);
void fmpl_mpi_blocks_unpack(const fmpl_mpi_blocks *b, int p);
void fmpl_mpi_blocks_pack_all(const fmpl_mpi_blocks *b);
void fmpl_mpi_blocks_unpack_all(const fmpl_mpi_blocks *b);
/* Give the staging buffer back. */
void fmpl_mpi_blocks_done(fmpl_mpi_blocks *b);

#endif
