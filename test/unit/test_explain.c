/*
 * test_explain.c — unit tests of nb_explain.c: the contribution of each
 * part of a score by hand from the formulas (README "Formulas"), the
 * log-probabilities nb_item_log_prob and nb_boolean_log_prob give, and on
 * random models the identity: the contributions sum to the log posterior
 * odds that nb_scorer_score gives.
 *
 *   ./test_explain            run every test
 *   ./test_explain WORD       run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "model_check.h"
#include "nb_dcm.h"
#include "nb_explain.h"
#include "nb_format.h"
#include "nb_scorer.h"
#include "unit.h"

/* Options: these, the rest their defaults (var_smoothing 1e-9). */
static NbOptions
options(NbKind kind, double alpha, NbPriorMode prior_mode, const double *class_prior)
{
	NbOptions	o;

	nb_options_init(&o);
	o.kind = kind;
	o.alpha = alpha;
	o.alpha_given = true;
	o.prior_mode = prior_mode;
	o.class_prior = class_prior;
	return o;
}

/* A model prepared for scoring, as the server keeps it. */
typedef struct Prepared
{
	unsigned char *buf;
	NbView		view;
	NbIndex		ix;
	NbScorer	sc;
	NbDoc		doc;
} Prepared;

static void
prepare(Prepared *p, unsigned char *buf, size_t size, const NbOptions *o)
{
	char		why[200];

	p->buf = buf;
	if (!open_view(&p->view, buf, size, why, sizeof(why)))
	{
		fprintf(stderr, "prepare: model rejected: %s\n", why);
		abort();
	}
	nb_index_build(&p->ix, &p->view);
	nb_scorer_build(&p->sc, &p->ix, o);
	nb_doc_init(&p->doc, &p->ix);
}

static void
release(Prepared *p)
{
	nb_doc_free(&p->doc);
	nb_scorer_free(&p->sc);
	nb_index_free(&p->ix);
	free(p->buf);
}

/* Tokens of the bag "" into p's document, as the server adds them for this scorer. */
static void
add_text(Prepared *p, const char *const *tokens)
{
	NbTokenRef	refs[MAX_DOC_TOKENS];
	uint32_t	n = 0;

	for (; tokens[n] != NULL; n++)
	{
		refs[n].str = tokens[n];
		refs[n].len = (uint32_t) strlen(tokens[n]);
		refs[n].count = 1;
	}
	nb_scorer_add_tokens(&p->sc, &p->doc, (uint32_t) p->ix.unnamed_bag, refs, n);
}

/* The row of an item, of a part without item (item ignored), or NULL. */
static const NbExplainRow *
find_row(const NbExplainRow *rows, uint64_t n, NbExplainPart part, int64_t item)
{
	for (uint64_t i = 0; i < n; i++)
		if (rows[i].part == part && (part != NB_EXPLAIN_ITEM || rows[i].item == (uint64_t) item))
			return &rows[i];
	return NULL;
}

static int64_t
item_of(Prepared *p, const char *token)
{
	return nbt_index_item(&p->ix, (uint32_t) p->ix.unnamed_bag, token, (uint32_t) strlen(token));
}

static double
sum_rows(const NbExplainRow *rows, uint64_t n)
{
	double		s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += rows[i].contribution;
	return s;
}

/*
 * The toy model (fixtures.h), token by token: N_jc, d_jc, T_c, D_c, F_j.
 * Tokens a b c d; classes ham (0), spam (1).
 */
static const double toy_N[2][4] = {{0, 1, 2, 1}, {3, 1, 1, 0}};
static const double toy_d[2][4] = {{0, 1, 1, 1}, {2, 1, 1, 0}};
static const double toy_T[2] = {4, 5};
static const double toy_D[2] = {1, 2};
static const double toy_F[4] = {3, 2, 3, 1};

