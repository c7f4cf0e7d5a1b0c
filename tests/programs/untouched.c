/*
 * untouched: a program whose pointers sit in pages the reachability scan must read or may
 * skip (/proc/self/pagemap), for tests/integration/leak_untouched.sh:
 *   resv_kept     4000 B, its only pointer in the one written page of a 1 GiB
 *                 MAP_NORESERVE reservation (the rest never written)        reachable
 *   dontneed_lost 4000 B, its only pointer in a page of the reservation given back
 *                 with MADV_DONTNEED: the page reads as zeros now           unreachable
 *   shared_kept   4000 B, its only pointer written by a forked child into a page of a
 *                 MAP_SHARED anonymous mapping that this process never touched  reachable
 *   plain_lost    4000 B, pointer dropped                                   unreachable
 * It prints "SITE NAME CLASS BYTES 1" per site, then VmRSS before and after
 * heapsift_leak_check(PATH) ("RSS BEFORE AFTER", kB), then "CHECK rc".
 * usage: untouched PATH
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEAPSIFT_WEAK
#include <heapsift.h>

#include "site.h"

#define RESV (1ul << 30)
#define SZ 4000

static char *g_resv, *g_shared;

static long rss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static inline __attribute__((always_inline)) void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        exit(99);
    memset(p, 1, n);
    return p;
}

SITE void resv_kept(void)
{
    void *volatile p = xmalloc(SZ);
    memcpy(g_resv + 4096, (void *const *)&p, sizeof(p));
    p = NULL;
}

SITE void dontneed_lost(void)
{
    void *volatile p = xmalloc(SZ);
    char *page = g_resv + RESV / 2;
    memcpy(page, (void *const *)&p, sizeof(p));
    p = NULL;
    madvise(page, 4096, MADV_DONTNEED);
}

SITE void shared_kept(void)
{
    void *volatile p = xmalloc(SZ);
    pid_t c = fork();
    if (c == 0) { /* the child's copy of the pointer, into a page the parent never touched */
        memcpy(g_shared + 8 * 4096, (void *const *)&p, sizeof(p));
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    p = NULL;
}

SITE void plain_lost(void)
{
    void *volatile p = xmalloc(SZ);
    p = NULL;
    (void)p;
}

static __attribute__((noinline)) void clobber_stack(void)
{
    char buf[64 << 10];
    explicit_bzero(buf, sizeof(buf));
    __asm__ volatile("" : : "r"(buf) : "memory");
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    g_resv = mmap(NULL, RESV, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                  -1, 0);
    g_shared = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g_resv == MAP_FAILED || g_shared == MAP_FAILED)
        return 3;
    resv_kept();
    dontneed_lost();
    shared_kept();
    plain_lost();
    clobber_stack();
    printf("SITE resv_kept reachable %d 1\nSITE dontneed_lost unreachable %d 1\n"
           "SITE shared_kept reachable %d 1\nSITE plain_lost unreachable %d 1\n",
           SZ, SZ, SZ, SZ);
    fflush(stdout);
    long before = rss_kb();
    int rc = heapsift_leak_check(argv[1]);
    long after = rss_kb();
    printf("RSS %ld %ld\nCHECK %d\n", before, after, rc);
    return 0;
}
