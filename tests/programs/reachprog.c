/*
 * reachprog: a program whose live blocks at exit are known to be reachable or not, for the
 * reachability scan's tests (tests/integration/leak_reach.sh). Every allocation site is a
 * SITE function of its own; the program prints the truth on stdout, one line per site:
 *   SITE NAME CLASS BYTES OBJECTS
 * CLASS is "unreachable" (no pointer to the blocks remains, nor from a reachable block) or
 * "reachable". The sites:
 *   lost_plain      4 x 1008 B, each pointer overwritten            unreachable
 *   lost_parent     1 x 256 B, lost; it alone points to lost_child  unreachable
 *   lost_child      1 x 128 B, pointed to by lost_parent only       unreachable
 *   cycle_a/b       512 B and 768 B pointing at each other, lost    unreachable
 *   lost_list       50 x 64 B singly linked, head dropped           unreachable
 *   global_kept     3 x 2000 B in a global array                    reachable
 *   interior_kept   4096 B, a global holds a pointer 100 B into it  reachable
 *   list_kept       200 x 64 B linked from a global head            reachable
 *   thread_held     1024 B, only a blocked thread's local holds it  reachable
 *   thread_child    160 B, pointed to by thread_held only           reachable
 *   mmap_kept       3008 B, pointed to from an anonymous mmap only  reachable
 *   reg_kept        1040 B, only in register r12 of a spinning thread while a leak
 *                   check runs (then in a global, once that thread ends) reachable
 *   blocked_kept    with "check": 1056 B, only on the stack of a thread that blocks every
 *                   signal (never stopped: its stack is read whole)  reachable
 *   big_lost        with "big": 32 x 65536 B (2 MiB: 4x the default rate), lost  unreachable
 *   big_kept        with "big": 32 x 65536 B held by a global array  reachable
 *   second_kept     2032 B, pointed to only from a block of a second allocator
 *                   (tcmalloc, dlopen'd; the site is absent without it) reachable
 * Sizes are multiples of 16 on purpose: glibc's pointer to the chunk after a block (its
 * top chunk or a free chunk's links) points into the block's last 8 bytes when its size
 * is 8 more than a multiple of 16, which makes it reachable (docs/leaks.md).
 *
 * Stale copies of pointers would make a lost block look reachable, so: each site is a
 * SITE (never inlined) function that keeps its pointers in volatile locals it clears before
 * returning; main never holds a block pointer; after the sites, main clobbers the stack
 * below its frame (where the sites' frames were, and where exit's frames will be) with
 * explicit_bzero, and calls printf, which reuses the caller-saved registers. The helper
 * thread gets its block through a global that the main thread clears once the thread has
 * copied it (pthread_create's argument would stay in the thread's descriptor), then waits
 * on a condition nobody signals, so its local is still on its stack at exit.
 * usage: reachprog [kept] [big] [check PATH | wait]
 *   kept:  the reachable sites only
 *   big:   big_lost and big_kept too (for the default rate)
 *   check: once every site is set up, heapsift_leak_check(PATH) in the running process
 *          (prints "CHECK rc"), with the register thread spinning
 *   wait:  once set up, prints the truth and "READY", then waits for end of input (the
 *          test runs its leak check over HTTP meanwhile)
 *   vfork: with check, a thread sits in vfork (its child sleeps 2.5 s) during the check:
 *          it cannot take a signal until the child exits, so it never answers
 * It never reads heapsift state but through heapsift_leak_check (HEAPSIFT_WEAK: without
 * the library the call answers -ENOSYS); it runs the same with or without the library.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HEAPSIFT_WEAK
#include <heapsift.h>

#include "site.h"

typedef struct node {
    struct node *next;
    char pad[56];
} node_t; /* 64 bytes */

static void *volatile g_kept[3];
static char *volatile g_interior;
static node_t *volatile g_list;
static void **g_mmap_page;
static void *volatile g_handoff;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER, g_never = PTHREAD_COND_INITIALIZER;
static int g_taken;
static void *volatile g_reg_handoff, *volatile g_reg_back;
static volatile int g_reg_ready, g_reg_stop;
static void **volatile g_second; /* a block of the second allocator (tcmalloc's) */

static inline __attribute__((always_inline)) void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "reachprog: out of memory\n");
        exit(99);
    }
    memset(p, 0, n);
    return p;
}

SITE void lost_plain(void)
{
    for (int i = 0; i < 4; i++) {
        void *volatile p = xmalloc(1008);
        p = NULL;
        (void)p;
    }
}

