/* A JSON string literal, quoted and escaped: shared by fmpl-bench and
 * mpi-suite (header-only, so that mpi-suite's sources build alone with any
 * MPI's mpicc). */
#ifndef BENCH_JSON_STRING_H
#define BENCH_JSON_STRING_H

#include <stdio.h>

static inline void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

#endif
