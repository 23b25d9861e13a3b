/*
 * nb_calibrate_fit.c — the fit of calibrated probabilities to out-of-fold
 * rows (nb_calibrate_fit.h).
 */
#include "nb_calibrate_fit.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_exact.h"
#include "nb_interrupt.h"
#include "nb_metrics.h"

/* Rows whose terms the sigmoid's sums add plainly before one compensated addition. */
#define SIGMOID_BLOCK 32

/*
 * The fits' warm starts (src/README.md, Calibration): every SAMPLE-th row,
 * at least SAMPLE_ROWS of them (a sigmoid's: SAMPLE_SIDE of the class and
 * of the others); a sigmoid's own sample first (sigmoid_class_sample).
 */
#define SAMPLE 16
#define SAMPLE_ROWS 256
#define SAMPLE_SIDE 8
#define CLASS_SAMPLE_P 1e-3
#define CLASS_SAMPLE_SHARE 4

/* A sigmoid's step of |d_a| + |d_b| at most this is tried without the losses. */
#define SIGMOID_PROVED_STEP 2

/* Newton steps (or bisections) at most; each fit converges in far fewer. */
#define MAX_ITERATIONS 200

/* A sum with Neumaier's compensation (nb_add_compensated): the rounding error kept apart. */
typedef struct Sum
{
	double		sum;
	double		comp;
} Sum;

static double
sum_value(const Sum *s)
{
	return s->sum + s->comp;
}

/* ---------------------------------------------------------------------- */
/* temperature                                                            */
/* ---------------------------------------------------------------------- */

/* The largest log posterior of row i. */
static double
row_top(const NbCalibrationRows *rows, size_t i)
{
	const double *l = &rows->log_post[i * rows->C];
	double		top = -INFINITY;

	for (uint32_t c = 0; c < rows->C; c++)
		if (l[c] > top)
			top = l[c];
	return top;
}

/*
 * The first three derivatives of the log loss in beta = 1 / T: per row,
 * with d_c = l_c - max l and p_c proportional to e^(beta d_c), E_p[d] -
 * d_actual, Var_p[d] (the loss is convex in beta) and E_p[(d - E_p[d])^3].
 * beta 0 is the uniform distribution over the classes with a probability.
 * The temperature's functions read every step-th row of n / step (step 1:
 * all; SAMPLE: the warm start's sample).
 */
static void
temperature_derivatives(const NbCalibrationRows *rows, size_t step, double beta, double *d1,
						double *d2, double *d3)
{
	Sum			g = {0, 0};
	Sum			h = {0, 0};
	Sum			t = {0, 0};
	uint32_t	C = rows->C;
	size_t		end = rows->n / step * step;
	uint64_t	work = 0;

	for (size_t i = 0; i < end; i += step)
	{
		const double *l = &rows->log_post[i * C];
		double		top = row_top(rows, i);
		double		actual = l[rows->actual[i]];
		double		z = 0;
		double		m1 = 0;
		double		m2 = 0;
		double		m3 = 0;
		double		mean;

		nb_interrupt_count(&work, 1 + (uint64_t) C);
		if (actual == -INFINITY)
			continue;
		/*
		 * One pass: the moments of d <= 0, whose largest value 0 has weight
		 * 1, so that E[d^2] - E[d]^2 cannot lose the variance to cancellation
		 */
		for (uint32_t c = 0; c < C; c++)
			if (l[c] != -INFINITY)
			{
				double		d = l[c] - top;
				/* (at beta 0, where the existence of a minimum is checked, e^0) */
				double		w = beta == 0 ? 1 : exp(beta * d);

				z += w;
				m1 += w * d;
				m2 += w * d * d;
				m3 += w * d * d * d;
			}
		mean = m1 / z;
		nb_add_compensated(&g.sum, &g.comp, mean - (actual - top));
		nb_add_compensated(&h.sum, &h.comp, fmax(m2 / z - mean * mean, 0));
		nb_add_compensated(&t.sum, &t.comp, m3 / z - 3 * mean * (m2 / z) + 2 * mean * mean * mean);
	}
	*d1 = sum_value(&g);
	*d2 = sum_value(&h);
	*d3 = sum_value(&t);
}

