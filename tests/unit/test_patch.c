/*
 * patch.c: functions of this (PIE) executable with known prologues, written below in
 * assembly, and two of libc's, are patched so that a counting hook runs and calls the
 * original through the trampoline; each is called before, while and after patched with
 * the same results, and the original bytes are back after hs_patch_remove. Refusals are
 * checked by their reason. Four threads call a function while it is patched and
 * unpatched 1,000 times each. hs_patch_install_code's own code beside the trampoline runs
 * and goes on into it, is kept across remove and reinstall, and is not asked for where it
 * declines or the jump is the far form. `test_patch --bench N P` runs N calls unpatched (P=0) or
 * patched with a pass-through hook (P=1), for callgrind (see patch.c's opening comment).
 */
#define _GNU_SOURCE
#include "check.h"
#include "reach/patch.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)

/* Every test function takes (int a, int b, int c, long d) in edi, esi, edx, rcx and
   returns an int; pt_<name>_end marks its end, for the body sweep's extent. */
// clang-format off
#define PT_FN(name, body)                                                                    \
    "    .text\n    .p2align 4\n    .globl " #name "\n    .type " #name ", @function\n"       \
    #name ":\n" body "\n" #name "_end:\n    .size " #name ", . - " #name "\n"

__asm__(
    "    .data\n    .p2align 3\npt_data: .long 1000\n    .long 0\n"
    "pt_dispatch: .quad pt_double\n"
    /* endbr64 first: at = +4; mov(2) + add(3) = 5. Returns a + 7. */
    PT_FN(pt_endbr, "    endbr64\n    mov %edi, %eax\n    add $7, %eax\n    ret")
    /* a RIP-relative load as the first instruction. Returns a + 1000. */
    PT_FN(pt_riprel, "    mov pt_data(%rip), %eax\n    add %edi, %eax\n    ret")
    /* Chromium's malloc shape: a dispatch pointer loaded RIP-relative at +8 and called
       through. Returns 2a. */
    PT_FN(pt_chromium, "    endbr64\n    push %rbp\n    mov %rsp, %rbp\n"
                       "    mov pt_dispatch(%rip), %rax\n    call *%rax\n"
                       "    pop %rbp\n    ret")
    PT_FN(pt_double, "    lea (%rdi,%rdi), %eax\n    ret")
    /* a short jcc out of the prologue. Returns a < 0 ? -1 : a + 1. */
    PT_FN(pt_jcc, "    test %edi, %edi\n    js 1f\n    lea 1(%rdi), %eax\n    ret\n"
                  "1:  mov $-1, %eax\n    ret")
    /* jrcxz to a later instruction of the prologue itself. Returns (d ? b : a) + 1. */
    PT_FN(pt_jrcxz, "    jrcxz 1f\n    mov %esi, %edi\n1:  lea 1(%rdi), %eax\n    ret")
    /* call rel32 inside the prologue. Returns 4a. */
    PT_FN(pt_call, "    push %rbx\n    mov %edi, %ebx\n    call pt_triple\n"
                   "    add %ebx, %eax\n    pop %rbx\n    ret")
    PT_FN(pt_triple, "    lea (%rdi,%rdi,2), %eax\n    ret")
    /* call as the first instruction after endbr64 (an mcount-like shape). Returns 3a+5. */
    PT_FN(pt_callfirst, "    endbr64\n    call pt_triple\n    add $5, %eax\n    ret")
    /* a loop back to +2, inside the patched bytes: refused. Returns a << b (b >= 1). */
    PT_FN(pt_backjump, "    mov %edi, %eax\n1:  add %eax, %eax\n    dec %esi\n    jnz 1b\n"
                       "    ret")
    /* ret, then code (no padding to take the jump): too short */
    PT_FN(pt_ret, "    ret\n    mov %edi, %eax\n    ret")
    /* 3 bytes and the alignment padding after them: patched over the padding. Returns a. */
    PT_FN(pt_retpad, "    mov %edi, %eax\n    ret")
    /* a 2-byte jump over padding to the body, as a malloc that tail-calls it. Returns 3a. */
    PT_FN(pt_tailjmp, "    jmp 1f\n    .p2align 4\n1:  lea (%rdi,%rdi,2), %eax\n    ret")
    /* 8 bytes then ret, then code: too short for the 14-byte form */
    PT_FN(pt_short14, "    mov pt_data(%rip), %eax\n    add %edi, %eax\n    ret\n    ud2")
    /* 14 bytes with a RIP-relative load: a far trampoline cannot reach pt_data */
    PT_FN(pt_ripfar, "    mov pt_data(%rip), %eax\n    add %edi, %eax\n    add $1, %eax\n"
                     "    add $2, %eax\n    ret")
    PT_FN(pt_ud2, "    xor %eax, %eax\n    ud2")
    /* 0x06 (push es) does not exist in 64-bit mode */
    PT_FN(pt_baddec, "    xor %eax, %eax\n    .byte 0x06\n    ret")
    /* 14 bytes for the absolute form: returns a + 10. */
    PT_FN(pt_abs, "    mov %edi, %eax\n    add $1, %eax\n    add $2, %eax\n"
                  "    add $3, %eax\n    add $4, %eax\n    ret")
    /* 14 bytes with a jcc and a call, for a far trampoline. Returns a < 0 ? -1 : 4a. */
    PT_FN(pt_absbr, "    test %edi, %edi\n    js 1f\n    push %rbx\n    mov %edi, %ebx\n"
                    "    call pt_triple\n    add %ebx, %eax\n    pop %rbx\n    ret\n"
                    "1:  mov $-1, %eax\n    ret")
    /* one 6-byte instruction after endbr64: no thread can be between two replaced
       instructions. Returns a + 0x12345. */
    PT_FN(pt_mt, "    endbr64\n    lea 0x12345(%rdi), %eax\n    ret")
    /* for hs_patch_install_code: return a + 0x1055 (a + 0x1066); a 14-byte one for the
       far form */
    PT_FN(pt_code, "    endbr64\n    lea 0x1055(%rdi), %eax\n    ret")
    PT_FN(pt_code2, "    endbr64\n    lea 0x1066(%rdi), %eax\n    ret")
    PT_FN(pt_codefar, "    mov %edi, %eax\n    add $1, %eax\n    add $2, %eax\n"
                      "    add $3, %eax\n    add $4, %eax\n    ret")
    /* the pass-through hook of the benchmark: jmp *pt_bench_orig(%rip) */
    PT_FN(pt_bench_hook, "    jmp *pt_bench_orig(%rip)")
    /* the benchmark's callee: returns a + 1 */
    PT_FN(pt_bench, "    endbr64\n    mov %edi, %eax\n    add $1, %eax\n    ret")
    "    .bss\n    .p2align 3\n    .globl pt_bench_orig\npt_bench_orig: .quad 0\n"
    "    .text\n");
