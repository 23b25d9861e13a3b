/*
 * nb_doc.c — documents: adding a document's items, looked up in the index's
 * item map or in a scorer's rows, and its other features, see nb_doc.h.
 */
#include "nb_doc.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_port.h"

void
nb_doc_init(NbDoc *doc, const NbIndex *ix)
{
	uint32_t	F = ix->n_features + 1;

	memset(doc, 0, sizeof(*doc));
	nb_itemset_init(&doc->items);
	doc->present = nb_alloc_zero(sizeof(bool) * F);
	doc->present_list = nb_alloc(sizeof(uint32_t) * F);
	doc->occurrences = nb_alloc(sizeof(double) * F);
	doc->distinct = nb_alloc(sizeof(double) * F);
	doc->value = nb_alloc(sizeof(double) * F);
}

void
nb_doc_free(NbDoc *doc)
{
	nb_free_if(doc->tokens);
	nb_itemset_free(&doc->items);
	nb_free_if(doc->scratch);
	nb_free(doc->present);
	nb_free(doc->present_list);
	nb_free(doc->occurrences);
	nb_free(doc->distinct);
	nb_free(doc->value);
}

void
nb_doc_begin(NbDoc *doc)
{
	for (uint32_t i = 0; i < doc->n_present; i++)
		doc->present[doc->present_list[i]] = false;
	doc->n_present = 0;
	nb_itemset_clear(&doc->items);
	doc->n_tokens = 0;
	doc->unknown = 0;
}

static void
mark_present(NbDoc *doc, uint32_t feature)
{
	if (doc->present[feature])
		return;
	doc->present[feature] = true;
	doc->present_list[doc->n_present++] = feature;
	doc->occurrences[feature] = 0;
	doc->distinct[feature] = 0;
	doc->value[feature] = 0;
}

void
nb_doc_add_value(NbDoc *doc, uint32_t feature, double x)
{
	mark_present(doc, feature);
	doc->value[feature] = x;
}

/* A feature whose value counts as one known occurrence when it is present. */
static bool
is_value_feature(const NbIndex *ix, uint32_t feature)
{
	NbFeatureType type = ix->feature_type[feature];

	return type == NB_FEATURE_GAUSSIAN || type == NB_FEATURE_BOOLEAN;
}

double
nb_doc_known(const NbDoc *doc, const NbIndex *ix)
{
	double		known = 0;

	for (uint32_t i = 0; i < doc->n_tokens; i++)
	{
		nb_interrupt_at(i);
		known += doc->tokens[i].count;
	}
	for (uint32_t i = 0; i < doc->n_present; i++)
	{
		nb_interrupt_at(i);
		if (is_value_feature(ix, doc->present_list[i]))
			known += 1;
	}
	return known;
}

/*
 * Fetch what looking up a token will read first, where the bitmap says it
 * is (probe is the token's nb_index_probe through rows, else hash its
 * hash): through rows, its row (and the next, where many items sit: linear
 * probing); without, the item; and the offset of a value to be compared in
 * the model's bytes (without rows, or a token longer than a row key holds).
 * That value is fetched half the distance ahead (fetch_value), once its
 * offset (and without rows, its item) is in.
 */
NB_HOT_INLINE void
prefetch_lookup(const NbIndex *ix, int64_t probe_or_hash, uint32_t len, const char *rows,
				size_t row_size)
{
	int64_t		p = rows != NULL ? probe_or_hash : nb_index_probe(ix, (uint64_t) probe_or_hash);
	uint64_t	r;

	if (p < 0)
		return;
	r = nb_index_probe_rank(p);
	if (rows != NULL)
	{
		nb_prefetch(nb_row_key(rows, row_size, r));
		nb_prefetch(nb_row_key(rows, row_size, r + 1));
	}
	else
		nb_prefetch(&ix->item_key[r]);
	if (rows == NULL || len > 8)
		nb_prefetch(&ix->rank_offset[r]);
}

NB_HOT_INLINE void
fetch_value(const NbIndex *ix, int64_t probe_or_hash, uint32_t len, const char *rows)
{
	int64_t		p;

	if (rows != NULL && len <= 8)
		return;
	p = rows != NULL ? probe_or_hash : nb_index_probe(ix, (uint64_t) probe_or_hash);
	if (p < 0)
		return;
	nb_prefetch(ix->item_text + ix->rank_offset[nb_index_probe_rank(p)]);
	/* without rows, the value's length is told by the item's offsets */
	if (rows == NULL)
		nb_prefetch(&ix->item_offset[nb_index_item_at(ix, nb_index_probe_rank(p))]);
}

