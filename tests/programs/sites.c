/*
 * sites: a C program whose allocation sites are known exactly, for the integration tests.
 * Each site is its own non-inlined, non-cloned function with a unique name and allocates a
 * known number of objects of known requested size, keeping them live until exit (except
 * site_transient, which frees everything). Pointers go to global volatile arrays and the
 * memory is touched, so the compiler cannot drop an allocation.
 *
 * usage: sites [MODE] [--expect] [--say TEXT] [--exit N]
 *   MODE      all (default): every C site plus two threads running thread_entry
 *             libc: allocations reached through glibc (strdup, getline, fopen, a qsort
 *             comparator), whose own code is built without frame pointers
 *             ladder: six sites holding 4 to 16 MB of 4000-byte objects, one of 256 KiB objects
 *             and one of mixed large sizes: at the default rate (512 KiB) they take 8 to
 *             31 samples each, where a confidence interval meets its few-sample regime
 *             (tests/integration/ci_few_samples.sh, bench/ci_coverage.sh)
 *   --expect  print the truth, one line per site:
 *             NAME flat|cum ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE
 *             ("flat" rows are exact for the function's own flat values, "cum" rows for its
 *             cumulative values; -1 means unknown, check only that the site is present)
 *   --say     print TEXT and a newline on stdout (to check output passes through)
 *   --exit    exit with status N (default 0)
 * It never reads heapsift state; it runs the same with or without the library.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "site.h"

#define NOBJ 4000     /* objects per big site: enough samples at rate 4096 */
#define OBJSZ 4096    /* requested bytes per big-site object */
#define NSMALL 200000 /* site_small: many small objects, to check the unbiasing */
#define SMALLSZ 64
#define NTHREADS 2
#define NPERTHREAD 2000 /* NTHREADS * NPERTHREAD == NOBJ */

enum {
    S_MALLOC,
    S_CALLOC,
    S_REALLOC,
    S_REALLOCARRAY,
    S_POSIX_MEMALIGN,
    S_ALIGNED_ALLOC,
    S_MEMALIGN,
    S_VALLOC,
    S_PVALLOC,
    S_NSITES
};

static void *volatile g_keep[S_NSITES][NOBJ];
static void *volatile g_small[NSMALL];
static void *volatile g_thread_keep[NTHREADS][NPERTHREAD];
static volatile unsigned long g_sink;

static void die(const char *what)
{
    fprintf(stderr, "sites: %s failed: %s\n", what, strerror(errno));
    exit(99);
}

static void touch(void *p, size_t n)
{
    memset(p, 0xa5, n);
    g_sink += ((unsigned char *)p)[n - 1];
}

SITE void site_malloc(void)
{
    for (int i = 0; i < NOBJ; i++) {
        void *p = malloc(OBJSZ);
        if (!p)
            die("malloc");
        if (malloc_usable_size(p) < OBJSZ) {
            fprintf(stderr, "sites: malloc_usable_size %zu < %d\n", malloc_usable_size(p), OBJSZ);
            exit(99);
        }
        touch(p, OBJSZ);
        g_keep[S_MALLOC][i] = p;
    }
}

SITE void site_calloc(void)
{
    for (int i = 0; i < NOBJ; i++) {
        unsigned char *p = calloc(OBJSZ / 8, 8);
        if (!p)
            die("calloc");
        if (p[0] != 0 || p[OBJSZ - 1] != 0) {
            fprintf(stderr, "sites: calloc memory not zeroed\n");
            exit(99);
        }
        touch(p, OBJSZ);
        g_keep[S_CALLOC][i] = p;
    }
}

/* Each object: malloc(1024), realloc to 2048, realloc to 4096: 3 allocations, 1 live. */
SITE void site_realloc(void)
{
    for (int i = 0; i < NOBJ; i++) {
        char *p = malloc(OBJSZ / 4);
        if (!p)
            die("malloc");
        touch(p, OBJSZ / 4);
        for (size_t n = OBJSZ / 2; n <= OBJSZ; n *= 2) {
            char *q = realloc(p, n);
            if (!q)
                die("realloc");
            p = q;
            touch(p, n);
        }
        g_keep[S_REALLOC][i] = p;
    }
}

