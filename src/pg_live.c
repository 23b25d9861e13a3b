/*
 * pg_live.c — live models: the trigger that records each statement's change
 * of a source table, reading a live model, and folding its changes into its
 * base (README "Live models"; the tables are in the SQL script).
 *
 * A live model is a base model plus deltas, one per statement that changed
 * the source: the model of the rows it inserted (added) and of the rows it
 * deleted (removed), or a reset for a TRUNCATE.  Its value is
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
 * Security.  The extension's tables are owned by the extension's owner and
 * readable row by row (row-level security: the live models of sources one
 * can read).  Writers to a source need not be able to read or write them:
 * the trigger trains the statement's rows as the writer (whatever runs for
 * the label's cast runs with the writer's rights) and only writes the delta,
 * and folds, as the tables' owner.  Every query runs with search_path
 * pg_catalog, pg_temp and names the extension's objects with their schema,
 * found at run time (the extension is relocatable): the schema of this
 * function's own SQL declaration.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "pg_label.h"

PG_FUNCTION_INFO_V1(nbc_live_capture);
PG_FUNCTION_INFO_V1(nbc_live_train);
PG_FUNCTION_INFO_V1(nbc_live_read);
PG_FUNCTION_INFO_V1(nbc_live_fold);

extern Datum nb_model_eq(PG_FUNCTION_ARGS);

/* The extension's schema (quoted) and the owner of its tables. */
typedef struct LiveContext
{
	const char *nsp;
	Oid			nsp_oid;
	Oid			owner;
	int			guc_level;
	Oid			save_user;
	int			save_sec;
} LiveContext;

/*
 * Start work on live models from a function of the extension: find the
 * schema and the tables' owner, set a safe search_path until live_end.
 */
static void
live_begin(LiveContext *c, FunctionCallInfo fcinfo)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			table = get_relname_relid("nbc_live", nsp);
	HeapTuple	tup;

	if (!OidIsValid(table))
		elog(ERROR, "table nbc_live of extension nbc is missing");
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(table));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", table);
	c->owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	c->nsp = quote_identifier(get_namespace_name(nsp));
	c->nsp_oid = nsp;
	c->guc_level = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	/*
	 * Every query on the extension's tables reads one live model's rows,
	 * through an index: a plan kept from when the deltas were few (or their
	 * statistics unknown) must not scan the table, whose dead deltas pile up
	 * between vacuums as folds delete them.
	 */
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	GetUserIdAndSecContext(&c->save_user, &c->save_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

static void
live_end(LiveContext *c)
{
	SPI_finish();
	AtEOXact_GUC(true, c->guc_level);
}

/* Run what follows as the owner of the extension's tables (no user code runs there). */
static void
as_owner(LiveContext *c)
{
	SetUserIdAndSecContext(c->owner, c->save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

static void
as_caller(LiveContext *c)
{
	SetUserIdAndSecContext(c->save_user, c->save_sec);
}

static Oid
model_type(LiveContext *c)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("nb_model"),
						   ObjectIdGetDatum(c->nsp_oid));
}

/*
 * Plans kept for the backend's life, found by their query's text (which
 * names everything they depend on: the schema, the columns, and for the
 * trigger's queries over transition tables the source's oid and number of
 * columns, see train_query): a single-row INSERT then pays for no parse and
 * no planning.  PostgreSQL replans them when the tables they read change.
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
static void
run_in(bool read_only, const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
	   int expect)
{
	int			rc = SPI_execute_plan(live_plan(sql, nargs, types), values, nulls, read_only, 0);

	if (rc != expect)
		elog(ERROR, "live model query failed (%d): %s", rc, sql);
}

static void
run(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls, int expect)
{
	run_in(false, sql, nargs, types, values, nulls, expect);
}

static Datum
result(int col, bool *isnull)
{
	if (SPI_processed == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, isnull);
}

/* A live model's settings, from its row (read as the tables' owner). */
typedef struct LiveModel
{
	int32		id;
	Oid			source;
	char	   *tokenizer;		/* jsonb text, or NULL */
	int32		fold_after;
	int64		folded_through; /* the largest id the last fold took */
} LiveModel;

static bool
live_model(LiveContext *c, int32 id, LiveModel *m)
{
	StringInfoData q;
	Oid			types[1] = {INT4OID};
	Datum		values[1] = {Int32GetDatum(id)};
	bool		isnull;
	Datum		d;

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT source::oid, tokenizer::text, fold_after, folded_through FROM %s.nbc_live WHERE id = $1",
					 c->nsp);
	run(q.data, 1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	m->id = id;
	m->source = DatumGetObjectId(result(1, &isnull));
	d = result(2, &isnull);
	m->tokenizer = isnull ? NULL : TextDatumGetCString(d);
	m->fold_after = DatumGetInt32(result(3, &isnull));
	m->folded_through = DatumGetInt64(result(4, &isnull));
	return true;
}

/*
 * The columns of a live model: those of its source's trigger
 * nbc_live_<id>_columns (UPDATE OF label, features [, weight]), which makes
 * them survive renames and dumps and keeps them from being dropped or
 * changed in type while the live model exists.
 */
static int
live_columns(Relation rel, int32 id, const char **names, Oid *feature_type)
{
	TriggerDesc *td = rel->trigdesc;
	char		tgname[NAMEDATALEN];

	snprintf(tgname, sizeof(tgname), "nbc_live_%d_columns", id);
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
			 errmsg("live model %d has lost its columns on table \"%s\"", id,
					RelationGetRelationName(rel)),
			 errdetail("Its trigger \"%s\" was dropped.", tgname),
			 errhint("Drop the live model with nb_live_drop and create it again.")));
	return 0;
}

