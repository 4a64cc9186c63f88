/* Info objects: set/get (MPI-3 valuelen truncation), MPI_Info_get_string
 * (MPI-4 buflen protocol), valuelen, nkeys/nthkey order, delete, dup
 * independence, free; MPI_INFO_ENV and MPI_Info_create_env; communicator
 * hints (set/get return copies, MPI_Comm_dup passes them on); error
 * classes. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    /* MPI-4.0: info objects work before MPI_Init, and one made then lives
     * on through MPI_Finalize (checked after it). */
    MPI_Info survivor;
    if (MPI_Info_create(&survivor) != MPI_SUCCESS || MPI_Info_set(survivor, "s", "kept") != MPI_SUCCESS) {
        fprintf(stderr, "info objects do not work before MPI_Init\n");
        return 1;
    }
    {
        MPI_Info early;
        char value[8];
        int flag = 0;
        if (MPI_Info_create(&early) != MPI_SUCCESS || MPI_Info_set(early, "k", "v1") != MPI_SUCCESS ||
            MPI_Info_get(early, "k", 7, value, &flag) != MPI_SUCCESS || !flag ||
            strcmp(value, "v1") != 0 || MPI_Info_free(&early) != MPI_SUCCESS ||
            early != MPI_INFO_NULL) {
            fprintf(stderr, "info objects do not work before MPI_Init\n");
            return 1;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, n, flag, len, nkeys;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];

    MPI_Info info, copy;
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 0, "new info has %d keys", nkeys);
    CHECK_OK(MPI_Info_set(info, "alpha", "one"));
    CHECK_OK(MPI_Info_set(info, "beta", "twotwo"));
    CHECK_OK(MPI_Info_set(info, "alpha", "three")); /* replaced, stays first */
    CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 2, "nkeys %d", nkeys);
    CHECK_OK(MPI_Info_get_nthkey(info, 0, key));
    CHECK(!strcmp(key, "alpha"), "key 0 is %s", key);
    CHECK_OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(!strcmp(key, "beta"), "key 1 is %s", key);

    CHECK_OK(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && !strcmp(value, "three"), "alpha = %s", value);
    CHECK_OK(MPI_Info_get(info, "beta", 3, value, &flag)); /* truncated to 3 */
    CHECK(flag && !strcmp(value, "two"), "beta truncated = %s", value);
    strcpy(value, "untouched");
    CHECK_OK(MPI_Info_get(info, "gamma", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(!flag && !strcmp(value, "untouched"), "absent key: flag %d value %s", flag, value);
    CHECK_OK(MPI_Info_get_valuelen(info, "beta", &len, &flag));
    CHECK(flag && len == 6, "valuelen %d", len);
    CHECK_OK(MPI_Info_get_valuelen(info, "gamma", &len, &flag));
    CHECK(!flag, "valuelen of an absent key");

    /* MPI_Info_get_string: buflen in, size needed out. */
    len = sizeof value;
    CHECK_OK(MPI_Info_get_string(info, "beta", &len, value, &flag));
    CHECK(flag && len == 7 && !strcmp(value, "twotwo"), "get_string %d %s", len, value);
    len = 4;
    CHECK_OK(MPI_Info_get_string(info, "beta", &len, value, &flag));
    CHECK(flag && len == 7 && !strcmp(value, "two"), "get_string short %d %s", len, value);
    len = 0;
    CHECK_OK(MPI_Info_get_string(info, "alpha", &len, NULL, &flag));
    CHECK(flag && len == 6, "get_string size query %d", len);
    len = 5;
    CHECK_OK(MPI_Info_get_string(info, "gamma", &len, value, &flag));
    CHECK(!flag && len == 5, "get_string absent: flag %d len %d", flag, len);

    /* dup is independent. */
    CHECK_OK(MPI_Info_dup(info, &copy));
    CHECK_OK(MPI_Info_set(info, "alpha", "changed"));
    CHECK_OK(MPI_Info_delete(info, "beta"));
    CHECK_OK(MPI_Info_get(copy, "alpha", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && !strcmp(value, "three"), "dup followed the original: %s", value);
    CHECK_OK(MPI_Info_get_nkeys(copy, &nkeys));
    CHECK(nkeys == 2, "dup nkeys %d", nkeys);
    CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 1, "nkeys after delete %d", nkeys);
    CHECK_CLASS(MPI_Info_delete(info, "beta"), MPI_ERR_INFO_NOKEY);

    /* Long keys and values. */
    char longkey[MPI_MAX_INFO_KEY + 2], longval[MPI_MAX_INFO_VAL + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    memset(longval, 'v', sizeof longval - 1);
    longval[sizeof longval - 1] = '\0';
    CHECK_CLASS(MPI_Info_set(info, longkey, "x"), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    CHECK_CLASS(MPI_Info_set(info, "k", ""), MPI_ERR_INFO_VALUE);
    longkey[MPI_MAX_INFO_KEY] = '\0'; /* the longest allowed */
    longval[MPI_MAX_INFO_VAL] = '\0';
    CHECK_OK(MPI_Info_set(info, longkey, longval));
    CHECK_OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(!strcmp(key, longkey), "longest key came back different");
    CHECK_OK(MPI_Info_get(info, longkey, MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && !strcmp(value, longval), "longest value came back different");

    CHECK_CLASS(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get(info, "alpha", -1, value, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &nkeys), MPI_ERR_INFO);

    /* free */
    MPI_Info freed = copy;
    CHECK_OK(MPI_Info_free(&copy));
    CHECK(copy == MPI_INFO_NULL, "freed info is not MPI_INFO_NULL");
    CHECK_CLASS(MPI_Info_get_nkeys(freed, &nkeys), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_free(&copy), MPI_ERR_INFO);

    /* MPI_INFO_ENV: valid, read-only; maxprocs is the world size. */
    CHECK_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys));
    for (int i = 0; i < nkeys; i++) {
        CHECK_OK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key));
        CHECK_OK(MPI_Info_get_valuelen(MPI_INFO_ENV, key, &len, &flag));
        CHECK(flag && len > 0, "MPI_INFO_ENV key %s", key);
    }
    CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && atoi(value) == n, "maxprocs %s", flag ? value : "(absent)");
    CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strstr(value, "mpi_info"), "command %s", flag ? value : "(absent)");
    CHECK_CLASS(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);
    MPI_Info env = MPI_INFO_ENV;
    CHECK_CLASS(MPI_Info_free(&env), MPI_ERR_INFO);
    CHECK_OK(MPI_Info_create_env(argc, argv, &copy));
    int nenv;
    CHECK_OK(MPI_Info_get_nkeys(copy, &nenv));
    CHECK(nenv == nkeys, "MPI_Info_create_env has %d keys, MPI_INFO_ENV %d", nenv, nkeys);
    CHECK_OK(MPI_Info_free(&copy));
    CHECK_OK(MPI_Info_dup(MPI_INFO_ENV, &copy));
    CHECK_OK(MPI_Info_free(&copy));

    /* Communicator hints. */
    MPI_Comm c, d;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Info used;
    CHECK_OK(MPI_Comm_get_info(c, &used));
    CHECK_OK(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys == 0, "fresh communicator has %d hints", nkeys);
    CHECK_OK(MPI_Info_free(&used));
    CHECK_OK(MPI_Comm_set_info(c, info));
    CHECK_OK(MPI_Info_set(info, "alpha", "after")); /* the communicator kept a copy */
    CHECK_OK(MPI_Comm_get_info(c, &used));
    CHECK_OK(MPI_Info_get(used, "alpha", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && !strcmp(value, "changed"), "hint alpha = %s", value);
    CHECK_OK(MPI_Info_set(used, "alpha", "mine")); /* and returned a copy */
    CHECK_OK(MPI_Info_free(&used));
    CHECK_OK(MPI_Comm_dup(c, &d));
    CHECK_OK(MPI_Comm_get_info(d, &used));
    CHECK_OK(MPI_Info_get(used, "alpha", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && !strcmp(value, "changed"), "dup's hint alpha = %s", flag ? value : "(absent)");
    CHECK_OK(MPI_Info_free(&used));
    CHECK_CLASS(MPI_Comm_set_info(c, (MPI_Info)0x9c00ffff), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Comm_get_info(MPI_COMM_NULL, &used), MPI_ERR_COMM);
    CHECK_OK(MPI_Comm_free(&d));
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Comm_set_info(MPI_COMM_WORLD, info)); /* released by MPI_Finalize */

    CHECK_OK(MPI_Info_free(&info));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi info ok on %d ranks\n", n);
    MPI_Finalize();
    {
        MPI_Info copy;
        char value[8];
        int found = 0;
        if (MPI_Info_dup(survivor, &copy) != MPI_SUCCESS ||
            MPI_Info_get(copy, "s", 7, value, &found) != MPI_SUCCESS || !found ||
            strcmp(value, "kept") != 0 || MPI_Info_free(&copy) != MPI_SUCCESS ||
            MPI_Info_free(&survivor) != MPI_SUCCESS) {
            fprintf(stderr, "info objects do not survive MPI_Finalize\n");
            return 1;
        }
    }
    return 0;
}
