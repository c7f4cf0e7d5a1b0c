/*
 * DWARF CFI for the "dwarf" unwinder (see unwind_cfi.h): .eh_frame_hdr lookup, CIE and
 * FDE parsing, and a CFA-program interpreter that tracks only the CFA, %rbp, %rsp and the
 * return-address column. Called from unwind_dwarf.c on a cache miss, on the sampled path
 * with the reentrancy guard held. It must never fault, allocate or lock: object lookup
 * is glibc's lock-free _dl_find_object (glibc >= 2.35), every read of the unwind tables
 * goes through a cursor bounded by the record's length and by the object's mapping, and
 * anything unexpected ends in "unsupported" rather than a guess. Formats: the LSB's
 * .eh_frame and .eh_frame_hdr (DWARF 4 section 6.4 with GNU augmentations).
 */
#define _GNU_SOURCE
#include "unwind_cfi.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define HS_CFI_REG_RBP 6
#define HS_CFI_REG_RSP 7
#define HS_CFI_STATE_DEPTH 8 /* DW_CFA_remember_state nesting; GCC uses one level */

/* A bounded reader; any overrun sets bad and yields zeros from then on. */
typedef struct {
    const uint8_t *p, *end;
    bool bad;
} hs_cfi_cur_t;

/* What pointer decoding needs to know about the object. */
typedef struct {
    uintptr_t data_base; /* DW_EH_PE_datarel base: .eh_frame_hdr inside it, else 0 */
    uintptr_t lo, hi;    /* the object's mapping: indirect pointers must lie inside */
} hs_cfi_obj_t;

typedef struct {
    uint64_t code_align, ra_col;
    int64_t data_align;
    uint8_t fde_enc;
    bool has_z, signal;
    const uint8_t *insns, *insns_end;
} hs_cfi_cie_t;

/* How a register is recovered in the caller. */
enum { HS_CFI_SAME, HS_CFI_UNDEF, HS_CFI_OFFSET, HS_CFI_AT_RBP, HS_CFI_OTHER };
/* How the CFA is computed. */
enum { HS_CFA_NONE, HS_CFA_REG, HS_CFA_DRAP, HS_CFA_OTHER };

typedef struct {
    uint64_t cfa_reg;
    int64_t cfa_off, rbp_off, ra_off;
    uint8_t cfa_how, rbp_how, ra_how, rsp_how;
} hs_cfi_row_t;

typedef struct {
    const hs_cfi_cie_t *cie;
    const hs_cfi_obj_t *obj;
    uintptr_t pc, loc;
    hs_cfi_row_t row, init;
    hs_cfi_row_t stack[HS_CFI_STATE_DEPTH];
    unsigned depth;
    bool done; /* loc has passed pc: the row is the one in effect */
} hs_cfi_vm_t;

/* ---- reading ---------------------------------------------------------------------- */

static uint64_t cfi_u(hs_cfi_cur_t *c, size_t n)
{
    uint64_t v = 0;

    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        return 0;
    }
    memcpy(&v, c->p, n); /* x86-64 and the tables are little-endian */
    c->p += n;
    return v;
}

