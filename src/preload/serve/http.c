/*
 * The HTTP endpoint's lifecycle (HEAPSIFT_HTTP, docs/http.md): libmicrohttpd is loaded
 * with dlopen only when the variable is set, so no other profiled process maps it or
 * its dependencies; one serving thread binds the address, drives MHD in its external
 * polling mode (epoll) and holds the reentrancy guard for life, so nothing it allocates
 * is sampled or counted as the program's. The thread blocks every signal, caps its own
 * CPU use (HS_HTTP_CPU_SHARE of one core, with a burst allowance: in debt, it sleeps),
 * and MHD bounds connections, per-address connections, idle time and request memory.
 * At exit it is stopped before the libraries' destructors run; a forked child closes the
 * parent's sockets and tries to serve on its own (a fixed port is the parent's: it logs
 * once and goes on without). `heapsift detach` ends the thread (hs_http_pause: the daemon
 * stopped, its sockets closed, the thread gone) and a later attach with --http starts it
 * again on that attach's address (hs_http_restart). A failure never stops profiling: one
 * log line, no endpoint.
 */
#define _GNU_SOURCE
#include "runtime/debugcheck.h"
#include "base/monoclock.h"
#include "runtime/core.h"
#include "runtime/fdtable.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "runtime/orphan.h"
#include "record/recorder.h"
#include "runtime/threads.h"
#include "base/fdio.h"
#include "http.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

hs_mhd_t hs_mhd;

static struct {
    char addr[256], portfile[1024], token[256];
    struct sockaddr_storage sa;
    socklen_t salen;
    int listen_fd;
    int wake_fd, wake_wr;           /* the wake-up pipe's read and write ends */
    int conn_fds[HS_HTTP_MAX_CONN]; /* -1: free slot */
    struct MHD_Daemon *d;
    int stop, running, started, loaded;
    int paused;      /* heapsift detach ended the thread (hs_http_pause) */
    int loading;     /* the thread may be inside dlopen */
    int private_fds; /* the thread has a descriptor table of its own (fdtable.c) */
    int abandoned;   /* libmicrohttpd panicked: the endpoint stopped */
    pthread_t thread;
    pid_t tid;
    hs_thread_t th; /* its stack, reused by a restart */
} http = {.listen_fd = -1, .wake_fd = -1, .wake_wr = -1};

static const char *const http_lib = "libmicrohttpd.so.12";

/* libmicrohttpd's panic, when the library is heapsift's alone: on the serving thread, the
 * endpoint stops (the thread ends, the daemon is left as it is); elsewhere, what the
 * library would have done. */
static void http_panic(void *cls, const char *file, unsigned int line, const char *reason)
{
    (void)cls;
    int n = reason ? (int)strcspn(reason, "\n") : 1;
    hs_log("HEAPSIFT_HTTP: libmicrohttpd failed (%s:%u: %.*s); the endpoint stops, profiling "
           "goes on",
           file ? file : "?", line, n, reason ? reason : "?");
    if (!pthread_equal(pthread_self(), http.thread))
        abort();
    __atomic_store_n(&http.abandoned, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&http.running, 0, __ATOMIC_RELEASE);
    pthread_exit(NULL);
}

int64_t hs_http_now_ms(void)
{
    return hs_mono_ms();
}

const char *hs_http_token(void)
{
    return http.token[0] ? http.token : NULL;
}

/* ---- the address -------------------------------------------------------------------- */

/* "HOST:PORT", "[V6]:PORT" or ":PORT" (loopback) into http.sa. */
static int http_parse_addr(const char *v)
{
    char host[256];
    const char *colon = strrchr(v, ':');
    if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        strlen(colon + 1) > 5 || atoi(colon + 1) > 65535)
        return -EINVAL;
    size_t hl = (size_t)(colon - v);
    if (hl >= sizeof(host))
        return -EINVAL;
    memcpy(host, v, hl);
    host[hl] = '\0';
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host[0] ? host : "127.0.0.1", colon + 1, &hints, &res) != 0 || !res)
        return -EINVAL;
    memcpy(&http.sa, res->ai_addr, res->ai_addrlen);
    http.salen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static uint16_t http_port(void)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    if (getsockname(http.listen_fd, (struct sockaddr *)&sa, &len) != 0)
        return 0;
    return ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                          : ((struct sockaddr_in *)&sa)->sin_port);
}

