/*
 * test_metrics.c — unit tests of the classification metrics (src/workflows/nb_metrics*.c),
 * expected values by hand from the formulas (see src/README.md) or by a
 * brute-force definition computed here.
 *
 *   ./test_metrics       run every test
 *   ./test_metrics WORD  run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_alloc.h"
#include "nb_grid.h"
#include "nb_metrics.h"
#include "unit.h"

static uint32_t
cls(NbMetrics *m, const char *label)
{
	return nb_metrics_class(m, label, (uint32_t) strlen(label));
}

static uint32_t
id_of(const NbMetrics *m, const char *label)
{
	return (uint32_t) nb_metrics_find(m, label, (uint32_t) strlen(label));
}

/* A probability row "label:p label:p ..." of up to 16 classes. */
static void
add_row(NbMetrics *m, const char *actual, const char *const *labels, const double *p,
		uint32_t n, double weight)
{
	uint32_t	ids[16];

	for (uint32_t i = 0; i < n; i++)
		ids[i] = cls(m, labels[i]);
	nb_metrics_add_scored(m, cls(m, actual), ids, p, n, weight);
}

/* Accuracy equal, log loss and Brier within rounding: states of the same rows merged another way. */
static bool
same_totals(const NbMetricsResult *a, const NbMetricsResult *b)
{
	return a->accuracy == b->accuracy && fabs(a->log_loss - b->log_loss) < 1e-12 &&
		fabs(a->brier - b->brier) < 1e-12;
}

/* ---------------------------------------------------------------- */

static void
test_labels_by_hand(void)
{
	/*
	 * actual/predicted: x/x, x/y, y/y, z/y.
	 *   x: tp 1, predicted 1, support 2: P 1, R 1/2, F1 2/3
	 *   y: tp 1, predicted 3, support 1: P 1/3, R 1, F1 1/2
	 *   z: never predicted: P 0 (zero_division), R 0, F1 0
	 * accuracy 2/4; balanced (1/2 + 1 + 0)/3; macro P (1 + 1/3)/3;
	 * weighted P (2 * 1 + 1/3 + 0)/4 = 7/12, weighted F1 (4/3 + 1/2)/4.
	 */
	NbMetrics	m;
	NbMetricsResult r;
	const char *rows[4][2] = {{"x", "x"}, {"x", "y"}, {"y", "y"}, {"z", "y"}};

	nb_metrics_init(&m, false, false, false);
	for (int i = 0; i < 4; i++)
	{
		uint32_t	a = cls(&m, rows[i][0]);

		nb_metrics_add(&m, a, cls(&m, rows[i][1]), 1.0);
	}
	nb_metrics_compute(&m, &r);
	CHECK_NEAR(r.accuracy, 0.5, 1e-15, "accuracy");
	CHECK_NEAR(r.balanced_accuracy, 0.5, 1e-15, "balanced accuracy");
	CHECK_NEAR(r.cls[id_of(&m, "x")].f1, 2.0 / 3, 1e-15, "F1(x)");
	CHECK_NEAR(r.cls[id_of(&m, "y")].precision, 1.0 / 3, 1e-15, "P(y)");
	CHECK_NEAR(r.cls[id_of(&m, "z")].precision, 0, 0, "P(z)");
	CHECK_NEAR(r.cls[id_of(&m, "z")].support, 1, 0, "support(z)");
	CHECK_NEAR(r.macro.precision, 4.0 / 9, 1e-15, "macro P");
	CHECK_NEAR(r.weighted.precision, 7.0 / 12, 1e-15, "weighted P");
	CHECK_NEAR(r.weighted.f1, (4.0 / 3 + 0.5) / 4, 1e-15, "weighted F1");
	CHECK(isnan(r.log_loss) && isnan(r.roc_auc_macro), "probability metrics without probabilities");
	/* byte order: x, y, z */
	CHECK(r.order[0] == id_of(&m, "x") && r.order[2] == id_of(&m, "z"), "order");
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
}

static void
test_weights_and_empty(void)
{
	/* weight 0 rows make classes known but count nothing; all-zero weight: undefined */
	NbMetrics	m;
	NbMetricsResult r;

	nb_metrics_init(&m, false, false, true);
	nb_metrics_add(&m, cls(&m, "a"), cls(&m, "b"), 0.0);
	nb_metrics_compute(&m, &r);
	CHECK(m.rows == 1, "rows");
	CHECK(isnan(r.accuracy) && isnan(r.balanced_accuracy), "undefined accuracy");
	CHECK(r.weighted.f1 == 0 && r.macro.recall == 0, "zero_division averages");
	nb_metrics_result_free(&r);

	/* a: 3 x a/a (weight 0.5 each), 1 x a/b (weight 2): recall(a) = 1.5 / 3.5 */
	for (int i = 0; i < 3; i++)
		nb_metrics_add(&m, cls(&m, "a"), cls(&m, "a"), 0.5);
	nb_metrics_add(&m, cls(&m, "a"), cls(&m, "b"), 2.0);
	nb_metrics_compute(&m, &r);
	CHECK_NEAR(r.accuracy, 1.5 / 3.5, 1e-15, "weighted accuracy");
	CHECK_NEAR(r.cls[id_of(&m, "a")].recall, 1.5 / 3.5, 1e-15, "weighted recall");
	/* b has no support: balanced accuracy is a's recall alone */
	CHECK_NEAR(r.balanced_accuracy, 1.5 / 3.5, 1e-15, "balanced accuracy");
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
	CHECK(nb_test_live_blocks() == 0, "%ld blocks left", nb_test_live_blocks());
}

static void
test_argmax_ties(void)
{
	/* equal probabilities: the first label in byte order ("a" < "ab" < "b") */
	NbMetrics	m;
	const char *l1[] = {"b", "ab"};
	const char *l2[] = {"ab", "a"};
	double		half[] = {0.5, 0.5};

	nb_metrics_init(&m, true, true, false);
	add_row(&m, "b", l1, half, 2, 1.0);
	add_row(&m, "b", l2, half, 2, 1.0);
	CHECK(m.confusion[id_of(&m, "b") * m.cap + id_of(&m, "ab")] == 1, "tie b/ab not to ab");
	CHECK(m.confusion[id_of(&m, "b") * m.cap + id_of(&m, "a")] == 1, "tie ab/a not to a");
	nb_metrics_free(&m);
}

