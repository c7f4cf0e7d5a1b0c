/*
 * A PID target of heapsift diagnose (live.h): the endpoint the process serves already,
 * told by its environment (HEAPSIFT_HTTP; for port 0 the port file HEAPSIFT_HTTP_PORTFILE
 * names; HEAPSIFT_HTTP_TOKEN for the leak check, else this command's own), or the
 * loopback socket it listens on that answers heapsift's index, or else one attached for the while
 * with `heapsift attach --http 127.0.0.1:0` (inject/) and detached after.
 */
#define _GNU_SOURCE
#include "base/fileio.h"
#include "inject/attach.h"
#include "kit/cli.h"
#include "live.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The value of name in the process's environment, copied to v; false when absent. */
static bool pid_env(long pid, const char *name, char *v, size_t vlen)
{
    char path[64], buf[65536];
    snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
    ssize_t n = hs_read_text(path, buf, sizeof(buf));
    if (n < 0)
        return false;
    size_t nl = strlen(name);
    for (char *p = buf; p < buf + n; p += strlen(p) + 1)
        if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
            snprintf(v, vlen, "%s", p + nl + 1);
            return true;
        }
    return false;
}

/* The port in a port file (%p the pid), or 0. */
static long pid_portfile(long pid, const char *pattern)
{
    char path[512], line[32];
    size_t k = 0;
    for (const char *s = pattern; *s && k + 24 < sizeof(path); s++)
        if (s[0] == '%' && s[1] == 'p') {
            k += (size_t)snprintf(path + k, sizeof(path) - k, "%ld", pid);
            s++;
        } else {
            path[k++] = *s;
        }
    path[k] = '\0';
    FILE *f = fopen(path, "re");
    long port = 0;
    if (f && fgets(line, sizeof(line), f))
        port = strtol(line, NULL, 10);
    if (f)
        fclose(f);
    return port > 0 && port < 65536 ? port : 0;
}

