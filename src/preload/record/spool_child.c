/*
 * The spools of a process's children (spool.h, spool_int.h). A forked child's fork handler
 * makes a copy of its parent's rescue spool. A child made by a raw clone runs no fork
 * handler, and once sandboxed it can create no file (Chromium's zygote makes its renderers
 * so, each the init of a PID namespace of its own, in a chroot, then under a seccomp filter
 * that kills it for a refused call): for such children the init of a PID namespace makes
 * spares when its own spool opens, whole spool files without a magic, reserved and mapped
 * shared, so every child inherits them. A child takes one at its first sample (or at its
 * exit) with no system call but getpid and the vDSO's clock: a compare-and-swap on the
 * spare's header claims it, then the child writes into it what its own tables hold (the
 * live table, renumbered, every stack, its parent's mappings) and publishes the magic. A
 * forked child that cannot create its copy (in a chroot) takes one the same way. The
 * profile's path gets ".spare<k>": the pid may be its namespace's. A child whose parent
 * held a lock of the live table when it cloned (a raw clone of a threaded program) would
 * wait for it for ever: so would the program in its allocator, whose fork handlers did not
 * run either.
 */
#define _GNU_SOURCE
#include "livetab.h"
#include "spool.h"
#include "spool_int.h"
#include "runtime/debugcheck.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "runtime/outpath.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int spare_none_log;

/* --- forked children ---------------------------------------------------------------- */

void hs_spool_after_fork_child(void)
{
    hs_sp.forked_rescue = __atomic_load_n(&hs_sp.on, __ATOMIC_ACQUIRE) && hs_sp.rescue;
    __atomic_store_n(&hs_sp.on, 0, __ATOMIC_RELEASE);
    hs_sp.spare_taken = 0; /* a spare of the child's own sets it again */
    pthread_mutex_init(&hs_spool_lock, NULL);
}

/* Copies the used parts of the parent's spool at old into the child's new one at base. */
static void spool_copy(const uint8_t *old, uint8_t *base)
{
    const hs_spool_header_t *o = (const hs_spool_header_t *)old;
    uint64_t maps = __atomic_load_n(&o->maps_used, __ATOMIC_ACQUIRE);
    uint64_t stacks = __atomic_load_n(&o->stacks_used, __ATOMIC_ACQUIRE);
    uint64_t live = __atomic_load_n(&o->live_used, __ATOMIC_ACQUIRE);
    maps = maps < o->maps_cap ? maps : o->maps_cap;
    stacks = stacks < o->stacks_cap ? stacks : o->stacks_cap;
    live = live < o->live_cap ? live : o->live_cap;
    memcpy(base, old, HS_SPOOL_HEADER_SIZE);
    memcpy(base + o->maps_off, old + o->maps_off, maps * sizeof(hs_spool_map_t));
    memcpy(base + o->stacks_off, old + o->stacks_off, stacks);
    memcpy(base + o->live_off, old + o->live_off, live * sizeof(hs_spool_live_t));
    /* The parent's other threads go on appending to its spool: the header copied may count
     * records appended after the counts above were read, which were not copied (a run of
     * zeros the reader refused as a corrupted stack record, 1 Firefox run in 4). */
    hs_spool_header_t *h = (hs_spool_header_t *)base;
    h->maps_used = maps;
    h->stacks_used = stacks;
    h->live_used = live;
}

void hs_spool_fork_copy(void)
{
    const char *what = "";
    int err = 0;
    if (!hs_sp.forked_rescue)
        return;
    if (hs_sandbox_entered()) { /* files refused (or a chroot): a spare, if there is one */
        hs_sp.forked_rescue = 0;
        __atomic_store_n(&hs_sp.on, 1, __ATOMIC_RELEASE);
        if (!hs_spool_take_spare(HS_SPOOL_FORKED_COPY))
            __atomic_store_n(&hs_sp.on, 0, __ATOMIC_RELEASE);
        return;
    }
    hs_sp.forked_rescue = 0;
    uint8_t *old = (uint8_t *)hs_sp.h;
    uint64_t size = hs_sp.h->file_size;
    hs_outpath_expand(hs_sp.pattern, "heap", 0, true, false, hs_sp.path, sizeof(hs_sp.path));
    snprintf(hs_sp.tmp, sizeof(hs_sp.tmp), "%s.tmp.%ld", hs_sp.path, (long)getpid());
    uint8_t *base = hs_spool_map_file(size, &what, &err, true);
    if (!base) { /* in a chroot (Chromium's zygote forks the one that makes renderers) */
        __atomic_store_n(&hs_sp.on, 1, __ATOMIC_RELEASE);
        if (hs_spool_take_spare(HS_SPOOL_FORKED_COPY))
            return;
        __atomic_store_n(&hs_sp.on, 0, __ATOMIC_RELEASE);
        munmap(old, size);
        return hs_spool_give_up(NULL, 0, what, err);
    }
    spool_copy(old, base);
    munmap(old, size); /* the parent's file: never written from here */
    hs_spool_header_t *h = (hs_spool_header_t *)base;
    h->pid = (uint64_t)getpid();
    h->start_ns = h->last_ns = hs_spool_now_ns();
    h->check = hs_spool_header_sum(h);
    h->exit_ns = h->filtered_ns = 0;
    h->forked = HS_SPOOL_FORKED_COPY;
    h->pid_ns = getpid() == 1 ? HS_SPOOL_PIDNS_OTHER : hs_sp.pid_ns; /* 1: a new namespace */
    hs_outpath_expand(hs_opt.out, "heap", 0, true, true, h->out_path, sizeof(h->out_path));
    hs_spool_adopt_regions(base);
    hs_sp.owner = getpid();
    if (rename(hs_sp.tmp, hs_sp.path) != 0)
        return hs_spool_give_up(base, size, "cannot give it its name", errno);
    if (hs_sp.token)
        __atomic_store_n(hs_sp.token, HS_SPOOL_TOKEN_MINE, __ATOMIC_RELEASE);
    __atomic_store_n(&hs_sp.on, 1, __ATOMIC_RELEASE);
}

