/*
 * What `heapsift attach` and `detach` check about a process before stopping it, and how
 * a refusal is told to the user (attach_check.c). Each refusal is one line on stderr and
 * one of the exit statuses below; nothing here touches the target.
 */
#ifndef HS_CLI_ATTACH_CHECK_H
#define HS_CLI_ATTACH_CHECK_H

#include <stdbool.h>
#include <sys/types.h>

/* attach's and detach's exit statuses, as their help says. */
enum { HS_AT_OK = 0, HS_AT_USAGE = 1, HS_AT_TARGET = 2, HS_AT_FAIL = 3 };

/* Refusals known before ptrace is tried: a zombie (2), another tracer (3), another user
 * without CAP_SYS_PTRACE (3), Yama's ptrace_scope 3, or 2 without CAP_SYS_PTRACE (3), a
 * process that is not dumpable without CAP_SYS_PTRACE (3), seccomp strict mode (2).
 * HS_AT_OK or the status (said, prefixed with verb). */
int hs_attach_check_access(pid_t pid, const char *verb);
/* A failure to stop pid (hs_inject_open's rc) told apart: -EPERM is diagnosed (Yama's
 * ptrace_scope 1, a process that is not dumpable, this command's own seccomp filter),
 * -ESRCH is an exit. Returns the exit status (said). */
int hs_attach_refused(pid_t pid, int rc, const char *verb);
/* The Seccomp field of /proc/PID/status: 0 none, 1 strict, 2 filter, -1 unknown. */
int hs_attach_seccomp(pid_t pid);
/* The process died during the attach: one line with its status (wait status st, or -1),
 * and the seccomp filter named when a SIGSYS killed it. Returns HS_AT_TARGET. */
int hs_attach_died(pid_t pid, int st, const char *during);

#endif
