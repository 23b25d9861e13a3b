/*
 * nb_scorer.c — scoring a document with a scorer (built by
 * nb_scorer_build.c, whose head has the formulas): the per-class constants
 * plus the terms of the document's items and other features, then the
 * posterior.
 */
#include "nb_scorer_internal.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_dcm.h"
#include "nb_interrupt.h"
#include "nb_port.h"

/*
 * A Gaussian term can be as low as -inf (a value far from a mean with a
 * tiny variance).  Terms are kept at or above this, so that sums stay
 * finite and never produce -inf - -inf.
 */
#define NB_MIN_TERM (-1e300)

void
nb_scorer_count_terms(const NbScorer *sc, uint32_t j, double base_weight, double occ,
					  double dist, double *f, double *z)
{
	uint32_t	C = sc->index->n_classes;
	uint64_t	jc = (uint64_t) j * C;

	for (uint32_t c = 0; c < C; c++)
	{
		f[c] = base_weight * sc->base_f[jc + c] + occ * sc->occ_f[jc + c] +
			dist * sc->dist_f[jc + c];
		z[c] = base_weight * sc->base_z[jc + c] + occ * sc->occ_z[jc + c] +
			dist * sc->dist_z[jc + c];
	}
	/* DCM: log Gamma(s) - log Gamma(s + n), not linear in the occurrences n */
	if (sc->dcm_s != NULL && sc->index->feature_type[j] == NB_FEATURE_BAG)
		for (uint32_t c = 0; c < C; c++)
			f[c] -= nb_lgamma_ratio(sc->dcm_s[jc + c], occ);
}

void
nb_scorer_value_terms(const NbScorer *sc, uint32_t j, double x, double *f, double *z)
{
	uint32_t	C = sc->index->n_classes;
	uint64_t	jc = (uint64_t) j * C;
	double		best = -INFINITY;

	if (sc->index->feature_type[j] == NB_FEATURE_BOOLEAN)
	{
		const double *tf = x != 0 ? sc->occ_f : sc->dist_f;
		const double *tz = x != 0 ? sc->occ_z : sc->dist_z;

		for (uint32_t c = 0; c < C; c++)
		{
			f[c] = tf[jc + c];
			z[c] = tz[jc + c];
		}
		return;
	}
	for (uint32_t c = 0; c < C; c++)
	{
		z[c] = 0;
		f[c] = 0;
		if (sc->usable[j])
		{
			double		d = x - sc->mean[jc + c];

			f[c] = sc->base_f[jc + c] - 0.5 * (d * d / sc->var[jc + c]);
			if (f[c] > best)
				best = f[c];
		}
	}

	/*
	 * Relative to the best class, which changes no posterior but keeps
	 * magnitudes small; a value so far from every mean that each term is
	 * -inf tells the classes apart no more than a missing one.
	 */
	for (uint32_t c = 0; c < C; c++)
	{
		double		rel = best == -INFINITY ? 0 : f[c] - best;

		f[c] = rel < NB_MIN_TERM ? NB_MIN_TERM : rel;
	}
}

/* Add feature j's terms for a present feature (everything but its items' terms). */
static void
add_feature(NbScorer *sc, const NbDoc *doc, uint32_t j)
{
	uint32_t	C = sc->index->n_classes;

	if (sc->index->feature_type[j] == NB_FEATURE_BAG ||
		sc->index->feature_type[j] == NB_FEATURE_CATEGORICAL)
		nb_scorer_count_terms(sc, j, 1, doc->occurrences[j], doc->distinct[j],
							  sc->term, sc->term_z);
	else
		nb_scorer_value_terms(sc, j, doc->value[j], sc->term, sc->term_z);
	for (uint32_t c = 0; c < C; c++)
	{
		nb_add_compensated(&sc->f[c], &sc->fc[c], sc->term[c]);
		sc->z[c] += sc->term_z[c];
	}
}

/* How many times an item's terms count: per occurrence, or once (Bernoulli). */
static inline double
item_multiplier(const NbScorer *sc, const NbDocToken *t)
{
	return sc->any_per_document ? nb_scorer_item_weight(sc, t->feature, t->count) : t->count;
}

