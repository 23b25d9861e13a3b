/*
 * nb_trainer.h — the mutable model behind the aggregates' transition state:
 * accumulates counts, merges, serializes.
 *
 * Per non-zero (item, class) pair it keeps the weighted token count and
 * document frequency: those of the first NB_INLINE_CLASSES classes in an
 * array per class indexed by item id (counting a token reads one cache
 * line), the others in a hash table of pairs.  Memory per item is its
 * bytes and 8 + 16 * 4/3..8/3 + 4 (nb_vocab.h), plus 16 per inline class;
 * the model's own share is its bytes and 8 + 20 per entry.
 */
#ifndef NB_TRAINER_H
#define NB_TRAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_item.h"
#include "nb_merge.h"
#include "nb_vocab.h"

typedef struct NbPairSlot
{
	uint64_t	key;			/* token id << 32 | class id; NB_EMPTY_KEY if free */
	double		count;			/* weighted occurrences */
	double		docs;			/* weighted documents containing the token */
} NbPairSlot;

#define NB_INLINE_CLASSES 2

/* A bin of a bag's document length histogram in a class (length 0: a free slot). */
typedef struct NbLengthSlot
{
	uint32_t	feature;
	uint32_t	cls;
	double		length;
	double		weight;
} NbLengthSlot;

/* An item's counts in a class below NB_INLINE_CLASSES (0 if none). */
typedef struct NbItemCounts
{
	double		count;
	double		docs;
} NbItemCounts;

/* Statistics of one feature in one class (see NbFeatureType). */
typedef struct NbClassStat
{
	double		present;		/* weighted rows with the feature */
	double		a;
	double		b;
} NbClassStat;

typedef struct NbTrainerFeature
{
	NbFeatureType type;
	NbClassStat *stats;			/* per class, class_cap of them */
	/* Gaussian: unweighted rows, mean and sum of squared deviations */
	double		rows;
	double		mean;
	double		m2;
	uint64_t	last_doc;		/* document that last counted as having it */
	double		doc_length;		/* bag: the current document's tokens so far */
} NbTrainerFeature;

typedef struct NbTrainer
{
	NbVocab		classes;
	double	   *class_docs;
	uint32_t	class_cap;
	NbVocab		features;
	NbTrainerFeature *feature;
	uint32_t	feature_cap;
	int64_t		unnamed_bag;	/* id of the bag feature "", or -1 */
	uint32_t	n_bags;			/* bag features */
	uint32_t	vector_len;		/* float8[] rows' length, 0 if none yet */
	uint32_t   *position_feature;	/* feature ids of the vector_len positions, or NULL */
	NbVocab		tokens;			/* the items */
	NbItemCounts *inline_counts[NB_INLINE_CLASSES];	/* per item; NULL before the class */
	/*
	 * Dense counts of the classes below spread_classes, spread_classes per
	 * item (nb_trainer_spread_init; else NULL), instead of the two above.
	 * A count of docs 0 there is no entry.
	 */
	NbItemCounts *spread;
	uint32_t	spread_classes;
	uint32_t   *spread_active;	/* scratch: the classes a document goes to */
	uint64_t	spread_min_bytes;	/* NB_SPREAD_MIN_BYTES, see there */
	uint32_t   *item_doc;		/* per item, the document that last counted it */
	uint32_t	item_cap;		/* items the two arrays have room for */
	uint64_t	prefix_bytes;	/* NB_ITEM_PREFIX times the prefixed items */
	NbPairSlot *pairs;			/* pairs of the classes from NB_INLINE_CLASSES on */
	uint64_t	pair_mask;
	uint64_t	pairs_used;
	uint64_t	n_entries;		/* non-zero (item, class) pairs, inline or not */
	/* the document length histograms of the bags, see nb_format.h */
	NbLengthSlot *lengths;
	uint64_t	length_mask;
	uint64_t	lengths_used;
	bool		lengths_unknown;	/* merged a version 1 or 2 model with bags */
	/* bags of the current document whose length is not in the histogram yet */
	uint32_t   *pending;
	uint32_t	n_pending;
	uint32_t	pending_cap;
	uint64_t	doc_seq;		/* current document; 0 means "merged in" */
	uint32_t	doc_class;
	double		doc_weight;
	bool		overflow;		/* some sum stopped being finite */
	bool		underflow;		/* a token's count times its row's weight rounded to 0 */
	uint64_t	size_limit;		/* merges refuse to pass this serialized size */
	uint32_t	doc_stamp;		/* the current document in item_doc, never 0 */
	/* scratch for one batch of tokens */
	uint64_t   *scratch_hash;
	uint32_t   *scratch_id;
	uint32_t	scratch_cap;
	NbItemKeys	item_keys;		/* scratch for prefixed items */
	/*
	 * The model's settings (options in a copy of its own), fixed by
	 * nb_trainer_set_tokenizer, the first row or model: later ones agree.
	 */
	NbSettings	settings;
	bool		settings_fixed;
	bool		component_keys; /* nb_trainer_set_components */
} NbTrainer;

