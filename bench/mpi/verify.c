/* mpi-suite: the data patterns and byte-for-byte checks shared by all
 * benchmarks.  A pattern depends on a seed and the byte's offset, so a
 * block that landed in the wrong place, a stale buffer or a truncated
 * message all show as a mismatch.  Receive areas are filled with a value
 * other than the pattern before the checked operation. */
#include "suite.h"

#include <string.h>

#define GUARD_BYTE 0xa5

unsigned char pattern_byte(unsigned seed, long i)
{
    unsigned long x = (unsigned long)i;
    return (unsigned char)(seed * 131u + 17u + x * 7u + (x >> 8) * 3u + (x >> 16));
}

void fill_pattern(unsigned char *p, long n, unsigned seed)
{
    for (long i = 0; i < n; i++)
        p[i] = pattern_byte(seed, i);
}

void fill_not_pattern(unsigned char *p, long n, unsigned seed)
{
    for (long i = 0; i < n; i++)
        p[i] = (unsigned char)~pattern_byte(seed, i);
}

void fill_guard(unsigned char *p)
{
    memset(p, GUARD_BYTE, GUARD);
}

static int check_guard(struct run *r, const char *what, const unsigned char *p)
{
    for (long i = 0; i < GUARD; i++)
        if (p[i] != GUARD_BYTE) {
            fail_mismatch(r, what, -1 - i, GUARD_BYTE, p[i]);
            return -1;
        }
    return 0;
}

int check_pattern(struct run *r, const char *what, const unsigned char *p, long n, unsigned seed)
{
    for (long i = 0; i < n; i++)
        if (p[i] != pattern_byte(seed, i)) {
            fail_mismatch(r, what, i, pattern_byte(seed, i), p[i]);
            return -1;
        }
    return check_guard(r, what, p + n);
}

int check_bytes(struct run *r, const char *what, const unsigned char *got,
                const unsigned char *want, long n)
{
    if (memcmp(got, want, (size_t)n) != 0)
        for (long i = 0; i < n; i++)
            if (got[i] != want[i]) {
                fail_mismatch(r, what, i, want[i], got[i]);
                return -1;
            }
    return check_guard(r, what, got + n);
}

/* Busy "compute" of a given length without any MPI call (OSU's overlap
 * method: the library gets no chance to progress unless it does so on its
 * own). */
void spin_usec(double usec)
{
    double end = MPI_Wtime() + usec * 1e-6;
    while (MPI_Wtime() < end)
        ;
}
