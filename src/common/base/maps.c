/*
 * Memory mappings of a process and the GNU build ids of the files behind them. Owns the
 * parsing of /proc/PID/maps (read with plain read() into pages mapped for it, growing, so
 * no stdio buffer is shared with the host, a line is never cut by a short read, and a
 * dump's accounting sees none of it in the allocator: hs_maps_text_read) and a
 * small ELF note reader (open/pread with bounds checks, 32- and 64-bit, either byte
 * order; no libelf). It never writes anything and never trusts a length read from a file.
 * Called at dump time inside the profiled process (the caller holds the reentrancy guard,
 * so malloc is the real allocator) and by the CLI.
 *
 * Memory: hs_maps_read makes one allocation holding the hs_map_t array followed by every
 * path string; the paths point into it, so hs_maps_free is a single free() and callers
 * must not free or realloc individual paths.
 */
#define _GNU_SOURCE
#include "maps.h"
#include "fdio.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Notes segments larger than this are not read: a build id note sits in the first bytes. */
#define HS_MAPS_NOTE_MAX (1u << 20)
#define HS_MAPS_SHDR_MAX 4096
/* The file's first bytes, read at once: the headers and a build id note lie there in
 * every ELF file the linker lays out (the note of a shared library at 0x200..0x400), so
 * one pread answers what took one a header before (13 to 20 a file). */
#define HS_MAPS_HEAD 2048

/* ------------------------------------------------------------------ ELF notes ---- */

/* An opened ELF file: enough of the header to walk program and section headers. */
typedef struct {
    int fd;
    off_t size;
    bool is64, swap;
    uint64_t phoff, shoff;
    unsigned phnum, phentsize, shnum, shentsize;
    size_t head_len; /* bytes of head read: the file's size when it is smaller */
    unsigned char head[HS_MAPS_HEAD];
} hs_elf_t;

static uint16_t maps_rd16(const hs_elf_t *e, const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return e->swap ? __builtin_bswap16(v) : v;
}

static uint32_t maps_rd32(const hs_elf_t *e, const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return e->swap ? __builtin_bswap32(v) : v;
}

static uint64_t maps_rd64(const hs_elf_t *e, const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return e->swap ? __builtin_bswap64(v) : v;
}

