/*
 * Unit test of the unwinder variants (src/preload/unwind*.c). Every variant runs through
 * the same call chains, compiled without frame pointers: main <- f3 <- f2 <- f1, and a
 * chain that passes through glibc's qsort (built without frame pointers) by way of its
 * comparator. dwarf and libgcc must find every chain function in order; fp
 * need only not crash and return at least one frame, including when %rbp holds garbage,
 * but must follow a third chain built with frame pointers. dwarf must also return
 * exactly libgcc's stack through a 40-deep recursion, two kinds of realigned frames and
 * thread starts, and fall back to libgcc (counted) in signal handlers, on the normal
 * stack and on a sigaltstack, while its rule cache is flushed under it; on the main
 * thread 512 KiB below its first capture, in a child forked by another thread, and fall
 * back on a stack mapped 4 MiB below the main one (errno kept). It also checks
 * the skip range of hs_unwind_capture, runs the variants from several threads, and
 * prints (never asserts) the median cost of a capture of a ~40-frame stack.
 * Function extents come from the executable's own ELF symbol table (st_size), since the
 * test's functions are not in the dynamic symbol table that dladdr reads.
 */
#define _GNU_SOURCE
#include "unwind/unwind.h"

#include "check.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__clang__) /* no per-function frame-pointer switch: fp chains are not required */
#define CHAIN __attribute__((noinline, disable_tail_calls))
#define FPCHAIN CHAIN
#define FP_CHAIN_REQUIRED 0
#else
#define CHAIN __attribute__((noipa, optimize("omit-frame-pointer")))
#define FPCHAIN __attribute__((noipa, optimize("no-omit-frame-pointer")))
#define FP_CHAIN_REQUIRED 1
#endif
/* Keeps a call from becoming a tail call, so the caller's frame stays on the stack. */
#define KEEP(x) __asm__ volatile("" : "+r"(x)::"memory")

typedef size_t (*variant_fn)(uintptr_t *pcs, size_t max);

typedef struct {
    const char *name;
    variant_fn fn;
    int must_be_exact; /* dwarf and libgcc: must find every chain function */
} variant_t;

