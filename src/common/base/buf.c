/*
 * Growable byte buffer (see buf.h): the output sink of every encoder. Owns only its own
 * memory, obtained with malloc/realloc; never does I/O. Capacity grows geometrically so
 * appends are amortised O(1). Callers inside the profiled process hold the guard.
 */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_buf_reserve(hs_buf_t *b, size_t extra)
{
    if (extra <= b->cap - b->len)
        return 0;
    if (extra > SIZE_MAX / 2 - b->len)
        return -ENOMEM;
    size_t need = b->len + extra;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d)
        return -ENOMEM;
    b->data = d;
    b->cap = cap;
    return 0;
}

int hs_buf_append(hs_buf_t *b, const void *data, size_t len)
{
    if (len == 0)
        return 0;
    int rc = hs_buf_reserve(b, len);
    if (rc)
        return rc;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

/* Formats in place; the buffer keeps a NUL after the text (not counted in len), so a
 * buffer built only with printf is also a C string. */
int hs_buf_printf(hs_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];

    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    int rc = hs_buf_reserve(b, (size_t)n + 1);
    if (rc)
        return rc;
    if ((size_t)n < sizeof(small)) {
        memcpy(b->data + b->len, small, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
    return 0;
}

void hs_buf_free(hs_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}
