/*
 * pg_live_check.c — nbc_live_checked: a weighted live model's value, or an
 * error when its deltas cancelled beyond double precision
 * (nb_class_sums.h), which makes its reader or folder train it from the
 * source instead (pg_live.c, pg_live_fold.c); nbc_live_delta: the model
 * of some rows of a live model's source, their count of rows skipped for
 * a NULL label kept when nb_train gives NULL.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "nb_class_sums.h"
#include "pg_model.h"

PG_FUNCTION_INFO_V1(nbc_live_checked);
PG_FUNCTION_INFO_V1(nbc_live_exact);
PG_FUNCTION_INFO_V1(nbc_live_delta);

/*
 * Relative tolerance between a class's weight in the live model and its
 * double-double sum: merging in another order than the table's rows moves
 * the last bits (README: within 1e-12); losing a weight moves much more.
 */
#define LIVE_CLASS_TOLERANCE 1e-9

/* Add every model of an array (NULL elements skipped) with sign. */
static void
add_models(NbClassSums *sums, ArrayType *models, double sign)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	get_typlenbyvalalign(ARR_ELEMTYPE(models), &typlen, &typbyval, &typalign);
	deconstruct_array(models, ARR_ELEMTYPE(models), typlen, typbyval, typalign, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		NbView		view;

		if (nulls[i])
			continue;
		(void) nb_model_open(elems[i], &view, ERRCODE_DATA_CORRUPTED);
		nb_class_sums_add(sums, &view, sign);
	}
}

/* Whether result's class weights are those of base + added - removed (arguments 0 to 3). */
static bool
class_weights_exact(FunctionCallInfo fcinfo)
{
	NbClassSums *sums = nb_class_sums_create();
	NbView		result;
	bool		match;

	if (!PG_ARGISNULL(1))
	{
		NbView		base;

		(void) nb_model_open(PG_GETARG_DATUM(1), &base, ERRCODE_DATA_CORRUPTED);
		nb_class_sums_add(sums, &base, 1);
	}
	if (!PG_ARGISNULL(2))
		add_models(sums, PG_GETARG_ARRAYTYPE_P(2), 1);
	if (!PG_ARGISNULL(3))
		add_models(sums, PG_GETARG_ARRAYTYPE_P(3), -1);
	if (!PG_ARGISNULL(0))
		(void) nb_model_open(PG_GETARG_DATUM(0), &result, ERRCODE_DATA_CORRUPTED);
	match = nb_class_sums_match(sums, PG_ARGISNULL(0) ? NULL : &result, LIVE_CLASS_TOLERANCE);
	nb_class_sums_destroy(sums);
	return match;
}

/*
 * nbc_live_checked(result, base, added, removed): result, the live model
 * computed from base (NULL: none) merged with the models of added, less
 * those of removed, if its class weights are their sums; else an error.
 */
Datum
nbc_live_checked(PG_FUNCTION_ARGS)
{
	if (!class_weights_exact(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FLOATING_POINT_EXCEPTION),
				 errmsg("the deltas of a live model cancel beyond double precision"),
				 errdetail("A class's weight in the merged deltas differs from their exact sum.")));
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}

/* nbc_live_exact(result, base, added, removed): the same check, as a boolean. */
Datum
nbc_live_exact(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(class_weights_exact(fcinfo));
}

/*
 * nbc_live_delta(model, null_labels): the model of rows of a live model's
 * source (a delta, or the base) from nb_train over them and the count of
 * those it skips for a NULL label: the model as is (it holds the count),
 * else the model of that count alone (no class: nb_train gives NULL over
 * rows that all have a NULL label, and the live model must still count
 * them), else NULL.
 */
Datum
nbc_live_delta(PG_FUNCTION_ARGS)
{
	NbExpandedModel *em;
	NbView		view;

	if (!PG_ARGISNULL(0))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (PG_ARGISNULL(1) || PG_GETARG_INT64(1) <= 0)
		PG_RETURN_NULL();
	em = nb_expanded_create(CurrentMemoryContext, false);
	nb_trainer_count_null_labels(nb_expanded_trainer(em), (uint64) PG_GETARG_INT64(1));
	PG_RETURN_POINTER(nb_expanded_write(em, CurrentMemoryContext, &view));
}
