/*
 * Hooks: heapsift's entry points installed in place, over allocator functions that bind
 * ahead of libheapsift.so, so that no symbol interposition can reach them (Chromium's own
 * malloc, a static tcmalloc or jemalloc, a Rust #[global_allocator]). This file owns
 * which functions are hooked, with which hook, and what becomes of their originals.
 *
 * The malloc family and operator new/delete: the hook is the very function interposition
 * uses (interpose.c, through its hidden aliases hs_own_entries), and the trampoline that
 * patch.c returns takes the place of the next allocator in hs_real: so the sampler, the
 * unwinder and the tables never know which way a call came. For malloc, free and the
 * sized deletes the trampoline goes into hs_real as it is: the hooked pair costs
 * interposition's fast path plus the trampoline's jumps. The other originals are called
 * inside the reentrancy guard (hooks_guarded_*): an allocator's calloc or operator new
 * may call its own malloc, which is hooked too and must not count the block again.
 * Nothing of an object is hooked unless its free is (samples would stay live for ever);
 * its operator new/delete then free through hs_real.free, and the aligned forms need its
 * memalign hooked too.
 *
 * Where patch.c refuses an entry point's prologue (or HEAPSIFT_HOOKS=got), the import
 * slots that lead to it are pointed at the same hook instead (gotslot.c), and its
 * original is the entry point itself.
 *
 * Rust's entry points have hooks of their own, in hooks_rust.c; an allocator's own API
 * (mallocx, je_*, _rjem_*, tc_*, mi_*) in hooks_api.c, which asks here which family
 * members are hooked and where the family's free leads.
 *
 * HEAPSIFT_HOOKS=off installs nothing (reach.c still says what bypasses heapsift).
 */
#define _GNU_SOURCE
#include "hooks.h"
#include "elfaddr.h"
#include "runtime/core.h"
#include "gotslot.h"
#include "hooks_near.h"
#include "record/livetab.h"
#include "runtime/options.h"
#include "patch.h"
#include "record/recorder.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* interpose.c: our own definition of each name (hidden aliases). Weak: the unit tests
 * link the recorder without interpose.c, and then nothing is hooked. */
extern const hs_own_entry_t hs_own_entries[] __attribute__((weak, visibility("hidden")));

enum { NEED_NONE, NEED_FREE, NEED_MEMALIGN };

typedef struct {
    const char *name;
    size_t slot;   /* offset in hs_real + 1; 0 = none (ours calls another slot) */
    void *guarded; /* what goes into the slot instead of the bare trampoline */
    int need;      /* the same object's free (or memalign) must be hooked */
} hooks_def_t;

static void *hooks_orig[32]; /* the trampolines, by index in hooks_defs */
static void *hooks_addr[32]; /* the entry points hooked, by index in hooks_defs */

#define SLOT(f) (offsetof(hs_real_t, f) + 1)
/* A wrapper that calls original i inside the guard. */
#define HOOKS_GUARDED(i, ret, name, params, args)                                                  \
    static ret hooks_guarded_##name params                                                         \
    {                                                                                              \
        hs_tls_t *t = &hs_tls;                                                                     \
        hs_guard_enter(t);                                                                         \
        ret r = ((ret(*) params)hooks_orig[i])args;                                                \
        hs_guard_exit(t);                                                                          \
        return r;                                                                                  \
    }
HOOKS_GUARDED(2, void *, calloc, (size_t n, size_t m), (n, m))
HOOKS_GUARDED(3, void *, realloc, (void *p, size_t n), (p, n))
HOOKS_GUARDED(4, int, posix_memalign, (void **o, size_t a, size_t n), (o, a, n))
HOOKS_GUARDED(5, void *, aligned_alloc, (size_t a, size_t n), (a, n))
HOOKS_GUARDED(6, void *, memalign, (size_t a, size_t n), (a, n))
HOOKS_GUARDED(7, void *, valloc, (size_t n), (n))
HOOKS_GUARDED(8, void *, pvalloc, (size_t n), (n))
HOOKS_GUARDED(9, void *, new_plain, (size_t n), (n))
HOOKS_GUARDED(10, void *, new_array, (size_t n), (n))