static int http_listen(void)
{
    int one = 1;
    int fd = socket(http.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&http.sa, http.salen) != 0 || listen(fd, 64) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    http.listen_fd = fd;
    return 0;
}

/* HEAPSIFT_HTTP_PORTFILE (%p: the pid), written atomically. */
static void http_write_portfile(uint16_t port)
{
    char path[1100], tmp[1200], line[16];
    size_t n = 0;
    for (const char *c = http.portfile; *c && n + 24 < sizeof(path); c++) {
        if (c[0] == '%' && c[1] == 'p') {
            n += (size_t)snprintf(path + n, sizeof(path) - n, "%ld", (long)getpid());
            c++;
        } else {
            path[n++] = *c;
        }
    }
    path[n] = '\0';
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    int len = snprintf(line, sizeof(line), "%u\n", port);
    int fd = hs_fd_open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool ok = fd >= 0 && hs_fd_write(fd, line, (size_t)len) == len;
    if (fd >= 0)
        ok = hs_fd_close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        hs_log("HEAPSIFT_HTTP_PORTFILE: cannot write %s: %s", path, strerror(errno));
    }
}

/* ---- libmicrohttpd ------------------------------------------------------------------- */

static int http_load(void)
{
    if (http.loaded)
        return 0;
    void *mine = dlopen(http_lib, RTLD_LAZY | RTLD_NOLOAD); /* the program's own copy? */
    if (mine)
        dlclose(mine);
    void *h = dlopen(http_lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        hs_log("HEAPSIFT_HTTP: cannot load %s (%s; Debian: apt-get install libmicrohttpd12); "
               "profiling goes on without the endpoint",
               http_lib, dlerror());
        return -ENOENT;
    }
    static const char *const names[] = {
        "MHD_start_daemon",
        "MHD_stop_daemon",
        "MHD_run",
        "MHD_get_timeout",
        "MHD_get_daemon_info",
        "MHD_get_connection_info",
        "MHD_lookup_connection_value",
        "MHD_create_response_from_buffer",
        "MHD_add_response_header",
        "MHD_queue_response",
        "MHD_destroy_response",
        "MHD_suspend_connection",
        "MHD_resume_connection",
        "MHD_get_connection_values",
    };
    void **slots = (void **)&hs_mhd;
    _Static_assert(sizeof(hs_mhd) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
                   "one name per entry point");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!(slots[i] = dlsym(h, names[i]))) {
            hs_log("HEAPSIFT_HTTP: %s has no %s; profiling goes on without the endpoint", http_lib,
                   names[i]);
            return -ENOENT;
        }
    }
    /* libmicrohttpd aborts the process on an internal failure (a close that fails, say);
     * when the library is heapsift's alone, its failure stops the endpoint instead. */
    void (*set_panic)(MHD_PanicCallback, void *) =
        (void (*)(MHD_PanicCallback, void *))dlsym(h, "MHD_set_panic_func");
    if (!mine && set_panic)
        set_panic(http_panic, NULL);
    http.loaded = 1;
    return 0;
}

/* Connections' sockets, so that a forked child can close the ones it inherited. */
static void http_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    (void)cls;
    (void)socket_context;
    const union MHD_ConnectionInfo *ci =
        hs_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return;
    int fd = ci->connect_fd;
    int want = toe == MHD_CONNECTION_NOTIFY_STARTED ? -1 : fd;
    for (int i = 0; i < HS_HTTP_MAX_CONN; i++) {
        if (http.conn_fds[i] == want) {
            http.conn_fds[i] = toe == MHD_CONNECTION_NOTIFY_STARTED ? fd : -1;
            return;
        }
    }
}

static void http_mhd_log(void *cls, const char *fmt, va_list ap)
{
    static int once;
    char msg[200];
    (void)cls;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    hs_log_once(once, "HEAPSIFT_HTTP: libmicrohttpd: %s (reported once)", msg);
}