static const variant_t variants[] = {
    {"dwarf", hs_unwind_dwarf, 1},
    {"libgcc", hs_unwind_libgcc, 1},
    {"fp", hs_unwind_fp, 0},
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static int verbose; /* HS_TEST_VERBOSE=1 prints the captured stacks */

/* ---- function extents from the ELF symbol table of /proc/self/exe -------------------- */

typedef struct {
    const char *name;
    uintptr_t lo, hi;
} extent_t;

static const Elf64_Ehdr *elf;
static size_t elf_size;
static uintptr_t elf_base;

static int elf_open(void)
{
    struct stat st;
    Dl_info info;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

    if (fd < 0 || fstat(fd, &st) != 0)
        return -errno;
    elf_size = (size_t)st.st_size;
    elf = mmap(NULL, elf_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (elf == MAP_FAILED)
        return -errno;
    if (memcmp(elf->e_ident, ELFMAG, SELFMAG) != 0 || elf->e_ident[EI_CLASS] != ELFCLASS64)
        return -ENOEXEC;
    if (elf->e_type == ET_DYN) {
        if (dladdr((void *)(uintptr_t)elf_open, &info) == 0)
            return -ENOENT;
        elf_base = (uintptr_t)info.dli_fbase;
    }
    return 0;
}

/* Size of the STT_FUNC symbol that starts at fn, or 0. */
static size_t elf_func_size(uintptr_t fn)
{
    const Elf64_Shdr *sh = (const Elf64_Shdr *)((const char *)elf + elf->e_shoff);
    uintptr_t rel = fn - elf_base;

    for (unsigned i = 0; i < elf->e_shnum; i++) {
        const Elf64_Sym *sym = (const Elf64_Sym *)((const char *)elf + sh[i].sh_offset);
        size_t n = sh[i].sh_entsize ? sh[i].sh_size / sh[i].sh_entsize : 0;

        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        for (size_t j = 0; j < n; j++) {
            if (ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC && sym[j].st_value == rel &&
                sym[j].st_size > 0)
                return sym[j].st_size;
        }
    }
    return 0;
}

static extent_t extent(const char *name, void *fn)
{
    extent_t e = {name, (uintptr_t)fn, (uintptr_t)fn + elf_func_size((uintptr_t)fn)};

    if (e.hi == e.lo) {
        fprintf(stderr, "FAIL: no symbol size for %s (stripped test binary?)\n", name);
        exit(1);
    }
    return e;
}

/* A return address belongs to the function holding the call, i.e. the byte before it. */
static int in_extent(uintptr_t pc, const extent_t *e)
{
    return pc - 1 >= e->lo && pc - 1 < e->hi;
}

/* True if every extent matches some frame, in order, innermost first. */
static int find_in_order(const uintptr_t *pcs, size_t n, const extent_t *ex, size_t nex,
                         const char **missing)
{
    size_t i = 0;

    for (size_t k = 0; k < nex; k++) {
        while (i < n && !in_extent(pcs[i], &ex[k]))
            i++;
        if (i == n) {
            *missing = ex[k].name;
            return 0;
        }
        i++;
    }
    return 1;
}

static void print_stack(const char *what, const uintptr_t *pcs, size_t n)
{
    fprintf(stderr, "  %s: %zu frames:", what, n);
    for (size_t i = 0; i < n && i < 16; i++) {
        Dl_info info;
        const char *s = dladdr((void *)pcs[i], &info) && info.dli_sname ? info.dli_sname : "?";
        fprintf(stderr, " %#lx(%s)", (unsigned long)pcs[i], s);
    }
    fputc('\n', stderr);
}

/* ---- chain 1: main <- f3 <- f2 <- f1 <- variant ---------------------------------------- */

size_t f1(variant_fn v, uintptr_t *pcs);
size_t f2(variant_fn v, uintptr_t *pcs);
size_t f3(variant_fn v, uintptr_t *pcs);

CHAIN size_t f1(variant_fn v, uintptr_t *pcs)
{
    size_t n = v(pcs, HS_MAX_DEPTH);
    KEEP(n);
    return n;
}

CHAIN size_t f2(variant_fn v, uintptr_t *pcs)
{
    size_t n = f1(v, pcs);
    KEEP(n);
    return n;
}

CHAIN size_t f3(variant_fn v, uintptr_t *pcs)
{
    size_t n = f2(v, pcs);
    KEEP(n);
    return n;
}

/* ---- chain 2: main <- q3 <- qsort (libc) <- q_cmp <- q1 <- variant ---------------------- */

static variant_fn q_variant;
static uintptr_t *q_pcs;
static size_t q_n;

size_t q1(variant_fn v, uintptr_t *pcs);
int q_cmp(const void *a, const void *b);
size_t q3(variant_fn v, uintptr_t *pcs);

CHAIN size_t q1(variant_fn v, uintptr_t *pcs)
{
    size_t n = v(pcs, HS_MAX_DEPTH);
    KEEP(n);
    return n;
}

CHAIN int q_cmp(const void *a, const void *b)
{
    if (q_n == 0)
        q_n = q1(q_variant, q_pcs);
    return *(const int *)a - *(const int *)b;
}

CHAIN size_t q3(variant_fn v, uintptr_t *pcs)
{
    int arr[4] = {3, 1, 2, 0};

    q_variant = v;
    q_pcs = pcs;
    q_n = 0;
    qsort(arr, 4, sizeof(arr[0]), q_cmp);
    KEEP(q_n);
    return q_n;
}

/* ---- chain 3, built with frame pointers: fp must follow it --------------------------- */

size_t p1(variant_fn v, uintptr_t *pcs);
size_t p2(variant_fn v, uintptr_t *pcs);
size_t p3(variant_fn v, uintptr_t *pcs);

FPCHAIN size_t p1(variant_fn v, uintptr_t *pcs)
{
    size_t n = v ? v(pcs, HS_MAX_DEPTH) : hs_unwind_capture(pcs, HS_MAX_DEPTH);
    KEEP(n);
    return n;
}

FPCHAIN size_t p2(variant_fn v, uintptr_t *pcs)
{
    size_t n = p1(v, pcs);
    KEEP(n);
    return n;
}

FPCHAIN size_t p3(variant_fn v, uintptr_t *pcs)
{
    size_t n = p2(v, pcs);
    KEEP(n);
    return n;
}

/* ---- fp with garbage in %rbp ----------------------------------------------------------- */

size_t fp_with_rbp(variant_fn v, uintptr_t junk, uintptr_t *pcs);

/* %rbp is callee-saved, so clobbering it makes the compiler save and restore it around
 * this body; in between it holds junk when hs_unwind_fp saves it as "our caller's fp"
 * (dwarf saves it too, and must restore the real one from this function's CFI). */
CHAIN size_t fp_with_rbp(variant_fn v, uintptr_t junk, uintptr_t *pcs)
{
    size_t n;

    __asm__ volatile("mov %0, %%rbp" : : "r"(junk) : "rbp");
    n = v(pcs, HS_MAX_DEPTH);
    KEEP(n);
    return n;
}

static extent_t ex_fp_with_rbp;

static void test_fp_garbage(void)
{
    uintptr_t pcs[HS_MAX_DEPTH];
    uintptr_t local[4] = {0, 0, 0, 0};
    uintptr_t here = (uintptr_t)local;
    uintptr_t junk[] = {0,
                        1,
                        8,
                        ~(uintptr_t)0,
                        ~(uintptr_t)0 - 15,
                        here + 3,
                        here - 4096,
                        here + 64,
                        (uintptr_t)&hs_check_failures,
                        (uintptr_t)pcs,
                        (uintptr_t)0x00007fffffffe000,
                        (uintptr_t)0xffff800000000000};

    local[0] = here + 16; /* a chain that points upward into this very frame */
    local[2] = here;      /* and one that would loop back down */
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
        size_t n = fp_with_rbp(hs_unwind_fp, junk[i], pcs);
        const char *missing = NULL;

        CHECK(n >= 1 && n <= HS_MAX_DEPTH, "fp with rbp=%#lx returned %zu frames",
              (unsigned long)junk[i], n);
        n = fp_with_rbp(hs_unwind_dwarf, junk[i], pcs);
        CHECK(find_in_order(pcs, n, &ex_fp_with_rbp, 1, &missing) && n >= 3,
              "dwarf with rbp=%#lx lost the chain (%zu frames)", (unsigned long)junk[i], n);
    }
}

/* ---- the chains, for every variant ------------------------------------------------------ */

static extent_t ex_f1, ex_f2, ex_f3, ex_main, ex_q1, ex_qcmp, ex_q3, ex_s1, ex_s2;
static extent_t ex_p1, ex_p2, ex_p3;

/* Every variant, and hs_unwind_capture with fp selected, must follow a chain that keeps
 * frame pointers (capture keeps one itself so that fp can pass through it). */
static void test_fp_chain(void)
{
    uintptr_t pcs[HS_MAX_DEPTH];
    const extent_t chain[] = {ex_p1, ex_p2, ex_p3};
    const char *missing = NULL;
    size_t n;

    for (size_t i = 0; i < NVARIANTS; i++) {
        n = p3(variants[i].fn, pcs);
        CHECK(find_in_order(pcs, n, chain, 3, &missing) || !FP_CHAIN_REQUIRED,
              "%s: p1<-p2<-p3 (with frame pointers) not found (missing %s)", variants[i].name,
              missing);
    }
    hs_unwind_init("fp");
    hs_unwind_set_skip_range(0, 0);
    n = p3(NULL, pcs);
    CHECK(find_in_order(pcs, n, chain, 3, &missing) || !FP_CHAIN_REQUIRED,
          "capture with fp: p1<-p2<-p3 not found (missing %s)", missing);
    if (verbose)
        print_stack("capture(fp)", pcs, n);
    hs_unwind_init(NULL);
}

static void test_variant(const variant_t *v)
{
    uintptr_t pcs[HS_MAX_DEPTH];
    const extent_t chain[] = {ex_f1, ex_f2, ex_f3, ex_main};
    const extent_t qchain[] = {ex_q1, ex_qcmp, ex_q3, ex_main};
    const char *missing = NULL;
    size_t n;

    n = f3(v->fn, pcs);
    CHECK(n >= 1 && n <= HS_MAX_DEPTH, "%s: chain returned %zu frames", v->name, n);
    if (v->must_be_exact && !find_in_order(pcs, n, chain, 4, &missing)) {
        CHECK(0, "%s: f1<-f2<-f3<-main not found in order (missing %s)", v->name, missing);
        print_stack(v->name, pcs, n);
    }
    if (verbose)
        print_stack(v->name, pcs, n);

    n = q3(v->fn, pcs);
    CHECK(n >= 1 && n <= HS_MAX_DEPTH, "%s: qsort chain returned %zu frames", v->name, n);
    if (v->must_be_exact && !find_in_order(pcs, n, qchain, 4, &missing)) {
        CHECK(0, "%s: q1<-q_cmp<-qsort<-q3<-main not found in order (missing %s)", v->name,
              missing);
        print_stack(v->name, pcs, n);
    }
    if (verbose)
        print_stack(v->name, pcs, n);

    n = v->fn(pcs, 1);
    CHECK(n == 1, "%s: max=1 returned %zu frames", v->name, n);
    n = v->fn(pcs, 0);
    CHECK(n == 0, "%s: max=0 returned %zu frames", v->name, n);
}

/* ---- skip range ---------------------------------------------------------------------- */

size_t s1(uintptr_t *pcs, size_t max);
size_t s2(uintptr_t *pcs, size_t max);

CHAIN size_t s1(uintptr_t *pcs, size_t max)
{
    size_t n = hs_unwind_capture(pcs, max);
    KEEP(n);
    return n;
}

CHAIN size_t s2(uintptr_t *pcs, size_t max)
{
    size_t n = s1(pcs, max);
    KEEP(n);
    return n;
}

static void test_capture(void)
{
    uintptr_t pcs[HS_MAX_DEPTH];
    size_t n;

    /* Which variant init selects: test_unwind_select. */
    for (size_t i = 0; i < NVARIANTS; i++) {
        CHECK(hs_unwind_init(variants[i].name) == 0, "init(%s) failed", variants[i].name);
        hs_unwind_warmup();

        /* Treat s1 as "the profiler": frames up to and including it must go. */
        hs_unwind_set_skip_range(ex_s1.lo, ex_s1.hi);
        n = s2(pcs, HS_MAX_DEPTH);
        if (variants[i].must_be_exact) {
            CHECK(n >= 2 && in_extent(pcs[0], &ex_s2), "%s: capture does not start in s2",
                  variants[i].name);
            if (n < 2 || !in_extent(pcs[0], &ex_s2))
                print_stack(variants[i].name, pcs, n);
        }
        /* fp may lose the frames past s1 (built without frame pointers) and then has
         * nothing left once the skip range is dropped. */
        n = s2(pcs, 3);
        CHECK(n <= 3 && (n >= 1 || !variants[i].must_be_exact),
              "%s: capture with max 3 returned %zu", variants[i].name, n);

        /* lo == hi: nothing dropped, so s1 is still on the stack. */
        hs_unwind_set_skip_range(0, 0);
        n = s2(pcs, HS_MAX_DEPTH);
        if (variants[i].must_be_exact) {
            const extent_t ex[] = {ex_s1, ex_s2};
            const char *missing = NULL;
            CHECK(find_in_order(pcs, n, ex, 2, &missing), "%s: no-skip capture lost %s",
                  variants[i].name, missing);
        }
    }
    hs_unwind_init(NULL);
}

/* ---- threads ------------------------------------------------------------------------- */

static void *thread_main(void *arg)
{
    uintptr_t pcs[HS_MAX_DEPTH];
    const variant_t *v = arg;
    const extent_t chain[] = {ex_f1, ex_f2, ex_f3};
    const char *missing = NULL;

    for (int i = 0; i < 2000; i++) {
        size_t n = f3(v->fn, pcs);
        if (n == 0 || (v->must_be_exact && !find_in_order(pcs, n, chain, 3, &missing))) {
            CHECK(0, "%s: bad capture in a thread (%zu frames)", v->name, n);
            break;
        }
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[6];

    for (size_t i = 0; i < 6; i++)
        CHECK(pthread_create(&th[i], NULL, thread_main, (void *)&variants[i % NVARIANTS]) == 0,
              "pthread_create");
    for (size_t i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
}

/* ---- dwarf against libgcc ------------------------------------------------------------ */

/* Both stacks of one capture point; both() fills them from two call sites in one frame. */
typedef struct {
    uintptr_t g[HS_MAX_DEPTH], d[HS_MAX_DEPTH], d3[3];
    size_t ng, nd, nd3;
} pair_t;

size_t both(pair_t *p);
size_t deep(int depth, pair_t *p);
size_t realigned(int x, pair_t *p);
size_t realigned_drap(int n, pair_t *p);

CHAIN size_t both(pair_t *p)
{
    p->ng = hs_unwind_libgcc(p->g, HS_MAX_DEPTH);
    p->nd = hs_unwind_dwarf(p->d, HS_MAX_DEPTH);
    p->nd3 = hs_unwind_dwarf(p->d3, 3); /* a short capture, from a third call site */
    KEEP(p->nd);
    return p->nd;
}

/*
 * libgcc's stack starts with its own frame and the call site in both(); dwarf's with its
 * call site in both(). From both()'s caller on, the two must be the same addresses, as
 * many of them, to the end of the stack.
 */
static int same_as_libgcc(const char *what, const pair_t *p)
{
    size_t k = 0;

    if (p->nd >= 2)
        while (k < p->ng && k < 4 && p->g[k] != p->d[1])
            k++;
    CHECK(p->nd3 == 3 && p->d3[1] == p->d[1] && p->d3[2] == p->d[2],
          "%s: a 3-frame dwarf capture (%zu frames) differs from the full one", what, p->nd3);
    if (p->nd >= 2 && k < p->ng && k < 4 && p->ng - k == p->nd - 1 &&
        memcmp(p->g + k, p->d + 1, (p->nd - 1) * sizeof(uintptr_t)) == 0)
        return 1;
    CHECK(0, "%s: dwarf (%zu frames) differs from libgcc (%zu frames)", what, p->nd, p->ng);
    print_stack("libgcc", p->g, p->ng);
    print_stack("dwarf", p->d, p->nd);
    return 0;
}

CHAIN size_t deep(int depth, pair_t *p)
{
    size_t n = depth > 0 ? deep(depth - 1, p) : both(p);
    KEEP(n);
    return n;
}

/* GCC realigns this frame with %rbp as frame pointer (CFA = rbp+16). */
CHAIN size_t realigned(int x, pair_t *p)
{
    char buf[256] __attribute__((aligned(64)));
    size_t n;

    memset(buf, x, sizeof(buf));
    __asm__ volatile("" : : "r"(buf) : "memory");
    n = both(p) + (size_t)buf[x & 255];
    KEEP(n);
    return n;
}

/* A VLA next to 32-byte aligned locals: GCC realigns through a DRAP register, and the
 * CFI says CFA = *(rbp - 16), rbp saved at *(rbp + 0). */
typedef double v4d __attribute__((vector_size(32)));

CHAIN size_t realigned_drap(int n, pair_t *p)
{
    v4d big[4];
    char vla[n];
    size_t r;

    for (int i = 0; i < 4; i++)
        big[i] = (v4d){n, n, n, n};
    memset(vla, n, (size_t)n);
    __asm__ volatile("" : : "r"(big), "r"(vla) : "memory");
    r = both(p) + (size_t)vla[n - 1] + (size_t)big[n & 3][1];
    KEEP(r);
    return r;
}

static extent_t ex_deep, ex_realigned, ex_drap, ex_sig_raiser;

static pair_t pair;

static void test_dwarf_exact(void)
{
    uint64_t fb = hs_unwind_dwarf_fallbacks();
    const char *missing = NULL;

    deep(40, &pair);
    CHECK(pair.nd >= 42, "dwarf: 40-deep recursion gave %zu frames", pair.nd);
    same_as_libgcc("40-deep recursion", &pair);
    hs_unwind_dwarf_invalidate(); /* cold cache: the rules are computed again */
    deep(40, &pair);
    same_as_libgcc("40-deep recursion, cold cache", &pair);

    realigned(7, &pair);
    CHECK(find_in_order(pair.d, pair.nd, &ex_realigned, 1, &missing), "realigned: lost");
    same_as_libgcc("realigned frame (rbp)", &pair);
    realigned_drap(21, &pair);
    CHECK(find_in_order(pair.d, pair.nd, &ex_drap, 1, &missing), "realigned_drap: lost");
    same_as_libgcc("realigned frame (DRAP)", &pair);
    printf("dwarf: fallbacks on ordinary and realigned frames: %lu\n",
           (unsigned long)(hs_unwind_dwarf_fallbacks() - fb));
    CHECK(hs_unwind_dwarf_fallbacks() == fb, "dwarf fell back %lu times on frames it reads",
          (unsigned long)(hs_unwind_dwarf_fallbacks() - fb));
}

/* ---- the main thread's bounds (udw_main_bounds, udw_extend) -------------------------- */

size_t padded(int n, pair_t *p);

/* 64 KiB of locals per level: the walk starts far below every capture before it. */
CHAIN size_t padded(int n, pair_t *p)
{
    volatile char pad[64 * 1024];
    pad[0] = (char)n;
    pad[sizeof(pad) - 1] = (char)n;
    size_t r = (n > 0 ? padded(n - 1, p) : deep(5, p)) + (size_t)pad[0];
    KEEP(r);
    return r;
}

/* The main thread's stack grows below what its first capture checked: the walk extends
 * its bounds and does not fall back. */
static void test_dwarf_main_deeper(void)
{
    uint64_t fb = hs_unwind_dwarf_fallbacks();
    padded(8, &pair);
    same_as_libgcc("512 KiB below the main thread's first capture", &pair);
    CHECK(hs_unwind_dwarf_fallbacks() == fb, "main thread, deeper stack: %lu fallbacks",
          (unsigned long)(hs_unwind_dwarf_fallbacks() - fb));
}

/* A child forked by a thread that never captured: its one thread is the process's first
 * by number, on a stack of its own, not the initial one. */
static void *fork_from_thread(void *arg)
{
    int *status = arg;
    pid_t pid = fork();
    if (pid == 0) {
        deep(10, &pair);
        int ok = pair.nd > 12 && same_as_libgcc("a fork's child on its thread's stack", &pair);
        _exit(ok ? 0 : 1);
    }
    *status = -1;
    if (pid > 0)
        waitpid(pid, status, 0);
    return NULL;
}

static void test_dwarf_fork_child(void)
{
    pthread_t th;
    int status = -1;
    CHECK(pthread_create(&th, NULL, fork_from_thread, &status) == 0, "pthread_create");
    pthread_join(th, NULL);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork child's capture (status %d)",
          status);
}

/* A stack of its own placed 4 MiB below the main thread's, inside the span its stack
 * may grow into: a walk from there must not read up through the hole to the main stack
 * (pthread_getattr_np's bounds, taken before the mapping existed, would have let it). */
static ucontext_t below_main_uc, below_main_back;
static int below_main_errno;

static void below_main_run(void)
{
    errno = 4242;
    both(&pair);
    below_main_errno = errno;
}

static void test_dwarf_stack_below_main(void)
{
    size_t size = 256 * 1024;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)4095;
    void *want = (void *)(sp - (4ul << 20)), *m;
    uint64_t fb = hs_unwind_dwarf_fallbacks();

    m = mmap(want, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
             -1, 0);
    if (m != want) {
        printf("dwarf: no room 4 MiB below the main stack, not tested\n");
        if (m != MAP_FAILED)
            munmap(m, size);
        return;
    }
    getcontext(&below_main_uc);
    below_main_uc.uc_stack.ss_sp = m;
    below_main_uc.uc_stack.ss_size = size;
    below_main_uc.uc_link = &below_main_back;
    makecontext(&below_main_uc, below_main_run, 0);
    CHECK(swapcontext(&below_main_back, &below_main_uc) == 0, "swapcontext");
    munmap(m, size);
    CHECK(hs_unwind_dwarf_fallbacks() > fb, "a stack below the main one: dwarf did not fall back");
    CHECK(below_main_errno == 4242, "a stack below the main one: errno %d", below_main_errno);
    CHECK(pair.nd > 0 && pair.nd <= pair.ng, "a stack below the main one: %zu frames", pair.nd);
}

/* ---- signal frames: the fallback ------------------------------------------------------ */

size_t sig_raiser(int sig);

static void on_signal(int sig)
{
    (void)sig;
    both(&pair);
}

CHAIN size_t sig_raiser(int sig)
{
    size_t n;

    pair.nd = pair.ng = 0;
    raise(sig);
    n = pair.nd;
    KEEP(n);
    return n;
}

/* A handler's stack crosses the kernel's signal frame (glibc's __restore_rt, CIE "zRS"):
 * dwarf hands both captures of both() to libgcc, which must reach the function that
 * raised the signal. */
static void test_dwarf_signal(int on_altstack)
{
    static char alt[64 * 1024];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0};
    struct sigaction sa, old;
    uint64_t fb = hs_unwind_dwarf_fallbacks();
    const char *missing = NULL;
    const char *what = on_altstack ? "signal handler on a sigaltstack" : "signal handler";

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = on_altstack ? SA_ONSTACK : 0;
    if (on_altstack)
        CHECK(sigaltstack(&ss, NULL) == 0, "sigaltstack");
    CHECK(sigaction(SIGUSR1, &sa, &old) == 0, "sigaction");
    sig_raiser(SIGUSR1);
    sigaction(SIGUSR1, &old, NULL);
    if (on_altstack) {
        ss.ss_flags = SS_DISABLE;
        sigaltstack(&ss, NULL);
    }
    CHECK(find_in_order(pair.d, pair.nd, &ex_sig_raiser, 1, &missing), "%s: dwarf lost %s", what,
          missing);
    same_as_libgcc(what, &pair);
    CHECK(hs_unwind_dwarf_fallbacks() == fb + 2, "%s: %lu fallbacks, expected 2", what,
          (unsigned long)(hs_unwind_dwarf_fallbacks() - fb));
}