static void
test_ranking_by_hand(void)
{
	/*
	 * sklearn's documented example: y = 0 0 1 1, scores 0.1 0.4 0.35 0.8:
	 * AUC 3/4, average precision (1/2)(1) + (1/2)(2/3) = 5/6.
	 * As probabilities of "p" against "n" (n = 1 - p).
	 */
	NbMetrics	m;
	NbMetricsResult r;
	const char *labels[] = {"n", "p"};
	const char *actual[] = {"n", "n", "p", "p"};
	double		score[] = {0.1, 0.4, 0.35, 0.8};

	nb_metrics_init(&m, true, true, false);
	for (int i = 0; i < 4; i++)
	{
		double		p[] = {1 - score[i], score[i]};

		add_row(&m, actual[i], labels, p, 2, 1.0);
	}
	nb_metrics_compute(&m, &r);
	CHECK_NEAR(r.cls[id_of(&m, "p")].roc_auc, 0.75, 1e-15, "AUC(p)");
	CHECK_NEAR(r.cls[id_of(&m, "n")].roc_auc, 0.75, 1e-15, "AUC(n)");
	CHECK_NEAR(r.cls[id_of(&m, "p")].average_precision, 5.0 / 6, 1e-15, "AP(p)");
	CHECK_NEAR(r.roc_auc_macro, 0.75, 1e-15, "macro AUC");
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);

	/*
	 * Ties: y = 1 0 1 0, scores 0.5 0.5 0.5 0.2 (one threshold per distinct
	 * score): the tied group holds 2 positives and 1 negative, a trapezoid
	 * of area 1 * (0 + 2/2), then the last negative 1 * 2: AUC 3/4; average
	 * precision: recall 1 reached at precision 2/3.
	 */
	nb_metrics_init(&m, true, true, false);
	{
		const char *act[] = {"p", "n", "p", "n"};
		double		s[] = {0.5, 0.5, 0.5, 0.2};

		for (int i = 0; i < 4; i++)
		{
			double		p[] = {1 - s[i], s[i]};

			add_row(&m, act[i], labels, p, 2, 1.0);
		}
	}
	nb_metrics_compute(&m, &r);
	CHECK_NEAR(r.cls[id_of(&m, "p")].roc_auc, 0.75, 1e-15, "AUC with ties");
	CHECK_NEAR(r.cls[id_of(&m, "p")].average_precision, 2.0 / 3, 1e-15, "AP with ties");
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
}

/*
 * Row 1: actual a, {a: 0.8, b: 0.2}: -log 0.8; Brier 0.04 + 0.04.
 * Row 2: actual c (named by no row), {a: 1}: the classes are a, b, c;
 * clipped a 1 - eps, b eps, c eps, sum 1 + eps: -log(eps / (1 + eps));
 * Brier 1 (a) + 1 (c).  Weights 1 and 3.  Returns the log loss.
 */
static double
add_log_loss_rows(NbMetrics *m)
{
	const char *l1[] = {"a", "b"};
	const char *l2[] = {"a"};
	double		p1[] = {0.8, 0.2};
	double		p2[] = {1.0};
	double		eps = DBL_EPSILON;

	add_row(m, "a", l1, p1, 2, 1.0);
	add_row(m, "c", l2, p2, 1, 3.0);
	return (-log(0.8 / (0.8 + 0.2 + eps)) - 3 * log(eps / (1 - eps + 2 * eps))) / 4;
}

static void
test_log_loss_and_brier(void)
{
	/*
	 * c is never predicted and never has a positive score: AUC(c) 1/2, b
	 * has no positives: NAN.
	 */
	NbMetrics	m;
	NbMetricsResult r;
	double		loss;

	nb_metrics_init(&m, true, true, true);
	loss = add_log_loss_rows(&m);
	nb_metrics_compute(&m, &r);
	CHECK_NEAR(r.log_loss, loss, 1e-12, "log loss");
	CHECK_NEAR(r.brier, (0.08 + 3 * 2.0) / 4, 1e-15, "Brier");
	CHECK(isnan(r.cls[id_of(&m, "b")].roc_auc) && isnan(r.cls[id_of(&m, "b")].average_precision),
		  "b has no positive rows");
	CHECK_NEAR(r.cls[id_of(&m, "c")].roc_auc, 0.5, 1e-15, "AUC(c)");
	CHECK_NEAR(r.cls[id_of(&m, "c")].average_precision, 0.75, 1e-15, "AP(c)");
	CHECK(!nb_metrics_reported(&m, id_of(&m, "b")), "b reported");
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
}

/* Scores that are not probabilities: the same metrics but no log loss or Brier score. */
static void
test_scores_only(void)
{
	NbMetrics	m,
				p;
	NbMetricsResult r,
				q;

	nb_metrics_init(&m, true, false, true);
	nb_metrics_init(&p, true, false, true);
	m.scores_only = true;
	(void) add_log_loss_rows(&m);
	(void) add_log_loss_rows(&p);
	nb_metrics_compute(&m, &r);
	nb_metrics_compute(&p, &q);
	CHECK(isnan(r.log_loss) && isnan(r.brier), "log loss %g, Brier %g", r.log_loss, r.brier);
	CHECK(!isnan(q.log_loss) && !isnan(q.brier), "probabilities: log loss %g", q.log_loss);
	CHECK(r.accuracy == q.accuracy && r.macro.f1 == q.macro.f1 &&
		  r.balanced_accuracy == q.balanced_accuracy, "the other metrics differ");
	nb_metrics_result_free(&r);
	nb_metrics_result_free(&q);
	nb_metrics_free(&m);
	nb_metrics_free(&p);
}

/* Deterministic pseudo-random numbers (xorshift). */

/*
 * AUC of class c as the weighted probability that one of its rows outscores
 * a row of another class (ties count half), over every pair: row i's score
 * is s[i * stride], its class act[i].
 */
static double
auc_by_pairs(const double *s, int stride, const uint32_t *act, uint32_t c, const double *w, int n)
{
	double		num = 0,
				pos = 0,
				neg = 0;

	for (int i = 0; i < n; i++)
	{
		if (act[i] != c)
		{
			neg += w[i];
			continue;
		}
		pos += w[i];
		for (int j = 0; j < n; j++)
			if (act[j] != c)
				num += w[i] * w[j] * (s[i * stride] > s[j * stride] ? 1.0 :
									  s[i * stride] == s[j * stride] ? 0.5 : 0.0);
	}
	return num / (pos * neg);
}

