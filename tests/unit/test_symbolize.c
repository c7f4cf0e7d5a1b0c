/*
 * Unit test of symbolize.c, in process: resolves addresses of this test's own functions
 * (a static one, an inlined one, a chain of three inlined ones inside a lexical block, a
 * function split into hot and cold parts, main), of libc and of libstdc++ (demangling)
 * through a symbolizer of the live process, then the static function again through a
 * symbolizer fed the executable's mapping from hs_maps_read (the CLI's path). Checks the
 * per-unit scope index of symbolize_dwarf.c against libdw's own scope search
 * (dwarf_getscopes) on addresses all over this executable's code, those between
 * functions included. Prints the time to symbolize 10,000 libc addresses, cold and
 * cached. Exits non-zero on failure.
 */
#define _GNU_SOURCE
#include "base/maps.h"
#include "symbolize/symbolize.h"
#include "symbolize/symbolize_int.h"

#include "check.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(void);

static const int probe_line = __LINE__ + 1;
__attribute__((noinline, noclone)) static int sym_probe(int x)
{
    __asm__ volatile("" ::: "memory");
    return x * 7 + 3;
}

static void *captured;

__attribute__((noinline, noclone)) static void sym_capture(void)
{
    captured = __builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

static const int leaf_call_line = __LINE__ + 3;
static inline __attribute__((always_inline)) void sym_inlined_leaf(void)
{
    sym_capture();
}

static const int outer_call_line = __LINE__ + 3;
__attribute__((noinline, noclone)) static void sym_inlined_outer(void)
{
    sym_inlined_leaf();
    __asm__ volatile("" ::: "memory"); /* no tail call: the return address stays here */
}

/* Three inlined levels, the innermost inside a lexical block of its own. */
static const int inl1_call_line = __LINE__ + 6;
static inline __attribute__((always_inline)) int sym_inl1(int x)
{
    int r = x;
    {
        volatile int block_local = x * 3;
        sym_capture();
        r += block_local;
    }
    return r;
}

static const int inl2_call_line = __LINE__ + 3;
static inline __attribute__((always_inline)) int sym_inl2(int x)
{
    return sym_inl1(x + 1) + 1;
}

static const int inl3_call_line = __LINE__ + 3;
__attribute__((noinline, noclone)) static int sym_inl3(int x)
{
    int r = sym_inl2(x * 2);
    __asm__ volatile("" ::: "memory");
    return r;
}

/* A rarely taken branch calling a cold function: at -O2 gcc moves it into
 * .text.unlikely (sym_split.cold), so sym_split's DWARF has two ranges (DW_AT_ranges). */
__attribute__((noinline, noclone, cold)) static void sym_capture_cold(void)
{
    captured = __builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

static const int split_call_line = __LINE__ + 5;
__attribute__((noinline, noclone)) static int sym_split(int x)
{
    if (x == 12345) {
        x = x * 5 + 1;
        sym_capture_cold();
    }
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "(null)";
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void print_frames(const char *what, const hs_symbol_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "  %s #%zu: %s [%s] %s:%lld (decl %lld)\n", what, i,
                f[i].name ? f[i].name : "?", f[i].system_name ? f[i].system_name : "?",
                f[i].file ? f[i].file : "?", (long long)f[i].line, (long long)f[i].start_line);
}

/* The static function resolves to its name, this file and a line inside it. */
static void check_probe(hs_symbolizer_t *s, const char *how)
{
    hs_symbol_t f[8];
    size_t n = hs_symbolize(s, (uint64_t)(uintptr_t)&sym_probe + 1, f, 8);
    CHECK(n == 1, "%s: %zu frames for sym_probe", how, n);
    if (n == 0)
        return;
    CHECK(f[0].name && strcmp(f[0].name, "sym_probe") == 0, "%s: name %s", how, f[0].name);
    CHECK(f[0].system_name && strcmp(f[0].system_name, "sym_probe") == 0, "%s: system name %s", how,
          f[0].system_name);
    CHECK(strcmp(base_name(f[0].file), "test_symbolize.c") == 0, "%s: file %s", how, f[0].file);
    CHECK(f[0].file && f[0].file[0] == '/', "%s: file %s not absolute", how, f[0].file);
    CHECK(f[0].line >= probe_line - 1 && f[0].line <= probe_line + 4, "%s: line %lld vs %d", how,
          (long long)f[0].line, probe_line);
    CHECK(f[0].start_line == probe_line, "%s: decl line %lld vs %d", how,
          (long long)f[0].start_line, probe_line);
    if (hs_check_failures)
        print_frames(how, f, n);
}

static void check_inlined(hs_symbolizer_t *s)
{
    hs_symbol_t f[8];
    sym_inlined_outer();
    size_t n = hs_symbolize(s, (uint64_t)(uintptr_t)captured - 1, f, 8);
    CHECK(n == 2, "%zu frames for the inlined call", n);
    if (n == 2) {
        CHECK(f[0].name && strcmp(f[0].name, "sym_inlined_leaf") == 0, "inner %s", f[0].name);
        CHECK(f[0].line == leaf_call_line, "inner line %lld", (long long)f[0].line);
        CHECK(f[1].name && strcmp(f[1].name, "sym_inlined_outer") == 0, "outer %s", f[1].name);
        CHECK(f[1].line == outer_call_line, "outer line %lld", (long long)f[1].line);
        CHECK(strcmp(base_name(f[1].file), "test_symbolize.c") == 0, "outer file %s", f[1].file);
    }
    CHECK(hs_symbolize(s, (uint64_t)(uintptr_t)captured - 1, f, 1) == 1, "max 1");
    CHECK(f[0].name && strcmp(f[0].name, "sym_inlined_leaf") == 0, "max 1: %s", f[0].name);
}

/* sym_inl1 in sym_inl2 in sym_inl3: three frames, each outer one at its call site. */
static void check_inlined_chain(hs_symbolizer_t *s)
{
    hs_symbol_t f[8];
    CHECK(sym_inl3(4) == 37, "sym_inl3");
    size_t n = hs_symbolize(s, (uint64_t)(uintptr_t)captured - 1, f, 8);
    CHECK(n == 3, "%zu frames for the chain of three", n);
    if (n == 3) {
        const char *want[3] = {"sym_inl1", "sym_inl2", "sym_inl3"};
        const int line[3] = {inl1_call_line, inl2_call_line, inl3_call_line};
        for (int i = 0; i < 3; i++) {
            CHECK(f[i].name && strcmp(f[i].name, want[i]) == 0, "#%d: %s", i, f[i].name);
            CHECK(f[i].line == line[i], "#%d %s: line %lld, want %d", i, want[i],
                  (long long)f[i].line, line[i]);
            CHECK(strcmp(base_name(f[i].file), "test_symbolize.c") == 0, "#%d: file %s", i,
                  f[i].file);
        }
        CHECK(f[2].start_line == inl3_call_line - 2, "decl line of sym_inl3 %lld",
              (long long)f[2].start_line);
    }
    if (hs_check_failures)
        print_frames("chain", f, n);
}

/* The cold part of sym_split (a second range of its DIE, far from the first) is still
 * sym_split, not the symbol-table name sym_split.cold, at the line of the call. */
static void check_split(hs_symbolizer_t *s)
{
    hs_symbol_t f[8];
    CHECK(sym_split(12345) == 61727, "sym_split");
    uint64_t pc = (uint64_t)(uintptr_t)captured - 1, entry = (uint64_t)(uintptr_t)&sym_split;
    bool split = pc < entry || pc - entry > 4096;
    if (!split)
        fprintf(stderr, "test_symbolize: sym_split not split into hot and cold parts\n");
    size_t n = hs_symbolize(s, pc, f, 8);
    CHECK(n == 1, "%zu frames in sym_split's cold part", n);
    if (n >= 1) {
        CHECK(f[0].name && strcmp(f[0].name, "sym_split") == 0, "cold part: %s", f[0].name);
        CHECK(f[0].line == split_call_line, "cold part: line %lld, want %d", (long long)f[0].line,
              split_call_line);
    }
    if (hs_check_failures)
        print_frames("split", f, n);
}

/* libdw's own answer, independent of the symbolizer's index: the function DIEs holding
 * addr, innermost first, up to the first one that is not inlined. */
static int ref_functions(Dwfl *dwfl, uint64_t addr, Dwarf_Die *out, int max)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_addrdie(dwfl, addr, &bias), *scopes = NULL, inner;
    int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0, n = 0;
    if (ns > 0) {
        inner = scopes[0];
        free(scopes);
        scopes = NULL;
        ns = dwarf_getscopes_die(&inner, &scopes);
    }
    for (int i = 0; i < ns && n < max; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine &&
            tag != DW_TAG_entry_point)
            continue;
        out[n++] = scopes[i];
        if (tag != DW_TAG_inlined_subroutine)
            break;
    }
    free(scopes);
    return n;
}