/* Adds the inodes of the sockets in directory fd (at most cap in all) to ino. */
static size_t pid_fd_sockets(const char *fd, unsigned long *ino, size_t n, size_t cap)
{
    char link[64], name[700];
    DIR *d = opendir(fd);
    struct dirent *e;
    while (d && n < cap && (e = readdir(d))) {
        snprintf(name, sizeof(name), "%s/%s", fd, e->d_name);
        ssize_t k = readlink(name, link, sizeof(link) - 1);
        if (k > 0) {
            link[k] = '\0';
            if (sscanf(link, "socket:[%lu]", &ino[n]) == 1)
                n++;
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* The inodes of the sockets of every thread of the process (at most cap), their count:
 * heapsift's serving thread has a descriptor table of its own (docs/http.md), so its
 * socket is in its task's fd directory only. */
static size_t pid_sockets(long pid, unsigned long *ino, size_t cap)
{
    char path[64], fd[400];
    size_t n = 0;
    snprintf(path, sizeof(path), "/proc/%ld/task", pid);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(fd, sizeof(fd), "%s/%s/fd", path, e->d_name);
            n = pid_fd_sockets(fd, ino, n, cap);
        }
    if (d)
        closedir(d);
    return n;
}

/* Tries each loopback-reachable TCP socket the process listens on (/proc/PID/net/tcp) for
 * heapsift's index, /debug/pprof/: the process's environment may be gone (a program that
 * rewrites it for its title, as redis-server does) or say port 0 without a port file. */
static int pid_probe(long pid, char *base, size_t baselen)
{
    unsigned long ino[256], li;
    size_t n = pid_sockets(pid, ino, 256);
    char path[64], line[512], err[256];
    unsigned a, port, st;
    snprintf(path, sizeof(path), "/proc/%ld/net/tcp", pid);
    FILE *f = n ? fopen(path, "re") : NULL;
    int rc = -1;
    while (f && rc != 0 && fgets(line, sizeof(line), f)) {
        if (sscanf(line, " %*u: %8x:%4x %*x:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &a, &port, &st,
                   &li) != 4 ||
            st != 0x0A)
            continue;
        for (size_t i = 0; i < n && rc != 0; i++) {
            if (ino[i] != li)
                continue;
            hs_buf_t b = HS_BUF_INIT;
            unsigned char *q = (unsigned char *)&a;
            char url[128];
            if (a == 0)
                snprintf(url, sizeof(url), "http://127.0.0.1:%u", port);
            else
                snprintf(url, sizeof(url), "http://%u.%u.%u.%u:%u", q[0], q[1], q[2], q[3], port);
            snprintf(base, baselen, "%s/debug/pprof/", url);
            if (hs_live_fetch(base, false, NULL, &b, err, sizeof(err)) == 0 && b.len &&
                memmem(b.data, b.len, "href=\"heap\"", 11)) {
                snprintf(base, baselen, "%s", url);
                rc = 0;
            }
            hs_buf_free(&b);
        }
    }
    if (f)
        fclose(f);
    return rc;
}

int hs_live_pid_endpoint(long pid, char *base, size_t baselen, char *token, size_t toklen)
{
    char spec[256], pf[512], host[256] = "127.0.0.1";
    const char *mine = getenv("HEAPSIFT_HTTP_TOKEN");
    snprintf(token, toklen, "%s", mine ? mine : "");
    if (!pid_env(pid, "HEAPSIFT_HTTP", spec, sizeof(spec)) || !spec[0])
        return pid_probe(pid, base, baselen);
    char *colon = strrchr(spec, ':');
    if (!colon)
        return -1;
    long port = strtol(colon + 1, NULL, 10);
    *colon = '\0';
    if (strcmp(spec, "[::]") == 0)
        snprintf(host, sizeof(host), "[::1]");
    else if (spec[0] && strcmp(spec, "0.0.0.0") != 0)
        snprintf(host, sizeof(host), "%s", spec);
    if (port == 0 && pid_env(pid, "HEAPSIFT_HTTP_PORTFILE", pf, sizeof(pf)))
        port = pid_portfile(pid, pf);
    if (port <= 0 || port > 65535)
        return pid_probe(pid, base, baselen);
    pid_env(pid, "HEAPSIFT_HTTP_TOKEN", token, toklen);
    snprintf(base, baselen, "http://%s:%ld", host, port);
    return 0;
}

int hs_live_pid_attach(long pid, const char *dir, const char *token, char *base, size_t baselen)
{
    char portfile[4200], out[4200], pids[32];
    snprintf(portfile, sizeof(portfile), "%s/attach.port", dir);
    snprintf(out, sizeof(out), "%s/attach-window.pb.gz", dir);
    snprintf(pids, sizeof(pids), "%ld", pid);
    char *argv[] = {"attach", "--http",       "127.0.0.1:0", "--http-portfile",
                    portfile, "--http-token", (char *)token, "-o",
                    out,      pids,           NULL};
    int rc = hs_cmd_attach(10, argv);
    if (rc != 0)
        return rc;
    for (int i = 0; i < 3000; i++) { /* the endpoint starts in the background: 30 s at most */
        long port = pid_portfile(pid, portfile);
        if (port) {
            snprintf(base, baselen, "http://127.0.0.1:%ld", port);
            return 0;
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    hs_cli_error("diagnose: %ld: attached, but no endpoint within 30 s", pid);
    hs_live_pid_detach(pid);
    return 3;
}

int hs_live_pid_detach(long pid)
{
    char pids[32];
    snprintf(pids, sizeof(pids), "%ld", pid);
    char *argv[] = {"detach", pids, NULL};
    /* detach tells on stdout where it wrote the window's profile: here stdout is the
     * diagnosis (--json's document), so that line goes to stderr with attach's own. */
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved >= 0)
        dup2(STDERR_FILENO, STDOUT_FILENO);
    int rc = hs_cmd_detach(2, argv);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    return rc;
}
