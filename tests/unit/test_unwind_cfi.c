/*
 * Unit test of the CFI parser behind the dwarf unwinder (src/preload/unwind/unwind_cfi.c). Real
 * binaries only exercise what GCC and ld emit today (pcrel sdata4, CIE version 1, "zR"),
 * so this test builds .eh_frame_hdr, CIE and FDE records in a buffer and checks the rule
 * hs_cfi_rule_in derives: every pointer encoding the parser claims (absptr, udata2/4/8,
 * sdata2/4/8, uleb128, sleb128, pcrel, indirect, omit), CIE versions 1, 3 and 4,
 * augmentations z, R, P, L, S, 64-bit lengths, every CFA instruction it handles, the
 * binary search over many FDEs, each case it must call unsupported, and malformed
 * tables (random byte flips) that must never make it read outside the buffer or crash.
 */
#define _GNU_SOURCE
#include "unwind/unwind_cfi.h"

#include "check.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MEM_SIZE 16384
#define EH_OFF 1024   /* .eh_frame */
#define CODE_OFF 8192 /* the fake functions */
#define SLOT_OFF 7168 /* indirect pointers */

static uint8_t mem[MEM_SIZE] __attribute__((aligned(64)));
#define FUNC ((uintptr_t)mem + CODE_OFF)

/* ---- writing records -------------------------------------------------------------------- */

typedef struct {
    uint8_t *p;
} wr_t;

static void wn(wr_t *w, uint64_t v, int n)
{
    memcpy(w->p, &v, (size_t)n); /* little-endian */
    w->p += n;
}

static void wleb(wr_t *w, uint64_t v, bool sign)
{
    for (;;) {
        uint8_t b = v & 0x7f;
        bool last = sign ? ((int64_t)v >> 6 == 0 || (int64_t)v >> 6 == -1) : (v >> 7) == 0;

        v = sign ? (uint64_t)((int64_t)v >> 7) : v >> 7;
        *w->p++ = last ? b : (uint8_t)(b | 0x80);
        if (last)
            return;
    }
}

/* An encoded pointer to addr (or a plain value, when !apply) in encoding enc. */
static void wptr(wr_t *w, uint8_t enc, uint64_t addr, bool apply)
{
    uint64_t v = addr;

    if (apply && (enc & DW_EH_PE_indirect)) {
        memcpy(mem + SLOT_OFF, &addr, sizeof(addr));
        v = (uintptr_t)(mem + SLOT_OFF);
    }
    if (apply && (enc & 0x70) == DW_EH_PE_pcrel)
        v -= (uintptr_t)w->p;
    switch (enc & 0x0f) {
    case DW_EH_PE_uleb128:
    case DW_EH_PE_sleb128:
        wleb(w, v, (enc & 0x0f) == DW_EH_PE_sleb128);
        break;
    case DW_EH_PE_udata2:
    case DW_EH_PE_sdata2:
        wn(w, v, 2);
        break;
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4:
        wn(w, v, 4);
        break;
    default:
        wn(w, v, 8);
    }
}

typedef struct {
    int version;     /* 1, 3 or 4 */
    const char *aug; /* "zR", "zPLR", "zRS", "" ... */
    uint8_t fde_enc; /* the R augmentation */
    bool is64;       /* 64-bit DWARF lengths */
    const uint8_t *insns;
    size_t ninsns;
    int nfde; /* FDE i covers [FUNC + 32 i, FUNC + 32 i + range) */
    uint64_t range;
} spec_t;

/* Opens a record: returns where its length goes. */
static uint8_t *rec_open(wr_t *w, bool is64)
{
    uint8_t *len_at = w->p;

    if (is64)
        wn(w, 0xffffffffu, 4);
    wn(w, 0, is64 ? 8 : 4);
    return len_at;
}

static void rec_close(wr_t *w, uint8_t *len_at, bool is64)
{
    uint8_t *body = len_at + (is64 ? 12 : 4);

    while ((w->p - body) % 8 != (is64 ? 4 : 0))
        *w->p++ = DW_CFA_nop;
    wr_t l = {len_at + (is64 ? 4 : 0)};
    wn(&l, (uint64_t)(w->p - body), is64 ? 8 : 4);
}

