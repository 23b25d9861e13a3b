/*
 * nb_trainer.c — counting rows into a model: its classes, features, items,
 * their (item, class) counts and the bags' document lengths.
 */
#include "nb_trainer_internal.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_moments.h"
#include "nb_port.h"

static void
init_pairs(NbTrainer *t, uint64_t nslots)
{
	t->pairs = nb_alloc(sizeof(NbPairSlot) * nslots);
	for (uint64_t i = 0; i < nslots; i++)
	{
		nb_interrupt_at(i);
		t->pairs[i].key = NB_EMPTY_KEY;
	}
	t->pair_mask = nslots - 1;
}

static void
init_lengths(NbTrainer *t, uint64_t nslots)
{
	t->lengths = nb_alloc_zero(sizeof(NbLengthSlot) * nslots);
	t->length_mask = nslots - 1;
}

NbTrainer *
nb_trainer_create(void)
{
	NbTrainer  *t = nb_alloc_zero(sizeof(NbTrainer));

	nb_vocab_init(&t->classes);
	t->class_cap = 8;
	t->class_docs = nb_alloc_zero(sizeof(double) * t->class_cap);
	nb_vocab_init(&t->features);
	t->feature_cap = 8;
	t->feature = nb_alloc_zero(sizeof(NbTrainerFeature) * t->feature_cap);
	t->unnamed_bag = -1;
	t->size_limit = UINT64_MAX;
	nb_vocab_init(&t->tokens);
	t->item_cap = 64;
	t->spread_min_bytes = NB_SPREAD_MIN_BYTES;
	t->item_doc = nb_alloc(sizeof(uint32_t) * t->item_cap);
	init_pairs(t, 256);
	init_lengths(t, 64);
	return t;
}

void
nb_trainer_destroy(NbTrainer *t)
{
	nb_vocab_free(&t->classes);
	nb_vocab_free(&t->tokens);
	for (uint32_t c = 0; c < NB_INLINE_CLASSES; c++)
		nb_free_if(t->inline_counts[c]);
	nb_free(t->item_doc);
	nb_free_if(t->spread);
	nb_free_if(t->spread_active);
	nb_free(t->class_docs);
	for (uint32_t j = 0; j < t->features.count; j++)
		nb_free(t->feature[j].stats);
	nb_free(t->feature);
	nb_vocab_free(&t->features);
	nb_free_if(t->position_feature);
	nb_free(t->pairs);
	nb_free(t->lengths);
	nb_free_if(t->pending);
	nb_item_keys_free(&t->item_keys);
	nb_free_if((void *) t->settings.options);
	nb_free_if(t->scratch_hash);
	nb_free_if(t->scratch_id);
	nb_free(t);
}

uint32_t
nb_trainer_class(NbTrainer *t, const char *label, uint32_t len)
{
	uint64_t	h = nb_hash_token(label, len);
	uint32_t	c = nb_vocab_intern(&t->classes, label, len, h);

	if (c < NB_INLINE_CLASSES && t->inline_counts[c] == NULL)
		t->inline_counts[c] = nb_alloc_zero(sizeof(NbItemCounts) * t->item_cap);
	if (c >= t->class_cap)
	{
		uint32_t	old = t->class_cap;
		uint64_t	work = 0;

		t->class_cap *= 2;
		t->class_docs = nb_realloc(t->class_docs, sizeof(double) * t->class_cap);
		memset(t->class_docs + old, 0, sizeof(double) * (t->class_cap - old));
		for (uint32_t j = 0; j < t->features.count; j++)
		{
			NbTrainerFeature *f = &t->feature[j];

			/* a unit of work per 64 bytes cleared, as nb_interrupt.h counts */
			nb_interrupt_count(&work, 1 + (uint64_t) old * sizeof(NbClassStat) / 64);
			f->stats = nb_realloc(f->stats, sizeof(NbClassStat) * t->class_cap);
			memset(f->stats + old, 0, sizeof(NbClassStat) * (t->class_cap - old));
		}
	}
	return c;
}

