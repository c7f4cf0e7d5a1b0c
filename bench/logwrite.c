/*
 * bench/logwrite.c: the cost of a program's write to its stderr log. Writes N lines of 12
 * bytes with write(2) to descriptor 2 (the caller makes it a log file, without O_APPEND)
 * in ROUNDS timed loops, and prints the best loop's ns per write, then how many of the
 * process's other descriptor tables (heapsift's threads') hold that log open: its pins
 * (src/preload/runtime/log.c). Run by bench/logwrite.sh.
 *   logwrite N ROUNDS
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Threads (other than the caller) whose table holds the file open as st. */
static int pins(const struct stat *st)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    pid_t self = gettid();
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == self)
            continue;
        char dir[300], path[600];
        snprintf(dir, sizeof(dir), "/proc/self/task/%s/fd", e->d_name);
        DIR *f = opendir(dir);
        struct dirent *g;
        while (f && (g = readdir(f))) {
            struct stat s;
            snprintf(path, sizeof(path), "%s/%s", dir, g->d_name);
            if (g->d_name[0] != '.' && stat(path, &s) == 0 && s.st_ino == st->st_ino &&
                s.st_dev == st->st_dev)
                n++;
        }
        if (f)
            closedir(f);
    }
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000, rounds = argc > 2 ? atol(argv[2]) : 5;
    struct stat st;
    if (n <= 0 || rounds <= 0 || fstat(2, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "usage: logwrite N ROUNDS 2>LOG (a regular file)\n");
        return 2;
    }
    double best = 1e9;
    for (long r = 0; r < rounds; r++) {
        if (ftruncate(2, 0) != 0 || lseek(2, 0, SEEK_SET) != 0)
            return 3;
        double t = now_s();
        for (long i = 0; i < n; i++)
            if (write(2, "line 123456\n", 12) != 12)
                return 4;
        t = now_s() - t;
        best = t < best ? t : best;
    }
    printf("ns_per_write: %.1f\npins: %d\n", best / (double)n * 1e9, pins(&st));
    return 0;
}
