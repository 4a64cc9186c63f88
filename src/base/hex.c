/* Hex text (hex.h). */
#include "base/hex.h"

static const char digits[] = "0123456789abcdef";

void fmpl_hex_encode(char *out, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int fmpl_hex_decode(void *out, size_t max, const char *s, char stop, size_t *n)
{
    unsigned char *b = out;
    size_t i = 0;
    for (; s[2 * i] != stop && s[2 * i]; i++) {
        int hi = digit_value(s[2 * i]), lo = hi < 0 ? -1 : digit_value(s[2 * i + 1]);
        if (lo < 0 || i == max)
            return -1;
        b[i] = (unsigned char)(hi << 4 | lo);
    }
    *n = i;
    return s[2 * i] == stop ? 0 : -1;
}