/* Reads exactly len bytes at off, refusing anything past the end of the file. */
static bool maps_pread_all(const hs_elf_t *e, void *buf, size_t len, uint64_t off)
{
    if (off > (uint64_t)e->size || len > (uint64_t)e->size - off)
        return false;
    if (off < e->head_len && len <= e->head_len - off) {
        memcpy(buf, e->head + off, len);
        return true;
    }
    if (e->fd < 0) /* only the head was read (maps_elf_of_head) */
        return false;
    size_t done = 0;
    while (done < len) {
        ssize_t r = hs_fd_pread(e->fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        done += (size_t)r;
    }
    return true;
}

static bool maps_elf_parse(hs_elf_t *e);

static bool maps_elf_open(hs_elf_t *e, int fd)
{
    struct stat st;
    memset(e, 0, sizeof(*e));
    e->fd = fd;
    if (hs_fd_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    e->size = st.st_size;
    size_t head = (uint64_t)e->size < sizeof(e->head) ? (size_t)e->size : sizeof(e->head);
    if (!maps_pread_all(e, e->head, head, 0))
        return false;
    e->head_len = head;
    return maps_elf_parse(e);
}

/* e from its head alone, read with the file's fstat st by hs_fd_read_head (n bytes, e->head
 * filled already): no descriptor, so a read past the head fails. */
static bool maps_elf_of_head(hs_elf_t *e, const struct stat *st, size_t n)
{
    e->fd = -1;
    if (!S_ISREG(st->st_mode))
        return false;
    e->size = st->st_size;
    e->head_len = n < (uint64_t)e->size ? n : (size_t)e->size;
    return maps_elf_parse(e);
}

/* The ELF header of e (its head read): class, byte order, where its headers are. */
static bool maps_elf_parse(hs_elf_t *e)
{
    unsigned char h[sizeof(Elf64_Ehdr)];
    if (!maps_pread_all(e, h, EI_NIDENT, 0) || memcmp(h, ELFMAG, SELFMAG) != 0)
        return false;
    if (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64)
        return false;
    if (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB)
        return false;
    e->is64 = h[EI_CLASS] == ELFCLASS64;
    bool little = h[EI_DATA] == ELFDATA2LSB;
    e->swap = little != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
    size_t ehsize = e->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
    if (!maps_pread_all(e, h, ehsize, 0))
        return false;
    if (e->is64) {
        e->phoff = maps_rd64(e, h + offsetof(Elf64_Ehdr, e_phoff));
        e->shoff = maps_rd64(e, h + offsetof(Elf64_Ehdr, e_shoff));
        e->phentsize = maps_rd16(e, h + offsetof(Elf64_Ehdr, e_phentsize));
        e->phnum = maps_rd16(e, h + offsetof(Elf64_Ehdr, e_phnum));
        e->shentsize = maps_rd16(e, h + offsetof(Elf64_Ehdr, e_shentsize));
        e->shnum = maps_rd16(e, h + offsetof(Elf64_Ehdr, e_shnum));
    } else {
        e->phoff = maps_rd32(e, h + offsetof(Elf32_Ehdr, e_phoff));
        e->shoff = maps_rd32(e, h + offsetof(Elf32_Ehdr, e_shoff));
        e->phentsize = maps_rd16(e, h + offsetof(Elf32_Ehdr, e_phentsize));
        e->phnum = maps_rd16(e, h + offsetof(Elf32_Ehdr, e_phnum));
        e->shentsize = maps_rd16(e, h + offsetof(Elf32_Ehdr, e_shentsize));
        e->shnum = maps_rd16(e, h + offsetof(Elf32_Ehdr, e_shnum));
    }
    return true;
}

static void maps_hex(const unsigned char *p, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[p[i] >> 4];
        hex[2 * i + 1] = digits[p[i] & 15];
    }
    hex[2 * n] = '\0';
}

/* Scans the notes in buf[0..len) (entries padded to align) for NT_GNU_BUILD_ID "GNU". */
static bool maps_scan_notes(const hs_elf_t *e, const unsigned char *buf, size_t len, size_t align,
                            char *hex, size_t hexlen)
{
    size_t pos = 0;
    while (len - pos >= 12) {
        uint32_t namesz = maps_rd32(e, buf + pos);
        uint32_t descsz = maps_rd32(e, buf + pos + 4);
        uint32_t type = maps_rd32(e, buf + pos + 8);
        size_t name_off = pos + 12;
        if (namesz > len - name_off)
            return false;
        size_t desc_off = name_off + ((namesz + align - 1) & ~(align - 1));
        if (desc_off > len || descsz > len - desc_off)
            return false;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(buf + name_off, "GNU", 4) == 0) {
            if (descsz == 0 || 2 * (size_t)descsz + 1 > hexlen)
                return false;
            maps_hex(buf + desc_off, descsz, hex);
            return true;
        }
        size_t next = desc_off + ((descsz + align - 1) & ~(align - 1));
        if (next <= pos || next > len)
            return false;
        pos = next;
    }
    return false;
}

/* Reads the note area [off, off+size) and scans it. */
static bool maps_note_area(const hs_elf_t *e, uint64_t off, uint64_t size, uint64_t align,
                           char *hex, size_t hexlen)
{
    if (size < 12 || size > HS_MAPS_NOTE_MAX)
        return false;
    unsigned char *buf = malloc((size_t)size);
    if (buf == NULL)
        return false;
    bool found = maps_pread_all(e, buf, (size_t)size, off) &&
                 maps_scan_notes(e, buf, (size_t)size, align == 8 ? 8 : 4, hex, hexlen);
    free(buf);
    return found;
}

