/*
 * pg_live.c — live models: opening one, the queries that train and merge
 * it, and reading it (README "Live models"; the trigger that records each
 * statement's change and the folds are in pg_live_fold.c, the SQL functions
 * that create and drop live models in the extension's script).
 *
 * A live model is a table of its own: its row of id 0 holds the base model
 * and the settings (source, tokenizer, fold_after, the fold marks, the
 * prefix of its triggers' names), every other row the delta of one statement
 * that changed the source: the model of the rows it inserted (added) and of
 * the rows it deleted (removed), or a reset for a TRUNCATE.  Its value is
 *
 *     nb_subtract(nb_merge(base, added...), nb_merge(removed...))
 *
 * over the deltas after the latest reset (and without the base if there is
 * one).  Deltas are rows, inserted in the writer's transaction, so every
 * snapshot sees exactly the deltas of the statements it sees, and no two
 * writers touch the same row.  Folding moves the deltas a snapshot sees into
 * the base in one statement (the deltas it deletes are those it merged);
 * folders take the base row's lock, and the automatic fold skips it when
 * another has it, so nobody waits.
 *
 * Floating point.  Merging in another order than nb_train adds rows can
 * overflow where the table's sum does not (two rows of weight 1e308 in two
 * statements, one of them deleted later), or leave a count that the
 * subtraction refuses.  Such a data exception never fails a writer: the
 * automatic fold then trains the base from the source instead, and gives up
 * quietly if that fails too (the table's own sum overflows); nb_live then
 * trains from the source as well, which reports the overflow as nb_train
 * does, until the rows make the sum finite again.
 *
 * Security.  Privileges are the table's: SELECT reads the live model,
 * UPDATE and DELETE fold it, its owner drops it.  Writers to the source need
 * none: the trigger trains the statement's rows and writes the delta as the
 * table's owner, under SECURITY_RESTRICTED_OPERATION; it runs no user code
 * (the label types nb_live_create accepts convert to text by built-in casts
 * that no setting changes).  Every query runs with search_path pg_catalog,
 * pg_temp, and names the extension's functions with their schema (found at
 * run time: the extension is relocatable) and the exact types of the
 * signature it means.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rls.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "pg_label.h"
#include "pg_live.h"
#include "pg_model.h"

PG_FUNCTION_INFO_V1(nbc_live_train);
PG_FUNCTION_INFO_V1(nbc_live_read);

/*
 * Start work on live models from a function of the extension: find the
 * schema, set a safe search_path until live_end.
 */