static uint64_t cfi_leb(hs_cfi_cur_t *c, bool sign)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;

    do {
        if (c->bad || c->p >= c->end) {
            c->bad = true;
            return 0;
        }
        b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (sign && shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return v;
}

static uint64_t cfi_uleb(hs_cfi_cur_t *c)
{
    return cfi_leb(c, false);
}

static int64_t cfi_sleb(hs_cfi_cur_t *c)
{
    return (int64_t)cfi_leb(c, true);
}

/* The value of an encoded pointer's format bits (no base applied). */
static bool cfi_ptr_value(hs_cfi_cur_t *c, uint8_t enc, uint64_t *v)
{
    switch (enc & 0x0f) {
    case DW_EH_PE_absptr:
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
        *v = cfi_u(c, 8);
        break;
    case DW_EH_PE_uleb128:
        *v = cfi_uleb(c);
        break;
    case DW_EH_PE_sleb128:
        *v = (uint64_t)cfi_sleb(c);
        break;
    case DW_EH_PE_udata2:
        *v = cfi_u(c, 2);
        break;
    case DW_EH_PE_sdata2:
        *v = (uint64_t)(int64_t)(int16_t)cfi_u(c, 2);
        break;
    case DW_EH_PE_udata4:
        *v = cfi_u(c, 4);
        break;
    case DW_EH_PE_sdata4:
        *v = (uint64_t)(int64_t)(int32_t)cfi_u(c, 4);
        break;
    default:
        return false;
    }
    return !c->bad;
}

/*
 * Reads a pointer in encoding enc: absptr, pcrel or datarel, optionally indirect (read
 * only inside the object's mapping). textrel, funcrel and aligned are never used for
 * the pointers read here on x86-64 and are rejected.
 */
static bool cfi_ptr(hs_cfi_cur_t *c, uint8_t enc, const hs_cfi_obj_t *o, uintptr_t *out)
{
    uintptr_t at = (uintptr_t)c->p;
    uint64_t v;

    if (enc == DW_EH_PE_omit || !cfi_ptr_value(c, enc, &v))
        return false;
    switch (enc & 0x70) {
    case DW_EH_PE_absptr:
        break;
    case DW_EH_PE_pcrel:
        v += at;
        break;
    case DW_EH_PE_datarel:
        if (o->data_base == 0)
            return false;
        v += o->data_base;
        break;
    default:
        return false;
    }
    if (enc & DW_EH_PE_indirect) {
        if (v < o->lo || v > o->hi - sizeof(uintptr_t) || (v & (sizeof(uintptr_t) - 1)))
            return false;
        v = *(const uintptr_t *)(uintptr_t)v;
    }
    *out = (uintptr_t)v;
    return true;
}

/* ---- .eh_frame_hdr ----------------------------------------------------------------- */

/*
 * The FDE whose table entry is the last to start at or below pc, from the binary-search
 * table of .eh_frame_hdr. Only the table encoding every GNU linker writes (datarel
 * sdata4) is searched; an object with another one is left to the fallback. An empty
 * table (an object built without unwind tables, as Chromium's own libvulkan.so.1) covers
 * no pc.
 */
static hs_cfi_result_t cfi_hdr_search(uintptr_t pc, const uint8_t *hdr, const hs_cfi_obj_t *obj,
                                      const uint8_t **fde)
{
    const hs_cfi_obj_t h = {(uintptr_t)hdr, obj->lo, obj->hi}, *o = &h;
    hs_cfi_cur_t c = {hdr, (const uint8_t *)o->hi, false};
    uint8_t ptr_enc, cnt_enc, tab_enc;
    uintptr_t eh_frame, count, lo = 0, hi;
    const int32_t *tab;

    if (cfi_u(&c, 1) != 1)
        return HS_CFI_NO_INFO;
    ptr_enc = (uint8_t)cfi_u(&c, 1);
    cnt_enc = (uint8_t)cfi_u(&c, 1);
    tab_enc = (uint8_t)cfi_u(&c, 1);
    if (!cfi_ptr(&c, ptr_enc, o, &eh_frame) || !cfi_ptr(&c, cnt_enc, o, &count) ||
        tab_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || count > (size_t)(c.end - c.p) / 8 ||
        ((uintptr_t)c.p & 3) != 0)
        return HS_CFI_NO_INFO;
    if (count == 0)
        return HS_CFI_NO_FDE; /* a table of nothing (libgcc reads it so too) */
    tab = (const int32_t *)(const void *)c.p;
    if (pc < (uintptr_t)hdr + (intptr_t)tab[0])
        return HS_CFI_NO_FDE;
    hi = count;
    while (hi - lo > 1) { /* invariant: tab[lo] starts at or below pc, tab[hi] above */
        uintptr_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)hdr + (intptr_t)tab[2 * mid] <= pc)
            lo = mid;
        else
            hi = mid;
    }
    *fde = hdr + (intptr_t)tab[2 * lo + 1];
    return HS_CFI_FOUND;
}

/* ---- CIE and FDE --------------------------------------------------------------------- */

/* Opens a length-prefixed record (32-bit or 64-bit DWARF) at p, inside the mapping. The
 * cursor then covers the record's body; *is64 tells the CIE pointer's width. */
