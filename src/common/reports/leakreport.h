/*
 * The leak report: from a heap profile's live set (inuse_objects, inuse_space), the
 * allocation sites still holding memory, largest first, each with its objects, bytes and
 * symbolized stack, then the suppressions that applied and a one-line summary, as text
 * meant for a person reading a CI log. When the samples carry the label reachable=yes|no
 * (the exit scan, reachscan.c), each site says how much of it is unreachable. Sites are stacks:
 * samples with equal location lists are summed whatever their labels. Pure code over the profile
 * model: the library runs it at exit under its reentrancy guard (leaks.c); memory from malloc.
 */
#ifndef HS_LEAKREPORT_H
#define HS_LEAKREPORT_H

#include "base/buf.h"
#include "model/profile.h"
#include "suppress.h"

#include <stdint.h>

typedef struct {
    uint64_t rate;          /* highest sampling rate in effect; 1 = every allocation (exact) */
    unsigned max_sites;     /* sites listed; 0 = all */
    const char *program;    /* named in the header */
    long pid;               /* named in the header */
    const char *supp_error; /* non-NULL: why the user's suppressions are not applied */
    const char *when;       /* "exit" when NULL: when the memory is counted */
    const char *since;      /* non-NULL: where knowledge starts (an attach), said under the
                             * header: only blocks allocated since then are covered */
} hs_leak_opts_t;

typedef struct {
    uint64_t sites, suppressed_sites;
    double objects, bytes;           /* unsuppressed */
    double supp_objects, supp_bytes; /* suppressed */
    /* The profile's live samples carry reachable=yes|no (the exit scan ran): of the
     * unsuppressed, the sites with unreachable objects and those objects. */
    bool reach;
    uint64_t unreach_sites;
    double unreach_objects, unreach_bytes;
} hs_leak_result_t;

/* Appends the report of p's live set to out and fills *res (supp may be NULL; its rules'
 * counters are overwritten). Returns 0, -ENOMEM, or -EINVAL when p has no inuse sample
 * types. */
int hs_leak_report(const hs_profile_t *p, hs_supp_t *supp, const hs_leak_opts_t *o, hs_buf_t *out,
                   hs_leak_result_t *res);

#endif