/* One address: the symbolizer's frames against libdw's scopes; false on a mismatch. */
static bool cmp_address(hs_symbolizer_t *s, Dwfl *dwfl, uint64_t addr, size_t *between)
{
    Dwarf_Die ref[16];
    hs_symbol_t f[16];
    Dwarf_Attribute a;
    Dwarf_Word call = 0;
    int nref = ref_functions(dwfl, addr, ref, 16);
    size_t n = hs_symbolize(s, addr, f, 16);
    if (nref == 0) {
        *between += 1;
        return n <= 1; /* a symbol-table name or a line at most, never inlined frames */
    }
    if (n != (size_t)nref)
        return false;
    for (int i = 0; i < nref; i++) {
        int decl = 0;
        const char *name = dwarf_formstring(dwarf_attr_integrate(&ref[i], DW_AT_name, &a));
        bool linkage = dwarf_attr_integrate(&ref[i], DW_AT_linkage_name, &a) != NULL;
        if (name && !linkage && (!f[i].name || strcmp(f[i].name, name) != 0))
            return false;
        if (f[i].start_line != (dwarf_decl_line(&ref[i], &decl) == 0 ? decl : 0))
            return false;
        if (i > 0 && f[i].line != (int64_t)call)
            return false;
        call = 0;
        dwarf_formudata(dwarf_attr(&ref[i], DW_AT_call_line, &a), &call);
    }
    return true;
}