static bool cfi_record(const uint8_t *p, const hs_cfi_obj_t *o, hs_cfi_cur_t *c, bool *is64)
{
    uint64_t len;

    if ((uintptr_t)p < o->lo || (uintptr_t)p >= o->hi)
        return false;
    *c = (hs_cfi_cur_t){p, (const uint8_t *)o->hi, false};
    len = cfi_u(c, 4);
    *is64 = len == 0xffffffffu;
    if (*is64)
        len = cfi_u(c, 8);
    if (c->bad || len == 0 || len > (uint64_t)(c->end - c->p))
        return false;
    c->end = c->p + len;
    return true;
}

/* The augmentation data of a "z" CIE: R (FDE encoding), L (LSDA encoding), P
 * (personality, skipped), S (signal frame). Unknown letters end the walk: "z" says how
 * long the data is, so the rest can be skipped. */
static bool cfi_cie_augmentation(hs_cfi_cur_t *c, const char *aug, hs_cfi_cie_t *cie)
{
    uint64_t len = cfi_uleb(c);
    hs_cfi_cur_t a = {c->p, c->p, c->bad};
    uint64_t skip;

    if (c->bad || len > (uint64_t)(c->end - c->p))
        return false;
    a.end = c->p + len;
    for (const char *s = aug + 1; *s && !a.bad; s++) {
        if (*s == 'R') {
            cie->fde_enc = (uint8_t)cfi_u(&a, 1);
        } else if (*s == 'L') {
            (void)cfi_u(&a, 1);
        } else if (*s == 'P') {
            uint8_t enc = (uint8_t)cfi_u(&a, 1);
            if ((enc & 0x70) == DW_EH_PE_aligned || !cfi_ptr_value(&a, enc, &skip))
                return false;
        } else if (*s == 'S') {
            cie->signal = true;
        } else {
            break;
        }
    }
    c->p = a.end;
    return !a.bad;
}

static bool cfi_parse_cie(const uint8_t *p, const hs_cfi_obj_t *o, hs_cfi_cie_t *cie)
{
    hs_cfi_cur_t c;
    bool is64;
    unsigned version;
    const char *aug;

    memset(cie, 0, sizeof(*cie));
    if (!cfi_record(p, o, &c, &is64) || cfi_u(&c, is64 ? 8 : 4) != 0)
        return false; /* a CIE's id field is 0 in .eh_frame */
    version = (unsigned)cfi_u(&c, 1);
    if (version != 1 && version != 3 && version != 4)
        return false;
    aug = (const char *)c.p;
    c.p = memchr(c.p, 0, (size_t)(c.end - c.p));
    if (c.p == NULL)
        return false;
    c.p++;
    if (aug[0] != '\0' && aug[0] != 'z')
        return false; /* "eh" and other pre-z augmentations: layout unknown */
    if (version == 4 && (cfi_u(&c, 1) != sizeof(uintptr_t) || cfi_u(&c, 1) != 0))
        return false; /* address size, segment selector size */
    cie->code_align = cfi_uleb(&c);
    cie->data_align = cfi_sleb(&c);
    cie->ra_col = version == 1 ? cfi_u(&c, 1) : cfi_uleb(&c);
    cie->fde_enc = DW_EH_PE_absptr;
    cie->has_z = aug[0] == 'z';
    if (cie->has_z && !cfi_cie_augmentation(&c, aug, cie))
        return false;
    cie->insns = c.p;
    cie->insns_end = c.end;
    return !c.bad;
}

/*
 * Parses the FDE at p and its CIE. Returns FOUND with the FDE's instructions in *insns
 * and its first address in *start when the FDE covers pc, NO_FDE when it does not (pc
 * lies in a gap between functions, or past the last one), NO_INFO when the records
 * cannot be read.
 */
