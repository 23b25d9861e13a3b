/*
 * nb_index.h — the vocabulary index: a validated model in a form fit for
 * lookups (label, feature and item maps, and per item the list of the
 * classes it occurs in), built once from a view and shared by the documents
 * and scorers of that model.  Also the layout of item rows, a table a
 * scorer keeps per item (row k of item k), and their lookup.
 */
#ifndef NB_INDEX_H
#define NB_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_hash.h"
#include "nb_port.h"
#include "nb_vocab.h"

/*
 * 64 slots of the item map: which are full (bit i: slot 64 w + i), and how
 * many full slots come before them; one read tells both.
 */
typedef struct NbSlotWord
{
	uint64_t	full;
	uint64_t	rank;
} NbSlotWord;

typedef struct NbIndex
{
	uint32_t	n_classes;
	uint32_t	n_tokens;
	uint64_t	n_entries;
	uint32_t	n_features;
	uint32_t	vector_len;
	/*
	 * The classes scoring reports, n_labels, and the labels map's ids: the
	 * model's classes, or, in a model of mixture components (format flag
	 * NB_FORMAT_FLAG_COMPONENTS), its distinct labels, n_classes being the
	 * components.  Label k's components are label_first[k] ..
	 * label_first[k + 1] - 1 and component c's label is component_label[c]
	 * (both NULL without components).
	 */
	uint32_t	n_labels;
	uint32_t   *label_first;
	uint32_t   *component_label;
	NbVocab		labels;
	NbVocab		features;		/* feature id = feature index */
	int64_t		unnamed_bag;	/* index of the bag feature "", or -1 */
	NbFeatureType *feature_type;
	uint32_t   *feature_items;	/* K_j or V_j: items of each feature */
	uint32_t   *position_feature;	/* feature of each float8[] position */
	/*
	 * per (feature j, class c) at j * n_classes + c, see NbFeatureType:
	 * little-endian, read in place as the items are (pairs_a and pairs_b
	 * NULL in a model without them: 0)
	 */
	const unsigned char *pairs_present;
	const unsigned char *pairs_a;
	const unsigned char *pairs_b;
	double	   *feature_tokens; /* sum of the entry counts of j's items in c;
								 * NULL in a model without bag or categorical
								 * features */
	double	   *feature_total;	/* sum of feature_tokens over classes */
	double	   *feature_rows;	/* Gaussian: unweighted rows, mean, sum of squares */
	double	   *feature_mean;
	double	   *feature_m2;
	double	   *class_docs;
	double		total_docs;

	/*
	 * The items (bag tokens, categorical values), numbered in the model's
	 * order: feature j's are first_item[j] .. first_item[j + 1] - 1.  Their
	 * values and entries are read in place in the model's bytes (the view's
	 * sections) or in item_copy, the index's copy of those sections and of
	 * the pairs' (nb_index_copy), else NULL.
	 */
	char	   *item_copy;
	uint32_t   *first_item;		/* F + 1 */
	const char *item_text;		/* the values, concatenated (the view's tokens) */
	uint32_t   *item_offset;	/* k's value: item_text[item_offset[k] .. item_offset[k + 1]) */
	uint32_t   *token_start;	/* entries of item k: [token_start[k], token_start[k+1]) */
	/* entry e's class (4 bytes) and count and documents (8): little-endian, in place */
	const unsigned char *entries_class;
	const unsigned char *entries_count;
	const unsigned char *entries_docs;

	/*
	 * The item map (why it is so: src/README.md, Prepared models): open
	 * addressing with linear probing over n_item_slots slots, a quarter of
	 * them full.  item_words is a bitmap of the full slots with the full
	 * slots before each word; item_key holds, r-th for the r-th full slot,
	 * the high 32 bits of the item's hash (nb_index_item_hash) above its
	 * item k; a probe walks ranks r, r + 1, ...  item_place[k] is item k's
	 * r, and rank_offset[r] the item_offset of the item of rank r.
	 */
	uint64_t	n_item_slots;	/* a multiple of 64 */
	NbSlotWord *item_words;
	uint64_t   *item_key;
	uint32_t   *item_place;
	uint32_t   *rank_offset;
	uint64_t   *feature_salt;	/* per feature: what its items' hashes are xored with */

	/* scorers keep the terms of items as rows (see NbRowKey, NbScorer.rows) */
	bool		item_rows;
	/*
	 * The document length histograms of format version 3 (else has_lengths
	 * is false and the arrays NULL): the pairs of feature j in class c are
	 * length_start[j * C + c] .. length_start[j * C + c + 1] - 1.
	 */
	bool		has_lengths;
	uint64_t   *length_start;
	double	   *length_value;
	double	   *length_weight;
} NbIndex;

/* Pair i's statistics (read in the model's bytes). */
static inline double
nb_index_present(const NbIndex *index, uint64_t i)
{
	return nb_read_f64(index->pairs_present, i);
}

static inline double
nb_index_stat_a(const NbIndex *index, uint64_t i)
{
	return index->pairs_a == NULL ? 0 : nb_read_f64(index->pairs_a, i);
}

