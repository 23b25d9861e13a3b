/*
 * pg_explain.c — nb_explain and nb_feature_log_prob: the parts of one
 * prediction, and the log-probabilities a model's scorer holds, both read
 * off the prepared scorer that nb_predict uses (see nb_explain.h).
 */
#include "pg_model.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "nb_explain.h"
#include "pg_label.h"
#include "pg_predict.h"
#include "pg_prepared.h"

/*
 * The feature column of an item's row: the token for the bag "", "key:token"
 * for a bag under a key (as nb_mutual_info names them), the key for a
 * categorical value.  A token that is empty, begins or ends with white space
 * (character n-grams: "os " and " os") or begins with a double quote is
 * shown as a JSON string, so that every token reads apart.
 */
static text *
item_feature(const NbIndex *ix, uint32 j, uint32 k)
{
	uint32		key_len;
	const char *key = nb_vocab_str(&ix->features, j, &key_len);
	uint32		len;
	const char *value = nb_index_item(ix, k, &len);
	StringInfoData buf;

	if (ix->feature_type[j] == NB_FEATURE_CATEGORICAL)
		return cstring_to_text_with_len(key, key_len);
	initStringInfo(&buf);
	if (key_len > 0)
	{
		appendBinaryStringInfo(&buf, key, key_len);
		appendStringInfoChar(&buf, ':');
	}
	if (len > 0 && !isspace((unsigned char) value[0]) && !isspace((unsigned char) value[len - 1]) && value[0] != '"')
		appendBinaryStringInfo(&buf, value, len);
	else
		escape_json(&buf, pnstrdup(value, len));
	return cstring_to_text_with_len(buf.data, buf.len);
}

static text *
number_text(double x)
{
	return cstring_to_text(float8out_internal(x));
}

/*
 * The class to explain the prediction against: the caller's (of any
 * type, as against::text), else the runner-up; -1 if there is none (a
 * single class).
 */
static int64
other_class(FunctionCallInfo fcinfo, const NbPrepared *pm, uint32 best)
{
	const NbIndex *ix = &pm->index;
	int64		other = -1;

	if (!PG_ARGISNULL(3))
	{
		text	   *label = nb_label_arg(fcinfo, 3, nb_prepared_label_cast(fcinfo));

		other = nb_index_class(ix, VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label));
		if (other < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("naive Bayes model has no class \"%s\"",
							nb_cut_str(VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label))),
					 errdetail("The class to explain the prediction against must be one of the model's labels.")));
		return other;
	}
	/* the most probable other class; on a tie the first in byte order */
	for (uint32 c = 0; c < ix->n_classes; c++)
		if (c != best && (other < 0 || pm->log_post[c] > pm->log_post[other]))
			other = c;
	return other;
}

/* The columns of nb_explain's rows. */
enum
{
	EXPLAIN_PART,				/* what the row is: prior, token, value, absent, length */
	EXPLAIN_FEATURE,
	EXPLAIN_VALUE,
	EXPLAIN_CONTRIBUTION,
	EXPLAIN_PREDICTED,			/* the two classes compared, on every row */
	EXPLAIN_COMPARED_TO,
	EXPLAIN_COLUMNS
};

/* nb_explain's columns in 0.8.0: feature, value, contribution. */
#define EXPLAIN_COLUMNS_0_8 3

/*
 * One row of nb_explain into the result; classes holds the datums of the
 * predicted class and the class it is compared to.
 */