NbTrainer  *nb_trainer_create(void);
void		nb_trainer_destroy(NbTrainer *t);

/* Start a document of the given class and weight (> 0, finite). */
void		nb_trainer_begin_doc(NbTrainer *t, const char *label, uint32_t len,
								 double weight);

/*
 * Id of the feature with this name, created with the given type if new.
 * -1 if it exists with another type; *existing is then that type.
 */
int64_t		nb_trainer_feature(NbTrainer *t, const char *name, uint32_t len,
							   NbFeatureType type, NbFeatureType *existing);

/*
 * Add a bag feature's tokens to the current document (the bag is present
 * even with no tokens).  Batches are much faster than single tokens: their
 * hash lookups are prefetched.  Tokens have no zero byte (SQL text has
 * none) and counts > 0; they add up to the bag's length in the document,
 * which goes to the histogram when the document ends.
 */
void		nb_trainer_add_tokens(NbTrainer *t, uint32_t feature,
								  const NbTokenRef *tokens, uint32_t n);

/* Add tokens to the bag "" (text[] and tsvector rows); false if "" has another type. */
bool		nb_trainer_add_text(NbTrainer *t, const NbTokenRef *tokens, uint32_t n);

/* The id of the class of this label, created with no documents if new. */
uint32_t	nb_trainer_class(NbTrainer *t, const char *label, uint32_t len);

/*
 * The dense counts of nb_trainer_spread_init take at most this many bytes
 * (a trainer's spread_min_bytes; the unit tests lower it), or twice the
 * entries counted (16 bytes each) when that is more: past both, most cells
 * are zeros (a million classes, or most posteriors underflowing), and the
 * counts move to the tables before the block grows.
 */
#define NB_SPREAD_MIN_BYTES ((uint64_t) 256 * 1024 * 1024)

/*
 * Keep the counts of the classes below n_classes (ids in the order they
 * came in) in a dense block per item instead of the inline arrays and the
 * pair table, for nb_trainer_add_text_spread, while the block stays within
 * NB_SPREAD_MIN_BYTES; false if the trainer has entries already or a block.
 * The counts move to the tables (at a merge, or when the block would grow
 * too large) as they would have been there: the model is the same to the
 * bit.
 */
bool		nb_trainer_spread_init(NbTrainer *t, uint32_t n_classes);

/*
 * A document of the bag "" added to every class c below
 * nb_trainer_spread_init's n_classes with weight w[c] (0: not to c; a row
 * of no positive weight adds nothing, not even its tokens as items), as
 * nb_trainer_begin_doc and nb_trainer_add_text once per class would add
 * it, but with its tokens looked up once and counted in one dense block per
 * token: EM adds each unlabelled row to every class this way, where the
 * pair table would take a random access per token and class.  False if the
 * model has a feature "" of another type, or nb_trainer_spread_init was not
 * called (or a merge came since).
 */
bool		nb_trainer_add_text_spread(NbTrainer *t, const NbTokenRef *tokens, uint32_t n,
									   const double *w);

