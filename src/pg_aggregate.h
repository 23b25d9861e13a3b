/*
 * pg_aggregate.h — the memory context of an aggregate's support function.
 *
 * CREATE AGGREGATE needs its support functions to be SQL-callable, so a
 * direct call of one is a user's error, not an internal one.
 */
#ifndef NBC_PG_AGGREGATE_H
#define NBC_PG_AGGREGATE_H			/* not PG_AGGREGATE_H, catalog/pg_aggregate.h's */

#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "utils/fmgrprotos.h"

/*
 * The aggregate's memory context; called directly, what (the function or
 * functions) is refused as callable only by the aggregate aggregate.
 */
static inline MemoryContext
nb_aggregate_context(FunctionCallInfo fcinfo, const char *what, const char *aggregate)
{
	MemoryContext aggctx;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s can only be called by the aggregate %s", what, aggregate)));
	return aggctx;
}

/*
 * Does this call of a final function end the one group of an aggregate
 * query without GROUP BY, outside a trigger?  Its result is then the
 * statement's one answer over its rows, which a signal of a likely mistake
 * (a WARNING) may judge: a result per group (cross-validation's per fold,
 * a model per language) is small by design, a window aggregate's final
 * function runs once per row, and a trigger's is of the statement's rows
 * only (a live model's delta).
 */
static inline bool
nb_aggregate_single_group(FunctionCallInfo fcinfo)
{
	return fcinfo->context != NULL && IsA(fcinfo->context, AggState) &&
		((AggState *) fcinfo->context)->aggstrategy == AGG_PLAIN &&
		/* the SQL function reads a static of trigger.c and nothing of its fcinfo */
		DatumGetInt32(pg_trigger_depth(NULL)) == 0;
}

/*
 * Is this the first time in the current top-level statement that the
 * caller (its *last, a static, 0 at first) asks?  A final function in a
 * scalar subquery runs once per outer row: its signal is given once.
 */
static inline bool
nb_first_in_statement(TimestampTz *last)
{
	TimestampTz start = GetCurrentStatementStartTimestamp();

	if (*last == start)
		return false;
	*last = start;
	return true;
}

#endif