static void build_cie(wr_t *w, const spec_t *s)
{
    static const uint8_t init[] = {DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1};
    uint8_t *len_at = rec_open(w, s->is64);
    wr_t a;
    uint8_t data[32];

    wn(w, 0, s->is64 ? 8 : 4);
    *w->p++ = (uint8_t)s->version;
    memcpy(w->p, s->aug, strlen(s->aug) + 1);
    w->p += strlen(s->aug) + 1;
    if (s->version == 4) {
        *w->p++ = 8;
        *w->p++ = 0;
    }
    wleb(w, 1, false);
    wleb(w, (uint64_t)-8, true);
    if (s->version == 1)
        *w->p++ = 16;
    else
        wleb(w, 16, false);
    if (s->aug[0] == 'z') {
        a.p = data;
        for (const char *c = s->aug + 1; *c; c++) {
            if (*c == 'R')
                *a.p++ = s->fde_enc;
            if (*c == 'L')
                *a.p++ = DW_EH_PE_pcrel | DW_EH_PE_sdata4;
            if (*c == 'P') {
                *a.p++ = DW_EH_PE_indirect | DW_EH_PE_pcrel | DW_EH_PE_sdata4;
                wn(&a, 0x1234, 4);
            }
        }
        wleb(w, (uint64_t)(a.p - data), false);
        memcpy(w->p, data, (size_t)(a.p - data));
        w->p += a.p - data;
    }
    memcpy(w->p, init, sizeof(init));
    w->p += sizeof(init);
    rec_close(w, len_at, s->is64);
}

static void build_fde(wr_t *w, const spec_t *s, const uint8_t *cie, uintptr_t begin)
{
    uint8_t *len_at = rec_open(w, s->is64);
    uint8_t *id_at = w->p;
    uint8_t enc = s->aug[0] == 'z' && strchr(s->aug, 'R') ? s->fde_enc : DW_EH_PE_absptr;

    wn(w, (uint64_t)(id_at - cie), s->is64 ? 8 : 4);
    wptr(w, enc, begin, true);
    wptr(w, enc & 0x0f, s->range, false);
    if (s->aug[0] == 'z') {
        bool lsda = strchr(s->aug, 'L') != NULL;
        wleb(w, lsda ? 4 : 0, false);
        if (lsda)
            wn(w, 0, 4);
    }
    memcpy(w->p, s->insns, s->ninsns);
    w->p += s->ninsns;
    rec_close(w, len_at, s->is64);
}

/* .eh_frame_hdr at mem, .eh_frame at EH_OFF: one CIE, s->nfde FDEs, a terminator. */
static void build(const spec_t *s)
{
    wr_t w = {mem + EH_OFF}, h = {mem};
    uint8_t *cie = w.p;

    memset(mem, 0, sizeof(mem));
    build_cie(&w, s);
    *h.p++ = 1;
    *h.p++ = DW_EH_PE_pcrel | DW_EH_PE_sdata4;
    *h.p++ = DW_EH_PE_udata4;
    *h.p++ = DW_EH_PE_datarel | DW_EH_PE_sdata4;
    wn(&h, (uint64_t)(mem + EH_OFF - h.p), 4);
    wn(&h, (uint64_t)s->nfde, 4);
    for (int i = 0; i < s->nfde; i++) {
        uintptr_t begin = FUNC + 32 * (uintptr_t)i;
        wn(&h, begin - (uintptr_t)mem, 4);
        wn(&h, (uint64_t)(w.p - mem), 4);
        build_fde(&w, s, cie, begin);
    }
    wn(&w, 0, 4);
}

/* ---- checking rules ----------------------------------------------------------------------- */

static hs_cfi_result_t rule_at(uintptr_t pc, hs_cfi_rule_t *r)
{
    return hs_cfi_rule_in(pc, mem, (uintptr_t)mem, (uintptr_t)mem + sizeof(mem), r);
}

static void expect(const char *what, uintptr_t off, hs_cfi_result_t res, uint8_t flags, int32_t cfa,
                   int16_t rbp)
{
    hs_cfi_rule_t r;
    hs_cfi_result_t got = rule_at(FUNC + off, &r);

    if (got != res) {
        CHECK(0, "%s, pc +%lu: result %d, want %d", what, (unsigned long)off, (int)got, (int)res);
        return;
    }
    if (res != HS_CFI_FOUND)
        return;
    if (flags & (HS_CFI_UNSUPPORTED | HS_CFI_END)) {
        CHECK(r.flags == flags, "%s, pc +%lu: flags %#x, want %#x", what, (unsigned long)off,
              r.flags, flags);
        return;
    }
    CHECK(r.flags == flags && r.cfa_off == cfa && r.ra_off == -8 &&
              (!(flags & (HS_CFI_RBP_AT_CFA | HS_CFI_RBP_AT_RBP)) || r.rbp_off == rbp),
          "%s, pc +%lu: flags %#x cfa %d ra %d rbp %d, want %#x %d -8 %d", what, (unsigned long)off,
          r.flags, r.cfa_off, r.ra_off, r.rbp_off, flags, cfa, rbp);
}