/* The query that trains the model of the rows of relation "from". */
static char *
train_query(LiveContext *c, const LiveModel *m, Relation rel, const char *from)
{
	const char *col[3];
	Oid			feature_type;
	int			n = live_columns(rel, m->id, col, &feature_type);
	StringInfoData q;

	initStringInfo(&q);
	/* the plan is kept (live_plan): the text says which relation's transition table it reads */
	appendStringInfo(&q, "/* source %u of %d columns */ SELECT %s.nb_train(%s, %s",
					 RelationGetRelid(rel), RelationGetDescr(rel)->natts, c->nsp, col[0], col[1]);
	if (n == 3)
		appendStringInfo(&q, ", %s", col[2]);
	if (feature_type == TEXTOID && (n == 3 || m->tokenizer != NULL))
		appendStringInfo(&q, ", %s::jsonb", m->tokenizer != NULL ? quote_literal_cstr(m->tokenizer) : "NULL");
	appendStringInfo(&q, ") FROM %s", from);
	return q.data;
}

/* The model of the rows of a relation the caller reads, or NULL. */
static Datum
train(LiveContext *c, const LiveModel *m, Relation rel, const char *from, bool *isnull)
{
	run(train_query(c, m, rel, from), 0, NULL, NULL, NULL, SPI_OK_SELECT);
	return result(1, isnull);
}

/*
 * The live model given the CTE "d" of its deltas (id, reset, added, removed)
 * and an expression of its base: its WITH part and the expression.  The
 * deltas are merged in a fixed order (the same value, to the last bit, for
 * every reader) and the base last: nb_merge merges NB_MERGE_FANIN inputs at
 * a time, so the small deltas are merged among themselves first and the
 * base, the large input, is read and copied once.
 */
static void
model_query(StringInfo q, const char *nsp, const char *deltas, const char *base, const char *rest)
{
	appendStringInfo(q,
					 "WITH d AS (%2$s), r AS (SELECT max(id) AS at FROM d WHERE reset) "
					 "%4$s %1$s.nb_subtract("
					 "(SELECT %1$s.nb_merge(m ORDER BY k DESC) FROM "
					 "(SELECT 0::bigint AS k, (%3$s) AS m FROM r WHERE r.at IS NULL "
					 "UNION ALL SELECT d.id, d.added FROM d, r WHERE d.id > COALESCE(r.at, 0)) x), "
					 "(SELECT %1$s.nb_merge(d.removed ORDER BY d.id) FROM d, r WHERE d.id > COALESCE(r.at, 0)))",
					 nsp, deltas, base, rest);
}

