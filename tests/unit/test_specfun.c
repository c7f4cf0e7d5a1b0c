/*
 * Unit test of src/common/base/specfun.c against values computed with mpmath at 30 digits: the
 * incomplete gamma and beta functions, the normal quantile, and the gamma quantile behind
 * every interval heapsift prints (the Garwood limits of counts 0, 1, 8, 10, 20.6, 100 and
 * 1000, half the chi-square quantiles of textbooks), round trips P(a, inv(a, p)) = p from
 * a = 0.1 to 1e4 and p = 1e-10 to 1 - 1e-10, and the Wilson-Hilferty branch past 1e4
 * against mpmath's quantiles (1e4 to 1e6) and the Cornish-Fisher expansion (1e9). The
 * beta at 5e5 is held to 1e-8: exp(lgamma(a + b) - ...) subtracts terms of 1e7, which
 * leaves about 1e-9 of relative error.
 */
#include "base/specfun.h"

#include "check.h"

#include <math.h>
#include <stdio.h>

static int near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want) + 1e-300;
}

static void test_gamma(void)
{
    CHECK(near(hs_specfun_gamma_p(1, 2), 0.86466471676338731, 1e-13), "P(1,2)");
    CHECK(near(hs_specfun_gamma_p(0.5, 2), 0.95449973610364159, 1e-13), "P(.5,2)");
    CHECK(near(hs_specfun_gamma_q(10, 5), 0.96817194269379519, 1e-13), "Q(10,5) = %.17g",
          hs_specfun_gamma_q(10, 5));
    CHECK(hs_specfun_gamma_p(3, 0) == 0 && hs_specfun_gamma_q(3, 0) == 1, "x = 0");
    CHECK(hs_specfun_gamma_p(3, INFINITY) == 1 && hs_specfun_gamma_q(3, INFINITY) == 0, "x = inf");
    /* A far tail keeps its digits: Q(1, 50) = exp(-50). */
    CHECK(near(hs_specfun_gamma_q(1, 50), exp(-50), 1e-12), "Q(1,50) = %g",
          hs_specfun_gamma_q(1, 50));
}

/* a, p, and the quantile: Gamma(n) at 2.5% and Gamma(n + 1) at 97.5% are the Garwood
 * limits of a count n (n = 0: only the upper, -ln 0.025). */
static const double quantiles[][3] = {
    {1, 0.975, 3.6888794541139363},      {1, 0.025, 0.025317807984289877},
    {2, 0.975, 5.5716433909388975},      {10, 0.025, 4.7953886961324337},
    {11, 0.975, 18.390356042017777},     {8, 0.025, 3.4538321767485013},
    {9, 0.975, 15.763189220193314},      {20.6, 0.025, 12.685568659028661},
    {21.6, 0.975, 31.616386708817818},   {100, 0.025, 81.363991250923141},
    {101, 0.975, 121.62679379242639},    {1000, 0.025, 938.97301840769522},
    {1001, 0.975, 1063.952136016302},    {0.5, 0.975, 2.5119430936574437},
    {0.5, 0.025, 4.9103455858762801e-4}, {5, 0.95, 9.153519026637572},
    {50, 0.99, 67.903361585513387},
};