SITE void site_reallocarray(void)
{
    for (int i = 0; i < NOBJ; i++) {
        void *p = reallocarray(NULL, OBJSZ / 16, 16);
        if (!p)
            die("reallocarray");
        touch(p, OBJSZ);
        g_keep[S_REALLOCARRAY][i] = p;
    }
}

SITE void site_posix_memalign(void)
{
    for (int i = 0; i < NOBJ; i++) {
        void *p = NULL;
        int err = posix_memalign(&p, 64, OBJSZ);
        if (err || ((unsigned long)p & 63)) {
            errno = err;
            die("posix_memalign");
        }
        touch(p, OBJSZ);
        g_keep[S_POSIX_MEMALIGN][i] = p;
    }
}

SITE void site_aligned_alloc(void)
{
    for (int i = 0; i < NOBJ; i++) {
        void *p = aligned_alloc(256, OBJSZ);
        if (!p || ((unsigned long)p & 255))
            die("aligned_alloc");
        touch(p, OBJSZ);
        g_keep[S_ALIGNED_ALLOC][i] = p;
    }
}

SITE void site_memalign(void)
{
    for (int i = 0; i < NOBJ; i++) {
        void *p = memalign(128, OBJSZ);
        if (!p || ((unsigned long)p & 127))
            die("memalign");
        touch(p, OBJSZ);
        g_keep[S_MEMALIGN][i] = p;
    }
}

SITE void site_valloc(void)
{
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < NOBJ; i++) {
        void *p = valloc(OBJSZ);
        if (!p || ((unsigned long)p & (page - 1)))
            die("valloc");
        touch(p, OBJSZ);
        g_keep[S_VALLOC][i] = p;
    }
}

/* OBJSZ is a multiple of the page size on x86-64, so pvalloc's rounding changes nothing. */
SITE void site_pvalloc(void)
{
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < NOBJ; i++) {
        void *p = pvalloc(OBJSZ);
        if (!p || ((unsigned long)p & (page - 1)))
            die("pvalloc");
        touch(p, OBJSZ);
        g_keep[S_PVALLOC][i] = p;
    }
}

SITE void site_small(void)
{
    for (int i = 0; i < NSMALL; i++) {
        void *p = malloc(SMALLSZ);
        if (!p)
            die("malloc");
        touch(p, SMALLSZ);
        g_small[i] = p;
    }
}

/* Allocates and frees: nothing live, NOBJ objects of OBJSZ allocated. */
SITE void site_transient(void)
{
    for (int i = 0; i < NOBJ; i++) {
        void *p = malloc(OBJSZ);
        if (!p)
            die("malloc");
        touch(p, OBJSZ);
        free(p);
    }
}

SITE void site_thread(int t)
{
    for (int i = 0; i < NPERTHREAD; i++) {
        void *p = malloc(OBJSZ);
        if (!p)
            die("malloc");
        touch(p, OBJSZ);
        g_thread_keep[t][i] = p;
    }
}

/* Not a tail call: thread_entry must stay on the stack above site_thread. */
SITE void *thread_entry(void *arg)
{
    int t = (int)(long)arg;
    site_thread(t);
    g_sink += t;
    return arg;
}

static void run_threads(void)
{
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++) {
        int err = pthread_create(&th[t], NULL, thread_entry, (void *)t);
        if (err) {
            errno = err;
            die("pthread_create");
        }
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
}

static void expect(const char *name, const char *kind, long aobj, long aspace, long iobj,
                   long ispace)
{
    printf("%s %s %ld %ld %ld %ld\n", name, kind, aobj, aspace, iobj, ispace);
}