static void
put_explain_row(ReturnSetInfo *rsinfo, const NbPrepared *pm, const NbRowCategories *cats,
				const NbExplainRow *row, const Datum *classes)
{
	const NbIndex *ix = &pm->index;
	Datum		values[EXPLAIN_COLUMNS];
	bool		nulls[EXPLAIN_COLUMNS] = {false};
	uint32		j = row->feature;
	const char *part = NULL;

	switch (row->part)
	{
		case NB_EXPLAIN_PRIOR:
			part = "prior";
			nulls[EXPLAIN_FEATURE] = nulls[EXPLAIN_VALUE] = true;
			break;
		case NB_EXPLAIN_ITEM:
			/* a token of a bag, a value of a categorical feature */
			part = ix->feature_type[j] == NB_FEATURE_CATEGORICAL ? "value" : "token";
			values[EXPLAIN_FEATURE] = PointerGetDatum(item_feature(ix, j, row->item));
			if (ix->feature_type[j] == NB_FEATURE_CATEGORICAL)
			{
				uint32		len;
				const char *s = nb_index_item(ix, row->item, &len);

				values[EXPLAIN_VALUE] = PointerGetDatum(cstring_to_text_with_len(s, len));
			}
			else
				values[EXPLAIN_VALUE] = PointerGetDatum(number_text(row->count));
			break;
		case NB_EXPLAIN_VALUE:
			part = "value";
			values[EXPLAIN_FEATURE] = PointerGetDatum(nb_vocab_text(&ix->features, j));
			switch (ix->feature_type[j])
			{
				case NB_FEATURE_BOOLEAN:
					values[EXPLAIN_VALUE] = PointerGetDatum(cstring_to_text(pm->doc.value[j] != 0 ? "true" : "false"));
					break;
				case NB_FEATURE_GAUSSIAN:
					values[EXPLAIN_VALUE] = PointerGetDatum(number_text(pm->doc.value[j]));
					break;
				default:
					/* a categorical value never seen in training */
					if (cats->str != NULL && cats->str[j] != NULL)
						values[EXPLAIN_VALUE] = PointerGetDatum(cstring_to_text_with_len(cats->str[j],
																						 cats->len[j]));
					else
						nulls[EXPLAIN_VALUE] = true;
					break;
			}
			break;
		case NB_EXPLAIN_ABSENT:
		case NB_EXPLAIN_LENGTH:
			part = row->part == NB_EXPLAIN_ABSENT ? "absent" : "length";
			values[EXPLAIN_FEATURE] = PointerGetDatum(nb_vocab_text(&ix->features, j));
			values[EXPLAIN_VALUE] = PointerGetDatum(number_text(row->count));
			break;
	}
	values[EXPLAIN_PART] = PointerGetDatum(cstring_to_text(part));
	values[EXPLAIN_CONTRIBUTION] = Float8GetDatum(row->contribution);
	values[EXPLAIN_PREDICTED] = classes[0];
	values[EXPLAIN_COMPARED_TO] = classes[1];
	/*
	 * A database not yet updated from 0.8.0 has nb_explain's three columns
	 * (feature, value, contribution), which come in this order here too.
	 */
	if (rsinfo->setDesc->natts == EXPLAIN_COLUMNS_0_8)
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &values[EXPLAIN_FEATURE],
							 &nulls[EXPLAIN_FEATURE]);
	else
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * Options given as text (nb_explain's forms for a string literal, which
 * choose text over jsonb): a JSON object is read as jsonb; anything else is
 * most likely the class to explain against, put in the options' place.
 */
static void
options_from_text(FunctionCallInfo fcinfo)
{
	char	   *s;

	if (PG_ARGISNULL(2) || get_fn_expr_argtype(fcinfo->flinfo, 2) != TEXTOID)
		return;
	s = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (s[strspn(s, " \t\r\n")] != '{')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_explain's options must be a JSON object"),
				 errdetail("The third argument, \"%s\", is read as the prediction options.", nb_cut_str(s, strlen(s))),
				 errhint("To explain the prediction against a class, name it: nb_explain(model, features, against => %s).",
						 quote_literal_cstr(nb_cut_str(s, strlen(s))))));
	fcinfo->args[2].value = DirectFunctionCall1(jsonb_in, CStringGetDatum(s));
}

/*
 * A model of mixture components has no terms per class: a class's
 * probability is a sum over its components, not a product of factors.
 */
static void
refuse_components(const NbIndex *ix, const char *function)
{
	if (ix->label_first != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support a model of mixture components", function),
				 errdetail("A class of several components has no one term per feature: its probability sums its components'.")));
}

/*
 * nb_explain(model, features, options, against, top_k): the rows of the
 * row's prediction against the runner-up or the class named, largest first.
 */
static Datum
explain(FunctionCallInfo fcinfo, NbFeatureInput input)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NbRowCategories cats = {NULL, NULL};
	NbPrepared *pm;
	NbScorer   *scorer;
	NbExplainRow *rows;
	int64		best;
	uint64		n;
	int64		other;
	Datum		classes[2];
	MemoryContext row_ctx;

	InitMaterializedSRF(fcinfo, 0);
	options_from_text(fcinfo);
	if (!PG_ARGISNULL(4) && PG_GETARG_INT32(4) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("top_k must not be negative")));
	best = nb_score_row(fcinfo, input, 2, &cats, &pm, &scorer);
	if (best < 0)
		return (Datum) 0;
	refuse_components(&pm->index, "nb_explain");
	other = other_class(fcinfo, pm, (uint32) best);
	if (other < 0)
		return (Datum) 0;

	classes[0] = PointerGetDatum(nb_vocab_text(&pm->index.labels, (uint32) best));
	classes[1] = PointerGetDatum(nb_vocab_text(&pm->index.labels, (uint32) other));
	rows = palloc_extended(sizeof(NbExplainRow) * nb_explain_max_rows(&pm->doc), MCXT_ALLOC_HUGE);
	n = nb_explain(scorer, &pm->doc, (uint32) best, (uint32) other, rows);
	if (!PG_ARGISNULL(4) && n > (uint64) PG_GETARG_INT32(4))
		n = (uint64) PG_GETARG_INT32(4);
	/* a row's texts are copied into the result: made and freed row by row */
	row_ctx = AllocSetContextCreate(CurrentMemoryContext, "nb_explain row", ALLOCSET_SMALL_SIZES);
	for (uint64 i = 0; i < n; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(row_ctx);

		CHECK_FOR_INTERRUPTS();
		put_explain_row(rsinfo, pm, &cats, &rows[i], classes);
		MemoryContextSwitchTo(old);
		MemoryContextReset(row_ctx);
	}
	MemoryContextDelete(row_ctx);
	pfree(rows);
	return (Datum) 0;
}