/*
 * Whether a minimum exists, from the rows alone: the loss falls as T -> 0
 * when every row's actual class is a most probable one and some row has a
 * less probable class (then no row pulls back), and as T -> infinity when
 * the uniform distribution already has a gradient pointing there.
 */
static NbCalibrationStatus
temperature_minimum_exists(const NbCalibrationRows *rows, size_t step)
{
	size_t		used = 0;
	bool		all_right = true;
	bool		some_below = false;
	uint32_t	C = rows->C;
	size_t		end = rows->n / step * step;
	uint64_t	work = 0;
	double		d1;
	double		d2;
	double		d3;

	for (size_t i = 0; i < end; i += step)
	{
		const double *l = &rows->log_post[i * C];
		double		top = row_top(rows, i);

		nb_interrupt_count(&work, 1 + (uint64_t) C);
		if (l[rows->actual[i]] == -INFINITY)
			continue;
		used++;
		if (l[rows->actual[i]] < top)
			all_right = false;
		for (uint32_t c = 0; c < C; c++)
			if (l[c] != -INFINITY && l[c] < top)
				some_below = true;
	}
	if (used == 0)
		return NB_CALIBRATION_TOO_FEW_ROWS;
	if (!some_below && all_right)
		return NB_CALIBRATION_NO_BETTER;
	if (all_right)
		return NB_CALIBRATION_SEPARATED;
	temperature_derivatives(rows, step, 0, &d1, &d2, &d3);
	if (d1 >= 0)
		return NB_CALIBRATION_NO_BETTER;
	return NB_CALIBRATION_OK;
}

/*
 * Newton's method on beta = 1 / T from *beta, where a minimum exists;
 * returns the steps.  The steps are Halley's (the third derivative costs
 * the pass little more: a pass fewer), Newton's when the correction is large.
 */
static uint32_t
temperature_newton(const NbCalibrationRows *rows, size_t step, double *beta)
{
	double		lo = 0;
	double		hi = INFINITY;
	uint32_t	k = 0;

	/*
	 * [lo, hi] keeps the root between a negative and a positive derivative
	 * (negative at 0, positive for large beta: some row is wrong); a step
	 * that leaves it doubles beta (no upper end known yet) or bisects.
	 */
	while (k < MAX_ITERATIONS)
	{
		double		d1;
		double		d2;
		double		d3;
		double		newton;
		double		halley;
		double		next;

		temperature_derivatives(rows, step, *beta, &d1, &d2, &d3);
		k++;
		if (d1 == 0)
			break;
		if (d1 > 0)
			hi = *beta;
		else
			lo = *beta;
		/* converged: the Newton step is lost in beta's last digits */
		if (d2 > 0 && fabs(d1 / d2) <= 1e-13 * *beta)
			break;
		newton = d2 > 0 ? d1 / d2 : NAN;
		/* Halley's step: newton / (1 - newton d3 / (2 d2)) */
		halley = 1 - newton * d3 / (2 * d2);
		next = *beta - (halley > 0.5 && halley < 2 ? newton / halley : newton);
		if (!(next > lo && next < hi))
			next = isinf(hi) ? 2 * *beta : lo + (hi - lo) / 2;
		*beta = next;
	}
	return k;
}

NbCalibrationStatus
nb_calibration_fit_temperature(const NbCalibrationRows *rows, double *temperature,
							   uint32_t *iterations)
{
	NbCalibrationStatus status = temperature_minimum_exists(rows, 1);
	double		beta = 1;
	uint32_t	k = 0;

	*iterations = 0;
	if (status != NB_CALIBRATION_OK)
		return status;
	/* the warm start: every SAMPLE-th row's minimum, when they have one */
	if (rows->n / SAMPLE >= SAMPLE_ROWS && temperature_minimum_exists(rows, SAMPLE) == NB_CALIBRATION_OK)
		k += temperature_newton(rows, SAMPLE, &beta);
	k += temperature_newton(rows, 1, &beta);
	*temperature = 1 / beta;
	*iterations = k;
	return NB_CALIBRATION_OK;
}

