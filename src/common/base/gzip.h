/*
 * gzip for profiles (gzip.c).
 */
#ifndef HS_GZIP_H
#define HS_GZIP_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

/* Gzip-compresses data and appends the result to out. Returns 0 or a negative errno.
 * At HS_GZIP_PROCESS_LEVEL, data shorter than HS_GZIP_STORED_BELOW is stored, not
 * compressed (hs_gzip_stored); level 0 stores data of any length. */
int hs_gzip(const uint8_t *data, size_t len, int level, hs_buf_t *out);
/* A gzip member whose deflate stream is stored blocks (type 00, at most 65535 bytes each):
 * valid gzip that every reader inflates, made without zlib's deflate state. 0 or -errno. */
int hs_gzip_stored(const uint8_t *data, size_t len, hs_buf_t *out);
/* The level of the profiles a profiled process writes: the fastest, as Go's runtime
 * writes its own. On bench/cppmap's exit profile (15.9 kB encoded): 3.7 kB against
 * 3.4 kB at the default level, in 0.75M instructions instead of 1.25M. */
#define HS_GZIP_PROCESS_LEVEL 1
/* Below this many encoded bytes a process's profile is stored: deflate's set-up and
 * end cost /bin/true's exit profile (1.4 kB) 0.3M instructions, the copy and its CRC
 * a few thousand, and the file grows by at most 2.7 kB. */
#define HS_GZIP_STORED_BELOW 4096
/* If data starts with the gzip magic, inflates it into out; else copies it. 0 or -errno. */
int hs_gunzip_auto(const uint8_t *data, size_t len, hs_buf_t *out, char *err, size_t errlen);

#endif
