/*
 * test_mutual_info.c — unit tests of mutual information (src/nb_mutual_info.c), by hand.
 *
 *   ./test_mutual_info       run every test
 *   ./test_mutual_info WORD  run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "nb_format.h"
#include "nb_mutual_info.h"
#include "unit.h"

/* ---------------------------------------------------------------- */
/* mutual information                                                */

/*
 * The reference for Gaussian features, independent of nb_mutual_info.c's
 * quadrature: I = H(X) - sum_c pi_c log(2 pi e s2_c) / 2 with H(X) by the
 * trapezoidal rule in long double (for an analytic integrand decaying
 * like a normal density it converges exponentially in the step), steps of
 * 1/16 of the smallest deviation from 40 deviations below the lowest mean
 * to 40 above the highest (steps of 1/64 give the same value to 5e-16 on
 * every case here, and long double costs much under emulation).
 */
static double
trapezoid_mi(const double *w, const double *mean, const double *var, int n)
{
	long double W = 0,
				lo = INFINITY,
				hi = -INFINITY,
				step = INFINITY,
				h = 0,
				cond = 0;

	for (int c = 0; c < n; c++)
	{
		long double sd = sqrtl(var[c]);

		W += w[c];
		lo = fminl(lo, mean[c] - 40 * sd);
		hi = fmaxl(hi, mean[c] + 40 * sd);
		step = fminl(step, sd / 16);
	}
	for (long double x = lo; x <= hi; x += step)
	{
		long double p = 0;

		for (int c = 0; c < n; c++)
			p += w[c] / W * expl(-(x - mean[c]) * (x - mean[c]) / (2 * var[c])) /
				sqrtl(2 * M_PI * var[c]);
		if (p > 0)
			h -= p * logl(p) * step;
	}
	for (int c = 0; c < n; c++)
		cond += w[c] / W * 0.5L * logl(2 * M_PI * M_E * var[c]);
	return (double) (h - cond);
}

/*
 * nb_mutual_info of a text-only model as one value per token (by item
 * index); false if the rows are not exactly one per token.
 */
static bool
item_mi(const NbView *v, double *mi)
{
	NbMiRow    *rows = malloc(sizeof(NbMiRow) * (nb_mutual_info_max_rows(v) + 1));
	uint64_t	n = nb_mutual_info(v, rows);
	bool		ok = n == v->n_tokens;

	for (uint64_t i = 0; i < n && ok; i++)
	{
		ok = !rows[i].whole_feature && rows[i].item < v->n_tokens;
		if (ok)
			mi[rows[i].item] = rows[i].mi;
	}
	free(rows);
	return ok;
}

static void
test_mutual_info(void)
{
	/*
	 * Murphy eq. 3.76, theta_jc = d_jc / D_c, pi = (1/3, 2/3):
	 *   a: theta = (0, 1),  theta_j = 2/3
	 *      I = 1/3 [1 log(1 / (1/3))] + 2/3 [1 log(1 / (2/3))] = log 3 - 2/3 log 2
	 *      (a predicts the class perfectly: I = H(class))
	 *   b: theta = (1, 1/2), theta_j = 2/3
	 *      I = 1/3 [log(3/2)] + 2/3 [1/2 log(3/4) + 1/2 log(3/2)] = 1/3 log(27/16)
	 *   c: same document frequencies as b;  d: mirror image of a.
	 */
	size_t		size;
	unsigned char *buf = serialize_rows(toy, NTOY, &size);
	NbView		v;
	char		why[200];
	double		mi[4];
	NbMiRow		rows[4];
	const double ia = log(3) - 2.0 / 3 * log(2);
	const double ib = log(27.0 / 16) / 3;

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(item_mi(&v, mi), "not one row per token");
	CHECK(nb_mutual_info(&v, rows) == 4, "rows");
	free(buf);
	CHECK_NEAR(mi[0], ia, 1e-12, "I(a)");
	CHECK_NEAR(mi[1], ib, 1e-12, "I(b)");
	CHECK_NEAR(mi[2], ib, 1e-12, "I(c)");
	CHECK_NEAR(mi[3], ia, 1e-12, "I(d)");
	/* ranked by mi; exact ties (a, d and b, c are mirror images) by token */
	CHECK((rows[0].item == 0 || rows[0].item == 3) && (rows[1].item == 0 || rows[1].item == 3) &&
		  (rows[2].item == 1 || rows[2].item == 2) && (rows[3].item == 1 || rows[3].item == 2),
		  "rank %u %u %u %u", rows[0].item, rows[1].item, rows[2].item, rows[3].item);
}