// clang-format on

typedef int pt_fn_t(int, int, int, long);
#define PT_DECL(name)                                                                              \
    extern pt_fn_t name;                                                                           \
    extern char name##_end[];
PT_DECL(pt_endbr)
PT_DECL(pt_riprel)
PT_DECL(pt_chromium)
PT_DECL(pt_jcc)
PT_DECL(pt_jrcxz)
PT_DECL(pt_call)
PT_DECL(pt_callfirst)
PT_DECL(pt_backjump)
PT_DECL(pt_ret)
PT_DECL(pt_retpad)
PT_DECL(pt_tailjmp)
PT_DECL(pt_short14)
PT_DECL(pt_ripfar)
PT_DECL(pt_ud2)
PT_DECL(pt_baddec)
PT_DECL(pt_abs)
PT_DECL(pt_absbr)
PT_DECL(pt_mt)
PT_DECL(pt_bench_hook)
PT_DECL(pt_bench)
extern void *pt_bench_orig;

/* The hook: counts, then calls the original through the trampoline. */
static pt_fn_t *pt_orig;
static long pt_calls;
static int pt_hook(int a, int b, int c, long d)
{
    __atomic_fetch_add(&pt_calls, 1, __ATOMIC_RELAXED);
    return pt_orig(a, b, c, d);
}