static void test_gamma_inv(void)
{
    for (size_t i = 0; i < sizeof(quantiles) / sizeof(quantiles[0]); i++) {
        const double *q = quantiles[i];
        double got = hs_specfun_gamma_inv(q[0], q[1]);
        CHECK(near(got, q[2], 1e-11), "gamma_inv(%g, %g) = %.17g, want %.17g", q[0], q[1], got,
              q[2]);
    }
    CHECK(hs_specfun_gamma_inv(3, 0) == 0 && isinf(hs_specfun_gamma_inv(3, 1)), "p = 0, 1");
    static const double as[] = {0.1, 0.5, 1, 1.5, 2, 5, 31.7, 100, 1e3, 1e4};
    static const double ps[] = {1e-10, 1e-3, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999, 1 - 1e-10};
    for (size_t i = 0; i < sizeof(as) / sizeof(as[0]); i++) {
        for (size_t j = 0; j < sizeof(ps) / sizeof(ps[0]); j++) {
            double a = as[i], p = ps[j], x = hs_specfun_gamma_inv(a, p);
            double back = p < 0.5 ? hs_specfun_gamma_p(a, x) : 1 - hs_specfun_gamma_q(a, x);
            double tail = (p < 0.5 ? p : 1 - p) * 1e-9;
            CHECK(x > 0 && fabs(back - p) <= tail, "a=%g p=%g: x=%.17g gives %.17g", a, p, x, back);
        }
    }
    /* Past 1e4, Wilson-Hilferty: within 2e-4 of a count of the iterated (mpmath) quantile. */
    static const double big[][3] = {
        {1e4, 0.025, 9804.9524672601831}, {1e4, 0.975, 10196.941824999883},
        {1e5, 0.025, 99381.152663744731}, {1e5, 0.975, 100620.74164077374},
        {1e6, 0.025, 998040.98334029390},
    };
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        double got = hs_specfun_gamma_inv(big[i][0], big[i][1]);
        CHECK(fabs(got - big[i][2]) < 2e-4, "gamma_inv(%g, %g) = %.6f, want %.6f", big[i][0],
              big[i][1], got, big[i][2]);
    }
    /* Beyond 1e7, Wilson-Hilferty; Cornish-Fisher: a + z sqrt(a) + (z^2 - 1)/3 + O(a^-1/2). */
    double a = 1e9, z = 1.9599639845400542, x = hs_specfun_gamma_inv(a, 0.975);
    CHECK(fabs(x - (a + z * sqrt(a) + (z * z - 1) / 3)) < 0.01, "a = 1e9: %.3f", x);
}

static void test_beta(void)
{
    for (int k = 1; k <= 20; k++)
        CHECK(near(hs_specfun_beta_i(0.5, k, 1), pow(0.5, k), 1e-13), "I.5(%d,1)", k);
    CHECK(near(hs_specfun_beta_i(0.3, 3, 8), 0.61721721359999997, 1e-13), "I.3(3,8) = %.17g",
          hs_specfun_beta_i(0.3, 3, 8));
    CHECK(near(hs_specfun_beta_i(0.2, 2.5, 7.25), 0.38444272519976461, 1e-12), "I.2(2.5,7.25)");
    CHECK(near(hs_specfun_beta_i(0.3, 40, 30), 1.3192777782136758e-6, 1e-10), "I.3(40,30) = %g",
          hs_specfun_beta_i(0.3, 40, 30));
    CHECK(near(hs_specfun_beta_i(0.5, 5e5, 5e5 + 1), 0.50039894218066588, 1e-8),
          "I.5(5e5,5e5+1) = %.17g", hs_specfun_beta_i(0.5, 5e5, 5e5 + 1));
    CHECK(near(hs_specfun_beta_i(0.37, 1, 4.5), 1 - pow(0.63, 4.5), 1e-13), "I(1,b)");
    CHECK(hs_specfun_beta_i(0, 2, 3) == 0 && hs_specfun_beta_i(1, 2, 3) == 1, "x = 0, 1");
}

static void test_norm_inv(void)
{
    CHECK(near(hs_specfun_norm_inv(0.975), 1.9599639845400542, 1e-14), "z(.975) = %.17g",
          hs_specfun_norm_inv(0.975));
    CHECK(near(hs_specfun_norm_inv(1e-10), -6.3613409024040562, 1e-13), "z(1e-10) = %.17g",
          hs_specfun_norm_inv(1e-10));
    CHECK(fabs(hs_specfun_norm_inv(0.5)) < 1e-16, "z(.5)");
}

int main(void)
{
    test_gamma();
    test_gamma_inv();
    test_beta();
    test_norm_inv();
    return hs_check_done("test_specfun");
}
