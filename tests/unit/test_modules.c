/*
 * Unit test of module records (modules.c): a library loaded with dlopen, whose code
 * address is in a recorded stack, is found gone once dlclose removed it; the record names
 * its file and build id, and applies to stacks recorded while it was loaded only.
 */
#define _GNU_SOURCE
#include "check.h"
#include "record/modules.h"
#include "record/stacktab.h"

#include <dlfcn.h>
#include <string.h>

/* A library this test does not link, that dlclose really unloads, and one function. */
static const char *const candidates[][2] = {{"libxxhash.so.0", "XXH64"},
                                            {"libgdbm.so.6", "gdbm_open"},
                                            {"libpanel.so.6", "new_panel"},
                                            {"libsqlite3.so.0", "sqlite3_open"},
                                            {NULL, NULL}};

int main(void)
{
    CHECK(hs_stacktab_init(1024) == 0);
    void *h = NULL, *sym = NULL;
    const char *name = NULL, *fn = NULL;
    for (int i = 0; candidates[i][0] && !sym; i++) {
        if (dlopen(candidates[i][0], RTLD_NOW | RTLD_NOLOAD))
            continue;
        h = dlopen(name = candidates[i][0], RTLD_NOW | RTLD_LOCAL);
        sym = h ? dlsym(h, fn = candidates[i][1]) : NULL;
    }
    if (!sym) {
        printf("test_modules: no unloadable library found, skipped\n");
        return 0;
    }
    uintptr_t pcs[2] = {(uintptr_t)sym + 4, (uintptr_t)&main + 4};
    int32_t before = hs_stacktab_record(pcs, 2, 1, 1);
    hs_modules_note(pcs, 2, before);
    hs_modules_refresh();
    CHECK(hs_modules_unloaded(pcs[0], before) < 0, "loaded code reported unloaded");
    CHECK(dlclose(h) == 0);
    CHECK(dlopen(name, RTLD_NOW | RTLD_NOLOAD) == NULL, "%s still loaded", name);
    hs_modules_refresh();
    int g = hs_modules_unloaded(pcs[0], before);
    const hs_unloaded_t *u = hs_modules_get(g);
    CHECK(u != NULL, "the unload of %s was not noticed", name);
    if (u) {
        CHECK(strstr(u->path, name) != NULL, "path %s, want %s", u->path, name);
        CHECK(pcs[0] >= u->start && pcs[0] < u->limit);
        CHECK(u->build_id[0] != '\0', "no build id for %s", u->path);
    }
    CHECK(hs_modules_unloaded(pcs[1], before) < 0, "the main program reported unloaded");
    /* The library again, maybe at the same address: a new stack belongs to the new one. */
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL);
    void *sym2 = h ? dlsym(h, fn) : NULL;
    CHECK(sym2 != NULL);
    uintptr_t again = (uintptr_t)sym2 + 4;
    printf("%s: loaded at the %s address again\n", name, sym2 == sym ? "same" : "another");
    int32_t after = hs_stacktab_record(&again, 1, 1, 1);
    hs_modules_note(&again, 1, after);
    hs_modules_refresh();
    CHECK(after > before);
    CHECK(hs_modules_unloaded(again, after) < 0, "a stack recorded after the reload");
    return hs_check_done("test_modules");
}
