/*
 * lonely: what a program sees of heapsift's threads, and how it ends
 * (tests/integration/own_threads.sh).
 *   lonely count        prints "threads N" (the tasks of /proc/self/task) at start, after
 *                       64 MiB of allocations at lonely_site (sampled), after a fork
 *                       (the child counts its own and exits 0), after heapsift_dump (when
 *                       the library is there), then exits 0
 *   lonely exit_mt N    starts a thread that waits, allocates 32 MiB at lonely_site (kept),
 *                       then calls _exit(N) from main
 *   lonely exit_st N    the same without the thread
 *   lonely exit_fork N  allocates 32 MiB at lonely_site, forks; the child calls _exit(N)
 *                       (single-threaded, as a shell's subshell does); the parent checks
 *                       its status and returns 0
 *   lonely vfork        a vfork child calls _exit(7); the parent checks its status, then
 *                       allocates at lonely_site and returns 0
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[64];

static long tasks(void)
{
    struct stat st;
    return stat("/proc/self/task", &st) == 0 ? (long)st.st_nlink - 2 : -1;
}

__attribute__((noinline)) static void lonely_site(int mib)
{
    for (int i = 0; i < mib && i < 64; i++) {
        keep[i] = malloc(1 << 20);
        memset(keep[i], i, 1 << 20);
    }
}

static void *waiter(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int count(void)
{
    printf("threads %ld\n", tasks());
    lonely_site(64);
    printf("threads %ld\n", tasks());
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("threads %ld\n", tasks());
        fflush(stdout);
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heapsift_dump");
    if (dump)
        dump(NULL);
    printf("threads %ld\n", tasks());
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "count";
    int code = argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(mode, "count") == 0)
        return count();
    if (strcmp(mode, "exit_mt") == 0 || strcmp(mode, "exit_st") == 0) {
        pthread_t th;
        if (mode[5] == 'm' && pthread_create(&th, NULL, waiter, NULL) != 0)
            return 2;
        lonely_site(32);
        _exit(code);
    }
    if (strcmp(mode, "exit_fork") == 0) {
        lonely_site(32);
        pid_t pid = fork();
        if (pid == 0)
            _exit(code);
        int st = 0;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) && WEXITSTATUS(st) == code ? 0 : 3;
    }
    if (strcmp(mode, "vfork") == 0) {
        pid_t pid = vfork();
        if (pid == 0)
            _exit(7);
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 7)
            return 3;
        lonely_site(8);
        return 0;
    }
    return 1;
}
