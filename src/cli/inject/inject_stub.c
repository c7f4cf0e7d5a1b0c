/*
 * The stubs of inject_stub.h, in assembly. They are never run in this command: their
 * bytes are copied into the target. Only rsp- and rbx-relative addressing is used, so
 * they run wherever they land.
 */
#include "inject_stub.h"

#include "model/attach_box.h"

#include <cpuid.h>
#include <string.h>

#define HS_S(x) #x
#define HS_STR(x) HS_S(x)

#if defined(__x86_64__)
/* The syscall stub: 9 registers and the flags saved (80 bytes), the block above them. */
__asm__(".text\n"
        ".globl hs_stub_sys_begin\n .globl hs_stub_sys_end\n"
        "hs_stub_sys_begin:\n"
        "    pushfq\n    push %rax\n    push %rcx\n    push %rdx\n    push %rsi\n"
        "    push %rdi\n    push %r8\n    push %r9\n    push %r10\n    push %r11\n"
        "    mov 80(%rsp), %rax\n    mov 88(%rsp), %rdi\n    mov 96(%rsp), %rsi\n"
        "    mov 104(%rsp), %rdx\n    mov 112(%rsp), %r10\n    mov 120(%rsp), %r8\n"
        "    mov 128(%rsp), %r9\n"
        "    syscall\n"
        "    mov 136(%rsp), %rcx\n    test %rcx, %rcx\n    jz 1f\n"
        "    mov %rax, (%rcx)\n    movq $1, 8(%rcx)\n"
        "1:  pop %r11\n    pop %r10\n    pop %r9\n    pop %r8\n    pop %rdi\n    pop %rsi\n"
        "    pop %rdx\n    pop %rcx\n    pop %rax\n    popfq\n"
        "    lea 72(%rsp), %rsp\n    ret $128\n"
        "hs_stub_sys_end:\n");

/* The call stub: 15 registers and the flags saved (128 bytes; rbx then points at the
   block), the extended state saved below them, the direction flag cleared for the call. */
__asm__(".text\n"
        ".globl hs_stub_call_begin\n .globl hs_stub_call_end\n"
        "hs_stub_call_begin:\n"
        "    pushfq\n    push %rax\n    push %rbx\n    push %rcx\n    push %rdx\n"
        "    push %rsi\n    push %rdi\n    push %rbp\n    push %r8\n    push %r9\n"
        "    push %r10\n    push %r11\n    push %r12\n    push %r13\n    push %r14\n"
        "    push %r15\n"
        "    mov %rsp, %rbp\n    lea 128(%rbp), %rbx\n"
        "    sub 64(%rbx), %rsp\n    and $-64, %rsp\n"
        "    xor %eax, %eax\n"
        "    mov %rax, 512(%rsp)\n    mov %rax, 520(%rsp)\n    mov %rax, 528(%rsp)\n"
        "    mov %rax, 536(%rsp)\n    mov %rax, 544(%rsp)\n    mov %rax, 552(%rsp)\n"
        "    mov %rax, 560(%rsp)\n    mov %rax, 568(%rsp)\n"
        "    mov $-1, %eax\n    mov $-1, %edx\n    xsave64 (%rsp)\n"
        "    cld\n"
        "    mov 8(%rbx), %rdi\n    mov 16(%rbx), %rsi\n    mov 24(%rbx), %rdx\n"
        "    mov 32(%rbx), %rcx\n    mov 40(%rbx), %r8\n    mov 48(%rbx), %r9\n"
        "    call *(%rbx)\n"
        "    mov 56(%rbx), %rcx\n    test %rcx, %rcx\n    jz 1f\n"
        "    mov %rax, (%rcx)\n    movq $1, 8(%rcx)\n"
        "1:  mov $-1, %eax\n    mov $-1, %edx\n    xrstor64 (%rsp)\n"
        "    mov %rbp, %rsp\n"
        "    pop %r15\n    pop %r14\n    pop %r13\n    pop %r12\n    pop %r11\n"
        "    pop %r10\n    pop %r9\n    pop %r8\n    pop %rbp\n    pop %rdi\n    pop %rsi\n"
        "    pop %rdx\n    pop %rcx\n    pop %rbx\n    pop %rax\n    popfq\n"
        "    lea 72(%rsp), %rsp\n    ret $128\n"
        "hs_stub_call_end:\n");