void
live_begin(LiveContext *c, FunctionCallInfo fcinfo)
{
	c->nsp_oid = get_func_namespace(fcinfo->flinfo->fn_oid);
	c->nsp = quote_identifier(get_namespace_name(c->nsp_oid));
	c->guc_level = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	/*
	 * Every query on a live model's table reads its rows past an id, through
	 * the primary key: a plan kept from when the deltas were few (or their
	 * statistics unknown) must not scan the table, whose dead deltas pile up
	 * between vacuums as folds delete them.
	 */
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	GetUserIdAndSecContext(&c->save_user, &c->save_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

void
live_end(LiveContext *c)
{
	SPI_finish();
	AtEOXact_GUC(true, c->guc_level);
}

/* Run what follows as role (the table's owner), in a restricted operation. */
void
live_as_role(LiveContext *c, Oid role)
{
	SetUserIdAndSecContext(role, c->save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

void
live_as_caller(LiveContext *c)
{
	SetUserIdAndSecContext(c->save_user, c->save_sec);
}

Oid
live_model_type(LiveContext *c)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("nb_model"),
						   ObjectIdGetDatum(c->nsp_oid));
}

Oid
live_rel_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Plans kept for the backend's life, found by their query's text (which
 * names everything they depend on: the schema, the table, the columns, and
 * for the trigger's queries over transition tables the source's oid and
 * number of columns, see train_query): a single-row INSERT then pays for no
 * parse and no planning.  PostgreSQL replans them when what they read
 * changes.
 */
#define LIVE_PLANS 16

typedef struct LivePlan
{
	char	   *sql;
	SPIPlanPtr	plan;
} LivePlan;

static LivePlan live_plans[LIVE_PLANS];

static int	live_plans_next;

static SPIPlanPtr
live_plan(const char *sql, int nargs, Oid *types)
{
	LivePlan   *e;
	SPIPlanPtr	plan;

	for (int i = 0; i < LIVE_PLANS; i++)
		if (live_plans[i].sql != NULL && strcmp(live_plans[i].sql, sql) == 0)
			return live_plans[i].plan;
	plan = SPI_prepare_cursor(sql, nargs, types, CURSOR_OPT_GENERIC_PLAN);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed (%d): %s", SPI_result, sql);
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	e = &live_plans[live_plans_next];
	live_plans_next = (live_plans_next + 1) % LIVE_PLANS;
	if (e->plan != NULL)
		SPI_freeplan(e->plan);
	if (e->sql != NULL)
		pfree(e->sql);
	e->sql = MemoryContextStrdup(TopMemoryContext, sql);
	e->plan = plan;
	return plan;
}

/*
 * Run a query with parameters; the result is in SPI_tuptable.  A writing
 * query (and a fold's, which must see what committed before it got its
 * lock) runs in a new snapshot; a reading one, read_only, in the caller's.
 */
void
live_run_in(bool read_only, const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
	   int expect)
{
	int			rc = SPI_execute_plan(live_plan(sql, nargs, types), values, nulls, read_only, 0);

	if (rc != expect)
		elog(ERROR, "live model query failed (%d): %s", rc, sql);
}

void
live_run(const char *sql, int expect)
{
	live_run_in(false, sql, 0, NULL, NULL, NULL, expect);
}

Datum
live_result(int col, bool *isnull)
{
	if (SPI_processed == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, isnull);
}

/* Is relation state a live model's table (a column "triggers" beside the models)? */
bool
live_is_table(Oid state)
{
	return get_rel_relkind(state) == RELKIND_RELATION &&
		get_attnum(state, "triggers") != InvalidAttrNumber &&
		get_attnum(state, "added") != InvalidAttrNumber;
}

/* The live model named name, found as a table is (the caller's search_path). */
Oid
live_lookup(text *name)
{
	RangeVar   *rv = makeRangeVarFromNameList(textToQualifiedNameList(name));
	Oid			state = RangeVarGetRelid(rv, AccessShareLock, true);

	if (!OidIsValid(state) || !live_is_table(state))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("live model \"%s\" does not exist",
						nb_cut_str(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name))),
				 errhint("nb_lives lists the live models you can read.")));
	return state;
}

/*
 * The settings of live model state from its base row, read as the current
 * user.  m->owner and m->table are set first.
 */
void
live_open(LiveModel *m, Oid state)
{
	StringInfoData q;
	bool		isnull;
	Datum		d;

	m->state = state;
	m->table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(state)),
										  get_rel_name(state));
	m->owner = live_rel_owner(state);
	initStringInfo(&q);
	appendStringInfo(&q, "SELECT source::oid, tokenizer::text, fold_after, folded_through, triggers "
					 "FROM %s WHERE id = 0", m->table);
	live_run(q.data, SPI_OK_SELECT);
	d = live_result(5, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("live model \"%s\" has lost its base row", get_rel_name(state)),
				 errhint("Drop the live model with nb_live_drop and create it again.")));
	m->triggers = TextDatumGetCString(d);
	m->source = DatumGetObjectId(live_result(1, &isnull));
	d = live_result(2, &isnull);
	m->tokenizer = isnull ? NULL : TextDatumGetCString(d);
	m->fold_after = DatumGetInt32(live_result(3, &isnull));
	m->folded_through = DatumGetInt64(live_result(4, &isnull));
}

/*
 * The columns of a live model: those of its source's trigger
 * <triggers>columns (UPDATE OF label, features [, weight]), which makes
 * them survive renames and dumps and keeps them from being dropped or
 * changed in type while the live model exists.
 */
