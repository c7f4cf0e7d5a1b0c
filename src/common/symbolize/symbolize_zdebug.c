/*
 * A separate debug file with compressed DWARF (SHF_COMPRESSED zlib sections, as in
 * Debian's libc6-dbg), inflated only as far as the addresses the symbolizer was told it
 * will be asked about need (hs_symbolizer_expect). libdw inflates every DWARF section of
 * a file when it opens it: for libc's and ld.so's debug files that is 16 MB of output and
 * about 230M instructions, most of a `heapsift top` on a small jemalloc file. Here the
 * file is copied into a memfd that libdwfl opens instead, where
 *  - .debug_info is inflated through the last compilation unit that .debug_aranges places
 *    a wanted address in, .debug_abbrev through the last of those units' abbreviation
 *    tables, .debug_line through the last of their line tables; the rest of each reads
 *    as zeros and is never reached (libdw finds a unit by walking the unit headers from
 *    the first, and reads only the tables its units name);
 *  - location lists and macros (.debug_loc, .debug_loclists, .debug_macro,
 *    .debug_macinfo), which the symbolizer never reads, are renamed away uninflated;
 *  - every other compressed DWARF section is inflated whole (raw: no Adler-32);
 *  - uncompressed sections (the symbol table, notes) are copied as they are.
 * Whenever a prefix might not be enough, those three are inflated whole: a wanted
 * address outside every address range set or in two, a set that does not read as libdw
 * reads it (symbolize_units.c then indexes the units itself, reading all of them), a
 * needed unit whose abbreviations allow DW_FORM_ref_addr or DW_FORM_indirect (a reference
 * that may lead into a later unit), or a unit DIE that does not read here. Anything
 * unexpected keeps the file as it is (libdw inflates it all, as before). Addresses not
 * announced may then lack lines and inlined frames: only the CLI announces them, for the
 * profile it symbolizes; never in a profiled process. Of those, an address that no function
 * symbol of the debug file holds does not count (symbolize_zwant.c).
 */
#define _GNU_SOURCE
#include "symbolize_int.h"
#include "base/fdio.h"

#include <dwarf.h>
#include <elf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* What becomes of a compressed section. */
enum { ZD_FULL, ZD_DROP, ZD_INFO };

typedef struct {
    const unsigned char *img; /* the file, mapped */
    size_t size;
    const Elf64_Ehdr *eh;
    Elf64_Shdr *sh; /* a copy of the section headers, patched */
    const char *names;
    size_t nsh, names_size;
} zd_file_t;

/* One compressed section's inflated bytes (data NULL: not inflated). */
typedef struct {
    unsigned char *data;
    size_t size, have; /* size: the whole section's; have: bytes inflated */
    int what;
} zd_sec_t;

static int zd_kind(const char *name)
{
    static const char *const drop[] = {".debug_loc", ".debug_loclists", ".debug_macro",
                                       ".debug_macinfo"};
    for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
        if (strcmp(name, drop[i]) == 0)
            return ZD_DROP;
    return strcmp(name, ".debug_info") == 0 ? ZD_INFO : ZD_FULL;
}

