/*
 * stress_fds: a program that closes every descriptor above 2 (as daemons and some shells
 * do) while heapsift's threads hold descriptors of their own, then uses files of its own,
 * which take the numbers the threads had. Each mode exits 0 only if its files behave as
 * without heapsift. tests/stress/descriptors.sh runs it.
 *   closeloop N FILE  N rounds: allocate, close 3..63, write a line to FILE, read it back
 *                     (beside interval dumps every millisecond)
 *   steal FILE        close 3..1023, open FILE (32 bytes), wait 50 ms, read it: all 32
 *                     bytes must come (beside the HTTP server's wake-ups)
 *   fork LOG          wait until the HTTP server is up (its port file, argv[3]), close
 *                     3..1023, open LOG, fork: the child writes "child", the parent
 *                     "parent" after it; LOG must hold exactly those two lines
 *   closeall GO       wait for the file GO, close 3..1023, sleep 1 s, exit 0 (while a
 *                     client holds a request open on the HTTP server)
 *   watch MS DIR      for MS milliseconds, a thread calls heapsift_dump(DIR/api.pb.gz) in
 *                     a loop while the main thread lists its own descriptor table
 *                     (/proc/self/fd) over and over: no descriptor of it may ever be one
 *                     of heapsift's files (a profile, a /proc file, a binary libdw reads),
 *                     beside interval dumps. Prints "seen=N" and each file seen once.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_from(int lo, int hi)
{
    for (int fd = lo; fd < hi; fd++)
        close(fd);
}

static int closeloop(int rounds, const char *path)
{
    int bad = 0, failed = 0;
    for (int i = 0; i < rounds; i++) {
        free(malloc(4096));
        close_from(3, 64);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            return 2;
        char line[64], back[256];
        int n = snprintf(line, sizeof(line), "line %d\n", i);
        for (volatile int k = 0; k < 2000; k++)
            ;
        failed += write(fd, line, (size_t)n) != n;
        close(fd);
        fd = open(path, O_RDONLY);
        ssize_t r = fd >= 0 ? read(fd, back, sizeof(back)) : -1;
        if (fd >= 0)
            close(fd);
        bad += r != n || memcmp(back, line, (size_t)n) != 0;
    }
    printf("corrupted=%d write_failures=%d\n", bad, failed);
    return bad || failed;
}

static int steal(const char *path)
{
    close_from(3, 1024);
    int fd = open(path, O_RDONLY);
    usleep(50000);
    char buf[64];
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
    printf("read %zd of 32 bytes\n", n);
    return n == 32 ? 0 : 1;
}

static int forked(const char *log, const char *portfile)
{
    for (int i = 0; i < 500 && access(portfile, R_OK) != 0; i++)
        usleep(10000);
    usleep(20000);
    close_from(3, 1024);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t p = fork();
    if (p == 0)
        _exit(write(fd, "child\n", 6) == 6 ? 0 : 1);
    int st = 1;
    waitpid(p, &st, 0);
    if (write(fd, "parent\n", 7) != 7 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("a write failed (child status %d)\n", st);
        return 1;
    }
    return 0;
}

static int closeall(const char *go)
{
    for (int i = 0; i < 1000 && access(go, R_OK) != 0; i++)
        usleep(10000);
    close_from(3, 1024);
    sleep(1);
    return 0;
}

extern int heapsift_dump(const char *path) __attribute__((weak));

static volatile int watch_stop;

static void *watch_dumper(void *arg)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/api.pb.gz", (const char *)arg);
    while (!watch_stop && heapsift_dump)
        heapsift_dump(path);
    return NULL;
}

static double watch_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Counts the descriptors of the table that are not the program's: anything but 0-2 and
 * the directory being listed. */
static int watch_scan(char last[][512], int *nlast)
{
    int seen = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    int self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd <= 2 || fd == self)
            continue;
        char link[64], target[512];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        seen++;
        if (*nlast < 8) {
            int dup = 0;
            for (int i = 0; i < *nlast; i++)
                dup |= strcmp(last[i], target) == 0;
            if (!dup)
                snprintf(last[(*nlast)++], 512, "%s", target);
        }
    }
    closedir(d);
    return seen;
}

static int watch(int ms, char *dir)
{
    char files[8][512];
    int nfiles = 0, seen = 0, scans = 0;
    close_from(3, 1024); /* the program's own: none but 0-2 from here on */
    pthread_t th;
    pthread_create(&th, NULL, watch_dumper, dir);
    for (double end = watch_now_ms() + ms; watch_now_ms() < end; scans++)
        seen += watch_scan(files, &nfiles);
    watch_stop = 1;
    pthread_join(th, NULL);
    printf("seen=%d scans=%d dumps=%s\n", seen, scans, heapsift_dump ? "api" : "none");
    for (int i = 0; i < nfiles; i++)
        printf("file %s\n", files[i]);
    return seen != 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "watch") == 0)
        return watch(atoi(argv[2]), argv[3]);
    if (argc >= 4 && strcmp(argv[1], "closeloop") == 0)
        return closeloop(atoi(argv[2]), argv[3]);
    if (argc >= 3 && strcmp(argv[1], "steal") == 0)
        return steal(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "fork") == 0)
        return forked(argv[2], argv[3]);
    if (argc >= 3 && strcmp(argv[1], "closeall") == 0)
        return closeall(argv[2]);
    fprintf(stderr,
            "usage: stress_fds closeloop N FILE | steal FILE | fork LOG PORTFILE | closeall GO | "
            "watch MS DIR\n");
    return 2;
}
