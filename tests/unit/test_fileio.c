/*
 * Unit test of reading a whole file into memory of its own (src/common/base/fileio.c,
 * hs_map_file): the bytes are the file's, the memory stays readable after another process
 * truncates the file (a mapping of the file would end this one with SIGBUS), anything but
 * a regular non-empty file is refused without opening it (a FIFO would be opened twice),
 * and hs_read_file then reads the FIFO whole; hs_read_text reads a small file whole, cut to
 * its buffer and NUL-terminated, and answers -1 for a missing or empty file and for
 * a buffer with no room. Standalone; exits non-zero naming
 * each failure.
 */
#define _GNU_SOURCE
#include "base/fileio.h"

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEN ((3u << 20) + 17u) /* past one huge page, not a multiple of one */

static void fill(uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 131u + (i >> 12));
}

static int write_file(const char *path, const uint8_t *b, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, b, n);
    close(fd);
    return w == (ssize_t)n ? 0 : -1;
}

static void test_regular(const char *dir, const uint8_t *want)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/f", dir);
    CHECK(write_file(path, want, LEN) == 0);
    const uint8_t *data = NULL;
    size_t len = 0;
    CHECK(hs_map_file(path, &data, &len) == 0);
    CHECK(len == LEN, "len %zu", len);
    CHECK(data && memcmp(data, want, LEN) == 0);
    CHECK(truncate(path, 0) == 0);
    CHECK(data && data[LEN - 1] == want[LEN - 1]); /* a file mapping: SIGBUS here */
    if (data)
        hs_unmap_file(data, len);
    CHECK(hs_map_file(path, &data, &len) == -EINVAL); /* empty now */
    CHECK(hs_map_file(dir, &data, &len) == -EINVAL);
    snprintf(path, sizeof(path), "%s/absent", dir);
    CHECK(hs_map_file(path, &data, &len) == -ENOENT);
}

/* hs_map_file on a FIFO no writer has opened: refused at once. Had it opened the FIFO, it
 * would wait there for a writer, forever (the alarm ends the test); had a writer been
 * waiting, that open would have let it go and the close left it without a reader. Then
 * hs_read_file reads a FIFO whole from a writer. */
static void test_fifo(const char *dir, const uint8_t *want)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        const uint8_t *data = NULL;
        size_t len = 0;
        _exit(hs_map_file(path, &data, &len) == -EINVAL ? 0 : 1);
    }
    int st = -1;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "hs_map_file on a FIFO: status %#x", st);
    if ((pid = fork()) == 0) {
        int fd = open(path, O_WRONLY);
        ssize_t w = fd >= 0 ? write(fd, want, 1 << 20) : -1;
        _exit(w == 1 << 20 ? 0 : 1);
    }
    hs_buf_t b = HS_BUF_INIT;
    CHECK(hs_read_file(path, &b) == 0);
    CHECK(b.len == 1u << 20 && memcmp(b.data, want, 1 << 20) == 0, "read %zu bytes", b.len);
    hs_buf_free(&b);
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the writer: status %#x", st);
}

static void test_text(const char *dir)
{
    char path[256], buf[8];
    snprintf(path, sizeof(path), "%s/t", dir);
    CHECK(hs_read_text(path, buf, sizeof(buf)) == -1, "read_text: a missing file read");
    CHECK(write_file(path, (const uint8_t *)"", 0) == 0, "read_text: cannot write %s", path);
    CHECK(hs_read_text(path, buf, sizeof(buf)) == -1, "read_text: an empty file read");
    CHECK(write_file(path, (const uint8_t *)"abc", 3) == 0, "read_text: cannot write %s", path);
    memset(buf, 'x', sizeof(buf));
    ssize_t n = hs_read_text(path, buf, sizeof(buf));
    CHECK(n == 3 && strcmp(buf, "abc") == 0, "read_text: %zd bytes, not 3", n);
    CHECK(write_file(path, (const uint8_t *)"0123456789", 10) == 0, "cannot write %s", path);
    n = hs_read_text(path, buf, sizeof(buf));
    CHECK(n == 7 && strcmp(buf, "0123456") == 0, "read_text: %zd bytes, not cut to 7", n);
    CHECK(hs_read_text(path, buf, 1) == -1, "read_text: a 1-byte buffer read into");
    CHECK(hs_read_text("/proc/self/stat", buf, sizeof(buf)) > 0, "read_text: /proc/self/stat");
}

int main(void)
{
    char dir[] = "/tmp/hs-fileio.XXXXXX";
    uint8_t *want = malloc(LEN);
    if (!mkdtemp(dir) || !want)
        return 1;
    alarm(60); /* a FIFO opened with no writer would hang the test: a bound, not a wait */
    fill(want, LEN);
    test_regular(dir, want);
    test_fifo(dir, want);
    test_text(dir);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_fileio: could not remove %s\n", dir);
    free(want);
    return hs_check_done("test_fileio");
}
