/*
 * pg_predict.h — scoring one row, for nb_predict* and nb_explain alike.
 */
#ifndef PG_PREDICT_H
#define PG_PREDICT_H

#include "postgres.h"

#include "fmgr.h"

#include "pg_features.h"
#include "pg_prepared.h"

/*
 * The categorical values of a jsonb row as given, per feature of the model
 * (str NULL where none was): a value never seen in training has no item.
 * Start with str NULL: the arrays are allocated at the first value, in
 * CurrentMemoryContext.  The strings point into the features argument.
 */
typedef struct NbRowCategories
{
	const char **str;
	uint32	   *len;
} NbRowCategories;

/*
 * Fill pm->doc (between nb_prepared_begin_row and nb_prepared_end_row) with
 * the row's features, argument arg of the call: looked up for scorer, or
 * with scorer NULL in the model's index, for scoring by any of its scorers.
 * Features the model does not know add to doc.unknown (for nb_coverage).
 * A path that scores the document then counts it with nb_count_scored_row
 * (pg_unknown.h).
 */
void		nb_row_doc(FunctionCallInfo fcinfo, int arg, NbFeatureInput input,
					   NbRowCategories *categories, NbPrepared *pm, NbScorer *scorer);

/*
 * Score pm's document, filled since nb_prepared_begin_row, with scorer: its
 * log posterior per class in pm->log_post, and the row ended
 * (nb_prepared_end_row).  Returns the index of the predicted class, or a
 * negative value when the class prior excludes every class.  A score out
 * of range is an error (22003).
 */
int64		nb_score_doc(NbPrepared *pm, NbScorer *scorer);

/*
 * Score the row of a call with arguments (model, features, ...), its options
 * in argument options_arg: its document is left in the prepared model's doc,
 * its log posterior per class in log_post, the row counted
 * (nb_count_scored_row).  Returns the index of the predicted class, or -1
 * for a NULL model or features.  categories (may be NULL) receives the
 * categorical values.  A score out of range is an error (22003).
 */
int64		nb_score_row(FunctionCallInfo fcinfo, NbFeatureInput input, int options_arg,
						 NbRowCategories *categories, NbPrepared **pm, NbScorer **scorer);

/* Entry i of a vocabulary (a class's label, a feature's name) as text. */
text	   *nb_vocab_text(const NbVocab *vocab, uint32 i);

/* ERROR 22003: a row's score overflowed (nb_scorer_score's NB_SCORE_OUT_OF_RANGE). */
void		nb_report_score_out_of_range(void);

#endif
