/*
 * pidlog: a preloaded library of the tests' own that notes every process it is loaded in,
 * independently of heapsift, so a test can count the processes of a tree (sandbox_*.sh).
 * Its constructor (each exec) and its fork handler (each forked child) append one line
 * "PID PPID exec|fork ARGV..." to the file PIDLOG names, with one write on a descriptor
 * opened with O_APPEND: before any sandbox of the program's starts (the constructor) or
 * in the parent's state (a fork server's child, before it sandboxes itself).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void pidlog_note(const char *how)
{
    const char *file = getenv("PIDLOG");
    char cmd[256] = "", line[400];
    if (!file)
        return;
    int c = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = c >= 0 ? read(c, cmd, sizeof(cmd) - 1) : 0;
    if (c >= 0)
        close(c);
    for (ssize_t i = 0; i < n; i++)
        cmd[i] = cmd[i] ? cmd[i] : ' ';
    cmd[n > 0 ? n : 0] = '\0';
    int len =
        snprintf(line, sizeof(line), "%ld %ld %s %s\n", (long)getpid(), (long)getppid(), how, cmd);
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0 && len > 0 &&
        write(fd, line, (size_t)(len < (int)sizeof(line) ? len : (int)sizeof(line) - 1)) < 0) {
        /* the count misses this process: the test then fails, as it should */
    }
    if (fd >= 0)
        close(fd);
}

static void pidlog_child(void)
{
    pidlog_note("fork");
}

__attribute__((constructor)) static void pidlog_ctor(void)
{
    pidlog_note("exec");
    pthread_atfork(NULL, NULL, pidlog_child);
}
