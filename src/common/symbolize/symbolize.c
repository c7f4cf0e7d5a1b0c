/*
 * The symbolizer: turns code addresses into frames (function, file, line), inlined
 * frames included, with elfutils' libdwfl. It owns one Dwfl session (either the live
 * modules of a process, or ELF files the caller places at addresses taken from maps or a
 * pprof mapping), an interning table of every string it hands out, and a cache from
 * address to frames, since a profile asks for the same return address many times.
 * Names are demangled with libiberty (demangle.c), linked in: no libstdc++ in the process.
 * It runs inside the profiled process at dump time with the caller's reentrancy guard
 * held, and in the CLI; it is not thread-safe. It must never crash the host on odd
 * mappings ([vdso], deleted files, memfd, replaced files): any failure is 0 frames.
 * DWARF scopes (inlined frames, function names and declaration lines) are read through a
 * per-compilation-unit index in symbolize_dwarf.c, symbol tables in symbolize_symtab.c,
 * separate debug files found by symbolize_debug.c; this file owns the rest: strings,
 * line-table lookups, the address cache, modules and the API.
 */
#define _GNU_SOURCE
#include "symbolize_int.h"
#include "model/demangle.h"
#include "base/fdio.h"
#include "base/maps.h"
#include "model/pprof.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Frames resolved per address before truncation to the caller's max. */
#define HS_SYM_MAX_FRAMES 32
#define HS_SYM_CHUNK (64 * 1024)
/* Demangled names are cut with "..." beyond these (the process's, the CLI's). */
#define HS_SYM_DEMANGLED (8 * 1024)
#define HS_SYM_DEMANGLED_CLI (64 * 1024)

/* ------------------------------------------------------------ strings ---- */

static uint64_t sym_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static char *sym_arena_copy(hs_symbolizer_t *s, const char *str, size_t len)
{
    hs_sym_chunk_t *c = s->chunks;
    if (c == NULL || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > HS_SYM_CHUNK ? len + 1 : HS_SYM_CHUNK;
        c = malloc(sizeof(*c) + cap);
        if (c == NULL)
            return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = s->chunks;
        s->chunks = c;
    }
    char *p = c->data + c->used;
    memcpy(p, str, len);
    p[len] = '\0';
    c->used += len + 1;
    return p;
}

static bool sym_strs_grow(hs_symbolizer_t *s)
{
    size_t cap = s->strcap ? s->strcap * 2 : 1024;
    hs_sym_str_t *t = calloc(cap, sizeof(*t));
    if (t == NULL)
        return false;
    for (size_t i = 0; i < s->strcap; i++) {
        if (s->strs[i].str == NULL)
            continue;
        size_t h = (size_t)s->strs[i].hash & (cap - 1);
        while (t[h].str != NULL)
            h = (h + 1) & (cap - 1);
        t[h] = s->strs[i];
    }
    free(s->strs);
    s->strs = t;
    s->strcap = cap;
    return true;
}

/* The interned entry for str (NULL str or no memory: NULL). */
static hs_sym_str_t *sym_intern_entry(hs_symbolizer_t *s, const char *str)
{
    if (str == NULL)
        return NULL;
    if (2 * (s->nstrs + 1) > s->strcap && !sym_strs_grow(s))
        return NULL;
    size_t len = strlen(str);
    uint64_t hash = sym_hash(str, len);
    size_t h = (size_t)hash & (s->strcap - 1);
    for (; s->strs[h].str != NULL; h = (h + 1) & (s->strcap - 1)) {
        if (s->strs[h].hash == hash && strcmp(s->strs[h].str, str) == 0)
            return &s->strs[h];
    }
    const char *copy = sym_arena_copy(s, str, len);
    if (copy == NULL)
        return NULL;
    s->strs[h] = (hs_sym_str_t){.str = copy, .demangled = NULL, .hash = hash};
    s->nstrs++;
    return &s->strs[h];
}

const char *hs_sym_intern(hs_symbolizer_t *s, const char *str)
{
    hs_sym_str_t *e = sym_intern_entry(s, str);
    return e ? e->str : NULL;
}

/* -------------------------------------------------------------- names ---- */

/* The demangled form of mangled, interned; NULL when it is not a mangled name the
 * demangler takes (or no memory). The buffer is the symbolizer's own, made on first use:
 * the profiled process's thread stacks may be small. */
