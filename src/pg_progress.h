/*
 * pg_progress.h — progress of long operations as NOTICEs (pg_progress.c).
 */
#ifndef PG_PROGRESS_H
#define PG_PROGRESS_H

#include "access/xact.h"
#include "datatype/timestamp.h"
#include "utils/palloc.h"

/* Defines nbc.progress and nbc.progress_interval (from _PG_init). */
void		nb_progress_define_settings(void);

/* Whether long operations report their progress (nbc.progress). */
bool		nb_progress_on(void);

/*
 * Whether an operation that reports its progress reports it now:
 * nbc.progress_interval seconds have passed since *last (the start of the
 * operation, or its last report), which then becomes now.
 */
bool		nb_progress_due(TimestampTz *last);

/* The seconds since started, rounded to 0.1, for a progress DETAIL. */
double		nb_progress_elapsed(TimestampTz started);

/*
 * The rows that the per-row functions of one operation read in the current
 * top-level statement: every aggregate of the statement counts into one, so
 * that a GROUP BY (a state per group) or a cross-validation pass (an
 * aggregate per fold) reports once per interval.
 */
typedef struct NbRowProgress
{
	const char *operation;		/* a string constant; NULL: none yet */
	TimestampTz statement;		/* its start */
	TimestampTz reported;		/* the last NOTICE, or the first row */
	int64		rows;
} NbRowProgress;

extern NbRowProgress nb_row_progress;

/* A new statement or operation, or every 4096th row: see nb_progress_row. */
void		nb_progress_rows(const char *operation, const char *verb);

/*
 * Counts a row read by a per-row function (an aggregate's transition) of
 * operation (a string constant naming it); every 4096 rows of the
 * statement, a NOTICE "operation: verb N rows" when one is due.  Inline:
 * the row's cost is a few compares, the clock is read every 4096 rows.
 */
static inline void
nb_progress_row(const char *operation, const char *verb)
{
	if (nb_row_progress.operation != operation ||
		nb_row_progress.statement != GetCurrentStatementStartTimestamp() ||
		(++nb_row_progress.rows & 4095) == 0)
		nb_progress_rows(operation, verb);
}

/*
 * Until context is reset or deleted, nb_progress_tick reports message when
 * one is due: for an operation that one function call does, whose loops
 * call nb_interrupt (nb_interrupt.h).
 */
void		nb_progress_during(MemoryContext context, const char *message);

/* The NOTICE of nb_progress_during's operation, if one runs and is due (from nb_interrupt). */
void		nb_progress_tick(void);

#endif
