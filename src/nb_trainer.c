/*
 * nb_trainer.c — accumulation, merging and serialization of models.
 */
#include "nb_trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_moments.h"
#include "nb_port.h"

#define NB_EMPTY_KEY UINT64_MAX

static void end_doc(NbTrainer *t);

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

	nb_strmap_init(&t->classes, 8);
	t->class_cap = 8;
	t->class_docs = nb_alloc_zero(sizeof(double) * t->class_cap);
	nb_strmap_init(&t->features, 8);
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
	nb_strmap_free(&t->classes);
	nb_vocab_free(&t->tokens);
	for (uint32_t c = 0; c < NB_INLINE_CLASSES; c++)
		if (t->inline_counts[c] != NULL)
			nb_free(t->inline_counts[c]);
	nb_free(t->item_doc);
	if (t->spread != NULL)
		nb_free(t->spread);
	if (t->spread_active != NULL)
		nb_free(t->spread_active);
	nb_free(t->class_docs);
	for (uint32_t j = 0; j < t->features.count; j++)
		nb_free(t->feature[j].stats);
	nb_free(t->feature);
	nb_strmap_free(&t->features);
	if (t->position_feature != NULL)
		nb_free(t->position_feature);
	nb_free(t->pairs);
	nb_free(t->lengths);
	if (t->pending != NULL)
		nb_free(t->pending);
	nb_item_keys_free(&t->item_keys);
	if (t->settings.options != NULL)
		nb_free((void *) t->settings.options);
	if (t->scratch_hash != NULL)
	{
		nb_free(t->scratch_hash);
		nb_free(t->scratch_id);
	}
	nb_free(t);
}

