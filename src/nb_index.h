/*
 * nb_index.h — the vocabulary index: a validated model in a form fit for
 * lookups (label, feature and item maps, and per item the list of the
 * classes it occurs in), built once from a view and shared by the documents
 * and scorers of that model.  Also the layout of item rows, tables a scorer
 * keeps beside the index's item map (same slots), and their lookup.
 */
#ifndef NB_INDEX_H
#define NB_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_hash.h"
#include "nb_port.h"
#include "nb_strmap.h"

typedef struct NbIndex
{
	uint32_t	n_classes;
	uint32_t	n_tokens;
	uint64_t	n_entries;
	uint32_t	n_features;
	uint32_t	vector_len;
	NbStrMap	labels;			/* label id = class index */
	NbStrMap	features;		/* feature id = feature index */
	/*
	 * Items keyed as the trainer keys them (NB_ITEM_PREFIX): the bag "" by
	 * the bare token, other features by prefix and value; id = item index.
	 */
	NbStrMap	tokens;
	int64_t		unnamed_bag;	/* index of the bag feature "", or -1 */
	NbFeatureType *feature_type;
	uint32_t   *feature_items;	/* K_j or V_j: items of each feature */
	uint32_t   *position_feature;	/* feature of each float8[] position */
	/* per (feature j, class c) at j * n_classes + c, see NbFeatureType */
	double	   *present;
	double	   *stat_a;
	double	   *stat_b;
	double	   *feature_tokens; /* sum of the entry counts of j's items in c;
								 * NULL in a model without bag or categorical
								 * features */
	double	   *feature_total;	/* sum of feature_tokens over classes */
	double	   *feature_rows;	/* Gaussian: unweighted rows, mean, sum of squares */
	double	   *feature_mean;
	double	   *feature_m2;
	uint64_t   *token_start;	/* entries of item k: [token_start[k], token_start[k+1]) */
	uint32_t   *entry_class;
	double	   *entry_count;
	double	   *entry_docs;
	double	   *class_docs;
	double		total_docs;
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

/*
 * Up to this many classes, a scorer keeps each item's terms as a row after a
 * compact copy of its key (NbRowKey), both in one slot of 32 bytes (up to 2
 * classes) or 64 bytes (a cache line).
 */
#define NB_ROW_CLASSES 6

/*
 * The key of a row: enough of the item's string to tell it from others
 * without a second cache line when it is at most 8 bytes long (most tokens);
 * a longer one is compared with its slot of the item map (same position).
 */
typedef struct NbRowKey
{
	uint32_t	id1;			/* as in NbIndex.tokens; 0 = empty slot */
	uint16_t	tag;			/* high 16 bits of the hash */
	uint16_t	len;			/* length, at most UINT16_MAX */
	uint64_t	head;			/* nb_row_head of the string */
} NbRowKey;

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

/* Slot i of rows of row_size bytes each (a scorer's, see NbScorer.rows). */
static inline const NbRowKey *
nb_row_key(const char *rows, size_t row_size, uint64_t i)
{
	return (const NbRowKey *) (rows + i * row_size);
}

/* The terms of the row in slot i: C doubles after its key. */
static inline const double *
nb_row_terms(const char *rows, size_t row_size, uint64_t i)
{
	return (const double *) (nb_row_key(rows, row_size, i) + 1);
}

/*
 * The slot of the item in rows beside the index's item map, or -1: the
 * map's probe, with the string compared through its NbRowKey, and only if
 * it is longer than 8 bytes also through its slot of the item map.
 */
NB_HOT_INLINE int64_t
nb_index_find_row(const NbIndex *index, const char *rows, size_t row_size,
				  const char *str, uint32_t len, uint64_t hash)
{
	const NbStrMap *map = &index->tokens;
	uint16_t	tag = (uint16_t) (hash >> 48);
	uint16_t	len16 = len > UINT16_MAX ? UINT16_MAX : (uint16_t) len;
	uint64_t	head = nb_row_head(str, len);

	for (uint32_t i = nb_strmap_probe_start(map, hash);; i = nb_strmap_probe_next(map, i))
	{
		const NbRowKey *key = nb_row_key(rows, row_size, i);

		if (key->id1 == 0)
			return -1;
		if (key->tag == tag && key->len == len16 && key->head == head &&
			(len <= 8 || nb_strmap_slot_holds(map, nb_strmap_slot(map, i), str, len)))
			return i;
	}
}

void		nb_index_build(NbIndex *index, const NbView *view);

/*
 * nb_index_build in two steps: everything the index copies from the view,
 * then the item map's slots, which need no view.  A caller that holds the
 * view's bytes only for the index frees them in between, so that they and
 * the slots (most of an index of many items) are never held at once.  Only
 * the labels and features can be looked up before nb_index_place.
 */
void		nb_index_copy(NbIndex *index, const NbView *view);
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

/* Class index of a label, or -1. */
int64_t		nb_index_class(const NbIndex *index, const char *str, uint32_t len);

/* Whether every feature of the model is a bag of tokens. */
bool		nb_index_only_bags(const NbIndex *index);

/* Whether some feature of the model is a bag of tokens. */
bool		nb_index_has_bag(const NbIndex *index);

#endif
