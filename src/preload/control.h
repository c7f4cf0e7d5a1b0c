/*
 * The public runtime API's state shared with the rest of the library (control.c).
 */
#ifndef HS_CONTROL_H
#define HS_CONTROL_H

#include "core.h"

#include <stdint.h>

/* The highest rate heapsift_set_rate ever set (0: never called). */
extern uint64_t hs_rate_max HS_HIDDEN;
/* The rate the live estimate's interval is computed at: the highest ever in effect. */
uint64_t hs_ci_rate(void);

#endif