/* ---------------------------------------------------------------------- */
/* Platt's sigmoid                                                        */
/* ---------------------------------------------------------------------- */

/*
 * One class's rows as the sigmoid reads them: probabilities, targets,
 * weights (NULL: all 1), and each row's q at the point the fit is at and
 * at the point it tries.
 */
typedef struct SigmoidRows
{
	size_t		n;
	const double *p;
	double	   *t;
	double	   *w;
	double	   *q;
	double	   *trial_q;
} SigmoidRows;

/* The sums of one pass over the rows at (a, b). */
typedef struct SigmoidPass
{
	double		g[2];			/* gradient */
	double		h[3];			/* Hessian: aa, ab, bb */
	double		loss;			/* the cross-entropy, NAN when not asked for */
} SigmoidPass;

/*
 * One pass over the rows at ab: the gradient and Hessian of the
 * cross-entropy, each row's q = 1 / (1 + e^(a p + b)) into q, and the
 * cross-entropy itself when with_loss (its log1p is the dearest part of
 * a pass, and near the minimum the steps are accepted without it).
 */
static void
sigmoid_pass(const SigmoidRows *s, const double *ab, bool with_loss, double *q, SigmoidPass *out)
{
	Sum			loss = {0, 0};
	Sum			sum[5];
	const double *weight = s->w;
	uint64_t	work = 0;

	memset(sum, 0, sizeof(sum));
	for (size_t start = 0; start < s->n; start += SIGMOID_BLOCK)
	{
		size_t		end = start + SIGMOID_BLOCK < s->n ? start + SIGMOID_BLOCK : s->n;
		double		part[5] = {0, 0, 0, 0, 0};
		double		u[SIGMOID_BLOCK];
		double		e[SIGMOID_BLOCK];

		nb_interrupt_count(&work, 8 * (end - start));
		/*
		 * P = 1 / (1 + e^u), the probability of the class; the loss is
		 * log(1 + e^u) - (1 - t) u.  One exponential, of -|u|, serves both.
		 * The exponentials first, apart: the sums' registers need not be
		 * saved around each call.
		 */
		for (size_t i = start; i < end; i++)
		{
			u[i - start] = ab[0] * s->p[i] + ab[1];
			e[i - start] = exp(-fabs(u[i - start]));
		}
		/* (a weight of 1 changes no bit of a term) */
		for (size_t i = start; i < end; i++)
		{
			double		p = s->p[i];
			double		ei = e[i - start];
			double		P = u[i - start] > 0 ? ei / (1 + ei) : 1 / (1 + ei);
			double		wi = weight != NULL ? weight[i] : 1;
			double		r = (s->t[i] - P) * wi;
			double		w = P * (1 - P) * wi;

			q[i] = P;
			part[0] += r * p;
			part[1] += r;
			part[2] += w * p * p;
			part[3] += w * p;
			part[4] += w;
		}
		if (with_loss)
		{
			double		block_loss = 0;

			for (size_t i = start; i < end; i++)
				block_loss += (fmax(u[i - start], 0) + log1p(e[i - start]) - (1 - s->t[i]) * u[i - start]) *
					(weight != NULL ? weight[i] : 1);
			nb_add_compensated(&loss.sum, &loss.comp, block_loss);
		}
		for (int k = 0; k < 5; k++)
			nb_add_compensated(&sum[k].sum, &sum[k].comp, part[k]);
	}
	out->g[0] = sum_value(&sum[0]);
	out->g[1] = sum_value(&sum[1]);
	out->h[0] = sum_value(&sum[2]);
	out->h[1] = sum_value(&sum[3]);
	out->h[2] = sum_value(&sum[4]);
	out->loss = with_loss ? sum_value(&loss) : NAN;
}

/*
 * Whether the step d from a point of slope g.d (< 0) to the point of pass
 * at lowers the loss as much as Armijo's condition asks (by 1e-4 of what
 * the slope promises), proved from the end of the step alone, without the
 * losses.  Along the step, phi(s) = loss(x + s d) is convex, and its third
 * derivative is at most V phi'' for V = |d_a| + |d_b| (a row's is sum of
 * P (1 - P) (1 - 2P) v^3 with |v| = |d_a p + d_b| <= V), so phi''(s) >=
 * phi''(1) e^(-V (1 - s)), and integrating twice: phi(1) - phi(0) <=
 * phi'(1) - phi''(1) c(V), c(V) = (V - 1 + e^-V) / V^2 >= max(1/2 - V/6,
 * (V - 1) / V^2).  Near the minimum phi'(1) is about 0 and the bound about
 * slope / 2.
 */
