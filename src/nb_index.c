/*
 * nb_index.c — building the vocabulary index from a view, and its lookups,
 * see nb_index.h.
 */
#include "nb_index.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"

/* Whether some feature of the view has items (a bag or a categorical feature). */
static bool
has_items(const NbView *v)
{
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		NbFeatureType type = nb_view_feature_type(v, j);

		if (type == NB_FEATURE_BAG || type == NB_FEATURE_CATEGORICAL)
			return true;
	}
	return false;
}

/* The hash of item k of feature j, as the item map keeps it. */
static uint64_t
item_hash(const NbIndex *ix, uint32_t j, uint32_t k)
{
	uint32_t	len;
	const char *s = nb_index_item(ix, k, &len);

	return nb_index_item_hash(ix, j, nb_hash_token(s, len));
}

/*
 * The item map (see NbIndex): each item into the first free slot of its
 * probe (the bitmap's words of items ahead fetched meanwhile: they are at
 * random), its slot kept in item_place until every item has one; then the
 * ranks, and item by item its rank and its key at its rank (the item hashed
 * again for its tag).  Nothing but the map itself is allocated: a table of
 * slots or keys for the while would stay in the backend's memory, freed
 * but not given back, beside what is made next.
 */
void
nb_index_place(NbIndex *ix)
{
	uint64_t	n = ((uint64_t) ix->n_tokens * 4 + 63) / 64 * 64;
	uint64_t	words;
	uint64_t	ahead[NB_PREFETCH_DISTANCE];
	uint64_t	r = 0;
	uint32_t	k = 0;

	ix->n_item_slots = n < 64 ? 64 : n;
	words = ix->n_item_slots / 64;
	ix->item_words = nb_alloc_zero(sizeof(NbSlotWord) * words);
	ix->item_key = nb_alloc(sizeof(uint64_t) * ((uint64_t) ix->n_tokens + 1));
	ix->item_place = nb_alloc(sizeof(uint32_t) * ((uint64_t) ix->n_tokens + 1));
	ix->rank_offset = nb_alloc(sizeof(uint32_t) * ((uint64_t) ix->n_tokens + 1));
	for (uint32_t j = 0; j < ix->n_features; j++)
	{
		uint32_t	end = ix->first_item[j + 1];

		for (uint32_t a = k; a < end && a < k + NB_PREFETCH_DISTANCE; a++)
			ahead[a % NB_PREFETCH_DISTANCE] = item_hash(ix, j, a);
		for (; k < end; k++)
		{
			uint64_t	hash = ahead[k % NB_PREFETCH_DISTANCE];
			uint64_t	i;

			nb_interrupt_at(k);
			if (k + NB_PREFETCH_DISTANCE < end)
			{
				uint64_t	later = item_hash(ix, j, k + NB_PREFETCH_DISTANCE);

				ahead[k % NB_PREFETCH_DISTANCE] = later;
				nb_prefetch(&ix->item_words[nb_index_probe_start(ix, later) / 64]);
			}
			for (i = nb_index_probe_start(ix, hash); nb_index_slot_full(ix, i);
				 i = nb_index_probe_next(ix, i))
				;
			ix->item_words[i / 64].full |= UINT64_C(1) << (i % 64);
			ix->item_place[k] = (uint32_t) i;
		}
	}
	for (uint64_t w = 0; w < words; w++)
	{
		nb_interrupt_at(w);
		ix->item_words[w].rank = r;
		r += nb_bit_count(ix->item_words[w].full);
	}
	k = 0;
	for (uint32_t j = 0; j < ix->n_features; j++)
		for (; k < ix->first_item[j + 1]; k++)
		{
			uint64_t	rank = nb_index_slot_rank(ix, ix->item_place[k]);

			nb_interrupt_at(k);
			ix->item_place[k] = (uint32_t) rank;
			ix->item_key[rank] = (item_hash(ix, j, k) >> 32) << 32 | k;
			ix->rank_offset[rank] = ix->item_offset[k];
		}
}

/* Copy n bytes of a section to p (none if it is NULL), pointing *to at them; past them. */
static char *
copy_section(char *p, const unsigned char *section, uint64_t n, const unsigned char **to)
{
	if (section == NULL)
		return p;
	nb_copy(p, section, n);
	*to = (const unsigned char *) p;
	return p + n;
}

/*
 * Point the index at a copy of what it reads in the view, in one
 * allocation: the pairs' statistics, the entries' classes, counts and
 * documents, then the values (of bytes bytes).
 */
static void
copy_items(NbIndex *ix, const NbView *v, uint64_t bytes)
{
	uint64_t	E = ix->n_entries;
	uint64_t	pairs = 8 * (uint64_t) ix->n_features * ix->n_classes;
	char	   *p = nb_alloc(3 * pairs + 20 * E + bytes + 1);

	ix->item_copy = p;
	p = copy_section(p, v->feature_present, pairs, &ix->pairs_present);
	p = copy_section(p, v->feature_a, pairs, &ix->pairs_a);
	p = copy_section(p, v->feature_b, pairs, &ix->pairs_b);
	p = copy_section(p, v->entry_class, 4 * E, &ix->entries_class);
	p = copy_section(p, v->entry_count, 8 * E, &ix->entries_count);
	p = copy_section(p, v->entry_docs, 8 * E, &ix->entries_docs);
	nb_copy(p, v->tokens, bytes);
	ix->item_text = p;
}

