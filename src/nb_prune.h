/*
 * nb_prune.h — a smaller model: the model trained on the same rows with
 * some features left out.  The options (README.md, "Smaller models") apply
 * in order: min_documents and max_document_fraction drop bag tokens by
 * their (weighted) document counts, then top_k keeps the first k rows of
 * nb_mutual_info.  What the result keeps (rows, bags, float8[] positions)
 * is in src/README.md, "Explanations and pruning".
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

void		nb_prune_options_init(NbPruneOptions *o);

/*
 * Set an option; false, leaving it as it was, if k is not an integer from 0
 * to 2^53, n not a finite number >= 0, f not a number from 0 to 1.
 */
bool		nb_prune_set_top_k(NbPruneOptions *o, double k);
bool		nb_prune_set_min_documents(NbPruneOptions *o, double n);
bool		nb_prune_set_max_document_fraction(NbPruneOptions *o, double f);

typedef struct NbPruner NbPruner;

/* Decide what a validated view keeps.  The view must stay valid until nb_pruner_destroy. */
NbPruner   *nb_pruner_create(const NbView *view, const NbPruneOptions *o);

/* Exact size of the pruned model, or 0 if it would exceed max_size. */
size_t		nb_pruner_size(const NbPruner *p, size_t max_size);

/* Write the pruned model into buf of nb_pruner_size bytes; *out describes it. */
void		nb_pruner_write(const NbPruner *p, unsigned char *buf, size_t size, NbView *out);

void		nb_pruner_destroy(NbPruner *p);

#endif
