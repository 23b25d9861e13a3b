/*
 * test_scorer.c — unit tests of the scorer (src/nb_scorer.c): the
 * vocabulary index, documents and posteriors of every kind and feature type,
 * by hand and against model_check.c's reference.
 *
 *   ./test_scorer            run every test
 *   ./test_scorer WORD       run the tests whose name contains WORD
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
#include "model_check.h"
#include "nb_format.h"
#include "nb_scorer.h"
#include "nb_trainer.h"
#include "unit.h"

/* A text document (the bag "") in an NbDoc (one batch, as the server does). */
static void
make_doc(NbIndex *ix, const char *const *tokens, NbDoc *doc)
{
	NbTokenRef	refs[MAX_DOC_TOKENS];
	uint32_t	n = 0;

	for (int i = 0; tokens[i] != NULL; i++)
	{
		refs[n].str = tokens[i];
		refs[n].len = (uint32_t) strlen(tokens[i]);
		refs[n].count = 1;
		n++;
	}
	nb_doc_begin(doc);
	if (ix->unnamed_bag < 0)
		abort();
	nb_doc_add_tokens(ix, doc, (uint32_t) ix->unnamed_bag, refs, n);
}

/*
 * Posterior of a document (given as tokens) under a model given as rows.
 * post[] receives probabilities (exp of the log posteriors); returns best.
 */
typedef struct Scored
{
	int64_t		best;
	double		post[8];
	double		logp[8];
	bool		any_nan;
} Scored;

static Scored
score_rows_opts(const Row *rows, int nrows, const NbOptions *o, const char *const *tokens)
{
	size_t		size;
	unsigned char *buf = serialize_rows(rows, nrows, &size);
	NbView		v;
	NbIndex		ix;
	NbScorer	sc;
	NbDoc		doc;
	char		why[200];
	Scored		r;

	memset(&r, 0, sizeof(r));
	if (!open_view(&v, buf, size, why, sizeof(why)))
	{
		fprintf(stderr, "score_rows: model rejected: %s\n", why);
		abort();
	}
	nb_index_build(&ix, &v);
	nb_scorer_build(&sc, &ix, o);
	nb_doc_init(&doc, &ix);
	make_doc(&ix, tokens, &doc);
	r.best = nb_scorer_score(&sc, &doc, r.logp);
	nb_doc_free(&doc);
	for (uint32_t c = 0; c < v.n_classes && c < 8; c++)
	{
		r.post[c] = r.logp[c] == -INFINITY ? 0 : exp(r.logp[c]);
		if (isnan(r.logp[c]))
			r.any_nan = true;
	}
	nb_scorer_free(&sc);
	nb_index_free(&ix);
	free(buf);
	return r;
}

static Scored
score_rows(const Row *rows, int nrows, NbKind kind, double alpha, NbPriorMode pm,
		   const double *class_prior, const char *const *tokens)
{
	NbOptions	o = {.kind = kind, .alpha = alpha, .prior_mode = pm, .class_prior = class_prior,
		.var_smoothing = 1e-9};

	return score_rows_opts(rows, nrows, &o, tokens);
}

static const char *const doc_acc[] = {"a", "c", "c", NULL};
static const char *const doc_ad[] = {"a", "d", NULL};
static const char *const doc_aad[] = {"a", "a", "d", NULL};
static const char *const doc_da[] = {"d", "a", NULL};
static const char *const doc_d[] = {"d", NULL};
static const char *const doc_empty[] = {NULL};

/* ---------------------------------------------------------------- */
/* scorer                                                            */

static void
test_scorer_multinomial(void)
{
	/*
	 * alpha = 1, fitted prior, document a c c (x_a = 1, x_c = 2):
	 *   theta_jc = (N_jc + 1) / (T_c + 4)
	 *   ham : a 1/8, c 3/8;  1/3 * 1/8 * (3/8)^2 = 3/512
	 *   spam: a 4/9, c 2/9;  2/3 * 4/9 * (2/9)^2 = 32/2187
	 *   P(ham) = 3/512 / (3/512 + 32/2187) = 6561 / 22945
	 */
	Scored		r = score_rows(toy, NTOY, NB_MULTINOMIAL, 1, NB_PRIOR_FIT, NULL, doc_acc);

	CHECK_NEAR(r.post[HAM], 6561.0 / 22945, 1e-12, "P(ham)");
	CHECK_NEAR(r.post[SPAM], 16384.0 / 22945, 1e-12, "P(spam)");
	CHECK_NEAR(r.logp[HAM], log(6561.0 / 22945), 1e-12, "log P(ham)");
	CHECK(r.best == SPAM, "best %lld", (long long) r.best);

	/*
	 * alpha = 0.5: theta = (N + 0.5) / (T_c + 2)
	 *   ham : a 0.5/6, c 2.5/6: 1/3 * (1/12) * (5/12)^2 = 25/5184
	 *   spam: a 3.5/7 = 1/2, c 1.5/7 = 3/14: 2/3 * 1/2 * 9/196 = 3/196
	 *   P(ham) = (25/5184) / (25/5184 + 3/196)
	 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0.5, NB_PRIOR_FIT, NULL, doc_acc);
	CHECK_NEAR(r.post[HAM], (25.0 / 5184) / (25.0 / 5184 + 3.0 / 196), 1e-12, "P(ham), alpha 0.5");

	/* empty document: the prior */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 1, NB_PRIOR_FIT, NULL, doc_empty);
	CHECK_NEAR(r.post[HAM], 1.0 / 3, 1e-12, "P(ham | empty doc)");
}

static void
test_scorer_bernoulli(void)
{
	/*
	 * alpha = 1: t_jc = (d_jc + 1) / (D_c + 2); document {a, c}: b, d absent.
	 *   ham  (D=1): t = a 1/3, b 2/3, c 2/3, d 2/3
	 *         1/3 * 1/3 * (1 - 2/3) * 2/3 * (1 - 2/3) = 2/243
	 *   spam (D=2): t = a 3/4, b 1/2, c 1/2, d 1/4
	 *         2/3 * 3/4 * (1 - 1/2) * 1/2 * (1 - 1/4) = 3/32
	 *   P(ham) = (2/243) / (2/243 + 3/32) = 64 / 793
	 * Repeating c changes nothing (presence only).
	 */
	Scored		r = score_rows(toy, NTOY, NB_BERNOULLI, 1, NB_PRIOR_FIT, NULL, doc_acc);

	CHECK_NEAR(r.post[HAM], 64.0 / 793, 1e-12, "P(ham)");
	CHECK_NEAR(r.post[SPAM], 729.0 / 793, 1e-12, "P(spam)");
	CHECK(r.best == SPAM, "best %lld", (long long) r.best);

	/*
	 * empty document, every token absent:
	 *   ham : 1/3 * (2/3)(1/3)(1/3)(1/3) = 2/243
	 *   spam: 2/3 * (1/4)(1/2)(1/2)(3/4) = 1/32
	 *   P(ham) = (2/243) / (2/243 + 1/32) = 64 / 307
	 */
	r = score_rows(toy, NTOY, NB_BERNOULLI, 1, NB_PRIOR_FIT, NULL, doc_empty);
	CHECK_NEAR(r.post[HAM], 64.0 / 307, 1e-12, "P(ham | empty doc)");
}

static void
test_scorer_complement(void)
{
	/*
	 * alpha = 1: score_c = sum_j x_j log((T + aV - T_c) / (F_j + a - N_jc)),
	 * T + aV = 13, no prior (2 classes).  Document a c c:
	 *   ham : numerator 13 - 4 = 9; a: 3+1-0 = 4, c: 3+1-2 = 2
	 *         (9/4) * (9/2)^2 = 729/16
	 *   spam: numerator 13 - 5 = 8; a: 3+1-3 = 1, c: 3+1-1 = 3
	 *         8 * (8/3)^2 = 512/9
	 *   P(ham) = (729/16) / (729/16 + 512/9) = 6561 / 14753
	 */
	Scored		r = score_rows(toy, NTOY, NB_COMPLEMENT, 1, NB_PRIOR_FIT, NULL, doc_acc);

	CHECK_NEAR(r.post[HAM], 6561.0 / 14753, 1e-12, "P(ham)");
	CHECK_NEAR(r.post[SPAM], 8192.0 / 14753, 1e-12, "P(spam)");
	CHECK(r.best == SPAM, "best %lld", (long long) r.best);
	/* the class prior is not used: uniform gives the same */
	r = score_rows(toy, NTOY, NB_COMPLEMENT, 1, NB_PRIOR_UNIFORM, NULL, doc_acc);
	CHECK_NEAR(r.post[HAM], 6561.0 / 14753, 1e-12, "P(ham), uniform prior");
}

static void
test_scorer_priors(void)
{
	static const double ham0[] = {0, 1};
	static const double three_one[] = {3, 1};
	Scored		r;

	/*
	 * uniform prior, multinomial alpha = 1, document a c c:
	 *   ham 1/2 * 1/8 * 9/64, spam 1/2 * 4/9 * 4/81
	 *   P(ham) = (9/512) / (9/512 + 16/729) = 6561 / 14753
	 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 1, NB_PRIOR_UNIFORM, NULL, doc_acc);
	CHECK_NEAR(r.post[HAM], 6561.0 / 14753, 1e-12, "P(ham), uniform");
	/* given {ham: 3, spam: 1}: P(ham) = (27/2048) / (27/2048 + 4/729) = 19683 / 27875 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 1, NB_PRIOR_GIVEN, three_one, doc_acc);
	CHECK_NEAR(r.post[HAM], 19683.0 / 27875, 1e-12, "P(ham), given 3:1");
	CHECK(r.best == HAM, "best %lld with prior 3:1", (long long) r.best);
	/* given {ham: 0}: ham is excluded even where it would win */
	r = score_rows(toy, NTOY, NB_BERNOULLI, 1, NB_PRIOR_GIVEN, ham0, doc_d);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1 && r.best == SPAM,
		  "prior 0: log P(ham) = %g, P(spam) = %g", r.logp[HAM], r.post[SPAM]);
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0, NB_PRIOR_GIVEN, ham0, doc_d);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1 && r.best == SPAM,
		  "prior 0, alpha 0: log P(ham) = %g, P(spam) = %g", r.logp[HAM], r.post[SPAM]);
}

