/*
 * The library's one log (log.c): allocation-free and async-signal-safe, one write(2) per
 * line on the program's stderr.
 */
#ifndef HS_LOG_H
#define HS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Writes "heapsift: <formatted>\n" to stderr with one write(2). */
void hs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* write(2) on the program's descriptor 2, from any thread (fdtable.c's too). With kept,
 * a stderr the program has closed falls back to the I/O thread's copy (not from a signal
 * handler: that takes a lock). Bytes written, or -1 with errno. */
ssize_t hs_stderr_write(const void *p, size_t n, bool kept);
/* In a heapsift thread with a table of its own: takes or gives back its reference to the
 * program's 2 (log.c's pin) as 2 is now, so that a line written later needs no wait. */
void hs_stderr_pin_refresh(void);
/* Same as hs_log, but only the first call per call site (pass a static flag). */
#define hs_log_once(flag, ...)                                                                     \
    do {                                                                                           \
        if (!__atomic_exchange_n(&(flag), 1, __ATOMIC_RELAXED))                                    \
            hs_log(__VA_ARGS__);                                                                   \
    } while (0)

#endif
