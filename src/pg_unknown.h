/*
 * pg_unknown.h — rows scored that have no feature the model knows: counted
 * as they are scored, reported once per statement (nbc.unknown_features).
 *
 * Such a row (features made with another tokenizer, stemmed when the model
 * was not, jsonb with other keys) gets a prediction that nothing in it
 * informs.  Every scoring path calls nb_count_scored_row once per row, once
 * the row's document is filled; pg_unknown.c says when the counts are
 * reported.
 */
#ifndef PG_UNKNOWN_H
#define PG_UNKNOWN_H

#include "postgres.h"

#include "nb_doc.h"
#include "nb_index.h"

/* The values of nbc.unknown_features. */
typedef enum NbUnknownFeatures
{
	NB_UNKNOWN_WARNING,			/* one WARNING at the end of the statement */
	NB_UNKNOWN_ERROR,			/* ERROR at the first such row */
	NB_UNKNOWN_IGNORE			/* not counted */
} NbUnknownFeatures;

extern int	nb_unknown_features;

/* The rows counted and not reported yet. */
typedef struct NbScoredRows
{
	int64		scored;
	int64		unknown;		/* of which the model knew no feature */
} NbScoredRows;

extern NbScoredRows nb_scored_rows;

/* ERROR (22023): the row of this document has no feature the model knows. */
void		nb_unknown_row_error(const NbDoc *doc);

/*
 * Count a row scored with this document (filled by nb_row_doc): a test of
 * the setting, an increment, and for a row with a known token a test of
 * its token count; under "error" a row the model knows nothing of is an
 * error.
 */
static inline void
nb_count_scored_row(const NbDoc *doc, const NbIndex *index)
{
	if (nb_unknown_features == NB_UNKNOWN_IGNORE)
		return;
	nb_scored_rows.scored++;
	if (unlikely(doc->n_tokens == 0) && nb_doc_knows_nothing(doc, index))
	{
		nb_scored_rows.unknown++;
		if (nb_unknown_features == NB_UNKNOWN_ERROR)
			nb_unknown_row_error(doc);
	}
}

/* Define nbc.unknown_features and install the hooks that report (at load). */
void		nb_unknown_init(void);

#endif