static void
test_ranking_brute_force(void)
{
	/*
	 * AUC as the weighted probability that a positive outscores a negative
	 * (ties count half), over every pair; scores on a coarse grid so that
	 * many tie, and rows in several thousands so the radix sort is used in
	 * earnest.  States split in two and merged give the same values.
	 */
	enum
	{
		N = 3000, C = 3
	};
	const char *labels[C] = {"r", "g", "b"};
	uint32_t   *act = malloc(sizeof(uint32_t) * N);
	double	   *p = malloc(sizeof(double) * N * C);
	double	   *w = malloc(sizeof(double) * N);
	NbMetrics	whole,
				half1,
				half2;
	NbMetricsResult r,
				rm;

	nb_metrics_init(&whole, true, true, true);
	nb_metrics_init(&half1, true, true, true);
	nb_metrics_init(&half2, true, true, true);
	for (int i = 0; i < N; i++)
	{
		double		sum = 0;

		act[i] = (uint32_t) (unit_random() % C);
		w[i] = (double) (unit_random() % 4) / 2;
		for (int c = 0; c < C; c++)
			sum += p[i * C + c] = (double) (unit_random() % 7) + (c == (int) act[i] ? 2 : 0);
		for (int c = 0; c < C; c++)
			p[i * C + c] /= sum;
		add_row(&whole, labels[act[i]], labels, p + i * C, C, w[i]);
		add_row(i < N / 3 ? &half1 : &half2, labels[act[i]], labels, p + i * C, C, w[i]);
	}
	nb_metrics_merge(&half1, &half2);
	nb_metrics_compute(&whole, &r);
	nb_metrics_compute(&half1, &rm);
	for (int c = 0; c < C; c++)
	{
		uint32_t	id = id_of(&whole, labels[c]);
		double		auc = auc_by_pairs(p + c, C, act, (uint32_t) c, w, N);

		CHECK_OR_DONE(fabs(r.cls[id].roc_auc - auc) < 1e-12,
					  "AUC(%s) = %.17g, pairs give %.17g", labels[c], r.cls[id].roc_auc, auc);
		CHECK_OR_DONE(fabs(rm.cls[id_of(&half1, labels[c])].roc_auc - r.cls[id].roc_auc) < 1e-12,
					  "merged AUC(%s)", labels[c]);
		CHECK_OR_DONE(fabs(rm.cls[id_of(&half1, labels[c])].average_precision -
						   r.cls[id].average_precision) < 1e-12, "merged AP(%s)", labels[c]);
	}
	CHECK_OR_DONE(same_totals(&rm, &r), "merged state differs");
done:
	nb_metrics_result_free(&r);
	nb_metrics_result_free(&rm);
	nb_metrics_free(&whole);
	nb_metrics_free(&half1);
	nb_metrics_free(&half2);
	free(act);
	free(p);
	free(w);
}

/* ap_ref: average precision of class c (rows of scores s, classes act, weights w), by qsort */
static const double *sort_scores;

static int
by_score_desc(const void *x, const void *y)
{
	double		a = sort_scores[*(const int *) x];
	double		b = sort_scores[*(const int *) y];

	return a > b ? -1 : a < b;
}

static double
ap_ref(const double *s, const uint32_t *act, uint32_t c, const double *w, int n)
{
	int		   *order = malloc(sizeof(int) * n);
	double		tp = 0,
				fp = 0,
				total = 0,
				ap = 0;

	for (int i = 0; i < n; i++)
	{
		order[i] = i;
		total += act[i] == c ? w[i] : 0;
	}
	sort_scores = s;
	qsort(order, n, sizeof(int), by_score_desc);
	for (int i = 0; i < n;)
	{
		double		dtp = 0;
		int			j = i;

		for (; j < n && s[order[j]] == s[order[i]]; j++)
		{
			if (act[order[j]] == c)
				dtp += w[order[j]];
			else
				fp += w[order[j]];
		}
		tp += dtp;
		if (dtp > 0)
			ap += dtp / total * (tp / (tp + fp));
		i = j;
	}
	free(order);
	return ap;
}

static void
test_ranking_near_ties(void)
{
	/*
	 * Scores in 60 clusters from 1e-12 to 1, each of doubles a few units in
	 * the last place apart (and some equal): the radix sort of the ranking
	 * must order them down to the last bit.  AUC against every pair, AP
	 * against a sort by comparison; unweighted (8-byte rows) and weighted
	 * (16-byte rows).
	 */
	enum
	{
		N = 4000
	};
	const char *labels[2] = {"p", "n"};
	uint32_t   *act = malloc(sizeof(uint32_t) * N);
	double	   *s = malloc(sizeof(double) * N);
	double	   *w = malloc(sizeof(double) * N);

	for (int weighted = 0; weighted <= 1; weighted++)
	{
		NbMetrics	m;
		NbMetricsResult r;
		double		auc;
		uint32_t	id;

		nb_metrics_init(&m, true, true, weighted);
		for (int i = 0; i < N; i++)
		{
			/* the first half over 60 clusters, the second over the first 20 of them */
			int			cluster = (int) (unit_random() % (i < N / 2 ? 60 : 20));
			double		base = pow(10.0, -(double) cluster / 5);
			double		p[2];

			s[i] = base * (1 + (double) (unit_random() % 40) * DBL_EPSILON);
			if (s[i] > 1)
				s[i] = 1;
			/* 0: "p", 1: "n" */
			act[i] = unit_random() % 3 == 0 ? 0 : 1;
			w[i] = weighted ? (double) (1 + unit_random() % 4) / 2 : 1.0;
			p[0] = s[i];
			p[1] = 1 - s[i];
			add_row(&m, labels[act[i]], labels, p, 2, w[i]);
		}
		nb_metrics_compute(&m, &r);
		auc = auc_by_pairs(s, 1, act, 0, w, N);
		id = id_of(&m, "p");
		CHECK_OR_DONE(fabs(r.cls[id].roc_auc - auc) < 1e-12,
					  "weighted %d: AUC(p) = %.17g, pairs give %.17g", weighted,
					  r.cls[id].roc_auc, auc);
		CHECK_OR_DONE(fabs(r.cls[id].average_precision - ap_ref(s, act, 0, w, N)) < 1e-12,
					  "weighted %d: AP(p) = %.17g, a sort by comparison gives %.17g", weighted,
					  r.cls[id].average_precision, ap_ref(s, act, 0, w, N));
		nb_metrics_result_free(&r);
		nb_metrics_free(&m);
	}
done:
	free(act);
	free(s);
	free(w);
}

