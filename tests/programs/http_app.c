/*
 * A program for the HTTP endpoint tests: it allocates at known sites when told, one
 * command per line on stdin, and answers each on stdout once done, so a test knows which
 * allocations happened before, during or after a request:
 *   old N       N blocks of 64 KiB at site_old, kept live
 *   window N    N blocks of 64 KiB at site_window, kept live
 *   free_old    frees the site_old blocks
 *   churn S     S seconds (decimals allowed) of malloc/free of 16..4096 bytes at
 *               site_churn with 256 blocks live; answers "ops N rate R" (operations/s)
 *   fork        forks a child that sleeps 3 s then exits; answers "child PID"
 *   quit        exits 0
 * Every answer ends with a line "ok".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 65536
#define MAXB 4096

/* Global, so that the compiler keeps the blocks (an unused malloc may be removed). */
void *old_blocks[MAXB], *window_blocks[MAXB];
int nold, nwindow;

/* Each site stores its blocks itself: a site that returned malloc's result would be a
 * tail call, and its frame would not be on the stack. */
__attribute__((noinline)) static void site_old(int n)
{
    for (int i = 0; i < n && nold < MAXB; i++)
        old_blocks[nold++] = malloc(BLOCK);
}

__attribute__((noinline)) static void site_window(int n)
{
    for (int i = 0; i < n && nwindow < MAXB; i++)
        window_blocks[nwindow++] = malloc(BLOCK);
}

__attribute__((noinline)) static void site_churn(void **slot, size_t n)
{
    *slot = malloc(n);
    if (*slot)
        memset(*slot, 1, 16);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void churn(double secs)
{
    void *live[256] = {0};
    unsigned x = 12345;
    unsigned long ops = 0;
    double t0 = now_s(), t = t0;
    while (t - t0 < secs) {
        for (int i = 0; i < 1024; i++) {
            x = x * 1103515245u + 12345u;
            unsigned k = (x >> 8) & 255;
            free(live[k]);
            site_churn(&live[k], 16 + (x >> 16) % 4081);
        }
        ops += 1024;
        t = now_s();
    }
    for (int k = 0; k < 256; k++)
        free(live[k]);
    printf("ops %lu rate %.0f\n", ops, (double)ops / (t - t0));
}

int main(void)
{
    char line[128];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof(line), stdin)) {
        char cmd[32];
        double arg = 0;
        if (sscanf(line, "%31s %lf", cmd, &arg) < 1)
            continue;
        if (strcmp(cmd, "old") == 0) {
            site_old((int)arg);
        } else if (strcmp(cmd, "window") == 0) {
            site_window((int)arg);
        } else if (strcmp(cmd, "free_old") == 0) {
            while (nold > 0)
                free(old_blocks[--nold]);
        } else if (strcmp(cmd, "churn") == 0) {
            churn(arg);
        } else if (strcmp(cmd, "fork") == 0) {
            pid_t pid = fork();
            if (pid == 0) {
                sleep(3);
                _exit(0);
            }
            printf("child %ld\n", (long)pid);
        } else if (strcmp(cmd, "quit") == 0) {
            printf("ok\n");
            return 0;
        }
        printf("ok\n");
    }
    return 0;
}
