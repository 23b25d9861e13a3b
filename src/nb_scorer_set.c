/*
 * nb_scorer_set.c — the scorers of several option sets of one model
 * (nb_scorer.h, NbScorerSet): their item terms side by side, built from
 * their scorers' entries, and a document scored under every set at once.
 */
#include "nb_scorer_internal.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "nb_port.h"

/* Put scorer s's entries in column j of the set and free them. */
static void
take_entries(NbScorerSet *set, uint32_t s, uint32_t j)
{
	NbScorer   *sc = &set->scorers[s];
	uint64_t	E = sc->index->n_entries;
	uint32_t	m = set->m;

	/* zero factors are rare (a pseudo-count of 0): room for them when one comes */
	if (sc->any_entry_z && set->terms_z == NULL)
		set->terms_z = nb_alloc_zero(sizeof(double) * (E * m + 1));
	for (uint64_t e = 0; e < E; e++)
	{
		nb_interrupt_at(e);
		set->terms[e * m + j] = sc->entry[e].f;
		if (sc->any_entry_z)
			set->terms_z[e * m + j] = sc->entry_z[e];
	}
	/* DCM's repeats read the entries (add_dcm_repeats) */
	if (sc->dcm_s == NULL)
	{
		nb_free(sc->entry);
		nb_free_if(sc->entry_z);
		sc->entry = NULL;
		sc->entry_z = NULL;
	}
}

/*
 * The column of each of n option sets (option sets that differ in the prior
 * only share one) and the first option set of each column; returns the
 * number of columns.  Each option set is compared with every column before
 * its own: a grid of thousands of distinct option sets takes millions of
 * comparisons, hence the checks for interrupts.
 */
static uint32_t
assign_columns(const NbOptions *opts, uint32_t n, uint32_t *column, uint32_t *owner)
{
	uint32_t	m = 0;
	uint64_t	work = 0;

	for (uint32_t s = 0; s < n; s++)
	{
		uint32_t	j = 0;

		while (j < m && !nb_scorer_same_but_prior(&opts[owner[j]], &opts[s]))
			j++;
		nb_interrupt_count(&work, 1 + (uint64_t) j);
		column[s] = j;
		if (j == m)
			owner[m++] = s;
	}
	return m;
}

uint64_t
nb_scorer_set_bytes(const NbIndex *ix, const NbOptions *opts, uint32_t n)
{
	uint64_t	C = ix->n_classes;
	uint64_t	FC = (uint64_t) ix->n_features * C + 1;
	uint64_t	E = ix->n_entries;
	uint32_t   *column = nb_alloc(sizeof(uint32_t) * (n + 1));
	uint32_t   *owner = nb_alloc(sizeof(uint32_t) * (n + 1));
	uint32_t	m = assign_columns(opts, n, column, owner);
	uint32_t	tables = nb_scorer_tables_per_pair(ix);
	/*
	 * the terms and scratch of each column, and one column's entries while
	 * it is built (their zero factors only come with a pseudo-count of 0)
	 */
	uint64_t	bytes = sizeof(double) * (E + 3 * C + 1) * m +
		sizeof(NbScoredEntry) * (E + 1);

	for (uint32_t s = 0; s < n; s++)
	{
		/* the tables per (feature, class), six per class and the excluded flags */
		bytes += sizeof(NbScorer) + sizeof(double) * tables * FC +
			(sizeof(double) * 6 + sizeof(bool)) * C;
		if (opts[s].norm)
			bytes += sizeof(double) * ((uint64_t) ix->n_tokens + 1 + FC);
		/* a DCM column keeps its entries (add_dcm_repeats reads them) */
		if (opts[s].kind == NB_DCM && owner[column[s]] == s)
			bytes += sizeof(NbScoredEntry) * (E + 1) + sizeof(double) * FC;
	}
	nb_free(column);
	nb_free(owner);
	return bytes;
}

void
nb_scorer_set_build(NbScorerSet *set, const NbIndex *ix, NbScorer *scorers,
					const NbOptions *opts, uint32_t n)
{
	uint32_t	C = ix->n_classes;
	uint64_t	E = ix->n_entries;
	uint32_t	m;

	memset(set, 0, sizeof(*set));
	set->n = n;
	set->scorers = scorers;
	set->column = nb_alloc(sizeof(uint32_t) * n);
	set->owner = nb_alloc(sizeof(uint32_t) * n);
	m = assign_columns(opts, n, set->column, set->owner);
	set->m = m;
	set->terms = nb_alloc(sizeof(double) * (E * m + 1));
	set->f = nb_alloc(sizeof(double) * m * C);
	set->fc = nb_alloc(sizeof(double) * m * C);
	set->z = nb_alloc(sizeof(double) * m * C);
	set->mult = nb_alloc(sizeof(double) * m);
	for (uint32_t s = 0; s < n; s++)
	{
		uint32_t	j = set->column[s];

		if (set->owner[j] == s)
		{
			nb_scorer_build_entries(&scorers[s], ix, &opts[s]);
			take_entries(set, s, j);
		}
		else
			nb_scorer_copy_with_prior(&scorers[s], &scorers[set->owner[j]], &opts[s]);
	}
}

