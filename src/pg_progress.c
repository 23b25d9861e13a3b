/*
 * pg_progress.c — the settings of progress NOTICEs and the clock that
 * spaces them: a long operation reports a step only when
 * nbc.progress_interval seconds have passed since it began or last
 * reported, so that a short call stays quiet.  The PL/pgSQL workflows read
 * the interval from nbc_progress_every().
 */
#include "postgres.h"

#include <math.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "fmgr.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "pg_progress.h"

static bool progress = true;
static double progress_interval = 5;

NbRowProgress nb_row_progress;

/* The one-call operation that nb_progress_tick reports (nb_progress_during), or NULL. */
typedef struct CallProgress
{
	const char *message;
	TimestampTz started;
	TimestampTz reported;
	MemoryContextCallback forget;
} CallProgress;

static CallProgress *call_progress;

void
nb_progress_define_settings(void)
{
	DefineCustomBoolVariable("nbc.progress",
							 "Reports the progress of long nbc operations as notices.",
							 "Training and nb_grid_metrics (every 4096 rows), nb_prune, cross-validation, "
							 "calibration and EM report at most every nbc.progress_interval seconds.",
							 &progress, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("nbc.progress_interval",
							 "Seconds between two progress notices of an nbc operation.",
							 "The first comes that long after the operation began; 0 reports every step.",
							 &progress_interval, 5, 0, 86400, PGC_USERSET, GUC_UNIT_S, NULL, NULL, NULL);
}

bool
nb_progress_on(void)
{
	return progress;
}

bool
nb_progress_due(TimestampTz *last)
{
	TimestampTz now = GetCurrentTimestamp();

	if ((double) (now - *last) < progress_interval * USECS_PER_SEC)
		return false;
	*last = now;
	return true;
}

double
nb_progress_elapsed(TimestampTz started)
{
	return round((double) (GetCurrentTimestamp() - started) / (USECS_PER_SEC / 10)) / 10;
}

void
nb_progress_rows(const char *operation, const char *verb)
{
	TimestampTz statement = GetCurrentStatementStartTimestamp();
	NbRowProgress *r = &nb_row_progress;

	if (r->operation != operation || r->statement != statement)
	{
		r->operation = operation;
		r->statement = statement;
		r->reported = GetCurrentTimestamp();
		r->rows = 1;
		return;
	}
	/* a parallel worker's rows are a share of the count: the leader reports */
	if (IsParallelWorker() || !progress || !nb_progress_due(&r->reported))
		return;
	/* no CONTEXT: inside a workflow it would quote the whole generated statement */
	ereport(NOTICE,
			(errmsg("%s: %s " INT64_FORMAT " rows", operation, verb, r->rows),
			 errdetail("Elapsed: %.1f s.%s", nb_progress_elapsed(statement),
					   IsInParallelMode() ? " Rows read by parallel workers are not counted." : ""),
			 errhidecontext(true)));
}

static void
forget_call(void *arg)
{
	if (call_progress == arg)
		call_progress = NULL;
}

void
nb_progress_during(MemoryContext context, const char *message)
{
	CallProgress *c = MemoryContextAlloc(context, sizeof(CallProgress));

	c->message = MemoryContextStrdup(context, message);
	c->started = c->reported = GetCurrentTimestamp();
	c->forget.func = forget_call;
	c->forget.arg = c;
	MemoryContextRegisterResetCallback(context, &c->forget);
	call_progress = c;
}

void
nb_progress_tick(void)
{
	if (call_progress == NULL || !progress || !nb_progress_due(&call_progress->reported))
		return;
	ereport(NOTICE,
			(errmsg_internal("%s", call_progress->message),
			 errdetail("Elapsed: %.1f s.", nb_progress_elapsed(call_progress->started))));
}

/*
 * nbc_progress_every(): the interval between two progress NOTICEs, NULL if
 * nbc.progress is off, for the PL/pgSQL workflows.
 */
PG_FUNCTION_INFO_V1(nbc_progress_every);
Datum
nbc_progress_every(PG_FUNCTION_ARGS)
{
	Interval   *every;

	if (!progress)
		PG_RETURN_NULL();
	every = palloc0(sizeof(Interval));
	every->time = (TimeOffset) rint(progress_interval * USECS_PER_SEC);
	PG_RETURN_INTERVAL_P(every);
}
