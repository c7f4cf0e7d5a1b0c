/*
 * What the diagnosis' files share (diagnose_find.c, diagnose_acct.c): the accounting
 * comments of a profile read into numbers, byte formatting for evidence, the threshold
 * below which a part of the RSS is no finding. Not installed; not for other modules.
 */
#ifndef HS_DIAGNOSE_INT_H
#define HS_DIAGNOSE_INT_H

#include "diagnose.h"

/* A profile's accounting comments (docs/accounting.md) as key=value pairs. */
typedef struct {
    char name[48]; /* "section.key" */
    char value[64];
} hs_diag_kv_t;

typedef struct {
    hs_diag_kv_t kv[96];
    int n;
    const char *reach; /* the "reach: ..." comment, or NULL */
    bool scanned;      /* written after a scan that made untouched pages resident (its
                        * "reachability scan: ..." comment does not say "untouched") */
} hs_diag_acct_t;

void hs_diag_acct_read(hs_diag_acct_t *a, const hs_profile_t *p);
/* The value of "section.key", or NULL. */
const char *hs_diag_str(const hs_diag_acct_t *a, const char *name);
/* The number of "section.key" (0 when absent). */
double hs_diag_num(const hs_diag_acct_t *a, const char *name);

/* bytes as "151.19 MB" (decimal units, as evidence strings have them). */
void hs_diag_mb(char *s, size_t len, double b);

/* Whether part bytes of a process of rss bytes are worth a finding: at least 1 MiB and
 * 5% of the RSS (the RSS unknown: 1 MiB). */
bool hs_diag_significant(double part, double rss);

/* The findings that rest on the accounting of the last profile: fragmentation, not_heap,
 * blind_spot; or the notes saying which part cannot be answered. 0 or -ENOMEM. */
int hs_diag_acct_findings(hs_diagnosis_t *d, const hs_profile_t *last);

#endif
