/*
 * stackoracle: allocation sites that record their own whole stack with glibc's backtrace()
 * (execinfo), for tests/integration/stack_oracle.sh, an oracle for the profile's stacks
 * that shares no code with heapsift's unwinders. site_leaf makes two calls through one
 * indirect call instruction: first to oracle_record (backtrace() of that call, without
 * oracle_record's own frame), then to malloc. Both calls leave from the same return
 * address, so a profile at HEAPSIFT_RATE=1 must hold the recorded stack frame for frame,
 * from site_leaf out to _start (main thread) or clone3 (the pthread).
 * Sites (each size unique, objects kept live):
 *   7771 main <- site_a <- site_leaf
 *   7773 main <- site_b <- site_c <- site_leaf
 *   7777 thread_entry <- site_b <- site_c <- site_leaf   (a pthread)
 * Built twice: stackoracle with -fomit-frame-pointer like every test program, and
 * stackoracle_fp with frame pointers (for HEAPSIFT_UNWIND=fp).
 *
 * usage: stackoracle STACKS_OUT [MAPS_OUT]
 *   STACKS_OUT  one line per site: SIZE ROOT PC0 PC1 ... (hex, innermost first); ROOT is
 *               the index of the frame in main or thread_entry, the last one of the
 *               program's own (fp cannot be followed through glibc beyond it)
 *   MAPS_OUT    a copy of /proc/self/maps taken after the last allocation
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "site.h"

#define MAX_FRAMES 256

typedef void *(*alloc_fn)(size_t);

static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread uintptr_t root_caller; /* a return address in main or thread_entry */
static void *volatile keep[8];
static volatile unsigned nkeep;

static SITE void *oracle_record(size_t size)
{
    void *pcs[MAX_FRAMES];
    int n = backtrace(pcs, MAX_FRAMES), root = -1;

    for (int i = 1; i < n; i++)
        if ((uintptr_t)pcs[i] == root_caller && root < 0)
            root = i - 1;
    pthread_mutex_lock(&out_lock);
    fprintf(out, "%zu %d", size, root);
    for (int i = 1; i < n; i++) /* pcs[0] is this function's own return address */
        fprintf(out, " %#lx", (unsigned long)(uintptr_t)pcs[i]);
    fputc('\n', out);
    pthread_mutex_unlock(&out_lock);
    return NULL;
}

static alloc_fn volatile calls[2] = {oracle_record, malloc};

static SITE void *site_leaf(size_t size)
{
    void *p = NULL;

    /* A volatile counter: one loop, one call instruction, never unrolled into two. */
    for (volatile int k = 0; k < 2; k++) {
        int i = k;
        p = calls[i](size);
    }
    if (p)
        ((volatile char *)p)[0] = 1;
    keep[nkeep++ % 8] = p;
    return p;
}

static SITE void site_c(size_t size)
{
    site_leaf(size);
    __asm__ volatile("" ::: "memory");
}

static SITE void site_b(size_t size)
{
    root_caller = (uintptr_t)__builtin_return_address(0);
    site_c(size);
    __asm__ volatile("" ::: "memory");
}

static SITE void site_a(size_t size)
{
    root_caller = (uintptr_t)__builtin_return_address(0);
    site_leaf(size);
    __asm__ volatile("" ::: "memory");
}

static SITE void *thread_entry(void *arg)
{
    site_b(7777);
    __asm__ volatile("" ::: "memory");
    return arg;
}

static int copy_maps(const char *path)
{
    FILE *in = fopen("/proc/self/maps", "r"), *o = fopen(path, "w");
    char line[4096];
    int rc = 0;

    if (!in || !o)
        rc = -1;
    while (rc == 0 && fgets(line, sizeof(line), in))
        fputs(line, o);
    if (o && fclose(o) != 0)
        rc = -1;
    if (in)
        fclose(in);
    return rc;
}

int main(int argc, char **argv)
{
    pthread_t th;
    void *warm[4];

    if (argc < 2 || !(out = fopen(argv[1], "w"))) {
        fprintf(stderr, "usage: stackoracle STACKS_OUT [MAPS_OUT]\n");
        return 1;
    }
    (void)backtrace(warm, 4); /* loads libgcc_s before the first site */
    site_a(7771);
    site_b(7773);
    if (pthread_create(&th, NULL, thread_entry, NULL) != 0 || pthread_join(th, NULL) != 0) {
        fprintf(stderr, "stackoracle: pthread_create failed\n");
        return 1;
    }
    if (fclose(out) != 0 || (argc > 2 && copy_maps(argv[2]) != 0)) {
        fprintf(stderr, "stackoracle: cannot write %s\n", argc > 2 ? argv[2] : argv[1]);
        return 1;
    }
    return 0;
}
