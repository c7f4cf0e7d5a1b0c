/*
 * Descriptor tables of heapsift's own threads (the trigger thread and the HTTP server).
 * Each starts by taking a table of its own (unshare(CLONE_FILES)), closing the copies of
 * the program's descriptors it came with and putting /dev/null on 0, 1 and 2. Then:
 *   - what the thread opens (profile files, sockets, libmicrohttpd's epoll) is invisible
 *     to the program: a loop closing every descriptor, a descriptor number reused for
 *     the program's own file, or a fork cannot make the thread read, write or close the
 *     program's files, nor the program the thread's;
 *   - the thread holds none of the program's files open (a pipe the program closes
 *     reaches end-of-file as without heapsift).
 * The thread's messages go to the program's stderr as it is at the time of the message,
 * opened through /proc/self/fd/2 (log.c).
 */
#define _GNU_SOURCE
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static void fd_close_all(void)
{
    if (syscall(SYS_close_range, 0u, ~0u, 0u) == 0)
        return;
    /* Kernels before 5.9: the numbers up to the limit (the table was copied with every
     * open descriptor under it). */
    struct rlimit rl;
    int max =
        getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1u << 20 ? (int)rl.rlim_cur : 1 << 20;
    for (int fd = 0; fd < max; fd++)
        close(fd);
}

int hs_fd_private(void)
{
    if (unshare(CLONE_FILES) != 0)
        return -errno;
    fd_close_all();
    int fd = open("/dev/null", O_RDWR);
    if (fd == 0) {
        dup2(0, 1);
        dup2(0, 2);
    }
    hs_tls.private_fds = 1;
    return 0;
}