static bool zd_parse(zd_file_t *f)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->img;
    if (f->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
        eh->e_shstrndx >= eh->e_shnum || eh->e_shoff > f->size ||
        (f->size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
        return false;
    f->eh = eh;
    f->nsh = eh->e_shnum;
    f->sh = malloc(f->nsh * sizeof(*f->sh));
    if (!f->sh)
        return false;
    memcpy(f->sh, f->img + eh->e_shoff, f->nsh * sizeof(*f->sh));
    for (size_t i = 0; i < f->nsh; i++)
        if (f->sh[i].sh_type != SHT_NOBITS &&
            (f->sh[i].sh_offset > f->size || f->size - f->sh[i].sh_offset < f->sh[i].sh_size))
            return false;
    const Elf64_Shdr *ns = &f->sh[eh->e_shstrndx];
    if (ns->sh_type != SHT_STRTAB || ns->sh_size == 0)
        return false;
    f->names = (const char *)f->img + ns->sh_offset;
    f->names_size = ns->sh_size;
    return f->names[f->names_size - 1] == '\0';
}

static const char *zd_name(const zd_file_t *f, size_t i)
{
    return f->sh[i].sh_name < f->names_size ? f->names + f->sh[i].sh_name : "";
}

/* Inflates section i into z->data up to at least want bytes (the whole for SIZE_MAX). */
static bool zd_inflate_to(zd_sec_t *z, z_stream *zs, size_t want)
{
    if (want > z->size)
        want = z->size;
    if (z->have >= want)
        return true;
    zs->next_out = z->data + z->have;
    zs->avail_out = (uInt)(want - z->have);
    int rc = inflate(zs, Z_SYNC_FLUSH);
    z->have = (size_t)(zs->next_out - z->data);
    return (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) && z->have >= want;
}

/* Starts inflating compressed section i: z->data allocated, the stream set up. */
static bool zd_begin(const zd_file_t *f, size_t i, zd_sec_t *z, z_stream *zs)
{
    const Elf64_Shdr *s = &f->sh[i];
    const Elf64_Chdr *ch = (const Elf64_Chdr *)(f->img + s->sh_offset);
    if (s->sh_size < sizeof(*ch) || ch->ch_type != ELFCOMPRESS_ZLIB || ch->ch_size > (1ul << 32) ||
        s->sh_size - sizeof(*ch) > UINT32_MAX)
        return false;
    z->size = ch->ch_size;
    z->have = 0;
    z->data = malloc(z->size ? z->size : 1);
    if (!z->data)
        return false;
    /* The zlib header read here and the stream inflated raw: no Adler-32 over the
     * output (13% of the instructions), which a prefix would not reach anyway. */
    const unsigned char *in = f->img + s->sh_offset + sizeof(*ch);
    size_t nin = s->sh_size - sizeof(*ch);
    if (nin < 2 || (in[0] & 0x0f) != Z_DEFLATED || (in[0] >> 4) > 7 || (in[1] & 0x20) ||
        (in[0] * 256u + in[1]) % 31 != 0)
        return false;
    memset(zs, 0, sizeof(*zs));
    zs->next_in = (Bytef *)(in + 2);
    zs->avail_in = (uInt)(nin - 2);
    return inflateInit2(zs, -MAX_WBITS) == Z_OK;
}

static bool zd_inflate_whole(const zd_file_t *f, size_t i, zd_sec_t *z)
{
    z_stream zs;
    if (!zd_begin(f, i, z, &zs))
        return false;
    bool ok = zd_inflate_to(z, &zs, SIZE_MAX);
    inflateEnd(&zs);
    return ok;
}

/* ---- deciding how much of .debug_info is needed ------------------------------------------- */

static uint64_t zd_uleb(const unsigned char **p, const unsigned char *e, bool *ok)
{
    uint64_t v = 0;
    for (unsigned sh = 0; *p < e; sh += 7) {
        unsigned char b = *(*p)++;
        if (sh < 64)
            v |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80))
            return v;
    }
    *ok = false;
    return 0;
}

/* A section being inflated as far as needed. */
typedef struct {
    zd_sec_t *z;
    z_stream zs;
} zd_part_t;

/* The first at bytes of p inflated (false when the section is shorter or does not inflate). */
static bool zd_need(zd_part_t *p, uint64_t at)
{
    return at <= p->z->size && zd_inflate_to(p->z, &p->zs, at);
}

static void zd_skip_sleb(const unsigned char **p, const unsigned char *e)
{
    while (*p < e && (**p & 0x80))
        (*p)++;
    if (*p < e)
        (*p)++;
}

/* Checks the abbreviation table at off: 1 when no form in it may refer outside its unit
 * (DW_FORM_ref_addr, or DW_FORM_indirect, which may be one), 0 when one may, -1 when the
 * table runs past the bytes inflated so far. */
static int zd_abbrevs_scan(const zd_sec_t *ab, uint64_t off)
{
    if (off >= ab->have)
        return -1;
    const unsigned char *p = ab->data + off, *e = ab->data + ab->have;
    bool ok = true;
    while (ok && zd_uleb(&p, e, &ok) != 0) {
        zd_uleb(&p, e, &ok); /* tag */
        if (p >= e)
            return -1;
        p++; /* children */
        for (;;) {
            uint64_t at = zd_uleb(&p, e, &ok), form = zd_uleb(&p, e, &ok);
            if (!ok)
                return -1;
            if (at == 0 && form == 0)
                break;
            if (form == DW_FORM_ref_addr || form == DW_FORM_indirect)
                return 0;
            if (form == DW_FORM_implicit_const)
                zd_skip_sleb(&p, e);
        }
    }
    return ok ? 1 : -1;
}

