/*
 * The libdw table of dwload.h: libdw.so.1 dlopened on the first dwfl_begin (once, under
 * pthread_once; its dependencies first when only heapsift-deps has them), each name looked up in it
 * (libelf's through libdw's dependencies), and the four Dwfl callbacks that static initializers
 * name. A failed load is final and kept as text for hs_dw_error; nothing is printed here.
 */
#define _GNU_SOURCE
#define HS_DWLOAD_OWN
#include "dwload.h"
#include "runtime_libs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

hs_dw_table_t hs_dw_fn;
static bool dw_ok;
static char dw_error[256];
static pthread_once_t dw_once = PTHREAD_ONCE_INIT;

/* dlopen(HS_DW_SONAME) from this library, so that its DT_RPATH ($ORIGIN/heapsift-deps,
 * where `heapsift attach` copies what a target lacks) is searched. That path covers
 * libdw itself but not its dependencies (libelf, liblzma, ...), which the loader then
 * looks for in the standard places only: when the error names a dependency that cannot
 * be opened, that one is dlopened from here first (a loaded object is matched by its
 * soname), and libdw again, a few times at most. NULL with dw_error set. */
static void *dw_open(void)
{
    for (int tries = 0; tries < 8; tries++) {
        void *h = dlopen(HS_DW_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (h != NULL)
            return h;
        const char *e = dlerror();
        snprintf(dw_error, sizeof(dw_error), "%s", e ? e : "dlopen " HS_DW_SONAME " failed");
        char dep[128];
        size_t n = strcspn(dw_error, ":");
        if (n == 0 || n >= sizeof(dep) || dw_error[n] != ':' || memchr(dw_error, '/', n))
            return NULL;
        memcpy(dep, dw_error, n);
        dep[n] = '\0';
        if (strcmp(dep, HS_DW_SONAME) == 0 || dlopen(dep, RTLD_NOW | RTLD_LOCAL) == NULL)
            return NULL;
    }
    return NULL;
}

static void dw_load_once(void)
{
    void *h = dw_open();
    if (h == NULL)
        return;
    hs_dw_table_t t;
#define HS_DW_SYM(f)                                                                               \
    if ((*(void **)&t.f = dlsym(h, #f)) == NULL) {                                                 \
        snprintf(dw_error, sizeof(dw_error), "%s has no %s", HS_DW_SONAME, #f);                    \
        return;                                                                                    \
    }
    HS_DW_FUNCS(HS_DW_SYM)
#undef HS_DW_SYM
    hs_dw_fn = t;
    __atomic_store_n(&dw_ok, true, __ATOMIC_RELEASE);
}

bool hs_dw_load(void)
{
    if (__atomic_load_n(&dw_ok, __ATOMIC_ACQUIRE))
        return true;
    pthread_once(&dw_once, dw_load_once);
    return __atomic_load_n(&dw_ok, __ATOMIC_ACQUIRE);
}

const char *hs_dw_error(void)
{
    return dw_error;
}

Dwfl *hs_dw_begin(const Dwfl_Callbacks *cb)
{
    return hs_dw_load() ? hs_dw_fn.dwfl_begin(cb) : NULL;
}

int hs_dw_linux_proc_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                              char **file_name, Elf **elfp)
{
    return hs_dw_fn.dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

int hs_dw_build_id_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                            char **file_name, Elf **elfp)
{
    return hs_dw_fn.dwfl_build_id_find_elf(mod, userdata, name, base, file_name, elfp);
}

int hs_dw_standard_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *name,
                                  Dwarf_Addr base, const char *file, const char *debuglink,
                                  GElf_Word crc, char **debuginfo_file_name)
{
    return hs_dw_fn.dwfl_standard_find_debuginfo(mod, userdata, name, base, file, debuglink, crc,
                                                 debuginfo_file_name);
}

int hs_dw_offline_section_address(Dwfl_Module *mod, void **userdata, const char *name,
                                  Dwarf_Addr base, const char *secname, GElf_Word shndx,
                                  const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
    return hs_dw_fn.dwfl_offline_section_address(mod, userdata, name, base, secname, shndx, shdr,
                                                 addr);
}
