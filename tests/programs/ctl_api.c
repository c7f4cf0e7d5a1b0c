/*
 * The control API test's program (tests/integration/control_api.sh), built with
 * HEAPSIFT_WEAK so it links without the library and runs with or without it. Steps, each
 * printing one line the script checks:
 *   loaded 0|1
 *   active: site_on 4 MiB live, set_active(0), site_off 4 MiB live, dump DIR/off.pb.gz,
 *           set_active(1)                                        -> "active RC RC"
 *   reset: site_gone allocates and frees 4 MiB, reset, dump DIR/reset.pb.gz -> "reset RC"
 *   rate: samples taken by 4 MiB of 256-byte blocks at the start rate, set_rate(4096),
 *         the same again (site_r2, kept live), dump DIR/rate.pb.gz
 *                                                  -> "rate RC SAMPLES_BEFORE SAMPLES_AFTER"
 *   stats: "stats RC allocs live ci95 rss profiler"
 *   write: heapsift_write to DIR/write.pb.gz (gzipped) and DIR/write.pb (raw) -> "write RC RC"
 * Without the library every call returns -ENOSYS (-38).
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1u << 20)

static void *volatile sink;
static char dir[4000];

static const char *at(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return path;
}

/* Each site stores a different byte, so that identical-code folding keeps them apart. */
__attribute__((noinline)) static void site_on(void **keep)
{
    for (int i = 0; i < 1024; i++)
        *(char *)(keep[i] = malloc(4096)) = 1;
}

__attribute__((noinline)) static void site_off(void **keep)
{
    for (int i = 0; i < 1024; i++)
        *(char *)(keep[i] = malloc(4096)) = 2;
}

__attribute__((noinline)) static void site_gone(void)
{
    for (int i = 0; i < 1024; i++) {
        void *p = malloc(4096);
        sink = p;
        free(p);
    }
}

__attribute__((noinline)) static void site_r1(void **keep)
{
    for (int i = 0; i < 16384; i++)
        *(char *)(keep[i] = malloc(256)) = 3;
}

__attribute__((noinline)) static void site_r2(void **keep)
{
    for (int i = 0; i < 16384; i++)
        *(char *)(keep[i] = malloc(256)) = 4;
}

static unsigned long long samples(void)
{
    struct heapsift_stats st;
    return heapsift_stats(&st) == 0 ? st.live_samples : 0;
}

static int write_to(const char *name, int format)
{
    int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = heapsift_write(fd, format);
    if (fd >= 0)
        close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    static void *on[1024], *off[1024], *r1[16384], *r2[16384];
    struct heapsift_stats st;
    snprintf(dir, sizeof(dir), "%s", argc > 1 ? argv[1] : ".");
    printf("loaded %d\n", heapsift_loaded());
    site_on(on);
    int a = heapsift_set_active(0);
    site_off(off);
    int d = heapsift_dump(at("off.pb.gz"));
    heapsift_set_active(1);
    printf("active %d %d\n", a, d);
    site_gone();
    int r = heapsift_reset();
    printf("reset %d %d\n", r, heapsift_dump(at("reset.pb.gz")));
    unsigned long long s0 = samples();
    site_r1(r1);
    unsigned long long s1 = samples();
    r = heapsift_set_rate(4096);
    site_r2(r2);
    unsigned long long s2 = samples();
    d = heapsift_dump(at("rate.pb.gz"));
    printf("rate %d %d %llu %llu\n", r, d, s1 - s0, s2 - s1);
    r = heapsift_stats(&st);
    printf("stats %d %llu %.0f %.0f %llu %llu\n", r, st.allocs, st.live_bytes, st.live_bytes_ci95,
           st.rss, st.profiler_bytes);
    printf("write %d %d\n", write_to("write.pb.gz", HEAPSIFT_FORMAT_PPROF_GZ),
           write_to("write.pb", HEAPSIFT_FORMAT_PPROF));
    printf("bad %d %d\n", heapsift_set_rate(0), heapsift_write(-1, 0));
    sink = on[0] != off[0] && r1[0] != r2[0] ? on : NULL;
    return 0;
}
