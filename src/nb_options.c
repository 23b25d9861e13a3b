/*
 * nb_options.c — the prediction options and the rules they obey.
 */
#include "nb_options.h"

#include <math.h>
#include <string.h>

#include "nb_dcm.h"

void
nb_options_init(NbOptions *o)
{
	o->kind = NB_MULTINOMIAL;
	o->alpha = 1.0;
	o->prior_mode = NB_PRIOR_FIT;
	o->class_prior = NULL;
	o->var_smoothing = 1e-9;
	o->estimator = NB_ESTIMATOR_MEAN;
	o->alpha_given = false;
	o->class_alpha_given = false;
	o->class_alpha = 0;
	o->beta_given = false;
	o->beta[0] = o->beta[1] = 0;
	o->norm = false;
	nb_calibration_init(&o->calibration);
}

static bool
is_name(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(name, want, len) == 0;
}

NbOptionStatus
nb_options_set_kind(NbOptions *o, const char *name, size_t len)
{
	if (is_name(name, len, "multinomial"))
		o->kind = NB_MULTINOMIAL;
	else if (is_name(name, len, "bernoulli"))
		o->kind = NB_BERNOULLI;
	else if (is_name(name, len, "complement"))
		o->kind = NB_COMPLEMENT;
	else if (is_name(name, len, "dcm"))
		o->kind = NB_DCM;
	else
		return NB_OPTION_KIND_UNRECOGNIZED;
	return NB_OPTION_OK;
}

NbOptionStatus
nb_options_set_alpha(NbOptions *o, double alpha)
{
	/* written so that NaN fails too */
	if (!(alpha >= 0 && alpha <= NB_MAX_ALPHA))
		return NB_OPTION_ALPHA_OUT_OF_RANGE;
	o->alpha = alpha;
	o->alpha_given = true;
	return NB_OPTION_OK;
}

NbOptionStatus
nb_options_set_var_smoothing(NbOptions *o, double var_smoothing)
{
	if (!(var_smoothing >= 0 && var_smoothing <= NB_MAX_VAR_SMOOTHING))
		return NB_OPTION_VAR_SMOOTHING_OUT_OF_RANGE;
	o->var_smoothing = var_smoothing;
	return NB_OPTION_OK;
}

NbOptionStatus
nb_options_set_class_alpha(NbOptions *o, double class_alpha)
{
	if (!(class_alpha >= 0 && class_alpha <= NB_MAX_ALPHA))
		return NB_OPTION_CLASS_ALPHA_OUT_OF_RANGE;
	o->class_alpha = class_alpha;
	o->class_alpha_given = true;
	return NB_OPTION_OK;
}

NbOptionStatus
nb_options_set_estimator(NbOptions *o, const char *name, size_t len)
{
	if (is_name(name, len, "mean"))
		o->estimator = NB_ESTIMATOR_MEAN;
	else if (is_name(name, len, "map"))
		o->estimator = NB_ESTIMATOR_MAP;
	else
		return NB_OPTION_ESTIMATOR_UNRECOGNIZED;
	return NB_OPTION_OK;
}

NbOptionStatus
nb_options_set_beta(NbOptions *o, double present, double absent)
{
	if (!(present >= 0 && present <= NB_MAX_ALPHA && absent >= 0 && absent <= NB_MAX_ALPHA))
		return NB_OPTION_BETA_OUT_OF_RANGE;
	o->beta[0] = present;
	o->beta[1] = absent;
	o->beta_given = true;
	return NB_OPTION_OK;
}

void
nb_options_set_norm(NbOptions *o, bool norm)
{
	o->norm = norm;
}

NbOptionStatus
nb_options_set_temperature(NbOptions *o, double temperature)
{
	if (!(temperature > 0 && isfinite(temperature)))
		return NB_OPTION_TEMPERATURE_OUT_OF_RANGE;
	o->calibration.temperature = temperature;
	return NB_OPTION_OK;
}

NbOptionStatus
nb_options_set_sigmoid(NbOptions *o, const double *ab, uint32_t n_classes, int64_t only)
{
	for (uint32_t c = 0; c < n_classes; c++)
		if ((only < 0 || c == only) && !(isfinite(ab[2 * c]) && isfinite(ab[2 * c + 1])))
			return NB_OPTION_SIGMOID_OUT_OF_RANGE;
	o->calibration.sigmoid = ab;
	o->calibration.sigmoid_class = only;
	return NB_OPTION_OK;
}

