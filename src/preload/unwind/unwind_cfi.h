/*
 * DWARF call frame information for the "dwarf" unwinder (unwind_dwarf.c): finds the FDE
 * of an address through glibc's _dl_find_object and the object's .eh_frame_hdr table,
 * runs the CIE's and FDE's CFA programs up to that address and reduces the resulting row
 * to the three things an x86-64 backtrace needs: how to find the CFA, where the return
 * address is, and how to recover the caller's %rbp. Everything else in the row is parsed
 * and dropped; a row that needs more (expressions, registers held in other registers, a
 * CFA based on a register other than %rsp or %rbp, signal frames) is reported as
 * unsupported. It reads only the object's mapped unwind tables, never the stack; it does
 * not allocate, lock or make system calls, so it is safe on the sampled allocation path.
 */
#ifndef HS_UNWIND_CFI_H
#define HS_UNWIND_CFI_H

#include <stdint.h>

/* hs_cfi_rule_t.flags */
#define HS_CFI_UNSUPPORTED 0x01 /* the row needs something the walker cannot do */
#define HS_CFI_END 0x02         /* return address undefined: the outermost frame */
#define HS_CFI_CFA_RBP 0x04     /* CFA base is %rbp (else %rsp) */
#define HS_CFI_CFA_DEREF 0x08   /* CFA = *(base + cfa_off): GCC's DRAP, realigned stack */
#define HS_CFI_RBP_AT_CFA 0x10  /* caller's %rbp saved at CFA + rbp_off */
#define HS_CFI_RBP_AT_RBP 0x20  /* caller's %rbp saved at %rbp + rbp_off (DRAP) */
/* neither RBP flag: %rbp is unchanged in the caller */

/* One row of the CFA table reduced to what the walker uses; 8 bytes, so that it travels
 * through the lock-free cache as a single word. */
typedef struct {
    int32_t cfa_off; /* CFA = base + cfa_off (before the dereference, with DEREF) */
    int16_t rbp_off; /* see the RBP flags */
    int8_t ra_off;   /* return address saved at CFA + ra_off (-8 on x86-64) */
    uint8_t flags;
} hs_cfi_rule_t;

_Static_assert(sizeof(hs_cfi_rule_t) == 8, "hs_cfi_rule_t must fit one word");

typedef enum {
    HS_CFI_FOUND,     /* *rule is set (it may say UNSUPPORTED) */
    HS_CFI_NO_FDE,    /* pc's object has unwind tables, and no FDE in them covers pc (code
                       * built without them): an answer as lasting as the object */
    HS_CFI_NO_INFO,   /* an object holds pc but its tables cannot be read (no or odd
                       * .eh_frame_hdr): the caller should let another unwinder try */
    HS_CFI_NO_OBJECT, /* no loaded object holds pc (JIT code): hs_cfi_rule only */
} hs_cfi_result_t;

/* The rule in effect at pc (a return address minus one, so inside the call), in whatever
 * loaded object holds pc. *rule is set (UNSUPPORTED unless FOUND says otherwise) for
 * every result. */
hs_cfi_result_t hs_cfi_rule(uintptr_t pc, hs_cfi_rule_t *rule);

/* The same, for an object whose .eh_frame_hdr is at eh_frame_hdr and whose tables all lie
 * inside [lo, hi): no read leaves that range. For the unit test of the parser. */
hs_cfi_result_t hs_cfi_rule_in(uintptr_t pc, const void *eh_frame_hdr, uintptr_t lo, uintptr_t hi,
                               hs_cfi_rule_t *rule);

#endif
