/*
 * A growable byte buffer: the one output sink of the encoders (protobuf, gzip, text).
 * Memory comes from malloc; inside the profiled process callers hold the reentrancy
 * guard, so that is the real allocator. Functions return 0 or -ENOMEM.
 */
#ifndef HS_BUF_H
#define HS_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
} hs_buf_t;

#define HS_BUF_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

int hs_buf_reserve(hs_buf_t *b, size_t extra);
int hs_buf_append(hs_buf_t *b, const void *data, size_t len);
int hs_buf_printf(hs_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hs_buf_free(hs_buf_t *b);

#endif