/* The order matters: free first (an allocator whose frees heapsift cannot see would
 * leave every sample live: nothing of its object is hooked then), memalign before the
 * aligned news; the indexes of the guarded wrappers above are these rows'. */
/* What operator new's slot holds once hooked: the judge (x86-64, below), or the guarded
 * call. */
#if defined(__x86_64__)
void hs_thunk_judge_new_plain(void) HS_HIDDEN;
void hs_thunk_judge_new_array(void) HS_HIDDEN;
void hs_thunk_judge_delete(void) HS_HIDDEN;
void hs_thunk_judge_delete_array(void) HS_HIDDEN;
#define HOOKS_NEW_PLAIN_SLOT ((void *)hs_thunk_judge_new_plain)
#define HOOKS_NEW_ARRAY_SLOT ((void *)hs_thunk_judge_new_array)
#define HOOKS_DELETE_SLOT ((void *)hs_thunk_judge_delete)
#define HOOKS_DELETE_ARRAY_SLOT ((void *)hs_thunk_judge_delete_array)
#else
#define HOOKS_NEW_PLAIN_SLOT ((void *)hooks_guarded_new_plain)
#define HOOKS_NEW_ARRAY_SLOT ((void *)hooks_guarded_new_array)
#define HOOKS_DELETE_SLOT NULL
#define HOOKS_DELETE_ARRAY_SLOT NULL
#endif

static const hooks_def_t hooks_defs[] = {
    {"free", SLOT(free), NULL, NEED_NONE},
    {"malloc", SLOT(malloc), NULL, NEED_FREE},
    {"calloc", SLOT(calloc), (void *)hooks_guarded_calloc, NEED_FREE},
    {"realloc", SLOT(realloc), (void *)hooks_guarded_realloc, NEED_FREE},
    {"posix_memalign", SLOT(posix_memalign), (void *)hooks_guarded_posix_memalign, NEED_FREE},
    {"aligned_alloc", SLOT(aligned_alloc), (void *)hooks_guarded_aligned_alloc, NEED_FREE},
    {"memalign", SLOT(memalign), (void *)hooks_guarded_memalign, NEED_FREE},
    {"valloc", SLOT(valloc), (void *)hooks_guarded_valloc, NEED_FREE},
    {"pvalloc", SLOT(pvalloc), (void *)hooks_guarded_pvalloc, NEED_FREE},
    {"_Znwm", SLOT(new_plain), HOOKS_NEW_PLAIN_SLOT, NEED_FREE},
    {"_Znam", SLOT(new_array), HOOKS_NEW_ARRAY_SLOT, NEED_FREE},
    {"_ZdlPv", 0, NULL, NEED_FREE},
    {"_ZdaPv", 0, NULL, NEED_FREE},
    {"_ZdlPvm", SLOT(sized_delete), HOOKS_DELETE_SLOT, NEED_FREE},
    {"_ZdaPvm", SLOT(sized_delete_array), HOOKS_DELETE_ARRAY_SLOT, NEED_FREE},
    {"_ZnwmRKSt9nothrow_t", 0, NULL, NEED_FREE},
    {"_ZnamRKSt9nothrow_t", 0, NULL, NEED_FREE},
    {"_ZdlPvRKSt9nothrow_t", 0, NULL, NEED_FREE},
    {"_ZdaPvRKSt9nothrow_t", 0, NULL, NEED_FREE},
    {"_ZnwmSt11align_val_t", 0, NULL, NEED_MEMALIGN},
    {"_ZnamSt11align_val_t", 0, NULL, NEED_MEMALIGN},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t", 0, NULL, NEED_MEMALIGN},
    {"_ZnamSt11align_val_tRKSt9nothrow_t", 0, NULL, NEED_MEMALIGN},
    {"_ZdlPvSt11align_val_t", 0, NULL, NEED_FREE},
    {"_ZdaPvSt11align_val_t", 0, NULL, NEED_FREE},
    {"_ZdlPvmSt11align_val_t", 0, NULL, NEED_FREE},
    {"_ZdaPvmSt11align_val_t", 0, NULL, NEED_FREE},
    {"_ZdlPvSt11align_val_tRKSt9nothrow_t", 0, NULL, NEED_FREE},
    {"_ZdaPvSt11align_val_tRKSt9nothrow_t", 0, NULL, NEED_FREE},
};
#define HOOKS_N (sizeof(hooks_defs) / sizeof(hooks_defs[0]))
_Static_assert(HOOKS_N <= sizeof(hooks_orig) / sizeof(hooks_orig[0]), "hooks_orig too small");

