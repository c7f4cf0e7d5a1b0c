/*
 * The leak report at exit (HEAPSIFT_LEAKS, HEAPSIFT_SUPPRESSIONS, HEAPSIFT_LEAKS_MAX):
 * the exit dump hands its profile to hs_leaks_report; the exit destructor calls
 * hs_leaks_exit last. See leaks.c.
 */
#ifndef HS_LEAKS_H
#define HS_LEAKS_H

#include "model/profile.h"
#include "reachscan.h"

#include <stddef.h>

/* True when HEAPSIFT_LEAKS asks for a report. */
bool hs_leaks_on(void);
/* Prints the leak report of profile p (the exit profile) on stderr. Guard held; called
 * once, from the exit dump, whether or not the profile file could be written. */
void hs_leaks_report(const hs_profile_t *p);
/* With a leak report asked for: the reachability scan of the sampled blocks
 * (reachscan.c), kept for the exit dump. Called on the exiting thread before the exit
 * dump; takes the guard itself. */
void hs_leaks_scan(void);
/* The scan's unreachable objects and bytes per stack added to objects[] and bytes[]
 * (nstacks entries); false (nothing added) when no scan ran or it failed. */
bool hs_leaks_unreached(double *objects, double *bytes, size_t nstacks);
/* heapsift detach (attach.c, guard held): the report of the detach profile goes to a
 * buffer (begin) instead of stderr, for the command to read and print; end returns it
 * (kept until the next begin). The scan is run afresh before (scan_fresh) and dropped
 * after (scan_forget), so an exit after a re-attach scans again. */
void hs_leaks_capture_begin(void);
const char *hs_leaks_capture_end(size_t *len);
void hs_leaks_scan_fresh(void);
void hs_leaks_scan_forget(void);
/* A leak check in a running process (heapsift_leak_check, POST /debug/heapsift/leakcheck):
 * runs the scan into r and makes it the one dumps label their samples with, until
 * hs_leaks_check_end (which frees r). Dump lock and guard held, on one of heapsift's own
 * threads. 0 or -errno (-ENOTSUP: profiling off). */
int hs_leaks_check_begin(hs_reachscan_t *r);
void hs_leaks_check_end(hs_reachscan_t *r);
/* The profile comment on the scan dumps label with now (NULL: none), and a second one on
 * how it was made: a fork's snapshot and the pause, or stop-the-world and why. */
const char *hs_leaks_comment(void);
const char *hs_leaks_mode_comment(void);
/* One line on how the scan stopped the other threads (no newline), into out. */
void hs_leaks_threads(const hs_reachscan_t *r, char *out, size_t cap);
/* HEAPSIFT_LEAKS=error and the report found leaks: flushes stdio and ends the process
 * with status 23. Otherwise returns. Called last by the exit destructor. */
void hs_leaks_exit(void);

#endif
