/*
 * The refusals of `heapsift attach` and `detach`, told apart (attach_check.h). Before
 * anything is stopped, /proc/PID/status and Yama's ptrace_scope say most of what ptrace
 * would refuse: a zombie, another tracer (named), another user without CAP_SYS_PTRACE,
 * Yama at 2 or 3, a process that is not dumpable without CAP_SYS_PTRACE, seccomp strict
 * mode. What only shows when PTRACE_SEIZE fails (EPERM: Yama at 1, this command's own
 * seccomp filter) is diagnosed afterwards. Each is one line and a documented exit
 * status; the target is not touched. Called by attach.c only.
 */
#define _GNU_SOURCE
#include "attach_check.h"
#include "kit/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define AT_YAMA "/proc/sys/kernel/yama/ptrace_scope"
#define AT_CAP_SYS_PTRACE 19

/* The value of field (e.g. "TracerPid") in /proc/PID/status ("self" when pid is 0). */
static bool at_status_field(pid_t pid, const char *field, char *val, size_t cap)
{
    char path[64], line[512];
    size_t n = strlen(field);
    bool found = false;
    if (pid)
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    else
        snprintf(path, sizeof(path), "/proc/self/status");
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    while (!found && fgets(line, sizeof(line), f)) {
        if (strncmp(line, field, n) != 0 || line[n] != ':')
            continue;
        const char *v = line + n + 1;
        v += strspn(v, " \t");
        snprintf(val, cap, "%.*s", (int)strcspn(v, "\n"), v);
        found = true;
    }
    fclose(f);
    return found;
}

static long at_status_long(pid_t pid, const char *field, long dflt)
{
    char v[64];
    return at_status_field(pid, field, v, sizeof(v)) ? strtol(v, NULL, 0) : dflt;
}

static bool at_have_cap_ptrace(void)
{
    char v[64];
    if (!at_status_field(0, "CapEff", v, sizeof(v)))
        return geteuid() == 0;
    return (strtoull(v, NULL, 16) >> AT_CAP_SYS_PTRACE) & 1;
}

