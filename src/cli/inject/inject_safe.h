/*
 * Whether a thread of a target, stopped under ptrace, is at a point where a function that
 * allocates may be called on it (inject_safe.c): no frame of its stack inside the
 * allocator, the dynamic loader, fork or thread creation, unwound with elfutils' libdwfl
 * from its registers and the CFI of the objects it runs.
 */
#ifndef HS_CLI_INJECT_SAFE_H
#define HS_CLI_INJECT_SAFE_H

#include <stddef.h>
#include <sys/types.h>

typedef struct hs_safe hs_safe_t;

/* Reads the target's mappings; NULL (why says why) when the unwinder cannot start. */
hs_safe_t *hs_safe_open(pid_t pid, char *why, size_t cap);
void hs_safe_close(hs_safe_t *s);
/* 1 safe; 0 not (why names the frame, or the unwind that failed). */
int hs_safe_check(hs_safe_t *s, pid_t tid, char *why, size_t cap);

#endif
