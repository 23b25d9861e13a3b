/*
 * nb_calibrate.h — calibrated probabilities: a map of a row's log
 * posteriors applied after scoring, and its fit to out-of-fold posteriors.
 *
 * Naive Bayes posteriors are overconfident: the features' evidence is
 * counted as if independent, so it adds up too fast.  Two maps correct
 * that, each fitted on the posteriors of rows a model did not see (the
 * out-of-fold posteriors of cross-validation):
 *
 *   temperature  l_c / T - log sum_k exp(l_k / T) for the log posteriors
 *                l (Guo et al. 2017): T > 1 flattens, T < 1 sharpens; the
 *                order of the classes is kept, and so the predicted class.
 *                T is fitted by minimizing the log loss, a convex function
 *                of 1 / T.
 *   sigmoid      Platt's sigmoid of each class's probability p_c, q_c = 1 /
 *                (1 + exp(a_c p_c + b_c)), as scikit-learn's
 *                CalibratedClassifierCV(method="sigmoid") fits and applies
 *                them: with two classes only the second (the last label in
 *                byte order) has one and the first gets 1 - q; with more,
 *                the q_c are normalized to sum to 1.  The predicted class is
 *                the most probable after the map (it can change).  Each
 *                (a_c, b_c) minimizes the cross-entropy with Platt's
 *                targets (N+ + 1) / (N+ + 2) and 1 / (N- + 2), by Newton's
 *                method to convergence (scikit-learn stops BFGS at a
 *                gradient norm of 1e-5).
 *
 * Both applied, the temperature comes first and the sigmoids read its
 * probabilities.  Everything is in log space: the sigmoids' logarithms are
 * log1p of an exponential, never the log of a rounded q.
 *
 * Pure C: no PostgreSQL.
 */
#ifndef NB_CALIBRATE_H
#define NB_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NbCalibration.sigmoid_class when every class has a sigmoid */
#define NB_SIGMOID_EVERY_CLASS (-1)

/* All-zero is no map, as nb_calibration_init makes it (NbOptions' zero defaults). */
typedef struct NbCalibration
{
	double		temperature;	/* 0 or 1: none */
	const double *sigmoid;		/* NULL: none; else [a, b] per class, model order */
	int64_t		sigmoid_class;	/* two classes: the one with a sigmoid; else NB_SIGMOID_EVERY_CLASS */
} NbCalibration;

/* No map: the posteriors as scored. */
void		nb_calibration_init(NbCalibration *cal);

/* Whether cal changes nothing (then it is not applied at all: T = 1 is bytes-identical). */
bool		nb_calibration_is_identity(const NbCalibration *cal);

/* Whether t may be a temperature: finite and positive. */
bool		nb_calibration_valid_temperature(double t);

/* Whether a and b may be a sigmoid's parameters: finite. */
bool		nb_calibration_valid_sigmoid(double a, double b);

/*
 * Apply cal to the C log posteriors of a row (nb_scorer_score's, best its
 * most probable class), in place; returns the most probable class after
 * it (exact ties: the lowest index).  scratch holds C doubles.
 */
int64_t		nb_calibration_apply(const NbCalibration *cal, double *log_post, uint32_t C,
								 int64_t best, double *scratch);

/* The out-of-fold rows a fit reads. */
typedef struct NbCalibrationRows
{
	size_t		n;
	uint32_t	C;
	const uint32_t *actual;		/* n: each row's class */
	const double *log_post;		/* n * C: each row's log posteriors (-inf: 0) */
} NbCalibrationRows;

typedef enum NbCalibrationStatus
{
	NB_CALIBRATION_OK,
	NB_CALIBRATION_TOO_FEW_ROWS,	/* no row whose actual class has a probability */
	NB_CALIBRATION_ONE_CLASS,	/* the rows' posteriors name fewer than two classes */
	NB_CALIBRATION_SEPARATED,	/* every row right by a margin: the loss falls as T -> 0 */
	NB_CALIBRATION_NO_BETTER	/* no better than uniform: the loss falls as T -> infinity */
} NbCalibrationStatus;

/*
 * Put the rows in a canonical order (by actual class, then by their log
 * posteriors' bytes).  The fits sum over the rows in their order, with
 * compensated sums: rows given in this order give the same result to the
 * bit whatever order they came in.  Row i's class is actual[i] and its C
 * log posteriors are at source[i * stride]; they go to actual and log_post
 * (n * C, apart from source) in that order.
 */
void		nb_calibration_order_rows(size_t n, uint32_t C, const double *source, size_t stride,
									  uint32_t *actual, double *log_post);

/*
 * The temperature minimizing the rows' log loss: Newton's method on 1 / T,
 * kept inside a bracket of the minimum (bisection when a step leaves it),
 * until a step would change 1 / T by less than 1e-13 of it, from the
 * minimum of every 16th row (when those are 256 or more and have one).  Rows whose
 * actual class has probability 0 are left out (their loss is infinite at
 * every T).  *iterations receives the Newton or bisection steps (of both fits).
 */
NbCalibrationStatus nb_calibration_fit_temperature(const NbCalibrationRows *rows, double *temperature,
												   uint32_t *iterations);

/*
 * The rows' probabilities, e^l (0 for -inf), a column of n per class: row
 * i's of class c at p[c * n + i] (n * C doubles), as the sigmoids read
 * them.
 */
void		nb_calibration_probabilities(const NbCalibrationRows *rows, double *p);

/*
 * The sigmoids of classes first to C - 1 (0 for every class; 1 for the
 * second of two, as nb_calibration_apply's sigmoid_class): the (a, b) of
 * class c at ab[2c], ab[2c + 1], minimizing the cross-entropy of 1 / (1 +
 * exp(a p + b)) with Platt's targets, p the row's probability of c and the
 * target from whether c is its actual class; Newton's method with a
 * backtracking line search until the gradient is below 1e-12 of the rows
 * (or a step changes nothing), from the same fit on every 16th row (when
 * those are 256 with 8 of each side), which starts where scikit-learn does
 * (0, log((N- + 1) / (N+ + 1))).  q (n * C doubles) holds the rows'
 * probabilities as nb_calibration_probabilities gives them, and receives
 * each row's sigmoid at its class's fit in their place, q_c = 1 / (1 +
 * exp(a_c p_c + b_c)) of row i at q[c * n + i] (from class first on),
 * which the fit computed last: the calibrated rows need no pass of their
 * own.  *iterations receives the steps of every fit.
 */
NbCalibrationStatus nb_calibration_fit_sigmoids(const NbCalibrationRows *rows, uint32_t first, double *ab,
												double *q, uint32_t *iterations);

#endif