static void
test_scorer_alpha0(void)
{
	Scored		r;

	/*
	 * Multinomial, alpha -> 0: theta_jc = (N_jc + a) / (T_c + 4a).
	 * a c c: ham has theta_a ~ a/4 (one zero factor), spam none -> spam 1.
	 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0, NB_PRIOR_FIT, NULL, doc_acc);
	CHECK(r.logp[HAM] == -INFINITY && r.logp[SPAM] == 0 && r.best == SPAM,
		  "a c c: log P = %g, %g", r.logp[HAM], r.logp[SPAM]);
	/*
	 * a d: both have one zero factor; the rest decides:
	 *   ham : 1/3 * (a/4) * (1/4)   -> 1/48 a
	 *   spam: 2/3 * (3/5) * (a/5)   -> 2/25 a
	 *   P(ham) = (1/48) / (1/48 + 2/25) = 25/121
	 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0, NB_PRIOR_FIT, NULL, doc_ad);
	CHECK_NEAR(r.post[HAM], 25.0 / 121, 1e-12, "a d: P(ham)");
	CHECK(r.best == SPAM, "a d: best %lld", (long long) r.best);
	/* a a d: ham has two zero factors, spam one -> spam 1 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0, NB_PRIOR_FIT, NULL, doc_aad);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1, "a a d: log P(ham) = %g", r.logp[HAM]);

	/*
	 * Bernoulli, alpha -> 0: t_jc = d_jc / D_c:
	 *   ham  t = a 0, b 1, c 1, d 1;   spam t = a 1, b 1/2, c 1/2, d 0.
	 * {a, c}: ham zero factors a, (1 - t_b), (1 - t_d) = 3; spam none -> spam 1.
	 */
	r = score_rows(toy, NTOY, NB_BERNOULLI, 0, NB_PRIOR_FIT, NULL, doc_acc);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1, "bernoulli {a,c}: log P(ham) = %g", r.logp[HAM]);
	/*
	 * {d}: ham: 1 - t_b ~ a/1, 1 - t_c ~ a/1 (2 zero factors), rest 1; prior 1/3
	 *      spam: 1 - t_a ~ a/2, t_d ~ a/2 (2 zero factors), (1/2)(1/2) for b, c;
	 *            prior 2/3: 2/3 * 1/2 * 1/2 * 1/2 * 1/2 = 1/24
	 *   P(ham) = (1/3) / (1/3 + 1/24) = 8/9
	 */
	r = score_rows(toy, NTOY, NB_BERNOULLI, 0, NB_PRIOR_FIT, NULL, doc_d);
	CHECK_NEAR(r.post[HAM], 8.0 / 9, 1e-12, "bernoulli {d}: P(ham)");
	CHECK(r.best == HAM, "bernoulli {d}: best %lld", (long long) r.best);

	/*
	 * Complement, alpha -> 0: ham numerator 9 - 4 = 5, spam 9 - 5 = 4.
	 * a c c: spam's a-denominator F_a - N_a,spam = 0 -> spam's score -> +inf: spam 1.
	 */
	r = score_rows(toy, NTOY, NB_COMPLEMENT, 0, NB_PRIOR_FIT, NULL, doc_acc);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1, "complement a c c: log P(ham) = %g", r.logp[HAM]);
	/*
	 * d a: ham : d: 5 / (1 - 1 = a), a: 5 / 3     -> (25/3) / a
	 *      spam: d: 4 / 1,         a: 4 / (3 - 3 = a) -> 16 / a
	 *   P(ham) = (25/3) / (25/3 + 16) = 25/73
	 */
	r = score_rows(toy, NTOY, NB_COMPLEMENT, 0, NB_PRIOR_FIT, NULL, doc_da);
	CHECK_NEAR(r.post[HAM], 25.0 / 73, 1e-12, "complement d a: P(ham)");
	for (int kind = 0; kind < 3; kind++)
	{
		const char *const *docs[] = {doc_acc, doc_ad, doc_aad, doc_d, doc_empty};

		for (int d = 0; d < 5; d++)
		{
			r = score_rows(toy, NTOY, (NbKind) kind, 0, NB_PRIOR_FIT, NULL, docs[d]);
			CHECK(!r.any_nan && fabs(r.post[0] + r.post[1] - 1) < 1e-12,
				  "kind %d doc %d: P = %g, %g", kind, d, r.post[0], r.post[1]);
		}
	}
}

static const char *const doc_x[] = {"x", NULL};

static void
test_scorer_alpha0_empty_class_multinomial(void)
{
	static const double alphas[] = {1, 0.5, 1e-3, 1e-9, 0};
	Scored		r;

	for (int i = 0; i < 5; i++)
	{
		r = score_rows(empty_full, 2, NB_MULTINOMIAL, alphas[i], NB_PRIOR_FIT, NULL, doc_x);
		CHECK_NEAR(r.post[0], 0.5, 1e-9,
				   alphas[i] == 0 ? "alpha=0: P(empty) (theta_x,empty = a/(T_c + aV) loses the 1/V)" :
				   "alpha>0: P(empty)");
	}
}

/*
 * Complement with the same model, document "x":
 *   empty: (T + aV - 0) / (F_x + a - 0)   = (2 + 2a) / (1 + a) = 2
 *   full : (T + aV - 2) / (F_x + a - 1)   = 2a / a            = 2
 * so 1/2, 1/2 for every a > 0 and in the limit.
 */
static void
test_scorer_alpha0_empty_class_complement(void)
{
	static const double alphas[] = {1, 0.5, 1e-3, 1e-9, 0};
	Scored		r;

	for (int i = 0; i < 5; i++)
	{
		r = score_rows(empty_full, 2, NB_COMPLEMENT, alphas[i], NB_PRIOR_FIT, NULL, doc_x);
		CHECK_NEAR(r.post[0], 0.5, 1e-9,
				   alphas[i] == 0 ? "alpha=0: P(empty) (numerator T + aV - T_c = aV loses the V)" :
				   "alpha>0: P(empty)");
	}
}

static void
test_scorer_ties(void)
{
	/* symmetric classes: exact ties go to the lowest class index */
	static const Row sym[] = {
		{"b", 1, {"t", "u"}},
		{"a", 1, {"t", "v"}},
		{"c", 2, {"w"}},
	};
	static const char *const doc_t[] = {"t", NULL};
	static const double equal[] = {1, 1, 1};

	for (int kind = 0; kind < 3; kind++)
		for (int a = 0; a < 2; a++)
		{
			Scored		r = score_rows(sym, 2, (NbKind) kind, a, NB_PRIOR_FIT, NULL, doc_t);

			CHECK(r.best == 0, "kind %d alpha %d: best %lld", kind, a, (long long) r.best);
			CHECK(r.logp[0] == r.logp[1], "kind %d alpha %d: not an exact tie (%.17g, %.17g)",
				  kind, a, r.logp[0], r.logp[1]);
			CHECK_NEAR(r.post[0], 0.5, 1e-12, "P(a)");
			/* with a third class that is less likely, classes 0 and 1 still tie */
			r = score_rows(sym, 3, (NbKind) kind, a, NB_PRIOR_GIVEN, equal, doc_t);
			CHECK(r.best == 0 && r.logp[0] == r.logp[1], "3 classes, kind %d alpha %d: best %lld",
				  kind, a, (long long) r.best);
		}
}

/* Random models, every kind, alpha and prior against the reference implementation. */
static void
random_models(bool empty_docs)
{
	NbtStats	st = {0};
	uint64_t	seed = empty_docs ? 1000 : 7;

	for (int iter = 0; iter < 60; iter++)
	{
		int			nrows = 1 + (int) (nbt_rand(&seed) % 40);
		int			nclasses = 1 + (int) (nbt_rand(&seed) % 6);
		uint32_t	vocab = 1 + (uint32_t) (nbt_rand(&seed) % 200);
		RandRow    *rows = malloc(sizeof(RandRow) * nrows);
		size_t		size;
		unsigned char *buf;
		NbView		v;
		char		err[512];

		rand_rows(rows, nrows, nclasses, vocab, nbt_rand(&seed), empty_docs);
		if (!empty_docs)
			for (int i = 0; i < nrows; i++)
				if (rows[i].n == 0)
					rows[i].n = 1;
		buf = serialize_rand(rows, NULL, nrows, &size);
		free(rows);
		CHECK(open_view(&v, buf, size, err, sizeof(err)), "rejected: %s", err);
		CHECK(nbt_model_is_nice(&v), "random model not well-conditioned");
		if (!nbt_check_model(buf, size, &v, iter, 0, &st, err, sizeof(err)))
		{
			note("model: %s", hex(buf, size));
			free(buf);
			CHECK(false, "model %d: %s", iter, err);
		}
		free(buf);
	}
	note("%llu documents scored, %llu compared with the reference, %llu mutual-information checks",
		 (unsigned long long) st.scored, (unsigned long long) st.ref_compared,
		 (unsigned long long) st.mi_compared);
	CHECK(st.ref_compared > 1000, "only %llu reference comparisons", (unsigned long long) st.ref_compared);
}

/*
 * A set of scorers (a grid of option sets) scores every document as each
 * scorer alone does, within rounding, and so do the server's scorers (rows
 * for few classes): random models of 1 to 8 classes, every kind, zero
 * pseudo-counts (zero factors), complement with norm, documents with
 * repeats and unknown tokens.  Two option sets differ in the prior only
 * and share their column of terms.
 */
