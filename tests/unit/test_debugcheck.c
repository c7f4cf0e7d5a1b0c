/*
 * The lock-rank checker and hs_assert (src/preload/runtime/debugcheck.c), compiled here with
 * HS_DEBUG_CHECKS whatever the build, against a TLS block and an hs_log of the test's own:
 * ranks taken in order pass, and a rank inversion, a rank taken twice, a release of a
 * lock not held and a false hs_assert each log "check failed" and abort (in a forked
 * child, whose stderr and status are read here).
 */
#ifndef HS_DEBUG_CHECKS
#define HS_DEBUG_CHECKS 1
#endif
#include "../../src/preload/runtime/debugcheck.c"

#include "check.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__thread hs_tls_t hs_tls __attribute__((tls_model("initial-exec")));

/* One write per line, as the library's. */
void hs_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    n = n < 0 ? 0 : n > (int)sizeof(line) - 2 ? (int)sizeof(line) - 2 : n;
    line[n++] = '\n';
    if (write(2, line, (size_t)n) < 0)
        return;
}

/* Runs fn in a child; true when it aborted after logging a failed check. */
static bool aborts(void (*fn)(void))
{
    int p[2];
    if (pipe(p) != 0)
        return false;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        fn();
        _exit(0);
    }
    close(p[1]);
    char buf[512] = "";
    size_t len = 0;
    ssize_t n;
    while (len < sizeof(buf) - 1 && (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(buf, "check failed") != NULL;
}

static void inversion(void)
{
    HS_RANK_ACQUIRE(HS_RANK_STACKTAB, 0);
    HS_RANK_ACQUIRE(HS_RANK_DUMP, 0); /* the dump lock is taken before the stack table's */
}

static void same_rank(void)
{
    HS_RANK_ACQUIRE(HS_RANK_THREADS, 0);
    HS_RANK_ACQUIRE(HS_RANK_THREADS, 0);
}

static void shards_backwards(void)
{
    HS_RANK_ACQUIRE(HS_RANK_LIVETAB, 5);
    HS_RANK_ACQUIRE(HS_RANK_LIVETAB, 4);
}

static void release_unheld(void)
{
    HS_RANK_RELEASE(HS_RANK_PEAK, 0);
}

static void assert_false(void)
{
    int zero = 0;
    hs_assert(zero == 1);
}

int main(void)
{
    /* In order, shards in shard order, released out of order: no violation. */
    HS_RANK_ACQUIRE(HS_RANK_TRACKERS, 0);
    HS_RANK_ACQUIRE(HS_RANK_STACKTAB, 0);
    for (unsigned sh = 0; sh < 64; sh++)
        HS_RANK_ACQUIRE(HS_RANK_LIVETAB, sh);
    HS_RANK_ACQUIRE(HS_RANK_PINS, 0);
    CHECK(hs_rank_held(HS_RANK_LIVETAB) && hs_rank_held(HS_RANK_PINS), "held");
    CHECK(!hs_rank_held(HS_RANK_DUMP), "the dump lock is not held");
    HS_RANK_RELEASE(HS_RANK_STACKTAB, 0);
    HS_RANK_RELEASE(HS_RANK_PINS, 0);
    for (unsigned sh = 64; sh-- > 0;)
        HS_RANK_RELEASE(HS_RANK_LIVETAB, sh);
    CHECK(hs_tls.nheld == 1, "one left: %u", hs_tls.nheld);
    HS_RANK_ACQUIRE(HS_RANK_IOTHREAD, 0); /* the leaf, above the trackers' */
    HS_RANK_RELEASE(HS_RANK_IOTHREAD, 0);
    HS_RANK_RELEASE(HS_RANK_TRACKERS, 0);
    CHECK(hs_tls.nheld == 0, "none left");
    hs_assert(hs_tls.nheld == 0);

    CHECK(aborts(inversion), "a rank inversion is caught");
    CHECK(aborts(same_rank), "a rank taken twice is caught");
    CHECK(aborts(shards_backwards), "shards out of order are caught");
    CHECK(aborts(release_unheld), "releasing a lock not held is caught");
    CHECK(aborts(assert_false), "a false hs_assert aborts");
    return hs_check_done("test_debugcheck");
}
