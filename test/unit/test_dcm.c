/*
 * test_dcm.c — unit tests of the DCM (src/nb_dcm.c) and its scoring
 * (kind dcm in src/nb_scorer.c).
 *
 *   ./test_dcm [NAME]     run every test (or those whose name contains NAME)
 *
 * Reference values: digamma at points where it is known in closed form;
 * log-gamma ratios against the difference of two lgamma calls where that is
 * accurate; the fit against a corpus drawn from a known DCM; posteriors
 * against eq. 3.79 computed here from the fitted parameters with lgamma.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "model_check.h"
#include "nb_dcm.h"
#include "nb_doc.h"
#include "nb_index.h"
#include "nb_options.h"
#include "nb_scorer.h"
#include "nb_trainer.h"
#include "unit.h"

#define EULER 0.57721566490153286061

static double
rel_diff(double a, double b)
{
	return fabs(a - b) / fmax(fabs(b), 1e-300);
}

/* psi(1) = -gamma, psi(1/2) = -gamma - 2 log 2, psi(n + 1) = psi(n) + 1/n. */
static void
test_digamma(void)
{
	double		h = -EULER;

	CHECK(rel_diff(nb_digamma(1), -EULER) < 1e-15, "psi(1) = %.17g", nb_digamma(1));
	CHECK(rel_diff(nb_digamma(0.5), -EULER - 2 * log(2)) < 1e-15, "psi(1/2) = %.17g",
		  nb_digamma(0.5));
	for (int n = 1; n < 200; n++)
	{
		h += 1.0 / n;
		CHECK_OR_DONE(rel_diff(nb_digamma(n + 1), h) < 2e-15, "psi(%d) = %.17g, want %.17g",
					  n + 1, nb_digamma(n + 1), h);
	}
	/* psi(x) ~ -1/x - gamma near 0, log x - 1/(2x) for large x */
	CHECK(rel_diff(nb_digamma(1e-10), -1e10 - EULER) < 1e-15, "psi(1e-10) = %.17g",
		  nb_digamma(1e-10));
	CHECK(rel_diff(nb_digamma(1e8), log(1e8) - 0.5e-8) < 1e-15, "psi(1e8) = %.17g",
		  nb_digamma(1e8));
done:
	;
}

/* log Gamma(b + x) - log Gamma(b): against lgamma where it is accurate, and its limits. */
static void
test_lgamma_ratio(void)
{
	static const double b[] = {1e-8, 0.01, 0.5, 1, 3.5, 9.99, 10, 25, 400};
	static const double x[] = {0, 0.25, 1, 2, 7, 100, 1000};

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		for (size_t k = 0; k < sizeof(x) / sizeof(x[0]); k++)
		{
			double		want = lgamma(b[i] + x[k]) - lgamma(b[i]);
			double		got = nb_lgamma_ratio(b[i], x[k]);

			/* the two lgamma calls each round by about 1e-16 of their size */
			double		tol = 4e-16 * (fabs(lgamma(b[i] + x[k])) + fabs(lgamma(b[i])) + 1);

			CHECK_OR_DONE(fabs(got - want) <= tol, "b %g x %g: %.17g, want %.17g", b[i], x[k],
						  got, want);
		}
	/* integer x: a sum of logs, exact to rounding even for large b */
	for (double bb = 10; bb < 1e9; bb *= 7.3)
	{
		double		want = log(bb) + log(bb + 1) + log(bb + 2);

		CHECK_OR_DONE(rel_diff(nb_lgamma_ratio(bb, 3), want) < 1e-14, "b %g x 3: %.17g, want %.17g",
					  bb, nb_lgamma_ratio(bb, 3), want);
	}
done:
	;
}

/*
 * log Gamma(beta + x) - log Gamma(beta + 1), the repeat term: against
 * lgammal (long double) on both sides of the product's bounds (whole x up
 * to NB_DCM_PRODUCT_MAX, beta below NB_DCM_PRODUCT_BETA) and of x 1.
 */