/* The abbreviation table at off inflated through its end and checked (zd_abbrevs_scan). */
static bool zd_abbrevs_local(zd_part_t *ab, uint64_t off)
{
    for (;;) {
        int r = zd_abbrevs_scan(ab->z, off);
        if (r >= 0)
            return r == 1;
        if (ab->z->have >= ab->z->size)
            return false;
        uint64_t more = ab->z->have > off ? 2 * (ab->z->have - off) : 0;
        if (!zd_need(ab, ab->z->have + (more > 4096 ? more : 4096)) && !zd_need(ab, ab->z->size))
            return false;
    }
}

/* Moves *p over one attribute value of form (DWARF 32-bit, addresses of asz bytes);
 * false for a form not known here. */
static bool zd_skip_form(uint64_t form, const unsigned char **p, const unsigned char *e,
                         unsigned asz)
{
    static const unsigned char fixed[0x2d] = {
        [DW_FORM_data2] = 2,     [DW_FORM_data4] = 4,    [DW_FORM_data8] = 8,
        [DW_FORM_data1] = 1,     [DW_FORM_flag] = 1,     [DW_FORM_strp] = 4,
        [DW_FORM_ref_addr] = 4,  [DW_FORM_ref1] = 1,     [DW_FORM_ref2] = 2,
        [DW_FORM_ref4] = 4,      [DW_FORM_ref8] = 8,     [DW_FORM_sec_offset] = 4,
        [DW_FORM_ref_sup4] = 4,  [DW_FORM_strp_sup] = 4, [DW_FORM_data16] = 16,
        [DW_FORM_line_strp] = 4, [DW_FORM_ref_sig8] = 8, [DW_FORM_ref_sup8] = 8,
        [DW_FORM_strx1] = 1,     [DW_FORM_strx2] = 2,    [DW_FORM_strx3] = 3,
        [DW_FORM_strx4] = 4,     [DW_FORM_addrx1] = 1,   [DW_FORM_addrx2] = 2,
        [DW_FORM_addrx3] = 3,    [DW_FORM_addrx4] = 4,
    };
    bool ok = true;
    uint64_t n = 0;
    switch (form) {
    case DW_FORM_addr:
        n = asz;
        break;
    case DW_FORM_string:
        while (*p < e && **p)
            (*p)++;
        n = 1;
        break;
    case DW_FORM_block1:
        n = *p < e ? 1u + **p : 1;
        break;
    case DW_FORM_block:
    case DW_FORM_exprloc:
        n = zd_uleb(p, e, &ok);
        break;
    case DW_FORM_sdata:
        zd_skip_sleb(p, e);
        break;
    case DW_FORM_udata:
    case DW_FORM_ref_udata:
    case DW_FORM_strx:
    case DW_FORM_addrx:
    case DW_FORM_loclistx:
    case DW_FORM_rnglistx:
        zd_uleb(p, e, &ok);
        break;
    case DW_FORM_flag_present:
    case DW_FORM_implicit_const:
        break;
    default:
        if (form >= sizeof(fixed) || fixed[form] == 0)
            return false;
        n = fixed[form];
    }
    if (!ok || (uint64_t)(e - *p) < n)
        return false;
    *p += n;
    return true;
}

/* The DW_AT_stmt_list of the unit DIE at die (abbreviations at tab): its offset, -1 when
 * the DIE has none, -2 when it does not read. */
