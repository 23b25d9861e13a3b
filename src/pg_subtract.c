/*
 * pg_subtract.c — nb_subtract(a, b): the model of the rows of a without
 * those of b (nb_subtract.c), and the reasons it refuses, in words.
 */
#include "pg_model.h"

#include "lib/stringinfo.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "nb_subtract.h"
#include "pg_label.h"
#include "pg_options.h"

PG_FUNCTION_INFO_V1(nb_subtract);

/* Refuse the subtraction (SQLSTATE 22023): b is not part of a. */
#define not_among(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), __VA_ARGS__, \
			 errhint("The rows of the second model must be among the rows of the first.")))

/* What an NbSubtractError's count is about, in words: "documents of class "spam"". */
static char *
count_words(const NbSubtractError *e)
{
	StringInfoData s;
	const char *items = e->item != NULL ? nb_feature_type(e->type_a)->items : NULL;

	initStringInfo(&s);
	switch (e->count)
	{
		case NB_COUNT_DOCUMENTS:
			appendStringInfo(&s, "documents of class \"%s\"", nb_cut_str(e->label, e->label_len));
			break;
		case NB_COUNT_ROWS:
			appendStringInfo(&s, "rows of class \"%s\" with feature \"%s\"",
							 nb_cut_str(e->label, e->label_len), nb_cut_str(e->feature, e->feature_len));
			break;
		case NB_COUNT_TRUE:
			appendStringInfo(&s, "rows of class \"%s\" in which feature \"%s\" is true",
							 nb_cut_str(e->label, e->label_len), nb_cut_str(e->feature, e->feature_len));
			break;
		case NB_COUNT_VALUES:
			appendStringInfo(&s, "values of feature \"%s\"", nb_cut_str(e->feature, e->feature_len));
			break;
		case NB_COUNT_OCCURRENCES:
			appendStringInfo(&s, "occurrences of \"%s\" among the %s of feature \"%s\" in class \"%s\"",
							 nb_cut_str(e->item, e->item_len), items, nb_cut_str(e->feature, e->feature_len),
							 nb_cut_str(e->label, e->label_len));
			break;
		case NB_COUNT_ITEM_DOCUMENTS:
			appendStringInfo(&s, "documents of class \"%s\" with \"%s\" among the %s of feature \"%s\"",
							 nb_cut_str(e->label, e->label_len), nb_cut_str(e->item, e->item_len), items,
							 nb_cut_str(e->feature, e->feature_len));
			break;
		case NB_COUNT_LENGTH_ROWS:
			appendStringInfo(&s, "rows of class \"%s\" with %s tokens in feature \"%s\"",
							 nb_cut_str(e->label, e->label_len), float8out_internal(e->length),
							 nb_cut_str(e->feature, e->feature_len));
			break;
		case NB_COUNT_NULL_LABELS:
			appendStringInfoString(&s, "rows skipped for a NULL label");
			break;
	}
	return s.data;
}

/*
 * Report why b cannot be subtracted from a (SQLSTATE 22023: b is not part
 * of a).  One complete message per refusal, as the style guide asks, so
 * that each can be translated whole.
 */
