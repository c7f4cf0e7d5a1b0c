/*
 * Unloaded-module tracking (see modules.h). Keeps a snapshot of the executable segments
 * of every loaded object (names copied, since the loader frees its own on dlclose) and,
 * when the loader's removal counter moves, records the segments that disappeared with
 * the stack table's current count as watermark. Everything lives in mmap'd arrays sized
 * once; if they fill up, tracking stops (logged once) and frames of later unloads are
 * resolved as before. Lock: a leaf mutex taken with trylock only, so a thread inside the
 * loader can never wait on it.
 */
#define _GNU_SOURCE
#include "modules.h"
#include "core.h"
#include "stacktab.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define HS_MOD_MAX 2048      /* executable segments in one snapshot */
#define HS_UNLOADED_MAX 1024 /* unloaded segments remembered */
#define HS_NAMES_SIZE (1u << 20)

typedef struct {
    uintptr_t start, limit;
    uint64_t offset;
    const char *path;
    char build_id[41];
} hs_mod_t;

typedef struct {
    hs_mod_t *cur, *next; /* snapshot, and the one being built */
    size_t ncur, nnext;
    hs_unloaded_t *gone; /* unloaded segments */
    size_t ngone;
    char *names; /* copied paths, append-only */
    size_t names_used;
    unsigned long long adds, subs;
    int ready, full;
} hs_modstate_t;

static hs_modstate_t hs_mods;
static pthread_mutex_t hs_mods_lock = PTHREAD_MUTEX_INITIALIZER;
static int hs_mods_log;

static void *modules_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int modules_setup(void)
{
    hs_mods.cur = modules_map(sizeof(hs_mod_t) * HS_MOD_MAX);
    hs_mods.next = modules_map(sizeof(hs_mod_t) * HS_MOD_MAX);
    hs_mods.gone = modules_map(sizeof(hs_unloaded_t) * HS_UNLOADED_MAX);
    hs_mods.names = modules_map(HS_NAMES_SIZE);
    return hs_mods.cur && hs_mods.next && hs_mods.gone && hs_mods.names ? 0 : -1;
}

/* A copy of name in the arena (the same copy for the same name), or NULL when full. */
static const char *modules_name(const char *name)
{
    for (size_t i = 0; i < hs_mods.ncur; i++)
        if (strcmp(hs_mods.cur[i].path, name) == 0)
            return hs_mods.cur[i].path;
    size_t len = strlen(name) + 1;
    if (hs_mods.names_used + len > HS_NAMES_SIZE)
        return NULL;
    char *p = hs_mods.names + hs_mods.names_used;
    memcpy(p, name, len);
    hs_mods.names_used += len;
    return p;
}

/* The GNU build id from the loaded image's PT_NOTE segments, as hex. */
static void modules_build_id(const struct dl_phdr_info *info, char *hex)
{
    hex[0] = '\0';
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof(*n);
            const unsigned char *desc = (const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                n->n_descsz <= 20 && (const char *)desc + n->n_descsz <= end) {
                for (unsigned k = 0; k < n->n_descsz; k++) {
                    hex[2 * k] = "0123456789abcdef"[desc[k] >> 4];
                    hex[2 * k + 1] = "0123456789abcdef"[desc[k] & 15];
                }
                hex[2 * n->n_descsz] = '\0';
                return;
            }
            p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
        }
    }
}

static int modules_collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0; /* the main program and the vdso are never unloaded */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        const char *path = modules_name(info->dlpi_name);
        if (hs_mods.nnext == HS_MOD_MAX || !path)
            return hs_mods.full = 1;
        hs_mod_t *m = &hs_mods.next[hs_mods.nnext++];
        m->start = info->dlpi_addr + ph->p_vaddr;
        m->limit = m->start + ph->p_memsz;
        m->offset = ph->p_offset;
        m->path = path;
        modules_build_id(info, m->build_id);
    }
    return 0;
}

static int modules_counters(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *c = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
        return 1;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1; /* the counters are the same for every object: stop at the first */
}

static bool modules_present(const hs_mod_t *m)
{
    for (size_t i = 0; i < hs_mods.nnext; i++)
        if (hs_mods.next[i].start == m->start && hs_mods.next[i].path == m->path)
            return true;
    return false;
}

/* Re-reads the loaded set; what was in the old snapshot and is not in the new one was
 * unloaded, and every stack interned so far may hold its addresses. */
static void modules_refresh(void)
{
    hs_mods.nnext = 0;
    dl_iterate_phdr(modules_collect, NULL);
    uint32_t watermark = hs_stacktab_count();
    for (size_t i = 0; i < hs_mods.ncur && !hs_mods.full; i++) {
        const hs_mod_t *m = &hs_mods.cur[i];
        if (modules_present(m))
            continue;
        if (hs_mods.ngone == HS_UNLOADED_MAX) {
            hs_mods.full = 1;
            break;
        }
        hs_unloaded_t *g = &hs_mods.gone[hs_mods.ngone];
        *g = (hs_unloaded_t){m->start, m->limit, m->offset, m->path, "", watermark};
        memcpy(g->build_id, m->build_id, sizeof(g->build_id));
        __atomic_store_n(&hs_mods.ngone, hs_mods.ngone + 1, __ATOMIC_RELEASE);
    }
    hs_mod_t *t = hs_mods.cur;
    hs_mods.cur = hs_mods.next;
    hs_mods.next = t;
    hs_mods.ncur = hs_mods.nnext;
}

void hs_modules_check(void)
{
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(modules_counters, c);
    if (__atomic_load_n(&hs_mods.ready, __ATOMIC_ACQUIRE) && c[0] == hs_mods.adds &&
        c[1] == hs_mods.subs)
        return;
    if (pthread_mutex_trylock(&hs_mods_lock) != 0)
        return;
    if (!hs_mods.ready && modules_setup() != 0)
        hs_mods.full = 1;
    if (!hs_mods.full)
        modules_refresh();
    if (hs_mods.full)
        hs_log_once(hs_mods_log, "too many modules loaded or unloaded: frames of libraries "
                                 "unloaded from now on may be misnamed");
    hs_mods.adds = c[0];
    hs_mods.subs = c[1];
    __atomic_store_n(&hs_mods.ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&hs_mods_lock);
}

const hs_unloaded_t *hs_modules_unloaded(uintptr_t pc, int32_t stack_id)
{
    size_t n = __atomic_load_n(&hs_mods.ngone, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < n; i++) {
        const hs_unloaded_t *g = &hs_mods.gone[i];
        if (stack_id >= 0 && (uint32_t)stack_id < g->watermark && pc >= g->start && pc < g->limit)
            return g;
    }
    return NULL;
}
