/*
 * test_options.c — unit tests of the prediction options' rules (src/nb_options.c).
 *
 *   ./test_options        run every test
 *   ./test_options WORD   run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <math.h>

#include "nb_options.h"
#include "unit.h"

/* A failed condition is the detail of the failure. */
#define EXPECT(cond) CHECK(cond, "%s", #cond)

static void
test_defaults(void)
{
	NbOptions	o;

	nb_options_init(&o);
	EXPECT(o.kind == NB_MULTINOMIAL);
	EXPECT(o.alpha == 1.0);
	EXPECT(o.prior_mode == NB_PRIOR_FIT);
	EXPECT(o.class_prior == NULL);
	EXPECT(o.var_smoothing == 1e-9);
	EXPECT(o.estimator == NB_ESTIMATOR_MEAN);
	EXPECT(!o.class_alpha_given && !o.beta_given && !o.norm);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);
}

static void
test_kind(void)
{
	NbOptions	o;

	nb_options_init(&o);
	EXPECT(nb_options_set_kind(&o, "bernoulli", 9) == NB_OPTION_OK && o.kind == NB_BERNOULLI);
	EXPECT(nb_options_set_kind(&o, "complement", 10) == NB_OPTION_OK && o.kind == NB_COMPLEMENT);
	EXPECT(nb_options_set_kind(&o, "multinomial", 11) == NB_OPTION_OK && o.kind == NB_MULTINOMIAL);
	EXPECT(nb_options_set_kind(&o, "Bernoulli", 9) == NB_OPTION_KIND_UNRECOGNIZED);
	EXPECT(nb_options_set_kind(&o, "bernoull", 8) == NB_OPTION_KIND_UNRECOGNIZED);
	/* a prefix of the length given, not of the NUL-terminated string */
	EXPECT(nb_options_set_kind(&o, "bernoullix", 10) == NB_OPTION_KIND_UNRECOGNIZED);
	EXPECT(nb_options_set_kind(&o, "bernoulli\0x", 11) == NB_OPTION_KIND_UNRECOGNIZED);
	EXPECT(nb_options_set_kind(&o, "", 0) == NB_OPTION_KIND_UNRECOGNIZED);
	EXPECT(o.kind == NB_MULTINOMIAL);
}