typedef struct {
    int a, b, c;
    long d;
} pt_args_t;

static const pt_args_t pt_argv[] = {{5, 3, 0, 0}, {-4, 2, 0, 1}, {0, 9, 0, 7}, {1000, 1, 0, 0}};
#define PT_NARGS (int)(sizeof(pt_argv) / sizeof(pt_argv[0]))

/* Calls fn on every argument set through a volatile pointer (no inlining, no constant
   folding); writes the results to out. */
static void pt_run(pt_fn_t *fn, int *out)
{
    pt_fn_t *volatile f = fn;
    for (int i = 0; i < PT_NARGS; i++)
        out[i] = f(pt_argv[i].a, pt_argv[i].b, pt_argv[i].c, pt_argv[i].d);
}

/* Patches fn, checks the hook runs once per call with the original's results, removes the
   patch and checks the bytes and results are back. */
static void pt_roundtrip(const char *name, pt_fn_t *fn, size_t size, unsigned flags)
{
    int before[PT_NARGS], during[PT_NARGS], after[PT_NARGS];
    uint8_t bytes[24];
    char why[160];
    memcpy(bytes, (void *)fn, sizeof(bytes));
    pt_run(fn, before);
    pt_calls = 0;
    void *orig = NULL;
    int rc = hs_patch_install_ex((void *)fn, size, flags, (void *)pt_hook, &orig, why, sizeof(why));
    CHECK(rc == 0, "%s: install: %d (%s)", name, rc, why);
    if (rc != 0)
        return;
    pt_orig = (pt_fn_t *)orig;
    CHECK(memcmp(orig, "\xf3\x0f\x1e\xfa", 4) == 0, "%s: the trampoline starts with endbr64", name);
    if (memcmp(bytes, "\xf3\x0f\x1e\xfa", 4) == 0)
        CHECK(memcmp((void *)fn, bytes, 4) == 0 && ((uint8_t *)fn)[4] == 0xe9,
              "%s: endbr64 kept, jmp after it", name);
    if (!(flags & HS_PATCH_FORCE_ABS)) { /* near this PIE executable, not near libheapsift */
        intptr_t d = (intptr_t)orig - (intptr_t)fn;
        CHECK(d > -(1l << 31) && d < (1l << 31), "%s: trampoline within 2 GB", name);
    }
    if (flags & HS_PATCH_FORCE_ABS) { /* the far forms of jcc and call run too */
        intptr_t d = (intptr_t)orig - (intptr_t)fn;
        CHECK(d < -(1l << 31) || d > (1l << 31), "%s: trampoline out of rel32 reach", name);
        CHECK(memcmp((void *)fn, "\xff\x25\0\0\0\0", 6) == 0, "%s: jmp [rip] at entry", name);
    }
    pt_run(fn, during);
    CHECK(pt_calls == PT_NARGS, "%s: hook ran %ld times, not %d", name, pt_calls, PT_NARGS);
    for (int i = 0; i < PT_NARGS; i++)
        CHECK(during[i] == before[i], "%s(%d): %d patched, %d before", name, i, during[i],
              before[i]);
    CHECK(hs_patch_install_ex((void *)fn, size, flags, (void *)pt_hook, &orig, why, sizeof(why)) ==
              -EEXIST,
          "%s: a second install is refused", name);
    CHECK(hs_patch_remove((void *)fn) == 0, "%s: remove", name);
    CHECK(memcmp((void *)fn, bytes, sizeof(bytes)) == 0, "%s: original bytes back", name);
    pt_calls = 0;
    pt_run(fn, after);
    CHECK(pt_calls == 0, "%s: hook ran after remove", name);
    for (int i = 0; i < PT_NARGS; i++)
        CHECK(after[i] == before[i], "%s(%d): %d after, %d before", name, i, after[i], before[i]);
    CHECK(hs_patch_remove((void *)fn) == -ENOENT, "%s: second remove", name);
}

#define PT_SIZE(name) ((size_t)(name##_end - (char *)name))

