/*
 * ptrace injection for `heapsift attach` (x86-64): stop every thread of a process, run a
 * function of the target on one stopped thread, find a mapped file's exported symbols,
 * read and write the target's memory, and let every thread go. It knows nothing about
 * heapsift's library; attach.c owns what is called. Every function here leaves the target
 * running when it fails: a session that could not stop the process detaches what it
 * seized before returning.
 */
#ifndef HS_CLI_PTRACE_INJECT_H
#define HS_CLI_PTRACE_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    pid_t tid;
    int sig; /* a signal that stopped it meanwhile, delivered at detach */
    bool seized;
    bool stopped; /* its PTRACE_INTERRUPT stop was waited for */
} hs_inject_thread_t;

typedef struct {
    pid_t pid;
    hs_inject_thread_t *t;
    size_t n;
    bool died;  /* the target exited during a call */
    int status; /* then the leader's wait status, when it was seen; else -1 */
    int sigsys; /* SIGSYS stops during calls (a seccomp filter's SECCOMP_RET_TRAP), dropped */
} hs_inject_sess_t;

/* A call of fn(a[0..na-1]) in the target. data (len bytes) is copied onto the target's
 * stack first, at the address hs_inject_data_addr gives for the same thread and len. */
typedef struct {
    uintptr_t fn;
    uint64_t a[6];
    int na;
    const void *data; /* copied onto the target's stack; its address is data_addr */
    size_t len;
    uintptr_t data_addr;
    void *back; /* the data's bytes after the call, read back (len bytes) */
    uint64_t ret;
} hs_inject_call_t;

int64_t hs_inject_now_ms(void);

/* Seizes and stops every thread of pid (one: the thread-group leader only), until a pass
 * over /proc/PID/task finds no new one. 0, or -ESRCH (gone), a refusal's errno (-EPERM),
 * -ENOMEM, -ETIMEDOUT; on failure nothing stays seized and s owns nothing. */
int hs_inject_open(hs_inject_sess_t *s, pid_t pid, bool one);
/* Lets every seized thread go (its kept signal delivered) and frees the session. */
void hs_inject_close(hs_inject_sess_t *s);
/* The thread to call on: the leader if seized, else the first seized one; NULL if none. */
hs_inject_thread_t *hs_inject_pick(hs_inject_sess_t *s);

/* Runs c in thread t, every register and stack byte it used restored after; c->ret is
 * rax. 0, or -ESRCH (the target died), -EFAULT (it faulted: a crash in the call). When
 * the call takes more than 5 s the other threads are let go and it is waited for. */
int hs_inject_call(hs_inject_sess_t *s, hs_inject_thread_t *t, hs_inject_call_t *c);
/* Where hs_inject_call will put len bytes of data on t's stack; false if t is gone. */
bool hs_inject_data_addr(const hs_inject_thread_t *t, size_t len, uint64_t *addr);
/* A stopped thread's program counter, and moving it. */
bool hs_inject_get_pc(const hs_inject_thread_t *t, uint64_t *pc);
bool hs_inject_set_pc(const hs_inject_thread_t *t, uint64_t pc);

/* Reads (or writes) n bytes at addr in pid. 0 or -EIO. */
int hs_inject_mem(pid_t pid, uintptr_t addr, void *buf, size_t n, bool write);
/* The first mapping (offset 0) of a file whose base name starts with prefix: its start and
 * path as the target sees it. */
bool hs_inject_map_find(pid_t pid, const char *prefix, uintptr_t *base, char *path, size_t cap);
/* The address in pid of the function name exported by the mapped file whose base name
 * starts with prefix (read through /proc/PID/root). */
bool hs_inject_remote_sym(pid_t pid, const char *prefix, const char *name, uintptr_t *addr);

#endif