/*
 * Fold a live model's deltas into its base, in a new statement (in READ
 * COMMITTED, a snapshot that sees the previous fold); the caller holds the
 * base row's lock.
 */
static void
fold_into_base(LiveContext *c, int32 id)
{
	StringInfoData q;
	Oid			types[1] = {INT4OID};
	Datum		values[1] = {Int32GetDatum(id)};
	char	   *deltas;
	char	   *base;

	initStringInfo(&q);
	deltas = psprintf("DELETE FROM %s.nbc_live_delta WHERE live_id = $1 "
					  "RETURNING id, reset, added, removed", c->nsp);
	base = psprintf("SELECT base FROM %s.nbc_live WHERE id = $1", c->nsp);
	model_query(&q, c->nsp, deltas, base, psprintf("UPDATE %1$s.nbc_live SET folded_through = "
						 "GREATEST(folded_through, (SELECT max(id) FROM d)), based_through = "
						 "GREATEST(folded_through, (SELECT max(id) FROM d)), base =", c->nsp));
	appendStringInfoString(&q, " WHERE id = $1");
	run(q.data, 1, types, values, NULL, SPI_OK_UPDATE);
}

/* Take the base row's lock; false if another fold holds it (skip_locked). */
static bool
lock_base(LiveContext *c, int32 id, bool skip_locked)
{
	StringInfoData q;
	Oid			types[1] = {INT4OID};
	Datum		values[1] = {Int32GetDatum(id)};

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT 1 FROM %s.nbc_live WHERE id = $1 FOR NO KEY UPDATE%s", c->nsp,
					 skip_locked ? " SKIP LOCKED" : "");
	run(q.data, 1, types, values, NULL, SPI_OK_SELECT);
	return SPI_processed > 0;
}

/*
 * The automatic fold is tiered, so that a writer's share of it does not
 * grow with the model.  Rewriting the base costs a copy of the whole model
 * (and its WAL); doing that every fold_after statements made it most of a
 * single-row INSERT's cost.  Instead the pending deltas (those past
 * folded_through) are merged into one delta, which costs what they weigh;
 * the base is rewritten only once the merged deltas (those past
 * based_through, the last delta the base took) weigh a quarter of it, or
 * number LIVE_MERGED_MAX, so a writer pays for a base about every
 * fold_after * LIVE_MERGED_MAX statements, and a reader merges at most
 * that many merged deltas, of at most a quarter of the base, besides the
 * fold_after pending ones.  A delta with a reset (a TRUNCATE) goes into the
 * base at once.  The merged delta keeps the largest id it took (the readers'
 * order, and the latest reset, are unchanged), its rows are deleted by the
 * same statement, and folded_through moves to it.  Every query here reads
 * a range of ids past a fold: the deltas folds deleted leave index entries
 * below it until a vacuum, which a scan from the first id would step over.
 *
 * No TRUNCATE can come between the queries: the writer holds its lock on
 * the source until it commits.
 */
#define LIVE_MERGED_MAX 16

