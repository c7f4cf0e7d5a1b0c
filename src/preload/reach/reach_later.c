/*
 * Objects loaded after start (dlopen), and the fork hook of the look at them.
 * A library loaded later may bring a Rust #[global_allocator] of its own (a Rust cdylib,
 * as a Python extension built with PyO3): its entry points are local, bound inside it.
 * hs_reach_recheck, on the sampled path, sees that objects were added (dl_iterate_phdr's
 * dlpi_adds), reads the .symtab of each new one and hooks its allocator as one more
 * instance (hooks_rust.c). Only when the loader is between loads (_r_debug.r_state), never
 * inside dl_iterate_phdr's callback (its lock comes after dlopen's in glibc's order), and
 * never loading the decoder there (a dlopen inside someone's malloc): hs_reach_later_start
 * loads it at start when an object imports dlopen.
 * Each new object's .symtab is searched here for Rust's entry points and an allocator's
 * prefixed API (reach_obj_sym); reach.c's hooking does the rest, as at start. The look
 * is registered with the sampled path (hs_recorder_on_sample) once it can find
 * something, and its busy flag with the fork handlers (record/fork.c).
 */
#define _GNU_SOURCE
#include "reach.h"
#include "reach_int.h"
#include "elfsyms.h"
#include "gotslot.h"
#include "hooks.h"
#include "patch.h"
#include "reach_via.h"
#include "record/fork.h"
#include "record/recorder.h"
#include "runtime/core.h"
#include "runtime/log.h"
#include "runtime/stopworld.h"

#include "base/runtime_libs.h"

#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define REACH_SEEN_MAX 1024
#define REACH_NEW_MAX 8

static uintptr_t reach_seen[REACH_SEEN_MAX]; /* objects looked at, by load address */
static size_t reach_nseen;
static unsigned long long reach_adds; /* dlpi_adds when last looked */
static int reach_busy;                /* one thread looks at a time */
static bool reach_later_on;           /* hooks enabled and the decoder loaded */
static const void *reach_self_base;
/* The last object of the loader's list at the last look: while its l_next stays NULL,
 * nothing was loaded since (read without the loader's lock, which a thread of the program
 * may hold; a fork while heapsift held it would leave the child's for ever held). If it
 * was unloaded, its link_map is freed memory: what is read there only starts a look, and
 * every REACH_EVERY-th call looks anyway. */
static struct link_map *reach_tail;
static unsigned reach_calls;
#define REACH_EVERY 4096

typedef struct {
    size_t n;
    uintptr_t base[REACH_NEW_MAX];
    uintptr_t lo[REACH_NEW_MAX], hi[REACH_NEW_MAX]; /* its loaded segments' extent */
    char name[REACH_NEW_MAX][256];
} reach_new_t;

static bool reach_seen_has(uintptr_t base)
{
    for (size_t i = 0; i < reach_nseen; i++)
        if (reach_seen[i] == base)
            return true;
    return false;
}

/* dl_iterate_phdr's callback, under the loader's list lock: its count of objects added,
 * and the last object of its list now (stable while the lock is held). */
static int reach_adds_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    bool has = size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs);
    *(unsigned long long *)arg = has ? info->dlpi_adds : 0;
    struct link_map *m = _r_debug.r_map;
    for (int n = 0; m && m->l_next && n < 100000; n++)
        m = m->l_next;
    __atomic_store_n(&reach_tail, m, __ATOMIC_RELAXED);
    return 1;
}

/* dl_iterate_phdr's callback: the objects not looked at yet (their names copied: nothing
 * else is done under the loader's lock). */
static int reach_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    reach_new_t *nw = arg;
    (void)size;
    if (reach_seen_has(info->dlpi_addr) || nw->n == REACH_NEW_MAX)
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        lo = a < lo ? a : lo;
        hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
    }
    nw->base[nw->n] = info->dlpi_addr;
    nw->lo[nw->n] = hi ? lo : 0;
    nw->hi[nw->n] = hi;
    snprintf(nw->name[nw->n++], sizeof(nw->name[0]), "%s", info->dlpi_name ? info->dlpi_name : "");
    return 0;
}

void hs_reach_later_start(const void *self_base, bool later)
{
    reach_self_base = self_base;
    reach_new_t nw;
    nw.n = 0;
    do { /* every object loaded now is the start's business */
        nw.n = 0;
        dl_iterate_phdr(reach_collect, &nw);
        for (size_t i = 0; i < nw.n && reach_nseen < REACH_SEEN_MAX; i++)
            reach_seen[reach_nseen++] = nw.base[i];
    } while (nw.n == REACH_NEW_MAX && reach_nseen < REACH_SEEN_MAX);
    dl_iterate_phdr(reach_adds_of, &reach_adds);
    /* import slots: libc itself loads objects (gconv modules, NSS) */
    if ((later && hs_patch_decoder(true)) || hs_got_any()) {
        __atomic_store_n(&reach_later_on, true, __ATOMIC_RELEASE);
        hs_recorder_on_sample(hs_reach_recheck); /* each sample looks (recorder.c) */
    }
}