static void
test_mutual_info_weighted(void)
{
	/*
	 * Two classes of 2 documents each (weights), token t in one document of
	 * class p only: theta = (1/2, 0), pi = (1/2, 1/2), theta_j = 1/4.
	 *   I = 1/2 [1/2 log(2) + 1/2 log((1/2)/(3/4))] + 1/2 [log(1/(3/4))]
	 *     = 3/4 log(4/3)
	 * Token u in every document: I = 0.  Token w: theta = (1, 1/2)... see below.
	 */
	static const Row rows[] = {
		{"p", 1, {"t", "u", "w"}},
		{"p", 1, {"u", "w"}},
		{"q", 2, {"u", "w"}},
	};
	/* w: p has it in both docs (theta 1), q in its one doc of weight 2 (theta 1): I = 0 */
	size_t		size;
	unsigned char *buf = serialize_rows(rows, 3, &size);
	NbView		v;
	char		why[200];
	double		mi[3];

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(item_mi(&v, mi), "not one row per token");
	free(buf);
	CHECK_NEAR(mi[0], 0.75 * log(4.0 / 3), 1e-12, "I(t)");
	CHECK(mi[1] == 0, "I(u) = %g", mi[1]);
	CHECK(mi[2] == 0, "I(w) = %g", mi[2]);
}

/*
 * Weights are any positive finite numbers.  With 1e-300 and 1e10, token x
 * (only in class a) has theta_x = d_x / D = 1e-310 (subnormal) while
 * theta_xa = 1: the exact information is pi_a log(1 / theta_x) + ... ~ 7e-308,
 * tiny and finite, and never more than H(class) <= log 2.
 */
static void
test_mutual_info_extreme_weights(void)
{
	static const Row rows[] = {
		{"a", 1e-300, {"x"}},
		{"b", 1e10, {"y"}},
	};
	size_t		size;
	unsigned char *buf = serialize_rows(rows, 2, &size);
	NbView		v;
	char		why[200];
	double		mi[2];

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(item_mi(&v, mi), "not one row per token");
	free(buf);
	CHECK(isfinite(mi[0]) && mi[0] >= 0 && mi[0] <= log(2), "I(x) = %g (token only in the 1e-300 class)", mi[0]);
	CHECK(isfinite(mi[1]) && mi[1] >= 0 && mi[1] <= log(2), "I(y) = %g", mi[1]);
}

/*
 * Ranking: mi descending, exact ties in model order (feature, then item).
 * Six tokens in two classes of 2 documents each (theta per class):
 *   a (1, 0) and e (0, 1): perfect, log 2 each (an exact tie)
 *   d (1/2, 0): 3/4 log(4/3) (see test_mutual_info_weighted)
 *   b, c, f (1/2, 1/2): 0 (an exact tie)
 * expected order: a, e, d, then b, c, f.
 */
static void
test_mutual_info_rank_ties(void)
{
	static const Row rows[] = {
		{"p", 1, {"a", "b", "c", "d", "f"}},
		{"p", 1, {"a"}},
		{"q", 1, {"e", "b", "c", "f"}},
		{"q", 1, {"e"}},
	};
	static const char *const want[] = {"a", "e", "d", "b", "c", "f"};
	size_t		size;
	unsigned char *buf = serialize_rows(rows, 4, &size);
	NbView		v;
	char		why[200];
	NbMiRow		r[6];

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(nb_mutual_info(&v, r) == 6, "rows");
	for (int i = 0; i < 6; i++)
		CHECK(r[i].item == view_find_token(&v, want[i]), "position %d: item %u, expected %s", i,
			  r[i].item, want[i]);
	CHECK_NEAR(r[0].mi, log(2), 1e-12, "I(a)");
	CHECK_NEAR(r[2].mi, 0.75 * log(4.0 / 3), 1e-12, "I(d)");
	CHECK(r[0].mi == r[1].mi, "I(a) %.17g != I(e) %.17g", r[0].mi, r[1].mi);
	CHECK(r[3].mi == 0 && r[4].mi == 0 && r[5].mi == 0, "zero information");
	free(buf);
}