/* log theta_jc of the formulas; Bernoulli log t (present) or log(1 - t). */
static double
toy_log_prob(NbKind kind, int c, int j, double a, bool present)
{
	switch (kind)
	{
		case NB_MULTINOMIAL:
			return log((toy_N[c][j] + a) / (toy_T[c] + 4 * a));
		case NB_BERNOULLI:
			{
				double		t = (toy_d[c][j] + a) / (toy_D[c] + 2 * a);

				return present ? log(t) : log(1 - t);
			}
		case NB_COMPLEMENT:
			return log((9 + 4 * a - toy_T[c]) / (toy_F[j] + a - toy_N[c][j]));
		case NB_DCM:
			break;				/* no per-token probability: its rows are tested apart */
	}
	return NAN;
}

/*
 * Document "a a b x" (x unknown) on the toy model, ham against spam and
 * spam against ham: every row by hand, and the identity.
 */
static void
test_toy_by_hand(void)
{
	static const char *const doc[] = {"a", "x", "a", "b", NULL};
	static const double alphas[] = {1, 0.5, 0.01};

	for (int kind = 0; kind < 3; kind++)
		for (int ai = 0; ai < 3; ai++)
			for (int c1 = 0; c1 < 2; c1++)
			{
				double		a = alphas[ai];
				int			c2 = 1 - c1;
				NbOptions	o = options((NbKind) kind, a, NB_PRIOR_FIT, NULL);
				Prepared	p;
				size_t		size;
				unsigned char *buf = serialize_rows(toy, NTOY, &size);
				NbExplainRow rows[8];
				double		logp[2];
				uint64_t	n;
				const NbExplainRow *r;
				double		want;
				double		mult_a = kind == NB_BERNOULLI ? 1 : 2;

				prepare(&p, buf, size, &o);
				nb_doc_begin(&p.doc);
				add_text(&p, doc);
				nb_scorer_score(&p.sc, &p.doc, logp);
				CHECK(nb_explain_max_rows(&p.doc) <= 8, "room");
				n = nb_explain(&p.sc, &p.doc, (uint32_t) c1, (uint32_t) c2, rows);

				/* prior, a (twice), b, and for Bernoulli the absent c and d */
				CHECK(n == (kind == NB_BERNOULLI ? 4u : 3u), "kind %d: %llu rows", kind,
					  (unsigned long long) n);
				r = find_row(rows, n, NB_EXPLAIN_PRIOR, 0);
				CHECK(r != NULL, "no prior row");
				want = kind == NB_COMPLEMENT ? 0 : log(toy_D[c1] / 3) - log(toy_D[c2] / 3);
				CHECK_NEAR(r->contribution, want, 1e-12, "prior");
				r = find_row(rows, n, NB_EXPLAIN_ITEM, item_of(&p, "a"));
				CHECK(r != NULL && r->count == 2, "row of a");
				want = mult_a * (toy_log_prob(kind, c1, 0, a, true) - toy_log_prob(kind, c2, 0, a, true));
				CHECK_NEAR(r->contribution, want, 1e-12, "a");
				r = find_row(rows, n, NB_EXPLAIN_ITEM, item_of(&p, "b"));
				CHECK(r != NULL && r->count == 1, "row of b");
				want = toy_log_prob(kind, c1, 1, a, true) - toy_log_prob(kind, c2, 1, a, true);
				CHECK_NEAR(r->contribution, want, 1e-12, "b");
				r = find_row(rows, n, NB_EXPLAIN_ABSENT, 0);
				CHECK((r != NULL) == (kind == NB_BERNOULLI), "absent row");
				if (r != NULL)
				{
					CHECK(r->count == 2, "absent: %g tokens, not c and d", r->count);
					want = 0;
					for (int j = 2; j < 4; j++)
						want += toy_log_prob(kind, c1, j, a, false) - toy_log_prob(kind, c2, j, a, false);
					CHECK_NEAR(r->contribution, want, 1e-12, "absent");
				}
				for (uint64_t i = 1; i < n; i++)
					CHECK(fabs(rows[i - 1].contribution) >= fabs(rows[i].contribution),
						  "not largest first");
				CHECK_NEAR(sum_rows(rows, n), logp[c1] - logp[c2], 1e-12, "sum");
				release(&p);
			}
}