/* A refusal: the rc, a reason containing want, and the bytes untouched. */
static void pt_refused(const char *name, pt_fn_t *fn, size_t size, unsigned flags, const char *want)
{
    char why[160] = "";
    uint8_t bytes[8];
    void *orig = NULL;
    memcpy(bytes, (void *)fn, sizeof(bytes));
    int rc = hs_patch_install_ex((void *)fn, size, flags, (void *)pt_hook, &orig, why, sizeof(why));
    CHECK(rc == -EINVAL, "%s: refused: rc %d", name, rc);
    CHECK(strstr(why, want) != NULL, "%s: reason '%s' lacks '%s'", name, why, want);
    CHECK(memcmp((void *)fn, bytes, sizeof(bytes)) == 0, "%s: bytes untouched", name);
    printf("%s refused: %s\n", name, why);
}

static void pt_test_shapes(void)
{
    pt_roundtrip("pt_endbr", pt_endbr, PT_SIZE(pt_endbr), 0);
    pt_roundtrip("pt_riprel", pt_riprel, PT_SIZE(pt_riprel), 0);
    pt_roundtrip("pt_chromium", pt_chromium, PT_SIZE(pt_chromium), 0);
    pt_roundtrip("pt_jcc", pt_jcc, PT_SIZE(pt_jcc), 0);
    pt_roundtrip("pt_jrcxz", pt_jrcxz, PT_SIZE(pt_jrcxz), 0);
    pt_roundtrip("pt_call", pt_call, PT_SIZE(pt_call), 0);
    pt_roundtrip("pt_callfirst", pt_callfirst, PT_SIZE(pt_callfirst), 0);
    pt_roundtrip("pt_retpad", pt_retpad, PT_SIZE(pt_retpad), 0);
    pt_roundtrip("pt_tailjmp", pt_tailjmp, PT_SIZE(pt_tailjmp), 0);
    /* again: the same slot is reused, the results hold */
    pt_roundtrip("pt_chromium again", pt_chromium, PT_SIZE(pt_chromium), 0);
    /* the 14-byte absolute jump at the entry, trampoline anywhere */
    pt_roundtrip("pt_abs (absolute)", pt_abs, PT_SIZE(pt_abs), HS_PATCH_FORCE_ABS);
    pt_roundtrip("pt_absbr (absolute)", pt_absbr, PT_SIZE(pt_absbr), HS_PATCH_FORCE_ABS);

    pt_refused("pt_backjump", pt_backjump, PT_SIZE(pt_backjump), 0,
               "back into the patched bytes at +2");
    pt_refused("pt_backjump (size unknown)", pt_backjump, 0, 0,
               "back into the patched bytes at +2");
    pt_refused("pt_ret", pt_ret, PT_SIZE(pt_ret), 0, "too short: ret at +0");
    pt_refused("pt_ud2", pt_ud2, PT_SIZE(pt_ud2), 0, "ud2 at +2");
    pt_refused("pt_baddec", pt_baddec, PT_SIZE(pt_baddec), 0,
               "the decoder refuses the bytes at +2");
    pt_refused("pt_short14 (absolute)", pt_short14, PT_SIZE(pt_short14), HS_PATCH_FORCE_ABS,
               "too short: ret at +8 ends the code before the 14 bytes");
    pt_refused("pt_ripfar (absolute)", pt_ripfar, PT_SIZE(pt_ripfar), HS_PATCH_FORCE_ABS,
               "RIP-relative operand at +0 is out of reach of the trampoline");
}

/* A thread stopped at +5 of pt_chromium (after push rbp) resumes at the copy of
   mov rbp,rsp: endbr64 (4) + push (1) into the trampoline. */
