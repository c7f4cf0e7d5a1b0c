/*
 * seccomp_target: a running process under a seccomp filter, for attach_seccomp.sh. It
 * installs a filter (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)) that makes open and
 * openat fail with EPERM (or, with --trap, raise SIGSYS: SECCOMP_RET_TRAP) and allows
 * every other system call, prints "ready", then waits until DIR/end exists, prints "bye"
 * and exits 0. A SIGSYS that reached it would kill it (the default action), so its exit
 * status says whether an attach left one behind.
 *
 * usage: seccomp_target DIR [--trap]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int install(int trap)
{
    unsigned ret = trap ? SECCOMP_RET_TRAP : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, ret),
    };
    struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
    char end[4096];
    if (argc < 2) {
        fprintf(stderr, "usage: seccomp_target DIR [--trap]\n");
        return 2;
    }
    snprintf(end, sizeof(end), "%s/end", argv[1]);
    if (install(argc > 2 && strcmp(argv[2], "--trap") == 0) != 0) {
        fprintf(stderr, "seccomp_target: cannot install the filter: %s\n", strerror(errno));
        return 3;
    }
    printf("ready\n");
    fflush(stdout);
    while (access(end, F_OK) != 0) {
        struct timespec d = {0, 10000000};
        nanosleep(&d, NULL);
    }
    printf("bye\n");
    return 0;
}
