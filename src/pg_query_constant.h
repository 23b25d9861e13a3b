/*
 * pg_query_constant.h — scoring calls whose model is proved, at plan time,
 * the same value on every row of the query (see pg_query_constant.c).
 */
#ifndef PG_QUERY_CONSTANT_H
#define PG_QUERY_CONSTANT_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/nodes.h"

/*
 * Is expr, a call's model argument in the plan, marked by the planner as
 * the same value for the whole execution of the plan?  (Looks up the
 * function expr calls, in mcxt.)
 */
bool		nb_expr_is_query_constant(Node *expr, MemoryContext mcxt);

/*
 * Is arg, the model argument of an aggregate whose transition function is
 * called with fcinfo, an InitPlan's value that the plan sets once?
 */
bool		nb_agg_arg_is_query_constant(FunctionCallInfo fcinfo, Node *arg);

#endif