/* The thread stub: start routine of the attach thread, its argument the box. */
__asm__(
    ".text\n"
    ".globl hs_stub_thr_begin\n .globl hs_stub_thr_end\n"
    "hs_stub_thr_begin:\n"
    "    push %rbx\n    mov %rdi, %rbx\n"
    "    lea " HS_STR(
        HS_BOX_PATH) "(%rbx), %rdi\n    mov $2, %esi\n"
                     "    call *" HS_STR(
                         HS_BOX_DLOPEN) "(%rbx)\n"
                                        "    test %rax, %rax\n    jz 2f\n"
                                        "    mov %rax, %rdi\n    lea " HS_STR(
                                            HS_BOX_SYM) "(%rbx), %rsi\n"
                                                        "    call *" HS_STR(
                                                            HS_BOX_DLSYM) "(%rbx)\n"
                                                                          "    test %rax, %rax\n   "
                                                                          " jz 2f\n"
                                                                          "    mov %rbx, %rdi\n    "
                                                                          "call *%rax\n    jmp 3f\n"
                                                                          "2:  call *" HS_STR(
                                                                              HS_BOX_DLERROR) "(%"
                                                                                              "rbx)"
                                                                                              "\n"
                                                                                              "    "
                                                                                              "test"
                                                                                              " %"
                                                                                              "rax,"
                                                                                              " %"
                                                                                              "rax"
                                                                                              "\n  "
                                                                                              "  "
                                                                                              "jz "
                                                                                              "4f\n"
                                                                                              "    "
                                                                                              "lea"
                                                                                              " " HS_STR(HS_BOX_MSG) "(%rbx), %rdi\n    mov $" HS_STR(
                                                                                                  HS_BOX_MSG_LEN) ", %esi\n"
                                                                                                                  "    lea " HS_STR(
                                                                                                                      HS_BOX_FMT) "(%rbx), %rdx\n    mov %rax, %rcx\n    xor %eax, %eax\n"
                                                                                                                                  "    call *" HS_STR(
                                                                                                                                      HS_BOX_SNPRINTF) "(%rbx)\n"
                                                                                                                                                       "4:  movl $2, " HS_STR(
                                                                                                                                                           HS_BOX_DONE_OFF) "(%rbx)\n"
                                                                                                                                                                            "3:  xor %eax, %eax\n    pop %rbx\n    ret\n"
                                                                                                                                                                            "hs_stub_thr_end:\n");
#endif

extern const uint8_t hs_stub_sys_begin[], hs_stub_sys_end[];
extern const uint8_t hs_stub_call_begin[], hs_stub_call_end[];
extern const uint8_t hs_stub_thr_begin[], hs_stub_thr_end[];

const uint8_t *hs_stub_code(hs_stub_kind_t k, size_t *len)
{
    const uint8_t *b[HS_STUB_COUNT] = {hs_stub_sys_begin, hs_stub_call_begin, hs_stub_thr_begin};
    const uint8_t *e[HS_STUB_COUNT] = {hs_stub_sys_end, hs_stub_call_end, hs_stub_thr_end};
    *len = (size_t)(e[k] - b[k]);
    return b[k];
}

size_t hs_stub_image(uint8_t *out, size_t cap, size_t off[HS_STUB_COUNT])
{
    size_t at = 0;
    for (int k = 0; k < HS_STUB_COUNT; k++) {
        size_t len;
        const uint8_t *code = hs_stub_code((hs_stub_kind_t)k, &len);
        at = (at + 15) & ~(size_t)15;
        if (at + len > cap)
            return 0;
        memset(out + (at & ~(size_t)15), 0xcc, at - (at & ~(size_t)15));
        memcpy(out + at, code, len);
        off[k] = at;
        at += len;
    }
    return at;
}

uint64_t hs_stub_xsave_room(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    uint64_t size = 4096;
    if (__get_cpuid_count(0xd, 0, &a, &b, &c, &d) && b >= 576)
        size = b;
    return ((size + 63) & ~(uint64_t)63) + 64;
}
