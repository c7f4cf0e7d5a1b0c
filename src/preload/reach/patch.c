/*
 * Patch: in-place entry-point patching on x86-64, for the allocation entry points that
 * symbol interposition cannot reach (issue 26): Chromium's executable defines malloc and
 * operator new itself, a static tcmalloc or jemalloc binds them inside the executable, a
 * Rust #[global_allocator] calls local symbols. This file owns the machine-code side only:
 * decode a prologue, relocate it into a trampoline, write the jump, undo it (the memory
 * side -- /proc/self/maps, trampoline pages, writing live code -- is in patch_mem.c). It
 * knows nothing of hooks, the sampler or the tables, and never runs on an allocation path.
 *
 * What a patch looks like (the near case):
 *
 *   target:  [endbr64]          kept, so an indirect call still lands on an ENDBR (CET)
 *   at:      jmp rel32 stub     5 bytes over the first whole instructions (span >= 5;
 *                               or a jmp/ret and the alignment padding after it)
 *   slot (one 128-byte slot of a trampoline page mapped within +-2 GB of target):
 *     +0     jmp [rip+2]; int3 int3; .quad hook           the stub: reaches any hook
 *     +16    endbr64; <relocated prologue>; jmp at+span   the trampoline = *original
 * With hs_patch_install_code, the jump at `at` goes instead to code of the hook's own in
 * another slot nearby, which goes on at the trampoline's +20 (after its endbr64) or leaves
 * for wherever the hook sends it: hooks_near.c's malloc and free fast paths.
 * A PIE executable sits near 0x55..., libheapsift.so near 0x7f...: a rel32 from one
 * cannot reach the other, hence the stub. Only when no page within +-2 GB can be mapped
 * is a 14-byte `jmp [rip+0]; .quad hook` written at `at` instead (the prologue must then
 * hold 14 bytes of whole instructions, and a RIP-relative operand in it must still reach
 * its data from wherever the trampoline landed, or the patch is refused).
 *
 * Relocation: each copied instruction is decoded by Zydis (a real decoder: lengths,
 * prefixes, VEX/EVEX, which operand is relative). RIP-relative operands get their disp32
 * recomputed (refused if out of range); jmp/jcc/call rel8/rel32 become rel32 forms, or
 * absolute sequences when the destination is out of range from the trampoline
 * (`j!cc +14; jmp [rip]; .quad`, `call [rip+2]; jmp +8; .quad`); jrcxz/loop keep their
 * rel8 and hop over an absolute jump. A branch inside the prologue to a later copied
 * instruction goes to that instruction's copy. Refused, with why[] naming the reason and
 * offset: an instruction the decoder rejects, int3/ud0/ud1/ud2/hlt, a ret or
 * unconditional jump that ends the code before the bytes the jump needs, a call into the
 * patched bytes (a PC-reading idiom: the copy would push another address), other
 * relative instructions (xbegin), and -- from a linear sweep of the function body (its
 * symbol size when known, else up to 2 KiB, stopping at an undecodable byte or int3) --
 * any branch or RIP-relative reference from elsewhere into the patched bytes after their
 * first. A jump to `at` itself is allowed: it runs the hook again, as a call would.
 * Not detected: an indirect jump (a jump table) into the patched bytes, and code outside
 * the swept extent (a `.cold` part) jumping into them; compilers emit neither for the
 * first five bytes of a function in practice. Calls inside the relocated prologue push a
 * trampoline address as their return address (unwinders see an address with no CFI).
 *
 * Writing the jump so that no thread executes a torn instruction: the bytes are written
 * with one `lock cmpxchg` of the 8-byte word that holds them (aligned when the 5 bytes
 * fit in one aligned word, else an unaligned word inside one cache line: a locked access
 * within a line is atomic and is not a split lock). Only when the bytes cross a cache line
 * (the 14-byte fallback, or an entry 60..63 bytes into a line) does it fall back to
 * writing `jmp $` (EB FE) over the first two bytes, then the tail, then the real first
 * two bytes: a thread arriving meanwhile spins for a few microseconds. After each step
 * every core running a thread of the process is serialized with
 * membarrier(PRIVATE_EXPEDITED_SYNC_CORE) when the kernel has it (Intel's
 * cross-modifying-code protocol). Pages are made writable with their original protection
 * (read from /proc/self/maps) plus PROT_WRITE -- never dropping PROT_EXEC, since other
 * threads run code on them -- and put back afterwards. Trampoline pages likewise go r-x ->
 * rwx -> r-x while a slot is written; a slot is never freed or reused for another target
 * (a thread may still be inside it), so a remove/install cycle of one target reuses its
 * own slot and only rewrites the stub's hook word.
 *
 * Threads: the atomic store makes patching safe for a thread that is at the entry or
 * outside the function. A thread stopped *between* two instructions of the replaced bytes
 * (it ran `push rbp` and has not yet fetched `mov rbp,rsp`) would resume in the middle of
 * the new jump. Hence the contract: install at start while one thread runs (reach's
 * detection runs in the library constructor), or with the other threads stopped and each
 * stopped pc passed through hs_patch_fixup_pc (attach's injector has them stopped under
 * ptrace anyway). A prologue whose first replaced instruction is 5 bytes or more has no
 * such window; tests/unit/test_patch.c patches one 2,000 times under four calling threads.
 *
 * The decoder: Debian's libzydis-dev 4.0.0 ships libZydis.so only (no .a), so the library
 * does not link it: the first install dlopens libZydis.so.4.0 (package libzydis4.0;
 * it needs only libc) and resolves three functions. A program that needs no patch never
 * loads it, and libheapsift.so gains no DT_NEEDED entry (ldd shows none).
 *
 * Cost, measured with callgrind (valgrind 3.19, --smc-check=all, gcc 12, 2026-11-26;
 * `test_patch --bench N 0|1`, N = 1e6 and 2e6 so set-up cancels out): a call of a
 * 4-instruction function costs 14.0 Ir per loop iteration unpatched, 19.0 patched with a
 * one-instruction pass-through hook (`jmp *orig`): 5 more, 4 of them the engine's -- the
 * jmp rel32 at the entry, the stub's jmp [rip+2], the trampoline's endbr64 and its jump
 * back to at+span -- and 1 the hook's. (A C hook that calls *original adds its own call,
 * ret and body.) Wall clock on the shared 2-core machine: about 5.7 -> 11.7 ns per call of
 * that trivial function (two indirect jumps). Installing the first patch costs about
 * 280,000 instructions (dlopen of Zydis, the decode and sweep, /proc/self/maps).
 *
 * How it is meant to be used (the next step, after the preload headers are restructured):
 *   - reach.c already finds the bypassed entry points (malloc & co. defined ahead of
 *     libheapsift.so, allocator APIs, Rust's __rust_alloc family from .symtab, with their
 *     st_size). For each one the entry-point module calls
 *     hs_patch_install_ex(addr, st_size, 0, hs_hook_<name>, &real_<name>, why, ...) in the
 *     constructor, before any thread but the main one exists; the hooks are the very
 *     functions interposition uses, their "real" pointer being the trampoline. A refusal is
 *     reported the way reach reports today (one stderr line + a profile comment naming the
 *     entry point and why[]), and the entry point stays unprofiled -- never a crash.
 *   - attach (a CLI verb; ptrace lives in src/cli): the injector stops every thread,
 *     dlopens libheapsift.so in the target, whose attach entry point runs reach and installs
 *     the patches; before detaching, the injector moves each stopped thread's pc through
 *     hs_patch_fixup_pc. Detach does the same in reverse with hs_patch_remove; threads left
 *     inside a hook or trampoline are harmless since slots are never unmapped.
 *
 * Locking: one mutex (HS_RANK_PATCH, the outermost) around install/remove/fixup; none of
 * them may be called from a signal handler or an allocation hook.
 */
