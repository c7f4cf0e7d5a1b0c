/*
 * attach_loader LIB: prints "ready", dlopens LIB (tests/programs/lib/ctor_wait.c, whose
 * constructor holds the thread inside the loader for a while), prints "loaded", then
 * reads stdin to its end, in read(2) calls of its own (a safe point), and prints "done".
 * ZOMBIE_TID=PATH: first a thread of its own ends while a child process traces it, which
 * never waits for it, so it stays in /proc/PID/task as a zombie (state Z) and a
 * PTRACE_SEIZE of it fails with EPERM; its tid is written to PATH. The child ends when
 * this process does. LATE_LIB=PATH LATE_FIFO=FIFO: a read that begins with 'L' dlopens
 * PATH (another copy of ctor_wait.c) with CTOR_FIFO=FIFO, holding the thread in the
 * loader again, after an attach (printing nothing). The target of
 * tests/integration/attach_moved.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

static int go[2];  /* the thread's: a byte lets it end */
static pid_t ztid; /* its tid */

static void *zombie(void *arg)
{
    char c;
    (void)arg;
    __atomic_store_n(&ztid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    return read(go[0], &c, 1) == 1 ? NULL : NULL;
}

/* The thread, traced by a child that never waits, ended: 0, or -1. */
static int make_zombie(const char *path)
{
    int seized[2], hold[2];
    pthread_t t;
    char c;
    if (pipe(go) || pipe(seized) || pipe(hold) || pthread_create(&t, NULL, zombie, NULL))
        return -1;
    while (!__atomic_load_n(&ztid, __ATOMIC_ACQUIRE))
        sched_yield();
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama at 1: the child may trace */
    pid_t child = fork();
    if (child == 0) {
        close(hold[1]);
        c = ptrace(PTRACE_SEIZE, ztid, 0, 0) == 0 ? 'y' : 'n';
        if (write(seized[1], &c, 1) != 1)
            _exit(1);
        while (read(hold[0], &c, 1) > 0) /* until this process ends */
            ;
        _exit(0);
    }
    close(hold[0]); /* hold[1] stays open until this process ends */
    if (child < 0 || read(seized[0], &c, 1) != 1 || c != 'y' || write(go[1], "x", 1) != 1)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%d\n", (int)ztid) < 0 || fclose(f) != 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    char buf[64];
    if (argc < 2)
        return 2;
    if (getenv("ZOMBIE_TID") && make_zombie(getenv("ZOMBIE_TID")) != 0)
        return 5;
    printf("ready\n");
    fflush(stdout);
    if (!dlopen(argv[1], RTLD_NOW))
        return 1;
    printf("loaded\n");
    fflush(stdout);
    ssize_t n;
    while ((n = read(0, buf, sizeof(buf))) > 0)
        if (buf[0] == 'L' && getenv("LATE_LIB") && getenv("LATE_FIFO") &&
            (setenv("CTOR_FIFO", getenv("LATE_FIFO"), 1) != 0 ||
             !dlopen(getenv("LATE_LIB"), RTLD_NOW)))
            return 6;
    printf("done\n");
    return 0;
}