static void pt_test_fixup(void)
{
    void *orig = NULL;
    char why[160];
    int rc = hs_patch_install_ex((void *)pt_chromium, PT_SIZE(pt_chromium), 0, (void *)pt_hook,
                                 &orig, why, sizeof(why));
    CHECK(rc == 0, "fixup: install %d (%s)", rc, why);
    uintptr_t fn = (uintptr_t)pt_chromium;
    CHECK(hs_patch_fixup_pc(fn + 5) == (uintptr_t)orig + 5, "fixup +5");
    CHECK(hs_patch_fixup_pc(fn + 8) == (uintptr_t)orig + 8, "fixup +8");
    CHECK(hs_patch_fixup_pc(fn + 4) == 0 && hs_patch_fixup_pc(fn + 15) == 0, "no fixup");
    hs_patch_remove((void *)pt_chromium);
    CHECK(hs_patch_fixup_pc(fn + 5) == 0, "no fixup once removed");
}

/* hs_patch_install_code: the entry jumps to code of the hook's own beside the trampoline,
   which counts a call with a >= 0 and goes on into the relocated prologue, and sends a < 0
   to the hook through the stub's route; kept across remove and reinstall; an emitter that
   declines, and the far form, leave the entry jumping to the stub. */
PT_DECL(pt_code)
PT_DECL(pt_code2)
PT_DECL(pt_codefar)
static pt_fn_t *pt_code_orig;
static long pt_code_hooks, pt_code_runs, pt_code_emits;
static int pt_code_hook(int a, int b, int c, long d)
{
    pt_code_hooks++;
    return pt_code_orig(a, b, c, d);
}

static void pt_code_put(uint8_t *buf, size_t *n, const void *b, size_t len)
{
    memcpy(buf + *n, b, len);
    *n += len;
}

static int pt_code_emit(void *arg, uintptr_t at, uintptr_t body, uint8_t *buf, size_t cap)
{
    size_t n = 0;
    uintptr_t runs = (uintptr_t)&pt_code_runs, hook = (uintptr_t)pt_code_hook;
    pt_code_emits++;
    if (arg == NULL || cap < 64)
        return 0;
    /* cmp $0, %edi; jl slow; push %rax; movabs $runs, %rax; lock incq (%rax); pop %rax */
    pt_code_put(buf, &n, "\x83\xff\x00\x7c\x15\x50\x48\xb8", 8);
    pt_code_put(buf, &n, &runs, 8);
    pt_code_put(buf, &n, "\xf0\x48\xff\x00\x58\xe9", 6);
    int32_t rel = (int32_t)(int64_t)(body - (at + n + 4)); /* jmp body */
    pt_code_put(buf, &n, &rel, 4);
    pt_code_put(buf, &n, "\xff\x25\x00\x00\x00\x00", 6); /* slow: jmp *hook */
    pt_code_put(buf, &n, &hook, 8);
    return (int)n;
}

/* Where the jmp rel32 at fn + 4 (after its endbr64) goes. */
static uintptr_t pt_code_dest(pt_fn_t *fn)
{
    const uint8_t *c = (const uint8_t *)fn + 4;
    int32_t rel;
    memcpy(&rel, c + 1, 4);
    return c[0] == 0xe9 ? (uintptr_t)(c + 5) + (intptr_t)rel : 0;
}