static void
fold_auto(LiveContext *c, int32 id, Oid source)
{
	StringInfoData q;
	Oid			types[3] = {INT4OID, INT8OID, OIDOID};
	Datum		values[3] = {Int32GetDatum(id), (Datum) 0, ObjectIdGetDatum(source)};
	bool		isnull;
	int64		merged;
	int64		merged_bytes;
	int64		base_bytes;
	bool		reset;

	if (!lock_base(c, id, true))
		return;
	/* in a new snapshot, which sees the previous fold */
	initStringInfo(&q);
	appendStringInfo(&q,
					 "SELECT l.folded_through, COALESCE(pg_column_size(l.base), 0)::bigint, m.n, m.bytes, "
					 "EXISTS (SELECT FROM %1$s.nbc_live_delta d WHERE d.live_id = l.id "
					 "AND d.id > l.folded_through AND d.reset) "
					 "FROM %1$s.nbc_live l, LATERAL (SELECT count(*) AS n, "
					 "COALESCE(sum(COALESCE(pg_column_size(d.added), 0) + COALESCE(pg_column_size(d.removed), 0)), 0) AS bytes "
					 "FROM %1$s.nbc_live_delta d WHERE d.live_id = l.id "
					 "AND d.id > l.based_through AND d.id <= l.folded_through) m "
					 "WHERE l.id = $1",
					 c->nsp);
	run(q.data, 1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return;
	values[1] = result(1, &isnull);
	base_bytes = DatumGetInt64(result(2, &isnull));
	merged = DatumGetInt64(result(3, &isnull));
	merged_bytes = DatumGetInt64(result(4, &isnull));
	reset = DatumGetBool(result(5, &isnull));
	if (reset || merged >= LIVE_MERGED_MAX - 1 || merged_bytes >= base_bytes / 4)
	{
		fold_into_base(c, id);
		return;
	}
	resetStringInfo(&q);
	appendStringInfo(&q,
					 "WITH d AS (DELETE FROM %1$s.nbc_live_delta WHERE live_id = $1 AND id > $2 "
					 "RETURNING id, added, removed), "
					 "m AS (SELECT max(id) AS id, %1$s.nb_merge(added ORDER BY id DESC) AS added, "
					 "%1$s.nb_merge(removed ORDER BY id) AS removed FROM d), "
					 "u AS (UPDATE %1$s.nbc_live SET folded_through = m.id FROM m "
					 "WHERE nbc_live.id = $1 AND m.id IS NOT NULL) "
					 "INSERT INTO %1$s.nbc_live_delta (live_id, id, source, reset, added, removed) "
					 "SELECT $1, m.id, $3, false, m.added, m.removed FROM m "
					 "WHERE m.added IS NOT NULL OR m.removed IS NOT NULL",
					 c->nsp);
	run(q.data, 3, types, values, NULL, SPI_OK_INSERT);
}

static void
check_trigger(FunctionCallInfo fcinfo, TriggerData **td, int32 *id)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("nbc_live_capture: not called by trigger manager")));
	*td = (TriggerData *) fcinfo->context;
	if (!TRIGGER_FIRED_AFTER((*td)->tg_event) || !TRIGGER_FIRED_FOR_STATEMENT((*td)->tg_event) ||
		(*td)->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("nbc_live_capture must be an AFTER ... FOR EACH STATEMENT trigger with one argument")));
	*id = pg_strtoint32((*td)->tg_trigger->tgargs[0]);
}

/*
 * The trigger must be the one nb_live_create made for this event: trigger
 * names are unique per table, so no second trigger on the source (one its
 * owner or a role with TRIGGER made) can count the rows again.
 */
static void
check_trigger_name(TriggerData *td, int32 id)
{
	TriggerEvent ev = td->tg_event;
	const char *event = TRIGGER_FIRED_BY_INSERT(ev) ? "insert" :
		TRIGGER_FIRED_BY_UPDATE(ev) ? "update" :
		TRIGGER_FIRED_BY_DELETE(ev) ? "delete" : "truncate";
	char		want[NAMEDATALEN];

	snprintf(want, sizeof(want), "nbc_live_%d_%s", id, event);
	if (strcmp(td->tg_trigger->tgname, want) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger \"%s\" on table \"%s\" is not live model %d's trigger \"%s\"",
						td->tg_trigger->tgname, RelationGetRelationName(td->tg_relation), id, want)));
}

/*
 * The trigger of a live model's source (AFTER INSERT, UPDATE, DELETE,
 * TRUNCATE, FOR EACH STATEMENT, with transition tables nbc_new and
 * nbc_old): appends the statement's delta, then folds if the live model has
 * fold_after deltas pending and the writer's transaction reads committed
 * data (a fold in an older snapshot would have to wait or fail).
 */
