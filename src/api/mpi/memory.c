/* MPI_Alloc_mem / MPI_Free_mem: memory from this rank's shared heap, the
 * heap fmpl_alloc uses (fabric.h).  Peers on the node map it, so a
 * rendezvous transfer into or out of it is one copy with plain loads and
 * stores: the receiver copies straight from a sender's heap buffer, and a
 * sender puts straight into a receiver's (tag_match.c), with no system
 * call.  The heap's size is FMPL_HEAP_SIZE; when no free block fits, the
 * error is MPI_ERR_NO_MEM.  Freeing a pointer that is not a live block of
 * the heap (foreign, interior, freed twice) is MPI_ERR_BASE, and changes
 * nothing. */
#include "api/mpi/mpi_impl.h"
#include "fabric/fabric.h"
#include "fabric/shm/shm_heap.h"

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    FMPL_CORE_GUARD();
    (void)info; /* no hints are used */
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!baseptr)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Alloc_mem", "baseptr is NULL");
    if (size < 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Alloc_mem",
                              "size %ld is negative", (long)size);
    void *p = fmpl_fab_alloc((size_t)size);
    if (!p)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Alloc_mem",
                              "%ld bytes do not fit in the shared heap (largest free block: "
                              "%zu bytes; its size is FMPL_HEAP_SIZE)",
                              (long)size, fmpl_heap_largest_free(fmpl_fab.heap));
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Alloc_mem)

int PMPI_Free_mem(void *base)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!base)
        return MPI_SUCCESS;
    if (!fmpl_heap_contains(fmpl_fab.heap, base))
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_BASE, "MPI_Free_mem",
                              "%p was not allocated by MPI_Alloc_mem", base);
    if (fmpl_heap_free(fmpl_fab.heap, base) != FMPL_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_BASE, "MPI_Free_mem",
                              "%p is not a block from MPI_Alloc_mem (an interior pointer, or "
                              "freed already)", base);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Free_mem)
