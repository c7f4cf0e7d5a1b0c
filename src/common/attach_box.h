/*
 * The attach box: the block of memory `heapsift attach` maps in the target (src/cli/
 * inject_thread.c) and the library's attach thread reads and answers in
 * (src/preload/attached/attach.c). The command fills it, a program thread caught outside the
 * allocator creates a thread on it (pthread_create, from inject_stub.c's call stub), and
 * that thread dlopens the library (the thread stub) and calls heapsift_attach_thread(box),
 * which does the work and sets done last. Nothing in the target waits for the command: a
 * command that dies leaves a box the target never reads again.
 * The offsets are spelled out for the stubs' assembly; static assertions keep them true.
 */
#ifndef HS_ATTACH_BOX_H
#define HS_ATTACH_BOX_H

#include <stddef.h>
#include <stdint.h>

#define HS_BOX_MAGIC 0x31786f6274666973ull /* "siftbox1" */

enum { HS_BOX_INIT = 1, HS_BOX_FINISH = 2 };
/* done: 0 running; HS_BOX_DONE the library answered (rc, msg, out, report); HS_BOX_NOLOAD
   the thread stub could not load the library or find its entry (msg: dlerror's text). */
enum { HS_BOX_DONE = 1, HS_BOX_NOLOAD = 2 };

#define HS_BOX_CREATED 0 /* uint64_t[2]: pthread_create's result, then 1 once stored */
#define HS_BOX_DLOPEN 16 /* the target's dlopen, dlsym, dlerror, snprintf */
#define HS_BOX_DLSYM 24
#define HS_BOX_DLERROR 32
#define HS_BOX_SNPRINTF 40
#define HS_BOX_DONE_OFF 52
#define HS_BOX_SYM 96 /* the entry's name */
#define HS_BOX_FMT 124
#define HS_BOX_PATH 128 /* the library as the target opens it */
#define HS_BOX_MSG 2176 /* the library's line, or dlerror's text */
#define HS_BOX_MSG_LEN 1024
#define HS_BOX_PATH_LEN 1024

typedef struct {
    uint64_t created[2];
    uint64_t dlopen, dlsym, dlerror, snprintf;
    uint32_t op;     /* HS_BOX_INIT or HS_BOX_FINISH */
    uint32_t done;   /* set last, with release order */
    int32_t rc;      /* heapsift_attach_init's or _finish's result */
    uint32_t cancel; /* set by the command when it gave up waiting: hook nothing */
    uint64_t magic;
    uint64_t report[2]; /* finish: the leak report's address and length */
    uint64_t tid;       /* the attach thread's pthread_t */
    char sym[24];
    int32_t ktid; /* the attach thread's, written by it */
    char fmt[4];  /* "%s", for snprintf (glibc's strncpy is an IFUNC: its symbol is the
                     resolver) */
    char path[HS_BOX_PATH_LEN];    /* init: the library as the target opens it */
    char optfile[HS_BOX_PATH_LEN]; /* init: the options file */
    char msg[HS_BOX_MSG_LEN];
    char out[4096]; /* finish: where the profile was written */
} hs_attach_box_t;

_Static_assert(offsetof(hs_attach_box_t, dlopen) == HS_BOX_DLOPEN, "box");
_Static_assert(offsetof(hs_attach_box_t, dlsym) == HS_BOX_DLSYM, "box");
_Static_assert(offsetof(hs_attach_box_t, dlerror) == HS_BOX_DLERROR, "box");
_Static_assert(offsetof(hs_attach_box_t, snprintf) == HS_BOX_SNPRINTF, "box");
_Static_assert(offsetof(hs_attach_box_t, fmt) == HS_BOX_FMT, "box");
_Static_assert(offsetof(hs_attach_box_t, done) == HS_BOX_DONE_OFF, "box");
_Static_assert(offsetof(hs_attach_box_t, sym) == HS_BOX_SYM, "box");
_Static_assert(offsetof(hs_attach_box_t, path) == HS_BOX_PATH, "box");
_Static_assert(offsetof(hs_attach_box_t, msg) == HS_BOX_MSG, "box");

#endif
