/*
 * nb_scorer.h — prediction: a scorer built once per model (its vocabulary
 * index, nb_index.h) and set of options, scoring documents (nb_doc.h).
 *
 * NbScorer holds, for one set of options, every logarithm that does not
 * depend on the document, so scoring a document costs one hash probe per
 * token plus one addition per (item, class) entry of its items, plus
 * O(classes) per present feature.
 *
 * Zero probabilities (a pseudo-count of 0, src/README.md "alpha = 0") are
 * tracked exactly instead of as -inf: each score is a pair (f, z) meaning
 * e^f * eps^z as eps -> 0+, where z counts zero factors.
 */
#ifndef NB_SCORER_H
#define NB_SCORER_H

#include <stdbool.h>
#include <stdint.h>

#include "nb_calibrate.h"
#include "nb_doc.h"
#include "nb_index.h"
#include "nb_item.h"
#include "nb_options.h"

typedef struct NbScoredEntry
{
	uint32_t	cls;
	double		f;
} NbScoredEntry;

typedef struct NbScorer
{
	const NbIndex *index;
	NbKind		kind;
	double		alpha;
	bool	   *excluded;		/* class prior is exactly 0 */
	double	   *prior_f;		/* per class */
	/*
	 * Per (feature, class).  Bag and categorical features: a constant part
	 * (base), a part per occurrence of a known token (occ) and per distinct
	 * known token (dist).  Boolean features: occ is the term of true, dist
	 * the term of false.  Gaussian features: mean, variance and the
	 * log-normalizer -log(2 pi var)/2 in mean, var and base_f.  Tables
	 * no feature of the model uses are NULL: mean and var without a
	 * Gaussian feature, base_z, occ and dist with only Gaussian ones.
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
	 * instead (entry and entry_z are NULL): row r holds the NbRowKey and C
	 * terms of the item of rank r in the index's item map, and
	 * nb_scorer_add_tokens compares tokens with the keys.  A token then
	 * costs one cache line from memory instead of four in turn (item,
	 * value, token_start, entries; src/README.md, Prepared models).  The
	 * rows of z, rarely needed, are apart: row_z[r * C + c].
	 */
	char	   *rows;			/* row_size bytes per item, aligned inside rows_block */
	uint32_t	row_size;		/* nb_row_size(C) */
	void	   *rows_block;
	double	   *row_z;			/* NULL unless any_entry_z */
	/*
	 * Complement with norm only (else NULL): each known item k of bag j
	 * adds x_k * norm_u[k] * norm_scale[j * C + c] to class c besides its
	 * entries, a term that is a product of an item and a class factor.
	 * norm_g is scratch per feature.
	 */
	double	   *norm_u;
	double	   *norm_scale;
	double	   *norm_g;
	/*
	 * Kind dcm only (else NULL): per bag feature j and class c at j * C + c
	 * the DCM's s (nb_dcm.h), the sum of its parameters beta.  dist_f holds
	 * log beta0 (the parameter of a token the class never saw), an entry or
	 * row log(beta / beta0); a present bag adds log Gamma(s) - log Gamma(s
	 * + n) for its n known occurrences, and a known token occurring x != 1
	 * times log Gamma(beta + x) - log Gamma(beta + 1).  Repeats are added up
	 * (the feature is not scored per occurrence).
	 */
	double	   *dcm_s;
	/*
	 * The calibration of the posteriors (nb_calibrate.h), applied last; its
	 * sigmoids are the scorer's own copy, cal_scratch C doubles for them.
	 */
	NbCalibration calibration;
	double	   *cal_scratch;
	/*
	 * A model of mixture components (NbIndex.label_first) is scored by
	 * component, then each label's components are summed into its
	 * posterior, unless by_component (EM, which needs the components').
	 */
	bool		by_component;
	/*
	 * scratch for one document: score, its rounding compensation, zero
	 * factors; after nb_scorer_score f holds each class's score (the log
	 * posterior before normalization, without the terms every class shares:
	 * nb_em.h reads it)
	 */
	double	   *f, *fc, *z;
	double	   *term, *term_z;	/* one feature's terms */
} NbScorer;

