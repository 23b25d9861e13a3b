/*
 * pg_live_fold.c — the trigger that records each statement's change of a
 * live model's source as a delta, and the folds that move the deltas into
 * the base: the writer's automatic one (tiered: deltas merged among
 * themselves first) and nb_live_fold's.  See pg_live.c for what a live
 * model is.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "pg_live.h"

PG_FUNCTION_INFO_V1(nbc_live_capture);
PG_FUNCTION_INFO_V1(nbc_live_fold);

extern Datum nb_model_eq(PG_FUNCTION_ARGS);

/* The fold marks both move to the last delta a fold took. */
#define FOLD_MARKS \
	"folded_through = GREATEST(folded_through, (SELECT max(id) FROM d)), " \
	"based_through = GREATEST(folded_through, (SELECT max(id) FROM d))"

/*
 * Fold a live model's deltas into its base, in a new statement (in READ
 * COMMITTED, a snapshot that sees the previous fold); the caller holds the
 * base row's lock.
 */
static void
fold_into_base(LiveContext *c, const LiveModel *m, void *out)
{
	StringInfoData q;

	initStringInfo(&q);
	live_model_query(&q, m, c->nsp,
				psprintf("DELETE FROM %s WHERE id > 0 RETURNING id, reset, added, removed", m->table),
				psprintf("SELECT added FROM %s WHERE id = 0", m->table),
				psprintf("UPDATE %s SET " FOLD_MARKS ", added =", m->table), false);
	appendStringInfoString(&q, " WHERE id = 0");
	live_run(q.data, SPI_OK_UPDATE);
}

/*
 * Fold by training the base from the source: the deltas a snapshot sees are
 * those of the rows it sees (both are written by the same transactions), so
 * one statement deletes the first and trains the second.  Nothing if row
 * security keeps rows of the source from the owner.
 */
static void
fold_from_source(LiveContext *c, const LiveModel *m, void *out)
{
	if (!live_owner_reads_all(m))
		return;
	live_run(psprintf("WITH d AS (DELETE FROM %1$s WHERE id > 0 RETURNING id) "
				 "UPDATE %1$s SET " FOLD_MARKS ", added = %2$s WHERE id = 0",
				 m->table, live_source_query(c, m)), SPI_OK_UPDATE);
}