/* GCC's "push %rbp; mov %rsp,%rbp" prologue at offsets 0, 1 and 4. */
static const uint8_t prologue[] = {
    DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset,   16, DW_CFA_offset | 6, 2,
    DW_CFA_advance_loc | 3, DW_CFA_def_cfa_register, 6};

static void check_prologue(const char *what)
{
    expect(what, 0, HS_CFI_FOUND, 0, 8, 0);
    expect(what, 1, HS_CFI_FOUND, HS_CFI_RBP_AT_CFA, 16, -16);
    expect(what, 3, HS_CFI_FOUND, HS_CFI_RBP_AT_CFA, 16, -16);
    expect(what, 4, HS_CFI_FOUND, HS_CFI_CFA_RBP | HS_CFI_RBP_AT_CFA, 16, -16);
    expect(what, 255, HS_CFI_FOUND, HS_CFI_CFA_RBP | HS_CFI_RBP_AT_CFA, 16, -16);
    expect(what, 256, HS_CFI_NO_FDE, 0, 0, 0);
    expect(what, (uintptr_t)-1, HS_CFI_NO_FDE, 0, 0, 0);
}

static void test_encodings(void)
{
    static const uint8_t encs[] = {
        DW_EH_PE_pcrel | DW_EH_PE_sdata4,
        DW_EH_PE_absptr,
        DW_EH_PE_udata8,
        DW_EH_PE_sdata8,
        DW_EH_PE_pcrel | DW_EH_PE_sdata2,
        DW_EH_PE_pcrel | DW_EH_PE_udata2,
        DW_EH_PE_pcrel | DW_EH_PE_udata4,
        DW_EH_PE_pcrel | DW_EH_PE_sdata8,
        DW_EH_PE_pcrel | DW_EH_PE_uleb128,
        DW_EH_PE_pcrel | DW_EH_PE_sleb128,
        DW_EH_PE_pcrel | DW_EH_PE_sdata4 | DW_EH_PE_indirect,
    };
    static const char *const augs[] = {"zR", "zPLR"};
    static const int versions[] = {1, 3, 4};
    char what[96];

    for (size_t e = 0; e < sizeof(encs); e++) {
        for (size_t v = 0; v < 3; v++) {
            for (int a = 0; a < 2; a++) {
                for (int is64 = 0; is64 < 2; is64++) {
                    spec_t s = {versions[v], augs[a],          encs[e], is64,
                                prologue,    sizeof(prologue), 1,       256};
                    build(&s);
                    snprintf(what, sizeof(what), "enc %#x, CIE v%d \"%s\"%s", encs[e], versions[v],
                             augs[a], is64 ? ", 64-bit" : "");
                    check_prologue(what);
                }
            }
        }
    }
    spec_t plain = {1, "", 0, false, prologue, sizeof(prologue), 1, 256};
    build(&plain);
    check_prologue("no augmentation (absptr)");
}

static void test_one(const char *what, const uint8_t *insns, size_t n, uintptr_t off,
                     hs_cfi_result_t res, uint8_t flags, int32_t cfa, int16_t rbp)
{
    spec_t s = {1, "zR", DW_EH_PE_pcrel | DW_EH_PE_sdata4, false, insns, n, 1, 256};

    build(&s);
    expect(what, off, res, flags, cfa, rbp);
}

#define ONE(what, off, res, flags, cfa, rbp, ...)                                                  \
    do {                                                                                           \
        static const uint8_t p_[] = {__VA_ARGS__};                                                 \
        test_one(what, p_, sizeof(p_), off, res, flags, cfa, rbp);                                 \
    } while (0)

#define F HS_CFI_FOUND
#define UNSUP HS_CFI_UNSUPPORTED
#define AT_CFA HS_CFI_RBP_AT_CFA

