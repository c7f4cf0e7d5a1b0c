/*
 * The spool's file layout (docs/postmortem.md), shared by the library that writes it
 * (the library's spool.c) and the reader that turns it into a profile (read_spool.c). All
 * fields are little-endian machine words of the writing process (x86-64, aarch64). Every
 * record carries a commit word, a checksum of its fields that is never 0, stored last
 * with release ordering: a reader takes a record whose commit word matches its fields,
 * and skips one whose word is 0 (being written, or freed) or does not match (torn, or
 * damaged). Header-only.
 */
#ifndef HS_SPOOL_FMT_H
#define HS_SPOOL_FMT_H

#include <stddef.h>
#include <stdint.h>

#define HS_SPOOL_MAGIC "HSSPOOL1" /* 8 bytes, no NUL */
#define HS_SPOOL_VERSION 1u
#define HS_SPOOL_HEADER_SIZE 4096u
#define HS_SPOOL_CMDLINE 2048u
#define HS_SPOOL_MAP_PATH 432u
#define HS_SPOOL_OUT_PATH 1024u
#define HS_SPOOL_STACK_MAX 256u /* frames: HEAPSIFT_DEPTH's bound */

/* The fixed part, written once at start; check covers every field before it. */
typedef struct {
    char magic[8];
    uint32_t version, header_size;
    uint64_t file_size;
    uint64_t pid;
    int64_t start_ns; /* CLOCK_REALTIME at start */
    uint64_t rate;
    uint64_t maps_off, maps_cap;     /* mapping records, hs_spool_map_t each */
    uint64_t stacks_off, stacks_cap; /* bytes of stack records */
    uint64_t live_off, live_cap;     /* live slots, hs_spool_live_t each */
    uint64_t check;
    /* Written as the process runs (each a word, atomically), not covered by check. */
    uint64_t maps_used;    /* records appended */
    uint64_t stacks_used;  /* bytes appended */
    uint64_t live_used;    /* slots ever handed out: the reader scans [0, live_used) */
    uint64_t live_dropped; /* samples that found no free slot (the spool was full) */
    uint64_t stacks_dropped;
    int64_t last_ns; /* CLOCK_REALTIME of the last stack or mapping appended */
    int64_t exit_ns; /* CLOCK_REALTIME of a normal exit (HEAPSIFT_KEEP_SPOOL=1); 0 = none */
    uint64_t cmdline_len;
    char cmdline[HS_SPOOL_CMDLINE]; /* argv, NUL-separated, cut at the bound */
    /* Added after version 1's first files, in what was zeros: a reader of those sees no
     * filter and no path. */
    /* CLOCK_REALTIME of an exit under a seccomp filter installed after start (a sandbox),
     * which let no profile be written; 0 = none; -1: such an exit of a process that
     * writes no exit profile anyway (no sample) */
    int64_t filtered_ns;
    char out_path[HS_SPOOL_OUT_PATH]; /* where the exit profile was to go; "" = unknown */
    /* HS_SPOOL_FORKED_COPY: a forked child's spool, a copy of its parent's rescue spool or
     * a spare (spool_child.c). Such a child may exec a program heapsift does not profile,
     * which leaves the copy behind: run recovers it only when the child exited under a
     * sandbox (filtered_ns > 0). HS_SPOOL_FORKED_CLONE: a raw clone's child's spare. */
    uint64_t forked;
    /* The inode of the writer's PID namespace (/proc/self/ns/pid); 0: not recorded (the
     * reader checks the pid as its own); HS_SPOOL_PIDNS_OTHER: a namespace not known, whose
     * pid cannot be checked from outside. A pid of another namespace names another
     * process in the reader's: such a spool is taken for ended. */
    uint64_t pid_ns;
    /* A spare's number plus one, 0 for a process's own spool. A spare is made, without a
     * magic, by the init of a PID namespace (Chromium's zygote) and taken by a child it
     * made with a raw clone, which runs no fork handler and, once sandboxed, cannot create
     * a file (or by a forked child that cannot create its copy): the child fills it in as
     * its spool. */
    uint64_t spare;
    /* With filtered_ns > 0: 1 when the sandbox was assumed, not seen (sandbox.h: a raw
     * clone's child, or a process that could not open its status): the process could not
     * tell whether the calls that write a profile would be refused, so it made none. */
    uint64_t sandbox_assumed;
} hs_spool_header_t;

#define HS_SPOOL_FORKED_COPY 1u  /* a forked child's copy of its parent's rescue spool */
#define HS_SPOOL_FORKED_CLONE 2u /* a raw clone's child, in a spare of its parent's */
#define HS_SPOOL_PIDNS_OTHER UINT64_MAX

_Static_assert(sizeof(hs_spool_header_t) <= HS_SPOOL_HEADER_SIZE, "spool header too big");

typedef struct {
    uint64_t commit;
    uint64_t start, limit, offset;
    char build_id[48]; /* lowercase hex, NUL-terminated */
    char path[HS_SPOOL_MAP_PATH];
} hs_spool_map_t;

/* A stack record: this, then depth words of return addresses (innermost first). Records
 * are appended one at a time under a lock, so only the last one can be torn. */
typedef struct {
    uint64_t commit;
    int32_t id;
    uint32_t depth;
} hs_spool_stack_t;

typedef struct {
    uint64_t commit; /* 0: free or being written */
    uint64_t addr, size;
    double weight;
    int32_t stack_id;
    uint32_t pad;
} hs_spool_live_t;

/* The commit word of words[0..n): a 64-bit mix of them and a salt per record kind, never
 * 0. */
static inline uint64_t hs_spool_sum(uint64_t salt, const uint64_t *w, size_t n)
{
    uint64_t h = salt ^ 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h ? h : 1;
}

#define HS_SPOOL_SALT_HEADER 0x68647231ull
#define HS_SPOOL_SALT_MAP 0x6d617031ull
#define HS_SPOOL_SALT_STACK 0x73746b31ull
#define HS_SPOOL_SALT_LIVE 0x6c697631ull

/* The commit words of each record kind, over the words that follow the commit word. */
static inline uint64_t hs_spool_header_sum(const hs_spool_header_t *h)
{
    return hs_spool_sum(HS_SPOOL_SALT_HEADER, (const uint64_t *)h,
                        offsetof(hs_spool_header_t, check) / 8);
}

static inline uint64_t hs_spool_map_sum(const hs_spool_map_t *m)
{
    return hs_spool_sum(HS_SPOOL_SALT_MAP, (const uint64_t *)m + 1, sizeof(*m) / 8 - 1);
}

static inline uint64_t hs_spool_stack_sum(const hs_spool_stack_t *s, const uint64_t *pcs)
{
    uint64_t idw = (uint64_t)(uint32_t)s->id | (uint64_t)s->depth << 32;
    return hs_spool_sum(HS_SPOOL_SALT_STACK ^ idw, pcs, s->depth);
}

static inline uint64_t hs_spool_live_sum(const hs_spool_live_t *l)
{
    return hs_spool_sum(HS_SPOOL_SALT_LIVE, (const uint64_t *)l + 1, sizeof(*l) / 8 - 1);
}

#endif
