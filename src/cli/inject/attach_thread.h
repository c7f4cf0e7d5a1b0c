/*
 * The attach thread, from the command's side (attach_thread.c): a box mapped in the target,
 * a thread created there on a program thread caught at a safe point, the library's answer
 * read back, the box unmapped. attach.c says what to run and prints the answer.
 */
#ifndef HS_CLI_ATTACH_THREAD_H
#define HS_CLI_ATTACH_THREAD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    int op;                      /* HS_BOX_INIT or HS_BOX_FINISH */
    const char *link;            /* init: the library as the target opens it */
    const char *optfile;         /* init: the options file */
    uintptr_t entry;             /* finish: the library's heapsift_attach_thread in pid */
    const char *verb;            /* for the messages: attach or detach */
    volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM: give up waiting */
    /* the answer */
    int rc;              /* the library's result */
    char msg[1024];      /* its line (init), or dlerror's text */
    char out[4096];      /* where the profile was written (finish) */
    uint64_t report[2];  /* the leak report's address and length (finish) */
    long long paused_us; /* the longest a program thread was stopped */
    unsigned tries;      /* threads stopped before one was at a safe point */
    int sigsys;          /* seccomp traps of the thread's system calls, dropped */
} hs_attach_job_t;

/* Runs job in pid. 0 when the library answered (job->rc, msg, out, report), else an exit
 * status of attach_check.h, said on stderr. */
int hs_attach_thread_run(pid_t pid, hs_attach_job_t *job);

#endif
