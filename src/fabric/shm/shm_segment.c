/* Shared segments: creation, attachment, removal.  See shm_segment.h. */
#include "fabric/shm/shm_segment.h"
#include "fabric/fabric_internal.h"
#include "base/error.h"
#include "base/exit_cleanup.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void fmpl_shm_segment_name(char *out, size_t len, const char *job_id, int rank)
{
    snprintf(out, len, "%s%s-%d", FMPL_SHM_PREFIX, job_id, rank);
}

static int map_fd(int fd, size_t size, char **base, const char *name)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "mmap of %s (%zu bytes) failed: %s", name, size,
                          strerror(errno));
    *base = p;
    return FMPL_SUCCESS;
}

int fmpl_shm_segment_create(const char *job_id, int rank, size_t size, char **base, int *fd_out)
{
    char name[256];
    fmpl_shm_segment_name(name, sizeof name, job_id, rank);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "cannot create shared segment %s: %s", name,
                          strerror(errno));
    if (ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "cannot size shared segment %s to %zu bytes: %s",
                          name, size, strerror(e));
    }
    int rc = map_fd(fd, size, base, name);
    if (rc != FMPL_SUCCESS)
        shm_unlink(name);
    else {
        char path[300];
        snprintf(path, sizeof path, "/dev/shm%s", name); /* glibc's shm_open directory */
        fmpl_exit_cleanup_set(path);
    }
    if (rc == FMPL_SUCCESS && fd_out)
        *fd_out = fd; /* the caller maps parts of it again later (the symmetric arena) */
    else
        close(fd);
    return rc;
}

int fmpl_shm_segment_attach(const char *job_id, int rank, size_t size, char **base)
{
    char name[256];
    fmpl_shm_segment_name(name, sizeof name, job_id, rank);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "cannot open rank %d's shared segment %s: %s",
                          rank, name, strerror(errno));
    int rc = map_fd(fd, size, base, name);
    close(fd);
    return rc;
}

void fmpl_shm_segment_unlink(const char *job_id, int rank)
{
    char name[256];
    fmpl_shm_segment_name(name, sizeof name, job_id, rank);
    shm_unlink(name);
    fmpl_exit_cleanup_clear();
}

void fmpl_shm_segment_unmap(char *base, size_t size)
{
    if (base)
        munmap(base, size);
}

int fmpl_shm_segment_attach_fd(pid_t pid, int fd, size_t size, char **base)
{
    char name[64];
    snprintf(name, sizeof name, "/proc/%ld/fd/%d", (long)pid, fd);
    int mine = open(name, O_RDWR | O_CLOEXEC);
    if (mine < 0)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "cannot open process %ld's shared segment through %s: %s", (long)pid,
                          name, strerror(errno));
    int rc = map_fd(mine, size, base, name);
    close(mine);
    return rc;
}

int fmpl_shm_header_ok(const char *base, int rank)
{
    const fmpl_shm_header *h = (const fmpl_shm_header *)base;
    return h->magic == FMPL_SHM_MAGIC && h->rank == rank;
}
