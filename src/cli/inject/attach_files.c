/*
 * The per-attach files (attach_files.h). The target dlopens the library from a directory
 * whose name holds "/heapsift-attach-" (its constructors see that and start nothing), and
 * reads its options from a file beside it: both must be openable by the target, in its
 * own filesystem. When the target sees our library and our /tmp (same dev and inode
 * through /proc/PID/root), the library is a symlink to ours, so every attach dlopens the
 * same file and the loader reuses the copy it has. Otherwise (another mount namespace, a
 * chroot: a container) the directory is made in the target's /tmp through /proc/PID/root
 * (or /var/tmp, /dev/shm when /tmp cannot be written) and the library is copied there;
 * the copy stays while the process lives, and a later attach reuses the copy the target
 * has mapped instead of making a second one. Never touches the target's memory.
 */
#define _GNU_SOURCE
#include "attach_files.h"
#include "attach_deps.h"
#include "attach_check.h"
#include "base/fileio.h"
#include "kit/cli.h"
#include "run/run.h"
#include "ptrace_inject.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the paths a and b name one file (device and inode). */
static bool at_same_inode(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static bool at_same_file(const char *root, const char *path)
{
    char there[PATH_MAX + 64];
    snprintf(there, sizeof(there), "%s%s", root, path);
    return at_same_inode(path, there);
}

bool hs_attach_files_shared(pid_t pid, const char *lib)
{
    char root[64], real[PATH_MAX];
    snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
    return realpath(lib, real) && at_same_file(root, real) && at_same_file(root, "/tmp");
}

/* Whether the files at a and b hold the same bytes. */
static bool at_same_bytes(const char *a, const char *b)
{
    const uint8_t *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    bool same = hs_map_file(a, &x, &nx) == 0 && hs_map_file(b, &y, &ny) == 0 && nx == ny &&
                memcmp(x, y, nx) == 0;
    if (x)
        hs_unmap_file(x, nx);
    if (y)
        hs_unmap_file(y, ny);
    return same;
}

/* Whether mapping m of a heapsift library is the one this attach would load: the file
 * itself (shared), or a copy made by an earlier attach with its bytes (which
 * hs_attach_files_make reuses). */
static bool at_ours(pid_t pid, const hs_inject_map_t *m, const char *real, bool shared)
{
    char host[PATH_MAX + 64];
    if (m->deleted)
        return false;
    hs_inject_map_host(pid, m, host, sizeof(host));
    if (shared)
        return at_same_inode(host, real);
    return strstr(m->path, "/heapsift-attach-") && at_same_bytes(host, real);
}

int hs_attach_files_loaded(pid_t pid, const char *lib, bool shared)
{
    char real[PATH_MAX];
    hs_inject_map_t m;
    if (!realpath(lib, real))
        return HS_AT_OK; /* said by hs_attach_files_make */
    for (unsigned nth = 0; hs_inject_map_nth(pid, "libheapsift", nth, &m); nth++) {
        if (at_ours(pid, &m, real, shared))
            continue;
        hs_cli_error("attach: process %d has another heapsift library loaded, %s%s, not %s: "
                     "a second one would hook over it; attach with the heapsift it came with, "
                     "or --lib naming that file",
                     (int)pid, m.path, m.deleted ? " (its file since removed or replaced)" : "",
                     lib);
        return HS_AT_TARGET;
    }
    return HS_AT_OK;
}

int hs_attach_copy_file(const char *from, const char *to)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = 0;
    if (in < 0)
        return -errno;
    out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
    if (out < 0) {
        rc = -errno;
        goto out;
    }
    for (;;) {
        ssize_t k = read(in, buf, sizeof(buf));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = k < 0 ? -errno : 0;
            break;
        }
        for (ssize_t done = 0; done < k;) {
            ssize_t w = write(out, buf + done, (size_t)(k - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = -errno;
                goto out;
            }
            done += w;
        }
    }
    if (fchmod(out, 0755) != 0)
        rc = -errno;
out:
    if (out >= 0 && close(out) != 0 && rc == 0)
        rc = -errno;
    close(in);
    return rc;
}

