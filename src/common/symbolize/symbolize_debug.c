/*
 * Where the symbolizer finds separate debug files inside a profiled process: by build id
 * under the debug directories (/usr/lib/debug/.build-id/xx/yyyy.debug, libdwfl's own
 * search), then by .gnu_debuglink name next to the file, in its .debug folder and under
 * /usr/lib/debug, the file accepted only when its build id (or, for a file without one,
 * the link's CRC) matches. This is dwfl_standard_find_debuginfo without its last step:
 * elfutils 0.188 dlopens libdebuginfod there for every module that has no local debug
 * file, which maps libcurl, GnuTLS, OpenSSL, Kerberos and LDAP into the host (7 MB of
 * resident memory, constructors run, and a network fetch whenever the host's environment
 * sets DEBUGINFOD_URLS). A profiler must do none of that at dump time. Never on the
 * allocation path; any failure is "no debug file".
 */
#define _GNU_SOURCE
#include "base/maps.h"
#include "base/fdio.h"
#include "symbolize_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* The GNU debuglink CRC (zlib's CRC-32) of the file open on fd. */
static bool sym_debug_crc(int fd, GElf_Word *crc)
{
    unsigned char buf[16384];
    uLong c = crc32(0, Z_NULL, 0);
    off_t off = 0;
    for (;;) {
        ssize_t n = hs_fd_pread(fd, buf, sizeof(buf), off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            break;
        c = crc32(c, buf, (uInt)n);
        off += n;
    }
    *crc = (GElf_Word)c;
    return true;
}

/* Whether the file at path is the debug file of mod: the same build id when mod has one,
 * else the CRC the link records. Returns an open descriptor or -1. */
static int sym_debug_open_checked(Dwfl_Module *mod, const char *path, GElf_Word crc)
{
    const unsigned char *bits = NULL;
    GElf_Addr vaddr;
    char want[65], have[65];
    int fd = hs_open_high(path, O_RDONLY, 0);
    if (fd < 0)
        return -1;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    if (len > 0 && (size_t)len * 2 < sizeof(want)) {
        for (int i = 0; i < len; i++)
            snprintf(want + 2 * i, 3, "%02x", bits[i]);
        if (hs_elf_build_id(path, have, sizeof(have)) && strcmp(want, have) == 0)
            return fd;
    } else {
        GElf_Word c;
        if (sym_debug_crc(fd, &c) && c == crc)
            return fd;
    }
    hs_fd_close(fd);
    return -1;
}

/* The debug file named link for the file at path, in the places GDB and libdwfl look. */
static int sym_debug_by_link(Dwfl_Module *mod, const char *path, const char *link, GElf_Word crc,
                             char **found)
{
    char dir[4096], cand[4096];
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (slash == NULL || link == NULL || link[0] == '\0' || strchr(link, '/') != NULL ||
        (size_t)(slash - path) >= sizeof(dir))
        return -1;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    static const char *const fmt[] = {"%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s"};
    for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
        int n = snprintf(cand, sizeof(cand), fmt[i], dir, link);
        if (n <= 0 || (size_t)n >= sizeof(cand) || strcmp(cand, path) == 0)
            continue;
        int fd = sym_debug_open_checked(mod, cand, crc);
        if (fd >= 0) {
            *found = strdup(cand);
            return fd;
        }
    }
    return -1;
}

int hs_sym_debug_by_build_id(Dwfl_Module *mod, char **found)
{
    const unsigned char *bits = NULL;
    GElf_Addr vaddr;
    char path[4096];
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    if (len < 2 || len > 64)
        return -1;
    int n = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", bits[0]);
    for (int i = 1; i < len; i++)
        n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", bits[i]);
    snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
    int fd = sym_debug_open_checked(mod, path, 0);
    if (fd >= 0 && (*found = strdup(path)) == NULL) {
        hs_fd_close(fd);
        return -1;
    }
    return fd;
}

int hs_sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file, const char *debuglink, GElf_Word crc, char **found)
{
    int fd =
        dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file, debuglink, crc, found);
    if (fd >= 0)
        return fd;
    fd = sym_debug_by_link(mod, file, debuglink, crc, found);
    errno = fd < 0 ? ENOENT : 0;
    return fd;
}