static uint32_t
intern_class(NbTrainer *t, const char *label, uint32_t len)
{
	uint64_t	h = nb_hash_token(label, len);
	uint32_t	c = nb_strmap_intern(&t->classes, label, len, h);

	if (c < NB_INLINE_CLASSES && t->inline_counts[c] == NULL)
		t->inline_counts[c] = nb_alloc_zero(sizeof(NbItemCounts) * t->item_cap);
	if (c >= t->class_cap)
	{
		uint32_t	old = t->class_cap;

		t->class_cap *= 2;
		t->class_docs = nb_realloc(t->class_docs, sizeof(double) * t->class_cap);
		memset(t->class_docs + old, 0, sizeof(double) * (t->class_cap - old));
		for (uint32_t j = 0; j < t->features.count; j++)
		{
			NbTrainerFeature *f = &t->feature[j];

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

static inline uint64_t
pair_key(uint32_t token, uint32_t cls)
{
	return (uint64_t) token << 32 | cls;
}

/*
 * The slot of a (token, class) pair given the key's hash, created with zero
 * counts if new.  The caller makes sure there is room for one more pair.
 */
static inline NbPairSlot *
find_pair(NbTrainer *t, uint64_t key, uint64_t hash)
{
	uint64_t	j = hash & t->pair_mask;

	for (;;)
	{
		NbPairSlot *s = &t->pairs[j];

		if (s->key == key)
			return s;
		if (s->key == NB_EMPTY_KEY)
		{
			s->key = key;
			s->count = 0;
			s->docs = 0;
			t->pairs_used++;
			t->n_entries++;
			return s;
		}
		j = (j + 1) & t->pair_mask;
	}
}

/*
 * A token's count in a row of weight w: both are positive, but their
 * product can round to 0 (a subnormal weight times a count below 1), which
 * no entry may hold: the trainer refuses the model then, as PostgreSQL's
 * float8 arithmetic refuses an underflow.
 */
static inline double
weighted(NbTrainer *t, double count, double w)
{
	double		x = count * w;

	if (x == 0)
		t->underflow = true;
	return x;
}

/* Add to an item's counts in a class below NB_INLINE_CLASSES. */
static inline void
count_inline(NbTrainer *t, NbItemCounts *in, double count, double docs)
{
	if (in->count == 0)
		t->n_entries++;
	in->count += count;
	in->docs += docs;
	if (!isfinite(in->count))
		t->overflow = true;
}

/*
 * Grow the pair table so that n more pairs keep its load factor at most 3/4:
 * the table is most of a large model's training memory, and linear probing
 * in 24-byte slots still finds a pair within a cache line or two.
 */
static void
reserve_pairs(NbTrainer *t, uint64_t n)
{
	uint64_t	slots = t->pair_mask + 1;

	while ((t->pairs_used + n) * 4 > slots * 3)
		slots *= 2;
	if (slots > t->pair_mask + 1)
		grow_pairs(t, slots);
}

static void spread_to_tables(NbTrainer *t);

/*
 * Whether the dense counts of items_cap items stay within the trainer's
 * spread_min_bytes, or within twice its entries (NB_SPREAD_MIN_BYTES).
 */
static bool
spread_fits(const NbTrainer *t, uint64_t items_cap)
{
	uint64_t	cells = 2 * t->n_entries;
	uint64_t	limit = t->spread_min_bytes / sizeof(NbItemCounts);

	if (cells > limit)
		limit = cells;
	return t->spread_classes == 0 || items_cap <= limit / t->spread_classes;
}

/*
 * A new item (known to be absent from the map), with zero counts.  The
 * caller has made sure the index exists (nb_vocab_index).  Room for it
 * first: the dense counts move to the tables if theirs would grow too
 * large.
 */
static uint32_t
new_item(NbTrainer *t, const char *str, uint32_t len, uint64_t hash)
{
	uint32_t	k;

	if (t->tokens.count == t->item_cap)
	{
		if (t->spread != NULL && !spread_fits(t, 2 * (uint64_t) t->item_cap))
			spread_to_tables(t);
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
static void
next_doc(NbTrainer *t)
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
static void
begin_class_doc(NbTrainer *t, uint32_t cls, double weight)
{
	end_doc(t);
	t->doc_class = cls;
	t->class_docs[t->doc_class] += weight;
	if (!isfinite(t->class_docs[t->doc_class]))
		t->overflow = true;
	t->doc_weight = weight;
	next_doc(t);
}

void
nb_trainer_begin_doc(NbTrainer *t, const char *label, uint32_t len, double weight)
{
	uint32_t	cls = intern_class(t, label, len);

	begin_class_doc(t, cls, weight);
}

uint32_t
nb_trainer_class(NbTrainer *t, const char *label, uint32_t len)
{
	return intern_class(t, label, len);
}

int64_t
nb_trainer_feature(NbTrainer *t, const char *name, uint32_t len,
				   NbFeatureType type, NbFeatureType *existing)
{
	uint64_t	h = nb_hash_token(name, len);
	int64_t		found = nb_strmap_find(&t->features, name, len, h);
	NbTrainerFeature *f;
	uint32_t	j;

	if (found >= 0)
	{
		*existing = t->feature[found].type;
		return *existing == type ? found : -1;
	}
	j = nb_strmap_intern(&t->features, name, len, h);
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
			int64_t		j = nb_strmap_find(&t->features, name, len, nb_hash_token(name, len));

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
	if (t->scratch_hash != NULL)
	{
		nb_free(t->scratch_hash);
		nb_free(t->scratch_id);
	}
	t->scratch_hash = nb_alloc(sizeof(uint64_t) * t->scratch_cap);
	t->scratch_id = nb_alloc(sizeof(uint32_t) * t->scratch_cap);
}

/* Whether item k is counted in the current document's frequency for the first time. */
static inline bool
first_in_doc(NbTrainer *t, uint32_t k)
{
	bool		first = t->item_doc[k] != t->doc_stamp;

	t->item_doc[k] = t->doc_stamp;
	return first;
}

/*
 * Hash every token of the batch and resolve its item id into scratch_id
 * (a new item if need be), prefetching slots NB_PREFETCH_DISTANCE tokens
 * ahead so that cache misses overlap.
 */
static void
resolve_items(NbTrainer *t, const NbTokenRef *tokens, uint32_t n)
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
			new_item(t, tokens[i].str, tokens[i].len, hash[i]);
	}
}

/*
 * Count the batch's items (in scratch_id) in the current document,
 * prefetching the counts (in the item's inline counts for a class below
 * NB_INLINE_CLASSES, else in the pair table) and the item's document stamp
 * NB_PREFETCH_DISTANCE tokens ahead.
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

	reserve_pairs(t, n);
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

/*
 * Add weight to the bin of a document length (> 0, finite) of a bag in a
 * class.  The table is kept at most half full.
 */
static void
add_length(NbTrainer *t, uint32_t feature, uint32_t cls, double length, double weight)
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

/*
 * End the current document: the lengths of its bags go to the histograms
 * (an empty bag has none, see nb_format.h).
 */
static void
end_doc(NbTrainer *t)
{
	for (uint32_t i = 0; i < t->n_pending; i++)
	{
		double		length = t->feature[t->pending[i]].doc_length;

		nb_interrupt_at(i);
		if (length > 0 && isfinite(length))
			add_length(t, t->pending[i], t->doc_class, length, t->doc_weight);
	}
	t->n_pending = 0;
}

void
nb_trainer_end_doc(NbTrainer *t)
{
	end_doc(t);
}

/* Forget the lengths: the model now holds documents of unknown length. */
static void
drop_lengths(NbTrainer *t)
{
	t->lengths_unknown = true;
	nb_free(t->lengths);
	init_lengths(t, 64);
	t->lengths_used = 0;
	t->n_pending = 0;
}

static void
add_tokens(NbTrainer *t, uint32_t feature, const NbTokenRef *tokens, uint32_t n)
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
	resolve_items(t, tokens, n);
	count_items(t, tokens, n);
}

void
nb_trainer_add_tokens(NbTrainer *t, uint32_t feature, const NbTokenRef *tokens, uint32_t n)
{
	add_tokens(t, feature, tokens, n);
}

bool
nb_trainer_add_text(NbTrainer *t, const NbTokenRef *tokens, uint32_t n)
{
	NbFeatureType existing;
	int64_t		j = t->unnamed_bag >= 0 ? t->unnamed_bag :
		nb_trainer_feature(t, "", 0, NB_FEATURE_BAG, &existing);

	if (j < 0)
		return false;
	add_tokens(t, (uint32_t) j, tokens, n);
	return true;
}

bool
nb_trainer_spread_init(NbTrainer *t, uint32_t n_classes)
{
	if (t->n_entries > 0 || t->spread_active != NULL)
		return false;
	t->spread_classes = n_classes;
	t->spread_active = nb_alloc(sizeof(uint32_t) * (n_classes ? n_classes : 1));
	if (spread_fits(t, t->item_cap))
		t->spread = nb_alloc_zero(sizeof(NbItemCounts) * n_classes * t->item_cap);
	return true;
}

/* Whether any of the n weights is positive. */
static bool
any_positive(const double *w, uint32_t n)
{
	for (uint32_t c = 0; c < n; c++)
		if (w[c] > 0)
			return true;
	return false;
}

/* The document added to each spread class of a positive weight in turn, counted in the tables. */
static void
add_spread_by_class(NbTrainer *t, uint32_t feature, const NbTokenRef *tokens, uint32_t n,
					const double *w)
{
	for (uint32_t c = 0; c < t->spread_classes; c++)
	{
		nb_interrupt_at(c);
		if (!(w[c] > 0))
			continue;
		begin_class_doc(t, c, w[c]);
		add_tokens(t, feature, tokens, n);
	}
}

bool
nb_trainer_add_text_spread(NbTrainer *t, const NbTokenRef *tokens, uint32_t n, const double *w)
{
	uint32_t	n_classes = t->spread_classes;
	NbFeatureType existing;
	int64_t		j = t->unnamed_bag >= 0 ? t->unnamed_bag :
		nb_trainer_feature(t, "", 0, NB_FEATURE_BAG, &existing);
	NbTrainerFeature *f;
	uint32_t   *active;
	uint32_t	n_active = 0;
	double		length = 0;
	uint64_t	work = 0;

	if (j < 0 || t->spread_active == NULL)
		return false;
	/*
	 * The items first: a new one may move the dense counts to the tables.
	 * A row of no positive weight adds nothing, not even its tokens as items.
	 */
	if (n > 0 && any_positive(w, n_classes))
		resolve_items(t, tokens, n);
	if (t->spread == NULL)
	{
		add_spread_by_class(t, (uint32_t) j, tokens, n, w);
		return true;
	}
	f = &t->feature[j];
	end_doc(t);
	next_doc(t);
	f->last_doc = t->doc_seq;
	active = t->spread_active;
	for (uint32_t c = 0; c < n_classes; c++)
	{
		if (!(w[c] > 0))
			continue;
		active[n_active++] = c;
		t->class_docs[c] += w[c];
		f->stats[c].present += w[c];
		if (!isfinite(t->class_docs[c]) || !isfinite(f->stats[c].present))
			t->overflow = true;
	}
	for (uint32_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		length += tokens[i].count;
	}
	if (!isfinite(length))
		t->overflow = true;
	/* the lengths as end_doc adds them, per class */
	if (!t->lengths_unknown && length > 0 && isfinite(length))
		for (uint32_t a = 0; a < n_active; a++)
			add_length(t, (uint32_t) j, active[a], length, w[active[a]]);
	/* a row of no positive weight adds nothing: not even its tokens as items */
	if (n == 0 || n_active == 0)
		return true;
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	id = t->scratch_id[i];
		NbItemCounts *cells = &t->spread[(uint64_t) id * n_classes];
		bool		first = first_in_doc(t, id);
		double		count = tokens[i].count;

		nb_interrupt_count(&work, 1 + (uint64_t) n_active);
		for (uint32_t a = 0; a < n_active; a++)
		{
			uint32_t	c = active[a];
			NbItemCounts *cell = &cells[c];

			if (cell->docs == 0)
				t->n_entries++;
			cell->count += weighted(t, count, w[c]);
			if (first)
				cell->docs += w[c];
			if (!isfinite(cell->count))
				t->overflow = true;
		}
	}
	return true;
}

/*
 * Move the dense counts of the spread classes to the tables of the others
 * (inline and pairs): rows added later go there too.
 */
static void
spread_to_tables(NbTrainer *t)
{
	uint32_t	S = t->spread_classes;
	uint32_t	V = t->tokens.count;
	uint64_t	pairs = 0;
	uint64_t	work = 0;

	if (t->spread == NULL)
		return;
	for (uint64_t i = 0; i < (uint64_t) V * S; i++)
	{
		nb_interrupt_at(i);
		pairs += t->spread[i].docs != 0 && i % S >= NB_INLINE_CLASSES;
	}
	reserve_pairs(t, pairs);
	for (uint32_t k = 0; k < V; k++)
	{
		const NbItemCounts *cells = &t->spread[(uint64_t) k * S];

		nb_interrupt_count(&work, 1 + (uint64_t) S);
		for (uint32_t c = 0; c < S; c++)
		{
			const NbItemCounts *cell = &cells[c];

			if (cell->docs == 0)
				continue;
			/* counted as an entry when added: counted again below if new to the tables */
			t->n_entries--;
			if (c < NB_INLINE_CLASSES)
				count_inline(t, &t->inline_counts[c][k], cell->count, cell->docs);
			else
			{
				uint64_t	key = pair_key(k, c);
				NbPairSlot *s = find_pair(t, key, nb_hash_mix(key));

				s->count += cell->count;
				s->docs += cell->docs;
				if (!isfinite(s->count))
					t->overflow = true;
			}
		}
	}
	nb_free(t->spread);
	t->spread = NULL;
}

/* Before a merge, which adds in the tables: no more spread rows after it. */
static void
fold_spread(NbTrainer *t)
{
	spread_to_tables(t);
	if (t->spread_active != NULL)
		nb_free(t->spread_active);
	t->spread_active = NULL;
	t->spread_classes = 0;
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

/* Feature ids of this trainer for the features of a view, or a conflict. */
static NbMergeStatus
map_features(NbTrainer *t, const NbView *v, uint32_t *map, uint32_t *conflict)
{
	NbStringIter names = nb_view_feature_names(v);
	const char *name;
	uint32_t	len;

	if (v->vector_len != 0 && t->vector_len != 0 && v->vector_len != t->vector_len)
		return NB_MERGE_VECTOR_CONFLICT;
	for (uint32_t j = 0; nb_string_next(&names, &name, &len); j++)
	{
		int64_t		found = nb_strmap_find(&t->features, name, len, nb_hash_token(name, len));

		nb_interrupt_at(j);
		if (found >= 0 && t->feature[found].type != nb_view_feature_type(v, j))
		{
			*conflict = j;
			return NB_MERGE_TYPE_CONFLICT;
		}
	}
	names = nb_view_feature_names(v);
	for (uint32_t j = 0; nb_string_next(&names, &name, &len); j++)
	{
		NbFeatureType existing;

		nb_interrupt_at(j);
		map[j] = (uint32_t) nb_trainer_feature(t, name, len, nb_view_feature_type(v, j), &existing);
	}
	if (v->vector_len != 0)
		t->vector_len = v->vector_len;
	return NB_MERGE_OK;
}

/* Whether adding more bytes to the serialized form would pass t->size_limit. */
static bool
passes_limit(const NbTrainer *t, uint64_t more)
{
	uint64_t	size = nb_trainer_min_flat_size(t);

	return size > t->size_limit || more > t->size_limit - size;
}

uint32_t
nb_trainer_input_kinds(const NbTrainer *t)
{
	uint32_t	kinds = nb_input_kinds_base(t->vector_len, &t->settings);

	for (uint32_t j = 0; j < t->features.count; j++)
	{
		uint32_t	len;
		const char *name = nb_strmap_str(&t->features, j, &len);

		nb_interrupt_at(j);
		kinds |= nb_feature_input_kind(name, len, t->feature[j].type, t->vector_len);
	}
	return kinds;
}

/* Whether the trainer's settings are fixed: set, or implied by rows (none). */
static bool
settings_fixed(const NbTrainer *t)
{
	return t->settings_fixed || !nb_trainer_is_empty(t);
}

bool
nb_trainer_set_tokenizer(NbTrainer *t, const NbTokenizer *tok)
{
	NbSettings	s = {true, *tok, NULL, 0, false};

	if (settings_fixed(t))
		return nb_settings_same_tokenizer(&t->settings, &s);
	t->settings.has_tokenizer = true;
	t->settings.tokenizer = *tok;
	t->settings_fixed = true;
	return true;
}

/* Merge the view's settings into the trainer's: adopted while not fixed, else compared. */
static NbMergeStatus
merge_settings(NbTrainer *t, const NbView *v)
{
	char	   *options;

	if (settings_fixed(t))
		return nb_merge_compat_status(nb_compat_check(nb_trainer_input_kinds(t), &t->settings,
													  nb_view_input_kinds(v), &v->settings));
	t->settings = v->settings;
	t->settings.options = NULL;
	if (v->settings.options_len > 0)
	{
		options = nb_alloc(v->settings.options_len);
		memcpy(options, v->settings.options, v->settings.options_len);
		t->settings.options = options;
	}
	t->settings_fixed = true;
	return NB_MERGE_OK;
}

NbMergeStatus
nb_trainer_merge_view(NbTrainer *t, const NbView *v, uint32_t *conflict)
{
	uint32_t   *feature_map;
	uint32_t   *class_map;
	NbMergeStatus status = merge_settings(t, v);
	const char *s = v->labels;
	uint64_t	e = 0;
	uint64_t	h = 0;
	uint32_t	k = 0;
	uint64_t	work = 0;

	if (status != NB_MERGE_OK)
		return status;
	feature_map = nb_alloc(sizeof(uint32_t) * v->n_features);
	status = map_features(t, v, feature_map, conflict);

	if (status != NB_MERGE_OK)
	{
		nb_free(feature_map);
		return status;
	}
	end_doc(t);
	fold_spread(t);
	/* the lengths of an older model's bags are unknown, and so are the merged ones */
	if (!t->lengths_unknown && !nb_view_has_lengths(v) && nb_view_has_bag(v))
		drop_lengths(t);
	class_map = nb_alloc(sizeof(uint32_t) * v->n_classes);
	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		uint32_t	len = nb_view_label_len(v, c);

		nb_interrupt_at(c);
		/* a new label adds its docs, its length and its bytes */
		if (passes_limit(t, 8 + 4 + (uint64_t) len) &&
			nb_strmap_find(&t->classes, s, len, nb_hash_token(s, len)) < 0)
		{
			status = NB_MERGE_TOO_LARGE;
			goto done;
		}
		class_map[c] = intern_class(t, s, len);
		t->class_docs[class_map[c]] += nb_view_class_docs(v, c);
		if (!isfinite(t->class_docs[class_map[c]]))
			t->overflow = true;
		s += len;
	}
	s = v->tokens;
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		uint32_t	tj = feature_map[j];
		NbTrainerFeature *f = &t->feature[tj];
		bool		prefixed = (int64_t) tj != t->unnamed_bag;

		nb_interrupt_count(&work, 1 + (uint64_t) v->n_classes);
		for (uint32_t c = 0; c < v->n_classes; c++)
		{
			NbClassStat *st = &f->stats[class_map[c]];
			double		present = nb_view_present(v, j, c);

			nb_feature_stats_add(f->type, &st->present, &st->a, &st->b,
								 present, nb_view_a(v, j, c), nb_view_b(v, j, c));
			if (!isfinite(st->present) || !isfinite(st->a) || !isfinite(st->b))
				t->overflow = true;
		}
		if (nb_feature_type(f->type)->stats == NB_STATS_MOMENTS)
		{
			nb_moments_add(&f->rows, &f->mean, &f->m2, nb_view_feature_rows(v, j),
						  nb_view_feature_mean(v, j), nb_view_feature_m2(v, j));
			if (!isfinite(f->m2) || !isfinite(f->mean))
				t->overflow = true;
		}
		if (f->type == NB_FEATURE_BAG && !t->lengths_unknown)
		{
			for (uint32_t c = 0; c < v->n_classes; c++)
				for (uint64_t end = h + nb_view_length_pairs(v, j, c); h < end; h++)
				{
					nb_interrupt_count(&work, 1);
					add_length(t, tj, class_map[c], nb_view_length_value(v, h),
							   nb_view_length_weight(v, h));
				}
			if (passes_limit(t, 0))
			{
				status = NB_MERGE_TOO_LARGE;
				goto done;
			}
		}

		for (uint32_t end = k + nb_view_feature_items(v, j); k < end; k++)
		{
			uint32_t	len = nb_view_token_len(v, k);
			uint32_t	n = nb_view_token_entries(v, k);
			NbTokenRef	ref = {s, len, 1.0};
			const NbTokenRef *item = prefixed ? nb_item_keys(&t->item_keys, tj, &ref, 1) : &ref;
			uint64_t	hash = nb_hash_token(item->str, item->len);
			int64_t		found;
			uint32_t	tok;

			nb_interrupt_count(&work, 1 + (uint64_t) n + len / 64);
			nb_vocab_index(&t->tokens);
			found = nb_vocab_find(&t->tokens, item->str, item->len, hash);
			if (found >= 0)
				tok = (uint32_t) found;
			else
			{
				/* a new item adds its length, its entry count, its bytes and an entry */
				if (passes_limit(t, 4 + 4 + (uint64_t) len + (4 + 8 + 8)))
				{
					status = NB_MERGE_TOO_LARGE;
					goto done;
				}
				tok = new_item(t, item->str, item->len, hash);
			}
			for (uint32_t i = 0; i < n; i++, e++)
			{
				uint32_t	cls = class_map[nb_view_entry_class(v, e)];
				double		count = nb_view_entry_count(v, e);
				double		docs = nb_view_entry_docs(v, e);
				NbPairSlot *slot;

				if (cls < NB_INLINE_CLASSES)
				{
					count_inline(t, &t->inline_counts[cls][tok], count, docs);
					continue;
				}
				reserve_pairs(t, 1);
				slot = find_pair(t, pair_key(tok, cls), nb_hash_mix(pair_key(tok, cls)));
				slot->count += count;
				slot->docs += docs;
				if (!isfinite(slot->count))
					t->overflow = true;
			}
			if (passes_limit(t, 0))
			{
				status = NB_MERGE_TOO_LARGE;
				goto done;
			}
			s += len;
		}
	}
	if (v->settings.jsonb_bag)
		t->settings.jsonb_bag = true;
done:
	nb_free(class_map);
	nb_free(feature_map);
	return status;
}