/* Yama's ptrace_scope, or -1 without Yama. */
static int at_yama(void)
{
    FILE *f = fopen(AT_YAMA, "r");
    int v = -1;
    if (!f)
        return -1;
    if (fscanf(f, "%d", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

int hs_attach_seccomp(pid_t pid)
{
    return (int)at_status_long(pid, "Seccomp", -1);
}

static void at_comm(pid_t pid, char *name, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "r");
    name[0] = '\0';
    if (f) {
        if (fgets(name, (int)cap, f))
            name[strcspn(name, "\n")] = '\0';
        fclose(f);
    }
    if (!name[0])
        snprintf(name, cap, "?");
}

/* ptrace's own rule (PTRACE_MODE_REALCREDS): this command's real uid and gid equal the
 * target's real, effective and saved ones, or it has CAP_SYS_PTRACE. */
static bool at_other_user(pid_t pid, unsigned *their)
{
    char v[128];
    unsigned u[3], g[3];
    if (!at_status_field(pid, "Uid", v, sizeof(v)) ||
        sscanf(v, "%u %u %u", &u[0], &u[1], &u[2]) != 3 ||
        !at_status_field(pid, "Gid", v, sizeof(v)) ||
        sscanf(v, "%u %u %u", &g[0], &g[1], &g[2]) != 3)
        return false;
    *their = u[0];
    for (int i = 0; i < 3; i++)
        if (u[i] != getuid() || g[i] != getgid())
            return true;
    return false;
}

static int at_yama_refuses(int scope, const char *verb)
{
    if (scope == 3)
        hs_cli_error("%s: Yama's ptrace_scope is 3 (%s): no process may be traced until the "
                     "next boot, so none can be attached",
                     verb, AT_YAMA);
    else if (scope == 2)
        hs_cli_error("%s: Yama's ptrace_scope is 2 (%s): only a process with CAP_SYS_PTRACE "
                     "may trace: run heapsift as root, or set it to 0 (sysctl "
                     "kernel.yama.ptrace_scope=0)",
                     verb, AT_YAMA);
    else
        hs_cli_error("%s: Yama's ptrace_scope is 1 (%s): a process may trace only its own "
                     "descendants: run heapsift as root, or set it to 0 (sysctl "
                     "kernel.yama.ptrace_scope=0)",
                     verb, AT_YAMA);
    return HS_AT_FAIL;
}

/* Not dumpable (a set-user-ID program, or prctl(PR_SET_DUMPABLE, 0)): the files under
 * its /proc/PID belong to root whatever its uid (the directory too on some kernels, not
 * on this machine's 6.1), so its maps cannot be read, and ptrace needs CAP_SYS_PTRACE. */
static bool at_not_dumpable(pid_t pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    return stat(path, &st) == 0 && st.st_uid == 0 && at_status_long(pid, "Uid", 0) != 0;
}

static int at_not_dumpable_refuses(pid_t pid, const char *verb)
{
    hs_cli_error("%s: ptrace refused: process %d is not dumpable (a set-user-ID program, "
                 "or prctl(PR_SET_DUMPABLE, 0)): run heapsift as root",
                 verb, (int)pid);
    return HS_AT_FAIL;
}

int hs_attach_check_access(pid_t pid, const char *verb)
{
    char state[64] = "";
    unsigned uid;
    at_status_field(pid, "State", state, sizeof(state));
    /* the leader's state: Z with other threads alive is a main thread that called
     * pthread_exit, not a process that has exited */
    long threads = at_status_long(pid, "Threads", 1);
    if ((state[0] == 'Z' || state[0] == 'X') && threads <= 1) {
        hs_cli_error("%s: process %d has exited (a zombie its parent has not reaped)", verb,
                     (int)pid);
        return HS_AT_TARGET;
    }
    if (state[0] == 'Z' || state[0] == 'X') {
        hs_cli_error("%s: process %d's main thread has ended (pthread_exit) while its other "
                     "threads run: its /proc/PID/maps is empty, so it cannot be attached",
                     verb, (int)pid);
        return HS_AT_TARGET;
    }
    long tracer = at_status_long(pid, "TracerPid", 0);
    if (tracer > 0) {
        char name[64];
        at_comm((pid_t)tracer, name, sizeof(name));
        hs_cli_error("%s: process %d is traced already by process %ld (%s), and a process has "
                     "one tracer: end or detach that one first",
                     verb, (int)pid, tracer, name);
        return HS_AT_FAIL;
    }
    bool cap = at_have_cap_ptrace();
    if (!cap && at_other_user(pid, &uid)) {
        hs_cli_error("%s: process %d belongs to another user (uid %u; this command runs as "
                     "uid %u): ptrace needs the same user or CAP_SYS_PTRACE: run heapsift as "
                     "uid %u or as root",
                     verb, (int)pid, uid, (unsigned)getuid(), uid);
        return HS_AT_FAIL;
    }
    int scope = at_yama();
    if (scope >= 3 || (scope == 2 && !cap))
        return at_yama_refuses(scope, verb);
    if (!cap && at_not_dumpable(pid)) /* else its unreadable maps say "no glibc" */
        return at_not_dumpable_refuses(pid, verb);
    if (hs_attach_seccomp(pid) == 1) {
        hs_cli_error("%s: process %d runs in seccomp strict mode: any system call but read, "
                     "write, exit and sigreturn would kill it, so nothing can be loaded into it",
                     verb, (int)pid);
        return HS_AT_TARGET;
    }
    return HS_AT_OK;
}

int hs_attach_refused(pid_t pid, int rc, const char *verb)
{
    int scope = at_yama();
    bool cap = at_have_cap_ptrace();
    if (rc == -ESRCH)
        return hs_attach_died(pid, -1, "while its threads were being stopped");
    if (rc != -EPERM) {
        hs_cli_error("%s: cannot stop process %d: %s", verb, (int)pid, strerror(-rc));
        return HS_AT_FAIL;
    }
    if (scope >= 1 && !cap)
        return at_yama_refuses(scope, verb);
    if (!cap && at_not_dumpable(pid))
        return at_not_dumpable_refuses(pid, verb);
    if (hs_attach_seccomp(0) == 2) {
        hs_cli_error("%s: ptrace refused for process %d: this command runs under a seccomp "
                     "filter (a container's?) that may forbid ptrace",
                     verb, (int)pid);
        return HS_AT_FAIL;
    }
    hs_cli_error("%s: ptrace refused for process %d (EPERM), for none of the known reasons "
                 "(another tracer, another user, Yama, seccomp): a security module (SELinux, "
                 "AppArmor) may forbid it",
                 verb, (int)pid);
    return HS_AT_FAIL;
}

int hs_attach_died(pid_t pid, int st, const char *during)
{
    char how[160] = "";
    if (st != -1 && WIFEXITED(st))
        snprintf(how, sizeof(how), ": it exited with status %d", WEXITSTATUS(st));
    else if (st != -1 && WIFSIGNALED(st))
        snprintf(how, sizeof(how), ": it was killed by signal %d (%s)%s", WTERMSIG(st),
                 strsignal(WTERMSIG(st)),
                 WTERMSIG(st) == SIGSYS ? ", as a seccomp filter kills a forbidden system call"
                                        : "");
    hs_cli_error("attach: process %d ended %s%s; nothing is left to undo", (int)pid, during, how);
    return HS_AT_TARGET;
}
