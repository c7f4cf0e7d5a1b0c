/*
 * Hooks near: the machine code of malloc's and free's fast paths, written beside a hooked
 * entry's trampoline (patch.c, hs_patch_install_code) so that the patched entry jumps
 * straight into it and its usual path falls into the relocated prologue. This file owns
 * that code: its bytes, and the addresses and offsets baked into them.
 *
 * Why (issue 43): through hooks.c's fast paths in libheapsift.so, the unsampled pair on a
 * static allocator cost 32 instructions more than the allocator alone, interposition's 17
 * plus 8 of the patch (the entry's jmp, the stub's jmp to a library 2 GB away, the
 * trampoline's endbr64 and its jump back, twice) and 7 of free's register saving and
 * word-indexed bit test. Written near the entry, the code needs no stub, and it reaches
 * heapsift's data without a register: the thread's hs_tls sits at a fixed offset from %fs
 * (initial-exec TLS: the same for every thread, for the life of the process), read as an
 * absolute %fs displacement, and the filter's word pointer is read through its absolute
 * address (movabs). Per pair: the entry's jmp and the jump back twice, malloc's 3 and
 * free's 11: 18.
 *
 *   malloc:  addq $1, %fs:allocs      count
 *            subq %rdi, %fs:countdown  charge; its flags decide (interpose_charge)
 *            jg body                   no sample due: the relocated prologue
 *            jmp *slow(%rip)           hs_thunk_malloc_slow, which keeps the registers
 *   free:    addq $1, %fs:frees
 *            push %rax; push %rcx      the only registers used, put back before the branch
 *            movabs hs_filter_words, %rax
 *            imul $0x9E3779B1, %edi, %ecx; imul -8(%rax), %rcx; shr $32, %rcx
 *            bt %ecx, (%rax)           hs_filter_maybe's bit: a bit-string offset
 *            pop %rcx; pop %rax
 *            jnc body
 *            jmp *slow(%rip)           hs_thunk_free_slow (NULL's pinned bit goes there)
 *
 * No register but the flags differs from the entry's on the way into the original (the
 * register guarantees a GCC caller in the allocator's own file may rely on: hooks.h), and
 * the slow thunks keep them on the other way. The code has no CFI: a debugger stopped in
 * it unwinds as from the trampoline. x86-64, near patches only (elsewhere hooks.c's fast
 * paths run, through the stub).
 */
#define _GNU_SOURCE
#include "hooks_near.h"
#include "record/livefilter.h"
#include "runtime/core.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
void hs_thunk_malloc_slow(void) HS_HIDDEN;
void hs_thunk_free_slow(void) HS_HIDDEN;

typedef struct {
    uint8_t *buf;
    size_t n, cap;
} near_code_t;

static void near_put(near_code_t *c, const void *b, size_t n)
{
    if (c->n + n <= c->cap)
        memcpy(c->buf + c->n, b, n);
    c->n += n;
}

static void near_put32(near_code_t *c, int32_t v)
{
    near_put(c, &v, 4);
}

/* The %fs displacement of hs_tls's field at off, or false when it does not fit 32 bits. */
static bool near_tls(size_t off, int32_t *out)
{
    intptr_t d =
        (intptr_t)((uintptr_t)&hs_tls - (uintptr_t)__builtin_thread_pointer()) + (intptr_t)off;
    *out = (int32_t)d;
    return d == (intptr_t)*out;
}

/* addq $1, %fs:field (64 48 83 04 25 disp32 01). */
static void near_count(near_code_t *c, int32_t field)
{
    near_put(c, "\x64\x48\x83\x04\x25", 5);
    near_put32(c, field);
    near_put(c, "\x01", 1);
}

/* jcc rel32 (0f op) to body from at + c->n, then jmp *0(%rip); .quad slow. */
static void near_exit(near_code_t *c, uintptr_t at, uint8_t op, uintptr_t body, void (*slow)(void))
{
    uint8_t jcc[2] = {0x0f, op};
    near_put(c, jcc, 2);
    near_put32(c, (int32_t)(int64_t)(body - (at + c->n + 4)));
    near_put(c, "\xff\x25\x00\x00\x00\x00", 6);
    uintptr_t s = (uintptr_t)slow;
    near_put(c, &s, 8);
}

int hs_hooks_near_malloc(void *arg, uintptr_t at, uintptr_t body, uint8_t *buf, size_t cap)
{
    near_code_t c = {buf, 0, cap};
    int32_t allocs, countdown;
    (void)arg;
    if (!near_tls(offsetof(hs_tls_t, allocs), &allocs) ||
        !near_tls(offsetof(hs_tls_t, countdown), &countdown))
        return 0;
    near_count(&c, allocs);
    near_put(&c, "\x64\x48\x29\x3c\x25", 5); /* subq %rdi, %fs:countdown */
    near_put32(&c, countdown);
    near_exit(&c, at, 0x8f, body, hs_thunk_malloc_slow); /* jg body */
    return c.n <= cap ? (int)c.n : 0;
}

int hs_hooks_near_free(void *arg, uintptr_t at, uintptr_t body, uint8_t *buf, size_t cap)
{
    near_code_t c = {buf, 0, cap};
    int32_t frees;
    uintptr_t words = (uintptr_t)&hs_filter_words;
    (void)arg;
    if (!near_tls(offsetof(hs_tls_t, frees), &frees))
        return 0;
    near_count(&c, frees);
    near_put(&c, "\x50\x51\x48\xa1", 4); /* push %rax; push %rcx; movabs words, %rax */
    near_put(&c, &words, 8);
    near_put(&c, "\x69\xcf\xb1\x79\x37\x9e", 6);       /* imul $0x9E3779B1, %edi, %ecx */
    near_put(&c, "\x48\x0f\xaf\x48\xf8", 5);           /* imul -8(%rax), %rcx (nbits) */
    near_put(&c, "\x48\xc1\xe9\x20", 4);               /* shr $32, %rcx */
    near_put(&c, "\x0f\xa3\x08", 3);                   /* bt %ecx, (%rax) */
    near_put(&c, "\x59\x58", 2);                       /* pop %rcx; pop %rax */
    near_exit(&c, at, 0x83, body, hs_thunk_free_slow); /* jnc body */
    return c.n <= cap ? (int)c.n : 0;
}
#endif
