/*
 * A target's memory (process_vm_readv/writev), its maps, and the dynamic symbols of a
 * mapped file (read through /proc/PID/root), for `heapsift attach` (attach.c owns the
 * verb; running code in the target is inject_thread.c's; docs/attach.md tells the whole
 * story).
 */
#define _GNU_SOURCE
#include "ptrace_inject.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int64_t hs_inject_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the target's memory, maps and symbols -------------------------------------------- */

int hs_inject_mem(pid_t pid, uintptr_t addr, void *buf, size_t n, bool write)
{
    struct iovec local = {buf, n}, remote = {(void *)addr, n};
    ssize_t k = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                      : process_vm_readv(pid, &local, 1, &remote, 1, 0);
    return k == (ssize_t)n ? 0 : -EIO;
}

/* The nth mapping at offset 0 of a file whose base name starts with prefix (deleted
 * ones only when asked for). */
static bool inject_map_scan(pid_t pid, const char *prefix, unsigned nth, bool deleted_too,
                            hs_inject_map_t *m)
{
    static const char gone[] = " (deleted)";
    char name[64], line[PATH_MAX + 128];
    snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(name, "r");
    bool found = false;
    if (!f)
        return false;
    while (!found && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi, off;
        int pos = 0;
        if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &lo, &hi, &off, &pos) < 3 || pos == 0)
            continue;
        char *p = line + pos;
        p[strcspn(p, "\n")] = '\0';
        size_t len = strlen(p), glen = sizeof(gone) - 1;
        bool deleted = len > glen && strcmp(p + len - glen, gone) == 0;
        if (deleted)
            p[len - glen] = '\0';
        const char *b = strrchr(p, '/');
        if (off != 0 || !b || strncmp(b + 1, prefix, strlen(prefix)) != 0 ||
            (deleted && !deleted_too) || nth-- > 0)
            continue;
        m->lo = lo, m->hi = hi, m->deleted = deleted;
        snprintf(m->path, sizeof(m->path), "%s", p);
        found = true;
    }
    fclose(f);
    return found;
}

bool hs_inject_map_find(pid_t pid, const char *prefix, uintptr_t *base, char *path, size_t cap)
{
    hs_inject_map_t m;
    if (!inject_map_scan(pid, prefix, 0, false, &m))
        return false;
    *base = m.lo;
    snprintf(path, cap, "%s", m.path);
    return true;
}

bool hs_inject_map_nth(pid_t pid, const char *prefix, unsigned nth, hs_inject_map_t *m)
{
    return inject_map_scan(pid, prefix, nth, true, m);
}

void hs_inject_map_host(pid_t pid, const hs_inject_map_t *m, char *out, size_t cap)
{
    if (m->deleted)
        snprintf(out, cap, "/proc/%d/map_files/%lx-%lx", (int)pid, (unsigned long)m->lo,
                 (unsigned long)m->hi);
    else
        snprintf(out, cap, "/proc/%d/root%s", (int)pid, m->path);
}

static bool inject_pread(int fd, void *buf, size_t n, uint64_t off)
{
    return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* The value of the dynamic symbol name in ELF file path (a definition, its default
 * version preferred): true when found. */
static bool inject_elf_sym(const char *path, const char *name, uint64_t *value)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    bool found = false;
    if (fd < 0)
        return false;
    Elf64_Shdr *sh = NULL;
    char *str = NULL;
    Elf64_Sym *syms = NULL;
    if (!inject_pread(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0)
        goto out;
    sh = calloc(eh.e_shnum, sizeof(*sh));
    if (!sh || !inject_pread(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff))
        goto out;
    for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum)
            continue;
        const Elf64_Shdr *ss = &sh[sh[i].sh_link];
        free(str);
        str = malloc(ss->sh_size + 1);
        if (!str || !inject_pread(fd, str, ss->sh_size, ss->sh_offset))
            goto out;
        str[ss->sh_size] = '\0';
        size_t nsym = sh[i].sh_size / sizeof(Elf64_Sym);
        uint16_t ver = 0;
        const Elf64_Shdr *vs = NULL;
        for (unsigned k = 0; k < eh.e_shnum; k++)
            if (sh[k].sh_type == SHT_GNU_versym)
                vs = &sh[k];
        free(syms); /* the table in one read, not one read a symbol (3,000 in libc) */
        syms = malloc(nsym * sizeof(*syms) + 1);
        if (!syms || !inject_pread(fd, syms, nsym * sizeof(*syms), sh[i].sh_offset))
            goto out;
        for (size_t k = 0; k < nsym; k++) {
            const Elf64_Sym sym = syms[k];
            if (sym.st_shndx == SHN_UNDEF || sym.st_name >= ss->sh_size ||
                strcmp(str + sym.st_name, name) != 0)
                continue;
            if (vs && inject_pread(fd, &ver, sizeof(ver), vs->sh_offset + k * sizeof(ver)) &&
                (ver & 0x8000) && found)
                continue; /* a hidden (non-default) version: only if nothing better */
            *value = sym.st_value;
            found = true;
            if (!(ver & 0x8000))
                break;
        }
    }
out:
    free(syms);
    free(str);
    free(sh);
    close(fd);
    return found;
}

bool hs_inject_remote_sym(pid_t pid, const char *prefix, const char *name, uintptr_t *addr)
{
    hs_inject_map_t m;
    return inject_map_scan(pid, prefix, 0, false, &m) && hs_inject_map_sym(pid, &m, name, addr);
}

bool hs_inject_map_sym(pid_t pid, const hs_inject_map_t *m, const char *name, uintptr_t *addr)
{
    char full[PATH_MAX + 64];
    uint64_t v;
    hs_inject_map_host(pid, m, full, sizeof(full));
    if (!inject_elf_sym(full, name, &v))
        return false;
    *addr = m->lo + v; /* shared objects: p_vaddr of the first PT_LOAD is 0 */
    return true;
}
