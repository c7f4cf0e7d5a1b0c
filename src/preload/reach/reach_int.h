/*
 * What reach.c (the look at start) and reach_later.c (the look at objects loaded later)
 * share: the one line's buffer, the lists it is built from, and the Rust and prefixed-API
 * hooking both looks use. Inside src/preload/reach only.
 */
#ifndef HS_REACH_INT_H
#define HS_REACH_INT_H

#include "hooks.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REACH_MAX 1024

/* "" = nothing bypasses heapsift. Written at start, then only appended to
 * (reach_later.c), so a dump that reads it while an object loaded later is reported
 * reads a whole line (reach_later.c's appends). */
extern char hs_reach_line[REACH_MAX] HS_HIDDEN;

typedef struct {
    char *buf;
    size_t len;
    int n;
} reach_list_t;

/* Rust's allocator entry points in one object's .symtab: local symbols, found by the
 * suffix of their mangled names; rdl is Rust's default allocator (___rdl_alloc). */
typedef struct {
    void *fn[HS_RUST_N];
    size_t size[HS_RUST_N];
    uintptr_t rdl;
} reach_rust_t;

/* What was hooked and what still bypasses heapsift, for the one line. */
typedef struct {
    reach_list_t hooked, bypass; /* bypass: each entry with where and why */
    reach_list_t got;            /* hooked through the callers' import slots */
    reach_list_t via;            /* not hooked, but calling what reaches heapsift */
    reach_list_t via_through;    /* what they call: malloc, free */
    reach_list_t uncalled;       /* a library's, not hooked, but bound by no call */
    const char *uncalled_owner;
    reach_list_t fam; /* the malloc family's members not hooked */
    const char *hooked_owner, *fam_owner;
    char fam_why[200]; /* the first refusal among them */
    char got_why[160]; /* why the first hooked through import slots was not in place */
    struct {
        uint8_t prefix; /* index in reach_prefixes */
        int8_t k;       /* hs_hooks_api_index */
        void *addr;
        size_t size;
        const void *base;  /* the object defining it */
        const char *owner; /* its name; NULL: the executable */
        bool via;          /* planned: its code calls what reaches heapsift */
        char through[24];  /* planned: what, when via */
    } api[64];             /* an allocator's own API functions found, to hook (hs_reach_api_all) */
    int napi;
    /* Planned (hs_reach_plan), for a look made with the other threads stopped, when no
     * loader call may be made: whether the API's object frees into the malloc heapsift
     * interposes, the object's extent, and whether the Rust allocator's code reaches
     * heapsift. */
    bool planned, api_release, rust_via;
    uintptr_t obj_lo, obj_hi;
    char rust_through[24];
    reach_list_t nohook; /* the executable's API functions heapsift has no hook for */
    reach_rust_t rust;   /* the executable's */
    bool off;            /* HEAPSIFT_HOOKS=off or no hooks in this build */
} reach_t;

/* A file's base name for the line; the executable's own name for /proc/self/exe. */
const char *hs_reach_base(const char *path);
/* Whether the line is said on stderr too (HEAPSIFT_VERBOSE=1, not under heapsift run). */
bool hs_reach_loud(void);
/* Rust's allocator in one object's .symtab: notes one symbol (true if it was one of the
 * entry points); whether the entry points found are Rust's default allocator; hooks them
 * as one more instance (hooks_rust.c), said in r. */
bool hs_reach_rust_sym(reach_rust_t *rs, const char *name, uintptr_t addr, size_t size);
bool hs_reach_rust_default(const reach_rust_t *rs);
void hs_reach_rust_hook(reach_t *r, const reach_rust_t *rs, const char *owner);
/* An allocator's prefixed API (je_*, tc_*, mi_*): notes one exported function of object
 * base (owner its name; NULL: the executable), to hook; hooks those noted (hooks_api.c). */
bool hs_reach_api_note(reach_t *r, const char *name, uintptr_t addr, size_t size, const void *base,
                       const char *owner);
void hs_reach_api_all(reach_t *r);
/* Asks the loader, before the other threads are stopped, what hooking r's Rust allocator
 * rs and APIs would (hs_hooks_frees_into, whether each reaches heapsift through what it
 * calls), for the object at [lo, hi); the hooking then makes no loader call. */
void hs_reach_plan(reach_t *r, const reach_rust_t *rs, uintptr_t lo, uintptr_t hi);
/* The "X reach heapsift through the malloc they call" part of a line, from r's lists,
 * after sep; "" when none. */
void hs_reach_via_text(const reach_t *r, const char *sep, char *out, size_t cap);
/* At the end of the look at start (one thread): the objects loaded now are the start's;
 * later ones are looked at from the sampled path when later (an object imports dlopen)
 * and the decoder loads, or when import slots were rewritten. */
void hs_reach_later_start(const void *self_base, bool later);

#endif