/* Add the terms of the document's items, kept as entries. */
static void
add_item_entries(NbScorer *sc, const NbDoc *doc)
{
	const NbIndex *ix = sc->index;
	uint64_t	work = 0;

	for (uint32_t i = 0; i < doc->n_tokens; i++)
	{
		const NbDocToken *t = &doc->tokens[i];
		double		mult = item_multiplier(sc, t);
		uint64_t	end = ix->token_start[t->token + 1];

		nb_interrupt_count(&work, 1 + (end - ix->token_start[t->token]));
		for (uint64_t e = ix->token_start[t->token]; e < end; e++)
		{
			uint32_t	c = sc->entry[e].cls;

			nb_add_compensated(&sc->f[c], &sc->fc[c], mult * sc->entry[e].f);
		}
		if (sc->any_entry_z)
			for (uint64_t e = ix->token_start[t->token]; e < end; e++)
				sc->z[nb_index_entry_class(ix, e)] += mult * sc->entry_z[e];
	}
}

/*
 * The same with the entries kept as rows: a class without entry adds an
 * exact 0, so the scores are the same to the bit.  Inline for each number
 * of classes C (a constant there), with the loops over classes unrolled, so
 * that the sums stay in registers instead of going through memory for
 * every token (GCC does not unroll all of them by itself).  The pragma
 * takes no macro: 6 is NB_ROW_CLASSES.
 */
_Static_assert(NB_ROW_CLASSES == 6, "the unroll pragmas below need updating");

NB_HOT_INLINE void
add_item_rows_of(NbScorer *sc, const NbDoc *doc, uint32_t C, size_t row_size)
{
	double		f[NB_ROW_CLASSES];
	double		fc[NB_ROW_CLASSES];

#pragma GCC unroll 6
	for (uint32_t c = 0; c < C; c++)
	{
		f[c] = sc->f[c];
		fc[c] = sc->fc[c];
	}
	for (uint32_t i = 0; i < doc->n_tokens; i++)
	{
		const NbDocToken *t = &doc->tokens[i];
		double		mult = item_multiplier(sc, t);
		const double *row = nb_row_terms(sc->rows, row_size, t->slot);

		nb_interrupt_at(i);
#pragma GCC unroll 6
		for (uint32_t c = 0; c < C; c++)
			nb_add_compensated(&f[c], &fc[c], mult * row[c]);
		if (sc->row_z != NULL)
		{
			row = sc->row_z + (uint64_t) t->slot * C;
#pragma GCC unroll 6
			for (uint32_t c = 0; c < C; c++)
				sc->z[c] += mult * row[c];
		}
	}
#pragma GCC unroll 6
	for (uint32_t c = 0; c < C; c++)
	{
		sc->f[c] = f[c];
		sc->fc[c] = fc[c];
	}
}

static void
add_item_rows(NbScorer *sc, const NbDoc *doc)
{
	switch (sc->index->n_classes)
	{
		case 1:
			add_item_rows_of(sc, doc, 1, nb_row_size(1));
			break;
		case 2:
			add_item_rows_of(sc, doc, 2, nb_row_size(2));
			break;
		case 3:
			add_item_rows_of(sc, doc, 3, nb_row_size(3));
			break;
		case 4:
			add_item_rows_of(sc, doc, 4, nb_row_size(4));
			break;
		case 5:
			add_item_rows_of(sc, doc, 5, nb_row_size(5));
			break;
		default:				/* 6, see NB_ROW_CLASSES */
			add_item_rows_of(sc, doc, 6, nb_row_size(6));
			break;
	}
}

/*
 * Complement with norm: per bag feature j present, the products
 * g_j * norm_scale[j, c] of g_j = sum of x_k norm_u[k] over its items.
 */
static void
add_norm_products(NbScorer *sc, const NbDoc *doc)
{
	uint32_t	C = sc->index->n_classes;

	for (uint32_t i = 0; i < doc->n_present; i++)
		sc->norm_g[doc->present_list[i]] = 0;
	for (uint32_t i = 0; i < doc->n_tokens; i++)
	{
		nb_interrupt_at(i);
		sc->norm_g[doc->tokens[i].feature] += doc->tokens[i].count * sc->norm_u[doc->tokens[i].token];
	}
	for (uint32_t i = 0; i < doc->n_present; i++)
	{
		uint32_t	j = doc->present_list[i];

		for (uint32_t c = 0; c < C; c++)
			nb_add_compensated(&sc->f[c], &sc->fc[c], sc->norm_g[j] * sc->norm_scale[(uint64_t) j * C + c]);
	}
}