static void
test_dcm_repeat(void)
{
	static const double b[] = {1e-9, 0.003, 0.5, 1, 9.5, 10, 250, 9.9e7, 1e8, 3e9};
	static const double x[] = {1, 1.5, 2, 3, 7, 31, NB_DCM_PRODUCT_MAX, NB_DCM_PRODUCT_MAX + 1, 40.5, 1000};

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		for (size_t k = 0; k < sizeof(x) / sizeof(x[0]); k++)
		{
			long double bl = b[i];
			double		want = (double) (lgammal(bl + x[k]) - lgammal(bl + 1));
			double		got = nb_dcm_repeat(b[i], x[k]);

			/* lgammal rounds by about 1e-19 of each side's size */
			double		tol = 1e-14 * (fabs(want) + 1) + 1e-18 * (double) fabsl(lgammal(bl + x[k]));

			CHECK_OR_DONE(fabs(got - want) <= tol, "beta %g x %g: %.17g, want %.17g", b[i], x[k],
						  got, want);
		}
done:
	;
}

/*
 * alpha not given: a dcm bag's pseudo document count is
 * NB_DCM_DEFAULT_ALPHA, every other pseudo-count 1; given, alpha is both.
 * Under estimator map the default 1 leaves 0, which dcm refuses.
 */
static void
test_dcm_default_alpha(void)
{
	NbOptions	o;

	nb_options_init(&o);
	CHECK(nb_options_set_kind(&o, "dcm", 3) == NB_OPTION_OK, "kind");
	CHECK(nb_options_pseudo(&o).docs == NB_DCM_DEFAULT_ALPHA && nb_options_pseudo(&o).alpha == 1,
		  "default: docs %g alpha %g", nb_options_pseudo(&o).docs, nb_options_pseudo(&o).alpha);
	CHECK(nb_options_check_set(&o) == NB_OPTION_OK, "the default is valid");
	CHECK(nb_options_set_alpha(&o, 1) == NB_OPTION_OK && nb_options_pseudo(&o).docs == 1,
		  "given alpha 1: docs %g", nb_options_pseudo(&o).docs);
	nb_options_init(&o);
	CHECK(nb_options_set_kind(&o, "dcm", 3) == NB_OPTION_OK &&
		  nb_options_set_estimator(&o, "map", 3) == NB_OPTION_OK, "kind dcm, estimator map");
	CHECK(nb_options_check_set(&o) == NB_OPTION_DCM_NOT_SMOOTHED, "map without alpha: not smoothed");
	CHECK(nb_options_set_alpha(&o, 2.5) == NB_OPTION_OK && nb_options_pseudo(&o).docs == 1.5 &&
		  nb_options_check_set(&o) == NB_OPTION_OK, "map with alpha 2.5: docs %g",
		  nb_options_pseudo(&o).docs);
}