static void test_instructions(void)
{
    /* An epilogue: remember, pop, ret, restore. */
    ONE("remember/restore", 2, F, 0, 8, 0, DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16,
        DW_CFA_offset | 6, 2, DW_CFA_advance_loc | 1, DW_CFA_remember_state, DW_CFA_def_cfa_offset,
        8, DW_CFA_restore | 6, DW_CFA_advance_loc | 1, DW_CFA_restore_state);
    ONE("remember/restore, after", 3, F, AT_CFA, 16, -16, DW_CFA_advance_loc | 1,
        DW_CFA_def_cfa_offset, 16, DW_CFA_offset | 6, 2, DW_CFA_advance_loc | 1,
        DW_CFA_remember_state, DW_CFA_def_cfa_offset, 8, DW_CFA_restore | 6, DW_CFA_advance_loc | 1,
        DW_CFA_restore_state);
    ONE("def_cfa_sf, offset_extended_sf", 0, F, AT_CFA, 24, -16, DW_CFA_def_cfa_sf, 7,
        0x7d /* -3 */, DW_CFA_offset_extended_sf, 6, 2);
    ONE("def_cfa_offset_sf, negative_offset", 10, F, AT_CFA, 32, 24, DW_CFA_advance_loc1, 10,
        DW_CFA_def_cfa_offset_sf, 0x7c /* -4 */, DW_CFA_GNU_negative_offset_extended, 6, 3);
    ONE("advance_loc2/4, restore_extended", 0x30, F, 0, 40, 0, DW_CFA_offset_extended, 6, 2,
        DW_CFA_advance_loc2, 0x10, 0x00, DW_CFA_def_cfa_offset, 24, DW_CFA_advance_loc4, 0x20, 0, 0,
        0, DW_CFA_def_cfa_offset, 40, DW_CFA_restore_extended, 6);
    ONE("advance_loc2, before", 0x0f, F, AT_CFA, 8, -16, DW_CFA_offset_extended, 6, 2,
        DW_CFA_advance_loc2, 0x10, 0x00, DW_CFA_def_cfa_offset, 24);
    ONE("harmless ops", 0, F, 0, 8, 0, DW_CFA_nop, DW_CFA_GNU_args_size, 16, DW_CFA_same_value, 6,
        DW_CFA_undefined, 3, DW_CFA_expression, 12, 2, DW_OP_breg6, 0x78, DW_CFA_val_expression, 13,
        1, DW_OP_lit0, DW_CFA_register, 3, 12, DW_CFA_val_offset, 14, 1);
    ONE("return address undefined", 1, F, HS_CFI_END, 0, 0, DW_CFA_advance_loc | 1,
        DW_CFA_undefined, 16);
    ONE("DRAP, r10 prologue", 0, F, UNSUP, 0, 0, DW_CFA_def_cfa, 10, 0, DW_CFA_advance_loc | 1,
        DW_CFA_expression, 6, 2, DW_OP_breg6, 0, DW_CFA_def_cfa_expression, 3, DW_OP_breg6, 0x70,
        DW_OP_deref);
    ONE("DRAP", 1, F, HS_CFI_CFA_RBP | HS_CFI_CFA_DEREF | HS_CFI_RBP_AT_RBP, -16, 0, DW_CFA_def_cfa,
        10, 0, DW_CFA_advance_loc | 1, DW_CFA_expression, 6, 2, DW_OP_breg6, 0, DW_CFA_expression,
        12, 2, DW_OP_breg6, 0x78, DW_CFA_def_cfa_expression, 3, DW_OP_breg6, 0x70, DW_OP_deref);
}

