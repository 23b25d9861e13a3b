/*
 * nb_scorer.h — prediction: a model prepared once, scored per document.
 *
 * NbIndex holds a validated model in a form fit for lookups (an item hash
 * and per-item lists of the classes it occurs in).  NbScorer holds, for one
 * set of options, every logarithm that does not depend on the document, so
 * scoring a document costs one hash probe per token plus one addition per
 * (item, class) entry of its items, plus O(classes) per present feature.
 *
 * Zero probabilities (alpha = 0) are tracked exactly instead of as -inf:
 * each score is a pair (f, z) meaning  e^f * alpha^z  as alpha -> 0+, where z
 * counts zero factors.  The posterior is the limit of the smoothed posterior:
 * the classes with the smallest z share the probability in proportion to
 * e^f.  With alpha > 0 every z is 0 and this is the ordinary posterior.
 */
#ifndef NB_SCORER_H
#define NB_SCORER_H

#include <stdbool.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_itemset.h"
#include "nb_options.h"
#include "nb_strmap.h"
#include "nb_trainer.h"

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
	double	   *feature_tokens; /* sum of the entry counts of j's items in c */
	double	   *feature_total;	/* sum of feature_tokens over classes */
	double	   *feature_rows;	/* Gaussian: unweighted rows, mean, sum of squares */
	double	   *feature_mean;
	double	   *feature_m2;
	uint64_t   *token_start;	/* entries of item k: [token_start[k], token_start[k+1]) */
	uint32_t   *entry_class;
	double	   *entry_count;
	double	   *entry_docs;
	double	   *class_docs;
	double	   *token_total;	/* F_j: count summed over classes */
	double		total_docs;
	/* scorers keep the terms of items as rows (see NbScorer.rows) */
	bool		item_rows;
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

/* A known item of a document and how often it occurs. */
typedef struct NbDocToken
{
	uint32_t	token;
	uint32_t	slot;			/* the item's slot in NbIndex.tokens */
	uint32_t	feature;
	double		count;
} NbDocToken;

/*
 * One document (row) to score, built with nb_doc_begin and nb_doc_add_*.
 * A feature that is not added is missing: scoring leaves it out.
 */
typedef struct NbDoc
{
	NbDocToken *tokens;			/* known items (on repeats see nb_scorer_add_tokens) */
	uint32_t	n_tokens;
	uint32_t	tokens_cap;
	int64_t    *scratch;
	uint32_t	scratch_cap;
	NbItemKeys	item_keys;		/* items of features other than the bag "" */
	NbItemSet	items;			/* item -> position in tokens, to add up repeats */
	/* per feature */
	bool	   *present;
	uint32_t   *present_list;
	uint32_t	n_present;
	double	   *occurrences;	/* bag: known tokens with repeats; categorical: 1 */
	double	   *distinct;		/* distinct known items */
	double	   *value;			/* Gaussian value; boolean 0 or 1 */
} NbDoc;

typedef struct NbScoredEntry
{
	uint32_t	cls;
	double		f;
} NbScoredEntry;