static const char *sym_demangle(hs_symbolizer_t *s, const char *mangled)
{
    size_t cap = s->long_names ? HS_SYM_DEMANGLED_CLI : HS_SYM_DEMANGLED;
    size_t max_in = s->long_names ? HS_DEMANGLE_MAX : HS_DEMANGLE_MAX_IN_PROCESS;
    if (s->dmbuf == NULL && (s->dmbuf = malloc(cap)) == NULL)
        return NULL;
    if (hs_demangle(mangled, max_in, s->dmbuf, cap) == 0)
        return NULL;
    return hs_sym_intern(s, s->dmbuf);
}

void hs_sym_set_names(hs_symbolizer_t *s, hs_symbol_t *f, const char *mangled)
{
    hs_sym_str_t *e = sym_intern_entry(s, mangled);
    if (e == NULL)
        return;
    f->system_name = e->str;
    f->name = e->str;
    if (!hs_demangle_is_mangled(e->str))
        return;
    if (e->demangled == NULL) {
        const char *mangled_copy = e->str; /* e may move when the table grows */
        const char *out = sym_demangle(s, mangled_copy);
        e = sym_intern_entry(s, mangled_copy);
        if (e == NULL)
            return;
        e->demangled = out ? out : mangled_copy; /* tried once */
    }
    f->name = e->demangled;
}

/* A symbol-table name without its version ("pthread_create@@GLIBC_2.34"). */
static void sym_set_symtab_name(hs_symbolizer_t *s, hs_symbol_t *f, const char *name)
{
    char buf[512];
    size_t len = strcspn(name, "@");
    if (len == 0)
        return;
    if (name[len] == '@' && len < sizeof(buf)) {
        memcpy(buf, name, len);
        buf[len] = '\0';
        name = buf;
    }
    hs_sym_set_names(s, f, name);
}

/* -------------------------------------------------------------- lines ---- */

const char *hs_sym_file_path(hs_symbolizer_t *s, const char *dir, const char *file)
{
    char buf[4096];
    if (file == NULL || file[0] == '/' || dir == NULL || dir[0] == '\0')
        return hs_sym_intern(s, file);
    int n = snprintf(buf, sizeof(buf), "%s/%s", dir, file);
    return hs_sym_intern(s, n > 0 && (size_t)n < sizeof(buf) ? buf : file);
}

/* Everything known about addr, into out[0..max); returns the count. */
static size_t sym_resolve(hs_symbolizer_t *s, uint64_t addr, hs_symbol_t *out, size_t max)
{
    Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
    if (mod == NULL)
        return 0;
    const char *symname = NULL, *file = NULL;
    int line = 0;
    size_t n = 0;
    if (!s->names_only) {
        hs_sym_unit_line(s, mod, addr, &file, &line);
        n = hs_sym_dwarf_frames(s, mod, addr, file, line, out, max);
    }
    /* The symbol table only when DWARF leaves the function unnamed: a module whose
     * DWARF names every address never has its table built. */
    if (n == 0 || out[n - 1].name == NULL)
        symname = hs_sym_symtab_name(s, mod, addr);
    if (n == 0) {
        if (symname == NULL && file == NULL)
            return 0;
        memset(&out[0], 0, sizeof(out[0]));
        out[0].file = hs_sym_intern(s, file);
        out[0].line = line;
        n = 1;
    }
    /* The containing function: the symbol table names it when DWARF cannot. */
    hs_symbol_t *outer = &out[n - 1];
    if (outer->name == NULL && symname != NULL)
        sym_set_symtab_name(s, outer, symname);
    return n;
}

/* -------------------------------------------------------------- cache ---- */