/*
 * How many times an item's terms count in a document where it occurs count
 * times: per occurrence, or once for a feature scored per document (Bernoulli).
 */
static inline double
nb_scorer_item_weight(const NbScorer *sc, uint32_t feature, double count)
{
	return sc->per_occurrence[feature] ? count : 1.0;
}

/*
 * nb_doc_add_tokens for a document to be scored by sc only: tokens are
 * looked up in the scorer's rows when it has them, and then, for a feature
 * whose items count per occurrence (every kind but Bernoulli), repeats are
 * kept as separate items instead of being added up, so distinct counts
 * them.  The scores differ from those of nb_doc_add_tokens by rounding only.
 */
void		nb_scorer_add_tokens(const NbScorer *sc, NbDoc *doc, uint32_t feature,
								 const NbTokenRef *tokens, uint32_t n);

/*
 * Precompute every logarithm of the options, which passed
 * nb_options_check_set.  var_smoothing scales the Gaussian variance floor;
 * kind applies to bag features; the estimator's pseudo-counts
 * (nb_options_pseudo) smooth every count.
 */
void		nb_scorer_build(NbScorer *scorer, const NbIndex *index, const NbOptions *opts);

/*
 * The same keeping the entries, never rows (whatever index->item_rows
 * says), for the scorers of a grid: they score documents looked up in the
 * index (nb_doc_add_tokens), each built once for a pass over the rows, and
 * entries take less memory than rows with many items in few classes (no
 * keys, no terms of 0), which many scorers of one model make count.
 */
void		nb_scorer_build_entries(NbScorer *scorer, const NbIndex *index, const NbOptions *opts);
void		nb_scorer_free(NbScorer *scorer);

/* What the rules between options and model (nb_options_check_model) need of the index's model. */
NbModelTraits nb_scorer_model_traits(const NbIndex *index);

/*
 * Score a document.  Fills log_post[C] with natural-log posteriors
 * (-INFINITY for probability 0) and returns the index of the most probable
 * class (exact ties: the lowest index, i.e. the first label in byte order).
 * Of a model of mixture components, the posteriors are its labels' (the
 * first index->n_labels), unless scorer->by_component.
 * Returns NB_SCORE_OUT_OF_RANGE if a class's score is not a finite double
 * (counts or values so large that their terms overflow; log_post is then
 * undefined), or NB_SCORE_NO_CLASS if every class is excluded, which
 * options validation prevents.
 */
#define NB_SCORE_NO_CLASS (-1)
#define NB_SCORE_OUT_OF_RANGE (-2)
int64_t		nb_scorer_score(NbScorer *scorer, const NbDoc *doc, double *log_post);

/*
 * Several scorers of one index scoring the same documents (a grid of option
 * sets, nb_grid.h): their item terms side by side, entry by entry, so that
 * an item of a document costs one read of adjacent terms per entry rather
 * than reads scattered over the scorers.  Scorers whose item terms are the
 * same (options that differ in the prior only, as fit_prior) share a column
 * of terms, summed once.  The scores equal nb_scorer_score's within
 * rounding (the items are summed apart, then added to the prior and the
 * features).
 */
typedef struct NbScorerSet
{
	uint32_t	n;
	NbScorer   *scorers;		/* n */
	uint32_t	m;				/* columns of distinct item terms */
	uint32_t   *column;			/* n: the column of each scorer */
	uint32_t   *owner;			/* m: a scorer of each column */
	double	   *terms;			/* per entry e, the term of each column j: terms[e * m + j] */
	double	   *terms_z;		/* the same for zero factors; NULL if every entry_z is 0 */
	double	   *f, *fc, *z;		/* scratch, m * C: the items' sums of each column */
	double	   *mult;			/* scratch, m: an item's weight in each column */
} NbScorerSet;