static const void *hooks_free_base, *hooks_memalign_base; /* objects whose ones are hooked */

size_t hs_hooks_family_count(void)
{
    return HOOKS_N;
}

const char *hs_hooks_family_name(size_t i)
{
    return i < HOOKS_N ? hooks_defs[i].name : NULL;
}

bool hs_hooks_enabled(void)
{
    return hs_own_entries && !(hs_opt.hooks && strcmp(hs_opt.hooks, "off") == 0);
}

/* ---- malloc and free's fast paths in assembly --------------------------------------
 * Through the thunk, a hooked malloc+free pair cost 67 instructions more than the
 * allocator alone, against interposition's 17 (bench/reach.sh, 2026-11-27): the thunks
 * were 42 of them. These two do interposition's work with no register but rax (malloc,
 * whose original writes it anyway) or none (free, which saves the three it uses), and
 * jump to the original, or to the sampled path through a thunk. The layouts they read are
 * pinned by the asserts below. Where malloc and free are patched near their entry (the
 * usual case), hooks_near.c's copies of these two run instead, written beside their
 * trampolines (issue 43: 32 extra instructions per pair through these and the stub, 18
 * that way); these serve the import-slot route, the far patch and the stub. */
#if defined(__x86_64__)
#include "record/livefilter.h"
#include "record/slowpath.h"

_Static_assert(offsetof(hs_tls_t, countdown) == 0 && offsetof(hs_tls_t, allocs) == 8 &&
                   offsetof(hs_tls_t, frees) == 16,
               "the fast paths' TLS offsets");
_Static_assert(offsetof(hs_real_t, malloc) == 0 && offsetof(hs_real_t, free) == 8,
               "the fast paths' hs_real offsets");
_Static_assert(offsetof(hs_filter_t, words) - offsetof(hs_filter_t, nbits) == 8,
               "the fast paths' filter layout");

HS_HIDDEN void *hs_hook_malloc_slow(size_t n);
HS_HIDDEN void *hs_hook_malloc_slow(size_t n)
{
    return hs_slow_alloc(HS_OP_MALLOC, 0, n);
}
HS_KEEPREGS_THUNK(hs_thunk_malloc_slow, hs_hook_malloc_slow)
HS_KEEPALL_THUNK(hs_thunk_free_slow, hs_slow_free)

HS_FAST_ALLOC(hs_fast_malloc, "hs_real+0", hs_thunk_malloc_slow)
HS_FAST_FREE(hs_fast_free, "hs_real+8", hs_thunk_free_slow)

/* Operator new and new[]: malloc's fast path over hs_real.new_plain (new_array), which
 * holds the judge until the first call: that call runs the original inside the guard and
 * looks whether it came back through malloc (a program's operator new over its own
 * malloc: its blocks would be counted twice), as bootstrap.c judges an interposed one.
 * If not, the slot becomes the bare trampoline; else the guarded call, through a thunk.
 * The deletes: free's fast path over hs_real.sized_delete (sized_delete_array: the
 * trampolines), or over hs_real.free for the others (as interposition's). */