/* ---------------------------------------------------------------- */
/* mutual information of categorical and boolean features            */

static void
test_mutual_info_mixed(void)
{
	/*
	 * The scoring model, classes a and b (rows 0..4):
	 *   color: red (a 3, b 1), blue (a 0, b 1); N = 5, columns 3, 2; rows 4, 1
	 *     I = 3/5 log(3*5 / (4*3)) + 1/5 log(1*5 / (4*2)) + 1/5 log(1*5 / (1*2))
	 *   flag (rows with it: a 3, b 1): true (a 2, b 0), false (a 1, b 1)
	 *     N = 4, columns 3, 1; rows 2, 2:
	 *     I = 2/4 log(2*4 / (2*3)) + 1/4 log(1*4 / (2*3)) + 1/4 log(1*4 / (2*1))
	 *   x: Gaussian, NaN and last.
	 */
	const double icolor = 0.6 * log(15.0 / 12) + 0.2 * log(5.0 / 8) + 0.2 * log(5.0 / 2);
	const double iflag = 0.5 * log(8.0 / 6) + 0.25 * log(4.0 / 6) + 0.25 * log(2.0);
	size_t		size;
	unsigned char *buf = serialize_mix(score_rows_mix, 5, &size);
	NbView		v;
	char		why[200];
	NbMiRow		rows[8];
	uint64_t	n;

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(nb_mutual_info_max_rows(&v) == 2 + 3, "max rows");
	n = nb_mutual_info(&v, rows);
	free(buf);
	/* features in byte order: color 0, flag 1, x 2; ranked x, color, flag */
	CHECK(n == 3, "%llu rows", (unsigned long long) n);
	CHECK(icolor > iflag, "hand values out of order");
	CHECK(rows[1].feature == 0 && rows[1].whole_feature && rows[1].item == 0, "row 1: feature %u", rows[1].feature);
	CHECK_NEAR(rows[1].mi, icolor, 1e-12, "I(color)");
	CHECK(rows[2].feature == 1 && rows[2].whole_feature && rows[2].item == 2, "row 2: feature %u item %u",
		  rows[2].feature, rows[2].item);
	CHECK_NEAR(rows[2].mi, iflag, 1e-12, "I(flag)");
	/*
	 * x: a (rows 1, 3): mean 2, variance 1; b (10, 14): mean 12, variance 4;
	 * pi = (1/2, 1/2); floor 1e-9 * 27.5 (y is constant).
	 */
	{
		const double w[] = {2, 2};
		const double mean[] = {2, 12};
		const double var[] = {1 + 27.5e-9, 4 + 27.5e-9};

		/* x ranks first */
		CHECK(rows[0].feature == 2 && rows[0].whole_feature, "row 0: feature %u", rows[0].feature);
		CHECK_NEAR(rows[0].mi, trapezoid_mi(w, mean, var, 2), 1e-9 * rows[0].mi, "I(x)");
	}
}

