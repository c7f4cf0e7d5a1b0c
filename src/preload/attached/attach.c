/*
 * Attach: the library's side of `heapsift attach PID` (src/cli/inject/attach.c and
 * ptrace_inject.c own ptrace). The injector dlopens libheapsift.so into a running process
 * through a symlink in a directory of its own (/tmp/heapsift-attach-XXXXXX/libheapsift.so.0),
 * so the constructors, seeing that path, start nothing (hs_attach_hold, runtime/hold.c) and the
 * target's environment is never read nor touched. heapsift_attach_thread then runs on the attach
 * thread the injector created (src/cli/inject/inject_thread.c), the program running on, and calls:
 *   - heapsift_attach_init(optfile, ...): the options from the file (the HEAPSIFT_* names
 *     and values of the environment, one NAME=VALUE a line, read by options.c's one
 *     table), hs_init, the hooks (reach.c patches libc's or the program's malloc family
 *     in place, or where that fails rewrites the import slots that lead to it: a library
 *     loaded last is never reached through symbol lookup), and what
 *     the constructors start (termination signals, triggers, HTTP). A second attach to
 *     the same process finds the library loaded (dlopen reuses the file's one copy) and
 *     puts the patches back, with the new -o and --rate, and starts the endpoint again
 *     on the new --http's address (none without); the other options stay the first
 *     attach's.
 *   - heapsift_attach_finish(...): the profile written to the -o pattern, sampling off,
 *     every patch removed and every import slot given its old value (gotslot.c), the
 *     live table emptied (frees are not seen once detached, so its entries would go
 *     stale), the trigger and HTTP threads ended. The library stays loaded, inert, with
 *     no thread of its own.
 * Blocks allocated before the attach are unknown: their frees fail the live filter as an
 * unsampled block's do (the same cost), and the profiles say where knowledge starts
 * (hs_attach_comment, shown in `heapsift top`'s header).
 * Never on an allocation path.
 */
#define _GNU_SOURCE
#include "runtime/hold.h"
#include "model/attach_box.h"
#include "runtime/core.h"
#include "output/dump.h"
#include "base/fileio.h"
#include "reach/gotslot.h"
#include "serve/http.h"
#include "leaks/leaks.h"
#include "record/livetab.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "reach/patch.h"
#include "reach/reach.h"
#include "runtime/stopworld.h"
#include "record/recorder.h"
#include "triggers/termsig.h"
#include "triggers/triggers.h"

#include "heapsift.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define ATTACH_OPTS_MAX 16384
#define ATTACH_FORGET_BATCH 1024

HS_EXPORT int heapsift_attach_init(const char *optfile, uintptr_t *pcs, size_t npcs, char *msg,
                                   size_t msglen);
HS_EXPORT int heapsift_attach_finish(char *path, size_t cap, uint64_t *report);
HS_EXPORT void *heapsift_attach_thread(void *box);

static unsigned attach_count;
static bool attach_on;
/* The options files: [0] the first attach's, kept for life (hs_opt's strings point into
 * it); [1] a later attach's, of which only -o and --rate are taken. NUL-separated lines. */
static char attach_opts[2][ATTACH_OPTS_MAX];
static const char *attach_src;
static uintptr_t attach_addrs[ATTACH_FORGET_BATCH];
static size_t attach_naddrs;

static const char *attach_lookup(const char *name)
{
    size_t n = strlen(name);
    for (const char *l = attach_src; l && *l; l += strlen(l) + 1)
        if (strncmp(l, name, n) == 0 && l[n] == '=')
            return l + n + 1;
    return NULL;
}

/* Reads path into buf as NUL-separated lines. Plain system calls, not fdio.h: on a
 * re-attach heapsift's I/O thread is stopped with the others, and with every thread of the
 * program stopped no one can close or reuse the descriptor meanwhile. */