void
nb_options_set_fit_prior(NbOptions *o, bool fit_prior)
{
	if (o->prior_mode != NB_PRIOR_GIVEN)
		o->prior_mode = fit_prior ? NB_PRIOR_FIT : NB_PRIOR_UNIFORM;
}

NbOptionStatus
nb_options_check_prior(double p)
{
	if (!(p >= 0) || isinf(p))
		return NB_OPTION_PRIOR_INVALID;
	return NB_OPTION_OK;
}

NbOptionStatus
nb_options_set_class_prior(NbOptions *o, const double *prior, uint32_t n_classes)
{
	double		sum = 0;

	for (uint32_t c = 0; c < n_classes; c++)
	{
		if (nb_options_check_prior(prior[c]) != NB_OPTION_OK)
			return NB_OPTION_PRIOR_INVALID;
		sum += prior[c];
	}
	if (!(sum > 0) || isinf(sum))
		return NB_OPTION_PRIOR_SUM_INVALID;
	o->class_prior = prior;
	o->prior_mode = NB_PRIOR_GIVEN;
	return NB_OPTION_OK;
}

NbOptionStatus
nb_options_check_set(const NbOptions *o)
{
	if (o->estimator == NB_ESTIMATOR_MAP)
	{
		/* the mode of Dir(N + a) has N + a - 1 >= 0 in every coordinate only if a >= 1 */
		if (o->alpha < 1)
			return NB_OPTION_MAP_ALPHA_BELOW_ONE;
		if (o->beta_given && (o->beta[0] < 1 || o->beta[1] < 1))
			return NB_OPTION_MAP_BETA_BELOW_ONE;
		if (o->class_alpha_given && o->class_alpha < 1)
			return NB_OPTION_MAP_CLASS_ALPHA_BELOW_ONE;
	}
	if (o->norm)
	{
		if (o->kind != NB_COMPLEMENT)
			return NB_OPTION_NORM_NOT_COMPLEMENT;
		/* a complement probability of 0 makes a weight and its class's norm infinite */
		if (nb_options_pseudo(o).alpha == 0)
			return NB_OPTION_NORM_NOT_SMOOTHED;
	}
	/* a token a class never saw would have beta = 0: probability 0 for every document with it */
	if (o->kind == NB_DCM && nb_options_pseudo(o).docs == 0)
		return NB_OPTION_DCM_NOT_SMOOTHED;
	/* complement's scores rank the classes; there are no probabilities to calibrate */
	if (o->kind == NB_COMPLEMENT && !nb_calibration_is_identity(&o->calibration))
		return NB_OPTION_CALIBRATION_COMPLEMENT;
	return NB_OPTION_OK;
}

NbPseudoCounts
nb_options_pseudo(const NbOptions *o)
{
	double		less = o->estimator == NB_ESTIMATOR_MAP ? 1 : 0;
	NbPseudoCounts p;

	p.alpha = o->alpha - less;
	p.present = (o->beta_given ? o->beta[0] : o->alpha) - less;
	p.absent = (o->beta_given ? o->beta[1] : o->alpha) - less;
	/* not given: D_c / D under either estimator (mean with 0, mode with 1) */
	p.class_alpha = o->class_alpha_given ? o->class_alpha - less : 0;
	/* the mode keeps alpha's default 1, which leaves 0: an error for dcm */
	p.docs = (o->alpha_given || less != 0 ? o->alpha : NB_DCM_DEFAULT_ALPHA) - less;
	return p;
}

NbOptionStatus
nb_options_check_model(const NbOptions *o, const NbModelTraits *model)
{
	if (o->kind == NB_COMPLEMENT && !model->only_bags)
		return NB_OPTION_COMPLEMENT_NOT_BAGS;
	if (o->kind == NB_COMPLEMENT && model->components)
		return NB_OPTION_COMPLEMENT_COMPONENTS;
	if (o->kind == NB_DCM && !model->has_bag)
		return NB_OPTION_DCM_NO_BAG;
	if (o->kind == NB_DCM && !model->has_lengths)
		return NB_OPTION_DCM_NO_LENGTHS;
	return NB_OPTION_OK;
}

/* The prediction options, as the hint of an unrecognized one lists them. */
static const char *const prediction_options[] = {
	"kind", "alpha", "fit_prior", "class_prior", "var_smoothing", "class_alpha",
	"estimator", "beta", "norm", "temperature", "sigmoid"
};

bool
nb_is_prediction_option(const char *name)
{
	for (size_t i = 0; i < sizeof(prediction_options) / sizeof(prediction_options[0]); i++)
		if (strcmp(name, prediction_options[i]) == 0)
			return true;
	return false;
}