/*
 * The view's labels (their ids come out as 0, 1, 2, ...; a label repeated
 * for the components of its class once) and documents.
 */
static void
copy_labels(NbIndex *ix, const NbView *v)
{
	const char *s = v->labels;
	const char *prev = NULL;
	uint32_t	prev_len = 0;

	ix->class_docs = nb_alloc(sizeof(double) * ix->n_classes);
	if (v->settings.components)
	{
		ix->label_first = nb_alloc(sizeof(uint32_t) * ((uint64_t) ix->n_classes + 1));
		ix->component_label = nb_alloc(sizeof(uint32_t) * ix->n_classes);
	}
	for (uint32_t c = 0; c < ix->n_classes; c++)
	{
		uint32_t	len = nb_view_label_len(v, c);

		nb_interrupt_at(c);
		if (prev == NULL || nb_strcmp(prev, prev_len, s, len) != 0)
		{
			if (ix->label_first != NULL)
				ix->label_first[ix->labels.count] = c;
			nb_vocab_add(&ix->labels, s, len, nb_hash_token(s, len));
		}
		if (ix->component_label != NULL)
			ix->component_label[c] = ix->labels.count - 1;
		ix->class_docs[c] = nb_view_class_docs(v, c);
		ix->total_docs += ix->class_docs[c];
		prev = s;
		prev_len = len;
		s += len;
	}
	ix->n_labels = ix->labels.count;
	if (ix->label_first != NULL)
		ix->label_first[ix->n_labels] = ix->n_classes;
}

/*
 * The view's features, their items' offsets and first entries, and their
 * token counts per class; returns the items' bytes.
 */
static uint32_t
copy_features(NbIndex *ix, const NbView *v)
{
	uint32_t	C = ix->n_classes;
	const char *name = v->feature_names;
	uint64_t	e = 0;
	uint32_t	k = 0;
	uint32_t	offset = 0;
	uint64_t	work = 0;

	for (uint32_t j = 0; j < ix->n_features; j++)
	{
		uint32_t	name_len = nb_view_feature_name_len(v, j);

		nb_interrupt_count(&work, 1 + (uint64_t) C);
		nb_vocab_add(&ix->features, name, name_len, nb_hash_token(name, name_len));
		ix->feature_type[j] = nb_view_feature_type(v, j);
		ix->feature_items[j] = nb_view_feature_items(v, j);
		if (ix->feature_type[j] == NB_FEATURE_BAG && name_len == 0)
			ix->unnamed_bag = j;
		/* the bag "", the hot path, keeps the values' own hashes */
		ix->feature_salt[j] = ix->unnamed_bag == (int64_t) j ? 0 : nb_hash_mix((uint64_t) j + 1);
		ix->first_item[j] = k;
		ix->feature_rows[j] = nb_view_feature_rows(v, j);
		ix->feature_mean[j] = nb_view_feature_mean(v, j);
		ix->feature_m2[j] = nb_view_feature_m2(v, j);

		for (uint32_t end = k + ix->feature_items[j]; k < end; k++)
		{
			uint32_t	n = nb_view_token_entries(v, k);

			nb_interrupt_count(&work, 1 + (uint64_t) n);
			ix->item_offset[k] = offset;
			offset += nb_view_token_len(v, k);
			ix->token_start[k] = (uint32_t) e;
			for (uint32_t i = 0; i < n; i++, e++)
				ix->feature_tokens[(uint64_t) j * C + nb_view_entry_class(v, e)] +=
					nb_view_entry_count(v, e);
		}
		for (uint32_t c = 0; c < C && ix->feature_tokens != NULL; c++)
			ix->feature_total[j] += ix->feature_tokens[(uint64_t) j * C + c];
		name += name_len;
	}
	ix->first_item[ix->n_features] = k;
	ix->item_offset[v->n_tokens] = offset;
	ix->token_start[v->n_tokens] = (uint32_t) e;
	return offset;
}

/* The bags' document length histograms, if the model has them. */
static void
copy_lengths(NbIndex *ix, const NbView *v)
{
	uint64_t	fc = (uint64_t) ix->n_features * ix->n_classes;

	ix->has_lengths = nb_view_has_lengths(v);
	if (!ix->has_lengths)
		return;
	ix->length_start = nb_alloc(sizeof(uint64_t) * (fc + 1));
	ix->length_value = nb_alloc(sizeof(double) * (v->n_lengths + 1));
	ix->length_weight = nb_alloc(sizeof(double) * (v->n_lengths + 1));
	ix->length_start[0] = 0;
	for (uint64_t x = 0; x < fc; x++)
	{
		nb_interrupt_at(x);
		ix->length_start[x + 1] = ix->length_start[x] + nb_view_length_pairs_at(v, x);
	}
	for (uint64_t h = 0; h < v->n_lengths; h++)
	{
		nb_interrupt_at(h);
		ix->length_value[h] = nb_view_length_value(v, h);
		ix->length_weight[h] = nb_view_length_weight(v, h);
	}
}

