/*
 * elfsyms.c's GNU hash lookups, against a plain walk of each loaded object's dynamic
 * symbols (this test's, libc, libm, ld.so, the vDSO): every undefined symbol lies below
 * hs_elf_unhashed's bound (the reach scan reads a library's imports there only; this
 * executable's table hashes a weak undefined __cxa_finalize, libc's none), and
 * hs_elf_gnu_defines answers as the walk does for every name the table holds, for the
 * malloc family and for names no object defines (the scan skips dlsym on its no).
 */
#define _GNU_SOURCE
#include "check.h"
#include "reach/elfsyms.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

static int objects, hashed, names;

/* Whether the walk finds name defined among the hashed symbols. */
static int es_walk_defines(const hs_elf_dyn_t *o, const char *name)
{
    for (size_t i = o->hashed; i < o->nsyms; i++)
        if (o->sym[i].st_shndx != SHN_UNDEF && strcmp(o->str + o->sym[i].st_name, name) == 0)
            return 1;
    return 0;
}

static int es_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    static const char *const probes[] = {
        "malloc",    "free",      "calloc",    "realloc",           "_Znwm", "_ZdlPv", "mallocx",
        "je_malloc", "tc_malloc", "mi_malloc", "hs_no_such_symbol", "",
    };
    hs_elf_dyn_t o;
    (void)size;
    (void)arg;
    if (!hs_elf_dyn(info, &o))
        return 0;
    objects++;
    if (!o.gnu) {
        CHECK(hs_elf_unhashed(&o) == o.nsyms, "%s: no table, every symbol read", info->dlpi_name);
        CHECK(hs_elf_gnu_defines(&o, "malloc") == -1, "%s: no table, not known", info->dlpi_name);
        return 0;
    }
    hashed++;
    size_t end = hs_elf_unhashed(&o);
    CHECK(o.hashed <= o.nsyms && (end == o.hashed || end == o.nsyms), "%s", info->dlpi_name);
    if (info->dlpi_name[0] && strstr(info->dlpi_name, "libc.so"))
        CHECK(end == o.hashed, "libc's imports all below its table (GNU ld)");
    for (size_t i = 1; i < o.nsyms; i++) {
        const char *name = o.str + o.sym[i].st_name;
        if (o.sym[i].st_shndx == SHN_UNDEF)
            CHECK(i < end, "%s: undefined %s at %zu, past %zu", info->dlpi_name, name, i, end);
        else if (i >= o.hashed) {
            names++;
            CHECK(hs_elf_gnu_defines(&o, name) == 1, "%s: %s not found", info->dlpi_name, name);
        }
    }
    for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++)
        CHECK(hs_elf_gnu_defines(&o, probes[k]) == es_walk_defines(&o, probes[k]),
              "%s: %s: the table and the walk differ", info->dlpi_name, probes[k]);
    return 0;
}

int main(void)
{
    void *m = dlopen("libm.so.6", RTLD_NOW);
    CHECK(m != NULL, "libm: %s", dlerror());
    dl_iterate_phdr(es_object, NULL);
    CHECK(objects >= 3 && hashed >= 3, "%d objects, %d with a GNU hash table", objects, hashed);
    CHECK(names > 1000, "%d hashed names looked up", names); /* libc's alone are 2,000 */
    if (m)
        dlclose(m);
    return hs_check_done("test_elfsyms");
}
