/*
 * test_em.c — unit tests of what EM needs beyond scoring (src/workflows/nb_em.c): the
 * log joint probability of a row and the prior's terms of the log
 * likelihood, by hand on the toy model of fixtures.h.
 *
 *   ./test_em            run every test
 *   ./test_em WORD       run the tests whose name contains WORD
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
#include "nb_em.h"
#include "nb_scorer.h"
#include "unit.h"

/* The toy model prepared for scoring under the options. */
typedef struct Toy
{
	unsigned char *buf;
	NbView		v;
	NbIndex		ix;
	NbScorer	sc;
	NbDoc		doc;
} Toy;

static void
toy_open(Toy *t, const NbOptions *o)
{
	size_t		size;
	char		why[200];

	t->buf = serialize_rows(toy, NTOY, &size);
	if (!open_view(&t->v, t->buf, size, why, sizeof(why)))
	{
		fprintf(stderr, "test_em: model rejected: %s\n", why);
		abort();
	}
	nb_index_build(&t->ix, &t->v);
	nb_scorer_build(&t->sc, &t->ix, o);
	nb_doc_init(&t->doc, &t->ix);
}

static void
toy_close(Toy *t)
{
	nb_doc_free(&t->doc);
	nb_scorer_free(&t->sc);
	nb_index_free(&t->ix);
	free(t->buf);
}

/* Score the document of these tokens (NULL-terminated; "z" is unknown). */
static void
toy_score(Toy *t, const char *const *tokens)
{
	NbTokenRef	refs[MAX_DOC_TOKENS];
	double		log_post[2];
	uint32_t	n = 0;

	for (; tokens[n] != NULL; n++)
	{
		refs[n].str = tokens[n];
		refs[n].len = (uint32_t) strlen(tokens[n]);
		refs[n].count = 1;
	}
	nb_doc_begin(&t->doc);
	nb_scorer_add_tokens(&t->sc, &t->doc, (uint32_t) t->ix.unnamed_bag, refs, n);
	(void) nb_scorer_score(&t->sc, &t->doc, log_post);
}

static const char *const doc_acz[] = {"a", "c", "a", "z", NULL};

/*
 * Multinomial, alpha 1: theta_ham = (1, 2, 3, 2) / 8, theta_spam = (4, 2, 2,
 * 1) / 9 over a b c d; pi = 1/3, 2/3.  The document a c a (z unknown).
 */
static void
test_multinomial_joint(void)
{
	NbOptions	o;
	Toy			t;
	double		shared;
	double		ham = log(1.0 / 3) + 2 * log(1.0 / 8) + log(3.0 / 8);
	double		spam = log(2.0 / 3) + 2 * log(4.0 / 9) + log(2.0 / 9);

	nb_options_init(&o);
	toy_open(&t, &o);
	toy_score(&t, doc_acz);
	shared = nb_em_shared(&t.sc, &t.doc);
	CHECK_NEAR(nb_em_log_joint(&t.sc, HAM, shared), ham, 1e-13, "log p(x, ham)");
	CHECK_NEAR(nb_em_log_joint(&t.sc, SPAM, shared), spam, 1e-13, "log p(x, spam)");
	CHECK_NEAR(nb_em_log_marginal(&t.sc, shared), log(exp(ham) + exp(spam)), 1e-13, "log p(x)");
	toy_close(&t);
}

/* The same with alpha 0.5: the shared part is 3 log 0.5. */
static void
test_multinomial_joint_alpha(void)
{
	NbOptions	o;
	Toy			t;
	double		shared;
	double		spam = log(2.0 / 3) + 2 * log(3.5 / 7) + log(1.5 / 7);

	nb_options_init(&o);
	o.alpha = 0.5;
	o.alpha_given = true;
	toy_open(&t, &o);
	toy_score(&t, doc_acz);
	shared = nb_em_shared(&t.sc, &t.doc);
	CHECK_NEAR(shared, 3 * log(0.5), 1e-14, "shared");
	CHECK_NEAR(nb_em_log_joint(&t.sc, SPAM, shared), spam, 1e-13, "log p(x, spam)");
	toy_close(&t);
}