/* nb_item_log_prob: every token and class of the toy model, every kind. */
static void
test_toy_log_prob(void)
{
	static const char *const tokens[] = {"a", "b", "c", "d"};

	for (int kind = 0; kind < 3; kind++)
		for (int ai = 0; ai < 3; ai++)
		{
			double		a = ai == 0 ? 1 : ai == 1 ? 0.25 : 3;
			NbOptions	o = options((NbKind) kind, a, NB_PRIOR_UNIFORM, NULL);
			Prepared	p;
			size_t		size;
			unsigned char *buf = serialize_rows(toy, NTOY, &size);

			prepare(&p, buf, size, &o);
			for (int j = 0; j < 4; j++)
			{
				double		lp[2];

				nb_item_log_prob(&p.sc, (uint32_t) p.ix.unnamed_bag, (uint32_t) item_of(&p, tokens[j]), lp);
				for (int c = 0; c < 2; c++)
					CHECK_NEAR(lp[c], toy_log_prob(kind, c, j, a, true), 1e-13, tokens[j]);
			}
			release(&p);
		}
}

/*
 * Mixed features (score_rows_mix in fixtures.h, classes a and b only):
 * categorical, boolean and Gaussian rows by hand, a against b.
 *   color: K = 2; N_a = 3 (red 3), N_b = 2 (red 1, blue 1)
 *   flag: a 2 true of 3; b 0 of 1.
 *   x: a mean 2, variance 1; b mean 12, variance 4; floor 1e-9 times the
 *   largest variance, 1, 3, 10, 14 over all rows: 27.5.
 */
static void
test_mixed_by_hand(void)
{
	NbTrainer  *t = nb_trainer_create();
	size_t		size;
	unsigned char *buf;
	NbOptions	o = options(NB_MULTINOMIAL, 1, NB_PRIOR_FIT, NULL);
	Prepared	p;
	NbExplainRow rows[8];
	double		logp[2];
	uint64_t	n;
	double		eps = 1e-9 * 27.5;
	double		want;
	uint32_t	color,
				flag,
				x;
	const char *values[] = {"blue", "green"};

	for (int i = 0; i < 5; i++)
		train_mix(t, &score_rows_mix[i]);
	buf = serialize(t, &size);
	nb_trainer_destroy(t);
	prepare(&p, buf, size, &o);
	color = (uint32_t) nb_index_feature(&p.ix, "color", 5);
	flag = (uint32_t) nb_index_feature(&p.ix, "flag", 4);
	x = (uint32_t) nb_index_feature(&p.ix, "x", 1);

	for (int v = 0; v < 2; v++)
	{
		NbTokenRef	ref = {values[v], (uint32_t) strlen(values[v]), 1};
		const NbExplainRow *r;

		nb_doc_begin(&p.doc);
		nb_scorer_add_tokens(&p.sc, &p.doc, color, &ref, 1);
		nb_doc_add_value(&p.doc, flag, 1);
		nb_doc_add_value(&p.doc, x, 5);
		nb_scorer_score(&p.sc, &p.doc, logp);
		n = nb_explain(&p.sc, &p.doc, 0, 1, rows);
		CHECK(n == 4, "%llu rows", (unsigned long long) n);
		CHECK_NEAR(sum_rows(rows, n), logp[0] - logp[1], 1e-12, "sum");
		for (uint64_t i = 0; i < n; i++)
		{
			r = &rows[i];
			if (r->part == NB_EXPLAIN_PRIOR)
				CHECK_NEAR(r->contribution, log(3.0 / 2.0), 1e-12, "prior");
			else if (r->feature == color)
			{
				/* blue is known (an item row); green never seen (a value row) */
				CHECK(r->part == (v == 0 ? NB_EXPLAIN_ITEM : NB_EXPLAIN_VALUE), "color row part");
				want = v == 0 ? log((0 + 1.0) / (3 + 2)) - log((1 + 1.0) / (2 + 2)) :
					log(1.0 / (3 + 2)) - log(1.0 / (2 + 2));
				CHECK_NEAR(r->contribution, want, 1e-12, values[v]);
			}
			else if (r->feature == flag)
				CHECK_NEAR(r->contribution, log(3.0 / 5) - log(1.0 / 3), 1e-12, "flag");
			else
			{
				double		va = 1 + eps,
							vb = 4 + eps;

				CHECK(r->feature == x, "row of feature %u", r->feature);
				want = (-0.5 * log(2 * M_PI * va) - 9 / (2 * va)) -
					(-0.5 * log(2 * M_PI * vb) - 49 / (2 * vb));
				CHECK_NEAR(r->contribution, want, 1e-12, "x");
			}
		}
	}
	/* boolean log-probabilities: log t and log(1 - t) */
	{
		double		lp[3];

		nb_boolean_log_prob(&p.sc, flag, 1, lp);
		CHECK_NEAR(lp[0], log(3.0 / 5), 1e-13, "flag true, a");
		CHECK_NEAR(lp[1], log(1.0 / 3), 1e-13, "flag true, b");
		nb_boolean_log_prob(&p.sc, flag, 0, lp);
		CHECK_NEAR(lp[0], log(2.0 / 5), 1e-13, "flag false, a");
		CHECK_NEAR(lp[1], log(2.0 / 3), 1e-13, "flag false, b");
		nb_item_log_prob(&p.sc, color, (uint32_t) nbt_index_item(&p.ix, color, "red", 3), lp);
		CHECK_NEAR(lp[0], log(4.0 / 5), 1e-13, "color red, a");
		CHECK_NEAR(lp[1], log(2.0 / 4), 1e-13, "color red, b");
	}
	release(&p);
}