static bool
sigmoid_descent_proved(const SigmoidPass *at, const double *d, double slope)
{
	double		v = fabs(d[0]) + fabs(d[1]);
	double		c = v > 0 ? fmax(0.5 - v / 6, (v - 1) / (v * v)) : 0.5;
	double		end_slope = at->g[0] * d[0] + at->g[1] * d[1];
	double		curvature = at->h[0] * d[0] * d[0] + 2 * at->h[1] * d[0] * d[1] + at->h[2] * d[1] * d[1];

	return end_slope - c * curvature <= 1e-4 * slope;
}

/* s over n rows of probabilities p: room for their targets, weights if weighted, and q. */
static void
sigmoid_rows_alloc(SigmoidRows *s, size_t n, const double *p, bool weighted)
{
	s->n = n;
	s->p = p;
	s->w = weighted ? nb_alloc(sizeof(double) * (n + 1)) : NULL;
	s->t = nb_alloc(sizeof(double) * (n + 1));
	s->q = nb_alloc(sizeof(double) * (n + 1));
	s->trial_q = nb_alloc(sizeof(double) * (n + 1));
}

/* s's targets for class c, and the rows' q for each pass; returns the rows of c. */
static size_t
sigmoid_rows(const NbCalibrationRows *rows, uint32_t c, const double *p, SigmoidRows *s)
{
	size_t		positive = 0;

	sigmoid_rows_alloc(s, rows->n, p, false);
	for (size_t i = 0; i < rows->n; i++)
		positive += rows->actual[i] == c;
	/* Platt's targets: the positives' and negatives' counts as a Bayesian prior */
	for (size_t i = 0; i < rows->n; i++)
	{
		nb_interrupt_at(i);
		s->t[i] = rows->actual[i] == c ? (positive + 1.0) / (positive + 2.0)
			: 1.0 / (rows->n - positive + 2.0);
	}
	return positive;
}

static void
sigmoid_rows_free(SigmoidRows *s)
{
	nb_free_if(s->w);
	nb_free(s->t);
	nb_free(s->q);
	nb_free(s->trial_q);
}

/* The trial point becomes the current one: its pass and q. */
static void
sigmoid_accept(SigmoidRows *s, double *ab, const double *next, SigmoidPass *at, const SigmoidPass *trial)
{
	double	   *q = s->q;

	ab[0] = next[0];
	ab[1] = next[1];
	*at = *trial;
	s->q = s->trial_q;
	s->trial_q = q;
}

/*
 * Newton's method with a backtracking line search on the rows from ab,
 * until the gradient is below 1e-12 of the rows (or a step changes
 * nothing); returns the steps.  s->q holds the rows' q at the result.
 */