/* Take the base row's lock; false if another fold holds it (skip_locked). */
static bool
lock_base(const LiveModel *m, bool skip_locked)
{
	live_run(psprintf("SELECT 1 FROM %s WHERE id = 0 FOR NO KEY UPDATE%s", m->table,
				 skip_locked ? " SKIP LOCKED" : ""), SPI_OK_SELECT);
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

/* The merge of the deltas' column (in the CTE d), checked when the live model is weighted. */
static char *
merged_deltas(const LiveModel *m, const char *nsp, const char *column, const char *order)
{
	char	   *merged = psprintf("%s.nb_merge(%s ORDER BY id %s)", nsp, column, order);

	if (!m->weighted)
		return merged;
	return psprintf("%s.nbc_live_checked(%s, NULL, array_agg(%s ORDER BY id), NULL)", nsp, merged, column);
}

static void
fold_auto(LiveContext *c, const LiveModel *m, void *out)
{
	bool		isnull;
	Oid			types[1] = {INT8OID};
	Datum		values[1];
	int64		merged;
	int64		merged_bytes;
	int64		base_bytes;
	bool		reset;

	/* in a new snapshot, which sees the previous fold */
	live_run(psprintf("SELECT l.folded_through, COALESCE(pg_column_size(l.added), 0)::bigint, m.n, m.bytes, "
				 "EXISTS (SELECT FROM %1$s d WHERE d.id > l.folded_through AND d.reset) "
				 "FROM %1$s l, LATERAL (SELECT count(*) AS n, "
				 "COALESCE(sum(COALESCE(pg_column_size(d.added), 0) + COALESCE(pg_column_size(d.removed), 0)), 0) AS bytes "
				 "FROM %1$s d WHERE d.id > l.based_through AND d.id <= l.folded_through) m "
				 "WHERE l.id = 0", m->table), SPI_OK_SELECT);
	if (SPI_processed == 0)
		return;
	values[0] = live_result(1, &isnull);
	base_bytes = DatumGetInt64(live_result(2, &isnull));
	merged = DatumGetInt64(live_result(3, &isnull));
	merged_bytes = DatumGetInt64(live_result(4, &isnull));
	reset = DatumGetBool(live_result(5, &isnull));
	if (reset || merged >= LIVE_MERGED_MAX - 1 || merged_bytes >= base_bytes / 4)
	{
		fold_into_base(c, m, NULL);
		return;
	}
	live_run_in(false, psprintf("WITH d AS (DELETE FROM %1$s WHERE id > $1 RETURNING id, added, removed), "
				 "m AS (SELECT max(id) AS id, %2$s AS added, %3$s AS removed FROM d), "
				 "u AS (UPDATE %1$s SET folded_through = m.id FROM m WHERE %1$s.id = 0 AND m.id IS NOT NULL) "
				 "INSERT INTO %1$s (id, reset, added, removed) "
				 "SELECT m.id, false, m.added, m.removed FROM m "
				 "WHERE m.added IS NOT NULL OR m.removed IS NOT NULL",
				 m->table, merged_deltas(m, c->nsp, "added", "DESC"), merged_deltas(m, c->nsp, "removed", "")),
		   1, types, values, NULL, SPI_OK_INSERT);
}

/* The writer's fold: tiered, else from the source, else none (the writer never fails for it). */
static void
fold_for_writer(LiveContext *c, const LiveModel *m)
{
	if (!lock_base(m, true))
		return;
	if (!live_try_step(fold_auto, c, m, NULL))
		(void) live_try_step(fold_from_source, c, m, NULL);
}

static void
check_trigger(FunctionCallInfo fcinfo, TriggerData **td)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("nbc_live_capture: not called by trigger manager")));
	*td = (TriggerData *) fcinfo->context;
	/* 0.10.0 to 0.12.0 named the live model by a number, an argument */
	if ((*td)->tg_trigger->tgnargs == 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the live models of this database are those of an older version of extension nbc"),
				 errhint("Run ALTER EXTENSION nbc UPDATE.")));
	if (!TRIGGER_FIRED_AFTER((*td)->tg_event) || !TRIGGER_FIRED_FOR_STATEMENT((*td)->tg_event) ||
		(*td)->tg_trigger->tgnargs != 0)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("nbc_live_capture must be an AFTER ... FOR EACH STATEMENT trigger without arguments")));
}

/* The first regclass constant of an expression tree, or InvalidOid. */
static bool
find_regclass(Node *node, Oid *found)
{
	if (node == NULL)
		return false;
	if (IsA(node, Const) && ((Const *) node)->consttype == REGCLASSOID && !((Const *) node)->constisnull)
	{
		*found = DatumGetObjectId(((Const *) node)->constvalue);
		return true;
	}
	return expression_tree_walker(node, find_regclass, (void *) found);
}

/*
 * The live model's table that the trigger's WHEN clause names
 * ('table'::regclass IS NOT NULL): a dependency of the trigger on the
 * table, kept by PostgreSQL through renames, dumps and restores.
 */
static Oid
trigger_state(TriggerData *td)
{
	Oid			state = InvalidOid;

	if (td->tg_trigger->tgqual != NULL)
		(void) find_regclass(stringToNode(td->tg_trigger->tgqual), &state);
	if (!OidIsValid(state) || !live_is_table(state))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger \"%s\" on table \"%s\" names no live model",
						td->tg_trigger->tgname, RelationGetRelationName(td->tg_relation)),
				 errhint("Drop the trigger.")));
	return state;
}

/*
 * The trigger must be one nb_live_create made for this live model and this
 * event: trigger names are unique per table, so no second trigger on the
 * source (one its owner or a role with TRIGGER made) can count the rows
 * again, and no trigger of another table can feed it.
 */
static void
check_trigger_owns(TriggerData *td, const LiveModel *m)
{
	TriggerEvent ev = td->tg_event;
	const char *event = TRIGGER_FIRED_BY_INSERT(ev) ? "insert" :
		TRIGGER_FIRED_BY_UPDATE(ev) ? "update" :
		TRIGGER_FIRED_BY_DELETE(ev) ? "delete" : "truncate";
	char	   *want = psprintf("%s%s", m->triggers, event);

	if (m->source != RelationGetRelid(td->tg_relation) || strcmp(td->tg_trigger->tgname, want) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("trigger \"%s\" on table \"%s\" is not live model \"%s\"'s trigger \"%s\"",
						td->tg_trigger->tgname, RelationGetRelationName(td->tg_relation),
						get_rel_name(m->state), want)));
}

