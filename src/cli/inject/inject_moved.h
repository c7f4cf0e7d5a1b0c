/*
 * Whether a thread refused as a safe point has moved since (inject_moved.c): the ledger
 * of hs_thr_call's search. On a loaded machine a starved target does not run between two
 * stops, and stopping a refused thread again finds it where it was: such stops prove
 * nothing and must not use up the search's bounds. A refusal records, while the thread
 * is stopped, its CPU time (/proc schedstat) and its /proc syscall line (the system call
 * it is in, its arguments, sp and pc, or -1, sp and pc outside one). The thread has moved
 * once its CPU time has grown by more than its way back from the ptrace stop takes, or
 * once it is blocked or stopped with another line: a thread that ran a few microseconds
 * into another system call (a safe point, maybe) is told apart from one that only came
 * back from the stop, without stopping it. Both files are read without stopping anyone.
 */
#ifndef HS_CLI_INJECT_MOVED_H
#define HS_CLI_INJECT_MOVED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct hs_moved hs_moved_t;

/* A ledger for the threads of process pid (at most 4,096 refused ones); NULL without
 * memory (then every thread counts as moved). */
hs_moved_t *hs_moved_open(pid_t pid);
void hs_moved_close(hs_moved_t *m);
/* Records the refusal of tid, which is stopped under ptrace. */
void hs_moved_refused(hs_moved_t *m, pid_t tid);
/* Whether tid may have moved since its last refusal: true when it was never refused, or
 * its files cannot be read (stopping it again is the safe answer). */
bool hs_moved_since(hs_moved_t *m, pid_t tid);
/* Thread tid of pid's CPU time in ns (the first field of its /proc schedstat); false when
 * it cannot be read. */
bool hs_moved_cpu_ns(pid_t pid, pid_t tid, uint64_t *ns);

#endif