/* splitmix64 uniform in (0, 1) */
static double
uniform(uint64_t *s)
{
	return ((double) (nbt_rand(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double
normal(uint64_t *s)
{
	return sqrt(-2 * log(uniform(s))) * cos(2 * M_PI * uniform(s));
}

/*
 * The logarithm of a Gamma(a, 1) variate: Marsaglia and Tsang, with U^(1/a)
 * for a < 1 (in logarithms: for a small a the variate underflows).
 */
static double
log_gamma_variate(uint64_t *s, double a)
{
	double		d,
				c;

	if (a < 1)
		return log_gamma_variate(s, a + 1) + log(uniform(s)) / a;
	d = a - 1.0 / 3;
	c = 1 / sqrt(9 * d);
	for (;;)
	{
		double		z = normal(s);
		double		v = pow(1 + c * z, 3);

		if (v > 0 && log(uniform(s)) < 0.5 * z * z + d - d * v + d * log(v))
			return log(d * v);
	}
}

#define SYN_V 60
#define SYN_DOCS 20000
#define SYN_LEN 40

/*
 * A corpus drawn from a known DCM: theta ~ Dir(beta) per document, then
 * SYN_LEN tokens from theta (the Polya urn of eq. 3.79).  beta is small
 * (s = 1.5), where Elkan's EDCM is close to the DCM (its approximation
 * Gamma(x + beta) / Gamma(beta) ~ Gamma(x) beta is off by O(beta)), so the
 * fit must recover s and every beta within the sampling error: with 20000
 * documents, a few per cent for s and for the betas of tokens seen in a
 * few hundred documents or more, which every token here is.  Tolerances:
 * s within 10% (its sampling error is about 2%, the EDCM's bias a few per
 * cent here; ignoring burstiness, s = infinity, misses by far more); each
 * beta_w within 4 / sqrt(d_w) (4 standard deviations of the documents
 * with w, which beta_w is proportional to) plus 3 beta_w (the EDCM's bias,
 * first order in beta: about 2.3 beta_w measured here).
 */
static void
test_fit_recovers_dcm(void)
{
	uint64_t	seed = 12345;
	double		beta[SYN_V];
	double		s_true = 0;
	double		df[SYN_V] = {0};
	double		hist_len[1] = {SYN_LEN};
	double		hist_w[1] = {SYN_DOCS};
	double		D = 0;
	NbDcmFit	fit;

	for (int w = 0; w < SYN_V; w++)
	{
		beta[w] = 0.005 + 0.04 * (double) w / SYN_V;
		s_true += beta[w];
	}
	for (int d = 0; d < SYN_DOCS; d++)
	{
		double		theta[SYN_V];
		double		top = -INFINITY;
		double		sum = 0;
		int			count[SYN_V] = {0};

		/* normalized gamma variates are Dirichlet: scaled by the largest */
		for (int w = 0; w < SYN_V; w++)
			top = fmax(top, theta[w] = log_gamma_variate(&seed, beta[w]));
		for (int w = 0; w < SYN_V; w++)
			sum += theta[w] = exp(theta[w] - top);
		for (int t = 0; t < SYN_LEN; t++)
		{
			double		u = uniform(&seed) * sum;
			int			w = 0;

			while (w < SYN_V - 1 && u >= theta[w])
				u -= theta[w++];
			count[w]++;
		}
		for (int w = 0; w < SYN_V; w++)
			if (count[w] > 0)
				df[w] += 1;
	}
	for (int w = 0; w < SYN_V; w++)
		D += df[w];
	fit = nb_dcm_fit(D, hist_len, hist_w, 1);
	CHECK(fit.converged, "no convergence in %u iterations", fit.iterations);
	CHECK(rel_diff(fit.s, s_true) < 0.10, "s %.6g, generated with %.6g", fit.s, s_true);
	for (int w = 0; w < SYN_V; w++)
	{
		/* sampling error: 4 standard deviations of d_w; EDCM bias: first order in beta */
		double		tol = 4 / sqrt(df[w]) + 3 * beta[w];
		double		err = rel_diff(df[w] / fit.z, beta[w]);

		CHECK(err <= tol, "beta_%d %.4g, generated with %.4g (tolerance %.3g)", w, df[w] / fit.z,
			  beta[w], tol);
	}
	/* the fixed point holds: s = D / Z(s) */
	CHECK(rel_diff(fit.s, D / fit.z) < 1e-11, "s %.17g, D / Z %.17g", fit.s, D / fit.z);
}

/* Degenerate histograms: no lengths, no repeats (the multinomial limit), one token per row. */
static void
test_fit_limits(void)
{
	double		len[2] = {1, 3};
	double		w[2] = {2, 1};
	NbDcmFit	fit = nb_dcm_fit(0, len, w, 0);

	CHECK(fit.s == 0 && fit.z == 0, "no lengths: s %g z %g", fit.s, fit.z);
	/* every token distinct in its row: D = tokens = 2 * 1 + 1 * 3 */
	fit = nb_dcm_fit(5, len, w, 2);
	CHECK(fit.converged && fit.s >= NB_DCM_S_MAX * (1 - 1e-9) && isfinite(fit.z) && fit.z > 0,
		  "no repeats: s %g z %g", fit.s, fit.z);
	/* one distinct token per row: D = rows = 3 */
	fit = nb_dcm_fit(3, len, w, 2);
	CHECK(fit.converged && fit.s <= NB_DCM_S_MIN * (1 + 1e-9) && isfinite(fit.z) && fit.z > 0,
		  "one token per row: s %g z %g", fit.s, fit.z);
	/* in between: the fixed point */
	fit = nb_dcm_fit(4, len, w, 2);
	CHECK(fit.converged && rel_diff(fit.s, 4 / fit.z) < 1e-12, "s %.17g, D / Z %.17g", fit.s,
		  4 / fit.z);
}

/*
 * Posteriors of kind dcm against eq. 3.79 evaluated here: per class, s
 * and beta from nb_dcm_fit on the histogram and document frequencies of
 * the rows of dcm_toy (fixtures.h), beta0 = a / Z for an unseen token.
 */
static void
test_scorer_dcm(void)
{
	double		alpha = 0.5;
	DcmToy		t = dcm_toy(alpha);
	const double *ba = t.beta[0],
			   *bb = t.beta[1];
	double		sa = t.s[0],
				sb = t.s[1];
	/* the document: x twice, w once, an unknown token */
	double		x[4] = {1, 2, 0, 0};
	double		la,
				lb,
				pa;
	size_t		size;
	unsigned char *buf = serialize_rows(dcm_rows, NDCM, &size);
	NbView		v;
	char		why[200];
	NbIndex		ix;
	NbScorer	sc;
	NbOptions	o;
	NbDoc		doc;
	double		lp[2];
	NbTokenRef	refs[4] = {{"x", 1, 1}, {"w", 1, 1}, {"q", 1, 1}, {"x", 1, 1}};

	la = log(3.0 / 5) + lgamma(sa) - lgamma(sa + 3);
	lb = log(2.0 / 5) + lgamma(sb) - lgamma(sb + 3);
	for (int k = 0; k < 4; k++)
	{
		la += lgamma(ba[k] + x[k]) - lgamma(ba[k]);
		lb += lgamma(bb[k] + x[k]) - lgamma(bb[k]);
	}
	pa = 1 / (1 + exp(lb - la));

	CHECK_OR_DONE(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	nb_index_build(&ix, &v);
	nb_options_init(&o);
	CHECK(nb_options_set_kind(&o, "dcm", 3) == NB_OPTION_OK, "kind");
	CHECK(nb_options_set_alpha(&o, alpha) == NB_OPTION_OK, "alpha");
	nb_scorer_build(&sc, &ix, &o);
	CHECK(rel_diff(sc.dcm_s[0], sa) < 1e-13 && rel_diff(sc.dcm_s[1], sb) < 1e-13,
		  "s %.17g %.17g, want %.17g %.17g", sc.dcm_s[0], sc.dcm_s[1], sa, sb);
	nb_doc_init(&doc, &ix);
	/* repeats in one batch and across batches, through the scorer's rows */
	for (int batches = 1; batches <= 2; batches++)
	{
		nb_doc_begin(&doc);
		if (batches == 1)
			nb_scorer_add_tokens(&sc, &doc, 0, refs, 4);
		else
		{
			nb_scorer_add_tokens(&sc, &doc, 0, refs, 2);
			nb_scorer_add_tokens(&sc, &doc, 0, refs + 2, 2);
		}
		CHECK(nb_scorer_score(&sc, &doc, lp) == (pa >= 0.5 ? 0 : 1), "best class");
		CHECK(fabs(exp(lp[0]) - pa) < 1e-14 && fabs(exp(lp[1]) - (1 - pa)) < 1e-14,
			  "%d batches: p(a) %.17g, want %.17g", batches, exp(lp[0]), pa);
	}
	nb_doc_free(&doc);
	nb_scorer_free(&sc);
	nb_index_free(&ix);
done:
	free(buf);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("dcm: digamma at known points", test_digamma);
	run("dcm: log-gamma ratios, also for large arguments", test_lgamma_ratio);
	run("dcm: the repeat term log Gamma(beta + x) - log Gamma(beta + 1)", test_dcm_repeat);
	run("dcm: alpha not given is NB_DCM_DEFAULT_ALPHA for a dcm bag only", test_dcm_default_alpha);
	run("dcm: the EDCM fit recovers a known DCM from a corpus drawn from it", test_fit_recovers_dcm);
	run("dcm: fits at the limits (no lengths, no repeats, one token per row)", test_fit_limits);
	run("dcm: posteriors of kind dcm as eq. 3.79 gives them", test_scorer_dcm);
	return unit_done();
}