HS_HIDDEN void *hs_hook_new_plain_slow(size_t n);
HS_HIDDEN void *hs_hook_new_plain_slow(size_t n)
{
    return hs_slow_new(HS_NEW_PLAIN, 0, n);
}
HS_HIDDEN void *hs_hook_new_array_slow(size_t n);
HS_HIDDEN void *hs_hook_new_array_slow(size_t n)
{
    return hs_slow_new(HS_NEW_ARRAY, 0, n);
}
HS_KEEPREGS_THUNK(hs_thunk_new_plain_slow, hs_hook_new_plain_slow)
HS_KEEPREGS_THUNK(hs_thunk_new_array_slow, hs_hook_new_array_slow)
HS_FAST_ALLOC(hs_fast_new_plain, "hs_real+96", hs_thunk_new_plain_slow)
HS_FAST_ALLOC(hs_fast_new_array, "hs_real+104", hs_thunk_new_array_slow)
HS_FAST_FREE(hs_fast_sized_delete, "hs_real+80", hs_thunk_free_slow)
HS_FAST_FREE(hs_fast_sized_delete_array, "hs_real+88", hs_thunk_free_slow)
_Static_assert(offsetof(hs_real_t, sized_delete) == 80 &&
                   offsetof(hs_real_t, sized_delete_array) == 88 &&
                   offsetof(hs_real_t, new_plain) == 96 && offsetof(hs_real_t, new_array) == 104,
               "the operator new/delete fast paths' hs_real offsets");

HS_HIDDEN void *hs_hook_guarded_new_plain(size_t n);
HS_HIDDEN void *hs_hook_guarded_new_plain(size_t n)
{
    return hooks_guarded_new_plain(n);
}
HS_HIDDEN void *hs_hook_guarded_new_array(size_t n);
HS_HIDDEN void *hs_hook_guarded_new_array(size_t n)
{
    return hooks_guarded_new_array(n);
}
HS_KEEPREGS_THUNK(hs_thunk_guarded_new_plain, hs_hook_guarded_new_plain)
HS_KEEPREGS_THUNK(hs_thunk_guarded_new_array, hs_hook_guarded_new_array)

/* The first call of hooked operator new i (slot its hs_real slot): judged, see above. */
static void *hooks_judge_new(size_t i, void *(**slot)(size_t), void (*guarded)(void), size_t n)
{
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    uint64_t before = t->allocs;
    void *p = ((void *(*)(size_t))hooks_orig[i])(n);
    bool own = t->allocs == before;
    hs_guard_exit(t);
    __atomic_store_n(slot, own ? (void *(*)(size_t))hooks_orig[i] : (void *(*)(size_t))guarded,
                     __ATOMIC_RELEASE);
    return p;
}
HS_HIDDEN void *hs_hook_judge_new_plain(size_t n);
HS_HIDDEN void *hs_hook_judge_new_plain(size_t n)
{
    return hooks_judge_new(9, &hs_real.new_plain, hs_thunk_guarded_new_plain, n);
}
HS_HIDDEN void *hs_hook_judge_new_array(size_t n);
HS_HIDDEN void *hs_hook_judge_new_array(size_t n)
{
    return hooks_judge_new(10, &hs_real.new_array, hs_thunk_guarded_new_array, n);
}
HS_KEEPREGS_THUNK(hs_thunk_judge_new_plain, hs_hook_judge_new_plain)
HS_KEEPREGS_THUNK(hs_thunk_judge_new_array, hs_hook_judge_new_array)

/* The sized deletes, judged the same way at their first call: one that comes back through
 * free (a program's operator delete over its own free) would count each free twice on
 * the fast path; its slot then gets the object's free (hs_real.free, which takes the
 * same first argument), else the bare trampoline. */