static inline double
nb_index_stat_b(const NbIndex *index, uint64_t i)
{
	return index->pairs_b == NULL ? 0 : nb_read_f64(index->pairs_b, i);
}

/* Entry e's class, count and weighted documents (read in the model's bytes). */
static inline uint32_t
nb_index_entry_class(const NbIndex *index, uint64_t e)
{
	return nb_read_u32(index->entries_class, e);
}

static inline double
nb_index_entry_count(const NbIndex *index, uint64_t e)
{
	return nb_read_f64(index->entries_count, e);
}

static inline double
nb_index_entry_docs(const NbIndex *index, uint64_t e)
{
	return nb_read_f64(index->entries_docs, e);
}

/* Item k's value (for an item of a feature other than the bag "", without a prefix). */
static inline const char *
nb_index_item(const NbIndex *index, uint32_t k, uint32_t *len)
{
	*len = index->item_offset[k + 1] - index->item_offset[k];
	return index->item_text + index->item_offset[k];
}

/*
 * The hash under which the item map keeps a value of feature j: the
 * value's nb_hash_token, xored with a constant of the feature, so that the
 * same value in two features is two items that mostly probe apart.
 */
static inline uint64_t
nb_index_item_hash(const NbIndex *index, uint32_t feature, uint64_t value_hash)
{
	return value_hash ^ index->feature_salt[feature];
}

/* The probe sequence of the item map: where a lookup starts, the slot after i. */
static inline uint64_t
nb_index_probe_start(const NbIndex *index, uint64_t hash)
{
	return ((hash & UINT32_MAX) * index->n_item_slots) >> 32;
}

static inline uint64_t
nb_index_probe_next(const NbIndex *index, uint64_t i)
{
	return i + 1 == index->n_item_slots ? 0 : i + 1;
}

static inline bool
nb_index_slot_full(const NbIndex *index, uint64_t i)
{
	return (index->item_words[i >> 6].full >> (i & 63)) & 1;
}

/*
 * The bits set in x, in a few instructions everywhere (a compiler's
 * builtin is a call into a loop where the CPU's instruction is not assumed).
 */
static inline uint64_t
nb_bit_count(uint64_t x)
{
	x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
	x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (x * UINT64_C(0x0101010101010101)) >> 56;
}

/* The rank of full slot i: how many full slots come before it. */
static inline uint64_t
nb_index_slot_rank(const NbIndex *index, uint64_t i)
{
	uint64_t	below = (UINT64_C(1) << (i & 63)) - 1;

	return index->item_words[i >> 6].rank + nb_bit_count(index->item_words[i >> 6].full & below);
}

/*
 * Where the probe of hash starts: the slot and its rank, packed as rank <<
 * 32 | slot (n_item_slots < 2^32: 4 per item, and a model's items are
 * fewer than 2^27, each taking 8 bytes or more of its 805 MB at most), or
 * -1 if that slot is empty (then no item has the hash: linear probing would
 * have put it there).
 */
static inline int64_t
nb_index_probe(const NbIndex *index, uint64_t hash)
{
	uint64_t	i = nb_index_probe_start(index, hash);

	if (!nb_index_slot_full(index, i))
		return -1;
	return (int64_t) (nb_index_slot_rank(index, i) << 32 | i);
}

/* The rank of a probe's slot (nb_index_probe, not -1). */
static inline uint64_t
nb_index_probe_rank(int64_t probe)
{
	return (uint64_t) probe >> 32;
}

/* The probe's next full slot, or -1 if the next slot is empty. */
static inline int64_t
nb_index_probe_on(const NbIndex *index, int64_t probe)
{
	uint64_t	i = nb_index_probe_next(index, (uint32_t) probe);

	if (!nb_index_slot_full(index, i))
		return -1;
	return (int64_t) ((i == 0 ? 0 : nb_index_probe_rank(probe) + 1) << 32 | i);
}

/* The item of rank r. */
static inline uint32_t
nb_index_item_at(const NbIndex *index, uint64_t r)
{
	return (uint32_t) index->item_key[r];
}

/* Whether item k belongs to feature j. */
static inline bool
nb_index_item_in(const NbIndex *index, uint32_t feature, uint32_t k)
{
	return k >= index->first_item[feature] && k < index->first_item[feature + 1];
}


/* Whether item k is the value of feature j, compared in the model's bytes. */
NB_HOT_INLINE bool
nb_index_item_is(const NbIndex *index, uint32_t feature, uint32_t k, const char *str, uint32_t len)
{
	uint32_t	klen;
	const char *kstr = nb_index_item(index, k, &klen);

	return klen == len && nb_index_item_in(index, feature, k) && nb_bytes_equal(kstr, str, len);
}

/*
 * The rank of the item of feature j with this value, hash its
 * nb_index_item_hash, or -1: along its probe, the item with the hash's tag
 * that is the value.
 */