static uint32_t
sigmoid_newton(SigmoidRows *s, double *ab)
{
	SigmoidPass at;
	double		scale;
	uint32_t	k = 0;

	sigmoid_pass(s, ab, true, s->q, &at);
	/* the loss's size, for its rounding (the steps only lower it) */
	scale = 1 + fabs(at.loss);
	while (k < MAX_ITERATIONS)
	{
		double		h[3] = {at.h[0] + 1e-12, at.h[1], at.h[2] + 1e-12};
		double		det;
		double		d[2];
		double		slope;
		double		step = 1;
		bool		with_loss;
		bool		moved = false;

		k++;
		if (fabs(at.g[0]) <= 1e-12 * s->n && fabs(at.g[1]) <= 1e-12 * s->n)
			break;
		/* (H + sigma I) d = -g, sigma keeping it invertible when every p is the same */
		det = h[0] * h[2] - h[1] * h[1];
		d[0] = -(h[2] * at.g[0] - h[1] * at.g[1]) / det;
		d[1] = -(h[0] * at.g[1] - h[1] * at.g[0]) / det;
		slope = at.g[0] * d[0] + at.g[1] * d[1];
		/*
		 * Near the minimum the fall Newton's step promises (-slope / 2) is
		 * below the rounding of the loss, a sum over every row, which can
		 * then not tell it: the step is taken whole, the gradient (which has
		 * no such floor) deciding when to stop.
		 */
		if (-slope <= 1e-12 * scale)
		{
			double		next[2] = {ab[0] + d[0], ab[1] + d[1]};
			SigmoidPass trial;

			moved = next[0] != ab[0] || next[1] != ab[1];
			sigmoid_pass(s, next, false, s->trial_q, &trial);
			sigmoid_accept(s, ab, next, &at, &trial);
			step = 0;
		}
		/*
		 * Backtracking (Armijo); each trial's gradient is the next step's.  A
		 * trial whose end proves the fall is accepted without the losses;
		 * else the losses decide, from the first trial when the step is long
		 * (far from the minimum the proof seldom holds), else from the trial
		 * whose proof failed.
		 */
		with_loss = fabs(d[0]) + fabs(d[1]) > SIGMOID_PROVED_STEP;
		while (step >= 1e-10)
		{
			double		next[2] = {ab[0] + step * d[0], ab[1] + step * d[1]};
			double		sd[2] = {step * d[0], step * d[1]};
			SigmoidPass trial;

			if (with_loss && isnan(at.loss))
				sigmoid_pass(s, ab, true, s->q, &at);
			sigmoid_pass(s, next, with_loss, s->trial_q, &trial);
			if (sigmoid_descent_proved(&trial, sd, step * slope) ||
				(with_loss && trial.loss <= at.loss + 1e-4 * step * slope))
			{
				moved = next[0] != ab[0] || next[1] != ab[1];
				sigmoid_accept(s, ab, next, &at, &trial);
				break;
			}
			if (!with_loss)
			{
				with_loss = true;
				continue;
			}
			step /= 2;
		}
		if (!moved)
			break;
	}
	return k;
}

/*
 * Every SAMPLE-th row, when that is SAMPLE_ROWS rows with SAMPLE_SIDE of
 * the class and of the others: a warm start for the sigmoid of all.
 */
static bool
sigmoid_sample(const SigmoidRows *s, SigmoidRows *sample, double *p)
{
	size_t		n = s->n / SAMPLE;
	size_t		positive = 0;

	if (n < SAMPLE_ROWS)
		return false;
	for (size_t i = 0; i < n; i++)
		positive += s->t[i * SAMPLE] > 0.5;
	if (positive < SAMPLE_SIDE || n - positive < SAMPLE_SIDE)
		return false;
	sigmoid_rows_alloc(sample, n, p, false);
	for (size_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		p[i] = s->p[i * SAMPLE];
		sample->t[i] = s->t[i * SAMPLE];
	}
	return true;
}

/*
 * A class's own sample (src/README.md, Calibration): every row of the class
 * or where its probability is at least CLASS_SAMPLE_P, and every SAMPLE-th
 * of the rest weighted by the rows it stands for; at most 1 /
 * CLASS_SAMPLE_SHARE of the rows (p's room), else none.
 */
static bool
sigmoid_class_sample(const SigmoidRows *s, SigmoidRows *sample, double *p)
{
	size_t		n = 0;
	size_t		rest = 0;
	size_t		kept = 0;
	double		weight;

	for (size_t i = 0; i < s->n; i++)
	{
		nb_interrupt_at(i);
		if (s->t[i] > 0.5 || s->p[i] >= CLASS_SAMPLE_P)
			n++;
		else
			rest++;
	}
	n += (rest + SAMPLE - 1) / SAMPLE;
	if (n > s->n / CLASS_SAMPLE_SHARE || rest == 0)
		return false;
	weight = (double) rest / ((rest + SAMPLE - 1) / SAMPLE);
	sigmoid_rows_alloc(sample, n, p, true);
	rest = 0;
	for (size_t i = 0; i < s->n; i++)
	{
		bool		own = s->t[i] > 0.5 || s->p[i] >= CLASS_SAMPLE_P;

		nb_interrupt_at(i);
		if (!own && rest++ % SAMPLE != 0)
			continue;
		p[kept] = s->p[i];
		sample->t[kept] = s->t[i];
		sample->w[kept] = own ? 1 : weight;
		kept++;
	}
	return true;
}

