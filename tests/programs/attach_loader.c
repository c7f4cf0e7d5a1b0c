/*
 * attach_loader LIB: prints "ready", dlopens LIB (tests/programs/lib/ctor_wait.c, whose
 * constructor holds the thread inside the loader for a while), prints "loaded", then
 * reads stdin to its end, in read(2) calls of its own (a safe point), and prints "done".
 * The target of tests/integration/attach_moved.sh.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char buf[64];
    if (argc < 2)
        return 2;
    printf("ready\n");
    fflush(stdout);
    if (!dlopen(argv[1], RTLD_NOW))
        return 1;
    printf("loaded\n");
    fflush(stdout);
    while (read(0, buf, sizeof(buf)) > 0)
        ;
    printf("done\n");
    return 0;
}