Datum
nbc_live_capture(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	int32		id;
	LiveContext c;
	LiveModel	m;
	Relation	rel;
	bool		reset = false;
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	Oid			types[5] = {INT4OID, BOOLOID, InvalidOid, InvalidOid, INT8OID};
	bool		isnull;
	StringInfoData q;

	check_trigger(fcinfo, &td, &id);
	rel = td->tg_relation;
	live_begin(&c, fcinfo);
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "SPI_register_trigger_data failed");
	as_owner(&c);
	if (!live_model(&c, id, &m))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("trigger \"%s\" on table \"%s\" belongs to no live model",
						td->tg_trigger->tgname, RelationGetRelationName(rel)),
				 errhint("Drop the trigger.")));
	if (m.source != RelationGetRelid(rel))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("trigger \"%s\" on table \"%s\" is not on the source of live model %d",
						td->tg_trigger->tgname, RelationGetRelationName(rel), id)));
	check_trigger_name(td, id);
	as_caller(&c);

	values[0] = Int32GetDatum(id);
	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
	{
		reset = true;
		nulls[2] = nulls[3] = 'n';
		values[2] = values[3] = (Datum) 0;
	}
	else
	{
		Datum		added = (Datum) 0;
		Datum		removed = (Datum) 0;
		bool		no_added = true;
		bool		no_removed = true;

		if (td->tg_newtable != NULL)
		{
			added = train(&c, &m, rel, "nbc_new", &no_added);
			if (!no_added)
				added = SPI_datumTransfer(added, false, -1);
		}
		if (td->tg_oldtable != NULL)
		{
			removed = train(&c, &m, rel, "nbc_old", &no_removed);
			if (!no_removed)
				removed = SPI_datumTransfer(removed, false, -1);
		}
		/* nothing to record: no counted row, or an update that changed no counted value */
		if (no_added && no_removed)
			goto done;
		if (!no_added && !no_removed &&
			DatumGetBool(DirectFunctionCall2(nb_model_eq, added, removed)))
			goto done;
		values[2] = added;
		values[3] = removed;
		nulls[2] = no_added ? 'n' : ' ';
		nulls[3] = no_removed ? 'n' : ' ';
	}
	values[1] = BoolGetDatum(reset);

	as_owner(&c);
	types[2] = types[3] = model_type(&c);
	/*
	 * The deltas pending are about the ids past the last fold's
	 * (folded_through) up to this one: the ids of all live models come
	 * from one sequence, so that counts more when several are written at
	 * once, and it takes no look at the pending deltas.
	 */
	initStringInfo(&q);
	appendStringInfo(&q,
					 "INSERT INTO %1$s.nbc_live_delta (live_id, source, reset, added, removed) "
					 "VALUES ($1, %2$u, $2, $3, $4) RETURNING id - $5",
					 c.nsp, m.source);
	values[4] = Int64GetDatum(m.folded_through);
	run(q.data, 5, types, values, nulls, SPI_OK_INSERT_RETURNING);
	if (DatumGetInt64(result(1, &isnull)) >= m.fold_after && !IsolationUsesXactSnapshot())
		fold_auto(&c, id, m.source);
	as_caller(&c);
done:
	live_end(&c);
	return PointerGetDatum(NULL);
}

/* A live model's id from its name, if the caller may read it. */
static int32
live_id(LiveContext *c, text *name)
{
	StringInfoData q;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {PointerGetDatum(name)};
	bool		isnull;

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT id FROM %s.nbc_live WHERE name = $1", c->nsp);
	run_in(true, q.data, 1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("live model \"%s\" does not exist",
						nb_cut_str(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name))),
				 errhint("nb_lives lists the live models you can read.")));
	return DatumGetInt32(result(1, &isnull));
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
static int32 live_cache_id;
static char *live_cache_version;
static struct varlena *live_cache_model;	/* NULL: the model of no rows */

/* The version of live model $1's rows, given the CTE d of its deltas. */
#define LIVE_VERSION(nsp) \
	"(SELECT l.ctid::text || ' ' || l.xmin::text FROM " nsp ".nbc_live l WHERE l.id = $1) || ' ' || " \
	"COALESCE((SELECT string_agg(d.id::text, ',' ORDER BY d.id) FROM d), '')"

static Datum
cached_model(void)
{
	struct varlena *copy = palloc(VARSIZE(live_cache_model));

	memcpy(copy, live_cache_model, VARSIZE(live_cache_model));
	return PointerGetDatum(copy);
}

