/*
 * The trigger tests' program (tests/integration/triggers_*.sh): known allocation sites
 * driven in ways that fire one trigger each. Modes:
 *   trig_prog bytes MB [STEP DIR]  churns MB MiB through site_churn in 64 KiB blocks, 1 MiB
 *                              at a time with a 20 ms pause (bytes trigger), 1 MiB live in
 *                              site_keep; with STEP (MiB) and DIR, waits after each STEP
 *                              boundary until DIR holds one more "bytes" profile (30 s at
 *                              most), so that a slow dump cannot swallow a boundary
 *   trig_prog sleep MS [DIR]   site_keep holds 1 MiB, then sleeps MS ms; with DIR, writes
 *                              DIR/ready once running and creates DIR/made after MS/3 ms
 *   trig_prog until MS FAILS DUMPS [DIR]
 *                              site_keep holds 1 MiB; with DIR, writes DIR/ready once
 *                              running; sleeps MS ms, then runs on until heapsift_stats
 *                              counts FAILS failed dumps (then creates DIR/made) and
 *                              DUMPS written ones: the test's triggers fire while it runs,
 *                              however slow the machine (60 s at most, else status 3)
 *   trig_prog storm MS DIR     like sleep, while 4 threads churn through site_churn; after
 *                              MS, runs on until one dump was written (30 s at most)
 *   trig_prog peak             site_peak holds 64 x 1 MiB for 300 ms and until the kept
 *                              peak holds them, and frees them; then site_after holds
 *                              4 x 1 MiB until exit
 *   trig_prog grow             site_peak grows to 64 MiB by 1 MiB every 10 ms, each MiB
 *                              once the kept peak holds the previous one
 * The waits on heapsift_stats (30 or 60 s at most) put the program in lockstep with the
 * trigger thread, so a loaded machine cannot merge or miss what a test counts; without
 * the library (HEAPSIFT_WEAK) they return at once.
 *   trig_prog oom              grows site_oom by 4 MiB blocks (mmap'd by malloc) until the
 *                              address space reaches 70% of RLIMIT_AS, holds 300 ms, frees
 *                              it all, holds 300 ms, grows and holds again
 * Prints what it expects each site to hold at exit as "site bytes".
 */
#define _GNU_SOURCE
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1u << 20)

static void *volatile sink;
static volatile int stop;

static void msleep(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

__attribute__((noinline)) static void *site_keep(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}

__attribute__((noinline)) static void site_churn(size_t n)
{
    void *p = malloc(n);
    sink = p;
    free(p);
}

__attribute__((noinline)) static void *site_peak(size_t n)
{
    void *p = malloc(n);
    memset(p, 2, n);
    return p;
}

__attribute__((noinline)) static void *site_after(size_t n)
{
    void *p = malloc(n);
    memset(p, 3, n);
    return p;
}

__attribute__((noinline)) static void *site_oom(size_t n)
{
    void *p = malloc(n);
    if (p)
        memset(p, 4, n);
    return p;
}

/* heapsift_stats' dump counts (-1, -1 without the library). */
static void dump_counts(long long *written, long long *failed)
{
    struct heapsift_stats st;
    *written = *failed = -1;
    if (heapsift_stats(&st) == 0) {
        *written = (long long)st.dumps;
        *failed = (long long)st.dump_failures;
    }
}

/* Waits, ms at most, until the kept peak holds at least bytes; false if it never does
 * (true at once without the library or HEAPSIFT_PEAK). */
static int peak_wait(double bytes, long ms)
{
    struct heapsift_stats st;
    for (long w = 0; w < ms; w += 10) {
        if (heapsift_stats(&st) != 0 || st.peak_bytes >= bytes)
            return 1;
        msleep(10);
    }
    fprintf(stderr, "trig_prog: the kept peak never reached %.0f bytes in %ld ms\n", bytes, ms);
    return 0;
}

static void touch(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

/* Files in dir whose name contains what. */
static int count_files(const char *dir, const char *what)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += strstr(e->d_name, what) != NULL;
    if (d)
        closedir(d);
    return n;
}

static int mode_bytes(int mb, int step, const char *dir)
{
    void *keep = site_keep(MIB);
    for (int i = 1; i <= mb; i++) {
        for (int k = 0; k < 16; k++)
            site_churn(64 << 10);
        for (int w = 0; dir && step && i % step == 0 && w < 3000; w++)
            if (count_files(dir, ".bytes.") >= i / step)
                break;
            else
                msleep(10);
        msleep(20);
    }
    printf("site_keep %u\n", MIB);
    sink = keep;
    return 0;
}

static void *churner(void *arg)
{
    (void)arg;
    while (!stop)
        site_churn(4096);
    return NULL;
}

static int mode_sleep(long ms, const char *dir, int threads)
{
    pthread_t t[4];
    void *keep = site_keep(MIB);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, churner, NULL);
    if (dir)
        touch(dir, "ready");
    msleep(ms / 3);
    if (dir)
        mkdir(strcat(strcpy(malloc(strlen(dir) + 8), dir), "/made"), 0755);
    msleep(ms - ms / 3);
    long long written, failed;
    int w = 0;
    for (dump_counts(&written, &failed); threads && written == 0 && w < 3000; w++) {
        msleep(10);
        dump_counts(&written, &failed);
    }
    stop = 1;
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("site_keep %u\n", MIB);
    sink = keep;
    if (w == 3000)
        fprintf(stderr, "trig_prog: no dump written in 30 s\n");
    return w == 3000 ? 3 : 0;
}