static void pt_test_code(void)
{
    void *orig = NULL;
    char why[160];
    int rc = hs_patch_install_code((void *)pt_code, PT_SIZE(pt_code), 0, pt_code_emit, "yes",
                                   (void *)pt_code_hook, &orig, NULL, NULL, why, sizeof(why));
    CHECK(rc == 0, "code: install %d (%s)", rc, why);
    pt_code_orig = (pt_fn_t *)orig;
    pt_fn_t *volatile fn = pt_code;
    uintptr_t dest = pt_code_dest(pt_code);
    CHECK(dest != 0 && dest != (uintptr_t)orig - 16, "code: the entry jumps to the code");
    CHECK(fn(5, 0, 0, 0) == 0x105a && fn(7, 0, 0, 0) == 0x105c, "code: results");
    CHECK(pt_code_runs == 2 && pt_code_hooks == 0, "code: ran %ld, hook %ld", pt_code_runs,
          pt_code_hooks);
    CHECK(fn(-1, 0, 0, 0) == 0x1054 && pt_code_runs == 2 && pt_code_hooks == 1,
          "code: a < 0 through the hook");
    CHECK(hs_patch_remove((void *)pt_code) == 0 && fn(1, 0, 0, 0) == 0x1056 && pt_code_runs == 2,
          "code: removed");
    rc = hs_patch_install_code((void *)pt_code, PT_SIZE(pt_code), 0, pt_code_emit, "yes",
                               (void *)pt_code_hook, &orig, NULL, NULL, why, sizeof(why));
    CHECK(rc == 0 && pt_code_dest(pt_code) == dest && fn(1, 0, 0, 0) == 0x1056 && pt_code_runs == 3,
          "code: reinstalled, the same code (%d: %s)", rc, why);
    hs_patch_remove((void *)pt_code);

    /* declined: the stub, as hs_patch_install */
    rc = hs_patch_install_code((void *)pt_code2, PT_SIZE(pt_code2), 0, pt_code_emit, NULL,
                               (void *)pt_code_hook, &orig, NULL, NULL, why, sizeof(why));
    pt_code_orig = (pt_fn_t *)orig;
    fn = pt_code2;
    CHECK(rc == 0 && pt_code_dest(pt_code2) == (uintptr_t)orig - 16, "code declined: the stub");
    CHECK(fn(1, 0, 0, 0) == 0x1067 && pt_code_hooks == 2 && pt_code_runs == 3,
          "code declined: the hook ran");
    hs_patch_remove((void *)pt_code2);
    long emits = pt_code_emits;
    rc = hs_patch_install_code((void *)pt_codefar, PT_SIZE(pt_codefar), HS_PATCH_FORCE_ABS,
                               pt_code_emit, "yes", (void *)pt_code_hook, &orig, NULL, NULL, why,
                               sizeof(why));
    CHECK(rc == 0 && pt_code_emits == emits, "code far: not asked (%d: %s)", rc, why);
    hs_patch_remove((void *)pt_codefar);
}

/* libc's own code: the trampoline must be near libc (0x7f...), not near this executable.
   labs through hs_patch_install (its size from the dynamic symbol), then malloc, whose
   prologue is four instructions, called by everything while patched. */
static long (*pt_labs_orig)(long);
static long pt_labs_calls;
static long pt_labs_hook(long v)
{
    pt_labs_calls++;
    return pt_labs_orig(v);
}

static void *(*pt_malloc_orig)(size_t);
static long pt_malloc_calls;
static void *pt_malloc_hook(size_t n)
{
    __atomic_fetch_add(&pt_malloc_calls, 1, __ATOMIC_RELAXED);
    return pt_malloc_orig(n);
}

static void pt_test_libc(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    long (*labs_fn)(long) = libc ? (long (*)(long))dlsym(libc, "labs") : NULL;
    void *(*malloc_fn)(size_t) = libc ? (void *(*)(size_t))dlsym(libc, "malloc") : NULL;
    /* libc's own free: under ASan, free is the sanitizer's and refuses libc's blocks */
    void (*free_fn)(void *) = libc ? (void (*)(void *))dlsym(libc, "free") : NULL;
    char why[160];
    CHECK(labs_fn && malloc_fn && free_fn, "libc's labs, malloc and free");
    if (!labs_fn || !malloc_fn || !free_fn)
        return;
    long (*volatile lf)(long) = labs_fn;
    int rc = hs_patch_install((void *)labs_fn, (void *)pt_labs_hook, (void **)&pt_labs_orig, why,
                              sizeof(why));
    CHECK(rc == 0, "labs: install %d (%s)", rc, why);
    if (rc == 0) {
        intptr_t d = (intptr_t)pt_labs_orig - (intptr_t)labs_fn;
        CHECK(d > -(1l << 31) && d < (1l << 31), "labs: trampoline within 2 GB of libc");
        CHECK(lf(-42) == 42 && lf(7) == 7 && pt_labs_calls == 2, "labs patched: %ld calls",
              pt_labs_calls);
        CHECK(hs_patch_remove((void *)labs_fn) == 0 && lf(-3) == 3 && pt_labs_calls == 2,
              "labs removed");
    }
    void *(*volatile mf)(size_t) = malloc_fn;
    rc = hs_patch_install((void *)malloc_fn, (void *)pt_malloc_hook, (void **)&pt_malloc_orig, why,
                          sizeof(why));
    CHECK(rc == 0, "malloc: install %d (%s)", rc, why);
    if (rc == 0) {
        long before = pt_malloc_calls;
        char *p = mf(100);
        CHECK(p && pt_malloc_calls == before + 1, "malloc patched");
        memset(p, 1, 100);
        free_fn(p);
        CHECK(hs_patch_remove((void *)malloc_fn) == 0, "malloc removed");
        before = pt_malloc_calls;
        free_fn(mf(10));
        CHECK(pt_malloc_calls == before, "malloc hook silent after remove");
    }
}

