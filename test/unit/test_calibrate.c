/*
 * test_calibrate.c — unit tests of calibrated probabilities (src/nb_calibrate.c).
 *
 *   ./test_calibrate        run every test
 *   ./test_calibrate WORD   run the tests whose name contains WORD
 *
 * The maps against their formulas, the fits against their optimality
 * conditions (a zero derivative, computed here apart) and a value computed
 * with scipy, and the fits' refusals.  Output: see unit.h.
 */
#include <math.h>
#include <string.h>

#include "malloc_alloc.h"
#include "nb_alloc.h"
#include "nb_calibrate.h"
#include "nb_calibrate_fit.h"
#include "nb_options.h"
#include "unit.h"

/* A failed condition is the detail of the failure. */
#define EXPECT(cond) CHECK(cond, "%s", #cond)

static void
test_temperature_apply(void)
{
	double		l[3] = {log(0.7), log(0.2), log(0.1)};
	double		s[3];
	NbCalibration cal;
	double		z = pow(0.7, 0.5) + pow(0.2, 0.5) + pow(0.1, 0.5);

	nb_calibration_init(&cal);
	EXPECT(nb_calibration_is_identity(&cal));
	cal.temperature = 2;
	EXPECT(!nb_calibration_is_identity(&cal));
	EXPECT(nb_calibration_apply(&cal, l, 3, 0, s) == 0);
	CHECK_NEAR(exp(l[0]), pow(0.7, 0.5) / z, 1e-15, "p0");
	CHECK_NEAR(exp(l[1]), pow(0.2, 0.5) / z, 1e-15, "p1");
	CHECK_NEAR(exp(l[2]), pow(0.1, 0.5) / z, 1e-15, "p2");
}

static void
test_temperature_limits(void)
{
	double		l[3] = {-0.3, -1.5, -INFINITY};
	double		s[3];
	NbCalibration cal;
	NbOptions	o;

	nb_calibration_init(&cal);
	cal.temperature = 1e-300;
	EXPECT(nb_calibration_apply(&cal, l, 3, 0, s) == 0);
	/* the other class's probability underflows to 0; its logarithm stays finite */
	EXPECT(l[0] == 0 && exp(l[1]) == 0 && l[2] == -INFINITY);
	l[0] = -0.3;
	l[1] = -1.5;
	cal.temperature = 1e300;
	EXPECT(nb_calibration_apply(&cal, l, 3, 0, s) == 0);
	/* a class of probability 0 keeps it; the others tend to uniform */
	CHECK_NEAR(l[0], log(0.5), 1e-15, "l0");
	CHECK_NEAR(l[1], log(0.5), 1e-15, "l1");
	EXPECT(l[2] == -INFINITY);
	nb_options_init(&o);
	EXPECT(nb_options_set_temperature(&o, 0) == NB_OPTION_TEMPERATURE_OUT_OF_RANGE &&
		   nb_options_set_temperature(&o, -1) == NB_OPTION_TEMPERATURE_OUT_OF_RANGE &&
		   nb_options_set_temperature(&o, INFINITY) == NB_OPTION_TEMPERATURE_OUT_OF_RANGE &&
		   nb_options_set_temperature(&o, NAN) == NB_OPTION_TEMPERATURE_OUT_OF_RANGE &&
		   nb_options_set_temperature(&o, 1e-300) == NB_OPTION_OK && o.calibration.temperature == 1e-300);
}

static void
test_sigmoid_apply(void)
{
	double		ab2[4] = {0, 0, -4, 1.5};
	double		ab3[6] = {-3, 2, -5, 1, -2, 0.5};
	double		l[3] = {log(0.3), log(0.7), -INFINITY};
	double		s[3];
	NbCalibration cal;
	double		q[3];
	double		sum = 0;

	nb_calibration_init(&cal);
	cal.sigmoid = ab2;
	cal.sigmoid_class = 1;
	EXPECT(nb_calibration_apply(&cal, l, 2, 1, s) == 1);
	CHECK_NEAR(exp(l[1]), 1 / (1 + exp(-4 * 0.7 + 1.5)), 1e-15, "q");
	CHECK_NEAR(exp(l[0]), 1 - 1 / (1 + exp(-4 * 0.7 + 1.5)), 1e-15, "1 - q");

	l[0] = log(0.3);
	l[1] = log(0.7);
	l[2] = -INFINITY;
	cal.sigmoid = ab3;
	cal.sigmoid_class = NB_SIGMOID_EVERY_CLASS;
	q[0] = 1 / (1 + exp(-3 * 0.3 + 2));
	q[1] = 1 / (1 + exp(-5 * 0.7 + 1));
	q[2] = 1 / (1 + exp(0.5));
	for (int c = 0; c < 3; c++)
		sum += q[c];
	(void) nb_calibration_apply(&cal, l, 3, 1, s);
	for (int c = 0; c < 3; c++)
		CHECK_NEAR(exp(l[c]), q[c] / sum, 1e-15, "normalized q");
}