/* Appends text to the line: its bytes after the terminator first, then its first byte
 * over the terminator, so a reader sees the old line or the new one. */
static void reach_append(const char *text)
{
    size_t n = strlen(hs_reach_line), k = strlen(text);
    if (k == 0 || n + k >= sizeof(hs_reach_line))
        return;
    memcpy(hs_reach_line + n + 1, text + 1, k);
    __atomic_store_n(&hs_reach_line[n], text[0], __ATOMIC_RELEASE);
}

typedef struct {
    reach_t *r;
    reach_rust_t rust;
    uintptr_t base;
    const char *owner; /* the object's file name */
} reach_obj_t;

/* One function of an object loaded later: Rust's local entry points, and the exported
 * functions of an allocator's prefixed API (a static jemalloc's je_*, kept for
 * hs_reach_api_all). */
static void reach_obj_sym(void *arg, const char *name, uintptr_t value, size_t size, bool local)
{
    reach_obj_t *o = arg;
    if (local)
        hs_reach_rust_sym(&o->rust, name, o->base + value, size);
    else
        hs_reach_api_note(o->r, name, o->base + value, size, (const void *)o->base, o->owner);
}

/* The other threads are stopped while a library loaded later is patched: it may be in use
 * already, and a thread stopped between two instructions of the bytes a patch replaces
 * resumes at the same instruction in the trampoline (hs_patch_fixup_pc). Threads that
 * block the signal or do not answer within REACH_STOP_MS run on (stopworld.c). */
#define REACH_STOP_MS 200

static void reach_later_release(hs_sw_t *w)
{
#if defined(__x86_64__)
    for (size_t i = 0; i < w->n; i++) {
        hs_sw_slot_t *s = &w->slots[i];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != HS_SW_STOPPED)
            continue;
        uintptr_t to = hs_patch_fixup_pc((uintptr_t)s->regs[REG_RIP]);
        if (to)
            __atomic_store_n(&s->pc_to, to, __ATOMIC_RELEASE);
    }
#endif
    hs_sw_free(w);
}

/* One object loaded after start: its import slots of the members hooked through them
 * pointed at the hooks, and said. */
static void reach_later_got(uintptr_t base, const char *path)
{
    char line[300];
    int n = hs_got_object_at(base);
    if (n <= 0)
        return;
    snprintf(line, sizeof(line), "%sloaded later: %d import slots of %s pointed at heapsift",
             hs_reach_line[0] ? "; " : "reach: ", n, hs_reach_base(path));
    reach_append(line);
    if (hs_reach_loud())
        hs_log("reach: %s", strstr(line, "loaded later: "));
}

/* The line's part for what was not hooked: "calls bypass heapsift: ..." (or, with no
 * decoder to read their code, "calls may bypass heapsift: ...; whether ... is not known"). */
static void reach_later_bypass(const reach_t *r, const char *sep, char *out, size_t cap)
{
    out[0] = '\0';
    if (!r->bypass.n)
        return;
    if (hs_reach_via_blind())
        snprintf(out, cap,
                 "%scalls may bypass heapsift: %s; whether their code calls what reaches heapsift "
                 "is not known (no decoder here: " HS_DECODER_SONAME ", x86-64)",
                 sep, r->bypass.buf);
    else
        snprintf(out, cap, "%scalls bypass heapsift: %s", sep, r->bypass.buf);
}

/* One object loaded after start, [lo, hi): its Rust allocator and its allocator's API
 * hooked, and said. What the hooking asks of the loader is asked first (hs_reach_plan):
 * not with the other threads stopped, one of which may hold the loader's lock (a dlopen
 * running its library's constructors), which dladdr then waits for for ever. */
