/*
 * A dump's locations (dump.c builds the rest of the profile): the mappings of the live
 * set and of libraries unloaded since, each pc's location, and its symbols from the
 * symbol cache or the in-process symbolizer, made on first use.
 */
#define _GNU_SOURCE
#include "dump_int.h"
#include "record/modules.h"
#include "base/dwload.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "record/recorder.h"
#include "symcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The in-process symbolizer as HEAPSIFT_SYMBOLIZE asks. lines: file:line and inlined
 * frames from the DWARF inside the mapped files, names from every symbol table (separate
 * debug files' too: their .symtab is cheap, their compressed DWARF is not: libc6-dbg
 * alone costs ~0.1 s per process); full: DWARF of separate debug files too; names: symbol
 * tables only; none: addresses only. One libdwfl session serves both kinds of file, so
 * each file is mapped once. */
const char *hs_dumploc_sym_mode; /* overrides HEAPSIFT_SYMBOLIZE when set (leak report) */

const char *hs_dumploc_sym_mode_now(void)
{
    return hs_dumploc_sym_mode ? hs_dumploc_sym_mode : hs_opt.symbolize;
}

static bool dump_sym_on(const dump_ctx_t *c)
{
    return c->sym_state == DUMP_SYM_LAZY || c->sym_state == DUMP_SYM_READY;
}

/* The profile's mapping for maps entry found (NULL: 0, no mapping), added on first use. */
static uint64_t dump_mapping_of(dump_ctx_t *c, const hs_map_t *found)
{
    if (!found)
        return 0;
    size_t i = (size_t)(found - c->maps.maps);
    hs_map_t *m = &c->maps.maps[i];
    if (c->map_ids[i])
        return c->map_ids[i];
    hs_mapping_t pm = {
        .memory_start = m->start,
        .memory_limit = m->limit,
        .file_offset = m->offset,
        .filename = hs_profile_str(c->prof, m->path),
        .build_id = hs_profile_str(c->prof, hs_maps_build_id(0, &c->maps, m)),
        .has_functions = dump_sym_on(c),
        .has_filenames = dump_sym_on(c),
        .has_line_numbers = dump_sym_on(c),
        .has_inline_frames = dump_sym_on(c),
    };
    c->map_ids[i] = hs_profile_add_mapping(c->prof, &pm);
    return c->map_ids[i];
}

/* The mapping id for addr, adding the mapping on first use; 0 when addr is unmapped. */
static uint64_t dump_mapping(dump_ctx_t *c, uint64_t addr)
{
    return dump_mapping_of(c, hs_maps_find(&c->maps, addr));
}

/* Makes the main executable mapping 1 (pprof names a profile after its first mapping):
 * the executable mapping of the file /proc/self/exe names, or of the first file mapped
 * when that link cannot be read; else its first mapping. Other mappings keep their
 * first-use order. */
void hs_dumploc_main_mapping(dump_ctx_t *c)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[len > 0 ? len : 0] = '\0';
    for (size_t i = 0; !exe[0] && i < c->maps.n; i++)
        if (c->maps.maps[i].path[0] == '/')
            snprintf(exe, sizeof(exe), "%s", c->maps.maps[i].path);
    const hs_map_t *first = NULL;
    for (size_t i = 0; exe[0] && i < c->maps.n; i++) {
        const hs_map_t *m = &c->maps.maps[i];
        if (strcmp(m->path, exe) != 0)
            continue;
        if (m->executable) {
            first = m;
            break;
        }
        if (!first)
            first = m;
    }
    if (first)
        dump_mapping(c, first->start);
}

/* A location at addr (a return address - 1, inside the call) in mapping map, with one
 * line per (inlined) frame of syms[0..n). */
static uint64_t dump_add_location(dump_ctx_t *c, uint64_t map, uint64_t addr,
                                  const hs_symbol_t *syms, size_t n)
{
    hs_line_t lines[16];
    for (size_t i = 0; i < n; i++) {
        const char *name = syms[i].name ? syms[i].name : syms[i].system_name;
        const char *sys = syms[i].system_name ? syms[i].system_name : name;
        lines[i].function_id =
            hs_profile_add_function(c->prof, name ? name : "", sys ? sys : "",
                                    syms[i].file ? syms[i].file : "", syms[i].start_line);
        lines[i].line = syms[i].line;
    }
    return hs_profile_add_location(c->prof, map, addr, lines, n);
}

/* The symbolizer of the live mappings, made when first needed: setting libdwfl up costs
 * a tenth of a millisecond and opens every binary, for nothing when the symbol cache
 * holds every address of the profile (or the profile has no stack). NULL if off or
 * failed. */
static hs_symbolizer_t *dump_sym(dump_ctx_t *c)
{
    if (c->sym_state != DUMP_SYM_LAZY)
        return c->sym;
    const char *mode = hs_dumploc_sym_mode_now();
    c->sym = c->maps.n ? hs_symbolizer_new_self(&c->maps) : hs_symbolizer_new_pid(0);
    c->sym_state = c->sym ? DUMP_SYM_READY : DUMP_SYM_FAILED;
    if (c->sym && c->nhint)
        hs_symbolizer_hint(c->sym, c->hint, c->nhint);
    static int dw_said;
    if (!c->sym && hs_dw_error()[0]) /* libdw not loadable: addresses only (dwload.h) */
        hs_log_once(dw_said, "no symbols in profiles, addresses only: %s", hs_dw_error());
    if (!c->sym || strcmp(mode, "full") == 0)
        return c->sym;
    if (strcmp(mode, "names") == 0)
        hs_symbolizer_names_only(c->sym, true);
    else
        hs_symbolizer_separate_debug(c->sym, HS_SYM_DEBUG_SYMTAB);
    return c->sym;
}

