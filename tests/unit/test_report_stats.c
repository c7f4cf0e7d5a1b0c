/*
 * Unit test of the sampling statistics in src/common/reports/noise.c against values computed by
 * hand from docs/sampling.md (and with mpmath): the variance of one stack's estimate
 * (hs_report_variance); the 95% interval every printed interval comes from
 * (hs_report_interval: Garwood's exact Poisson limits on the effective sample count,
 * scaled, known values for counts 0, 1, 8 and 10, within a part in sqrt(n) of the normal
 * interval for many samples); the few-sample test diff, check and the flame graph judge
 * with (hs_report_compare: exact binomial and Poisson tails, a site seen 4 times against
 * none is noise where the normal rule said growth); and the normal verdict leak suspects
 * keep (hs_report_verdict) just inside and outside 1.96 standard deviations.
 */
#include "reports/report.h"

#include "check.h"

#include <math.h>
#include <stdio.h>

static int near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want) + 1e-12;
}

/*
 * 10 objects of 4096 bytes at rate 4096: p = 1 - 1/e, (1 - p)/p = 1/(e - 1) = 0.58197670687,
 * Var(N) = 10/(e - 1) = 5.8197670687, Var(B) = 10 * 4096^2/(e - 1) = 97639489.181.
 * 1000 objects of 64 bytes at rate 4096: p = 1 - exp(-1/64) = 0.0155035630,
 * Var(B) = 1000 * 64^2 * (1 - p)/p = 260101333.31.
 */
static void test_variance(void)
{
    double vo = -1, vb = -1;

    hs_report_variance(10, 40960, 4096, &vo, &vb);
    CHECK(near(vo, 5.8197670687, 1e-9), "Var(N) = %.10g", vo);
    CHECK(near(vb, 97639489.181, 1e-9), "Var(B) = %.10g", vb);
    hs_report_variance(1000, 64000, 4096, &vo, &vb);
    CHECK(near(vb, 260101333.31, 1e-9), "Var(B) = %.10g", vb);
    /* Rate 1 is exact, and so is a stack of objects far above the rate (p = 1). */
    hs_report_variance(1000, 64000, 1, &vo, &vb);
    CHECK(vo == 0 && vb == 0, "rate 1: %g %g", vo, vb);
    hs_report_variance(3, 3.0 * (1 << 30), 4096, &vo, &vb);
    CHECK(vb < 1e-6, "1 GiB objects at 4096: %g", vb);
}

/* Garwood's limits (mpmath, 30 digits): count 0: [0, -ln 0.025]; 1, 8, 10. */
static void test_poisson_limits(void)
{
    static const double want[][3] = {
        {0, 0, 3.6888794541139363},
        {1, 0.025317807984289877, 5.5716433909388975},
        {8, 3.4538321767485013, 15.763189220193314},
        {10, 4.7953886961324337, 18.390356042017777},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        double lo = -1, hi = -1;
        hs_report_poisson_limits(want[i][0], &lo, &hi);
        CHECK(near(lo, want[i][1], 1e-10) && near(hi, want[i][2], 1e-10),
              "n = %g: [%.17g, %.17g], want [%.17g, %.17g]", want[i][0], lo, hi, want[i][1],
              want[i][2]);
    }
}

static void test_interval(void)
{
    const double r = 524288;
    double lo, hi;

    /* 8 samples of weight R (small objects): est 8R, var 8R^2, n = 8; Garwood's limits
     * times R, against the normal 8R -+ 1.96 sqrt(8) R = [2.46R, 13.54R]. */
    hs_report_interval(8 * r, 8 * r * r, &lo, &hi);
    CHECK(near(lo, 3.4538321767485013 * r, 1e-10) && near(hi, 15.763189220193314 * r, 1e-10),
          "8 samples: [%.6g, %.6g] R", lo / r, hi / r);
    /* A stack of 10 objects of 4096 B at rate 4096 (var above): n = 40960^2 / var. */
    double vb = 97639489.181, n = 40960.0 * 40960.0 / vb, glo, ghi;
    hs_report_poisson_limits(n, &glo, &ghi);
    hs_report_interval(40960, vb, &lo, &hi);
    CHECK(near(lo, glo * vb / 40960, 1e-12) && near(hi, ghi * vb / 40960, 1e-12),
          "scaled by var/est: [%g, %g]", lo, hi);
    /* Many samples: within a part in sqrt(n) of est -+ 1.96 sqrt(var), the upper side the
     * longer (n = 1e6: the sides differ from 1.96e6 by about one count of 1000). */
    hs_report_interval(1e9, 1e12, &lo, &hi);
    CHECK(fabs(hi - 1e9 - 1.96e6) < 2e3 && fabs(1e9 - lo - 1.96e6) < 2e3 && hi - 1e9 > 1e9 - lo,
          "n = 1e6: [%.1f, %.1f]", lo, hi);
    /* Exact (var 0), nothing sampled (est 0), a negative estimate (mirrored). */
    hs_report_interval(12345, 0, &lo, &hi);
    CHECK(lo == 12345 && hi == 12345, "exact: [%g, %g]", lo, hi);
    hs_report_interval(0, 5, &lo, &hi);
    CHECK(lo == 0 && hi == 0, "est 0: [%g, %g]", lo, hi);
    hs_report_interval(-8 * r, 8 * r * r, &lo, &hi);
    CHECK(near(hi, -3.4538321767485013 * r, 1e-10) && near(lo, -15.763189220193314 * r, 1e-10),
          "negative: [%g, %g] R", lo / r, hi / r);
    /* Objects far above the rate: a negligible variance, a point. */
    hs_report_interval(3.0 * (1 << 30), 1e-30, &lo, &hi);
    CHECK(fabs(hi - lo) < 1e-3 && lo <= 3.0 * (1 << 30) && hi >= 3.0 * (1 << 30), "1 GiB: %g %g",
          lo, hi);
}

