/*
 * nb_em.c — the log likelihood of EM training, see nb_em.h.
 */
#include "nb_em.h"

#include <math.h>

#include "nb_alloc.h"
#include "nb_exact.h"
#include "nb_interrupt.h"

NbEmStatus
nb_em_check(const NbScorer *sc, const NbPseudoCounts *pc)
{
	if (sc->kind != NB_MULTINOMIAL && sc->kind != NB_BERNOULLI)
		return NB_EM_KIND;
	if (sc->kind == NB_MULTINOMIAL ? !(pc->alpha > 0) : !(pc->present > 0 && pc->absent > 0))
		return NB_EM_NOT_SMOOTHED;
	if (!nb_scorer_model_traits(sc->index).only_bags)
		return NB_EM_NOT_BAGS;
	return NB_EM_OK;
}

double
nb_em_shared(const NbScorer *sc, const NbDoc *doc)
{
	double		sum = 0;

	for (uint32_t i = 0; i < doc->n_tokens; i++)
	{
		const NbDocToken *t = &doc->tokens[i];
		double		f, z;

		nb_interrupt_at(i);
		nb_scorer_item_shared(sc, t->feature, t->token, &f, &z);
		sum += nb_scorer_item_weight(sc, t->feature, t->count) * f;
	}
	return sum;
}

/* log sum of exp(f[c]) + shared over the classes lo .. hi - 1 not excluded. */
static double
log_sum(const NbScorer *sc, uint32_t lo, uint32_t hi, double shared)
{
	double		fmax = -INFINITY;
	double		sum = 0;

	for (uint32_t c = lo; c < hi; c++)
		if (!sc->excluded[c] && sc->f[c] > fmax)
			fmax = sc->f[c];
	if (fmax == -INFINITY)
		return -INFINITY;
	for (uint32_t c = lo; c < hi; c++)
		if (!sc->excluded[c])
			sum += exp(sc->f[c] - fmax);
	return fmax + log(sum) + shared;
}

double
nb_em_log_joint(const NbScorer *sc, uint32_t k, double shared)
{
	const NbIndex *ix = sc->index;

	if (ix->label_first != NULL)
		return log_sum(sc, ix->label_first[k], ix->label_first[k + 1], shared);
	return sc->excluded[k] ? -INFINITY : sc->f[k] + shared;
}

double
nb_em_log_marginal(const NbScorer *sc, double shared)
{
	return log_sum(sc, 0, sc->index->n_classes, shared);
}

/*
 * Multinomial: sum_t log theta_ct = sum over c's entries of log((N_ct + a) / a)
 *              + V log a - V log(N_c + a V),
 * the tokens a class never saw having theta_ct = a / (N_c + a V).
 */
static void
multinomial_prior(const NbIndex *ix, uint32_t j, uint64_t first, uint64_t end, double a,
				  NbExactSum *sum)
{
	uint32_t	C = ix->n_classes;
	double		V = (double) ix->feature_items[j];
	double		log_a = log(a);

	for (uint64_t e = first; e < end; e++)
	{
		nb_interrupt_at(e);
		nb_exact_add(sum, a * (log(nb_index_entry_count(ix, e) + a) - log_a));
	}
	for (uint32_t c = 0; c < C; c++)
		nb_exact_add(sum, a * V * (log_a - log(ix->feature_tokens[(uint64_t) j * C + c] + a * V)));
}

/* b1 log t + b0 log(1 - t) of t = (d + b1) / (D + b1 + b0), log1p where t is small */
static double
beta_term(double d, double D, double b1, double b0)
{
	double		den = D + b1 + b0;
	double		t = (d + b1) / den;
	double		log_absent = t < 0.5 ? log1p(-t) : log(D - d + b0) - log(den);

	return b1 * (log(d + b1) - log(den)) + b0 * log_absent;
}

/*
 * Bernoulli: sum_t [b1 log t_ct + b0 log(1 - t_ct)], t_ct = (d_ct + b1) /
 * (D_c + b1 + b0) over the rows D_c with the bag, the tokens a class never
 * saw having d_ct = 0.
 */
static void
bernoulli_prior(const NbIndex *ix, uint32_t j, uint64_t first, uint64_t end,
				const NbPseudoCounts *pc, NbExactSum *sum)
{
	uint32_t	C = ix->n_classes;
	uint64_t	jc = (uint64_t) j * C;
	double		V = (double) ix->feature_items[j];
	double	   *seen = nb_alloc_zero(sizeof(double) * C);

	for (uint64_t e = first; e < end; e++)
	{
		uint32_t	c = nb_index_entry_class(ix, e);

		nb_interrupt_at(e);
		seen[c] += 1;
		nb_exact_add(sum, beta_term(nb_index_entry_docs(ix, e), nb_index_present(ix, jc + c), pc->present, pc->absent));
	}
	for (uint32_t c = 0; c < C; c++)
		nb_exact_add(sum, (V - seen[c]) * beta_term(0, nb_index_present(ix, jc + c), pc->present, pc->absent));
	nb_free(seen);
}

double
nb_em_log_prior(const NbScorer *sc, const NbPseudoCounts *pc, double class_alpha)
{
	const NbIndex *ix = sc->index;
	uint32_t	C = ix->n_classes;
	uint32_t	first_item = 0;
	NbExactSum	sum;

	nb_exact_init(&sum);
	for (uint32_t j = 0; j < ix->n_features; j++)
	{
		uint64_t	first = ix->token_start[first_item];
		uint64_t	end = ix->token_start[first_item + ix->feature_items[j]];

		if (sc->kind == NB_MULTINOMIAL)
			multinomial_prior(ix, j, first, end, pc->alpha, &sum);
		else
			bernoulli_prior(ix, j, first, end, pc, &sum);
		first_item += ix->feature_items[j];
	}
	if (class_alpha > 0)
		for (uint32_t c = 0; c < C; c++)
			nb_exact_add(&sum, sc->excluded[c] ? -INFINITY : class_alpha * sc->prior_f[c]);
	return nb_exact_value(&sum);
}
