/*
 * The safe-point check of inject_safe.h. A thread is at a safe point when its unwound
 * stack ends cleanly and:
 *   - no frame is in the dynamic loader, or in an allocator's own library (libjemalloc,
 *     libtcmalloc, libmimalloc) or heapsift's;
 *   - no frame is in a function named as an allocator's entry point (malloc, free, ...,
 *     je_*, tc_*, mi_*, operator new and delete), the loader's API (dlopen, dl_iterate_phdr,
 *     ...), fork, thread creation and exit, or exit: these hold, or wait for, the locks a
 *     call that allocates needs;
 *   - in each run of frames inside libc, the outermost (the function the program called)
 *     is one libc exports by name: a run that starts in an internal function (a tail call
 *     from an entry point, such as memalign's into _mid_memalign) is not known to be safe.
 *     The stack's last run (start_thread, __libc_start_main) is the thread's origin.
 */
#define _GNU_SOURCE
#include "inject_safe.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hs_safe {
    Dwfl *dwfl;
    pid_t pid;
};

typedef enum { SAFE_OTHER, SAFE_LIBC, SAFE_BAD_OBJECT } safe_obj_t;

typedef struct {
    hs_safe_t *s;
    char *why;
    size_t cap;
    bool bad;
    int frames;
    bool in_run;        /* the previous frame was in libc */
    bool run_known;     /* the outermost libc frame of the current run is exported */
    char run_name[128]; /* its name, or its address */
} safe_walk_t;

static const char *const safe_names[] = {"malloc",
                                         "free",
                                         "calloc",
                                         "realloc",
                                         "reallocarray",
                                         "memalign",
                                         "posix_memalign",
                                         "aligned_alloc",
                                         "valloc",
                                         "pvalloc",
                                         "malloc_usable_size",
                                         "malloc_trim",
                                         "mallopt",
                                         "mallinfo",
                                         "mallinfo2",
                                         "malloc_stats",
                                         "malloc_info",
                                         "cfree",
                                         "mallocx",
                                         "rallocx",
                                         "xallocx",
                                         "sdallocx",
                                         "dallocx",
                                         "nallocx",
                                         "mallctl",
                                         "mallctlnametomib",
                                         "mallctlbymib",
                                         "malloc_stats_print",
                                         "fork",
                                         "_Fork",
                                         "vfork",
                                         "dlopen",
                                         "dlmopen",
                                         "dlclose",
                                         "dlsym",
                                         "dlvsym",
                                         "dladdr",
                                         "dladdr1",
                                         "dlinfo",
                                         "dlerror",
                                         "dl_iterate_phdr",
                                         "pthread_create",
                                         "pthread_exit",
                                         "pthread_join",
                                         "pthread_detach",
                                         "exit",
                                         "_exit",
                                         "quick_exit",
                                         "__cxa_finalize",
                                         "__cxa_thread_atexit_impl",
                                         "__libc_freeres",
                                         NULL};
static const char *const safe_prefixes[] = {"__libc_malloc",
                                            "__libc_free",
                                            "__libc_calloc",
                                            "__libc_realloc",
                                            "__libc_memalign",
                                            "__libc_valloc",
                                            "__libc_pvalloc",
                                            "__libc_dl",
                                            "__libc_fork",
                                            "__malloc",
                                            "je_",
                                            "_rjem_",
                                            "tc_",
                                            "mi_",
                                            "_Znw",
                                            "_Zna",
                                            "_Zdl",
                                            "_Zda",
                                            "_dl_",
                                            "__GI___libc_malloc",
                                            NULL};

static bool safe_name_bad(const char *n)
{
    for (int i = 0; safe_names[i]; i++)
        if (strcmp(n, safe_names[i]) == 0)
            return true;
    for (int i = 0; safe_prefixes[i]; i++)
        if (strncmp(n, safe_prefixes[i], strlen(safe_prefixes[i])) == 0)
            return true;
    return false;
}

static safe_obj_t safe_object(Dwfl_Module *mod)
{
    const char *path = mod ? dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL) : NULL;
    const char *b = path ? strrchr(path, '/') : NULL;
    b = b ? b + 1 : path ? path : "";
    if (strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-", 5) == 0)
        return SAFE_LIBC;
    if (strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld-", 3) == 0 ||
        strncmp(b, "libjemalloc", 11) == 0 || strncmp(b, "libtcmalloc", 11) == 0 ||
        strncmp(b, "libmimalloc", 11) == 0 || strncmp(b, "libheapsift", 11) == 0)
        return SAFE_BAD_OBJECT;
    return SAFE_OTHER;
}

/* Ends a run of libc frames: its outermost function must be one libc exports. */
static void safe_run_end(safe_walk_t *w)
{
    if (w->in_run && !w->run_known && !w->bad) {
        snprintf(w->why, w->cap,
                 "a frame in libc's internal code at %s, not under a function "
                 "it exports",
                 w->run_name);
        w->bad = true;
    }
    w->in_run = false;
}

