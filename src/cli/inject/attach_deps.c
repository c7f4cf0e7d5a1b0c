/*
 * The libraries libheapsift.so needs, put where a target that lacks them finds them
 * (attach_deps.h). A container commonly has glibc but not libdw, libelf, libz, liblzma,
 * libbz2 or libgcc_s, and the target's dlopen of the library then fails. The library is
 * linked with DT_RPATH $ORIGIN/heapsift-deps (CMakeLists.txt): DT_RPATH, unlike
 * DT_RUNPATH, is searched for the dependencies of its dependencies too, and for its own
 * dlopen of the x86 decoder and of libdw, and a directory that does not exist (beside an
 * installed library) costs one failed lookup. So each library of the closure of its
 * DT_NEEDED, the decoder and libdw (runtime_libs.h), but glibc's own (which must be the
 * target's),
 * that the target neither maps nor has in its standard directories is copied from where
 * this command's loader finds it into heapsift-deps beside the library the target
 * dlopens. The loader matches an already loaded library by its soname first, so a copy
 * never replaces what the target loaded. Used by attach_files.c only.
 */
#define _GNU_SOURCE
#include "attach_deps.h"
#include "attach_files.h"
#include "ptrace_inject.h"
#include "base/runtime_libs.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEPS_MAX 32

typedef struct {
    char name[64];       /* the soname, as DT_NEEDED says it */
    char path[PATH_MAX]; /* where this command's loader finds it */
} deps_lib_t;

typedef struct {
    deps_lib_t lib[DEPS_MAX];
    size_t n;
} deps_t;

/* glibc's own libraries: the target's glibc, whatever this machine's is. */
static bool deps_glibc(const char *name)
{
    static const char *const own[] = {"libc.so.6",    "libm.so.6",           "libpthread.so.0",
                                      "libdl.so.2",   "librt.so.1",          "libresolv.so.2",
                                      "libutil.so.1", "libmvec.so.1",        "libanl.so.1",
                                      "libnsl.so.1",  "ld-linux-x86-64.so.2"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (strcmp(name, own[i]) == 0)
            return true;
    return false;
}

/* Where this command's loader finds name (loading it here if it is not loaded). */
static bool deps_find(const char *name, char path[PATH_MAX])
{
    void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h)
        h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
    struct link_map *lm = NULL;
    bool ok = h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name &&
              realpath(lm->l_name, path) != NULL;
    if (h)
        dlclose(h);
    return ok;
}

/* Calls fn for each DT_NEEDED of the ELF file path. */
static int deps_needed(const char *path, void (*fn)(const char *name, void *arg), void *arg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -ENOEXEC;
    if (fd < 0)
        return -errno;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    for (Elf_Scn *s = NULL; e && (s = elf_nextscn(e, s));) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(s, NULL)))
            continue;
        rc = 0;
        for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Dyn dyn;
            const char *name;
            if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
                (name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)))
                fn(name, arg);
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return rc;
}

static void deps_add(const char *name, void *arg)
{
    deps_t *d = arg;
    if (deps_glibc(name) || d->n >= DEPS_MAX || strlen(name) >= sizeof(d->lib[0].name))
        return;
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->lib[i].name, name) == 0)
            return;
    deps_lib_t *l = &d->lib[d->n];
    if (!deps_find(name, l->path))
        return; /* not here either: the target's dlopen names it */
    snprintf(l->name, sizeof(l->name), "%s", name);
    d->n++;
}

/* The closure of lib's DT_NEEDED and of what it dlopens, but glibc's, breadth first. */
static void deps_closure(const char *lib, deps_t *d)
{
    d->n = 0;
    deps_needed(lib, deps_add, d);
    deps_add(HS_DECODER_SONAME, d);
    deps_add(HS_DW_SONAME, d); /* dlopened on the first symbolization (base/dwload.c) */
    for (size_t i = 0; i < d->n; i++)
        deps_needed(d->lib[i].path, deps_add, d);
}

/* Whether pid maps a file named name, or has it in a standard directory of its own (seen
 * through /proc/PID/root even when it shares our /tmp and the library's file: a
 * container may bind those and not /usr/lib). */
static bool deps_target_has(pid_t pid, const char *name)
{
    static const char *const dirs[] = {"/lib/x86_64-linux-gnu",
                                       "/usr/lib/x86_64-linux-gnu",
                                       "/lib64",
                                       "/usr/lib64",
                                       "/lib",
                                       "/usr/lib"};
    char path[PATH_MAX + 128], seen[PATH_MAX];
    uintptr_t base;
    if (hs_inject_map_find(pid, name, &base, seen, sizeof(seen)))
        return true;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d/root%s/%s", (int)pid, dirs[i], name);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
            return true;
    }
    return false;
}

int hs_attach_deps_copy(pid_t pid, const char *root, const char *dir, const char *lib, char *names,
                        size_t cap, char *why, size_t whycap)
{
    deps_t d;
    char there[PATH_MAX + 128];
    size_t len = 0;
    bool made = false;
    names[0] = '\0';
    deps_closure(lib, &d);
    for (size_t i = 0; i < d.n; i++) {
        if (deps_target_has(pid, d.lib[i].name))
            continue;
        int rc = 0;
        snprintf(there, sizeof(there), "%s%s/heapsift-deps", root, dir);
        if (!made && mkdir(there, 0755) != 0 && errno != EEXIST)
            rc = -errno;
        made = true;
        if (rc == 0) {
            snprintf(there, sizeof(there), "%s%s/heapsift-deps/%s", root, dir, d.lib[i].name);
            rc = hs_attach_copy_file(d.lib[i].path, there);
        }
        if (rc != 0) {
            snprintf(why, whycap, "%s: %s", there, strerror(-rc));
            return rc;
        }
        int k = snprintf(names + len, cap - len, "%s%s", len ? ", " : "", d.lib[i].name);
        len += k > 0 && (size_t)k < cap - len ? (size_t)k : 0;
    }
    return 0;
}
