/*
 * Unit test of maps.c: reads this process's own /proc/self/maps, finds the mapping that
 * holds one of the test's functions, and checks its permissions, its path (against
 * readlink /proc/self/exe) and its GNU build id (against `readelf -n`, computed
 * independently; that part is skipped when readelf is not installed). Exits non-zero
 * with a message on the first failure.
 */
#define _GNU_SOURCE
#include "base/fdio.h"
#include "base/maps.h"

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((noinline)) static int maps_probe(int x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

/* The build id as readelf prints it ("    Build ID: 1234..."), or false when unavailable. */
static bool readelf_build_id(const char *path, char *hex, size_t hexlen)
{
    char cmd[4200], line[512];
    bool found = false;
    snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return false;
    while (fgets(line, sizeof(line), p) != NULL) {
        char *at = strstr(line, "Build ID: ");
        if (at == NULL || found)
            continue;
        at += strlen("Build ID: ");
        at[strcspn(at, " \r\n")] = '\0';
        snprintf(hex, hexlen, "%s", at);
        found = hex[0] != '\0';
    }
    pclose(p);
    return found;
}

static void test_sorted_and_find(const hs_maps_t *m)
{
    CHECK(m->n > 5, "only %zu mappings", m->n);
    for (size_t i = 1; i < m->n; i++)
        CHECK(m->maps[i - 1].start < m->maps[i].start, "not sorted at %zu", i);
    for (size_t i = 0; i < m->n; i++) {
        const hs_map_t *a = &m->maps[i];
        CHECK(hs_maps_find(m, a->start) == a, "start of %zu", i);
        CHECK(hs_maps_find(m, a->limit - 1) == a, "end of %zu", i);
    }
    CHECK(hs_maps_find(m, 0) == NULL, "address 0 mapped");
    CHECK(hs_maps_find(m, UINT64_MAX) == NULL, "address ~0 mapped");
}

static void test_self(const hs_maps_t *m)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    CHECK(n > 0, "readlink /proc/self/exe");
    if (n <= 0)
        return;
    exe[n] = '\0';
    const hs_map_t *a = hs_maps_find(m, (uint64_t)(uintptr_t)&maps_probe);
    CHECK(a != NULL, "no mapping for maps_probe");
    if (a == NULL)
        return;
    CHECK(a->executable && a->readable && !a->writable, "perms of the text mapping");
    CHECK(strcmp(a->path, exe) == 0, "path '%s' != exe '%s'", a->path, exe);
    CHECK(strlen(a->build_id) >= 16, "build id '%s' too short", a->build_id);

    char direct[65], expect[256];
    CHECK(hs_elf_build_id(exe, direct, sizeof(direct)), "hs_elf_build_id(%s)", exe);
    CHECK(strcmp(direct, a->build_id) == 0, "%s vs %s", direct, a->build_id);
    if (readelf_build_id(exe, expect, sizeof(expect)))
        CHECK(strcmp(expect, a->build_id) == 0, "readelf says %s, we say %s", expect, a->build_id);
    else
        fprintf(stderr, "test_maps: readelf unavailable, build id comparison skipped\n");
}

static void test_odd_inputs(const hs_maps_t *m)
{
    char hex[65] = "x";
    CHECK(!hs_elf_build_id("/nonexistent/file", hex, sizeof(hex)), "nonexistent file");
    CHECK(!hs_elf_build_id("/proc/self/maps", hex, sizeof(hex)), "not an ELF file");
    CHECK(!hs_elf_build_id("/dev/null", hex, sizeof(hex)), "/dev/null");
    CHECK(!hs_elf_build_id("/", hex, sizeof(hex)), "a directory");
    char small[8];
    CHECK(!hs_elf_build_id("/proc/self/exe", small, sizeof(small)), "hex buffer too small");
    bool vdso = false, stack = false;
    for (size_t i = 0; i < m->n; i++) {
        vdso |= strcmp(m->maps[i].path, "[vdso]") == 0;
        stack |= strcmp(m->maps[i].path, "[stack]") == 0;
        if (m->maps[i].path[0] != '/')
            CHECK(m->maps[i].build_id[0] == '\0', "build id on '%s'", m->maps[i].path);
    }
    CHECK(vdso && stack, "[vdso] %d [stack] %d", vdso, stack);
}

