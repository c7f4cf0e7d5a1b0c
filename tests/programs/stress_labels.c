/*
 * stress_labels: labels and trackers under concurrency, for
 * tests/stress/labels_trackers.sh. 8 threads run 400 rounds each; a round switches the
 * thread to tenant t<k> (40 tenants, so the same sets are interned from many threads at
 * once), sometimes adds or clears a second key, allocates 20 objects of known sizes
 * through stress_comp (which two trackers count: the first registered while the threads
 * run, the second half-way) or stress_other, and frees the objects of its round before
 * last. The main thread meanwhile dumps twice. The program counts, per tenant, the live
 * bytes allocated under each label set and, per function, the live bytes; it prints
 *   "label tenant tK BYTES" per tenant (samples through stress_site),
 *   "tracker NAME TRACKED TRUTH".
 * Built with HEAPSIFT_WEAK. usage: stress_labels DIR (where the mid-run dumps go)
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define ROUNDS 400
#define PER_ROUND 20
#define TENANTS 40
#define NOINLINE __attribute__((noinline))

typedef struct {
    void *p[PER_ROUND];
    size_t size[PER_ROUND];
    int tenant, comp;
} round_t;

static long long tenant_bytes[THREADS][TENANTS];
static long long comp_bytes[THREADS];
static volatile int started, half;

static NOINLINE void *stress_site(size_t size)
{
    char *p = malloc(size);
    if (!p)
        abort();
    p[0] = 1;
    __asm__ volatile("" ::: "memory");
    return p;
}

static NOINLINE void stress_comp(round_t *r)
{
    for (int i = 0; i < PER_ROUND; i++)
        r->p[i] = stress_site(r->size[i]);
    __asm__ volatile("" ::: "memory");
}

/* Allocates in the other order, so that identical-code folding cannot make it an alias
 * of stress_comp (whose tracker would then count it). */
static NOINLINE void stress_other(round_t *r)
{
    for (int i = PER_ROUND; i-- > 0;)
        r->p[i] = stress_site(r->size[i]);
    __asm__ volatile("" ::: "memory");
}

static void forget(int self, round_t *r)
{
    long long b = 0;
    for (int i = 0; i < PER_ROUND; i++) {
        free(r->p[i]);
        b += (long long)r->size[i];
    }
    tenant_bytes[self][r->tenant] -= b;
    if (r->comp)
        comp_bytes[self] -= b;
}

static void *worker(void *arg)
{
    int self = (int)(long)arg;
    static __thread round_t rounds[2];
    char name[16];
    for (int k = 0; k < ROUNDS; k++) {
        round_t *r = &rounds[k & 1];
        if (k >= 2)
            forget(self, r);
        r->tenant = (self * 7 + k * 3) % TENANTS;
        r->comp = (k + self) % 3 != 0;
        snprintf(name, sizeof(name), "t%d", r->tenant);
        heapsift_label_set("tenant", name);
        if (k % 5 == 0)
            heapsift_label_set("phase", k % 10 ? "odd" : "even");
        else if (k % 5 == 2)
            heapsift_label_clear("phase");
        long long b = 0;
        for (int i = 0; i < PER_ROUND; i++) {
            r->size[i] = 16 + (size_t)((self * 131 + k * 17 + i * 29) % 2000);
            b += (long long)r->size[i];
        }
        if (r->comp)
            stress_comp(r);
        else
            stress_other(r);
        tenant_bytes[self][r->tenant] += b;
        if (r->comp)
            comp_bytes[self] += b;
        if (self == 0 && k == 2)
            started = 1;
        if (self == 0 && k == ROUNDS / 2)
            half = 1;
    }
    heapsift_label_clear(NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t[THREADS];
    char path[4096];
    if (argc != 2)
        return 1;
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            abort();
    while (!started)
        ;
    int first = heapsift_tracker_new("comp", "stress_comp");
    snprintf(path, sizeof(path), "%s/mid.pb.gz", argv[1]);
    heapsift_dump(path);
    while (!half)
        ;
    int second = heapsift_tracker_new("comp2", "stress_comp");
    heapsift_dump(path);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    long long comp = 0;
    for (int k = 0; k < TENANTS; k++) {
        long long b = 0;
        for (int i = 0; i < THREADS; i++)
            b += tenant_bytes[i][k];
        printf("label tenant t%d %lld\n", k, b);
    }
    for (int i = 0; i < THREADS; i++)
        comp += comp_bytes[i];
    printf("tracker comp %lld %lld\n", heapsift_tracker_bytes(first), comp);
    printf("tracker comp2 %lld %lld\n", heapsift_tracker_bytes(second), comp);
    return 0;
}
