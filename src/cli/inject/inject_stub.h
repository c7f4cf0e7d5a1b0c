/*
 * The machine code `heapsift attach` puts in a target (x86-64): three position-independent
 * stubs, assembled into this command and copied from it (inject_stub.c).
 *   - the syscall stub and the call stub run on a program thread whose registers the
 *     command pointed at them, with a block of arguments written below that thread's red
 *     zone. Each saves every register it touches (the call stub also the flags and the
 *     whole extended state, with xsave), makes its system call or function call, stores
 *     the result where the block says, restores everything and returns to where the
 *     thread was, with `ret $128`: the thread needs no one to put it back, so a command
 *     killed at any moment leaves it running the program as before;
 *   - the thread stub is the start routine of the thread the call stub creates: it
 *     dlopens the library named in the attach box (attach_box.h) and calls its entry.
 */
#ifndef HS_CLI_INJECT_STUB_H
#define HS_CLI_INJECT_STUB_H

#include <stddef.h>
#include <stdint.h>

/* The block below the red zone: [0] fn or system call number, [1..6] arguments, [7] where
   to store the result (then 1 after it; 0: nowhere), [8] the call stub's xsave room,
   [9] where the thread resumes. The thread's rsp is pointed at it. */
#define HS_STUB_BLOCK_WORDS 10
#define HS_STUB_BLOCK (HS_STUB_BLOCK_WORDS * 8)
#define HS_STUB_REDZONE 128

typedef enum { HS_STUB_SYSCALL, HS_STUB_CALL, HS_STUB_THREAD, HS_STUB_COUNT } hs_stub_kind_t;

/* The bytes of one stub in this command, and its length. */
const uint8_t *hs_stub_code(hs_stub_kind_t k, size_t *len);
/* All three, each 16-byte aligned, as laid out by hs_stub_image (offsets in off[]). */
size_t hs_stub_image(uint8_t *out, size_t cap, size_t off[HS_STUB_COUNT]);
/* The xsave area this machine needs (CPUID leaf 0xD), rounded up, plus alignment room. */
uint64_t hs_stub_xsave_room(void);

#endif
