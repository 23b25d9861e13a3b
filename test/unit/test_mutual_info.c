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
#include <stdlib.h>

#include "fixtures.h"
#include "nb_format.h"
#include "nb_mutual_info.h"
#include "unit.h"

/* ---------------------------------------------------------------- */
/* mutual information                                                */

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
	/* features in byte order: color 0, flag 1, x 2 */
	CHECK(n == 3, "%llu rows", (unsigned long long) n);
	CHECK(icolor > iflag, "hand values out of order");
	CHECK(rows[0].feature == 0 && rows[0].whole_feature && rows[0].item == 0, "row 0: feature %u", rows[0].feature);
	CHECK_NEAR(rows[0].mi, icolor, 1e-12, "I(color)");
	CHECK(rows[1].feature == 1 && rows[1].whole_feature && rows[1].item == 2, "row 1: feature %u item %u",
		  rows[1].feature, rows[1].item);
	CHECK_NEAR(rows[1].mi, iflag, 1e-12, "I(flag)");
	CHECK(rows[2].feature == 2 && rows[2].whole_feature && isnan(rows[2].mi), "row 2: feature %u, mi %g",
		  rows[2].feature, rows[2].mi);
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
	CHECK(rows[4].feature == 3 && isnan(rows[4].mi), "Gaussian x not last");
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
	run("mutual info v2: categorical and boolean plug-in by hand, Gaussian NaN last",
		test_mutual_info_mixed);
	run("mutual info v2: named bag (D_c = rows with the bag) by hand", test_mutual_info_named_bag);
	return unit_done();
}