static void
test_scorer_set_vs_each(void)
{
	const NbOptions grid[] = {
		{.kind = NB_MULTINOMIAL, .alpha = 1, .var_smoothing = 1e-9},
		{.kind = NB_MULTINOMIAL, .alpha = 0.5, .var_smoothing = 1e-9},
		{.kind = NB_MULTINOMIAL, .alpha = 0.5, .prior_mode = NB_PRIOR_UNIFORM, .var_smoothing = 1e-9},
		{.kind = NB_MULTINOMIAL, .alpha = 0, .var_smoothing = 1e-9},
		{.kind = NB_BERNOULLI, .alpha = 1, .var_smoothing = 1e-9},
		{.kind = NB_BERNOULLI, .alpha = 1, .prior_mode = NB_PRIOR_UNIFORM, .var_smoothing = 1e-9},
		{.kind = NB_BERNOULLI, .alpha = 0, .var_smoothing = 1e-9},
		{.kind = NB_COMPLEMENT, .alpha = 0.1, .var_smoothing = 1e-9},
		{.kind = NB_COMPLEMENT, .alpha = 1, .norm = true, .var_smoothing = 1e-9},
		{.kind = NB_DCM, .alpha = 1, .var_smoothing = 1e-9},
	};
	enum
	{
		N = sizeof(grid) / sizeof(grid[0])
	};
	uint64_t	seed = 99;
	uint64_t	compared = 0;

	for (int iter = 0; iter < 30; iter++)
	{
		int			nrows = 2 + (int) (nbt_rand(&seed) % 40);
		int			nclasses = 1 + (int) (nbt_rand(&seed) % 8);
		uint32_t	vocab = 1 + (uint32_t) (nbt_rand(&seed) % 100);
		RandRow    *rows = malloc(sizeof(RandRow) * nrows);
		size_t		size;
		unsigned char *buf;
		NbView		v;
		NbIndex		ix;
		NbScorer	set_scorers[N],
					each[N],
					server[N];
		NbScorerSet set;
		NbDoc		doc;
		char		err[512];
		double		got[N * 8],
					want[8],
					near[8];

		rand_rows(rows, nrows, nclasses, vocab, nbt_rand(&seed), false);
		buf = serialize_rand(rows, NULL, nrows, &size);
		CHECK_OR_DONE(open_view(&v, buf, size, err, sizeof(err)), "rejected: %s", err);
		nb_index_build(&ix, &v);
		nb_scorer_set_build(&set, &ix, set_scorers, grid, N);
		CHECK_OR_DONE(set.m == N - 2, "model %d: %u columns", iter, set.m);
		for (uint32_t s = 0; s < N; s++)
		{
			nb_scorer_build_entries(&each[s], &ix, &grid[s]);
			nb_scorer_build(&server[s], &ix, &grid[s]);
		}
		nb_doc_init(&doc, &ix);
		for (int d = 0; d < 20; d++)
		{
			const char *tokens[MAX_DOC_TOKENS + 1];
			char		names[MAX_DOC_TOKENS][16];
			uint32_t	len = (uint32_t) (nbt_rand(&seed) % 12);

			for (uint32_t i = 0; i < len; i++)
			{
				/* a few past the vocabulary: unknown */
				snprintf(names[i], sizeof(names[i]), "t%u", (uint32_t) (nbt_rand(&seed) % (vocab + 3)));
				tokens[i] = names[i];
			}
			tokens[len] = NULL;
			make_doc(&ix, tokens, &doc);
			nb_scorer_set_score(&set, &doc, got);
			for (uint32_t s = 0; s < N; s++)
			{
				nb_scorer_score(&each[s], &doc, want);
				nb_scorer_score(&server[s], &doc, near);
				for (uint32_t c = 0; c < v.n_classes; c++)
				{
					double		g = got[s * v.n_classes + c];

					CHECK_OR_DONE(g == want[c] || fabs(g - want[c]) < 1e-12 * (1 + fabs(want[c])),
								  "model %d doc %d set %u class %u: %.17g vs alone %.17g",
								  iter, d, s, c, g, want[c]);
					CHECK_OR_DONE(want[c] == near[c] || fabs(want[c] - near[c]) < 1e-9,
								  "model %d doc %d set %u class %u: %.17g vs rows %.17g",
								  iter, d, s, c, want[c], near[c]);
				}
				compared++;
			}
		}
		nb_doc_free(&doc);
		for (uint32_t s = 0; s < N; s++)
		{
			nb_scorer_free(&set_scorers[s]);
			nb_scorer_free(&each[s]);
			nb_scorer_free(&server[s]);
		}
		nb_scorer_set_free(&set);
		nb_index_free(&ix);
		free(buf);
		free(rows);
	}
	CHECK(compared == 30 * 20 * N, "%llu comparisons", (unsigned long long) compared);
done:
	return;
}

static void
test_scorer_random_vs_reference(void)
{
	random_models(false);
}

static void
test_scorer_random_vs_reference_empty_docs(void)
{
	random_models(true);
}

/*
 * Weights are any finite positive number (pg_train.c), so sums over
 * classes can overflow although every stored number is finite and the
 * trainer's overflow flag stays clear.  Posteriors must still not be NaN.
 */
static void
test_scorer_no_nan_total_docs_overflow(void)
{
	/* D_a = D_b = 1e308 (valid), D = 2e308 = inf */
	static const Row rows[] = {
		{"a", 1e308, {"x"}},
		{"b", 1e308, {"y"}},
	};
	static const char *const doc[] = {"x", NULL};
	NbTrainer  *t = train_rows(rows, 2);
	bool		flagged = t->overflow || !nb_trainer_sums_finite(t);
	size_t		size;
	unsigned char *buf = serialize(t, &size);
	NbView		v;
	NbFormatError e;
	bool		valid = nb_view_open(&v, buf, size, &e);

	nb_trainer_destroy(t);
	free(buf);
	CHECK(flagged != valid, "trainer says %s, nb_view_open %s the value",
		  flagged ? "overflow" : "finite", valid ? "accepts" : "rejects");
	for (int kind = 0; kind < 2; kind++)
	{
		Scored		r;

		if (flagged)
			break;				/* refused: fine */
		r = score_rows(rows, 2, (NbKind) kind, 1, NB_PRIOR_FIT, NULL, doc);
		CHECK(!r.any_nan && r.best >= 0, "%s, fit prior: log P = %g, %g, best %lld",
			  kind ? "bernoulli" : "multinomial", r.logp[0], r.logp[1], (long long) r.best);
	}
}

static void
test_scorer_no_nan_class_tokens_overflow(void)
{
	/* T_a = 1e308 + 1e308 = inf although N_xa, N_ya are finite */
	static const Row rows[] = {
		{"a", 1e308, {"x", "y"}},
		{"b", 1, {"z"}},
	};
	NbTrainer  *t = train_rows(rows, 2);
	bool		flagged = t->overflow || !nb_trainer_sums_finite(t);
	static const char *const docs[][3] = {{NULL}, {"z", NULL}, {"x", NULL}};
	size_t		size;
	unsigned char *buf = serialize(t, &size);
	NbView		v;
	NbFormatError e;
	bool		valid = nb_view_open(&v, buf, size, &e);

	nb_trainer_destroy(t);
	free(buf);
	CHECK(flagged != valid, "trainer says %s, nb_view_open %s the value",
		  flagged ? "overflow" : "finite", valid ? "accepts" : "rejects");
	if (flagged)
		return;					/* refused: fine */
	for (int kind = 0; kind < 3; kind++)
		for (int d = 0; d < 3; d++)
		{
			Scored		r = score_rows(rows, 2, (NbKind) kind, 1, NB_PRIOR_FIT, NULL, docs[d]);

			CHECK(!r.any_nan && r.best >= 0, "kind %d, document %d: log P = %g, %g, best %lld",
				  kind, d, r.logp[0], r.logp[1], (long long) r.best);
		}
}

/*
 * NbDoc for the bag "": unknown tokens skipped, duplicates merged (counts
 * summed) in order of first occurrence; every document starts afresh, also
 * when the index's sequence number wraps around.
 */
/*
 * A scorer with rows tells tokens apart by a 32-bit tag in the item map,
 * the length and the first 8 bytes in the row, and compares longer tokens
 * in the model's bytes.  Tokens alike in all of those but the rest (12 or
 * 40 bytes), half of them in the model: every present token must be found
 * as the index finds it, every absent one not at all, with rows of 2 and
 * of 5 classes.  Also a token longer than 65,535 bytes (a length that
 * takes more than 16 bits).
 */
static void
test_scorer_rows_alike_tokens(void)
{
	enum
	{
		N = 60000,
		HUGE = 70001
	};
	static const char *const formats[] = {"longtok-%06d", "a-much-longer-shared-token-prefix-%06d"};
	static char huge_bytes[HUGE];
	NbTokenRef	huge = {huge_bytes, HUGE - 1, 1};

	memset(huge_bytes, 'x', sizeof(huge_bytes));
	for (uint32_t C = 2; C <= 5; C += 3)
	{
		NbTrainer  *t = nb_trainer_create();
		size_t		size;
		unsigned char *buf;
		NbView		v;
		NbIndex		ix;
		NbScorer	sc;
		NbOptions	o = {0};
		NbDoc		by_index;
		NbDoc		by_rows;
		char		why[200];
		char		str[64];
		NbTokenRef	ref = {str, 0, 1};
		long		wrong = 0;

		for (int i = 0; i < 2 * N; i += 2)
			for (int f = 0; f < 2; f++)
			{
				char		label[2] = {(char) ('a' + i / 2 % C), 0};

				ref.len = (uint32_t) snprintf(str, sizeof(str), formats[f], i);
				nb_trainer_begin_doc(t, label, 1, 1.0);
				if (!nb_trainer_add_text(t, &ref, 1))
					abort();
			}
		/* longer than a row key's length field holds */
		nb_trainer_begin_doc(t, "a", 1, 1.0);
		if (!nb_trainer_add_text(t, &huge, 1))
			abort();
		buf = serialize(t, &size);
		nb_trainer_destroy(t);
		CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
		nb_index_build(&ix, &v);
		o.kind = NB_MULTINOMIAL;
		o.alpha = 1;
		o.prior_mode = NB_PRIOR_FIT;
		nb_scorer_build(&sc, &ix, &o);
		CHECK(sc.rows != NULL && sc.row_size == (C <= 2 ? 32 : 64), "%u classes: rows of %u bytes",
			  C, sc.row_size);
		nb_doc_init(&by_index, &ix);
		nb_doc_init(&by_rows, &ix);
		for (int i = 0; i < 2 * N; i++)
			for (int f = 0; f < 2; f++)
			{
				bool		present = i % 2 == 0;

				ref.len = (uint32_t) snprintf(str, sizeof(str), formats[f], i);
				nb_doc_begin(&by_index);
				nb_doc_begin(&by_rows);
				nb_doc_add_tokens(&ix, &by_index, (uint32_t) ix.unnamed_bag, &ref, 1);
				nb_scorer_add_tokens(&sc, &by_rows, (uint32_t) ix.unnamed_bag, &ref, 1);
				if (by_index.n_tokens != (present ? 1u : 0u) ||
					by_rows.n_tokens != by_index.n_tokens ||
					(present && by_rows.tokens[0].token != by_index.tokens[0].token))
				{
					if (wrong++ == 0)
						fail_at(__LINE__, "%u classes: %s found %u times through the index, %u through rows",
								C, str, by_index.n_tokens, by_rows.n_tokens);
				}
			}
		CHECK(wrong == 0, "%u classes: %ld of %d lookups differ", C, wrong, 4 * N);
		for (int v = 0; v < 3; v++)
		{
			/* the huge token, the same length with another last byte, one byte longer */
			NbTokenRef	probe = {huge_bytes, HUGE - (v == 2 ? 0 : 1), 1};

			huge_bytes[HUGE - 2] = v == 1 ? 'y' : 'x';
			nb_doc_begin(&by_rows);
			nb_scorer_add_tokens(&sc, &by_rows, (uint32_t) ix.unnamed_bag, &probe, 1);
			CHECK(by_rows.n_tokens == (v == 0 ? 1u : 0u), "%u classes: token of %u bytes (%d) found %u times",
				  C, probe.len, v, by_rows.n_tokens);
		}
		huge_bytes[HUGE - 2] = 'x';
		nb_doc_free(&by_index);
		nb_doc_free(&by_rows);
		nb_scorer_free(&sc);
		nb_index_free(&ix);
		free(buf);
	}
}