static bool sym_cache_grow(hs_symbolizer_t *s)
{
    size_t cap = s->cachecap ? s->cachecap * 2 : 1024;
    hs_sym_cache_t *t = calloc(cap, sizeof(*t));
    if (t == NULL)
        return false;
    for (size_t i = 0; i < s->cachecap; i++) {
        if (s->cache[i].key == 0)
            continue;
        size_t h = (size_t)(s->cache[i].key * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
        while (t[h].key != 0)
            h = (h + 1) & (cap - 1);
        t[h] = s->cache[i];
    }
    free(s->cache);
    s->cache = t;
    s->cachecap = cap;
    return true;
}

/* The slot for key (empty when absent), or NULL when the table cannot grow. */
static hs_sym_cache_t *sym_cache_slot(hs_symbolizer_t *s, uint64_t key)
{
    if (2 * (s->ncache + 1) > s->cachecap && !sym_cache_grow(s))
        return NULL;
    size_t h = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (s->cachecap - 1);
    while (s->cache[h].key != 0 && s->cache[h].key != key)
        h = (h + 1) & (s->cachecap - 1);
    return &s->cache[h];
}

/* Appends frames to the frame store; returns the index of the first or -1. */
static int64_t sym_frames_store(hs_symbolizer_t *s, const hs_symbol_t *f, size_t n)
{
    if (s->nframes + n > UINT32_MAX)
        return -1;
    if (s->nframes + n > s->framecap) {
        size_t cap = s->framecap ? s->framecap * 2 : 1024;
        while (cap < s->nframes + n)
            cap *= 2;
        hs_symbol_t *t = realloc(s->frames, cap * sizeof(*t));
        if (t == NULL)
            return -1;
        s->frames = t;
        s->framecap = cap;
    }
    if (n > 0) /* frames is still NULL when only misses were stored */
        memcpy(&s->frames[s->nframes], f, n * sizeof(*f));
    s->nframes += n;
    return (int64_t)(s->nframes - n);
}

static void sym_cache_clear(hs_symbolizer_t *s)
{
    if (s->cache != NULL)
        memset(s->cache, 0, s->cachecap * sizeof(*s->cache));
    s->ncache = 0;
    s->nframes = 0;
}

/* ---------------------------------------------------------------- API ---- */

/* Points every module's userdata at s, for sym_find_debuginfo. */
static int sym_set_userdata(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
                            void *arg)
{
    (void)mod, (void)name, (void)start;
    *userdata = arg;
    return DWARF_CB_OK;
}

static int sym_report_end(hs_symbolizer_t *s)
{
    if (dwfl_report_end(s->dwfl, NULL, NULL) != 0)
        return -1;
    dwfl_getmodules(s->dwfl, sym_set_userdata, s, 0);
    return 0;
}

/* The find_debuginfo callback: separate debug files as s->debug allows (a module without
 * s as its userdata gets none). */
static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                              Dwarf_Addr base, const char *file, const char *debuglink,
                              GElf_Word crc, char **found)
{
    hs_symbolizer_t *s = userdata != NULL ? *userdata : NULL;
    /* Remote descriptors (fdio.h): libdwfl takes the debug file's only as a descriptor. */
    if (s == NULL || !s->debug_open || hs_fd_remote()) {
        errno = ENOENT;
        return -1;
    }
    /* With expected addresses, the debug file by build id is opened here, so that
     * hs_sym_zdebug's copy is the one libdwfl reads. */
    if (s->nwant) {
        int fd = hs_sym_debug_by_build_id(mod, found);
        if (fd >= 0)
            return hs_sym_zdebug(s, mod, fd);
    }
    int fd = s->local_debug
                 ? hs_sym_find_debuginfo(mod, userdata, modname, base, file, debuglink, crc, found)
                 : dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, debuglink, crc,
                                                found);
    return fd >= 0 && s->nwant ? hs_sym_zdebug(s, mod, fd) : fd;
}

/* addrs[0..n) copied into *dst (freed first), *nd set; false (nothing changed) when out of
 * memory. */
static bool sym_set_addrs(uint64_t **dst, size_t *nd, const uint64_t *addrs, size_t n)
{
    uint64_t *w = n ? malloc(n * sizeof(*w)) : NULL;
    if (n && w == NULL)
        return false;
    if (n)
        memcpy(w, addrs, n * sizeof(*w));
    free(*dst);
    *dst = w;
    *nd = n;
    return true;
}

bool hs_symbolizer_expect(hs_symbolizer_t *s, const uint64_t *addrs, size_t n)
{
    return s != NULL && sym_set_addrs(&s->want, &s->nwant, addrs, n);
}

bool hs_symbolizer_hint(hs_symbolizer_t *s, const uint64_t *addrs, size_t n)
{
    return s != NULL && sym_set_addrs(&s->hint, &s->nhint, addrs, n);
}

