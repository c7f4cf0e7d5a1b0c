/*
 * elfaddr.c against glibc's own answers (dladdr1): for every function a loaded object
 * (this test, libc, libm, ld.so, the vDSO) exports, for addresses inside functions and
 * outside every object, and for main, hs_elf_obj_of gives dladdr's base and file name
 * (argv[0] for the executable) and says whether the object is the executable as the link
 * map does; hs_elf_sym_at gives the very symbol entry dladdr1 gives when its dli_saddr is
 * the address, else none, asked again at once and after the next address (its answers
 * kept: elfaddr.c's memo), and after libm is unloaded and loaded again; and
 * hs_elf_sym_named finds each exported name at its address, not at another.
 */
#define _GNU_SOURCE
#include "check.h"
#include "reach/elfaddr.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static int objects, funcs, named, inside;

/* One address compared with dladdr1: object, and the symbol starting there. */
static void ea_compare(const char *obj, const void *a)
{
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    struct link_map *lm = NULL;
    hs_elf_obj_t o;
    bool ok = hs_elf_obj_of(a, &o);
    int dl = dladdr1(a, &di, (void **)&sym, RTLD_DL_SYMENT);
    CHECK(ok == (dl != 0), "%s: %p found %d, dladdr %d", obj, a, ok, dl);
    if (!ok || !dl)
        return;
    CHECK(o.base == di.dli_fbase, "%s: %p base %p, dladdr's %p", obj, a, o.base, di.dli_fbase);
    CHECK(strcmp(o.name, di.dli_fname) == 0, "%s: %p name %s, dladdr's %s", obj, a, o.name,
          di.dli_fname);
    CHECK(dladdr1(a, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm, "%s: link map", obj);
    CHECK(lm && o.exe == (lm->l_name[0] == '\0'), "%s: %p exe %d", obj, a, o.exe);
    const ElfW(Sym) *at = hs_elf_sym_at(&o, a);
    const ElfW(Sym) *want = sym && di.dli_saddr == a ? sym : NULL;
    CHECK(at == want, "%s: %p symbol %p, dladdr1's %p (%s)", obj, a, (const void *)at,
          (const void *)want, di.dli_sname ? di.dli_sname : "-");
    CHECK(hs_elf_sym_at(&o, a) == at, "%s: %p asked again, another answer", obj, a);
    static hs_elf_obj_t prev_o; /* the address before: asked again after this one */
    static const void *prev_a;
    static const ElfW(Sym) * prev_at;
    if (prev_a)
        CHECK(hs_elf_sym_at(&prev_o, prev_a) == prev_at, "%p asked after %p, another answer",
              prev_a, a);
    prev_o = o, prev_a = a, prev_at = at;
}

static int ea_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    hs_elf_dyn_t d;
    (void)size;
    (void)arg;
    if (!hs_elf_dyn(info, &d))
        return 0;
    objects++;
    const char *obj = info->dlpi_name[0] ? info->dlpi_name : "the executable";
    for (size_t i = 1; i < d.nsyms; i++) {
        const ElfW(Sym) *s = &d.sym[i];
        if (s->st_shndx == SHN_UNDEF || s->st_shndx == SHN_ABS || s->st_value == 0 ||
            ELF64_ST_TYPE(s->st_info) != STT_FUNC)
            continue;
        const char *name = d.str + s->st_name;
        const void *a = (const void *)(info->dlpi_addr + s->st_value);
        funcs++;
        ea_compare(obj, a);
        if (s->st_size > 1) { /* inside: no symbol starts there, as a rule */
            ea_compare(obj, (const char *)a + 1);
            inside++;
        }
        hs_elf_obj_t o;
        if (!d.gnu || !hs_elf_obj_of(a, &o))
            continue;
        const ElfW(Sym) *n = hs_elf_sym_named(&o, name, a);
        CHECK(n && strcmp(o.dyn.str + n->st_name, name) == 0 && n->st_value == s->st_value,
              "%s: %s not found by name at %p", obj, name, a);
        CHECK(hs_elf_sym_named(&o, name, (const char *)a + 1) == NULL,
              "%s: %s found off its address", obj, name);
        named++;
    }
    return 0;
}

int main(void)
{
    void *m = dlopen("libm.so.6", RTLD_NOW);
    CHECK(m != NULL, "libm: %s", dlerror());
    dl_iterate_phdr(ea_object, NULL);
    hs_elf_obj_t o;
    CHECK(!hs_elf_obj_of((const void *)16, &o), "address 16 in an object");
    CHECK(hs_elf_base_of((const void *)16) == NULL, "address 16 has a base");
    CHECK(hs_elf_obj_of((const void *)&main, &o) && o.exe, "main not in the executable");
    ea_compare("the executable", (const void *)&main); /* dladdr names it by argv[0] */
    CHECK(strcmp(o.name, program_invocation_name) == 0, "the executable named %s", o.name);
    CHECK(objects >= 4 && funcs > 1000 && named > 1000 && inside > 1000,
          "%d objects, %d functions, %d by name, %d inside", objects, funcs, named, inside);
    if (m) { /* unloaded and loaded again: the kept answers must not outlive it */
        void *fn = dlsym(m, "frexp");
        CHECK(fn && hs_elf_obj_of(fn, &o) && o.gen, "libm's frexp: not found");
        ea_compare("libm.so.6", fn);
        uint64_t gen = o.gen;
        dlclose(m);
        /* (a sanitizer's runtime needs libm: then it stays, and so does the count) */
        bool gone = dlopen("libm.so.6", RTLD_NOW | RTLD_NOLOAD) == NULL;
        m = dlopen("libm.so.6", RTLD_NOW);
        fn = m ? dlsym(m, "frexp") : NULL;
        CHECK(fn && hs_elf_obj_of(fn, &o) && (o.gen > gen || !gone), "libm again: no new count");
        if (!gone) {
            printf("note: libm stayed loaded after dlclose: its reload was not tried\n");
            dlclose(m); /* the RTLD_NOLOAD reference */
        }
        if (fn)
            ea_compare("libm.so.6 again", fn);
        if (m)
            dlclose(m);
    }
    return hs_check_done("test_elfaddr");
}