/* Some 4000 addresses spread over this executable's code (every 7th byte of some 30 kB
 * without sanitizers: this file's functions and the symbolizer's own, inlined ones
 * included), through the index and through libdw's search (0.4 ms an address). */
static void check_index_vs_libdw(void)
{
    static Dwfl_Callbacks cb = {.find_elf = dwfl_linux_proc_find_elf,
                                .find_debuginfo = dwfl_standard_find_debuginfo};
    hs_maps_t maps;
    Dwfl *dwfl = dwfl_begin(&cb);
    hs_symbolizer_t *s = hs_symbolizer_new_pid(0);
    CHECK(dwfl && s && hs_maps_read(0, &maps) == 0, "setup");
    if (!dwfl || !s)
        goto out;
    dwfl_report_begin(dwfl);
    CHECK(dwfl_linux_proc_report(dwfl, getpid()) == 0, "dwfl_linux_proc_report");
    dwfl_report_end(dwfl, NULL, NULL);
    const hs_map_t *m = hs_maps_find(&maps, (uint64_t)(uintptr_t)&sym_probe);
    size_t total = 0, between = 0, bad = 0;
    uint64_t step = m && (m->limit - m->start) / 4000 > 7 ? (m->limit - m->start) / 4000 | 1 : 7;
    double t0 = now_ms();
    for (uint64_t addr = m ? m->start : 0; m && addr < m->limit; addr += step, total++) {
        if (!cmp_address(s, dwfl, addr, &between) && ++bad <= 5) {
            hs_symbol_t f[16];
            fprintf(stderr, "test_symbolize: index and libdw differ at %#llx\n",
                    (unsigned long long)addr);
            print_frames("index", f, hs_symbolize(s, addr, f, 16));
        }
    }
    fprintf(stderr, "test_symbolize: %zu addresses (%zu between functions) as libdw: %.1f ms\n",
            total, between, now_ms() - t0);
    CHECK(bad == 0, "%zu of %zu addresses differ from libdw's scopes", bad, total);
    CHECK(total > 1000 && between > 0, "%zu addresses, %zu between functions", total, between);
    CHECK(s->dwarf_fallbacks == 0, "%llu addresses needed libdw's search",
          (unsigned long long)s->dwarf_fallbacks);
    /* GCC's .debug_aranges here reads: units are found by libdw, not indexed again. */
    CHECK(hs_sym_units_own(s) == 0, "%zu modules had their units indexed from their ranges",
          hs_sym_units_own(s));
    hs_maps_free(&maps);
out:
    hs_symbolizer_free(s);
    if (dwfl)
        dwfl_end(dwfl);
}

static void check_main_libc_and_holes(hs_symbolizer_t *s)
{
    hs_symbol_t f[8], g[8];
    size_t n = hs_symbolize(s, (uint64_t)(uintptr_t)&main + 1, f, 8);
    CHECK(n >= 1 && f[n - 1].name && strcmp(f[n - 1].name, "main") == 0, "main: %zu %s", n,
          n ? f[n - 1].name : "");
    n = hs_symbolize(s, (uint64_t)(uintptr_t)&qsort + 1, f, 8);
    CHECK(n >= 1 && f[n - 1].name && strstr(f[n - 1].name, "qsort"), "qsort: %zu %s", n,
          n ? f[n - 1].name : "");
    n = hs_symbolize(s, (uint64_t)(uintptr_t)&malloc + 1, f, 8);
    CHECK(n >= 1 && f[n - 1].name && strstr(f[n - 1].name, "malloc"), "malloc: %zu %s", n,
          n ? f[n - 1].name : "");
    /* Cached: the very same strings come back. */
    size_t m = hs_symbolize(s, (uint64_t)(uintptr_t)&malloc + 1, g, 8);
    CHECK(m == n && (n == 0 || g[n - 1].name == f[n - 1].name), "cache");
    CHECK(hs_symbolize(s, 16, f, 8) == 0, "address 16 resolved");
    CHECK(hs_symbolize(s, UINT64_MAX, f, 8) == 0, "address ~0 resolved");
    CHECK(hs_symbolize(s, (uint64_t)(uintptr_t)&main, f, 0) == 0, "max 0");
}