/*
 * DCM: the rest of the term of a known token occurring x != 1 times in
 * class c, log Gamma(beta + x) - log Gamma(beta + 1), from its item term
 * log(beta / beta0) (0 where it has none) and dist_f = log beta0.
 */
static inline double
dcm_repeat(const NbScorer *sc, uint64_t jcc, double item_term, double x)
{
	return nb_dcm_repeat(exp(sc->dist_f[jcc] + item_term), x);
}

/* DCM: dcm_repeat of each known token occurring x != 1 times. */
static void
add_dcm_repeats(NbScorer *sc, const NbDoc *doc)
{
	const NbIndex *ix = sc->index;
	uint32_t	C = ix->n_classes;

	for (uint32_t i = 0; i < doc->n_tokens; i++)
	{
		const NbDocToken *t = &doc->tokens[i];
		uint64_t	jc = (uint64_t) t->feature * C;

		nb_interrupt_at(i);
		if (t->count == 1 || ix->feature_type[t->feature] != NB_FEATURE_BAG)
			continue;
		nb_scorer_item_terms(sc, t->feature, t->token, sc->term, sc->term_z);
		for (uint32_t c = 0; c < C; c++)
			nb_add_compensated(&sc->f[c], &sc->fc[c], dcm_repeat(sc, jc + c, sc->term[c], t->count));
	}
}

void
nb_scorer_score_begin(NbScorer *sc, const NbDoc *doc)
{
	uint32_t	C = sc->index->n_classes;
	uint64_t	work = 0;

	for (uint32_t c = 0; c < C; c++)
	{
		sc->f[c] = sc->prior_f[c];
		sc->fc[c] = 0;
		sc->z[c] = 0;
	}
	for (uint32_t i = 0; i < doc->n_present; i++)
	{
		nb_interrupt_count(&work, 1 + (uint64_t) C);
		add_feature(sc, doc, doc->present_list[i]);
	}
}

/*
 * The log posterior of each label of a model of mixture components, the
 * log of its components' summed, into log_post[k] (in place: label k's
 * components are at k or later); returns the most probable label.
 */
static int64_t
sum_components(const NbIndex *ix, double *log_post)
{
	int64_t		best = -1;

	for (uint32_t k = 0; k < ix->n_labels; k++)
	{
		double		top = -INFINITY;
		double		sum = 0;

		for (uint32_t c = ix->label_first[k]; c < ix->label_first[k + 1]; c++)
			top = fmax(top, log_post[c]);
		if (top != -INFINITY)
			for (uint32_t c = ix->label_first[k]; c < ix->label_first[k + 1]; c++)
				sum += exp(log_post[c] - top);
		log_post[k] = top == -INFINITY ? top : top + log(sum);
		if (log_post[k] != -INFINITY && (best < 0 || log_post[k] > log_post[best]))
			best = k;
	}
	return best;
}

int64_t
nb_scorer_score_end(NbScorer *sc, const NbDoc *doc, double *log_post)
{
	uint32_t	C = sc->index->n_classes;
	double		zmin = INFINITY;
	double		fmax = -INFINITY;
	double		sum = 0;
	double		lse;
	int64_t		best = -1;

	if (sc->norm_u != NULL)
		add_norm_products(sc, doc);
	if (sc->dcm_s != NULL)
		add_dcm_repeats(sc, doc);
	for (uint32_t c = 0; c < C; c++)
		sc->f[c] += sc->fc[c];

	/* the classes with the fewest zero factors share the probability */
	for (uint32_t c = 0; c < C; c++)
		if (!sc->excluded[c])
		{
			/* zero factors counted past float8: huge counts */
			if (!isfinite(sc->z[c]))
				return NB_SCORE_OUT_OF_RANGE;
			if (sc->z[c] < zmin)
				zmin = sc->z[c];
		}
	if (zmin == INFINITY)
		return NB_SCORE_NO_CLASS;
	for (uint32_t c = 0; c < C; c++)
		if (!sc->excluded[c] && sc->z[c] == zmin)
		{
			/* an overflowed term: no posterior can be told from it */
			if (!isfinite(sc->f[c]))
				return NB_SCORE_OUT_OF_RANGE;
			if (sc->f[c] > fmax)
				fmax = sc->f[c];
		}
	for (uint32_t c = 0; c < C; c++)
		if (!sc->excluded[c] && sc->z[c] == zmin)
			sum += exp(sc->f[c] - fmax);
	lse = log(sum);

	/*
	 * Relative to the largest score first: scores can be far larger in
	 * magnitude than their differences.  The best class is chosen on what is
	 * reported, so equal posteriors tie.
	 */
	for (uint32_t c = 0; c < C; c++)
	{
		log_post[c] = (!sc->excluded[c] && sc->z[c] == zmin) ? (sc->f[c] - fmax) - lse : -INFINITY;
		if (log_post[c] != -INFINITY && (best < 0 || log_post[c] > log_post[best]))
			best = c;
	}
	if (sc->index->label_first != NULL && !sc->by_component)
		best = sum_components(sc->index, log_post);
	/* none (temperature 1): nothing touches the posteriors */
	if (!nb_calibration_is_identity(&sc->calibration))
		best = nb_calibration_apply(&sc->calibration, log_post, sc->index->n_labels, best,
									sc->cal_scratch);
	return best;
}

