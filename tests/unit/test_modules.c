/*
 * Unit test of unloaded-module tracking (modules.c): a library loaded with dlopen, whose
 * code address is in a recorded stack, is remembered once dlclose removed it; the record
 * names its file and applies to stacks interned before the unload only.
 */
#define _GNU_SOURCE
#include "check.h"
#include "modules.h"
#include "stacktab.h"

#include <dlfcn.h>
#include <string.h>

/* A library this test does not link, that dlclose really unloads. */
static const char *const candidates[] = {"libxxhash.so.0", "libgdbm.so.6", "libpanel.so.6",
                                         "libsqlite3.so.0", NULL};

int main(void)
{
    CHECK(hs_stacktab_init(1024) == 0);
    hs_modules_check();
    void *h = NULL;
    const char *name = NULL;
    for (int i = 0; candidates[i] && !h; i++)
        if (!dlopen(candidates[i], RTLD_NOW | RTLD_NOLOAD))
            h = dlopen(name = candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("test_modules: no unloadable library found, skipped\n");
        return 0;
    }
    Dl_info info;
    void *sym = NULL;
    const char *fns[] = {"XXH64", "gdbm_open", "new_panel", "sqlite3_open", NULL};
    for (int i = 0; fns[i] && !sym; i++)
        sym = dlsym(h, fns[i]);
    CHECK(sym != NULL, "no known function in %s", name);
    CHECK(dladdr(sym, &info) && info.dli_fname);
    uintptr_t pc = (uintptr_t)sym + 4;
    hs_modules_check();
    int32_t before = hs_stacktab_record(&pc, 1, 1, 1);
    CHECK(hs_modules_unloaded(pc, before) == NULL, "loaded code reported unloaded");
    CHECK(dlclose(h) == 0);
    CHECK(dlopen(name, RTLD_NOW | RTLD_NOLOAD) == NULL, "%s still loaded", name);
    hs_modules_check();
    const hs_unloaded_t *g = hs_modules_unloaded(pc, before);
    CHECK(g != NULL, "the unload of %s was not noticed", name);
    if (g) {
        CHECK(strstr(g->path, name) != NULL, "path %s, want %s", g->path, name);
        CHECK(pc >= g->start && pc < g->limit);
        CHECK(g->build_id[0] != '\0', "no build id for %s", g->path);
    }
    uintptr_t other = pc + 8;
    int32_t after = hs_stacktab_record(&other, 1, 1, 1);
    CHECK(after > before);
    CHECK(hs_modules_unloaded(other, after) == NULL, "a stack recorded after the unload");
    return hs_check_done("test_modules");
}
