/*
 * nb_calibrate.h — calibrated probabilities: a map of a row's log
 * posteriors applied after scoring, correcting naive Bayes' overconfidence
 * (the features' evidence counted as if independent adds up too fast).
 * Its fit to out-of-fold posteriors is a workflow's
 * (workflows/nb_calibrate_fit.h).
 *
 *   temperature  l_c / T - log sum_k exp(l_k / T) for the log posteriors
 *                l (Guo et al. 2017): T > 1 flattens, T < 1 sharpens; the
 *                order of the classes is kept, and so the predicted class.
 *   sigmoid      Platt's sigmoid of each class's probability p_c, q_c = 1 /
 *                (1 + exp(a_c p_c + b_c)), as scikit-learn's
 *                CalibratedClassifierCV(method="sigmoid") applies them: with
 *                two classes only the second (the last label in byte order)
 *                has one and the first gets 1 - q; with more, the q_c are
 *                normalized to sum to 1.  The predicted class is the most
 *                probable after the map (it can change).
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

/*
 * Apply cal to the C log posteriors of a row (nb_scorer_score's, best its
 * most probable class), in place; returns the most probable class after
 * it (exact ties: the lowest index).  scratch holds C doubles.
 */
int64_t		nb_calibration_apply(const NbCalibration *cal, double *log_post, uint32_t C,
								 int64_t best, double *scratch);

#endif
