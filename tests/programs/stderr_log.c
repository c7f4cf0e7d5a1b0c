/*
 * stderr_log: a program whose stderr is a log file it opened itself, without O_APPEND
 * (as a daemon redirecting its stderr does), writing one line per millisecond while it
 * allocates. heapsift's own lines (a dump's "wrote ...") must land in the same file at
 * the program's offset, neither overwriting the program's lines nor overwritten by them.
 * tests/integration/stderr_log.sh runs it.
 *   stderr_log LOG N   N lines "line I" on descriptor 2, which is LOG; before lines N/4,
 *                      N/2 and 3N/4 it waits (30 s at most) until LOG holds 1, 2 and 3
 *                      of heapsift's "wrote" lines, so that heapsift's lines land between
 *                      its own however slow the machine
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* heapsift's "wrote" lines in the log at path. */
static int wrote_lines(const char *path)
{
    char line[4096];
    int n = 0;
    bool start = true;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f)) {
        n += start && strncmp(line, "heapsift: wrote ", 16) == 0;
        start = strchr(line, '\n') != NULL;
    }
    if (f)
        fclose(f);
    return n;
}

/* Waits until the log holds want of heapsift's lines; false after 30 s. */
static bool wait_wrote(const char *path, int want)
{
    struct timespec ts = {0, 10000000};
    for (int i = 0; i < 3000; i++) {
        if (wrote_lines(path) >= want)
            return true;
        nanosleep(&ts, NULL);
    }
    return false;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: stderr_log LOG N\n");
        return 2;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0)
        return 3;
    close(fd);
    int n = atoi(argv[2]);
    static void *keep[4096];
    for (int i = 0; i < n; i++) {
        if (n >= 4 && i > 0 && i % (n / 4) == 0 && i / (n / 4) < 4 &&
            !wait_wrote(argv[1], i / (n / 4)))
            return 5;
        keep[i % 4096] = malloc(64 * 1024);
        memset(keep[i % 4096], i, 64 * 1024);
        char line[32];
        int k = snprintf(line, sizeof(line), "line %d\n", i);
        if (write(2, line, (size_t)k) != k)
            return 4;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}
