/*
 * later_stop: whether heapsift asks the dynamic loader anything while it holds the
 * program's other threads stopped, for reach_hooks.sh. A loader call there can wait for
 * ever: a stopped thread may hold the loader's lock (a dlopen running its library's
 * constructors), and dladdr, dlsym and dl_iterate_phdr take it. heapsift stops the other
 * threads while it hooks an allocator in a library loaded later.
 *
 * A thread of its own spins for the whole run, no signal blocked; the only thing that
 * runs a signal handler in it is heapsift's stop, which holds it there (its SigBlk in
 * /proc then shows the signal) from before it reports itself stopped to its release. This program
 * defines dladdr, dladdr1 and dl_iterate_phdr (exported: -rdynamic), which heapsift's calls reach
 * first: each counts the calls made while the spinner is in that handler, then calls glibc's. It
 * loads LIB with dlopen, allocates once (heapsift's sampled path looks at the new library and hooks
 * its allocator API, the spinner stopped), calls FUNCTION, and prints "later_stop: N loader calls
 * while the other thread was stopped".
 *
 * usage: later_stop LIB@FUNCTION
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int spinning = 1;
static int spinner_tid;
static int stopped_calls;

/* Whether the spinner runs a signal handler now: its blocked set (SigBlk in
 * /proc/self/task/TID/status) is empty while it spins, and holds the signal being handled
 * from the handler's entry to its return. heapsift's stop holds each stopped thread in its
 * handler from before it reports itself stopped until after it is released, so a call
 * made while the spinner is stopped always sees the bit. 0, 1, or -1 when unreadable. No
 * allocation: heapsift may call in with its guard held. */
static int spinner_in_handler(void)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/self/task/%d/status", spinner_tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nSigBlk:");
    if (!p)
        return -1;
    for (p += 8; *p == ' ' || *p == '\t'; p++)
        ;
    for (; *p && *p != '\n'; p++)
        if (*p != '0')
            return 1;
    return 0;
}

static void note_call(void)
{
    int tid = __atomic_load_n(&spinner_tid, __ATOMIC_ACQUIRE);
    if (tid && tid != (int)syscall(SYS_gettid) && spinner_in_handler() != 0)
        __atomic_add_fetch(&stopped_calls, 1, __ATOMIC_RELAXED);
}

__attribute__((visibility("default"))) int dladdr(const void *addr, Dl_info *info)
{
    static int (*real)(const void *, Dl_info *);
    if (!real)
        real = (int (*)(const void *, Dl_info *))dlsym(RTLD_NEXT, "dladdr");
    note_call();
    return real(addr, info);
}

__attribute__((visibility("default"))) int dladdr1(const void *addr, Dl_info *info, void **extra,
                                                   int flags)
{
    static int (*real)(const void *, Dl_info *, void **, int);
    if (!real)
        real = (int (*)(const void *, Dl_info *, void **, int))dlsym(RTLD_NEXT, "dladdr1");
    note_call();
    return real(addr, info, extra, flags);
}

__attribute__((visibility("default"))) int
dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    static int (*real)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
    if (!real)
        real = (int (*)(int (*)(struct dl_phdr_info *, size_t, void *), void *))dlsym(
            RTLD_NEXT, "dl_iterate_phdr");
    note_call();
    return real(cb, arg);
}

static void *spin(void *arg)
{
    (void)arg;
    __atomic_store_n(&spinner_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    while (spinning)
        ;
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th;
    char *fn = argc == 2 ? strchr(argv[1], '@') : NULL;
    if (!fn) {
        fprintf(stderr, "usage: later_stop LIB@FUNCTION\n");
        return 2;
    }
    *fn++ = '\0';
    if (pthread_create(&th, NULL, spin, NULL) != 0)
        return 1;
    while (!__atomic_load_n(&spinner_tid, __ATOMIC_ACQUIRE))
        sched_yield();
    if (spinner_in_handler() != 0) {
        fprintf(stderr, "later_stop: cannot read the spinner's blocked signals\n");
        return 1;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, fn) : NULL;
    if (!f) {
        fprintf(stderr, "later_stop: %s: %s\n", argv[1], dlerror());
        return 1;
    }
    free(malloc(64)); /* heapsift's sampled path looks at the library */
    int rc = ((int (*)(void))f)();
    spinning = 0;
    pthread_join(th, NULL);
    printf("later_stop: %d loader calls while the other thread was stopped\n",
           __atomic_load_n(&stopped_calls, __ATOMIC_RELAXED));
    return rc;
}