static void
test_index_lookup(void)
{
	size_t		size;
	unsigned char *buf = serialize_rows(toy, NTOY, &size);
	NbView		v;
	NbIndex		ix;
	NbDoc		doc;
	char		why[200];
	static const char *const words[] = {"zz", "d", "a", "", "d", "aa", "b"};
	NbTokenRef	refs[7 + 29 * 7];
	uint32_t	bag;

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(v.version == 3, "text-only model written as version %u", v.version);
	nb_index_build(&ix, &v);
	nb_doc_init(&doc, &ix);
	bag = (uint32_t) ix.unnamed_bag;
	for (int i = 0; i < 7; i++)
	{
		refs[i].str = words[i];
		refs[i].len = (uint32_t) strlen(words[i]);
		refs[i].count = i + 1;
	}
	/* round 2 adds the same words 29 more times in a second batch: the table of seen items grows mid-document */
	for (int i = 7; i < 7 + 29 * 7; i++)
		refs[i] = refs[i % 7];
	for (int round = 0; round < 3; round++)
	{
		double		times = round == 2 ? 30 : 1;

		nb_doc_begin(&doc);
		nb_doc_add_tokens(&ix, &doc, bag, refs, 7);
		if (round == 2)
			nb_doc_add_tokens(&ix, &doc, bag, refs + 7, 29 * 7);
		if (doc.n_tokens != 3 || doc.tokens[0].token != 3 || doc.tokens[0].count != 7 * times ||
			doc.tokens[1].token != 0 || doc.tokens[1].count != 3 * times || doc.tokens[2].token != 1 ||
			doc.tokens[2].count != 7 * times || doc.occurrences[bag] != 17 * times || doc.distinct[bag] != 3)
		{
			nb_doc_free(&doc);
			nb_index_free(&ix);
			free(buf);
			CHECK(false, "round %d: %u tokens: (%u %g) (%u %g) (%u %g), expected (3 7) (0 3) (1 7)",
				  round, doc.n_tokens, doc.tokens[0].token, doc.tokens[0].count, doc.tokens[1].token,
				  doc.tokens[1].count, doc.tokens[2].token, doc.tokens[2].count);
		}
	}
	nb_doc_begin(&doc);
	CHECK(doc.n_present == 0 && doc.n_tokens == 0, "nb_doc_begin does not empty the document");
	nb_doc_add_tokens(&ix, &doc, bag, refs, 0);
	CHECK(doc.n_tokens == 0 && doc.n_present == 1 && doc.present[bag], "empty bag not present");
	nb_doc_begin(&doc);
	nb_doc_add_tokens(&ix, &doc, bag, refs, 1);
	CHECK(doc.n_tokens == 0 && doc.occurrences[bag] == 0, "unknown token found");
	/* 200 occurrences of the 4 tokens, in three batches */
	for (int i = 0; i < 200; i++)
	{
		refs[i].str = i % 4 == 0 ? "c" : i % 4 == 1 ? "a" : i % 4 == 2 ? "d" : "b";
		refs[i].len = 1;
		refs[i].count = 1;
	}
	nb_doc_begin(&doc);
	nb_doc_add_tokens(&ix, &doc, bag, refs, 3);
	nb_doc_add_tokens(&ix, &doc, bag, refs + 3, 100);
	nb_doc_add_tokens(&ix, &doc, bag, refs + 103, 97);
	CHECK(doc.n_tokens == 4 && doc.tokens[0].token == 2 && doc.tokens[0].count == 50 &&
		  doc.tokens[3].token == 1 && doc.tokens[3].count == 50 && doc.occurrences[bag] == 200,
		  "200 occurrences: %u tokens, first (%u %g)", doc.n_tokens, doc.tokens[0].token,
		  doc.tokens[0].count);
	CHECK(nb_index_class(&ix, "spam", 4) == SPAM && nb_index_class(&ix, "ham", 3) == HAM &&
		  nb_index_class(&ix, "eggs", 4) == -1, "nb_index_class");
	CHECK(nb_scorer_model_traits(&ix).only_bags && ix.n_features == 1 && nb_index_feature(&ix, "", 0) == 0,
		  "a version 1 model is the one bag \"\"");
	nb_doc_free(&doc);
	nb_index_free(&ix);
	free(buf);
}

/*
 * The item map (nb_index.h) of 30,000 values in each of three features,
 * the same values in two bags and a categorical feature (so that the same
 * text is three items, kept apart by their feature), in two classes: each
 * item is found under its own feature at its rank, through the index and a
 * scorer's rows, and nowhere else; the ranks are the full slots in order.
 */
static void
test_index_item_map(void)
{
	enum
	{
		N = 30000
	};
	static const char *const names[] = {"a", "b", "c"};
	static const NbFeatureType types[] = {NB_FEATURE_BAG, NB_FEATURE_BAG, NB_FEATURE_CATEGORICAL};
	NbTrainer  *t = nb_trainer_create();
	NbOptions	o = {.kind = NB_MULTINOMIAL, .alpha = 1, .prior_mode = NB_PRIOR_FIT, .var_smoothing = 1e-9};
	char		str[32];
	size_t		size;
	unsigned char *buf;
	NbView		v;
	NbIndex		ix;
	NbScorer	sc;
	NbDoc		doc;
	char		why[200];
	uint64_t	full = 0;
	long		wrong = 0;

	for (int i = 0; i < N; i++)
	{
		NbTokenRef	ref = {str, 0, 1};

		ref.len = (uint32_t) snprintf(str, sizeof(str), i % 3 ? "value-%d" : "v%d", i);
		nb_trainer_begin_doc(t, i % 2 ? "x" : "y", 1, 1.0);
		for (int j = 0; j < 3; j++)
		{
			NbFeatureType existing;
			int64_t		f = nb_trainer_feature(t, names[j], 1, types[j], &existing);

			if (types[j] == NB_FEATURE_BAG)
				nb_trainer_add_tokens(t, (uint32_t) f, &ref, 1);
			else
				nb_trainer_add_category(t, (uint32_t) f, str, ref.len);
		}
	}
	buf = serialize(t, &size);
	nb_trainer_destroy(t);
	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	nb_index_build(&ix, &v);
	nb_scorer_build(&sc, &ix, &o);
	nb_doc_init(&doc, &ix);
	for (uint64_t w = 0; w < ix.n_item_slots / 64; w++)
	{
		if (ix.item_words[w].rank != full)
			wrong++;
		full += nb_bit_count(ix.item_words[w].full);
	}
	CHECK(wrong == 0 && full == ix.n_tokens && ix.n_tokens == 3 * N,
		  "%ld ranks wrong; %llu full slots for %u items", wrong, (unsigned long long) full, ix.n_tokens);
	for (uint32_t j = 0; j < 3; j++)
		for (uint32_t k = 0; k < ix.n_tokens; k++)
		{
			uint32_t	len;
			const char *value = nb_index_item(&ix, k, &len);
			bool		own = nb_index_item_in(&ix, j, k);
			uint64_t	hash = nb_index_item_hash(&ix, j, nb_hash_token(value, len));
			int64_t		r = nb_index_find_item(&ix, j, value, len, hash);
			NbTokenRef	ref = {value, len, 1};

			nb_doc_begin(&doc);
			nb_scorer_add_tokens(&sc, &doc, j, &ref, 1);
			if (own ? (r < 0 || nb_index_item_at(&ix, (uint64_t) r) != k || ix.item_place[k] != r ||
					   doc.n_tokens != 1 || doc.tokens[0].token != k || doc.tokens[0].slot != r) :
				(r >= 0 && nb_index_item_at(&ix, (uint64_t) r) == k))
				wrong++;
		}
	CHECK(wrong == 0, "%ld of %u lookups wrong", wrong, 3 * ix.n_tokens);
	for (uint32_t j = 0; j < 3; j++)
	{
		NbTokenRef	ref = {"value-0", 7, 1};

		nb_doc_begin(&doc);
		nb_doc_add_tokens(&ix, &doc, j, &ref, 1);
		CHECK(doc.n_tokens == 0, "feature %u: value-0 (never trained) found", j);
	}
	nb_doc_free(&doc);
	nb_scorer_free(&sc);
	nb_index_free(&ix);
	free(buf);
}

/* One token of a feature, count 1. */
static void
add_token(const NbIndex *ix, NbDoc *doc, const char *feature, const char *token)
{
	NbTokenRef	ref = {token, (uint32_t) strlen(token), 1};

	nb_doc_add_tokens(ix, doc, (uint32_t) nb_index_feature(ix, feature, (uint32_t) strlen(feature)), &ref, 1);
}

/*
 * What a document's model knows (nb_doc_known, doc.unknown): the mixed model's color (red, blue), flag, x and
 * tags (t, u), its tokens looked up in the index and in a scorer's rows.
 */
static void
test_doc_known(void)
{
	size_t		size;
	unsigned char *buf = serialize_mix(mix, NMIX, &size);
	NbView		v;
	NbIndex		ix;
	NbScorer	sc;
	NbDoc		doc;
	char		why[200];
	NbOptions	o = {.kind = NB_MULTINOMIAL, .alpha = 1, .prior_mode = NB_PRIOR_FIT, .var_smoothing = 1e-9};
	NbTokenRef	refs[3] = {{"t", 1, 1}, {"t", 1, 1}, {"zz", 2, 1}};

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	nb_index_build(&ix, &v);
	nb_scorer_build(&sc, &ix, &o);
	nb_doc_init(&doc, &ix);

	nb_doc_begin(&doc);
	CHECK(nb_doc_known(&doc, &ix) == 0 && doc.unknown == 0,
		  "no features: known %g, unknown %g", nb_doc_known(&doc, &ix), doc.unknown);
	/* a bag of unknown tokens: present, nothing known */
	add_token(&ix, &doc, "tags", "zz");
	add_token(&ix, &doc, "tags", "zz");
	CHECK(nb_doc_known(&doc, &ix) == 0 && doc.n_present == 1 && doc.unknown == 2,
		  "unknown tokens: %u present, unknown %g", doc.n_present, doc.unknown);
	add_token(&ix, &doc, "tags", "u");
	CHECK(nb_doc_known(&doc, &ix) == 1 && doc.unknown == 2,
		  "a known token: known %g, unknown %g", nb_doc_known(&doc, &ix), doc.unknown);
	/* an unseen categorical value: unknown, though it counts in scoring */
	nb_doc_begin(&doc);
	CHECK(doc.unknown == 0, "nb_doc_begin keeps unknown %g", doc.unknown);
	add_token(&ix, &doc, "color", "green");
	CHECK(nb_doc_known(&doc, &ix) == 0 && doc.unknown == 1 &&
		  doc.occurrences[nb_index_feature(&ix, "color", 5)] == 1,
		  "unseen value: unknown %g", doc.unknown);
	add_token(&ix, &doc, "color", "red");
	nb_doc_add_unknown(&doc, 2);
	CHECK(nb_doc_known(&doc, &ix) == 1 && doc.unknown == 3,
		  "red and unknown keys: known %g, unknown %g", nb_doc_known(&doc, &ix), doc.unknown);
	/* a boolean or Gaussian value is known whatever it is */
	nb_doc_begin(&doc);
	nb_doc_add_value(&doc, (uint32_t) nb_index_feature(&ix, "flag", 4), 0);
	CHECK(nb_doc_known(&doc, &ix) == 1, "flag false not known");
	nb_doc_begin(&doc);
	nb_doc_add_value(&doc, (uint32_t) nb_index_feature(&ix, "x", 1), 1e300);
	add_token(&ix, &doc, "tags", "zz");
	CHECK(nb_doc_known(&doc, &ix) == 1 && doc.unknown == 1,
		  "x and an unknown token: known %g, unknown %g", nb_doc_known(&doc, &ix), doc.unknown);
	/* through the scorer's rows, repeats kept apart: t twice known, zz unknown */
	nb_doc_begin(&doc);
	nb_scorer_add_tokens(&sc, &doc, (uint32_t) nb_index_feature(&ix, "tags", 4), refs, 3);
	CHECK(nb_doc_known(&doc, &ix) == 2 && doc.unknown == 1,
		  "rows: known %g, unknown %g", nb_doc_known(&doc, &ix), doc.unknown);
	nb_doc_begin(&doc);
	nb_scorer_add_tokens(&sc, &doc, (uint32_t) nb_index_feature(&ix, "tags", 4), refs + 2, 1);
	CHECK(nb_doc_known(&doc, &ix) == 0 && doc.unknown == 1, "rows: zz known");
	nb_doc_free(&doc);
	nb_scorer_free(&sc);
	nb_index_free(&ix);
	free(buf);
}

