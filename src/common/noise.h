/*
 * Sampling noise (noise.c; docs/sampling.md): the variance of a sampled estimate, its 95%
 * interval, and the verdict on a change between two estimates. report.h includes it.
 */
#ifndef HS_NOISE_H
#define HS_NOISE_H

#include <stddef.h>
#include <stdint.h>

/* The sampling variance of a stack's estimate (docs/sampling.md): objects N and bytes B
 * sampled at rate period, taken as N objects of the mean size. Rate <= 1 is exact (0). */
void hs_report_variance(double objects, double bytes, int64_t period, double *var_objects,
                        double *var_bytes);

/* The half-width of the 95% interval of an estimate whose sampling variance is var:
 * 1.96 sqrt(var) (normal approximation, docs/sampling.md). Every interval heapsift prints
 * comes from here: top --ci, the web UI's rows, heapsift_stats and heapsift_tracker_stats
 * (so the HTTP stats), the estimate and tracker comments of a dump. var <= 0 gives 0. */
double hs_report_ci95(double var);

/* The verdict on a change d of an estimate whose sampling variance is var (diff, check,
 * suspects): HS_SAME (d == 0), HS_NOISE (|d| < 1.96 sqrt(var): sampling alone explains it
 * at 95%), HS_GREW or HS_SHRANK. hs_report_verdict_name gives "same", "noise", ... */
typedef enum { HS_SAME, HS_NOISE, HS_GREW, HS_SHRANK } hs_verdict_t;
hs_verdict_t hs_report_verdict(double d, double var);
/* The same verdict with z standard deviations instead of 1.96, and the z that keeps the
 * chance of any false "grew" among m independent changes at 2.5% (Bonferroni: the
 * one-sided tail 0.025 / m; m = 1 gives 1.96, diff's). */
hs_verdict_t hs_report_verdict_z(double d, double var, double z);
double hs_report_verdict_zm(size_t m);
const char *hs_report_verdict_name(hs_verdict_t v);

#endif