static hs_symbolizer_t *sym_alloc(const Dwfl_Callbacks *cb)
{
    hs_symbolizer_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->callbacks = *cb;
    s->callbacks.find_debuginfo = sym_find_debuginfo;
    s->debug_open = true;
    s->dwfl = dwfl_begin(&s->callbacks);
    if (s->dwfl == NULL || !sym_strs_grow(s)) {
        hs_symbolizer_free(s);
        return NULL;
    }
    return s;
}

/* The ELF file at path as an Elf over a private mapping of it, for a thread whose
 * descriptors live in heapsift's I/O thread (fdio.h): the file is opened, mapped and
 * closed there, so neither libelf nor libdwfl ever holds a descriptor (a number they held
 * would name whatever the program has at it). The mapping lasts until
 * hs_symbolizer_free. NULL when the file cannot be mapped. */
static Elf *sym_elf_image(hs_symbolizer_t *s, const char *path)
{
    struct stat st;
    void *p = MAP_FAILED;
    int fd = hs_fd_open(path, O_RDONLY, 0);
    if (fd < 0)
        return NULL;
    if (hs_fd_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        p = hs_fd_mmap((size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    hs_fd_close(fd);
    if (p == MAP_FAILED)
        return NULL;
    if (s->nimages == s->imagecap) {
        size_t cap = s->imagecap ? 2 * s->imagecap : 16;
        struct hs_sym_image *t = realloc(s->images, cap * sizeof(*t));
        if (t == NULL) {
            munmap(p, (size_t)st.st_size);
            return NULL;
        }
        s->images = t;
        s->imagecap = cap;
    }
    s->images[s->nimages++] = (struct hs_sym_image){p, (size_t)st.st_size};
    elf_version(EV_CURRENT);
    return elf_memory(p, (size_t)st.st_size);
}

/* find_elf for this process. In a table of heapsift's own (a private one, or the CLI's),
 * the file is opened there and libdwfl takes the descriptor; else the file is handed over
 * as a mapping (sym_elf_image), and what only libdwfl's own callback could open (the vDSO,
 * a deleted file, through /proc/PID/mem) is left unnamed. */
static int sym_find_elf_self(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                             char **file_name, Elf **elfp)
{
    if (hs_fd_remote()) {
        hs_symbolizer_t *s = userdata != NULL ? *userdata : NULL;
        if (s == NULL || name == NULL || name[0] != '/' || (*elfp = sym_elf_image(s, name)) == NULL)
            return -1;
        *file_name = strdup(name);
        return -1;
    }
    if (name == NULL || name[0] != '/')
        return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
    int fd = hs_fd_open(name, O_RDONLY, 0);
    if (fd < 0)
        return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
    *file_name = strdup(name);
    if (*file_name == NULL) {
        hs_fd_close(fd);
        return -1;
    }
    return fd;
}

/* This process's mappings, read through fdio.h (libdwfl's dwfl_linux_proc_report would
 * open /proc/PID/maps in the caller's table). */
static int sym_report_self(Dwfl *dwfl)
{
    hs_buf_t text = HS_BUF_INIT;
    int rc = hs_read_file("/proc/self/maps", &text);
    FILE *f = rc == 0 && text.len ? fmemopen(text.data, text.len, "r") : NULL;
    rc = f ? dwfl_linux_proc_maps_report(dwfl, f) : -1;
    if (f)
        fclose(f);
    hs_buf_free(&text);
    return rc;
}

/* The modules of maps, as libdwfl's own report of /proc/PID/maps makes them: each run
 * of mappings of one file (same device and inode; mappings of no file in between do not
 * end it) is a module spanning the run. -1 when libdwfl refuses one, or a run's paths
 * differ (libdwfl gives up the whole report then too). */
static int sym_report_maps(Dwfl *dwfl, const hs_maps_t *maps)
{
    const hs_map_t *first = NULL;
    uint64_t high = 0;
    for (size_t i = 0; i <= maps->n; i++) {
        const hs_map_t *m = i < maps->n ? &maps->maps[i] : NULL;
        if (m && (m->path[0] != '/' || (m->inode == 0 && m->dev == 0)))
            continue;
        if (m && first && m->inode == first->inode && m->dev == first->dev) {
            if (strcmp(m->path, first->path) != 0)
                return -1;
            high = m->limit;
            continue;
        }
        if (first && dwfl_report_module(dwfl, first->path, first->start, high) == NULL)
            return -1;
        first = m;
        high = m ? m->limit : 0;
    }
    return 0;
}

static hs_symbolizer_t *sym_new_live(pid_t pid, const hs_maps_t *maps)
{
    static const Dwfl_Callbacks cb = {.find_elf = dwfl_linux_proc_find_elf};
    static const Dwfl_Callbacks cb_self = {.find_elf = sym_find_elf_self};
    bool self = pid == 0 || pid == getpid();
    hs_symbolizer_t *s = sym_alloc(self ? &cb_self : &cb);
    if (s == NULL)
        return NULL;
    /* Inside a profiled process: never libdebuginfod (symbolize_debug.c). */
    s->local_debug = true;
    dwfl_report_begin(s->dwfl);
    int rc = maps   ? sym_report_maps(s->dwfl, maps)
             : self ? sym_report_self(s->dwfl)
                    : dwfl_linux_proc_report(s->dwfl, pid);
    if (sym_report_end(s) != 0 || rc != 0) {
        hs_symbolizer_free(s);
        return NULL;
    }
    return s;
}

hs_symbolizer_t *hs_symbolizer_new_pid(pid_t pid)
{
    return sym_new_live(pid, NULL);
}

hs_symbolizer_t *hs_symbolizer_new_self(const hs_maps_t *maps)
{
    return maps ? sym_new_live(0, maps) : NULL;
}

hs_symbolizer_t *hs_symbolizer_new(void)
{
    static const Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf,
                                      .section_address = dwfl_offline_section_address};
    hs_symbolizer_t *s = sym_alloc(&cb);
    if (s == NULL)
        return NULL;
    s->long_names = true;
    /* libdwfl's own search ends in libdebuginfod, which it dlopens (with libcurl and its
     * TLS stack: about 3 ms) only to find that DEBUGINFOD_URLS names no server: without
     * one, the local search alone gives the same files. */
    const char *urls = getenv("DEBUGINFOD_URLS");
    s->local_debug = urls == NULL || urls[strspn(urls, " \t")] == '\0';
    dwfl_report_begin(s->dwfl);
    s->reporting = true;
    return s;
}

void hs_symbolizer_separate_debug(hs_symbolizer_t *s, hs_sym_debug_t which)
{
    if (s != NULL) {
        s->debug = which;
        s->debug_open = which == HS_SYM_DEBUG_ALL;
    }
}

void hs_symbolizer_names_only(hs_symbolizer_t *s, bool on)
{
    if (s != NULL && s->names_only != on) {
        s->names_only = on;
        sym_cache_clear(s);
    }
}

size_t hs_symbolize(hs_symbolizer_t *s, uint64_t addr, hs_symbol_t *out, size_t max)
{
    hs_symbol_t tmp[HS_SYM_MAX_FRAMES];
    if (s == NULL || s->dwfl == NULL || out == NULL || max == 0 || addr + 1 == 0)
        return 0;
    if (s->reporting) {
        s->reporting = false;
        sym_cache_clear(s);   /* new modules may resolve what failed before */
        hs_sym_dwarf_free(s); /* unit indexes hold DIEs of modules libdwfl could drop */
        if (sym_report_end(s) != 0)
            return 0;
    }
    hs_sym_cache_t *slot = sym_cache_slot(s, addr + 1);
    if (slot != NULL && slot->key != 0) {
        size_t n = slot->n < max ? slot->n : max;
        if (n > 0)
            memcpy(out, &s->frames[slot->first], n * sizeof(*out));
        return n;
    }
    size_t n = sym_resolve(s, addr, tmp, HS_SYM_MAX_FRAMES);
    int64_t first = sym_frames_store(s, tmp, n);
    if (slot != NULL && first >= 0) {
        *slot = (hs_sym_cache_t){.key = addr + 1, .first = (uint32_t)first, .n = (uint32_t)n};
        s->ncache++;
    }
    n = n < max ? n : max;
    memcpy(out, tmp, n * sizeof(*out));
    return n;
}

void hs_symbolizer_free(hs_symbolizer_t *s)
{
    if (s == NULL)
        return;
    if (s->dwfl != NULL)
        dwfl_end(s->dwfl);
    for (size_t i = 0; i < s->nimages; i++)
        munmap(s->images[i].p, s->images[i].n);
    free(s->images);
    free(s->dmbuf);
    while (s->chunks != NULL) {
        hs_sym_chunk_t *next = s->chunks->next;
        free(s->chunks);
        s->chunks = next;
    }
    free(s->strs);
    free(s->frames);
    free(s->cache);
    free(s->files);
    hs_sym_modtabs_free(s);
    hs_sym_dwarf_free(s);
    free(s->want);
    free(s->hint);
    free(s);
}

/* ------------------------------------------------------------- files ---- */

/*
 * Candidate load biases of the ELF open on fd when its bytes at file offset `offset` are
 * mapped at `start`. A PT_LOAD segment maps file offset o to bias + p_vaddr + (o -
 * p_offset), the relation the dynamic loader establishes; but one file page may belong to
 * two segments (the end of .rodata and the start of the RELRO data share one), so every
 * segment holding the offset gives a candidate, executable segments first. Returns the
 * count (0 when the file is not ELF or no segment holds the offset).
 */
static size_t sym_load_biases(int fd, uint64_t start, uint64_t offset, uint64_t *bias, size_t max)
{
    size_t nph = 0, n = 0;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf == NULL || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) != 0)
        goto out;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < nph && n < max; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
                continue;
            if ((pass == 0) != ((ph.p_flags & PF_X) != 0))
                continue;
            uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
            uint64_t lo = ph.p_offset & ~(align - 1), hi = ph.p_offset + ph.p_filesz;
            if (offset >= lo && offset < hi)
                bias[n++] = start - offset - ph.p_vaddr + ph.p_offset;
        }
    }
