/* MPI's name service (MPI-4.0 11.4.4): MPI_Publish_name, MPI_Lookup_name,
 * MPI_Unpublish_name.  The launcher keeps the names (bootstrap.h: publish,
 * lookup, unpublish; fmplrun, and Open MPI's mpirun through PMIx_Publish,
 * serve them for every process of the job, spawned ones included).  Names
 * and ports travel hex-encoded, since the PMI-1 wire splits its lines at
 * spaces and MPI allows any characters in both; under PMIx a name's hex
 * form must fit a PMIx key (up to 250 characters).  A launcher without a
 * name service (mpiexec.hydra's spawned worlds cannot share it with FMPL,
 * srun --mpi=pmi2) makes every call fail at once with
 * MPI_ERR_UNSUPPORTED_OPERATION and the reason; nothing waits.
 *
 * Errors: a name already published, or unpublished that is not,
 * MPI_ERR_SERVICE; a lookup of a name nobody published, MPI_ERR_NAME. */
#include "api/mpi/mpi_impl.h"
#include "runtime/runtime.h"
#include "base/hex.h"

#include <stdio.h>
#include <string.h>

/* Longest service name carried: its hex form must fit a PMI value. */
#define SERVICE_MAX 400

/* The class of a launcher's failure: a launcher that turns out not to serve
 * names (srun's PMIx) is MPI_ERR_UNSUPPORTED_OPERATION. */
static int failure_class(int rc)
{
    return rc == FMPL_ERR_UNSUPPORTED ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_INTERN;
}

/* The launcher's name service, or an error reported for func. */
static int name_service(const char *func, fmpl_bootstrap **bs)
{
    if (fmpl_runtime_bootstrap(bs) != FMPL_SUCCESS || !(*bs)->publish)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION, func,
                              "this job's launcher (%s) offers no name service; start the "
                              "job with fmplrun or Open MPI's mpirun",
                              *bs ? (*bs)->launcher : "none");
    return MPI_SUCCESS;
}

static int check_service(const char *func, const char *service, char *hex)
{
    if (!service)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "service_name is NULL");
    size_t n = strlen(service);
    if (n == 0 || n > SERVICE_MAX)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                              "service_name must have 1 to %d characters (it has %zu)",
                              SERVICE_MAX, n);
    fmpl_hex_encode(hex, service, n);
    return MPI_SUCCESS;
}

static int check_port(const char *func, const char *port, char *hex)
{
    if (!port)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "port_name is NULL");
    size_t n = strnlen(port, MPI_MAX_PORT_NAME);
    if (n == 0 || n >= MPI_MAX_PORT_NAME)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_PORT, func,
                              "port_name must have 1 to %d characters", MPI_MAX_PORT_NAME - 1);
    fmpl_hex_encode(hex, port, n);
    return MPI_SUCCESS;
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    (void)info; /* no keys are interpreted */
    fmpl_bootstrap *bs = NULL;
    char service[2 * SERVICE_MAX + 1], port[2 * MPI_MAX_PORT_NAME];
    int rc = check_service("MPI_Publish_name", service_name, service);
    if (rc == MPI_SUCCESS)
        rc = check_port("MPI_Publish_name", port_name, port);
    if (rc == MPI_SUCCESS)
        rc = name_service("MPI_Publish_name", &bs);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = bs->publish(bs, service, port);
    if (rc == FMPL_ERR_ARG)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_SERVICE, "MPI_Publish_name",
                              "the service name '%s' is already published", service_name);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, failure_class(rc), "MPI_Publish_name",
                              "the launcher failed to publish '%s': %s", service_name,
                              fmpl_error_string(rc));
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Publish_name)

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    (void)info;
    fmpl_bootstrap *bs = NULL;
    char service[2 * SERVICE_MAX + 1], port[2 * MPI_MAX_PORT_NAME];
    int rc = check_service("MPI_Unpublish_name", service_name, service);
    if (rc == MPI_SUCCESS)
        rc = check_port("MPI_Unpublish_name", port_name, port);
    if (rc == MPI_SUCCESS)
        rc = name_service("MPI_Unpublish_name", &bs);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = bs->unpublish(bs, service);
    if (rc == FMPL_ERR_ARG)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_SERVICE, "MPI_Unpublish_name",
                              "the service name '%s' is not published", service_name);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, failure_class(rc), "MPI_Unpublish_name",
                              "the launcher failed to unpublish '%s': %s", service_name,
                              fmpl_error_string(rc));
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Unpublish_name)

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    (void)info;
    fmpl_bootstrap *bs = NULL;
    char service[2 * SERVICE_MAX + 1], port[2 * MPI_MAX_PORT_NAME];
    int rc = check_service("MPI_Lookup_name", service_name, service);
    if (rc == MPI_SUCCESS && !port_name)
        rc = fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Lookup_name", "port_name is NULL");
    if (rc == MPI_SUCCESS)
        rc = name_service("MPI_Lookup_name", &bs);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = bs->lookup(bs, service, port, sizeof port);
    if (rc == FMPL_ERR_ARG)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NAME, "MPI_Lookup_name",
                              "no port is published under the service name '%s'", service_name);
    size_t got;
    if (rc == FMPL_SUCCESS &&
        fmpl_hex_decode(port_name, MPI_MAX_PORT_NAME - 1, port, '\0', &got) != 0)
        rc = FMPL_ERR_BOOTSTRAP;
    if (rc == FMPL_SUCCESS)
        port_name[got] = '\0';
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, failure_class(rc), "MPI_Lookup_name",
                              "the launcher failed to look '%s' up: %s", service_name,
                              fmpl_error_string(rc));
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Lookup_name)
