/*
 * fork_stdio: forks while other threads are inside dprintf, whose FILE lives on their
 * stacks and sits in glibc's stdio list while they print. Each child calls heapsift_dump
 * (which may start a thread of heapsift's) and exit(0), which flushes that list: a thread
 * started in the child on a stack from glibc's cache (the parent threads' stacks) would
 * overwrite the FILE, and exit would abort ("glibc detected an invalid stdio handle").
 * tests/stress/fork_stdio.sh runs it.
 *   fork_stdio N DIR   N children; prints "killed=K" (children ended by a signal) and
 *                      exits 1 when K > 0
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern int heapsift_dump(const char *path) __attribute__((weak));

static volatile int stop;
static int devnull;

static void *printer(void *arg)
{
    long id = (long)arg;
    while (!stop)
        dprintf(devnull, "thread %ld prints a line of some length %d %s\n", id, 42, "abc");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fork_stdio N DIR\n");
        return 2;
    }
    int n = atoi(argv[1]), killed = 0;
    devnull = open("/dev/null", O_WRONLY);
    pthread_t th[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, printer, (void *)i);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/child.%d.pb.gz", argv[2], (int)getpid());
            if (heapsift_dump)
                heapsift_dump(path);
            exit(0);
        }
        int st = 0;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
            killed++;
    }
    stop = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    printf("killed=%d of %d\n", killed, n);
    return killed > 0;
}