/*
 * Build the scorers of n option sets (which passed nb_options_check_set)
 * into scorers, which has room for n, and their set: each column's scorer
 * by nb_scorer_build_entries, its entries then taken into the set one
 * scorer at a time; the others as copies of their column's with their own
 * prior.  They are scored only through the set (their entries are freed,
 * but DCM's, which its repeats read), and freed by nb_scorer_free.
 */
void		nb_scorer_set_build(NbScorerSet *set, const NbIndex *index, NbScorer *scorers,
								const NbOptions *opts, uint32_t n);

/*
 * The memory nb_scorer_set_build would take for the n option sets, in
 * bytes, at least: each column's terms, the entries of a column being
 * built, and each scorer's tables per (feature, class).  The memory of a
 * set grows with the number of option sets times the size of the model,
 * so the caller checks this against a limit before building one.
 */
uint64_t	nb_scorer_set_bytes(const NbIndex *index, const NbOptions *opts, uint32_t n);
void		nb_scorer_set_free(NbScorerSet *set);

/*
 * Score a document (of the index, looked up by nb_doc_add_tokens) under
 * each scorer s of the set: its log posteriors into log_post[s * C ..], as
 * nb_scorer_score gives them (within rounding).  False if a scorer's score
 * was out of range or excluded every class (nb_scorer_score's negative
 * results).
 */
bool		nb_scorer_set_score(NbScorerSet *set, const NbDoc *doc, double *log_post);

/*
 * The terms a score is the sum of, per class into f[C] and z[C] (zero
 * factors, see above), each computed where scoring computes it: for
 * explaining a score (nb_explain.h) and listing what a model learned.
 *
 * The score of a class is its prior_f (minus infinity where excluded) plus,
 * for each present feature j, nb_scorer_count_terms(j, 1, occurrences,
 * distinct) for a bag or categorical feature or nb_scorer_value_terms(j,
 * value) for another, plus, for each known item of the document,
 * nb_scorer_item_weight times nb_scorer_item_terms.
 */

/* base_weight * base + occ * (per occurrence) + dist * (per distinct item) of feature j. */
void		nb_scorer_count_terms(const NbScorer *scorer, uint32_t feature, double base_weight,
								  double occ, double dist, double *f, double *z);

/*
 * The term of value x of a boolean (0 or 1) or Gaussian feature.  Gaussian
 * terms are relative to the largest (which changes no posterior), and all 0
 * for a value so far from every mean that no class has a density above 0.
 */
void		nb_scorer_value_terms(const NbScorer *scorer, uint32_t feature, double x,
								  double *f, double *z);

/*
 * Item k's own terms (k of feature j): 0 for a class it never occurred in,
 * but for normalized complement weights the part of -log(F_k + a) that
 * each class scales differently (norm_u, added by scoring apart).
 */
void		nb_scorer_item_terms(const NbScorer *scorer, uint32_t feature, uint32_t item,
								 double *f, double *z);

/*
 * DCM (dcm_s set) only: the whole term of known item k of bag j occurring x
 * times in a document, log Gamma(beta + x) - log Gamma(beta) per class, as
 * scoring adds it up: its item terms log(beta / beta0), the count term of
 * one distinct item (log beta0) and, for x != 1, the rest of the repeats.
 * The bag's count terms with no distinct item, nb_scorer_count_terms(j, 1,
 * n, 0), are then the rest of its score: log Gamma(s) - log Gamma(s + n).
 */
void		nb_scorer_dcm_item_terms(const NbScorer *scorer, uint32_t feature, uint32_t item,
									 double x, double *f, double *z);

/*
 * The part of the term of item k (of feature j, a bag or categorical one)
 * that is the same in every class and that scoring therefore leaves out:
 * its term in class c is this plus the count terms of one occurrence and
 * one distinct item plus its item terms.  0 for a feature scored per
 * document, whose item terms are the log-odds of presence against absence
 * (Bernoulli: log t - log(1 - t), the feature's base holding log(1 - t)),
 * and for normalized complement weights, whose item terms hold it.
 */
void		nb_scorer_item_shared(const NbScorer *scorer, uint32_t feature, uint32_t item,
								  double *f, double *z);

#endif
