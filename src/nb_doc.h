/*
 * nb_doc.h — one document (row) to score: its known items, looked up in a
 * vocabulary index, and the per-feature counts and values scoring needs.
 */
#ifndef NB_DOC_H
#define NB_DOC_H

#include <stdbool.h>
#include <stdint.h>

#include "nb_index.h"
#include "nb_item.h"
#include "nb_itemset.h"

/* A known item of a document and how often it occurs. */
typedef struct NbDocToken
{
	uint32_t	token;
	uint32_t	slot;			/* its rank in the index's item map: its row */
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
	NbItemSet	items;			/* item -> position in tokens, to add up repeats */
	/* per feature */
	bool	   *present;
	uint32_t   *present_list;
	uint32_t	n_present;
	double	   *occurrences;	/* bag: known tokens with repeats; categorical: 1 */
	double	   *distinct;		/* distinct known items */
	double	   *value;			/* Gaussian value; boolean 0 or 1 */
	/*
	 * Occurrences the model does not know: tokens and categorical values
	 * it never saw, and what the caller reports with nb_doc_add_unknown
	 * (features of keys the model does not have).
	 */
	double		unknown;
} NbDoc;

void		nb_doc_init(NbDoc *doc, const NbIndex *index);
void		nb_doc_free(NbDoc *doc);

/* Start a new document: every feature missing. */
void		nb_doc_begin(NbDoc *doc);

/*
 * Add the tokens of a bag feature, or the value of a categorical one (n =
 * 1), to the document; unknown tokens are skipped (an unknown categorical
 * value still counts, see nb_scorer_build.c).  Lookups are prefetched as a batch.
 */
void		nb_doc_add_tokens(const NbIndex *index, NbDoc *doc, uint32_t feature,
							  const NbTokenRef *tokens, uint32_t n);

/*
 * nb_doc_add_tokens looking the tokens up in a scorer's rows of row_size
 * bytes (nb_index.h), repeats of an item added up if merge, else kept as
 * separate items (nb_scorer_add_tokens).  Each of the two functions has
 * its own copy of the lookup, specialized by the compiler.
 */
void		nb_doc_add_row_tokens(const NbIndex *index, NbDoc *doc, uint32_t feature,
								  const NbTokenRef *tokens, uint32_t n, const char *rows,
								  size_t row_size, bool merge);

/* Add the value of a Gaussian feature, or of a boolean one as 0 or 1. */
void		nb_doc_add_value(NbDoc *doc, uint32_t feature, double x);

/*
 * Count occurrences of features the caller leaves out because the model
 * does not have them (a jsonb key it was not trained on), as unknown.
 */
static inline void
nb_doc_add_unknown(NbDoc *doc, double count)
{
	doc->unknown += count;
}

/*
 * The occurrences of the document's features that the model knows: its
 * known tokens and categorical values with their counts, and one per
 * Gaussian or boolean value.  With doc->unknown, the denominator of the
 * share the model knows (nb_coverage).
 */
double		nb_doc_known(const NbDoc *doc, const NbIndex *index);

#endif