static void
test_ranges(void)
{
	const double bad[] = {-1, -1e-300, NAN, INFINITY, -INFINITY, 1.0000000001e100, 1e101};
	const double good[] = {0, 1e-300, 0.5, 1, 1e100};
	NbOptions	o;

	nb_options_init(&o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		EXPECT(nb_options_set_alpha(&o, bad[i]) == NB_OPTION_ALPHA_OUT_OF_RANGE);
		EXPECT(nb_options_set_var_smoothing(&o, bad[i]) == NB_OPTION_VAR_SMOOTHING_OUT_OF_RANGE);
		EXPECT(o.alpha == 1.0 && o.var_smoothing == 1e-9);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
	{
		EXPECT(nb_options_set_alpha(&o, good[i]) == NB_OPTION_OK && o.alpha == good[i]);
		EXPECT(nb_options_set_var_smoothing(&o, good[i]) == NB_OPTION_OK && o.var_smoothing == good[i]);
	}
	/* -0 is 0 */
	EXPECT(nb_options_set_alpha(&o, -0.0) == NB_OPTION_OK);
}

static void
test_priors(void)
{
	const double ok[] = {0, 3, 1};
	const double zero_sum[] = {0, 0, 0};
	const double negative[] = {1, -0.5, 1};
	const double nan_p[] = {1, NAN, 1};
	const double inf_p[] = {1, INFINITY, 1};
	const double overflow[] = {1e308, 1e308, 1e308};
	NbOptions	o;

	EXPECT(nb_options_check_prior(0) == NB_OPTION_OK);
	EXPECT(nb_options_check_prior(1e308) == NB_OPTION_OK);
	EXPECT(nb_options_check_prior(-1e-300) == NB_OPTION_PRIOR_INVALID);
	EXPECT(nb_options_check_prior(NAN) == NB_OPTION_PRIOR_INVALID);
	EXPECT(nb_options_check_prior(INFINITY) == NB_OPTION_PRIOR_INVALID);

	nb_options_init(&o);
	EXPECT(nb_options_set_class_prior(&o, zero_sum, 3) == NB_OPTION_PRIOR_SUM_INVALID);
	EXPECT(nb_options_set_class_prior(&o, overflow, 3) == NB_OPTION_PRIOR_SUM_INVALID);
	EXPECT(nb_options_set_class_prior(&o, negative, 3) == NB_OPTION_PRIOR_INVALID);
	EXPECT(nb_options_set_class_prior(&o, nan_p, 3) == NB_OPTION_PRIOR_INVALID);
	EXPECT(nb_options_set_class_prior(&o, inf_p, 3) == NB_OPTION_PRIOR_INVALID);
	EXPECT(o.prior_mode == NB_PRIOR_FIT && o.class_prior == NULL);

	/* fit_prior alone */
	nb_options_set_fit_prior(&o, false);
	EXPECT(o.prior_mode == NB_PRIOR_UNIFORM);
	nb_options_set_fit_prior(&o, true);
	EXPECT(o.prior_mode == NB_PRIOR_FIT);

	/* class_prior wins whether fit_prior comes before or after it */
	nb_options_set_fit_prior(&o, false);
	EXPECT(nb_options_set_class_prior(&o, ok, 3) == NB_OPTION_OK);
	EXPECT(o.prior_mode == NB_PRIOR_GIVEN && o.class_prior == ok);
	nb_options_set_fit_prior(&o, false);
	EXPECT(o.prior_mode == NB_PRIOR_GIVEN);
	nb_options_set_fit_prior(&o, true);
	EXPECT(o.prior_mode == NB_PRIOR_GIVEN);
}

static void
test_model_rules(void)
{
	NbOptions	o;
	const NbModelTraits bags = {true, true, true, false};
	const NbModelTraits mixed = {false, true, true, false};
	const NbModelTraits old_mixed = {false, true, false, false};
	const NbModelTraits no_bag = {false, false, false, false};
	const NbModelTraits components = {true, true, true, true};

	nb_options_init(&o);
	EXPECT(nb_options_check_model(&o, &mixed) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, &old_mixed) == NB_OPTION_OK);
	EXPECT(nb_options_set_kind(&o, "bernoulli", 9) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, &mixed) == NB_OPTION_OK);
	EXPECT(nb_options_set_kind(&o, "complement", 10) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, &bags) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, &mixed) == NB_OPTION_COMPLEMENT_NOT_BAGS);
	/* a model of mixture components: probabilities only, to sum per class */
	EXPECT(nb_options_check_model(&o, &components) == NB_OPTION_COMPLEMENT_COMPONENTS);
	/* dcm: bags with their lengths, alone or beside other features */
	EXPECT(nb_options_set_kind(&o, "dcm", 3) == NB_OPTION_OK && o.kind == NB_DCM);
	EXPECT(nb_options_check_model(&o, &bags) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, &mixed) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, &old_mixed) == NB_OPTION_DCM_NO_LENGTHS);
	EXPECT(nb_options_check_model(&o, &no_bag) == NB_OPTION_DCM_NO_BAG);
	EXPECT(nb_options_check_model(&o, &components) == NB_OPTION_OK);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);
	EXPECT(nb_options_set_alpha(&o, 0) == NB_OPTION_OK);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_DCM_NOT_SMOOTHED);
	EXPECT(nb_options_set_alpha(&o, 1) == NB_OPTION_OK);
	EXPECT(nb_options_set_estimator(&o, "map", 3) == NB_OPTION_OK);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_DCM_NOT_SMOOTHED);
	EXPECT(nb_options_set_alpha(&o, 1.5) == NB_OPTION_OK);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);
	EXPECT(nb_options_set_kind(&o, "DCM", 3) == NB_OPTION_KIND_UNRECOGNIZED);
}