static bool maps_build_id_phdrs(const hs_elf_t *e, char *hex, size_t hexlen)
{
    size_t want = e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    if (e->phnum == 0 || e->phentsize < want)
        return false;
    for (unsigned i = 0; i < e->phnum; i++) {
        unsigned char ph[sizeof(Elf64_Phdr)];
        if (!maps_pread_all(e, ph, want, e->phoff + (uint64_t)i * e->phentsize))
            return false;
        uint64_t off, size, align;
        if (maps_rd32(e, ph) != PT_NOTE)
            continue;
        if (e->is64) {
            off = maps_rd64(e, ph + offsetof(Elf64_Phdr, p_offset));
            size = maps_rd64(e, ph + offsetof(Elf64_Phdr, p_filesz));
            align = maps_rd64(e, ph + offsetof(Elf64_Phdr, p_align));
        } else {
            off = maps_rd32(e, ph + offsetof(Elf32_Phdr, p_offset));
            size = maps_rd32(e, ph + offsetof(Elf32_Phdr, p_filesz));
            align = maps_rd32(e, ph + offsetof(Elf32_Phdr, p_align));
        }
        if (maps_note_area(e, off, size, align, hex, hexlen))
            return true;
    }
    return false;
}

/* Fallback for files without a PT_NOTE covering the note (e.g. some separate debug files). */
static bool maps_build_id_shdrs(const hs_elf_t *e, char *hex, size_t hexlen)
{
    size_t want = e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
    if (e->shnum == 0 || e->shnum > HS_MAPS_SHDR_MAX || e->shentsize < want)
        return false;
    for (unsigned i = 0; i < e->shnum; i++) {
        unsigned char sh[sizeof(Elf64_Shdr)];
        if (!maps_pread_all(e, sh, want, e->shoff + (uint64_t)i * e->shentsize))
            return false;
        if (maps_rd32(e, sh + 4) != SHT_NOTE) /* sh_type follows sh_name in both classes */
            continue;
        uint64_t off, size, align;
        if (e->is64) {
            off = maps_rd64(e, sh + offsetof(Elf64_Shdr, sh_offset));
            size = maps_rd64(e, sh + offsetof(Elf64_Shdr, sh_size));
            align = maps_rd64(e, sh + offsetof(Elf64_Shdr, sh_addralign));
        } else {
            off = maps_rd32(e, sh + offsetof(Elf32_Shdr, sh_offset));
            size = maps_rd32(e, sh + offsetof(Elf32_Shdr, sh_size));
            align = maps_rd32(e, sh + offsetof(Elf32_Shdr, sh_addralign));
        }
        if (maps_note_area(e, off, size, align, hex, hexlen))
            return true;
    }
    return false;
}

/* Build id of the ELF file open on fd (position untouched). */
static bool maps_build_id_fd(int fd, char *hex, size_t hexlen)
{
    hs_elf_t e;
    if (hexlen == 0 || !maps_elf_open(&e, fd))
        return false;
    return maps_build_id_phdrs(&e, hex, hexlen) || maps_build_id_shdrs(&e, hex, hexlen);
}

bool hs_elf_build_id(const char *path, char *hex, size_t hexlen)
{
    int fd = hs_open_high(path, O_RDONLY, 0);
    if (fd < 0)
        return false;
    bool found = maps_build_id_fd(fd, hex, hexlen);
    hs_fd_close(fd);
    if (!found && hexlen > 0)
        hex[0] = '\0';
    return found;
}

/* ------------------------------------------------------------ /proc/PID/maps ---- */

/* A hex digit's value plus one, 0 for any other byte: one load per digit instead of three
 * range tests (a small program's dump parses some 10,000 digits of /proc/self/maps). */
