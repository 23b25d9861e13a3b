/*
 * pg_query_constant.c — proving at plan time that a scoring call's model is
 * the same value on every row of its query, so that the call can skip
 * comparing the model's bytes row after row (see pg_prepared.c).  The
 * shapes proved and why each holds: src/README.md, "Prepared models".
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "pg_citus.h"
#include "pg_label.h"
#include "pg_query_constant.h"
#include "pg_train.h"

PG_FUNCTION_INFO_V1(nb_query_constant);
PG_FUNCTION_INFO_V1(nb_query_constant_support);
PG_FUNCTION_INFO_V1(nb_scoring_support);

/* How deep a chain of common table expressions the proof follows. */
#define MAX_CTE_DEPTH 16

typedef struct OuterRefs
{
	PlannerInfo *root;			/* the level being proved, NULL if unknown */
	int			depth;			/* query levels below it */
	int			cte_depth;		/* CTEs followed to get here */
} OuterRefs;

static bool query_is_uncorrelated(Query *query, PlannerInfo *root, int cte_depth);

/* The CTE named at the level of root, or NULL. */
static CommonTableExpr *
find_cte(PlannerInfo *root, const char *name)
{
	ListCell   *lc;

	if (root == NULL)
		return NULL;
	foreach(lc, root->parse->cteList)
	{
		CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

		if (strcmp(cte->ctename, name) == 0)
			return cte;
	}
	return NULL;
}

/* Is a CTE of the level being proved itself evaluated once, from nothing outside? */
static bool
cte_is_uncorrelated(CommonTableExpr *cte, PlannerInfo *root, int cte_depth)
{
	return cte != NULL && !cte->cterecursive && cte_depth < MAX_CTE_DEPTH &&
		IsA(cte->ctequery, Query) &&
		((Query *) cte->ctequery)->commandType == CMD_SELECT &&
		query_is_uncorrelated((Query *) cte->ctequery, root, cte_depth + 1);
}

/* Does node refer to the level being proved or one above it? */
static bool
outer_refs_walker(Node *node, OuterRefs *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varlevelsup >= (Index) ctx->depth;
	if (IsA(node, PlaceHolderVar))
		return ((PlaceHolderVar *) node)->phlevelsup >= (Index) ctx->depth;
	if (IsA(node, Aggref) && ((Aggref *) node)->agglevelsup >= (Index) ctx->depth)
		return true;
	if (IsA(node, GroupingFunc) && ((GroupingFunc *) node)->agglevelsup >= (Index) ctx->depth)
		return true;
	/* executor parameters carry outside values; a statement's own ($1) are fixed */
	if (IsA(node, Param))
		return ((Param *) node)->paramkind != PARAM_EXTERN;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind != RTE_CTE || rte->ctelevelsup < (Index) ctx->depth)
			return false;
		/* a CTE of the level being proved may be proved too; higher ones are not */
		if (rte->ctelevelsup > (Index) ctx->depth)
			return true;
		return !cte_is_uncorrelated(find_cte(ctx->root, rte->ctename), ctx->root,
									ctx->cte_depth);
	}
	if (IsA(node, Query))
	{
		bool		found;

		ctx->depth++;
		found = query_tree_walker((Query *) node, outer_refs_walker, ctx,
								  QTW_EXAMINE_RTES_BEFORE);
		ctx->depth--;
		return found;
	}
	return expression_tree_walker(node, outer_refs_walker, ctx);
}

/*
 * Does query, a subquery or CTE of the level of root, depend on nothing
 * outside itself but CTEs of that level proved the same way?
 */
static bool
query_is_uncorrelated(Query *query, PlannerInfo *root, int cte_depth)
{
	OuterRefs	ctx = {root, 0, cte_depth};

	return !outer_refs_walker((Node *) query, &ctx);
}

/* Does query return at most one row (an aggregate without GROUP BY)? */
static bool
query_returns_one_row(const Query *query)
{
	return query->commandType == CMD_SELECT && query->setOperations == NULL &&
		(query->hasAggs || query->havingQual != NULL) &&
		query->groupClause == NIL && query->groupingSets == NIL &&
		!query->hasTargetSRFs;
}