static int
live_columns(Relation rel, const LiveModel *m, const char **names, Oid *feature_type)
{
	TriggerDesc *td = rel->trigdesc;
	char	   *tgname = psprintf("%scolumns", m->triggers);

	for (int i = 0; td != NULL && i < td->numtriggers; i++)
	{
		Trigger    *t = &td->triggers[i];

		if (strcmp(t->tgname, tgname) != 0 || t->tgnattr < 2 || t->tgnattr > 3)
			continue;
		for (int k = 0; k < t->tgnattr; k++)
			names[k] = quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel),
															  t->tgattr[k] - 1)->attname));
		*feature_type = getBaseType(TupleDescAttr(RelationGetDescr(rel), t->tgattr[1] - 1)->atttypid);
		return t->tgnattr;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("live model \"%s\" has lost its columns on table \"%s\"", get_rel_name(m->state),
					RelationGetRelationName(rel)),
			 errdetail("Its trigger \"%s\" was dropped.", tgname),
			 errhint("Drop the live model with nb_live_drop and create it again.")));
	return 0;
}

/* The features argument's exact type in the nb_train signature the trigger calls. */
static const char *
features_type_name(Oid type)
{
	switch (type)
	{
		case TEXTOID:
			return "pg_catalog.text";
		case TEXTARRAYOID:
			return "pg_catalog.text[]";
		case TSVECTOROID:
			return "pg_catalog.tsvector";
		case JSONBOID:
			return "pg_catalog.jsonb";
		case FLOAT8ARRAYOID:
			return "pg_catalog.float8[]";
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("features of a live model cannot be of type %s", format_type_be(type))));
	return NULL;
}

/*
 * The query that trains the model of the rows of relation "from": every
 * argument cast to the type of the one signature of nb_train it means, so
 * that no other function of that name can be chosen; with the count of the
 * rows nb_train skips for a NULL label (features and weight as it counts
 * them), which nbc_live_delta keeps when nb_train gives NULL.
 */
static char *
train_query(LiveContext *c, const LiveModel *m, Relation rel, const char *from)
{
	const char *col[3];
	Oid			feature_type;
	int			n = live_columns(rel, m, col, &feature_type);
	StringInfoData q;

	initStringInfo(&q);
	/* the plan is kept (live_plan): the text says which relation's transition table it reads */
	appendStringInfo(&q, "/* source %u of %d columns */ SELECT %s.nbc_live_delta(%s.nb_train(%s::pg_catalog.text, %s::%s",
					 RelationGetRelid(rel), RelationGetDescr(rel)->natts, c->nsp, c->nsp, col[0], col[1],
					 features_type_name(feature_type));
	if (n == 3)
		appendStringInfo(&q, ", %s::pg_catalog.float8", col[2]);
	if (feature_type == TEXTOID && (n == 3 || m->tokenizer != NULL))
		appendStringInfo(&q, ", %s::pg_catalog.jsonb",
						 m->tokenizer != NULL ? quote_literal_cstr(m->tokenizer) : "NULL");
	appendStringInfo(&q, "), count(*) FILTER (WHERE %s IS NULL AND %s IS NOT NULL", col[0], col[1]);
	if (n == 3)
		appendStringInfo(&q, " AND %s::pg_catalog.float8 > 0", col[2]);
	appendStringInfo(&q, ")) FROM %s", from);
	return q.data;
}

/* The model of the rows of a relation, or NULL, in the current memory context. */
Datum
live_train(LiveContext *c, const LiveModel *m, Relation rel, const char *from, bool *isnull)
{
	Datum		model;

	live_run(train_query(c, m, rel, from), SPI_OK_SELECT);
	model = live_result(1, isnull);
	return *isnull ? (Datum) 0 : SPI_datumTransfer(model, false, -1);
}

/*
 * Whether the live model's owner reads every row of its source: not under
 * row-level security (FORCE ROW LEVEL SECURITY, enabled after the live
 * model was made), which would make a model trained from the source that
 * of some rows only.
 */