/*
 * alpha = 0, toy model.  "d" rules out spam, "a" ham: with both, the two
 * classes keep probability (one zero factor each) and the rows show their
 * remaining factors; with "a" alone ham's probability is 0 and its row is
 * +infinity (spam against ham).
 */
static void
test_alpha0(void)
{
	static const char *const both[] = {"a", "d", NULL};
	static const char *const only_a[] = {"a", "b", NULL};
	NbOptions	o = options(NB_MULTINOMIAL, 0, NB_PRIOR_FIT, NULL);
	Prepared	p;
	size_t		size;
	unsigned char *buf = serialize_rows(toy, NTOY, &size);
	NbExplainRow rows[8];
	double		logp[2];
	uint64_t	n;
	const NbExplainRow *r;

	prepare(&p, buf, size, &o);
	nb_doc_begin(&p.doc);
	add_text(&p, both);
	nb_scorer_score(&p.sc, &p.doc, logp);
	CHECK(isfinite(logp[0]) && isfinite(logp[1]), "both classes possible");
	n = nb_explain(&p.sc, &p.doc, SPAM, HAM, rows);
	CHECK_NEAR(sum_rows(rows, n), logp[SPAM] - logp[HAM], 1e-12, "sum");
	/* a: spam 3/5, ham's zero factor counts as its coefficient 1 (over T_ham = 4) */
	r = find_row(rows, n, NB_EXPLAIN_ITEM, item_of(&p, "a"));
	CHECK(r != NULL, "row of a");
	CHECK_NEAR(r->contribution, log(3.0 / 5) - log(1.0 / 4), 1e-12, "a");

	nb_doc_begin(&p.doc);
	add_text(&p, only_a);
	nb_scorer_score(&p.sc, &p.doc, logp);
	CHECK(logp[HAM] == -INFINITY, "ham ruled out");
	n = nb_explain(&p.sc, &p.doc, SPAM, HAM, rows);
	CHECK(rows[0].contribution == INFINITY && rows[0].item == (uint64_t) item_of(&p, "a"),
		  "a first, +infinity");
	CHECK(sum_rows(rows, n) == INFINITY, "sum +infinity");
	r = find_row(rows, n, NB_EXPLAIN_ITEM, item_of(&p, "b"));
	CHECK(r != NULL, "row of b");
	CHECK_NEAR(r->contribution, log(1.0 / 5) - log(1.0 / 4), 1e-12, "b");
	/* and its log-probability */
	{
		double		lp[2];

		nb_item_log_prob(&p.sc, (uint32_t) p.ix.unnamed_bag, (uint32_t) item_of(&p, "a"), lp);
		CHECK(lp[HAM] == -INFINITY, "log 0");
		CHECK_NEAR(lp[SPAM], log(3.0 / 5), 1e-13, "a, spam");
	}
	release(&p);
}