static void
test_ranking_outside_positives(void)
{
	/*
	 * Only the positives are sorted; each negative is counted into its place
	 * among them.  Negatives above and below every positive, at exactly 0
	 * and 1 and on positives' scores; a class whose positives all score the
	 * same (one level); a class that occurs as actual but that no row names
	 * (every score 0); weights of 0.  AUC against every pair, AP against a
	 * sort by comparison.
	 */
	enum
	{
		N = 3000, C = 4
	};
	static const double picks[] = {0, 1, 0.3, 0.45, 0.6, 0.5};
	const char *labels[C] = {"a", "b", "c", "z"};
	uint32_t   *act = malloc(sizeof(uint32_t) * N);
	double	   *s = calloc(N * C, sizeof(double));
	double	   *w = malloc(sizeof(double) * N);
	double	   *col = malloc(sizeof(double) * N);
	NbMetrics	m;
	NbMetricsResult r;

	nb_metrics_init(&m, true, true, true);
	for (int i = 0; i < N; i++)
	{
		double	   *p = s + i * C;

		act[i] = (uint32_t) (unit_random() % C);
		w[i] = (double) (unit_random() % 3) / 2;
		/* a: positives in [0.3, 0.6], negatives anywhere, often on the picks */
		p[0] = act[i] == 0 ? 0.3 + (double) (unit_random() % 31) / 100 :
			unit_random() % 2 ? picks[unit_random() % 6] : (double) (unit_random() % 101) / 100;
		/* b: every positive at 0.5 */
		p[1] = act[i] == 1 ? 0.5 : (double) (unit_random() % 101) / 100;
		p[2] = (double) (unit_random() % 101) / 100;
		/* z (p[3]): named by no row */
		add_row(&m, labels[act[i]], labels, p, C - 1, w[i]);
	}
	nb_metrics_compute(&m, &r);
	for (uint32_t c = 0; c < C; c++)
	{
		uint32_t	id = id_of(&m, labels[c]);
		double		auc = auc_by_pairs(s + c, C, act, c, w, N);
		double		ap;

		for (int i = 0; i < N; i++)
			col[i] = s[i * C + c];
		ap = ap_ref(col, act, c, w, N);
		CHECK_OR_DONE(fabs(r.cls[id].roc_auc - auc) < 1e-12,
					  "AUC(%s) = %.17g, pairs give %.17g", labels[c], r.cls[id].roc_auc, auc);
		CHECK_OR_DONE(fabs(r.cls[id].average_precision - ap) < 1e-12,
					  "AP(%s) = %.17g, a sort by comparison gives %.17g", labels[c],
					  r.cls[id].average_precision, ap);
	}
	CHECK(fabs(r.cls[id_of(&m, "z")].roc_auc - 0.5) < 1e-15, "AUC of a class no row names");
done:
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
	free(act);
	free(s);
	free(w);
	free(col);
}

/* AUC of class c by a sort by comparison: ties count half */
static double
auc_ref(const double *s, const uint32_t *act, uint32_t c, const double *w, int n)
{
	int		   *order = malloc(sizeof(int) * n);
	double		tp = 0,
				fp = 0,
				area = 0;

	for (int i = 0; i < n; i++)
		order[i] = i;
	sort_scores = s;
	qsort(order, n, sizeof(int), by_score_desc);
	for (int i = 0; i < n;)
	{
		double		dtp = 0,
					dfp = 0;
		int			j = i;

		for (; j < n && s[order[j]] == s[order[i]]; j++)
		{
			if (act[order[j]] == c)
				dtp += w[order[j]];
			else
				dfp += w[order[j]];
		}
		area += dfp * (tp + dtp / 2);
		tp += dtp;
		fp += dfp;
		i = j;
	}
	free(order);
	return area / (tp * fp);
}

static void
test_rows_in_segments(void)
{
	/*
	 * The columns of scores are kept in segments: rows past two of them, a
	 * class first named past the first segment (its column made then, zero
	 * before) and by every other row only, unweighted and weighted.  AUC and
	 * AP against sorts by comparison; a state of a first part that ends
	 * inside the first segment merged with the rest (every copy crossing a
	 * segment boundary at another place) equals the whole.
	 */
	enum
	{
		C = 3
	};
	const int	n = (int) (2 * NB_METRICS_SEGMENT_ROWS + 12345);
	const int	first_late = (int) NB_METRICS_SEGMENT_ROWS + 77;
	const int	split = (int) (NB_METRICS_SEGMENT_ROWS / 2 + 3);
	const char *labels[C] = {"a", "b", "late"};
	uint32_t   *act = malloc(sizeof(uint32_t) * n);
	double	   *col[C];
	double	   *w = malloc(sizeof(double) * n);

	for (int c = 0; c < C; c++)
		col[c] = calloc(n, sizeof(double));
	for (int weighted = 0; weighted <= 1; weighted++)
	{
		NbMetrics	whole,
					part1,
					part2;
		NbMetricsResult r,
					rm;

		nb_metrics_init(&whole, true, true, weighted);
		nb_metrics_init(&part1, true, true, weighted);
		nb_metrics_init(&part2, true, true, weighted);
		for (int i = 0; i < n; i++)
		{
			double		p[C];
			uint32_t	named = i >= first_late && i % 2 == 1 ? 3 : 2;

			act[i] = (uint32_t) (unit_random() % C);
			w[i] = weighted ? (double) (unit_random() % 3) / 2 : 1.0;
			for (uint32_t c = 0; c < C; c++)
			{
				/* on a grid, so that many tie; the actual class higher */
				p[c] = c < named ? (double) (unit_random() % 500 + (c == act[i] ? 300 : 0)) / 800 : 0;
				col[c][i] = p[c];
			}
			add_row(&whole, labels[act[i]], labels, p, named, w[i]);
			add_row(i < split ? &part1 : &part2, labels[act[i]], labels, p, named, w[i]);
		}
		nb_metrics_merge(&part1, &part2);
		nb_metrics_compute(&whole, &r);
		nb_metrics_compute(&part1, &rm);
		for (uint32_t c = 0; c < C; c++)
		{
			uint32_t	id = id_of(&whole, labels[c]);
			uint32_t	mid = id_of(&part1, labels[c]);
			double		auc = auc_ref(col[c], act, c, w, n);
			double		ap = ap_ref(col[c], act, c, w, n);

			CHECK(fabs(r.cls[id].roc_auc - auc) < 1e-12, "AUC(%s) = %.17g, a sort gives %.17g",
				  labels[c], r.cls[id].roc_auc, auc);
			CHECK(fabs(r.cls[id].average_precision - ap) < 1e-12, "AP(%s) = %.17g, a sort gives %.17g",
				  labels[c], r.cls[id].average_precision, ap);
			CHECK(rm.cls[mid].roc_auc == r.cls[id].roc_auc &&
				  rm.cls[mid].average_precision == r.cls[id].average_precision,
				  "merged AUC and AP of %s", labels[c]);
		}
		CHECK(same_totals(&rm, &r), "merged state differs");
		nb_metrics_result_free(&r);
		nb_metrics_result_free(&rm);
		nb_metrics_free(&whole);
		nb_metrics_free(&part1);
		nb_metrics_free(&part2);
	}
	for (int c = 0; c < C; c++)
		free(col[c]);
	free(act);
	free(w);
}