static void run_all(int print)
{
    site_malloc();
    site_calloc();
    site_realloc();
    site_reallocarray();
    site_posix_memalign();
    site_aligned_alloc();
    site_memalign();
    site_valloc();
    site_pvalloc();
    site_small();
    site_transient();
    run_threads();
    if (!print)
        return;
    const long big = (long)NOBJ * OBJSZ;
    expect("site_malloc", "flat", NOBJ, big, NOBJ, big);
    expect("site_calloc", "flat", NOBJ, big, NOBJ, big);
    expect("site_realloc", "flat", 3 * NOBJ, NOBJ * (OBJSZ / 4 + OBJSZ / 2 + OBJSZ), NOBJ, big);
    expect("site_reallocarray", "flat", NOBJ, big, NOBJ, big);
    expect("site_posix_memalign", "flat", NOBJ, big, NOBJ, big);
    expect("site_aligned_alloc", "flat", NOBJ, big, NOBJ, big);
    expect("site_memalign", "flat", NOBJ, big, NOBJ, big);
    expect("site_valloc", "flat", NOBJ, big, NOBJ, big);
    expect("site_pvalloc", "flat", NOBJ, big, NOBJ, big);
    expect("site_small", "flat", NSMALL, (long)NSMALL * SMALLSZ, NSMALL, (long)NSMALL * SMALLSZ);
    expect("site_transient", "flat", NOBJ, big, 0, 0);
    expect("site_thread", "flat", NOBJ, big, NOBJ, big);
    expect("thread_entry", "cum", NOBJ, big, NOBJ, big);
}

/* ---- ladder mode: few samples per site at the default rate ---- */

#define LADDER_MAX 4000
static void *volatile g_ladder[8][LADDER_MAX];

/* n objects of size bytes, kept live in g_ladder[slot]: a macro, so that each site's
 * malloc call is its own and the site owns the flat value. */
#define LADDER_FILL(slot, n, size)                                                                 \
    do {                                                                                           \
        for (int i = 0; i < (n); i++) {                                                            \
            void *p = malloc(size);                                                                \
            if (!p)                                                                                \
                die("malloc");                                                                     \
            touch(p, size);                                                                        \
            g_ladder[slot][i] = p;                                                                 \
        }                                                                                          \
    } while (0)

SITE void ladder_4mb(void)
{
    LADDER_FILL(0, 1000, 4000);
}

SITE void ladder_5mb(void)
{
    LADDER_FILL(1, 1250, 4000);
}

SITE void ladder_6mb(void)
{
    LADDER_FILL(2, 1500, 4000);
}

SITE void ladder_8mb(void)
{
    LADDER_FILL(3, 2000, 4000);
}

SITE void ladder_10_8mb(void)
{
    LADDER_FILL(4, 2700, 4000);
}

SITE void ladder_16mb(void)
{
    LADDER_FILL(5, 4000, 4000);
}

/* 40 objects of 256 KiB: each sampled with p = 1 - exp(-1/2) = 0.39 at the default rate. */
SITE void ladder_256k(void)
{
    LADDER_FILL(6, 40, 256 * 1024);
}

/* 8 objects of 1 MiB and 64 of 64 KiB from one call site: one stack of two sizes, whose
 * variance the mean size understates (docs/sampling.md). */
SITE void ladder_mixed(void)
{
    for (int i = 0; i < 72; i++) {
        size_t size = i % 9 == 0 ? 1024 * 1024 : 64 * 1024;
        void *p = malloc(size);
        if (!p)
            die("malloc");
        touch(p, size);
        g_ladder[7][i] = p;
    }
}

static void run_ladder(int print)
{
    ladder_4mb();
    ladder_5mb();
    ladder_6mb();
    ladder_8mb();
    ladder_10_8mb();
    ladder_16mb();
    ladder_256k();
    ladder_mixed();
    if (!print)
        return;
    static const struct {
        const char *name;
        long n, size;
    } sites[] = {{"ladder_4mb", 1000, 4000},     {"ladder_5mb", 1250, 4000},
                 {"ladder_6mb", 1500, 4000},     {"ladder_8mb", 2000, 4000},
                 {"ladder_10_8mb", 2700, 4000},  {"ladder_16mb", 4000, 4000},
                 {"ladder_256k", 40, 256 * 1024}};
    for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++)
        expect(sites[i].name, "flat", sites[i].n, sites[i].n * sites[i].size, sites[i].n,
               sites[i].n * sites[i].size);
    const long mixed = 8 * 1024 * 1024L + 64 * 64 * 1024L;
    expect("ladder_mixed", "flat", 72, mixed, 72, mixed);
}