void
nb_trainer_set_jsonb_bag(NbTrainer *t)
{
	t->settings.jsonb_bag = true;
}

/* A non-zero (item, class) pair of the trainer. */
typedef struct Entry
{
	uint32_t	item;
	uint32_t	cls;
	double		count;
	double		docs;
} Entry;

/*
 * Step *pos (0 at first) through the entries: the inline counts item by
 * item, then the pair table, then the spread classes' dense counts.  False
 * after the last.
 */
static bool
next_entry(const NbTrainer *t, uint64_t *pos, Entry *e)
{
	uint64_t	in_slots = (uint64_t) t->tokens.count * NB_INLINE_CLASSES;

	for (; *pos < in_slots; (*pos)++)
	{
		uint32_t	c = (uint32_t) (*pos % NB_INLINE_CLASSES);
		const NbItemCounts *in = t->inline_counts[c] == NULL ? NULL :
			&t->inline_counts[c][*pos / NB_INLINE_CLASSES];

		nb_interrupt_at(*pos);
		if (in != NULL && in->count != 0)
		{
			e->item = (uint32_t) (*pos / NB_INLINE_CLASSES);
			e->cls = c;
			e->count = in->count;
			e->docs = in->docs;
			(*pos)++;
			return true;
		}
	}
	for (; *pos - in_slots <= t->pair_mask; (*pos)++)
	{
		const NbPairSlot *s = &t->pairs[*pos - in_slots];

		nb_interrupt_at(*pos);
		if (s->key != NB_EMPTY_KEY)
		{
			e->item = (uint32_t) (s->key >> 32);
			e->cls = (uint32_t) s->key;
			e->count = s->count;
			e->docs = s->docs;
			(*pos)++;
			return true;
		}
	}
	for (; t->spread != NULL && *pos - in_slots - (t->pair_mask + 1) <
		 (uint64_t) t->tokens.count * t->spread_classes; (*pos)++)
	{
		uint64_t	i = *pos - in_slots - (t->pair_mask + 1);
		const NbItemCounts *cell = &t->spread[i];

		nb_interrupt_at(*pos);
		if (cell->docs != 0)
		{
			e->item = (uint32_t) (i / t->spread_classes);
			e->cls = (uint32_t) (i % t->spread_classes);
			e->count = cell->count;
			e->docs = cell->docs;
			(*pos)++;
			return true;
		}
	}
	return false;
}

