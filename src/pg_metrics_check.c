/*
 * pg_metrics_check.c — nb_metrics' signals of an analyst's mix-ups.
 *
 * Metrics compare labels as text.  A label column of another type than
 * the one the model was trained on (numeric(3,1) labels train "1.0", an
 * integer column reads "1"), or the wrong column, gives an accuracy of 0
 * that looks like a bad model; the WARNING says the labels never met.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"

#include "pg_aggregate.h"
#include "pg_label.h"
#include "pg_metrics_check.h"

/* Labels a message quotes as examples. */
#define NB_LABELS_SHOWN 3

/* Fewer rows say little: a single row's prediction may well be wrong. */
#define NB_LABELS_MIN_ROWS 10

void
nb_metrics_check_actual(FunctionCallInfo fcinfo, const text *actual)
{
	if (get_fn_expr_argtype(fcinfo->flinfo, 1) != JSONBOID &&
		!nb_metrics_label_is_scores(VARDATA_ANY(actual), VARSIZE_ANY_EXHDR(actual)))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("actual label is a JSON object of probabilities"),
			 errdetail("The actual label is \"%s\".",
					   nb_cut_str(VARDATA_ANY(actual), VARSIZE_ANY_EXHDR(actual))),
			 errhint("The actual label comes first: nb_metrics(actual, predicted), as in nb_metrics(label, nb_predict_proba(model, features)).")));
}

/* Up to NB_LABELS_SHOWN labels c with (seen[c] & flag) == want, quoted, comma separated. */
static char *
labels_shown(const NbMetrics *m, uint8_t flag, uint8_t want, bool unnamed_only, uint32 *count)
{
	StringInfoData buf;

	initStringInfo(&buf);
	*count = 0;
	for (uint32 c = 0; c < m->labels.count; c++)
	{
		uint32		len;
		const char *s;

		if ((m->seen[c] & flag) != want || (unnamed_only && m->score[c] != NULL))
			continue;
		if (++*count > NB_LABELS_SHOWN)
			continue;
		s = nb_strmap_str(&m->labels, c, &len);
		appendStringInfo(&buf, "%s\"%s\"", *count > 1 ? ", " : "", nb_cut_str(s, len));
	}
	return buf.data;
}

/*
 * The rows whose actual label no row's probabilities name: their count
 * and up to NB_LABELS_SHOWN of those labels (rows with probabilities that
 * are kept: a class that no row named has no column of scores).
 */
static char *
unnamed_labels(const NbMetrics *m, uint32 *count)
{
	*count = 0;
	if (!m->scored || !m->ranked)
		return NULL;
	return labels_shown(m, NB_SEEN_ACTUAL, NB_SEEN_ACTUAL, true, count);
}

void
nb_metrics_warn_labels(const NbMetrics *m)
{
	static TimestampTz warned = 0;
	uint32		n_actual;
	uint32		n_predicted;
	uint32		n_both;
	uint32		n_unnamed;
	char	   *actual = labels_shown(m, NB_SEEN_ACTUAL, NB_SEEN_ACTUAL, false, &n_actual);
	char	   *predicted = labels_shown(m, NB_SEEN_PREDICTED, NB_SEEN_PREDICTED, false, &n_predicted);
	char	   *unnamed = unnamed_labels(m, &n_unnamed);

	(void) labels_shown(m, NB_SEEN_ACTUAL | NB_SEEN_PREDICTED,
						NB_SEEN_ACTUAL | NB_SEEN_PREDICTED, false, &n_both);
	if (m->rows < NB_LABELS_MIN_ROWS || n_actual == 0 || (n_both > 0 && n_unnamed == 0) ||
		!nb_first_in_statement(&warned))
		return;
	if (n_both == 0)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("no actual label of nb_metrics is ever predicted"),
				 errdetail("The %u actual labels are %s%s; the %u predicted are %s%s.",
						   n_actual, actual, n_actual > NB_LABELS_SHOWN ? ", ..." : "",
						   n_predicted, predicted, n_predicted > NB_LABELS_SHOWN ? ", ..." : ""),
				 errhint("Labels are compared as text (label::text): check that the actual column is the label the model was trained on, of the same type (a numeric(3,1) label trains \"1.0\" where an integer one reads \"1\").")));
	else
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg_plural("%u actual label of nb_metrics is not a class of the probabilities",
							   "%u actual labels of nb_metrics are not classes of the probabilities",
							   n_unnamed, n_unnamed),
				 errdetail("No row's probabilities name %s%s: the model never had %s, and %s rows count as wrong.",
						   unnamed, n_unnamed > NB_LABELS_SHOWN ? ", ..." : "",
						   n_unnamed == 1 ? "it" : "them", n_unnamed == 1 ? "its" : "their"),
				 errhint("Check that the actual column is the label the model was trained on.")));
}