void
nb_calibration_probabilities(const NbCalibrationRows *rows, double *p)
{
	uint64_t	work = 0;

	for (size_t i = 0; i < rows->n; i++)
	{
		const double *l = &rows->log_post[i * rows->C];

		nb_interrupt_count(&work, 1 + (uint64_t) rows->C / 8);
		for (uint32_t c = 0; c < rows->C; c++)
			p[c * rows->n + i] = l[c] == -INFINITY ? 0.0 : exp(l[c]);
	}
}

NbCalibrationStatus
nb_calibration_fit_sigmoids(const NbCalibrationRows *rows, uint32_t first, double *ab, double *q,
							uint32_t *iterations)
{
	double	   *sample_p;
	uint32_t	k = 0;

	*iterations = 0;
	if (rows->n == 0)
		return NB_CALIBRATION_TOO_FEW_ROWS;
	sample_p = nb_alloc(sizeof(double) * (rows->n / CLASS_SAMPLE_SHARE + 1));
	for (uint32_t c = first; c < rows->C; c++)
	{
		SigmoidRows s;
		SigmoidRows sample;
		double	   *column = &q[c * rows->n];
		size_t		positive = sigmoid_rows(rows, c, column, &s);

		/* scikit-learn's start, and from there a sample's minimum */
		ab[2 * c] = 0;
		ab[2 * c + 1] = log((rows->n - positive + 1.0) / (positive + 1.0));
		if (sigmoid_class_sample(&s, &sample, sample_p) || sigmoid_sample(&s, &sample, sample_p))
		{
			k += sigmoid_newton(&sample, &ab[2 * c]);
			sigmoid_rows_free(&sample);
		}
		k += sigmoid_newton(&s, &ab[2 * c]);
		/* the class's probabilities, read no more, give way to its q */
		memcpy(column, s.q, sizeof(double) * rows->n);
		sigmoid_rows_free(&s);
	}
	nb_free(sample_p);
	*iterations = k;
	return NB_CALIBRATION_OK;
}

/* ---------------------------------------------------------------------- */
/* the rows' order                                                        */
/* ---------------------------------------------------------------------- */

typedef struct OrderedRow
{
	const double *log_post;
	uint32_t	C;
	uint32_t	actual;
} OrderedRow;

/* By actual class, then by the bytes of the log posteriors: any total order does. */
static int
row_order(const void *a, const void *b)
{
	const OrderedRow *x = a;
	const OrderedRow *y = b;

	if (x->actual != y->actual)
		return x->actual < y->actual ? -1 : 1;
	return memcmp(x->log_post, y->log_post, sizeof(double) * x->C);
}

void
nb_calibration_order_rows(size_t n, uint32_t C, const double *const *row, uint32_t *actual,
						  double *log_post)
{
	OrderedRow *order = nb_alloc(sizeof(OrderedRow) * (n + 1));
	uint64_t	work = 0;

	for (size_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		order[i].log_post = row[i];
		order[i].C = C;
		order[i].actual = actual[i];
	}
	nb_sort(order, n, sizeof(OrderedRow), row_order);
	for (size_t i = 0; i < n; i++)
	{
		nb_interrupt_count(&work, 1 + (uint64_t) C / 8);
		actual[i] = order[i].actual;
		memcpy(&log_post[i * C], order[i].log_post, sizeof(double) * C);
	}
	nb_free(order);
}

/* ---------------------------------------------------------------------- */
/* the scores and the method's choice                                     */
/* ---------------------------------------------------------------------- */

