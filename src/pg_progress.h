/*
 * pg_progress.h — progress of long operations as NOTICEs (pg_progress.c).
 */
#ifndef PG_PROGRESS_H
#define PG_PROGRESS_H

#include "datatype/timestamp.h"

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

#endif
