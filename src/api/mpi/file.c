/* MPI-IO's handles and error handlers, before MPI-IO itself.
 *
 * FMPL does not open files yet: every MPI_File_* function that would touch
 * one reports MPI_ERR_UNSUPPORTED_OPERATION (unsupported.c).  What works
 * without a file is here, so that programs and bindings that set up error
 * handling for files, or convert handles, run as on MPICH:
 *  - MPI_FILE_NULL's error handler, which the standard makes the handler of
 *    every file error that has no file to carry one (MPI_File_open,
 *    MPI_File_delete) and the default of newly opened files; it starts as
 *    MPI_ERRORS_RETURN, as the standard says.  Set, get and call it, and
 *    create handlers for files;
 *  - MPI_File_c2f / MPI_File_f2c: MPI_FILE_NULL is Fortran's 0.
 * A file handle other than MPI_FILE_NULL cannot exist, so one is MPI_ERR_FILE. */
#include "api/mpi/mpi_objects.h"

#include <stdarg.h>
#include <stdio.h>

static MPI_Errhandler file_null_errhandler = MPI_ERRORS_RETURN;

int fmpl_mpi_file_error(int code, const char *func, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fmpl_mpi_error_handler(file_null_errhandler, 0, code, func, "%s", msg);
}

static int check_file(MPI_File file, const char *func)
{
    if (file != MPI_FILE_NULL)
        return fmpl_mpi_file_error(MPI_ERR_FILE, func,
                                   "invalid file handle %p (no file can be open: FMPL does "
                                   "not provide MPI-IO yet)", (void *)file);
    return MPI_SUCCESS;
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    /* Stored with the communicators' function type (the same under the
     * MPICH ABI but for the handle's width); errhandler.c calls it with an
     * MPI_File * because the handler is made for FMPL_HK_FILE. */
    return fmpl_mpi_errhandler_create((MPI_Comm_errhandler_function *)(void (*)(void))fn,
                                      FMPL_HK_FILE, errhandler, "MPI_File_create_errhandler");
}
FMPL_MPI_WEAK(File_create_errhandler)

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_File_set_errhandler";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    int rc = check_file(file, func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!fmpl_mpi_errhandler_valid_for(errhandler, FMPL_HK_FILE))
        return fmpl_mpi_file_error(MPI_ERR_ARG, func,
                                   "0x%x is not an error handler for files (made by "
                                   "MPI_File_create_errhandler, or predefined)",
                                   (unsigned)errhandler);
    fmpl_mpi_errhandler_replace(&file_null_errhandler, errhandler);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(File_set_errhandler)

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_File_get_errhandler";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    int rc = check_file(file, func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!errhandler)
        return fmpl_mpi_file_error(MPI_ERR_ARG, func, "errhandler is NULL");
    fmpl_mpi_errhandler_ref(file_null_errhandler); /* the caller's reference */
    *errhandler = file_null_errhandler;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(File_get_errhandler)

int PMPI_File_call_errhandler(MPI_File file, int errorcode)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_File_call_errhandler";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    int rc = check_file(file, func);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_file_error(errorcode, func, "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(File_call_errhandler)

MPI_Fint PMPI_File_c2f(MPI_File file)
{
    (void)file; /* MPI_FILE_NULL, the only file, is 0 */
    return 0;
}
FMPL_MPI_WEAK(File_c2f)

MPI_File PMPI_File_f2c(MPI_Fint file)
{
    (void)file; /* 0, or a value no file has: MPI_FILE_NULL either way */
    return MPI_FILE_NULL;
}
FMPL_MPI_WEAK(File_f2c)
