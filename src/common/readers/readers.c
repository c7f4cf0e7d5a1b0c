/*
 * Format detection and dispatch for hs_profile_read_any: reads the file, inflates gzip,
 * and hands the bytes to the reader of the format they are in: the legacy text heap
 * profiles (gperftools, jemalloc, Go debug=1; read_legacy.c) when the text says so,
 * else pprof protobuf. A profile of another kind (CPU, contention, goroutine or thread
 * creation; protobuf, gperftools' binary CPU form or legacy text) is named and refused;
 * other text gets a message saying what was expected rather than a protobuf decoding
 * error. A spool (HEAPSIFT_SPOOL, read_spool.c) is recognised by its magic and read as
 * the profile it holds. The file reader warns on stderr of lines a text reader skipped.
 * Every profile parsed has its mangled names demangled here (demangle_profile.c).
 */
#include "readers.h"
#include "base/buf.h"
#include "base/fileio.h"
#include "model/demangle.h"
#include "model/pprof.h"
#include "read_legacy.h"
#include "read_spool.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

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

/* The first line of text that is not blank, in [*c, *e). */
static void readers_first_line(const uint8_t *d, size_t len, const char **c, const char **e)
{
    const char *s = (const char *)d, *end = s + len;
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
        s++;
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    *c = s;
    *e = nl ? nl : end;
}

static bool readers_starts(const char *c, const char *e, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(e - c) >= n && memcmp(c, lit, n) == 0;
}

/* The kind of a legacy text profile that is not a heap profile, or NULL. Go writes
 * "goroutine profile: total N" and "threadcreate profile: total N" (?debug=1), goroutine
 * dumps (?debug=2), "--- mutex:" and "--- contention:"; gperftools "--- contentionz" and
 * "--- threadz". */
static const char *readers_text_kind(const uint8_t *d, size_t len)
{
    const char *c, *e;
    readers_first_line(d, len, &c, &e);
    if (readers_starts(c, e, "--- contention") || readers_starts(c, e, "--- mutex"))
        return "a contention (mutex or block) profile";
    if (readers_starts(c, e, "--- threadz") || readers_starts(c, e, "--- Thread "))
        return "a thread profile";
    if (readers_starts(c, e, "goroutine profile: total"))
        return "a goroutine profile";
    if (readers_starts(c, e, "threadcreate profile: total"))
        return "a thread creation profile";
    if (readers_starts(c, e, "goroutine ") && memchr(c, '[', (size_t)(e - c)))
        return "a goroutine dump";
    return NULL;
}

/* gperftools' binary CPU profile: a header of 0, 3, 0 (words of 32 or 64 bits, either
 * byte order), then the period. */
