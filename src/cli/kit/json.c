/*
 * The CLI's JSON writer (json.h), for `heapsift web`'s API and the views' --json output:
 * strings escaped per RFC 8259 (control characters as \u00XX, invalid UTF-8 bytes
 * replaced by U+FFFD so the page never gets a document its parser refuses), keys,
 * nullable numbers, arrays of integers and of frame names; and the one reader it needs: a
 * numeric field of the stats JSON a heapsift endpoint serves. Owns nothing.
 */
#include "json.h"
#include "base/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (NUL-terminated), or 0 when it is not one. */
static size_t json_utf8_len(const unsigned char *s)
{
    return hs_utf8_seq(s, strnlen((const char *)s, 4));
}

int hs_json_str(hs_buf_t *b, const char *s)
{
    if (!s)
        return hs_buf_append(b, "null", 4);
    int rc = hs_buf_append(b, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    while (!rc && *p) {
        size_t run = 0;
        while (p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        if (run) {
            rc = hs_buf_append(b, p, run);
            p += run;
            continue;
        }
        size_t u = *p >= 0x80 ? json_utf8_len(p) : 0;
        if (u) {
            rc = hs_buf_append(b, p, u);
            p += u;
        } else if (*p >= 0x80) {
            rc = hs_buf_append(b, "\xef\xbf\xbd", 3);
            p++;
        } else if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p++};
            rc = hs_buf_append(b, e, 2);
        } else {
            rc = hs_buf_printf(b, "\\u%04x", *p++);
        }
    }
    return rc ? rc : hs_buf_append(b, "\"", 1);
}

int hs_json_key(hs_buf_t *b, const char *key)
{
    int rc = hs_json_str(b, key);
    return rc ? rc : hs_buf_append(b, ":", 1);
}

int hs_json_int_or_null(hs_buf_t *b, int64_t v)
{
    if (v < 0)
        return hs_buf_append(b, "null", 4);
    return hs_buf_printf(b, "%" PRId64, v);
}

bool hs_json_find_num(const char *json, const char *key, double *out)
{
    size_t klen = strlen(key);
    for (const char *p = json; *p; p++) {
        if (*p != '"')
            continue;
        const char *start = ++p;
        while (*p && *p != '"')
            p += (*p == '\\' && p[1]) ? 2 : 1;
        if (!*p)
            return false;
        if ((size_t)(p - start) != klen || memcmp(start, key, klen) != 0)
            continue;
        const char *v = p + 1 + strspn(p + 1, " \t\r\n");
        if (*v != ':')
            continue;
        v += 1 + strspn(v + 1, " \t\r\n");
        char *end;
        double d = strtod(v, &end);
        if (end != v) {
            *out = d;
            return true;
        }
    }
    return false;
}

void hs_view_json_str(const char *s, FILE *f)
{
    hs_buf_t b = HS_BUF_INIT;
    if (hs_json_str(&b, s) == 0)
        fwrite(b.data, 1, b.len, f);
    hs_buf_free(&b);
}

void hs_view_json_ints(const int64_t *v, size_t n, FILE *f)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
    fputc(']', f);
}

void hs_view_json_frames(const hs_report_t *r, const uint32_t *frames, size_t n, FILE *f)
{
    fputc('[', f);
    for (size_t k = 0; k < n; k++) {
        fputs(k ? ", " : "", f);
        hs_view_json_str(r->nodes[frames[k]].name, f);
    }
    fputc(']', f);
}