/* The derivative of the rows' log loss in 1 / T at T, computed apart. */
static double
temperature_derivative(const double *lp, const uint32_t *y, size_t n, uint32_t C, double t)
{
	double		d = 0;

	for (size_t i = 0; i < n; i++)
	{
		double		z = 0;
		double		m = 0;

		for (uint32_t c = 0; c < C; c++)
		{
			z += exp(lp[i * C + c] / t);
			m += exp(lp[i * C + c] / t) * lp[i * C + c];
		}
		d += m / z - lp[i * C + y[i]];
	}
	return d;
}

static void
test_temperature_fit(void)
{
	/* one row right, one wrong, each the other's mirror: T = 3.1024149022 (scipy's brentq) */
	double		lp[4] = {-0.5, -1.5, -0.25, -1};
	uint32_t	y[2] = {0, 1};
	NbCalibrationRows rows = {2, 2, y, lp};
	double		t;
	uint32_t	k;
	uint64_t	seed = 7;
	enum
	{
		N = 500, C = 4
	};
	double		big[N * C];
	double		reversed[N * C];
	double		source[N * C];
	double		strided[N * (C + 1)];
	const double *row[N];
	uint32_t	by[N];
	uint32_t	ry[N];
	double		t2;

	EXPECT(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_OK);
	CHECK_NEAR(t, 3.1024149022, 1e-10, "T");

	/* overconfident random rows: the derivative is 0 at the fit, and the rows' order changes no bit */
	for (size_t i = 0; i < N; i++)
	{
		double		m = -INFINITY;
		double		z = 0;

		for (uint32_t c = 0; c < C; c++)
		{
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			big[i * C + c] = 20.0 * (double) (seed % 1000) / 1000;
			if (big[i * C + c] > m)
			{
				m = big[i * C + c];
				by[i] = c;
			}
		}
		for (uint32_t c = 0; c < C; c++)
			z += exp(big[i * C + c] - m);
		for (uint32_t c = 0; c < C; c++)
			big[i * C + c] -= m + log(z);
		/* the actual class: the most probable 6 times in 10, else any */
		if ((seed >> 20) % 10 >= 6)
			by[i] = (uint32_t) (seed >> 40) % C;
	}
	for (size_t i = 0; i < N; i++)
	{
		memcpy(&reversed[i * C], &big[(N - 1 - i) * C], sizeof(double) * C);
		ry[i] = by[N - 1 - i];
	}
	rows = (NbCalibrationRows) {N, C, by, big};
	EXPECT(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_OK);
	EXPECT(t > 1);
	CHECK(fabs(temperature_derivative(big, by, N, C, t)) < 1e-9 * N, "derivative %g at T = %g",
		  temperature_derivative(big, by, N, C, t), t);
	/* in the canonical order, rows that came in any order give the same bits */
	memcpy(source, big, sizeof(big));
	for (size_t i = 0; i < N; i++)
		row[i] = &source[i * C];
	nb_calibration_order_rows(N, C, row, by, big);
	/* (rows read by pointer, wherever they are: each row's C log posteriors, then one more double) */
	for (size_t i = 0; i < N; i++)
	{
		memcpy(&strided[i * (C + 1)], &reversed[i * C], sizeof(double) * C);
		row[i] = &strided[i * (C + 1)];
	}
	nb_calibration_order_rows(N, C, row, ry, reversed);
	EXPECT(memcmp(big, reversed, sizeof(big)) == 0 && memcmp(by, ry, sizeof(by)) == 0);
	rows = (NbCalibrationRows) {N, C, by, big};
	EXPECT(nb_calibration_fit_temperature(&rows, &t2, &k) == NB_CALIBRATION_OK);
	CHECK_NEAR(t2, t, 1e-12 * t, "T of the ordered rows");
	rows = (NbCalibrationRows) {N, C, ry, reversed};
	EXPECT(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_OK);
	EXPECT(t2 == t);
}