static const unsigned char maps_hexval[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static const char *maps_hexnum(const char *p, const char *end, uint64_t *v)
{
    const char *start = p;
    uint64_t x = 0;
    unsigned d;
    for (; p < end && (d = maps_hexval[(unsigned char)*p]) != 0; p++)
        x = x << 4 | (d - 1);
    *v = x;
    return p == start ? NULL : p;
}

static const char *maps_skip_spaces(const char *p, const char *end)
{
    while (p < end && *p == ' ')
        p++;
    return p;
}

/* Parses "start-limit perms offset major:minor inode   path" in [p, end). */
bool hs_maps_parse_line(const char *p, const char *end, hs_map_t *m, hs_maps_line_t *x)
{
    uint64_t major, minor, inode = 0;
    memset(m, 0, sizeof(*m));
    if ((p = maps_hexnum(p, end, &m->start)) == NULL || p >= end || *p++ != '-')
        return false;
    if ((p = maps_hexnum(p, end, &m->limit)) == NULL || end - p < 6 || *p++ != ' ')
        return false;
    m->readable = p[0] == 'r';
    m->writable = p[1] == 'w';
    m->executable = p[2] == 'x';
    memcpy(x->perms, p, 4);
    x->perms[4] = '\0';
    p = maps_skip_spaces(p + 4, end);
    if ((p = maps_hexnum(p, end, &m->offset)) == NULL)
        return false;
    p = maps_skip_spaces(p, end);
    if ((p = maps_hexnum(p, end, &major)) == NULL || p >= end || *p++ != ':')
        return false;
    if ((p = maps_hexnum(p, end, &minor)) == NULL)
        return false;
    p = maps_skip_spaces(p, end);
    for (; p < end && *p >= '0' && *p <= '9'; p++)
        inode = inode * 10 + (uint64_t)(*p - '0');
    /* One space, then padding, then the path, which may itself contain spaces. */
    p = maps_skip_spaces(p, end);
    x->inode = m->inode = inode;
    x->dev = m->dev = makedev((unsigned)major, (unsigned)minor);
    x->path = p;
    x->pathlen = (size_t)(end - p);
    return m->start < m->limit;
}

/* The number of lines in [buf, buf + len): a bound on the mappings they hold. */
static size_t maps_count_lines(const char *buf, size_t len)
{
    size_t n = 0;
    for (const char *p = buf, *end = buf + len; p < end; n++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    return n;
}

/* Parses every line into maps/lines (room for each line); returns the count. */
static size_t maps_parse_all(const char *buf, size_t len, hs_map_t *maps, hs_maps_line_t *lines)
{
    size_t n = 0;
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        if (hs_maps_parse_line(p, eol, &maps[n], &lines[n]))
            n++;
        p = eol + 1;
    }
    return n;
}

static bool maps_is_deleted(const char *path)
{
    static const char suffix[] = " (deleted)";
    size_t n = strlen(path), k = sizeof(suffix) - 1;
    return n > k && memcmp(path + n - k, suffix, k) == 0;
}

/* The file really mapped at m, through /proc/PID/map_files (needs privileges on most
 * kernels, so it is only the fallback for deleted or replaced files). */
static int maps_open_mapped(pid_t pid, const hs_map_t *m)
{
    char path[96];
    if (pid == 0)
        snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)m->start,
                 (unsigned long)m->limit);
    else
        snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid,
                 (unsigned long)m->start, (unsigned long)m->limit);
    return hs_open_high(path, O_RDONLY, 0);
}

/*
 * Build id of the file behind m. A file replaced since it was mapped (same device,
 * different inode) must not lend its build id to the old mapping. A different device too
 * is what overlayfs shows, where maps names the lower layer's inode: the path is trusted.
 */
/* A file replaced since it was mapped: same device, another inode. */
static bool maps_replaced(const hs_maps_line_t *x, const struct stat *st)
{
    return x->inode != 0 && st->st_ino != x->inode && st->st_dev == x->dev;
}

/* m's build id from the head of the file at its path (its program headers' notes), the
 * file opened, read and closed in one operation (hs_fd_read_head: one hand-off to the I/O
 * thread, not five); false when that cannot tell (the notes lie past the head, the file
 * was replaced or is gone): the whole file is looked at then. */
