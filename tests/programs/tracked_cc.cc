/*
 * tracked_cc: trackers on C++ functions, for tests/integration/trackers.sh. Each function
 * keeps what it allocates (plain malloc and operator new[] of known sizes, no containers
 * whose growth policy would blur the truth) and the program counts it. Prints "tracker
 * NAME TRACKED TRUTH" for: a member function by its qualified name (both overloads), one
 * overload by its signature, a function template by its name (every instance) and one
 * instance by its template arguments, a global function by its plain name, and an
 * always-inline member by its qualified name (found through DWARF only).
 * Built with HEAPSIFT_WEAK.
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <cstdio>
#include <cstdlib>

static void *keep[4096];
static int nkeep;

static void hold(void *p)
{
    if (!p || nkeep == 4096)
        abort();
    keep[nkeep++] = p;
}

namespace cache
{
struct Lru {
    long long bytes = 0;
    __attribute__((noinline)) void put(int n)
    {
        for (int i = 0; i < n; i++)
            hold(malloc(100));
        bytes += 100LL * n;
    }
    /* Inlined into hot_user1 and hot_user2: no symbol of its own, only DWARF. */
    inline __attribute__((always_inline)) void hot(int n)
    {
        for (int i = 0; i < n; i++)
            hold(malloc(300));
        bytes += 300LL * n;
    }
    __attribute__((noinline)) void put(int n, char c)
    {
        for (int i = 0; i < n; i++)
            hold(new char[200 + (c & 1)]);
        bytes += (200LL + (c & 1)) * n;
    }
};

template <typename T> __attribute__((noinline)) long long fill(int n)
{
    for (int i = 0; i < n; i++)
        hold(new T[4]);
    return (long long)n * 4 * (long long)sizeof(T);
}
} // namespace cache

__attribute__((noinline)) long long hot_user1(cache::Lru &l)
{
    long long before = l.bytes;
    l.hot(6);
    return l.bytes - before;
}

__attribute__((noinline)) long long hot_user2(cache::Lru &l)
{
    long long before = l.bytes;
    l.hot(9);
    return l.bytes - before;
}

__attribute__((noinline)) long long lru_put(int n)
{
    for (int i = 0; i < n; i++)
        hold(malloc(1000));
    return 1000LL * n;
}

int main()
{
    int all = heapsift_tracker_new("all", "cache::Lru::put");
    int sig = heapsift_tracker_new("sig", "cache::Lru::put(int, char)");
    int tmpl = heapsift_tracker_new("tmpl", "cache::fill");
    int inst = heapsift_tracker_new("inst", "cache::fill<long>");
    int glob = heapsift_tracker_new("glob", "lru_put");
    int hot = heapsift_tracker_new("hot", "cache::Lru::hot");
    cache::Lru l;
    l.put(10);
    long long before = l.bytes;
    l.put(20, 'y');
    long long sig_truth = l.bytes - before;
    long long longs = cache::fill<long>(30);
    long long ints = cache::fill<int>(40);
    long long glob_truth = lru_put(7);
    long long hot_truth = hot_user1(l) + hot_user2(l);
    printf("tracker all %lld %lld\n", heapsift_tracker_bytes(all), l.bytes - hot_truth);
    printf("tracker sig %lld %lld\n", heapsift_tracker_bytes(sig), sig_truth);
    printf("tracker tmpl %lld %lld\n", heapsift_tracker_bytes(tmpl), longs + ints);
    printf("tracker inst %lld %lld\n", heapsift_tracker_bytes(inst), longs);
    printf("tracker glob %lld %lld\n", heapsift_tracker_bytes(glob), glob_truth);
    printf("tracker hot %lld %lld\n", heapsift_tracker_bytes(hot), hot_truth);
    return 0;
}