/* Add the log loss (scikit-learn's) and Brier score of a row of probabilities p and class y. */
static void
add_row_scores(NbExactSum *log_loss, NbExactSum *brier, const double *p, uint32_t C, uint32_t y)
{
	double		sum = 0;
	double		row_brier = 0;

	/* (a row's Brier score, at most 2, summed plainly: the rows' sum is exact) */
	for (uint32_t c = 0; c < C; c++)
	{
		double		e = p[c] - (c == y ? 1.0 : 0.0);

		row_brier += e * e;
		sum += nb_metrics_clip(p[c]);
	}
	nb_exact_add(brier, row_brier);
	nb_exact_add(log_loss, -log(nb_metrics_clip(p[y]) / sum));
}

/* Row i's probabilities under cal into p; l is scratch of C doubles, and so is scratch. */
static void
row_probabilities(const NbCalibrationRows *rows, size_t i, const NbCalibration *cal, double *p,
				  double *l, double *scratch)
{
	uint32_t	C = rows->C;
	int64_t		best = -1;

	for (uint32_t c = 0; c < C; c++)
	{
		l[c] = rows->log_post[i * C + c];
		if (l[c] != -INFINITY && (best < 0 || l[c] > l[best]))
			best = c;
	}
	if (cal->sigmoid == NULL && !nb_calibration_is_identity(cal))
	{
		/* a temperature alone: each probability's exponential once, p ∝ e^((l - max l) / T) */
		double		sum = 0;

		for (uint32_t c = 0; c < C; c++)
		{
			p[c] = l[c] == -INFINITY ? 0.0 : exp((l[c] - l[best]) / cal->temperature);
			sum += p[c];
		}
		for (uint32_t c = 0; c < C; c++)
			p[c] /= sum;
		return;
	}
	if (!nb_calibration_is_identity(cal))
		(void) nb_calibration_apply(cal, l, C, best, scratch);
	for (uint32_t c = 0; c < C; c++)
		p[c] = l[c] == -INFINITY ? 0.0 : exp(l[c]);
}

/*
 * Log loss and Brier score of rows under cal; with q (not NULL), its
 * values of each row instead of computing them again: with normalize,
 * every class's sigmoid as nb_calibration_fit_sigmoids gives them (unless
 * they underflow), else the probabilities themselves (cal none), as
 * nb_calibration_probabilities gives them.
 */
static void
score_rows(const NbCalibrationRows *rows, const NbCalibration *cal, const double *q, bool normalize,
		   double *log_loss, double *brier)
{
	uint32_t	C = rows->C;
	double	   *p = nb_alloc(sizeof(double) * 3 * C);
	NbExactSum	loss_sum;
	NbExactSum	brier_sum;
	uint64_t	work = 0;

	nb_exact_init(&loss_sum);
	nb_exact_init(&brier_sum);
	for (size_t i = 0; i < rows->n; i++)
	{
		double		sum = 0;

		nb_interrupt_count(&work, 1 + (uint64_t) C / 8);
		if (q != NULL && normalize)
			for (uint32_t c = 0; c < C; c++)
				sum += q[c * rows->n + i];
		if (q != NULL && !normalize)
			for (uint32_t c = 0; c < C; c++)
				p[c] = q[c * rows->n + i];
		else if (sum >= DBL_MIN)
			for (uint32_t c = 0; c < C; c++)
				p[c] = q[c * rows->n + i] / sum;
		else
			row_probabilities(rows, i, cal, p, p + C, p + 2 * C);
		add_row_scores(&loss_sum, &brier_sum, p, C, rows->actual[i]);
	}
	nb_free(p);
	*log_loss = nb_exact_value(&loss_sum) / rows->n;
	*brier = nb_exact_value(&brier_sum) / rows->n;
}

/* The temperature's fit into fit, scored. */
static NbCalibrationStatus
fit_temperature(const NbCalibrationRows *rows, NbCalibrationFit *fit)
{
	double		t;
	NbCalibrationStatus status = nb_calibration_fit_temperature(rows, &t, &fit->iterations);

	if (status != NB_CALIBRATION_OK)
		return status;
	fit->method = NB_CALIBRATE_TEMPERATURE;
	nb_calibration_init(&fit->cal);
	fit->cal.temperature = t;
	score_rows(rows, &fit->cal, NULL, false, &fit->calibrated_log_loss, &fit->calibrated_brier);
	return NB_CALIBRATION_OK;
}