/* A named bag: Murphy 3.76 with D_c the rows of the class that have the bag. */
static void
test_mutual_info_named_bag(void)
{
	/*
	 * The mixed model: tags present a 3 (weights 1, 2), b 1; D = 4, pi = (3/4, 1/4).
	 *   t: d = (1, 1): theta (1/3, 1), theta_t = 1/2
	 *      I = 3/4 [1/3 log(2/3) + 2/3 log(4/3)] + 1/4 [log 2]
	 *   u: d = (1, 0): theta (1/3, 0), theta_u = 1/4
	 *      I = 3/4 [1/3 log(4/3) + 2/3 log((2/3)/(3/4))] + 1/4 [log(4/3)]
	 */
	const double it = 0.75 * (log(2.0 / 3) / 3 + 2.0 / 3 * log(4.0 / 3)) + 0.25 * log(2.0);
	const double iu = 0.75 * (log(4.0 / 3) / 3 + 2.0 / 3 * log(8.0 / 9)) + 0.25 * log(4.0 / 3);
	size_t		size;
	unsigned char *buf = serialize_mix(mix, NMIX, &size);
	NbView		v;
	char		why[200];
	NbMiRow		rows[8];
	uint64_t	n;
	bool		seen_t = false,
				seen_u = false;

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	n = nb_mutual_info(&v, rows);
	free(buf);
	/* color, flag, t, u, x */
	CHECK(n == 5, "%llu rows", (unsigned long long) n);
	for (uint64_t i = 0; i < n; i++)
		if (rows[i].feature == 2)
		{
			CHECK(!rows[i].whole_feature, "bag row as a whole feature");
			CHECK_NEAR(rows[i].mi, rows[i].item == 2 ? it : iu, 1e-12, rows[i].item == 2 ? "I(t)" : "I(u)");
			seen_t |= rows[i].item == 2;
			seen_u |= rows[i].item == 3;
		}
	CHECK(seen_t && seen_u, "bag items missing");
	/* x: a W 3, mean 3, variance 2; b W 2, mean 4, variance 4; floor 1e-9 * 14.75 / 4 */
	for (uint64_t i = 0; i < n; i++)
		if (rows[i].feature == 3)
		{
			const double w[] = {3, 2};
			const double mean[] = {3, 4};
			const double var[] = {2 + 14.75e-9 / 4, 4 + 14.75e-9 / 4};

			CHECK_NEAR(rows[i].mi, trapezoid_mi(w, mean, var, 2), 1e-9 * rows[i].mi, "I(x)");
		}
	for (uint64_t i = 1; i < n; i++)
		CHECK(rows[i - 1].mi >= rows[i].mi, "rows %llu and %llu out of order", (unsigned long long) i - 1,
			  (unsigned long long) i);
}

/* ---------------------------------------------------------------- */
/* Gaussian features                                                 */

/* A model of one Gaussian feature "x": value i of class label[i], weight w[i]. */
static unsigned char *
gauss_model(const char *const *label, const double *x, const double *w, int n, size_t *size)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;

	for (int i = 0; i < n; i++)
	{
		nb_trainer_begin_doc(t, label[i], (uint32_t) strlen(label[i]), w == NULL ? 1 : w[i]);
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "x", NB_FEATURE_GAUSSIAN), x[i]);
	}
	buf = serialize(t, size);
	nb_trainer_destroy(t);
	return buf;
}

/* nb_mutual_info of a model with the one Gaussian feature; NAN if that fails. */
static double
gauss_mi(const char *const *label, const double *x, const double *w, int n)
{
	size_t		size;
	unsigned char *buf = gauss_model(label, x, w, n, &size);
	NbView		v;
	char		why[200];
	NbMiRow		row[2];
	double		mi = NAN;

	if (open_view(&v, buf, size, why, sizeof(why)) && nb_mutual_info(&v, row) == 1)
		mi = row[0].mi;
	free(buf);
	return mi;
}

/* Population mean and variance of class `want` (plus the floor), weight in *w. */
static void
class_moments(const char *const *label, const double *x, int n, const char *want, double floor,
			  double *w, double *mean, double *var)
{
	double		s = 0,
				ss = 0;

	*w = 0;
	for (int i = 0; i < n; i++)
		if (strcmp(label[i], want) == 0)
		{
			*w += 1;
			s += x[i];
		}
	*mean = s / *w;
	for (int i = 0; i < n; i++)
		if (strcmp(label[i], want) == 0)
			ss += (x[i] - *mean) * (x[i] - *mean);
	*var = ss / *w + floor;
}

/* 1e-9 times the variance of all the values */
static double
all_floor(const double *x, int n)
{
	double		s = 0,
				ss = 0;

	for (int i = 0; i < n; i++)
		s += x[i];
	for (int i = 0; i < n; i++)
		ss += (x[i] - s / n) * (x[i] - s / n);
	return 1e-9 * ss / n;
}