/*
 * Is every support function of the aggregate aggfnoid immutable, given the
 * type of its first argument (InvalidOid: none)?  An aggregate's own entry
 * in pg_proc is always IMMUTABLE, so contain_mutable_functions passes it
 * whatever its functions are.  A training aggregate's transition function
 * depends on the session only through the text of its label, the first
 * argument.
 */
static bool
aggregate_is_immutable(Oid aggfnoid, Oid label_type)
{
	HeapTuple	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Form_pg_aggregate agg;
	Oid			fns[8];

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggfnoid);
	agg = (Form_pg_aggregate) GETSTRUCT(tuple);
	/* those of a moving frame too: an aggregate used as a window function runs them */
	fns[0] = agg->aggtransfn;
	fns[1] = agg->aggfinalfn;
	fns[2] = agg->aggcombinefn;
	fns[3] = agg->aggserialfn;
	fns[4] = agg->aggdeserialfn;
	fns[5] = agg->aggmtransfn;
	fns[6] = agg->aggminvtransfn;
	fns[7] = agg->aggmfinalfn;
	ReleaseSysCache(tuple);

	for (int i = 0; i < lengthof(fns); i++)
		if (OidIsValid(fns[i]) && func_volatile(fns[i]) != PROVOLATILE_IMMUTABLE &&
			!(i == 0 && nb_is_train_transfn(fns[i]) && OidIsValid(label_type) &&
			  nb_label_text_is_fixed(label_type)))
			return false;
	return true;
}

/*
 * Can evaluating query again give other rows, the same rows in another
 * order or, from the same rows, other values?
 */
static bool
may_differ_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		List	   *args = ((Aggref *) node)->args;

		if (!aggregate_is_immutable(((Aggref *) node)->aggfnoid,
									args == NIL ? InvalidOid :
									exprType((Node *) linitial_node(TargetEntry, args)->expr)))
			return true;
	}
	if (IsA(node, WindowFunc) && ((WindowFunc *) node)->winagg)
	{
		List	   *args = ((WindowFunc *) node)->args;

		if (!aggregate_is_immutable(((WindowFunc *) node)->winfnoid,
									args == NIL ? InvalidOid : exprType(linitial(args))))
			return true;
	}
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		return rte->tablesample != NULL ||
			(rte->rtekind == RTE_RELATION && rte->relkind == RELKIND_FOREIGN_TABLE);
	}
	if (IsA(node, Query))
	{
		Query	   *query = (Query *) node;

		return query->rowMarks != NIL ||
			query_tree_walker(query, may_differ_walker, context, QTW_EXAMINE_RTES_BEFORE);
	}
	return expression_tree_walker(node, may_differ_walker, context);
}

/*
 * Does evaluating query again give the same bytes?  Not if anything in it
 * depends on more than the rows it reads: a volatile function, and a STABLE
 * one too, as the session's state can change between two evaluations (a
 * cursor's FETCH after SET TimeZone, SET ROLE, a set_config() in the outer
 * query).
 */
static bool
query_is_repeatable(Query *query)
{
	return !contain_mutable_functions((Node *) query) &&
		!may_differ_walker((Node *) query, NULL);
}

/*
 * The OID of nbc's function or aggregate name(args), in the schema of nbc's
 * function fn (the extension is relocatable), or InvalidOid.
 */
static Oid
nbc_function(Oid fn, const char *name, int nargs, const Oid *args)
{
	List	   *qualified = list_make2(makeString(get_namespace_name(get_func_namespace(fn))),
									   makeString(pstrdup(name)));

	return LookupFuncName(qualified, nargs, args, true);
}

/*
 * Is expr nb_train over text[], tsvector or text rows (the default
 * tokenizer) without weights (nbc's, in the schema of the function fn)?
 * Its counts are whole numbers of occurrences and documents, which add up
 * exactly in any order, so every evaluation over the same rows gives the
 * same bytes, however parallel workers share the rows out and return their
 * partial models.
 */
