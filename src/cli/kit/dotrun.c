/*
 * Running Graphviz's `dot -Tsvg` on DOT text and collecting the SVG it writes, for
 * `heapsift graph` and the web UI's Graph tab. Only the CLI runs programs: the library
 * draws its own layout (report_graphsvg.c). dot's input and output go through pipes,
 * multiplexed with poll so neither side can block the other; SIGPIPE is ignored while
 * writing, so a dot that dies early is an error, not the end of heapsift.
 */
#define _GNU_SOURCE
#include "viewopts.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Feeds text to fd in and appends what fd out gives to svg until out closes. */
static int dot_pump(int in, int out, const char *text, size_t len, hs_buf_t *svg)
{
    size_t off = 0;
    char chunk[16384];
    for (;;) {
        struct pollfd p[2] = {{out, POLLIN, 0}, {in, POLLOUT, 0}};
        nfds_t n = in >= 0 ? 2 : 1;
        if (poll(p, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (in >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(in, text + off, len - off);
            if (w > 0)
                off += (size_t)w;
            if (w < 0 && errno != EINTR && errno != EAGAIN)
                off = len; /* dot stopped reading: its status says why */
            if (off == len) {
                close(in);
                in = -1;
            }
        }
        if (p[0].revents & (POLLIN | POLLERR | POLLHUP)) {
            ssize_t r = read(out, chunk, sizeof(chunk));
            if (r == 0)
                break;
            if (r < 0 && errno != EINTR && errno != EAGAIN)
                return -errno;
            if (r > 0 && hs_buf_append(svg, chunk, (size_t)r))
                return -ENOMEM;
        }
    }
    if (in >= 0)
        close(in);
    return 0;
}

int hs_cli_dot_svg(const char *text, size_t len, hs_buf_t *svg, char *err, size_t errlen)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) != 0)
        goto io;
    if (pipe2(from, O_CLOEXEC) != 0) {
        close(to[0]);
        close(to[1]);
        goto io;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from[1], 1);
    char *argv[] = {"dot", "-Tsvg", NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(to[0]);
    close(from[1]);
    if (rc) {
        close(to[1]);
        close(from[0]);
        snprintf(err, errlen,
                 "cannot run Graphviz's dot program (%s): install graphviz "
                 "(apt-get install graphviz, or sh scripts/setup.sh)",
                 strerror(rc));
        return -ENOENT;
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);
    rc = dot_pump(to[1], from[0], text, len, svg);
    sigaction(SIGPIPE, &old, NULL);
    close(from[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
        snprintf(err, errlen, "Graphviz's dot failed on the graph (status %d)",
                 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        return -EIO;
    }
    if (rc)
        snprintf(err, errlen, "dot: %s", strerror(-rc));
    return rc;
io:
    snprintf(err, errlen, "pipe: %s", strerror(errno));
    return -EIO;
}
