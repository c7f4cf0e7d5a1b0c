/*
 * A program whose allocation calls are known exactly, for the exact counters test:
 * with argument K it makes K more malloc(1000) calls on the main thread (and frees half
 * of them), 3 threads each make K malloc(100)/free pairs, K calloc(10, 10) calls and K
 * realloc growth steps. With K = 0 it does everything else the same, so the difference of
 * two runs is exactly the work K adds.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int k;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < k; i++) {
        void *volatile q = malloc(100);
        free(q);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    k = argc > 1 ? atoi(argv[1]) : 0;
    void **keep = calloc(1, sizeof(void *) * (size_t)(k + 1)); /* one call either way */
    for (int i = 0; i < k; i++)
        keep[i] = malloc(1000);
    for (int i = 0; i < k / 2; i++)
        free(keep[i]);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < k; i++) {
        void *volatile c = calloc(10, 10);
        free(c);
    }
    char *volatile grow = NULL; /* realloc(NULL, n): an allocation, no free */
    for (int i = 1; i <= k; i++)
        grow = realloc(grow, (size_t)i * 16);
    free(grow);
    return keep ? 0 : 1;
}
