/*
 * nb_options.h — the prediction options and the rules they obey.
 *
 * The Glue parses the options jsonb and hands each value to a setter here;
 * a setter that refuses returns a status (and changes nothing), which the
 * Glue reports as an error.  The rules therefore hold for every caller and
 * are unit-tested without PostgreSQL.
 *
 *   kind           multinomial (default), bernoulli or complement
 *   alpha          Lidstone smoothing, 0 <= alpha <= NB_MAX_ALPHA (default 1)
 *   fit_prior      true (default): prior from the training rows; false: uniform
 *   class_prior    a probability >= 0, finite, per class; the sum positive
 *                  and finite; takes precedence over fit_prior
 *   var_smoothing  Gaussian variance floor as a fraction of the largest
 *                  feature variance, 0 <= var_smoothing <= NB_MAX_VAR_SMOOTHING
 *                  (default 1e-9, as scikit-learn's GaussianNB)
 * and, over the whole set: complement scores token bags only.
 */
#ifndef NB_OPTIONS_H
#define NB_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum NbKind
{
	NB_MULTINOMIAL,
	NB_BERNOULLI,
	NB_COMPLEMENT
} NbKind;

typedef enum NbPriorMode
{
	NB_PRIOR_FIT,				/* documents per class / all documents */
	NB_PRIOR_UNIFORM,
	NB_PRIOR_GIVEN				/* NbOptions.class_prior */
} NbPriorMode;

typedef struct NbOptions
{
	NbKind		kind;
	double		alpha;
	NbPriorMode prior_mode;
	const double *class_prior;	/* per class in model order, >= 0, sum > 0 */
	double		var_smoothing;	/* >= 0 */
} NbOptions;

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
	NB_OPTION_COMPLEMENT_NOT_BAGS	/* complement with non-bag features */
} NbOptionStatus;

/* The defaults. */
void		nb_options_init(NbOptions *o);

NbOptionStatus nb_options_set_kind(NbOptions *o, const char *name, size_t len);
NbOptionStatus nb_options_set_alpha(NbOptions *o, double alpha);
NbOptionStatus nb_options_set_var_smoothing(NbOptions *o, double var_smoothing);

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

/* The rules between options and model: only_bags = every feature is a token bag. */
NbOptionStatus nb_options_check_model(const NbOptions *o, bool only_bags);

#endif