static int64_t zd_stmt_list(const unsigned char *die, const unsigned char *dend,
                            const unsigned char *tab, const unsigned char *tend, unsigned asz)
{
    bool ok = true;
    uint64_t code = zd_uleb(&die, dend, &ok), c;
    while (ok && (c = zd_uleb(&tab, tend, &ok)) != 0) {
        zd_uleb(&tab, tend, &ok); /* tag */
        if (tab >= tend)
            return -2;
        tab++; /* children */
        for (;;) {
            uint64_t at = zd_uleb(&tab, tend, &ok), form = zd_uleb(&tab, tend, &ok);
            if (!ok || (at == 0 && form == 0))
                break;
            if (form == DW_FORM_implicit_const)
                zd_skip_sleb(&tab, tend);
            if (c != code)
                continue;
            if (at == DW_AT_stmt_list) {
                uint32_t v;
                if ((form != DW_FORM_sec_offset && form != DW_FORM_data4) || dend - die < 4)
                    return -2;
                memcpy(&v, die, 4);
                return v;
            }
            if (!zd_skip_form(form, &die, dend, asz))
                return -2;
        }
        if (c == code)
            return ok ? -1 : -2;
    }
    return -2;
}

/* Fills cu[i] with the .debug_info offset of the unit holding want[i] (sorted), from the
 * address range sets; false when a set does not read as libdw reads it or an address is in
 * none. */
static bool zd_aranges(const unsigned char *p, size_t n, const uint64_t *want, size_t nwant,
                       uint64_t *cu)
{
    const unsigned char *e = p + n;
    for (size_t i = 0; i < nwant; i++)
        cu[i] = UINT64_MAX;
    while (p < e) {
        uint32_t len;
        uint16_t ver;
        uint32_t off;
        if (e - p < 12)
            return false;
        memcpy(&len, p, 4);
        memcpy(&ver, p + 4, 2);
        memcpy(&off, p + 6, 4);
        if (len >= 0xfffffff0u || (size_t)(e - p) - 4 < len || ver != 2 || p[10] != 8 ||
            p[11] != 0 || len < 8 + 16)
            return false;
        const unsigned char *t = p + 16, *end = p + 4 + len; /* tuples from 2*8 into the set */
        for (;;) {
            uint64_t lo, sz;
            if (end - t < 16)
                return false;
            memcpy(&lo, t, 8);
            memcpy(&sz, t + 8, 8);
            t += 16;
            if (lo == 0 && sz == 0)
                break;
            for (size_t i = 0; i < nwant; i++) {
                if (want[i] < lo || want[i] - lo >= sz)
                    continue;
                if (cu[i] != UINT64_MAX && cu[i] != off)
                    return false; /* in two units: which one libdw takes is its own */
                cu[i] = off;
            }
        }
        if (t != end) /* a (0, 0) pair before the set's end: libdw gives up on it */
            return false;
        p = end;
    }
    for (size_t i = 0; i < nwant; i++)
        if (cu[i] == UINT64_MAX)
            return false;
    return true;
}

static int zd_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* How much of .debug_info, .debug_abbrev and .debug_line the wanted addresses need: their
 * units (by the address range sets), the units' abbreviation tables and line tables.
 * Inflates that much and returns true, or returns false (inflate them whole). */
static bool zd_prefixes(zd_part_t *info, zd_part_t *ab, zd_part_t *line, const zd_sec_t *aranges,
                        const uint64_t *want, size_t nwant)
{
    uint64_t *cu = malloc(nwant * sizeof(*cu));
    int64_t stmt = -1;
    bool ok = cu && aranges->data && aranges->have == aranges->size &&
              zd_aranges(aranges->data, aranges->size, want, nwant, cu);
    if (ok)
        qsort(cu, nwant, sizeof(*cu), zd_cmp_u64);
    /* Each needed unit (in the order of the section): its header, its abbreviations, the
     * offset of its line table. */
    for (size_t i = 0; ok && i < nwant; i++) {
        if (i > 0 && cu[i] == cu[i - 1])
            continue;
        uint32_t len, aoff;
        uint16_t ver;
        ok = zd_need(info, cu[i] + 12);
        if (!ok)
            break;
        const unsigned char *h = info->z->data + cu[i];
        memcpy(&len, h, 4);
        memcpy(&ver, h + 4, 2);
        memcpy(&aoff, ver >= 5 ? h + 8 : h + 6, 4);
        unsigned asz = ver >= 5 ? h[7] : h[10], hdr = ver >= 5 ? 12 : 11;
        ok = len < 0xfffffff0u && len > hdr && ver >= 2 && ver <= 5 && (asz == 4 || asz == 8) &&
             zd_need(info, cu[i] + 4 + (uint64_t)len) && zd_abbrevs_local(ab, aoff);
        if (!ok)
            break;
        int64_t st =
            zd_stmt_list(h + hdr, h + 4 + len, ab->z->data + aoff, ab->z->data + ab->z->have, asz);
        ok = st >= -1;
        stmt = st > stmt ? st : stmt;
    }
    /* The farthest line table through its end. */
    if (ok && stmt >= 0) {
        uint32_t len;
        ok = line->z && zd_need(line, (uint64_t)stmt + 4);
        if (ok) {
            memcpy(&len, line->z->data + stmt, 4);
            ok = len < 0xfffffff0u && zd_need(line, (uint64_t)stmt + 4 + len);
        }
    }
    free(cu);
    return ok;
}

