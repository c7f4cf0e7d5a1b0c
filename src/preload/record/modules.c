/*
 * Module records (see modules.h). A record is (range, link_map, path, build id, first
 * stack id); several records may share a range when a library was unloaded and another
 * loaded in its place: a stack's address belongs to the newest record whose first stack
 * id is not above the stack's. At a dump each record is checked against what
 * _dl_find_object finds at its start now. Lock: one leaf mutex; nothing is called while
 * holding it but _dl_find_object, which takes no lock.
 */
#define _GNU_SOURCE
#include "runtime/debugcheck.h"
#include "modules.h"
#include "runtime/log.h"
#include "unwind/unwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define HS_MOD_MAX 4096
#define HS_NAMES_SIZE (1u << 20)

typedef struct {
    hs_unloaded_t m;
    const struct link_map *lm;
    uint8_t gone; /* set by hs_modules_refresh */
} hs_modrec_t;

static hs_modrec_t *hs_mods;
static size_t hs_nmods;
static char *hs_mod_names;
static size_t hs_mod_names_used;
static int hs_mods_failed, hs_mods_full_log;
static pthread_mutex_t hs_mods_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *hs_gone; /* indices of the records found gone by the last refresh */
static size_t hs_ngone;

static void *modules_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static bool modules_setup(void)
{
    if (hs_mods)
        return true;
    if (hs_mods_failed)
        return false;
    hs_mods = modules_map(sizeof(hs_modrec_t) * HS_MOD_MAX);
    hs_mod_names = modules_map(HS_NAMES_SIZE);
    hs_gone = modules_map(sizeof(uint32_t) * HS_MOD_MAX);
    hs_mods_failed = !hs_mods || !hs_mod_names || !hs_gone;
    return !hs_mods_failed;
}

static const char *modules_copy_name(const char *name)
{
    size_t len = strlen(name) + 1;
    if (hs_mod_names_used + len > HS_NAMES_SIZE)
        return NULL;
    char *p = hs_mod_names + hs_mod_names_used;
    memcpy(p, name, len);
    hs_mod_names_used += len;
    return p;
}

/* The GNU build id of the object mapped at base (its ELF header and program headers are
 * mapped there when its first segment starts at file offset 0), as hex. */
static void modules_build_id(uintptr_t base, uintptr_t limit, char *hex)
{
    hex[0] = '\0';
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    if (limit - base < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > limit - base)
        return;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    uintptr_t bias = base; /* shared objects are linked at 0 */
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_NOTE || ph[i].p_vaddr + ph[i].p_memsz > limit - bias)
            continue;
        const char *p = (const char *)(bias + ph[i].p_vaddr), *end = p + ph[i].p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof(*n);
            const unsigned char *d = (const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
            if ((const char *)d + n->n_descsz > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                n->n_descsz <= 20) {
                for (unsigned k = 0; k < n->n_descsz; k++) {
                    hex[2 * k] = "0123456789abcdef"[d[k] >> 4];
                    hex[2 * k + 1] = "0123456789abcdef"[d[k] & 15];
                }
                hex[2 * n->n_descsz] = '\0';
                return;
            }
            p = (const char *)d + ((n->n_descsz + 3) & ~3u);
        }
    }
}

static bool modules_overlap(const hs_unloaded_t *m, uintptr_t lo, uintptr_t hi)
{
    return m->start < hi && lo < m->limit;
}

/* Whether the newest record for f's range is f's object itself. Lock held. */
static bool modules_known(const struct dl_find_object *f)
{
    uintptr_t lo = (uintptr_t)f->dlfo_map_start, hi = (uintptr_t)f->dlfo_map_end;
    for (size_t i = hs_nmods; i-- > 0;) {
        const hs_modrec_t *r = &hs_mods[i];
        if (!modules_overlap(&r->m, lo, hi))
            continue;
        return r->m.start == lo && r->lm == f->dlfo_link_map &&
               strcmp(r->m.path, f->dlfo_link_map->l_name) == 0;
    }
    return false;
}

