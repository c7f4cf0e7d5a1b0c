/*
 * ctor_wait.so: a library whose constructor keeps the thread that dlopens it inside the
 * loader (no safe point for attach), for tests/integration/attach_moved.sh. CTOR_FIFO=PATH:
 * it blocks in open(2) of that fifo until a writer comes (a call the kernel restarts
 * after each ptrace stop, unseen by the program: the thread stays exactly where it was).
 * CTOR_EINTR=N: it waits in epoll_wait(2) on a pipe nobody writes, which each ptrace stop
 * ends with EINTR, and returns after the N-th such stop (having run a few microseconds
 * since: the thread then blocks in the program's read(2), a safe point).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

static void ctor_eintr(int n)
{
    int p[2], ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    if (ep < 0 || pipe(p) != 0 || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) != 0)
        _exit(4);
    for (int seen = 0; seen < n;)
        if (epoll_wait(ep, &ev, 1, -1) < 0 && errno == EINTR)
            seen++;
    close(p[0]);
    close(p[1]);
    close(ep);
}

__attribute__((constructor)) static void ctor_wait(void)
{
    const char *fifo = getenv("CTOR_FIFO"), *eintr = getenv("CTOR_EINTR");
    char c;
    if (fifo) {
        int fd = open(fifo, O_RDONLY);
        if (fd < 0 || read(fd, &c, 1) < 0)
            _exit(3);
        close(fd);
    }
    if (eintr)
        ctor_eintr(atoi(eintr));
}