/* The document: NULL color / flag < 0 / isnan(x), isnan(y): missing. */
typedef struct MixDoc
{
	const char *color;
	int			flag;
	double		x;
	double		y;
} MixDoc;

typedef struct MixScored
{
	int64_t		best;
	double		post[4];
	double		logp[4];
	bool		any_nan;
} MixScored;

static MixScored
score_mix_opts(const MixRow *rows, int nrows, bool with_y, const NbOptions *o, MixDoc d)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;
	size_t		size;
	NbView		v;
	NbIndex		ix;
	NbScorer	sc;
	NbDoc		doc;
	NbFormatError e;
	MixScored	r;

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < nrows; i++)
	{
		train_mix(t, &rows[i]);
		if (with_y && rows[i].has_x + (rows[i].color != NULL) > 0 && rows[i].label[0] != 'c')
			nb_trainer_add_real(t, (uint32_t) feature_id(t, "y", NB_FEATURE_GAUSSIAN), 5);
	}
	buf = serialize(t, &size);
	nb_trainer_destroy(t);
	if (!nb_view_open(&v, buf, size, &e))
	{
		fprintf(stderr, "score_mix: %s\n", e.message);
		abort();
	}
	nb_index_build(&ix, &v);
	nb_scorer_build(&sc, &ix, o);
	nb_doc_init(&doc, &ix);
	nb_doc_begin(&doc);
	if (d.color != NULL)
	{
		NbTokenRef	ref = {d.color, (uint32_t) strlen(d.color), 1};

		nb_doc_add_tokens(&ix, &doc, (uint32_t) nb_index_feature(&ix, "color", 5), &ref, 1);
	}
	if (d.flag >= 0)
		nb_doc_add_value(&doc, (uint32_t) nb_index_feature(&ix, "flag", 4), d.flag);
	if (!isnan(d.x))
		nb_doc_add_value(&doc, (uint32_t) nb_index_feature(&ix, "x", 1), d.x);
	if (!isnan(d.y))
		nb_doc_add_value(&doc, (uint32_t) nb_index_feature(&ix, "y", 1), d.y);
	r.best = nb_scorer_score(&sc, &doc, r.logp);
	for (uint32_t c = 0; c < v.n_classes && c < 4; c++)
	{
		r.post[c] = r.logp[c] == -INFINITY ? 0 : exp(r.logp[c]);
		r.any_nan |= isnan(r.logp[c]);
	}
	nb_doc_free(&doc);
	nb_scorer_free(&sc);
	nb_index_free(&ix);
	free(buf);
	return r;
}

static MixScored
score_mix(const MixRow *rows, int nrows, bool with_y, double alpha, double var_smoothing, MixDoc d)
{
	NbOptions	o = {.kind = NB_MULTINOMIAL, .alpha = alpha, .prior_mode = NB_PRIOR_FIT, .class_prior = NULL,
		.var_smoothing = var_smoothing};

	return score_mix_opts(rows, nrows, with_y, &o, d);
}

/* Posterior of class 0 from unnormalized class probabilities. */
static double
share(const double *p, int n, int c)
{
	double		s = 0;

	for (int i = 0; i < n; i++)
		s += p[i];
	return p[c] / s;
}

#define MISSING_DOC {NULL, -1, NAN, NAN}

static void
test_scorer_categorical(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;

	/*
	 * Classes a, b only (rows 0..4).  Prior 3/5, 2/5; T_a = 3, T_b = 2, K = 2.
	 * alpha = 1, "blue": a (0 + 1) / (3 + 2) = 1/5, b (1 + 1) / (2 + 2) = 1/2
	 *   3/5 * 1/5 = 3/25 vs 2/5 * 1/2 = 5/25: P(a) = 3/8
	 * "green" (never seen): a 1/5, b 1/4: 3/25 vs 1/10: P(a) = 6/11
	 */
	d.color = "blue";
	r = score_mix(score_rows_mix, 5, false, 1, 1e-9, d);
	CHECK_NEAR(r.post[0], 3.0 / 8, 1e-12, "blue: P(a)");
	d.color = "green";
	r = score_mix(score_rows_mix, 5, false, 1, 1e-9, d);
	CHECK_NEAR(r.post[0], 6.0 / 11, 1e-12, "unseen green: P(a)");
	/*
	 * alpha -> 0, "green": a: a/(3 + 2a), b: a/(2 + 2a): one zero factor
	 * each; 3/5 * 1/3 = 1/5 vs 2/5 * 1/2 = 1/5: P(a) = 1/2.
	 * "blue": a has a zero factor, b not: P(b) = 1.
	 */
	r = score_mix(score_rows_mix, 5, false, 0, 1e-9, d);
	CHECK(!r.any_nan, "alpha 0: NaN");
	CHECK_NEAR(r.post[0], 0.5, 1e-12, "alpha 0, unseen green: P(a)");
	d.color = "blue";
	r = score_mix(score_rows_mix, 5, false, 0, 1e-9, d);
	CHECK(r.logp[0] == -INFINITY && r.post[1] == 1 && r.best == 1, "alpha 0, blue: log P(a) %g", r.logp[0]);
	/*
	 * With class c (T_c = 1: blue), alpha -> 0, "green": c: a/(1 + 2a);
	 * prior 3/6, 2/6, 1/6: 1/2 * 1/3, 1/3 * 1/2, 1/6 * 1: each 1/6.
	 */
	d.color = "green";
	r = score_mix(score_rows_mix, 6, false, 0, 1e-9, d);
	CHECK(!r.any_nan, "3 classes, alpha 0: NaN");
	CHECK_NEAR(r.post[0], 1.0 / 3, 1e-12, "3 classes, alpha 0, green: P(a)");
	CHECK_NEAR(r.post[2], 1.0 / 3, 1e-12, "3 classes, alpha 0, green: P(c)");
}

static void
test_scorer_boolean(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;
	double		p[3];

	/*
	 * t = (T + 1) / (M + 2): a (2 + 1) / (3 + 2) = 3/5, b (0 + 1) / (1 + 2) = 1/3,
	 * c (no rows with flag) 1/2.  Prior 1/2, 1/3, 1/6.
	 */
	d.flag = 1;
	r = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);
	p[0] = 0.5 * 0.6, p[1] = 1.0 / 3 / 3, p[2] = 1.0 / 6 * 0.5;
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "flag true: P(a)");
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-12, "flag true: P(c)");
	d.flag = 0;
	r = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);
	p[0] = 0.5 * 0.4, p[1] = 1.0 / 3 * 2 / 3, p[2] = 1.0 / 6 * 0.5;
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "flag false: P(a)");
	/*
	 * alpha -> 0: t_a = 2/3, t_b = 0, t_c = a / 2a = 1/2.
	 * true: b has a zero factor: 1/2 * 2/3 vs 1/6 * 1/2.
	 */
	d.flag = 1;
	r = score_mix(score_rows_mix, 6, false, 0, 1e-9, d);
	p[0] = 0.5 * 2 / 3, p[1] = 0, p[2] = 1.0 / 6 * 0.5;
	CHECK(!r.any_nan && r.logp[1] == -INFINITY, "alpha 0, flag true: log P(b) = %g", r.logp[1]);
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "alpha 0, flag true: P(a)");
	/* false: 1/2 * 1/3, 1/3 * 1, 1/6 * 1/2 */
	d.flag = 0;
	r = score_mix(score_rows_mix, 6, false, 0, 1e-9, d);
	p[0] = 0.5 / 3, p[1] = 1.0 / 3, p[2] = 1.0 / 12;
	CHECK_NEAR(r.post[1], share(p, 3, 1), 1e-12, "alpha 0, flag false: P(b)");
}

static double
log_normal(double x, double mean, double var)
{
	return -0.5 * log(2 * M_PI * var) - (x - mean) * (x - mean) / (2 * var);
}

static void
test_scorer_gaussian(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;
	double		p[3];
	double		floor;

	/*
	 * Classes a, b: var_smoothing 0.1: floor 0.1 * 27.5 = 2.75;
	 * a: N(2, 1 + 2.75), b: N(12, 4 + 2.75).  Prior 3/5, 2/5.  x = 5.
	 */
	d.x = 5;
	r = score_mix(score_rows_mix, 5, false, 1, 0.1, d);
	p[0] = 0.6 * exp(log_normal(5, 2, 3.75));
	p[1] = 0.4 * exp(log_normal(5, 12, 6.75));
	CHECK_NEAR(r.post[0], share(p, 2, 0), 1e-12, "x = 5, var_smoothing 0.1: P(a)");
	/* var_smoothing 1e-9: floor 2.75e-8 */
	r = score_mix(score_rows_mix, 5, false, 1, 1e-9, d);
	p[0] = 0.6 * exp(log_normal(5, 2, 1 + 2.75e-8));
	p[1] = 0.4 * exp(log_normal(5, 12, 4 + 2.75e-8));
	CHECK_NEAR(r.post[0], share(p, 2, 0), 1e-12, "x = 5, var_smoothing 1e-9: P(a)");
	/*
	 * Class c has no x: pooled statistics of a and b (weights 2 and 2):
	 * mean 7, M2 2 + 8 + 2 * 25 + 2 * 25 = 110, variance 110 / 4 = 27.5.
	 */
	floor = 0.1 * 27.5;
	r = score_mix(score_rows_mix, 6, false, 1, 0.1, d);
	p[0] = 0.5 * exp(log_normal(5, 2, 1 + floor));
	p[1] = 1.0 / 3 * exp(log_normal(5, 12, 4 + floor));
	p[2] = 1.0 / 6 * exp(log_normal(5, 7, 27.5 + floor));
	CHECK(!r.any_nan, "NaN");
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-12, "class without x: P(c)");
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "class without x: P(a)");
	/* x and flag together: the product */
	d.flag = 1;
	r = score_mix(score_rows_mix, 6, false, 1, 0.1, d);
	p[0] *= 0.6, p[1] *= 1.0 / 3, p[2] *= 0.5;
	CHECK_NEAR(r.post[1], share(p, 3, 1), 1e-12, "x and flag: P(b)");
	/* x and flag and an unseen color: a 1/5, b 1/4, c (0 + 1) / (1 + 2) = 1/3 */
	d.color = "green";
	r = score_mix(score_rows_mix, 6, false, 1, 0.1, d);
	p[0] *= 0.2, p[1] *= 0.25, p[2] *= 1.0 / 3;
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-12, "x, flag, unseen color: P(c)");
	/* a value far from every class: finite, no NaN */
	d.color = NULL;
	d.flag = -1;
	d.x = 1e300;
	r = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);
	CHECK(!r.any_nan && r.best >= 0, "x = 1e300: log P = %g %g %g", r.logp[0], r.logp[1], r.logp[2]);
	d.x = -1e300;
	r = score_mix(score_rows_mix, 6, false, 0, 0, d);
	CHECK(!r.any_nan && r.best >= 0, "x = -1e300, var_smoothing 0: log P = %g %g %g", r.logp[0],
		  r.logp[1], r.logp[2]);
}

