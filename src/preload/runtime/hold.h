/*
 * heapsift attach's state that the lower parts read (hold.c): whether this library was
 * loaded by the injector and must start nothing until the attach thread starts it, and
 * the line the profiles carry about the attach. Kept here, below the recorder, so that
 * hs_init, the dumps and the leak report ask without knowing attached/attach.c, which
 * sets both. Never on an allocation path but hs_init's first call.
 */
#ifndef HS_HOLD_H
#define HS_HOLD_H

#include "core.h"

#include <stdbool.h>

/* The directory name the injector dlopens the library through
 * (/tmp/heapsift-attach-XXXXXX/libheapsift.so.0): how the constructors know. */
#define HS_ATTACH_DIR_MARK "/heapsift-attach-"

/* heapsift_attach_init has run: hs_init may proceed (set by attach.c, release order). */
extern int hs_attach_began HS_HIDDEN;
/* "attach: attached at TIME; ...", written by attach.c; empty when not attached. */
extern char hs_attach_line[200] HS_HIDDEN;

/* True while hs_init must wait: the library was loaded by the injector and
 * heapsift_attach_init has not run yet (its constructors then start nothing). Cheap after
 * the first call (dladdr once). */
bool hs_attach_hold(void);

/* The profiles' comment "attach: attached at TIME; ...", or NULL when not attached. */
const char *hs_attach_comment(void);

#endif
