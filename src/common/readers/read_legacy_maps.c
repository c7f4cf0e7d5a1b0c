/*
 * The memory map section of the legacy text heap profiles (see read_legacy.h): the lines
 * after "MAPPED_LIBRARIES:" (gperftools, jemalloc) or "--- Memory map: ---" (heapz_v2), in
 * both of pprof's forms, /proc/PID/maps lines or brief "START-END: FILE" ones. Executable
 * mappings only, adjacent pieces of one file merged, the main binary first (pprof's
 * massageMappings); then every location gets the mapping that holds its address, or a
 * catch-all one, like pprof's remapMappingIDs. read_legacy.c finds the section, hands it
 * over line by line (hs_legacy_maps_line) and calls hs_legacy_maps_finish once the input
 * is read. Never trusts the input: a line of no known shape is skipped. Pure: no I/O, no
 * globals.
 */
#include "read_legacy_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A /proc/PID/maps line "START-END PERMS OFFSET DEV INODE [PATH]" into *m: 1 when it is
 * one and executable, 0 when it is not one, -1 when it is one to skip. */
static int lg_map_proc(const char *c, const char *e, hs_legacy_map_t *m)
{
    if (!lg_hexdigits(&c, e, &m->start) || !lg_lit(&c, e, "-") || !lg_hexdigits(&c, e, &m->limit) ||
        c >= e || (*c != ' ' && *c != '\t'))
        return 0;
    lg_ws(&c, e);
    const char *perm = c;
    while (c < e && strchr("-rwxps", *c))
        c++;
    if (c == perm)
        return 0;
    bool exec = memchr(perm, 'x', (size_t)(c - perm)) != NULL;
    lg_ws(&c, e);
    if (!lg_hexdigits(&c, e, &m->offset))
        return 0;
    lg_ws(&c, e);
    while (c < e && *c != ' ' && *c != '\t') /* device */
        c++;
    int64_t inode;
    if (!lg_int(&c, e, &inode))
        return 0;
    lg_ws(&c, e);
    m->file = c;
    while (c < e && *c != ' ' && *c != '\t')
        c++;
    m->filelen = (size_t)(c - m->file);
    return exec ? 1 : -1;
}

/* After blanks, a word of bytes other than blanks; false (and *c kept) when none. */
static bool lg_word(const char **c, const char *e, const char **w, size_t *wlen)
{
    const char *s = *c;
    lg_ws(&s, e);
    if (s == *c || s >= e)
        return false;
    *w = s;
    while (s < e && *s != ' ' && *s != '\t')
        s++;
    *wlen = (size_t)(s - *w);
    *c = s;
    return true;
}

static bool lg_all_of(const char *w, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, w[i]))
            return false;
    return n > 0;
}

/* pprof's brief form "[0x]START-[0x]END[:] [PERMS] [FILE] [(@OFFSET)] [BUILDID]" (heapz_v2
 * "--- Memory map: ---" sections write "START-END: FILE"), as its briefMapsRE. */
static int lg_map_brief(const char *c, const char *e, hs_legacy_map_t *m)
{
    const char *w;
    size_t n;
    lg_lit(&c, e, "0x");
    if (!lg_hexdigits(&c, e, &m->start))
        return 0;
    if (c < e && (*c == '-' || *c == ' ' || *c == '\t'))
        c++;
    lg_ws(&c, e);
    lg_lit(&c, e, "0x");
    if (!lg_hexdigits(&c, e, &m->limit))
        return 0;
    lg_lit(&c, e, ":");
    const char *save = c;
    if (lg_word(&c, e, &w, &n) && lg_all_of(w, n, "-rwxp")) {
        if (!memchr(w, 'x', n))
            return -1;
        save = c;
    }
    c = save;
    if (lg_word(&c, e, &w, &n) && !(n > 2 && w[0] == '(' && w[1] == '@')) {
        m->file = w;
        m->filelen = n;
        save = c;
    }
    c = save;
    if (lg_word(&c, e, &w, &n) && n > 3 && w[0] == '(' && w[1] == '@' && w[n - 1] == ')') {
        const char *h = w + 2;
        if (lg_hexdigits(&h, w + n - 1, &m->offset) && h == w + n - 1)
            save = c;
        else
            m->offset = 0;
    }
    c = save;
    if (lg_word(&c, e, &w, &n) && lg_all_of(w, n, "0123456789abcdefABCDEF")) {
        m->build_id = w;
        m->build_idlen = n;
    }
    return 1;
}

/* One line of the memory map section; lines of no known shape are skipped, as pprof
 * does, and so are mappings that are not executable. */
