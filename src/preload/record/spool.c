/*
 * The spool (spool.h): a file of HEAPSIFT_SPOOL_SIZE bytes, reserved with fallocate when
 * opened (a shared mapping of a hole on a full disk or tmpfs would raise SIGBUS at the
 * first write, not an error), mapped MAP_SHARED, its descriptor closed at once. Layout in
 * spool_fmt.h: a header, the executable mappings, an append-only stack area, and fixed
 * live slots. A slot is taken from a lock-free free list (a tagged index, so a stale pop
 * fails its compare-and-swap), its fields written, then its commit word with release
 * ordering; a free clears the commit word before the slot goes back on the list. Stacks
 * and mappings are appended under one mutex (HS_RANK_SPOOL), taken only for a new stack:
 * its record is appended under the stack table's lock, before the stack's id is published,
 * so no live sample can name a stack the spool does not hold yet. What does not fit is counted in
 * the header and said once; the process goes on with its tables in memory. Reads
 * /proc/self/maps once, when it opens (the constructor); a library loaded later is listed
 * from the dynamic loader's list on the sampled path, without allocating or reading a file.
 */
#define _GNU_SOURCE
#include "spool.h"
#include "spool_int.h"
#include "runtime/core.h"
#include "runtime/debugcheck.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "runtime/outpath.h"
#include "runtime/sandbox.h"
#include "stacktab.h"

#include "base/fdio.h"
#include "base/maps.h"
#include "model/spool_fmt.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HS_SPOOL_REREADS 64             /* maps re-reads for addresses no mapping covers */
#define HS_SPOOL_RESCUE_SIZE (4u << 20) /* a rescue spool: ~75,000 live slots */

hs_spool_state_t hs_sp;
pthread_mutex_t hs_spool_lock = PTHREAD_MUTEX_INITIALIZER;

static int spool_full_log, spool_stacks_log, spool_maps_log;

/* A rescue spool's troubles are said only when verbose: they lose data only if the process
 * then cannot write its profile, which is said then. */
#define spool_log_once(flag, ...)                                                                  \
    do {                                                                                           \
        if (!hs_sp.rescue || hs_opt.verbose)                                                       \
            hs_log_once(flag, __VA_ARGS__);                                                        \
    } while (0)

int64_t hs_spool_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --- live slots ------------------------------------------------------------------- */