/*
 * DCM by hand (dcm_toy of fixtures.h, alpha 0.5), the
 * document x twice, w once and an unknown token.  Each known token's row is
 * its log Gamma(beta + x) - log Gamma(beta) of a less that of b, the bag's
 * length row log Gamma(s) - log Gamma(s + 3) of a less that of b.
 */
static void
test_dcm_by_hand(void)
{
	static const char *const doc[] = {"x", "w", "q", "x", NULL};
	double		alpha = 0.5;
	DcmToy		t = dcm_toy(alpha);
	/* beta of w and x per class; s over the vocabulary w, x, y, z */
	double		ba_w = t.beta[0][0],
				ba_x = t.beta[0][1],
				bb_w = t.beta[1][0],
				bb_x = t.beta[1][1];
	double		sa = t.s[0];
	double		sb = t.s[1];
	NbOptions	o = options(NB_DCM, alpha, NB_PRIOR_FIT, NULL);
	size_t		size;
	unsigned char *buf = serialize_rows(dcm_rows, NDCM, &size);
	Prepared	p;
	NbExplainRow rows[8];
	const NbExplainRow *r;
	double		logp[2];
	uint64_t	n;
	double		want;

	prepare(&p, buf, size, &o);
	nb_doc_begin(&p.doc);
	add_text(&p, doc);
	nb_scorer_score(&p.sc, &p.doc, logp);
	CHECK_OR_DONE(nb_explain_max_rows(&p.doc) <= 8, "room");
	n = nb_explain(&p.sc, &p.doc, 0, 1, rows);
	CHECK(n == 4, "%llu rows: prior, x, w, length", (unsigned long long) n);

	r = find_row(rows, n, NB_EXPLAIN_PRIOR, 0);
	CHECK_OR_DONE(r != NULL, "prior row");
	CHECK_NEAR(r->contribution, log(3.0 / 5) - log(2.0 / 5), 1e-14, "prior");
	r = find_row(rows, n, NB_EXPLAIN_ITEM, item_of(&p, "x"));
	CHECK_OR_DONE(r != NULL, "x row");
	want = (lgamma(ba_x + 2) - lgamma(ba_x)) - (lgamma(bb_x + 2) - lgamma(bb_x));
	CHECK(r->count == 2, "x count %g", r->count);
	CHECK_NEAR(r->contribution, want, 1e-12, "x");
	r = find_row(rows, n, NB_EXPLAIN_ITEM, item_of(&p, "w"));
	CHECK_OR_DONE(r != NULL, "w row");
	want = log(ba_w) - log(bb_w);
	CHECK(r->count == 1, "w count %g", r->count);
	CHECK_NEAR(r->contribution, want, 1e-12, "w");
	r = find_row(rows, n, NB_EXPLAIN_LENGTH, 0);
	CHECK_OR_DONE(r != NULL, "length row");
	want = (lgamma(sa) - lgamma(sa + 3)) - (lgamma(sb) - lgamma(sb + 3));
	CHECK(r->count == 3 && r->feature == (uint32_t) p.ix.unnamed_bag,
		  "length row: count %g feature %u", r->count, r->feature);
	CHECK_NEAR(r->contribution, want, 1e-12, "length");
	CHECK_NEAR(sum_rows(rows, n), logp[0] - logp[1], 1e-12, "sum");
done:
	release(&p);
}