bool
nb_trainer_sums_finite(NbTrainer *t)
{
	NbSums		sums = {0, 0, 0};
	uint64_t	pos = 0;
	uint64_t	work = 0;
	Entry		en;

	end_doc(t);
	if (t->overflow || t->underflow)
		return false;
	for (uint32_t c = 0; c < t->classes.count; c++)
		nb_sums_add_class(&sums, t->class_docs[c]);
	while (next_entry(t, &pos, &en))
		nb_sums_add_entry(&sums, en.count, en.docs);
	/*
	 * nb_view_open sums each histogram's weights and weighted lengths: the
	 * sums over all of them, of positive terms, bound those (the weighted
	 * lengths of a bag in a class add up to its token count there).
	 */
	{
		double		rows = 0;
		double		tokens = 0;

		for (uint64_t i = 0; i <= t->length_mask; i++)
		{
			nb_interrupt_at(i);
			if (t->lengths[i].length == 0)
				continue;
			rows += t->lengths[i].weight;
			tokens += t->lengths[i].weight * t->lengths[i].length;
		}
		if (!isfinite(rows) || !isfinite(tokens))
			return false;
	}
	for (uint32_t j = 0; j < t->features.count; j++)
	{
		const NbTrainerFeature *f = &t->feature[j];

		nb_interrupt_count(&work, 1 + (uint64_t) t->classes.count);
		if (!isfinite(f->mean) || !isfinite(f->m2))
			return false;
		for (uint32_t c = 0; c < t->classes.count; c++)
			if (!isfinite(f->stats[c].present) || !isfinite(f->stats[c].a) ||
				!isfinite(f->stats[c].b))
				return false;
	}
	return nb_sums_finite(sums);
}

