/*
 * nofde: allocation sites in code without unwind tables but with frame pointers, as most
 * of Debian's Chromium is (tests/integration/unwind_nofde.sh builds it with
 * -fno-asynchronous-unwind-tables -fno-omit-frame-pointer): nofde_top calls nofde_mid,
 * which calls nofde_leaf, which keeps 1000 blocks of 1000 bytes. The DWARF unwinder finds
 * no FDE for them and must follow their frame pointers. Prints "nofde done".
 */
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep[1000];

__attribute__((noinline)) void *nofde_leaf(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) void *nofde_mid(size_t n)
{
    void *p = nofde_leaf(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) void *nofde_top(size_t n)
{
    void *p = nofde_mid(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

int main(void)
{
    for (int i = 0; i < 1000; i++)
        keep[i] = nofde_top(1000);
    printf("nofde done\n");
    return keep[0] == NULL;
}
