/*
 * Reading any heap profile heapsift understands, auto-detected, gzipped or not: pprof
 * protobuf (heapsift's, Go's, any valid profile.proto), gperftools heap profiles,
 * jemalloc heap_v2 profiles, Go's ?debug=1 text. Every reader produces the one model
 * (profile.h). Errors: -EINVAL for bad input (the CLI's exit 2), other -errno for I/O
 * (exit 3); err gets "<what is wrong, and where>" (without the path).
 */
#ifndef HS_READERS_H
#define HS_READERS_H

#include "model/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parses data (already read; gzip is detected and inflated here). name is used in
 * messages only. */
int hs_profile_parse_any(const uint8_t *data, size_t len, hs_profile_t **out, char *err,
                         size_t errlen);
/* Reads and parses the file at path. */
int hs_profile_read_any(const char *path, hs_profile_t **out, char *err, size_t errlen);

#endif
