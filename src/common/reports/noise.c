/*
 * Sampling noise (noise.h): how far a sampled estimate may be from the truth (the
 * variance of a Poisson sample over bytes, docs/sampling.md), its 95% interval, and
 * whether a change is more than that. A row's estimate is treated as a Poisson count of
 * effective samples, n = est^2 / var, each weighing var / est: exact for one stack of
 * equal objects far below the rate, the matching of mean and variance otherwise. Exact
 * Poisson limits and the exact conditional test hold with few samples, where the normal
 * approximation under-covers (a site of 8 samples: 89% for a nominal 95%). Pure
 * functions, no allocation; used by the report model, top, diff, check, the flame graph,
 * suspects, the web UI and the library's stats and dump comments.
 */
#include "noise.h"

#include "base/specfun.h"

#include <math.h>

/* Effective counts beyond which the binomial test is its normal approximation: equal to
 * many digits there, and the continued fraction would take thousands of terms. */
#define NOISE_BIG_COUNT 1e7

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

void hs_report_poisson_limits(double n, double *lo, double *hi)
{
    *lo = n > 0 ? hs_specfun_gamma_inv(n, 0.025) : 0;
    *hi = hs_specfun_gamma_inv(n + 1, 0.975);
}

void hs_report_interval(double est, double var, double *lo, double *hi)
{
    double e = fabs(est), n = e * e / var, l, h;
    *lo = *hi = est;
    if (!(var > 0) || e == 0 || !isfinite(n))
        return;
    hs_report_poisson_limits(n, &l, &h);
    l *= var / e;
    h *= var / e;
    *lo = est < 0 ? -h : l;
    *hi = est < 0 ? -l : h;
}

static bool noise_exact(const hs_estimate_t *e)
{
    return e->exact || (!(e->var > 0) && e->est != 0);
}

/* Effective count and sample weight of a sampled side (0, 0 when nothing was sampled). */
static void noise_count(const hs_estimate_t *e, double *n, double *w)
{
    double a = fabs(e->est);
    *n = a > 0 && e->var > 0 ? a * a / e->var : 0;
    *w = *n > 0 ? e->var / a : 0;
}

/* A sampled side s against the truth t of an exact side: the Poisson tail of s's count,
 * upward when s is the larger (P(N >= n)), else downward (P(N <= n)), N ~ Poisson(t / w). */
static double noise_p_known(const hs_estimate_t *s, double t)
{
    double n, w;
    noise_count(s, &n, &w);
    if (n <= 0)
        return 0;
    double lambda = fabs(t) / w;
    if (fabs(s->est) > fabs(t))
        return hs_specfun_gamma_p(n, lambda);
    return hs_specfun_gamma_q(n + 1, lambda);
}

/* Two sampled sides: given the sum of the counts, now's count is binomial with
 * pi = w_base / (w_base + w_now) when both have the same truth; the tail beyond now's
 * count in the direction of the change. */
static double noise_p_counts(const hs_estimate_t *base, const hs_estimate_t *now, bool grew)
{
    double kb, wb, kn, wn;
    noise_count(base, &kb, &wb);
    noise_count(now, &kn, &wn);
    wb = wb > 0 ? wb : wn;
    wn = wn > 0 ? wn : wb;
    if (!(wb > 0))
        return 1;
    double pi = wb / (wb + wn), k = kb + kn;
    if (k > NOISE_BIG_COUNT) {
        double z = (kn - k * pi) / sqrt(k * pi * (1 - pi));
        return 0.5 * erfc((grew ? z : -z) / M_SQRT2);
    }
    if (grew)
        return hs_specfun_beta_i(pi, kn, kb + 1);         /* P(K_now >= kn) */
    return hs_specfun_beta_i(wn / (wb + wn), kb, kn + 1); /* P(K_now <= kn) */
}

double hs_report_change_p(hs_estimate_t base, hs_estimate_t now)
{
    double d = now.est - base.est;
    if (d == 0)
        return 1;
    bool be = noise_exact(&base), ne = noise_exact(&now);
    if (be && ne)
        return 0;
    if (be || ne)
        return be ? noise_p_known(&now, base.est) : noise_p_known(&base, now.est);
    return noise_p_counts(&base, &now, d > 0);
}

hs_verdict_t hs_report_compare(hs_estimate_t base, hs_estimate_t now, double alpha)
{
    double d = now.est - base.est;
    if (d == 0)
        return HS_SAME;
    if (hs_report_change_p(base, now) >= alpha)
        return HS_NOISE;
    return d > 0 ? HS_GREW : HS_SHRANK;
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

const char *hs_report_verdict_name(hs_verdict_t v)
{
    static const char *names[] = {"same", "noise", "grew", "shrank"};
    return names[v];
}