static int safe_frame(Dwfl_Frame *frame, void *arg)
{
    safe_walk_t *w = arg;
    Dwarf_Addr pc;
    bool act;
    if (!dwfl_frame_pc(frame, &pc, &act))
        return DWARF_CB_ABORT;
    Dwarf_Addr at = act ? pc : pc - 1;
    Dwfl_Module *mod = dwfl_addrmodule(w->s->dwfl, at);
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *name = mod ? dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL) : NULL;
    bool inside = name && off < sym.st_size;
    /* exported: a name other objects can call (not a local one of a .symtab) */
    bool exported = inside && GELF_ST_BIND(sym.st_info) != STB_LOCAL &&
                    GELF_ST_VISIBILITY(sym.st_other) != STV_HIDDEN &&
                    GELF_ST_VISIBILITY(sym.st_other) != STV_INTERNAL;
    safe_obj_t kind = safe_object(mod);
    w->frames++;
    if (kind == SAFE_BAD_OBJECT || (inside && safe_name_bad(name))) {
        const char *obj =
            mod ? dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL) : "?";
        snprintf(w->why, w->cap, "a frame in %s (%s)", inside ? name : "its code", obj);
        w->bad = true;
        return DWARF_CB_ABORT;
    }
    if (kind == SAFE_LIBC) {
        w->in_run = true;
        w->run_known = exported;
        if (inside)
            snprintf(w->run_name, sizeof(w->run_name), "%s", name);
        else
            snprintf(w->run_name, sizeof(w->run_name), "%#llx", (unsigned long long)at);
    } else {
        safe_run_end(w);
        if (w->bad)
            return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
}

/* Loads what an unwind through mod reads on first use (its ELF file, sorted symbol table,
 * and call frame information), so that no
 * program thread is held stopped while it is read: a first unwind through libc took
 * milliseconds of a hold. */
static int safe_warm(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr start, void *arg)
{
    (void)user, (void)name, (void)start, (void)arg;
    Dwarf_Addr bias;
    if (dwfl_module_getelf(mod, &bias)) {
        (void)dwfl_module_getsymtab(mod);
        (void)dwfl_module_dwarf_cfi(mod, &bias);
        (void)dwfl_module_eh_cfi(mod, &bias);
    }
    return DWARF_CB_OK;
}

/* No separate debug files: the check reads the names in each module's own file (.dynsym,
 * .symtab, the MiniDebugInfo of .gnu_debugdata) and its .eh_frame. libc6-dbg's compressed
 * DWARF for libc and libm cost the command 60 ms of CPU per attach (2.5 s of wall time
 * beside 16 threads busy in malloc), a Chromium debug file would cost seconds, and the
 * verdicts would depend on which debug packages the machine has. */
static int safe_no_debuginfo(Dwfl_Module *mod, void **user, const char *modname, Dwarf_Addr base,
                             const char *file, const char *link, GElf_Word crc, char **found)
{
    (void)mod, (void)user, (void)modname, (void)base, (void)file, (void)link, (void)crc;
    (void)found;
    return -1;
}

hs_safe_t *hs_safe_open(pid_t pid, char *why, size_t cap)
{
    static const Dwfl_Callbacks cb = {.find_elf = dwfl_linux_proc_find_elf,
                                      .find_debuginfo = safe_no_debuginfo};
    hs_safe_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->pid = pid;
    s->dwfl = dwfl_begin(&cb);
    int rc = s->dwfl ? dwfl_linux_proc_report(s->dwfl, pid) : -1;
    if (rc == 0)
        rc = dwfl_report_end(s->dwfl, NULL, NULL);
    if (rc == 0)
        rc = dwfl_linux_proc_attach(s->dwfl, pid, true);
    if (rc != 0) {
        snprintf(why, cap, "the stacks of process %d cannot be unwound (%s)", (int)pid,
                 dwfl_errmsg(-1));
        hs_safe_close(s);
        return NULL;
    }
    dwfl_getmodules(s->dwfl, safe_warm, NULL, 0);
    return s;
}

void hs_safe_close(hs_safe_t *s)
{
    if (!s)
        return;
    if (s->dwfl)
        dwfl_end(s->dwfl);
    free(s);
}

int hs_safe_check(hs_safe_t *s, pid_t tid, char *why, size_t cap)
{
    safe_walk_t w = {.s = s, .why = why, .cap = cap};
    int rc = dwfl_getthread_frames(s->dwfl, tid, safe_frame, &w);
    if (w.bad)
        return 0;
    if (rc != 0 || w.frames == 0) {
        snprintf(why, cap, "thread %d's stack could not be unwound (%s)", (int)tid,
                 dwfl_errmsg(-1));
        return 0;
    }
    w.in_run = false; /* the last run is where the thread began */
    return 1;
}
