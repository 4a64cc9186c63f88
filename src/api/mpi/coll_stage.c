/* The blocks of a collective's buffer argument, staged when a datatype is
 * not contiguous (see coll_stage.h).
 *
 * Staging is all or nothing per argument: one non-contiguous block type
 * (alltoallw) stages every block, so the algorithm sees either the user's
 * buffer or one packed buffer, never a mix.  The staging buffer comes from
 * dt_staging.c (a pool slot when it fits, else malloc) and goes back in
 * fmpl_mpi_blocks_done. */
#include "api/mpi/coll_stage.h"

#include <string.h>

typedef struct block {
    MPI_Aint count;
    uintptr_t addr;          /* the block's buffer address (before the type's lb) */
    MPI_Aint size, lb;       /* of the block's type; lb = true_lb */
    int contiguous;
    fmpl_datatype *dt;
    int64_t pos;             /* where its bytes are in `base` */
} block;

/* The type of block p (its held copy when there is one). */
static void type_info(const fmpl_mpi_blocks *b, int p, block *k, MPI_Aint *extent)
{
    MPI_Datatype t = b->types ? b->types[p] : b->type;
    fmpl_datatype *held = b->held ? b->held[b->types ? p : 0] : NULL;
    k->dt = NULL;
    k->lb = 0;
    if (held) {
        k->size = fmpl_dt_size(held);
        k->contiguous = fmpl_dt_is_contiguous(held);
    } else {
        fmpl_mpi_type_layout(t, &k->size, &k->contiguous);
    }
    *extent = k->size;
    /* derived, a padded pair, or a held copy */
    if (held || !k->contiguous || !fmpl_mpi_is_predefined_type(t)) {
        k->dt = held ? held : fmpl_mpi_datatype_get(t);
        k->lb = fmpl_dt_true_lb(k->dt);
        *extent = fmpl_dt_extent(k->dt);
    }
}

static void block_at(const fmpl_mpi_blocks *b, int p, block *k)
{
    MPI_Aint extent;
    type_info(b, p, k, &extent);
    k->count = b->counts.p ? fmpl_mpi_array_at(b->counts, p) : b->count;
    MPI_Aint d = b->displs.p ? fmpl_mpi_array_at(b->displs, p) : (MPI_Aint)p * b->count;
    k->addr = (uintptr_t)b->user + (uintptr_t)(b->displs_in_bytes ? d : d * extent);
    if (b->bdispls)
        k->pos = b->bdispls[p];
    else
        k->pos = b->stage ? (int64_t)p * k->count * k->size
                          : (int64_t)(k->addr + (uintptr_t)k->lb - (uintptr_t)b->base);
}

int fmpl_mpi_blocks_init(fmpl_mpi_blocks *b)
{
    b->stage = NULL;
    b->total = 0;
    int staged = 0;
    MPI_Aint lb0 = 0;
    for (int p = 0; p < b->n; p++) {
        block k;
        MPI_Aint extent;
        type_info(b, p, &k, &extent);
        MPI_Aint c = b->counts.p ? fmpl_mpi_array_at(b->counts, p) : b->count;
        if (!k.contiguous && c > 0 && k.size > 0)
            staged = 1;
        if (p == 0)
            lb0 = k.lb;
        if (!b->types && !b->counts.p) { /* uniform: every block alike */
            b->total = (int64_t)b->n * c * k.size;
            staged = !k.contiguous && c > 0 && k.size > 0;
            break;
        }
    }
    /* contiguous: the algorithm addresses the user's memory */
    b->base = b->types ? b->user : (char *)((uintptr_t)b->user + (uintptr_t)lb0);
    int64_t pos = 0;
    if (b->bcounts) {
        for (int p = 0; p < b->n; p++) {
            block k;
            b->bdispls[p] = 0;
            block_at(b, p, &k);
            b->bcounts[p] = (int64_t)k.count * k.size;
            b->bdispls[p] = staged ? pos : (int64_t)(k.addr + (uintptr_t)(b->types ? k.lb : 0) -
                                                     (uintptr_t)b->user);
            pos += b->bcounts[p];
        }
        b->total = pos;
    }
    if (!staged)
        return MPI_SUCCESS;
    b->stage = fmpl_mpi_stage_get((size_t)b->total);
    if (!b->stage)
        return MPI_ERR_NO_MEM;
    b->base = b->stage;
    return MPI_SUCCESS;
}

/* Block p between the user's buffer and the staging buffer: into the
 * staging buffer (pack) or out of it. */
static void move_block(const fmpl_mpi_blocks *b, int p, int pack)
{
    if (!b->stage)
        return;
    block k;
    block_at(b, p, &k);
    int64_t bytes = (int64_t)k.count * k.size, w;
    if (bytes == 0)
        return;
    char *user = (char *)(k.addr + (uintptr_t)k.lb), *staged = b->stage + k.pos;
    if (k.contiguous)
        memcpy(pack ? staged : user, pack ? user : staged, (size_t)bytes);
    else if (pack)
        fmpl_dt_pack((const void *)k.addr, k.count, k.dt, 0, staged, bytes, &w);
    else
        fmpl_dt_unpack(staged, bytes, (void *)k.addr, k.count, k.dt, 0, &w);
}

void fmpl_mpi_blocks_pack(const fmpl_mpi_blocks *b, int p) { move_block(b, p, 1); }
void fmpl_mpi_blocks_unpack(const fmpl_mpi_blocks *b, int p) { move_block(b, p, 0); }

void fmpl_mpi_blocks_pack_all(const fmpl_mpi_blocks *b)
{
    for (int p = 0; b->stage && p < b->n; p++)
        move_block(b, p, 1);
}

void fmpl_mpi_blocks_unpack_all(const fmpl_mpi_blocks *b)
{
    for (int p = 0; b->stage && p < b->n; p++)
        move_block(b, p, 0);
}

void fmpl_mpi_blocks_done(fmpl_mpi_blocks *b)
{
    fmpl_mpi_stage_put(b->stage);
    b->stage = NULL;
}
