/*
 * Special functions for the sampling statistics (specfun.c): the regularized incomplete
 * gamma and beta functions and the inverses noise.c needs for exact Poisson limits and
 * the conditional binomial test. Real (non-integer) arguments; pure and thread-safe.
 */
#ifndef HS_SPECFUN_H
#define HS_SPECFUN_H

/* The regularized lower incomplete gamma P(a, x) (a > 0; 0 for x <= 0) and its complement
 * Q(a, x) = 1 - P(a, x), each computed directly so that a small tail keeps its precision.
 * For integer a, Q(a, x) is P(Poisson(x) < a). */
double hs_specfun_gamma_p(double a, double x);
double hs_specfun_gamma_q(double a, double x);

/* The x with P(a, x) = p (a > 0, 0 < p < 1; 0 for p <= 0, +inf for p >= 1): a quantile of
 * the Gamma(a, 1) distribution, half the chi-square quantile with 2a degrees of freedom.
 * Past a = 1e4, Wilson-Hilferty's approximation (under 2e-4 off at p = 0.025, 0.975). */
double hs_specfun_gamma_inv(double a, double p);

/* The regularized incomplete beta I_x(a, b) (a, b > 0; 0 for x <= 0, 1 for x >= 1). For
 * integers, I_x(k, n - k + 1) is P(Binomial(n, x) >= k). */
double hs_specfun_beta_i(double x, double a, double b);

/* The standard normal quantile: z with P(Z < z) = p (0 < p < 1). */
double hs_specfun_norm_inv(double p);

#endif