static void
test_temperature_refusals(void)
{
	double		right[4] = {-0.1, -2.4, -3, -0.05};
	uint32_t	y[2] = {0, 1};
	double		flat[4] = {log(0.5), log(0.5), log(0.5), log(0.5)};
	double		zero[4] = {-INFINITY, 0, -INFINITY, 0};
	NbCalibrationRows rows = {2, 2, y, right};
	double		t;
	uint32_t	k;

	EXPECT(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_SEPARATED);
	rows.log_post = flat;
	EXPECT(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_NO_BETTER);
	/* the first row's actual class has probability 0; the second's 1 */
	y[1] = 1;
	rows.log_post = zero;
	y[0] = 0;
	EXPECT(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_NO_BETTER);
	y[1] = 0;
	EXPECT(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_TOO_FEW_ROWS);
	rows.n = 0;
	EXPECT(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_TOO_FEW_ROWS);
}

static void
test_sigmoid_fit(void)
{
	enum
	{
		N = 300
	};
	double		lp[N * 2];
	uint32_t	y[N];
	uint64_t	seed = 11;
	NbCalibrationRows rows = {N, 2, y, lp};
	double		ab[4];
	double		q[N * 2];
	uint32_t	k;
	double		n1 = 0;
	double		ga = 0;
	double		gb = 0;
	double		q_error = 0;

	for (size_t i = 0; i < N; i++)
	{
		double		p;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		p = (double) (seed % 10000) / 10000 * 0.98 + 0.01;
		lp[2 * i] = log1p(-p);
		lp[2 * i + 1] = log(p);
		/* the class follows p, less sharply than p says */
		y[i] = (double) ((seed >> 20) % 10000) / 10000 < 0.25 + 0.5 * p;
		n1 += y[i];
	}
	nb_calibration_probabilities(&rows, q);
	for (size_t i = 0; i < N; i++)
		q_error = fmax(q_error, fabs(q[N + i] - exp(lp[2 * i + 1])));
	CHECK(q_error == 0, "probability off by %g", q_error);
	EXPECT(nb_calibration_fit_sigmoids(&rows, 1, ab, q, &k) == NB_CALIBRATION_OK);
	/* the gradient of Platt's cross-entropy is 0: sum (t - P) [p, 1]; q the sigmoid of each row */
	for (size_t i = 0; i < N; i++)
	{
		double		p = exp(lp[2 * i + 1]);
		double		t = y[i] ? (n1 + 1) / (n1 + 2) : 1 / (N - n1 + 2);
		double		P = 1 / (1 + exp(ab[2] * p + ab[3]));

		ga += (t - P) * p;
		gb += t - P;
		q_error = fmax(q_error, fabs(q[N + i] - P) / P);
	}
	CHECK(fabs(ga) < 1e-9 && fabs(gb) < 1e-9, "gradient (%g, %g) at (%g, %g)", ga, gb, ab[2], ab[3]);
	CHECK(q_error < 1e-14, "q off by %g", q_error);
	/* flatter than the posteriors: a > -1 / 0.25, the slope a perfect calibration would have */
	EXPECT(ab[2] < 0 && ab[2] > -4);
	rows.n = 0;
	EXPECT(nb_calibration_fit_sigmoids(&rows, 1, ab, q, &k) == NB_CALIBRATION_TOO_FEW_ROWS);
}

/*
 * Three classes, one of 1% of the rows: every class's sigmoid has a zero
 * gradient.  The small class has too few rows among every 16th for that
 * sample, and its own (its rows, the 1% of the others it confuses, every
 * 16th of the rest weighted) starts it: the fit of all must still reach
 * the minimum of all.
 */
