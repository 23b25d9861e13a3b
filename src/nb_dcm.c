/*
 * nb_dcm.c — the EDCM fit and the DCM's log-gamma terms, see nb_dcm.h.
 */
#include "nb_dcm.h"

#include <math.h>

#include "nb_interrupt.h"

/* Below this, digamma and log-gamma shift their argument up by recurrence. */
#define ASYMPTOTIC_FROM 10.0

/*
 * psi(x) - log(x) for x >= ASYMPTOTIC_FROM: the asymptotic series
 * -1/(2x) - sum_k B_2k / (2k x^2k), through B_14 (truncation below 1e-17
 * there).
 */
static double
digamma_tail(double x)
{
	double		r = 1 / (x * x);

	return -0.5 / x -
		r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 -
																 r * (1.0 / 132 - r * (691.0 / 32760 - r / 12))))));
}

double
nb_digamma(double x)
{
	double		shift = 0;

	while (x < ASYMPTOTIC_FROM)
	{
		shift += 1 / x;
		x += 1;
	}
	return log(x) + digamma_tail(x) - shift;
}

/* psi(s + n) - psi(s) for s > 0, n >= 0, without the cancellation of the two calls. */
static double
digamma_diff(double s, double n)
{
	double		sum = 0;

	/* psi(x) = psi(x + 1) - 1/x: shift both to the asymptotic range */
	while (s < ASYMPTOTIC_FROM)
	{
		/* 1/s - 1/(s + n), as one fraction */
		sum += n / (s * (s + n));
		s += 1;
	}
	return sum + log1p(n / s) + (digamma_tail(s + n) - digamma_tail(s));
}

/* The trigamma function psi'(x), x > 0 (for Newton steps only). */
static double
trigamma(double x)
{
	double		shift = 0;
	double		r;

	while (x < ASYMPTOTIC_FROM)
	{
		shift += 1 / (x * x);
		x += 1;
	}
	r = 1 / (x * x);
	return shift + 1 / x + r / 2 +
		r / x * (1.0 / 6 - r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30 - r * 5.0 / 66))));
}

/*
 * log Gamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2) for z >= ASYMPTOTIC_FROM:
 * Stirling's series through z^-13 (truncation below 1e-17 there).
 */
static double
stirling_tail(double z)
{
	double		r = 1 / (z * z);

	return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r * (1.0 / 1188 -
																				 r * (691.0 / 360360 - r / 156)))))) / z;
}

double
nb_lgamma_ratio(double b, double x)
{
	if (x == 0)
		return 0;
	if (b < ASYMPTOTIC_FROM)
		return lgamma(b + x) - lgamma(b);

	/*
	 * (b + x - 1/2) log(b + x) - (b - 1/2) log b - x, rearranged so that
	 * nothing of the size of b log b cancels
	 */
	return (b - 0.5) * log1p(x / b) + x * (log(b + x) - 1) +
		(stirling_tail(b + x) - stirling_tail(b));
}

double
nb_dcm_repeat(double beta, double x)
{
	if (x >= 2 && x <= NB_DCM_PRODUCT_MAX && beta < NB_DCM_PRODUCT_BETA && x == floor(x))
	{
		double		product = beta + 1;

		for (double i = 2; i < x; i++)
			product *= beta + i;
		return log(product);
	}
	return nb_lgamma_ratio(beta, x) - log(beta);
}

/* Z(s) = sum_d w_d [psi(s + n_d) - psi(s)] over the histogram, and its derivative. */
static double
z_of(double s, const double *length, const double *weight, uint64_t n, double *dz)
{
	double		z = 0;
	double		ts = trigamma(s);

	*dz = 0;
	for (uint64_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		z += weight[i] * digamma_diff(s, length[i]);
		*dz += weight[i] * (trigamma(s + length[i]) - ts);
	}
	return z;
}

NbDcmFit
nb_dcm_fit(double D, const double *length, const double *weight, uint64_t n)
{
	NbDcmFit	fit = {0, 0, 0, false};
	double		lo = NB_DCM_S_MIN;
	double		hi = NB_DCM_S_MAX;
	double		s;
	double		dz;
	double		rows = 0;
	double		tokens = 0;

	if (n == 0 || !(D > 0))
		return fit;
	for (uint64_t i = 0; i < n; i++)
	{
		rows += weight[i];
		tokens += weight[i] * length[i];
	}

	/*
	 * Solve h(s) = s Z(s) - D = 0, the fixed point s = D / Z(s) (Elkan
	 * 2006), by Newton's method in log s, safeguarded by bisection: h
	 * grows from rows - D to tokens - D.  The start is where a multinomial
	 * with s Z(s) ~ rows + (tokens - rows) s / (s + mean length) would be.
	 */
	s = D <= rows || D >= tokens ? 1 :
		(D - rows) / (tokens - D) * (tokens / rows);
	if (!(s >= lo && s <= hi))
		s = 1;
	for (fit.iterations = 1; fit.iterations <= NB_DCM_MAX_ITERATIONS; fit.iterations++)
	{
		double		z = z_of(s, length, weight, n, &dz);
		double		h = s * z - D;
		double		dh = s * (z + s * dz);	/* dh / d log s */
		double		next;

		if (h > 0)
			hi = s;
		else
			lo = s;
		next = dh > 0 ? s * exp(-h / dh) : sqrt(lo * hi);
		if (!(next > lo && next < hi))
			next = sqrt(lo * hi);
		if (fabs(next - s) <= NB_DCM_TOLERANCE * s || hi <= lo * (1 + NB_DCM_TOLERANCE))
		{
			s = next;
			fit.converged = true;
			break;
		}
		s = next;
	}
	if (fit.iterations > NB_DCM_MAX_ITERATIONS)
		fit.iterations = NB_DCM_MAX_ITERATIONS;
	fit.s = s;
	fit.z = z_of(s, length, weight, n, &dz);
	return fit;
}