static int mode_until(long ms, long long fails, long long dumps, const char *dir)
{
    void *keep = site_keep(MIB);
    long long written, failed;
    int made = 0, w = 0;
    if (dir)
        touch(dir, "ready");
    msleep(ms);
    for (; w < 6000; w++) {
        dump_counts(&written, &failed);
        if (written < 0)
            break; /* no library: nothing to wait for */
        if (!made && failed >= fails) {
            if (dir && fails > 0)
                mkdir(strcat(strcpy(malloc(strlen(dir) + 8), dir), "/made"), 0755);
            made = 1;
        }
        if (made && written >= dumps)
            break;
        msleep(10);
    }
    printf("site_keep %u\n", MIB);
    sink = keep;
    if (w == 6000)
        fprintf(stderr, "trig_prog: after 60 s, %lld dumps written, %lld failed; want %lld, %lld\n",
                written, failed, dumps, fails);
    return w == 6000 ? 3 : 0;
}

static int mode_peak(void)
{
    void *blocks[64];
    for (int i = 0; i < 64; i++)
        blocks[i] = site_peak(MIB);
    msleep(300);
    if (!peak_wait(0.98 * 64 * MIB, 30000))
        return 3;
    for (int i = 0; i < 64; i++)
        free(blocks[i]);
    for (int i = 0; i < 4; i++)
        sink = site_after(MIB);
    msleep(50);
    printf("peak site_peak %u\nexit site_after %u\n", 64 * MIB, 4 * MIB);
    return 0;
}

static int mode_grow(void)
{
    for (int i = 0; i < 64; i++) {
        if (i > 0 && !peak_wait(0.9 * i * MIB, 30000))
            return 3;
        sink = site_peak(MIB);
        msleep(10);
    }
    printf("site_peak %u\n", 64 * MIB);
    return 0;
}

static double vm_fraction(void)
{
    struct rlimit rl;
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return f ? (fclose(f), -1) : -1;
    if (fscanf(f, "%lu", &pages) != 1)
        pages = 0;
    fclose(f);
    return (double)pages * (double)sysconf(_SC_PAGESIZE) / (double)rl.rlim_cur;
}

/* Grows to 70% of the address-space limit; returns the blocks held. */
static int oom_grow(void **blocks, int max)
{
    int n = 0;
    while (n < max && vm_fraction() < 0.7) {
        if (!(blocks[n] = site_oom(4 * MIB)))
            break;
        n++;
        msleep(2);
    }
    msleep(300);
    return n;
}

static int mode_oom(void)
{
    static void *blocks[4096];
    if (vm_fraction() < 0) {
        printf("no RLIMIT_AS\n");
        return 3;
    }
    mallopt(M_MMAP_THRESHOLD, 1 << 20); /* fixed: freed 4 MiB blocks go back to the system */
    int n = oom_grow(blocks, 4096);
    for (int i = 0; i < n; i++)
        free(blocks[i]);
    msleep(300);
    n = oom_grow(blocks, 4096);
    printf("site_oom %llu\n", (unsigned long long)n * 4 * MIB);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "bytes") == 0 && argc > 2)
        return mode_bytes(atoi(argv[2]), argc > 4 ? atoi(argv[3]) : 0, argc > 4 ? argv[4] : NULL);
    if (strcmp(mode, "sleep") == 0 && argc > 2)
        return mode_sleep(atol(argv[2]), argc > 3 ? argv[3] : NULL, 0);
    if (strcmp(mode, "until") == 0 && argc > 4)
        return mode_until(atol(argv[2]), atoll(argv[3]), atoll(argv[4]), argc > 5 ? argv[5] : NULL);
    if (strcmp(mode, "storm") == 0 && argc > 3)
        return mode_sleep(atol(argv[2]), argv[3], 4);
    if (strcmp(mode, "peak") == 0)
        return mode_peak();
    if (strcmp(mode, "grow") == 0)
        return mode_grow();
    if (strcmp(mode, "oom") == 0)
        return mode_oom();
    fprintf(
        stderr,
        "usage: trig_prog bytes MB | sleep MS [DIR] | until MS FAILS DUMPS [DIR] | storm MS DIR | "
        "peak | grow | oom\n");
    return 64;
}
