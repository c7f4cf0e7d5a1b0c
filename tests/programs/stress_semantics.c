/*
 * stress_semantics: the allocation entry points' contracts, errno included, as a program
 * can observe them. Each check prints one line "NAME: OBSERVED" with what any allocator
 * shows the same way run after run (no addresses, no usable sizes), so that the output
 * under the profiler can be compared with the output without it; a line ends in
 * " UNEXPECTED" when the observation breaks what glibc documents. Every check runs ROUNDS
 * times (default 200) and reports the first round that differs from round 0, so that
 * sampled and unsampled calls are both seen at any sampling rate.
 *
 * usage: stress_semantics [ROUNDS]
 * STRESS_SKIP="pvalloc reallocarray" leaves out the checks of the functions an allocator
 * does not define (jemalloc has neither: glibc's would then act on jemalloc's blocks).
 * Exit 0 when nothing is UNEXPECTED, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Opaque to the compiler, which would otherwise warn about the sizes it can see. */
static volatile size_t g_huge = SIZE_MAX / 2, g_max = SIZE_MAX;
#define HUGE_SZ ((size_t)g_huge)
#define SENTINEL ((void *)0x5e5e5e5e5e5e5e5eull)

static int g_unexpected;
static FILE *g_out; /* this round's observations */

/* note(NAME, OK, FMT...): one observation of this round, "NAME: OBSERVED[ UNEXPECTED]". */
static void note(const char *name, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(const char *name, int ok, const char *fmt, ...)
{
    va_list ap;
    fprintf(g_out, "%s: ", name);
    va_start(ap, fmt);
    vfprintf(g_out, fmt, ap);
    va_end(ap);
    fprintf(g_out, "%s\n", ok ? "" : " UNEXPECTED");
    if (!ok)
        g_unexpected = 1;
}

static const char *err_name(int e)
{
    switch (e) {
    case 0:
        return "0";
    case ENOMEM:
        return "ENOMEM";
    case EINVAL:
        return "EINVAL";
    case 4242:
        return "4242(kept)";
    default:
        return "other";
    }
}

static int skip(const char *fn)
{
    const char *s = getenv("STRESS_SKIP");
    return s && strstr(s, fn);
}

static int aligned(const void *p, size_t a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

static void check_zero_and_null(void)
{
    errno = 4242;
    void *p = malloc(0);
    note("malloc(0)", p != NULL, "%s errno=%s", p ? "non-NULL" : "NULL", err_name(errno));
    free(p);
    errno = 4242;
    free(NULL);
    note("free(NULL)", errno == 4242, "errno=%s", err_name(errno));
    p = calloc(0, 0);
    note("calloc(0,0)", p != NULL, "%s", p ? "non-NULL" : "NULL");
    free(p);
    p = malloc(32);
    memset(p, 1, 32);
    errno = 4242;
    void *q = realloc(p, 0);
    /* glibc frees p and returns NULL; other allocators may return a minimal block. */
    note("realloc(p,0)", 1, "%s", q ? "non-NULL" : "NULL");
    free(q);
    errno = 4242;
    p = realloc(NULL, 100);
    note("realloc(NULL,100)", p && malloc_usable_size(p) >= 100, "%s usable>=100:%d errno=%s",
         p ? "non-NULL" : "NULL", p ? malloc_usable_size(p) >= 100 : 0, err_name(errno));
    free(p);
    note("malloc_usable_size(NULL)", malloc_usable_size(NULL) == 0, "%zu",
         malloc_usable_size(NULL));
}

static void check_huge(void)
{
    errno = 0;
    void *p = malloc(HUGE_SZ);
    note("malloc(SIZE_MAX/2)", !p && errno == ENOMEM, "%s errno=%s", p ? "non-NULL" : "NULL",
         err_name(errno));
    free(p);
    errno = 0;
    p = malloc(g_max);
    note("malloc(SIZE_MAX)", !p && errno == ENOMEM, "%s errno=%s", p ? "non-NULL" : "NULL",
         err_name(errno));
    free(p);
    errno = 0;
    p = calloc(HUGE_SZ, 4);
    note("calloc overflow", !p && errno == ENOMEM, "%s errno=%s", p ? "non-NULL" : "NULL",
         err_name(errno));
    free(p);
    errno = 0;
    p = calloc(1, HUGE_SZ);
    note("calloc(1,SIZE_MAX/2)", !p && errno == ENOMEM, "%s errno=%s", p ? "non-NULL" : "NULL",
         err_name(errno));
    free(p);
    unsigned char *b = malloc(64);
    memset(b, 0xab, 64);
    errno = 0;
    p = realloc(b, HUGE_SZ);
    int intact = 1;
    for (int i = 0; i < 64; i++)
        intact &= b[i] == 0xab;
    note("realloc(p,SIZE_MAX/2)", !p && errno == ENOMEM && intact, "%s errno=%s intact=%d",
         p ? "non-NULL" : "NULL", err_name(errno), intact);
    if (skip("reallocarray")) {
        free(b);
        return;
    }
    errno = 0;
    p = reallocarray(NULL, HUGE_SZ, 4);
    note("reallocarray(NULL) overflow", !p && errno == ENOMEM, "%s errno=%s",
         p ? "non-NULL" : "NULL", err_name(errno));
    free(p);
    errno = 0;
    p = reallocarray(b, HUGE_SZ, 4);
    intact = 1;
    for (int i = 0; i < 64; i++)
        intact &= b[i] == 0xab;
    note("reallocarray(p) overflow", !p && errno == ENOMEM && intact, "%s errno=%s intact=%d",
         p ? "non-NULL" : "NULL", err_name(errno), intact);
    p = reallocarray(b, 16, 8);
    intact = p != NULL;
    for (int i = 0; p && i < 64; i++)
        intact &= ((unsigned char *)p)[i] == 0xab;
    note("reallocarray(p,16,8)", intact, "%s intact=%d", p ? "non-NULL" : "NULL", intact);
    free(p ? p : b);
}

static void check_alignment(void)
{
    static const size_t bad[] = {0, 3, 4, 24, 100, (size_t)1 << 63 | 8};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        void *out = SENTINEL;
        errno = 4242;
        int rc = posix_memalign(&out, bad[i], 16);
        char name[64];
        snprintf(name, sizeof(name), "posix_memalign(align=%zu)", bad[i]);
        note(name, rc == EINVAL && out == SENTINEL && errno == 4242, "rc=%s out=%s errno=%s",
             err_name(rc), out == SENTINEL ? "untouched" : "changed", err_name(errno));
        if (rc == 0)
            free(out);
    }
    void *out = SENTINEL;
    errno = 4242;
    int rc = posix_memalign(&out, 64, HUGE_SZ);
    note("posix_memalign(64,SIZE_MAX/2)", rc == ENOMEM && out == SENTINEL, "rc=%s out=%s errno=%s",
         err_name(rc), out == SENTINEL ? "untouched" : "changed", err_name(errno));
    for (size_t a = sizeof(void *); a <= 65536; a *= 4) {
        out = NULL;
        errno = 4242;
        rc = posix_memalign(&out, a, 100);
        char name[64];
        snprintf(name, sizeof(name), "posix_memalign(%zu,100)", a);
        note(name, rc == 0 && out && aligned(out, a) && malloc_usable_size(out) >= 100,
             "rc=%s aligned=%d errno=%s", err_name(rc), out ? aligned(out, a) : 0, err_name(errno));
        free(out);
    }

    errno = 4242;
    void *p = aligned_alloc(64, 100); /* C17: size need not be a multiple */
    note("aligned_alloc(64,100)", p && aligned(p, 64), "%s aligned=%d errno=%s",
         p ? "non-NULL" : "NULL", p ? aligned(p, 64) : 0, err_name(errno));
    free(p);
    errno = 0;
    p = aligned_alloc(3, 16);
    /* glibc up to 2.37 rounds a bad alignment up; 2.38 and others fail with EINVAL. */
    note("aligned_alloc(3,16)", p ? aligned(p, 4) : errno == EINVAL, "%s errno=%s",
         p ? "non-NULL" : "NULL", err_name(errno));
    free(p);
    errno = 0;
    p = aligned_alloc(64, HUGE_SZ);
    note("aligned_alloc(64,SIZE_MAX/2)", !p && errno == ENOMEM, "%s errno=%s",
         p ? "non-NULL" : "NULL", err_name(errno));
    free(p);
    errno = 0;
    p = aligned_alloc((size_t)1 << 63, 16);
    note("aligned_alloc(2^63,16)", !p, "%s errno=%s", p ? "non-NULL" : "NULL", err_name(errno));
    free(p);

    errno = 0;
    p = memalign(3, 16);
    note("memalign(3,16)", p ? aligned(p, 4) : errno == EINVAL, "%s errno=%s",
         p ? "non-NULL" : "NULL", err_name(errno));
    free(p);
    for (size_t a = 8; a <= 65536; a *= 8) {
        errno = 4242;
        p = memalign(a, 300);
        char name[64];
        snprintf(name, sizeof(name), "memalign(%zu,300)", a);
        note(name, p && aligned(p, a) && malloc_usable_size(p) >= 300, "aligned=%d errno=%s",
             p ? aligned(p, a) : 0, err_name(errno));
        free(p);
    }
    errno = 0;
    p = memalign((size_t)1 << 63, 16);
    note("memalign(2^63,16)", !p, "%s errno=%s", p ? "non-NULL" : "NULL", err_name(errno));
    free(p);

    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    errno = 4242;
    p = valloc(100);
    note("valloc(100)", p && aligned(p, page), "page-aligned=%d errno=%s", p ? aligned(p, page) : 0,
         err_name(errno));
    free(p);
    if (skip("pvalloc"))
        goto pvalloc_done;
    errno = 4242;
    p = pvalloc(100);
    note("pvalloc(100)", p && aligned(p, page) && malloc_usable_size(p) >= page,
         "page-aligned=%d usable>=page:%d errno=%s", p ? aligned(p, page) : 0,
         p ? malloc_usable_size(p) >= page : 0, err_name(errno));
    free(p);
pvalloc_done:
    errno = 0;
    p = valloc(HUGE_SZ);
    note("valloc(SIZE_MAX/2)", !p && errno == ENOMEM, "%s errno=%s", p ? "non-NULL" : "NULL",
         err_name(errno));
    free(p);
}

/* Successful calls leave errno alone in glibc: the profiler must not change that. */
static void check_errno_kept(void)
{
    static const size_t sizes[] = {1, 24, 100, 1000, 5000, 70000, 300000, 2000000};
    int kept = 1;
    const char *which = "";
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        void *p, *q;
        errno = 4242;
        p = malloc(n);
        if (errno != 4242 && kept)
            kept = 0, which = "malloc";
        errno = 4242;
        q = realloc(p, n * 2);
        if (errno != 4242 && kept)
            kept = 0, which = "realloc";
        errno = 4242;
        free(q ? q : p);
        if (errno != 4242 && kept)
            kept = 0, which = "free";
        errno = 4242;
        p = calloc(n, 1);
        if (errno != 4242 && kept)
            kept = 0, which = "calloc";
        errno = 4242;
        free(p);
        errno = 4242;
        if (posix_memalign(&p, 64, n) == 0) {
            if (errno != 4242 && kept)
                kept = 0, which = "posix_memalign";
            free(p);
        }
        errno = 4242;
        p = memalign(256, n);
        if (errno != 4242 && kept)
            kept = 0, which = "memalign";
        free(p);
        errno = 4242;
        p = aligned_alloc(64, n);
        if (errno != 4242 && kept)
            kept = 0, which = "aligned_alloc";
        free(p);
        errno = 4242;
        p = valloc(n);
        if (errno != 4242 && kept)
            kept = 0, which = "valloc";
        free(p);
        errno = 4242;
        (void)malloc_usable_size(NULL);
        if (errno != 4242 && kept)
            kept = 0, which = "malloc_usable_size";
    }
    note("errno after successful calls", kept, "%s%s", kept ? "kept" : "changed by ", which);
}

