/*
 * Sampling noise (noise.c; docs/sampling.md): the variance of a sampled estimate, its 95%
 * interval, and the verdict on a change between two estimates. report.h includes it.
 */
#ifndef HS_NOISE_H
#define HS_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sampling variance of a stack's estimate (docs/sampling.md): objects N and bytes B
 * sampled at rate period, taken as N objects of the mean size. Rate <= 1 is exact (0). */
void hs_report_variance(double objects, double bytes, int64_t period, double *var_objects,
                        double *var_bytes);

/* The 95% interval [*lo, *hi] of an estimate est whose sampling variance is var: exact
 * Poisson (Garwood) limits on the effective sample count n = est^2 / var, scaled back by
 * var / est (docs/sampling.md). Asymmetric for few samples (the upper side the longer),
 * within a part in sqrt(n) of est -+ 1.96 sqrt(var) for many. [est, est] when var <= 0
 * (exact) or est == 0; a negative est gives the mirror image. Every interval heapsift
 * prints comes from here: top --ci, the web UI's rows, check's budgets, heapsift_stats and
 * heapsift_tracker_stats (so the HTTP stats), the estimate and tracker comments of a dump.
 * No allocation; safe in any thread. */
void hs_report_interval(double est, double var, double *lo, double *hi);
/* The 95% Garwood limits of a Poisson mean given a count n >= 0 (real): the 2.5% quantile
 * of Gamma(n) (0 for n = 0) and the 97.5% quantile of Gamma(n + 1). */
void hs_report_poisson_limits(double n, double *lo, double *hi);

/* One side of a comparison: an estimate (>= 0), its sampling variance, and whether it is
 * exact (every profile of that side recorded at rate 1): then est is the truth, even 0.
 * A side with var 0 and est > 0 is exact too. */
typedef struct {
    double est, var;
    bool exact;
} hs_estimate_t;

typedef enum { HS_SAME, HS_NOISE, HS_GREW, HS_SHRANK } hs_verdict_t;

/* diff's level: each direction at 2.5%, a two-sided test at 5%. */
#define HS_NOISE_ALPHA 0.025

/* The one-sided p-value of the change from base to now under "the same truth": each side a
 * Poisson count of its effective samples (as hs_report_interval has it), compared by the
 * exact conditional binomial test (given the two counts' sum, the share of now's is
 * binomial); a sampled side against an exact one by its Poisson tail. A side with nothing
 * sampled takes the other side's sample weight. 1 when nothing changed, 0 between exact
 * sides (every change is real) and when a sampled side with nothing sampled faces an exact
 * one (no weight to judge it by). */
double hs_report_change_p(hs_estimate_t base, hs_estimate_t now);
/* The verdict on that change at one-sided level alpha (HS_NOISE_ALPHA for diff; check
 * divides it by the number of changed stacks): HS_SAME, HS_NOISE (p >= alpha: sampling
 * alone explains it), HS_GREW or HS_SHRANK. diff, check --no-new-growth and the
 * differential flame graph judge with it. */
hs_verdict_t hs_report_compare(hs_estimate_t base, hs_estimate_t now, double alpha);

/* The verdict on a change d with sampling variance var by the normal approximation (leak
 * suspects, whose first and last profiles share samples, so their counts are not two
 * independent Poisson counts): HS_SAME (d == 0), HS_NOISE (|d| < 1.96 sqrt(var)), HS_GREW
 * or HS_SHRANK; hs_report_verdict_z with z standard deviations instead of 1.96.
 * hs_report_verdict_name gives "same", "noise", "grew", "shrank". */
hs_verdict_t hs_report_verdict(double d, double var);
hs_verdict_t hs_report_verdict_z(double d, double var, double z);
const char *hs_report_verdict_name(hs_verdict_t v);

#endif