#define _GNU_SOURCE
#include "patch.h"
#include "patch_int.h"
#include "runtime/debugcheck.h"
#include "base/runtime_libs.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <Zydis/Zydis.h>

#define PATCH_MAX 128 /* patched entry points, ever */
#define PATCH_MAX_INSNS 16
#define PATCH_SWEEP 2048u /* body sweep when the size is unknown */
#define PATCH_JMP_NEAR 5u
#define PATCH_JMP_ABS 14u

enum { INSN_COPY, INSN_RIPREL, INSN_JMP, INSN_JCC, INSN_CALL, INSN_JCXZ };

typedef struct {
    uint8_t off, len, kind;
    uint8_t field;  /* RIPREL: offset of disp32; JCC: condition code; JCXZ: offset of rel8 */
    bool internal;  /* the destination is a copied instruction */
    uint8_t dest_k; /* ... its index */
    uintptr_t dest; /* absolute destination (RIPREL: the datum) */
} patch_insn_t;

typedef struct {
    uint8_t *at; /* first replaced byte */
    size_t span; /* bytes of whole instructions relocated */
    int n;
    patch_insn_t in[PATCH_MAX_INSNS];
} patch_plan_t;

typedef struct {
    uint8_t *target, *at, *slot;
    uint8_t *code; /* the hook's own code beside the trampoline (hs_patch_install_code), or NULL */
    void *hook;
    uint8_t len;  /* bytes of the jump written at `at` */
    uint8_t span; /* == plan.span */
    uint8_t orig[PATCH_JMP_ABS];
    uint8_t ninsn;
    uint8_t insn_off[PATCH_MAX_INSNS];  /* from at */
    uint8_t tramp_off[PATCH_MAX_INSNS]; /* from slot + PATCH_STUB */
    bool installed;
} patch_rec_t;

typedef ZyanStatus (*patch_init_fn)(ZydisDecoder *, ZydisMachineMode, ZydisStackWidth);
/* ZydisDecoderDecodeInstruction: the instruction without its operands' details, which
   nothing here reads (the raw fields, attributes and category are filled): about a third
   of ZydisDecoderDecodeFull's cost, which the body sweep pays for every instruction. */
typedef ZyanStatus (*patch_full_fn)(const ZydisDecoder *, ZydisDecoderContext *, const void *,
                                    ZyanUSize, ZydisDecodedInstruction *);
typedef const char *(*patch_mnem_fn)(ZydisMnemonic);

static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static patch_rec_t patch_recs[PATCH_MAX];
static int patch_nrecs;
static struct {
    bool tried, ok;
    ZydisDecoder dec;
    patch_full_fn full;
    patch_mnem_fn mnem;
} patch_zy;

/* ---- diagnostics ------------------------------------------------------------------ */

/* snprintf with %s/%d/%lx does not allocate in glibc. */
#define PATCH_WHY(...)                                                                             \
    do {                                                                                           \
        if (why && whylen)                                                                         \
            snprintf(why, whylen, __VA_ARGS__);                                                    \
    } while (0)