static int http_daemon(void)
{
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (http.sa.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    for (int i = 0; i < HS_HTTP_MAX_CONN; i++)
        http.conn_fds[i] = -1;
    http.d = hs_mhd.start_daemon(
        flags, 0, NULL, NULL, hs_http_handle, NULL, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, http.listen_fd, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)HS_HTTP_MAX_CONN, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)HS_HTTP_MAX_PER_IP, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HS_HTTP_IDLE_SECONDS,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HS_HTTP_CONN_MEMORY,
        MHD_OPTION_NOTIFY_COMPLETED, hs_http_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION,
        http_notify, NULL, MHD_OPTION_END);
    return http.d ? 0 : -EIO;
}

/* ---- the thread ---------------------------------------------------------------------- */

/* The CPU budget of the serving thread: it earns HS_HTTP_CPU_SHARE of the wall-clock
 * time, spends the CPU it uses (user and system), may save up HTTP_BURST_NS, and sleeps
 * off a debt. */
#define HTTP_BURST_NS 200000000ll
typedef struct {
    int64_t wall, cpu, budget;
} http_budget_t;

static int64_t http_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void http_budget_init(http_budget_t *b)
{
    b->wall = http_clock_ns(CLOCK_MONOTONIC);
    b->cpu = http_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    b->budget = HTTP_BURST_NS;
}

/* Settles the budget; in debt, sleeps until it is paid (at most 1 s per round, woken
 * early only to stop). */
static void http_throttle(http_budget_t *b)
{
    int64_t wall = http_clock_ns(CLOCK_MONOTONIC), cpu = http_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    b->budget += (int64_t)((double)(wall - b->wall) * HS_HTTP_CPU_SHARE) - (cpu - b->cpu);
    if (b->budget > HTTP_BURST_NS)
        b->budget = HTTP_BURST_NS;
    b->wall = wall;
    b->cpu = cpu;
    if (b->budget >= 0)
        return;
    int64_t ms = (int64_t)((double)-b->budget / HS_HTTP_CPU_SHARE / 1e6) + 1;
    ms = ms > 1000 ? 1000 : ms;
    hs_http_count.throttled_ms += (uint64_t)ms;
    struct pollfd p = {.fd = http.wake_fd, .events = POLLIN};
    poll(&p, 1, (int)ms);
}

/* The gate around every call into libmicrohttpd on the serving thread. At exit, once the
 * thread has had its second to stop, http_at_exit closes it: from then on the thread never
 * calls libmicrohttpd again, so the library's destructor, which runs next, never runs
 * beside one of its calls (a forked child's thread, slow to stop on a loaded machine,
 * was killed by a signal that way). The wait for the gate is one call at most. */
static pthread_mutex_t http_gate = PTHREAD_MUTEX_INITIALIZER;
static bool http_gate_closed;

static bool http_gate_enter(void)
{
    hs_lock(&http_gate, HS_RANK_HTTP_GATE);
    if (!http_gate_closed)
        return true;
    hs_unlock(&http_gate, HS_RANK_HTTP_GATE);
    return false;
}

static void http_gate_exit(void)
{
    hs_unlock(&http_gate, HS_RANK_HTTP_GATE);
}

static int http_timeout(int64_t next_due)
{
    MHD_UNSIGNED_LONG_LONG to;
    int64_t t = -1;
    if (hs_mhd.get_timeout(http.d, &to) == MHD_YES)
        t = to > 3600000 ? 3600000 : (int64_t)to;
    if (next_due >= 0 && (t < 0 || next_due < t))
        t = next_due;
    return (int)t;
}

