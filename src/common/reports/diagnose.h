/*
 * heapsift diagnose: from one profile, or a series of one process's dumps, the one-page
 * answer to "what is wrong with this program's memory", largest finding first
 * (docs/diagnose.md). Each finding has a kind, its bytes, the site it is about (when it is
 * about one), the evidence (the figures it rests on) and advice worded for the allocator in
 * use. A finding is claimed only where the evidence holds: a steady series gets no growth
 * finding, memory all reachable no leak finding, a profile without heapsift's accounting
 * comments says that part cannot be answered.
 *
 * diagnose_find.c reads the evidence (accounting comments, suspects, reachability labels,
 * noise intervals) into findings; diagnose_out.c orders them and writes the text page or
 * the JSON contract; diagnose.c reads the files. Used by `heapsift diagnose` and the web
 * UI. Owns its allocations; never modifies the profiles. Not thread-safe.
 */
#ifndef HS_DIAGNOSE_H
#define HS_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

/* Reads the profiles at paths[0..n) (n == 1: one profile; n > 1: a series in time order,
 * oldest first), finds what is wrong, and writes the one-page answer to out: text, or the
 * JSON contract when json is true. target is the name printed as "target". Returns 0, or
 * -1 after printing an error line (hs_err style) naming the file. */
int hs_diagnose_files(const char *const *paths, size_t n, const char *target, bool json, FILE *out);

typedef enum {
    HS_DIAG_FRAGMENTATION,
    HS_DIAG_GROWTH,
    HS_DIAG_LEAK,
    HS_DIAG_NOT_HEAP,
    HS_DIAG_BLIND_SPOT,
    HS_DIAG_TOP_SITE,
} hs_diag_kind_t;

/* One finding: every string malloc'ed (site may be NULL: not about one site). */
typedef struct {
    hs_diag_kind_t kind;
    int64_t bytes;
    char *site, *evidence, *advice;
} hs_diag_finding_t;

/* The answer: rss_bytes is -1 when the profiles do not tell it. notes are lines of the
 * text page that are no findings (a part that cannot be answered, a declined part). */
typedef struct {
    int64_t rss_bytes;
    const char *allocator; /* "glibc", "jemalloc", "tcmalloc", ... or "unknown" (static) */
    hs_diag_finding_t *f;
    size_t n, cap;
    char **notes;
    size_t nnotes;
} hs_diagnosis_t;

/* Finds what is wrong in n >= 1 profiles in time order (oldest first). Returns 0, or a
 * negative errno with a message in err (d is freed with hs_diagnosis_free in every case). */
int hs_diagnose_profiles(hs_diagnosis_t *d, const hs_profile_t *const *profs, size_t n, char *err,
                         size_t errlen);
void hs_diagnosis_free(hs_diagnosis_t *d);

/* Appends a finding (the strings copied; site may be NULL) or a note. 0 or -ENOMEM. */
int hs_diagnosis_add(hs_diagnosis_t *d, hs_diag_kind_t kind, int64_t bytes, const char *site,
                     const char *evidence, const char *advice);
int hs_diagnosis_note(hs_diagnosis_t *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Orders the findings by bytes, largest first (ties by kind, in the enum's order). */
void hs_diagnosis_sort(hs_diagnosis_t *d);
/* "fragmentation", "growth", "leak", "not_heap", "blind_spot", "top_site". */
const char *hs_diag_kind_name(hs_diag_kind_t k);
/* Writes the JSON contract (docs/diagnose.md) or the text page; the findings must be
 * sorted. Returns 0 or -EIO. */
int hs_diagnosis_write_json(const hs_diagnosis_t *d, const char *target, FILE *out);
int hs_diagnosis_write_text(const hs_diagnosis_t *d, const char *target, FILE *out);

#endif