static void test_unsupported(void)
{
    ONE("CFA in r10", 0, F, UNSUP, 0, 0, DW_CFA_def_cfa, 10, 0);
    ONE("rbp in a register", 0, F, UNSUP, 0, 0, DW_CFA_register, 6, 9);
    ONE("rbp undefined", 0, F, UNSUP, 0, 0, DW_CFA_undefined, 6);
    ONE("ra val_offset", 0, F, UNSUP, 0, 0, DW_CFA_val_offset, 16, 1);
    ONE("ra expression", 0, F, UNSUP, 0, 0, DW_CFA_expression, 16, 2, DW_OP_breg7, 0);
    ONE("rbp expression on rsp", 0, F, UNSUP, 0, 0, DW_CFA_expression, 6, 2, DW_OP_breg7, 0);
    ONE("CFA expression", 0, F, UNSUP, 0, 0, DW_CFA_def_cfa_expression, 3, DW_OP_breg7, 8,
        DW_OP_deref);
    ONE("rule for rsp", 0, F, UNSUP, 0, 0, DW_CFA_offset_extended, 7, 1);
    ONE("window_save", 0, F, UNSUP, 0, 0, DW_CFA_GNU_window_save);
    ONE("restore_state alone", 0, F, UNSUP, 0, 0, DW_CFA_restore_state);
    ONE("state stack overflow", 0, F, UNSUP, 0, 0, DW_CFA_remember_state, DW_CFA_remember_state,
        DW_CFA_remember_state, DW_CFA_remember_state, DW_CFA_remember_state, DW_CFA_remember_state,
        DW_CFA_remember_state, DW_CFA_remember_state, DW_CFA_remember_state);
    ONE("rbp offset too far", 0, F, UNSUP, 0, 0, DW_CFA_offset | 6, 0x88, 0x27 /* 5000 */);
    ONE("block past the end", 0, F, UNSUP, 0, 0, DW_CFA_def_cfa_expression, 100, DW_OP_breg6);

    spec_t s = {1, "zRS", DW_EH_PE_pcrel | DW_EH_PE_sdata4, false, prologue, sizeof(prologue),
                1, 256};
    build(&s);
    expect("signal frame", 4, F, UNSUP, 0, 0);
    s.aug = "zR";
    s.version = 2;
    build(&s);
    expect("CIE version 2", 4, HS_CFI_NO_INFO, 0, 0, 0);
    s.version = 1;
    s.aug = "eh";
    build(&s);
    expect("augmentation eh", 4, HS_CFI_NO_INFO, 0, 0, 0);
    s.aug = "zR";
    s.fde_enc = DW_EH_PE_textrel | DW_EH_PE_sdata4;
    build(&s);
    expect("textrel", 4, HS_CFI_NO_INFO, 0, 0, 0);
    s.fde_enc = DW_EH_PE_omit;
    build(&s);
    expect("omit", 4, HS_CFI_NO_INFO, 0, 0, 0);
}

static void test_hdr(void)
{
    spec_t s = {1,   "zR", DW_EH_PE_pcrel | DW_EH_PE_sdata4, false, prologue, sizeof(prologue),
                100, 16};
    hs_cfi_rule_t r;

    build(&s);
    for (uintptr_t i = 0; i < 100; i++) {
        expect("binary search", 32 * i + 5, F, HS_CFI_CFA_RBP | AT_CFA, 16, -16);
        expect("gap", 32 * i + 20, HS_CFI_NO_FDE, 0, 0, 0);
    }
    mem[3] = DW_EH_PE_datarel | DW_EH_PE_udata4;
    CHECK(rule_at(FUNC, &r) == HS_CFI_NO_INFO, "table encoding udata4 accepted");
    build(&s);
    mem[0] = 2;
    CHECK(rule_at(FUNC, &r) == HS_CFI_NO_INFO, "hdr version 2 accepted");
    build(&s);
    memset(mem + 8, 0, 4);
    CHECK(rule_at(FUNC, &r) == HS_CFI_NO_FDE, "empty table read as more than no FDE");
    CHECK(hs_cfi_rule_in(FUNC, mem, (uintptr_t)mem + 1, (uintptr_t)mem + MEM_SIZE, &r) ==
              HS_CFI_NO_INFO,
          "hdr outside the object accepted");
}

/* ---- malformed tables --------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random flips in the header and the records: any answer will do, but no fault, no read
 * outside mem (the parser is given [mem, mem + MEM_SIZE) as the object), no hang. */
static void test_corrupt(void)
{
    spec_t s = {3,  "zPLR", DW_EH_PE_pcrel | DW_EH_PE_sdata4, false, prologue, sizeof(prologue),
                20, 24};
    size_t found = 0;

    for (int iter = 0; iter < 30000; iter++) {
        s.is64 = iter & 1;
        build(&s);
        for (int k = 0; k < 1 + (int)(next_rand() % 4); k++) {
            size_t at = next_rand() % 3 == 0 ? next_rand() % 192 : EH_OFF + next_rand() % 1024;
            mem[at] = (uint8_t)next_rand();
        }
        for (int q = 0; q < 4; q++) {
            hs_cfi_rule_t r;
            hs_cfi_result_t res = rule_at(FUNC + next_rand() % 700, &r);
            CHECK(res == F || res == HS_CFI_NO_FDE || res == HS_CFI_NO_INFO, "result %d", res);
            found += res == F && !(r.flags & UNSUP);
        }
    }
    printf("corrupt tables: %zu usable rules in 120000 lookups\n", found);
}

int main(void)
{
    test_encodings();
    test_instructions();
    test_unsupported();
    test_hdr();
    test_corrupt();
    return hs_check_done("test_unwind_cfi");
}
