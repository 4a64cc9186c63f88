/* libfabric, loaded when the network backend is first needed (dlopen).
 *
 * Why not linked: linking libfabric.so.1 loads, in every FMPL program, the
 * provider libraries it depends on (verbs, EFA, PSM, PSM2...) and runs their
 * constructors, which cost start-up time even on one host (Debian's
 * libinfinipath sleeps in 125 us steps, 50-80 ms in all, at load) and make
 * system calls no message path asks for.  Only six functions of libfabric
 * are real symbols; everything else is inline in its headers, calling
 * through the objects these return.  net.h routes the six through
 * fmpl_ofi. */
#include "fabric/net/net.h"

#include <dlfcn.h>
#include <stdio.h>

fmpl_ofi_lib fmpl_ofi;

int fmpl_ofi_load(char *why, size_t len)
{
    static int loaded; /* 1: yes, -1: failed (why kept) */
    static char failure[256];
    if (loaded > 0)
        return 0;
    if (loaded < 0) {
        snprintf(why, len, "%s", failure);
        return -1;
    }
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(failure, sizeof failure, "cannot load libfabric.so.1: %s", dlerror());
    } else {
        fmpl_ofi_lib l;
        /* POSIX: a function pointer converts from dlsym's void * this way. */
        *(void **)&l.getinfo = dlsym(h, "fi_getinfo");
        *(void **)&l.freeinfo = dlsym(h, "fi_freeinfo");
        *(void **)&l.dupinfo = dlsym(h, "fi_dupinfo");
        *(void **)&l.fabric = dlsym(h, "fi_fabric");
        *(void **)&l.strerror = dlsym(h, "fi_strerror");
        *(void **)&l.version = dlsym(h, "fi_version");
        if (l.getinfo && l.freeinfo && l.dupinfo && l.fabric && l.strerror && l.version) {
            fmpl_ofi = l;
            loaded = 1;
            return 0;
        }
        snprintf(failure, sizeof failure, "libfabric.so.1 lacks fi_getinfo, fi_fabric or another "
                 "function FMPL needs (libfabric 1.9 or newer is)");
        dlclose(h);
    }
    loaded = -1;
    snprintf(why, len, "%s", failure);
    return -1;
}