/*
 * Random mixed models (every feature type, several bags, weights, tokens
 * repeated and unknown) with 2..9 classes (rows and entries), documents
 * from other random rows: for every kind (complement also with norm,
 * Bernoulli also with an asymmetric beta; the DCM needs alpha > 0), alpha and prior, and every pair
 * of classes with a positive probability, the contributions sum to the log
 * odds; with c2's probability 0 the sum is +infinity or undefined.
 */
static void
doc_from_mix(Prepared *p, const RandMix *r)
{
	static const char *const colors[] = {"red", "green", "blue", "", "\xc3\xa9", "x y", "q"};
	char		tok[6][8];
	NbTokenRef	refs[6];
	int64_t		j;

	nb_doc_begin(&p->doc);
	if (r->text && p->ix.unnamed_bag >= 0)
	{
		for (uint32_t k = 0; k < r->ntext; k++)
		{
			refs[k].len = (uint32_t) snprintf(tok[k], sizeof(tok[k]), "w%u", r->texttok[k] % 25);
			refs[k].str = tok[k];
			refs[k].count = 1;
		}
		nb_scorer_add_tokens(&p->sc, &p->doc, (uint32_t) p->ix.unnamed_bag, refs, r->ntext);
	}
	if (r->color >= 0 && (j = nb_index_feature(&p->ix, "color", 5)) >= 0)
	{
		NbTokenRef	ref = {colors[r->color], (uint32_t) strlen(colors[r->color]), 1};

		nb_scorer_add_tokens(&p->sc, &p->doc, (uint32_t) j, &ref, 1);
	}
	if (r->flag >= 0 && (j = nb_index_feature(&p->ix, "flag", 4)) >= 0)
		nb_doc_add_value(&p->doc, (uint32_t) j, r->flag);
	if (r->has_x && (j = nb_index_feature(&p->ix, "x", 1)) >= 0)
		nb_doc_add_value(&p->doc, (uint32_t) j, r->x);
	if (r->has_y && (j = nb_index_feature(&p->ix, "y", 1)) >= 0)
		nb_doc_add_value(&p->doc, (uint32_t) j, r->y);
	if (r->ntags != UINT32_MAX && (j = nb_index_feature(&p->ix, "tags", 4)) >= 0)
	{
		for (uint32_t k = 0; k < r->ntags; k++)
		{
			refs[k].len = (uint32_t) snprintf(tok[k], sizeof(tok[k]), "t%u", r->tags[k] % 14);
			refs[k].str = tok[k];
			refs[k].count = 1 + k % 3;
		}
		nb_scorer_add_tokens(&p->sc, &p->doc, (uint32_t) j, refs, r->ntags);
	}
}