static void check_usable(void)
{
    int ok = 1;
    size_t bad = 0;
    for (size_t n = 1; n < 300000; n = n * 3 + 1) {
        unsigned char *p = malloc(n);
        if (!p || malloc_usable_size(p) < n) {
            ok = 0;
            bad = n;
        }
        if (p)
            memset(p, 1, malloc_usable_size(p)); /* the whole usable size is ours */
        free(p);
    }
    note("malloc_usable_size(p) >= n", ok, "%s", ok ? "yes" : "no");
    if (!ok)
        fprintf(stderr, "stress_semantics: malloc_usable_size < %zu\n", bad);
}

/* The same checks where the profiler sets itself up mid-call: each level 64 KiB deeper,
 * so the main thread's first sample there extends its stack bounds (a mincore), and on
 * a new thread, whose first sample looks up its stack. */
static __attribute__((noinline)) void check_errno_deeper(int levels)
{
    volatile char pad[64 * 1024];
    pad[0] = (char)levels;
    if (levels > 0)
        check_errno_deeper(levels - 1);
    else
        check_errno_kept();
    pad[sizeof(pad) - 1] = pad[0];
}

static void *check_errno_thread(void *arg)
{
    (void)arg;
    check_errno_kept();
    return NULL;
}

static void check_errno_places(void)
{
    pthread_t t;
    check_errno_deeper(4);
    if (pthread_create(&t, NULL, check_errno_thread, NULL) == 0)
        pthread_join(t, NULL);
}

/* One round of every check; its observations in *buf (open_memstream). */
static void run_round(char **buf, size_t *len)
{
    g_out = open_memstream(buf, len);
    if (!g_out) {
        perror("open_memstream");
        exit(1);
    }
    check_zero_and_null();
    check_huge();
    check_alignment();
    check_errno_kept();
    check_errno_places();
    check_usable();
    fclose(g_out);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    char *first = NULL, *buf = NULL;
    size_t first_len = 0, len = 0;
    run_round(&first, &first_len);
    fputs(first, stdout);
    for (int r = 1; r < rounds; r++) {
        run_round(&buf, &len);
        if (len != first_len || memcmp(buf, first, len) != 0) {
            printf("round %d differs from round 0:\n%s", r, buf);
            g_unexpected = 1;
            r = rounds;
        }
        free(buf);
        buf = NULL;
    }
    free(first);
    return g_unexpected ? 1 : 0;
}