static hs_cfi_result_t cfi_parse_fde(const uint8_t *p, uintptr_t pc, const hs_cfi_obj_t *o,
                                     hs_cfi_cie_t *cie, hs_cfi_cur_t *insns, uintptr_t *start)
{
    hs_cfi_cur_t c;
    bool is64;
    const uint8_t *id_at;
    uint64_t cie_off, range;
    uintptr_t begin;

    if (!cfi_record(p, o, &c, &is64))
        return HS_CFI_NO_INFO;
    id_at = c.p;
    cie_off = cfi_u(&c, is64 ? 8 : 4);
    if (c.bad || cie_off == 0 || cie_off > (uintptr_t)id_at - o->lo)
        return HS_CFI_NO_INFO; /* 0 would make this a CIE */
    if (!cfi_parse_cie(id_at - cie_off, o, cie))
        return HS_CFI_NO_INFO;
    if (!cfi_ptr(&c, cie->fde_enc, o, &begin) || !cfi_ptr_value(&c, cie->fde_enc, &range))
        return HS_CFI_NO_INFO;
    if (pc < begin || pc - begin >= range)
        return HS_CFI_NO_FDE;
    if (cie->has_z) {
        uint64_t len = cfi_uleb(&c);
        if (c.bad || len > (uint64_t)(c.end - c.p))
            return HS_CFI_NO_INFO;
        c.p += len; /* the LSDA pointer: not needed for a backtrace */
    }
    *insns = c;
    *start = begin;
    return HS_CFI_FOUND;
}

/* ---- the CFA program ---------------------------------------------------------------- */

static void cfi_set(hs_cfi_vm_t *vm, uint64_t reg, uint8_t how, int64_t off)
{
    if (reg == vm->cie->ra_col) {
        vm->row.ra_how = how;
        vm->row.ra_off = off;
    } else if (reg == HS_CFI_REG_RBP) {
        vm->row.rbp_how = how;
        vm->row.rbp_off = off;
    } else if (reg == HS_CFI_REG_RSP) {
        vm->row.rsp_how = how;
    }
}

static void cfi_restore(hs_cfi_vm_t *vm, uint64_t reg)
{
    if (reg == vm->cie->ra_col)
        cfi_set(vm, reg, vm->init.ra_how, vm->init.ra_off);
    else if (reg == HS_CFI_REG_RBP)
        cfi_set(vm, reg, vm->init.rbp_how, vm->init.rbp_off);
    else if (reg == HS_CFI_REG_RSP)
        cfi_set(vm, reg, vm->init.rsp_how, 0);
}

/* Moves the location; past pc, the current row is the answer. */
static void cfi_advance(hs_cfi_vm_t *vm, uint64_t delta)
{
    if (delta > vm->pc - vm->loc)
        vm->done = true;
    else
        vm->loc += delta;
}

/* A DWARF expression block: recognises "DW_OP_breg6 off" and, with deref, "DW_OP_breg6
 * off; DW_OP_deref" (GCC's DRAP code on realigned stacks). */
static bool cfi_expr_rbp(hs_cfi_cur_t *c, bool deref, int64_t *off)
{
    uint64_t len = cfi_uleb(c);
    hs_cfi_cur_t e = {c->p, c->p, c->bad};

    if (c->bad || len > (uint64_t)(c->end - c->p)) {
        c->bad = true;
        return false;
    }
    e.end = c->p + len;
    c->p = e.end;
    if (cfi_u(&e, 1) != DW_OP_breg6)
        return false;
    *off = cfi_sleb(&e);
    if (deref && cfi_u(&e, 1) != DW_OP_deref)
        return false;
    return !e.bad && e.p == e.end;
}

static void cfi_def_cfa(hs_cfi_vm_t *vm, uint64_t reg, int64_t off)
{
    vm->row.cfa_how = HS_CFA_REG;
    vm->row.cfa_reg = reg;
    vm->row.cfa_off = off;
}

/* A factored offset; wraps rather than overflows on nonsense input. */
static int64_t cfi_scale(uint64_t v, int64_t align)
{
    return (int64_t)(v * (uint64_t)align);
}

/* The opcodes with their operation in the low six bits, and the state stack. */
static bool cfi_op_primary(hs_cfi_vm_t *vm, hs_cfi_cur_t *c, uint8_t op)
{
    const hs_cfi_cie_t *cie = vm->cie;

    switch (op & 0xc0) {
    case DW_CFA_advance_loc:
        cfi_advance(vm, (op & 0x3f) * cie->code_align);
        return true;
    case DW_CFA_offset:
        cfi_set(vm, op & 0x3f, HS_CFI_OFFSET, cfi_scale(cfi_uleb(c), cie->data_align));
        return true;
    case DW_CFA_restore:
        cfi_restore(vm, op & 0x3f);
        return true;
    }
    if (op == DW_CFA_remember_state) {
        if (vm->depth == HS_CFI_STATE_DEPTH)
            return false;
        vm->stack[vm->depth++] = vm->row;
        return true;
    }
    if (op == DW_CFA_restore_state) {
        if (vm->depth == 0)
            return false;
        vm->row = vm->stack[--vm->depth]; /* the CFA too, as GCC and LLVM expect */
        return true;
    }
    return false;
}

