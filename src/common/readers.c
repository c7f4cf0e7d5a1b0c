/*
 * Format detection and dispatch for hs_profile_read_any: reads the file, inflates gzip,
 * and hands the bytes to the reader of the format they are in: the legacy text heap
 * profiles (gperftools, jemalloc, Go debug=1; read_legacy.c) when the text says so,
 * else pprof protobuf. Text that is neither gets a message saying what was expected
 * rather than a protobuf decoding error.
 */
#include "readers.h"
#include "buf.h"
#include "pprof.h"
#include "read_legacy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* True when the first bytes are printable text: no protobuf profile starts that way
 * (its first byte is a field key, 0x0a for sample_type, and a length follows). */
static bool readers_looks_textual(const uint8_t *d, size_t len)
{
    size_t n = len < 64 ? len : 64;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (d[i] != '\n' && d[i] != '\r' && d[i] != '\t' && (d[i] < 0x20 || d[i] > 0x7e))
            return false;
    return true;
}

int hs_profile_parse_any(const uint8_t *data, size_t len, hs_profile_t **out, char *err,
                         size_t errlen)
{
    hs_buf_t raw = HS_BUF_INIT;
    *out = NULL;
    int rc = hs_gunzip_auto(data, len, &raw, err, errlen);
    if (rc)
        goto out;
    if (raw.len == 0) {
        snprintf(err, errlen, "empty file");
        rc = -EINVAL;
    } else if (hs_legacy_detect(raw.data, raw.len)) {
        rc = hs_legacy_parse(raw.data, raw.len, out, err, errlen);
    } else if (readers_looks_textual(raw.data, raw.len)) {
        snprintf(err, errlen,
                 "unknown text format (want a pprof protobuf, 'heap profile:' or 'heap_v2/')");
        rc = -EINVAL;
    } else {
        rc = hs_pprof_decode(raw.data, raw.len, out, err, errlen);
    }
out:
    hs_buf_free(&raw);
    return rc;
}

int hs_profile_read_any(const char *path, hs_profile_t **out, char *err, size_t errlen)
{
    hs_buf_t file = HS_BUF_INIT;
    int rc = hs_read_file(path, &file);
    if (rc != 0) {
        snprintf(err, errlen, "%s", strerror(-rc));
        return rc;
    }
    rc = hs_profile_parse_any(file.data, file.len, out, err, errlen);
    hs_buf_free(&file);
    return rc;
}
