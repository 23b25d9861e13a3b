/*
 * pg_grid.c — nb_grid_metrics: the metrics of a model's predictions under
 * every option set of a grid, in one pass (nb_grid.h), for
 * nb_cross_validate and for tuning on a held-out split.  The scorers of the
 * grid are the prepared model's (nb_prepared_grid); the state is
 * nb_metrics' (pg_metrics.h), a grid's; the result is the nb_metrics
 * objects of the option sets, in the grid's order.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "nb_grid.h"
#include "pg_aggregate.h"
#include "pg_metrics.h"
#include "pg_predict.h"
#include "pg_prepared.h"
#include "pg_progress.h"
#include "pg_unknown.h"

/* The aggregate's memory context; a direct call of a support function is a user's error. */
static MemoryContext
grid_context(FunctionCallInfo fcinfo)
{
	return nb_aggregate_context(fcinfo, "nb_grid_metrics support functions", "nb_grid_metrics");
}

/*
 * Refuse to run inside another aggregate: Citus's worker_partial_agg, which
 * runs nb_grid_metrics of distributed rows on the workers, packs each row's
 * arguments into a record, so the model is copied for every row and found
 * again among the prepared ones by comparing its bytes (148 times the local
 * time with a 604 KB model over 1,000 rows; issue #44).  The aggregate whose
 * transition calls this is then not one whose transition function this is.
 */
static void
refuse_inner_call(FunctionCallInfo fcinfo)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	HeapTuple	tuple;
	Oid			transfn;

	if (aggref == NULL)
		return;
	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggref->aggfnoid);
	transfn = ((Form_pg_aggregate) GETSTRUCT(tuple))->aggtransfn;
	ReleaseSysCache(tuple);
	if (transfn != fcinfo->flinfo->fn_oid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nb_grid_metrics cannot run inside another aggregate"),
				 errdetail("On Citus this is the partial aggregation of distributed rows on the workers, which would copy the model for every row."),
				 errhint("Read the rows through a MATERIALIZED CTE, so that nb_grid_metrics runs on the coordinator: WITH d AS MATERIALIZED (SELECT fold, label, tokens FROM corpus) SELECT m.fold, nb_grid_metrics(m.model, d.tokens, d.label, options) FROM d JOIN models AS m USING (fold) GROUP BY m.fold.")));
}

/*
 * nb_grid_metrics(model, features, actual text, options jsonb[]): rows with
 * a NULL model, features or actual label are skipped, as nb_metrics skips
 * the NULL predictions of nb_predict_proba.
 */
static Datum
grid_transfn(FunctionCallInfo fcinfo, NbFeatureInput kind)
{
	MemoryContext aggctx;
	NbMetricsState *st;
	ArrayType  *options;
	NbPrepared *pm;
	NbScorerSet *set;
	text	   *actual;
	int64		failed;
	int64		a;
	bool		ok;
	MemoryContext old;

	aggctx = grid_context(fcinfo);
	st = nb_metrics_state_of_kind(nb_metrics_state_for_update(fcinfo, aggctx), true);
	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("nb_grid_metrics option sets must not be null")));
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		return nb_metrics_state_return(fcinfo, st);
	nb_progress_row("nb_grid_metrics", "scored");
	options = PG_GETARG_ARRAYTYPE_P(4);
	if (st == NULL)
	{
		int			n;

		refuse_inner_call(fcinfo);
		n = ArrayGetNItems(ARR_NDIM(options), ARR_DIMS(options));

		if (n > 0 && nb_grid_max_labels((uint32) n) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("nb_grid_metrics cannot keep the metrics of %d option sets", n),
					 errdetail("Their confusion matrices would take more than %llu bytes.",
							   (unsigned long long) NB_GRID_MAX_BYTES),
					 errhint("Score fewer option sets at a time.")));
	}
	pm = nb_prepared_get_model(fcinfo, PG_GETARG_DATUM(1));
	set = nb_prepared_grid(pm, options);
	if (st == NULL)
	{
		st = nb_metrics_state_create(aggctx, true, false, false, (struct varlena *) options, set->n);
		/* complement's scores are not probabilities: no log loss or Brier score */
		for (uint32 s = 0; s < set->n; s++)
			st->grid.metrics[s].scores_only = set->scorers[s].kind == NB_COMPLEMENT;
	}
	else if (VARSIZE_ANY(st->options) != VARSIZE(options) ||
			 memcmp(st->options, options, VARSIZE(options)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_grid_metrics needs the same option sets in every row"),
				 errdetail("The metrics of each option set are of the rows scored with it.")));
	actual = PG_GETARG_TEXT_PP(3);

	old = MemoryContextSwitchTo(st->hdr.eoh_context);
	failed = nb_grid_classes(&st->grid, &pm->index);
	if (failed >= 0)
	{
		uint32		len;
		const char *s = nb_vocab_str(&pm->index.labels, (uint32) failed, &len);

		nb_metrics_state_too_many_labels(st, s, len);
	}
	a = nb_grid_label(&st->grid, VARDATA_ANY(actual), VARSIZE_ANY_EXHDR(actual));
	if (a < 0)
		nb_metrics_state_too_many_labels(st, VARDATA_ANY(actual), VARSIZE_ANY_EXHDR(actual));
	MemoryContextSwitchTo(old);

	nb_prepared_begin_row(pm);
	nb_row_doc(fcinfo, 2, kind, NULL, pm, NULL);
	nb_count_scored_row(fcinfo, 2, kind, pm);
	old = MemoryContextSwitchTo(st->hdr.eoh_context);
	ok = nb_grid_add(&st->grid, set, &pm->doc, (uint32) a);
	MemoryContextSwitchTo(old);
	nb_prepared_end_row(pm);
	if (!ok)
		nb_report_score_out_of_range();
	nb_metrics_state_check_size(st);
	return nb_metrics_state_return(fcinfo, st);
}