NB_HOT_INLINE int64_t
nb_index_find_item(const NbIndex *index, uint32_t feature, const char *str, uint32_t len,
				   uint64_t hash)
{
	uint64_t	tag = hash >> 32;

	for (int64_t p = nb_index_probe(index, hash); p >= 0; p = nb_index_probe_on(index, p))
	{
		uint64_t	key = index->item_key[nb_index_probe_rank(p)];

		if (key >> 32 == tag && nb_index_item_is(index, feature, (uint32_t) key, str, len))
			return (int64_t) nb_index_probe_rank(p);
	}
	return -1;
}

/*
 * Up to this many classes, a scorer keeps each item's terms as a row after a
 * copy of its key (NbRowKey), in the item map's order (row r of the item of
 * rank r): 32 bytes (up to 2 classes) or 64 (a cache line), aligned so that
 * no row spans two cache lines.
 */
#define NB_ROW_CLASSES 6

/*
 * The key of a row: its item, and enough of the item's value to tell it
 * from others without reading the value when it is at most 8 bytes long
 * (most tokens); a longer one is compared in the model's bytes.
 */
typedef struct NbRowKey
{
	uint64_t	head;			/* nb_row_head of the value */
	uint32_t	len;
	uint32_t	item;
} NbRowKey;

/* The bytes of a row of C classes. */
static inline size_t
nb_row_size(uint32_t n_classes)
{
	return n_classes <= 2 ? 32 : 64;
}

/*
 * The first 8 bytes of a string as one word, or for a shorter one a word
 * that with the length tells it apart from every other string of that length.
 */
static inline uint64_t
nb_row_head(const char *str, uint32_t len)
{
	const unsigned char *p = (const unsigned char *) str;

	return len >= 8 ? nb_read_le64(p) : nb_tail_word(p, len, len);
}

/* Row r of rows of row_size bytes each (a scorer's, see NbScorer.rows). */
static inline const NbRowKey *
nb_row_key(const char *rows, size_t row_size, uint64_t r)
{
	return (const NbRowKey *) (rows + r * row_size);
}

/* The terms of row r: C doubles after its key. */
static inline const double *
nb_row_terms(const char *rows, size_t row_size, uint64_t r)
{
	return (const double *) (nb_row_key(rows, row_size, r) + 1);
}

/*
 * nb_index_item_is with the value compared through the item's row key
 * (in rows beside the item map), and only if it is longer than 8 bytes
 * also in the model's bytes.
 */
NB_HOT_INLINE bool
nb_index_row_is(const NbIndex *index, const char *rows, size_t row_size, uint32_t feature,
				uint64_t r, const char *str, uint32_t len)
{
	const NbRowKey *key = nb_row_key(rows, row_size, r);

	return key->len == len && key->head == nb_row_head(str, len) &&
		(len <= 8 || nb_bytes_equal(index->item_text + index->rank_offset[r], str, len)) &&
		nb_index_item_in(index, feature, key->item);
}

/*
 * nb_index_find_item comparing through rows (nb_index_row_is), from the
 * probe of the value's hash (nb_index_probe).
 */
NB_HOT_INLINE int64_t
nb_index_find_row(const NbIndex *index, const char *rows, size_t row_size, uint32_t feature,
				  const char *str, uint32_t len, int64_t probe)
{
	for (int64_t p = probe; p >= 0; p = nb_index_probe_on(index, p))
		if (nb_index_row_is(index, rows, row_size, feature, nb_index_probe_rank(p), str, len))
			return (int64_t) nb_index_probe_rank(p);
	return -1;
}

/* The index of a view, whose bytes must outlive it (it reads the items in place). */
void		nb_index_build(NbIndex *index, const NbView *view);

/*
 * nb_index_build in two steps: everything but the item map, then the item
 * map.  With own_items the index copies its items' values and entries and
 * its pairs' statistics out of the view (else the view's bytes must
 * outlive the index, which reads them in place), so that a caller holding
 * the bytes only for the index (a model decompressed to be prepared) frees
 * them in between: they and the item map are never held at once, and of
 * the model the index keeps what it reads only.  Only the labels and features can be looked up before
 * nb_index_place.
 */
void		nb_index_copy(NbIndex *index, const NbView *view, bool own_items);
void		nb_index_place(NbIndex *index);
void		nb_index_free(NbIndex *index);

/*
 * F_k, item k's count summed over its classes (in entry order, the sum
 * every caller gets bit for bit).  Not kept: 8 bytes per item that only
 * building a scorer reads, once per item.
 */
double		nb_index_token_total(const NbIndex *index, uint32_t k);

/* Index of a feature, or -1. */
int64_t		nb_index_feature(const NbIndex *index, const char *name, uint32_t len);

/* The id of a label (a class as scoring reports it), or -1. */
int64_t		nb_index_class(const NbIndex *index, const char *str, uint32_t len);

/* The label (class as scoring reports it) of class or component c. */
static inline uint32_t
nb_index_label(const NbIndex *index, uint32_t c)
{
	return index->component_label == NULL ? c : index->component_label[c];
}

#endif