static void
test_small_merges(void)
{
	/*
	 * A state that takes the same rows, in the same order, now one at a
	 * time, now merged from states of 0 to 12 rows, with its metrics
	 * computed now and then and rows added after that, ends equal to one
	 * that took them one at a time, bit for bit.  Rows name 1 to 5 of 5 classes, so that some classes'
	 * columns are made in the middle of a group.
	 */
	enum
	{
		N = 3000, C = 5
	};
	const char *labels[C] = {"v", "w", "x", "y", "z"};
	NbMetrics	whole,
				built;
	NbMetricsResult r,
				rb;
	int			i = 0;

	nb_metrics_init(&whole, true, true, true);
	nb_metrics_init(&built, true, true, true);
	while (i < N)
	{
		int			take = (int) (unit_random() % 13);
		bool		merged = unit_random() % 2 == 0;
		NbMetrics	part;

		nb_metrics_init(&part, true, true, true);
		for (int t = 0; t < take && i < N; t++, i++)
		{
			uint32_t	named = 1 + (uint32_t) (unit_random() % C);
			double		p[C];
			double		w = (double) (unit_random() % 5) / 4;
			const char *actual = labels[unit_random() % C];

			for (uint32_t c = 0; c < named; c++)
				p[c] = (double) (unit_random() % 200) / 200;
			add_row(&whole, actual, labels + (C - named), p, named, w);
			add_row(merged ? &part : &built, actual, labels + (C - named), p, named, w);
		}
		if (merged)
			nb_metrics_merge(&built, &part);
		nb_metrics_free(&part);
		if (unit_random() % 5 == 0)
		{
			nb_metrics_compute(&built, &rb);
			nb_metrics_result_free(&rb);
		}
	}
	nb_metrics_compute(&whole, &r);
	nb_metrics_compute(&built, &rb);
	for (uint32_t c = 0; c < C; c++)
	{
		uint32_t	id = id_of(&whole, labels[c]);
		uint32_t	bid = id_of(&built, labels[c]);

		CHECK(memcmp(&r.cls[id].roc_auc, &rb.cls[bid].roc_auc, sizeof(double)) == 0 &&
			  memcmp(&r.cls[id].average_precision, &rb.cls[bid].average_precision, sizeof(double)) == 0,
			  "AUC and AP of %s: %.17g %.17g, one at a time %.17g %.17g", labels[c],
			  rb.cls[bid].roc_auc, rb.cls[bid].average_precision, r.cls[id].roc_auc,
			  r.cls[id].average_precision);
	}
	CHECK(same_totals(&rb, &r), "accuracy, log loss, Brier");
	nb_metrics_result_free(&r);
	nb_metrics_result_free(&rb);
	nb_metrics_free(&whole);
	nb_metrics_free(&built);
}

static void
test_unranked_equals_ranked(void)
{
	/*
	 * An unranked state (log loss summed row by row) against a ranked one on
	 * the same rows: rows name 1 to 12 of 12 classes (so the state grows past
	 * its initial capacity, and the classes a row does not name count at the
	 * end), some actual labels are named by no row, weights vary.  Every
	 * metric agrees within rounding, AUC and AP are NAN; two unranked halves
	 * merged agree too.  And the by-hand log loss of test_log_loss_and_brier.
	 */
	enum
	{
		N = 2000, C = 12
	};
	static const char *const labels[C + 2] = {"c00", "c01", "c02", "c03", "c04", "c05", "c06",
	"c07", "c08", "c09", "c10", "c11", "x1", "x2"};
	NbMetrics	ranked,
				unranked,
				half1,
				half2;
	NbMetricsResult r,
				u,
				h;
	double		loss;

	nb_metrics_init(&ranked, true, true, true);
	nb_metrics_init(&unranked, true, false, true);
	nb_metrics_init(&half1, true, false, true);
	nb_metrics_init(&half2, true, false, true);
	for (int i = 0; i < N; i++)
	{
		uint32_t	n = 1 + (uint32_t) (unit_random() % C);
		const char *actual = labels[unit_random() % (C + 2)];
		double		p[C];
		double		sum = 0;
		double		w = (double) (unit_random() % 5) / 2;

		for (uint32_t c = 0; c < n; c++)
			sum += p[c] = (double) (unit_random() % 9);
		for (uint32_t c = 0; c < n; c++)
			p[c] = sum > 0 ? p[c] / sum : 1.0 / n;
		add_row(&ranked, actual, labels, p, n, w);
		add_row(&unranked, actual, labels, p, n, w);
		add_row(i % 3 == 0 ? &half1 : &half2, actual, labels, p, n, w);
	}
	nb_metrics_merge(&half1, &half2);
	nb_metrics_compute(&ranked, &r);
	nb_metrics_compute(&unranked, &u);
	nb_metrics_compute(&half1, &h);
	CHECK(u.accuracy == r.accuracy && u.macro.f1 == r.macro.f1 &&
		  u.balanced_accuracy == r.balanced_accuracy, "accuracy, macro F1");
	CHECK_NEAR(u.log_loss, r.log_loss, 1e-12 * r.log_loss, "log loss");
	CHECK_NEAR(u.brier, r.brier, 1e-12, "Brier");
	CHECK(isnan(u.roc_auc_macro) && isnan(u.average_precision_macro) &&
		  isnan(u.cls[id_of(&unranked, "c00")].roc_auc), "no AUC");
	CHECK(h.accuracy == r.accuracy, "merged accuracy");
	CHECK_NEAR(h.log_loss, r.log_loss, 1e-12 * r.log_loss, "merged log loss");
	CHECK_NEAR(h.brier, r.brier, 1e-12, "merged Brier");
	nb_metrics_result_free(&r);
	nb_metrics_result_free(&u);
	nb_metrics_result_free(&h);
	nb_metrics_free(&ranked);
	nb_metrics_free(&unranked);
	nb_metrics_free(&half1);
	nb_metrics_free(&half2);

	nb_metrics_init(&unranked, true, false, true);
	loss = add_log_loss_rows(&unranked);
	nb_metrics_compute(&unranked, &u);
	CHECK_NEAR(u.log_loss, loss, 1e-12, "log loss by hand");
	CHECK_NEAR(u.brier, (0.08 + 3 * 2.0) / 4, 1e-15, "Brier by hand");
	nb_metrics_result_free(&u);
	nb_metrics_free(&unranked);
}