int hs_legacy_maps_line(hs_legacy_parser_t *ps, const char *c, const char *e)
{
    hs_legacy_map_t m = {0};
    int kind = lg_map_proc(c, e, &m);
    if (kind == 0) {
        memset(&m, 0, sizeof(m));
        kind = lg_map_brief(c, e, &m);
    }
    if (kind <= 0 || m.start >= m.limit)
        return 0;
    if (ps->nmaps == ps->maps_cap) {
        size_t ncap = ps->maps_cap ? ps->maps_cap * 2 : 32;
        hs_legacy_map_t *a = realloc(ps->maps, ncap * sizeof(*a));
        if (!a)
            return -ENOMEM;
        ps->maps = a;
        ps->maps_cap = ncap;
    }
    ps->maps[ps->nmaps++] = m;
    return 0;
}

static bool lg_same_file(const hs_legacy_map_t *a, const hs_legacy_map_t *b)
{
    return !a->filelen || !b->filelen ||
           (a->filelen == b->filelen && memcmp(a->file, b->file, a->filelen) == 0);
}

/* pprof's guess at a shared library name. */
static bool lg_is_lib(const hs_legacy_map_t *m)
{
    const char *f = m->file, *e = m->file + m->filelen;
    for (const char *s = f; s + 3 <= e; s++)
        if (memcmp(s, ".so", 3) == 0 && (s + 3 == e || s[3] == '.' || s[3] == '_'))
            return true;
    return false;
}

/* pprof's massageMappings: merge the pieces of one file, move the main binary first. */
static void lg_massage_maps(hs_legacy_parser_t *ps)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->nmaps; i++) {
        hs_legacy_map_t *lm = n ? &ps->maps[n - 1] : NULL, *m = &ps->maps[i];
        if (lm && lg_same_file(lm, m) && lm->limit == m->start &&
            (!lm->offset || !m->offset || lm->offset + (lm->limit - lm->start) == m->offset)) {
            lm->limit = m->limit;
            if (m->filelen) {
                lm->file = m->file;
                lm->filelen = m->filelen;
            }
            continue;
        }
        ps->maps[n++] = *m;
    }
    ps->nmaps = n;
    for (size_t i = 0; i < n; i++) {
        const hs_legacy_map_t *m = &ps->maps[i];
        if (!m->filelen || m->file[0] == '[' || lg_is_lib(m))
            continue;
        hs_legacy_map_t t = ps->maps[0];
        ps->maps[0] = ps->maps[i];
        ps->maps[i] = t;
        break;
    }
    if (n && ps->maps[0].start - ps->maps[0].offset == 0x400000) {
        ps->maps[0].start = 0x400000;
        ps->maps[0].offset = 0;
    }
}

/* Adds the mappings and gives every location one, as pprof's remapMappingIDs: the first
 * mapping (main binary first) that holds the address, else one whose unrecorded first
 * piece would, else a catch-all mapping. */
int hs_legacy_maps_finish(hs_legacy_parser_t *ps)
{
    hs_profile_t *p = ps->p;
    lg_massage_maps(ps);
    for (size_t i = 0; i < ps->nmaps; i++) {
        const hs_legacy_map_t *lm = &ps->maps[i];
        char *f = strndup(lm->file ? lm->file : "", lm->filelen);
        char *b = strndup(lm->build_id ? lm->build_id : "", lm->build_idlen);
        hs_mapping_t m = {0};
        m.filename = f ? hs_profile_str(p, f) : -1;
        m.build_id = b ? hs_profile_str(p, b) : -1;
        free(f);
        free(b);
        if (m.filename < 0 || m.build_id < 0 || !hs_profile_add_mapping(p, &m))
            return -ENOMEM;
    }
    uint64_t fake = 0;
    for (size_t i = 0; i < p->nlocations; i++) {
        hs_location_t *l = &p->locations[i];
        uint64_t a = l->address;
        for (size_t k = 0; k < ps->nmaps && !l->mapping_id; k++)
            if (ps->maps[k].start <= a && a < ps->maps[k].limit)
                l->mapping_id = k + 1;
        for (size_t k = 0; k < ps->nmaps && !l->mapping_id; k++) {
            hs_legacy_map_t *m = &ps->maps[k];
            if (m->offset && m->start - m->offset <= a && a < m->start) {
                m->start -= m->offset;
                m->offset = 0;
                l->mapping_id = k + 1;
            }
        }
        if (!l->mapping_id && a) {
            if (!fake) {
                hs_mapping_t m = {0};
                m.memory_limit = UINT64_MAX;
                if (!(fake = hs_profile_add_mapping(p, &m)))
                    return -ENOMEM;
            }
            l->mapping_id = fake;
        }
    }
    for (size_t i = 0; i < ps->nmaps; i++) {
        p->mappings[i].memory_start = ps->maps[i].start;
        p->mappings[i].memory_limit = ps->maps[i].limit;
        p->mappings[i].file_offset = ps->maps[i].offset;
    }
    for (size_t i = 0; i < p->nlocations; i++) {
        const hs_location_t *l = &p->locations[i];
        if (l->nlines && l->mapping_id) {
            hs_mapping_t *m = &p->mappings[l->mapping_id - 1];
            m->has_functions = m->has_filenames = m->has_line_numbers = true;
        }
    }
    return 0;
}