static int attach_read(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t n = 0;
    ssize_t k = 0;
    while (n + 2 < cap && (k = read(fd, buf + n, cap - 2 - n)) > 0)
        n += (size_t)k;
    int rc = k < 0 ? -errno : n + 2 >= cap ? -E2BIG : 0;
    close(fd);
    buf[n] = buf[n + 1] = '\0';
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\n')
            buf[i] = '\0';
    return rc;
}

static void attach_say(char *msg, size_t msglen, const char *what)
{
    if (msg && msglen)
        snprintf(msg, msglen, "%s", what);
}

static void attach_stamp(void)
{
    char when[40];
    struct tm tm;
    time_t now = time(NULL);
    gmtime_r(&now, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(hs_attach_line, sizeof(hs_attach_line),
             "attach: attached at %s (attach %u); allocations made before it are not seen", when,
             attach_count + 1);
}

/* patch.c's stopper while the program runs on: the jump written with every thread that
 * answers stopworld.c's signal stopped, and each one inside the replaced bytes moved. A
 * thread that does not answer in time could be anywhere: nothing is written (-EBUSY).
 * Threads that block the signal (heapsift's, or a program's that blocks every signal)
 * run on. */
static int attach_stopper(int (*write)(void *arg), uintptr_t (*fix)(void *arg, uintptr_t pc),
                          void *arg)
{
#if defined(__x86_64__)
    hs_sw_t w;
    int rc = hs_sw_prepare(&w);
    if (rc != 0)
        return rc;
    hs_sw_stop(&w, 2000);
    rc = w.unanswered || w.overflow ? -EBUSY : write(arg);
    for (size_t i = 0; rc == 0 && i < w.n; i++) {
        hs_sw_slot_t *sl = &w.slots[i];
        if (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) != HS_SW_STOPPED)
            continue;
        uintptr_t to = fix(arg, (uintptr_t)sl->regs[REG_RIP]);
        if (to)
            __atomic_store_n(&sl->pc_to, to, __ATOMIC_RELEASE);
    }
    hs_sw_free(&w);
    return rc;
#else
    return write(arg);
#endif
}

/* The first attach: options, initialisation, hooks, and what the constructors start. */
static int attach_first(char *msg, size_t msglen)
{
    attach_src = attach_opts[0];
    hs_options_set_source(attach_lookup);
    __atomic_store_n(&hs_attach_began, 1, __ATOMIC_RELEASE);
    hs_init();
    hs_options_set_source(NULL);
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON) {
        attach_say(msg, msglen,
                   "the library refused the options or could not start (the target's stderr "
                   "says why)");
        return -EINVAL;
    }
    attach_stamp();
    if (hs_opt.spool) /* its set-up reads files and allocates: not with threads stopped */
        hs_log("HEAPSIFT_SPOOL (--spool) is not supported by heapsift attach yet: no spool is "
               "kept");
    hs_reach_set_quiet(true);          /* the command prints the line */
    hs_patch_set_live(attach_stopper); /* the program runs on: jumps written with it stopped */
    hs_reach_detect();
    hs_patch_set_live(NULL);
    hs_termsig_install();
    hs_triggers_start();
    hs_http_start();
    attach_say(msg, msglen, hs_reach_comment() ? hs_reach_comment() : "nothing hooked");
    return 0;
}

/* A later attach: -o, --rate and --http (with its port file and token) from the new
 * file, counts restarted, patches back, the endpoint started again when asked for. */
