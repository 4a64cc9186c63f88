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

typedef struct fmpl_mpi_blocks {
    char *user;
    int n;
    const int *counts;          /* NULL: `count` each */
    MPI_Aint count;
    const int *displs;          /* NULL: block p at p * count elements */
    int displs_in_bytes;        /* alltoallw */
    MPI_Datatype type;          /* the type of every block, unless `types` */
    const MPI_Datatype *types;  /* per block (alltoallw), or NULL */
    int64_t *bcounts, *bdispls; /* bytes per block and where, for the algorithm (may be NULL
                                   for the uniform forms) */
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
