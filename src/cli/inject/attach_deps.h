/*
 * The libraries libheapsift.so needs, copied for a target that lacks them
 * (attach_deps.c): beside the library it dlopens, in heapsift-deps, which the library's
 * DT_RPATH names.
 */
#ifndef HS_CLI_ATTACH_DEPS_H
#define HS_CLI_ATTACH_DEPS_H

#include <stddef.h>
#include <sys/types.h>

/* Copies into root+dir/heapsift-deps each library of lib's DT_NEEDED closure, but
 * glibc's, that pid neither maps nor has in its standard directories (root: "" or
 * "/proc/PID/root"; dir: the directory as pid sees it). names gets the sonames copied,
 * comma-separated ("" for none). 0, or -errno with why filled. */
int hs_attach_deps_copy(pid_t pid, const char *root, const char *dir, const char *lib, char *names,
                        size_t cap, char *why, size_t whycap);

#endif