/* Room for n more tokens of the document and n lookups. */
static void
reserve_doc(NbDoc *doc, uint32_t n)
{
	uint64_t	need = (uint64_t) doc->n_tokens + n;

	if (need > doc->tokens_cap)
	{
		doc->tokens_cap = need > 2 * (uint64_t) doc->tokens_cap ? (uint32_t) need : 2 * doc->tokens_cap;
		doc->tokens = doc->tokens == NULL ?
			nb_alloc(sizeof(NbDocToken) * doc->tokens_cap) :
			nb_realloc(doc->tokens, sizeof(NbDocToken) * doc->tokens_cap);
	}
	nb_itemset_reserve(&doc->items, n);
	if (n > doc->scratch_cap)
	{
		nb_free_if(doc->scratch);
		doc->scratch_cap = n > 2 * doc->scratch_cap ? n : 2 * doc->scratch_cap;
		doc->scratch = nb_alloc(sizeof(int64_t) * doc->scratch_cap);
	}
}

/*
 * nb_doc_add_tokens (rows NULL) and nb_doc_add_row_tokens, inline so that
 * each one's lookup knows which it is.
 */
NB_HOT_INLINE void
add_tokens(const NbIndex *ix, NbDoc *doc, uint32_t feature, const NbTokenRef *tokens,
		   uint32_t n, const char *rows, size_t row_size, bool merge)
{
	int64_t    *scratch;
	bool		categorical = ix->feature_type[feature] == NB_FEATURE_CATEGORICAL;

	mark_present(doc, feature);
	if (n == 0)
		return;
	reserve_doc(doc, n);
	scratch = doc->scratch;

	/*
	 * Hash (and through rows, find where the probe starts), then look up
	 * with software prefetching a fixed distance ahead, so that cache
	 * misses overlap without flooding the CPU's outstanding-miss slots;
	 * then add up repeats.
	 */
	for (uint32_t i = 0; i < n; i++)
	{
		uint64_t	hash = nb_index_item_hash(ix, feature, nb_hash_token(tokens[i].str, tokens[i].len));

		nb_interrupt_at(i);
		scratch[i] = rows != NULL ? nb_index_probe(ix, hash) : (int64_t) hash;
		if (i < NB_PREFETCH_DISTANCE)
			prefetch_lookup(ix, scratch[i], tokens[i].len, rows, row_size);
	}
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	half = i + NB_PREFETCH_DISTANCE / 2;

		nb_interrupt_at(i);
		if (i + NB_PREFETCH_DISTANCE < n)
			prefetch_lookup(ix, scratch[i + NB_PREFETCH_DISTANCE],
							tokens[i + NB_PREFETCH_DISTANCE].len, rows, row_size);
		if (half < n)
			fetch_value(ix, scratch[half], tokens[half].len, rows);
		if (rows != NULL)
			scratch[i] = nb_index_find_row(ix, rows, row_size, feature, tokens[i].str,
										   tokens[i].len, scratch[i]);
		else
		{
			scratch[i] = nb_index_find_item(ix, feature, tokens[i].str, tokens[i].len,
											(uint64_t) scratch[i]);
			if (scratch[i] >= 0)
				nb_prefetch(&ix->token_start[nb_index_item_at(ix, (uint64_t) scratch[i])]);
		}
	}

	/* in locals: stores through doc would make the compiler reload them */
	{
		NbDocToken *out = doc->tokens;
		uint32_t	used = doc->n_tokens;
		uint32_t	first = used;
		double		occurrences = 0;
		double		unknown = 0;

		for (uint32_t i = 0; i < n; i++)
		{
			uint32_t	k;
			uint32_t	pos = used;

			nb_interrupt_at(i);
			if (scratch[i] < 0)
			{
				unknown += tokens[i].count;
				continue;
			}
			k = rows != NULL ? nb_row_key(rows, row_size, (uint64_t) scratch[i])->item :
				nb_index_item_at(ix, (uint64_t) scratch[i]);
			occurrences += tokens[i].count;
			if (merge && !nb_itemset_add(&doc->items, k, &pos))
				out[pos].count += tokens[i].count;
			else
			{
				out[used].token = k;
				out[used].slot = (uint32_t) scratch[i];
				out[used].feature = feature;
				out[used].count = tokens[i].count;
				used++;
			}
		}
		doc->n_tokens = used;
		doc->unknown += unknown;
		doc->distinct[feature] += used - first;
		/* an unknown categorical value still counts (see nb_scorer_build.c) */
		doc->occurrences[feature] += categorical ? occurrences + unknown : occurrences;
	}
}

void
nb_doc_add_tokens(const NbIndex *ix, NbDoc *doc, uint32_t feature,
				  const NbTokenRef *tokens, uint32_t n)
{
	add_tokens(ix, doc, feature, tokens, n, NULL, 0, true);
}

void
nb_doc_add_row_tokens(const NbIndex *ix, NbDoc *doc, uint32_t feature, const NbTokenRef *tokens,
					  uint32_t n, const char *rows, size_t row_size, bool merge)
{
	add_tokens(ix, doc, feature, tokens, n, rows, row_size, merge);
}
