/* Staging buffers for non-contiguous datatypes in communication.
 *
 * A message whose datatype is not contiguous moves as its packed stream: the
 * sender packs into a staging buffer and sends those bytes; the receiver
 * receives into one and unpacks when the request completes (request.c).
 * The collectives do the same around their byte-level algorithms.
 *
 * Design: a pool of FMPL_MPI_STAGE_SLOTS fixed buffers of
 * FMPL_MPI_STAGE_SLOT bytes, carved out of one block of the shared heap at
 * first use (fmpl_fab_alloc: a peer's rendezvous then copies straight from
 * or into it, without a system call), handed out from a free stack.  A
 * message that fits a slot while one is free allocates nothing; a bigger
 * one, or one arriving while every slot is taken (many outstanding
 * non-contiguous requests), falls back to malloc.  fmpl_mpi_stage_put tells
 * the two apart by address.  The pool is small on purpose: it serves the
 * common case of a few small strided messages in flight, and the copy a
 * large message needs anyway dwarfs its malloc.  MPI_Finalize returns the
 * block to the heap (fmpl_mpi_stage_finalize); single-threaded use only
 * (MPI_THREAD_FUNNELED), like the request pool. */
#include "api/mpi/mpi_impl.h"
#include "fabric/fabric.h"

#include <stdlib.h>
#include <string.h>

static char *block;              /* FMPL_MPI_STAGE_SLOTS * FMPL_MPI_STAGE_SLOT bytes */
static int block_failed;         /* the heap had no room: use malloc only */
static void *free_slots[FMPL_MPI_STAGE_SLOTS];
static int nfree;

static void pool_create(void)
{
    block = fmpl_fab_alloc((size_t)FMPL_MPI_STAGE_SLOTS * FMPL_MPI_STAGE_SLOT);
    if (!block) {
        block_failed = 1;
        return;
    }
    for (int i = FMPL_MPI_STAGE_SLOTS - 1; i >= 0; i--)
        free_slots[nfree++] = block + (size_t)i * FMPL_MPI_STAGE_SLOT;
}

static int in_pool(const void *p)
{
    return block && (const char *)p >= block &&
           (const char *)p < block + (size_t)FMPL_MPI_STAGE_SLOTS * FMPL_MPI_STAGE_SLOT;
}

void *fmpl_mpi_stage_get(size_t bytes)
{
    if (bytes <= FMPL_MPI_STAGE_SLOT) {
        if (!block && !block_failed)
            pool_create();
        if (nfree > 0)
            return free_slots[--nfree];
    }
    return malloc(bytes ? bytes : 1);
}

void fmpl_mpi_stage_put(void *p)
{
    if (!p)
        return;
    if (in_pool(p))
        free_slots[nfree++] = p;
    else
        free(p);
}

int fmpl_mpi_stage_pool_free_slots(void)
{
    return block ? nfree : FMPL_MPI_STAGE_SLOTS;
}

void fmpl_mpi_stage_finalize(void)
{
    if (block)
        fmpl_fab_free(block);
    block = NULL;
    block_failed = 0;
    nfree = 0;
}

/* ------------------------------------------------------------ buffers of a transfer */

void fmpl_mpi_buf_pack_to(const fmpl_mpi_buf *b, void *dst)
{
    int64_t written;
    if (b->bytes <= 0)
        return;
    if (b->type)
        fmpl_dt_pack(b->user, b->count, b->type, 0, dst, b->bytes, &written);
    else
        memcpy(dst, b->data, (size_t)b->bytes);
}

void fmpl_mpi_buf_unpack_from(const fmpl_mpi_buf *b, const void *src, MPI_Aint bytes)
{
    int64_t consumed;
    if (bytes <= 0)
        return;
    if (b->type)
        fmpl_dt_unpack(src, bytes, b->user, b->count, b->type, 0, &consumed);
    else
        memcpy(b->data, src, (size_t)bytes);
}

int fmpl_mpi_buf_stage_slow(fmpl_mpi_buf *b, int pack)
{
    void *stage = fmpl_mpi_stage_get((size_t)b->bytes);
    if (!stage)
        return MPI_ERR_NO_MEM;
    if (pack)
        fmpl_mpi_buf_pack_to(b, stage);
    b->data = stage;
    return MPI_SUCCESS;
}

void fmpl_mpi_buf_unstage_slow(fmpl_mpi_buf *b, MPI_Aint received)
{
    if (!b->data)
        return;
    fmpl_mpi_buf_unpack_from(b, b->data, received < b->bytes ? received : b->bytes);
    fmpl_mpi_stage_put(b->data);
    b->data = NULL;
}
