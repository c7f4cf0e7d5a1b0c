/*
 * Unit test of log.c's pin: a thread with a descriptor table of its own (as heapsift's
 * trigger thread has) writes its lines, for 150 ms, to the program's descriptor 2, a log
 * file opened without O_APPEND, while the program's one thread writes its own lines there
 * as fast as it can. Every line of both must be in the file, whole: a line written
 * through a copy of 2 taken for it, without the pin, met a program write at the same
 * offset and one covered the other (stderr_log in CI, rarely; here, without the pin, in
 * 10 runs of 10, with two more processes spinning too).
 */
#include "runtime/core.h"
#include "runtime/fdtable.h"
#include "runtime/log.h"

#include "check.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OURS_MIN 1500 /* heapsift's lines, at least */
#define OURS_MS 150   /* and for that long: under load the two threads overlap less */

static int done;
static long ours_written;

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void *writer(void *arg)
{
    (void)arg;
    int ok = hs_fd_private() == 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long i = 0;
    for (; ok && (i < OURS_MIN || ms_since(&t0) < OURS_MS); i++) {
        char line[96];
        int k =
            snprintf(line, sizeof(line), "heapsift: wrote /tmp/some/profile.%ld.pb.gz (many)\n", i);
        if (hs_stderr_write(line, (size_t)k, false) != k)
            ok = 0;
    }
    ours_written = i;
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    return (void *)(intptr_t)ok;
}

/* Lines of the file at path: how many start with prefix and are whole, and how many are
 * neither kind (garbled). */
static void count(const char *path, long *ours, long *program, long *bad)
{
    FILE *f = fopen(path, "r");
    char line[256];
    *ours = *program = *bad = 0;
    while (f && fgets(line, sizeof(line), f)) {
        int n;
        char end;
        if (strncmp(line, "heapsift: wrote ", 16) == 0 && strstr(line, " (many)\n"))
            ++*ours;
        else if (sscanf(line, "line %d%c", &n, &end) == 2 && end == '\n')
            ++*program;
        else
            ++*bad;
    }
    if (f)
        fclose(f);
}

int main(void)
{
    char path[] = "/tmp/hs_stderr_pin.XXXXXX";
    int fd = mkstemp(path), keep = dup(2);
    CHECK(fd >= 0 && keep >= 0, "mkstemp");
    if (fd < 0 || keep < 0)
        return 1;
    dup2(fd, 2);
    close(fd);
    pthread_t th;
    void *ok = NULL;
    long written = 0;
    if (pthread_create(&th, NULL, writer, NULL) == 0) {
        while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
            char line[32];
            int k = snprintf(line, sizeof(line), "line %ld\n", written);
            if (write(2, line, (size_t)k) == k)
                written++;
        }
        pthread_join(th, &ok);
    }
    dup2(keep, 2);
    close(keep);
    long ours, program, bad;
    count(path, &ours, &program, &bad);
    unlink(path);
    CHECK(ok != NULL, "the writer thread could not make a table of its own or write");
    CHECK(ours == ours_written, "heapsift's lines whole: %ld, want %ld", ours, ours_written);
    CHECK(program == written, "the program's lines whole: %ld, want %ld", program, written);
    CHECK(bad == 0, "garbled lines: %ld", bad);
    return hs_check_done("test_stderr_pin");
}