static void reach_later_object(uintptr_t base, uintptr_t lo, uintptr_t hi, const char *path)
{
    char hooked[REACH_MAX] = "", bypass[REACH_MAX] = "", fam[8] = "", line[REACH_MAX];
    char via[REACH_MAX] = "", through[REACH_MAX] = "", vtext[REACH_MAX], btext[REACH_MAX];
    reach_t r;
    memset(&r, 0, sizeof(r));
    r.hooked.buf = hooked;
    r.got.buf = fam;
    r.bypass.buf = bypass;
    r.fam.buf = fam;
    r.via.buf = via;
    r.via_through.buf = through;
    reach_later_got(base, path);
    size_t size;
    void *p = path[0] ? hs_elf_map_file(path, &size) : MAP_FAILED;
    if (p == MAP_FAILED)
        return;
    reach_obj_t o;
    memset(&o, 0, sizeof(o));
    o.r = &r;
    o.base = base;
    o.owner = hs_reach_base(path);
    hs_elf_symtab_each(p, size, reach_obj_sym, &o);
    munmap(p, size);
    bool any = r.napi > 0 || ((o.rust.fn[HS_RUST_ALLOC] || o.rust.fn[HS_RUST_ALLOC_ZEROED]) &&
                              !hs_reach_rust_default(&o.rust));
    if (any)
        hs_reach_plan(&r, &o.rust, lo, hi);
    hs_sw_t w;
    bool stopped = any && hs_hooks_enabled() && hs_sw_prepare(&w) == 0;
    if (stopped)
        hs_sw_stop(&w, REACH_STOP_MS);
    hs_reach_rust_hook(&r, &o.rust, hs_reach_base(path));
    hs_reach_api_all(&r);
    if (stopped)
        reach_later_release(&w);
    if (!r.hooked.n && !r.bypass.n && !r.via.n)
        return;
    hs_reach_via_text(&r, r.hooked.n ? "; " : "", vtext, sizeof(vtext));
    reach_later_bypass(&r, r.hooked.n || r.via.n ? "; " : "", btext, sizeof(btext));
    int k = snprintf(line, sizeof(line), "%sloaded later: %s%s%s%s",
                     hs_reach_line[0] ? "; " : "reach: ", r.hooked.n ? "hooked in place: " : "",
                     hooked, vtext, btext);
    reach_append(line);
    if (k > 0 && hs_reach_loud())
        hs_log("reach: %s", strstr(line, "loaded later: "));
}

void hs_reach_recheck(void)
{
    unsigned long long adds = 0;
    if (!__atomic_load_n(&reach_later_on, __ATOMIC_ACQUIRE) || _r_debug.r_state != RT_CONSISTENT)
        return;
    struct link_map *tail = __atomic_load_n(&reach_tail, __ATOMIC_RELAXED);
    if (tail && !__atomic_load_n(&tail->l_next, __ATOMIC_RELAXED) &&
        __atomic_add_fetch(&reach_calls, 1, __ATOMIC_RELAXED) % REACH_EVERY != 0)
        return; /* nothing loaded since the last look */
    if (__atomic_exchange_n(&reach_busy, 1, __ATOMIC_ACQUIRE))
        return;
    dl_iterate_phdr(reach_adds_of, &adds);
    if (adds != reach_adds) {
        hs_tls_t *t = &hs_tls;
        reach_new_t nw;
        nw.n = 0;
        hs_guard_enter(t); /* dladdr in the patcher may allocate */
        dl_iterate_phdr(reach_collect, &nw);
        for (size_t i = 0; i < nw.n && reach_nseen < REACH_SEEN_MAX; i++) {
            reach_seen[reach_nseen++] = nw.base[i];
            if ((const void *)nw.base[i] != reach_self_base)
                reach_later_object(nw.base[i], nw.lo[i], nw.hi[i], nw.name[i]);
        }
        if (nw.n < REACH_NEW_MAX) /* else the rest next time */
            reach_adds = adds;
        hs_guard_exit(t);
    }
    __atomic_store_n(&reach_busy, 0, __ATOMIC_RELEASE);
}

/* Fork: no thread of heapsift's may be inside dl_iterate_phdr when the process forks
 * (glibc does not reset that lock in the child), so the forking thread waits for a look
 * in progress, and no other starts until the fork is done. */
void hs_reach_fork_prepare(void)
{
    while (__atomic_exchange_n(&reach_busy, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

void hs_reach_fork_release(void)
{
    __atomic_store_n(&reach_busy, 0, __ATOMIC_RELEASE);
}

/* Before anything of reach's can run: its fork hook, outermost (the patcher's lock,
 * taken by a look, ranks first). */
HS_CTOR(HS_CTOR_REACH) static void reach_ctor(void)
{
    hs_fork_register(HS_FORK_OUTER, hs_reach_fork_prepare, hs_reach_fork_release,
                     hs_reach_fork_release);
}

int hs_reach_dl_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    hs_reach_fork_prepare();
    int rc = dl_iterate_phdr(cb, arg);
    hs_reach_fork_release();
    return rc;
}