/* Constant features: variance 0 everywhere. */
static void
test_scorer_gaussian_constant(void)
{
	static const MixRow constant[] = {
		{"a", 1, NULL, -1, true, 5, false, {NULL}},
		{"a", 1, NULL, -1, true, 5, false, {NULL}},
		{"b", 1, NULL, -1, true, 5, false, {NULL}},
		{"c", 1, NULL, -1, false, 0, false, {NULL}},
	};
	static const double xs[] = {5, 6, -20, 4.5};
	static const double smoothing[] = {1e-9, 0, 1};
	MixScored	r;
	MixDoc		d = MISSING_DOC;
	double		p[3];

	/* the only Gaussian feature is constant: floor 0, variance 0: left equal for every class */
	for (int i = 0; i < 4; i++)
		for (int s = 0; s < 3; s++)
		{
			d.x = xs[i];
			r = score_mix(constant, 4, false, 1, smoothing[s], d);
			CHECK(!r.any_nan, "x = %g: NaN", xs[i]);
			CHECK_NEAR(r.post[0], 0.5, 1e-12, "constant x: P(a) is the prior");
			CHECK_NEAR(r.post[2], 0.25, 1e-12, "constant x: P(c) is the prior");
		}
	/*
	 * y constant 5 in classes a and b of the scoring model, x not: floor
	 * 1e-9 * 27.5 > 0; y has variance = floor in a and b (mean 5), and
	 * in class c (no y) pooled variance 0 + floor, mean 5: the same for
	 * every class, so y leaves the posterior of x alone.
	 */
	d.x = 5;
	d.y = 6;
	r = score_mix(score_rows_mix, 6, true, 1, 1e-9, d);
	p[0] = 0.5 * exp(log_normal(5, 2, 1 + 2.75e-8));
	p[1] = 1.0 / 3 * exp(log_normal(5, 12, 4 + 2.75e-8));
	p[2] = 1.0 / 6 * exp(log_normal(5, 7, 27.5 + 2.75e-8));
	CHECK(!r.any_nan, "constant y: NaN");
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-9, "constant y: P(a)");
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-9, "constant y: P(c)");
	/* only y: the prior */
	d.x = NAN;
	r = score_mix(score_rows_mix, 6, true, 0, 1e-9, d);
	CHECK_NEAR(r.post[0], 0.5, 1e-12, "only constant y: P(a)");
}

/*
 * A value far from a constant feature: the feature is the same for every
 * class (variance 1 everywhere, or the same floor), so the posterior must
 * stay the prior; only rounding may differ.
 */
static void
test_scorer_gaussian_constant_far_value(void)
{
	static const MixRow constant[] = {
		{"a", 1, NULL, -1, true, 5, false, {NULL}},
		{"a", 1, NULL, -1, true, 5, false, {NULL}},
		{"b", 1, NULL, -1, true, 5, false, {NULL}},
		{"c", 1, NULL, -1, false, 0, false, {NULL}},
	};
	static const double xs[] = {-1e6, 1e12, 1e300, -1e300};
	MixScored	r;
	MixDoc		d = MISSING_DOC;

	for (int i = 0; i < 4; i++)
	{
		d.x = xs[i];
		r = score_mix(constant, 4, false, 1, 1e-9, d);
		CHECK(!r.any_nan, "x = %g: NaN", xs[i]);
		CHECK(fabs(r.post[0] - 0.5) < 1e-9 && fabs(r.post[2] - 0.25) < 1e-9,
			  "x = %g, constant x (the same term for every class): P = %.17g %.17g %.17g, "
			  "expected the prior 0.5 0.25 0.25", xs[i], r.post[0], r.post[1], r.post[2]);
	}
}

/* Missing features are left out: every subset of features. */
static void
test_scorer_missing_features(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;

	/* nothing: the prior */
	r = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);
	CHECK_NEAR(r.post[0], 0.5, 1e-12, "no features: P(a)");
	CHECK_NEAR(r.post[2], 1.0 / 6, 1e-12, "no features: P(c)");
	for (double alpha = 0; alpha <= 1; alpha += 0.5)
		for (int mask = 0; mask < 8; mask++)
		{
			d.color = mask & 1 ? (mask & 4 ? "blue" : "green") : NULL;
			d.flag = mask & 2 ? mask & 4 : -1;
			d.x = mask & 4 ? 3 : NAN;
			r = score_mix(score_rows_mix, 6, false, alpha, 1e-9, d);
			CHECK(!r.any_nan && r.best >= 0 &&
				  fabs(r.post[0] + r.post[1] + r.post[2] - 1) < 1e-12,
				  "alpha %g, features %d: P = %g %g %g", alpha, mask, r.post[0], r.post[1], r.post[2]);
		}
}

/* ---------------------------------------------------------------- */
/* estimators: class_alpha, map, beta, norm (by hand on the toy)      */

static NbOptions
toy_options(NbKind kind, double alpha, NbEstimator estimator)
{
	NbOptions	o;

	nb_options_init(&o);
	o.kind = kind;
	o.alpha = alpha;
	o.estimator = estimator;
	return o;
}

/* P(ham) from unnormalized ham and spam probabilities */
static double
p_ham(double ham, double spam)
{
	return ham / (ham + spam);
}

static void
test_scorer_class_alpha(void)
{
	/* likelihoods of a c c under multinomial alpha 1: ham 9/512, spam 16/729 */
	const double lh = 1.0 / 8 * 9.0 / 64;
	const double ls = 4.0 / 9 * 4.0 / 81;
	NbOptions	o = toy_options(NB_MULTINOMIAL, 1, NB_ESTIMATOR_MEAN);
	Scored		r;

	/* class_alpha 1: (D_c + 1) / (D + 2) = 2/5, 3/5 (Murphy eq. 3.68) */
	CHECK(nb_options_set_class_alpha(&o, 1) == NB_OPTION_OK, "set");
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], p_ham(2.0 / 5 * lh, 3.0 / 5 * ls), 1e-12, "class_alpha 1: P(ham)");
	/* class_alpha 2.5: (1 + 2.5) / 8, (2 + 2.5) / 8 */
	nb_options_set_class_alpha(&o, 2.5);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], p_ham(3.5 / 8 * lh, 4.5 / 8 * ls), 1e-12, "class_alpha 2.5: P(ham)");
	/* an empty document: the smoothed prior itself */
	r = score_rows_opts(toy, NTOY, &o, doc_empty);
	CHECK_NEAR(r.post[HAM], 3.5 / 8, 1e-12, "class_alpha 2.5, empty: P(ham)");
	/* class_alpha 0 is D_c / D */
	nb_options_set_class_alpha(&o, 0);
	r = score_rows_opts(toy, NTOY, &o, doc_empty);
	CHECK_NEAR(r.post[HAM], 1.0 / 3, 1e-15, "class_alpha 0: P(ham)");
	/* only the fitted prior: uniform and given priors ignore it */
	nb_options_set_class_alpha(&o, 100);
	nb_options_set_fit_prior(&o, false);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], p_ham(lh, ls), 1e-12, "class_alpha with fit_prior false: P(ham)");

	/* map: the mode (D_c + a - 1) / (D + C(a - 1)); a = 3: 3/7, 4/7 */
	o = toy_options(NB_MULTINOMIAL, 2, NB_ESTIMATOR_MAP);
	nb_options_set_class_alpha(&o, 3);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], p_ham(3.0 / 7 * lh, 4.0 / 7 * ls), 1e-12, "map class_alpha 3: P(ham)");
	/* map without class_alpha: D_c / D */
	o = toy_options(NB_MULTINOMIAL, 2, NB_ESTIMATOR_MAP);
	r = score_rows_opts(toy, NTOY, &o, doc_empty);
	CHECK_NEAR(r.post[HAM], 1.0 / 3, 1e-15, "map, no class_alpha, empty: P(ham)");
}

static void
test_scorer_map(void)
{
	NbOptions	o;
	Scored		r;

	/*
	 * Multinomial mode (N_jc + a - 1) / (T_c + V(a - 1)).  a = 2 is
	 * (N + 1) / (T_c + 4): the posterior mean of alpha 1, 6561 / 22945
	 * (test_scorer_multinomial).  a = 1.5: (N + 0.5) / (T_c + 2).
	 */
	o = toy_options(NB_MULTINOMIAL, 2, NB_ESTIMATOR_MAP);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], 6561.0 / 22945, 1e-12, "multinomial map 2: P(ham)");
	o.alpha = 1.5;
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], (25.0 / 5184) / (25.0 / 5184 + 3.0 / 196), 1e-12, "multinomial map 1.5: P(ham)");
	/* a = 1: maximum likelihood; ham never had a: P(spam) = 1 */
	o.alpha = 1;
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK(r.logp[HAM] == -INFINITY && r.logp[SPAM] == 0, "multinomial map 1: log P = %g, %g",
		  r.logp[HAM], r.logp[SPAM]);
	/* ... and a d ties in zero factors: 25/121 as with alpha 0 */
	r = score_rows_opts(toy, NTOY, &o, doc_ad);
	CHECK_NEAR(r.post[HAM], 25.0 / 121, 1e-12, "multinomial map 1, a d: P(ham)");

	/* Bernoulli mode (d + b - 1) / (D_c + 2b - 2): b = 2 is the mean of 1, 64/793 */
	o = toy_options(NB_BERNOULLI, 2, NB_ESTIMATOR_MAP);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], 64.0 / 793, 1e-12, "bernoulli map 2: P(ham)");

	/*
	 * Complement mode (F_j + a - 1 - N_jc) / (T + V(a - 1) - T_c): a = 2 is
	 * the complement of alpha 1, 6561 / 14753.
	 */
	o = toy_options(NB_COMPLEMENT, 2, NB_ESTIMATOR_MAP);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], 6561.0 / 14753, 1e-12, "complement map 2: P(ham)");
}