/* --- raw clones' children: the spares ----------------------------------------------- */

/* How many spares this process makes: HEAPSIFT_SPOOL_SPARES's count, else 8 for the init
 * of a PID namespace under `heapsift run` (pid 1: Chromium's zygote), else none. */
static uint32_t spares_wanted(void)
{
    uint32_t n = hs_opt.spool_spares ? hs_opt.spool_spares : hs_sp.rescue && getpid() == 1 ? 8 : 0;
    return n < HS_SPOOL_SPARES_MAX ? n : HS_SPOOL_SPARES_MAX;
}

/* The path of spare k: the spool's, with ".spare<k>" before its ".spool". */
static void spare_path(uint32_t k, char *out, size_t cap)
{
    size_t n = strlen(hs_sp.path);
    size_t stem = n > 6 && strcmp(hs_sp.path + n - 6, ".spool") == 0 ? n - 6 : n;
    snprintf(out, cap, "%.*s.spare%u.spool", (int)stem, hs_sp.path, k);
}

void hs_spool_spares_make(uint64_t size)
{
    uint32_t want = spares_wanted();
    for (uint32_t k = 0; k < want; k++) {
        const char *what = "";
        int err = 0;
        char tmp[sizeof(hs_sp.tmp)];
        memcpy(tmp, hs_sp.tmp, sizeof(tmp));
        spare_path(k, hs_sp.tmp, sizeof(hs_sp.tmp)); /* named at once: it has no magic */
        uint8_t *base = hs_spool_map_file(size, &what, &err, false);
        memcpy(hs_sp.tmp, tmp, sizeof(tmp));
        if (!base) {
            if (!hs_sp.rescue || hs_opt.verbose)
                hs_log("spool spare %u: %s (%s); children made by a raw clone beyond %u keep no "
                       "spool",
                       k, what, strerror(err), k);
            break;
        }
        hs_sp.spare[hs_sp.nspares++] = base;
    }
}

/* The command line as /proc/self/cmdline gives it, from memory: the arguments' area,
 * or, where the program wrote a longer title over it (its last byte no longer a NUL),
 * from there up to the first NUL, into the environment's area. */
static uint64_t spare_cmdline(char *out, size_t cap)
{
    const char *lo = hs_sp.arg_lo, *hi = hs_sp.arg_hi;
    if (!lo || hi <= lo)
        return 0;
    size_t n = hi[-1] == '\0' ? (size_t)(hi - lo) : strnlen(lo, (size_t)(hs_sp.env_hi - lo));
    n = n < cap ? n : cap;
    memcpy(out, lo, n);
    return n;
}

void hs_spool_spare_cmdline(void)
{
    hs_spool_header_t *h = hs_sp.h;
    uint64_t n = spare_cmdline(h->cmdline, sizeof(h->cmdline));
    __atomic_store_n(&h->cmdline_len, n, __ATOMIC_RELEASE);
}