static void
trainer_rows(const void *model, uint32_t c, double *docs, double *present)
{
	const NbTrainer *t = model;

	*docs = t->class_docs[c];
	*present = t->feature[0].stats[c].present;
}

/* Whether the model is written as format version 1 (nb_format_text_only). */
static bool
is_text_only(const NbTrainer *t)
{
	uint32_t	name_len = 0;

	if (t->features.count > 0)
		(void) nb_strmap_str(&t->features, 0, &name_len);
	return nb_format_text_only(t, t->features.count, name_len, t->feature[0].type,
							   t->classes.count, trainer_rows);
}

/* The trainer's model as nb_format lays it out. */
static NbFormatShape
trainer_shape(const NbTrainer *t, bool text_only, bool lengths)
{
	NbFormatShape s;

	s.n_classes = t->classes.count;
	s.n_tokens = t->tokens.count;
	s.n_entries = t->n_entries;
	s.n_features = t->features.count;
	s.vector_len = t->vector_len;
	s.label_bytes = t->classes.arena_used;
	s.token_bytes = nb_vocab_bytes(&t->tokens) - t->prefix_bytes;
	s.name_bytes = t->features.arena_used;
	s.text_only = text_only;
	s.lengths = lengths;
	s.n_lengths = lengths ? t->lengths_used : 0;
	s.settings = t->settings;
	return s;
}

/* Whether the model is written with its document lengths (version 3). */
static bool
keeps_lengths(const NbTrainer *t)
{
	return !t->lengths_unknown && t->n_bags > 0;
}

uint64_t
nb_trainer_min_flat_size(const NbTrainer *t)
{
	/*
	 * Without lengths, the version 1 layout: no feature arrays.  Every term
	 * is bounded by allocated memory.
	 */
	NbFormatShape s = trainer_shape(t, true, keeps_lengths(t));

	return nb_format_size(&s, SIZE_MAX);
}

size_t
nb_trainer_flat_size(NbTrainer *t, size_t max_size)
{
	NbFormatShape s;

	end_doc(t);
	s = trainer_shape(t, is_text_only(t), keeps_lengths(t));

	return nb_format_size(&s, max_size);
}

/* A string with its id, sorted into canonical order (byte order). */
typedef struct StrRef
{
	const char *str;
	uint32_t	len;
	uint32_t	id;
} StrRef;

static int
cmp_strref(const void *a, const void *b)
{
	const StrRef *x = a;
	const StrRef *y = b;

	return nb_strcmp(x->str, x->len, y->str, y->len);
}

/* Sort a map's strings (labels, feature names); returns the sorted refs and fills rank[id]. */
static StrRef *
sorted_strings(const NbStrMap *map, uint32_t *rank)
{
	StrRef	   *refs = nb_alloc(sizeof(StrRef) * (map->count ? map->count : 1));

	for (uint32_t i = 0; i < map->count; i++)
	{
		nb_interrupt_at(i);
		refs[i].str = nb_strmap_str(map, i, &refs[i].len);
		refs[i].id = i;
	}
	nb_sort(refs, map->count, sizeof(StrRef), cmp_strref);
	for (uint32_t i = 0; i < map->count; i++)
	{
		nb_interrupt_at(i);
		rank[refs[i].id] = i;
	}
	return refs;
}

/*
 * An item's place in canonical order: the rank of its feature, then its
 * value's bytes.  The key holds the first 8 of them as a big-endian number
 * (zero-padded), which orders most items without reading their bytes: 16
 * bytes per item, while the arena is read only on a tie.
 */
typedef struct ItemKey
{
	uint64_t	head;
	uint32_t	group;
	uint32_t	id;
} ItemKey;