bool
live_owner_reads_all(const LiveModel *m)
{
	return check_enable_rls(m->source, m->owner, true) != RLS_ENABLED;
}

/* The query of the model of the source table, as a scalar subquery. */
char *
live_source_query(LiveContext *c, const LiveModel *m)
{
	Relation	rel = relation_open(m->source, AccessShareLock);
	char	   *q = train_query(c, m, rel,
								quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
														   RelationGetRelationName(rel)));

	relation_close(rel, NoLock);
	return psprintf("(%s)", q);
}

/*
 * Whether a live model has a weight column (its columns trigger names
 * three): its deltas' sums are then checked (nbc_live_checked), since
 * fractional weights can cancel beyond double precision.  Found once per
 * fold or read, before its queries are made: it opens the source.
 */
void
live_weigh(LiveModel *m)
{
	Relation	rel = relation_open(m->source, AccessShareLock);
	const char *col[3];
	Oid			feature_type;

	m->weighted = live_columns(rel, m, col, &feature_type) == 3;
	relation_close(rel, NoLock);
}

/*
 * The live model given the CTE "d" of its deltas (id, reset, added, removed)
 * and an expression of its base: its WITH part, then rest, then the model
 * (reading: a row of the model and whether its class weights are exact).
 * The deltas are merged in a fixed order (the same value, to the last bit,
 * for every reader) and the base last: nb_merge merges NB_MERGE_FANIN inputs
 * at a time, so the small deltas are merged among themselves first and the
 * base, the large input, is read and copied once.  A weighted live model's
 * class weights are checked against their exact sums (nb_class_sums.h): a
 * fold fails on a mismatch (and trains from the source), a read says so.
 */
void
live_model_query(StringInfo q, const LiveModel *m, const char *nsp, const char *deltas, const char *base,
			const char *rest, bool reading)
{
	const char *after_reset = "FROM d, r WHERE d.id > COALESCE(r.at, 0)";
	char	   *check = NULL;
	const char *model;

	if (m->weighted)
		check = psprintf("x.model, (SELECT (%1$s) FROM r WHERE r.at IS NULL), "
						 "(SELECT array_agg(d.added ORDER BY d.id) %2$s), "
						 "(SELECT array_agg(d.removed ORDER BY d.id) %2$s)", base, after_reset);
	if (reading)
		model = check == NULL ? "SELECT x.model, true FROM x" :
			psprintf("SELECT x.model, %s.nbc_live_exact(%s) FROM x", nsp, check);
	else
		model = check == NULL ? "(SELECT x.model FROM x)" :
			psprintf("(SELECT %s.nbc_live_checked(%s) FROM x)", nsp, check);
	appendStringInfo(q,
					 "WITH d AS (%2$s), r AS (SELECT max(id) AS at FROM d WHERE reset), "
					 "x AS MATERIALIZED (SELECT %1$s.nb_subtract("
					 "(SELECT %1$s.nb_merge(m ORDER BY k DESC) FROM "
					 "(SELECT 0::bigint AS k, (%3$s) AS m FROM r WHERE r.at IS NULL "
					 "UNION ALL SELECT d.id, d.added %4$s) x), "
					 "(SELECT %1$s.nb_merge(d.removed ORDER BY d.id) %4$s)) AS model) %5$s %6$s",
					 nsp, deltas, base, after_reset, rest, model);
}

/*
 * A fold whose numbers fail (a data exception: an overflow, a count the
 * subtraction refuses) or whose model passes the size limit: the kinds of
 * error that the deltas' order causes, and that training from the source
 * may not meet.  Any other error (a cancel, a lost connection) is not
 * caught.
 */
static bool
fold_may_retry(int sqlerrcode)
{
	return ERRCODE_TO_CATEGORY(sqlerrcode) == ERRCODE_DATA_EXCEPTION ||
		ERRCODE_TO_CATEGORY(sqlerrcode) == ERRCODE_PROGRAM_LIMIT_EXCEEDED;
}

/*
 * Run step in a subtransaction: true if it succeeded; false, with all it
 * did undone, if it failed with an error fold_may_retry accepts.
 */