/* ---- dwarf's cache under concurrent use and flushes ---------------------------------- */

static int flushing; /* atomic: the flusher's stop flag */

static void *flusher(void *arg)
{
    size_t *rounds = arg;

    while (__atomic_load_n(&flushing, __ATOMIC_RELAXED)) {
        hs_unwind_dwarf_invalidate();
        (*rounds)++;
    }
    return NULL;
}

static void test_dwarf_threads(void)
{
    pthread_t th[6], fl;
    size_t rounds = 0;

    __atomic_store_n(&flushing, 1, __ATOMIC_RELAXED);
    CHECK(pthread_create(&fl, NULL, flusher, &rounds) == 0, "pthread_create");
    for (size_t i = 0; i < 6; i++)
        CHECK(pthread_create(&th[i], NULL, thread_main, (void *)&variants[0]) == 0,
              "pthread_create");
    for (size_t i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
    __atomic_store_n(&flushing, 0, __ATOMIC_RELAXED);
    pthread_join(fl, NULL);
    if (verbose)
        fprintf(stderr, "  dwarf threads: %zu cache flushes meanwhile\n", rounds);
}

/* A thread's stack ends in clone3, whose CFI marks the return address undefined. */
static void *thread_exact(void *arg)
{
    pair_t *p = arg;

    deep(10, p);
    return NULL;
}

static void test_dwarf_thread_exact(void)
{
    static pair_t tp;
    pthread_t th;

    CHECK(pthread_create(&th, NULL, thread_exact, &tp) == 0, "pthread_create");
    pthread_join(th, NULL);
    same_as_libgcc("thread", &tp);
}

/* ---- cost of a ~40-frame capture ------------------------------------------------------- */

size_t rec(int depth, variant_fn v, uint64_t *ns, size_t rounds);
size_t rec_fp(int depth, variant_fn v, uint64_t *ns, size_t rounds);

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t bench_max = HS_MAX_DEPTH; /* frames per timed capture */
static int bench_cold;                  /* flush dwarf's rule cache before each one */

FPCHAIN static size_t time_captures(variant_fn v, uint64_t *ns, size_t rounds)
{
    uintptr_t pcs[HS_MAX_DEPTH];
    size_t n = 0;

    for (size_t i = 0; i < rounds; i++) {
        uint64_t t0;

        if (bench_cold)
            hs_unwind_dwarf_invalidate();
        t0 = now_ns();
        n = v(pcs, bench_max);
        ns[i] = now_ns() - t0;
    }
    return n;
}

/* The same recursion without and with frame pointers (fp only sees the latter). */
CHAIN size_t rec(int depth, variant_fn v, uint64_t *ns, size_t rounds)
{
    size_t n = depth > 0 ? rec(depth - 1, v, ns, rounds) : time_captures(v, ns, rounds);
    KEEP(n);
    return n;
}

FPCHAIN size_t rec_fp(int depth, variant_fn v, uint64_t *ns, size_t rounds)
{
    size_t n = depth > 0 ? rec_fp(depth - 1, v, ns, rounds) : time_captures(v, ns, rounds);
    KEEP(n);
    return n;
}

static void bench_one(const char *what, const variant_t *v, int depth, size_t rounds)
{
    static uint64_t ns[4001];
    size_t n = v->must_be_exact ? rec(depth, v->fn, ns, rounds) : rec_fp(depth, v->fn, ns, rounds);

    qsort(ns, rounds, sizeof(ns[0]), cmp_u64);
    printf("unwind %-15s %3zu frames: median %6lu ns per capture (p90 %lu ns)\n", what, n,
           (unsigned long)ns[rounds / 2], (unsigned long)ns[rounds * 9 / 10]);
}

static void bench(void)
{
    for (size_t i = 0; i < NVARIANTS; i++)
        bench_one(variants[i].name, &variants[i], 38, 4001);
    /* The target: at most 2 us for a 64-frame capture. */
    bench_max = 64;
    bench_one("dwarf", &variants[0], 70, 4001);
    bench_one("libgcc", &variants[2], 70, 401);
    bench_cold = 1; /* every rule computed from .eh_frame again */
    bench_one("dwarf (cold)", &variants[0], 70, 401);
    bench_cold = 0;
    bench_max = HS_MAX_DEPTH;
}

int main(void)
{
    int rc = elf_open();

    verbose = getenv("HS_TEST_VERBOSE") != NULL;

    if (rc != 0) {
        fprintf(stderr, "FAIL: cannot read /proc/self/exe: %s\n", strerror(-rc));
        return 1;
    }
    ex_f1 = extent("f1", (void *)f1);
    ex_f2 = extent("f2", (void *)f2);
    ex_f3 = extent("f3", (void *)f3);
    ex_main = extent("main", (void *)main);
    ex_q1 = extent("q1", (void *)q1);
    ex_qcmp = extent("q_cmp", (void *)q_cmp);
    ex_q3 = extent("q3", (void *)q3);
    ex_s1 = extent("s1", (void *)s1);
    ex_s2 = extent("s2", (void *)s2);
    ex_p1 = extent("p1", (void *)p1);
    ex_p2 = extent("p2", (void *)p2);
    ex_p3 = extent("p3", (void *)p3);
    ex_fp_with_rbp = extent("fp_with_rbp", (void *)fp_with_rbp);
    ex_deep = extent("deep", (void *)deep);
    ex_realigned = extent("realigned", (void *)realigned);
    ex_drap = extent("realigned_drap", (void *)realigned_drap);
    ex_sig_raiser = extent("sig_raiser", (void *)sig_raiser);

    for (size_t i = 0; i < NVARIANTS; i++)
        test_variant(&variants[i]);
    test_fp_chain();
    test_fp_garbage();
    test_capture();
    test_threads();
    test_dwarf_exact();
    test_dwarf_main_deeper();
    test_dwarf_fork_child();
    test_dwarf_stack_below_main();
    test_dwarf_signal(0);
    test_dwarf_signal(1);
    test_dwarf_threads();
    test_dwarf_thread_exact();
    bench();
    return hs_check_done("test_unwind");
}