/* A path with spaces, mapped from a deleted file, keeps its spaces and its suffix. */
static void test_spaces_and_deleted(void)
{
    char path[] = "/tmp/hs maps test XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    CHECK(ftruncate(fd, 4096) == 0, "ftruncate");
    void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(p != MAP_FAILED, "mmap");
    unlink(path);
    close(fd);
    if (p == MAP_FAILED)
        return;
    hs_maps_t m;
    CHECK(hs_maps_read(0, &m) == 0, "hs_maps_read");
    const hs_map_t *a = hs_maps_find(&m, (uint64_t)(uintptr_t)p);
    char want[64];
    snprintf(want, sizeof(want), "%s (deleted)", path);
    CHECK(a != NULL && strcmp(a->path, want) == 0, "path '%s'", a ? a->path : "(none)");
    CHECK(a != NULL && a->build_id[0] == '\0', "build id of a non-ELF file");
    hs_maps_free(&m);
    munmap(p, 4096);
}

/* The descriptor number the next open gets: unchanged by an operation that leaks none. */
static int next_fd(void)
{
    int fd = open("/dev/null", O_RDONLY);
    if (fd >= 0)
        close(fd);
    return fd;
}

/* hs_fd_read_head: a file's first bytes and its fstat in one operation, the descriptor
 * closed again, whether or not the read works. */
static void test_read_head(void)
{
    unsigned char head[2048], want[2048];
    struct stat st, ref;
    int fd = open("/proc/self/exe", O_RDONLY), before = next_fd();
    ssize_t w = fd >= 0 ? pread(fd, want, sizeof(want), 0) : -1;
    CHECK(fd >= 0 && w > 0 && fstat(fd, &ref) == 0, "the executable read directly");
    if (fd >= 0)
        close(fd);
    before = next_fd();
    ssize_t n = hs_fd_read_head("/proc/self/exe", &st, head, sizeof(head));
    CHECK(n == w && memcmp(head, want, (size_t)(n > 0 ? n : 0)) == 0 && st.st_ino == ref.st_ino &&
              st.st_size == ref.st_size,
          "head of the executable: %zd bytes (want %zd)", n, w);
    errno = 0;
    CHECK(hs_fd_read_head("/", &st, head, sizeof(head)) == -1 && errno == EISDIR,
          "a directory: errno %d", errno);
    errno = 0;
    CHECK(hs_fd_read_head("/nonexistent/file", &st, head, sizeof(head)) == -1 && errno == ENOENT,
          "a missing file: errno %d", errno);
    CHECK(next_fd() == before, "a descriptor left open: next is %d, was %d", next_fd(), before);
}

/* hs_fd_read_file: a whole file in one operation, read after read (/proc/self/smaps gives
 * a page or so a read), at most n bytes, the descriptor closed again. The buffer is far
 * larger than the file: under AddressSanitizer this process's smaps passes 64 KiB. */
static void test_read_file(void)
{
    static char text[8 << 20];
    int before = next_fd();
    ssize_t n = hs_fd_read_file("/proc/self/smaps", text, sizeof(text) - 1);
    CHECK(n > 4096 && (size_t)n < sizeof(text) - 1, "smaps: %zd bytes", n);
    if (n > 0) {
        text[n] = '\0';
        CHECK(text[n - 1] == '\n' && strstr(text, "[stack]") != NULL, "smaps whole");
    }
    CHECK(hs_fd_read_file("/proc/self/maps", text, 100) == 100, "maps cut at 100 bytes");
    errno = 0;
    CHECK(hs_fd_read_file("/nonexistent/file", text, sizeof(text)) == -1 && errno == ENOENT,
          "a missing file: errno %d", errno);
    CHECK(next_fd() == before, "a descriptor left open: next is %d, was %d", next_fd(), before);
}

/* Every mapped file's build id (read from its head when its notes are there) is the one
 * read through a descriptor from the whole file. */
static void test_ids_by_head(const hs_maps_t *m)
{
    size_t files = 0, ids = 0;
    for (size_t i = 0; i < m->n; i++) {
        const hs_map_t *a = &m->maps[i];
        char direct[65];
        if (a->path[0] != '/' || strstr(a->path, " (deleted)") != NULL)
            continue;
        files++;
        if (!hs_elf_build_id(a->path, direct, sizeof(direct)))
            direct[0] = '\0';
        CHECK(strcmp(direct, a->build_id) == 0, "%s: %s from the file, %s in the maps", a->path,
              direct, a->build_id);
        ids += a->build_id[0] != '\0';
    }
    CHECK(files > 2 && ids > 2, "%zu mapped files, %zu build ids", files, ids);
}

/* A file replaced (renamed over) after the maps were read does not lend its build id to
 * the mapping: the mapping gets the mapped file's (a page of zeros: none). */
