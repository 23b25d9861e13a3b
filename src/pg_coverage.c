/*
 * pg_coverage.c — nb_coverage: the share of a row's features that the
 * model knows, to find rows (or whole tables) made with another tokenizer,
 * stemming or keys than the model's.  The row is looked up as scoring looks
 * it up (nb_row_doc, in the prepared model's index): its known occurrences
 * (nb_doc_known) over those plus the unknown ones (NbDoc.unknown); 0 for a
 * row with no features.  Looking up is not scoring: nb_coverage counts no
 * row for nbc.unknown_features (pg_unknown.h).
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "pg_predict.h"
#include "pg_prepared.h"

static Datum
coverage(FunctionCallInfo fcinfo, NbFeatureInput kind)
{
	NbPrepared *pm = nb_prepared_get_model(fcinfo, PG_GETARG_DATUM(0));
	double		known;
	double		total;

	nb_prepared_begin_row(pm);
	nb_row_doc(fcinfo, 1, kind, NULL, pm, NULL);
	known = nb_doc_known(&pm->doc, &pm->index);
	total = known + pm->doc.unknown;
	nb_prepared_end_row(pm);
	if (isinf(total))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("naive Bayes coverage of the row is out of range"),
				 errdetail("The counts of its features add up to more than float8 holds.")));
	PG_RETURN_FLOAT8(total > 0 ? known / total : 0);
}

NB_FEATURE_FUNCTIONS(nb_coverage, coverage);