static int attach_again(char *msg, size_t msglen)
{
    hs_options_t keep = hs_opt;
    attach_src = attach_opts[1];
    hs_options_set_source(attach_lookup);
    int rc = hs_options_load(); /* hs_opt.out is options.c's own copy: taken below */
    hs_options_set_source(NULL);
    uint64_t rate = hs_opt.rate;
    const char *out = hs_opt.out;
    /* These point into attach_opts[1], read until the call returns: http.c copies them. */
    const char *http = hs_opt.http, *portfile = hs_opt.http_portfile, *token = hs_opt.http_token;
    hs_opt = keep;
    hs_opt.out = out;
    if (rc != 0 || rate == 0) {
        attach_say(msg, msglen, rc ? "bad options (the target's stderr says which)" : "rate 0");
        return -EINVAL;
    }
    __atomic_store_n(&hs_state, HS_STATE_ON, __ATOMIC_RELEASE);
    heapsift_set_rate(rate);
    heapsift_reset();
    hs_patch_set_live(attach_stopper);
    rc = hs_patch_restore_all();
    hs_patch_set_live(NULL);
    rc = rc ? rc : hs_got_restore_all();
    if (rc != 0) {
        attach_say(msg, msglen, "the hooks could not be put back");
        __atomic_store_n(&hs_state, HS_STATE_OFF, __ATOMIC_RELEASE);
        return rc;
    }
    attach_stamp();
    hs_termsig_install();
    hs_triggers_resume();
    hs_http_restart(http, portfile, token);
    heapsift_set_active(1);
    attach_say(msg, msglen,
               "re-attached: the library was loaded already; -o, --rate and --http apply, the "
               "other options are the first attach's");
    return 0;
}

/* A process of another user than the one attaching (root) may not write the directory
 * of -o's pattern, and would lose the profile at detach: msg gets a second line saying so
 * (attach prints it as a warning). access(2) asks with this process's own ids
 * (hs_pattern_dir_check, as heapsift run asks before it starts a program). */
static void attach_check_out(char *msg, size_t msglen)
{
    char dir[1024];
    int e = msg && msglen && hs_opt.out ? hs_pattern_dir_check(hs_opt.out, dir, sizeof(dir)) : 0;
    if (e <= 0)
        return;
    size_t len = strlen(msg);
    snprintf(msg + len, msglen - len,
             "\nprocess %d (uid %u) cannot write %s (%s): its profiles will not be written "
             "there; give -o a directory it may write",
             (int)getpid(), (unsigned)getuid(), dir, strerror(e));
}

/*
 * Called on the attach thread (heapsift_attach_thread) while the program runs on: each
 * jump is written with its threads stopped in-process (hs_patch_set_live). pcs[npcs], when
 * given (a caller that stopped threads itself), are replaced by where each must resume
 * (hs_patch_fixup_pc), or 0 when it need not move. msg gets one line for the user (what was hooked,
 * or why not), and a second when this process cannot write -o's directory. 0, or -EALREADY
 * (profiled from its start), -EBUSY (attached already), -EINVAL (options refused), or the error
 * reading optfile.
 */
HS_EXPORT int heapsift_attach_init(const char *optfile, uintptr_t *pcs, size_t npcs, char *msg,
                                   size_t msglen)
{
    attach_say(msg, msglen, "");
    if (!hs_attach_hold() && !__atomic_load_n(&hs_attach_began, __ATOMIC_ACQUIRE)) {
        attach_say(msg, msglen,
                   "the process loaded libheapsift.so itself (LD_PRELOAD or heapsift run): it "
                   "is profiled already");
        return -EALREADY;
    }
    if (attach_on) {
        attach_say(msg, msglen, "attached already (heapsift detach PID ends it)");
        return -EBUSY;
    }
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    int rc = attach_read(optfile, attach_opts[attach_count ? 1 : 0], ATTACH_OPTS_MAX);
    if (rc != 0)
        attach_say(msg, msglen, "cannot read the options file");
    else
        rc = attach_count ? attach_again(msg, msglen) : attach_first(msg, msglen);
    if (rc == 0) {
        attach_count++;
        attach_on = true;
        attach_check_out(msg, msglen);
    }
    for (size_t i = 0; pcs && i < npcs; i++)
        pcs[i] = hs_patch_fixup_pc(pcs[i]);
    hs_guard_exit(t);
    return rc;
}

static void attach_collect(hs_live_t *e, void *arg)
{
    (void)arg;
    if (attach_naddrs < ATTACH_FORGET_BATCH)
        attach_addrs[attach_naddrs++] = e->addr;
}