bool
live_try_step(LiveStep step, LiveContext *c, const LiveModel *m, void *out)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		step(c, m, out);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (!fold_may_retry(e->sqlerrcode))
			ReThrowError(e);
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return ok;
}

/*
 * A live model's source must still be the table it was made over, and no
 * row security may hide some of its rows from the caller: the live model
 * counts them all.
 */
static void
check_source(const LiveModel *m)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(m->source));
	const char *name = get_rel_name(m->state);
	bool		partition;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the source table of live model \"%s\" was dropped", name),
				 errhint("Drop the live model with nb_live_drop.")));
	partition = ((Form_pg_class) GETSTRUCT(tup))->relispartition;
	ReleaseSysCache(tup);
	if (partition || has_superclass(m->source) ||
		find_inheritance_children(m->source, AccessShareLock) != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("live model \"%s\" no longer follows table \"%s\"", name, get_rel_name(m->source)),
				 errdetail("The table became a partition, or has inheritance children or parents, whose rows its triggers do not all see."),
				 errhint("Drop the live model with nb_live_drop.")));
	if (check_enable_rls(m->source, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot read live model \"%s\" under row-level security of table \"%s\"",
						name, get_rel_name(m->source)),
				 errdetail("The live model counts every row of the table, which its policies hide from you in part.")));
}

/*
 * The live model this backend read last, and the version of its rows it was
 * computed from: the base row's (ctid, xmin), which no two versions share,
 * and the ids of the deltas, which are never updated.  A snapshot that sees
 * the same rows has the same model: nb_live then costs a look at the rows
 * and a copy, as reading a stored model does (and the prepared-model cache
 * finds the model by its bytes).  One model at a time: a backend holds no
 * more than the model it reads.
 */
static MemoryContext live_cache_cxt;

static Oid	live_cache_state;

static char *live_cache_version;

static struct varlena *live_cache_model;	/* NULL: the model of no rows */

static Datum
cached_model(void)
{
	struct varlena *copy = palloc(VARSIZE(live_cache_model));

	memcpy(copy, live_cache_model, VARSIZE(live_cache_model));
	return PointerGetDatum(copy);
}

static void
cache_model(Oid state, const char *version, Datum model, bool isnull)
{
	if (live_cache_cxt == NULL)
		live_cache_cxt = AllocSetContextCreate(TopMemoryContext, "nbc live model", ALLOCSET_DEFAULT_SIZES);
	MemoryContextReset(live_cache_cxt);
	live_cache_model = NULL;
	if (!isnull)
	{
		MemoryContext old = MemoryContextSwitchTo(live_cache_cxt);

		live_cache_model = PG_DETOAST_DATUM_COPY(model);
		MemoryContextSwitchTo(old);
	}
	live_cache_state = state;
	live_cache_version = MemoryContextStrdup(live_cache_cxt, version);
}

/*
 * The model a read computed (isnull for the model of no rows), and whether
 * its class weights are exact.
 */
typedef struct LiveRead
{
	Datum		model;
	bool		isnull;
	bool		exact;
} LiveRead;

/* The live model from its base and deltas, in the caller's snapshot. */
static void
read_merged(LiveContext *c, const LiveModel *m, void *out)
{
	LiveRead   *r = out;
	StringInfoData q;
	Datum		model;
	bool		isnull;

	initStringInfo(&q);
	live_model_query(&q, m, c->nsp, psprintf("SELECT id, reset, added, removed FROM %s WHERE id > 0", m->table),
				psprintf("SELECT added FROM %s WHERE id = 0", m->table), "", true);
	live_run_in(true, q.data, 0, NULL, NULL, NULL, SPI_OK_SELECT);
	model = live_result(1, &r->isnull);
	r->model = r->isnull ? (Datum) 0 : SPI_datumTransfer(model, false, -1);
	r->exact = DatumGetBool(live_result(2, &isnull));
}

