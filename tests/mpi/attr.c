/* Attributes: predefined attributes' values (MPI_TAG_UB agrees with what
 * point-to-point accepts), copy callbacks on MPI_Comm_dup (the flag decides;
 * MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN), delete callbacks on replace,
 * delete and free (counted, with the values they get), a freed keyval whose
 * attributes live on, callback errors, the MPI-1 names, MPI_COMM_SELF's
 * attributes deleted newest first at MPI_Finalize, and error classes. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct counters {
    int copies, deletes;
    intptr_t last_deleted;
} counters;

#define V(x) ((void *)(intptr_t)(x))

/* Copies value + 1 (so the copy can be told apart). */
static int copy_plus_one(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    ((counters *)extra)->copies++;
    *(void **)out = V((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

/* Declines to copy. */
static int copy_refuse(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)in;
    (void)out;
    ((counters *)extra)->copies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int copy_fail(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)in;
    (void)out;
    ((counters *)extra)->copies++;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int fail_deletes = 0;

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    counters *c = extra;
    if (fail_deletes)
        return MPI_ERR_OTHER;
    c->deletes++;
    c->last_deleted = (intptr_t)value;
    return MPI_SUCCESS;
}

/* A delete callback that frees its keyval (through its own copy of the
 * handle), as MPICH's attr/keyval_double_free does. */
static int freeing_deletes;
static int delete_and_free_keyval(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    freeing_deletes++;
    return *(int *)extra ? MPI_Keyval_free(&keyval) : MPI_Comm_free_keyval(&keyval);
}

static int type_deletes;
static int type_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)t;
    (void)keyval;
    (void)value;
    (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

/* MPI_COMM_SELF's attributes at MPI_Finalize: the order of deletion. */
static int self_order[2], self_n;

static int self_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval;
    (void)extra;
    int flag;
    MPI_Initialized(&flag); /* MPI still works here */
    if (comm == MPI_COMM_SELF && flag && self_n < 2)
        self_order[self_n++] = (int)(intptr_t)value;
    return MPI_SUCCESS;
}

static int get_int_attr(MPI_Comm comm, int keyval, int *flag)
{
    int *p = NULL;
    CHECK_OK(MPI_Comm_get_attr(comm, keyval, &p, flag));
    return *flag ? *p : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Predefined attributes. */
    int tag_ub = get_int_attr(MPI_COMM_WORLD, MPI_TAG_UB, &flag);
    CHECK(flag && tag_ub >= 32767, "MPI_TAG_UB %d flag %d", tag_ub, flag);
    CHECK(tag_ub == 0x7ffffffe, "MPI_TAG_UB is %#x", tag_ub);
    int host = get_int_attr(MPI_COMM_WORLD, MPI_HOST, &flag);
    CHECK(flag && host == MPI_PROC_NULL, "MPI_HOST %d", host);
    int io = get_int_attr(MPI_COMM_WORLD, MPI_IO, &flag);
    CHECK(flag && io == MPI_ANY_SOURCE, "MPI_IO %d", io);
    int wg = get_int_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag);
    CHECK(flag && wg == 1, "MPI_WTIME_IS_GLOBAL %d", wg);
    int us = get_int_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &flag);
    CHECK(flag && us >= n, "MPI_UNIVERSE_SIZE %d", us); /* the launcher may offer room for more */
    int an = get_int_attr(MPI_COMM_WORLD, MPI_APPNUM, &flag);
    CHECK(flag && an == 0, "MPI_APPNUM %d", an);
    int last = get_int_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &flag);
    CHECK(flag && last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", last);
    int cls;
    CHECK_OK(MPI_Add_error_class(&cls));
    last = get_int_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &flag);
    CHECK(last >= cls && cls > MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d after class %d", last, cls);
    tag_ub = get_int_attr(MPI_COMM_SELF, MPI_TAG_UB, &flag);
    CHECK(flag && tag_ub == 0x7ffffffe, "MPI_TAG_UB on MPI_COMM_SELF: %d", tag_ub);
    int *pv;
    CHECK_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &pv, &flag));
    CHECK(flag && *pv == 0x7ffffffe, "MPI_Attr_get(MPI_TAG_UB)");

    /* MPI_TAG_UB is the largest tag point-to-point takes. */
    int x = 1, y = 0;
    CHECK_OK(MPI_Sendrecv(&x, 1, MPI_INT, rank, tag_ub, &y, 1, MPI_INT, rank, tag_ub,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(y == 1, "self message with tag MPI_TAG_UB");
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, rank, tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);

    /* Keyvals and callbacks. */
    counters ca = {0}, cb = {0}, cc = {0}, cd = {0};
    int ka, kb, kc, kd;
    CHECK_OK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &ka, &ca));
    CHECK_OK(MPI_Comm_create_keyval(copy_refuse, count_delete, &kb, &cb));
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kc, &cc));
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kd, &cd));
    MPI_Comm c1, c2;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    void *got;
    CHECK_OK(MPI_Comm_get_attr(c1, ka, &got, &flag));
    CHECK(!flag, "attribute present before it was set");
    CHECK_OK(MPI_Comm_set_attr(c1, ka, V(42)));
    CHECK_OK(MPI_Comm_set_attr(c1, kb, V(7)));
    CHECK_OK(MPI_Comm_set_attr(c1, kc, V(9)));
    CHECK_OK(MPI_Comm_set_attr(c1, kd, &x));
    CHECK_OK(MPI_Comm_get_attr(c1, ka, &got, &flag));
    CHECK(flag && got == V(42), "get a: %p", got);

    CHECK_OK(MPI_Comm_dup(c1, &c2));
    CHECK(ca.copies == 1 && cb.copies == 1 && ca.deletes == 0, "dup: copies a %d b %d",
          ca.copies, cb.copies);
    CHECK_OK(MPI_Comm_get_attr(c2, ka, &got, &flag));
    CHECK(flag && got == V(43), "dup: a copied as %p", got);
    CHECK_OK(MPI_Comm_get_attr(c2, kb, &got, &flag));
    CHECK(!flag, "dup: b copied although its callback said no");
    CHECK_OK(MPI_Comm_get_attr(c2, kc, &got, &flag));
    CHECK(!flag, "dup: c copied with MPI_COMM_NULL_COPY_FN");
    CHECK_OK(MPI_Comm_get_attr(c2, kd, &got, &flag));
    CHECK(flag && got == &x, "dup: d not copied by MPI_COMM_DUP_FN");
    /* the original is untouched */
    CHECK_OK(MPI_Comm_get_attr(c1, ka, &got, &flag));
    CHECK(flag && got == V(42), "dup changed the original's a: %p", got);

    /* Replace: the old value is deleted first. */
    CHECK_OK(MPI_Comm_set_attr(c1, ka, V(50)));
    CHECK(ca.deletes == 1 && ca.last_deleted == 42, "replace: deletes %d last %ld", ca.deletes,
          (long)ca.last_deleted);
    /* Delete. */
    CHECK_OK(MPI_Comm_delete_attr(c1, kb));
    CHECK(cb.deletes == 1 && cb.last_deleted == 7, "delete b: %d %ld", cb.deletes,
          (long)cb.last_deleted);
    CHECK_OK(MPI_Comm_get_attr(c1, kb, &got, &flag));
    CHECK(!flag, "b still there after delete");
    /* Free: every remaining attribute's delete callback. */
    CHECK_OK(MPI_Comm_free(&c2));
    CHECK(ca.deletes == 2 && ca.last_deleted == 43, "free c2: a deletes %d last %ld",
          ca.deletes, (long)ca.last_deleted);
    CHECK(cb.deletes == 1 && cc.deletes == 0, "free c2: b %d c %d", cb.deletes, cc.deletes);
    /* A freed keyval: the handle becomes invalid, the attribute lives on. */
    int ka_copy = ka;
    CHECK_OK(MPI_Comm_free_keyval(&ka));
    CHECK(ka == MPI_KEYVAL_INVALID, "freed keyval is %#x", ka);
    CHECK_OK(MPI_Comm_get_attr(c1, ka_copy, &got, &flag));
    CHECK(flag && got == V(50), "attribute of a freed keyval: %p", got);
    CHECK_OK(MPI_Comm_free(&c1));
    CHECK(ca.deletes == 3 && ca.last_deleted == 50, "free c1: a deletes %d last %ld",
          ca.deletes, (long)ca.last_deleted);
    CHECK(cc.deletes == 1 && cc.last_deleted == 9, "free c1: c deletes %d", cc.deletes);
    CHECK(cb.copies == 1 && ca.copies == 1, "extra copies a %d b %d", ca.copies, cb.copies);

    /* Callback errors. */
    counters ce = {0};
    int ke;
    CHECK_OK(MPI_Comm_create_keyval(copy_fail, count_delete, &ke, &ce));
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    CHECK_OK(MPI_Comm_set_attr(c1, ke, V(1)));
    c2 = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Comm_dup(c1, &c2), MPI_ERR_OTHER);
    CHECK(c2 == MPI_COMM_NULL && ce.copies == 1, "failed dup: newcomm %#x copies %d", c2,
          ce.copies);
    fail_deletes = 1;
    CHECK_CLASS(MPI_Comm_delete_attr(c1, ke), MPI_ERR_OTHER);
    CHECK_OK(MPI_Comm_get_attr(c1, ke, &got, &flag));
    CHECK(flag && got == V(1), "a failed delete removed the attribute");
    CHECK_CLASS(MPI_Comm_free(&c1), MPI_ERR_OTHER);
    CHECK(c1 != MPI_COMM_NULL, "a failed free released the communicator");
    fail_deletes = 0;
    CHECK_OK(MPI_Comm_free(&c1));
    CHECK(ce.deletes == 1 && ce.last_deleted == 1, "delete after failures: %d", ce.deletes);
    CHECK_OK(MPI_Comm_free_keyval(&ke));

    /* The MPI-1 names. */
    counters cm = {0};
    int km;
    CHECK_OK(MPI_Keyval_create(MPI_DUP_FN, count_delete, &km, &cm));
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    CHECK_OK(MPI_Attr_put(c1, km, V(77)));
    CHECK_OK(MPI_Comm_dup(c1, &c2));
    CHECK_OK(MPI_Attr_get(c2, km, &got, &flag));
    CHECK(flag && got == V(77), "MPI_DUP_FN through MPI_Attr_get: %p", got);
    CHECK_OK(MPI_Attr_delete(c2, km));
    CHECK(cm.deletes == 1, "MPI_Attr_delete: %d", cm.deletes);
    CHECK_OK(MPI_Comm_free(&c2));
    CHECK_OK(MPI_Comm_free(&c1));
    CHECK(cm.deletes == 2, "free after MPI_Attr_put: %d", cm.deletes);
    CHECK_OK(MPI_Keyval_free(&km));
    CHECK_OK(MPI_Comm_free_keyval(&kb));
    CHECK_OK(MPI_Comm_free_keyval(&kc));

    /* Errors. */
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, V(1)), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
    int pre = MPI_TAG_UB;
    CHECK_CLASS(MPI_Comm_free_keyval(&pre), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, kb, V(1)), MPI_ERR_KEYVAL); /* freed */
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, V(1)), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 0x12345, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_free_keyval(&kb), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_NULL, kd, &got, &flag), MPI_ERR_COMM);

    /* Keyval lifetime (MPICH attr/keyval_double_free{,_comm}): freed in a
     * delete callback while another attribute still uses it, freed again
     * through copies of the handle (accepted: attributes still use it), its
     * callback still runs for the last attribute, and then the handle is
     * dead: MPI_ERR_KEYVAL, not a crash. */
    for (int mpi1 = 0; mpi1 < 2; mpi1++) {
        static int mpi1_flag[2] = {0, 1};
        int kf, copy1, copy2;
        MPI_Comm d1, d2;
        freeing_deletes = 0;
        CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_and_free_keyval, &kf,
                                        &mpi1_flag[mpi1]));
        copy1 = copy2 = kf;
        CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &d1));
        CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &d2));
        CHECK_OK(MPI_Comm_set_errhandler(d2, MPI_ERRORS_RETURN));
        CHECK_OK(MPI_Comm_set_attr(d1, kf, V(1)));
        CHECK_OK(MPI_Comm_set_attr(d2, kf, V(2)));
        CHECK_OK(MPI_Comm_free(&d1)); /* first free, inside the callback */
        CHECK(freeing_deletes == 1, "delete callback ran %d times", freeing_deletes);
        CHECK_OK(mpi1 ? MPI_Keyval_free(&kf) : MPI_Comm_free_keyval(&kf)); /* second */
        CHECK(kf == MPI_KEYVAL_INVALID, "the freed handle was not reset");
        CHECK_OK(MPI_Comm_free_keyval(&copy1)); /* third: still used by d2's attribute */
        CHECK_CLASS(MPI_Comm_free_keyval(&kf), MPI_ERR_KEYVAL); /* MPI_KEYVAL_INVALID */
        CHECK_CLASS(MPI_Comm_set_attr(d2, copy2, V(3)), MPI_ERR_KEYVAL); /* freed */
        void *v = NULL;
        CHECK_OK(MPI_Comm_get_attr(d2, copy2, &v, &flag)); /* still attached */
        CHECK(flag && v == V(2), "attribute of a freed keyval lost (flag %d)", flag);
        CHECK_OK(MPI_Comm_free(&d2)); /* the callback still runs, frees once more */
        CHECK(freeing_deletes == 2, "delete callback ran %d times", freeing_deletes);
        int dead = copy2; /* no attribute uses it now: the handle is dead */
        CHECK_CLASS(MPI_Comm_free_keyval(&dead), MPI_ERR_KEYVAL);
        CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, copy2, V(4)), MPI_ERR_KEYVAL);
    }
    /* The same for datatype keyvals. */
    {
        int kt, copy;
        MPI_Datatype t1;
        type_deletes = 0;
        CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &kt, NULL));
        copy = kt;
        CHECK_OK(MPI_Type_dup(MPI_INT, &t1));
        CHECK_OK(MPI_Type_set_attr(t1, kt, V(1)));
        CHECK_OK(MPI_Type_free_keyval(&kt));
        CHECK(kt == MPI_KEYVAL_INVALID, "the freed type keyval was not reset");
        CHECK_OK(MPI_Type_free_keyval(&copy)); /* again: an attribute still uses it */
        CHECK_CLASS(MPI_Type_free_keyval(&kt), MPI_ERR_KEYVAL);
        CHECK_OK(MPI_Type_free(&t1));
        CHECK(type_deletes == 1, "type delete callback ran %d times", type_deletes);
    }

    /* MPI_COMM_SELF: deleted at MPI_Finalize, newest first. */
    int ks;
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &ks, NULL));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, ks, V(1)));
    int ks2;
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &ks2, NULL));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, ks2, V(2)));
    CHECK_OK(MPI_Comm_free_keyval(&ks));
    CHECK_OK(MPI_Comm_free_keyval(&ks2));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kd, V(3))); /* left for MPI_Finalize */
    CHECK_OK(MPI_Comm_free_keyval(&kd));

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (self_n != 2 || self_order[0] != 2 || self_order[1] != 1) {
        fprintf(stderr, "rank %d: MPI_COMM_SELF attributes deleted %d times, order %d %d\n",
                rank, self_n, self_order[0], self_order[1]);
        return 1;
    }
    if (rank == 0)
        printf("mpi attributes ok on %d ranks\n", n);
    return 0;
}