/* ---- libc mode: allocations made by glibc on the program's behalf ---- */

#define NSTRDUP 1000
#define NLINES 500
#define NFOPEN 20
#define NSORT 64
#define CMP_ALLOC 48
#define MAXCMP 100000

static char *volatile g_strs[NSTRDUP];
static char *volatile g_lines[NLINES];
static FILE *volatile g_files[NFOPEN];
static void *volatile g_cmp_keep[MAXCMP];
static volatile long g_ncmp;

SITE void site_strdup(void)
{
    char src[100];
    memset(src, 'x', sizeof(src) - 1);
    src[sizeof(src) - 1] = '\0';
    for (int i = 0; i < NSTRDUP; i++) {
        src[0] = (char)('a' + i % 26);
        g_strs[i] = strdup(src);
        if (!g_strs[i])
            die("strdup");
    }
}

/* Reads NLINES lines with a fresh buffer each time, so every getline call allocates. */
SITE void site_getline(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(path);
    for (int i = 0; i < NLINES; i++) {
        char *line = NULL;
        size_t cap = 0;
        if (getline(&line, &cap, f) < 0)
            die("getline");
        g_lines[i] = line;
    }
    fclose(f);
}

SITE void site_fopen(void)
{
    for (int i = 0; i < NFOPEN; i++) {
        g_files[i] = fopen("/dev/null", "r");
        if (!g_files[i])
            die("fopen /dev/null");
    }
}

/* Called by glibc's qsort: the stack is cmp_alloc <- qsort internals <- site_qsort. */
SITE int cmp_alloc(const void *a, const void *b)
{
    long n = g_ncmp;
    if (n < MAXCMP) {
        void *p = malloc(CMP_ALLOC);
        if (!p)
            die("malloc");
        touch(p, CMP_ALLOC);
        g_cmp_keep[n] = p;
        g_ncmp = n + 1;
    }
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

SITE void site_qsort(void)
{
    int v[NSORT]; /* small: glibc sorts it without a malloc'd buffer of its own */
    for (int i = 0; i < NSORT; i++)
        v[i] = (i * 37) % NSORT;
    qsort(v, NSORT, sizeof(v[0]), cmp_alloc);
    g_sink += (unsigned long)v[0];
}

static void write_lines(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die(path);
    for (int i = 0; i < NLINES; i++)
        fprintf(f, "line %d of the getline test\n", i);
    if (fclose(f))
        die("fclose");
}

static void run_libc(int print)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/heapsift-sites-%d.txt", (int)getpid());
    write_lines(path);
    site_strdup();
    site_getline(path);
    unlink(path);
    site_fopen();
    site_qsort();
    if (!print)
        return;
    expect("site_strdup", "cum", NSTRDUP, NSTRDUP * 100L, NSTRDUP, NSTRDUP * 100L);
    expect("site_getline", "cum", -1, -1, -1, -1);
    expect("site_fopen", "cum", -1, -1, -1, -1);
    expect("cmp_alloc", "flat", g_ncmp, g_ncmp * CMP_ALLOC, g_ncmp, g_ncmp * CMP_ALLOC);
    expect("site_qsort", "cum", g_ncmp, g_ncmp * CMP_ALLOC, g_ncmp, g_ncmp * CMP_ALLOC);
}

int main(int argc, char **argv)
{
    int print = 0, status = 0, libc = 0, ladder = 0;
    const char *say = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect"))
            print = 1;
        else if (!strcmp(argv[i], "--say") && i + 1 < argc)
            say = argv[++i];
        else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
            status = atoi(argv[++i]);
        else if (!strcmp(argv[i], "libc"))
            libc = 1;
        else if (!strcmp(argv[i], "ladder"))
            ladder = 1;
        else if (strcmp(argv[i], "all")) {
            fprintf(stderr, "usage: sites [all|libc|ladder] [--expect] [--say TEXT] [--exit N]\n");
            return 64;
        }
    }
    if (libc)
        run_libc(print);
    else if (ladder)
        run_ladder(print);
    else
        run_all(print);
    if (say)
        printf("%s\n", say);
    fflush(stdout);
    g_sink += 1;
    return status;
}