static void
test_sigmoid_fit_small_class(void)
{
	enum
	{
		N = 4000,
		C = 3
	};
	double	   *lp = nb_alloc(sizeof(double) * N * C);
	uint32_t   *y = nb_alloc(sizeof(uint32_t) * N);
	double	   *q = nb_alloc(sizeof(double) * N * C);
	NbCalibrationRows rows = {N, C, y, lp};
	double		ab[2 * C];
	double		n1[C] = {0, 0, 0};
	uint64_t	seed = 5;
	uint32_t	k;

	for (size_t i = 0; i < N; i++)
	{
		double		u;
		double		v;
		double		p2;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		u = (double) (seed % 10000) / 10000;
		v = (double) ((seed >> 20) % 10000) / 10000;
		y[i] = i % 100 == 0 ? 2 : v < 0.6 ? 0 : 1;
		/* the small class's probability: high on its rows, 1e-5 or below elsewhere but 1% confused */
		p2 = y[i] == 2 ? 0.05 + 0.55 * u : i % 100 == 50 ? 0.01 + 0.3 * u : 1e-5 * u + 1e-9;
		lp[C * i + 2] = log(p2);
		/* classes 0 and 1 share the rest, following the class less sharply than p says */
		lp[C * i] = log((1 - p2) * (y[i] == 0 ? 0.3 + 0.6 * u : 0.1 + 0.6 * u));
		lp[C * i + 1] = log1p(-p2 - exp(lp[C * i]));
		n1[y[i]]++;
	}
	nb_calibration_probabilities(&rows, q);
	EXPECT(nb_calibration_fit_sigmoids(&rows, 0, ab, q, &k) == NB_CALIBRATION_OK);
	for (uint32_t c = 0; c < C; c++)
	{
		double		ga = 0;
		double		gb = 0;

		for (size_t i = 0; i < N; i++)
		{
			double		p = exp(lp[C * i + c]);
			double		t = y[i] == c ? (n1[c] + 1) / (n1[c] + 2) : 1 / (N - n1[c] + 2);
			double		P = 1 / (1 + exp(ab[2 * c] * p + ab[2 * c + 1]));

			ga += (t - P) * p;
			gb += t - P;
		}
		CHECK(fabs(ga) < 1e-9 && fabs(gb) < 1e-9, "class %u: gradient (%g, %g) at (%g, %g)", c, ga, gb,
			  ab[2 * c], ab[2 * c + 1]);
	}
	/* the small class's probability says more than its rows show: a flatter, falling sigmoid */
	EXPECT(ab[4] < 0);
	nb_free(lp);
	nb_free(y);
	nb_free(q);
}

/* A fit checks for a cancel as it goes: nb_interrupt is called. */
static void
test_fit_interrupts(void)
{
	enum
	{
		N = 20000
	};
	double	   *lp = nb_alloc(sizeof(double) * N * 2);
	uint32_t   *y = nb_alloc(sizeof(uint32_t) * N);
	NbCalibrationRows rows = {N, 2, y, lp};
	double	   *q = nb_alloc(sizeof(double) * N * 2);
	double		t;
	double		ab[4];
	uint32_t	k;
	long		before;

	for (size_t i = 0; i < N; i++)
	{
		lp[2 * i] = i % 3 ? -0.01 : -5;
		lp[2 * i + 1] = log1p(-exp(lp[2 * i]));
		y[i] = i % 4 == 0;
	}
	before = nb_test_interrupts();
	CHECK_OR_DONE(nb_calibration_fit_temperature(&rows, &t, &k) == NB_CALIBRATION_OK, "temperature fit");
	CHECK_OR_DONE(nb_test_interrupts() > before, "no check for a cancel in the temperature fit");
	before = nb_test_interrupts();
	nb_calibration_probabilities(&rows, q);
	CHECK_OR_DONE(nb_calibration_fit_sigmoids(&rows, 1, ab, q, &k) == NB_CALIBRATION_OK, "sigmoid fit");
	CHECK_OR_DONE(nb_test_interrupts() > before, "no check for a cancel in the sigmoid fit");
done:
	nb_free(lp);
	nb_free(y);
	nb_free(q);
}

/* The mean log loss of rows of C classes at temperature t (1: as scored), from the definition. */
static double
log_loss_at(const double *lp, const uint32_t *y, size_t n, uint32_t C, double t)
{
	double		loss = 0;

	for (size_t i = 0; i < n; i++)
	{
		double		z = 0;

		for (uint32_t c = 0; c < C; c++)
			z += exp(lp[i * C + c] / t);
		loss -= lp[i * C + y[i]] / t - log(z);
	}
	return loss / n;
}

/* Rows of 3 classes, overconfident, the actual class the most probable 6 times in 10. */
static void
fill_rows(double *lp, uint32_t *y, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
	{
		double		z = 0;

		for (uint32_t c = 0; c < 3; c++)
		{
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			lp[i * 3 + c] = 12.0 * (double) (seed % 1000) / 1000;
			z += exp(lp[i * 3 + c]);
		}
		y[i] = 0;
		for (uint32_t c = 1; c < 3; c++)
			if (lp[i * 3 + c] > lp[i * 3 + y[i]])
				y[i] = c;
		if ((seed >> 20) % 10 >= 6)
			y[i] = (uint32_t) (seed >> 40) % 3;
		for (uint32_t c = 0; c < 3; c++)
			lp[i * 3 + c] -= log(z);
	}
}

