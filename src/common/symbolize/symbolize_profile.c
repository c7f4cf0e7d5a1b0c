/*
 * Symbolizing a profile read from a file (hs_profile_symbolize, declared in symbolize.h):
 * the CLI's counterpart of the in-process symbolization at dump time. Each mapping's
 * file is checked against the profile's build id (a mismatch, or a missing file, falls
 * back to /usr/lib/debug/.build-id/xx/rest.debug, else the mapping stays unsymbolized
 * with one warning), registered once with the libdw symbolizer (mappings that overlap,
 * as in a merge of several processes, go to separate symbolizers), and every location
 * without lines gets the inlined frames of its address. Called by the views and by
 * `heapsift symbolize`; never inside the profiled process.
 */
#define _GNU_SOURCE
#include "base/maps.h"
#include "symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define SP_MAX_FRAMES 64

typedef struct {
    hs_symbolizer_t *sym;
    uint64_t (*ranges)[2];
    size_t nranges;
} sp_group_t;

typedef struct {
    hs_profile_t *p;
    bool quiet;
    sp_group_t *groups;
    size_t ngroups;
    int *group_of; /* per mapping index: its group, or -1 when not symbolizable */
} sp_state_t;

static void sp_warn(const sp_state_t *st, const char *file, const char *why)
{
    if (!st->quiet)
        fprintf(stderr, "heapsift: warning: %s: %s; its frames stay unsymbolized\n", file, why);
}

/* The debug file /usr/lib/debug/.build-id/xx/rest.debug of build id hex, if present. */
static bool sp_debug_twin(const char *hex, char *out, size_t outlen)
{
    size_t n = strlen(hex);
    if (n < 3)
        return false;
    int w = snprintf(out, outlen, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
    return w > 0 && (size_t)w < outlen && access(out, R_OK) == 0;
}

/* Chooses the file that holds mapping m's code and symbols; false (after one warning)
 * when there is none that can be trusted. */
static bool sp_pick_file(const sp_state_t *st, const hs_mapping_t *m, char *out, size_t outlen)
{
    const char *file = hs_profile_get_str(st->p, m->filename);
    const char *want = hs_profile_get_str(st->p, m->build_id);
    char have[65] = "", why[200];
    bool exists = access(file, R_OK) == 0;
    if (exists &&
        (!*want || (hs_elf_build_id(file, have, sizeof(have)) && strcasecmp(have, want) == 0))) {
        snprintf(out, outlen, "%s", file);
        return true;
    }
    if (*want && sp_debug_twin(want, out, outlen))
        return true;
    if (!exists)
        snprintf(why, sizeof(why), "cannot read it (%s)", strerror(errno));
    else
        snprintf(why, sizeof(why), "build id %s on disk, %s in the profile",
                 *have ? have : "(none)", want);
    sp_warn(st, file, why);
    return false;
}

static bool sp_overlaps(const sp_group_t *g, uint64_t start, uint64_t limit)
{
    for (size_t i = 0; i < g->nranges; i++)
        if (start < g->ranges[i][1] && g->ranges[i][0] < limit)
            return true;
    return false;
}

/* The group mapping [start, limit) can join (a new one if all overlap); -1 on ENOMEM. */
static int sp_group_for(sp_state_t *st, uint64_t start, uint64_t limit)
{
    size_t i = 0;
    while (i < st->ngroups && sp_overlaps(&st->groups[i], start, limit))
        i++;
    if (i == st->ngroups) {
        sp_group_t *g = realloc(st->groups, (st->ngroups + 1) * sizeof(*g));
        if (!g)
            return -1;
        st->groups = g;
        memset(&g[i], 0, sizeof(g[i]));
        if (!(g[i].sym = hs_symbolizer_new()))
            return -1;
        st->ngroups++;
    }
    sp_group_t *g = &st->groups[i];
    uint64_t(*r)[2] = realloc(g->ranges, (g->nranges + 1) * sizeof(*r));
    if (!r)
        return -1;
    g->ranges = r;
    r[g->nranges][0] = start;
    r[g->nranges][1] = limit;
    g->nranges++;
    return (int)i;
}

/* Marks (group_of = 0) the mappings that hold a location without lines. */
static void sp_mark_needed(sp_state_t *st)
{
    const hs_profile_t *p = st->p;
    for (size_t i = 0; i < p->nmappings; i++)
        st->group_of[i] = -1;
    for (size_t i = 0; i < p->nlocations; i++) {
        const hs_location_t *l = &p->locations[i];
        const hs_mapping_t *m = l->mapping_id ? hs_profile_mapping(p, l->mapping_id) : NULL;
        if (!l->nlines && l->address && m)
            st->group_of[m - p->mappings] = 0;
    }
}

static int sp_load_mappings(sp_state_t *st)
{
    hs_profile_t *p = st->p;
    char path[4096];
    sp_mark_needed(st);
    for (size_t i = 0; i < p->nmappings; i++) {
        const hs_mapping_t *m = &p->mappings[i];
        const char *file = hs_profile_get_str(p, m->filename);
        bool needed = st->group_of[i] == 0;
        st->group_of[i] = -1;
        if (!needed || file[0] != '/' || m->memory_start >= m->memory_limit)
            continue;
        if (!sp_pick_file(st, m, path, sizeof(path)))
            continue;
        int g = sp_group_for(st, m->memory_start, m->memory_limit);
        if (g < 0)
            return -ENOMEM;
        int rc = hs_symbolizer_add_file(st->groups[g].sym, path, m->memory_start, m->memory_limit,
                                        m->file_offset);
        if (rc == -ENOMEM)
            return rc;
        if (rc == 0)
            st->group_of[i] = g;
        else
            sp_warn(st, file, rc == -EINVAL ? "not an ELF file it can map" : strerror(-rc));
    }
    return 0;
}

/* Gives location l the frames of its address; returns 1 if it got any, 0, or -ENOMEM. */
static int sp_location(sp_state_t *st, hs_symbolizer_t *sym, hs_location_t *l)
{
    hs_symbol_t fr[SP_MAX_FRAMES];
    hs_line_t lines[SP_MAX_FRAMES];
    size_t n = hs_symbolize(sym, l->address, fr, SP_MAX_FRAMES), k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = fr[i].name ? fr[i].name : fr[i].system_name;
        if (!name)
            continue;
        const char *sys = fr[i].system_name ? fr[i].system_name : name;
        uint64_t fid = hs_profile_add_function(st->p, name, sys, fr[i].file, fr[i].start_line);
        if (!fid)
            return -ENOMEM;
        lines[k].function_id = fid;
        lines[k].line = fr[i].line;
        k++;
    }
    if (k == 0)
        return 0;
    hs_line_t *copy = malloc(k * sizeof(*copy));
    if (!copy)
        return -ENOMEM;
    memcpy(copy, lines, k * sizeof(*copy));
    l->lines = copy;
    l->nlines = k;
    return 1;
}

