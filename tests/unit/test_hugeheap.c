/*
 * Unit test of the CLI's heap in transparent huge pages (src/common/base/hugeheap.c): one
 * call grows malloc's heap by what was asked for at once and advises it MADV_HUGEPAGE (the
 * kernel's VmFlags "hg" on the heap's memory, from the first block allocated after: whether it then
 * gets huge pages depends on what memory the machine has free, so that is not checked); a 20 MiB
 * block comes from that heap, not from an mmap of its own; freeing it does not give the heap back;
 * the environment is not touched (a program the CLI starts inherits nothing). Skipped (77) under a
 * sanitizer, whose malloc is not glibc's. Standalone; exits non-zero naming each failure.
 */
#define _GNU_SOURCE
#include "base/hugeheap.h"

#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ASK ((size_t)40 << 20)
#define BLOCK ((size_t)20 << 20)

/* Whether the mapping that holds addr has flag (two letters) in its VmFlags. */
static bool smaps_flag(uintptr_t addr, const char *flag)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return false;
    char line[512];
    bool in = false, found = false;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = addr >= lo && addr < hi;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0) {
            for (char *t = strtok(line + 8, " \n"); t; t = strtok(NULL, " \n"))
                found |= strcmp(t, flag) == 0;
            break;
        }
    }
    fclose(f);
    return found;
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    puts("test_hugeheap: skipped (a sanitizer's malloc)");
    return 77;
#endif
    const char *tun = getenv("GLIBC_TUNABLES");
    char *tun_before = tun ? strdup(tun) : NULL;
    uintptr_t brk0 = (uintptr_t)sbrk(0);
    CHECK(hs_heap_huge(ASK));
    uintptr_t brk1 = (uintptr_t)sbrk(0);
    CHECK(brk1 >= brk0 + ASK, "the heap grew by %zu", (size_t)(brk1 - brk0));

    char *small = malloc(100); /* the first block after: advised too, not below them */
    CHECK(small && smaps_flag((uintptr_t)small, "hg"), "a small block from unadvised memory");
    free(small);
    uint8_t *b = malloc(BLOCK);
    CHECK(b != NULL);
    uintptr_t a = (uintptr_t)b;
    CHECK(a >= brk0 && a + BLOCK <= brk1, "block %p outside the heap [%#lx, %#lx)", (void *)b,
          (unsigned long)brk0, (unsigned long)brk1);
    if (b)
        memset(b, 1, BLOCK);
    CHECK(smaps_flag(a + BLOCK / 2, "hg"), "the block's memory is not advised MADV_HUGEPAGE");
    free(b);
    CHECK((uintptr_t)sbrk(0) == brk1, "the heap was trimmed after free");

    tun = getenv("GLIBC_TUNABLES");
    CHECK((tun == NULL) == (tun_before == NULL) && (!tun || strcmp(tun, tun_before) == 0),
          "GLIBC_TUNABLES changed");
    free(tun_before);
    return hs_check_done("test_hugeheap");
}
