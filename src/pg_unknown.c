/*
 * pg_unknown.c — nbc.unknown_features: rows scored that have no feature
 * the model knows, reported once per statement (see pg_unknown.h).
 *
 * The scoring functions count rows in two backend-wide counters
 * (nb_scored_rows); the executor and utility hooks below report them when
 * a top-level statement ends, in one WARNING, and set them to zero.  The
 * hooks follow pg_stat_statements: they chain to the hooks loaded before,
 * and keep the nesting level of executor runs and finishes and of utility
 * statements (restored on error by PG_FINALLY), so that
 *
 *   - a statement's rows are counted, whoever scores them: the statement,
 *     a function it calls (PL/pgSQL's simple expressions too, which run no
 *     executor of their own), SPI queries (nb_cross_validate's), triggers
 *     (in ExecutorFinish), or the planner folding a constant call;
 *   - only the outermost statement reports: a top-level query at its
 *     ExecutorEnd, a top-level utility statement (DO, CALL, EXPLAIN
 *     ANALYZE, CREATE TABLE AS, a cursor's FETCH) when it returns;
 *   - a statement that fails reports nothing: its error is what the user
 *     sees.  A (sub)transaction aborted at the top level (nesting 0) sets
 *     the counters to zero, and nothing is reported outside a transaction
 *     in progress.  Rows scored in a subtransaction that a function rolls
 *     back (a PL/pgSQL exception block) were scored all the same, and
 *     count.
 *
 * A parallel worker is a backend of its own: it counts its rows and
 * reports them when its part of the plan ends, and the leader relays the
 * warning to the client (with CONTEXT "parallel worker").  A parallel
 * query thus gives a warning per process that scored such rows, each with
 * its own counts; none is lost or counted twice.  (The leader cannot learn
 * its workers' counts otherwise: an extension loaded on demand has no
 * shared memory, and no part of the parallel query's own.)
 *
 * nbc is loaded by the first call of one of its functions, usually while
 * the planner simplifies the first query that scores (nb_scoring_support),
 * before that query runs: its hooks then see it whole.  Loaded inside a
 * portal's run instead (by a function's query, a DO block, LOAD), they
 * missed the start of the statements under way and cannot tell their end,
 * so until that transaction commits nothing is reported at the end of a
 * statement: what was counted is reported when it commits (right after
 * the statement, outside a transaction block).  A commit at the top level
 * also reports what no statement's end reported for any other reason (a
 * portal bound, with a constant call the planner scored, and never run),
 * so that no row counted goes unreported.
 *
 * Under "error" the first such row raises the error where it is scored;
 * under "ignore" no row is counted, so a function with SET
 * nbc.unknown_features = ignore leaves its rows out of its caller's count.
 */
#include "pg_unknown.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "tcop/pquery.h"
#include "tcop/utility.h"
#include "utils/guc.h"

int			nb_unknown_features = NB_UNKNOWN_WARNING;
NbScoredRows nb_scored_rows = {0, 0};

static const struct config_enum_entry unknown_features_options[] = {
	{"warning", NB_UNKNOWN_WARNING, false},
	{"error", NB_UNKNOWN_ERROR, false},
	{"ignore", NB_UNKNOWN_IGNORE, false},
	{NULL, 0, false}
};

/* executor runs and finishes and utility statements under way */
static int	nesting = 0;

/* loaded inside a portal's run: report at commit only (see above) */
static bool report_at_commit = false;

static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static void
forget_rows(void)
{
	nb_scored_rows.scored = 0;
	nb_scored_rows.unknown = 0;
}

void
nb_unknown_row_error(const NbDoc *doc)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("row has no feature the naive Bayes model knows"),
			 doc->unknown > 0 ?
			 errdetail("The model has learned none of its tokens, categorical values or keys.") :
			 errdetail("The row has no features."),
			 errhint("Make the features as for training (the same tokenizer, stemming and keys), "
					 "or set nbc.unknown_features to \"warning\" to score such rows.")));
}

/* The end of a top-level statement: its rows, in one warning. */
static void
report_rows(void)
{
	NbScoredRows rows = nb_scored_rows;
	char		share[32];

	forget_rows();
	if (rows.unknown == 0 || !IsTransactionState())
		return;
	snprintf(share, sizeof(share), "%.3g", 100.0 * (double) rows.unknown / (double) rows.scored);
	ereport(WARNING,
			(errmsg_plural("%lld of %lld row scored had no feature the model knows",
						   "%lld of %lld rows scored had no feature the model knows",
						   (unsigned long) rows.scored,
						   (long long) rows.unknown, (long long) rows.scored),
			 errdetail("That is %s%% of the rows scored: the model has learned none of their tokens, "
					   "categorical values or keys.", share),
			 errhint("Make the features as for training (the same tokenizer, stemming and keys); "
					 "nb_coverage shows the share of each row's features that the model knows. "
					 "Set nbc.unknown_features to \"ignore\" to score such rows silently.")));
}

#if PG_VERSION_NUM >= 180000
static void
unknown_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction, uint64 count)
#else
static void
unknown_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction, uint64 count,
					bool execute_once)
#endif
{
	nesting++;
	PG_TRY();
	{
#if PG_VERSION_NUM >= 180000
		if (prev_ExecutorRun)
			prev_ExecutorRun(queryDesc, direction, count);
		else
			standard_ExecutorRun(queryDesc, direction, count);
#else
		if (prev_ExecutorRun)
			prev_ExecutorRun(queryDesc, direction, count, execute_once);
		else
			standard_ExecutorRun(queryDesc, direction, count, execute_once);
#endif
	}
	PG_FINALLY();
	{
		nesting--;
	}
	PG_END_TRY();
}

static void
unknown_ExecutorFinish(QueryDesc *queryDesc)
{
	nesting++;
	PG_TRY();
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_FINALLY();
	{
		nesting--;
	}
	PG_END_TRY();
}

static void
unknown_ExecutorEnd(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	if (nesting == 0 && !report_at_commit)
		report_rows();
}

static void
unknown_ProcessUtility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					   ProcessUtilityContext context, ParamListInfo params,
					   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	nesting++;
	PG_TRY();
	{
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
								dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
									dest, qc);
	}
	PG_FINALLY();
	{
		nesting--;
	}
	PG_END_TRY();
	if (nesting == 0 && !report_at_commit)
		report_rows();
}

/*
 * At the top level: a commit reports what is left; an abort (the
 * statement failed) forgets it, as does the abort of a subtransaction
 * (ROLLBACK TO after a failed statement) unless the statements under way
 * are not known.
 */
static void
unknown_xact_callback(XactEvent event, void *arg)
{
	if (nesting > 0)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			report_at_commit = false;
			report_rows();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			report_at_commit = false;
			forget_rows();
			break;
		default:
			break;
	}
}

static void
unknown_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && nesting == 0 && !report_at_commit)
		forget_rows();
}

void
nb_unknown_init(void)
{
	DefineCustomEnumVariable("nbc.unknown_features",
							 "What to do with rows scored that have no feature the model knows.",
							 "warning: one warning with their count when the statement ends; "
							 "error: refuse the first; ignore: score them as they are.",
							 &nb_unknown_features,
							 NB_UNKNOWN_WARNING, unknown_features_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = unknown_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = unknown_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = unknown_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = unknown_ProcessUtility;
	RegisterXactCallback(unknown_xact_callback, NULL);
	RegisterSubXactCallback(unknown_subxact_callback, NULL);
	report_at_commit = ActivePortal != NULL;
}
