/*
 * term_locked: a program stopped by SIGTERM while it holds glibc's main arena lock, on
 * purpose. It allocates a known set of blocks (16 of 4096 bytes, kept live), fills the pipe
 * that is its stderr without blocking, says "blocking" on stdout, then calls malloc_stats(),
 * which takes the main arena's lock and writes to stderr while it holds it: the write blocks
 * on the full pipe (the test never reads it), so the lock stays held until the signal
 * comes. heapsift's exit profile for that signal must not wait for the lock.
 * Usage: term_locked (stderr: a pipe or fifo nobody reads)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *kept[16];

__attribute__((noinline)) static void *term_locked_site(size_t n)
{
    void *p = malloc(n);
    if (p)
        memset(p, 1, n);
    return p;
}

int main(void)
{
    for (int i = 0; i < 16; i++)
        kept[i] = term_locked_site(4096);
    int fl = fcntl(2, F_GETFL);
    if (fl < 0 || fcntl(2, F_SETFL, fl | O_NONBLOCK) < 0)
        return 2;
    char fill[4096];
    memset(fill, 'x', sizeof(fill));
    while (write(2, fill, sizeof(fill)) > 0 || write(2, fill, 1) > 0)
        ;
    if (fcntl(2, F_SETFL, fl) < 0)
        return 2;
    printf("blocking\n");
    fflush(stdout);
    malloc_stats(); /* blocks writing to the full pipe, the main arena locked */
    return kept[0] == NULL;
}
