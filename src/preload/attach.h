/*
 * Attach (attach.c): the library's side of `heapsift attach PID`, for a libheapsift.so
 * that an injector dlopen'ed into a running process (src/cli/ptrace_inject.c owns the ptrace
 * side). Its entry points are exported but not part of the public API (heapsift.h).
 */
#ifndef HS_ATTACH_H
#define HS_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

/* The directory name the injector dlopens the library through
 * (/tmp/heapsift-attach-XXXXXX/libheapsift.so.0): how the constructors know. */
#define HS_ATTACH_DIR_MARK "/heapsift-attach-"

/* True while hs_init must wait: the library was loaded by the injector and
 * heapsift_attach_init has not run yet (its constructors then start nothing). Cheap after
 * the first call (dladdr once). */
bool hs_attach_hold(void);

/* The profiles' comment "attach: attached at TIME; ...", or NULL when not attached. */
const char *hs_attach_comment(void);

#endif
