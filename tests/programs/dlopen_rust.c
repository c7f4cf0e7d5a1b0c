/*
 * dlopen_rust: loads each library named on the command line with dlopen, after the
 * program started, and calls its rust_keep(1000) (tests/programs/rust/own_lib.rs,
 * default_lib.rs), printing what each returned. Between the load and the call it
 * allocates once with malloc, as programs do: heapsift looks at objects loaded since its
 * last look on its sampled path. tests/integration/reach_hooks.sh runs it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        size_t (*keep)(size_t) = h ? (size_t(*)(size_t))dlsym(h, "rust_keep") : NULL;
        if (!keep) {
            fprintf(stderr, "dlopen_rust: %s: %s\n", argv[i], dlerror());
            return 1;
        }
        free(malloc(64));
        printf("%s: %zu vectors\n", argv[i], keep(1000));
    }
    return 0;
}