static void
test_scorer_beta(void)
{
	NbOptions	o;
	Scored		r;
	double		ham, spam;

	/*
	 * Beta(b1 = 2, b0 = 1), mean: t = (d + 2) / (D_c + 3) (Murphy eq. 3.67).
	 * Document {a, c}, b and d absent.
	 *   ham  (D 1): t = a 2/4, b 3/4, c 3/4, d 3/4: 1/3 * 1/2 * 1/4 * 3/4 * 1/4
	 *   spam (D 2): t = a 4/5, b 3/5, c 3/5, d 2/5: 2/3 * 4/5 * 2/5 * 3/5 * 3/5
	 */
	ham = 1.0 / 3 * 0.5 * 0.25 * 0.75 * 0.25;
	spam = 2.0 / 3 * 0.8 * 0.4 * 0.6 * 0.6;
	o = toy_options(NB_BERNOULLI, 1, NB_ESTIMATOR_MEAN);
	CHECK(nb_options_set_beta(&o, 2, 1) == NB_OPTION_OK, "set");
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], p_ham(ham, spam), 1e-12, "beta [2, 1]: P(ham)");
	/* alpha does not matter to Bernoulli once beta is given */
	o.alpha = 5;
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], p_ham(ham, spam), 1e-12, "beta [2, 1], alpha 5: P(ham)");
	/* map with Beta(3, 2): (d + 2) / (D_c + 3), the same */
	o = toy_options(NB_BERNOULLI, 1, NB_ESTIMATOR_MAP);
	nb_options_set_beta(&o, 3, 2);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], p_ham(ham, spam), 1e-12, "map beta [3, 2]: P(ham)");
	/* beta [a, a] is alpha a: 64/793 with a = 1 */
	o = toy_options(NB_BERNOULLI, 7, NB_ESTIMATOR_MEAN);
	nb_options_set_beta(&o, 1, 1);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.post[HAM], 64.0 / 793, 1e-12, "beta [1, 1]: P(ham)");

	/*
	 * map Beta(1, 2): t = d / (D_c + 1), presence without pseudo-count.
	 *   ham: t_a = 0 and a is present: a zero factor.  spam: none (t_d = 0
	 *   but d is absent: 1 - 0).  P(spam) = 1.
	 */
	o = toy_options(NB_BERNOULLI, 1, NB_ESTIMATOR_MAP);
	nb_options_set_beta(&o, 1, 2);
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK(r.logp[HAM] == -INFINITY && r.logp[SPAM] == 0 && !r.any_nan,
		  "map beta [1, 2]: log P = %g, %g", r.logp[HAM], r.logp[SPAM]);
	/*
	 * map Beta(2, 1): t = (d + 1) / (D_c + 1), absence without pseudo-count.
	 * Document {d}: ham t = a 1/2, b 1, c 1, d 1: a absent 1/2, b and c
	 * absent 0: two zero factors.  spam (D 2) t = a 1, b 2/3, c 2/3, d 1/3:
	 * a absent: one.  P(spam) = 1.  Empty document: ham three zero factors
	 * (b, c, d), spam one (a): P(spam) = 1.
	 */
	nb_options_set_beta(&o, 2, 1);
	r = score_rows_opts(toy, NTOY, &o, doc_d);
	CHECK(r.logp[HAM] == -INFINITY && r.logp[SPAM] == 0 && !r.any_nan,
		  "map beta [2, 1], d: log P = %g, %g", r.logp[HAM], r.logp[SPAM]);
	/*
	 * Document {a, b, c}: ham t_d = 1 absent: one zero factor; spam: every
	 * factor positive.  So P(spam) = 1 again; with {a, b, c, d} nobody has
	 * a zero factor: ham 1/3 * 1/2 * 1 * 1 * 1, spam 2/3 * 1 * 2/3 * 2/3 * 1/3.
	 */
	{
		static const char *const doc_abcd[] = {"a", "b", "c", "d", NULL};

		r = score_rows_opts(toy, NTOY, &o, doc_abcd);
		CHECK_NEAR(r.post[HAM], p_ham(1.0 / 6, 2.0 / 3 * 2.0 / 3 * 2.0 / 3 / 3), 1e-12,
				   "map beta [2, 1], a b c d: P(ham)");
	}
}

static void
test_scorer_mix_estimators(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;
	NbOptions	o;
	double		p[3];

	/*
	 * boolean flag: a 2 of 3 true, b 0 of 1, c no rows; prior 1/2, 1/3, 1/6.
	 * beta [2, 1] mean: t = (T + 2) / (M + 3): a 4/6, b 2/4, c 2/3.
	 */
	nb_options_init(&o);
	nb_options_set_beta(&o, 2, 1);
	d.flag = 1;
	r = score_mix_opts(score_rows_mix, 6, false, &o, d);
	p[0] = 0.5 * 4 / 6, p[1] = 1.0 / 3 * 0.5, p[2] = 1.0 / 6 * 2 / 3;
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "beta [2, 1], flag true: P(a)");
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-12, "beta [2, 1], flag true: P(c)");
	d.flag = 0;
	r = score_mix_opts(score_rows_mix, 6, false, &o, d);
	p[0] = 0.5 * 2 / 6, p[1] = 1.0 / 3 * 0.5, p[2] = 1.0 / 6 / 3;
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "beta [2, 1], flag false: P(a)");

	/*
	 * categorical color, classes a and b: map alpha 2 = mean alpha 1:
	 * "blue" P(a) = 3/8 (test_scorer_categorical).  map alpha 3 = mean 2:
	 * a (0 + 2) / (3 + 4) = 2/7, b (1 + 2) / (2 + 4) = 1/2; prior 3/5, 2/5.
	 */
	d = (MixDoc) MISSING_DOC;
	d.color = "blue";
	nb_options_init(&o);
	o.estimator = NB_ESTIMATOR_MAP;
	o.alpha = 2;
	r = score_mix_opts(score_rows_mix, 5, false, &o, d);
	CHECK_NEAR(r.post[0], 3.0 / 8, 1e-12, "categorical map 2, blue: P(a)");
	o.alpha = 3;
	r = score_mix_opts(score_rows_mix, 5, false, &o, d);
	CHECK_NEAR(r.post[0], (3.0 / 5 * 2 / 7) / (3.0 / 5 * 2 / 7 + 2.0 / 5 / 2), 1e-12,
			   "categorical map 3, blue: P(a)");
	/* Gaussian features are maximum likelihood under either estimator */
	d = (MixDoc) MISSING_DOC;
	d.x = 4;
	r = score_mix_opts(score_rows_mix, 6, false, &o, d);
	{
		MixScored	mean = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);

		CHECK(r.post[0] == mean.post[0] && r.post[1] == mean.post[1],
			  "Gaussian, map vs mean: %.17g %.17g", r.post[0], mean.post[0]);
	}
}

/*
 * Complement weights normalized as Rennie et al. (scikit-learn's
 * ComplementNB(norm=True)): w_jc = log((T + aV - T_c) / (F_j + a - N_jc)),
 * divided by their sum over the vocabulary; score_c = sum_j x_j w_jc.
 */
static void
test_scorer_norm_toy(void)
{
	NbOptions	o = toy_options(NB_COMPLEMENT, 1, NB_ESTIMATOR_MEAN);
	Scored		r;
	/* complement counts (F_j + 1 - N_jc) over a b c d, totals T + aV - T_c */
	const double ham_comp[] = {4, 2, 2, 1};
	const double spam_comp[] = {1, 2, 3, 2};
	double		wh[4], ws[4], sh = 0, ss = 0, score_h, score_s;

	for (int j = 0; j < 4; j++)
	{
		wh[j] = log(9 / ham_comp[j]);
		ws[j] = log(8 / spam_comp[j]);
		sh += wh[j];
		ss += ws[j];
	}
	/* a c c */
	score_h = (wh[0] + 2 * wh[2]) / sh;
	score_s = (ws[0] + 2 * ws[2]) / ss;
	o.norm = true;
	r = score_rows_opts(toy, NTOY, &o, doc_acc);
	CHECK_NEAR(r.logp[HAM], score_h - log(exp(score_h) + exp(score_s)), 1e-14, "norm, a c c: log P(ham)");
	/* d a: token order and single occurrences */
	score_h = (wh[3] + wh[0]) / sh;
	score_s = (ws[3] + ws[0]) / ss;
	r = score_rows_opts(toy, NTOY, &o, doc_da);
	CHECK_NEAR(r.logp[HAM], score_h - log(exp(score_h) + exp(score_s)), 1e-14, "norm, d a: log P(ham)");
	/* map alpha 2 is the same */
	o.estimator = NB_ESTIMATOR_MAP;
	o.alpha = 2;
	r = score_rows_opts(toy, NTOY, &o, doc_da);
	CHECK_NEAR(r.logp[HAM], score_h - log(exp(score_h) + exp(score_s)), 1e-14, "norm, map 2: log P(ham)");
	/* the empty document: every score 0, uniform */
	r = score_rows_opts(toy, NTOY, &o, doc_empty);
	CHECK_NEAR(r.post[HAM], 0.5, 1e-15, "norm, empty: P(ham)");
}

/*
 * norm on random models of 3 and 9 classes (item rows and entries), against
 * the weights computed here from the rows' counts by the formula.
 */