/* The live model trained from its source, in the caller's snapshot, as the live model's owner. */
static void
read_source(LiveContext *c, const LiveModel *m, LiveRead *r)
{
	Datum		model;

	if (!live_owner_reads_all(m))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot train live model \"%s\" from table \"%s\" under its row-level security",
						get_rel_name(m->state), get_rel_name(m->source)),
				 errdetail("Its deltas do not merge to a model of double precision, and its owner does not see every row of the table.")));
	live_as_role(c, m->owner);
	live_run_in(true, psprintf("SELECT %s", live_source_query(c, m)), 0, NULL, NULL, NULL, SPI_OK_SELECT);
	model = live_result(1, &r->isnull);
	r->model = r->isnull ? (Datum) 0 : SPI_datumTransfer(model, false, -1);
	live_as_caller(c);
}

/*
 * Whether a live model is of rows that all had a NULL label (its deltas
 * keep their count, see nbc_live_delta): nb_live gives NULL then, as
 * nb_train over the source does.
 */
static bool
live_no_class(Datum model)
{
	uint32		classes;
	double		documents;

	nb_model_class_totals(model, &classes, &documents);
	return classes == 0;
}

/* nb_live(name): the live model, as the caller's snapshot sees its source. */
Datum
nbc_live_read(PG_FUNCTION_ARGS)
{
	Oid			state = live_lookup(PG_GETARG_TEXT_PP(0));
	AclResult	acl = pg_class_aclcheck(state, GetUserId(), ACL_SELECT);
	LiveContext c;
	LiveModel	m;
	LiveRead	r;
	char	   *version;

	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_TABLE, get_rel_name(state));
	live_begin(&c, fcinfo);
	live_open(&m, state);
	check_source(&m);
	live_run_in(true, psprintf("WITH d AS (SELECT id FROM %1$s WHERE id > 0) "
						  "SELECT (SELECT l.ctid::text || ' ' || l.xmin::text FROM %1$s l WHERE l.id = 0) || ' ' || "
						  "COALESCE((SELECT string_agg(d.id::text, ',' ORDER BY d.id) FROM d), '')", m.table),
		   0, NULL, NULL, NULL, SPI_OK_SELECT);
	version = TextDatumGetCString(live_result(1, &r.isnull));
	if (live_cache_version == NULL || live_cache_state != state || strcmp(version, live_cache_version) != 0)
	{
		/*
		 * A query with a parallel plan runs in parallel mode, where no
		 * subtransaction can start: there the merge's errors are not caught
		 * (an overflow that the order of the deltas causes is reported, not
		 * trained around; a cancellation that the check sees is).
		 */
		live_weigh(&m);
		if (IsInParallelMode())
			read_merged(&c, &m, &r);
		else if (!live_try_step(read_merged, &c, &m, &r))
			r.exact = false;
		if (!r.exact)
			read_source(&c, &m, &r);
		r.isnull = r.isnull || live_no_class(r.model);
		cache_model(state, version, r.model, r.isnull);
	}
	live_end(&c);
	if (live_cache_model == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(cached_model());
}

static bool
owns_table(Oid relid)
{
#if PG_VERSION_NUM >= 160000
	return object_ownercheck(RelationRelationId, relid, GetUserId());
#else
	return pg_class_ownercheck(relid, GetUserId());
#endif
}

/*
 * nbc_live_train(state): the model of the live model's source table as its
 * owner reads it (nb_live_create's base), trained as the trigger trains.
 */
Datum
nbc_live_train(PG_FUNCTION_ARGS)
{
	Oid			state = PG_GETARG_OID(0);
	LiveContext c;
	LiveModel	m;
	Datum		model;
	bool		isnull;

	if (!live_is_table(state))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation with OID %u is not a live model", state)));
	if (!owns_table(state))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(state));
	live_begin(&c, fcinfo);
	live_open(&m, state);
	live_run(psprintf("SELECT %s", live_source_query(&c, &m)), SPI_OK_SELECT);
	model = live_result(1, &isnull);
	if (!isnull)
		model = SPI_datumTransfer(model, false, -1);
	live_end(&c);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(model);
}
