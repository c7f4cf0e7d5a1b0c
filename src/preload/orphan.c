/*
 * Whether heapsift's own threads are all that is left of the program. A program whose
 * main thread calls pthread_exit ends, by POSIX, as if by exit(0) when its last thread
 * ends; heapsift's trigger and HTTP threads (which block every signal and wait for an
 * exit that never comes) would keep it alive forever. So each of them asks here about
 * once a second and, when the answer is yes, ends itself: the last one out makes glibc
 * call exit(0), which runs the exit profile as for any other exit.
 */
#define _GNU_SOURCE
#include "core.h"
#include "fdhigh.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HS_OWN_MAX 4
static pid_t own_tids[HS_OWN_MAX];

void hs_orphan_register(void)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    for (int i = 0; i < HS_OWN_MAX; i++) {
        pid_t zero = 0;
        if (__atomic_compare_exchange_n(&own_tids[i], &zero, tid, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return;
    }
}

/* The state letter of task tid of this process ('?' when unreadable). */
static char orphan_state(long tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
    int fd = hs_open_high(path, O_RDONLY, 0);
    if (fd < 0)
        return '?';
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return '?';
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

static bool orphan_own(long tid)
{
    for (int i = 0; i < HS_OWN_MAX; i++)
        if (__atomic_load_n(&own_tids[i], __ATOMIC_RELAXED) == (pid_t)tid)
            return true;
    return false;
}

void hs_orphan_after_fork(void)
{
    for (int i = 0; i < HS_OWN_MAX; i++)
        __atomic_store_n(&own_tids[i], 0, __ATOMIC_RELAXED);
}

bool hs_orphan_program_gone(void)
{
    long pid = (long)getpid();
    char s = orphan_state(pid);
    if (s != 'Z' && s != 'X')
        return false; /* the main thread runs: the common case, one small read */
    int dfd = hs_open_high("/proc/self/task", O_RDONLY | O_DIRECTORY, 0);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return false;
    }
    bool gone = true;
    struct dirent *e;
    while (gone && (e = readdir(d)) != NULL) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == pid || orphan_own(tid))
            continue;
        s = orphan_state(tid);
        gone = s == 'Z' || s == 'X' || s == '?'; /* '?': gone while we looked */
    }
    closedir(d);
    return gone;
}
