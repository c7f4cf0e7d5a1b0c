/*
 * gzip (zlib) for profiles: compression at the level the caller picks, with a window
 * sized to the input, and decompression of gzip data (concatenated members too) when the
 * data starts with the gzip magic, refusing to inflate beyond 2 GiB; small profiles are
 * stored in a gzip member without deflate's set-up (hs_gzip_stored). Owns no state; called
 * by the dump path inside the profiled process (guard held) and by the CLI.
 */
#include "gzip.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

/* The window zlib needs for len bytes: the smallest 2^bits (9..15) that holds them and
 * deflate's lookahead (262 bytes), so that a match can reach back to the start, as with
 * the full 32 KiB window. A small profile (an exit profile of a few kilobytes) then
 * costs 20 KiB of zlib state instead of 256 KiB, and setting up and freeing it far less. */
static int gzip_window_bits(size_t len)
{
    int bits = 9;
    while (bits < 15 && ((size_t)1 << bits) < len + 262)
        bits++;
    return bits;
}

static void gzip_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* RFC 1952 header (no name, no time, OS unix), stored blocks (RFC 1951 3.2.4: BFINAL and
 * BTYPE 00 in the first bits, the rest of that byte padding, LEN and its complement
 * little-endian, the bytes), then CRC-32 and the length mod 2^32. */
int hs_gzip_stored(const uint8_t *data, size_t len, hs_buf_t *out)
{
    static const uint8_t head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    size_t blocks = len / 65535 + 1;
    int rc = hs_buf_reserve(out, sizeof(head) + blocks * 5 + len + 8);
    if (rc)
        return rc;
    uint8_t *p = out->data + out->len;
    memcpy(p, head, sizeof(head));
    p += sizeof(head);
    size_t off = 0;
    do {
        size_t n = len - off > 65535 ? 65535 : len - off;
        *p++ = off + n == len ? 1 : 0;
        p[0] = (uint8_t)n;
        p[1] = (uint8_t)(n >> 8);
        p[2] = (uint8_t)~n;
        p[3] = (uint8_t)(~n >> 8);
        p += 4;
        if (n)
            memcpy(p, data + off, n);
        p += n;
        off += n;
    } while (off < len);
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t o = 0; o < len; o += 1u << 30) /* zlib counts in uInt */
        crc = crc32(crc, data + o, (uInt)(len - o > (1u << 30) ? 1u << 30 : len - o));
    gzip_le32(p, (uint32_t)crc);
    gzip_le32(p + 4, (uint32_t)len);
    p += 8;
    out->len = (size_t)(p - out->data);
    return 0;
}

int hs_gzip(const uint8_t *data, size_t len, int level, hs_buf_t *out)
{
    if (level == 0 || (level == HS_GZIP_PROCESS_LEVEL && len < HS_GZIP_STORED_BELOW))
        return hs_gzip_stored(data, len, out);
    z_stream z;
    memset(&z, 0, sizeof(z));
    int bits = gzip_window_bits(len);
    /* The hash table follows the window: 2^(memLevel + 7) entries, 2^15 at the default. */
    if (deflateInit2(&z, level, Z_DEFLATED, bits + 16, bits - 7, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    int rc = 0;
    size_t start = out->len;
    z.next_in = (Bytef *)data;
    int zr = Z_OK;
    while (zr == Z_OK) {
        size_t chunk = 1 << 16;
        if ((rc = hs_buf_reserve(out, chunk)))
            break;
        /* zlib counts in uInt: feed at most 1 GiB at a time */
        size_t feed = len - (size_t)(z.next_in - data);
        z.avail_in = (uInt)(feed > (1u << 30) ? 1u << 30 : feed);
        z.next_out = out->data + out->len;
        z.avail_out = (uInt)chunk;
        zr = deflate(&z, z.avail_in == feed ? Z_FINISH : Z_NO_FLUSH);
        out->len += chunk - z.avail_out;
        if (zr == Z_BUF_ERROR)
            zr = Z_OK; /* no progress possible only because out was full */
    }
    if (!rc && zr != Z_STREAM_END)
        rc = -EIO;
    deflateEnd(&z);
    if (rc)
        out->len = start;
    return rc;
}

#define GZIP_MAX_INFLATED ((size_t)1 << 31) /* refuse decompression bombs beyond 2 GiB */

static int gzip_inflate(z_stream *z, const uint8_t *data, size_t len, hs_buf_t *out,
                        const char **why)
{
    int zr = Z_OK;
    while (1) {
        if (out->len > GZIP_MAX_INFLATED) {
            *why = "gzip data inflates beyond 2 GiB";
            return -EFBIG;
        }
        if (hs_buf_reserve(out, 1 << 16))
            return -ENOMEM;
        size_t left = len - (size_t)(z->next_in - data);
        z->avail_in = (uInt)(left > (1u << 30) ? 1u << 30 : left);
        z->next_out = out->data + out->len;
        z->avail_out = 1 << 16;
        zr = inflate(z, Z_NO_FLUSH);
        out->len += (1 << 16) - z->avail_out;
        left = len - (size_t)(z->next_in - data);
        if (zr == Z_STREAM_END) {
            /* another gzip member may follow (concatenated files) */
            if (left < 2 || z->next_in[0] != 0x1f || z->next_in[1] != 0x8b)
                return 0;
            inflateReset(z);
            continue;
        }
        if (zr == Z_BUF_ERROR && left == 0) {
            *why = "truncated gzip data";
            return -EINVAL;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            *why = z->msg ? z->msg : "corrupt gzip data";
            return -EINVAL;
        }
    }
}

int hs_gunzip_auto(const uint8_t *data, size_t len, hs_buf_t *out, char *err, size_t errlen)
{
    if (len < 2 || data[0] != 0x1f || data[1] != 0x8b)
        return hs_buf_append(out, data, len);
    z_stream z;
    memset(&z, 0, sizeof(z));
    z.next_in = (Bytef *)data;
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return -ENOMEM;
    const char *why = NULL;
    size_t start = out->len;
    int rc = gzip_inflate(&z, data, len, out, &why);
    inflateEnd(&z);
    if (rc) {
        out->len = start;
        snprintf(err, errlen, "%s", why ? why : strerror(-rc));
    }
    return rc;
}