static void hooks_judge_delete(size_t i, void (**slot)(void *, size_t), void *p, size_t n)
{
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    uint64_t before = t->frees;
    ((void (*)(void *, size_t))hooks_orig[i])(p, n);
    bool own = t->frees == before;
    hs_guard_exit(t);
    __atomic_store_n(slot,
                     own ? (void (*)(void *, size_t))hooks_orig[i]
                         : (void (*)(void *, size_t))(void *)hs_real.free,
                     __ATOMIC_RELEASE);
}
HS_HIDDEN void hs_hook_judge_delete(void *p, size_t n);
HS_HIDDEN void hs_hook_judge_delete(void *p, size_t n)
{
    hooks_judge_delete(13, &hs_real.sized_delete, p, n);
}
HS_HIDDEN void hs_hook_judge_delete_array(void *p, size_t n);
HS_HIDDEN void hs_hook_judge_delete_array(void *p, size_t n)
{
    hooks_judge_delete(14, &hs_real.sized_delete_array, p, n);
}
HS_KEEPALL_THUNK(hs_thunk_judge_delete, hs_hook_judge_delete)
HS_KEEPALL_THUNK(hs_thunk_judge_delete_array, hs_hook_judge_delete_array)
_Static_assert(sizeof(hooks_defs) / sizeof(hooks_defs[0]) > 14, "the deletes' rows");
#endif

static void *hooks_own(const char *name)
{
#if defined(__x86_64__)
    if (strcmp(name, "malloc") == 0)
        return (void *)hs_fast_malloc;
    if (strcmp(name, "free") == 0 || strcmp(name, "_ZdlPv") == 0 || strcmp(name, "_ZdaPv") == 0)
        return (void *)hs_fast_free;
    if (strcmp(name, "_Znwm") == 0)
        return (void *)hs_fast_new_plain;
    if (strcmp(name, "_Znam") == 0)
        return (void *)hs_fast_new_array;
    if (strcmp(name, "_ZdlPvm") == 0)
        return (void *)hs_fast_sized_delete;
    if (strcmp(name, "_ZdaPvm") == 0)
        return (void *)hs_fast_sized_delete_array;
#endif
    for (const hs_own_entry_t *e = hs_own_entries; e && e->name; e++)
        if (strcmp(e->name, name) == 0)
            return e->fn;
    return NULL;
}

/* The code written beside the trampoline of malloc and free, which go on into their own
 * trampolines (hooks_near.c); the others run their hooks through the stub. */
static hs_patch_emit_fn *hooks_near(const char *name)
{
#if defined(__x86_64__)
    if (strcmp(name, "malloc") == 0)
        return hs_hooks_near_malloc;
    if (strcmp(name, "free") == 0)
        return hs_hooks_near_free;
#endif
    (void)name;
    return NULL;
}

static bool hooks_via_got[HOOKS_N]; /* hooked through import slots, not in place */

static bool hooks_got_only(void)
{
    return hs_opt.hooks && strcmp(hs_opt.hooks, "got") == 0;
}

/* Member i through the import slots bound to addr, when patching it in place failed with
 * err (or HEAPSIFT_HOOKS=got): its original is addr itself. HS_HOOKS_GOT, or err with why
 * saying why not. Not for a definition in the executable: its own calls bind directly. */
static int hooks_got(size_t i, void *addr, void *own, int err, char *why, size_t whylen)
{
    Dl_info self;
    char first[120];
    snprintf(first, sizeof(first), "%s", hooks_got_only() ? "HEAPSIFT_HOOKS=got" : why);
    if (!dladdr((void *)&hooks_got, &self))
        return err;
    hooks_orig[i] = addr; /* before any slot leads to the hook */
    int n = hs_got_redirect(hooks_defs[i].name, addr, own, self.dli_fbase);
    if (n == -EXDEV || n == -ENOSYS || n == -ENOSPC) {
        snprintf(why, whylen, "%s; %s", first,
                 n == -EXDEV    ? "its import slots would miss the executable's own calls"
                 : n == -ENOSPC ? "too many import slots redirected"
                                : "import slots are x86-64 only");
        return err ? err : n;
    }
    if (n < 0)
        return n;
    snprintf(why, whylen, "%s", first);
    return HS_HOOKS_GOT;
}

bool hs_hooks_noop(const void *addr)
{
    const uint8_t *c = addr;
    if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
        c += 4;
    return c[0] == 0xc3 || (c[0] == 0xf3 && c[1] == 0xc3);
}