SITE void *lost_child(void)
{
    return xmalloc(128);
}

SITE void lost_parent(void)
{
    void **volatile p = xmalloc(256);
    p[3] = lost_child();
    p = NULL;
}

SITE void *cycle_b(void)
{
    return xmalloc(768);
}

SITE void cycle_a(void)
{
    void **volatile a = xmalloc(512);
    void **volatile b = cycle_b();
    a[0] = (void *)b;
    b[5] = (void *)a;
    a = NULL;
    b = NULL;
}

SITE void lost_list(void)
{
    node_t *volatile head = NULL;
    for (int i = 0; i < 50; i++) {
        node_t *n = xmalloc(sizeof(*n));
        n->next = head;
        head = n;
    }
    head = NULL;
}

SITE void global_kept(void)
{
    for (int i = 0; i < 3; i++)
        g_kept[i] = xmalloc(2000);
}

SITE void interior_kept(void)
{
    g_interior = (char *)xmalloc(4096) + 100;
}

SITE void list_kept(void)
{
    for (int i = 0; i < 200; i++) {
        node_t *n = xmalloc(sizeof(*n));
        n->next = g_list;
        g_list = n;
    }
}

SITE void *thread_child(void)
{
    return xmalloc(160);
}

SITE void thread_held(void)
{
    void **volatile p = xmalloc(1024);
    p[7] = thread_child();
    g_handoff = (void *)p;
    p = NULL;
}

static void *holder(void *arg)
{
    (void)arg;
    void *volatile mine;
    pthread_mutex_lock(&g_mu);
    mine = g_handoff;
    g_taken = 1;
    pthread_cond_signal(&g_cv);
    while (mine) /* forever: nobody signals g_never */
        pthread_cond_wait(&g_never, &g_mu);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

SITE void mmap_kept(void)
{
    g_mmap_page[10] = xmalloc(3008);
}

static void *volatile g_big[32];

SITE void big_lost(void)
{
    for (int i = 0; i < 32; i++) {
        void *volatile p = xmalloc(65536);
        p = NULL;
        (void)p;
    }
}

SITE void big_kept(void)
{
    for (int i = 0; i < 32; i++)
        g_big[i] = xmalloc(65536);
}

SITE void reg_kept(void)
{
    void *volatile p = xmalloc(1040);
    g_reg_handoff = (void *)p;
    p = NULL;
}

/* Takes the block into r12 and clears the global in one asm statement, so no other copy
 * exists while it spins; stores it back to a global when told to stop. */
static void *reg_spinner(void *arg)
{
    (void)arg;
#if defined(__x86_64__)
    __asm__ volatile("mov %[h], %%r12\n\t"
                     "movq $0, %[h]\n\t"
                     "movl $1, %[ready]\n\t"
                     "1: pause\n\t"
                     "cmpl $0, %[stop]\n\t"
                     "je 1b\n\t"
                     "mov %%r12, %[back]\n\t"
                     : [h] "+m"(g_reg_handoff), [ready] "=m"(g_reg_ready), [back] "=m"(g_reg_back)
                     : [stop] "m"(g_reg_stop)
                     : "r12", "memory");
#else
    g_reg_back = g_reg_handoff;
    g_reg_handoff = NULL;
    g_reg_ready = 1;
#endif
    return NULL;
}

/* A block of the second allocator: tcmalloc, dlopen'd (its own memory: sbrk and mmap
 * of its own). heapsift may sample it (it hooks a tcmalloc it sees loaded): this site is
 * then one more, reachable from g_second. NULL without tcmalloc. */
SITE void **second_block(void)
{
    void *h = dlopen("libtcmalloc_minimal.so.4", RTLD_NOW | RTLD_LOCAL);
    void *(*tc)(size_t) = h ? (void *(*)(size_t))dlsym(h, "tc_malloc") : NULL;
    void **b = tc ? tc(4096) : NULL;
    if (b)
        memset(b, 0, 4096);
    return b;
}

SITE void second_kept(void)
{
    void **volatile b = g_second;
    b[17] = xmalloc(2032);
    b = NULL;
}

static void *volatile g_block_handoff;
static volatile int g_block_taken, g_vfork_in;

SITE void blocked_kept(void)
{
    void *volatile p = xmalloc(1056);
    g_block_handoff = (void *)p;
    p = NULL;
}

/* Blocks every signal, takes the block into a local and sleeps for good. */
static void *blocker(void *arg)
{
    sigset_t all;
    (void)arg;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    void *volatile mine = g_block_handoff;
    g_block_handoff = NULL;
    g_block_taken = 1;
    while (mine)
        pause();
    return NULL;
}

/* vfork: the thread is suspended until the child exits (2.5 s of raw sleep). */
static void *vforker(void *arg)
{
    (void)arg;
    g_vfork_in = 1;
    pid_t c = vfork();
    if (c == 0) {
        struct timespec ts = {2, 500000000};
        syscall(SYS_nanosleep, &ts, NULL);
        _exit(0);
    }
    if (c > 0)
        waitpid(c, NULL, 0);
    return NULL;
}

static void start_detached(void *(*fn)(void *))
{
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, fn, NULL) != 0)
        exit(98);
    pthread_attr_destroy(&at);
}