static bool readers_is_cpu_binary(const uint8_t *d, size_t len)
{
    static const uint8_t le64[16] = {0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t be64[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3};
    static const uint8_t le32[8] = {0, 0, 0, 0, 3, 0, 0, 0};
    static const uint8_t be32[8] = {0, 0, 0, 0, 0, 0, 0, 3};
    return (len >= 16 && (memcmp(d, le64, 16) == 0 || memcmp(d, be64, 16) == 0)) ||
           (len >= 8 && (memcmp(d, le32, 8) == 0 || memcmp(d, be32, 8) == 0));
}

/* The kind of a decoded protobuf profile whose sample types name no heap, or NULL. */
static const char *readers_proto_kind(const hs_profile_t *p)
{
    static const struct {
        const char *type, *kind;
    } kinds[] = {{"cpu", "a CPU profile"},
                 {"samples", "a CPU profile"},
                 {"wall", "a wall-clock profile"},
                 {"contentions", "a contention (mutex or block) profile"},
                 {"delay", "a contention (mutex or block) profile"},
                 {"goroutine", "a goroutine profile"},
                 {"goroutines", "a goroutine profile"},
                 {"threadcreate", "a thread creation profile"}};
    for (size_t i = 0; i < p->ntypes; i++) {
        const char *unit = hs_profile_get_str(p, p->sample_types[i].unit);
        if (strcmp(unit, "bytes") == 0)
            return NULL;
    }
    for (size_t i = 0; i < p->ntypes; i++) {
        const char *t = hs_profile_get_str(p, p->sample_types[i].type);
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
            if (strcmp(t, kinds[k].type) == 0)
                return kinds[k].kind;
    }
    return NULL;
}

static int readers_refuse(const char *kind, char *err, size_t errlen)
{
    snprintf(err, errlen, "this is %s; heapsift reads heap profiles", kind);
    return -EINVAL;
}

static int readers_proto(const uint8_t *d, size_t len, hs_profile_t **out, char *err, size_t errlen)
{
    if (readers_is_cpu_binary(d, len))
        return readers_refuse("a CPU profile (gperftools)", err, errlen);
    int rc = hs_pprof_decode(d, len, out, err, errlen);
    const char *kind = rc == 0 ? readers_proto_kind(*out) : NULL;
    if (kind) {
        hs_profile_free(*out);
        *out = NULL;
        rc = readers_refuse(kind, err, errlen);
    }
    return rc;
}

int hs_profile_parse_any(const uint8_t *data, size_t len, hs_profile_t **out, char *err,
                         size_t errlen)
{
    hs_buf_t raw = HS_BUF_INIT;
    *out = NULL;
    if (hs_spool_detect(data, len))
        return hs_spool_parse(data, len, 0, out, err, errlen);
    /* Gzip is inflated into raw; anything else is read where it is (a copy of a 14 MB
     * text profile faulted in 3,600 fresh pages: 50 ms of CPU on a virtual machine). */
    bool gz = len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    int rc = gz ? hs_gunzip_auto(data, len, &raw, err, errlen) : 0;
    const uint8_t *d = gz ? raw.data : data;
    size_t n = gz ? raw.len : len;
    if (rc)
        goto out;
    if (n == 0) {
        snprintf(err, errlen, "empty file");
        rc = -EINVAL;
    } else if (hs_legacy_detect(d, n)) {
        rc = hs_legacy_parse(d, n, out, err, errlen);
    } else if (readers_looks_textual(d, n)) {
        const char *kind = readers_text_kind(d, n);
        if (kind)
            rc = readers_refuse(kind, err, errlen);
        else
            snprintf(err, errlen,
                     "unknown text format (want a pprof protobuf, 'heap profile:' or 'heap_v2/')");
        rc = kind ? rc : -EINVAL;
    } else {
        rc = readers_proto(d, n, out, err, errlen);
    }
out:
    hs_buf_free(&raw);
    /* Names still mangled (a spool has none: it is symbolized later) made readable for
     * every view, once (demangle.h). */
    if (rc == 0 && hs_profile_demangle(*out) < 0) {
        hs_profile_free(*out);
        *out = NULL;
        snprintf(err, errlen, "%s", strerror(ENOMEM));
        rc = -ENOMEM;
    }
    return rc;
}

int hs_profile_read_any(const char *path, hs_profile_t **out, char *err, size_t errlen)
{
    hs_buf_t file = HS_BUF_INIT;
    const uint8_t *map = NULL;
    size_t maplen = 0;
    int rc = hs_map_file(path, &map, &maplen); /* no reader keeps a pointer into its input */
    if (rc == 0) {
        file.data = (uint8_t *)(uintptr_t)map;
        file.len = maplen;
    } else if ((rc = hs_read_file(path, &file)) != 0) {
        snprintf(err, errlen, "%s", strerror(-rc));
        return rc;
    }
    struct stat st;
    if (hs_spool_detect(file.data, file.len))
        rc = hs_spool_parse(
            file.data, file.len,
            stat(path, &st) == 0 ? (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec : 0,
            out, err, errlen);
    else
        rc = hs_profile_parse_any(file.data, file.len, out, err, errlen);
    if (map)
        hs_unmap_file(map, maplen);
    else
        hs_buf_free(&file);
    if (rc == 0 && (*out)->nskipped)
        fprintf(stderr,
                "heapsift: warning: %s: skipped %zu malformed line%s (the first is line %zu), "
                "as pprof and jeprof do\n",
                path, (*out)->nskipped, (*out)->nskipped == 1 ? "" : "s", (*out)->skipped_line);
    return rc;
}
