/*
 * termsrv: a server stopped by a signal (tests/integration/term_signals.sh). It allocates
 * 64 blocks of 1 MiB at term_site (kept), creates the file READY, then waits for signals.
 *   termsrv MODE SIG READY
 *     default  leaves SIG at its default action
 *     own      installs a handler for SIG at start that exits with status 3
 *     late     installs that handler 200 ms after READY
 *     ignore   ignores SIG, and exits 0 by itself 2 s after READY
 * SIG is a number. The program first resets SIGINT, SIGTERM and SIGHUP to their default
 * actions and executes itself again, since a shell starts background jobs with SIGINT
 * ignored, and heapsift, which looks at the dispositions at start, leaves an ignored
 * signal ignored.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *keep[64];

__attribute__((noinline)) static void term_site(void)
{
    for (int i = 0; i < 64; i++) {
        keep[i] = malloc(1 << 20);
        memset(keep[i], i, 1 << 20);
    }
}

static void on_sig(int sig)
{
    (void)sig;
    exit(3);
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    if (argc == 4 && getenv("TERMSRV_EXECED") == NULL) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        setenv("TERMSRV_EXECED", "1", 1);
        execv("/proc/self/exe", argv);
        return 126;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: termsrv default|own|late|ignore SIG READY\n");
        return 2;
    }
    const char *mode = argv[1];
    int sig = atoi(argv[2]);
    if (strcmp(mode, "own") == 0)
        signal(sig, on_sig);
    if (strcmp(mode, "ignore") == 0)
        signal(sig, SIG_IGN);
    term_site();
    FILE *f = fopen(argv[3], "w");
    if (f)
        fclose(f);
    if (strcmp(mode, "late") == 0) {
        nap_ms(200);
        signal(sig, on_sig);
        f = fopen(argv[3], "a");
        if (f) {
            fputs("late\n", f);
            fclose(f);
        }
    }
    if (strcmp(mode, "ignore") == 0) {
        nap_ms(2000);
        return 0;
    }
    for (;;)
        pause();
}