NB_FEATURE_FUNCTIONS(nb_explain, explain);

/*
 * Rows (feature, value, label, log_prob) of one value of a feature, one per
 * class; the labels are allocated in CurrentMemoryContext.
 */
static void
put_log_probs(ReturnSetInfo *rsinfo, const NbIndex *ix, text *feature, text *value,
			  const double *log_prob)
{
	for (uint32 c = 0; c < ix->n_classes; c++)
	{
		Datum		values[4];
		bool		nulls[4] = {false};

		CHECK_FOR_INTERRUPTS();
		values[0] = PointerGetDatum(feature);
		values[1] = PointerGetDatum(value);
		values[2] = PointerGetDatum(nb_vocab_text(&ix->labels, c));
		values[3] = Float8GetDatum(log_prob[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * nb_feature_log_prob(model, options): per feature, value and class the
 * smoothed log-probability the scorer for the options uses; for a Gaussian
 * feature the class's mean and variance (after the floor) as the values
 * "mean" and "variance".  Into a tuplestore (spilled to disk when large);
 * what one value needs is allocated in a context reset after it.
 */
PG_FUNCTION_INFO_V1(nb_feature_log_prob);
Datum
nb_feature_log_prob(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NbPrepared *pm;
	NbScorer   *sc;
	const NbIndex *ix;
	double	   *log_prob;
	uint32		first_item = 0;
	MemoryContext per_value;
	MemoryContext old;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0))
		return (Datum) 0;
	pm = nb_prepared_get_model(fcinfo, PG_GETARG_DATUM(0));
	sc = nb_prepared_scorer(pm, PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1));
	ix = &pm->index;
	refuse_components(ix, "nb_feature_log_prob");
	log_prob = palloc(sizeof(double) * ix->n_classes);
	per_value = AllocSetContextCreate(CurrentMemoryContext, "nb_feature_log_prob value",
									  ALLOCSET_SMALL_SIZES);
	for (uint32 j = 0; j < ix->n_features; j++)
	{
		text	   *name = nb_vocab_text(&ix->features, j);
		uint64		jc = (uint64) j * ix->n_classes;

		switch (ix->feature_type[j])
		{
			case NB_FEATURE_BAG:
			case NB_FEATURE_CATEGORICAL:
				for (uint32 k = first_item; k < first_item + ix->feature_items[j]; k++)
				{
					uint32		len;
					const char *s = nb_index_item(ix, k, &len);

					old = MemoryContextSwitchTo(per_value);
					nb_item_log_prob(sc, j, k, log_prob);
					put_log_probs(rsinfo, ix, name, cstring_to_text_with_len(s, len), log_prob);
					MemoryContextSwitchTo(old);
					MemoryContextReset(per_value);
				}
				break;
			case NB_FEATURE_BOOLEAN:
				nb_boolean_log_prob(sc, j, 1, log_prob);
				put_log_probs(rsinfo, ix, name, cstring_to_text("true"), log_prob);
				nb_boolean_log_prob(sc, j, 0, log_prob);
				put_log_probs(rsinfo, ix, name, cstring_to_text("false"), log_prob);
				break;
			case NB_FEATURE_GAUSSIAN:
				/* a feature no training row had: the scorer leaves it out */
				if (sc->usable[j])
				{
					put_log_probs(rsinfo, ix, name, cstring_to_text("mean"), sc->mean + jc);
					put_log_probs(rsinfo, ix, name, cstring_to_text("variance"), sc->var + jc);
				}
				break;
		}
		first_item += ix->feature_items[j];
	}
	MemoryContextDelete(per_value);
	return (Datum) 0;
}
