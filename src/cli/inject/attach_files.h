/*
 * The files `heapsift attach` puts where the target can open them (attach_files.c): a
 * fresh directory /tmp/heapsift-attach-XXXXXX in the target's filesystem holding the
 * library it dlopens (a symlink to ours, or a copy when the target sees another
 * filesystem: a mount namespace, a chroot), copies of the libraries it needs that the
 * target lacks (attach_deps.h), and the options file.
 */
#ifndef HS_CLI_ATTACH_FILES_H
#define HS_CLI_ATTACH_FILES_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    char root[64];      /* "" when the target sees our files, else "/proc/PID/root" */
    char dir[64];       /* the directory as the target sees it ("" before it is made) */
    char lib[PATH_MAX]; /* what the target dlopens, as it sees it */
    char opt[PATH_MAX]; /* the options file, as the target sees it */
    bool copied;        /* lib is a copy in the target's filesystem: it stays there */
    char deps[256];     /* the libraries copied beside it, which stay (attach_deps.h) */
} hs_attach_files_t;

/* Whether pid sees our library file and our /tmp (the same files: dev and inode through
 * /proc/PID/root); false when it is in another mount namespace or a chroot. */
bool hs_attach_files_shared(pid_t pid, const char *lib);
/* Makes the directory (in pid's filesystem when !shared), the library in it and the
 * options file from this environment's HEAPSIFT_* variables. A copy loaded by an earlier
 * attach is reused, so dlopen finds the same file (one copy of the library). 0 or an
 * exit status (said). */
int hs_attach_files_make(pid_t pid, const char *lib, bool shared, hs_attach_files_t *f);
/* Whether every heapsift library pid maps is the one this attach would load (ours, or
 * the copy of it make reuses): a second library would hook over the first, and a detach
 * could end only one. HS_AT_OK, or HS_AT_TARGET (said, naming the other file). */
int hs_attach_files_loaded(pid_t pid, const char *lib, bool shared);
/* Copies the file from to to (mode 0755). 0 or -errno. */
int hs_attach_copy_file(const char *from, const char *to);
/* Removes what make made, but a copy of the library and of what it needs (the target
 * maps them). */
void hs_attach_files_remove(hs_attach_files_t *f);

#endif