_Static_assert(sizeof(ItemKey) == sizeof(NbVocabSlot) &&
			   _Alignof(ItemKey) <= _Alignof(NbVocabSlot),
			   "the sort keys use the index's memory (nb_trainer_write)");

/* What an item's order depends on besides its bytes. */
typedef struct ItemOrder
{
	const NbTrainer *t;
	const uint32_t *feature_rank;
	uint32_t	unnamed_rank;	/* the rank of the bag "" */
} ItemOrder;

/* An item's value (its bytes without the prefix) and the rank of its feature. */
static inline const char *
item_value(const ItemOrder *o, uint32_t id, uint32_t *len, uint32_t *group)
{
	const char *str = nb_vocab_str(&o->t->tokens, id, len);

	*group = o->unnamed_rank;
	if (*len > 0 && str[0] == '\0')
	{
		*group = o->feature_rank[nb_item_key_feature(str)];
		str += NB_ITEM_PREFIX;
		*len -= NB_ITEM_PREFIX;
	}
	return str;
}

static inline bool
key_less(const ItemOrder *o, const ItemKey *x, const ItemKey *y)
{
	const char *xs;
	const char *ys;
	uint32_t	xlen;
	uint32_t	ylen;
	uint32_t	group;

	if (x->group != y->group)
		return x->group < y->group;
	if (x->head != y->head)
		return x->head < y->head;
	xs = item_value(o, x->id, &xlen, &group);
	ys = item_value(o, y->id, &ylen, &group);
	return nb_strcmp(xs, xlen, ys, ylen) < 0;
}

#define NB_SORT_SMALL 16

/*
 * Merge the sorted runs keys[lo, mid) and keys[mid, hi) in place through
 * buf, which has room for the shorter of the two.
 */
static void
merge_keys(const ItemOrder *o, ItemKey *keys, uint64_t lo, uint64_t mid, uint64_t hi, ItemKey *buf)
{
	if (mid - lo <= hi - mid)
	{
		/* the left run goes to buf; merge forwards */
		uint64_t	n = mid - lo;
		uint64_t	i = 0;
		uint64_t	j = mid;
		uint64_t	k = lo;

		memcpy(buf, keys + lo, sizeof(ItemKey) * n);
		while (i < n && j < hi)
			keys[k++] = key_less(o, &keys[j], &buf[i]) ? keys[j++] : buf[i++];
		while (i < n)
			keys[k++] = buf[i++];
	}
	else
	{
		/* the right run goes to buf; merge backwards */
		uint64_t	n = hi - mid;
		uint64_t	i = mid;
		uint64_t	j = n;
		uint64_t	k = hi;

		memcpy(buf, keys + mid, sizeof(ItemKey) * n);
		while (i > lo && j > 0)
			keys[--k] = key_less(o, &buf[j - 1], &keys[i - 1]) ? keys[--i] : buf[--j];
		while (j > 0)
			keys[--k] = buf[--j];
	}
}

/*
 * Sort item keys into canonical order: insertion sort of short runs, then
 * merges, with cancellation points.  A merge sort with the comparison
 * inline, whose buffer is half the keys (the sort runs when the model is
 * written, next to the result: memory counts).
 */
static void
sort_keys(const ItemOrder *o, ItemKey *keys, uint32_t n)
{
	ItemKey    *buf;
	uint64_t	work = 0;

	for (uint32_t lo = 0; lo < n; lo += NB_SORT_SMALL)
	{
		uint32_t	hi = n - lo < NB_SORT_SMALL ? n : lo + NB_SORT_SMALL;

		nb_interrupt_count(&work, NB_SORT_SMALL);
		for (uint32_t i = lo + 1; i < hi; i++)
		{
			ItemKey		k = keys[i];
			uint32_t	j = i;

			for (; j > lo && key_less(o, &k, &keys[j - 1]); j--)
				keys[j] = keys[j - 1];
			keys[j] = k;
		}
	}
	if (n <= NB_SORT_SMALL)
		return;
	buf = nb_alloc(sizeof(ItemKey) * ((size_t) n / 2 + 1));
	for (uint64_t width = NB_SORT_SMALL; width < n; width *= 2)
		for (uint64_t lo = 0; lo + width < n; lo += 2 * width)
		{
			uint64_t	hi = lo + 2 * width < n ? lo + 2 * width : n;

			nb_interrupt_count(&work, hi - lo);
			merge_keys(o, keys, lo, lo + width, hi, buf);
		}
	nb_free(buf);
}

/* A length bin with the canonical ranks of its feature and class. */
typedef struct LengthRef
{
	uint32_t	feature;
	uint32_t	cls;
	double		length;
	double		weight;
} LengthRef;

static int
cmp_length(const void *a, const void *b)
{
	const LengthRef *x = a;
	const LengthRef *y = b;

	if (x->feature != y->feature)
		return x->feature < y->feature ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return (x->length > y->length) - (x->length < y->length);
}

/* Fill the length arrays of version 3: bins sorted by feature, class and length. */
static void
write_lengths(const NbTrainer *t, const uint32_t *feature_rank, const uint32_t *class_rank,
			  const NbFormatWriter *w)
{
	uint64_t	H = t->lengths_used;
	uint64_t	FC = (uint64_t) t->features.count * t->classes.count;
	LengthRef  *bins = nb_alloc(sizeof(LengthRef) * (H ? H : 1));
	uint64_t	n = 0;

	for (uint64_t i = 0; i <= t->length_mask; i++)
	{
		const NbLengthSlot *s = &t->lengths[i];

		nb_interrupt_at(i);
		if (s->length == 0)
			continue;
		bins[n].feature = feature_rank[s->feature];
		bins[n].cls = class_rank[s->cls];
		bins[n].length = s->length;
		bins[n].weight = s->weight;
		n++;
	}
	nb_sort(bins, H, sizeof(LengthRef), cmp_length);
	/* sorted, the pairs of each (feature, class) are one run, in its order */
	for (uint64_t x = 0, i = 0; x < FC; x++)
	{
		uint32_t	pairs = 0;

		nb_interrupt_at(x);
		for (; i < H && (uint64_t) bins[i].feature * t->classes.count + bins[i].cls == x; i++)
		{
			nb_interrupt_at(i);
			nb_write_f64(w->length_value, i, bins[i].length);
			nb_write_f64(w->length_weight, i, bins[i].weight);
			pairs++;
		}
		nb_write_u32(w->length_pairs, x, pairs);
	}
	nb_free(bins);
}

