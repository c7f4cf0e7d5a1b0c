/*
 * The ledger of inject_moved.h: an open-addressing table from tid to the thread's CPU
 * time and /proc syscall line (hashed) at its last refusal.
 */
#define _GNU_SOURCE
#include "inject_moved.h"
#include "base/fileio.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MOVED_SLOTS 8192 /* twice the threads hs_thr_call looks at: probes stay short */
/* CPU time a refused thread must have used since to count as moved (when its syscall line
   does not tell): more than the way back from a ptrace stop to user mode takes, less than
   any time slice. */
#define MOVED_RAN_NS 200000

typedef struct {
    pid_t tid;     /* 0: a free slot */
    uint64_t ran;  /* CPU time (ns) at the refusal */
    uint64_t call; /* its syscall line's hash then */
} moved_slot_t;

struct hs_moved {
    pid_t pid;
    moved_slot_t slot[MOVED_SLOTS];
};

hs_moved_t *hs_moved_open(pid_t pid)
{
    hs_moved_t *m = calloc(1, sizeof(*m));
    if (m)
        m->pid = pid;
    return m;
}

void hs_moved_close(hs_moved_t *m)
{
    free(m);
}

/* Reads /proc/PID/task/TID/NAME into buf (cap bytes, NUL-terminated). Its length, or -1. */
static ssize_t moved_read(pid_t pid, pid_t tid, const char *name, char *buf, size_t cap)
{
    char path[80];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
    return hs_read_text(path, buf, cap);
}

bool hs_moved_cpu_ns(pid_t pid, pid_t tid, uint64_t *ns)
{
    char buf[96], *end;
    if (moved_read(pid, tid, "schedstat", buf, sizeof(buf)) < 0)
        return false;
    *ns = strtoull(buf, &end, 10);
    return end != buf;
}

/* The hash of tid's syscall line while it is blocked or stopped; 0 while it is runnable
 * ("running": the kernel tells only a thread off the CPU) or unknown. */
static uint64_t moved_call(const hs_moved_t *m, pid_t tid)
{
    char buf[256];
    ssize_t k = moved_read(m->pid, tid, "syscall", buf, sizeof(buf));
    if (k < 0 || strncmp(buf, "running", 7) == 0)
        return 0;
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (ssize_t i = 0; i < k; i++)
        h = (h ^ (uint8_t)buf[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* tid's slot: its own, else the free one where it goes; NULL when the table is full. */
static moved_slot_t *moved_slot(hs_moved_t *m, pid_t tid)
{
    size_t i = ((size_t)tid * 2654435761u) % MOVED_SLOTS;
    for (size_t n = 0; n < MOVED_SLOTS / 2; n++, i = (i + 1) % MOVED_SLOTS)
        if (m->slot[i].tid == tid || m->slot[i].tid == 0)
            return &m->slot[i];
    return NULL;
}

void hs_moved_refused(hs_moved_t *m, pid_t tid)
{
    moved_slot_t *e = m ? moved_slot(m, tid) : NULL;
    uint64_t ran;
    if (!e || !hs_moved_cpu_ns(m->pid, tid, &ran))
        return;
    e->tid = tid;
    e->ran = ran;
    e->call = moved_call(m, tid);
}

bool hs_moved_since(hs_moved_t *m, pid_t tid)
{
    moved_slot_t *e = m ? moved_slot(m, tid) : NULL;
    uint64_t ran, call;
    if (!e || e->tid != tid || !hs_moved_cpu_ns(m->pid, tid, &ran))
        return true;
    if (ran - e->ran >= MOVED_RAN_NS)
        return true;
    call = moved_call(m, tid);
    return call != 0 && call != e->call;
}