/* Index of a free slot, or -1 when the spool is full. */
static int64_t spool_pop(void)
{
    uint64_t h = __atomic_load_n(&hs_sp.head, __ATOMIC_ACQUIRE);
    while ((uint32_t)h != 0) {
        uint32_t i = (uint32_t)h - 1;
        uint64_t n = ((h >> 32) + 1) << 32 | __atomic_load_n(&hs_sp.next[i], __ATOMIC_RELAXED);
        if (__atomic_compare_exchange_n(&hs_sp.head, &h, n, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return i;
    }
    uint64_t i = __atomic_fetch_add(&hs_sp.h->live_used, 1, __ATOMIC_RELAXED);
    if (i < hs_sp.h->live_cap)
        return (int64_t)i;
    __atomic_store_n(&hs_sp.h->live_used, hs_sp.h->live_cap, __ATOMIC_RELAXED);
    return -1;
}

static void spool_push(uint32_t i)
{
    uint64_t h = __atomic_load_n(&hs_sp.head, __ATOMIC_ACQUIRE), n;
    do {
        __atomic_store_n(&hs_sp.next[i], (uint32_t)h, __ATOMIC_RELAXED);
        n = ((h >> 32) + 1) << 32 | (i + 1);
    } while (
        !__atomic_compare_exchange_n(&hs_sp.head, &h, n, true, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
}

/* Whether this process owns the spool. A child made by a raw clone (no fork handler ran)
 * must not write into its parent's file, even where its pid is its parent's (each the init
 * of a PID namespace of its own, as Chromium's zygote and renderers are): its owner token,
 * a MADV_WIPEONFORK page, reads 0 there. While another thread takes a spare for this
 * process (spool_child.c), waits for it. The token says it alone: every child with memory
 * of its own reads 0 until its fork handler or a spare makes the token its own; a pid of
 * another would only be a child sharing this memory (vfork, CLONE_VM), whose samples land
 * in these same tables; what ends the spool asks spool_owned, which checks the pid too. Without a
 * token (before Linux 4.14) the pid tells, a getpid on the sampled path (a third of cc1's system
 * calls under heapsift run: 600 a compile). */
static bool spool_mine(void)
{
    if (!__atomic_load_n(&hs_sp.on, __ATOMIC_ACQUIRE))
        return false;
    if (hs_sp.token) {
        int t;
        while ((t = __atomic_load_n(hs_sp.token, __ATOMIC_ACQUIRE)) == HS_SPOOL_TOKEN_TAKING)
            sched_yield();
        if (t != HS_SPOOL_TOKEN_MINE)
            return false;
        return true;
    }
    return hs_sp.owner == getpid();
}

/* spool_mine, and this process is the one that made the spool its own: what ends the spool
 * (its removal at exit, its mark as the profile, its discard) is asked here, not on the
 * sampled path. A child sharing this memory (vfork, posix_spawn, Chromium's chroot helper:
 * CLONE_VM without CLONE_THREAD) reads the token as MINE: its _exit would otherwise remove
 * its parent's spool, or mark it as a profile while the parent runs on. One getpid. */
static bool spool_owned(void)
{
    return spool_mine() && hs_sp.owner == getpid();
}

/* spool_mine, or else, in a raw clone's child of a process with spares, takes one. */
static bool spool_mine_or_take(void)
{
    return spool_mine() || hs_spool_take_spare(HS_SPOOL_FORKED_CLONE);
}

uint32_t hs_spool_put(const hs_live_t *e)
{
    if (!spool_mine_or_take())
        return 0;
    if (hs_sp.spare_taken && (__atomic_add_fetch(&hs_sp.puts, 1, __ATOMIC_RELAXED) & 1023) == 0)
        hs_spool_spare_cmdline(); /* a title written since (Chromium's renderers) */
    int64_t i = spool_pop();
    if (i < 0) {
        __atomic_fetch_add(&hs_sp.h->live_dropped, 1, __ATOMIC_RELAXED);
        spool_log_once(spool_full_log,
                       "spool %s is full (HEAPSIFT_SPOOL_SIZE): live samples from "
                       "now on are kept in memory only",
                       hs_sp.path);
        return 0;
    }
    hs_spool_live_t r = {
        .addr = e->addr, .size = e->size, .weight = e->weight, .stack_id = e->stack_id};
    hs_spool_live_t *s = &hs_sp.live[i];
    s->addr = r.addr;
    s->size = r.size;
    s->weight = r.weight;
    s->stack_id = r.stack_id;
    s->pad = 0;
    __atomic_store_n(&s->commit, hs_spool_live_sum(&r), __ATOMIC_RELEASE);
    return (uint32_t)i + 1;
}

void hs_spool_drop(uint32_t slot)
{
    if (slot == 0 || !spool_mine())
        return;
    __atomic_store_n(&hs_sp.live[slot - 1].commit, 0, __ATOMIC_RELEASE);
    spool_push(slot - 1);
}

/* --- stacks and mappings (lock held) ---------------------------------------------- */

static bool spool_covered(uint64_t pc)
{
    for (uint32_t k = 0; k < hs_sp.ncover; k++)
        if (pc >= hs_sp.cover[k][0] && pc < hs_sp.cover[k][1])
            return true;
    return false;
}

/* Appends the record r (its commit word computed here) unless its range is known. */
static void spool_put_map(hs_spool_map_t *r)
{
    uint64_t k = hs_sp.h->maps_used;
    if (k >= hs_sp.h->maps_cap) {
        spool_log_once(spool_maps_log, "spool %s: more than %u mappings; later ones are not listed",
                       hs_sp.path, HS_SPOOL_MAPS);
        return;
    }
    r->commit = hs_spool_map_sum(r);
    hs_spool_map_t *d = &hs_sp.maps[k];
    memcpy((char *)d + 8, (char *)r + 8, sizeof(*r) - 8);
    __atomic_store_n(&d->commit, r->commit, __ATOMIC_RELEASE);
    __atomic_store_n(&hs_sp.h->maps_used, k + 1, __ATOMIC_RELEASE);
}

/* Notes [start, limit) as known; false when it was already. */
static bool spool_cover(uint64_t start, uint64_t limit)
{
    if (spool_covered(start))
        return false;
    if (hs_sp.ncover < HS_SPOOL_COVER) {
        hs_sp.cover[hs_sp.ncover][0] = start;
        hs_sp.cover[hs_sp.ncover++][1] = limit;
    }
    return true;
}

/* Appends executable mapping m of maps (unless its range is known already). */
static void spool_add_map(hs_maps_t *maps, hs_map_t *m)
{
    if (!m->executable || spool_covered(m->start))
        return;
    spool_cover(m->start, m->limit);
    if (m->path[0] != '/')
        return; /* [vdso], anonymous code: nothing to symbolize from */
    hs_spool_map_t r;
    memset(&r, 0, sizeof(r));
    r.start = m->start;
    r.limit = m->limit;
    r.offset = m->offset;
    const char *id = hs_maps_build_id(0, maps, m);
    snprintf(r.build_id, sizeof(r.build_id), "%s", id ? id : "");
    snprintf(r.path, sizeof(r.path), "%s", m->path);
    spool_put_map(&r);
}

/* The build id of a loaded object, from its PT_NOTE in memory (mapped with it), as
 * lowercase hex into out; "" when it has none. */
static void spool_note_id(const struct dl_phdr_info *o, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i < o->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &o->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(o->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const uint8_t *name = p + sizeof(*n), *desc = name + ((n->n_namesz + 3) & ~3u);
            if (desc + n->n_descsz > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                for (uint32_t k = 0; k < n->n_descsz && 2 * k + 2 < cap; k++)
                    snprintf(out + 2 * k, 3, "%02x", desc[k]);
                return;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
}

/* dl_iterate_phdr's callback: the executable segments of a named object not listed yet. */
static int spool_object(struct dl_phdr_info *o, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    if (!o->dlpi_name || o->dlpi_name[0] != '/')
        return 0; /* the executable and the vdso: listed at start from the maps */
    for (int i = 0; i < o->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &o->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uint64_t start = (o->dlpi_addr + ph->p_vaddr) & ~4095ull;
        uint64_t limit = (o->dlpi_addr + ph->p_vaddr + ph->p_memsz + 4095) & ~4095ull;
        if (!spool_cover(start, limit))
            continue;
        hs_spool_map_t r;
        memset(&r, 0, sizeof(r));
        r.start = start;
        r.limit = limit;
        r.offset = ph->p_offset & ~4095ull;
        spool_note_id(o, r.build_id, sizeof(r.build_id));
        snprintf(r.path, sizeof(r.path), "%s", o->dlpi_name);
        spool_put_map(&r);
    }
    return 0;
}

/* Lists every executable mapping of the process not listed yet. */
/* Reads /proc/self/maps (through fdio.h, which may start the I/O thread: never under
 * the spool's lock, whose rank is above the thread registry's) and appends what is new
 * under the lock; the build ids read then allocate, inside the guard. */
static void spool_read_maps(void)
{
    hs_tls_t *t = &hs_tls;
    hs_maps_t maps = {NULL, 0};
    hs_guard_enter(t); /* the maps and build ids allocate: not samples of the program's */
    if (hs_maps_read_lazy(0, &maps) == 0) {
        hs_lock(&hs_spool_lock, HS_RANK_SPOOL);
        for (size_t i = 0; i < maps.n; i++)
            spool_add_map(&maps, &maps.maps[i]);
        __atomic_store_n(&hs_sp.h->last_ns, hs_spool_now_ns(), __ATOMIC_RELAXED);
        hs_unlock(&hs_spool_lock, HS_RANK_SPOOL);
        hs_maps_free(&maps);
    }
    hs_guard_exit(t);
}

static void spool_append_stack(int32_t id, const uintptr_t *pcs, size_t depth)
{
    hs_spool_stack_t s = {
        .id = id, .depth = (uint32_t)(depth < HS_SPOOL_STACK_MAX ? depth : HS_SPOOL_STACK_MAX)};
    uint64_t off = hs_sp.h->stacks_used, bytes = sizeof(s) + 8 * (uint64_t)s.depth;
    if (off + bytes > hs_sp.h->stacks_cap) {
        __atomic_fetch_add(&hs_sp.h->stacks_dropped, 1, __ATOMIC_RELAXED);
        spool_log_once(spool_stacks_log,
                       "spool %s: no room for more stacks (HEAPSIFT_SPOOL_SIZE): samples of new "
                       "stacks will be recovered without their stack",
                       hs_sp.path);
        return;
    }
    hs_spool_stack_t *d = (hs_spool_stack_t *)(hs_sp.stacks + off);
    uint64_t *w = (uint64_t *)(d + 1);
    for (uint32_t k = 0; k < s.depth; k++)
        w[k] = pcs[k];
    d->id = s.id;
    d->depth = s.depth;
    __atomic_store_n(&d->commit, hs_spool_stack_sum(&s, w), __ATOMIC_RELEASE);
    __atomic_store_n(&hs_sp.h->stacks_used, off + bytes, __ATOMIC_RELEASE);
}

void hs_spool_stack(int32_t id, const uintptr_t *pcs, size_t depth)
{
    if (id < 0 || !spool_mine())
        return;
    hs_lock(&hs_spool_lock, HS_RANK_SPOOL);
    spool_append_stack(id, pcs, depth);
    __atomic_store_n(&hs_sp.h->last_ns, hs_spool_now_ns(), __ATOMIC_RELAXED);
    hs_unlock(&hs_spool_lock, HS_RANK_SPOOL);
}

void hs_spool_all_stacks_locked(void)
{
    for (uint32_t id = 0, n = hs_stacktab_count(); id < n; id++) {
        uint32_t depth = 0;
        const uintptr_t *pcs = hs_stacktab_pcs((int32_t)id, &depth);
        if (pcs)
            spool_append_stack((int32_t)id, pcs, depth);
    }
    __atomic_store_n(&hs_sp.h->last_ns, hs_spool_now_ns(), __ATOMIC_RELAXED);
}

void hs_spool_maps(const uintptr_t *pcs, size_t depth)
{
    if (!spool_mine_or_take())
        return;
    hs_lock(&hs_spool_lock, HS_RANK_SPOOL);
    bool missing = false;
    for (size_t k = 0; k < depth && !missing; k++)
        missing = pcs[k] > 1 && !spool_covered(pcs[k] - 1);
    bool reread = missing && hs_sp.rereads < HS_SPOOL_REREADS;
    hs_sp.rereads += reread;
    if (reread) { /* a library loaded since: the loader's list, no file read */
        dl_iterate_phdr(spool_object, NULL);
        __atomic_store_n(&hs_sp.h->last_ns, hs_spool_now_ns(), __ATOMIC_RELAXED);
    }
    hs_unlock(&hs_spool_lock, HS_RANK_SPOOL);
}

/* --- opening and closing ---------------------------------------------------------- */

static void spool_cmdline(hs_spool_header_t *h)
{
    ssize_t n = hs_fd_read_file("/proc/self/cmdline", h->cmdline, sizeof(h->cmdline));
    h->cmdline_len = n > 0 ? (uint64_t)n : 0;
}

/* The regions of a file of size bytes: header, mappings, then a quarter of the rest for
 * stacks and three quarters for live slots. */
void hs_spool_layout(hs_spool_header_t *h, uint64_t size)
{
    uint64_t rest = size - HS_SPOOL_HEADER_SIZE - HS_SPOOL_MAPS * sizeof(hs_spool_map_t);
    h->file_size = size;
    h->maps_off = HS_SPOOL_HEADER_SIZE;
    h->maps_cap = HS_SPOOL_MAPS;
    h->stacks_off = h->maps_off + HS_SPOOL_MAPS * sizeof(hs_spool_map_t);
    h->stacks_cap = rest / 4 / 8 * 8;
    h->live_off = h->stacks_off + h->stacks_cap;
    h->live_cap = (size - h->live_off) / sizeof(hs_spool_live_t);
}

/* Creates, reserves and maps the file, under a temporary name of this process's (renamed
 * into place once it holds its header: a process still writing a spool of the same name
 * keeps its own file, where truncating it would give that process SIGBUS). Returns the
 * mapping, or NULL with *what naming the failed step and *err its errno. */
/* With direct, the calls are made in the caller's descriptor table, not through the I/O
 * thread: only in a forked child's fork handler, where no other thread of the program runs
 * to see the descriptor (starting the I/O thread there cost about 15 ms a fork). */
void *hs_spool_map_file(uint64_t size, const char **what, int *err, bool direct)
{
    int fd = direct ? open(hs_sp.tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)
                    : hs_fd_open(hs_sp.tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    void *p = MAP_FAILED;
    *err = errno;
    if (fd < 0) {
        *what = "cannot create it";
        return NULL;
    }
    int rc = direct ? fallocate(fd, 0, 0, (off_t)size) : hs_fd_fallocate(fd, 0, (off_t)size);
    if (rc != 0) {
        *what = "cannot reserve its space";
        *err = errno;
    } else if ((p = direct ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                           : hs_fd_mmap(size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
               MAP_FAILED) {
        *what = "cannot map it";
        *err = errno;
    }
    if (direct)
        close(fd);
    else
        hs_fd_close(fd);
    if (p == MAP_FAILED) {
        unlink(hs_sp.tmp);
        return NULL;
    }
    return p;
}

/* Says once why there is no spool, and undoes what was done. */
void hs_spool_give_up(void *base, uint64_t size, const char *what, int err)
{
    if (!hs_sp.rescue || hs_opt.verbose)
        hs_log("spool %s: %s (%s); profiles stay in memory only", hs_sp.path, what, strerror(err));
    if (base) {
        munmap(base, size);
        unlink(hs_sp.tmp);
    }
}

/* The fixed header of a spool of size bytes, written at base but for its magic. */
static void spool_write_header(uint8_t *base, uint64_t size)
{
    hs_spool_header_t h;
    memset(&h, 0, sizeof(h));
    hs_spool_layout(&h, size);
    memcpy(h.magic, HS_SPOOL_MAGIC, 8);
    h.version = HS_SPOOL_VERSION;
    h.header_size = HS_SPOOL_HEADER_SIZE;
    h.pid = (uint64_t)getpid();
    h.start_ns = h.last_ns = hs_spool_now_ns();
    h.rate = hs_opt.rate;
    h.check = hs_spool_header_sum(&h);
    spool_cmdline(&h);
    hs_outpath_expand(hs_opt.out, "heap", 0, true, false, h.out_path, sizeof(h.out_path));
    h.pid_ns = hs_sp.pid_ns;
    memcpy(base + 8, (char *)&h + 8, sizeof(h) - 8);
    hs_spool_adopt_regions(base);
}

void hs_spool_adopt_regions(uint8_t *base)
{
    hs_spool_header_t *h = (hs_spool_header_t *)base;
    hs_sp.h = h;
    hs_sp.maps = (hs_spool_map_t *)(base + h->maps_off);
    hs_sp.stacks = base + h->stacks_off;
    hs_sp.live = (hs_spool_live_t *)(base + h->live_off);
}

/* The inode of this process's PID namespace, from /proc/self/ns/pid ("pid:[N]"); 0 when
 * it cannot be read. */
static uint64_t spool_pid_ns(void)
{
    char link[64];
    ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    const char *p = strchr(link, '[');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* Where the kernel laid out the program's arguments and environment (spool_child.c reads
 * the command line from there: a sandboxed child cannot open /proc/self/cmdline). The
 * argument strings end where the environment's begin; program_invocation_name is argv[0]. */
static void spool_args_area(void)
{
    const char *lo = program_invocation_name, *hi = lo ? lo + strlen(lo) + 1 : NULL;
    if (!lo || !environ || !environ[0])
        return;
    if (environ[0] > lo && environ[0] - lo < (1 << 20))
        hi = environ[0];
    const char *env = environ[0];
    for (size_t i = 0; environ[i] == env; i++)
        env += strlen(env) + 1;
    hs_sp.arg_lo = lo;
    hs_sp.arg_hi = hi;
    hs_sp.env_hi = env > hi ? env : hi;
}

/* The owner token (spool_int.h): a page that every child, however made, finds zeroed. */
static void spool_token(void)
{
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED && madvise(page, 4096, MADV_WIPEONFORK) != 0) {
        munmap(page, 4096); /* before Linux 4.14: the pid alone tells a child */
        page = MAP_FAILED;
    }
    hs_sp.token = page == MAP_FAILED ? NULL : page;
    if (hs_sp.token)
        *hs_sp.token = HS_SPOOL_TOKEN_MINE;
}

/* The pattern of this process's spool and its size: HEAPSIFT_SPOOL's; else, under `heapsift
 * run`, a rescue spool beside the run's report, which run recovers when the process could
 * not write its exit profile (run_rescue.c); else NULL. Only a process that the dynamic
 * loader started gets one: a forked child writes none (hs_spool_after_fork_child). */
static const char *spool_pattern(char *buf, size_t cap, uint64_t *size)
{
    *size = hs_opt.spool_size;
    if (hs_opt.spool)
        return hs_opt.spool;
    const char *report = getenv("HEAPSIFT_RUN_REPORT");
    if (!report || report[0] != '/' || strchr(report, '%'))
        return NULL;
    snprintf(buf, cap, "%s.%%p.spool", report);
    snprintf(hs_sp.pattern, sizeof(hs_sp.pattern), "%s", buf);
    hs_sp.rescue = 1;
    if (!getenv("HEAPSIFT_SPOOL_SIZE"))
        *size = HS_SPOOL_RESCUE_SIZE;
    return buf;
}

void hs_spool_open(void)
{
    const char *what = "";
    char pattern[1100];
    int err = 0;
    uint64_t size;
    const char *pat = spool_pattern(pattern, sizeof(pattern), &size);
    if (!pat)
        return;
    hs_sp.pid_ns = spool_pid_ns();
    spool_args_area();
    hs_outpath_expand(pat, "heap", 0, true, false, hs_sp.path, sizeof(hs_sp.path));
    snprintf(hs_sp.tmp, sizeof(hs_sp.tmp), "%s.tmp.%ld", hs_sp.path, (long)getpid());
    uint8_t *base = hs_spool_map_file(size, &what, &err, false);
    if (!base)
        return hs_spool_give_up(NULL, 0, what, err);
    spool_write_header(base, size);
    hs_sp.next = mmap(NULL, hs_sp.h->live_cap * 4, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (hs_sp.next == MAP_FAILED)
        return hs_spool_give_up(base, size, "no memory for its free list", errno);
    hs_sp.owner = getpid();
    spool_token();
    spool_read_maps();
    __atomic_store_n((uint64_t *)hs_sp.h->magic, *(const uint64_t *)HS_SPOOL_MAGIC,
                     __ATOMIC_RELEASE);
    if (rename(hs_sp.tmp, hs_sp.path) != 0)
        return hs_spool_give_up(base, size, "cannot give it its name", errno);
    __atomic_store_n(&hs_sp.on, 1, __ATOMIC_RELEASE);
    /* The stacks interned before now (the program's constructors' samples); one interned
     * meanwhile may be appended twice, which the reader ignores. */
    hs_lock(&hs_spool_lock, HS_RANK_SPOOL);
    hs_spool_all_stacks_locked();
    hs_unlock(&hs_spool_lock, HS_RANK_SPOOL);
    hs_spool_spares_make(size);
    if (hs_opt.verbose)
        hs_log("spool: %s (%llu live slots)", hs_sp.path, (unsigned long long)hs_sp.h->live_cap);
}

void hs_spool_exit(void)
{
    if (!spool_owned())
        return;
    if (hs_opt.keep_spool)
        __atomic_store_n(&hs_sp.h->exit_ns, hs_spool_now_ns(), __ATOMIC_RELEASE);
    else
        unlink(hs_sp.path);
}

const void *hs_spool_token(void)
{
    return hs_sp.token;
}

void hs_spool_ranges(void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
    if (!__atomic_load_n(&hs_sp.on, __ATOMIC_ACQUIRE))
        return;
    uint64_t size = hs_sp.h->file_size; /* the spares and the parent's: the same size */
    fn((uintptr_t)hs_sp.h, (uintptr_t)hs_sp.h + size, arg);
    for (uint32_t k = 0; k < hs_sp.nspares; k++)
        if ((uint8_t *)hs_sp.spare[k] != (uint8_t *)hs_sp.h)
            fn((uintptr_t)hs_sp.spare[k], (uintptr_t)hs_sp.spare[k] + size, arg);
    if (hs_sp.inherited)
        fn((uintptr_t)hs_sp.inherited, (uintptr_t)hs_sp.inherited + size, arg);
}

bool hs_spool_sandboxed(void)
{
    if (!spool_mine_or_take() || hs_sp.owner != getpid())
        return false;
    if (hs_sp.spare_taken)
        hs_spool_spare_cmdline();
    hs_sp.h->sandbox_assumed = !hs_sandbox_seen();
    __atomic_store_n(&hs_sp.h->filtered_ns, hs_spool_now_ns(), __ATOMIC_RELEASE);
    return true;
}

void hs_spool_discard(void)
{
    if (!spool_owned())
        return;
    if (hs_sandbox_entered())
        __atomic_store_n(&hs_sp.h->filtered_ns, -1, __ATOMIC_RELEASE); /* unlink: refused */
    else
        unlink(hs_sp.path);
}