void
nb_scorer_set_free(NbScorerSet *set)
{
	nb_free(set->column);
	nb_free(set->owner);
	nb_free(set->terms);
	nb_free_if(set->terms_z);
	nb_free(set->f);
	nb_free(set->fc);
	nb_free(set->z);
	nb_free(set->mult);
	memset(set, 0, sizeof(*set));
}

/*
 * Fetch the terms of item k in every column, a few cache lines in a row,
 * before they are added: an item's terms are one block, the items of a
 * document are scattered over the whole table.
 */
static inline void
prefetch_set_terms(const NbScorerSet *set, uint32_t k)
{
	const NbIndex *ix = set->scorers[0].index;
	const uint32_t *start = &ix->token_start[k];
	const char *first = (const char *) &set->terms[(uint64_t) start[0] * set->m];
	const char *last = (const char *) &set->terms[(uint64_t) start[1] * set->m];

	nb_prefetch(ix->entries_class + (uint64_t) start[0] * 4);
	for (const char *p = first; p < last; p += 64)
		nb_prefetch(p);
}

/*
 * The item terms of a document in every column, summed from 0 into set->f,
 * fc and z (class-major: [c * m + j], so that the columns of a class are
 * adjacent and the loop over them vectorizes), in the order of
 * add_item_entries.
 */
NB_VECTORIZE
static void
add_set_items(NbScorerSet *set, const NbDoc *doc)
{
	const NbIndex *ix = set->scorers[0].index;
	uint32_t	m = set->m;
	uint32_t	C = ix->n_classes;
	uint64_t	work = 0;

	memset(set->f, 0, sizeof(double) * m * C);
	memset(set->fc, 0, sizeof(double) * m * C);
	memset(set->z, 0, sizeof(double) * m * C);
	for (uint32_t i = 0; i < doc->n_tokens && i < NB_PREFETCH_DISTANCE; i++)
		prefetch_set_terms(set, doc->tokens[i].token);
	for (uint32_t i = 0; i < doc->n_tokens; i++)
	{
		const NbDocToken *t = &doc->tokens[i];
		uint64_t	end = ix->token_start[t->token + 1];
		double	   *restrict mult = set->mult;

		nb_interrupt_count(&work, 1 + (end - ix->token_start[t->token]) * m);
		if (i + NB_PREFETCH_DISTANCE < doc->n_tokens)
			prefetch_set_terms(set, doc->tokens[i + NB_PREFETCH_DISTANCE].token);
		for (uint32_t j = 0; j < m; j++)
			mult[j] = nb_scorer_item_weight(&set->scorers[set->owner[j]], t->feature, t->count);
		for (uint64_t e = ix->token_start[t->token]; e < end; e++)
		{
			double	   *restrict f = &set->f[(uint64_t) nb_index_entry_class(ix, e) * m];
			double	   *restrict fc = &set->fc[(uint64_t) nb_index_entry_class(ix, e) * m];
			const double *restrict terms = &set->terms[e * m];

			/* nb_add_compensated, spelled out: GCC inlines no function into one with other options */
			for (uint32_t j = 0; j < m; j++)
			{
				double		term = mult[j] * terms[j];
				double		total = f[j] + term;

				fc[j] += fabs(f[j]) >= fabs(term) ? (f[j] - total) + term : (term - total) + f[j];
				f[j] = total;
			}
		}
		if (set->terms_z != NULL)
			for (uint64_t e = ix->token_start[t->token]; e < end; e++)
				for (uint32_t j = 0; j < m; j++)
					set->z[(uint64_t) nb_index_entry_class(ix, e) * m + j] += mult[j] * set->terms_z[e * m + j];
	}
}

bool
nb_scorer_set_score(NbScorerSet *set, const NbDoc *doc, double *log_post)
{
	uint32_t	m = set->m;
	uint32_t	C = set->scorers[0].index->n_classes;
	bool		ok = true;

	add_set_items(set, doc);
	for (uint32_t s = 0; s < set->n; s++)
	{
		NbScorer   *sc = &set->scorers[s];
		uint32_t	j = set->column[s];

		/* the prior and features, then the items' sum with its compensation */
		nb_scorer_score_begin(sc, doc);
		for (uint32_t c = 0; c < C; c++)
		{
			nb_add_compensated(&sc->f[c], &sc->fc[c], set->f[c * m + j]);
			sc->fc[c] += set->fc[c * m + j];
			sc->z[c] += set->z[c * m + j];
		}
		if (nb_scorer_score_end(sc, doc, &log_post[s * C]) < 0)
			ok = false;
	}
	return ok;
}
