/*
 * Minimal protobuf wire-format codec: the encoder appends varint, fixed and
 * length-delimited fields to an hs_buf_t (nested messages are written in place and
 * their length patched in afterwards, so no scratch buffers); the decoder walks a byte
 * range field by field with every read bounds-checked. Knows no schema: pprof.c does.
 */
#ifndef HS_PB_H
#define HS_PB_H

#include "buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { HS_PB_VARINT = 0, HS_PB_I64 = 1, HS_PB_LEN = 2, HS_PB_I32 = 5 };

/* Encoder with a sticky error: after the first failure every call is a no-op and err
 * holds -ENOMEM. */
typedef struct {
    hs_buf_t *out;
    int err;
} hs_pb_enc_t;

void hs_pb_put_varint(hs_pb_enc_t *e, uint64_t v);
/* Scalar fields are omitted when zero, as proto3 does. */
void hs_pb_put_uint(hs_pb_enc_t *e, uint32_t field, uint64_t v);
void hs_pb_put_int(hs_pb_enc_t *e, uint32_t field, int64_t v);
/* Always written, even when empty (string_table entries must keep their index). */
void hs_pb_put_bytes(hs_pb_enc_t *e, uint32_t field, const void *data, size_t len);
/* A packed repeated varint field; omitted when n == 0. */
void hs_pb_put_packed(hs_pb_enc_t *e, uint32_t field, const uint64_t *v, size_t n);
void hs_pb_put_packed_int(hs_pb_enc_t *e, uint32_t field, const int64_t *v, size_t n);
/* Starts a nested message; returns the token hs_pb_end needs. */
size_t hs_pb_begin(hs_pb_enc_t *e, uint32_t field);
void hs_pb_end(hs_pb_enc_t *e, size_t token);

/* Decoder over [pos, end) of a larger input starting at base (for error offsets). */
typedef struct {
    const uint8_t *base, *pos, *end;
    char *err;
    size_t errlen;
} hs_pb_dec_t;

typedef struct {
    uint32_t field;
    int wire;
    uint64_t v;          /* VARINT, I64, I32 */
    const uint8_t *data; /* LEN */
    size_t len;          /* LEN */
} hs_pb_field_t;

/* Reads the next field. Returns 1 with *f filled, 0 at the end, -1 on malformed input
 * (reason written to d->err as "... at byte N"). */
int hs_pb_next(hs_pb_dec_t *d, hs_pb_field_t *f);
/* A decoder over a LEN field's payload, sharing d's base and error buffer. */
hs_pb_dec_t hs_pb_sub(const hs_pb_dec_t *d, const hs_pb_field_t *f);
/* Reads one varint from d; false (with the reason in d->err) when truncated or too long. */
bool hs_pb_varint(hs_pb_dec_t *d, uint64_t *v);
/* Sets d->err to "<what> at byte <offset of d->pos>". Returns -1. */
int hs_pb_fail(hs_pb_dec_t *d, const char *what);

#endif
