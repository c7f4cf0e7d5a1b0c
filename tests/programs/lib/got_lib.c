/*
 * got_lib: a library that attach_target loads with dlopen after heapsift attached
 * (attach_target --lib), whose one site allocates through its own import slot for malloc:
 * heapsift sees these only once it has pointed the new object's slots at its hooks
 * (tests/integration/attach_got.sh). Built by the test: cc -O2 -shared -fPIC.
 */
#include <stdlib.h>

#include "../site.h"

#define NLIB 100
#define LIBSZ 300

static void *kept[64][NLIB];
static int calls;

/* NLIB blocks of LIBSZ bytes, kept live; 0, or -1 when out of memory or called too often. */
SITE __attribute__((visibility("default"))) int got_lib_keep(void)
{
    if (calls == 64)
        return -1;
    for (int i = 0; i < NLIB; i++)
        if (!(kept[calls][i] = malloc(LIBSZ)))
            return -1;
    calls++;
    return 0;
}