static bool cfi_is_rule_op(uint8_t op)
{
    return (op >= DW_CFA_offset_extended && op <= DW_CFA_register) || op == DW_CFA_expression ||
           op == DW_CFA_offset_extended_sf ||
           (op >= DW_CFA_val_offset && op <= DW_CFA_val_expression) ||
           op == DW_CFA_GNU_negative_offset_extended;
}

/* The register-rule opcodes. Rules for registers other than the three tracked are
 * parsed and dropped. */
static bool cfi_op_rule(hs_cfi_vm_t *vm, hs_cfi_cur_t *c, uint8_t op)
{
    int64_t da = vm->cie->data_align, off = 0;
    uint64_t reg = cfi_uleb(c), len;

    switch (op) {
    case DW_CFA_offset_extended:
        cfi_set(vm, reg, HS_CFI_OFFSET, cfi_scale(cfi_uleb(c), da));
        return true;
    case DW_CFA_offset_extended_sf:
        cfi_set(vm, reg, HS_CFI_OFFSET, cfi_scale((uint64_t)cfi_sleb(c), da));
        return true;
    case DW_CFA_GNU_negative_offset_extended:
        cfi_set(vm, reg, HS_CFI_OFFSET, -cfi_scale(cfi_uleb(c), da));
        return true;
    case DW_CFA_restore_extended:
        cfi_restore(vm, reg);
        return true;
    case DW_CFA_undefined:
    case DW_CFA_same_value:
        cfi_set(vm, reg, op == DW_CFA_undefined ? HS_CFI_UNDEF : HS_CFI_SAME, 0);
        return true;
    case DW_CFA_register:
    case DW_CFA_val_offset:
    case DW_CFA_val_offset_sf:
        (void)cfi_uleb(c); /* the other register, or the offset: one LEB128 either way */
        cfi_set(vm, reg, HS_CFI_OTHER, 0);
        return true;
    case DW_CFA_expression:
        if (cfi_expr_rbp(c, false, &off) && reg == HS_CFI_REG_RBP) /* block always read */
            cfi_set(vm, reg, HS_CFI_AT_RBP, off);
        else
            cfi_set(vm, reg, HS_CFI_OTHER, 0);
        return true;
    case DW_CFA_val_expression:
        len = cfi_uleb(c);
        if (len > (uint64_t)(c->end - c->p))
            return false;
        c->p += len;
        cfi_set(vm, reg, HS_CFI_OTHER, 0);
        return true;
    }
    return false;
}

/* The CFA and location opcodes. */
static bool cfi_op_cfa(hs_cfi_vm_t *vm, hs_cfi_cur_t *c, uint8_t op)
{
    const hs_cfi_cie_t *cie = vm->cie;
    uintptr_t loc;
    uint64_t reg;
    int64_t off = 0;

    switch (op) {
    case DW_CFA_nop:
    case DW_CFA_GNU_args_size:
        if (op == DW_CFA_GNU_args_size)
            (void)cfi_uleb(c);
        return true;
    case DW_CFA_set_loc:
        if (!cfi_ptr(c, cie->fde_enc, vm->obj, &loc) || loc < vm->loc)
            return false;
        cfi_advance(vm, loc - vm->loc);
        return true;
    case DW_CFA_advance_loc1:
    case DW_CFA_advance_loc2:
    case DW_CFA_advance_loc4:
        cfi_advance(vm, cfi_u(c, 1u << (op - DW_CFA_advance_loc1)) * cie->code_align);
        return true;
    case DW_CFA_def_cfa:
    case DW_CFA_def_cfa_sf:
        reg = cfi_uleb(c);
        off = op == DW_CFA_def_cfa ? (int64_t)cfi_uleb(c)
                                   : cfi_scale((uint64_t)cfi_sleb(c), cie->data_align);
        cfi_def_cfa(vm, reg, off);
        return true;
    case DW_CFA_def_cfa_register:
        cfi_def_cfa(vm, cfi_uleb(c), vm->row.cfa_off);
        return true;
    case DW_CFA_def_cfa_offset:
    case DW_CFA_def_cfa_offset_sf:
        if (vm->row.cfa_how != HS_CFA_REG)
            vm->row.cfa_how = HS_CFA_OTHER;
        vm->row.cfa_off = op == DW_CFA_def_cfa_offset
                              ? (int64_t)cfi_uleb(c)
                              : cfi_scale((uint64_t)cfi_sleb(c), cie->data_align);
        return true;
    case DW_CFA_def_cfa_expression:
        vm->row.cfa_how = cfi_expr_rbp(c, true, &off) ? HS_CFA_DRAP : HS_CFA_OTHER;
        vm->row.cfa_off = off;
        return true;
    }
    return false; /* DW_CFA_GNU_window_save, MIPS and unknown opcodes */
}