static void
test_estimator_options(void)
{
	const double bad[] = {-1, -1e-300, NAN, INFINITY, -INFINITY, 1.0000000001e100, 1e101};
	const double good[] = {0, 1e-300, 0.5, 1, 1e100};
	NbOptions	o;

	nb_options_init(&o);
	EXPECT(nb_options_set_estimator(&o, "map", 3) == NB_OPTION_OK && o.estimator == NB_ESTIMATOR_MAP);
	EXPECT(nb_options_set_estimator(&o, "mean", 4) == NB_OPTION_OK && o.estimator == NB_ESTIMATOR_MEAN);
	EXPECT(nb_options_set_estimator(&o, "MAP", 3) == NB_OPTION_ESTIMATOR_UNRECOGNIZED);
	EXPECT(nb_options_set_estimator(&o, "mapx", 3) == NB_OPTION_OK && o.estimator == NB_ESTIMATOR_MAP);
	EXPECT(nb_options_set_estimator(&o, "mapx", 4) == NB_OPTION_ESTIMATOR_UNRECOGNIZED);
	EXPECT(nb_options_set_estimator(&o, "mode", 4) == NB_OPTION_ESTIMATOR_UNRECOGNIZED);
	EXPECT(nb_options_set_estimator(&o, "", 0) == NB_OPTION_ESTIMATOR_UNRECOGNIZED);
	EXPECT(o.estimator == NB_ESTIMATOR_MAP);

	nb_options_init(&o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		EXPECT(nb_options_set_class_alpha(&o, bad[i]) == NB_OPTION_CLASS_ALPHA_OUT_OF_RANGE);
		EXPECT(nb_options_set_beta(&o, bad[i], 1) == NB_OPTION_BETA_OUT_OF_RANGE);
		EXPECT(nb_options_set_beta(&o, 1, bad[i]) == NB_OPTION_BETA_OUT_OF_RANGE);
		EXPECT(!o.class_alpha_given && !o.beta_given);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
	{
		EXPECT(nb_options_set_class_alpha(&o, good[i]) == NB_OPTION_OK &&
			   o.class_alpha_given && o.class_alpha == good[i]);
		EXPECT(nb_options_set_beta(&o, good[i], 2) == NB_OPTION_OK &&
			   o.beta_given && o.beta[0] == good[i] && o.beta[1] == 2);
	}
	nb_options_set_norm(&o, true);
	EXPECT(o.norm);
	nb_options_set_norm(&o, false);
	EXPECT(!o.norm);
}

static void
test_pseudo_counts(void)
{
	NbOptions	o;
	NbPseudoCounts p;

	/* mean: the prior parameters; class_alpha 0 unless given */
	nb_options_init(&o);
	nb_options_set_alpha(&o, 0.5);
	p = nb_options_pseudo(&o);
	EXPECT(p.alpha == 0.5 && p.present == 0.5 && p.absent == 0.5 && p.class_alpha == 0);
	nb_options_set_class_alpha(&o, 2);
	nb_options_set_beta(&o, 3, 4);
	p = nb_options_pseudo(&o);
	EXPECT(p.alpha == 0.5 && p.present == 3 && p.absent == 4 && p.class_alpha == 2);
	/* map: one less, and D_c / D (0) when class_alpha is not given */
	nb_options_init(&o);
	nb_options_set_estimator(&o, "map", 3);
	p = nb_options_pseudo(&o);
	EXPECT(p.alpha == 0 && p.present == 0 && p.absent == 0 && p.class_alpha == 0);
	nb_options_set_alpha(&o, 2.5);
	nb_options_set_beta(&o, 1, 7);
	nb_options_set_class_alpha(&o, 1.25);
	p = nb_options_pseudo(&o);
	EXPECT(p.alpha == 1.5 && p.present == 0 && p.absent == 6 && p.class_alpha == 0.25);
}

static void
test_set_rules(void)
{
	NbOptions	o;

	/* map: every prior parameter given must be >= 1, whatever the order they came in */
	nb_options_init(&o);
	nb_options_set_estimator(&o, "map", 3);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);
	nb_options_set_alpha(&o, 0.999);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_MAP_ALPHA_BELOW_ONE);
	nb_options_set_alpha(&o, 1);
	nb_options_set_beta(&o, 1, 0.5);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_MAP_BETA_BELOW_ONE);
	nb_options_set_beta(&o, 0, 1);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_MAP_BETA_BELOW_ONE);
	nb_options_set_beta(&o, 1, 1);
	nb_options_set_class_alpha(&o, 0);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_MAP_CLASS_ALPHA_BELOW_ONE);
	nb_options_set_class_alpha(&o, 1);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);
	/* the same values are fine for the mean */
	nb_options_set_estimator(&o, "mean", 4);
	nb_options_set_alpha(&o, 0);
	nb_options_set_beta(&o, 0, 0.5);
	nb_options_set_class_alpha(&o, 0);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);

	/* norm: complement only, and with a positive pseudo-count */
	nb_options_init(&o);
	nb_options_set_norm(&o, true);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_NORM_NOT_COMPLEMENT);
	nb_options_set_kind(&o, "bernoulli", 9);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_NORM_NOT_COMPLEMENT);
	nb_options_set_kind(&o, "complement", 10);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);
	nb_options_set_alpha(&o, 0);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_NORM_NOT_SMOOTHED);
	nb_options_set_alpha(&o, 1);
	nb_options_set_estimator(&o, "map", 3);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_NORM_NOT_SMOOTHED);
	nb_options_set_alpha(&o, 1.5);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);
	/* norm false is allowed with any kind */
	nb_options_set_norm(&o, false);
	nb_options_set_kind(&o, "multinomial", 11);
	EXPECT(nb_options_check_set(&o) == NB_OPTION_OK);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("options: defaults (multinomial, alpha 1, fitted prior, var_smoothing 1e-9)", test_defaults);
	run("options: kind names, exact and case-sensitive; refusal changes nothing", test_kind);
	run("options: alpha and var_smoothing in [0, 1e100]; NaN, inf, negative refused", test_ranges);
	run("options: class_prior per class and sum rules, precedence over fit_prior in any order", test_priors);
	run("options: complement needs a model of token bags only", test_model_rules);
	run("options: estimator names; class_alpha and beta in [0, 1e100]; norm", test_estimator_options);
	run("options: pseudo-counts of mean and map, beta over alpha, class_alpha default",
		test_pseudo_counts);
	run("options: map needs prior parameters >= 1; norm needs complement and smoothing", test_set_rules);
	return unit_done();
}
