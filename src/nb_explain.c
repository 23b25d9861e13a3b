/*
 * nb_explain.c — the parts of a score and the log-probabilities a scorer
 * holds, see nb_explain.h.
 */
#include "nb_explain.h"

#include <math.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"

/* A known item of the document with its occurrences added up. */
typedef struct ItemRef
{
	uint32_t	token;
	uint32_t	feature;
	double		count;
} ItemRef;

/* A term of two classes, as (f, z) pairs (see nb_scorer.h). */
typedef struct Pair
{
	double		f1, z1, f2, z2;
} Pair;

static int
cmp_item_refs(const void *a, const void *b)
{
	const ItemRef *x = a;
	const ItemRef *y = b;

	return x->token < y->token ? -1 : x->token > y->token;
}

/* Largest absolute contribution first; then prior, feature, item. */
static int
cmp_rows(const void *a, const void *b)
{
	const NbExplainRow *x = a;
	const NbExplainRow *y = b;
	double		ax = fabs(x->contribution);
	double		ay = fabs(y->contribution);

	if (ax != ay)
		return ax > ay ? -1 : 1;
	if ((x->part == NB_EXPLAIN_PRIOR) != (y->part == NB_EXPLAIN_PRIOR))
		return x->part == NB_EXPLAIN_PRIOR ? -1 : 1;
	if (x->feature != y->feature)
		return x->feature < y->feature ? -1 : 1;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

/* A row's contribution before zero factors are settled (see settle_zero_factors). */
static void
set_contribution(NbExplainRow *row, Pair p)
{
	row->contribution = p.f1 - p.f2;
	row->zero_factors = p.z1 - p.z2;
}

/*
 * With zero factors (alpha = 0): if c1 and c2 both keep a positive
 * probability, their zero factors are as many and the posterior odds are
 * the ratio of the rest (nb_scorer.h): each row's finite part, as set.
 * Else c2's probability is 0, the odds infinite, and a row with more zero
 * factors for c2 than for c1 contributes +infinity (fewer: -infinity).
 */
static void
settle_zero_factors(const NbScorer *sc, uint32_t c1, uint32_t c2, NbExplainRow *rows, uint64_t n)
{
	double		dz = 0;

	for (uint64_t i = 0; i < n; i++)
		if (rows[i].part != NB_EXPLAIN_PRIOR)
			dz += rows[i].zero_factors;
	if (dz == 0 && !sc->excluded[c1] && !sc->excluded[c2])
		return;
	for (uint64_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		if (rows[i].zero_factors != 0)
			rows[i].contribution = rows[i].zero_factors > 0 ? -INFINITY : INFINITY;
	}
}

/*
 * log t and log(1 - t) from u = log t - log(1 - t), each as (f, z).  A
 * zero factor in u belongs to t (t -> 0, 1 - t -> 1) if positive, else to
 * 1 - t.
 */
static void
presence_split(double uf, double uz, double *pf, double *pz, double *af, double *az)
{
	*pz = uz > 0 ? uz : 0;
	*az = uz < 0 ? -uz : 0;
	if (uz > 0)
	{
		*pf = uf;
		*af = 0;
	}
	else if (uz < 0)
	{
		*pf = 0;
		*af = -uf;
	}
	else if (uf > 0)
	{
		*pf = -log1p(exp(-uf));
		*af = -uf + *pf;
	}
	else
	{
		*af = -log1p(exp(uf));
		*pf = uf + *af;
	}
}

uint64_t
nb_explain_max_rows(const NbDoc *doc)
{
	return 1 + (uint64_t) doc->n_present + doc->n_tokens;
}

/* Scratch of nb_explain: per class, and per feature of the model (one block each). */
typedef struct Scratch
{
	double	   *f, *z;			/* a part's terms per class */
	double	   *g, *gz;
	double	   *item_occ;		/* per feature: occurrences of its known items */
	double	   *item_dist;		/* per feature: the document's items of it */
	double	   *item_rows;		/* per feature: its rows of items (distinct items) */
	Pair	   *absent;			/* per feature: log(1 - t) of its present items */
} Scratch;

static Pair
pair_of(const Scratch *s, uint32_t c1, uint32_t c2)
{
	Pair		p = {s->f[c1], s->z[c1], s->f[c2], s->z[c2]};

	return p;
}

/* A bag scored by the DCM, whose terms split per token and per bag (nb_scorer.h). */
static bool
is_dcm_bag(const NbScorer *sc, uint32_t j)
{
	return sc->dcm_s != NULL && sc->index->feature_type[j] == NB_FEATURE_BAG;
}

/*
 * The row of one item: its item terms, weighted as scoring weighs them,
 * plus its occurrences' and its distinct entries' share of the feature's
 * count terms.
 */
static NbExplainRow
item_row(const NbScorer *sc, Scratch *s, const ItemRef *it, uint32_t entries,
		 uint32_t c1, uint32_t c2)
{
	uint32_t	j = it->feature;
	double		w = nb_scorer_item_weight(sc, j, it->count);
	NbExplainRow row = {NB_EXPLAIN_ITEM, j, it->token, it->count, 0, 0};
	Pair		p;

	/* DCM: the token's whole term; the bag's length row has the rest */
	if (is_dcm_bag(sc, j))
	{
		nb_scorer_dcm_item_terms(sc, j, it->token, it->count, s->f, s->z);
		set_contribution(&row, pair_of(s, c1, c2));
		return row;
	}
	nb_scorer_item_terms(sc, j, it->token, s->f, s->z);
	nb_scorer_count_terms(sc, j, 0, it->count, entries, s->g, s->gz);
	p.f1 = w * s->f[c1] + s->g[c1];
	p.z1 = w * s->z[c1] + s->gz[c1];
	p.f2 = w * s->f[c2] + s->g[c2];
	p.z2 = w * s->z[c2] + s->gz[c2];
	s->item_occ[j] += it->count;
	s->item_dist[j] += entries;
	s->item_rows[j] += 1;
	if (!sc->per_occurrence[j])
	{
		double		af,
					az;

		/* log t here, log(1 - t) to the bag's absent row */
		presence_split(p.f1, p.z1, &p.f1, &p.z1, &af, &az);
		s->absent[j].f1 += af;
		s->absent[j].z1 += az;
		presence_split(p.f2, p.z2, &p.f2, &p.z2, &af, &az);
		s->absent[j].f2 += af;
		s->absent[j].z2 += az;
	}
	set_contribution(&row, p);
	return row;
}

/*
 * The row of a present feature apart from its items: a boolean or
 * Gaussian value; for a bag or categorical feature, its base and unknown
 * occurrences (a categorical value never seen in training; a per-document
 * bag's absent tokens).  false if it has none.
 */
static bool
feature_row(const NbScorer *sc, const NbDoc *doc, Scratch *s, uint32_t j,
			uint32_t c1, uint32_t c2, NbExplainRow *row)
{
	NbFeatureType type = sc->index->feature_type[j];
	double		unknown = 0;
	Pair		p;

	row->feature = j;
	row->item = 0;
	row->count = 0;
	if (type == NB_FEATURE_BOOLEAN || type == NB_FEATURE_GAUSSIAN)
	{
		nb_scorer_value_terms(sc, j, doc->value[j], s->f, s->z);
		row->part = NB_EXPLAIN_VALUE;
		set_contribution(row, pair_of(s, c1, c2));
		return true;
	}
	if (is_dcm_bag(sc, j))
	{
		nb_scorer_count_terms(sc, j, 1, doc->occurrences[j], 0, s->f, s->z);
		row->part = NB_EXPLAIN_LENGTH;
		row->count = doc->occurrences[j];
		set_contribution(row, pair_of(s, c1, c2));
		return true;
	}
	unknown = doc->occurrences[j] - s->item_occ[j];
	nb_scorer_count_terms(sc, j, 1, unknown, doc->distinct[j] - s->item_dist[j], s->f, s->z);
	p = pair_of(s, c1, c2);
	if (!sc->per_occurrence[j])
	{
		p.f1 -= s->absent[j].f1;
		p.z1 -= s->absent[j].z1;
		p.f2 -= s->absent[j].f2;
		p.z2 -= s->absent[j].z2;
	}
	else if (unknown == 0 && p.f1 == 0 && p.z1 == 0 && p.f2 == 0 && p.z2 == 0)
		return false;
	row->part = type == NB_FEATURE_BAG ? NB_EXPLAIN_ABSENT : NB_EXPLAIN_VALUE;
	if (row->part == NB_EXPLAIN_ABSENT)
		row->count = sc->index->feature_items[j] - s->item_rows[j];
	set_contribution(row, p);
	return true;
}

uint64_t
nb_explain(const NbScorer *sc, const NbDoc *doc, uint32_t c1, uint32_t c2, NbExplainRow *rows)
{
	const NbIndex *ix = sc->index;
	uint32_t	C = ix->n_classes;
	uint32_t	F = ix->n_features;
	uint32_t	n = doc->n_tokens;
	ItemRef    *items = nb_alloc(sizeof(ItemRef) * ((uint64_t) n + 1));
	Scratch		s;
	uint64_t	out = 0;
	uint32_t	i = 0;
	Pair		prior = {sc->prior_f[c1], sc->excluded[c1], sc->prior_f[c2], sc->excluded[c2]};

	s.f = nb_alloc(sizeof(double) * 4 * C);
	s.z = s.f + C;
	s.g = s.z + C;
	s.gz = s.g + C;
	s.item_occ = nb_alloc_zero(sizeof(double) * 3 * (F + 1));
	s.item_dist = s.item_occ + F + 1;
	s.item_rows = s.item_dist + F + 1;
	s.absent = nb_alloc_zero(sizeof(Pair) * (F + 1));

	/* an excluded class's prior is 0: a zero factor for it */
	rows[out].part = NB_EXPLAIN_PRIOR;
	rows[out].feature = rows[out].item = 0;
	rows[out].count = 0;
	set_contribution(&rows[out], prior);
	out++;

	/* the document may list an item once per occurrence (nb_scorer_add_tokens) */
	for (uint32_t t = 0; t < n; t++)
	{
		nb_interrupt_at(t);
		items[t].token = doc->tokens[t].token;
		items[t].feature = doc->tokens[t].feature;
		items[t].count = doc->tokens[t].count;
	}
	nb_sort(items, n, sizeof(ItemRef), cmp_item_refs);
	while (i < n)
	{
		ItemRef		it = items[i];
		uint32_t	entries = 1;

		nb_interrupt_at(i);
		for (i++; i < n && items[i].token == it.token; i++, entries++)
			it.count += items[i].count;
		rows[out++] = item_row(sc, &s, &it, entries, c1, c2);
	}
	for (uint32_t p = 0; p < doc->n_present; p++)
	{
		nb_interrupt_at(p);
		if (feature_row(sc, doc, &s, doc->present_list[p], c1, c2, &rows[out]))
			out++;
	}
	settle_zero_factors(sc, c1, c2, rows, out);
	nb_sort(rows, out, sizeof(NbExplainRow), cmp_rows);

	nb_free(items);
	nb_free(s.f);
	nb_free(s.item_occ);
	nb_free(s.absent);
	return out;
}

/* A log-probability from (f, z): -infinity with a zero factor. */
static double
log_prob_of(double f, double z)
{
	return z > 0 ? -INFINITY : f;
}

void
nb_item_log_prob(const NbScorer *sc, uint32_t j, uint32_t k, double *log_prob)
{
	uint32_t	C = sc->index->n_classes;
	double	   *f = nb_alloc(sizeof(double) * 4 * C);
	double	   *z = f + C;
	double	   *g = z + C;
	double	   *gz = g + C;
	double		shared_f,
				shared_z;

	nb_scorer_item_terms(sc, j, k, f, z);
	nb_scorer_count_terms(sc, j, 0, 1, 1, g, gz);
	nb_scorer_item_shared(sc, j, k, &shared_f, &shared_z);
	for (uint32_t c = 0; c < C; c++)
	{
		double		lf = (f[c] + g[c]) + shared_f;
		double		lz = (z[c] + gz[c]) + shared_z;

		/* a bag scored per document (Bernoulli; not the DCM, which adds up repeats) */
		if (!sc->per_occurrence[j] && sc->dcm_s == NULL)
		{
			double		af,
						az;

			presence_split(lf, lz, &lf, &lz, &af, &az);
		}
		log_prob[c] = log_prob_of(lf, lz);
	}
	nb_free(f);
}

void
nb_boolean_log_prob(const NbScorer *sc, uint32_t j, double x, double *log_prob)
{
	uint32_t	C = sc->index->n_classes;
	double	   *z = nb_alloc(sizeof(double) * C);

	nb_scorer_value_terms(sc, j, x, log_prob, z);
	for (uint32_t c = 0; c < C; c++)
		log_prob[c] = log_prob_of(log_prob[c], z[c]);
	nb_free(z);
}