/* Four threads call pt_mt while it is patched and unpatched 1,000 times. The hook reads
   the pointer the install wrote, which must be set before the jump goes live. */
static pt_fn_t *pt_mt_orig;
static long pt_mt_calls;
static int pt_mt_hook(int a, int b, int c, long d)
{
    __atomic_fetch_add(&pt_mt_calls, 1, __ATOMIC_RELAXED);
    return __atomic_load_n(&pt_mt_orig, __ATOMIC_ACQUIRE)(a, b, c, d);
}

static int pt_mt_stop;
static long pt_mt_bad, pt_mt_done;
static void *pt_mt_loop(void *arg)
{
    pt_fn_t *volatile f = pt_mt;
    unsigned x = (unsigned)(uintptr_t)arg * 7919u;
    long bad = 0, n = 0;
    while (!__atomic_load_n(&pt_mt_stop, __ATOMIC_ACQUIRE)) {
        x = x * 1103515245u + 12345u;
        int a = (int)(x >> 8);
        if (f(a, 0, 0, 0) != (int)((unsigned)a + 0x12345u))
            bad++;
        n++;
    }
    __atomic_fetch_add(&pt_mt_bad, bad, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pt_mt_done, n, __ATOMIC_RELAXED);
    return NULL;
}

static void pt_test_threads(void)
{
    pthread_t t[4];
    char why[160];
    int fails = 0;
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, pt_mt_loop, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 1000; i++) {
        if (hs_patch_install_ex((void *)pt_mt, PT_SIZE(pt_mt), 0, (void *)pt_mt_hook,
                                (void **)&pt_mt_orig, why, sizeof(why)) != 0)
            fails++;
        for (volatile int spin = 0; spin < 2000; spin++)
            ;
        if (hs_patch_remove((void *)pt_mt) != 0)
            fails++;
    }
    __atomic_store_n(&pt_mt_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK(fails == 0, "threads: %d install/remove failures (%s)", fails, why);
    CHECK(pt_mt_bad == 0, "threads: %ld wrong results of %ld", pt_mt_bad, pt_mt_done);
    CHECK(pt_mt_calls > 0, "threads: the hook never ran");
    printf("threads: %ld calls, %ld through the hook, 1000 install/remove cycles\n", pt_mt_done,
           pt_mt_calls);
}

/* The benchmark loop: n calls of pt_bench, through pt_bench_hook when patched. */
static int pt_bench_run(long n, int patched)
{
    char why[160];
    if (patched &&
        hs_patch_install_ex((void *)pt_bench, PT_SIZE(pt_bench), 0, (void *)pt_bench_hook,
                            &pt_bench_orig, why, sizeof(why)) != 0) {
        fprintf(stderr, "bench: %s\n", why);
        return 1;
    }
    pt_fn_t *volatile f = pt_bench;
    int acc = 0;
    for (long i = 0; i < n; i++)
        acc += f((int)i, 0, 0, 0);
    printf("bench: %ld calls, %s, %d\n", n, patched ? "patched" : "unpatched", acc);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--bench") == 0)
        return pt_bench_run(atol(argv[2]), atoi(argv[3]));
    pt_test_shapes();
    pt_test_fixup();
    pt_test_code();
    pt_test_libc();
    pt_test_threads();
    return hs_check_done("test_patch");
}

#else
int main(void)
{
    printf("test_patch: x86-64 only, skipped\n");
    return 0;
}
#endif