/* Rehash the pair table into slots slots (a power of two, more than it has). */
static void
grow_pairs(NbTrainer *t, uint64_t slots)
{
	NbPairSlot *old = t->pairs;
	uint64_t	old_slots = t->pair_mask + 1;

	init_pairs(t, slots);
	for (uint64_t i = 0; i < old_slots; i++)
	{
		uint64_t	j;

		nb_interrupt_at(i);
		if (old[i].key == NB_EMPTY_KEY)
			continue;
		j = nb_hash_mix(old[i].key) & t->pair_mask;
		while (t->pairs[j].key != NB_EMPTY_KEY)
			j = (j + 1) & t->pair_mask;
		t->pairs[j] = old[i];
	}
	nb_free(old);
}

/*
 * Grow the pair table so that n more pairs keep its load factor at most 3/4:
 * the table is most of a large model's training memory, and linear probing
 * in 24-byte slots still finds a pair within a cache line or two.
 */
void
nb_trainer_reserve_pairs(NbTrainer *t, uint64_t n)
{
	uint64_t	slots = t->pair_mask + 1;

	while ((t->pairs_used + n) * 4 > slots * 3)
		slots *= 2;
	if (slots > t->pair_mask + 1)
		grow_pairs(t, slots);
}

/*
 * A new item (absent from the map, whose index exists), with zero counts.
 * Room for it first: the dense counts move to the tables if theirs would
 * grow too large.
 */
uint32_t
nb_trainer_new_item(NbTrainer *t, const char *str, uint32_t len, uint64_t hash)
{
	uint32_t	k;

	if (t->tokens.count == t->item_cap)
	{
		if (t->spread != NULL && !nb_trainer_spread_fits(t, 2 * (uint64_t) t->item_cap))
			nb_trainer_spread_to_tables(t);
		/* a large block: reallocating it remaps its pages, it does not copy them */
		t->item_cap *= 2;
		for (uint32_t c = 0; c < NB_INLINE_CLASSES; c++)
			if (t->inline_counts[c] != NULL)
				t->inline_counts[c] = nb_realloc(t->inline_counts[c],
												 sizeof(NbItemCounts) * t->item_cap);
		t->item_doc = nb_realloc(t->item_doc, sizeof(uint32_t) * t->item_cap);
		if (t->spread != NULL)
			t->spread = nb_realloc(t->spread, sizeof(NbItemCounts) * t->spread_classes * t->item_cap);
	}
	k = nb_vocab_add(&t->tokens, str, len, hash);
	for (uint32_t c = 0; c < NB_INLINE_CLASSES; c++)
		if (t->inline_counts[c] != NULL)
			memset(&t->inline_counts[c][k], 0, sizeof(NbItemCounts));
	if (t->spread != NULL)
		memset(&t->spread[(uint64_t) k * t->spread_classes], 0,
			   sizeof(NbItemCounts) * t->spread_classes);
	t->item_doc[k] = 0;
	if (len > 0 && str[0] == '\0')
		t->prefix_bytes += NB_ITEM_PREFIX;
	return k;
}

/* A new document: its features and items are not counted in it yet. */
void
nb_trainer_next_doc(NbTrainer *t)
{
	t->doc_seq++;
	/* once in 2^32 documents the stamps start over, with no item stamped */
	if (++t->doc_stamp == 0)
	{
		for (uint32_t k = 0; k < t->tokens.count; k++)
		{
			nb_interrupt_at(k);
			t->item_doc[k] = 0;
		}
		t->doc_stamp = 1;
	}
}

/* A new document of class cls, which exists, with weight weight. */
void
nb_trainer_begin_class_doc(NbTrainer *t, uint32_t cls, double weight)
{
	nb_trainer_end_doc(t);
	t->doc_class = cls;
	t->class_docs[t->doc_class] += weight;
	if (!isfinite(t->class_docs[t->doc_class]))
		t->overflow = true;
	t->doc_weight = weight;
	nb_trainer_next_doc(t);
}

void
nb_trainer_begin_doc(NbTrainer *t, const char *label, uint32_t len, double weight)
{
	uint32_t	cls = nb_trainer_class(t, label, len);

	nb_trainer_begin_class_doc(t, cls, weight);
}