static const char *patch_mnem(const ZydisDecodedInstruction *in)
{
    const char *s = patch_zy.mnem ? patch_zy.mnem(in->mnemonic) : NULL;
    return s ? s : "instruction";
}

/* ---- the decoder, loaded on first use --------------------------------------------- */

static bool patch_load_decoder(void)
{
    if (patch_zy.tried)
        return patch_zy.ok;
    patch_zy.tried = true;
    void *h = dlopen(HS_DECODER_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libZydis.so", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return false;
    patch_init_fn init = (patch_init_fn)dlsym(h, "ZydisDecoderInit");
    patch_zy.full = (patch_full_fn)dlsym(h, "ZydisDecoderDecodeInstruction");
    patch_zy.mnem = (patch_mnem_fn)dlsym(h, "ZydisMnemonicGetString");
    if (!init || !patch_zy.full ||
        ZYAN_FAILED(init(&patch_zy.dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
        return false;
    patch_zy.ok = true;
    return true;
}

static bool patch_decode(const uint8_t *a, size_t avail, ZydisDecodedInstruction *in)
{
    if (avail > ZYDIS_MAX_INSTRUCTION_LENGTH)
        avail = ZYDIS_MAX_INSTRUCTION_LENGTH;
    return ZYAN_SUCCESS(patch_zy.full(&patch_zy.dec, NULL, a, avail, in));
}

/* The absolute destination of a relative instruction (branch or RIP-relative operand). */
static bool patch_dest(const uint8_t *a, const ZydisDecodedInstruction *in, uintptr_t *dest)
{
    if (!(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
        return false;
    int64_t rel = in->raw.imm[0].is_relative ? in->raw.imm[0].value.s : in->raw.disp.value;
    *dest = (uintptr_t)a + in->length + (uintptr_t)rel;
    return true;
}

static bool patch_fits32(uintptr_t from_next, uintptr_t dest)
{
    int64_t d = (int64_t)(dest - from_next);
    return d >= INT32_MIN && d <= INT32_MAX;
}

/* ---- the plan: which instructions, how each moves ---------------------------------- */

/* Classifies one decoded instruction of the prologue. 0, or -EINVAL with why. */
static int patch_classify(const uint8_t *fn, const uint8_t *a, const ZydisDecodedInstruction *in,
                          patch_insn_t *pi, char *why, size_t whylen)
{
    long off = (long)(a - fn);
    switch (in->mnemonic) {
    case ZYDIS_MNEMONIC_INT3:
    case ZYDIS_MNEMONIC_UD0:
    case ZYDIS_MNEMONIC_UD1:
    case ZYDIS_MNEMONIC_UD2:
    case ZYDIS_MNEMONIC_HLT:
        PATCH_WHY("%s at +%ld in the prologue", patch_mnem(in), off);
        return -EINVAL;
    default:
        break;
    }
    pi->kind = INSN_COPY;
    if (!patch_dest(a, in, &pi->dest))
        return 0;
    if (!in->raw.imm[0].is_relative) {
        if (in->raw.disp.size != 32) {
            PATCH_WHY("%s at +%ld: relative operand without a disp32", patch_mnem(in), off);
            return -EINVAL;
        }
        pi->kind = INSN_RIPREL;
        pi->field = in->raw.disp.offset;
        return 0;
    }
    if (in->mnemonic == ZYDIS_MNEMONIC_JMP) {
        pi->kind = INSN_JMP;
    } else if (in->mnemonic == ZYDIS_MNEMONIC_CALL) {
        pi->kind = INSN_CALL;
    } else if (in->meta.category == ZYDIS_CATEGORY_COND_BR &&
               ((in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && (in->opcode & 0xf0) == 0x70) ||
                (in->opcode_map == ZYDIS_OPCODE_MAP_0F && (in->opcode & 0xf0) == 0x80))) {
        pi->kind = INSN_JCC;
        pi->field = in->opcode & 0x0f;
    } else if (in->mnemonic == ZYDIS_MNEMONIC_JRCXZ || in->mnemonic == ZYDIS_MNEMONIC_JECXZ ||
               in->mnemonic == ZYDIS_MNEMONIC_LOOP || in->mnemonic == ZYDIS_MNEMONIC_LOOPE ||
               in->mnemonic == ZYDIS_MNEMONIC_LOOPNE) {
        pi->kind = INSN_JCXZ;
        pi->field = in->raw.imm[0].offset;
    } else {
        PATCH_WHY("relative %s at +%ld cannot be relocated", patch_mnem(in), off);
        return -EINVAL;
    }
    return 0;
}

/* Whether [from, to) lies in the alignment padding after a function's last instruction:
 * every instruction from there to the next 16-byte boundary is a nop or int3 (what
 * compilers and assemblers fill the gap with), and to does not pass that boundary. A
 * malloc that only jumps to its body (jmp rel8, 2 bytes) can then take the 5-byte jump. */
static bool patch_padding(const uint8_t *from, const uint8_t *to, uintptr_t map_end)
{
    const uint8_t *end = (const uint8_t *)(((uintptr_t)from + 15) & ~(uintptr_t)15);
    if (to > end || (uintptr_t)end > map_end)
        return false;
    for (const uint8_t *a = from; a < end;) {
        ZydisDecodedInstruction in;
        if (!patch_decode(a, (uintptr_t)(end - a), &in) ||
            (in.mnemonic != ZYDIS_MNEMONIC_NOP && in.mnemonic != ZYDIS_MNEMONIC_INT3))
            return false;
        a += in.length;
    }
    return true;
}

/* Decodes whole instructions from plan->at until need bytes are covered. */
static int patch_plan(const uint8_t *fn, uint8_t *at, size_t need, uintptr_t map_end,
                      patch_plan_t *plan, char *why, size_t whylen)
{
    plan->at = at;
    plan->span = 0;
    plan->n = 0;
    while (plan->span < need) {
        const uint8_t *a = at + plan->span;
        ZydisDecodedInstruction in;
        patch_insn_t *pi = &plan->in[plan->n];
        if (plan->n == PATCH_MAX_INSNS || !patch_decode(a, map_end - (uintptr_t)a, &in)) {
            PATCH_WHY("the decoder refuses the bytes at +%ld", (long)(a - fn));
            return -EINVAL;
        }
        memset(pi, 0, sizeof(*pi));
        int rc = patch_classify(fn, a, &in, pi, why, whylen);
        if (rc < 0)
            return rc;
        pi->off = (uint8_t)plan->span;
        pi->len = in.length;
        plan->span += in.length;
        plan->n++;
        bool ends =
            in.meta.category == ZYDIS_CATEGORY_RET || in.meta.category == ZYDIS_CATEGORY_UNCOND_BR;
        if (ends && plan->span < need && patch_padding(at + plan->span, at + need, map_end)) {
            plan->span = need; /* the rest is padding: overwritten, never run */
            break;
        }
        if (ends && plan->span < need) {
            PATCH_WHY("too short: %s at +%ld ends the code before the %zu bytes the jump "
                      "needs",
                      patch_mnem(&in), (long)(a - fn), need);
            return -EINVAL;
        }
    }
    return 0;
}

/* Destinations inside the copied bytes must be instruction starts and are redirected to
   their copies; a call there (a PC-reading idiom) or a RIP-relative datum there is
   refused. */
static int patch_plan_internal(const uint8_t *fn, patch_plan_t *plan, char *why, size_t whylen)
{
    uintptr_t lo = (uintptr_t)plan->at, hi = lo + plan->span;
    for (int i = 0; i < plan->n; i++) {
        patch_insn_t *pi = &plan->in[i];
        long off = (long)(plan->at + pi->off - fn);
        if (pi->kind == INSN_COPY || pi->dest < lo || pi->dest >= hi)
            continue;
        if (pi->kind == INSN_RIPREL || pi->kind == INSN_CALL) {
            PATCH_WHY("the %s at +%ld refers to the patched bytes",
                      pi->kind == INSN_CALL ? "call" : "RIP-relative operand", off);
            return -EINVAL;
        }
        int k = 0;
        while (k < plan->n && lo + plan->in[k].off != pi->dest)
            k++;
        if (k == plan->n) {
            PATCH_WHY("the branch at +%ld lands inside an instruction", off);
            return -EINVAL;
        }
        pi->internal = true;
        pi->dest_k = (uint8_t)k;
    }
    return 0;
}

/* Sweeps the function body for a branch or RIP-relative reference into (at, at+span). */
static int patch_scan(const uint8_t *fn, size_t size, uintptr_t map_end, const patch_plan_t *plan,
                      char *why, size_t whylen)
{
    const uint8_t *end = fn + (size ? size : PATCH_SWEEP);
    uintptr_t lo = (uintptr_t)plan->at, hi = lo + plan->span;
    if ((uintptr_t)end > map_end)
        end = (const uint8_t *)map_end;
    for (const uint8_t *a = fn; a < end;) {
        ZydisDecodedInstruction in;
        uintptr_t dest;
        if ((uintptr_t)a == lo) {
            a += plan->span;
            continue;
        }
        if (!patch_decode(a, (uintptr_t)end - (uintptr_t)a, &in)) {
            if (!size)
                return 0; /* past the function, most likely */
            PATCH_WHY("the decoder refuses the bytes at +%ld inside the function", (long)(a - fn));
            return -EINVAL;
        }
        if (!size && in.mnemonic == ZYDIS_MNEMONIC_INT3)
            return 0;
        if (patch_dest(a, &in, &dest) && dest > lo && dest < hi) {
            PATCH_WHY("a relative %s back into the patched bytes at +%ld (from +%ld)",
                      in.raw.imm[0].is_relative ? "jump" : "reference",
                      (long)(dest - (uintptr_t)fn), (long)(a - fn));
            return -EINVAL;
        }
        a += in.length;
    }
    return 0;
}

/* The end of the readable code from hi (a mapping's end) on, up to want: the mappings
 * that follow without a gap. A page of a function patched earlier (or by another tool) is
 * a mapping of its own once its protection was changed, so one function may span two. */
static uintptr_t patch_readable_end(uintptr_t hi, uintptr_t want)
{
    hs_patch_map_t next;
    for (int k = 0; k < 8 && hi < want; k++) {
        if (!hs_patch_map_of(hi, &next) || next.lo != hi || !(next.prot & PROT_EXEC) ||
            !(next.prot & PROT_READ))
            break;
        hi = next.hi;
    }
    return hi;
}

/* ---- emission ----------------------------------------------------------------------- */

typedef struct {
    uint8_t buf[PATCH_SLOT];
    size_t n;
    uintptr_t base; /* runtime address of buf[0] */
    bool overflow;
} patch_code_t;

static void patch_put(patch_code_t *c, const void *b, size_t n)
{
    if (c->n + n > sizeof(c->buf)) {
        c->overflow = true;
        return;
    }
    memcpy(c->buf + c->n, b, n);
    c->n += n;
}

static void patch_put32(patch_code_t *c, int64_t v)
{
    int32_t x = (int32_t)v;
    patch_put(c, &x, 4);
}

static uintptr_t patch_here(const patch_code_t *c, size_t plus)
{
    return c->base + c->n + plus;
}

/* jmp dest: rel32 when it reaches, else jmp [rip+0]; .quad dest. */
static void patch_put_jmp(patch_code_t *c, uintptr_t dest)
{
    static const uint8_t abs[6] = {0xff, 0x25, 0, 0, 0, 0};
    if (patch_fits32(patch_here(c, 5), dest)) {
        patch_put(c, "\xe9", 1);
        patch_put32(c, (int64_t)(dest - patch_here(c, 4)));
    } else {
        patch_put(c, abs, sizeof(abs));
        patch_put(c, &dest, 8);
    }
}

static void patch_put_insn(patch_code_t *c, const uint8_t *a, const patch_insn_t *pi,
                           uintptr_t dest)
{
    uint8_t b[16];
    memcpy(b, a, pi->len);
    switch (pi->kind) {
    case INSN_COPY:
        patch_put(c, b, pi->len);
        break;
    case INSN_RIPREL: { /* range was checked by the caller */
        int32_t d = (int32_t)(int64_t)(dest - patch_here(c, pi->len));
        memcpy(b + pi->field, &d, 4);
        patch_put(c, b, pi->len);
        break;
    }
    case INSN_JMP:
        patch_put_jmp(c, dest);
        break;
    case INSN_JCC:
        if (patch_fits32(patch_here(c, 6), dest)) {
            uint8_t op[2] = {0x0f, (uint8_t)(0x80 | pi->field)};
            patch_put(c, op, 2);
            patch_put32(c, (int64_t)(dest - patch_here(c, 4)));
        } else { /* j!cc over an absolute jump */
            uint8_t op[2] = {(uint8_t)(0x70 | (pi->field ^ 1)), 14};
            patch_put(c, op, 2);
            patch_put_jmp(c, dest);
        }
        break;
    case INSN_CALL:
        if (patch_fits32(patch_here(c, 5), dest)) {
            patch_put(c, "\xe8", 1);
            patch_put32(c, (int64_t)(dest - patch_here(c, 4)));
        } else { /* call [rip+2]; jmp +8; .quad dest */
            patch_put(c, "\xff\x15\x02\x00\x00\x00\xeb\x08", 8);
            patch_put(c, &dest, 8);
        }
        break;
    case INSN_JCXZ: { /* jrcxz/loop taken -> +2 -> jmp dest; not taken -> hop over it */
        b[pi->field] = 2;
        patch_put(c, b, (size_t)pi->field + 1);
        bool fits = patch_fits32(patch_here(c, 2 + 5), dest);
        uint8_t hop[2] = {0xeb, fits ? 5 : 14};
        patch_put(c, hop, 2);
        patch_put_jmp(c, dest);
        break;
    }
    }
}

/* Emits the trampoline at tbase; tramp_off receives each instruction's offset. Run twice:
   the first pass learns the offsets a forward internal branch needs (sizes do not depend
   on them: an internal destination always takes the rel32 form). */
static int patch_emit(const uint8_t *fn, const patch_plan_t *plan, uintptr_t tbase, patch_code_t *c,
                      uint8_t *tramp_off, char *why, size_t whylen)
{
    for (int pass = 0; pass < 2; pass++) {
        memset(c, 0, sizeof(*c));
        c->base = tbase;
        patch_put(c, "\xf3\x0f\x1e\xfa", 4); /* endbr64 */
        bool ended = false;
        for (int i = 0; i < plan->n; i++) {
            const patch_insn_t *pi = &plan->in[i];
            uintptr_t dest = pi->internal ? tbase + (pass ? tramp_off[pi->dest_k] : 0) : pi->dest;
            if (pi->kind == INSN_RIPREL && !patch_fits32(patch_here(c, pi->len), dest)) {
                PATCH_WHY("the RIP-relative operand at +%ld is out of reach of the "
                          "trampoline",
                          (long)(plan->at + pi->off - fn));
                return -EINVAL;
            }
            tramp_off[i] = (uint8_t)c->n;
            patch_put_insn(c, plan->at + pi->off, pi, dest);
            ended = pi->kind == INSN_JMP; /* after a ret the jump back is merely dead */
        }
        if (!ended)
            patch_put_jmp(c, (uintptr_t)plan->at + plan->span);
        if (c->overflow || c->n > PATCH_SLOT - PATCH_STUB) {
            PATCH_WHY("the relocated prologue does not fit a %u-byte trampoline",
                      PATCH_SLOT - PATCH_STUB);
            return -EINVAL;
        }
    }
    return 0;
}

/* ---- install, remove ---------------------------------------------------------------- */

/* Set while the program's threads run on (attach): each jump is then written through it,
   with them stopped (patch.h). */
static hs_patch_stopper_fn *patch_stopper;

/* Where a thread at pc must resume after rec's jump was written: 0 when it need not move
   (outside the replaced bytes, or at their first). */
static uintptr_t patch_fixup_rec(const patch_rec_t *rec, uintptr_t pc)
{
    uintptr_t at = (uintptr_t)rec->at;
    if (pc <= at || pc >= at + rec->span)
        return 0;
    for (int k = 1; k < rec->ninsn; k++)
        if (at + rec->insn_off[k] == pc)
            return (uintptr_t)rec->slot + PATCH_STUB + rec->tramp_off[k];
    return 0;
}

typedef struct {
    patch_rec_t *rec;
    const uint8_t *bytes;
} patch_job_t;

static int patch_job_write(void *arg)
{
    patch_job_t *j = arg;
    return hs_patch_write_code(j->rec->at, j->bytes, j->rec->len);
}

static uintptr_t patch_job_fix(void *arg, uintptr_t pc)
{
    return patch_fixup_rec(((patch_job_t *)arg)->rec, pc);
}

/* Writes rec's jump (bytes); with the program running (a stopper set), through it. */
static int patch_commit(patch_rec_t *rec, const uint8_t *bytes)
{
    hs_patch_stopper_fn *stopper = __atomic_load_n(&patch_stopper, __ATOMIC_ACQUIRE);
    patch_job_t j = {rec, bytes};
    return stopper ? stopper(patch_job_write, patch_job_fix, &j) : patch_job_write(&j);
}

void hs_patch_set_live(hs_patch_stopper_fn *stopper)
{
    __atomic_store_n(&patch_stopper, stopper, __ATOMIC_RELEASE);
}

static patch_rec_t *patch_find(const void *target)
{
    for (int i = 0; i < patch_nrecs; i++)
        if (patch_recs[i].target == target)
            return &patch_recs[i];
    return NULL;
}

/* The jump written at rec->at: to the stub, or (no near page) to the hook directly. */
static void patch_jump_bytes(const patch_rec_t *rec, uint8_t out[PATCH_JMP_ABS])
{
    if (rec->len == PATCH_JMP_NEAR) {
        uintptr_t to = (uintptr_t)(rec->code ? rec->code : rec->slot);
        int32_t rel = (int32_t)(int64_t)(to - ((uintptr_t)rec->at + 5));
        out[0] = 0xe9;
        memcpy(out + 1, &rel, 4);
    } else {
        memcpy(out, "\xff\x25\x00\x00\x00\x00", 6);
        memcpy(out + 6, &rec->hook, 8);
    }
}

/* *original is published before the jump is written: a hook reached by the jump may read
   it at once (on another thread). */
static void patch_publish(const patch_rec_t *rec, void **original)
{
    if (original)
        __atomic_store_n(original, (void *)(rec->slot + PATCH_STUB), __ATOMIC_RELEASE);
}

/* A target patched before and removed since: same slot, same trampoline, new hook. */
static int patch_reinstall(patch_rec_t *rec, void *hook, void **original,
                           hs_patch_published_fn *published, void *arg, char *why, size_t whylen)
{
    uint8_t jmp[PATCH_JMP_ABS];
    if (memcmp(rec->at, rec->orig, rec->len) != 0) {
        PATCH_WHY("the entry's bytes changed since the patch was removed");
        return -EBUSY;
    }
    if (hook != rec->hook && rec->len == PATCH_JMP_NEAR) {
        int pg = hs_patch_slot_page(rec->slot);
        int rc = hs_patch_slot_write(pg, rec->slot + 8, (const uint8_t *)&hook, 8);
        if (rc < 0)
            return rc;
    }
    rec->hook = hook;
    patch_publish(rec, original);
    if (published)
        published(arg);
    patch_jump_bytes(rec, jmp);
    int rc = patch_commit(rec, jmp);
    if (rc == 0)
        rec->installed = true;
    return rc;
}

/* Plans, relocates and writes the slot of a new patch into rec (not yet the jump). */
static int patch_prepare(patch_rec_t *rec, uint8_t *fn, size_t size, unsigned flags, void *hook,
                         char *why, size_t whylen)
{
    hs_patch_map_t m;
    patch_plan_t plan;
    patch_code_t code;
    int pg = -1;
    if (!hs_patch_map_of((uintptr_t)fn, &m) || !(m.prot & PROT_EXEC)) {
        PATCH_WHY("%p is not in an executable mapping", (void *)fn);
        return -EINVAL;
    }
    uint8_t *at = fn;
    if (m.hi - (uintptr_t)fn >= 4 && memcmp(fn, "\xf3\x0f\x1e\xfa", 4) == 0)
        at += 4; /* endbr64 stays: an indirect call must still land on an ENDBR */
    bool near = !(flags & HS_PATCH_FORCE_ABS);
    uint8_t *slot = near ? hs_patch_slot_find((uintptr_t)at, SLOT_NEAR, &pg) : NULL;
    if (!slot) {
        near = false;
        slot = hs_patch_slot_find((uintptr_t)at, flags & HS_PATCH_FORCE_ABS ? SLOT_FAR : SLOT_ANY,
                                  &pg);
    }
    if (!slot) {
        PATCH_WHY("no trampoline page could be mapped");
        return -ENOMEM;
    }
    size_t need = near ? PATCH_JMP_NEAR : PATCH_JMP_ABS;
    int rc = patch_plan(fn, at, need, m.hi, &plan, why, whylen);
    if (rc == 0)
        rc = patch_plan_internal(fn, &plan, why, whylen);
    if (rc == 0)
        rc = patch_scan(fn, size, patch_readable_end(m.hi, (uintptr_t)fn + size), &plan, why,
                        whylen);
    if (rc == 0)
        rc =
            patch_emit(fn, &plan, (uintptr_t)slot + PATCH_STUB, &code, rec->tramp_off, why, whylen);
    if (rc < 0)
        return rc;

    uint8_t img[PATCH_SLOT];
    memset(img, 0xcc, sizeof(img));
    memcpy(img, "\xff\x25\x02\x00\x00\x00\xcc\xcc", 8); /* jmp [rip+2]; .quad at +8 */
    memcpy(img + 8, &hook, 8);
    memcpy(img + PATCH_STUB, code.buf, code.n);
    rc = hs_patch_slot_write(pg, slot, img, sizeof(img));
    if (rc < 0)
        return rc;
    hs_patch_slot_taken(pg);

    rec->target = fn;
    rec->at = at;
    rec->slot = slot;
    rec->hook = hook;
    rec->len = (uint8_t)need;
    rec->span = (uint8_t)plan.span;
    rec->ninsn = (uint8_t)plan.n;
    for (int i = 0; i < plan.n; i++)
        rec->insn_off[i] = plan.in[i].off;
    memcpy(rec->orig, at, need);
    return 0;
}

/* The hook's own code for rec (near patches only), in a slot of its own near the entry
   and within rel32 reach of the trampoline; where emit declines or no such slot is free,
   the entry jumps to the stub as without it. */
static void patch_prepare_code(patch_rec_t *rec, hs_patch_emit_fn *emit, void *emit_arg)
{
    int pg = -1;
    uint8_t img[PATCH_SLOT];
    if (!emit || rec->len != PATCH_JMP_NEAR)
        return;
    uint8_t *code = hs_patch_slot_find((uintptr_t)rec->at, SLOT_NEAR, &pg);
    uintptr_t body = (uintptr_t)rec->slot + PATCH_STUB + 4; /* after the endbr64 */
    if (!code || !patch_fits32((uintptr_t)code + PATCH_SLOT, body) ||
        !patch_fits32((uintptr_t)code, body))
        return;
    memset(img, 0xcc, sizeof(img));
    int n = emit(emit_arg, (uintptr_t)code, body, img, sizeof(img));
    if (n <= 0 || n > (int)sizeof(img) || hs_patch_slot_write(pg, code, img, sizeof(img)) < 0)
        return;
    hs_patch_slot_taken(pg);
    rec->code = code;
}

/* The size of the dynamic symbol starting at target, 0 if none. */
static size_t patch_symbol_size(void *target)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (dladdr1(target, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && info.dli_saddr == target)
        return sym->st_size;
    return 0;
}

int hs_patch_install_cb(void *target, size_t size, unsigned flags, void *hook, void **original,
                        hs_patch_published_fn *published, void *arg, char *why, size_t whylen)
{
    return hs_patch_install_code(target, size, flags, NULL, NULL, hook, original, published, arg,
                                 why, whylen);
}

int hs_patch_install_code(void *target, size_t size, unsigned flags, hs_patch_emit_fn *emit,
                          void *emit_arg, void *hook, void **original,
                          hs_patch_published_fn *published, void *arg, char *why, size_t whylen)
{
    int rc;
    PATCH_WHY("%s", "");
    hs_lock(&patch_lock, HS_RANK_PATCH);
    patch_rec_t *rec = patch_find(target);
    if (rec && rec->installed) {
        PATCH_WHY("already patched");
        rc = -EEXIST;
        goto out;
    }
    if (!patch_load_decoder()) {
        PATCH_WHY("the x86 decoder " HS_DECODER_SONAME " cannot be loaded (package libzydis4.0)");
        rc = -ELIBACC;
        goto out;
    }
    if (rec) {
        rc = patch_reinstall(rec, hook, original, published, arg, why, whylen);
    } else if (patch_nrecs == PATCH_MAX) {
        PATCH_WHY("more than %d entry points patched", PATCH_MAX);
        rc = -ENOSPC;
    } else {
        rec = &patch_recs[patch_nrecs];
        memset(rec, 0, sizeof(*rec));
        rc = patch_prepare(rec, target, size, flags, hook, why, whylen);
        if (rc == 0) {
            uint8_t jmp[PATCH_JMP_ABS];
            patch_prepare_code(rec, emit, emit_arg);
            patch_nrecs++; /* the slot is taken even if the write below fails */
            patch_publish(rec, original);
            if (published)
                published(arg);
            patch_jump_bytes(rec, jmp);
            rc = patch_commit(rec, jmp);
            rec->installed = rc == 0;
        }
    }
out:
    hs_unlock(&patch_lock, HS_RANK_PATCH);
    return rc;
}

int hs_patch_install_ex(void *target, size_t size, unsigned flags, void *hook, void **original,
                        char *why, size_t whylen)
{
    return hs_patch_install_cb(target, size, flags, hook, original, NULL, NULL, why, whylen);
}

int hs_patch_install(void *target, void *hook, void **original, char *why, size_t whylen)
{
    return hs_patch_install_ex(target, patch_symbol_size(target), 0, hook, original, why, whylen);
}

bool hs_patch_decoder(bool load)
{
    hs_lock(&patch_lock, HS_RANK_PATCH);
    bool ok = load ? patch_load_decoder() : patch_zy.ok;
    hs_unlock(&patch_lock, HS_RANK_PATCH);
    return ok;
}

bool hs_patch_is_installed(const void *target)
{
    hs_lock(&patch_lock, HS_RANK_PATCH);
    const patch_rec_t *rec = patch_find(target);
    bool on = rec && rec->installed;
    hs_unlock(&patch_lock, HS_RANK_PATCH);
    return on;
}

/* Linear sweep of [fn, fn + size) (size 0: up to the first ret or unconditional jump, at
 * most PATCH_BR_SWEEP bytes), never past fn's executable mapping. */
#define PATCH_BR_SWEEP 512u
int hs_patch_branches(const void *fn, size_t size, hs_patch_branch_t *out, size_t cap)
{
    hs_patch_map_t m;
    if (!hs_patch_decoder(true))
        return -ELIBACC;
    if (!hs_patch_map_of((uintptr_t)fn, &m) || !(m.prot & PROT_EXEC))
        return -EFAULT;
    const uint8_t *a = fn, *end = a + (size ? size : PATCH_BR_SWEEP);
    end = (uintptr_t)end > m.hi ? (const uint8_t *)m.hi : end;
    size_t n = 0;
    ZydisDecodedInstruction in;
    for (; a < end && n < cap && patch_decode(a, (uintptr_t)(end - a), &in); a += in.length) {
        uintptr_t to;
        bool call = in.meta.category == ZYDIS_CATEGORY_CALL;
        bool jmp = in.meta.category == ZYDIS_CATEGORY_UNCOND_BR;
        if ((call || jmp) && patch_dest(a, &in, &to) &&
            (to < (uintptr_t)fn || to >= (uintptr_t)fn + (size ? size : PATCH_BR_SWEEP))) {
            out[n].to = to;
            out[n++].slot = !in.raw.imm[0].is_relative; /* jmp *disp(%rip): an import slot */
        }
        if (!size && (jmp || in.meta.category == ZYDIS_CATEGORY_RET))
            break;
    }
    return (int)n;
}

int hs_patch_remove(void *target)
{
    int rc = -ENOENT;
    hs_lock(&patch_lock, HS_RANK_PATCH);
    patch_rec_t *rec = patch_find(target);
    if (rec && rec->installed) {
        rc = hs_patch_write_code(rec->at, rec->orig, rec->len);
        if (rc == 0)
            rec->installed = false;
    }
    hs_unlock(&patch_lock, HS_RANK_PATCH);
    return rc;
}

uintptr_t hs_patch_fixup_pc(uintptr_t pc)
{
    uintptr_t to = 0;
    hs_lock(&patch_lock, HS_RANK_PATCH);
    for (int i = 0; i < patch_nrecs && !to; i++)
        if (patch_recs[i].installed)
            to = patch_fixup_rec(&patch_recs[i], pc);
    hs_unlock(&patch_lock, HS_RANK_PATCH);
    return to;
}

/* One pass over every patch: installed ones removed (restore false) or removed ones put
   back with their own hook and trampoline (restore true). The first error is returned;
   the others are still tried. */
static int patch_each(bool restore)
{
    int rc = 0;
    hs_lock(&patch_lock, HS_RANK_PATCH);
    for (int i = 0; i < patch_nrecs; i++) {
        patch_rec_t *rec = &patch_recs[i];
        char why[8];
        int r = 0;
        if (!restore && rec->installed) {
            r = hs_patch_write_code(rec->at, rec->orig, rec->len);
            rec->installed = r != 0;
        } else if (restore && !rec->installed) {
            r = patch_reinstall(rec, rec->hook, NULL, NULL, NULL, why, sizeof(why));
        }
        if (r != 0 && rc == 0)
            rc = r;
    }
    hs_unlock(&patch_lock, HS_RANK_PATCH);
    return rc;
}

int hs_patch_remove_all(void)
{
    return patch_each(false);
}

int hs_patch_restore_all(void)
{
    return patch_each(true);
}

#else /* not x86-64 */

int hs_patch_install_cb(void *target, size_t size, unsigned flags, void *hook, void **original,
                        hs_patch_published_fn *published, void *arg, char *why, size_t whylen)
{
    (void)published, (void)arg;
    return hs_patch_install_ex(target, size, flags, hook, original, why, whylen);
}

int hs_patch_install_code(void *target, size_t size, unsigned flags, hs_patch_emit_fn *emit,
                          void *emit_arg, void *hook, void **original,
                          hs_patch_published_fn *published, void *arg, char *why, size_t whylen)
{
    (void)emit, (void)emit_arg, (void)published, (void)arg;
    return hs_patch_install_ex(target, size, flags, hook, original, why, whylen);
}

void hs_patch_set_live(hs_patch_stopper_fn *stopper)
{
    (void)stopper;
}

int hs_patch_install_ex(void *target, size_t size, unsigned flags, void *hook, void **original,
                        char *why, size_t whylen)
{
    (void)target, (void)size, (void)flags, (void)hook, (void)original;
    if (why && whylen)
        snprintf(why, whylen, "entry-point patching is implemented for x86-64 only");
    return -ENOSYS;
}

int hs_patch_install(void *target, void *hook, void **original, char *why, size_t whylen)
{
    return hs_patch_install_ex(target, 0, 0, hook, original, why, whylen);
}

bool hs_patch_decoder(bool load)
{
    (void)load;
    return false;
}

int hs_patch_remove(void *target)
{
    (void)target;
    return -ENOENT;
}

bool hs_patch_is_installed(const void *target)
{
    (void)target;
    return false;
}

int hs_patch_branches(const void *fn, size_t size, hs_patch_branch_t *out, size_t cap)
{
    (void)fn, (void)size, (void)out, (void)cap;
    return -ENOSYS;
}

uintptr_t hs_patch_fixup_pc(uintptr_t pc)
{
    (void)pc;
    return 0;
}

int hs_patch_remove_all(void)
{
    return 0;
}

int hs_patch_restore_all(void)
{
    return 0;
}

#endif
