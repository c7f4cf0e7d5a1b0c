/*
 * labeled: threads with known labels allocating known amounts, for
 * tests/integration/labels.sh. Every thread allocates through the same functions
 * (work -> site_alloc), so the same stack appears under several label sets. Built with
 * HEAPSIFT_WEAK; without the library the label calls return -ENOSYS and it still runs.
 *
 * usage: labeled [--expect] [--overflow N]
 *   default: main (no labels) keeps 1000 x 1024 B; thread acme (tenant=acme) keeps
 *            3000 x 1024 B and allocates and frees 1000 x 4096 B; thread globex
 *            (tenant=globex) keeps 2000 x 2048 B; thread mixed keeps 500 x 4096 B with
 *            tenant=acme,region=eu, then clears tenant and keeps 700 x 1024 B with
 *            region=eu, then clears everything and keeps 300 x 1024 B.
 *   --expect: prints the truth, one line per (key, value) with "-" for "key absent":
 *            "label KEY VALUE INUSE_OBJECTS INUSE_BYTES ALLOC_OBJECTS ALLOC_BYTES"
 *            (request sizes), and the API's answers as "rc NAME VALUE".
 *   --overflow N: one thread sets tenant=t0 .. t<N-1> in turn, keeping one 1024 B object
 *            under each; prints "overflow OK ENOSPC" (how many sets succeeded / failed).
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static void *volatile sink;

/* Keeps n objects of size bytes live (or frees them when keep is 0). */
static NOINLINE void site_alloc(int n, size_t size, int keep)
{
    for (int i = 0; i < n; i++) {
        char *p = malloc(size);
        if (!p)
            abort();
        p[0] = (char)i;
        sink = p;
        if (!keep)
            free(p);
    }
    __asm__ volatile("" ::: "memory");
}

static NOINLINE void work(int n, size_t size, int keep)
{
    site_alloc(n, size, keep);
    __asm__ volatile("" ::: "memory");
}

static int rc_bad_key, rc_long_key, rc_too_many, rc_null_value;

typedef struct {
    const char *tenant;
    int n, transient;
    size_t size;
} tenant_job_t;

/* The acme and globex threads: the same code, so the same stacks under two labels. */
static void *tenant_main(void *arg)
{
    const tenant_job_t *j = arg;
    heapsift_label_set("tenant", j->tenant);
    work(j->n, j->size, 1);
    if (j->transient)
        work(j->transient, 4096, 0);
    return NULL;
}

/* The API's refusals; none of them may change the thread's labels. */
static void refusals(void)
{
    char key[300], many[16][8];
    rc_bad_key = heapsift_label_set("", "x");
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    rc_long_key = heapsift_label_set(key, "x");
    rc_null_value = heapsift_label_set("tenant", NULL);
    heapsift_label_clear("nosuchkey");
    /* Beside region, 15 more keys fit (16 per set), the 16th does not; the thread's set
     * is then the one with 16 keys, which the caller clears. */
    for (int i = 0; i < 16; i++) {
        snprintf(many[i], sizeof(many[i]), "k%02d", i);
        rc_too_many = heapsift_label_set(many[i], "v");
    }
}

/* Three phases from one call site, so one stack under three label sets. */
static void *mixed(void *arg)
{
    static const struct {
        int op; /* 0: tenant=acme,region=eu; 1: clear tenant; 2: clear all */
        int n;
        size_t size;
    } phases[] = {{0, 500, 4096}, {1, 700, 1024}, {2, 300, 1024}};
    (void)arg;
    for (int i = 0; i < 3; i++) {
        if (phases[i].op == 0) {
            heapsift_label_set("tenant", "acme");
            heapsift_label_set("region", "eu");
        } else if (phases[i].op == 1) {
            heapsift_label_clear("tenant");
        } else {
            refusals();
            heapsift_label_clear(NULL);
        }
        work(phases[i].n, phases[i].size, 1);
    }
    return NULL;
}

static void run(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, arg) != 0 || pthread_join(t, NULL) != 0)
        abort();
}

static void expect(void)
{
    /* key value inuse_objects inuse_bytes alloc_objects alloc_bytes */
    printf("label tenant acme %d %d %d %d\n", 3500, 3000 * 1024 + 500 * 4096, 4500,
           3000 * 1024 + 1000 * 4096 + 500 * 4096);
    printf("label tenant globex %d %d %d %d\n", 2000, 2000 * 2048, 2000, 2000 * 2048);
    printf("label tenant - %d %d %d %d\n", 2000, 2000 * 1024, 2000, 2000 * 1024);
    printf("label region eu %d %d %d %d\n", 1200, 500 * 4096 + 700 * 1024, 1200,
           500 * 4096 + 700 * 1024);
    printf("label region - %d %d %d %d\n", 6300, 4000 * 1024 + 2000 * 2048 + 300 * 1024, 7300,
           4000 * 1024 + 2000 * 2048 + 300 * 1024 + 1000 * 4096);
    printf("rc bad_key %d\nrc long_key %d\nrc null_value %d\nrc too_many %d\n", rc_bad_key,
           rc_long_key, rc_null_value, rc_too_many);
}

static void overflow(int n)
{
    int ok = 0, full = 0;
    char v[32];
    for (int i = 0; i < n; i++) {
        snprintf(v, sizeof(v), "t%d", i);
        int rc = heapsift_label_set("tenant", v);
        ok += rc == 0;
        full += rc == -28; /* -ENOSPC */
        work(1, 1024, 1);
    }
    printf("overflow %d %d\n", ok, full);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--overflow") == 0) {
        overflow(atoi(argv[2]));
        return 0;
    }
    work(1000, 1024, 1);
    tenant_job_t acme = {"acme", 3000, 1000, 1024}, globex = {"globex", 2000, 0, 2048};
    run(tenant_main, &acme);
    run(tenant_main, &globex);
    run(mixed, NULL);
    if (argc > 1 && strcmp(argv[1], "--expect") == 0)
        expect();
    return 0;
}