int64_t
nb_trainer_feature(NbTrainer *t, const char *name, uint32_t len,
				   NbFeatureType type, NbFeatureType *existing)
{
	uint64_t	h = nb_hash_token(name, len);
	int64_t		found = nb_vocab_find(&t->features, name, len, h);
	NbTrainerFeature *f;
	uint32_t	j;

	if (found >= 0)
	{
		*existing = t->feature[found].type;
		return *existing == type ? found : -1;
	}
	j = nb_vocab_intern(&t->features, name, len, h);
	if (j >= t->feature_cap)
	{
		t->feature_cap *= 2;
		t->feature = nb_realloc(t->feature, sizeof(NbTrainerFeature) * t->feature_cap);
	}
	f = &t->feature[j];
	memset(f, 0, sizeof(*f));
	f->type = type;
	f->stats = nb_alloc_zero(sizeof(NbClassStat) * t->class_cap);
	if (type == NB_FEATURE_BAG && len == 0)
		t->unnamed_bag = j;
	if (type == NB_FEATURE_BAG)
		t->n_bags++;
	return j;
}

/* The current document's statistics of a feature; counts it as present once. */
static NbClassStat *
doc_stat(NbTrainer *t, uint32_t feature)
{
	NbTrainerFeature *f = &t->feature[feature];
	NbClassStat *st = &f->stats[t->doc_class];

	if (f->last_doc != t->doc_seq)
	{
		f->last_doc = t->doc_seq;
		st->present += t->doc_weight;
	}
	return st;
}

const uint32_t *
nb_trainer_vector(NbTrainer *t, uint32_t n, uint32_t *bad)
{
	if (t->vector_len != 0 && t->vector_len != n)
	{
		*bad = UINT32_MAX;
		return NULL;
	}
	if (t->position_feature == NULL)
	{
		uint32_t   *ids;

		/* first look for a conflict, so that a refusal changes nothing */
		for (uint32_t i = 0; i < n; i++)
		{
			char		name[NB_POSITION_NAME_SIZE];
			uint32_t	len = nb_position_name(i, name);
			int64_t		j = nb_vocab_find(&t->features, name, len, nb_hash_token(name, len));

			nb_interrupt_at(i);
			if (j >= 0 && t->feature[j].type != NB_FEATURE_GAUSSIAN)
			{
				*bad = i;
				return NULL;
			}
		}
		ids = nb_alloc(sizeof(uint32_t) * ((uint64_t) n + 1));
		for (uint32_t i = 0; i < n; i++)
		{
			char		name[NB_POSITION_NAME_SIZE];
			uint32_t	len = nb_position_name(i, name);
			NbFeatureType existing;

			nb_interrupt_at(i);
			ids[i] = (uint32_t) nb_trainer_feature(t, name, len, NB_FEATURE_GAUSSIAN, &existing);
		}
		t->position_feature = ids;
		t->vector_len = n;
	}
	return t->position_feature;
}

static void
reserve_scratch(NbTrainer *t, uint32_t n)
{
	if (n <= t->scratch_cap)
		return;
	t->scratch_cap = n > 2 * t->scratch_cap ? n : 2 * t->scratch_cap;
	nb_free_if(t->scratch_hash);
	nb_free_if(t->scratch_id);
	t->scratch_hash = nb_alloc(sizeof(uint64_t) * t->scratch_cap);
	t->scratch_id = nb_alloc(sizeof(uint32_t) * t->scratch_cap);
}

/*
 * Hash every token of the batch and resolve its item id into scratch_id
 * (a new item if need be), prefetching slots NB_PREFETCH_DISTANCE tokens
 * ahead so that cache misses overlap.
 */
void
nb_trainer_resolve_items(NbTrainer *t, const NbTokenRef *tokens, uint32_t n)
{
	uint64_t   *hash;
	uint32_t   *id;

	reserve_scratch(t, n);
	nb_vocab_index(&t->tokens);
	hash = t->scratch_hash;
	id = t->scratch_id;
	for (uint32_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		hash[i] = nb_hash_token(tokens[i].str, tokens[i].len);
	}
	for (uint32_t i = 0; i < n && i < NB_PREFETCH_DISTANCE; i++)
		nb_vocab_prefetch(&t->tokens, hash[i]);
	for (uint32_t i = 0; i < n; i++)
	{
		int64_t		found;

		nb_interrupt_at(i);
		if (i + NB_PREFETCH_DISTANCE < n)
			nb_vocab_prefetch(&t->tokens, hash[i + NB_PREFETCH_DISTANCE]);
		found = nb_vocab_find(&t->tokens, tokens[i].str, tokens[i].len, hash[i]);
		id[i] = found >= 0 ? (uint32_t) found :
			nb_trainer_new_item(t, tokens[i].str, tokens[i].len, hash[i]);
	}
}

