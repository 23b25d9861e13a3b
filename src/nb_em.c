/*
 * nb_em.c — the log likelihood of EM training, see nb_em.h.
 */
#include "nb_em.h"

#include <math.h>

#include "nb_exact.h"
#include "nb_interrupt.h"

NbEmStatus
nb_em_check(const NbScorer *sc)
{
	const NbIndex *ix = sc->index;

	if (sc->kind != NB_MULTINOMIAL)
		return NB_EM_NOT_MULTINOMIAL;
	if (!(sc->alpha > 0))
		return NB_EM_NOT_SMOOTHED;
	for (uint32_t j = 0; j < ix->n_features; j++)
		if (ix->feature_type[j] != NB_FEATURE_BAG)
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

double
nb_em_log_joint(const NbScorer *sc, uint32_t c, double shared)
{
	return sc->excluded[c] ? -INFINITY : sc->f[c] + shared;
}

double
nb_em_log_marginal(const NbScorer *sc, double shared)
{
	uint32_t	C = sc->index->n_classes;
	double		fmax = -INFINITY;
	double		sum = 0;

	for (uint32_t c = 0; c < C; c++)
		if (!sc->excluded[c] && sc->f[c] > fmax)
			fmax = sc->f[c];
	if (fmax == -INFINITY)
		return -INFINITY;
	for (uint32_t c = 0; c < C; c++)
		if (!sc->excluded[c])
			sum += exp(sc->f[c] - fmax);
	return fmax + log(sum) + shared;
}

/*
 * sum_t log theta_ct = sum over c's entries of log((N_ct + a) / a)
 *                      + V log a - V log(N_c + a V)
 * for each class c of each bag, the tokens a class never saw having
 * theta_ct = a / (N_c + a V).
 */
double
nb_em_log_prior(const NbScorer *sc, double class_alpha)
{
	const NbIndex *ix = sc->index;
	uint32_t	C = ix->n_classes;
	double		a = sc->alpha;
	double		log_a = log(a);
	uint32_t	first_item = 0;
	NbExactSum	theta;
	NbExactSum	pi;

	nb_exact_init(&theta);
	nb_exact_init(&pi);
	for (uint32_t j = 0; j < ix->n_features; j++)
	{
		double		V = (double) ix->feature_items[j];
		uint64_t	first = ix->token_start[first_item];
		uint64_t	end = ix->token_start[first_item + ix->feature_items[j]];

		for (uint64_t e = first; e < end; e++)
		{
			nb_interrupt_at(e);
			nb_exact_add(&theta, log(ix->entry_count[e] + a) - log_a);
		}
		for (uint32_t c = 0; c < C; c++)
			nb_exact_add(&theta, V * (log_a - log(ix->feature_tokens[(uint64_t) j * C + c] + a * V)));
		first_item += ix->feature_items[j];
	}
	if (class_alpha > 0)
		for (uint32_t c = 0; c < C; c++)
			nb_exact_add(&pi, sc->excluded[c] ? -INFINITY : sc->prior_f[c]);
	return a * nb_exact_value(&theta) + (class_alpha > 0 ? class_alpha * nb_exact_value(&pi) : 0);
}