/* ---- the image ------------------------------------------------------------------------------ */

static bool zd_pwrite(int fd, const void *p, size_t n, off_t off)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = pwrite(fd, c, n, off);
        if (w <= 0)
            return false;
        c += w;
        n -= (size_t)w;
        off += w;
    }
    return true;
}

/* The memfd: the file's headers and uncompressed sections at their offsets, the inflated
 * sections after them (each as far as inflated: a hole of zeros to its size), the dropped
 * ones renamed. */
static int zd_write(zd_file_t *f, zd_sec_t *z)
{
    int fd = memfd_create("heapsift-debug", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    char *names = malloc(f->names_size);
    bool ok = names != NULL;
    if (ok)
        memcpy(names, f->names, f->names_size);
    uint64_t end = (f->size + 15) & ~(uint64_t)15;
    ok = ok && zd_pwrite(fd, f->img, sizeof(Elf64_Ehdr), 0);
    if (ok && f->eh->e_phnum && f->eh->e_phoff < f->size &&
        f->size - f->eh->e_phoff >= (size_t)f->eh->e_phnum * f->eh->e_phentsize)
        ok = zd_pwrite(fd, f->img + f->eh->e_phoff, (size_t)f->eh->e_phnum * f->eh->e_phentsize,
                       (off_t)f->eh->e_phoff);
    for (size_t i = 0; ok && i < f->nsh; i++) {
        Elf64_Shdr *s = &f->sh[i];
        if (z[i].data) {
            const Elf64_Chdr *ch = (const Elf64_Chdr *)(f->img + s->sh_offset);
            s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
            s->sh_addralign = ch->ch_addralign;
            s->sh_offset = end;
            s->sh_size = z[i].size;
            ok = zd_pwrite(fd, z[i].data, z[i].have, (off_t)end);
            end = (end + z[i].size + 15) & ~(uint64_t)15;
            continue;
        }
        if (z[i].what == ZD_DROP)
            names[s->sh_name] = '_'; /* ".debug_loclists" -> "_debug_loclists" */
        if (s->sh_type != SHT_NOBITS && s->sh_size && i != f->eh->e_shstrndx)
            ok = zd_pwrite(fd, f->img + s->sh_offset, s->sh_size, (off_t)s->sh_offset);
    }
    ok = ok && zd_pwrite(fd, names, f->names_size, (off_t)f->sh[f->eh->e_shstrndx].sh_offset) &&
         zd_pwrite(fd, f->sh, f->nsh * sizeof(*f->sh), (off_t)f->eh->e_shoff) &&
         ftruncate(fd, (off_t)(end > f->size ? end : f->size)) == 0;
    free(names);
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

/* What becomes of each section (z[i].what); the indexes of the address range sets, the
 * abbreviations, the units and the line tables (SIZE_MAX: absent or not compressed).
 * False when no DWARF section is compressed. */
static bool zd_plan(const zd_file_t *f, zd_sec_t *z, size_t idx[4])
{
    static const char *const named[4] = {".debug_aranges", ".debug_abbrev", ".debug_info",
                                         ".debug_line"};
    bool any = false;
    idx[0] = idx[1] = idx[2] = idx[3] = SIZE_MAX;
    for (size_t i = 0; i < f->nsh; i++) {
        const char *name = zd_name(f, i);
        z[i].what = -1;
        if (strncmp(name, ".debug_", 7) != 0 || !(f->sh[i].sh_flags & SHF_COMPRESSED) ||
            f->sh[i].sh_type == SHT_NOBITS)
            continue;
        z[i].what = zd_kind(name);
        any = true;
        for (int k = 0; k < 4; k++)
            if (strcmp(name, named[k]) == 0)
                idx[k] = i;
    }
    return any;
}

static int zd_image(zd_file_t *f, const uint64_t *want, size_t nwant, bool *cut, size_t *info)
{
    zd_sec_t *z = calloc(f->nsh, sizeof(*z));
    size_t idx[4]; /* aranges, abbrev, info, line */
    zd_part_t part[4] = {{0}};
    int fd = -1;
    bool ok = z && zd_plan(f, z, idx);
    /* The sections read as far as needed: the abbreviations, units and line tables. */
    for (int k = 1; ok && k < 4; k++) {
        if (idx[k] == SIZE_MAX)
            continue;
        ok = zd_begin(f, idx[k], &z[idx[k]], &part[k].zs);
        if (ok)
            part[k].z = &z[idx[k]];
    }
    for (size_t i = 0; ok && i < f->nsh; i++)
        if (z[i].what == ZD_FULL && !z[i].data)
            ok = zd_inflate_whole(f, i, &z[i]);
    bool prefix = ok && idx[0] != SIZE_MAX && idx[1] != SIZE_MAX && idx[2] != SIZE_MAX &&
                  zd_prefixes(&part[2], &part[1], &part[3], &z[idx[0]], want, nwant);
    for (int k = 1; ok && !prefix && k < 4; k++)
        if (part[k].z)
            ok = zd_need(&part[k], part[k].z->size);
    for (int k = 1; k < 4; k++)
        if (part[k].z)
            inflateEnd(&part[k].zs);
    if (ok)
        fd = zd_write(f, z);
    *cut = fd >= 0 && prefix && z[idx[2]].have < z[idx[2]].size;
    *info = fd >= 0 && idx[2] != SIZE_MAX ? z[idx[2]].have : 0;
    for (size_t i = 0; z && i < f->nsh; i++)
        free(z[i].data);
    free(z);
    return fd;
}

/* The first PT_LOAD's p_vaddr of an ELF (UINT64_MAX when none). */
static uint64_t zd_first_load(Elf *elf)
{
    size_t n = 0;
    GElf_Phdr ph;
    if (elf_getphdrnum(elf, &n) != 0)
        return UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
            return ph.p_vaddr;
    return UINT64_MAX;
}

int hs_sym_zdebug(hs_symbolizer_t *s, Dwfl_Module *mod, int fd)
{
    Dwarf_Addr bias = 0, low = 0, high = 0;
    struct stat st;
    if (s->nwant == 0 || hs_fd_remote() || !dwfl_module_getelf(mod, &bias) ||
        !dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, NULL, NULL) || fstat(fd, &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr))
        return fd;
    /* The wanted addresses inside the module, as the debug file's addresses. */
    size_t n = 0;
    uint64_t *want = malloc(s->nwant * sizeof(*want));
    for (size_t i = 0; want && i < s->nwant; i++)
        if (s->want[i] >= low && s->want[i] < high)
            want[n++] = s->want[i] - bias;
    void *img = n ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    Elf *dbg = img != MAP_FAILED ? elf_memory(img, (size_t)st.st_size) : NULL;
    Elf *main_elf = dwfl_module_getelf(mod, &bias);
    /* The same addresses in both files (not a prelinked library's moved copy). */
    bool same = dbg && main_elf && zd_first_load(dbg) == zd_first_load(main_elf) &&
                zd_first_load(dbg) != UINT64_MAX;
    if (same) /* only the addresses its DWARF may name a function at (symbolize_zwant.c) */
        n = hs_sym_zdebug_named(dbg, want, n);
    if (dbg)
        elf_end(dbg);
    if (img != MAP_FAILED) {
        zd_file_t f = {.img = img, .size = (size_t)st.st_size};
        bool cut = false;
        size_t info = 0;
        int nfd = same && zd_parse(&f) ? zd_image(&f, want, n, &cut, &info) : -1;
        s->zdebug_cut += cut;
        s->zdebug_info += info;
        free(f.sh);
        munmap(img, (size_t)st.st_size);
        if (nfd >= 0) {
            close(fd);
            fd = nfd;
        }
    }
    free(want);
    return fd;
}