out:
    if (elf != NULL)
        elf_end(elf);
    return n;
}

/* true when path was reported at one of the biases; remembers it at bias[0] otherwise. A
 * file mapped in several segments is one module. */
static bool sym_file_seen(hs_symbolizer_t *s, const char *path, const uint64_t *bias, size_t n,
                          bool *oom)
{
    const char *p = hs_sym_intern(s, path);
    *oom = p == NULL;
    if (p == NULL)
        return false;
    for (size_t i = 0; i < s->nfiles; i++) {
        for (size_t j = 0; j < n; j++) {
            if (s->files[i].path == p && s->files[i].bias == bias[j])
                return true;
        }
    }
    if (s->nfiles == s->filecap) {
        size_t cap = s->filecap ? s->filecap * 2 : 16;
        hs_sym_file_t *t = realloc(s->files, cap * sizeof(*t));
        *oom = t == NULL;
        if (t == NULL)
            return false;
        s->files = t;
        s->filecap = cap;
    }
    s->files[s->nfiles++] = (hs_sym_file_t){.path = p, .bias = bias[0]};
    return false;
}

int hs_symbolizer_add_file(hs_symbolizer_t *s, const char *path, uint64_t start, uint64_t limit,
                           uint64_t offset)
{
    uint64_t bias[4];
    bool oom;
    if (s == NULL || s->dwfl == NULL || path == NULL || start >= limit)
        return -EINVAL;
    if (hs_fd_remote())
        return -ENOTSUP; /* libdwfl would take the descriptor: see sym_elf_image */
    elf_version(EV_CURRENT);
    int fd = hs_fd_open(path, O_RDONLY, 0);
    if (fd < 0)
        return -errno;
    int rc = -EINVAL;
    size_t nbias = sym_load_biases(fd, start, offset, bias, 4);
    if (nbias == 0)
        goto out;
    if (sym_file_seen(s, path, bias, nbias, &oom) || oom) {
        rc = oom ? -ENOMEM : 0;
        goto out;
    }
    if (!s->reporting) {
        dwfl_report_begin_add(s->dwfl);
        s->reporting = true;
    }
    /* libdwfl takes the descriptor on success. */
    if (dwfl_report_elf(s->dwfl, path, path, fd, bias[0], true) != NULL)
        return 0;
    s->nfiles--; /* not reported after all */
    rc = -EINVAL;
out:
    hs_fd_close(fd);
    return rc;
}
