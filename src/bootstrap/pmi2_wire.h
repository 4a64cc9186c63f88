/* PMI-2 wire format (the client is pmi2.c).
 *
 * A message is a 6-character header holding its length in decimal, padded
 * with spaces ("%-6d" from clients and Slurm, "%6d" from Hydra), then that many bytes of key=value
 * pairs each ended by ';', the first being cmd=<name>.  Servers (Slurm's
 * pmi2 plugin) do not unescape ';' inside values, so a value must not hold
 * one.  Header-only so a unit test can check it without a server. */
#ifndef FMPL_BOOTSTRAP_PMI2_WIRE_H
#define FMPL_BOOTSTRAP_PMI2_WIRE_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "bootstrap/pmi1_wire.h"

#define FMPL_PMI2_HEADER_LEN 6
#define FMPL_PMI2_KEYLEN_MAX 64    /* PMI2_MAX_KEYLEN, including the NUL */
#define FMPL_PMI2_VALLEN_MAX 1024  /* PMI2_MAX_VALLEN, including the NUL */
#define FMPL_PMI2_JOBID_MAX 256
/* Longest message body FMPL sends or accepts: a kvs-get-response with a
 * full value, with room to spare for the other pairs. */
#define FMPL_PMI2_MSG_MAX 2048

/* Write the length header of a body of len bytes into msg[0..5] (no NUL). */
static inline void fmpl_pmi2_header(char *msg, int len)
{
    char header[FMPL_PMI2_HEADER_LEN + 1];
    snprintf(header, sizeof header, "%-6d", len);
    memcpy(msg, header, FMPL_PMI2_HEADER_LEN);
}

/* The body length a NUL-ended header announces, or -1 when it is not
 * digits padded with spaces.  Slurm pads on the right ("%-6d"), Hydra on
 * the left ("%6d"): both are accepted. */
static inline int fmpl_pmi2_parse_header(const char *header)
{
    int len = 0, digits = 0, i = 0;
    while (header[i] == ' ')
        i++;
    for (; header[i] >= '0' && header[i] <= '9'; i++, digits++)
        len = len * 10 + (header[i] - '0');
    for (; header[i] == ' '; i++)
        ;
    return digits > 0 && header[i] == '\0' ? len : -1;
}

/* The value of pair `key` of a message body (fmpl_pmi_field). */
static inline int fmpl_pmi2_field(const char *body, const char *key, char *out, size_t len)
{
    return fmpl_pmi_field(body, ";", key, out, len);
}

/* Copy text into out[len] (cut if longer) with ';', '=' and line breaks
 * made harmless for a message value. */
static inline void fmpl_pmi2_sanitize(const char *text, char *out, size_t len)
{
    size_t i = 0;
    for (; text[i] && i + 1 < len; i++)
        out[i] = strchr(";=\n\r", text[i]) ? '_' : text[i];
    out[i] = '\0';
}

#endif