static bool
is_unweighted_text_training(Node *expr, Oid fn)
{
	/* the label text or of another type (nb_train's two forms) */
	static const Oid labels[] = {TEXTOID, ANYNONARRAYOID};
	static const Oid features[] = {TEXTARRAYOID, TSVECTOROID, TEXTOID};

	if (!IsA(expr, Aggref) || list_length(((Aggref *) expr)->args) != 2)
		return false;
	for (int i = 0; i < lengthof(labels); i++)
		for (int j = 0; j < lengthof(features); j++)
		{
			Oid			args[2] = {labels[i], features[j]};

			if (((Aggref *) expr)->aggfnoid == nbc_function(fn, "nb_train", 2, args))
				return true;
		}
	return false;
}

/*
 * Is expr, an argument at the level of root of a call of fn, the same value
 * for the whole plan?  *serial: only where no other process evaluates it.
 */
static bool
arg_is_query_constant(Node *expr, PlannerInfo *root, Oid fn, bool *serial)
{
	*serial = false;
	if (IsA(expr, SubLink))
	{
		SubLink    *sublink = (SubLink *) expr;

		return sublink->subLinkType == EXPR_SUBLINK &&
			query_is_uncorrelated(castNode(Query, sublink->subselect), root, 0);
	}
	if (IsA(expr, Var) && root != NULL)
	{
		Var		   *var = (Var *) expr;
		RangeTblEntry *rte;
		CommonTableExpr *cte;

		if (var->varlevelsup != 0 || var->varno < 1 ||
			var->varno > (int) list_length(root->parse->rtable))
			return false;
		rte = rt_fetch(var->varno, root->parse->rtable);
		if (rte->rtekind == RTE_SUBQUERY)
		{
			TargetEntry *te = get_tle_by_resno(rte->subquery->targetList, var->varattno);

			/* a model every evaluation makes to the same bytes is constant in any plan */
			*serial = te == NULL || !is_unweighted_text_training((Node *) te->expr, fn);
			return !rte->lateral && !rte->inh &&
				query_returns_one_row(rte->subquery) &&
				query_is_uncorrelated(rte->subquery, root, 0) &&
				query_is_repeatable(rte->subquery);
		}
		if (rte->rtekind != RTE_CTE || rte->ctelevelsup != 0 || rte->self_reference)
			return false;
		cte = find_cte(root, rte->ctename);
		return cte_is_uncorrelated(cte, root, 0) &&
			query_returns_one_row((Query *) cte->ctequery);
	}
	return false;
}

/*
 * The planner support function of the scoring functions: their model
 * argument (the first) wrapped in nbc_query_constant when it is proved the
 * same value for the whole plan.
 */
Datum
nb_scoring_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestSimplify *req;
	FuncExpr   *call;
	Node	   *model;
	Oid			mark;
	Oid			args[2] = {InvalidOid, BOOLOID};
	bool		serial;
	FuncExpr   *wrapped;
	FuncExpr   *result;

	if (!IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestSimplify *) rawreq;
	call = req->fcall;
	if (list_length(call->args) < 1)
		PG_RETURN_POINTER(NULL);
	model = linitial(call->args);
	nb_refuse_citus_distinct_model(model, req->root, call->funcid);
	if (!arg_is_query_constant(model, req->root, call->funcid, &serial))
		PG_RETURN_POINTER(NULL);
	args[0] = exprType(model);
	mark = nbc_function(call->funcid, "nbc_query_constant", 2, args);
	if (!OidIsValid(mark))
		PG_RETURN_POINTER(NULL);

	wrapped = makeFuncExpr(mark, exprType(model),
						   list_make2(model, makeBoolConst(serial, false)),
						   InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	wrapped->location = exprLocation(model);
	result = (FuncExpr *) copyObject(call);
	linitial(result->args) = wrapped;
	PG_RETURN_POINTER(result);
}