/* A C++ symbol of libstdc++: demangled name with "::", mangled system name. */
static void check_demangle(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        fprintf(stderr, "test_symbolize: libstdc++ unavailable, demangling skipped\n");
        return;
    }
    void *fn = dlsym(h, "_ZNSt6chrono3_V212system_clock3nowEv");
    CHECK(fn != NULL, "dlsym system_clock::now");
    hs_symbolizer_t *s = hs_symbolizer_new_pid(0);
    CHECK(s != NULL, "new_pid after dlopen");
    if (s != NULL && fn != NULL) {
        hs_symbol_t f[8];
        size_t n = hs_symbolize(s, (uint64_t)(uintptr_t)fn + 1, f, 8);
        CHECK(n >= 1, "no frames for system_clock::now");
        if (n >= 1) {
            const hs_symbol_t *o = &f[n - 1];
            CHECK(o->name && strstr(o->name, "system_clock::now"), "demangled %s", o->name);
            CHECK(o->system_name && strncmp(o->system_name, "_Z", 2) == 0, "mangled %s",
                  o->system_name);
        }
    }
    hs_symbolizer_free(s);
}

/* The CLI's path: the executable placed from its maps lines, then looked up. */
static void check_add_file(void)
{
    hs_maps_t maps;
    CHECK(hs_maps_read(0, &maps) == 0, "hs_maps_read");
    const hs_map_t *m = hs_maps_find(&maps, (uint64_t)(uintptr_t)&sym_probe);
    CHECK(m != NULL, "no mapping for sym_probe");
    hs_symbolizer_t *s = hs_symbolizer_new();
    CHECK(s != NULL, "hs_symbolizer_new");
    if (m != NULL && s != NULL) {
        for (size_t i = 0; i < maps.n; i++) {
            const hs_map_t *a = &maps.maps[i];
            if (strcmp(a->path, m->path) == 0)
                CHECK(hs_symbolizer_add_file(s, a->path, a->start, a->limit, a->offset) == 0,
                      "add_file %s at %llx", a->path, (unsigned long long)a->start);
        }
        check_probe(s, "add_file");
        CHECK(hs_symbolizer_add_file(s, "/nonexistent", 4096, 8192, 0) < 0, "nonexistent");
        CHECK(hs_symbolizer_add_file(s, "/proc/self/maps", 4096, 8192, 0) < 0, "not ELF");
        check_probe(s, "add_file after more adds");
    }
    hs_symbolizer_free(s);
    hs_maps_free(&maps);
}

/* A CLI symbolizer of libc's and ld.so's mappings (as a profile's mappings place them). */
static hs_symbolizer_t *libc_symbolizer(const hs_maps_t *maps)
{
    hs_symbolizer_t *s = hs_symbolizer_new();
    for (size_t i = 0; s && i < maps->n; i++) {
        const hs_map_t *a = &maps->maps[i];
        if (strstr(a->path, "/libc.so") || strstr(a->path, "/ld-linux"))
            hs_symbolizer_add_file(s, a->path, a->start, a->limit, a->offset);
    }
    return s;
}

static bool same_frames(const hs_symbol_t *a, size_t na, const hs_symbol_t *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if ((a[i].name == NULL) != (b[i].name == NULL) ||
            (a[i].name && strcmp(a[i].name, b[i].name) != 0) ||
            (a[i].file == NULL) != (b[i].file == NULL) ||
            (a[i].file && strcmp(a[i].file, b[i].file) != 0) || a[i].line != b[i].line ||
            a[i].start_line != b[i].start_line)
            return false;
    }
    return true;
}

/* hs_symbolizer_expect: libc's and ld.so's addresses (2,000 over their text, and a few
 * functions) get the same frames from a symbolizer told of them, which reads their
 * separate debug files (compressed in libc6-dbg) from copies inflated only as far as
 * those addresses need, as from one that reads them whole. With libc6-dbg installed, the
 * copy of libc's has its .debug_info cut short for a few addresses early in it. */
