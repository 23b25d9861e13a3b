/*
 * nb_prune.h — a smaller model: the model trained on the same rows with
 * some features left out.
 *
 * What goes, in the order the options apply:
 *   min_documents, max_document_fraction: the bag tokens in fewer than n
 *       (weighted) documents, or in more than fraction f of all (weighted)
 *       documents (scikit-learn CountVectorizer's min_df and max_df; D the
 *       documents of every class, whether or not they have the bag).  They
 *       apply to bag tokens only: a categorical value, a boolean or a
 *       Gaussian feature has no document frequency of its own.
 *   top_k: of what is left, everything but the first k rows of
 *       nb_mutual_info (bag tokens and whole categorical, boolean and
 *       Gaussian features, over the whole model, highest first, ties by
 *       feature name then token in byte order).
 *
 * The result is what training on the rows with those tokens and features
 * removed gives: rows stay (document counts and priors do not change),
 * the entries of a dropped token go, so each bag's vocabulary and class
 * totals are those of its kept tokens, and a bag stays (with what rows
 * had it) even when all its tokens go, as a row with an empty bag counts.
 * A dropped categorical, boolean or Gaussian feature goes with all its
 * statistics (the Gaussian variance floor is then over the features left),
 * except a float8[] position, which the rows always have: it stays with
 * zero statistics, as if every row had NULL there, so that the model still
 * takes the same float8[] rows.
 */
#ifndef NB_PRUNE_H
#define NB_PRUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"

typedef struct NbPruneOptions
{
	bool		has_top_k;
	uint64_t	top_k;
	double		min_documents;	/* 0: keep every token */
	bool		has_max_fraction;
	double		max_document_fraction;
} NbPruneOptions;

/* Why an option value was refused. */
typedef enum NbPruneStatus
{
	NB_PRUNE_OK,
	NB_PRUNE_TOP_K_INVALID,		/* not an integer from 0 to 2^53 */
	NB_PRUNE_MIN_DOCUMENTS_INVALID, /* not a finite number >= 0 */
	NB_PRUNE_FRACTION_INVALID	/* not a number from 0 to 1 */
} NbPruneStatus;

void		nb_prune_options_init(NbPruneOptions *o);
NbPruneStatus nb_prune_set_top_k(NbPruneOptions *o, double k);
NbPruneStatus nb_prune_set_min_documents(NbPruneOptions *o, double n);
NbPruneStatus nb_prune_set_max_document_fraction(NbPruneOptions *o, double f);

typedef struct NbPruner NbPruner;

/* Decide what a validated view keeps.  The view must stay valid until nb_pruner_destroy. */
NbPruner   *nb_pruner_create(const NbView *view, const NbPruneOptions *o);

/* Exact size of the pruned model, or 0 if it would exceed max_size. */
size_t		nb_pruner_size(const NbPruner *p, size_t max_size);

/* Write the pruned model into buf of nb_pruner_size bytes; *out describes it. */
void		nb_pruner_write(const NbPruner *p, unsigned char *buf, size_t size, NbView *out);

void		nb_pruner_destroy(NbPruner *p);

#endif