/*
 * Combine: the same option sets (checked) and labels in the same order in
 * every option set's state.
 */
PG_FUNCTION_INFO_V1(nb_grid_metrics_combine);
Datum
nb_grid_metrics_combine(PG_FUNCTION_ARGS)
{
	return nb_metrics_state_combine_args(fcinfo, grid_context(fcinfo), true);
}

NB_FEATURE_FUNCTIONS(nb_grid_metrics, grid_transfn);

/*
 * The nb_metrics object of each option set, in the grid's order.  Each is
 * made in a scratch context, reset after it: making the object of many
 * labels leaves more memory behind than the object takes (600 MB for 2040
 * labels), which would add up over the option sets.  The objects go into
 * one array, so once they pass the most an array holds there is no point
 * in making more.
 */
PG_FUNCTION_INFO_V1(nb_grid_metrics_final);
Datum
nb_grid_metrics_final(PG_FUNCTION_ARGS)
{
	NbMetricsState *st;
	ArrayType  *result;
	Datum	   *values;
	MemoryContext scratch;
	Size		total = 0;

	(void) grid_context(fcinfo);
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = nb_metrics_state_of_kind(nb_metrics_state_open(PG_GETARG_DATUM(0)), true);
	values = palloc(sizeof(Datum) * st->grid.n_sets);
	scratch = AllocSetContextCreate(CurrentMemoryContext, "nb_grid_metrics final",
									ALLOCSET_DEFAULT_SIZES);
	for (uint32 s = 0; s < st->grid.n_sets; s++)
	{
		MemoryContext old;
		Jsonb	   *metrics;
		Jsonb	   *copy;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(scratch);
		metrics = nb_metrics_jsonb(&st->grid.metrics[s]);
		MemoryContextSwitchTo(old);
		total += VARSIZE(metrics);
		if (total > MaxAllocSize)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("nb_grid_metrics result would exceed the maximum array size"),
					 errdetail("The metrics of the first %u of %u option sets take more than %zu bytes.",
							   s + 1, st->grid.n_sets, (size_t) MaxAllocSize),
					 errhint("Score fewer option sets at a time.")));
		copy = palloc(VARSIZE(metrics));
		memcpy(copy, metrics, VARSIZE(metrics));
		values[s] = JsonbPGetDatum(copy);
		MemoryContextReset(scratch);
	}
	MemoryContextDelete(scratch);
	result = construct_array(values, (int) st->grid.n_sets, JSONBOID, -1, false, TYPALIGN_INT);
	nb_metrics_state_close(st, PG_GETARG_DATUM(0));
	PG_RETURN_ARRAYTYPE_P(result);
}
