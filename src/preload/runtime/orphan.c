/*
 * Whether heapsift's own threads are all that is left of the program. A program whose
 * main thread calls pthread_exit ends, by POSIX, as if by exit(0) when its last thread
 * ends; heapsift's trigger and HTTP threads (which block every signal and wait for an
 * exit that never comes) would keep it alive forever. So each of them asks here about
 * once a second and, when the answer is yes, ends itself: the last one out makes glibc
 * call exit(0), which runs the exit profile as for any other exit.
 */
#define _GNU_SOURCE
#include "orphan.h"
#include "base/fdio.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HS_OWN_MAX 8
static pid_t own_tids[HS_OWN_MAX];

void hs_orphan_register(void)
{
    hs_orphan_register_tid((pid_t)syscall(SYS_gettid));
}

void hs_orphan_register_tid(pid_t tid)
{
    for (int i = 0; i < HS_OWN_MAX; i++) {
        pid_t zero = 0;
        if (__atomic_compare_exchange_n(&own_tids[i], &zero, tid, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return;
    }
}

/* The state letter of task tid of this process ('?' when unreadable). */
void hs_orphan_forget(pid_t tid)
{
    for (int i = 0; i < HS_OWN_MAX; i++) {
        pid_t t = tid;
        __atomic_compare_exchange_n(&own_tids[i], &t, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
}

static char orphan_state(long tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
    int fd = hs_open_high(path, O_RDONLY, 0);
    if (fd < 0)
        return '?';
    ssize_t n = hs_fd_read(fd, buf, sizeof(buf) - 1);
    hs_fd_close(fd);
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

int hs_orphan_own_alive(void)
{
    int n = 0;
    pid_t pid = getpid();
    for (int i = 0; i < HS_OWN_MAX; i++) {
        pid_t tid = __atomic_load_n(&own_tids[i], __ATOMIC_RELAXED);
        if (tid > 0 && syscall(SYS_tgkill, pid, tid, 0) == 0)
            n++;
    }
    return n;
}

void hs_orphan_after_fork(void)
{
    for (int i = 0; i < HS_OWN_MAX; i++)
        __atomic_store_n(&own_tids[i], 0, __ATOMIC_RELAXED);
}

/* Whether every task of this process but heapsift's own is gone (the directory read in
 * getdents64 records, through fdio.h). */
static bool orphan_others_gone(long pid)
{
    int dfd = hs_fd_open("/proc/self/task", O_RDONLY | O_DIRECTORY, 0);
    if (dfd < 0)
        return false;
    bool gone = true;
    char buf[4096] __attribute__((aligned(8)));
    long n;
    while (gone && (n = hs_fd_getdents(dfd, buf, sizeof(buf))) > 0) {
        for (long off = 0; gone && off < n;) {
            const struct dirent64 *e = (const struct dirent64 *)(buf + off);
            off += e->d_reclen;
            long tid = strtol(e->d_name, NULL, 10);
            if (tid <= 0 || tid == pid || orphan_own(tid))
                continue;
            char s = orphan_state(tid);
            gone = s == 'Z' || s == 'X' || s == '?'; /* '?': gone while we looked */
        }
    }
    hs_fd_close(dfd);
    return gone;
}

bool hs_orphan_program_gone(void)
{
    long pid = (long)getpid();
    char s = orphan_state(pid);
    if (s != 'Z' && s != 'X')
        return false; /* the main thread runs: the common case, one small read */
    return orphan_others_gone(pid);
}