static int
cmp_entry(const void *a, const void *b)
{
	const Entry *x = a;
	const Entry *y = b;

	return (x->cls > y->cls) - (x->cls < y->cls);
}

/*
 * Sort a bucket's entries (one per class of its item) by class.  Most
 * buckets are short: insertion sort, inline, where a library sort would
 * spend more on its call per comparison than on sorting.
 */
static void
sort_bucket(Entry *en, uint64_t n)
{
	if (n > NB_SORT_SMALL)
	{
		nb_sort(en, n, sizeof(Entry), cmp_entry);
		return;
	}
	for (uint64_t i = 1; i < n; i++)
	{
		Entry		x = en[i];
		uint64_t	j = i;

		for (; j > 0 && en[j - 1].cls > x.cls; j--)
			en[j] = en[j - 1];
		en[j] = x;
	}
}

/*
 * The entries of the pair table, classes ranked, bucketed by the rank of
 * their item and sorted by class rank within a bucket: bucket k is
 * (*entries)[k == 0 ? 0 : end[k - 1] .. end[k]).
 */
static void
bucket_pairs(const NbTrainer *t, const uint32_t *order, const uint32_t *class_rank,
			 uint64_t **end, Entry **entries)
{
	uint32_t	V = t->tokens.count;
	uint32_t   *item_rank = nb_alloc(sizeof(uint32_t) * (V ? V : 1));
	uint64_t   *e = nb_alloc_zero(sizeof(uint64_t) * ((uint64_t) V + 1));
	Entry	   *out = nb_alloc(sizeof(Entry) * (t->pairs_used ? t->pairs_used : 1));
	uint64_t	work = 0;

	for (uint32_t k = 0; k < V; k++)
	{
		nb_interrupt_at(k);
		item_rank[order[k]] = k;
	}
	/* counting sort: e[rank + 1] counts, then e[rank] is where the bucket starts */
	for (uint64_t i = 0; i <= t->pair_mask; i++)
	{
		nb_interrupt_at(i);
		if (t->pairs[i].key != NB_EMPTY_KEY)
			e[item_rank[t->pairs[i].key >> 32] + 1]++;
	}
	for (uint32_t k = 0; k < V; k++)
	{
		nb_interrupt_at(k);
		e[k + 1] += e[k];
	}
	/* filling bucket k moves e[k] to where it ends */
	for (uint64_t i = 0; i <= t->pair_mask; i++)
	{
		const NbPairSlot *s = &t->pairs[i];

		nb_interrupt_at(i);
		if (s->key != NB_EMPTY_KEY)
		{
			Entry	   *en = &out[e[item_rank[s->key >> 32]]++];

			en->item = (uint32_t) (s->key >> 32);
			en->cls = class_rank[(uint32_t) s->key];
			en->count = s->count;
			en->docs = s->docs;
		}
	}
	nb_free(item_rank);
	for (uint32_t k = 0; k < V; k++)
	{
		uint64_t	lo = k == 0 ? 0 : e[k - 1];

		/* at most one entry per class: sort runs of them interruptibly */
		nb_interrupt_count(&work, 1 + (e[k] - lo));
		if (e[k] - lo > 1)
			sort_bucket(out + lo, e[k] - lo);
	}
	*end = e;
	*entries = out;
}

/* Fill the feature arrays of versions 2 and 3. */
static void
write_features(const NbTrainer *t, const StrRef *features, const StrRef *classes,
			   const ItemOrder *o, const uint32_t *order, const NbFormatWriter *w)
{
	uint32_t	C = t->classes.count;
	uint32_t	F = t->features.count;
	uint32_t	V = t->tokens.count;
	uint32_t	k = 0;
	uint64_t	work = 0;

	for (uint32_t j = 0; j < F; j++)
	{
		const NbTrainerFeature *f = &t->feature[features[j].id];
		uint32_t	n = 0;

		nb_interrupt_count(&work, 1 + (uint64_t) C);
		for (; k < V; n++, k++)
		{
			uint32_t	len;
			uint32_t	group;

			(void) item_value(o, order[k], &len, &group);
			if (group != j)
				break;
		}
		nb_write_u32(w->feature_name_len, j, features[j].len);
		nb_write_u32(w->feature_type, j, (uint32_t) f->type);
		nb_write_u32(w->feature_items, j, n);
		for (uint32_t c = 0; c < C; c++)
		{
			const NbClassStat *st = &f->stats[classes[c].id];
			uint64_t	i = (uint64_t) j * C + c;

			nb_write_f64(w->feature_present, i, st->present);
			nb_write_f64(w->feature_a, i, st->a);
			nb_write_f64(w->feature_b, i, st->b);
		}
		nb_write_f64(w->feature_rows, j, f->rows);
		nb_write_f64(w->feature_mean, j, f->mean);
		nb_write_f64(w->feature_m2, j, f->m2);
	}
}

static inline void
write_entry(const NbFormatWriter *w, uint64_t i, uint32_t cls, double count, double docs)
{
	nb_write_u32(w->entry_class, i, cls);
	nb_write_f64(w->entry_count, i, count);
	nb_write_f64(w->entry_docs, i, docs);
}

/*
 * Write item k (in canonical order) and its entries from i on: those of
 * its inline counts and its bucket of pair entries, merged by class rank.
 * Returns the number of entries.
 */
static uint32_t
write_item_entries(const NbTrainer *t, const NbFormatWriter *w, uint32_t id,
				   const uint32_t *class_rank, const Entry *bucket, uint64_t n_bucket,
				   uint64_t i)
{
	uint32_t	order[NB_INLINE_CLASSES];
	uint32_t	n_inline = 0;
	uint32_t	a = 0;
	uint64_t	b = 0;

	for (uint32_t c = 0; c < NB_INLINE_CLASSES; c++)
		if (t->inline_counts[c] != NULL && t->inline_counts[c][id].count != 0)
			order[n_inline++] = c;
	if (n_inline == 2 && class_rank[order[1]] < class_rank[order[0]])
	{
		order[0] = 1;
		order[1] = 0;
	}
	while (a < n_inline || b < n_bucket)
	{
		if (b == n_bucket || (a < n_inline && class_rank[order[a]] < bucket[b].cls))
		{
			const NbItemCounts *in = &t->inline_counts[order[a]][id];

			write_entry(w, i++, class_rank[order[a]], in->count, in->docs);
			a++;
		}
		else
		{
			write_entry(w, i++, bucket[b].cls, bucket[b].count, bucket[b].docs);
			b++;
		}
	}
	return n_inline + (uint32_t) n_bucket;
}