static void
test_many_classes_grow(void)
{
	/* classes past the initial capacity keep their counts when the matrix grows */
	NbMetrics	m;
	NbMetricsResult r;
	char		a[16],
				b[16];

	nb_metrics_init(&m, false, false, false);
	for (int i = 0; i < 100; i++)
	{
		snprintf(a, sizeof(a), "c%d", i);
		snprintf(b, sizeof(b), "c%d", (i * 7) % 100);
		nb_metrics_add(&m, cls(&m, a), cls(&m, b), 1.0);
	}
	nb_metrics_compute(&m, &r);
	/* i == 7i mod 100 for i = 0 and 50 */
	CHECK_NEAR(r.accuracy, 2.0 / 100, 1e-15, "accuracy");
	CHECK(r.n_classes == 100, "%u classes", r.n_classes);
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
}

static void
test_interrupts(void)
{
	/* the sort and the log loss pass check for a cancel on large inputs */
	NbMetrics	m;
	NbMetricsResult r;
	const char *labels[] = {"n", "p"};
	long		before;

	nb_metrics_init(&m, true, true, false);
	for (int i = 0; i < 100000; i++)
	{
		double		s = (double) (unit_random() % 1000) / 1000;
		double		p[] = {1 - s, s};

		add_row(&m, labels[i % 2], labels, p, 2, 1.0);
	}
	before = nb_test_interrupts();
	nb_metrics_compute(&m, &r);
	CHECK(nb_test_interrupts() - before >= 2 * 100000 / 16384, "%ld interrupt checks",
		  nb_test_interrupts() - before);
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
}

/* ---------------------------------------------------------------- */

/*
 * A grid's states hold at most nb_grid_max_labels labels: the n_sets
 * confusion matrices of cap * cap doubles (cap a power of two from 8) take
 * at most NB_GRID_MAX_BYTES = 2^30 - 1.  By hand: one 2048-label matrix is
 * 2^25 bytes, so 31 fit and 32 (2^30) do not; 128 of 1024 labels are 2^30
 * too; an 8-label matrix is 512 bytes, 2^21 of them 2^30.
 */
static void
test_grid_max_labels(void)
{
	static const uint32_t n_sets[] = {1, 31, 32, 127, 128, 2097151, 2097152};
	static const uint32_t want[] = {2048, 2048, 1024, 1024, 512, 8, 0};
	NbGrid		grid;
	int64_t		ids[4];

	for (int i = 0; i < 7; i++)
		CHECK(nb_grid_max_labels(n_sets[i]) == want[i], "%u option sets: %u labels, expected %u",
			  n_sets[i], nb_grid_max_labels(n_sets[i]), want[i]);
	/* a label past the grid's maximum is refused, and nothing is added */
	nb_grid_init(&grid, 2);
	CHECK(grid.max_labels == 2048, "max_labels %u", grid.max_labels);
	grid.max_labels = 3;
	ids[0] = nb_grid_label(&grid, "x", 1);
	ids[1] = nb_grid_label(&grid, "y", 1);
	ids[2] = nb_grid_label(&grid, "z", 1);
	ids[3] = nb_grid_label(&grid, "w", 1);
	CHECK(ids[0] == 0 && ids[1] == 1 && ids[2] == 2 && ids[3] == -1,
		  "ids %lld %lld %lld %lld", (long long) ids[0], (long long) ids[1], (long long) ids[2],
		  (long long) ids[3]);
	CHECK(nb_grid_label(&grid, "y", 1) == 1 && grid.metrics[1].labels.count == 3,
		  "a known label after the refusal, %u labels", grid.metrics[1].labels.count);
	nb_grid_free(&grid);
}

/* ---------------------------------------------------------------- */
/* the serialized form                                               */

/* A state's bytes: header and the state, *len set. */
static unsigned char *
serialize(NbMetrics *m, size_t *len)
{
	uint64_t	size = NB_METRICS_SERIAL_HEADER + nb_metrics_serial_size(m);
	unsigned char *buf = malloc(size + 1);
	unsigned char *end = nb_metrics_write(m, nb_metrics_write_header(buf, 1, NULL, 0));

	if ((uint64_t) (end - buf) != size)
		fail_at(__LINE__, "wrote %lld bytes, the size says %llu", (long long) (end - buf),
				(unsigned long long) size);
	*len = (size_t) size;
	return buf;
}

/* Read a state of serialize's bytes; false if they are refused. */
static bool
deserialize(NbMetrics *m, const unsigned char *buf, size_t len)
{
	NbMetricsIn in = {buf, buf + len, NULL};
	uint32_t	n,
				tag_len;
	const unsigned char *tag;

	if (!nb_metrics_read_header(&in, &n, &tag, &tag_len) || n != 1)
	{
		nb_metrics_init(m, false, false, false);
		return false;
	}
	return nb_metrics_read(m, &in) && in.p == in.end;
}

/* Every metric of two results the same bits (NAN equal to NAN). */
static bool
same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0 || (isnan(a) && isnan(b));
}

static bool
same_results(const NbMetricsResult *a, const NbMetricsResult *b, const NbMetrics *ma,
			 const NbMetrics *mb)
{
	bool		same = a->n_classes == b->n_classes && same_bits(a->accuracy, b->accuracy) &&
		same_bits(a->balanced_accuracy, b->balanced_accuracy) &&
		same_bits(a->macro.f1, b->macro.f1) && same_bits(a->weighted.f1, b->weighted.f1) &&
		same_bits(a->log_loss, b->log_loss) && same_bits(a->brier, b->brier) &&
		same_bits(a->roc_auc_macro, b->roc_auc_macro) &&
		same_bits(a->average_precision_macro, b->average_precision_macro) &&
		same_bits(a->ece, b->ece);

	for (int k = 0; same && k < NB_METRICS_BINS; k++)
		same = same_bits(a->bins[k].weight, b->bins[k].weight) &&
			same_bits(a->bins[k].confidence, b->bins[k].confidence) &&
			same_bits(a->bins[k].accuracy, b->bins[k].accuracy);
	for (uint32_t k = 0; same && k < a->n_classes; k++)
	{
		const NbClassMetrics *x = &a->cls[a->order[k]];
		const NbClassMetrics *y = &b->cls[b->order[k]];
		uint32_t	alen;
		uint32_t	blen;
		const char *as = nb_vocab_str(&ma->labels, a->order[k], &alen);
		const char *bs = nb_vocab_str(&mb->labels, b->order[k], &blen);

		same = alen == blen && memcmp(as, bs, alen) == 0 &&
			same_bits(x->precision, y->precision) && same_bits(x->recall, y->recall) &&
			same_bits(x->support, y->support) && same_bits(x->roc_auc, y->roc_auc) &&
			same_bits(x->average_precision, y->average_precision);
	}
	return same;
}

