/*
 * gotslot.c on this test's own import slots: getpid, getppid and getuid are imported from
 * libc through the PLT. Redirecting getpid makes its calls reach a hook; detach's
 * hs_got_remove_all gives the slot back its old value, re-attach's hs_got_restore_all the
 * hook again. getppid is redirected before its first call: its PLT slot is not bound yet
 * (this test is linked for lazy binding), and is rewritten all the same. getuid, named with
 * getgid's address, is left alone: its slot is not bound yet either, and the global lookup
 * finds another definition. A definition in the executable is refused (-EXDEV): its own
 * calls would bypass the slots.
 */
#define _GNU_SOURCE
#include "check.h"
#include "reach/gotslot.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)

static pid_t gs_hook_pid(void)
{
    return 424242;
}

static pid_t gs_hook_ppid(void)
{
    return 434343;
}

static uid_t gs_hook_uid(void)
{
    return 454545;
}

__attribute__((noinline)) int gs_local(void)
{
    return 1;
}

int main(void)
{
    pid_t pid = (pid_t)syscall(SYS_getpid), ppid = (pid_t)syscall(SYS_getppid);
    uid_t uid = (uid_t)syscall(SYS_getuid); /* getuid's own slot stays unbound until below */
    CHECK(hs_got_redirect("gs_local", (void *)gs_local, (void *)gs_hook_pid, NULL) == -EXDEV,
          "a definition in the executable was not refused");
    CHECK(getpid() == pid, "getpid before any redirection");
    int n = hs_got_redirect("getpid", (void *)getpid, (void *)gs_hook_pid, NULL);
    CHECK(n >= 1, "getpid: %d slots rewritten", n);
    CHECK(getpid() == 424242, "getpid did not reach the hook");
    /* its address from dlsym: &getppid would add a slot the loader binds at once */
    n = hs_got_redirect("getppid", dlsym(RTLD_DEFAULT, "getppid"), (void *)gs_hook_ppid, NULL);
    CHECK(n >= 1, "getppid (never called): %d slots rewritten", n);
    CHECK(getppid() == 434343, "getppid did not reach the hook");
    n = hs_got_redirect("getuid", (void *)getgid, (void *)gs_hook_uid, NULL);
    CHECK(n == 0, "getuid, bound to another definition: %d slots rewritten", n);
    CHECK(getuid() == uid, "getuid changed");
    size_t count = hs_got_count();
    CHECK(count >= 2, "%zu slots recorded", count);

    CHECK(hs_got_remove_all() == 0, "remove_all");
    CHECK(getpid() == pid, "getpid after remove_all: not the real one");
    CHECK(getppid() == ppid, "getppid after remove_all: not the real one");
    CHECK(hs_got_restore_all() == 0, "restore_all");
    CHECK(getpid() == 424242 && getppid() == 434343, "the hooks are not back after restore_all");
    CHECK(hs_got_count() == count, "restore_all changed the record (%zu, was %zu)", hs_got_count(),
          count);
    CHECK(hs_got_remove_all() == 0 && getpid() == pid, "the second remove_all");
    return hs_check_done("test_gotslot");
}

#else
int main(void)
{
    printf("SKIP: x86-64 only\n");
    return 77;
}
#endif