/* Runs instructions until the end or until the location passes vm->pc. False on an
 * opcode it does not know, a malformed operand or a state-stack error. */
static bool cfi_run(hs_cfi_vm_t *vm, hs_cfi_cur_t *c)
{
    while (!vm->done && c->p < c->end) {
        uint8_t op = (uint8_t)cfi_u(c, 1);
        bool ok;

        if ((op & 0xc0) != 0 || op == DW_CFA_remember_state || op == DW_CFA_restore_state)
            ok = cfi_op_primary(vm, c, op);
        else if (cfi_is_rule_op(op))
            ok = cfi_op_rule(vm, c, op);
        else
            ok = cfi_op_cfa(vm, c, op);
        if (!ok || c->bad)
            return false;
    }
    return true;
}

/* ---- the reduced rule ------------------------------------------------------------------ */

static bool cfi_fits(int64_t v, int64_t lo, int64_t hi)
{
    return v >= lo && v <= hi;
}

static hs_cfi_rule_t cfi_reduce(const hs_cfi_row_t *row, bool signal)
{
    hs_cfi_rule_t r = {0, 0, 0, HS_CFI_UNSUPPORTED};
    const hs_cfi_rule_t end = {0, 0, 0, HS_CFI_END};

    if (signal)
        return r; /* the trampoline's frame: registers come from the sigcontext */
    if (row->ra_how == HS_CFI_UNDEF)
        return end;
    if (row->ra_how != HS_CFI_OFFSET || !cfi_fits(row->ra_off, INT8_MIN, INT8_MAX) ||
        row->rsp_how != HS_CFI_SAME || !cfi_fits(row->cfa_off, INT32_MIN, INT32_MAX))
        return r;
    if (row->cfa_how == HS_CFA_DRAP)
        r.flags = HS_CFI_CFA_RBP | HS_CFI_CFA_DEREF;
    else if (row->cfa_how == HS_CFA_REG && row->cfa_reg == HS_CFI_REG_RBP)
        r.flags = HS_CFI_CFA_RBP;
    else if (row->cfa_how == HS_CFA_REG && row->cfa_reg == HS_CFI_REG_RSP)
        r.flags = 0;
    else
        return r; /* no CFA, an expression, or another register (r10 while realigning) */
    if (row->rbp_how == HS_CFI_OFFSET)
        r.flags |= HS_CFI_RBP_AT_CFA;
    else if (row->rbp_how == HS_CFI_AT_RBP)
        r.flags |= HS_CFI_RBP_AT_RBP;
    else if (row->rbp_how != HS_CFI_SAME)
        return (hs_cfi_rule_t){0, 0, 0, HS_CFI_UNSUPPORTED};
    if (!cfi_fits(row->rbp_off, INT16_MIN, INT16_MAX))
        return (hs_cfi_rule_t){0, 0, 0, HS_CFI_UNSUPPORTED};
    r.cfa_off = (int32_t)row->cfa_off;
    r.ra_off = (int8_t)row->ra_off;
    r.rbp_off = (int16_t)row->rbp_off;
    return r;
}

