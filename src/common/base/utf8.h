/*
 * Bytes of names as they come, made safe to show: UTF-8 validation (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), replacement of invalid bytes by U+FFFD for
 * the XML, HTML and JSON writers, and the \xNN escaping of control bytes (a NUL inside a
 * name included) that the protobuf and text readers apply so a name is kept whole in the
 * C strings of the model. Pure functions, no allocation except where said.
 */
#ifndef HS_UTF8_H
#define HS_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length (1..4) of the valid UTF-8 sequence at s, which has avail bytes; 0 if invalid. */
size_t hs_utf8_seq(const unsigned char *s, size_t avail);

/* The length of the longest prefix of NUL-terminated s of at most max bytes that does not
 * end inside a sequence, for cutting names short. */
size_t hs_utf8_prefix(const char *s, size_t max);

/* s itself when it is valid UTF-8; else a copy in buf (n bytes, n >= 4) with each
 * invalid byte replaced by U+FFFD, cut on a character boundary when buf is too small. */
const char *hs_utf8_safe(const char *s, char *buf, size_t n);

/* True when s[0..len) holds a control byte (0x00-0x1f but tab, or 0x7f). */
bool hs_str_has_ctl(const char *s, size_t len);

/* s[0..len) with each control byte written as \xNN, in a new NUL-terminated string from
 * malloc (*outlen its length), or NULL on ENOMEM. */
char *hs_str_escape_ctl(const char *s, size_t len, size_t *outlen);

#endif