static void
test_mutual_info_gaussian_cases(void)
{
	static const char *const two[] = {"a", "a", "a", "b", "b", "b", "b"};
	static const char *const one[] = {"a", "a", "a"};
	/* overlapping; well separated; very different variances */
	static const double overlap[] = {0.1, 1.3, 2.2, 1.0, 2.5, 3.1, 1.9};
	static const double apart[] = {0.1, 1.3, 2.2, 101.0, 102.5, 103.1, 101.9};
	static const double spread[] = {0.9, 1.0, 1.1, -30, 20, 45, -10};
	const double *sets[] = {overlap, apart, spread};
	const char *names[] = {"overlapping", "well separated", "very different variances"};

	for (int k = 0; k < 3; k++)
	{
		double		floor = all_floor(sets[k], 7);
		double		w[2],
					mean[2],
					var[2];
		double		want,
					got = gauss_mi(two, sets[k], NULL, 7);

		class_moments(two, sets[k], 7, "a", floor, &w[0], &mean[0], &var[0]);
		class_moments(two, sets[k], 7, "b", floor, &w[1], &mean[1], &var[1]);
		want = trapezoid_mi(w, mean, var, 2);
		CHECK(fabs(got - want) <= 1e-9 * want, "%s: I = %.17g, trapezoid %.17g", names[k], got, want);
		/* never more than H(class) */
		CHECK(got <= -(3.0 / 7 * log(3.0 / 7) + 4.0 / 7 * log(4.0 / 7)) + 1e-12, "%s: I > H", names[k]);
	}
	/* one class: no information */
	CHECK(gauss_mi(one, overlap, NULL, 3) == 0, "one class");
}

/*
 * Degenerate variances: constant classes with different values have only
 * the floor (1e-9 of the overall variance, 1e-4.5 of the gap) and are
 * separated: I = H(class).  A feature constant everywhere has no floor (the
 * scorer then uses variance 1 in every class, with equal means): I = 0.
 * Shifting every value by 1e12 (beyond the resolution of x at the floor's
 * scale, so only the per-class standardised integral gets it right) or
 * scaling them changes nothing.
 */
static void
test_mutual_info_gaussian_degenerate(void)
{
	static const char *const two[] = {"a", "a", "a", "b", "b", "b", "b"};
	const double h = -(3.0 / 7 * log(3.0 / 7) + 4.0 / 7 * log(4.0 / 7));
	double		consts[7] = {1, 1, 1, 2, 2, 2, 2};
	double		same[7] = {5, 5, 5, 5, 5, 5, 5};
	double		base[7] = {0.1, 1.3, 2.2, 1.0, 2.5, 3.1, 1.9};
	double		shifted[7],
				scaled[7],
				tiny[7];
	double		got,
				ref = gauss_mi(two, base, NULL, 7);

	got = gauss_mi(two, consts, NULL, 7);
	CHECK(fabs(got - h) <= 1e-9 * h, "constant classes: I = %.17g, H = %.17g", got, h);
	got = gauss_mi(two, same, NULL, 7);
	CHECK(got == 0, "constant everywhere: I = %.17g", got);
	for (int i = 0; i < 7; i++)
	{
		shifted[i] = base[i] + 1e12;
		scaled[i] = base[i] * 1e150;
		tiny[i] = base[i] * 1e-150;
		consts[i] += 1e12;
	}
	got = gauss_mi(two, consts, NULL, 7);
	CHECK(fabs(got - h) <= 1e-9 * h, "constant classes at 1e12: I = %.17g, H = %.17g", got, h);
	/*
	 * The shifted values round, so their moments differ from the unshifted
	 * ones by about 1e-4: the reference is the model's own moments, means
	 * shifted back (exactly: they are within a factor 2 of 1e12).
	 */
	{
		size_t		size;
		unsigned char *buf = gauss_model(two, shifted, NULL, 7, &size);
		NbView		v;
		char		why[200];
		NbMiRow		row[1];
		double		w[2],
					mean[2],
					var[2];

		CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
		CHECK(nb_mutual_info(&v, row) == 1, "rows");
		for (uint32_t c = 0; c < 2; c++)
		{
			w[c] = nb_view_present(&v, 0, c);
			mean[c] = nb_view_a(&v, 0, c) - 1e12;
			var[c] = nb_view_b(&v, 0, c) / w[c] +
				1e-9 * nb_read_f64(v.feature_m2, 0) / nb_read_f64(v.feature_rows, 0);
		}
		free(buf);
		got = trapezoid_mi(w, mean, var, 2);
		CHECK(fabs(row[0].mi - got) <= 1e-9 * got, "shifted by 1e12: %.17g, trapezoid %.17g", row[0].mi, got);
	}
	got = gauss_mi(two, scaled, NULL, 7);
	CHECK(fabs(got - ref) <= 1e-12 * ref, "scaled by 1e150: %.17g, unscaled %.17g", got, ref);
	got = gauss_mi(two, tiny, NULL, 7);
	CHECK(fabs(got - ref) <= 1e-12 * ref, "scaled by 1e-150: %.17g, unscaled %.17g", got, ref);
}

