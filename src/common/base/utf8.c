/*
 * UTF-8 validation and replacement, control byte escaping (see utf8.h). Used by the
 * readers (pprof.c, read_legacy.c) on names as they are read, and by the writers of
 * XML, HTML and JSON (report_flame.c, web_json.c) as they emit them. Never allocates
 * except in hs_str_escape_ctl.
 */
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t hs_utf8_seq(const unsigned char *s, size_t avail)
{
    if (avail == 0)
        return 0;
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (c < 0xc2 || c > 0xf4 || avail < n)
        return 0;
    /* The second byte's range excludes overlong forms, surrogates and > U+10FFFF. */
    unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

size_t hs_utf8_prefix(const char *s, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s), i = 0;
    while (i < len) {
        size_t n = hs_utf8_seq(u + i, len - i);
        n = n ? n : 1;
        if (i + n > max)
            break;
        i += n;
    }
    return i;
}

static bool utf8_valid(const unsigned char *u, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t n = hs_utf8_seq(u + i, len - i);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

const char *hs_utf8_safe(const char *s, char *buf, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s), o = 0;
    if (utf8_valid(u, len))
        return s;
    for (size_t i = 0; i < len;) {
        size_t k = hs_utf8_seq(u + i, len - i);
        const char *src = k ? s + i : "\xef\xbf\xbd";
        size_t w = k ? k : 3;
        if (o + w >= n)
            break;
        memcpy(buf + o, src, w);
        o += w;
        i += k ? k : 1;
    }
    buf[o] = '\0';
    return buf;
}

static bool str_is_ctl(unsigned char c)
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

bool hs_str_has_ctl(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (str_is_ctl((unsigned char)s[i]))
            return true;
    return false;
}

char *hs_str_escape_ctl(const char *s, size_t len, size_t *outlen)
{
    static const char hex[] = "0123456789abcdef";
    if (len > (SIZE_MAX - 1) / 4)
        return NULL;
    char *out = malloc(len * 4 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!str_is_ctl(c)) {
            out[o++] = (char)c;
            continue;
        }
        out[o++] = '\\';
        out[o++] = 'x';
        out[o++] = hex[c >> 4];
        out[o++] = hex[c & 15];
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}