static void check_expect(void)
{
    hs_maps_t maps;
    CHECK(hs_maps_read(0, &maps) == 0, "hs_maps_read");
    /* libc's own functions: under ASan, &qsort and &malloc are its interceptors' */
    void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    uintptr_t f_qsort = (uintptr_t)(h ? dlsym(h, "qsort") : NULL);
    uintptr_t f_malloc = (uintptr_t)(h ? dlsym(h, "malloc") : NULL);
    uintptr_t f_setlocale = (uintptr_t)(h ? dlsym(h, "setlocale") : NULL);
    const hs_map_t *lc =
        f_qsort && f_malloc && f_setlocale ? hs_maps_find(&maps, (uint64_t)f_qsort) : NULL;
    uint64_t want[2100];
    size_t n = 0;
    for (size_t i = 0; i < maps.n && lc; i++) {
        const hs_map_t *a = &maps.maps[i];
        if ((strstr(a->path, "/libc.so") || strstr(a->path, "/ld-linux")) && a->executable)
            for (uint64_t k = 0; k < 1000 && n < 2000; k++)
                want[n++] = a->start + (k * 7919 * 13) % (a->limit - a->start);
    }
    /* malloc's unit after setlocale's: the one farthest into .debug_info is not the last. */
    uint64_t few[] = {(uint64_t)f_qsort + 1, (uint64_t)f_malloc + 1, (uint64_t)f_setlocale + 1};
    for (int pass = 0; pass < 2 && lc; pass++) {
        const uint64_t *w = pass ? few : want;
        size_t nw = pass ? sizeof(few) / sizeof(few[0]) : n;
        hs_symbolizer_t *whole = libc_symbolizer(&maps), *cut = libc_symbolizer(&maps);
        CHECK(whole && cut && hs_symbolizer_expect(cut, w, nw), "symbolizers");
        size_t differ = 0, found = 0;
        for (size_t i = 0; whole && cut && i < nw; i++) {
            hs_symbol_t a[16], b[16];
            size_t nb = hs_symbolize(cut, w[i], b, 16), na = hs_symbolize(whole, w[i], a, 16);
            found += na > 0;
            if (!same_frames(a, na, b, nb) && differ++ < 5)
                fprintf(stderr, "test_symbolize: expect: %#llx: %zu frames (%s), told %zu (%s)\n",
                        (unsigned long long)w[i], na, na ? a[0].name : "-", nb,
                        nb ? b[0].name : "-");
        }
        CHECK(differ == 0 && found > nw / 2, "expected addresses: %zu of %zu differ, %zu found",
              differ, nw, found);
        char id[65], dbg[160];
        if (pass == 1 && cut && hs_elf_build_id(lc->path, id, sizeof(id)) &&
            snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2) > 0 &&
            access(dbg, R_OK) == 0) {
            fprintf(stderr, "test_symbolize: expect: %zu debug files cut short\n", cut->zdebug_cut);
            /* Debian's libc6-dbg: compressed, qsort's and setlocale's units before malloc's. */
            CHECK(cut->zdebug_cut == 1, "libc's debug file not cut short (%zu)", cut->zdebug_cut);
        }
        hs_symbolizer_free(whole);
        hs_symbolizer_free(cut);
    }
    if (h)
        dlclose(h);
    hs_maps_free(&maps);
}

/* Copies the file at from to to with read/write; true on success. */
/* The frames of addr from a symbolizer told all of w and from one told nothing. */
static bool told_same(const hs_maps_t *maps, const uint64_t *w, size_t nw, uint64_t addr,
                      size_t *info)
{
    hs_symbolizer_t *whole = libc_symbolizer(maps), *told = libc_symbolizer(maps);
    hs_symbol_t a[16], b[16];
    bool ok = whole && told && hs_symbolizer_expect(told, w, nw);
    size_t nb = ok ? hs_symbolize(told, addr, b, 16) : 0,
           na = ok ? hs_symbolize(whole, addr, a, 16) : 0;
    ok = ok && same_frames(a, na, b, nb);
    *info = told ? told->zdebug_info : 0;
    hs_symbolizer_free(whole);
    hs_symbolizer_free(told);
    return ok;
}

/* ld.so's entry point (_start, assembly that no function symbol holds, in rtld.c's unit
 * near the end of its .debug_info) announced beside a function of ld.so: no more of
 * ld.so's .debug_info is inflated than for the function alone (symbolize_zwant.c), and
 * the entry point's frames are those of a symbolizer told nothing. */
static void check_expect_unnamed(void)
{
    hs_maps_t maps = {0};
    uint64_t base = getauxval(AT_BASE),
             fn = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "__tls_get_addr");
    const hs_map_t *ld = NULL;
    if (hs_maps_read(getpid(), &maps) != 0 || !base || !fn) {
        hs_maps_free(&maps);
        return;
    }
    for (size_t i = 0; i < maps.n && !ld; i++)
        if (strstr(maps.maps[i].path, "/ld-linux") && maps.maps[i].executable &&
            fn >= maps.maps[i].start && fn < maps.maps[i].limit)
            ld = &maps.maps[i];
    char id[65], dbg[160];
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(uintptr_t)base;
    uint64_t entry = base + eh->e_entry + 1;
    if (!ld || !hs_elf_build_id(ld->path, id, sizeof(id)) ||
        snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2) <= 0 ||
        access(dbg, R_OK) != 0) {
        fprintf(stderr, "test_symbolize: no debug file of ld.so: unnamed addresses not checked\n");
        hs_maps_free(&maps);
        return;
    }
    uint64_t alone[] = {fn + 1}, both[] = {fn + 1, entry};
    size_t info_alone = 0, info_both = 0;
    CHECK(told_same(&maps, alone, 1, fn + 1, &info_alone), "__tls_get_addr told alone");
    CHECK(told_same(&maps, both, 2, entry, &info_both), "ld.so's entry point told");
    fprintf(stderr, "test_symbolize: ld.so's .debug_info inflated: %zu bytes, %zu with _start\n",
            info_alone, info_both);
    CHECK(info_both == info_alone, "ld.so's _start made %zu bytes of .debug_info inflated, not %zu",
          info_both, info_alone);
    hs_maps_free(&maps);
}

static bool copy_file(const char *from, const char *to)
{
    char buf[65536];
    ssize_t r;
    bool ok = true;
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    while (in >= 0 && out >= 0 && (r = read(in, buf, sizeof(buf))) > 0)
        ok &= write(out, buf, (size_t)r) == r;
    ok &= in >= 0 && out >= 0;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return ok;
}