static void http_loop(void)
{
    const union MHD_DaemonInfo *di = hs_mhd.get_daemon_info(http.d, MHD_DAEMON_INFO_EPOLL_FD);
    struct pollfd p[2] = {{.fd = di ? di->epoll_fd : -1, .events = POLLIN},
                          {.fd = http.wake_fd, .events = POLLIN}};
    http_budget_t budget;
    http_budget_init(&budget);
    int64_t orphan_at = hs_http_now_ms() + 1000;
    while (!__atomic_load_n(&http.stop, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&http.paused, __ATOMIC_ACQUIRE)) {
        /* The program may have ended but for heapsift's threads (orphan.c). */
        if (hs_http_now_ms() >= orphan_at) {
            orphan_at = hs_http_now_ms() + 1000;
            if (hs_orphan_program_gone())
                break;
            hs_stderr_pin_refresh(); /* log.c: a replaced log file is given back */
        }
        if (!http_gate_enter())
            return; /* the process is ending: the daemon is left to it */
        hs_mhd.run(http.d);
        /* After the run: a window it opened must count in this round's timeout. */
        int64_t due = hs_http_tick(hs_http_now_ms());
        http_gate_exit();
        http_throttle(&budget);
        if (!http_gate_enter())
            return;
        int to = http_timeout(due);
        http_gate_exit();
        if (poll(p, 2, to < 0 || to > 1000 ? 1000 : to) > 0 && (p[1].revents & POLLIN)) {
            uint64_t v[8];
            if (read(http.wake_fd, v, sizeof(v)) < 0) {
                /* nothing to do: the flag is what counts */
            }
        }
        /* At most one round per HS_HTTP_ROUND_MS: under a flood, requests are served in
         * batches, and the program's threads are interrupted far less often. */
        struct timespec ts = {0, HS_HTTP_ROUND_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!http_gate_enter())
        return;
    hs_http_resume_all();
    hs_mhd.run(http.d);
    hs_mhd.stop_daemon(http.d); /* closes the listening socket too */
    http.d = NULL;
    http.listen_fd = -1;
    http_gate_exit();
}

/* Binds and starts MHD; logs why not. Guard held. */
static int http_open(void)
{
    int rc = http_load();
    __atomic_store_n(&http.loading, 0, __ATOMIC_RELEASE);
    if (rc != 0)
        return rc;
    if ((rc = http_listen()) != 0) {
        hs_log("HEAPSIFT_HTTP=%s: cannot listen (pid %ld): %s; profiling goes on without the "
               "endpoint",
               http.addr, (long)getpid(), strerror(-rc));
        return rc;
    }
    if (!http_gate_enter())
        return -ECANCELED;
    rc = http_daemon();
    http_gate_exit();
    if (rc != 0) {
        hs_log("HEAPSIFT_HTTP=%s: cannot start libmicrohttpd; profiling goes on without the "
               "endpoint",
               http.addr);
        close(http.listen_fd);
        http.listen_fd = -1;
        return rc;
    }
    uint16_t port = http_port();
    const char *colon = strrchr(http.addr, ':');
    /* Port 0 is said on the program's stderr only where nothing else tells it: with a port
     * file (attach, diagnose, the tests), the program's stderr stays its own. */
    if (hs_opt.verbose || (strcmp(colon, ":0") == 0 && !http.portfile[0])) {
        char host[INET6_ADDRSTRLEN] = "?";
        const void *a = http.sa.ss_family == AF_INET6
                            ? (const void *)&((struct sockaddr_in6 *)&http.sa)->sin6_addr
                            : (const void *)&((struct sockaddr_in *)&http.sa)->sin_addr;
        inet_ntop(http.sa.ss_family, a, host, sizeof(host));
        bool v6 = http.sa.ss_family == AF_INET6;
        hs_log("pid %ld serves http://%s%s%s:%u/debug/pprof/", (long)getpid(), v6 ? "[" : "", host,
               v6 ? "]" : "", port);
    }
    if (http.portfile[0])
        http_write_portfile(port);
    return 0;
}

/* The wake-up channel, in the thread's own table: a pipe, which another thread reaches
 * through /proc/self/task/TID/fd (an eventfd cannot be opened that way). */
static int http_wake_open(void)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return -errno;
    http.wake_fd = fds[0];
    /* Published before the stop flag is read (http_at_exit: the other way round). */
    __atomic_store_n(&http.wake_wr, fds[1], __ATOMIC_SEQ_CST);
    return 0;
}

/* The thread's end at a detach: the wake-up pipe closed (no one writes to it once
 * wake_wr is -1) and the thread no longer counted as heapsift's. Its descriptor table,
 * its own, goes with it. */
static void http_leave(void)
{
    int w = __atomic_exchange_n(&http.wake_wr, -1, __ATOMIC_SEQ_CST);
    if (w >= 0 && http.private_fds)
        close(w);
    if (http.wake_fd >= 0 && http.private_fds)
        close(http.wake_fd);
    http.wake_fd = -1;
    hs_orphan_forget((int)syscall(SYS_gettid));
}