static void
test_random_identity(void)
{
	static const double alphas[] = {1, 0.3, 1e-3, 0};
	uint64_t	seed = 11;
	uint64_t	checked = 0,
				infinite = 0,
				dcm_checked = 0;

	for (int iter = 0; iter < 40; iter++)
	{
		int			nclasses = 2 + (int) (nbt_rand(&seed) % 8);
		RandMix		train[40];
		RandMix		docs[12];
		double		prior[9];
		bool		text_only = iter % 3 == 0;
		bool		has_lengths;
		size_t		size;
		unsigned char *buf;

		rand_mix(train, 40, nclasses, nbt_rand(&seed), false);
		rand_mix(docs, 12, nclasses, nbt_rand(&seed), false);
		if (text_only)
			for (int i = 0; i < 40; i++)
			{
				train[i].text = true;
				train[i].color = train[i].flag = -1;
				train[i].has_x = train[i].has_y = train[i].has_vec = false;
				train[i].ntags = UINT32_MAX;
			}
		buf = serialize_rand_mix(train, NULL, 40, &size);
		{
			NbView		v;
			char		why[200];

			has_lengths = open_view(&v, buf, size, why, sizeof(why)) && nb_view_has_lengths(&v);
		}
		for (int c = 0; c < 9; c++)
			prior[c] = (double) (nbt_rand(&seed) % 4);
		prior[0] = 1;

		/* the kinds, then complement with norm, Bernoulli with an asymmetric beta, the DCM */
		for (int variant = 0; variant < 6; variant++)
			for (int ai = 0; ai < 4; ai++)
				for (int pm = 0; pm < 3; pm++)
				{
					int			kind = variant == 3 ? NB_COMPLEMENT : variant == 4 ? NB_BERNOULLI :
						variant == 5 ? NB_DCM : variant;
					NbOptions	o = options((NbKind) kind, alphas[ai], (NbPriorMode) pm,
											pm == NB_PRIOR_GIVEN ? prior : NULL);
					Prepared	p;
					unsigned char *copy;

					if (kind == NB_COMPLEMENT && !text_only)
						continue;
					if (kind == NB_DCM && (alphas[ai] == 0 || !has_lengths))
						continue;
					/* norm needs positive pseudo-counts */
					if (variant == 3 && alphas[ai] == 0)
						continue;
					o.norm = variant == 3;
					if (variant == 4)
					{
						o.beta_given = true;
						o.beta[0] = 2;
						o.beta[1] = alphas[ai];
					}
					copy = malloc(size);

					memcpy(copy, buf, size);
					prepare(&p, copy, size, &o);
					for (int d = 0; d < 12; d++)
					{
						double		logp[9];
						NbExplainRow *rows;
						int64_t		best;

						doc_from_mix(&p, &docs[d]);
						best = nb_scorer_score(&p.sc, &p.doc, logp);
						rows = malloc(sizeof(NbExplainRow) * nb_explain_max_rows(&p.doc));
						for (uint32_t c2 = 0; c2 < p.ix.n_classes; c2++)
						{
							uint64_t	n = nb_explain(&p.sc, &p.doc, (uint32_t) best, c2, rows);
							double		sum = sum_rows(rows, n);
							double		odds = logp[best] - logp[c2];

							if (logp[c2] == -INFINITY)
							{
								infinite++;
								CHECK_OR_DONE(sum == INFINITY || isnan(sum),
											  "iter %d: sum %.17g with c2 impossible", iter, sum);
								continue;
							}
							checked++;
							if (kind == NB_DCM)
								dcm_checked++;
							CHECK_OR_DONE(fabs(sum - odds) <= 1e-9 * fmax(1, fabs(odds)),
										  "iter %d variant %d alpha %g prior %d doc %d c2 %u: sum %.17g, log odds %.17g",
										  iter, variant, alphas[ai], pm, d, c2, sum, odds);
						}
				done:
						free(rows);
						if (unit_failed())
							break;
					}
					release(&p);
					if (unit_failed())
					{
						free(buf);
						return;
					}
				}
		free(buf);
	}
	note("%llu explanations summed to their log odds (%llu dcm), %llu against a class of probability 0",
		 (unsigned long long) checked, (unsigned long long) dcm_checked, (unsigned long long) infinite);
	CHECK(checked > 10000 && dcm_checked > 1000 && infinite > 0, "only %llu, %llu and %llu",
		  (unsigned long long) checked, (unsigned long long) dcm_checked, (unsigned long long) infinite);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("explain: toy model, every row by hand, every kind and alpha", test_toy_by_hand);
	run("explain: item log-probabilities by hand, every kind", test_toy_log_prob);
	run("explain: categorical (seen, unseen), boolean, Gaussian rows by hand", test_mixed_by_hand);
	run("explain: alpha 0, both classes possible or the runner-up ruled out", test_alpha0);
	run("explain: dcm token and length rows by hand", test_dcm_by_hand);
	run("explain: random mixed models, contributions sum to the log odds", test_random_identity);
	return unit_done();
}
