/*
 * dump_repeat: how long each of a program's repeated dumps takes, as with a periodic
 * trigger or a scraped /debug/pprof/heap. It builds a C++ heap (a std::map of strings to
 * vectors of strings: std::allocator's inlined frames, file:line from its DWARF) and then
 * writes the profile N times to /dev/null with heapsift_write, timing each call.
 *
 * Usage: dump_repeat [N [KEYS]]   (defaults 8, 200000); prints the N durations in ms.
 * Run it preloaded (HEAPSIFT_RATE=4096 gives a few hundred locations).
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

static double now_ms()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    long keys = argc > 2 ? atol(argv[2]) : 200000;
    if (!heapsift_version()) {
        fprintf(stderr, "dump_repeat: no heapsift (run it with LD_PRELOAD)\n");
        return 2;
    }
    std::map<std::string, std::vector<std::string>> m;
    for (long i = 0; i < keys; i++)
        m[std::to_string(i * 7919)].push_back(std::string(40 + (size_t)(i % 100), 'x'));
    int fd = open("/dev/null", O_WRONLY);
    for (int k = 0; k < n; k++) {
        double t0 = now_ms();
        int rc = heapsift_write(fd, HEAPSIFT_FORMAT_PPROF_GZ);
        printf("%s%.3f", k ? " " : "", now_ms() - t0);
        if (rc != 0)
            printf("(rc=%d)", rc);
    }
    printf("\n");
    close(fd);
    return m.empty();
}