/*
 * Count the batch's items (in scratch_id) in the current document,
 * prefetching their counts and document stamps NB_PREFETCH_DISTANCE ahead.
 */
static void
count_items(NbTrainer *t, const NbTokenRef *tokens, uint32_t n)
{
	uint64_t   *hash = t->scratch_hash;
	uint32_t   *id = t->scratch_id;
	uint32_t	cls = t->doc_class;
	double		w = t->doc_weight;

	if (t->spread != NULL && cls < t->spread_classes)
	{
		uint32_t	S = t->spread_classes;

		for (uint32_t i = 0; i < n; i++)
		{
			NbItemCounts *cell = &t->spread[(uint64_t) id[i] * S + cls];

			nb_interrupt_at(i);
			if (cell->docs == 0)
				t->n_entries++;
			cell->count += weighted(t, tokens[i].count, w);
			if (first_in_doc(t, id[i]))
				cell->docs += w;
			if (!isfinite(cell->count))
				t->overflow = true;
		}
		return;
	}
	if (cls < NB_INLINE_CLASSES)
	{
		NbItemCounts *counts = t->inline_counts[cls];

		for (uint32_t i = 0; i < n && i < NB_PREFETCH_DISTANCE; i++)
			nb_prefetch(&counts[id[i]]);
		for (uint32_t i = 0; i < n; i++)
		{
			nb_interrupt_at(i);
			if (i + NB_PREFETCH_DISTANCE < n)
			{
				nb_prefetch(&counts[id[i + NB_PREFETCH_DISTANCE]]);
				nb_prefetch(&t->item_doc[id[i + NB_PREFETCH_DISTANCE]]);
			}
			count_inline(t, &counts[id[i]], weighted(t, tokens[i].count, w),
						 first_in_doc(t, id[i]) ? w : 0);
		}
		return;
	}

	nb_trainer_reserve_pairs(t, n);
	for (uint32_t i = 0; i < n; i++)
	{
		/* the hashes of the (item, class) keys, in the scratch of the tokens' */
		hash[i] = nb_hash_mix(pair_key(id[i], cls));
		if (i < NB_PREFETCH_DISTANCE)
			nb_prefetch(&t->pairs[hash[i] & t->pair_mask]);
	}
	for (uint32_t i = 0; i < n; i++)
	{
		NbPairSlot *s;

		nb_interrupt_at(i);
		if (i + NB_PREFETCH_DISTANCE < n)
		{
			nb_prefetch(&t->pairs[hash[i + NB_PREFETCH_DISTANCE] & t->pair_mask]);
			nb_prefetch(&t->item_doc[id[i + NB_PREFETCH_DISTANCE]]);
		}
		s = find_pair(t, pair_key(id[i], cls), hash[i]);
		s->count += weighted(t, tokens[i].count, w);
		if (first_in_doc(t, id[i]))
			s->docs += w;
		if (!isfinite(s->count))
			t->overflow = true;
	}
}

static inline uint64_t
length_hash(uint32_t feature, uint32_t cls, double length)
{
	uint64_t	bits;

	memcpy(&bits, &length, 8);
	return nb_hash_mix(nb_hash_mix((uint64_t) feature << 32 | cls) ^ bits);
}

/* The slot of (feature, class, length) in a table with room for it. */
static NbLengthSlot *
find_length(NbLengthSlot *table, uint64_t mask, uint32_t feature, uint32_t cls, double length)
{
	uint64_t	j = length_hash(feature, cls, length) & mask;

	for (;;)
	{
		NbLengthSlot *s = &table[j];

		if (s->length == 0 ||
			(s->length == length && s->feature == feature && s->cls == cls))
			return s;
		j = (j + 1) & mask;
	}
}

