/*
 * Inside the spool (spool.h): the state spool.c (the process's own spool) and spool_child.c
 * (the spools of its children: a forked child's copy, a raw clone's spare) share. Not for
 * any other file.
 */
#ifndef HS_SPOOL_INT_H
#define HS_SPOOL_INT_H

#include "runtime/core.h"

#include "model/spool_fmt.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HS_SPOOL_MAPS 512u      /* mapping records */
#define HS_SPOOL_COVER 1024u    /* executable ranges known (file-backed or not) */
#define HS_SPOOL_SPARES_MAX 64u /* spares one process makes (HEAPSIFT_SPOOL_SPARES) */

/* The owner token's values (hs_sp.token, a MADV_WIPEONFORK page: 0 in any child). */
#define HS_SPOOL_TOKEN_NONE 0    /* a child that has not taken a spool (nor tried) */
#define HS_SPOOL_TOKEN_MINE 1    /* the spool at hs_sp.h is this process's */
#define HS_SPOOL_TOKEN_TAKING 2  /* one of its threads is taking a spare now */
#define HS_SPOOL_TOKEN_NOSPARE 3 /* none was left: no spool */

typedef struct {
    int on;     /* read with acquire on every call: 0 = no spool */
    int rescue; /* heapsift run's spool, not HEAPSIFT_SPOOL's: says nothing unless verbose */
    pid_t owner;
    int *token; /* NULL before Linux 4.14 (no MADV_WIPEONFORK): the pid alone tells */
    hs_spool_header_t *h;
    hs_spool_map_t *maps;
    uint8_t *stacks;
    hs_spool_live_t *live;
    uint32_t *next; /* free list links, in anonymous memory */
    uint64_t head;  /* (tag << 32) | (index + 1) of the first free slot; 0 = empty */
    uint64_t cover[HS_SPOOL_COVER][2];
    uint32_t ncover;
    int rereads;
    char path[4096], tmp[4200], pattern[1100];
    int forked_rescue; /* a forked child whose parent had a rescue spool: copies it */
    /* Spares (spool_child.c), each a whole spool file of the same size, mapped shared. */
    uint8_t *spare[HS_SPOOL_SPARES_MAX];
    uint32_t nspares;
    uint8_t *inherited; /* a raw clone's child: its parent's spool, still mapped */
    int spare_taken;    /* the spool is a spare: its command line is read from memory */
    uint32_t puts;      /* samples spooled, to read that command line again now and then */
    uint64_t pid_ns;    /* this process's PID namespace (spool_fmt.h) */
    /* The program's arguments as the kernel laid them out: [arg_lo, arg_hi) held argv's
     * strings at start, env_hi ends the environment's, which follow them. */
    const char *arg_lo, *arg_hi, *env_hi;
} hs_spool_state_t;

extern hs_spool_state_t hs_sp HS_HIDDEN;
extern pthread_mutex_t hs_spool_lock HS_HIDDEN;

/* CLOCK_REALTIME in nanoseconds (the vDSO's: no system call). */
int64_t hs_spool_now_ns(void) HS_HIDDEN;
/* The regions of a spool of size bytes into h. */
void hs_spool_layout(hs_spool_header_t *h, uint64_t size) HS_HIDDEN;
/* Points hs_sp's regions into the spool whose header is at base. */
void hs_spool_adopt_regions(uint8_t *base) HS_HIDDEN;
/* Appends every stack interned so far (lock held). */
void hs_spool_all_stacks_locked(void) HS_HIDDEN;
/* Creates, reserves and maps hs_sp.tmp (spool.c); NULL with *what and *err on failure. */
void *hs_spool_map_file(uint64_t size, const char **what, int *err, bool direct) HS_HIDDEN;
/* Says once why there is no spool and undoes what was done. */
void hs_spool_give_up(void *base, uint64_t size, const char *what, int err) HS_HIDDEN;

/* spool_child.c: the spares of a PID namespace's init, made at open (after its own spool);
 * a child taking one (true when the spool is now its own): a raw clone's child
 * (HS_SPOOL_FORKED_CLONE) at its first sample, a forked child that cannot create a file
 * (HS_SPOOL_FORKED_COPY) in its fork handler. */
void hs_spool_spares_make(uint64_t size) HS_HIDDEN;
/* A spare's command line read again from memory: the program may have written its title
 * since it took the spare (Chromium's renderers do, after their first allocations). */
void hs_spool_spare_cmdline(void) HS_HIDDEN;
bool hs_spool_take_spare(uint64_t forked) HS_HIDDEN;

#endif