/* k samples of weight w: est k w, var k w^2. */
static hs_estimate_t samples(double k, double w)
{
    hs_estimate_t e = {k * w, k * w * w, false};
    return e;
}

static void test_compare(void)
{
    const double a = HS_NOISE_ALPHA;
    hs_estimate_t zero = {0, 0, false}, exact0 = {0, 0, true};

    CHECK(hs_report_compare(samples(7, 1), samples(7, 1), a) == HS_SAME, "no change");
    /* A new stack seen 4 times: p = 0.5^4, noise (the normal rule's z = 2 said grew);
     * 6 times: p = 1/64, grew. */
    CHECK(near(hs_report_change_p(zero, samples(4, 9)), 0.0625, 1e-12), "0 -> 4: p = %g",
          hs_report_change_p(zero, samples(4, 9)));
    CHECK(hs_report_compare(zero, samples(4, 9), a) == HS_NOISE, "0 -> 4 samples");
    CHECK(hs_report_compare(zero, samples(6, 9), a) == HS_GREW, "0 -> 6 samples");
    CHECK(hs_report_compare(samples(6, 9), zero, a) == HS_SHRANK, "6 samples -> 0");
    /* 10 -> 20 samples: P(Bin(30, 1/2) >= 20) = 0.0493686 (noise); 20 -> 5: P(Bin(25,
     * 1/2) <= 5) = 0.00203866 (shrank); the two directions mirror each other. */
    double p = hs_report_change_p(samples(10, 3), samples(20, 3));
    CHECK(near(p, 0.04936857335269451, 1e-9), "10 -> 20: p = %.17g", p);
    CHECK(near(hs_report_change_p(samples(20, 3), samples(10, 3)), p, 1e-12), "mirror");
    p = hs_report_change_p(samples(20, 3), samples(5, 3));
    CHECK(near(p, 0.002038657665252685, 1e-9), "20 -> 5: p = %.17g", p);
    CHECK(hs_report_compare(samples(20, 3), samples(5, 3), a) == HS_SHRANK, "20 -> 5");
    /* Against an exact side: its value inside the sampled side's Garwood interval is noise
     * (10 samples: [4.795, 18.39]): 5 -> P(N >= 10 | 5) = 0.0318, 4 -> 0.00813. */
    hs_estimate_t five = {5, 0, true}, four = {4, 0, true};
    CHECK(near(hs_report_change_p(five, samples(10, 1)), 0.031828057306204812, 1e-9),
          "exact 5 -> 10 samples: p = %g", hs_report_change_p(five, samples(10, 1)));
    CHECK(hs_report_compare(five, samples(10, 1), a) == HS_NOISE, "exact 5 -> 10 samples");
    CHECK(hs_report_compare(four, samples(10, 1), a) == HS_GREW, "exact 4 -> 10 samples");
    CHECK(hs_report_compare(samples(10, 1), four, a) == HS_SHRANK, "10 samples -> exact 4");
    CHECK(hs_report_compare(exact0, samples(1, 1e6), a) == HS_GREW, "exact 0 -> 1 sample");
    /* Both exact: any change is real; an estimate with no variance counts as exact. */
    hs_estimate_t e1 = {100, 0, true}, e2 = {101, 0, false};
    CHECK(hs_report_compare(e1, e2, a) == HS_GREW, "exact 100 -> 101");
    /* Many samples: the normal rule's 1.96 sd, by the conditional test (1000 -> 1100 is
     * 2.18 sd) and past 1e7 counts by its normal approximation (1e8 -> 1e8 + 3e4: 2.12 sd;
     * + 2.5e4: 1.77 sd). */
    CHECK(hs_report_compare(samples(1000, 2), samples(1100, 2), a) == HS_GREW, "1000 -> 1100");
    CHECK(hs_report_compare(samples(1000, 2), samples(1080, 2), a) == HS_NOISE, "1000 -> 1080");
    CHECK(hs_report_compare(samples(1e8, 2), samples(1e8 + 3e4, 2), a) == HS_GREW, "1e8 +3e4");
    CHECK(hs_report_compare(samples(1e8, 2), samples(1e8 + 2.5e4, 2), a) == HS_NOISE, "1e8 +2.5e4");
    /* Different sample weights (another rate): 10 samples of 2 (20) against 25 of 1 is
     * noise (given 35 counts, 23.3 expected in now's), against 45 of 1 growth (2.4 sd). */
    CHECK(hs_report_compare(samples(10, 2), samples(25, 1), a) == HS_NOISE, "20 -> 25");
    CHECK(hs_report_compare(samples(10, 2), samples(45, 1), a) == HS_GREW, "20 -> 45");
    /* check's Bonferroni level: p = 0.0156 is growth alone, not among 20 stacks. */
    CHECK(hs_report_compare(zero, samples(6, 9), a / 20) == HS_NOISE, "0 -> 6 among 20");
}

/* The suspects' normal verdict: |d| < 1.96 sd is noise, beyond it a change; sd = 1000. */
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
}

int main(void)
{
    test_variance();
    test_poisson_limits();
    test_interval();
    test_compare();
    test_verdict();
    return hs_check_done("test_report_stats");
}