enum
{
	FORM_LABELS,
	FORM_RANKED,
	FORM_UNRANKED,
	FORMS
};

static void
init_form(NbMetrics *m, int form, bool weighted)
{
	nb_metrics_init(m, form != FORM_LABELS, form == FORM_RANKED, weighted);
}

/* Row i of a random but fixed set (seeded by i): 5 classes, some rows naming only 3. */
static void
add_fixed_row(NbMetrics *m, int form, bool weighted, int i)
{
	static const char *const labels[5] = {"a", "b", "c", "dd", "e\xc3\xa9"};
	uint64_t	x = (uint64_t) i * 0x9E3779B97F4A7C15u + 12345;
	double		p[5],
				sum = 0;
	uint32_t	n = (x >> 7) % 4 == 0 ? 3 : 5;
	uint32_t	actual = (uint32_t) ((x >> 13) % 5);
	double		w = weighted ? (double) ((x >> 21) % 1000) / 7.0 : 1.0;

	for (uint32_t c = 0; c < n; c++)
	{
		x = x * 6364136223846793005u + 1442695040888963407u;
		p[c] = (double) (x >> 11) / 9007199254740992.0 + (c == actual ? 0.5 : 0);
		sum += p[c];
	}
	for (uint32_t c = 0; c < n; c++)
		p[c] /= sum;
	if (form == FORM_LABELS)
		nb_metrics_add(m, cls(m, labels[actual]), cls(m, labels[(x >> 17) % 5]), w);
	else
		add_row(m, labels[actual], labels, p, n, w);
}

static void
test_serial_round_trip(void)
{
	/*
	 * Every form, weighted or not, past a segment of rows: the size is what
	 * is written, the state read back gives the same bits of every metric
	 * and writes the same bytes again.
	 */
	for (int form = 0; form < FORMS; form++)
		for (int weighted = 0; weighted <= 1; weighted++)
		{
			NbMetrics	m,
						back;
			NbMetricsResult r,
						rb;
			size_t		len,
						len2;
			unsigned char *buf,
					   *buf2;
			int			rows = form == FORM_RANKED && weighted ? (int) NB_METRICS_SEGMENT_ROWS + 100 : 3000;

			init_form(&m, form, weighted);
			for (int i = 0; i < rows; i++)
				add_fixed_row(&m, form, weighted, i);
			buf = serialize(&m, &len);
			CHECK(deserialize(&back, buf, len), "form %d weighted %d not read back", form, weighted);
			buf2 = serialize(&back, &len2);
			CHECK(len == len2 && memcmp(buf, buf2, len) == 0, "form %d weighted %d: other bytes", form, weighted);
			nb_metrics_compute(&m, &r);
			nb_metrics_compute(&back, &rb);
			CHECK(same_results(&r, &rb, &m, &back), "form %d weighted %d: other metrics", form, weighted);
			CHECK(form == FORM_LABELS || isfinite(r.ece), "form %d: no calibration error", form);
			nb_metrics_result_free(&r);
			nb_metrics_result_free(&rb);
			nb_metrics_free(&m);
			nb_metrics_free(&back);
			free(buf);
			free(buf2);
		}
}

static void
test_serial_any_order(void)
{
	/*
	 * Partial states of the same rows (four parts of another size each),
	 * through their serialized form, combined in three orders: the same bits
	 * of every metric for unweighted rows; with weights the same log loss,
	 * Brier score and calibration (exact sums), the confusion's weights
	 * within their stated bound.
	 */
	enum
	{
		PARTS = 4,
		ROWS = 4000
	};
	static const int orders[3][PARTS] = {{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}};

	for (int form = 0; form < FORMS; form++)
		for (int weighted = 0; weighted <= 1; weighted++)
		{
			NbMetricsResult r[3];
			NbMetrics	all[3];

			for (int o = 0; o < 3; o++)
			{
				init_form(&all[o], form, weighted);
				for (int k = 0; k < PARTS; k++)
				{
					int			part = orders[o][k];
					int			lo = part == 0 ? 0 : ROWS / 10 * (part * part);
					int			hi = part == PARTS - 1 ? ROWS : ROWS / 10 * ((part + 1) * (part + 1));
					NbMetrics	m,
								back;
					size_t		len;
					unsigned char *buf;

					init_form(&m, form, weighted);
					/* the rows of a part in another order too */
					for (int i = hi - 1; i >= lo; i--)
						add_fixed_row(&m, form, weighted, o == 1 ? i : lo + hi - 1 - i);
					buf = serialize(&m, &len);
					CHECK(deserialize(&back, buf, len), "not read back");
					nb_metrics_merge(&all[o], &back);
					nb_metrics_free(&m);
					nb_metrics_free(&back);
					free(buf);
				}
				nb_metrics_compute(&all[o], &r[o]);
			}
			for (int o = 1; o < 3; o++)
			{
				if (!weighted)
					CHECK(same_results(&r[0], &r[o], &all[0], &all[o]), "form %d order %d: other metrics", form, o);
				CHECK(same_bits(r[0].log_loss, r[o].log_loss) && same_bits(r[0].brier, r[o].brier) &&
					  same_bits(r[0].ece, r[o].ece), "form %d weighted %d order %d: other sums", form, weighted, o);
				CHECK(fabs(r[0].accuracy - r[o].accuracy) <= 4 * ROWS * DBL_EPSILON,
					  "form %d weighted %d: accuracy %.17g vs %.17g", form, weighted, r[0].accuracy, r[o].accuracy);
			}
			for (int o = 0; o < 3; o++)
			{
				nb_metrics_result_free(&r[o]);
				nb_metrics_free(&all[o]);
			}
		}
}

