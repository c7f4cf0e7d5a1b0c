/*
 * stress_dlopen: blocks allocated by a dlopen'ed library outlive it.
 *
 * usage: stress_dlopen LIB_A LIB_B DIR
 *   Each library exports plugin_alloc(out, n, size), which allocates n blocks through its
 *   own allocation site (plugin_site_a or plugin_site_b, the same code built twice) and
 *   allocates and frees in its constructor and destructor. The program:
 *     1. loads and unloads LIB_A 20 times (allocating and freeing while loaded);
 *     2. loads LIB_A, allocates NA blocks of SA bytes in it, heapsift_dump(DIR/loaded.pb.gz)
 *        (which fills the dumps' symbol cache with A's addresses), unloads it (checked with
 *        RTLD_NOLOAD), heapsift_dump(DIR/gone.pb.gz), loads LIB_B (which may take LIB_A's old
 *        address, so that B's addresses are A's cached ones) and allocates NB blocks of SB
 *        bytes in it;
 *     3. heapsift_dump(DIR/unloaded.pb.gz): A's blocks are live, their stacks point into
 *        unloaded code;
 *     4. frees A's blocks, heapsift_dump(DIR/freed.pb.gz); then B's, and unloads B.
 *   Prints "a_bytes=NA*SA b_bytes=NB*SB". Exit 0 ok, 1 a failure (on stderr), 2
 *   heapsift_dump missing, 64 usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int heapsift_dump(const char *path) __attribute__((weak));

#define NA 300
#define SA 1111
#define NB 200
#define SB 2222

typedef void (*plugin_alloc_fn)(void **out, int n, size_t size);

static void *g_a[NA], *g_b[NB];

static void *load(const char *path, plugin_alloc_fn *fn)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "stress_dlopen: dlopen %s: %s\n", path, dlerror());
        return NULL;
    }
    *fn = (plugin_alloc_fn)dlsym(h, "plugin_alloc");
    if (!*fn) {
        fprintf(stderr, "stress_dlopen: dlsym plugin_alloc in %s: %s\n", path, dlerror());
        dlclose(h);
        return NULL;
    }
    return h;
}

static int unload(void *h, const char *path)
{
    if (dlclose(h) != 0) {
        fprintf(stderr, "stress_dlopen: dlclose %s: %s\n", path, dlerror());
        return 1;
    }
    void *again = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (again) {
        fprintf(stderr, "stress_dlopen: %s still loaded after dlclose\n", path);
        dlclose(again);
        return 1;
    }
    return 0;
}

static int check(void **v, int n, size_t size)
{
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < size; k++)
            if (((unsigned char *)v[i])[k] != 0x5a) {
                fprintf(stderr, "stress_dlopen: block %d corrupt\n", i);
                return 1;
            }
    return 0;
}

static int dump(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = heapsift_dump(path);
    if (rc != 0)
        fprintf(stderr, "stress_dlopen: heapsift_dump(%s) = %d\n", path, rc);
    return rc != 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: stress_dlopen LIB_A LIB_B DIR\n");
        return 64;
    }
    if (!heapsift_dump) {
        fprintf(stderr, "stress_dlopen: heapsift_dump not found (library not loaded)\n");
        return 2;
    }
    const char *la = argv[1], *lb = argv[2], *dir = argv[3];
    plugin_alloc_fn fa, fb;
    int bad = 0;
    for (int round = 0; round < 20 && !bad; round++) {
        void *tmp[10];
        void *h = load(la, &fa);
        if (!h)
            return 1;
        fa(tmp, 10, 100 + (size_t)round);
        for (int i = 0; i < 10; i++)
            free(tmp[i]);
        bad |= unload(h, la);
    }
    void *ha = load(la, &fa);
    if (!ha)
        return 1;
    fa(g_a, NA, SA);
    bad |= dump(dir, "loaded.pb.gz");
    bad |= unload(ha, la);
    bad |= dump(dir, "gone.pb.gz");
    void *hb = load(lb, &fb);
    if (!hb)
        return 1;
    fb(g_b, NB, SB);
    bad |= check(g_a, NA, SA) | check(g_b, NB, SB);
    bad |= dump(dir, "unloaded.pb.gz");
    for (int i = 0; i < NA; i++)
        free(g_a[i]);
    bad |= dump(dir, "freed.pb.gz");
    for (int i = 0; i < NB; i++)
        free(g_b[i]);
    bad |= unload(hb, lb);
    printf("a_bytes=%d b_bytes=%d\n", NA * SA, NB * SB);
    return bad ? 1 : 0;
}