/* Adds a record for f's object, first seen in stack id. Lock held. */
static void modules_add(const struct dl_find_object *f, int32_t id)
{
    hs_assert_held(HS_RANK_MODULES);
    uintptr_t lo = (uintptr_t)f->dlfo_map_start, hi = (uintptr_t)f->dlfo_map_end;
    const char *path = modules_copy_name(f->dlfo_link_map->l_name);
    if (hs_nmods == HS_MOD_MAX || !path) {
        hs_log_once(hs_mods_full_log, "too many libraries loaded: frames of libraries "
                                      "unloaded from now on may be misnamed");
        return;
    }
    bool replaces = false;
    for (size_t i = 0; i < hs_nmods; i++)
        replaces |= modules_overlap(&hs_mods[i].m, lo, hi);
    hs_modrec_t *r = &hs_mods[hs_nmods];
    memset(r, 0, sizeof(*r));
    r->m = (hs_unloaded_t){.start = lo, .limit = hi, .path = path, .seen_from = (uint32_t)id};
    r->lm = f->dlfo_link_map;
    modules_build_id(lo, hi, r->m.build_id);
    __atomic_store_n(&hs_nmods, hs_nmods + 1, __ATOMIC_RELEASE);
    if (replaces)
        hs_unwind_dwarf_invalidate(); /* the unwinder's cached rules were the old code's */
}

void hs_modules_note(const uintptr_t *pcs, size_t depth, int32_t id)
{
    uintptr_t lo = 0, hi = 0;
    if (id < 0)
        return;
    hs_lock(&hs_mods_lock, HS_RANK_MODULES);
    for (size_t k = 0; k < depth && modules_setup(); k++) {
        struct dl_find_object f;
        if ((pcs[k] >= lo && pcs[k] < hi) || _dl_find_object((void *)(pcs[k] - 1), &f) != 0)
            continue;
        lo = (uintptr_t)f.dlfo_map_start;
        hi = (uintptr_t)f.dlfo_map_end;
        /* The main program (empty name) is never unloaded. */
        if (!f.dlfo_link_map || !f.dlfo_link_map->l_name || !f.dlfo_link_map->l_name[0])
            continue;
        if (!modules_known(&f))
            modules_add(&f, id);
    }
    hs_unlock(&hs_mods_lock, HS_RANK_MODULES);
}

/* Fork handlers: a child must not inherit the lock held by a thread that was noting a
 * new stack's libraries (its own next new stack would wait for it forever). */
const void *hs_code_object(void *p, const char **name)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
    struct dl_find_object o;
    if (!p || _dl_find_object(p, &o) != 0)
        return NULL;
    if (name)
        *name = o.dlfo_link_map->l_name;
    return o.dlfo_link_map;
#else
    Dl_info i;
    if (!p || !dladdr(p, &i))
        return NULL;
    if (name)
        *name = i.dli_fname;
    return i.dli_fbase;
#endif
}

void hs_modules_lock(void)
{
    hs_lock(&hs_mods_lock, HS_RANK_MODULES);
}

void hs_modules_unlock(void)
{
    hs_unlock(&hs_mods_lock, HS_RANK_MODULES);
}

void hs_modules_refresh(void)
{
    hs_lock(&hs_mods_lock, HS_RANK_MODULES);
    hs_ngone = 0;
    for (size_t i = 0; i < hs_nmods; i++) {
        hs_modrec_t *r = &hs_mods[i];
        struct dl_find_object f;
        bool here = _dl_find_object((void *)r->m.start, &f) == 0 &&
                    (uintptr_t)f.dlfo_map_start == r->m.start && f.dlfo_link_map == r->lm &&
                    f.dlfo_link_map->l_name && strcmp(f.dlfo_link_map->l_name, r->m.path) == 0;
        r->gone = !here;
        if (r->gone)
            hs_gone[hs_ngone++] = (uint32_t)i;
    }
    hs_unlock(&hs_mods_lock, HS_RANK_MODULES);
}

/* Whether a record newer than index g also covers pc for stack id. */
static bool modules_superseded(size_t g, uintptr_t pc, int32_t id, size_t n)
{
    for (size_t i = g + 1; i < n; i++)
        if (pc >= hs_mods[i].m.start && pc < hs_mods[i].m.limit &&
            hs_mods[i].m.seen_from <= (uint32_t)id)
            return true;
    return false;
}

/* Called for every address of a dump: costs one compare when nothing was unloaded. */
int hs_modules_unloaded(uintptr_t pc, int32_t stack_id)
{
    size_t n = __atomic_load_n(&hs_nmods, __ATOMIC_ACQUIRE);
    for (size_t k = 0; k < hs_ngone && stack_id >= 0; k++) {
        size_t g = hs_gone[k];
        const hs_modrec_t *r = &hs_mods[g];
        if (pc >= r->m.start && pc < r->m.limit && r->m.seen_from <= (uint32_t)stack_id &&
            !modules_superseded(g, pc, stack_id, n))
            return (int)g;
    }
    return -1;
}

const hs_unloaded_t *hs_modules_get(int index)
{
    size_t n = __atomic_load_n(&hs_nmods, __ATOMIC_ACQUIRE);
    return index >= 0 && (size_t)index < n ? &hs_mods[index].m : NULL;
}
