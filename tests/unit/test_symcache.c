/*
 * Unit test of the dumps' symbol cache (src/preload/output/symcache.c): frames come back as they
 * were put, strings equal and interned (one copy per distinct string); an address cached
 * under one mapping is not found under another, and putting it again under the new one
 * replaces it; an address with no frames is cached as such; 30,000 addresses grow the
 * tables and all stay found; at HS_SYMCACHE_MAX_BYTES it keeps its entries and takes no
 * new ones, its memory never above the limit, but starts over when most of what it holds
 * is replaced entries' frames. Each case runs in a child process of its own, so that each
 * starts from an empty cache: the library never empties it from outside (a dump keeps it
 * for the next), so it has no call to do so.
 */
#include "output/symcache.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static hs_map_t map_at(uint64_t start, uint64_t inode)
{
    hs_map_t m;
    memset(&m, 0, sizeof(m));
    m.start = start;
    m.limit = start + 0x10000;
    m.offset = 0x1000;
    m.inode = inode;
    m.dev = 8;
    return m;
}

static void test_put_get(void)
{
    hs_map_t a = map_at(0x400000, 11), b = map_at(0x400000, 12), c = map_at(0x400000, 11);
    uint64_t ka = hs_symcache_map_key(&a), kb = hs_symcache_map_key(&b);
    CHECK(ka != 0 && kb != 0 && ka != kb, "keys %llx %llx", (unsigned long long)ka,
          (unsigned long long)kb);
    snprintf(c.build_id, sizeof(c.build_id), "%s", "89abcdef");
    CHECK(hs_symcache_map_key(&c) != ka, "the build id is part of the key");

    char inner[] = "inlined_helper", outer[] = "caller", file[] = "/src/x.c";
    hs_symbol_t in[2] = {
        {.name = inner, .system_name = NULL, .file = file, .line = 7, .start_line = 5},
        {.name = outer, .system_name = "_Z6callerv", .file = file, .line = 40}};
    const hs_symbol_t *out = NULL;
    size_t n = 99;
    CHECK(!hs_symcache_get(0x401234, ka, &out, &n), "empty cache");
    hs_symcache_put(0x401234, ka, in, 2);
    strcpy(inner, "overwritten!!"); /* the cache holds copies */
    CHECK(hs_symcache_get(0x401234, ka, &out, &n) && n == 2, "cached, n %zu", n);
    if (out && n == 2) {
        CHECK(strcmp(out[0].name, "inlined_helper") == 0, "name %s", out[0].name);
        CHECK(out[0].system_name == NULL && out[0].line == 7 && out[0].start_line == 5, "frame 0");
        CHECK(strcmp(out[1].system_name, "_Z6callerv") == 0 && out[1].line == 40, "frame 1");
        CHECK(out[0].file == out[1].file, "one copy of the file name");
    }
    CHECK(!hs_symcache_get(0x401234, kb, &out, &n), "another mapping at the same place");
    hs_symcache_put(0x401234, kb, in + 1, 1);
    CHECK(hs_symcache_get(0x401234, kb, &out, &n) && n == 1 && strcmp(out[0].name, "caller") == 0,
          "replaced under the new mapping");
    CHECK(!hs_symcache_get(0x401234, ka, &out, &n), "the old mapping's entry is gone");

    hs_symcache_put(0x405000, ka, NULL, 0);
    CHECK(hs_symcache_get(0x405000, ka, &out, &n) && n == 0, "nothing known, cached");
    hs_symcache_put(0, ka, in, 1);
    CHECK(!hs_symcache_get(0, ka, &out, &n), "address 0 is never cached");
    CHECK(hs_symcache_mem() > 0, "memory counted");
}

/* 30,000 addresses over 1,000 functions: every entry found, names shared. */
static void test_many(void)
{
    hs_map_t m = map_at(0x7f0000000000, 99);
    uint64_t k = hs_symcache_map_key(&m);
    char name[64];
    for (uint64_t i = 0; i < 30000; i++) {
        snprintf(name, sizeof(name), "function_number_%llu", (unsigned long long)(i % 1000));
        hs_symbol_t f = {
            .name = name, .system_name = name, .file = "/src/many.c", .line = (int64_t)i};
        hs_symcache_put(m.start + i * 4, k, &f, 1);
    }
    size_t bad = 0;
    const hs_symbol_t *first = NULL;
    for (uint64_t i = 0; i < 30000; i++) {
        const hs_symbol_t *out;
        size_t n;
        snprintf(name, sizeof(name), "function_number_%llu", (unsigned long long)(i % 1000));
        if (!hs_symcache_get(m.start + i * 4, k, &out, &n) || n != 1 || out[0].line != (int64_t)i ||
            strcmp(out[0].name, name) != 0 || out[0].name != out[0].system_name) {
            bad++;
            continue;
        }
        if (i == 0)
            first = out;
        else if (i % 1000 == 0 && first)
            CHECK(out[0].name == first[0].name, "entry %llu: name not shared",
                  (unsigned long long)i);
    }
    CHECK(bad == 0, "%zu of 30000 entries wrong or missing", bad);
    size_t mem = hs_symcache_mem();
    CHECK(mem > 30000 * 64 && mem <= HS_SYMCACHE_MAX_BYTES, "memory %zu", mem);
}

