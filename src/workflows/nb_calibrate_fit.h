/*
 * nb_calibrate_fit.h — the fit of calibrated probabilities (nb_calibrate.h)
 * to the out-of-fold posteriors of cross-validation: the temperature, the
 * sigmoids, the choice between them, and the rows' log loss and Brier score
 * before and after.
 *
 * Pure C: no PostgreSQL.
 */
#ifndef NB_CALIBRATE_FIT_H
#define NB_CALIBRATE_FIT_H

#include "nb_calibrate.h"

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
 * Put the rows (row i: class actual[i], C log posteriors at row[i]) into
 * actual and log_post (n * C) in a canonical order, by actual class, then
 * by their log posteriors' bytes: the fits' sums then give the same bits
 * whatever order the rows came in.
 */
void		nb_calibration_order_rows(size_t n, uint32_t C, const double *const *row,
									  uint32_t *actual, double *log_post);

/*
 * The temperature minimizing the rows' log loss (src/README.md,
 * Calibration); *iterations receives the steps (of the sample's fit too).
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
 * The sigmoids 1 / (1 + exp(a p + b)) of classes first to C - 1 (0 for
 * every class; 1 for the second of two, as nb_calibration_apply's
 * sigmoid_class), class c's (a, b) at ab[2c], ab[2c + 1] (src/README.md,
 * Calibration).  q holds the rows' probabilities as
 * nb_calibration_probabilities gives them, and receives in their place each
 * row's sigmoid at its class's fit (from class first on): the calibrated
 * rows need no pass of their own.  *iterations receives every fit's steps.
 */
NbCalibrationStatus nb_calibration_fit_sigmoids(const NbCalibrationRows *rows, uint32_t first, double *ab,
												double *q, uint32_t *iterations);

typedef enum NbCalibrationMethod
{
	NB_CALIBRATE_NONE,			/* (a result only: auto found neither better) */
	NB_CALIBRATE_TEMPERATURE,
	NB_CALIBRATE_SIGMOID,
	NB_CALIBRATE_AUTO
} NbCalibrationMethod;

/* A calibration fitted, and the rows' scores before and after. */
typedef struct NbCalibrationFit
{
	NbCalibrationMethod method; /* the one kept */
	NbCalibration cal;			/* its map; cal.sigmoid points to sigmoid */
	double	   *sigmoid;		/* [a, b] per class (2 * C), nb_alloc's; with two classes the second's only */
	double		log_loss;		/* before: the posteriors as scored */
	double		brier;
	double		calibrated_log_loss;	/* after */
	double		calibrated_brier;
	uint32_t	iterations;
} NbCalibrationFit;

/*
 * Fit method to the rows (in nb_calibration_order_rows' order).  Auto fits
 * both and keeps the one of the lower log loss (temperature on a tie), or
 * neither (NB_CALIBRATE_NONE) when neither lowers the rows' log loss: on
 * separable rows Platt's targets keep the sigmoid's loss above an
 * uncalibrated loss near 0.  Log loss as scikit-learn's (probabilities
 * clipped to [eps, 1 - eps], renormalized), both scores exact means over
 * the rows.  nb_calibration_fit_free frees what an OK fit holds.
 */
NbCalibrationStatus nb_calibration_fit(const NbCalibrationRows *rows, NbCalibrationMethod method,
									   NbCalibrationFit *fit);
void		nb_calibration_fit_free(NbCalibrationFit *fit);

#endif