/* Odd mappings never crash: a library deleted after loading (0 frames or its true name),
 * the vDSO, an anonymous executable page. */
static void check_odd_mappings(void)
{
    char path[] = "/tmp/hs_symbolize_deleted_XXXXXX";
    int fd = mkstemp(path);
    void *h = NULL, *fn = NULL, *orig = dlsym(RTLD_DEFAULT, "elf_version");
    Dl_info info;
    if (orig == NULL || dladdr(orig, &info) == 0 || info.dli_fname == NULL)
        info.dli_fname = "/nonexistent";
    if (fd >= 0 && (close(fd), copy_file(info.dli_fname, path)) &&
        (h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL)
        fn = dlsym(h, "elf_version");
    unlink(path);
    void *anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    hs_symbolizer_t *s = hs_symbolizer_new_pid(0);
    CHECK(s != NULL, "new_pid");
    hs_symbol_t f[8];
    if (s != NULL && fn != NULL) {
        size_t n = hs_symbolize(s, (uint64_t)(uintptr_t)fn + 1, f, 8);
        CHECK(n == 0 || (f[n - 1].name && strcmp(f[n - 1].name, "elf_version") == 0),
              "deleted library: %s", f[n - 1].name);
    }
    uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
    for (uint64_t off = 0; s != NULL && vdso != 0 && off < 8192; off += 64)
        hs_symbolize(s, vdso + off, f, 8);
    if (s != NULL && anon != MAP_FAILED)
        CHECK(hs_symbolize(s, (uint64_t)(uintptr_t)anon + 16, f, 8) == 0, "anonymous page");
    hs_symbolizer_free(s);
    if (anon != MAP_FAILED)
        munmap(anon, 4096);
    if (h != NULL)
        dlclose(h);
}

/* The symbol tables read directly (symbolize_symtab.c) give the names libdwfl's own
 * reads give, over libc's text (its separate debug file's .symtab when installed) and
 * this program's; and among malloc's aliases the one a user writes. */
/* Sets every module of s back to unbuilt with no scan made; counts those a scan left so. */
static size_t unbuild_symtabs(hs_symbolizer_t *s)
{
    size_t scanned = 0;
    for (size_t t = 0; t < s->nmods; t++) {
        hs_sym_modtab_t *mt = &s->mods[t];
        scanned += mt->scans > 0 && !mt->built;
        free(mt->funcs);
        *mt = (hs_sym_modtab_t){.mod = mt->mod, .nsyms = mt->nsyms, .raw = mt->raw};
    }
    return scanned;
}

/* Names per symbol tables only, a's against b's (libdwfl's), for per_module addresses
 * spread over libc's text and this executable's. With scan, a's modules are set back to
 * unbuilt after each lookup, so that each is a scan unless the scan cannot answer as the
 * table would; *scanned counts those answered by scans. Returns how many differ. */
static size_t cmp_symtabs(hs_symbolizer_t *a, bool scan, uint64_t per_module, size_t *same,
                          size_t *scanned)
{
    hs_symbolizer_t *b = hs_symbolizer_new_pid(0);
    hs_maps_t maps;
    size_t differ = 0;
    *same = *scanned = 0;
    if (!b || hs_maps_read(0, &maps) != 0) {
        hs_symbolizer_free(b);
        return 1;
    }
    hs_symbolizer_names_only(a, true);
    hs_symbolizer_names_only(b, true);
    b->symtab_via_dwfl = true;
    const void *anchors[] = {(const void *)&qsort, (const void *)&main};
    for (size_t k = 0; k < 2; k++) {
        const hs_map_t *m = hs_maps_find(&maps, (uint64_t)(uintptr_t)anchors[k]);
        uint64_t span = m ? m->limit - m->start : 0;
        for (uint64_t i = 0; m && i < per_module; i++) {
            hs_symbol_t f[4], g[4];
            uint64_t addr = m->start + (i * 7919 * 13) % span;
            size_t n = hs_symbolize(a, addr, f, 4), o = hs_symbolize(b, addr, g, 4);
            if (scan)
                *scanned += unbuild_symtabs(a);
            bool eq =
                n == o && (n == 0 || (f[n - 1].system_name && g[n - 1].system_name &&
                                      strcmp(f[n - 1].system_name, g[n - 1].system_name) == 0));
            if (!eq && differ++ < 5)
                fprintf(stderr, "  %#llx: %s %s, libdwfl %s\n", (unsigned long long)addr,
                        scan ? "scan" : "direct", n ? f[n - 1].system_name : "-",
                        o ? g[o - 1].system_name : "-");
            *same += eq;
        }
    }
    hs_maps_free(&maps);
    hs_symbolizer_free(b);
    return differ;
}

static void check_symtab_direct(void)
{
    hs_symbolizer_t *a = hs_symbolizer_new_pid(0);
    size_t same, scanned;
    CHECK(a != NULL, "a symbolizer");
    if (a == NULL)
        return;
    size_t differ = cmp_symtabs(a, false, 20000, &same, &scanned);
    CHECK(differ == 0 && same > 20000, "symbol tables: %zu same, %zu differ", same, differ);
    hs_symbol_t f[4];
    size_t n = hs_symbolize(a, (uint64_t)(uintptr_t)&malloc + 1, f, 4);
#ifdef __SANITIZE_ADDRESS__
    /* HS_SANITIZE: malloc is libasan's, a weak alias of its global __interceptor_malloc. */
    const char *want = "__interceptor_malloc";
#else
    const char *want = "malloc";
#endif
    CHECK(n == 1 && f[0].name && strcmp(f[0].name, want) == 0, "malloc's alias: %s",
          n ? f[0].name : "-");
    hs_symbolizer_free(a);
}

/* A module's first lookups are scans of the symbols in memory: with every lookup one (a
 * scan that cannot answer as the table would builds it, so most, not all), the names of
 * libc's addresses and this executable's are libdwfl's. */
static void check_symtab_scan(void)
{
    hs_symbolizer_t *a = hs_symbolizer_new_pid(0);
    size_t same, scanned;
    CHECK(a != NULL, "a symbolizer");
    if (a == NULL)
        return;
    size_t differ = cmp_symtabs(a, true, 3000, &same, &scanned);
    CHECK(differ == 0 && same == 6000 && scanned > 5000,
          "scans against tables: %zu same, %zu differ (%zu answered by scans)", same, differ,
          scanned);
    hs_symbolizer_free(a);
}

/* The symbol-table answers of hinted addresses (symbolize_batch.c) in libc and this
 * executable, against libdwfl's: 200 addresses spread over each module's text and those at,
 * just after and just before a few functions' starts. The batch answers nearly all of them
 * (one it cannot answer as the table would goes to the scans and the table, as before). */
static void check_symtab_batch(void)
{
    hs_symbolizer_t *a = hs_symbolizer_new_pid(0), *b = hs_symbolizer_new_pid(0);
    hs_maps_t maps;
    uint64_t addrs[2 * 200 + 3 * 5];
    size_t n = 0;
    bool ok = a && b && hs_maps_read(0, &maps) == 0;
    CHECK(ok, "symbolizers and maps");
    if (!ok) {
        hs_symbolizer_free(a);
        hs_symbolizer_free(b);
        return;
    }
    hs_symbolizer_names_only(a, true);
    hs_symbolizer_names_only(b, true);
    b->symtab_via_dwfl = true;
    const void *anchors[] = {(const void *)&qsort, (const void *)&main};
    for (size_t k = 0; k < 2; k++) {
        const hs_map_t *m = hs_maps_find(&maps, (uint64_t)(uintptr_t)anchors[k]);
        for (uint64_t i = 0; m && i < 200; i++)
            addrs[n++] = m->start + (i * 7919 * 13) % (m->limit - m->start);
    }
    const void *starts[] = {(const void *)&qsort, (const void *)&malloc, (const void *)&free,
                            (const void *)&main, (const void *)&check_symtab_batch};
    for (size_t k = 0; k < 5; k++)
        for (int d = -1; d <= 1; d++)
            addrs[n++] = (uint64_t)(uintptr_t)starts[k] + (uint64_t)(int64_t)d;
    CHECK(hs_symbolizer_hint(a, addrs, n), "hint");
    size_t same = 0, built = 0, answered = 0;
    for (size_t i = 0; i < n; i++) {
        hs_symbol_t f[4], g[4];
        size_t x = hs_symbolize(a, addrs[i], f, 4), y = hs_symbolize(b, addrs[i], g, 4);
        bool eq = x == y && (x == 0 || (f[x - 1].system_name && g[y - 1].system_name &&
                                        strcmp(f[x - 1].system_name, g[y - 1].system_name) == 0));
        if (!eq)
            fprintf(stderr, "  %#llx: batch %s, libdwfl %s\n", (unsigned long long)addrs[i],
                    x ? f[x - 1].system_name : "-", y ? g[y - 1].system_name : "-");
        same += eq;
    }
    for (size_t t = 0; t < a->nmods; t++) {
        built += a->mods[t].built;
        for (size_t j = 0; j < a->mods[t].nanswers; j++)
            answered += a->mods[t].answers[j].ok;
    }
    CHECK(same == n && answered > n * 9 / 10,
          "hinted: %zu of %zu same as libdwfl, %zu answered by the batch, %zu tables built", same,
          n, answered, built);
    hs_maps_free(&maps);
    hs_symbolizer_free(a);
    hs_symbolizer_free(b);
}

/* 10,000 addresses spread over libc's text: cold, then cached. */
static void time_libc(hs_symbolizer_t *s)
{
    hs_maps_t maps;
    if (hs_maps_read(0, &maps) != 0)
        return;
    const hs_map_t *m = hs_maps_find(&maps, (uint64_t)(uintptr_t)&qsort);
    if (m != NULL) {
        hs_symbol_t f[8];
        size_t found = 0;
        uint64_t span = m->limit - m->start;
        for (int pass = 0; pass < 2; pass++) {
            double t0 = now_ms();
            for (uint64_t i = 0; i < 10000; i++)
                found += hs_symbolize(s, m->start + (i * 7919 * 13) % span, f, 8) > 0;
            fprintf(stderr, "test_symbolize: 10000 libc addresses %s: %.1f ms\n",
                    pass ? "cached" : "cold", now_ms() - t0);
        }
        CHECK(found > 10000, "only %zu of 20000 libc addresses resolved", found);
    }
    hs_maps_free(&maps);
}

/* The radix sort of function symbols orders as qsort with the comparison does: random
 * tables where many symbols share an address and ranks tie, and one whose address span
 * leaves no room in 64-bit keys (refused, table untouched). */
static void check_funcs_radix(void)
{
    static const int ranks[] = {0, 1000, 2000, 10000, 11000, 12000};
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    for (int round = 0; round < 20; round++) {
        size_t n = 1 + (size_t)(round * round * 37);
        hs_sym_func_t *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
        CHECK(a && b, "no memory");
        if (!a || !b)
            return;
        for (size_t i = 0; i < n; i++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            uint64_t spread = round % 3 == 0 ? 8 : round % 3 == 1 ? n : 1u << 24;
            a[i] = (hs_sym_func_t){.lo = 0x7f0000000000ull + (rng >> 8) % spread * 16,
                                   .size = rng % 64,
                                   .idx = (uint32_t)i + 1,
                                   .rank = ranks[rng % 6]};
        }
        memcpy(b, a, n * sizeof(*a));
        CHECK(hs_sym_funcs_radix(a, n), "radix refused %zu symbols", n);
        qsort(b, n, sizeof(*b), hs_sym_func_cmp);
        CHECK(memcmp(a, b, n * sizeof(*a)) == 0, "radix order differs from qsort's (%zu)", n);
        free(a);
        free(b);
    }
    hs_sym_func_t wide[3] = {
        {.lo = 1ull << 62, .idx = 1}, {.lo = 16, .idx = 2}, {.lo = 8, .idx = 3}};
    CHECK(!hs_sym_funcs_radix(wide, 3) && wide[0].idx == 1 && wide[2].idx == 3,
          "a 62-bit address span needs more than 64-bit keys");
}

/* hs_symbolizer_new_self, fed the mappings a dump reads, answers as new_pid, which has
 * libdwfl read /proc/self/maps: every 61st byte of every executable file mapping. */
static void check_self_from_maps(void)
{
    hs_maps_t maps;
    CHECK(hs_maps_read_lazy(0, &maps) == 0, "hs_maps_read_lazy");
    hs_symbolizer_t *a = hs_symbolizer_new_pid(0), *b = hs_symbolizer_new_self(&maps);
    CHECK(a && b, "symbolizers");
    size_t total = 0, named = 0, bad = 0;
    for (size_t i = 0; a && b && i < maps.n; i++) {
        const hs_map_t *m = &maps.maps[i];
        if (!m->executable || m->path[0] != '/')
            continue;
        for (uint64_t addr = m->start; addr < m->limit; addr += 61, total++) {
            hs_symbol_t x[16], y[16];
            size_t nx = hs_symbolize(a, addr, x, 16), ny = hs_symbolize(b, addr, y, 16);
            bool same = nx == ny;
            for (size_t k = 0; same && k < nx; k++)
                same = x[k].line == y[k].line &&
                       !strcmp(x[k].name ? x[k].name : "", y[k].name ? y[k].name : "") &&
                       !strcmp(x[k].file ? x[k].file : "", y[k].file ? y[k].file : "");
            named += nx > 0 && x[0].name;
            bad += !same;
        }
    }
    CHECK(bad == 0 && total > 1000 && named > total / 2, "%zu of %zu addresses differ (%zu named)",
          bad, total, named);
    hs_symbolizer_free(a);
    hs_symbolizer_free(b);
    hs_maps_free(&maps);
}

int main(void)
{
    CHECK(sym_probe(1) == 10, "probe");
    double t0 = now_ms();
    hs_symbolizer_t *s = hs_symbolizer_new_pid(0);
    CHECK(s != NULL, "hs_symbolizer_new_pid(0)");
    if (s == NULL)
        return 1;
    fprintf(stderr, "test_symbolize: new_pid %.1f ms\n", now_ms() - t0);
    check_probe(s, "pid");
    check_inlined(s);
    check_inlined_chain(s);
    check_split(s);
    check_main_libc_and_holes(s);
    time_libc(s);
    hs_symbolizer_free(s);
    check_add_file();
    check_expect();
    check_expect_unnamed();
    check_demangle();
    check_odd_mappings();
    check_index_vs_libdw();
    check_self_from_maps();
    check_symtab_direct();
    check_symtab_scan();
    check_symtab_batch();
    check_funcs_radix();
    return hs_check_done("test_symbolize");
}
