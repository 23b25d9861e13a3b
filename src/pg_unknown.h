/*
 * pg_unknown.h — the share of a statement's feature occurrences that the
 * model knows (its coverage), counted as rows are scored and reported once
 * per statement when it is below nbc.unknown_features_threshold
 * (nbc.unknown_features): features made with another tokenizer, stemmed when
 * the model was not, jsonb with misspelled keys.  Every scoring path calls
 * nb_count_scored_row once per row, once the row's document is filled.
 */
#ifndef PG_UNKNOWN_H
#define PG_UNKNOWN_H

#include "postgres.h"

#include "fmgr.h"

#include "pg_features.h"
#include "pg_prepared.h"

/* The values of nbc.unknown_features. */
typedef enum NbUnknownFeatures
{
	NB_UNKNOWN_WARNING,			/* one WARNING at the end of the statement */
	NB_UNKNOWN_ERROR,			/* ERROR at the first row below the threshold */
	NB_UNKNOWN_IGNORE			/* not counted */
} NbUnknownFeatures;

extern int	nb_unknown_features;

/* Count the scored row of pm's document, features argument arg of input's type. */
void		nb_count_row(FunctionCallInfo fcinfo, int arg, NbFeatureInput input, NbPrepared *pm);

/*
 * Count a row scored with pm's document (filled by nb_row_doc): under
 * "ignore" a test of the setting, nothing more.
 */
static inline void
nb_count_scored_row(FunctionCallInfo fcinfo, int arg, NbFeatureInput input, NbPrepared *pm)
{
	if (nb_unknown_features != NB_UNKNOWN_IGNORE)
		nb_count_row(fcinfo, arg, input, pm);
}

/* Define nbc.unknown_features and nbc.unknown_features_threshold (at load). */
void		nb_unknown_init(void);

#endif