/*
 * The sigmoids' fit into fit, scored: of two classes the second's, the
 * first's probability its complement (scikit-learn's), else every class's.
 * q holds the rows' probabilities, and then their sigmoids.
 */
static NbCalibrationStatus
fit_sigmoid(const NbCalibrationRows *rows, double *q, NbCalibrationFit *fit)
{
	NbCalibrationStatus status;

	fit->method = NB_CALIBRATE_SIGMOID;
	fit->sigmoid = nb_alloc_zero(sizeof(double) * 2 * rows->C);
	status = nb_calibration_fit_sigmoids(rows, rows->C == 2 ? 1 : 0, fit->sigmoid, q, &fit->iterations);
	if (status != NB_CALIBRATION_OK)
		return status;
	nb_calibration_init(&fit->cal);
	fit->cal.sigmoid = fit->sigmoid;
	fit->cal.sigmoid_class = rows->C == 2 ? 1 : NB_SIGMOID_EVERY_CLASS;
	/* (two classes: the complement is computed apart, as nb_calibration_apply does) */
	score_rows(rows, &fit->cal, rows->C == 2 ? NULL : q, true, &fit->calibrated_log_loss,
			   &fit->calibrated_brier);
	return NB_CALIBRATION_OK;
}

/* Whether the rows' actual classes are at least two. */
static bool
two_classes(const NbCalibrationRows *rows)
{
	for (size_t i = 1; i < rows->n; i++)
		if (rows->actual[i] != rows->actual[0])
			return true;
	return false;
}

/* Auto: both fits, the better kept in fit, or none when neither beats the rows as scored. */
static NbCalibrationStatus
fit_auto(const NbCalibrationRows *rows, double *q, NbCalibrationFit *fit)
{
	NbCalibrationFit temperature = *fit;
	bool		have_temperature = fit_temperature(rows, &temperature) == NB_CALIBRATION_OK;
	NbCalibrationStatus status = fit_sigmoid(rows, q, fit);

	if (status != NB_CALIBRATION_OK)
		return status;
	if (have_temperature && temperature.calibrated_log_loss <= fit->calibrated_log_loss)
	{
		nb_free(fit->sigmoid);
		*fit = temperature;
	}
	if (!(fit->calibrated_log_loss < fit->log_loss))
	{
		nb_calibration_fit_free(fit);
		fit->method = NB_CALIBRATE_NONE;
		nb_calibration_init(&fit->cal);
		fit->calibrated_log_loss = fit->log_loss;
		fit->calibrated_brier = fit->brier;
		fit->iterations = 0;
	}
	return NB_CALIBRATION_OK;
}

NbCalibrationStatus
nb_calibration_fit(const NbCalibrationRows *rows, NbCalibrationMethod method, NbCalibrationFit *fit)
{
	double	   *probabilities = NULL;
	NbCalibration none;
	NbCalibrationStatus status;

	memset(fit, 0, sizeof(*fit));
	if (rows->n == 0)
		return NB_CALIBRATION_TOO_FEW_ROWS;
	if (rows->C < 2 || !two_classes(rows))
		return NB_CALIBRATION_ONE_CLASS;
	/* the probabilities, read row by row once: the scores before and the sigmoids read them */
	if (method != NB_CALIBRATE_TEMPERATURE)
	{
		probabilities = nb_alloc(sizeof(double) * (rows->n * rows->C + 1));
		nb_calibration_probabilities(rows, probabilities);
	}
	nb_calibration_init(&none);
	score_rows(rows, &none, probabilities, false, &fit->log_loss, &fit->brier);
	if (method == NB_CALIBRATE_TEMPERATURE)
		status = fit_temperature(rows, fit);
	else if (method == NB_CALIBRATE_SIGMOID)
		status = fit_sigmoid(rows, probabilities, fit);
	else
		status = fit_auto(rows, probabilities, fit);
	nb_free_if(probabilities);
	if (status != NB_CALIBRATION_OK)
		nb_calibration_fit_free(fit);
	return status;
}

void
nb_calibration_fit_free(NbCalibrationFit *fit)
{
	nb_free_if(fit->sigmoid);
	fit->sigmoid = NULL;
	fit->cal.sigmoid = NULL;
}