/* Empties the live table: once the patches are gone, frees are not seen. */
static void attach_forget_all(void)
{
    do {
        attach_naddrs = 0;
        hs_livetab_each(attach_collect, NULL);
        for (size_t i = 0; i < attach_naddrs; i++)
            hs_forget((void *)attach_addrs[i]);
    } while (attach_naddrs == ATTACH_FORGET_BATCH);
}

/*
 * Called on the attach thread (`heapsift detach`, or the end of `attach --seconds`) while
 * the program runs on (removing a patch is safe under running threads: patch.c). Writes the profile
 * to the -o pattern (path gets where), then turns sampling off and makes the hooks inert. With
 * HEAPSIFT_LEAKS, the reachability scan runs first and the leak report of that profile (blocks
 * allocated since the attach and live now) is kept in a buffer: report[0] gets its address,
 * report[1] its length (0 and 0 without one), for the command to read; it stays until the next
 * detach. 0, -ENOENT (not attached), or the dump's error (the hooks are removed all the same).
 */
HS_EXPORT int heapsift_attach_finish(char *path, size_t cap, uint64_t *report)
{
    if (path && cap)
        path[0] = '\0';
    if (report)
        report[0] = report[1] = 0;
    if (!attach_on)
        return -ENOENT;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    bool leaks = hs_leaks_on();
    if (leaks) {
        hs_leaks_scan_fresh();
        hs_leaks_capture_begin();
    }
    int rc = hs_dump_ex(NULL, "heap", HS_DUMP_FINAL); /* -o names the file as given */
    if (leaks) {
        size_t len;
        const char *text = hs_leaks_capture_end(&len);
        hs_leaks_scan_forget();
        if (report && text) {
            report[0] = (uint64_t)(uintptr_t)text;
            report[1] = len;
        }
    }
    if (rc == 0 && path && cap)
        hs_dump_last_path(path, cap);
    heapsift_set_active(0);
    hs_termsig_uninstall(); /* ended by a signal now, it writes nothing */
    hs_triggers_pause();    /* no thread of heapsift's left: */
    hs_http_pause();        /* the endpoint's ends too, its sockets closed */
    int rc2 = hs_patch_remove_all();
    int rc3 = hs_got_remove_all();
    rc2 = rc2 ? rc2 : rc3;
    attach_forget_all();
    __atomic_store_n(&hs_state, HS_STATE_OFF, __ATOMIC_RELEASE);
    attach_on = false;
    hs_attach_line[0] = '\0';
    hs_guard_exit(t);
    return rc ? rc : rc2;
}

/*
 * The attach thread's work (src/cli/inject/inject_thread.c made the thread, on a program thread
 * caught outside the allocator; the program runs on meanwhile): box->op says which of
 * heapsift_attach_init and heapsift_attach_finish, whose result, line and profile path go
 * into the box; done is set last, and nothing touches the box after it. The thread blocks
 * every signal (the program's handlers are not for it), detaches itself and ends.
 */
HS_EXPORT void *heapsift_attach_thread(void *arg)
{
    hs_attach_box_t *box = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_detach(pthread_self());
    prctl(PR_SET_NAME, "heapsift-attach", 0, 0, 0);
    box->ktid = (int32_t)syscall(SYS_gettid);
    int rc = -EINVAL;
    if (box->magic == HS_BOX_MAGIC && box->op == HS_BOX_INIT && !box->cancel)
        rc = heapsift_attach_init(box->optfile, NULL, 0, box->msg, sizeof(box->msg));
    else if (box->magic == HS_BOX_MAGIC && box->op == HS_BOX_FINISH)
        rc = heapsift_attach_finish(box->out, sizeof(box->out), box->report);
    box->rc = rc;
    __atomic_store_n(&box->done, HS_BOX_DONE, __ATOMIC_RELEASE);
    return NULL;
}