/* nb_live(name): the live model, as the caller's snapshot sees its source. */
Datum
nbc_live_read(PG_FUNCTION_ARGS)
{
	LiveContext c;
	StringInfoData q;
	Oid			types[1] = {INT4OID};
	Datum		values[1];
	bool		isnull;
	Datum		model;
	char	   *deltas;
	char	   *version;
	int32		id;

	live_begin(&c, fcinfo);
	id = live_id(&c, PG_GETARG_TEXT_PP(0));
	values[0] = Int32GetDatum(id);
	/*
	 * The caller may read this live model (row-level security showed it its
	 * row): its rows are read as their owner, in the caller's snapshot,
	 * sparing the policy's check on every delta.
	 */
	as_owner(&c);
	deltas = psprintf("SELECT id, reset, added, removed FROM %s.nbc_live_delta WHERE live_id = $1", c.nsp);
	if (live_cache_version != NULL && live_cache_id == id)
	{
		initStringInfo(&q);
		appendStringInfo(&q, "WITH d AS (%s) SELECT %s", deltas,
						 psprintf(LIVE_VERSION("%s"), c.nsp));
		run_in(true, q.data, 1, types, values, NULL, SPI_OK_SELECT);
		version = TextDatumGetCString(result(1, &isnull));
		if (strcmp(version, live_cache_version) == 0)
		{
			as_caller(&c);
			live_end(&c);
			if (live_cache_model == NULL)
				PG_RETURN_NULL();
			PG_RETURN_DATUM(cached_model());
		}
	}
	initStringInfo(&q);
	model_query(&q, c.nsp, deltas, psprintf("SELECT base FROM %s.nbc_live WHERE id = $1", c.nsp),
				psprintf("SELECT " LIVE_VERSION("%s") ",", c.nsp));
	run_in(true, q.data, 1, types, values, NULL, SPI_OK_SELECT);
	version = TextDatumGetCString(result(1, &isnull));
	model = result(2, &isnull);

	if (live_cache_cxt == NULL)
		live_cache_cxt = AllocSetContextCreate(TopMemoryContext, "nbc live model", ALLOCSET_DEFAULT_SIZES);
	MemoryContextReset(live_cache_cxt);
	live_cache_version = NULL;
	live_cache_model = NULL;
	if (!isnull)
	{
		MemoryContext old = MemoryContextSwitchTo(live_cache_cxt);

		live_cache_model = PG_DETOAST_DATUM_COPY(model);
		MemoryContextSwitchTo(old);
	}
	live_cache_id = id;
	live_cache_version = MemoryContextStrdup(live_cache_cxt, version);
	as_caller(&c);
	live_end(&c);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(cached_model());
}

/* nb_live_fold(name): fold the deltas into the base now, waiting for a fold under way. */
Datum
nbc_live_fold(PG_FUNCTION_ARGS)
{
	LiveContext c;
	int32		id;

	live_begin(&c, fcinfo);
	id = live_id(&c, PG_GETARG_TEXT_PP(0));
	as_owner(&c);
	(void) lock_base(&c, id, false);
	fold_into_base(&c, id);
	as_caller(&c);
	live_end(&c);
	PG_RETURN_VOID();
}

/*
 * nbc_live_train(id): the model of the live model's source table as the
 * caller reads it (nb_live_create's base), trained as the trigger trains.
 */
Datum
nbc_live_train(PG_FUNCTION_ARGS)
{
	int32		id = PG_GETARG_INT32(0);
	LiveContext c;
	LiveModel	m;
	Relation	rel;
	Datum		model;
	bool		isnull;
	bool		found;

	live_begin(&c, fcinfo);
	as_owner(&c);
	found = live_model(&c, id, &m);
	as_caller(&c);
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("live model %d does not exist", id)));
	rel = relation_open(m.source, AccessShareLock);
	model = train(&c, &m, rel,
				  quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
											 RelationGetRelationName(rel)), &isnull);
	relation_close(rel, NoLock);
	if (!isnull)
		model = SPI_datumTransfer(model, false, -1);
	live_end(&c);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(model);
}
