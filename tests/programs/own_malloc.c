/*
 * own_malloc: an executable that defines malloc, free, calloc and realloc itself (a bump
 * allocator over a static arena), as programs with an allocator of their own do: the
 * dynamic linker binds every call to these, before any preloaded library's.
 * tests/integration/reach_detect.sh runs it.
 *   own_malloc N   N allocations of 1000 bytes; prints "done N"
 * -DOWN_ASM_FREE (reach_hooks.sh): malloc and free in assembly, touching no register but
 * rax (malloc's result) and the flags, and own_check, an assembly caller that relies on it
 * as GCC lets a caller in the allocator's own file do (-fipa-ra): it keeps values in every
 * other caller-saved register (rax too, across free) over N malloc(64)+free pairs and
 * counts the calls after which one changed; main prints "done N" only when none did.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exported, as a C program's malloc is when built without -fvisibility=hidden (which
   the tests' build uses): libc's own calls bind to it too. */
#ifdef OWN_HIDDEN /* reach_hooks.sh: not exported, then stripped: no name shows it */
#define OWN __attribute__((visibility("hidden"), noinline))
#else
#define OWN __attribute__((visibility("default"), noinline))
#endif

static char arena[64 << 20];
static size_t used __attribute__((used));

#ifdef OWN_ASM_FREE
static char *arena_base __attribute__((used)) = arena;
static size_t frees __attribute__((used));
/* malloc: 16-byte aligned bumps; free: counts. Each begins with 5 bytes or more of
   whole instructions that the patcher can relocate. */
__asm__(".text\n.globl malloc\n.type malloc, @function\nmalloc:\n"
        "lea 15(%rdi), %rax\nand $-16, %rax\nlock xadd %rax, used(%rip)\n"
        "add arena_base(%rip), %rax\nret\n.size malloc, .-malloc\n"
        ".globl free\n.type free, @function\nfree:\n"
        "lock incq frees(%rip)\nret\n.size free, .-free\n");

/* own_check(n): n malloc(64)+free pairs with values in rcx, rdx, rsi, r8-r11 (and rdi,
   rax across free) that must survive the calls; the number of calls that changed one. */
int own_check(long n);
__asm__(".text\n.globl own_check\n.type own_check, @function\nown_check:\n"
        ".cfi_startproc\npush %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset rbp, -16\n"
        "mov %rsp, %rbp\n.cfi_def_cfa_register rbp\npush %rbx\npush %r12\n"
        ".cfi_offset rbx, -24\n.cfi_offset r12, -32\n"
        "mov %rdi, %rbx\nxor %r12d, %r12d\n"
        "1: test %rbx, %rbx\njz 9f\n"
        "mov $0x1111, %rcx\nmov $0x2222, %rdx\nmov $0x3333, %rsi\nmov $0x8888, %r8\n"
        "mov $0x9999, %r9\nmov $0xaaaa, %r10\nmov $0xbbbb, %r11\nmov $64, %rdi\n"
        "call malloc\n"
        "cmp $64, %rdi\njne 2f\ncall own_check_regs\njz 3f\n"
        "2: inc %r12\n3: mov %rax, %rdi\npush %rax\npush %rax\n"
        "mov $0x1111, %rcx\nmov $0x2222, %rdx\nmov $0x3333, %rsi\nmov $0x8888, %r8\n"
        "mov $0x9999, %r9\nmov $0xaaaa, %r10\nmov $0xbbbb, %r11\n"
        "call free\n"
        "cmp (%rsp), %rdi\njne 4f\ncmp (%rsp), %rax\njne 4f\n"
        "call own_check_regs\njz 5f\n4: inc %r12\n5: add $16, %rsp\n"
        "dec %rbx\njmp 1b\n"
        "9: mov %r12, %rax\npop %r12\npop %rbx\npop %rbp\n.cfi_def_cfa rsp, 8\nret\n"
        ".cfi_endproc\n.size own_check, .-own_check\n"
        /* ZF set when rcx, rdx, rsi, r8-r11 hold what own_check put there */
        "own_check_regs:\ncmp $0x1111, %rcx\njne 1f\ncmp $0x2222, %rdx\njne 1f\n"
        "cmp $0x3333, %rsi\njne 1f\ncmp $0x8888, %r8\njne 1f\ncmp $0x9999, %r9\njne 1f\n"
        "cmp $0xaaaa, %r10\njne 1f\ncmp $0xbbbb, %r11\n1: ret\n");
#else
OWN void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (used + n > sizeof(arena))
        return NULL;
    void *p = arena + used;
    used += n;
    return p;
}

#endif

#ifndef OWN_ASM_FREE
static size_t frees;
#endif

#ifdef OWN_REFUSED_FREE
/* reach_hooks.sh: a free whose loop jumps back into its first five bytes, which a jump to
   a hook would overwrite: patch.c refuses it, and nothing of this allocator is hooked */
__asm__(".text\n.globl free\n.type free, @function\nfree:\n"
        "xor %eax, %eax\n1:\ninc %eax\ncmp $3, %eax\njne 1b\nret\n.size free, .-free\n");
#elif !defined(OWN_ASM_FREE)
OWN void free(void *p)
{
    frees += p != NULL; /* counts, so that it is more than a bare `ret` */
}
#endif

OWN void *calloc(size_t a, size_t b)
{
    /* memset through a volatile pointer: GCC would turn malloc + memset into a call of
       calloc, this very function */
    static void *(*volatile zero)(void *, int, size_t) = memset;
    void *p = malloc(a * b);
    if (p)
        zero(p, 0, a * b);
    return p;
}

OWN void *realloc(void *p, size_t n)
{
    void *q = malloc(n);
    if (q && p)
        memcpy(q, p, n);
    return q;
}

/* main keeps values in registers across its calls of malloc, as GCC lets a caller in the
   callee's translation unit do (-fipa-ra): the hooks keep them (interpose.c). */
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
#ifdef OWN_ASM_FREE
    int bad = own_check(n);
    if (bad) {
        printf("registers changed across %d calls\n", bad);
        return 1;
    }
#endif
    static void *keep[100000];
    for (int i = 0; i < n && i < 100000; i++)
        keep[i] = malloc(1000);
    printf("done %d\n", n);
    return keep[0] == NULL;
}