/* Runs the CIE's initial instructions, then the FDE's up to pc, and reduces the row. */
static hs_cfi_rule_t cfi_execute(const hs_cfi_cie_t *cie, const hs_cfi_obj_t *obj,
                                 hs_cfi_cur_t *insns, uintptr_t start, uintptr_t pc)
{
    const hs_cfi_rule_t unsupported = {0, 0, 0, HS_CFI_UNSUPPORTED};
    hs_cfi_cur_t cie_insns = {cie->insns, cie->insns_end, false};
    hs_cfi_vm_t vm;

    memset(&vm, 0, sizeof(vm)); /* every register "same value", no CFA yet */
    vm.cie = cie;
    vm.obj = obj;
    vm.pc = pc;
    vm.loc = pc; /* initial instructions must not advance: any advance ends them */
    if (!cfi_run(&vm, &cie_insns) || vm.done || vm.depth != 0)
        return unsupported;
    vm.init = vm.row;
    vm.loc = start;
    if (!cfi_run(&vm, insns))
        return unsupported;
    return cfi_reduce(&vm.row, cie->signal);
}

hs_cfi_result_t hs_cfi_rule_in(uintptr_t pc, const void *eh_frame_hdr, uintptr_t lo, uintptr_t hi,
                               hs_cfi_rule_t *rule)
{
    /* In .eh_frame itself datarel has no base on x86-64 (libgcc's is 0 there too). */
    const hs_cfi_obj_t obj = {0, lo, hi};
    const uint8_t *fde = NULL;
    hs_cfi_cie_t cie;
    hs_cfi_cur_t insns;
    uintptr_t start = 0;
    hs_cfi_result_t res;

    *rule = (hs_cfi_rule_t){0, 0, 0, HS_CFI_UNSUPPORTED};
    if ((uintptr_t)eh_frame_hdr < lo || (uintptr_t)eh_frame_hdr >= hi)
        return HS_CFI_NO_INFO; /* no PT_GNU_EH_FRAME */
    res = cfi_hdr_search(pc, eh_frame_hdr, &obj, &fde);
    if (res == HS_CFI_FOUND)
        res = cfi_parse_fde(fde, pc, &obj, &cie, &insns, &start);
    if (res == HS_CFI_FOUND)
        *rule = cfi_execute(&cie, &obj, &insns, start, pc);
    return res;
}

/*
 * The range the unwind tables of pc's object are read in. _dl_find_object gives an
 * object's whole span, except for a main program whose segments leave a gap between them
 * (glibc's l_contiguous is 0: Debian's Chromium, whose .text lld aligned to a page of its
 * own, or any program linked with -z max-page-size above the page size): there each
 * PT_LOAD segment is an entry of its own, and pc's is not the one that holds
 * .eh_frame_hdr. The tables are then read inside the segment that holds .eh_frame_hdr,
 * found by a second lookup (.eh_frame sits next to it, in the same read-only segment,
 * as linkers lay them out; a table outside it fails the bounds checks). Both lookups
 * are lock-free.
 */
static bool cfi_tables_range(const struct dl_find_object *dlfo, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t hdr = (uintptr_t)dlfo->dlfo_eh_frame;
    struct dl_find_object seg;

    *lo = (uintptr_t)dlfo->dlfo_map_start;
    *hi = (uintptr_t)dlfo->dlfo_map_end;
    if (hdr == 0 || (hdr >= *lo && hdr < *hi))
        return true;
    if (_dl_find_object((void *)hdr, &seg) != 0 || seg.dlfo_link_map != dlfo->dlfo_link_map ||
        (uintptr_t)seg.dlfo_eh_frame != hdr)
        return false;
    *lo = (uintptr_t)seg.dlfo_map_start;
    *hi = (uintptr_t)seg.dlfo_map_end;
    return true;
}

hs_cfi_result_t hs_cfi_rule(uintptr_t pc, hs_cfi_rule_t *rule)
{
    struct dl_find_object dlfo;
    uintptr_t lo, hi;

    *rule = (hs_cfi_rule_t){0, 0, 0, HS_CFI_UNSUPPORTED};
    if (_dl_find_object((void *)pc, &dlfo) != 0)
        return HS_CFI_NO_OBJECT;
    if (!cfi_tables_range(&dlfo, &lo, &hi))
        return HS_CFI_NO_INFO;
    return hs_cfi_rule_in(pc, dlfo.dlfo_eh_frame, lo, hi, rule);
}
