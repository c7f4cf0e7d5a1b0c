/*
 * Unit test of the sampling statistics in src/common/report.c against values computed by
 * hand from docs/sampling.md: the variance of one stack's estimate
 * (hs_report_variance), the 95% half-width every printed interval comes from
 * (hs_report_ci95) and diff's noise verdict (hs_report_verdict) just inside and just
 * outside 1.96 standard deviations. If the interval formula changes (an exact Poisson
 * interval, say), the hand-computed values here change with it, on purpose.
 */
#include "report.h"

#include "check.h"

#include <math.h>
#include <stdio.h>

static int near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want) + 1e-12;
}

/*
 * 10 objects of 4096 bytes at rate 4096: p = 1 - 1/e, (1 - p)/p = 1/(e - 1) = 0.58197670687,
 * Var(N) = 10/(e - 1) = 5.8197670687, Var(B) = 10 * 4096^2/(e - 1) = 97639489.181,
 * half-width 1.96 * sqrt(Var(B)) = 1.96 * 9881.270628 = 19367.2884.
 * 1000 objects of 64 bytes at rate 4096: p = 1 - exp(-1/64) = 0.0155035630,
 * Var(B) = 1000 * 64^2 * (1 - p)/p = 260101333.31, half-width 31610.2085.
 */
static void test_interval(void)
{
    double vo = -1, vb = -1;

    hs_report_variance(10, 40960, 4096, &vo, &vb);
    CHECK(near(vo, 5.8197670687, 1e-9), "Var(N) = %.10g", vo);
    CHECK(near(vb, 97639489.181, 1e-9), "Var(B) = %.10g", vb);
    CHECK(near(hs_report_ci95(vb), 19367.2884, 1e-8), "ci95 = %.10g", hs_report_ci95(vb));
    hs_report_variance(1000, 64000, 4096, &vo, &vb);
    CHECK(near(vb, 260101333.31, 1e-9), "Var(B) = %.10g", vb);
    CHECK(near(hs_report_ci95(vb), 31610.2085, 1e-8), "ci95 = %.10g", hs_report_ci95(vb));
    /* Rate 1 is exact, and so is a stack of objects far above the rate (p = 1). */
    hs_report_variance(1000, 64000, 1, &vo, &vb);
    CHECK(vo == 0 && vb == 0, "rate 1: %g %g", vo, vb);
    CHECK(hs_report_ci95(0) == 0 && hs_report_ci95(-1) == 0, "no variance, no interval");
    hs_report_variance(3, 3.0 * (1 << 30), 4096, &vo, &vb);
    CHECK(hs_report_ci95(vb) < 1e-6, "1 GiB objects at 4096: %g", hs_report_ci95(vb));
    /* Variances add over disjoint stacks, so the half-width grows as sqrt. */
    CHECK(near(hs_report_ci95(4e6), 3920, 1e-12), "ci95(4e6) = %g", hs_report_ci95(4e6));
}

/* diff's verdict: |d| < 1.96 sd is noise, beyond it a change; here sd = 1000. */
static void test_verdict(void)
{
    const double var = 1e6;

    CHECK(hs_report_verdict(1950, var) == HS_NOISE, "1.95 sd: %s",
          hs_report_verdict_name(hs_report_verdict(1950, var)));
    CHECK(hs_report_verdict(-1950, var) == HS_NOISE, "-1.95 sd");
    CHECK(hs_report_verdict(1970, var) == HS_GREW, "1.97 sd: %s",
          hs_report_verdict_name(hs_report_verdict(1970, var)));
    CHECK(hs_report_verdict(-1970, var) == HS_SHRANK, "-1.97 sd");
    CHECK(hs_report_verdict(0, var) == HS_SAME, "no change");
    CHECK(hs_report_verdict(1, 0) == HS_GREW, "exact profiles: every change is real");
    /* check's Bonferroni z for one stack is diff's 1.96 (1.959964). */
    CHECK(near(hs_report_verdict_zm(1), 1.959964, 1e-6), "zm(1) = %.7f", hs_report_verdict_zm(1));
    CHECK(near(hs_report_verdict_zm(20), 3.023, 1e-3), "zm(20) = %.7f", hs_report_verdict_zm(20));
}

int main(void)
{
    test_interval();
    test_verdict();
    return hs_check_done("test_report_stats");
}
