/*
 * Sampling noise (noise.h): how far a sampled estimate may be from the truth (the
 * variance of a Poisson sample over bytes, docs/sampling.md) and whether a change is more
 * than that. Pure functions; used by the report model, diff, check, suspects, the web UI
 * and the library's stats.
 */
#include "noise.h"

#include <math.h>

/* The variance of a sample's estimate (docs/sampling.md): objects N and bytes B at rate R,
 * mean size s = B/N, p = 1-exp(-s/R): Var(B) = N s^2 (1-p)/p, Var(N) = N (1-p)/p. */
void hs_report_variance(double objects, double bytes, int64_t period, double *var_objects,
                        double *var_bytes)
{
    double n = fabs(objects), b = fabs(bytes);
    *var_objects = *var_bytes = 0;
    if (period <= 1 || n <= 0 || b <= 0)
        return;
    double s = b / n, pr = -expm1(-s / (double)period);
    if (pr <= 0)
        return;
    *var_objects = n * (1 - pr) / pr;
    *var_bytes = n * s * s * (1 - pr) / pr;
}

double hs_report_ci95(double var)
{
    return var > 0 ? 1.96 * sqrt(var) : 0;
}

hs_verdict_t hs_report_verdict_z(double d, double var, double z)
{
    if (d == 0)
        return HS_SAME;
    if (fabs(d) < z * sqrt(var > 0 ? var : 0))
        return HS_NOISE;
    return d > 0 ? HS_GREW : HS_SHRANK;
}

hs_verdict_t hs_report_verdict(double d, double var)
{
    return hs_report_verdict_z(d, var, 1.96);
}

double hs_report_verdict_zm(size_t m)
{
    double tail = 0.025 / (double)(m ? m : 1), lo = 0, hi = 40;
    for (int i = 0; i < 200; i++) { /* P(Z > z) = erfc(z / sqrt 2) / 2, decreasing in z */
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(mid / M_SQRT2) > tail)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

const char *hs_report_verdict_name(hs_verdict_t v)
{
    static const char *names[] = {"same", "noise", "grew", "shrank"};
    return names[v];
}
