/*
 * attach_busy DIR THREADS [reader|spin]: THREADS threads (the main one among them) loop free +
 * malloc (100 to 5,099 bytes, a ring of 1,000 live blocks each) as fast as they can, so
 * that a thread stopped at any moment is most likely inside the allocator; the issue-44
 * target of tests/integration/attach_busy.sh. Prints "ready" once every thread runs, and
 * ends when DIR/end exists (each thread looks every 4,096 rounds): "attach_busy: done", 0.
 * With reader, the main thread instead blocks in read(2) on stdin and prints "read N" for
 * each read, until a read of 0 or of "quit\n" (then it makes DIR/end itself): a thread
 * inside a system call that attach takes and gives back, whose call must see the bytes.
 * With spin, the main thread instead loops mi_spin (about a millisecond of CPU in a
 * function named as mimalloc's, which attach's safe-point check refuses) then access(2)
 * on DIR/end from main: stopped at any moment it is refused but for a few microseconds
 * in a thousand, and its next system call's entry is a safe point.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *busy_end;
static int busy_running;

static void *busy_loop(void *arg)
{
    void **ring = calloc(1000, sizeof(void *));
    unsigned s = (unsigned)(size_t)arg * 7919u + 1;
    __atomic_add_fetch(&busy_running, 1, __ATOMIC_RELAXED);
    for (unsigned long i = 0;; i++) {
        unsigned k = i % 1000;
        free(ring[k]);
        s = s * 1103515245u + 12345u;
        ring[k] = malloc(100 + (s >> 8) % 5000);
        if ((i & 4095) == 0 && access(busy_end, F_OK) == 0)
            break;
    }
    for (int k = 0; k < 1000; k++)
        free(ring[k]);
    free(ring);
    return NULL;
}

/* Named as an allocator's entry point (mimalloc's prefix): a frame attach never calls on. */
__attribute__((noinline)) void mi_spin(void)
{
    for (volatile unsigned i = 0; i < 500000; i = i + 1)
        ;
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 1;
    char end[4096];
    pthread_t th[64];
    if (argc < 3 || n < 1 || n > 64)
        return 2;
    snprintf(end, sizeof(end), "%s/end", argv[1]);
    busy_end = end;
    for (int i = 1; i < n; i++)
        pthread_create(&th[i], NULL, busy_loop, (void *)(size_t)i);
    while (__atomic_load_n(&busy_running, __ATOMIC_RELAXED) < n - 1)
        usleep(1000);
    printf("ready\n");
    fflush(stdout);
    if (argc > 3 && strcmp(argv[3], "reader") == 0) {
        char buf[256];
        ssize_t k;
        do {
            k = read(0, buf, sizeof(buf));
            printf("read %zd\n", k);
            fflush(stdout);
        } while (k > 0 && !(k == 5 && memcmp(buf, "quit\n", 5) == 0));
        fclose(fopen(end, "w"));
    } else if (argc > 3 && strcmp(argv[3], "spin") == 0) {
        do
            mi_spin();
        while (access(end, F_OK) != 0);
    } else {
        busy_loop(NULL);
    }
    for (int i = 1; i < n; i++)
        pthread_join(th[i], NULL);
    printf("attach_busy: done\n");
    return 0;
}