/*
 * The statement's delta: the models of the rows it added and removed; false
 * when it changed no counted value (no counted row, or an update that left
 * every counted value as it was).
 */
static bool
statement_delta(LiveContext *c, const LiveModel *m, TriggerData *td, Datum *values, char *nulls)
{
	Relation	rel = td->tg_relation;
	bool		no_added = true;
	bool		no_removed = true;

	values[1] = values[2] = (Datum) 0;
	if (td->tg_newtable != NULL)
		values[1] = live_train(c, m, rel, "nbc_new", &no_added);
	if (td->tg_oldtable != NULL)
		values[2] = live_train(c, m, rel, "nbc_old", &no_removed);
	if (no_added && no_removed)
		return false;
	if (!no_added && !no_removed &&
		DatumGetBool(DirectFunctionCall2(nb_model_eq, values[1], values[2])))
		return false;
	nulls[1] = no_added ? 'n' : ' ';
	nulls[2] = no_removed ? 'n' : ' ';
	return true;
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
	LiveContext c;
	LiveModel	m;
	Oid			state;
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	Oid			types[4] = {BOOLOID, InvalidOid, InvalidOid, INT8OID};
	bool		isnull;

	check_trigger(fcinfo, &td);
	state = trigger_state(td);
	live_begin(&c, fcinfo);
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "SPI_register_trigger_data failed");
	live_as_role(&c, live_rel_owner(state));
	live_open(&m, state);
	check_trigger_owns(td, &m);

	values[0] = BoolGetDatum(TRIGGER_FIRED_BY_TRUNCATE(td->tg_event));
	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		nulls[1] = nulls[2] = 'n';
	else if (!statement_delta(&c, &m, td, values, nulls))
	{
		live_as_caller(&c);
		live_end(&c);
		return PointerGetDatum(NULL);
	}
	types[1] = types[2] = live_model_type(&c);
	/*
	 * The deltas pending are about the ids past the last fold's
	 * (folded_through) up to this one: counted from the ids, it takes no
	 * look at the pending deltas.
	 */
	values[3] = Int64GetDatum(m.folded_through);
	live_run_in(false, psprintf("INSERT INTO %s (reset, added, removed) VALUES ($1, $2, $3) RETURNING id - $4",
						   m.table), 4, types, values, nulls, SPI_OK_INSERT_RETURNING);
	if (DatumGetInt64(live_result(1, &isnull)) >= m.fold_after && !IsolationUsesXactSnapshot())
	{
		live_weigh(&m);
		fold_for_writer(&c, &m);
	}
	live_as_caller(&c);
	live_end(&c);
	return PointerGetDatum(NULL);
}

/* Refuse a fold to a role without UPDATE and DELETE on the live model's table. */
static void
check_may_fold(Oid state)
{
	if (pg_class_aclcheck(state, GetUserId(), ACL_UPDATE) != ACLCHECK_OK ||
		pg_class_aclcheck(state, GetUserId(), ACL_DELETE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to fold live model \"%s\"", get_rel_name(state)),
				 errhint("Folding needs UPDATE and DELETE on the live model's table, as its owner has.")));
}

/*
 * nb_live_fold(name): fold the deltas into the base now, waiting for a fold
 * under way; nothing when no delta is pending.
 */
Datum
nbc_live_fold(PG_FUNCTION_ARGS)
{
	Oid			state = live_lookup(PG_GETARG_TEXT_PP(0));
	LiveContext c;
	LiveModel	m;
	bool		isnull;

	check_may_fold(state);
	live_begin(&c, fcinfo);
	live_as_role(&c, live_rel_owner(state));
	live_open(&m, state);
	live_run(psprintf("SELECT EXISTS (SELECT FROM %s WHERE id > 0)", m.table), SPI_OK_SELECT);
	if (DatumGetBool(live_result(1, &isnull)))
	{
		live_weigh(&m);
		(void) lock_base(&m, false);
		if (!live_try_step(fold_into_base, &c, &m, NULL))
			fold_from_source(&c, &m, NULL);
	}
	live_as_caller(&c);
	live_end(&c);
	PG_RETURN_VOID();
}