/* The header of spare k at base, for this process, but for its magic. */
static void spare_header(uint8_t *base, uint32_t k, uint64_t forked)
{
    hs_spool_header_t *h = (hs_spool_header_t *)base, *parent = hs_sp.h;
    uint64_t size = parent->file_size;
    hs_spool_layout(h, size);
    h->version = HS_SPOOL_VERSION;
    h->header_size = HS_SPOOL_HEADER_SIZE;
    h->pid = (uint64_t)getpid();
    h->start_ns = h->last_ns = hs_spool_now_ns();
    h->rate = parent->rate;
    hs_spool_header_t sum; /* the check covers the magic, published last */
    memcpy(&sum, h, offsetof(hs_spool_header_t, check));
    memcpy(sum.magic, HS_SPOOL_MAGIC, 8);
    h->check = hs_spool_header_sum(&sum);
    h->cmdline_len = spare_cmdline(h->cmdline, sizeof(h->cmdline));
    hs_outpath_expand(hs_opt.out, "heap", 0, true, true, h->out_path, sizeof(h->out_path));
    char mark[32];
    snprintf(mark, sizeof(mark), ".spare%u", k);
    hs_outpath_mark(h->out_path, sizeof(h->out_path), mark);
    h->forked = forked;
    /* pid 1: the init of a namespace of its own; else its parent's namespace */
    h->pid_ns = getpid() == 1 ? HS_SPOOL_PIDNS_OTHER : hs_sp.pid_ns;
    uint64_t maps = __atomic_load_n(&parent->maps_used, __ATOMIC_ACQUIRE);
    maps = maps < parent->maps_cap ? maps : parent->maps_cap;
    memcpy(base + h->maps_off, (uint8_t *)parent + parent->maps_off, maps * sizeof(hs_spool_map_t));
    h->maps_used = maps;
}

/* hs_livetab_each_locked's callback: entry e into the next live slot of the new spool. */
static void spare_live(hs_live_t *e, void *arg)
{
    (void)arg;
    uint64_t i = hs_sp.h->live_used;
    if (i >= hs_sp.h->live_cap) {
        hs_sp.h->live_dropped++;
        e->spool = 0;
        return;
    }
    hs_spool_live_t *s = &hs_sp.live[i];
    s->addr = e->addr;
    s->size = e->size;
    s->weight = e->weight;
    s->stack_id = e->stack_id;
    s->pad = 0;
    s->commit = hs_spool_live_sum(s);
    hs_sp.h->live_used = i + 1;
    e->spool = (uint32_t)i + 1;
}

static void spare_table(uintptr_t lo, uintptr_t hi, void *arg)
{
    (void)lo, (void)hi, (void)arg;
}

/* Claims a free spare: its index, or -1 when none is left. */
static int spare_claim(void)
{
    for (uint32_t k = 0; k < hs_sp.nspares; k++) {
        hs_spool_header_t *h = (hs_spool_header_t *)hs_sp.spare[k];
        uint64_t free_word = 0;
        if (__atomic_compare_exchange_n(&h->spare, &free_word, k + 1, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return (int)k;
    }
    return -1;
}

bool hs_spool_take_spare(uint64_t forked)
{
    int none = HS_SPOOL_TOKEN_NONE;
    if (!hs_sp.token || !__atomic_load_n(&hs_sp.on, __ATOMIC_ACQUIRE) || hs_sp.nspares == 0 ||
        !__atomic_compare_exchange_n(hs_sp.token, &none, HS_SPOOL_TOKEN_TAKING, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return false; /* not a raw clone's child, no spare, or taken or tried already */
    int k = spare_claim();
    if (k < 0) {
        __atomic_store_n(hs_sp.token, HS_SPOOL_TOKEN_NOSPARE, __ATOMIC_RELEASE);
        if (!hs_sp.rescue || hs_opt.verbose)
            hs_log_once(spare_none_log,
                        "process %ld, made by a raw clone, finds no spare spool "
                        "left (HEAPSIFT_SPOOL_SPARES): if it is sandboxed, its "
                        "profile is lost",
                        (long)getpid());
        return false;
    }
    uint8_t *base = hs_sp.spare[k];
    hs_sp.inherited = (uint8_t *)hs_sp.h;
    pthread_mutex_init(&hs_spool_lock, NULL); /* its parent's: no thread here holds it */
    spare_header(base, (uint32_t)k, forked);
    hs_spool_adopt_regions(base);
    hs_sp.head = 0; /* a new free list: the live table is renumbered into slots 0.. */
    hs_livetab_lock_all();
    hs_livetab_each_locked(spare_live, spare_table, NULL);
    hs_sp.owner = getpid();
    hs_sp.spare_taken = 1;
    __atomic_store_n(hs_sp.token, HS_SPOOL_TOKEN_MINE, __ATOMIC_RELEASE);
    hs_livetab_unlock_all();
    hs_lock(&hs_spool_lock, HS_RANK_SPOOL);
    hs_spool_all_stacks_locked();
    __atomic_store_n((uint64_t *)hs_sp.h->magic, *(const uint64_t *)HS_SPOOL_MAGIC,
                     __ATOMIC_RELEASE);
    hs_unlock(&hs_spool_lock, HS_RANK_SPOOL);
    return true;
}
