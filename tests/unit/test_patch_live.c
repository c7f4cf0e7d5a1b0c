/*
 * patch.c on code another thread is running, as reach.c patches a library loaded later.
 *
 * Parked (every round, on purpose): a thread waits on a futex from inside the bytes a
 * patch replaces: pt_park is nop, syscall, nop, nop (five bytes), ret, so a thread blocked
 * in its futex wait has its pc at +3 (the kernel rewinds it to +1 when the stop signal
 * restarts the call). Each round waits until /proc says the thread is blocked there,
 * stops it (stopworld.c), patches pt_park with a counting hook, and asks
 * hs_patch_fixup_pc where the thread must resume: every round must find it inside the
 * replaced bytes and move it to the trampoline. After the release /proc must show it
 * blocked again in the trampoline's copy of the syscall (left where it was, it would run
 * the middle of the jump). Then it is woken, calls pt_park once through the hook, and the
 * patch is removed (one atomic store: no stop) while it is parked in the trampoline.
 *
 * Live: a thread calls pt_live (five one-byte nops, then a + 1) in a tight loop while 100
 * rounds stop it wherever it is, patch, move it if it is inside, release, wait until the
 * hook has run, and remove the patch. Checks that every call returned a + 1.
 */
#define _GNU_SOURCE
#include "check.h"
#include "reach/patch.h"
#include "runtime/stopworld.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__)

typedef int pt_fn_t(int);

/* pt_park takes the futex call's registers as they are (rax 202, rdi the word, rsi the op,
   rdx the value, r10 no timeout); pt_park_call is its C entry. pt_park_hook counts and
   goes on to the original, keeping every register. */
__asm__("    .text\n    .p2align 4\n    .globl pt_park\n    .type pt_park, @function\n"
        "pt_park:\n    nop\n    syscall\n    nop\n    nop\n    ret\npt_park_end:\n"
        "    .size pt_park, . - pt_park\n"
        "    .p2align 4\n    .globl pt_park_call\n    .type pt_park_call, @function\n"
        "pt_park_call:\n    mov %esi, %edx\n    mov $128, %esi\n    xor %r10d, %r10d\n"
        "    mov $202, %eax\n    jmp pt_park\n    .size pt_park_call, . - pt_park_call\n"
        "    .p2align 4\n    .globl pt_park_hook\n    .type pt_park_hook, @function\n"
        "pt_park_hook:\n    lock incq pt_park_hooked(%rip)\n    jmp *pt_park_orig(%rip)\n"
        "    .size pt_park_hook, . - pt_park_hook\n");
extern char pt_park[], pt_park_end[], pt_park_hook[];
long pt_park_call(int *word, int val);
__attribute__((visibility("hidden"))) uint64_t pt_park_hooked;
__attribute__((visibility("hidden"))) void *pt_park_orig;

__asm__("    .text\n    .p2align 4\n    .globl pt_live\n    .type pt_live, @function\n"
        "pt_live:\n    nop\n    nop\n    nop\n    nop\n    nop\n    lea 1(%rdi), %eax\n"
        "    ret\npt_live_end:\n    .size pt_live, . - pt_live\n");
extern pt_fn_t pt_live;
extern char pt_live_end[];

static void *pt_orig;
static uint64_t pt_hooked, pt_wrong, pt_calls;
static int pt_stop, pt_word, pt_tid;
static uint64_t pt_parked_bad; /* futex results other than 0, EAGAIN or EINTR */

static int pt_hook(int a)
{
    __atomic_add_fetch(&pt_hooked, 1, __ATOMIC_RELAXED);
    return ((pt_fn_t *)pt_orig)(a);
}

