/*
 * The exit profile of a program ended by SIGINT, SIGTERM or SIGHUP (termsig.c).
 */
#ifndef HS_TERMSIG_H
#define HS_TERMSIG_H

#include <stdbool.h>

/* Catches SIGINT, SIGTERM and SIGHUP where the program leaves them at their default
 * action (HEAPSIFT_DUMP_ON_TERM=1, the default). Before the trigger thread starts. */
void hs_termsig_install(void);

/* Whether a handler was installed: the trigger thread must run to write the profile. */
bool hs_termsig_armed(void);

/* On the trigger thread, when woken for it: the exit dumps, then the waiting handlers
 * re-raise the signal. */
void hs_termsig_dump(void);

#endif