int64_t
nb_scorer_score(NbScorer *sc, const NbDoc *doc, double *log_post)
{
	const NbIndex *ix = sc->index;

	/* rows are in cache: looking the token up fetched them */
	if (sc->rows == NULL)
		for (uint32_t i = 0; i < doc->n_tokens; i++)
			nb_prefetch(&sc->entry[ix->token_start[doc->tokens[i].token]]);
	nb_scorer_score_begin(sc, doc);
	if (sc->rows != NULL)
		add_item_rows(sc, doc);
	else
		add_item_entries(sc, doc);
	return nb_scorer_score_end(sc, doc, log_post);
}

void
nb_scorer_item_terms(const NbScorer *sc, uint32_t j, uint32_t k, double *f, double *z)
{
	const NbIndex *ix = sc->index;
	uint32_t	C = ix->n_classes;

	if (sc->rows != NULL)
	{
		uint64_t	r = ix->item_place[k];
		const double *row = nb_row_terms(sc->rows, sc->row_size, r);

		for (uint32_t c = 0; c < C; c++)
		{
			f[c] = row[c];
			z[c] = sc->row_z != NULL ? sc->row_z[r * C + c] : 0;
		}
	}
	else
	{
		for (uint32_t c = 0; c < C; c++)
			f[c] = z[c] = 0;
		for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
		{
			f[sc->entry[e].cls] = sc->entry[e].f;
			z[sc->entry[e].cls] = sc->entry_z != NULL ? sc->entry_z[e] : 0;
		}
	}
	/* the product add_norm_products adds per occurrence */
	if (sc->norm_u != NULL)
		for (uint32_t c = 0; c < C; c++)
			f[c] += sc->norm_u[k] * sc->norm_scale[(uint64_t) j * C + c];
}

void
nb_scorer_dcm_item_terms(const NbScorer *sc, uint32_t j, uint32_t k, double x,
						 double *f, double *z)
{
	uint32_t	C = sc->index->n_classes;
	uint64_t	jc = (uint64_t) j * C;

	/* z stays 0: the DCM needs alpha > 0 (nb_options_check_set) */
	nb_scorer_item_terms(sc, j, k, f, z);
	for (uint32_t c = 0; c < C; c++)
	{
		double		item_term = f[c];

		f[c] = sc->dist_f[jc + c] + item_term;
		if (x != 1)
			f[c] += dcm_repeat(sc, jc + c, item_term, x);
	}
}

void
nb_scorer_add_tokens(const NbScorer *sc, NbDoc *doc, uint32_t feature,
					 const NbTokenRef *tokens, uint32_t n)
{
	/*
	 * With rows, adding up repeats (a lookup in doc->items per token) costs
	 * more than scoring each occurrence of a token from its row in cache.
	 */
	if (sc->rows == NULL)
		nb_doc_add_tokens(sc->index, doc, feature, tokens, n);
	else
		nb_doc_add_row_tokens(sc->index, doc, feature, tokens, n, sc->rows, sc->row_size,
							  !sc->per_occurrence[feature]);
}