static void
test_serial_corrupt(void)
{
	/*
	 * Every prefix of a state's bytes is refused, and so is every byte
	 * changed at random in the flags, counts, labels, ids, weights and
	 * probabilities: never a crash (ASan), and what is read is a state the
	 * metrics can be computed of.
	 */
	NbMetrics	m;
	size_t		len;
	unsigned char *buf;

	nb_metrics_init(&m, true, true, true);
	for (int i = 0; i < 40; i++)
		add_fixed_row(&m, FORM_RANKED, true, i);
	buf = serialize(&m, &len);
	for (size_t cut = 0; cut < len; cut++)
	{
		NbMetrics	back;

		CHECK(!deserialize(&back, buf, cut), "a prefix of %zu of %zu bytes read", cut, len);
		nb_metrics_free(&back);
	}
	for (int t = 0; t < 20000; t++)
	{
		unsigned char *bad = malloc(len);
		NbMetrics	back;

		memcpy(bad, buf, len);
		bad[unit_random() % len] ^= (unsigned char) (1u << (unit_random() % 8));
		if (deserialize(&back, bad, len))
		{
			NbMetricsResult r;

			nb_metrics_compute(&back, &r);
			nb_metrics_result_free(&r);
		}
		nb_metrics_free(&back);
		free(bad);
	}
	nb_metrics_free(&m);
	free(buf);
}

static void
test_serial_null_actual(void)
{
	/*
	 * Rows skipped for a NULL actual label are counted: a state without
	 * them has not the flag (its bytes are those of states before it), one
	 * with them reads back its count and writes the same bytes, a merge
	 * adds them up, and the flag with a count of 0 is refused.
	 */
	NbMetrics	m,
				other,
				back;
	size_t		len,
				len2;
	unsigned char *buf,
			   *buf2;

	nb_metrics_init(&m, false, false, false);
	nb_metrics_init(&other, false, false, false);
	for (int i = 0; i < 10; i++)
		add_fixed_row(&m, FORM_LABELS, false, i);
	buf = serialize(&m, &len);
	CHECK((buf[NB_METRICS_SERIAL_HEADER] & 16) == 0, "a state without NULL actual labels has the flag");
	free(buf);
	for (int i = 0; i < 3; i++)
		nb_metrics_add_null_actual(&m);
	buf = serialize(&m, &len);
	CHECK((buf[NB_METRICS_SERIAL_HEADER] & 16) != 0, "no flag for 3 NULL actual labels");
	CHECK(deserialize(&back, buf, len), "not read back");
	CHECK(back.null_actual == 3, "read back %llu NULL actual labels, not 3",
		  (unsigned long long) back.null_actual);
	buf2 = serialize(&back, &len2);
	CHECK(len == len2 && memcmp(buf, buf2, len) == 0, "other bytes written back");
	nb_metrics_add_null_actual(&other);
	add_fixed_row(&other, FORM_LABELS, false, 1);
	nb_metrics_merge(&back, &other);
	CHECK(back.null_actual == 4, "merged %llu NULL actual labels, not 4",
		  (unsigned long long) back.null_actual);
	free(buf2);
	nb_metrics_free(&back);
	memset(buf + len - 8, 0, 8);
	CHECK(!deserialize(&back, buf, len), "the flag with a count of 0 read");
	nb_metrics_free(&back);
	nb_metrics_free(&m);
	nb_metrics_free(&other);
	free(buf);
}

static void
test_calibration_by_hand(void)
{
	/*
	 * Three rows: top probabilities 0.8 (right), 0.65 (right), 0.9
	 * (wrong), weights 1, 2, 1: bins 8, 6 and 9; ECE = (|1 - 0.8| + |2 -
	 * 1.3| + |0 - 0.9|) / 4 = 0.45.  A top probability of exactly 1 is in
	 * the last bin, 0.3 (below the real 0.3) in bin 2 by floor(10 p) = 2.999...
	 */
	const char *labels[2] = {"x", "y"};
	NbMetrics	m;
	NbMetricsResult r;

	nb_metrics_init(&m, true, true, true);
	add_row(&m, "x", labels, (const double[]) {0.8, 0.2}, 2, 1);
	add_row(&m, "y", labels, (const double[]) {0.35, 0.65}, 2, 2);
	add_row(&m, "y", labels, (const double[]) {0.9, 0.1}, 2, 1);
	nb_metrics_compute(&m, &r);
	CHECK_NEAR(r.ece, 0.45, 1e-15, "ECE");
	CHECK(r.bins[8].weight == 1 && r.bins[8].accuracy == 1 && r.bins[8].confidence == 0.8, "bin 8");
	CHECK(r.bins[6].weight == 2 && r.bins[6].accuracy == 1 && r.bins[6].confidence == 0.65, "bin 6");
	CHECK(r.bins[9].weight == 1 && r.bins[9].accuracy == 0 && r.bins[9].confidence == 0.9, "bin 9");
	CHECK(r.bins[0].weight == 0 && isnan(r.bins[0].accuracy) && isnan(r.bins[0].confidence), "bin 0");
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
	nb_metrics_init(&m, true, true, false);
	add_row(&m, "x", labels, (const double[]) {1.0, 0.0}, 2, 1);
	nb_metrics_compute(&m, &r);
	CHECK(r.bins[9].weight == 1 && r.ece == 0, "a probability of 1 in the last bin");
	nb_metrics_result_free(&r);
	nb_metrics_free(&m);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("metrics: labels, averages and zero_division by hand", test_labels_by_hand);
	run("metrics: weights, weight 0 and zero total weight", test_weights_and_empty);
	run("metrics: argmax ties to the first label in byte order", test_argmax_ties);
	run("metrics: ROC AUC and average precision by hand, with ties", test_ranking_by_hand);
	run("metrics: log loss clipping and Brier by hand, unnamed classes", test_log_loss_and_brier);
	run("metrics: AUC against all pairs, merged halves equal the whole", test_ranking_brute_force);
	run("metrics: ranking scores a few units in the last place apart", test_ranking_near_ties);
	run("metrics: negatives outside the positives' scores, one level, unnamed class",
		test_ranking_outside_positives);
	run("metrics: rows in several segments, a column made past the first", test_rows_in_segments);
	run("metrics: rows merged from small states at any point equal rows added one at a time",
		test_small_merges);
	run("metrics: unranked states (log loss summed per row) equal ranked ones", test_unranked_equals_ranked);
	run("metrics: more classes than the initial capacity", test_many_classes_grow);
	run("metrics: cancellation points in the final computation", test_interrupts);
	run("metrics: a grid's states hold fewer labels the more option sets it has", test_grid_max_labels);
	run("metrics: scores that are not probabilities have no log loss or Brier score", test_scores_only);
	run("metrics: calibration bins and ECE by hand", test_calibration_by_hand);
	run("metrics: serialized states read back the same, every form", test_serial_round_trip);
	run("metrics: partial states combined in any order give the same metrics", test_serial_any_order);
	run("metrics: rows of a NULL actual label counted, serialized and merged", test_serial_null_actual);
	run("metrics: truncated or corrupt serialized states are refused, never a crash",
		test_serial_corrupt);
	return unit_done();
}