/* sum_{c,t} a log theta_ct, and class_alpha sum_c log pi_c */
static void
test_multinomial_prior(void)
{
	NbOptions	o;
	Toy			t;
	NbPseudoCounts pc;
	double		theta = log(1.0 * 2 * 3 * 2 / pow(8, 4)) + log(4.0 * 2 * 2 * 1 / pow(9, 4));

	nb_options_init(&o);
	toy_open(&t, &o);
	pc = nb_options_pseudo(&o);
	CHECK(nb_em_check(&t.sc, &pc) == NB_EM_OK, "multinomial, alpha 1: defined");
	CHECK_NEAR(nb_em_log_prior(&t.sc, &pc, 0), theta, 1e-13, "a sum log theta");
	CHECK_NEAR(nb_em_log_prior(&t.sc, &pc, 2), theta + 2 * (log(1.0 / 3) + log(2.0 / 3)), 1e-13,
			   "with class_alpha 2");
	toy_close(&t);
}

/*
 * Bernoulli, beta (1, 1): t_ham = (1, 2, 2, 2) / 3 (D = 1), t_spam = (3, 2,
 * 2, 1) / 4 (D = 2).  The document {a, c}: ham log(1/3) + log(1/3) (b absent)
 * + log(2/3) + log(1/3) (d absent); spam log(3/4) + log(2/4) + log(2/4) +
 * log(3/4).  The prior: sum log t + log(1 - t).
 */
static void
test_bernoulli(void)
{
	NbOptions	o;
	Toy			t;
	NbPseudoCounts pc;
	double		ham = log(1.0 / 3) + log(1.0 / 3) + log(1.0 / 3) + log(2.0 / 3) + log(1.0 / 3);
	double		spam = log(2.0 / 3) + log(3.0 / 4) + log(2.0 / 4) + log(2.0 / 4) + log(3.0 / 4);
	double		prior = 4 * log(2.0 / 9) + 2 * log(3.0 / 16) + 2 * log(1.0 / 4);

	nb_options_init(&o);
	o.kind = NB_BERNOULLI;
	toy_open(&t, &o);
	toy_score(&t, doc_acz);
	pc = nb_options_pseudo(&o);
	CHECK(nb_em_check(&t.sc, &pc) == NB_EM_OK, "Bernoulli, beta (1, 1): defined");
	CHECK_NEAR(nb_em_shared(&t.sc, &t.doc), 0, 0, "nothing shared");
	CHECK_NEAR(nb_em_log_joint(&t.sc, HAM, 0), ham, 1e-13, "log p(x, ham)");
	CHECK_NEAR(nb_em_log_joint(&t.sc, SPAM, 0), spam, 1e-13, "log p(x, spam)");
	CHECK_NEAR(nb_em_log_prior(&t.sc, &pc, 0), prior, 1e-13, "sum log t + log(1 - t)");
	toy_close(&t);
}

/* What EM is not defined for. */
static void
test_check(void)
{
	NbOptions	o;
	Toy			t;
	NbPseudoCounts pc;

	nb_options_init(&o);
	o.kind = NB_COMPLEMENT;
	toy_open(&t, &o);
	pc = nb_options_pseudo(&o);
	CHECK(nb_em_check(&t.sc, &pc) == NB_EM_KIND, "complement");
	toy_close(&t);

	nb_options_init(&o);
	o.alpha = 0;
	o.alpha_given = true;
	toy_open(&t, &o);
	pc = nb_options_pseudo(&o);
	CHECK(nb_em_check(&t.sc, &pc) == NB_EM_NOT_SMOOTHED, "alpha 0");
	toy_close(&t);

	nb_options_init(&o);
	o.kind = NB_BERNOULLI;
	o.beta_given = true;
	o.beta[0] = 1;
	o.beta[1] = 0;
	toy_open(&t, &o);
	pc = nb_options_pseudo(&o);
	CHECK(nb_em_check(&t.sc, &pc) == NB_EM_NOT_SMOOTHED, "Bernoulli, beta (1, 0)");
	toy_close(&t);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("em: multinomial log p(x, c) and log p(x) by hand", test_multinomial_joint);
	run("em: the part scoring leaves out, alpha 0.5", test_multinomial_joint_alpha);
	run("em: the Dirichlet prior's terms", test_multinomial_prior);
	run("em: Bernoulli log p(x, c) and the Beta prior's terms", test_bernoulli);
	run("em: kinds and smoothing EM is not defined for", test_check);
	return unit_done();
}