static void test_replaced(void)
{
    char path[] = "/tmp/hs-maps-replaced-XXXXXX", other[64], id_other[65];
    int fd = mkstemp(path);
    snprintf(other, sizeof(other), "%s.new", path);
    int src = open("/proc/self/exe", O_RDONLY), dst = open(other, O_WRONLY | O_CREAT, 0600);
    CHECK(fd >= 0 && src >= 0 && dst >= 0, "copies");
    /* path: a non-ELF page (no build id); other: this executable (one) */
    char buf[65536];
    ssize_t k;
    while (src >= 0 && dst >= 0 && (k = read(src, buf, sizeof(buf))) > 0)
        CHECK(write(dst, buf, (size_t)k) == k, "copy");
    if (src >= 0)
        close(src);
    if (dst >= 0)
        close(dst);
    CHECK(fd >= 0 && ftruncate(fd, 4096) == 0, "ftruncate");
    void *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    hs_maps_t m; /* the lines read before the replacement, the build id after it */
    bool read = p != MAP_FAILED && hs_maps_read_lazy(0, &m) == 0;
    CHECK(read && rename(other, path) == 0, "mapped, maps read, then replaced");
    CHECK(hs_elf_build_id(path, id_other, sizeof(id_other)), "the replacement's build id");
    if (read) {
        hs_map_t *a = (hs_map_t *)hs_maps_find(&m, (uint64_t)(uintptr_t)p);
        const char *id = a ? hs_maps_build_id(0, &m, a) : "(none)";
        CHECK(id[0] == '\0', "the replaced mapping's build id: %s", id);
        hs_maps_free(&m);
    }
    if (p != MAP_FAILED)
        munmap(p, 4096);
    unlink(path);
    unlink(other);
}

/* Build ids read on demand are those read all at once, for every mapping. */
static void test_lazy(const hs_maps_t *eager)
{
    hs_maps_t m;
    CHECK(hs_maps_read_lazy(0, &m) == 0, "hs_maps_read_lazy");
    size_t files = 0, same = 0;
    for (size_t i = 0; i < m.n; i++) {
        const hs_map_t *e = hs_maps_find(eager, m.maps[i].start);
        if (m.maps[i].path[0] != '/' || !e || e->start != m.maps[i].start)
            continue;
        files++;
        CHECK(m.maps[i].id_read || m.maps[i].build_id[0] == '\0', "unread id not empty");
        same += strcmp(hs_maps_build_id(0, &m, &m.maps[i]), e->build_id) == 0;
    }
    CHECK(files > 3 && same == files, "%zu of %zu lazy build ids as read eagerly", same, files);
    hs_maps_free(&m);
}

/* The text a dump reads once: in pages of its own (a mapping of the text itself), and
 * parsed into the same file mappings as a read of its own. */
static void test_text(const hs_maps_t *eager)
{
    hs_maps_text_t t;
    hs_maps_t m;
    CHECK(hs_maps_text_read(&t) == 0 && t.len > 0 && t.text[t.len] == '\0', "text read");
    CHECK(hs_maps_parse_self(t.text, t.len, &m) == 0, "text parsed");
    const hs_map_t *own = hs_maps_find(&m, (uint64_t)(uintptr_t)t.text);
    CHECK(own && own->path[0] == '\0' && own->writable, "the text's own pages are listed");
    size_t files = 0, same = 0;
    for (size_t i = 0; i < eager->n; i++) {
        const hs_map_t *e = &eager->maps[i], *f = hs_maps_find(&m, e->start);
        if (e->path[0] != '/')
            continue;
        files++;
        same += f && f->start == e->start && f->limit == e->limit && f->offset == e->offset &&
                f->inode == e->inode && f->executable == e->executable &&
                strcmp(f->path, e->path) == 0 && f->build_id[0] == '\0';
    }
    CHECK(files > 3 && same == files, "%zu of %zu file mappings as hs_maps_read", same, files);
    hs_maps_free(&m);
    hs_maps_text_free(&t);
    CHECK(t.text == NULL && t.len == 0, "text freed");
}

int main(void)
{
    hs_maps_t m;
    CHECK(maps_probe(1) == 4, "probe");
    int rc = hs_maps_read(0, &m);
    CHECK(rc == 0, "hs_maps_read: %d", rc);
    if (rc != 0)
        return 1;
    test_sorted_and_find(&m);
    test_self(&m);
    test_odd_inputs(&m);
    test_lazy(&m);
    test_text(&m);
    test_ids_by_head(&m);
    hs_maps_free(&m);
    test_spaces_and_deleted();
    test_read_head();
    test_read_file();
    test_replaced();
    CHECK(hs_maps_read(999999999, &m) < 0, "nonexistent pid");
    return hs_check_done("test_maps");
}
