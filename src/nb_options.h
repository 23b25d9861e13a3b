/*
 * nb_options.h — the prediction options and the rules they obey.
 *
 * The Glue parses the options jsonb and hands each value to a setter here;
 * a setter that refuses returns a status (and changes nothing), which the
 * Glue reports as an error.  The rules therefore hold for every caller and
 * are unit-tested without PostgreSQL.
 *
 * The options, their ranges and defaults are the user manual's (README.md,
 * Options); the rules over the whole set are nb_options_check_set's and
 * nb_options_check_model's.
 */
#ifndef NB_OPTIONS_H
#define NB_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_calibrate.h"

typedef enum NbKind
{
	NB_MULTINOMIAL,
	NB_BERNOULLI,
	NB_COMPLEMENT,
	NB_DCM						/* Dirichlet compound multinomial (nb_dcm.h) */
} NbKind;

typedef enum NbPriorMode
{
	NB_PRIOR_FIT,				/* documents per class / all documents */
	NB_PRIOR_UNIFORM,
	NB_PRIOR_GIVEN				/* NbOptions.class_prior */
} NbPriorMode;

typedef enum NbEstimator
{
	NB_ESTIMATOR_MEAN,			/* posterior mean: counts + prior parameter */
	NB_ESTIMATOR_MAP			/* posterior mode: counts + prior parameter - 1 */
} NbEstimator;

/* Members after var_smoothing are all-zero for their defaults. */
typedef struct NbOptions
{
	NbKind		kind;
	double		alpha;
	NbPriorMode prior_mode;
	const double *class_prior;	/* per class in model order, >= 0, sum > 0 */
	double		var_smoothing;	/* >= 0 */
	NbEstimator estimator;
	bool		alpha_given;	/* for dcm, whose default is NB_DCM_DEFAULT_ALPHA */
	bool		class_alpha_given;
	double		class_alpha;
	bool		beta_given;
	double		beta[2];		/* presence (beta_1), absence (beta_0) */
	bool		norm;
	NbCalibration calibration;	/* applied after scoring; identity by default */
} NbOptions;

/*
 * What the estimator adds to each count (Lidstone pseudo-counts), for the
 * scorer: the prior parameter itself for the posterior mean, one less for
 * the posterior mode (Murphy eq. 3.67-3.68; Freda's MAP slide).  Always
 * >= 0 for options that passed nb_options_check_set.
 */
typedef struct NbPseudoCounts
{
	double		alpha;			/* multinomial, categorical, complement */
	double		present;		/* Bernoulli bags and boolean features: true */
	double		absent;			/* ... false */
	double		class_alpha;	/* the fitted class prior */
	double		docs;			/* dcm: pseudo document count of an unseen token */
} NbPseudoCounts;

/* Larger values would overflow alpha times the vocabulary to infinity. */
#define NB_MAX_ALPHA 1e100
/* Larger values would overflow the floor times a large variance. */
#define NB_MAX_VAR_SMOOTHING 1e100

typedef enum NbOptionStatus
{
	NB_OPTION_OK,
	NB_OPTION_KIND_UNRECOGNIZED,
	NB_OPTION_ALPHA_OUT_OF_RANGE,
	NB_OPTION_VAR_SMOOTHING_OUT_OF_RANGE,
	NB_OPTION_PRIOR_INVALID,	/* a class's probability: negative, NaN or infinite */
	NB_OPTION_PRIOR_SUM_INVALID,	/* the probabilities: sum not positive and finite */
	NB_OPTION_COMPLEMENT_NOT_BAGS,	/* complement with non-bag features */
	NB_OPTION_CLASS_ALPHA_OUT_OF_RANGE,
	NB_OPTION_ESTIMATOR_UNRECOGNIZED,
	NB_OPTION_BETA_OUT_OF_RANGE,
	NB_OPTION_MAP_ALPHA_BELOW_ONE,	/* map: a prior parameter below 1 */
	NB_OPTION_MAP_BETA_BELOW_ONE,
	NB_OPTION_MAP_CLASS_ALPHA_BELOW_ONE,
	NB_OPTION_NORM_NOT_COMPLEMENT,	/* norm with another kind */
	NB_OPTION_NORM_NOT_SMOOTHED,	/* norm with a pseudo-count of 0 */
	NB_OPTION_DCM_NOT_SMOOTHED, /* dcm with a pseudo-count of 0 */
	NB_OPTION_DCM_NO_BAG,		/* dcm with a model without bag features */
	NB_OPTION_DCM_NO_LENGTHS,	/* dcm with a model without document lengths */
	NB_OPTION_TEMPERATURE_OUT_OF_RANGE,
	NB_OPTION_SIGMOID_OUT_OF_RANGE, /* a parameter not finite */
	NB_OPTION_CALIBRATION_COMPLEMENT,	/* calibration of complement's scores */
	NB_OPTION_COMPLEMENT_COMPONENTS /* complement of a model of mixture components */
} NbOptionStatus;

/* The defaults. */
void		nb_options_init(NbOptions *o);

NbOptionStatus nb_options_set_kind(NbOptions *o, const char *name, size_t len);
NbOptionStatus nb_options_set_alpha(NbOptions *o, double alpha);
NbOptionStatus nb_options_set_var_smoothing(NbOptions *o, double var_smoothing);
NbOptionStatus nb_options_set_class_alpha(NbOptions *o, double class_alpha);
NbOptionStatus nb_options_set_estimator(NbOptions *o, const char *name, size_t len);
NbOptionStatus nb_options_set_beta(NbOptions *o, double present, double absent);
void		nb_options_set_norm(NbOptions *o, bool norm);
/* temperature: finite and positive */
NbOptionStatus nb_options_set_temperature(NbOptions *o, double temperature);

/*
 * sigmoid: [a, b] per class in model order (2 * n_classes numbers, kept by
 * reference), of every class, or with two classes of class only (else
 * NB_SIGMOID_EVERY_CLASS); each must be finite.
 */
NbOptionStatus nb_options_set_sigmoid(NbOptions *o, const double *ab, uint32_t n_classes,
									  int64_t only);

/* fit_prior: whether the prior comes from the training rows (unless class_prior is given). */
void		nb_options_set_fit_prior(NbOptions *o, bool fit_prior);

/* Whether p may be one class's probability in class_prior. */
NbOptionStatus nb_options_check_prior(double p);

/*
 * class_prior: n_classes probabilities, each passing nb_options_check_prior,
 * in model order; kept by reference.
 */
NbOptionStatus nb_options_set_class_prior(NbOptions *o, const double *prior,
										  uint32_t n_classes);

/*
 * The rules between options, once all are set (options come in any order).
 * The estimator's rule holds for every prior parameter given, used by the
 * model or not, so that it does not depend on the model's features.
 */
NbOptionStatus nb_options_check_set(const NbOptions *o);

/* The pseudo-counts of options that passed nb_options_check_set. */
NbPseudoCounts nb_options_pseudo(const NbOptions *o);

/* What the rules between options and model need to know of the model. */
typedef struct NbModelTraits
{
	bool		only_bags;		/* every feature is a token bag */
	bool		has_bag;		/* some feature is */
	bool		has_lengths;	/* it keeps its bags' document lengths */
	bool		components;		/* its classes are mixture components */
} NbModelTraits;

/* The rules between options and model. */
NbOptionStatus nb_options_check_model(const NbOptions *o, const NbModelTraits *model);

/*
 * Is name one of the prediction options?  For the hint of a prediction
 * option given where a tokenizer's go (pg_tokenize.c).
 */
bool		nb_is_prediction_option(const char *name);

#endif