static bool maps_build_id_head(hs_map_t *m, const hs_maps_line_t *x)
{
    hs_elf_t e;
    struct stat st;
    memset(&e, 0, sizeof(e));
    ssize_t n = hs_fd_read_head(m->path, &st, e.head, sizeof(e.head));
    return n > 0 && !maps_replaced(x, &st) && maps_elf_of_head(&e, &st, (size_t)n) &&
           maps_build_id_phdrs(&e, m->build_id, sizeof(m->build_id));
}

static void maps_build_id_of(pid_t pid, hs_map_t *m, const hs_maps_line_t *x)
{
    int fd = -1;
    if (m->path[0] != '/')
        return;
    if (!maps_is_deleted(m->path) && maps_build_id_head(m, x))
        return;
    if (!maps_is_deleted(m->path)) {
        struct stat st;
        fd = hs_open_high(m->path, O_RDONLY, 0);
        if (fd >= 0 && hs_fd_fstat(fd, &st) == 0 && maps_replaced(x, &st)) {
            hs_fd_close(fd);
            fd = -1;
        }
    }
    if (fd < 0)
        fd = maps_open_mapped(pid, m);
    if (fd < 0)
        return;
    if (!maps_build_id_fd(fd, m->build_id, sizeof(m->build_id)))
        m->build_id[0] = '\0';
    hs_fd_close(fd);
}

static uint64_t maps_hash(const char *s, uint64_t inode)
{
    uint64_t h = 1469598103934665603ull ^ inode;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Fills build ids, reading each distinct (path, inode) once: an open-addressing table of
 * indexes into maps, sized to a power of two at least twice n. */
static int maps_fill_build_ids(pid_t pid, hs_map_t *maps, const hs_maps_line_t *lines, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slots = malloc(cap * sizeof(*slots));
    if (slots == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < cap; i++)
        slots[i] = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (maps[i].path[0] != '/')
            continue;
        size_t h = (size_t)maps_hash(maps[i].path, lines[i].inode) & (cap - 1);
        while (slots[h] != SIZE_MAX) {
            size_t j = slots[h];
            if (lines[j].inode == lines[i].inode && strcmp(maps[j].path, maps[i].path) == 0)
                break;
            h = (h + 1) & (cap - 1);
        }
        if (slots[h] == SIZE_MAX) {
            slots[h] = i;
            maps_build_id_of(pid, &maps[i], &lines[i]);
        } else {
            memcpy(maps[i].build_id, maps[slots[h]].build_id, sizeof(maps[i].build_id));
        }
        maps[i].id_read = true;
    }
    free(slots);
    return 0;
}

const char *hs_maps_build_id(pid_t pid, hs_maps_t *m, hs_map_t *map)
{
    if (map->id_read || map->path[0] != '/')
        return map->build_id;
    hs_maps_line_t x = {.inode = map->inode, .dev = map->dev};
    maps_build_id_of(pid, map, &x);
    for (size_t i = 0; i < m->n; i++) {
        hs_map_t *o = &m->maps[i];
        if (o->inode == map->inode && o->dev == map->dev && strcmp(o->path, map->path) == 0) {
            memcpy(o->build_id, map->build_id, sizeof(o->build_id));
            o->id_read = true;
        }
    }
    return map->build_id;
}

/* The mappings of the maps text [buf, buf + len) of pid, into out. */
static int maps_from_text(pid_t pid, const char *buf, size_t len, hs_maps_t *out, bool build_ids)
{
    out->maps = NULL;
    out->n = 0;
    size_t cap = maps_count_lines(buf, len) + 1;
    hs_map_t *maps = malloc(cap * sizeof(hs_map_t) + len + 1); /* paths: at most the text */
    hs_maps_line_t *lines = malloc(cap * sizeof(*lines));
    int rc = 0;
    if (maps == NULL || lines == NULL) {
        free(maps);
        free(lines);
        return -ENOMEM;
    }
    size_t n = maps_parse_all(buf, len, maps, lines);
    char *strings = (char *)(maps + cap);
    for (size_t i = 0; i < n; i++) {
        memcpy(strings, lines[i].path, lines[i].pathlen);
        strings[lines[i].pathlen] = '\0';
        maps[i].path = strings;
        strings += lines[i].pathlen + 1;
    }
    if (build_ids && (rc = maps_fill_build_ids(pid, maps, lines, n)) != 0) {
        free(maps);
    } else {
        out->maps = maps;
        out->n = n;
    }
    free(lines);
    return rc;
}

