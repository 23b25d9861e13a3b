/*
 * pg_progress.c — the settings of progress NOTICEs and the clock that
 * spaces them: a long operation reports a step only when
 * nbc.progress_interval seconds have passed since it began or last
 * reported, so that a short call stays quiet.  The PL/pgSQL workflows read
 * the same two settings with current_setting().
 */
#include "postgres.h"

#include <math.h>

#include "utils/guc.h"
#include "utils/timestamp.h"

#include "pg_progress.h"

static bool progress = true;
static double progress_interval = 5;

void
nb_progress_define_settings(void)
{
	DefineCustomBoolVariable("nbc.progress",
							 "Reports the progress of long nbc operations as notices.",
							 "Cross-validation, calibration and EM report a step at most every "
							 "nbc.progress_interval seconds.",
							 &progress, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("nbc.progress_interval",
							 "Seconds between two progress notices of an nbc operation.",
							 "The first comes that long after the operation began; 0 reports every step.",
							 &progress_interval, 5, 0, 86400, PGC_USERSET, 0, NULL, NULL, NULL);
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
