/*
 * Format detection and dispatch for hs_profile_read_any: reads the file, inflates gzip,
 * and hands the bytes to the reader of the format they are in. Today: pprof protobuf;
 * the text formats (gperftools, jemalloc, Go debug=1) plug in here.
 */
#include "readers.h"
#include "buf.h"
#include "pprof.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int hs_profile_parse_any(const uint8_t *data, size_t len, hs_profile_t **out, char *err,
                         size_t errlen)
{
    hs_buf_t raw = HS_BUF_INIT;
    int rc = hs_gunzip_auto(data, len, &raw, err, errlen);
    if (rc == 0)
        rc = hs_pprof_decode(raw.data, raw.len, out, err, errlen);
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