typedef struct NbScorer
{
	const NbIndex *index;
	NbKind		kind;
	bool	   *excluded;		/* class prior is exactly 0 */
	double	   *prior_f;		/* per class */
	/*
	 * Per (feature, class).  Bag and categorical features: a constant part
	 * (base), a part per occurrence of a known token (occ) and per distinct
	 * known token (dist).  Boolean features: occ is the term of true, dist
	 * the term of false.  Gaussian features: mean, variance and the
	 * log-normalizer -log(2 pi var)/2 in mean, var and base_f.
	 */
	double	   *base_f, *base_z;
	double	   *occ_f, *occ_z;
	double	   *dist_f, *dist_z;
	double	   *mean, *var;
	bool	   *per_occurrence; /* per feature: entries count per occurrence */
	bool		any_per_document;	/* some per_occurrence is false */
	bool	   *usable;			/* per feature: Gaussian statistics exist */
	/*
	 * Per entry: the difference between the item's term for this class and
	 * its term for a class it never occurred in.  Terms that are the same for
	 * every class are left out: they cancel in the posterior.  The class is
	 * beside f so that scoring an item reads one cache line.
	 */
	NbScoredEntry *entry;
	double	   *entry_z;
	bool		any_entry_z;	/* some entry_z is not 0 (only possible with alpha = 0) */
	/*
	 * With few classes (NbIndex.item_rows) the entries are kept as rows
	 * instead, and entry and entry_z are freed: rows has a slot for each
	 * slot of the index's item map, holding the item's NbRowKey and its C
	 * terms, and nb_scorer_add_tokens looks tokens up there.  A token of a
	 * large vocabulary then costs one cache line from memory instead of three
	 * (slot, token_start, entries): scoring is bound by how many lines it
	 * fetches, and with 2 classes two slots share a line.  The rows of z,
	 * rarely needed, are apart: row_z[slot * C + c].
	 */
	char	   *rows;			/* row_size bytes per slot, aligned inside rows_block */
	uint32_t	row_size;		/* 32 or 64 (see NB_ROW_CLASSES) */
	void	   *rows_block;
	double	   *row_z;			/* NULL unless any_entry_z */
	/* scratch for one document: score, its rounding compensation, zero factors */
	double	   *f, *fc, *z;
	double	   *term;			/* one feature's terms */
} NbScorer;

void		nb_index_build(NbIndex *index, const NbView *view);
void		nb_index_free(NbIndex *index);

/* Index of a feature, or -1. */
int64_t		nb_index_feature(const NbIndex *index, const char *name, uint32_t len);

/* Class index of a label, or -1. */
int64_t		nb_index_class(const NbIndex *index, const char *str, uint32_t len);

/* Whether every feature of the model is a bag of tokens. */
bool		nb_index_only_bags(const NbIndex *index);

void		nb_doc_init(NbDoc *doc, const NbIndex *index);
void		nb_doc_free(NbDoc *doc);

/* Start a new document: every feature missing. */
void		nb_doc_begin(NbDoc *doc);

/*
 * Add the tokens of a bag feature, or the value of a categorical one (n =
 * 1), to the document; unknown tokens are skipped (an unknown categorical
 * value still counts, see nb_scorer.c).  Lookups are prefetched as a batch.
 */
void		nb_doc_add_tokens(const NbIndex *index, NbDoc *doc, uint32_t feature,
							  const NbTokenRef *tokens, uint32_t n);

/*
 * The same, for a document to be scored by sc only: tokens are looked up in
 * the scorer's rows when it has them, and then, for a feature whose
 * items count per occurrence (every kind but Bernoulli), repeats are kept
 * as separate items instead of being added up, so distinct counts them.
 * The scores differ from those of nb_doc_add_tokens by rounding only.
 */
void		nb_scorer_add_tokens(const NbScorer *sc, NbDoc *doc, uint32_t feature,
								 const NbTokenRef *tokens, uint32_t n);

/* Add the value of a Gaussian feature, or of a boolean one as 0 or 1. */
void		nb_doc_add_value(NbDoc *doc, uint32_t feature, double x);

/*
 * Precompute every logarithm of the options.  var_smoothing scales the
 * Gaussian variance floor; kind applies to bag features.
 */
void		nb_scorer_build(NbScorer *scorer, const NbIndex *index, const NbOptions *opts);
void		nb_scorer_free(NbScorer *scorer);

/*
 * Score a document.  Fills log_post[C] with natural-log posteriors
 * (-INFINITY for probability 0) and returns the index of the most probable
 * class (exact ties: the lowest index, i.e. the first label in byte order).
 * Returns -1 only if every class is excluded, which options validation
 * prevents.
 */
int64_t		nb_scorer_score(NbScorer *scorer, const NbDoc *doc, double *log_post);

#endif
