/* Library-internal globals read on hot paths (every poll, every call's
 * entry and exit): hidden, so that the library reaches them directly
 * rather than through its symbol table (a load from the global offset
 * table before each access). */
#ifndef FMPL_BASE_HIDDEN_H
#define FMPL_BASE_HIDDEN_H

#define FMPL_HIDDEN __attribute__((visibility("hidden")))

/* Thread-local variables read on hot paths: the initial-exec model makes
 * each access one load at a fixed offset from the thread pointer; the
 * default (general dynamic) model of a shared library calls
 * __tls_get_addr, 3% of an 8-byte MPI_Allreduce.  Such variables come out
 * of the static TLS block, whose surplus glibc keeps for libraries that
 * are dlopen'ed (mpi4py loads libmpi so): keep them small (a few hundred
 * bytes in all). */
#define FMPL_TLS __thread __attribute__((tls_model("initial-exec")))

#endif
