/* Shared by the fabric's own files (fabric.c, fabric_link.c, shm/): not
 * part of the interface the protocols use (fabric.h). */
#ifndef FMPL_FABRIC_INTERNAL_H
#define FMPL_FABRIC_INTERNAL_H

#include <stddef.h>

/* "<host name>/<boot id>[/half]": what tells hosts apart (fabric.c). */
void fmpl_fabric_host_identity(char *out, size_t len);
/* FMPL_FABRIC=net: every peer goes through the network backend. */
int fmpl_fabric_forces_net(void);
/* Universe rank r's network address into the backend's address vector
 * (the backend is open: fabric.c, which net/net_iface.c serves). */
int fmpl_fabric_net_link(int r);
/* 0 when process_vm_readv reaches `rank`, else the errno (shm/shm_cma.c). */
int fmpl_shm_cma_probe(int rank);
/* The segment mapped at base has FMPL's header and belongs to `rank`. */
int fmpl_shm_header_ok(const char *base, int rank);

#endif