static void
test_scorer_norm_random(void)
{
	uint64_t	seed = 99;

	for (int iter = 0; iter < 40; iter++)
	{
		int			C = iter % 2 ? 9 : 3;
		int			nrows = 20 + (int) (nbt_rand(&seed) % 30);
		uint32_t	V = 5 + (uint32_t) (nbt_rand(&seed) % 60);
		double		a = (iter % 4 < 2) ? 1 : 0.25;
		RandRow    *rows = malloc(sizeof(RandRow) * nrows);
		double	   *N = calloc((size_t) C * V, sizeof(double));
		double	   *F = calloc(V, sizeof(double));
		double	   *w = calloc((size_t) C * V, sizeof(double));
		bool	   *seen_tok = calloc(V, sizeof(bool));
		bool		seen_class[9] = {false};
		int			cls_index[9];
		int			Cseen = 0;
		double		T = 0, Vseen = 0;
		size_t		size;
		unsigned char *buf;
		NbView		v;
		NbIndex		ix;
		NbScorer	sc;
		NbDoc		doc;
		NbOptions	o = toy_options(NB_COMPLEMENT, a, NB_ESTIMATOR_MEAN);
		NbTokenRef	refs[8];
		char		tok[8][16];
		double		x[8];
		double		logp[9];
		double		score[9];
		char		why[200];

		rand_rows(rows, nrows, C, V, nbt_rand(&seed), false);
		for (int i = 0; i < nrows; i++)
		{
			int			c = rows[i].label[1] - '0';

			seen_class[c] = true;
			for (uint32_t t = 0; t < rows[i].n; t++)
			{
				N[(size_t) c * V + rows[i].tok[t]] += rows[i].weight;
				F[rows[i].tok[t]] += rows[i].weight;
				T += rows[i].weight;
				seen_tok[rows[i].tok[t]] = true;
			}
		}
		/* classes in byte order of "c0".."c8": the digit's order among those seen */
		for (int c = 0; c < C; c++)
			cls_index[c] = seen_class[c] ? Cseen++ : -1;
		for (uint32_t t = 0; t < V; t++)
			Vseen += seen_tok[t];
		for (int c = 0; c < C; c++)
		{
			double		Tc = 0, S = 0;

			if (!seen_class[c])
				continue;
			for (uint32_t t = 0; t < V; t++)
				Tc += N[(size_t) c * V + t];
			for (uint32_t t = 0; t < V; t++)
				if (seen_tok[t])
				{
					w[(size_t) c * V + t] = log((T + a * Vseen - Tc) / (F[t] + a - N[(size_t) c * V + t]));
					S += w[(size_t) c * V + t];
				}
			for (uint32_t t = 0; t < V; t++)
				w[(size_t) c * V + t] /= S;
		}
		buf = serialize_rand(rows, NULL, nrows, &size);
		CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
		nb_index_build(&ix, &v);
		o.norm = true;
		nb_scorer_build(&sc, &ix, &o);
		nb_doc_init(&doc, &ix);
		for (int d = 0; d < 10; d++)
		{
			uint32_t	n = 1 + (uint32_t) (nbt_rand(&seed) % 8);
			double		best = -INFINITY, lse = 0;

			for (int c = 0; c < 9; c++)
				score[c] = 0;
			for (uint32_t i = 0; i < n; i++)
			{
				uint32_t	t = (uint32_t) (nbt_rand(&seed) % V);

				x[i] = 1 + (double) (nbt_rand(&seed) % 3);
				refs[i].len = (uint32_t) snprintf(tok[i], sizeof(tok[i]), "t%u", t);
				refs[i].str = tok[i];
				refs[i].count = x[i];
				if (seen_tok[t])
					for (int c = 0; c < C; c++)
						if (seen_class[c])
							score[cls_index[c]] += x[i] * w[(size_t) c * V + t];
			}
			nb_doc_begin(&doc);
			nb_scorer_add_tokens(&sc, &doc, (uint32_t) ix.unnamed_bag, refs, n);
			nb_scorer_score(&sc, &doc, logp);
			/* the terms nb_explain reads add up to the same score (nb_scorer.h) */
			{
				double		f[9], z[9], g[9], gz[9], sum[9];
				uint32_t	j = (uint32_t) ix.unnamed_bag;

				nb_scorer_count_terms(&sc, j, 1, doc.occurrences[j], doc.distinct[j], sum, gz);
				for (uint32_t i = 0; i < doc.n_tokens; i++)
				{
					nb_scorer_item_terms(&sc, j, doc.tokens[i].token, f, z);
					for (int c = 0; c < Cseen; c++)
						sum[c] += nb_scorer_item_weight(&sc, j, doc.tokens[i].count) * f[c];
				}
				for (int c = 0; c < Cseen; c++)
					g[c] = sum[c] - sum[0];
				for (int c = 0; c < Cseen; c++)
					CHECK(fabs(g[c] - (logp[c] - logp[0])) <= 1e-13,
						  "model %d doc %d class %d: terms give log odds %.17g, scoring %.17g",
						  iter, d, c, g[c], logp[c] - logp[0]);
			}
			for (int c = 0; c < Cseen; c++)
				best = score[c] > best ? score[c] : best;
			for (int c = 0; c < Cseen; c++)
				lse += exp(score[c] - best);
			for (int c = 0; c < Cseen; c++)
			{
				double		want = score[c] - best - log(lse);

				CHECK(fabs(logp[c] - want) <= 1e-13,
					  "model %d (%d classes, alpha %g) doc %d class %d: log P %.17g, expected %.17g",
					  iter, Cseen, a, d, c, logp[c], want);
			}
		}
		nb_doc_free(&doc);
		nb_scorer_free(&sc);
		nb_index_free(&ix);
		free(buf);
		free(rows);
		free(N);
		free(F);
		free(w);
		free(seen_tok);
	}
}

/* ---------------------------------------------------------------- */

/*
 * A model of mixture components (the trainer's component keys, written with
 * NB_FORMAT_FLAG_COMPONENTS) scores each label as the sum of its
 * components: as a model of the same rows whose components are classes of
 * their own ("a0", "a1", "b"), posteriors summed, with the fitted prior;
 * the uniform prior is the labels' shared among their components by
 * documents (the flat model's given prior).
 */
static const Row component_rows[] = {
	{"a0", 1, {"x", "y", NULL}}, {"a0", 1, {"x", NULL}}, {"a1", 1, {"z", "w", NULL}},
	{"a1", 1, {"z", NULL}}, {"b", 1, {"y", "w", NULL}}, {"b", 1, {"q", NULL}},
};

static unsigned char *
serialize_components(size_t *size)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;

	nb_trainer_set_components(t);
	for (int i = 0; i < 6; i++)
	{
		const Row  *r = &component_rows[i];
		char		key[1 + NB_COMPONENT_KEY_BYTES];
		NbTokenRef	refs[MAX_DOC_TOKENS];
		uint32_t	n = 0;

		nb_trainer_component_key(r->label, 1, r->label[1] == '1' ? 1 : 0, key);
		nb_trainer_begin_doc(t, key, sizeof(key), r->weight);
		for (; r->tokens[n] != NULL; n++)
			refs[n] = (NbTokenRef) {r->tokens[n], (uint32_t) strlen(r->tokens[n]), 1.0};
		if (!nb_trainer_add_text(t, refs, n))
			abort();
	}
	buf = serialize(t, size);
	nb_trainer_destroy(t);
	return buf;
}

static void
test_scorer_components(void)
{
	static const char *const *docs[] = {doc_acc, doc_d, doc_empty};
	static const char *const doc_zw[] = {"z", "w", NULL};
	static const char *const doc_qx[] = {"q", "x", NULL};
	static const double shared[3] = {0.25, 0.25, 0.5};
	const char *const *all[] = {docs[0], docs[1], docs[2], doc_zw, doc_qx};
	size_t		size;
	unsigned char *buf = serialize_components(&size);
	NbView		v;
	NbIndex		ix;
	char		why[200];

	CHECK_OR_DONE(open_view(&v, buf, size, why, sizeof(why)) && v.settings.components && v.n_classes == 3, "the model of components");
	nb_index_build(&ix, &v);
	CHECK_OR_DONE(ix.n_labels == 2 && nb_index_class(&ix, "a", 1) == 0 && nb_index_class(&ix, "b", 1) == 1, "its labels");
	CHECK_OR_DONE(ix.label_first[0] == 0 && ix.label_first[1] == 2 && ix.label_first[2] == 3, "its labels' components");
	CHECK_OR_DONE(nb_index_label(&ix, 1) == 0 && nb_index_label(&ix, 2) == 1, "a component's label");
	for (int uniform = 0; uniform < 2; uniform++)
		for (int d = 0; d < 5; d++)
		{
			NbOptions	o = {.kind = NB_MULTINOMIAL, .alpha = 1, .var_smoothing = 1e-9,
			.prior_mode = uniform ? NB_PRIOR_UNIFORM : NB_PRIOR_FIT};
			Scored		flat = score_rows(component_rows, 6, NB_MULTINOMIAL, 1,
										  uniform ? NB_PRIOR_GIVEN : NB_PRIOR_FIT, shared, all[d]);
			NbScorer	sc;
			NbDoc		doc;
			double		logp[3];
			int64_t		best;

			nb_scorer_build(&sc, &ix, &o);
			nb_doc_init(&doc, &ix);
			make_doc(&ix, all[d], &doc);
			best = nb_scorer_score(&sc, &doc, logp);
			CHECK_OR_DONE(fabs(exp(logp[0]) - (flat.post[0] + flat.post[1])) < 1e-14, "a's posterior");
			CHECK_OR_DONE(fabs(exp(logp[1]) - flat.post[2]) < 1e-14, "b's posterior");
			CHECK_OR_DONE(best == (logp[0] >= logp[1] ? 0 : 1), "the best label");
			nb_doc_free(&doc);
			nb_scorer_free(&sc);
		}
done:
	nb_index_free(&ix);
	free(buf);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("scorer: multinomial posteriors by hand (alpha 1, 0.5)", test_scorer_multinomial);
	run("index: the item map of three features sharing values", test_index_item_map);
	run("scorer: bernoulli posteriors by hand (alpha 1)", test_scorer_bernoulli);
	run("scorer: complement posteriors by hand (alpha 1)", test_scorer_complement);
	run("scorer: uniform, given and zero class priors", test_scorer_priors);
	run("scorer: alpha=0 zero factors, fewest win, no NaN", test_scorer_alpha0);
	run("scorer: multinomial alpha=0 with a class that has no tokens (limit of alpha->0)",
		test_scorer_alpha0_empty_class_multinomial);
	run("scorer: complement alpha=0 when the other classes have no tokens (limit of alpha->0)",
		test_scorer_alpha0_empty_class_complement);
	run("scorer: exact ties go to the lowest class index", test_scorer_ties);
	run("scorer: random models vs reference (every class has tokens)",
		test_scorer_random_vs_reference);
	run("scorer: random models vs reference (with token-less documents)",
		test_scorer_random_vs_reference_empty_docs);
	run("scorer: total documents overflow (weights 1e308): refused, or no NaN",
		test_scorer_no_nan_total_docs_overflow);
	run("scorer: a class's token total overflows (weights 1e308): refused, or no NaN",
		test_scorer_no_nan_class_tokens_overflow);
	run("scorer: rows tell apart tokens alike in tag, length and first 8 bytes",
		test_scorer_rows_alike_tokens);
	run("scorer: nb_doc_add_tokens skips unknown tokens, adds up repeats across batches", test_index_lookup);
	run("scorer: what a document's model knows: known occurrences, unknown ones, none known",
		test_doc_known);
	run("scorer v2: categorical by hand, unseen values, alpha 0", test_scorer_categorical);
	run("scorer v2: boolean by hand, alpha 1 and 0", test_scorer_boolean);
	run("scorer v2: Gaussian by hand, variance floor, class without values (pooled)",
		test_scorer_gaussian);
	run("scorer v2: constant Gaussian features: no NaN, the same for every class",
		test_scorer_gaussian_constant);
	run("scorer v2: a far value of a constant feature leaves the prior",
		test_scorer_gaussian_constant_far_value);
	run("scorer v2: missing features are left out, every subset, alpha 0..1",
		test_scorer_missing_features);
	run("scorer: class_alpha smooths the fitted prior (eq. 3.68), its mode under map",
		test_scorer_class_alpha);
	run("scorer: map estimator by hand (multinomial, bernoulli, complement; a = 1 is ML)",
		test_scorer_map);
	run("scorer: asymmetric beta for Bernoulli by hand, mean and map, zero pseudo-counts",
		test_scorer_beta);
	run("scorer v2: beta for boolean, map for categorical, Gaussian unaffected",
		test_scorer_mix_estimators);
	run("scorer: complement norm by hand (Rennie et al.'s weight normalization)", test_scorer_norm_toy);
	run("scorer: a set of scorers scores as each scorer alone, sharing columns", test_scorer_set_vs_each);
	run("scorer: mixture components summed per label, fitted and uniform prior", test_scorer_components);
	run("scorer: complement norm on random models, rows and entries, vs the formula and the terms",
		test_scorer_norm_random);
	return unit_done();
}