/* nbc_query_constant(model, serial): the model (its C symbol is the name it had before 0.9.0). */
Datum
nb_query_constant(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}

/*
 * Its support function: a call the planner simplifies is one a user wrote
 * (the planner's own come after simplification), so it goes, leaving its
 * argument.
 */
Datum
nb_query_constant_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestSimplify *req;

	if (!IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestSimplify *) rawreq;
	PG_RETURN_POINTER(linitial(req->fcall->args));
}

bool
nb_expr_is_query_constant(Node *expr, MemoryContext mcxt)
{
	FuncExpr   *call;
	Const	   *serial;
	FmgrInfo	finfo;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return false;
	call = (FuncExpr *) expr;
	if (list_length(call->args) != 2 || !IsA(lsecond(call->args), Const))
		return false;
	/* recognized by the C function it runs, which nobody else can bind to */
	fmgr_info_cxt(call->funcid, &finfo, mcxt);
	if (finfo.fn_addr != nb_query_constant)
		return false;
	serial = lsecond_node(Const, call->args);
	if (serial->constisnull || !DatumGetBool(serial->constvalue))
		return true;
	/* the leader of a parallel query gets values from its workers too */
	return !IsInParallelMode() || IsParallelWorker();
}

/* The InitPlan of plan or below it that sets the parameter paramid, or NULL. */
static SubPlan *
find_initplan(Plan *plan, int paramid)
{
	List	   *children = NIL;
	ListCell   *lc;
	SubPlan    *found;

	if (plan == NULL)
		return NULL;
	check_stack_depth();
	foreach(lc, plan->initPlan)
	{
		SubPlan    *sp = lfirst_node(SubPlan, lc);

		if (list_member_int(sp->setParam, paramid))
			return sp;
	}
	/* the nodes whose children are not (only) lefttree and righttree */
	switch (nodeTag(plan))
	{
		case T_Append:
			children = ((Append *) plan)->appendplans;
			break;
		case T_MergeAppend:
			children = ((MergeAppend *) plan)->mergeplans;
			break;
		case T_BitmapAnd:
			children = ((BitmapAnd *) plan)->bitmapplans;
			break;
		case T_BitmapOr:
			children = ((BitmapOr *) plan)->bitmapplans;
			break;
		case T_SubqueryScan:
			children = list_make1(((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			children = ((CustomScan *) plan)->custom_plans;
			break;
		default:
			break;
	}
	foreach(lc, children)
		if ((found = find_initplan(lfirst(lc), paramid)) != NULL)
			return found;
	if ((found = find_initplan(plan->lefttree, paramid)) != NULL)
		return found;
	return find_initplan(plan->righttree, paramid);
}

bool
nb_agg_arg_is_query_constant(FunctionCallInfo fcinfo, Node *arg)
{
	PlannedStmt *stmt;
	Param	   *param;
	SubPlan    *sp = NULL;
	ListCell   *lc;

	if (arg == NULL || !IsA(arg, Param) || fcinfo->context == NULL ||
		!IsA(fcinfo->context, AggState))
		return false;
	param = (Param *) arg;
	if (param->paramkind != PARAM_EXEC)
		return false;
	stmt = ((AggState *) fcinfo->context)->ss.ps.state->es_plannedstmt;
	sp = find_initplan(stmt->planTree, param->paramid);
	foreach(lc, stmt->subplans)
		if (sp == NULL)
			sp = find_initplan(lfirst(lc), param->paramid);

	/*
	 * Not found (a node the search does not know, a parallel worker's part
	 * of the plan): not proved.  Found: an InitPlan depending on no
	 * parameter from outside is run at most once per execution of the plan.
	 */
	return sp != NULL && sp->subLinkType == EXPR_SUBLINK && sp->parParam == NIL &&
		sp->plan_id >= 1 && sp->plan_id <= list_length(stmt->subplans) &&
		bms_is_empty(((Plan *) list_nth(stmt->subplans, sp->plan_id - 1))->extParam);
}