static void sp_progress(const sp_state_t *st, size_t done, size_t total, bool last)
{
    if (st->quiet || total < 4096 || !isatty(STDERR_FILENO))
        return;
    if (last)
        fprintf(stderr, "\r\033[K");
    else if (done % 1024 == 0)
        fprintf(stderr, "\rheapsift: symbolizing %zu/%zu locations", done, total);
}

/* Tells each group's symbolizer the addresses it will be asked about (see
 * hs_symbolizer_expect). Only a hint: no memory for it changes nothing. */
static void sp_expect(sp_state_t *st)
{
    hs_profile_t *p = st->p;
    uint64_t *a = malloc(p->nlocations * sizeof(*a) + 1);
    for (size_t g = 0; a && g < st->ngroups; g++) {
        size_t n = 0;
        for (size_t i = 0; i < p->nlocations; i++) {
            const hs_location_t *l = &p->locations[i];
            const hs_mapping_t *m = l->mapping_id ? hs_profile_mapping(p, l->mapping_id) : NULL;
            if (!l->nlines && m && l->address && st->group_of[m - p->mappings] == (int)g)
                a[n++] = l->address;
        }
        hs_symbolizer_expect(st->groups[g].sym, a, n);
    }
    free(a);
}

static int sp_locations(sp_state_t *st)
{
    hs_profile_t *p = st->p;
    int done = 0;
    for (size_t i = 0; i < p->nlocations; i++) {
        hs_location_t *l = &p->locations[i];
        sp_progress(st, i, p->nlocations, false);
        const hs_mapping_t *m = l->mapping_id ? hs_profile_mapping(p, l->mapping_id) : NULL;
        if (l->nlines || !m || !l->address)
            continue;
        int g = st->group_of[m - p->mappings];
        if (g < 0)
            continue;
        int rc = sp_location(st, st->groups[g].sym, l);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            hs_mapping_t *mm = &p->mappings[m - p->mappings];
            mm->has_functions = mm->has_filenames = mm->has_line_numbers = true;
            mm->has_inline_frames = mm->has_inline_frames || l->nlines > 1;
            done++;
        }
    }
    sp_progress(st, p->nlocations, p->nlocations, true);
    return done;
}

int hs_profile_symbolize(hs_profile_t *p, bool quiet)
{
    sp_state_t st = {.p = p, .quiet = quiet};
    int rc = 0;
    if (p->nmappings == 0)
        return 0;
    st.group_of = malloc(p->nmappings * sizeof(*st.group_of));
    if (!st.group_of)
        return -ENOMEM;
    rc = sp_load_mappings(&st);
    if (rc == 0) {
        sp_expect(&st);
        rc = sp_locations(&st);
    }
    for (size_t i = 0; i < st.ngroups; i++) {
        hs_symbolizer_free(st.groups[i].sym);
        free(st.groups[i].ranges);
    }
    free(st.groups);
    free(st.group_of);
    return rc;
}