void
nb_index_copy(NbIndex *ix, const NbView *v, bool own_items)
{
	uint32_t	C = v->n_classes;
	uint32_t	F = v->n_features;
	uint32_t	item_bytes;

	memset(ix, 0, sizeof(*ix));
	ix->n_classes = C;
	ix->n_tokens = v->n_tokens;
	ix->n_entries = v->n_entries;
	ix->n_features = F;
	ix->vector_len = v->vector_len;
	ix->unnamed_bag = -1;
	nb_vocab_init(&ix->labels);
	nb_vocab_init(&ix->features);
	ix->feature_type = nb_alloc(sizeof(NbFeatureType) * (F + 1));
	ix->feature_items = nb_alloc(sizeof(uint32_t) * (F + 1));
	ix->first_item = nb_alloc(sizeof(uint32_t) * (F + 1));
	ix->feature_salt = nb_alloc(sizeof(uint64_t) * (F + 1));
	ix->position_feature = nb_alloc(sizeof(uint32_t) * ((uint64_t) v->vector_len + 1));
	ix->pairs_present = v->feature_present;
	ix->pairs_a = v->feature_a;
	ix->pairs_b = v->feature_b;
	ix->feature_tokens = has_items(v) ? nb_alloc_zero(sizeof(double) * ((uint64_t) F * C + 1)) : NULL;
	ix->feature_total = nb_alloc_zero(sizeof(double) * (F + 1));
	ix->feature_rows = nb_alloc(sizeof(double) * (F + 1));
	ix->feature_mean = nb_alloc(sizeof(double) * (F + 1));
	ix->feature_m2 = nb_alloc(sizeof(double) * (F + 1));
	ix->item_text = v->tokens;
	ix->item_offset = nb_alloc(sizeof(uint32_t) * ((uint64_t) v->n_tokens + 1));
	ix->token_start = nb_alloc(sizeof(uint32_t) * ((uint64_t) v->n_tokens + 1));
	ix->entries_class = v->entry_class;
	ix->entries_count = v->entry_count;
	ix->entries_docs = v->entry_docs;

	copy_labels(ix, v);
	item_bytes = copy_features(ix, v);
	if (own_items)
		copy_items(ix, v, item_bytes);
	ix->item_rows = C <= NB_ROW_CLASSES;
	copy_lengths(ix, v);
	for (uint32_t i = 0; i < v->vector_len; i++)
	{
		char		buf[NB_POSITION_NAME_SIZE];
		uint32_t	len = nb_position_name(i, buf);

		nb_interrupt_at(i);
		/* validation made sure the feature exists */
		ix->position_feature[i] = (uint32_t) nb_index_feature(ix, buf, len);
	}
}

void
nb_index_build(NbIndex *ix, const NbView *v)
{
	nb_index_copy(ix, v, false);
	nb_index_place(ix);
}

void
nb_index_free(NbIndex *ix)
{
	nb_vocab_free(&ix->labels);
	nb_vocab_free(&ix->features);
	nb_free(ix->feature_type);
	nb_free(ix->feature_items);
	nb_free(ix->first_item);
	nb_free(ix->feature_salt);
	nb_free(ix->position_feature);
	nb_free_if(ix->feature_tokens);
	nb_free(ix->feature_total);
	nb_free(ix->feature_rows);
	nb_free(ix->feature_mean);
	nb_free(ix->feature_m2);
	nb_free(ix->item_offset);
	nb_free(ix->token_start);
	nb_free(ix->item_words);
	nb_free(ix->item_key);
	nb_free(ix->item_place);
	nb_free(ix->rank_offset);
	nb_free_if(ix->item_copy);
	nb_free(ix->class_docs);
	nb_free_if(ix->label_first);
	nb_free_if(ix->component_label);
	if (ix->has_lengths)
	{
		nb_free(ix->length_start);
		nb_free(ix->length_value);
		nb_free(ix->length_weight);
	}
}

double
nb_index_token_total(const NbIndex *ix, uint32_t k)
{
	double		total = 0;

	for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
		total += nb_index_entry_count(ix, e);
	return total;
}

int64_t
nb_index_feature(const NbIndex *ix, const char *name, uint32_t len)
{
	return nb_vocab_find(&ix->features, name, len, nb_hash_token(name, len));
}

int64_t
nb_index_class(const NbIndex *ix, const char *str, uint32_t len)
{
	return nb_vocab_find(&ix->labels, str, len, nb_hash_token(str, len));
}
