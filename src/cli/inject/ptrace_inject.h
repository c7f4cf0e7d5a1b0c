/*
 * A target's memory, maps and exported symbols, for `heapsift attach` (ptrace_inject.c).
 * It knows nothing about heapsift's library, and stops nothing: running code in the
 * target is inject_thread.h's.
 */
#ifndef HS_CLI_PTRACE_INJECT_H
#define HS_CLI_PTRACE_INJECT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int64_t hs_inject_now_ms(void);

/* Reads (or writes) n bytes at addr in pid. 0 or -EIO. */
int hs_inject_mem(pid_t pid, uintptr_t addr, void *buf, size_t n, bool write);
/* The first mapping (offset 0) of a file whose base name starts with prefix: its start and
 * path as the target sees it. */
bool hs_inject_map_find(pid_t pid, const char *prefix, uintptr_t *base, char *path, size_t cap);
/* The address in pid of the function name exported by the mapped file whose base name
 * starts with prefix (read through /proc/PID/root). */
bool hs_inject_remote_sym(pid_t pid, const char *prefix, const char *name, uintptr_t *addr);

/* A file's first mapping (offset 0) in a target. */
typedef struct {
    uintptr_t lo, hi;
    char path[PATH_MAX]; /* as the target sees it, without " (deleted)" */
    bool deleted;        /* removed or replaced since it was mapped */
} hs_inject_map_t;
/* The nth (from 0) file whose base name starts with prefix mapped in pid, deleted ones
 * included. */
bool hs_inject_map_nth(pid_t pid, const char *prefix, unsigned nth, hs_inject_map_t *m);
/* Where this process opens m's file: /proc/PID/root and its path, or, once deleted,
 * /proc/PID/map_files/LO-HI (the mapped file itself). */
void hs_inject_map_host(pid_t pid, const hs_inject_map_t *m, char *out, size_t cap);
/* The address in pid of the function name exported by m's file. */
bool hs_inject_map_sym(pid_t pid, const hs_inject_map_t *m, const char *name, uintptr_t *addr);

#endif
