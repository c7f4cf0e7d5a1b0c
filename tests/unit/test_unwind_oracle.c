/*
 * Whole-stack oracle for hs_unwind_capture (src/preload/unwind/unwind.c): glibc's backtrace()
 * (execinfo) and hs_unwind_capture run from the same call instruction of the same chain
 * (main <- f1 <- f2 <- f3, and the same chain on a pthread), through one indirect call,
 * so their stacks must hold the same return addresses, root frames included
 * (__libc_start_main and _start on the main thread, start_thread and clone3 on the other).
 * dwarf and libgcc must give exactly backtrace()'s stack, frame for frame and of the same
 * length; a variant that drops the outermost frame fails here. fp is only required to
 * match from f3 up to and including main (or the thread's function): the chain is built
 * with frame pointers, glibc's frames above it are not, so past main fp may stop or
 * invent frames. Addresses may differ by one (a variant that reports return address
 * minus one). Both capture wrappers live in their own section, which is the skip range,
 * as the library's own text is in the preloaded library.
 */
#define _GNU_SOURCE
#include "unwind/unwind.h"

#include "check.h"

#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORACLE __attribute__((noinline, noclone, section("hs_oracle_text")))
#if defined(__clang__) /* no per-function frame-pointer switch: fp is not required */
#define CHAIN __attribute__((noinline, disable_tail_calls))
#define FP_REQUIRED 0
#else
#define CHAIN __attribute__((noipa, optimize("no-omit-frame-pointer")))
#define FP_REQUIRED 1
#endif
/* Keeps a call from becoming a tail call, so the caller's frame stays on the stack. */
#define KEEP(x) __asm__ volatile("" : "+r"(x)::"memory")

extern const char __start_hs_oracle_text[], __stop_hs_oracle_text[];

typedef size_t (*capture_fn)(uintptr_t *pcs, size_t max);

static int in_oracle_text(uintptr_t pc)
{
    return pc > (uintptr_t)__start_hs_oracle_text && pc <= (uintptr_t)__stop_hs_oracle_text;
}

/* backtrace()'s stack without the frames in this section (its own return address). */
ORACLE static size_t oracle_backtrace(uintptr_t *pcs, size_t max)
{
    void *buf[HS_MAX_DEPTH + 8];
    int n = backtrace(buf, HS_MAX_DEPTH + 8);
    size_t skip = 0, k = 0;

    while (skip < (size_t)n && in_oracle_text((uintptr_t)buf[skip]))
        skip++;
    for (size_t i = skip; i < (size_t)n && k < max; i++)
        pcs[k++] = (uintptr_t)buf[i];
    KEEP(k);
    return k;
}

ORACLE CHAIN static size_t oracle_capture(uintptr_t *pcs, size_t max)
{
    size_t n = hs_unwind_capture(pcs, max);

    KEEP(n);
    return n;
}

typedef struct {
    capture_fn fn;
    uintptr_t pcs[HS_MAX_DEPTH];
    size_t n;
    uintptr_t root_caller; /* return address in main or the thread function */
} shot_t;

CHAIN static void f3(shot_t *s)
{
    s->n = s->fn(s->pcs, HS_MAX_DEPTH); /* the one call site both captures share */
    KEEP(s);
}

CHAIN static void f2(shot_t *s)
{
    f3(s);
    KEEP(s);
}

CHAIN static void f1(shot_t *s)
{
    s->root_caller = (uintptr_t)__builtin_return_address(0);
    f2(s);
    KEEP(s);
}

static int same_pc(uintptr_t a, uintptr_t b)
{
    return a == b || a + 1 == b || b + 1 == a;
}

static void print_stack(const char *what, const uintptr_t *pcs, size_t n)
{
    char **names = backtrace_symbols((void *const *)pcs, (int)n);

    fprintf(stderr, "  %s (%zu frames):\n", what, n);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "    #%zu %#lx %s\n", i, (unsigned long)pcs[i], names ? names[i] : "");
    free(names);
}

/* Compares variant against oracle: all of it, or up to the frame in main (fp). */
static void compare(const char *where, const char *variant, const shot_t *want, const shot_t *got,
                    int whole)
{
    size_t upto = want->n, bad = SIZE_MAX;

    if (!whole) {
        for (upto = 0; upto < want->n && want->pcs[upto] != want->root_caller; upto++)
            ;
        CHECK(upto < want->n, "%s: the oracle has no frame in main", where);
        upto++;
    }
    for (size_t i = 0; i < upto && bad == SIZE_MAX; i++)
        if (i >= got->n || !same_pc(want->pcs[i], got->pcs[i]))
            bad = i;
    if (whole && bad == SIZE_MAX && got->n != want->n)
        bad = got->n < want->n ? got->n : want->n;
    CHECK(bad == SIZE_MAX, "%s, %s: differs from backtrace() at frame %zu (%zu vs %zu frames)",
          where, variant, bad, got->n, want->n);
    if (bad != SIZE_MAX) {
        print_stack("backtrace()", want->pcs, want->n);
        print_stack(variant, got->pcs, got->n);
    }
}

static const struct {
    const char *name;
    int whole;
} variants[] = {{"dwarf", 1}, {"libgcc", 1}, {"fp", 0}};

static pthread_mutex_t variant_lock = PTHREAD_MUTEX_INITIALIZER;

#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

/* Shot 0 is the oracle, shot 1 + v variant v: every shot leaves main (or the thread's
 * function) from the one call of f1 below, so all share their return addresses. */
static void run_all(const char *where)
{
    static shot_t shots[1 + NVARIANTS]; /* 2 KiB each: kept off the thread's stack */

    pthread_mutex_lock(&variant_lock);
    memset(shots, 0, sizeof(shots));
    /* A volatile counter: the loop is not unrolled or peeled into two calls of f1. */
    for (volatile size_t k = 0; k < 1 + NVARIANTS; k++) {
        size_t i = k;

        shots[i].fn = i == 0 ? oracle_backtrace : oracle_capture;
        if (i > 0)
            CHECK(hs_unwind_init(variants[i - 1].name) == 0, "init %s", variants[i - 1].name);
        f1(&shots[k]);
    }
    CHECK(shots[0].n >= 6, "%s: backtrace() gave %zu frames", where, shots[0].n);
    for (size_t v = 0; v < NVARIANTS; v++) {
        if (!variants[v].whole && !FP_REQUIRED)
            continue;
        CHECK(shots[1 + v].root_caller == shots[0].root_caller, "%s: two call sites", where);
        compare(where, variants[v].name, &shots[0], &shots[1 + v], variants[v].whole);
    }
    pthread_mutex_unlock(&variant_lock);
}

CHAIN static void *thread_main(void *arg)
{
    run_all("thread");
    KEEP(arg);
    return arg;
}

CHAIN int main(void)
{
    pthread_t th;
    void *warm[4];

#ifdef __SANITIZE_ADDRESS__
    /* ASan intercepts backtrace() (its own frame on top), and its instrumented startup
     * code ends the stack differently: the oracle is the plain build's, where the
     * unwinder is built as the preloaded library ships it. */
    printf("SKIP: backtrace() is ASan's interceptor in this build\n");
    return 77;
#endif
    (void)backtrace(warm, 4); /* loads libgcc_s now, not inside the first oracle */
    hs_unwind_set_skip_range((uintptr_t)__start_hs_oracle_text, (uintptr_t)__stop_hs_oracle_text);
    hs_unwind_warmup();
    run_all("main thread");
    CHECK(pthread_create(&th, NULL, thread_main, NULL) == 0, "pthread_create");
    pthread_join(th, NULL);
    return hs_check_done("test_unwind_oracle");
}
