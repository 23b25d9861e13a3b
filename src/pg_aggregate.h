/*
 * pg_aggregate.h — the memory context of an aggregate's support function.
 *
 * CREATE AGGREGATE needs its support functions to be SQL-callable, so a
 * direct call of one is a user's error, not an internal one.
 */
#ifndef NBC_PG_AGGREGATE_H
#define NBC_PG_AGGREGATE_H			/* not PG_AGGREGATE_H, catalog/pg_aggregate.h's */

#include "postgres.h"

#include "fmgr.h"

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

#endif
