/*
 * The dwarf unwinder in a main program whose segments leave gaps between them, as Debian's
 * Chromium's do: this test is linked with -z max-page-size=0x10000, so glibc's
 * _dl_find_object gives each of its PT_LOAD segments as a range of its own, and the one
 * holding a pc of .text is not the one holding .eh_frame_hdr. hs_cfi_rule must still read
 * the tables (it once answered "cannot read" for every such pc, and each capture went to
 * libgcc, which stops at the first frame without an FDE). Checks: the layout is the split
 * one; hs_cfi_rule finds a supported rule for this program's own functions; and a capture
 * from the chain main <- f1 <- f2 <- f3 is backtrace()'s frame for frame, root frames
 * included, with no fallback to libgcc counted.
 */
#define _GNU_SOURCE
#include "unwind/unwind.h"
#include "unwind/unwind_cfi.h"

#include "check.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>

#if defined(__clang__)
#define CHAIN __attribute__((noinline, disable_tail_calls))
#else
#define CHAIN __attribute__((noipa))
#endif
#define KEEP(x) __asm__ volatile("" : "+r"(x)::"memory")
#define DEPTH 64

typedef struct {
    uintptr_t dwarf[DEPTH], bt[DEPTH];
    size_t nd, nb;
} shot_t;

CHAIN static void f3(shot_t *s)
{
    void *buf[DEPTH];

    s->nd = hs_unwind_dwarf(s->dwarf, DEPTH);
    s->nb = (size_t)backtrace(buf, DEPTH);
    for (size_t i = 0; i < s->nb; i++)
        s->bt[i] = (uintptr_t)buf[i];
    KEEP(s);
}

CHAIN static void f2(shot_t *s)
{
    f3(s);
    KEEP(s);
}

CHAIN static void f1(shot_t *s)
{
    f2(s);
    KEEP(s);
}

/* Whether the segment _dl_find_object gives for this program's text leaves its
 * .eh_frame_hdr out (the layout under test). */
static int split_layout(void)
{
    struct dl_find_object d;

    if (_dl_find_object((void *)(uintptr_t)f1, &d) != 0 || d.dlfo_eh_frame == NULL)
        return 0;
    return (uintptr_t)d.dlfo_eh_frame < (uintptr_t)d.dlfo_map_start ||
           (uintptr_t)d.dlfo_eh_frame >= (uintptr_t)d.dlfo_map_end;
}

static void test_rules(void)
{
    const void *fns[] = {(const void *)f1, (const void *)f2, (const void *)f3};

    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
        hs_cfi_rule_t r;
        hs_cfi_result_t res = hs_cfi_rule((uintptr_t)fns[i] + 1, &r);
        CHECK(res == HS_CFI_FOUND && !(r.flags & HS_CFI_UNSUPPORTED),
              "f%zu: result %d flags %#x, want a rule from the FDE", i + 1, (int)res, r.flags);
    }
}

/* Where dwarf's frame 1 (f3's return address in f2) is in backtrace()'s stack: 1, or 2
 * under ASan, whose interceptor of backtrace() adds its own frame first. */
static size_t bt_start(const shot_t *s)
{
    for (size_t j = 1; j < s->nb && j <= 3; j++)
        if (s->nd > 1 && s->bt[j] == s->dwarf[1])
            return j;
    return 0;
}

static void test_capture(void)
{
    static shot_t s;
    uint64_t fallbacks = hs_unwind_dwarf_fallbacks();
    size_t bad = SIZE_MAX, j;

    f1(&s);
    CHECK(hs_unwind_dwarf_fallbacks() == fallbacks, "the capture went to libgcc");
    /* Frame 0 is each capture's own call site in f3; from f3's caller on they agree. */
    j = bt_start(&s);
    CHECK(j != 0 && s.nd - 1 == s.nb - j && s.nd >= 5,
          "dwarf: %zu frames, backtrace(): %zu, f2 at backtrace()'s frame %zu", s.nd, s.nb, j);
    for (size_t i = 1; j != 0 && i < s.nd && i - 1 + j < s.nb && bad == SIZE_MAX; i++)
        if (s.dwarf[i] != s.bt[i - 1 + j])
            bad = i;
    CHECK(bad == SIZE_MAX, "dwarf differs from backtrace() at frame %zu", bad);
    if (j == 0 || bad != SIZE_MAX || s.nd - 1 != s.nb - j)
        for (size_t i = 0; i < s.nd || i < s.nb; i++)
            fprintf(stderr, "  #%zu dwarf %#lx backtrace %#lx\n", i,
                    i < s.nd ? (unsigned long)s.dwarf[i] : 0ul,
                    i < s.nb ? (unsigned long)s.bt[i] : 0ul);
}

int main(void)
{
#if !defined(__x86_64__)
    printf("SKIP: the dwarf unwinder is x86-64 only\n");
    return 77;
#else
    CHECK(split_layout(), "linked with -z max-page-size=0x10000, yet _dl_find_object gives a "
                          "range holding .eh_frame_hdr: the layout under test is not there");
    test_rules();
    test_capture();
    return hs_check_done("test_unwind_split");
#endif
}