/* Distinct long names until the limit is passed: what is there stays, the rest is not
 * kept, and the memory stays under the limit. */
static void test_limit(void)
{
    hs_map_t m = map_at(0x10000000, 5);
    uint64_t k = hs_symcache_map_key(&m);
    static char name[4000];
    size_t most = 0;
    memset(name, 'n', sizeof(name) - 1);
    for (uint64_t i = 0; i < 6000; i++) { /* 24 MB of distinct names */
        snprintf(name, 32, "%020llu", (unsigned long long)i);
        name[20] = 'n';
        hs_symbol_t f = {.name = name, .line = 1};
        hs_symcache_put(m.start + i, k, &f, 1);
        size_t mem = hs_symcache_mem();
        most = mem > most ? mem : most;
    }
    const hs_symbol_t *out;
    size_t n;
    CHECK(most <= HS_SYMCACHE_MAX_BYTES && most > HS_SYMCACHE_MAX_BYTES / 2, "memory reached %zu",
          most);
    CHECK(hs_symcache_get(m.start, k, &out, &n) && n == 1 && strncmp(out[0].name, "000", 3) == 0,
          "the first entry kept");
    CHECK(!hs_symcache_get(m.start + 5999, k, &out, &n), "the last entry not kept");
}

/* The puts of one dump of a library's 1,000 addresses under key k: those the cache does
 * not hold are put (as dump.c does). Returns how many were found. */
static size_t remap_dump(uint64_t start, uint64_t k, uint64_t round)
{
    static char name[2000];
    size_t found = 0;
    memset(name, 'r', sizeof(name) - 1);
    for (uint64_t i = 0; i < 1000; i++) {
        const hs_symbol_t *out;
        size_t n;
        if (hs_symcache_get(start + i * 8, k, &out, &n)) {
            found += n == 1 && out[0].line == (int64_t)i;
            continue;
        }
        snprintf(name, 32, "%010llu_%010llu", (unsigned long long)round, (unsigned long long)i);
        name[21] = 'r';
        hs_symbol_t f = {.name = name, .line = (int64_t)i};
        hs_symcache_put(start + i * 8, k, &f, 1);
    }
    return found;
}

/* A library re-mapped under a new key again and again (a plugin rebuilt and reloaded),
 * dumped three times each time: the replaced frames fill the cache, which starts over
 * (dropping what the first dump had put before that point; the second puts it again), so
 * the third dump of each mapping finds every address. */
static void test_remapped(void)
{
    hs_map_t m = map_at(0x20000000, 1);
    size_t restarts = 0, prev = 0, most = 0;
    for (uint64_t round = 0; round < 100; round++) {
        m.inode = 1000 + round;
        uint64_t k = hs_symcache_map_key(&m);
        remap_dump(m.start, k, round);
        size_t mem = hs_symcache_mem();
        restarts += mem < prev;
        most = mem > most ? mem : most;
        remap_dump(m.start, k, round); /* puts what a start-over in the first one dropped */
        size_t found = remap_dump(m.start, k, round);
        CHECK(found == 1000, "round %llu: the third dump found %zu of 1000",
              (unsigned long long)round, found);
        prev = hs_symcache_mem();
        most = prev > most ? prev : most;
    }
    CHECK(restarts >= 2 && most <= HS_SYMCACHE_MAX_BYTES, "started over %zu times, memory %zu",
          restarts, most);
}

/* Runs fn in a child, on the cache as the parent left it: empty, since the parent never
 * touches it. The child's failures (printed by it) come back as its exit status. */
static void run_case(const char *name, void (*fn)(void))
{
    int status = -1;
    fflush(NULL); /* nothing buffered for the child to print again */
    pid_t pid = fork();
    if (pid == 0) {
        hs_check_failures = 0; /* the earlier cases' count is the parent's */
        fn();
        exit(hs_check_failures ? 1 : 0); /* exit, not _exit: LeakSanitizer checks the child */
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0,
          "%s: status %#x", name, (unsigned)status);
}

int main(void)
{
    run_case("put_get", test_put_get);
    run_case("many", test_many);
    run_case("limit", test_limit);
    run_case("remapped", test_remapped);
    return hs_check_done("test_symcache");
}