/* Entry i's slot of hs_real: its trampoline, or its guarded wrapper (which calls it). Set
   before the entry's jump is written (hs_patch_install_cb): another thread may reach the
   hook at once, and the hook calls the slot. */
static void hooks_set_real(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    const hooks_def_t *d = &hooks_defs[i];
    if (d->slot) {
        void *v = d->guarded ? d->guarded : hooks_orig[i];
        __atomic_store_n((void **)((char *)&hs_real + d->slot - 1), v, __ATOMIC_RELEASE);
    }
}

int hs_hooks_family(size_t i, void *addr, size_t size, const void *base, char *why, size_t whylen)
{
    const hooks_def_t *d = &hooks_defs[i];
    void *own = i < HOOKS_N && hs_hooks_enabled() ? hooks_own(d->name) : NULL;
    if (!own)
        return -ENOSYS;
    if (strcmp(d->name, "free") == 0 && hs_hooks_noop(addr)) {
        hooks_free_base = base;
        return HS_HOOKS_NOOP;
    }
    if ((d->need == NEED_FREE && hooks_free_base != base) ||
        (d->need == NEED_MEMALIGN && hooks_memalign_base != base)) {
        snprintf(why, whylen, "its object's %s is not hooked",
                 d->need == NEED_FREE ? "free" : "memalign");
        return -EPERM;
    }
    int rc = -EEXIST;
    for (size_t j = 0; j < HOOKS_N && rc == -EEXIST; j++)
        if (hooks_addr[j] == addr) { /* an alias (tcmalloc's memalign is aligned_alloc) */
            hooks_orig[i] = hooks_orig[j];
            rc = hooks_via_got[j] ? HS_HOOKS_GOT : 0;
        }
    if (rc == -EEXIST && !hooks_got_only())
        rc = hs_patch_install_code(addr, size, 0, hooks_near(d->name), NULL, own, &hooks_orig[i],
                                   hooks_set_real, (void *)(uintptr_t)i, why, whylen);
    if (rc != 0 && rc != HS_HOOKS_GOT && rc != -ENOSYS)
        rc = hooks_got(i, addr, own, rc, why, whylen);
    if (rc != 0 && rc != HS_HOOKS_GOT)
        return rc;
    hooks_via_got[i] = rc == HS_HOOKS_GOT;
    hooks_addr[i] = addr;
    hooks_set_real((void *)(uintptr_t)i);
    if (strcmp(d->name, "free") == 0)
        hooks_free_base = base;
    else if (strcmp(d->name, "memalign") == 0)
        hooks_memalign_base = base;
    return rc;
}

void *hs_hooks_entry(const char *name)
{
    for (size_t j = 0; j < HOOKS_N; j++)
        if (strcmp(hooks_defs[j].name, name) == 0)
            return hooks_addr[j];
    return NULL;
}

bool hs_hooks_hooked(const void *addr)
{
    for (size_t j = 0; j < HOOKS_N; j++)
        if (hooks_addr[j] && hooks_addr[j] == addr)
            return true;
    return false;
}

bool hs_hooks_hooked_in_place(const void *addr)
{
    for (size_t j = 0; j < HOOKS_N; j++)
        if (hooks_addr[j] && hooks_addr[j] == addr && !hooks_via_got[j])
            return true;
    return false;
}

bool hs_hooks_frees_into(const void *base)
{
    if (hooks_free_base) /* the family's free is hooked (or does nothing) in that object */
        return hooks_free_base == base;
    void *f = hs_own_entries ? dlsym(RTLD_DEFAULT, "free") : NULL;
    const void *at = f ? hs_elf_base_of(f) : NULL; /* dladdr: a walk of libc's symbols */
    if (!at || at != hs_elf_base_of((void *)&hs_hooks_frees_into))
        return false; /* the program's free does not reach heapsift's */
    at = hs_elf_base_of((void *)hs_real.free);
    return at && at == base;
}
