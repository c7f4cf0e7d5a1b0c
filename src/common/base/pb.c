/*
 * Protobuf wire-format primitives (see pb.h). The encoder never allocates beyond the
 * output buffer; the decoder never allocates at all and never reads outside the range it
 * was given, whatever the input: every length is checked against the bytes that remain.
 */
#include "pb.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PB_MAX_VARINT 10

static size_t pb_varint_encode(uint8_t *dst, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        dst[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    dst[n++] = (uint8_t)v;
    return n;
}

static void pb_append(hs_pb_enc_t *e, const void *data, size_t len)
{
    if (!e->err)
        e->err = hs_buf_append(e->out, data, len);
}

void hs_pb_put_varint(hs_pb_enc_t *e, uint64_t v)
{
    uint8_t tmp[PB_MAX_VARINT];
    pb_append(e, tmp, pb_varint_encode(tmp, v));
}

static void pb_put_tag(hs_pb_enc_t *e, uint32_t field, int wire)
{
    hs_pb_put_varint(e, ((uint64_t)field << 3) | (uint64_t)wire);
}

void hs_pb_put_uint(hs_pb_enc_t *e, uint32_t field, uint64_t v)
{
    if (v == 0)
        return;
    pb_put_tag(e, field, HS_PB_VARINT);
    hs_pb_put_varint(e, v);
}

void hs_pb_put_int(hs_pb_enc_t *e, uint32_t field, int64_t v)
{
    hs_pb_put_uint(e, field, (uint64_t)v);
}

void hs_pb_put_bytes(hs_pb_enc_t *e, uint32_t field, const void *data, size_t len)
{
    pb_put_tag(e, field, HS_PB_LEN);
    hs_pb_put_varint(e, len);
    pb_append(e, data, len);
}

void hs_pb_put_packed(hs_pb_enc_t *e, uint32_t field, const uint64_t *v, size_t n)
{
    if (n == 0)
        return;
    size_t tok = hs_pb_begin(e, field);
    for (size_t i = 0; i < n; i++)
        hs_pb_put_varint(e, v[i]);
    hs_pb_end(e, tok);
}

void hs_pb_put_packed_int(hs_pb_enc_t *e, uint32_t field, const int64_t *v, size_t n)
{
    if (n == 0)
        return;
    size_t tok = hs_pb_begin(e, field);
    for (size_t i = 0; i < n; i++)
        hs_pb_put_varint(e, (uint64_t)v[i]);
    hs_pb_end(e, tok);
}

/* The body is written after a gap of PB_MAX_VARINT bytes; hs_pb_end writes the real
 * length into the gap and slides the body down over what is left of it. */
size_t hs_pb_begin(hs_pb_enc_t *e, uint32_t field)
{
    static const uint8_t gap[PB_MAX_VARINT];
    pb_put_tag(e, field, HS_PB_LEN);
    pb_append(e, gap, sizeof(gap));
    return e->err ? 0 : e->out->len;
}

void hs_pb_end(hs_pb_enc_t *e, size_t token)
{
    if (e->err)
        return;
    uint8_t *gap = e->out->data + token - PB_MAX_VARINT;
    size_t body = e->out->len - token;
    size_t n = pb_varint_encode(gap, body);
    memmove(gap + n, e->out->data + token, body);
    e->out->len = token - PB_MAX_VARINT + n + body;
}

int hs_pb_fail(hs_pb_dec_t *d, const char *what)
{
    if (d->err && d->errlen)
        snprintf(d->err, d->errlen, "%s at byte %zu", what, (size_t)(d->pos - d->base));
    return -1;
}

bool hs_pb_varint(hs_pb_dec_t *d, uint64_t *v)
{
    uint64_t r = 0;
    for (int i = 0; i < PB_MAX_VARINT; i++) {
        if (d->pos >= d->end) {
            hs_pb_fail(d, "truncated varint");
            return false;
        }
        uint8_t c = *d->pos++;
        r |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    hs_pb_fail(d, "varint longer than 10 bytes");
    return false;
}

static int pb_fixed(hs_pb_dec_t *d, size_t n, uint64_t *v)
{
    if ((size_t)(d->end - d->pos) < n)
        return hs_pb_fail(d, "truncated fixed-width field");
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++)
        r |= (uint64_t)d->pos[i] << (8 * i);
    d->pos += n;
    *v = r;
    return 1;
}

int hs_pb_next(hs_pb_dec_t *d, hs_pb_field_t *f)
{
    if (d->pos >= d->end)
        return 0;
    const uint8_t *start = d->pos;
    uint64_t tag;
    if (!hs_pb_varint(d, &tag))
        return -1;
    memset(f, 0, sizeof(*f));
    f->wire = (int)(tag & 7);
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) {
        d->pos = start;
        return hs_pb_fail(d, "invalid field number");
    }
    f->field = (uint32_t)(tag >> 3);
    switch (f->wire) {
    case HS_PB_VARINT:
        return hs_pb_varint(d, &f->v) ? 1 : -1;
    case HS_PB_I64:
        return pb_fixed(d, 8, &f->v);
    case HS_PB_I32:
        return pb_fixed(d, 4, &f->v);
    case HS_PB_LEN:
        if (!hs_pb_varint(d, &f->v))
            return -1;
        if (f->v > (uint64_t)(d->end - d->pos))
            return hs_pb_fail(d, "length-delimited field overruns its message");
        f->data = d->pos;
        f->len = (size_t)f->v;
        d->pos += f->len;
        return 1;
    default:
        d->pos = start;
        return hs_pb_fail(d, "unsupported wire type");
    }
}

hs_pb_dec_t hs_pb_sub(const hs_pb_dec_t *d, const hs_pb_field_t *f)
{
    /* An empty field may have no data pointer at all: NULL + 0 is undefined in C. */
    const uint8_t *end = f->len ? f->data + f->len : f->data;
    hs_pb_dec_t s = {d->base, f->data, end, d->err, d->errlen};
    return s;
}
