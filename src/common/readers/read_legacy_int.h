/*
 * The legacy readers' insides, shared by their two files: read_legacy.c (the line
 * grammar: headers, stacks, records, values) and read_legacy_maps.c (the memory map
 * section). The parser's state, the token scanners both use, and the map section's two
 * entry points. Nothing else includes this: readers.c and the tests use read_legacy.h.
 * Pure, as the readers are: no I/O, no globals.
 */
#ifndef HS_READ_LEGACY_INT_H
#define HS_READ_LEGACY_INT_H

#include "read_legacy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One executable mapping of the memory map section, as read. */
typedef struct {
    uint64_t start, limit, offset;
    const char *file; /* into the input; not NUL-terminated */
    size_t filelen;
    const char *build_id; /* the brief form's, or NULL */
    size_t build_idlen;
} hs_legacy_map_t;

/* A stack address's digits as read before (lg_hexdigits_cached): 256 of them. */
typedef struct {
    uint64_t w0, w1; /* the digits' bytes, zero past the last */
    uint64_t value;
    unsigned n; /* how many; 0: empty */
} lg_hexslot_t;

typedef struct {
    lg_hexslot_t slot[256];
} lg_hexcache_t;

/* The parser's state over one input (hs_legacy_parse, read_legacy.c). */
typedef struct {
    hs_profile_t *p;
    const char *pos, *end; /* unread input */
    size_t lineno;
    char *err;
    size_t errlen;
    bool jemalloc;
    bool v2;      /* Poisson unsampling with rate */
    int64_t rate; /* 0 or 1: no unsampling */
    bool has_alloc;
    uint64_t *hkeys; /* address -> location id, open addressing */
    uint32_t *hids;
    size_t hcap, hused;
    uint64_t *stack;
    size_t nstack, stack_cap;
    uint32_t *filled; /* Go: per location id, the record whose comments gave it lines */
    size_t filled_cap;
    uint32_t record;
    int64_t bytes_key;       /* the string "bytes" once interned, else 0 */
    lg_hexcache_t *hexcache; /* stack addresses read before */
    hs_legacy_map_t *maps;
    size_t nmaps, maps_cap;
} hs_legacy_parser_t;

/* ---- token scanners of both files: each reads from *c, up to e, and moves *c on ------- */

static inline void lg_ws(const char **c, const char *e)
{
    while (*c < e && (**c == ' ' || **c == '\t'))
        (*c)++;
}

static inline bool lg_lit(const char **c, const char *e, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(e - *c) < n || memcmp(*c, lit, n) != 0)
        return false;
    *c += n;
    return true;
}

/* A decimal integer, optionally negative, that fits int64. */
static inline bool lg_int(const char **c, const char *e, int64_t *v)
{
    lg_ws(c, e);
    bool neg = *c < e && **c == '-';
    const char *d = *c + neg;
    uint64_t x = 0;
    const char *s = d;
    for (; d < e && *d >= '0' && *d <= '9'; d++) {
        if (x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*d - '0');
    }
    if (d == s || x > (uint64_t)INT64_MAX)
        return false;
    *v = neg ? -(int64_t)x : (int64_t)x;
    *c = d;
    return true;
}

/* Each hexadecimal digit's value plus one; 0 for every other byte. */
static const unsigned char lg_hexval1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Hexadecimal digits (no prefix) that fit 64 bits: at most 16 after the leading zeros. */
static inline bool lg_hexdigits(const char **c, const char *e, uint64_t *v)
{
    uint64_t x = 0;
    const char *d = *c, *sig;
    while (d < e && *d == '0')
        d++;
    for (sig = d; d < e; d++) {
        unsigned h = lg_hexval1[(unsigned char)*d];
        if (h == 0)
            break;
        x = x << 4 | (h - 1);
    }
    if (d == *c || d - sig > 16)
        return false;
    *v = x;
    *c = d;
    return true;
}

/* Per byte of x, its top bit set where m < byte < n, exactly, byte by byte (the
 * "hasbetween" of the bit twiddling hacks: no carry crosses a byte). */
#define LG_ONES 0x0101010101010101ull
static inline uint64_t lg_between(uint64_t x, unsigned m, unsigned n)
{
    uint64_t lo = x & (LG_ONES * 127);
    return (LG_ONES * (127 + n) - lo) & ~x & (lo + LG_ONES * (127 - m)) & (LG_ONES * 128);
}

/* How many of the 8 bytes in x (the first in its low byte) open it as hex digits. */
static inline unsigned lg_hexrun8(uint64_t x)
{
    uint64_t hex =
        lg_between(x, '0' - 1, '9' + 1) | lg_between(x | LG_ONES * 0x20, 'a' - 1, 'f' + 1);
    uint64_t non = ~hex & (LG_ONES * 0x80);
    return non ? (unsigned)__builtin_ctzll(non) / 8 : 8;
}

/* lg_hexdigits for the addresses of stack lines, 875,000 of them in a 14 MB jemalloc file
 * but few distinct: the digits' bytes (up to 15) found 8 at a time and looked up in a
 * cache of the values read before, about 40 instructions a hit where digit by digit took
 * 130. A miss, and every case the cache does not hold (16 digits or more, fewer than 16
 * readable bytes up to bufend, which is at or after e), reads digit by digit. */
static inline bool lg_hexdigits_cached(lg_hexcache_t *hc, const char **c, const char *e,
                                       const char *bufend, uint64_t *v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const char *d = *c;
    if (bufend - d < 16)
        return lg_hexdigits(c, e, v);
    uint64_t w0, w1;
    memcpy(&w0, d, 8);
    memcpy(&w1, d + 8, 8);
    unsigned n = lg_hexrun8(w0);
    n += n == 8 ? lg_hexrun8(w1) : 0;
    if (n == 0 || n == 16 || n > (size_t)(e - d))
        return lg_hexdigits(c, e, v);
    if (n < 8) { /* the bytes past the digits zeroed (a digit is never a 0 byte) */
        w0 &= ((uint64_t)1 << (8 * n)) - 1;
        w1 = 0;
    } else {
        w1 &= ((uint64_t)1 << (8 * (n - 8))) - 1;
    }
    lg_hexslot_t *s = &hc->slot[(w0 * 0x9e3779b97f4a7c15ull ^ w1 * 0xc2b2ae3d27d4eb4full) >> 56];
    if (s->n == n && s->w0 == w0 && s->w1 == w1) {
        *v = s->value;
        *c = d + n;
        return true;
    }
    if (!lg_hexdigits(c, e, v))
        return false;
    if (*c == d + n) {
        s->w0 = w0;
        s->w1 = w1;
        s->n = n;
        s->value = *v;
    }
    return true;
#else
    (void)hc;
    (void)bufend;
    return lg_hexdigits(c, e, v);
#endif
}

/* ---- the memory map section (read_legacy_maps.c) --------------------------------------- */

/* One line of the section into ps->maps: lines of no known shape and mappings that are
 * not executable are skipped, as pprof does. 0 or -ENOMEM. */
int hs_legacy_maps_line(hs_legacy_parser_t *ps, const char *c, const char *e);

/* Once the whole input is read: merges the mappings as pprof does, adds them to ps->p and
 * gives every location the mapping that holds it, or a catch-all one. 0 or -ENOMEM. */
int hs_legacy_maps_finish(hs_legacy_parser_t *ps);

#endif