/* Add weight to the bin of a bag's document length (> 0, finite) in a class. */
void
nb_trainer_add_length(NbTrainer *t, uint32_t feature, uint32_t cls, double length, double weight)
{
	NbLengthSlot *s;

	if ((t->lengths_used + 1) * 2 > t->length_mask + 1)
	{
		NbLengthSlot *old = t->lengths;
		uint64_t	old_slots = t->length_mask + 1;

		init_lengths(t, old_slots * 2);
		for (uint64_t i = 0; i < old_slots; i++)
		{
			nb_interrupt_at(i);
			if (old[i].length != 0)
				*find_length(t->lengths, t->length_mask, old[i].feature, old[i].cls,
							 old[i].length) = old[i];
		}
		nb_free(old);
	}
	s = find_length(t->lengths, t->length_mask, feature, cls, length);
	if (s->length == 0)
	{
		s->feature = feature;
		s->cls = cls;
		s->length = length;
		s->weight = 0;
		t->lengths_used++;
	}
	s->weight += weight;
	if (!isfinite(s->weight))
		t->overflow = true;
}

void
nb_trainer_end_doc(NbTrainer *t)
{
	for (uint32_t i = 0; i < t->n_pending; i++)
	{
		double		length = t->feature[t->pending[i]].doc_length;

		nb_interrupt_at(i);
		if (length > 0 && isfinite(length))
			nb_trainer_add_length(t, t->pending[i], t->doc_class, length, t->doc_weight);
	}
	t->n_pending = 0;
}

/* Forget the lengths: the model now holds documents of unknown length. */
void
nb_trainer_drop_lengths(NbTrainer *t)
{
	t->lengths_unknown = true;
	nb_free(t->lengths);
	init_lengths(t, 64);
	t->lengths_used = 0;
	t->n_pending = 0;
}

void
nb_trainer_add_tokens(NbTrainer *t, uint32_t feature, const NbTokenRef *tokens, uint32_t n)
{
	NbTrainerFeature *f = &t->feature[feature];
	bool		first = f->last_doc != t->doc_seq;

	doc_stat(t, feature);
	if (f->type == NB_FEATURE_BAG && !t->lengths_unknown)
	{
		if (first)
		{
			if (t->n_pending == t->pending_cap)
			{
				t->pending_cap = t->pending_cap == 0 ? 8 : 2 * t->pending_cap;
				t->pending = t->pending == NULL ?
					nb_alloc(sizeof(uint32_t) * t->pending_cap) :
					nb_realloc(t->pending, sizeof(uint32_t) * t->pending_cap);
			}
			t->pending[t->n_pending++] = feature;
			f->doc_length = 0;
		}
		for (uint32_t i = 0; i < n; i++)
		{
			nb_interrupt_at(i);
			f->doc_length += tokens[i].count;
		}
		if (!isfinite(f->doc_length))
			t->overflow = true;
	}
	if (n == 0)
		return;
	if ((int64_t) feature != t->unnamed_bag)
		tokens = nb_item_keys(&t->item_keys, feature, tokens, n);
	nb_trainer_resolve_items(t, tokens, n);
	count_items(t, tokens, n);
}

bool
nb_trainer_add_text(NbTrainer *t, const NbTokenRef *tokens, uint32_t n)
{
	NbFeatureType existing;
	int64_t		j = t->unnamed_bag >= 0 ? t->unnamed_bag :
		nb_trainer_feature(t, "", 0, NB_FEATURE_BAG, &existing);

	if (j < 0)
		return false;
	nb_trainer_add_tokens(t, (uint32_t) j, tokens, n);
	return true;
}

void
nb_trainer_add_category(NbTrainer *t, uint32_t feature, const char *value, uint32_t len)
{
	NbTokenRef	ref = {value, len, 1.0};

	nb_trainer_add_tokens(t, feature, &ref, 1);
}

void
nb_trainer_add_real(NbTrainer *t, uint32_t feature, double x)
{
	NbTrainerFeature *f = &t->feature[feature];
	NbClassStat *st = &f->stats[t->doc_class];
	double		w = t->doc_weight;
	double		delta;

	/* weighted West/Welford update of the class; doc_stat adds the weight */
	doc_stat(t, feature);
	delta = x - st->a;
	st->a += delta * (w / st->present);
	st->b += w * delta * (x - st->a);
	nb_moments_add(&f->rows, &f->mean, &f->m2, 1, x, 0);
	if (!isfinite(st->a) || !isfinite(st->b) || !isfinite(f->mean) || !isfinite(f->m2))
		t->overflow = true;
}

void
nb_trainer_add_boolean(NbTrainer *t, uint32_t feature, bool x)
{
	NbClassStat *st = doc_stat(t, feature);

	if (x)
		st->a += t->doc_weight;
}