/*
 * A model of mixture components (EM-CM, NB_FORMAT_FLAG_COMPONENTS), for an
 * empty trainer: each class's key is then nb_trainer_component_key's, and
 * the model is written with the labels alone, repeated, flagged if one
 * repeats.
 */
#define NB_COMPONENT_KEY_BYTES 5
void		nb_trainer_set_components(NbTrainer *t);

/*
 * The key of component k of a label of len bytes, into key: the label, a
 * zero byte and k in 4 bytes big-endian (a label's keys stay together and
 * in order).
 */
void		nb_trainer_component_key(const char *label, uint32_t len, uint32_t k, char *key);

/* The current document's value of a categorical, Gaussian or boolean feature. */
void		nb_trainer_add_category(NbTrainer *t, uint32_t feature,
									const char *value, uint32_t len);
void		nb_trainer_add_real(NbTrainer *t, uint32_t feature, double x);
void		nb_trainer_add_boolean(NbTrainer *t, uint32_t feature, bool x);

/*
 * Feature ids of the n positions of float8[] rows, the Gaussian features
 * "1".."n", created when new.  NULL if earlier rows had another length
 * (*bad = UINT32_MAX) or position *bad names a feature of another type.
 */
const uint32_t *nb_trainer_vector(NbTrainer *t, uint32_t n, uint32_t *bad);

/*
 * Add every count of a validated serialized model.  On a conflict nothing
 * changes and *feature is the conflicting feature of the view.  A merge
 * whose result would pass t->size_limit stops (NB_MERGE_TOO_LARGE) with
 * the trainer partly merged: it must then be discarded.
 */
NbMergeStatus nb_trainer_merge_view(NbTrainer *t, const NbView *view, uint32_t *feature);

/*
 * Rows of text tokenized with tok: false if rows or models of another
 * tokenizer, or of none, came first.
 */
bool		nb_trainer_set_tokenizer(NbTrainer *t, const NbTokenizer *tok);

/* Add n rows skipped for their NULL label (NbSettings.null_labels). */
static inline void
nb_trainer_count_null_labels(NbTrainer *t, uint64_t n)
{
	t->settings.null_labels = nb_null_labels_add(t->settings.null_labels, n);
	if (t->settings.null_labels > NB_NULL_LABELS_MAX)
		t->overflow = true;
}

/* The kinds of rows the trainer's features came from (NB_INPUT_*). */
uint32_t	nb_trainer_input_kinds(const NbTrainer *t);

static inline bool
nb_trainer_is_empty(const NbTrainer *t)
{
	return t->classes.count == 0;
}

/*
 * End the current document: the lengths of its bags are added, which can
 * grow a table.  The three functions below do it too; a caller that must
 * choose where that memory comes from calls this first.
 */
void		nb_trainer_end_doc(NbTrainer *t);

/*
 * Whether the serialized form would be valid as far as magnitudes go: every
 * count and every sum of counts finite (as nb_view_open checks), and no
 * weighted count rounded to 0 (t->underflow, see weighted()).
 */
bool		nb_trainer_sums_finite(NbTrainer *t);

/*
 * A lower bound of nb_trainer_flat_size in constant time, growing with
 * every string, entry and length added: exact for a model with lengths
 * (version 3), else the size without version 2's feature arrays.
 */
uint64_t	nb_trainer_min_flat_size(const NbTrainer *t);

/* Exact size of the serialized form, or 0 if it would exceed max_size. */
size_t		nb_trainer_flat_size(NbTrainer *t, size_t max_size);

/*
 * Write the canonical serialized form into buf of nb_trainer_flat_size
 * bytes.  The item map's index lends its memory to the sort and is freed
 * once sorted: adding to the model later builds it again.  Unless view is
 * NULL, it describes the model written as nb_view_open would, unvalidated
 * (nb_format_finish), pointing into buf and the trainer's stored options.
 */
void		nb_trainer_write_view(NbTrainer *t, unsigned char *buf, size_t size, NbView *view);

#endif
