/* The symmetric arena's second view: mapping it at an agreed address.  See
 * symmetric.h for the layout and the invariants; runtime/symmetric.c runs
 * the agreement that calls these. */
#include "fabric/symmetric.h"
#include "base/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17; C libraries older than glibc 2.28 lack it */
#endif

fmpl_symmetric fmpl_sym = {.fd = -1};

void fmpl_sym_setup(uint64_t seg_off, uint64_t size, int fd)
{
    memset(&fmpl_sym, 0, sizeof fmpl_sym);
    fmpl_sym.seg_off = seg_off;
    fmpl_sym.size = size;
    fmpl_sym.fd = fd;
}

void fmpl_sym_finalize(void)
{
    if (fmpl_sym.base)
        munmap(fmpl_sym.base, fmpl_sym.size);
    if (fmpl_sym.fd >= 0)
        close(fmpl_sym.fd);
    free(fmpl_sym.blocks);
    memset(&fmpl_sym, 0, sizeof fmpl_sym);
    fmpl_sym.fd = -1;
}

int fmpl_sym_try_place(uint64_t addr)
{
    if (fmpl_sym.fd < 0 || fmpl_sym.size == 0 || addr == 0 || (addr & 4095))
        return 0;
    /* NOREPLACE: an address in use fails (EEXIST) instead of being taken
     * over.  A kernel older than 4.17 treats the flag as a hint and may map
     * elsewhere: that counts as a failure too. */
    void *want = (void *)(uintptr_t)addr;
    void *p = mmap(want, fmpl_sym.size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE, fmpl_sym.fd, (off_t)fmpl_sym.seg_off);
    if (p == MAP_FAILED) {
        fmpl_log_debug("symmetric arena: %#llx refused (%s)", (unsigned long long)addr,
                       strerror(errno));
        return 0;
    }
    if (p != want) {
        munmap(p, fmpl_sym.size);
        return 0;
    }
    fmpl_sym.base = p;
    return 1;
}

void fmpl_sym_unplace(void)
{
    if (fmpl_sym.base)
        munmap(fmpl_sym.base, fmpl_sym.size);
    fmpl_sym.base = NULL;
}

uint64_t fmpl_sym_propose(void)
{
    if (fmpl_sym.size == 0)
        return 0;
    /* Where the kernel would put it now: reserve nothing, just ask. */
    void *p = mmap(NULL, fmpl_sym.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return 0;
    munmap(p, fmpl_sym.size);
    return (uint64_t)(uintptr_t)p;
}