static void
report_subtract_error(const NbSubtractError *e)
{
	switch (e->status)
	{
		case NB_SUBTRACT_COMPAT:
			nb_report_incompatible(true, nb_merge_compat_status(e->compat), e->inputs_a,
								   e->inputs_b);
			break;
		case NB_SUBTRACT_VECTOR:
			if (e->vector_a == 0)
				not_among(errmsg("cannot subtract naive Bayes models: the first model has no float8[] rows"),
						  errdetail("The second model has float8[] rows of %u elements.", e->vector_b));
			not_among(errmsg("cannot subtract naive Bayes models trained on float8[] of different lengths"),
					  errdetail("The first model has %u elements per row, the second %u.",
								e->vector_a, e->vector_b));
			break;
		case NB_SUBTRACT_NO_CLASS:
			not_among(errmsg("cannot subtract naive Bayes models: the first model has no class \"%s\"",
							 nb_cut_str(e->label, e->label_len)));
			break;
		case NB_SUBTRACT_NO_FEATURE:
			not_among(errmsg("cannot subtract naive Bayes models: the first model has no feature \"%s\"",
							 nb_cut_str(e->feature, e->feature_len)));
			break;
		case NB_SUBTRACT_TYPE:
			not_among(errmsg("cannot subtract naive Bayes models: feature \"%s\" has different types",
							 nb_cut_str(e->feature, e->feature_len)),
					  errdetail("It is %s in the first model and %s in the second.",
								nb_feature_type(e->type_a)->prose, nb_feature_type(e->type_b)->prose));
			break;
		case NB_SUBTRACT_NO_ITEM:
			if (e->label != NULL)
				not_among(errmsg("cannot subtract naive Bayes models: the first model has no \"%s\" among the %s of feature \"%s\" in class \"%s\"",
								 nb_cut_str(e->item, e->item_len), nb_feature_type(e->type_a)->items,
								 nb_cut_str(e->feature, e->feature_len), nb_cut_str(e->label, e->label_len)));
			not_among(errmsg("cannot subtract naive Bayes models: the first model has no \"%s\" among the %s of feature \"%s\"",
							 nb_cut_str(e->item, e->item_len), nb_feature_type(e->type_a)->items,
							 nb_cut_str(e->feature, e->feature_len)));
			break;
		case NB_SUBTRACT_NEGATIVE:
			not_among(errmsg("cannot subtract naive Bayes models: the second model has more %s than the first",
							 count_words(e)),
					  errdetail("The first model has %s, the second %s.",
								float8out_internal(e->minuend), float8out_internal(e->subtrahend)));
			break;
		case NB_SUBTRACT_MISMATCH:
			not_among(errmsg("cannot subtract naive Bayes models: the %s would outnumber the rows that contain them",
							 count_words(e)));
			break;
		case NB_SUBTRACT_OK:
			break;
	}
	elog(ERROR, "unexpected subtraction status %d", (int) e->status);
}

/*
 * nb_subtract(a, b): the model of the rows of a without those of b, which
 * must be among them (see nb_subtract.h).  NULL b gives a, NULL a gives
 * NULL, and subtracting every row gives NULL, the empty model.
 */
Datum
nb_subtract(PG_FUNCTION_ARGS)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext scratch;
	NbView		a;
	NbView		b;
	NbView		out;
	NbSubtractError err;
	NbPlan	   *s;
	struct varlena *result = NULL;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PointerGetDatum(PG_DETOAST_DATUM(PG_GETARG_DATUM(0))));

	/* detoasted copies and the subtraction's scratch memory go with scratch */
	scratch = AllocSetContextCreate(caller, "nb_subtract", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scratch);
	(void) nb_model_open(PG_GETARG_DATUM(0), &a, ERRCODE_DATA_CORRUPTED);
	(void) nb_model_open(PG_GETARG_DATUM(1), &b, ERRCODE_DATA_CORRUPTED);
	nb_refuse_components(&a, "nb_subtract");
	nb_refuse_components(&b, "nb_subtract");
	/* the result is at most as large as a */
	if (a.size > NB_MODEL_MAX_SIZE)
		nb_report_too_large(a.size);
	s = nb_subtract_plan(&a, &b, &err);
	if (s == NULL)
		report_subtract_error(&err);
	if (!nb_plan_is_empty(s))
	{
		size_t		size = nb_plan_size(s, NB_MODEL_MAX_SIZE);

		result = nb_model_alloc(size, caller);
		nb_plan_write(s, (unsigned char *) VARDATA(result), size, &out);
	}
	nb_plan_destroy(s);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(scratch);
	if (result == NULL)
		PG_RETURN_NULL();
	/* a class or feature gone can leave stored options naming it */
	nb_check_stored_options(&out, ERRCODE_INVALID_PARAMETER_VALUE,
							"cannot subtract naive Bayes models: what remains does not fit their stored options",
							"Subtract the models without stored options (nb_with_options(model, NULL)), then store options that fit the result.");
	PG_RETURN_POINTER(result);
}
