/*
 * The CLI's heap in transparent huge pages (hugeheap.h). Where this machine's kernel
 * gives huge pages only to memory advised MADV_HUGEPAGE (the `madvise` mode, Debian's
 * default), malloc's memory is never advised unless glibc is told so through the
 * environment (GLIBC_TUNABLES), which the programs the CLI starts would inherit. So the
 * heap is grown once here, by as much as the caller expects to use, and the grown part
 * advised: glibc's main arena carves every later block out of it. Uses mallopt, sbrk(0)
 * (a query: the break is never moved here, malloc moves it) and madvise; glibc only.
 */
#define _GNU_SOURCE
#include "hugeheap.h"

#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HEAP_HUGE ((size_t)2 << 20)       /* a transparent huge page */
#define HEAP_MAX ((size_t)1 << 30)        /* the most asked for at once (address space only) */
#define HEAP_TOP_PAD_DEFAULT (128 * 1024) /* glibc's M_TOP_PAD default */

static uintptr_t heap_up(uintptr_t a)
{
    return (a + HEAP_HUGE - 1) & ~(uintptr_t)(HEAP_HUGE - 1);
}

/* Makes malloc move the break by about pad at once: a block larger than the space left at
 * the heap's top, with M_TOP_PAD = pad (glibc adds the pad to each growth). The block is
 * freed again: its memory joins the top, which M_TRIM_THRESHOLD keeps. malloc carves a
 * block of any size out of the top when it fits, before it thinks of an mmap of its own
 * (M_MMAP_THRESHOLD counts only when the heap must grow), so large arrays land there too. */
static bool heap_grow(size_t pad)
{
#ifdef __GLIBC__
    if (!mallopt(M_TRIM_THRESHOLD, INT_MAX) || !mallopt(M_TOP_PAD, (int)pad))
        return false;
    struct mallinfo2 mi = mallinfo2();
    void *b = malloc(mi.keepcost + 64);
    mallopt(M_TOP_PAD, HEAP_TOP_PAD_DEFAULT);
    free(b);
    return b != NULL;
#else
    (void)pad;
    return false;
#endif
}

/* Takes the heap's top up to from (where the advised part begins) in one block that is
 * never freed nor touched beyond its header: else the first 2 MiB or so of later blocks
 * come from the unadvised pages below from, one 4 KiB fault each (`heapsift top` on the
 * 14.6 MB file of bench/top_jeprof.sh: 600 faults with them, 225 without). The top chunk
 * ends at the break (glibc's main arena is contiguous), so it begins keepcost bytes below. */
static void heap_skip_to(uintptr_t from, uintptr_t brk)
{
#ifdef __GLIBC__
    uintptr_t top = brk - mallinfo2().keepcost;
    if (from > top && from - top >= 64 && from - top < HEAP_HUGE) {
        /* volatile: a block whose pointer is unused may be left out by the compiler */
        void *volatile held = malloc(from - top - sizeof(size_t)); /* from - top bytes */
        (void)held;
    }
#else
    (void)from;
    (void)brk;
#endif
}

bool hs_heap_huge(size_t bytes)
{
    size_t pad = bytes > HEAP_MAX ? HEAP_MAX : (size_t)heap_up(bytes ? bytes : 1);
    uintptr_t before = (uintptr_t)sbrk(0);
    if (before == (uintptr_t)-1 || !heap_grow(pad))
        return false;
    uintptr_t after = (uintptr_t)sbrk(0);
    uintptr_t from = heap_up(before), to = after & ~(uintptr_t)(HEAP_HUGE - 1);
    if (after == (uintptr_t)-1 || to <= from || madvise((void *)from, to - from, MADV_HUGEPAGE))
        return false;
    heap_skip_to(from, after);
    return true;
}
