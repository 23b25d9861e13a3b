/*
 * test_options.c — unit tests of the prediction options' rules (src/nb_options.c).
 *
 *   ./test_options        run every test
 *
 * Prints "ok - name" or "not ok - name: detail" per test, then
 * "N passed, N failed"; exits 1 if any test failed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nb_options.h"

static int n_passed;
static int n_failed;

#define EXPECT(cond) \
	do { if (!(cond)) { printf("not ok - %s: line %d: %s\n", name, __LINE__, #cond); n_failed++; return; } } while (0)

static void
test_defaults(void)
{
	const char *name = "options: defaults (multinomial, alpha 1, fitted prior, var_smoothing 1e-9)";
	NbOptions	o;

	nb_options_init(&o);
	EXPECT(o.kind == NB_MULTINOMIAL);
	EXPECT(o.alpha == 1.0);
	EXPECT(o.prior_mode == NB_PRIOR_FIT);
	EXPECT(o.class_prior == NULL);
	EXPECT(o.var_smoothing == 1e-9);
	printf("ok - %s\n", name);
	n_passed++;
}

static void
test_kind(void)
{
	const char *name = "options: kind names, exact and case-sensitive; refusal changes nothing";
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
	printf("ok - %s\n", name);
	n_passed++;
}

static void
test_ranges(void)
{
	const char *name = "options: alpha and var_smoothing in [0, 1e100]; NaN, inf, negative refused";
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
	printf("ok - %s\n", name);
	n_passed++;
}

static void
test_priors(void)
{
	const char *name = "options: class_prior per class and sum rules, precedence over fit_prior in any order";
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
	printf("ok - %s\n", name);
	n_passed++;
}

static void
test_model_rules(void)
{
	const char *name = "options: complement needs a model of token bags only";
	NbOptions	o;

	nb_options_init(&o);
	EXPECT(nb_options_check_model(&o, false) == NB_OPTION_OK);
	EXPECT(nb_options_set_kind(&o, "bernoulli", 9) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, false) == NB_OPTION_OK);
	EXPECT(nb_options_set_kind(&o, "complement", 10) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, true) == NB_OPTION_OK);
	EXPECT(nb_options_check_model(&o, false) == NB_OPTION_COMPLEMENT_NOT_BAGS);
	printf("ok - %s\n", name);
	n_passed++;
}

int
main(void)
{
	test_defaults();
	test_kind();
	test_ranges();
	test_priors();
	test_model_rules();
	printf("%d passed, %d failed\n", n_passed, n_failed);
	return n_failed > 0;
}