/*
 * write_item_entries with the spread classes' dense counts: the classes in
 * rank order (classes[r].id is the class of rank r), each entry from the
 * dense counts of a spread class, else from the inline counts or the
 * bucket.
 */
static uint32_t
write_spread_item_entries(const NbTrainer *t, const NbFormatWriter *w, uint32_t id,
						  const StrRef *classes, const Entry *bucket, uint64_t n_bucket,
						  uint64_t i)
{
	const NbItemCounts *cells = &t->spread[(uint64_t) id * t->spread_classes];
	uint64_t	first = i;
	uint64_t	b = 0;

	for (uint32_t r = 0; r < t->classes.count; r++)
	{
		uint32_t	c = classes[r].id;
		const NbItemCounts *in = NULL;

		if (c < t->spread_classes)
			in = cells[c].docs != 0 ? &cells[c] : NULL;
		else if (c < NB_INLINE_CLASSES && t->inline_counts[c] != NULL &&
				 t->inline_counts[c][id].count != 0)
			in = &t->inline_counts[c][id];
		if (in != NULL)
			write_entry(w, i++, r, in->count, in->docs);
		else if (b < n_bucket && bucket[b].cls == r)
		{
			write_entry(w, i++, r, bucket[b].count, bucket[b].docs);
			b++;
		}
	}
	return (uint32_t) (i - first);
}

static void
write_model(NbTrainer *t, unsigned char *buf, size_t size, NbView *view)
{
	uint32_t	C = t->classes.count;
	uint32_t	V = t->tokens.count;
	uint32_t	F = t->features.count;
	bool		text_only = is_text_only(t);
	bool		lengths = keeps_lengths(t);
	uint32_t   *class_rank = nb_alloc(sizeof(uint32_t) * (C ? C : 1));
	uint32_t   *feature_rank = nb_alloc(sizeof(uint32_t) * (F ? F : 1));
	StrRef	   *classes = sorted_strings(&t->classes, class_rank);
	StrRef	   *features = sorted_strings(&t->features, feature_rank);
	ItemOrder	order = {t, feature_rank,
	t->unnamed_bag >= 0 ? feature_rank[t->unnamed_bag] : 0};
	NbFormatShape shape = trainer_shape(t, text_only, lengths);
	uint64_t   *bucket_end = NULL;
	Entry	   *pairs = NULL;
	ItemKey    *keys;
	ItemKey    *own_keys = NULL;
	uint32_t   *ids;
	NbFormatWriter w;
	char	   *strings;
	uint64_t	e = 0;
	uint64_t	work = 0;

	/*
	 * Writing looks up no string: the index's memory, 16 bytes or more per
	 * item (it is at most 3/4 full), holds the sort keys instead, and the
	 * next row builds the index again.  Never build it here: the server
	 * writes in a scratch context, deleted right after.  Freed once sorted,
	 * before the result is written.
	 */
	keys = nb_vocab_lend_index(&t->tokens);
	if (keys == NULL)
		keys = own_keys = nb_alloc(sizeof(ItemKey) * (V ? V : 1));
	for (uint32_t k = 0; k < V; k++)
	{
		uint32_t	len;
		const char *str = item_value(&order, k, &len, &keys[k].group);
		unsigned char head[8] = {0};

		nb_interrupt_at(k);
		memcpy(head, str, len < 8 ? len : 8);
		keys[k].head = 0;
		for (int b = 0; b < 8; b++)
			keys[k].head = keys[k].head << 8 | head[b];
		keys[k].id = k;
	}
	sort_keys(&order, keys, V);
	/* the ids in order are all that is left to know: 4 bytes an item, not 16 */
	ids = nb_alloc(sizeof(uint32_t) * (V ? V : 1));
	for (uint32_t k = 0; k < V; k++)
	{
		nb_interrupt_at(k);
		ids[k] = keys[k].id;
	}
	if (own_keys != NULL)
		nb_free(own_keys);
	else
		nb_vocab_drop_index(&t->tokens);
	if (t->pairs_used > 0)
		bucket_pairs(t, ids, class_rank, &bucket_end, &pairs);

	nb_format_begin(&w, &shape, buf, size);
	if (w.feature_name_len != NULL)
		write_features(t, features, classes, &order, ids, &w);
	if (lengths)
		write_lengths(t, feature_rank, class_rank, &w);

	strings = w.labels;
	for (uint32_t c = 0; c < C; c++)
	{
		nb_interrupt_count(&work, 1 + classes[c].len / 64);
		nb_write_f64(w.class_docs, c, t->class_docs[classes[c].id]);
		nb_write_u32(w.label_len, c, classes[c].len);
		memcpy(strings, classes[c].str, classes[c].len);
		strings += classes[c].len;
	}
	for (uint32_t k = 0; k < V; k++)
	{
		uint32_t	len;
		uint32_t	group;
		const char *str = item_value(&order, ids[k], &len, &group);
		uint64_t	lo = pairs == NULL || k == 0 ? 0 : bucket_end[k - 1];
		uint64_t	hi = pairs == NULL ? 0 : bucket_end[k];
		const Entry *bucket = pairs == NULL ? NULL : pairs + lo;
		uint32_t	n = t->spread != NULL ?
			write_spread_item_entries(t, &w, ids[k], classes, bucket, hi - lo, e) :
			write_item_entries(t, &w, ids[k], class_rank, bucket, hi - lo, e);

		nb_interrupt_count(&work, 1 + n + len / 64);
		nb_write_u32(w.token_len, k, len);
		nb_write_u32(w.token_entries, k, n);
		memcpy(strings, str, len);
		strings += len;
		e += n;
	}
	if (w.feature_names != NULL)
		for (uint32_t j = 0; j < F; j++)
		{
			nb_interrupt_count(&work, 1 + features[j].len / 64);
			memcpy(strings, features[j].str, features[j].len);
			strings += features[j].len;
		}
	nb_format_finish(&w, view);

	nb_free(class_rank);
	nb_free(feature_rank);
	nb_free(classes);
	nb_free(features);
	nb_free(ids);
	if (pairs != NULL)
	{
		nb_free(bucket_end);
		nb_free(pairs);
	}
}

void
nb_trainer_write(NbTrainer *t, unsigned char *buf, size_t size)
{
	end_doc(t);
	write_model(t, buf, size, NULL);
}

void
nb_trainer_write_view(NbTrainer *t, unsigned char *buf, size_t size, NbView *view)
{
	end_doc(t);
	write_model(t, buf, size, view);
}