static void start_holder(void)
{
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, holder, NULL) != 0) {
        fprintf(stderr, "reachprog: pthread_create failed\n");
        exit(98);
    }
    pthread_attr_destroy(&at);
    pthread_mutex_lock(&g_mu);
    while (!g_taken)
        pthread_cond_wait(&g_cv, &g_mu);
    g_handoff = NULL;
    pthread_mutex_unlock(&g_mu);
}

/* Zeroes the stack below the caller's frame: the dead frames of the sites. */
static __attribute__((noinline)) void clobber_stack(void)
{
    char buf[256 << 10];
    explicit_bzero(buf, sizeof(buf));
    __asm__ volatile("" : : "r"(buf) : "memory");
}

int main(int argc, char **argv)
{
    int lost = 1, wait = 0, big = 0, vf = 0;
    const char *check = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "kept") == 0)
            lost = 0;
        else if (strcmp(argv[i], "check") == 0 && i + 1 < argc)
            check = argv[++i];
        else if (strcmp(argv[i], "wait") == 0)
            wait = 1;
        else if (strcmp(argv[i], "big") == 0)
            big = 1;
        else if (strcmp(argv[i], "vfork") == 0)
            vf = 1;
    }
    g_mmap_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g_mmap_page == MAP_FAILED) {
        perror("reachprog: mmap");
        return 97;
    }
    if (lost) {
        lost_plain();
        lost_parent();
        cycle_a();
        lost_list();
    }
    if (big && lost)
        big_lost();
    if (big)
        big_kept();
    global_kept();
    interior_kept();
    list_kept();
    thread_held();
    start_holder();
    mmap_kept();
    if ((g_second = second_block()) != NULL)
        second_kept();
    reg_kept();
    pthread_t spin;
    if (pthread_create(&spin, NULL, reg_spinner, NULL) != 0)
        return 98;
    while (!g_reg_ready)
        ;
    if (check) {
        blocked_kept();
        start_detached(blocker);
        while (!g_block_taken)
            ;
    }
    if (check && vf) {
        start_detached(vforker);
        while (!g_vfork_in)
            ;
        struct timespec ts = {0, 200000000}; /* into vfork, its child asleep */
        nanosleep(&ts, NULL);
    }
    clobber_stack();
    if (check) {
        int rc = heapsift_leak_check(check);
        printf("CHECK %d\n", rc);
    }
    if (lost) {
        printf("SITE lost_plain unreachable 4032 4\n");
        printf("SITE lost_parent unreachable 256 1\n");
        printf("SITE lost_child unreachable 128 1\n");
        printf("SITE cycle_a unreachable 512 1\n");
        printf("SITE cycle_b unreachable 768 1\n");
        printf("SITE lost_list unreachable 3200 50\n");
    }
    if (big && lost)
        printf("SITE big_lost unreachable 2097152 32\n");
    if (big)
        printf("SITE big_kept reachable 2097152 32\n");
    printf("SITE global_kept reachable 6000 3\n");
    printf("SITE interior_kept reachable 4096 1\n");
    printf("SITE list_kept reachable 12800 200\n");
    printf("SITE thread_held reachable 1024 1\n");
    printf("SITE thread_child reachable 160 1\n");
    printf("SITE mmap_kept reachable 3008 1\n");
    printf("SITE reg_kept reachable 1040 1\n");
    if (check)
        printf("SITE blocked_kept reachable 1056 1\n");
    if (g_second)
        printf("SITE second_kept reachable 2032 1\n");
    if (wait) {
        char buf[64];
        printf("READY\n");
        fflush(stdout);
        while (read(0, buf, sizeof(buf)) > 0)
            ;
    }
    g_reg_stop = 1;
    pthread_join(spin, NULL);
    fflush(stdout);
    clobber_stack();
    return 0;
}
