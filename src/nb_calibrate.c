/*
 * nb_calibrate.c — calibrated probabilities as the scorer applies them
 * (nb_calibrate.h); their fit is a workflow's (workflows/nb_calibrate_fit.c).
 */
#include "nb_calibrate.h"

#include <math.h>

void
nb_calibration_init(NbCalibration *cal)
{
	cal->temperature = 0;
	cal->sigmoid = NULL;
	cal->sigmoid_class = NB_SIGMOID_EVERY_CLASS;
}

/* Whether cal divides by a temperature other than 1. */
static bool
has_temperature(const NbCalibration *cal)
{
	return cal->temperature != 0 && cal->temperature != 1;
}

bool
nb_calibration_is_identity(const NbCalibration *cal)
{
	return !has_temperature(cal) && cal->sigmoid == NULL;
}

/* log(1 + e^u) without overflow or loss for large |u| */
static double
log1pexp(double u)
{
	return u > 0 ? u + log1p(exp(-u)) : log1p(exp(u));
}

/* Divide the log posteriors by t and normalize again; best (a finite one) stays the most probable. */
static void
apply_temperature(double *log_post, uint32_t C, int64_t best, double t)
{
	double		top = log_post[best];
	double		sum = 0;
	double		lse;

	/* relative to the best class, whose term is then exactly 1: no overflow at any t */
	for (uint32_t c = 0; c < C; c++)
		if (log_post[c] != -INFINITY)
		{
			log_post[c] = (log_post[c] - top) / t;
			sum += exp(log_post[c]);
		}
	lse = log(sum);
	for (uint32_t c = 0; c < C; c++)
		if (log_post[c] != -INFINITY)
			log_post[c] -= lse;
}

static double
probability(double log_p)
{
	return log_p == -INFINITY ? 0.0 : exp(log_p);
}

static void
apply_sigmoids(const NbCalibration *cal, double *log_post, uint32_t C, double *scratch)
{
	if (cal->sigmoid_class >= 0)
	{
		/* two classes: the other's probability is the complement, 1 / (1 + e^-u) */
		uint32_t	k = (uint32_t) cal->sigmoid_class;
		const double *ab = &cal->sigmoid[2 * k];
		double		u = ab[0] * probability(log_post[k]) + ab[1];

		log_post[k] = -log1pexp(u);
		log_post[1 - k] = -log1pexp(-u);
		return;
	}
	{
		double		top = -INFINITY;
		double		sum = 0;
		double		lse;

		for (uint32_t c = 0; c < C; c++)
		{
			const double *ab = &cal->sigmoid[2 * c];

			/* log q_c, q_c = 1 / (1 + e^(a p_c + b)) */
			scratch[c] = -log1pexp(ab[0] * probability(log_post[c]) + ab[1]);
			if (scratch[c] > top)
				top = scratch[c];
		}
		for (uint32_t c = 0; c < C; c++)
			sum += exp(scratch[c] - top);
		lse = top + log(sum);
		for (uint32_t c = 0; c < C; c++)
			log_post[c] = scratch[c] - lse;
	}
}

int64_t
nb_calibration_apply(const NbCalibration *cal, double *log_post, uint32_t C, int64_t best,
					 double *scratch)
{
	if (has_temperature(cal))
		apply_temperature(log_post, C, best, cal->temperature);
	if (cal->sigmoid != NULL)
	{
		apply_sigmoids(cal, log_post, C, scratch);
		best = 0;
		for (uint32_t c = 1; c < C; c++)
			if (log_post[c] > log_post[best])
				best = c;
	}
	return best;
}
