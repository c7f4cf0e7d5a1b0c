/*
 * The reconciliation tests' program (tests/integration/stats_reconcile.sh): makes the
 * process hold memory of one known kind when it exits (the exit profile's accounting):
 *   acct_prog frag     200000 blocks of 1000 bytes, every other one freed: ~100 MB live in
 *                      site_frag, ~100 MB of free chunks the allocator cannot return
 *   acct_prog retain   100000 blocks of 1000 bytes, all freed but the last: ~100 MB of free
 *                      space below the last block, kept by the allocator
 *   acct_prog mmap     128 MiB mmap'd directly and touched: not heap at all
 *   acct_prog bigmap   the same, beside a 20 GiB reservation never touched (read/write,
 *                      MAP_NORESERVE): too big to probe, so the dump reads smaps instead
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *volatile sink;

__attribute__((noinline)) static void *site_frag(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    static void *blocks[200000];
    if (strcmp(mode, "frag") == 0 || strcmp(mode, "retain") == 0) {
        int n = mode[0] == 'f' ? 200000 : 100000;
        for (int i = 0; i < n; i++)
            blocks[i] = site_frag(1000);
        for (int i = 0; i < n - 1; i++)
            if (mode[0] == 'r' || i % 2 == 0)
                free(blocks[i]);
        sink = blocks;
        return 0;
    }
    if (strcmp(mode, "mmap") == 0 || strcmp(mode, "bigmap") == 0) {
        size_t len = 128u << 20;
        if (mode[0] == 'b' &&
            mmap(NULL, 20ull << 30, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED)
            return 2;
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        memset(p, 5, len);
        sink = p;
        return 0;
    }
    fprintf(stderr, "usage: acct_prog frag|retain|mmap|bigmap\n");
    return 64;
}
