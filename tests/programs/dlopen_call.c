/*
 * dlopen_call: loads each library named on the command line with dlopen, after the
 * program started, and calls into it: LIB calls its rust_keep(1000)
 * (tests/programs/rust/own_lib.rs, default_lib.rs) and prints what it returned;
 * LIB@FUNCTION calls int FUNCTION(void) (prefixed_alloc.c built as a library with its
 * main renamed). Between the load and the call it allocates once with malloc, as programs
 * do: heapsift looks at objects loaded since its last look on its sampled path.
 * tests/integration/reach_hooks.sh runs it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char *fn = strchr(argv[i], '@');
        if (fn)
            *fn++ = '\0';
        void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        void *f = h ? dlsym(h, fn ? fn : "rust_keep") : NULL;
        if (!f) {
            fprintf(stderr, "dlopen_call: %s: %s\n", argv[i], dlerror());
            return 1;
        }
        free(malloc(64));
        if (fn && ((int (*)(void))f)() != 0)
            return 1;
        if (!fn)
            printf("%s: %zu vectors\n", argv[i], ((size_t(*)(size_t))f)(1000));
    }
    return 0;
}