int hs_maps_parse_self(const char *text, size_t len, hs_maps_t *out)
{
    return maps_from_text(0, text, len, out, false);
}

/* Grows t's mapping to at least size bytes (mremap keeps what was read). */
static int maps_text_grow(hs_maps_text_t *t, size_t size)
{
    void *m = t->text
                  ? mremap(t->text, t->size, size, MREMAP_MAYMOVE)
                  : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -ENOMEM;
    t->text = m;
    t->size = size;
    return 0;
}

/* /proc/PID/maps (pid 0: self) into t, with read() (no stdio buffer shared with the
 * host, no line cut by a short read). */
static int maps_text_read_pid(pid_t pid, hs_maps_text_t *t)
{
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof(path), "/proc/self/maps");
    else
        snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    memset(t, 0, sizeof(*t));
    /* Most processes' maps fit the first 64 KiB: read in one operation (one hand-off to
     * the I/O thread, not one per read). */
    if (maps_text_grow(t, 1 << 16) == 0) {
        ssize_t n = hs_fd_read_file(path, t->text, t->size - 1);
        if (n >= 0 && (size_t)n < t->size - 1) {
            t->len = (size_t)n;
            t->text[t->len] = '\0';
            return 0;
        }
        hs_maps_text_free(t); /* more, or it failed: the ordinary way */
    }
    int fd = hs_open_high(path, O_RDONLY, 0), rc = fd < 0 ? -errno : 0;
    while (rc == 0) {
        if (t->size - t->len < 4096 + 1 &&
            (rc = maps_text_grow(t, t->size ? 2 * t->size : 1 << 16)))
            break;
        ssize_t r = hs_fd_read(fd, t->text + t->len, t->size - t->len - 1);
        if (r == 0)
            break;
        if (r < 0 && errno != EINTR)
            rc = -errno;
        if (r > 0)
            t->len += (size_t)r;
    }
    if (fd >= 0)
        hs_fd_close(fd);
    if (rc != 0)
        hs_maps_text_free(t);
    else
        t->text[t->len] = '\0';
    return rc;
}

int hs_maps_text_read(hs_maps_text_t *t)
{
    return maps_text_read_pid(0, t);
}

void hs_maps_text_free(hs_maps_text_t *t)
{
    if (t->text)
        munmap(t->text, t->size);
    memset(t, 0, sizeof(*t));
}

static int maps_read(pid_t pid, hs_maps_t *out, bool build_ids)
{
    hs_maps_text_t t;
    int rc = maps_text_read_pid(pid, &t);
    out->maps = NULL;
    out->n = 0;
    if (rc == 0)
        rc = maps_from_text(pid, t.text, t.len, out, build_ids);
    hs_maps_text_free(&t);
    return rc;
}

int hs_maps_read(pid_t pid, hs_maps_t *out)
{
    return maps_read(pid, out, true);
}

int hs_maps_read_lazy(pid_t pid, hs_maps_t *out)
{
    return maps_read(pid, out, false);
}

const hs_map_t *hs_maps_find(const hs_maps_t *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n; /* first mapping with start > addr lies in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->maps[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const hs_map_t *r = &m->maps[lo - 1];
    return addr < r->limit ? r : NULL;
}

void hs_maps_free(hs_maps_t *m)
{
    if (m == NULL)
        return;
    free(m->maps);
    m->maps = NULL;
    m->n = 0;
}