/* The directory, in the first of the target's /tmp, /var/tmp, /dev/shm that takes it. */
static int at_mkdir(hs_attach_files_t *f, char *why, size_t cap)
{
    static const char *const bases[] = {"/tmp", "/var/tmp", "/dev/shm"};
    size_t nb = f->root[0] ? 3 : 1;
    for (size_t i = 0; i < nb; i++) {
        char host[PATH_MAX + 64];
        snprintf(host, sizeof(host), "%s%s/heapsift-attach-XXXXXX", f->root, bases[i]);
        if (mkdtemp(host) && chmod(host, 0755) == 0) {
            snprintf(f->dir, sizeof(f->dir), "%s", host + strlen(f->root));
            return 0;
        }
        snprintf(why, cap, "%s%s: %s", f->root, bases[i], strerror(errno));
    }
    return -1;
}

/* A copy mapped by an earlier attach, still there: its path as the target sees it. */
static bool at_mapped_copy(pid_t pid, const hs_attach_files_t *f, char *path, size_t cap)
{
    char host[PATH_MAX + 64];
    uintptr_t base;
    if (!hs_inject_map_find(pid, "libheapsift", &base, path, cap) ||
        !strstr(path, "/heapsift-attach-"))
        return false;
    snprintf(host, sizeof(host), "%s%s", f->root, path);
    return access(host, R_OK) == 0;
}

static int at_write_options(const char *host)
{
    size_t n;
    const hs_run_opt_t *o = hs_run_opts(&n);
    FILE *f = fopen(host, "w");
    if (!f)
        return -errno;
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(o[i].env);
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            seen |= strcmp(o[k].env, o[i].env) == 0;
        if (v && !seen && !strchr(v, '\n'))
            fprintf(f, "%s=%s\n", o[i].env, v);
    }
    if (fclose(f) != 0 || chmod(host, 0644) != 0)
        return -errno;
    return 0;
}

int hs_attach_files_make(pid_t pid, const char *lib, bool shared, hs_attach_files_t *f)
{
    char real[PATH_MAX], host[PATH_MAX + 64], why[PATH_MAX + 128];
    memset(f, 0, sizeof(*f));
    if (!shared)
        snprintf(f->root, sizeof(f->root), "/proc/%d/root", (int)pid);
    if (!realpath(lib, real)) {
        hs_cli_error("attach: %s: %s", lib, strerror(errno));
        return HS_AT_FAIL;
    }
    if (at_mkdir(f, why, sizeof(why)) != 0) {
        hs_cli_error("attach: cannot make a directory %s: %s",
                     shared ? "in /tmp" : "in the target's filesystem (/tmp, /var/tmp, /dev/shm)",
                     why);
        return shared ? HS_AT_FAIL : HS_AT_TARGET;
    }
    snprintf(f->opt, sizeof(f->opt), "%s/options", f->dir);
    snprintf(f->lib, sizeof(f->lib), "%s/libheapsift.so.0", f->dir);
    snprintf(host, sizeof(host), "%s%s", f->root, f->lib);
    int rc = 0;
    bool loaded = false;
    if (shared) {
        rc = symlink(real, host) == 0 ? 0 : -errno;
    } else if (at_mapped_copy(pid, f, f->lib, sizeof(f->lib))) {
        f->copied = loaded = true; /* loaded already: dlopen the same file again */
    } else {
        rc = hs_attach_copy_file(real, host);
        f->copied = rc == 0;
    }
    if (rc != 0) {
        hs_cli_error("attach: cannot %s %s: %s",
                     shared ? "make the symlink" : "copy the library to", host, strerror(-rc));
        return shared ? HS_AT_FAIL : HS_AT_TARGET;
    }
    if (!loaded && hs_attach_deps_copy(pid, f->root, f->dir, real, f->deps, sizeof(f->deps), why,
                                       sizeof(why)) != 0) {
        hs_cli_error("attach: cannot copy a library heapsift needs, which process %d lacks, "
                     "to %s",
                     (int)pid, why);
        return HS_AT_TARGET;
    }
    snprintf(host, sizeof(host), "%s%s", f->root, f->opt);
    rc = at_write_options(host);
    if (rc != 0) {
        hs_cli_error("attach: cannot write %s: %s", host, strerror(-rc));
        return HS_AT_FAIL;
    }
    return HS_AT_OK;
}

void hs_attach_files_remove(hs_attach_files_t *f)
{
    char host[PATH_MAX + 64];
    if (!f->dir[0])
        return;
    snprintf(host, sizeof(host), "%s%s", f->root, f->opt);
    unlink(host);
    if (!f->copied) {
        snprintf(host, sizeof(host), "%s%s", f->root, f->lib);
        unlink(host);
    }
    snprintf(host, sizeof(host), "%s%s", f->root, f->dir);
    rmdir(host); /* fails, as it should, while a copy is in it */
    f->dir[0] = '\0';
}