static void *http_main(void *arg)
{
    (void)arg;
    hs_guard_enter(&hs_tls); /* for life: what this thread allocates is the profiler's */
    http.thread = pthread_self();
    __atomic_store_n(&http.tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    hs_orphan_register();
    pthread_setname_np(pthread_self(), "heapsift-http");
    /* Sockets live in the thread's table. Without one of its own, no number of the
     * server's could be told from a file the program opened under it after closing it:
     * the server stays off rather than ever write a response into the program's file. */
    http.private_fds = hs_fd_private() == 0;
    if (!http.private_fds)
        hs_log("HEAPSIFT_HTTP: the endpoint is off: the server cannot have a descriptor table "
               "of its own here (unshare: %s; a container's seccomp filter refuses it), and "
               "in the program's table a socket's number can become one of the program's "
               "files; profiles are still written (docs/http.md)",
               strerror(errno));
    else if (http_wake_open() == 0 && http_open() == 0)
        http_loop();
    if (__atomic_load_n(&http.paused, __ATOMIC_ACQUIRE))
        http_leave();
    __atomic_store_n(&http.running, 0, __ATOMIC_RELEASE);
    return NULL;
}

/* The thread, with every signal blocked from its first instruction (threads.c). */
static int http_spawn(void)
{
    __atomic_store_n(&http.running, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&http.loading, 1, __ATOMIC_RELEASE);
    int rc = hs_thread_restart(&http.th, http_main, NULL);
    if (rc != 0) {
        __atomic_store_n(&http.running, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&http.loading, 0, __ATOMIC_RELEASE);
    }
    return rc;
}

/* From another thread: the pipe is opened through /proc for the one write, in a table
 * of heapsift's own (fdio.h): no descriptor of the server's is ever used by number in the
 * program's table, where the program may have closed it and reused the number. */
static void http_wake(void)
{
    uint64_t one = 1;
    int w = __atomic_load_n(&http.wake_wr, __ATOMIC_SEQ_CST);
    if (w < 0)
        return;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%ld/fd/%d", (long)http.tid, w);
    int fd = hs_fd_open(path, O_WRONLY | O_NONBLOCK, 0);
    if (fd >= 0 && hs_fd_write(fd, &one, 1) < 0) {
        /* the pipe is full: the thread is awake anyway */
    }
    if (fd >= 0)
        hs_fd_close(fd);
}

/* At exit, before the libraries' destructors (libmicrohttpd's among them): the thread
 * stops serving, given a second for it (it may be building a profile); then the gate
 * closes, whether it has stopped or not. */
static void http_at_exit(void)
{
    __atomic_store_n(&http.stop, 1, __ATOMIC_SEQ_CST);
    http_wake();
    for (int i = 0; i < 1000 && __atomic_load_n(&http.running, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    hs_lock(&http_gate, HS_RANK_HTTP_GATE);
    http_gate_closed = true;
    hs_unlock(&http_gate, HS_RANK_HTTP_GATE);
}

/* Belt and braces: libmicrohttpd is loaded by the constructor (hs_http_start), so the
 * thread's own load is a no-op; a fork still waits (at most 1 s) for the thread to be past
 * it, so that no fork can ever copy the loader's lock held by that thread. */
static void http_fork_prepare(void)
{
    for (int i = 0; i < 1000 && __atomic_load_n(&http.loading, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* A forked child has no serving thread, and (a copy of the forking thread's table) none
 * of the server's descriptors. Forget the parent's state, and serve on its own when it
 * can bind. */
static void http_fork_child(void)
{
    /* The parent's thread may have been inside libmicrohttpd, the gate held. */
    pthread_mutex_init(&http_gate, NULL);
    if (!__atomic_load_n(&http.started, __ATOMIC_ACQUIRE))
        return;
    for (int i = 0; i < HS_HTTP_MAX_CONN; i++)
        http.conn_fds[i] = -1;
    http.listen_fd = http.wake_fd = http.wake_wr = -1;
    http.private_fds = 0;
    http.d = NULL; /* the parent's: leaked, never touched */
    hs_http_routes_forget();
    if (__atomic_load_n(&http.stop, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&http.paused, __ATOMIC_ACQUIRE))
        return; /* the parent's endpoint was ended by heapsift detach */
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    http_spawn();
    hs_guard_exit(t);
}

/* Takes the endpoint's settings (copies), binds nothing yet: the thread does. Guard held. */
static void http_begin(const char *addr, const char *portfile, const char *token)
{
    static bool hooked; /* the exit and fork handlers, registered once */
    snprintf(http.addr, sizeof(http.addr), "%s", addr);
    snprintf(http.portfile, sizeof(http.portfile), "%s", portfile ? portfile : "");
    snprintf(http.token, sizeof(http.token), "%s", token ? token : "");
    int rc = http_parse_addr(http.addr);
    if (rc != 0)
        hs_log("HEAPSIFT_HTTP=%s: invalid value (expected HOST:PORT, [IPV6]:PORT or :PORT; "
               ":0 picks a free port); profiling goes on without the endpoint",
               http.addr);
    /* libmicrohttpd is loaded here, in the constructor, before main can start threads
     * that fork: a fork while another thread is inside dlopen leaves the child with the
     * loader's lock held for good. The serving thread then finds it loaded. */
    if (rc == 0)
        rc = http_load();
    if (rc == 0 && (rc = http_spawn()) != 0)
        hs_log("HEAPSIFT_HTTP: cannot start the serving thread (%s)", strerror(-rc));
    if (rc == 0 && !hooked) {
        hooked = true;
        atexit(http_at_exit);
        pthread_atfork(http_fork_prepare, NULL, http_fork_child);
    }
}

void hs_http_start(void)
{
    if (!hs_opt.http || __atomic_exchange_n(&http.started, 1, __ATOMIC_ACQ_REL))
        return;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    http_begin(hs_opt.http, hs_opt.http_portfile, hs_opt.http_token);
    hs_guard_exit(t);
}

/* heapsift detach: the thread leaves its loop at its next round (a request being served
 * is finished first, a ?seconds=N window is answered 503), stops the daemon, which closes
 * the listening socket and every connection, and ends. Waited for up to 5 s (it may be
 * building a profile), then until the kernel has let the task go. */
void hs_http_pause(void)
{
    if (!__atomic_load_n(&http.started, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&http.stop, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&http.paused, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&http.running, __ATOMIC_ACQUIRE))
        return;
    http_wake();
    struct timespec ts = {0, 1000000};
    for (int i = 0; i < 5000 && __atomic_load_n(&http.running, __ATOMIC_ACQUIRE); i++)
        nanosleep(&ts, NULL);
    if (__atomic_load_n(&http.running, __ATOMIC_ACQUIRE)) {
        hs_log("HEAPSIFT_HTTP: the serving thread did not end at detach within 5 s; it ends "
               "once its request is served");
        return;
    }
    hs_thread_wait_gone(__atomic_load_n(&http.tid, __ATOMIC_ACQUIRE));
}

void hs_http_restart(const char *addr, const char *portfile, const char *token)
{
    if (!addr || __atomic_load_n(&http.stop, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&http.abandoned, __ATOMIC_ACQUIRE))
        return;
    if (__atomic_load_n(&http.running, __ATOMIC_ACQUIRE)) {
        hs_log("HEAPSIFT_HTTP=%s: the serving thread of before the detach has not ended; no "
               "endpoint for this attach",
               addr);
        return;
    }
    if (__atomic_exchange_n(&http.started, 1, __ATOMIC_ACQ_REL))
        hs_thread_wait_gone(__atomic_load_n(&http.tid, __ATOMIC_ACQUIRE)); /* off its stack */
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    hs_http_routes_restart();
    __atomic_store_n(&http.paused, 0, __ATOMIC_SEQ_CST);
    http_begin(addr, portfile, token);
    hs_guard_exit(t);
}

/* Started once the library is initialised, from the constructor (never from inside an
 * allocation). */
HS_CTOR(HS_CTOR_HTTP) static void http_ctor(void)
{
    hs_init();
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) == HS_STATE_ON)
        hs_http_start();
}