/* The location of addr in the live mappings. The symbol cache serves the dumps made with
 * HEAPSIFT_SYMBOLIZE's own mode (not the leak report's "lines" instead of "names"). */
static uint64_t dump_live_location(dump_ctx_t *c, uint64_t addr)
{
    hs_symbol_t buf[16];
    const hs_symbol_t *syms = buf;
    size_t n = 0;
    const hs_map_t *m = c->maps.n ? hs_maps_find(&c->maps, addr) : NULL;
    uint64_t map = dump_mapping_of(c, m); /* reads m's build id, which the key includes */
    uint64_t key = m && !hs_dumploc_sym_mode ? hs_symcache_map_key(m) : 0;
    if (dump_sym_on(c) && !(key && hs_symcache_get(addr, key, &syms, &n))) {
        hs_symbolizer_t *sym = dump_sym(c);
        n = sym ? hs_symbolize(sym, addr, buf, 16) : 0;
        syms = buf;
        if (sym && key)
            hs_symcache_put(addr, key, buf, n);
    }
    return dump_add_location(c, map, addr, syms, n);
}

/* Builds the location of return address pc, with its names and lines. */
static uint64_t dump_new_location(dump_ctx_t *c, uint64_t pc)
{
    hs_line_t lines[1];
    if (pc == hs_overflow_pc) {
        static const char full[] = "[heapsift: stack table full: HEAPSIFT_MAX_STACKS reached]";
        lines[0].function_id = hs_profile_add_function(c->prof, full, full, "", 0);
        lines[0].line = 0;
        return hs_profile_add_location(c->prof, 0, 0, lines, 1);
    }
    return dump_live_location(c, pc - 1);
}

/* The symbolizer for unloaded module g: the file it was loaded from, if it is still
 * there with the same build id; else NULL (its frames stay unnamed). */
static hs_symbolizer_t *dump_unloaded_sym(dump_ctx_t *c, int g, const hs_unloaded_t *u)
{
    char id[65];
    if (c->utried[g] || !dump_sym_on(c))
        return c->usym[g];
    c->utried[g] = true;
    if (!hs_elf_build_id(u->path, id, sizeof(id)) || strcmp(id, u->build_id) != 0)
        return NULL;
    c->usym[g] = hs_symbolizer_new();
    if (c->usym[g] &&
        hs_symbolizer_add_file(c->usym[g], u->path, u->start, u->limit, u->offset) != 0) {
        hs_symbolizer_free(c->usym[g]);
        c->usym[g] = NULL;
    }
    return c->usym[g];
}

/* The mapping of unloaded module g, added on first use. */
static uint64_t dump_unloaded_map(dump_ctx_t *c, int g, const hs_unloaded_t *u)
{
    if (!c->umap[g]) {
        hs_mapping_t pm = {
            .memory_start = u->start,
            .memory_limit = u->limit,
            .file_offset = u->offset,
            .filename = hs_profile_str(c->prof, u->path),
            .build_id = hs_profile_str(c->prof, u->build_id),
        };
        c->umap[g] = hs_profile_add_mapping(c->prof, &pm);
    }
    return c->umap[g];
}

/* A location in a library unloaded since the stack was recorded (g = its index). */
static uint64_t dump_unloaded_location(dump_ctx_t *c, uint64_t pc, int g)
{
    const hs_unloaded_t *u = hs_modules_get(g);
    if (!u || g >= HS_DUMP_UNLOADED)
        return hs_profile_add_location(c->prof, 0, pc - 1, NULL, 0);
    hs_symbolizer_t *sym = dump_unloaded_sym(c, g, u);
    hs_symbol_t syms[16];
    size_t n = sym ? hs_symbolize(sym, pc - 1, syms, 16) : 0;
    return dump_add_location(c, dump_unloaded_map(c, g, u), pc - 1, syms, n);
}

uint64_t hs_dumploc_location(dump_ctx_t *c, uint64_t pc, int unloaded)
{
    uint64_t key = pc ? pc : ~0ull; /* 0 marks an empty slot */
    int32_t mod = unloaded + 1;
    size_t mask = c->loc_cap - 1;
    size_t i = (size_t)(((key + (uint64_t)mod) * 0x9E3779B97F4A7C15ull) >> 20) & mask;
    while (c->loc_pc[i] && (c->loc_pc[i] != key || c->loc_mod[i] != mod))
        i = (i + 1) & mask;
    if (!c->loc_pc[i]) {
        c->loc_pc[i] = key;
        c->loc_mod[i] = mod;
        c->loc_id[i] =
            unloaded >= 0 ? dump_unloaded_location(c, pc, unloaded) : dump_new_location(c, pc);
    }
    return c->loc_id[i];
}
