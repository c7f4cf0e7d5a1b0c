/*
 * The run report of `heapsift run` (runreport.c).
 */
#ifndef HS_RUNREPORT_H
#define HS_RUNREPORT_H

#include "model/profile.h"

/* Notes that p was written to path, when HEAPSIFT_RUN_REPORT names a report file. */
void hs_runreport_note(const char *path, const hs_profile_t *p);

#endif