static void
test_fit_choice(void)
{
	/* the mirror rows of test_temperature_fit: T = 3.1024149022, the scores before and after */
	double		lp[4] = {-0.5, -1.5, -0.25, -1};
	uint32_t	y[2] = {0, 1};
	NbCalibrationRows rows = {2, 2, y, lp};
	/* every row right by a margin: no temperature, and a sigmoid worse than none */
	double		easy_lp[8] = {-0.01, -4.6, -0.01, -4.6, -4.6, -0.01, -4.6, -0.01};
	uint32_t	easy_y[4] = {0, 0, 1, 1};
	uint32_t	one_y[2] = {1, 1};
	enum
	{
		N = 400
	};
	double		big[N * 3];
	uint32_t	by[N];
	NbCalibrationFit fit;
	NbCalibrationFit t;
	NbCalibrationFit s;

	EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_TEMPERATURE, &fit) == NB_CALIBRATION_OK);
	EXPECT(fit.method == NB_CALIBRATE_TEMPERATURE && fit.sigmoid == NULL);
	CHECK_NEAR(fit.cal.temperature, 3.1024149022, 1e-10, "T");
	CHECK_NEAR(fit.log_loss, log_loss_at(lp, y, 2, 2, 1), 1e-15, "log loss before");
	CHECK_NEAR(fit.calibrated_log_loss, log_loss_at(lp, y, 2, 2, fit.cal.temperature), 1e-15, "log loss after");
	nb_calibration_fit_free(&fit);

	rows = (NbCalibrationRows) {4, 2, easy_y, easy_lp};
	EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_TEMPERATURE, &fit) == NB_CALIBRATION_SEPARATED);
	EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_SIGMOID, &s) == NB_CALIBRATION_OK);
	EXPECT(s.sigmoid != NULL && s.sigmoid[0] == 0 && s.sigmoid[1] == 0 && s.calibrated_log_loss > s.log_loss);
	EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_AUTO, &fit) == NB_CALIBRATION_OK);
	EXPECT(fit.method == NB_CALIBRATE_NONE && fit.sigmoid == NULL && nb_calibration_is_identity(&fit.cal));
	EXPECT(fit.calibrated_log_loss == fit.log_loss && fit.calibrated_brier == fit.brier && fit.log_loss == s.log_loss);
	nb_calibration_fit_free(&s);
	nb_calibration_fit_free(&fit);

	rows = (NbCalibrationRows) {2, 2, one_y, lp};
	EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_AUTO, &fit) == NB_CALIBRATION_ONE_CLASS);
	rows = (NbCalibrationRows) {0, 2, one_y, lp};
	EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_AUTO, &fit) == NB_CALIBRATION_TOO_FEW_ROWS);

	/* auto keeps the fit of the lower log loss, as each alone gives it */
	for (uint64_t seed = 3; seed < 6; seed++)
	{
		fill_rows(big, by, N, seed);
		rows = (NbCalibrationRows) {N, 3, by, big};
		EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_TEMPERATURE, &t) == NB_CALIBRATION_OK);
		EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_SIGMOID, &s) == NB_CALIBRATION_OK);
		EXPECT(nb_calibration_fit(&rows, NB_CALIBRATE_AUTO, &fit) == NB_CALIBRATION_OK);
		CHECK_NEAR(t.calibrated_log_loss, log_loss_at(big, by, N, 3, t.cal.temperature), 1e-12,
				   "log loss at T");
		if (t.calibrated_log_loss <= s.calibrated_log_loss)
			EXPECT(fit.method == NB_CALIBRATE_TEMPERATURE && fit.cal.temperature == t.cal.temperature);
		else
			EXPECT(fit.method == NB_CALIBRATE_SIGMOID && memcmp(fit.sigmoid, s.sigmoid, sizeof(double) * 6) == 0);
		EXPECT(fit.calibrated_log_loss == (t.calibrated_log_loss <= s.calibrated_log_loss ? t : s).calibrated_log_loss);
		nb_calibration_fit_free(&t);
		nb_calibration_fit_free(&s);
		nb_calibration_fit_free(&fit);
	}
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("temperature: the formula", test_temperature_apply);
	run("temperature: limits, never NaN", test_temperature_limits);
	run("sigmoid: two classes and more", test_sigmoid_apply);
	run("temperature fit: scipy's value, zero derivative, canonical order", test_temperature_fit);
	run("temperature fit: separated, no better than uniform, no rows", test_temperature_refusals);
	run("sigmoid fit: zero gradient", test_sigmoid_fit);
	run("fit: the scores, the method auto chooses, refusals", test_fit_choice);
	run("sigmoid fit: a small class among many rows", test_sigmoid_fit_small_class);
	run("fits check for a cancel", test_fit_interrupts);
	return unit_done();
}
