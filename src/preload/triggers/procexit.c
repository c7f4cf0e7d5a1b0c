/*
 * _exit and _Exit, exported by libheapsift.so:
 *   - a thread ending the process while a terminating signal's exit profiles are being
 *     written waits for them and dies of the signal, as the process would have without
 *     heapsift (termsig.c says when);
 *   - a process of several threads of the program's writes its exit profile, as at exit:
 *     Chromium's renderers and GPU process end so (_exit(0) once the browser has gone),
 *     and would otherwise leave none. So does a single-threaded one that is the process
 *     the library started in (Firefox's crashhelper, once it has forked its daemon), but
 *     not a forked child (a shell's subshell, the child of a fork whose exec failed), a
 *     vfork child, which shares its parent's memory and must touch none of it, nor a raw
 *     clone's (lifecycle.h).
 * Under a sandbox (sandbox.h) the count comes from the status descriptor instead, since
 * the sandbox refuses the stat. Such a process's rescue spool (heapsift run's) goes too: no
 * profile, as without one. Otherwise they are glibc's: exit_group. The single-threaded case costs
 * one stat of /proc/self/task, on the stack (its link count is 2 plus one per thread), and writes
 * to no other memory. Like interpose.c, only in the shared library: a unit test linking the
 * recorder's internals keeps glibc's.
 */
#define _GNU_SOURCE
#include "runtime/core.h"
#include "lifecycle.h"
#include "runtime/sandbox.h"
#include "termsig.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static __attribute__((noreturn)) void procexit_now(int status)
{
    struct stat st;
    int threads = -1;
    hs_termsig_exiting();
    if (hs_sandbox_entered()) { /* stat is refused there (Firefox's broker: ENOENT) */
        threads = hs_sandbox_threads();
        if (threads < 0) {
            hs_exit_uncounted();
            for (;;)
                syscall(SYS_exit_group, status);
        }
    } else if (stat("/proc/self/task", &st) == 0)
        threads = (int)st.st_nlink - 2;
    if (threads > 1)
        hs_exit_call(threads);
    else
        hs_exit_single();
    for (;;)
        syscall(SYS_exit_group, status);
}

HS_EXPORT void _exit(int status)
{
    procexit_now(status);
}

HS_EXPORT void _Exit(int status)
{
    procexit_now(status);
}
