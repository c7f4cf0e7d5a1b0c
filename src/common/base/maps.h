/*
 * Memory mappings of a process (/proc/PID/maps), with the GNU build id of each mapped
 * ELF file: the raw material of pprof's Mapping table. Reads only /proc and the files'
 * ELF notes; allocates with malloc (callers in the profiled process hold the guard).
 */
#ifndef HS_MAPS_H
#define HS_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    uint64_t start, limit; /* [start, limit) */
    uint64_t offset;       /* file offset of start */
    char *path;            /* "" for anonymous mappings, "[stack]" etc. for special ones */
    char build_id[65];     /* lowercase hex, "" when absent (or not read yet) */
    bool readable, writable, executable;
    bool id_read; /* build_id is the file's (not left for hs_maps_build_id) */
    uint64_t inode;
    dev_t dev;
} hs_map_t;

typedef struct hs_maps {
    hs_map_t *maps;
    size_t n;
} hs_maps_t;

/* What a maps line holds beyond hs_map_t: its permissions as written ("r-xp"), the
 * identity of the file, and the path, not copied (up to the line's end). */
typedef struct {
    char perms[5];
    uint64_t inode;
    dev_t dev;
    const char *path;
    size_t pathlen;
} hs_maps_line_t;

/* Parses one line of /proc/PID/maps, or a mapping's first line in smaps, in [p, end)
 * (no newline): fills m (its path and build id left empty) and x. false if it is not
 * one. It does not allocate. */
bool hs_maps_parse_line(const char *p, const char *end, hs_map_t *m, hs_maps_line_t *x);

/* Reads /proc/PID/maps (pid 0 = self). Build ids are read once per distinct file.
 * Returns 0 or -errno. */
int hs_maps_read(pid_t pid, hs_maps_t *out);
/* The same without the build ids, which hs_maps_build_id reads when asked: a profile
 * names the few files its addresses lie in, where a process maps a dozen or more (each
 * read is an open and some ten system calls). */
int hs_maps_read_lazy(pid_t pid, hs_maps_t *out);
/* /proc/self/maps as read once, in pages of its own (mmap'd, not the allocator's): a
 * dump reads it before anything else, and both its accounting and its mappings use it. */
typedef struct {
    char *text; /* NUL-terminated */
    size_t len, size;
} hs_maps_text_t;
/* Reads the text into t (empty on failure). Returns 0 or -errno. */
int hs_maps_text_read(hs_maps_text_t *t);
void hs_maps_text_free(hs_maps_text_t *t);
/* As hs_maps_read_lazy(0, out), from a text hs_maps_text_read read. */
int hs_maps_parse_self(const char *text, size_t len, hs_maps_t *out);
/* The build id of mapping map of m (read by hs_maps_read_lazy for pid), read now if it
 * was not, and given to every mapping of the same file. */
const char *hs_maps_build_id(pid_t pid, hs_maps_t *m, hs_map_t *map);
/* The mapping containing addr, or NULL. Requires out sorted by start (as read). */
const hs_map_t *hs_maps_find(const hs_maps_t *m, uint64_t addr);
void hs_maps_free(hs_maps_t *m);

/* Reads the GNU build id note of the ELF file path into hex (65 bytes). true if found. */
bool hs_elf_build_id(const char *path, char *hex, size_t hexlen);

#endif
