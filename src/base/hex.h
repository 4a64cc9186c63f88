/* Bytes as lowercase hex text, for values that travel where only some
 * characters may (PMI-1 words: no spaces, no '='). */
#ifndef FMPL_BASE_HEX_H
#define FMPL_BASE_HEX_H

#include <stddef.h>

/* Write the 2 * n hex digits of p[0 .. n) and a NUL into out. */
void fmpl_hex_encode(char *out, const void *p, size_t n);
/* Read hex digit pairs from s into out[0 .. max) up to `stop` (which may be
 * '\0'); *n receives the bytes read.  0 when s ends at `stop` after whole
 * pairs, -1 when it holds anything else or more than max bytes. */
int fmpl_hex_decode(void *out, size_t max, const char *s, char stop, size_t *n);

#endif
