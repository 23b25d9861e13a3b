/*
 * pg_citus.c — the scoring calls Citus would feed a model row by row: for
 * count(DISTINCT nb_predict(m.model, ...)) Citus groups the workers' rows by
 * the model column and ships the model with every row to the coordinator
 * (src/README.md, Citus).  The coordinator's query is planned by PostgreSQL
 * like any other, its remote scan a function RTE of
 * citus_extradata_container, so the scoring functions' planner support sees
 * the model arrive as such a column inside a DISTINCT aggregate and refuses it.
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "pg_citus.h"

/* Is rte Citus's remote scan in the query its coordinator plans? */
static bool
is_citus_remote_scan(RangeTblEntry *rte)
{
	RangeTblFunction *rtfunc;
	char	   *name;

	if (rte->rtekind != RTE_FUNCTION || list_length(rte->functions) != 1)
		return false;
	rtfunc = linitial_node(RangeTblFunction, rte->functions);
	if (!IsA(rtfunc->funcexpr, FuncExpr))
		return false;
	name = get_func_name(((FuncExpr *) rtfunc->funcexpr)->funcid);
	return name != NULL && strcmp(name, "citus_extradata_container") == 0;
}

/* Does node hold an aggregate with DISTINCT whose arguments name var? */
static bool
distinct_aggregate_of(Node *node, Var *var)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref) && ((Aggref *) node)->aggdistinct != NIL &&
		list_member(pull_var_clause((Node *) ((Aggref *) node)->args,
									PVC_RECURSE_PLACEHOLDERS), var))
		return true;
	return expression_tree_walker(node, distinct_aggregate_of, var);
}

void
nb_refuse_citus_distinct_model(Node *model, PlannerInfo *root, Oid fn)
{
	Var		   *var = (Var *) model;
	char	   *name;

	if (root == NULL || !IsA(model, Var) || var->varlevelsup != 0 ||
		var->varno < 1 || var->varno > (int) list_length(root->parse->rtable) ||
		!is_citus_remote_scan(rt_fetch(var->varno, root->parse->rtable)))
		return;
	if (!distinct_aggregate_of((Node *) root->parse->targetList, var) &&
		!distinct_aggregate_of(root->parse->havingQual, var))
		return;
	name = get_func_name(fn);
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s inside an aggregate with DISTINCT cannot read its model from a distributed query", name),
			 errdetail("Citus groups the workers' rows by the model column and sends the model with every row to the coordinator."),
			 errhint("Count the rows of a SELECT DISTINCT, which runs on the workers: SELECT count(*) FROM (SELECT DISTINCT %s(m.model, ...) FROM ...) AS s.", name)));
}