/*
 * Many classes, each far from most others (which the quadrature of a class
 * leaves out): 30 classes of values m - 1, m, m + 1 at m = 0, 2, ..., 58
 * against the trapezoidal rule, and 40 constant classes 10 apart, I = log 40.
 */
static void
test_mutual_info_gaussian_many(void)
{
	enum {NC = 30, NK = 40};
	const char *label[3 * NC];
	char		names[NK][16];
	double		x[3 * NC],
				w[NC],
				mean[NC],
				var[NC],
				floor = 0,
				s = 0;
	const char *klabel[NK];
	double		kx[NK];
	double		got;

	for (int c = 0; c < NC; c++)
	{
		snprintf(names[c], sizeof(names[c]), "c%02d", c);
		for (int i = 0; i < 3; i++)
		{
			label[3 * c + i] = names[c];
			x[3 * c + i] = 2.0 * c + i - 1;
			s += x[3 * c + i];
		}
	}
	for (int i = 0; i < 3 * NC; i++)
		floor += (x[i] - s / (3 * NC)) * (x[i] - s / (3 * NC));
	floor = 1e-9 * floor / (3 * NC);
	for (int c = 0; c < NC; c++)
	{
		w[c] = 3;
		mean[c] = 2.0 * c;
		var[c] = 2.0 / 3 + floor;
	}
	got = gauss_mi(label, x, NULL, 3 * NC);
	CHECK_NEAR(got, trapezoid_mi(w, mean, var, NC), 1e-9 * got, "I of 30 classes");
	for (int c = 0; c < NK; c++)
	{
		snprintf(names[c], sizeof(names[c]), "k%02d", c);
		klabel[c] = names[c];
		kx[c] = 10.0 * c;
	}
	got = gauss_mi(klabel, kx, NULL, NK);
	CHECK_NEAR(got, log(NK), 1e-9 * log(NK), "I of 40 constant classes");
}

/* Extreme values and weights: finite, between 0 and H(class). */
static void
test_mutual_info_gaussian_extreme(void)
{
	static const char *const two[] = {"a", "a", "b", "b"};
	static const double huge[] = {-1e150, 1e150, 1e-300, 0};
	static const double wild[] = {1e-300, 1e300, 1, 1};
	static const double x[] = {1, 2, 3, 4};
	double		got = gauss_mi(two, huge, NULL, 4);

	CHECK(isfinite(got) && got >= 0 && got <= log(2) + 1e-12, "huge values: I = %g", got);
	got = gauss_mi(two, x, wild, 4);
	CHECK(isfinite(got) && got >= 0 && got <= log(2) + 1e-12, "wild weights: I = %g", got);
}

/* ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("mutual info: toy model by hand (Murphy eq. 3.76)", test_mutual_info);
	run("mutual info: weighted example by hand, zero information", test_mutual_info_weighted);
	run("mutual info: finite for extreme weights (1e-300 and 1e10)", test_mutual_info_extreme_weights);
	run("mutual info: rank descending, ties by token index", test_mutual_info_rank_ties);
	run("mutual info v2: categorical and boolean plug-in by hand, Gaussian by the trapezoidal rule",
		test_mutual_info_mixed);
	run("mutual info v2: named bag (D_c = rows with the bag) by hand", test_mutual_info_named_bag);
	run("mutual info Gaussian: overlapping, separated, unequal variances vs the trapezoidal rule",
		test_mutual_info_gaussian_cases);
	run("mutual info Gaussian: constant classes, constant feature, shifted and scaled values",
		test_mutual_info_gaussian_degenerate);
	run("mutual info Gaussian: many classes far apart vs the trapezoidal rule and log C",
		test_mutual_info_gaussian_many);
	run("mutual info Gaussian: finite for extreme values and weights", test_mutual_info_gaussian_extreme);
	return unit_done();
}
