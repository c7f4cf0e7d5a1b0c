/*
 * pprof wire format: encode a profile to profile.proto bytes and decode them back, and
 * write a profile file (the CLI reads files of every format through readers.h). Includes
 * gzip.h and fileio.h, which the file writer is made of.
 */
#ifndef HS_PPROF_H
#define HS_PPROF_H

#include "base/buf.h"
#include "base/fileio.h"
#include "base/gzip.h"
#include "profile.h"

/* Appends the protobuf encoding of p to out. Returns 0 or -ENOMEM. */
int hs_pprof_encode(const hs_profile_t *p, hs_buf_t *out);

/* Decodes protobuf bytes (not gzipped). On failure returns a negative errno (-EINVAL for
 * malformed input) and writes a one-line reason to err. */
int hs_pprof_decode(const uint8_t *data, size_t len, hs_profile_t **out, char *err, size_t errlen);

/* Encodes, gzips (HS_GZIP_PROCESS_LEVEL) and writes p atomically to path. */
int hs_pprof_write_file(const hs_profile_t *p, const char *path);

#endif