static void *pt_caller(void *arg)
{
    (void)arg;
    for (int i = 0; !__atomic_load_n(&pt_stop, __ATOMIC_RELAXED); i++) {
        if (pt_live(i) != i + 1)
            __atomic_add_fetch(&pt_wrong, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&pt_calls, (uint64_t)i + 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* Parks while pt_word holds the value it read; a negative value ends it. */
static void *pt_parker(void *arg)
{
    (void)arg;
    __atomic_store_n(&pt_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    for (;;) {
        int g = __atomic_load_n(&pt_word, __ATOMIC_ACQUIRE);
        if (g < 0)
            return NULL;
        long r = pt_park_call(&pt_word, g);
        if (r != 0 && r != -EAGAIN && r != -EINTR)
            __atomic_add_fetch(&pt_parked_bad, 1, __ATOMIC_RELAXED);
    }
}

static void pt_nap(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* The pc of thread tid when it is blocked in a futex wait on word for the value word
   holds now (/proc's syscall file: "nr arg1 ... arg6 sp pc"), else 0. */
static uintptr_t pt_blocked_pc(int tid, const int *word)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    long nr;
    unsigned long a[6], sp, pc;
    if (sscanf(buf, "%ld %lx %lx %lx %lx %lx %lx %lx %lx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4],
               &a[5], &sp, &pc) != 9)
        return 0;
    bool now = (int)a[2] == __atomic_load_n(word, __ATOMIC_ACQUIRE);
    return nr == SYS_futex && a[0] == (uintptr_t)word && now ? (uintptr_t)pc : 0;
}

static int64_t pt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits (10 s at most) until the parker is blocked with its pc at want. */
static bool pt_wait_parked(uintptr_t want)
{
    for (int64_t end = pt_now_ms() + 10000; pt_now_ms() < end; pt_nap(100000))
        if (pt_blocked_pc(pt_tid, &pt_word) == want)
            return true;
    return false;
}

static void pt_wake(void)
{
    __atomic_add_fetch(&pt_word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &pt_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* One parked round; false when it cannot go on. */
static bool pt_park_round(int round, size_t size, int *moved)
{
    char why[160];
    hs_sw_t w;
    uintptr_t at = (uintptr_t)pt_park + 3;
    CHECK(pt_wait_parked(at), "round %d: the thread never blocked at pt_park+3", round);
    CHECK(hs_sw_prepare(&w) == 0, "hs_sw_prepare failed");
    if (hs_check_failures)
        return false;
    hs_sw_stop(&w, 30000);
    int rc = hs_patch_install_ex(pt_park, size, 0, pt_park_hook, &pt_park_orig, why, sizeof(why));
    CHECK(rc == 0, "install: %d (%s)", rc, why);
    for (size_t i = 0; i < w.n; i++) {
        if (w.slots[i].tid != pt_tid)
            continue;
        uintptr_t pc = (uintptr_t)w.slots[i].regs[REG_RIP];
        CHECK(w.slots[i].state == HS_SW_STOPPED, "round %d: the thread was not stopped", round);
        CHECK(pc == (uintptr_t)pt_park + 1 || pc == at, "round %d: stopped at pt_park%+ld", round,
              (long)(pc - (uintptr_t)pt_park));
        uintptr_t to = hs_patch_fixup_pc(pc);
        if (to) {
            w.slots[i].pc_to = to;
            (*moved)++;
        }
    }
    hs_sw_free(&w);
    uintptr_t tramp = hs_patch_fixup_pc(at); /* after the trampoline's copy of the syscall */
    CHECK(tramp != 0, "round %d: pt_park+3 has no place in the trampoline", round);
    /* Moved, it restarts its wait in the trampoline's copy of the syscall. */
    CHECK(pt_wait_parked(tramp),
          "round %d: the thread did not block again in the "
          "trampoline",
          round);
    if (hs_check_failures)
        return false;
    uint64_t hooked = __atomic_load_n(&pt_park_hooked, __ATOMIC_RELAXED);
    pt_wake();
    /* Its next call goes through the hook, and parks in the trampoline once more. */
    CHECK(pt_wait_parked(tramp), "round %d: the call through the hook never parked", round);
    CHECK(__atomic_load_n(&pt_park_hooked, __ATOMIC_RELAXED) == hooked + 1,
          "round %d: the hook did not run once", round);
    CHECK(hs_patch_remove(pt_park) == 0, "remove");
    pt_wake();
    return hs_check_failures == 0;
}

static void pt_parked_rounds(void)
{
    pthread_t th;
    int moved = 0, rounds = 0;
    size_t size = (size_t)(pt_park_end - pt_park);
    CHECK(pthread_create(&th, NULL, pt_parker, NULL) == 0, "thread");
    while (__atomic_load_n(&pt_tid, __ATOMIC_ACQUIRE) == 0)
        pt_nap(100000);
    for (; rounds < 100; rounds++)
        if (!pt_park_round(rounds, size, &moved))
            break;
    if (hs_check_failures) /* the thread may be lost in the patched bytes: no join */
        return;
    __atomic_store_n(&pt_word, -1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &pt_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pthread_join(th, NULL);
    printf("test_patch_live: parked: %d rounds, the thread moved to the trampoline in %d\n", rounds,
           moved);
    CHECK(moved == 100, "the thread was moved in %d rounds of 100", moved);
    CHECK(pt_parked_bad == 0, "%llu futex calls failed", (unsigned long long)pt_parked_bad);
}

/* One live round: stop the caller wherever it is, patch, move it if it is inside, let it
   go, wait (10 s at most) for a call through the hook, remove the patch. */
static void pt_live_round(size_t size, int *rounds, int *moved)
{
    char why[160];
    hs_sw_t w;
    if (hs_sw_prepare(&w) != 0) {
        CHECK(0, "hs_sw_prepare failed");
        return;
    }
    hs_sw_stop(&w, 30000);
    int rc =
        hs_patch_install_ex((void *)pt_live, size, 0, (void *)pt_hook, &pt_orig, why, sizeof(why));
    CHECK(rc == 0, "install: %d (%s)", rc, why);
    for (size_t i = 0; i < w.n; i++) {
        if (w.slots[i].state != HS_SW_STOPPED)
            continue;
        uintptr_t to = hs_patch_fixup_pc((uintptr_t)w.slots[i].regs[REG_RIP]);
        if (to) {
            w.slots[i].pc_to = to;
            (*moved)++;
        }
    }
    *rounds += w.stopped > 0;
    hs_sw_free(&w);
    uint64_t seen = __atomic_load_n(&pt_hooked, __ATOMIC_RELAXED);
    for (int64_t end = pt_now_ms() + 10000;
         pt_now_ms() < end && __atomic_load_n(&pt_hooked, __ATOMIC_RELAXED) == seen;)
        pt_nap(100000);
    CHECK(__atomic_load_n(&pt_hooked, __ATOMIC_RELAXED) > seen, "the hook never ran");
    CHECK(hs_patch_remove((void *)pt_live) == 0, "remove");
}

static void pt_live_rounds(void)
{
    pthread_t th;
    int moved = 0, rounds = 0;
    size_t size = (size_t)(pt_live_end - (char *)pt_live);
    CHECK(pthread_create(&th, NULL, pt_caller, NULL) == 0, "thread");
    /* Until it runs its loop: a thread still being created has every signal blocked (glibc
     * unblocks them in start_thread), so a stop leaves it running, as stopworld.c says of
     * threads that block the signal, and it could enter the bytes being patched. */
    while (__atomic_load_n(&pt_calls, __ATOMIC_RELAXED) == 0)
        pt_nap(100000);
    for (int round = 0; round < 100 && !hs_check_failures; round++)
        pt_live_round(size, &rounds, &moved);
    __atomic_store_n(&pt_stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    printf("test_patch_live: live: %d rounds stopped the caller, %d found it inside the "
           "patched bytes; %llu calls through the hook\n",
           rounds, moved, (unsigned long long)pt_hooked);
    CHECK(rounds == 100, "the caller was stopped in %d rounds of 100", rounds);
    CHECK(pt_wrong == 0, "%llu calls returned a wrong value", (unsigned long long)pt_wrong);
}

int main(void)
{
    pt_parked_rounds();
    if (!hs_check_failures)
        pt_live_rounds();
    return hs_check_done("test_patch_live");
}

#else
int main(void)
{
    printf("SKIP: x86-64 only\n");
    return 77;
}
#endif
