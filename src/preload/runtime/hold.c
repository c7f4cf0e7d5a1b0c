/*
 * Whether heapsift attach holds the library (hold.h): a library the injector dlopened
 * through its directory starts nothing until heapsift_attach_init (attached/attach.c)
 * says so; and the attach line the profiles and the leak report carry. Owns only these
 * few words; attach.c writes them.
 */
#define _GNU_SOURCE
#include "hold.h"

#include <dlfcn.h>
#include <string.h>

int hs_attach_began;
char hs_attach_line[200];
static int hold_mode = -1; /* 1: loaded by the injector; 0: not; -1: not known yet */

bool hs_attach_hold(void)
{
    if (__atomic_load_n(&hs_attach_began, __ATOMIC_ACQUIRE))
        return false;
    int m = __atomic_load_n(&hold_mode, __ATOMIC_RELAXED);
    if (m < 0) {
        Dl_info di;
        m = dladdr((void *)&hs_attach_hold, &di) && di.dli_fname &&
            strstr(di.dli_fname, HS_ATTACH_DIR_MARK) != NULL;
        __atomic_store_n(&hold_mode, m, __ATOMIC_RELAXED);
    }
    return m == 1;
}

const char *hs_attach_comment(void)
{
    return hs_attach_line[0] ? hs_attach_line : NULL;
}
