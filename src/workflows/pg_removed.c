/*
 * pg_removed.c — the C functions of workflows that later versions removed:
 * 0.13.0's nbc_calibration_scores and nbc_calibration_fit (nb_calibrate's
 * fit is nbc_calibration's final function since) and the aggregate
 * nbc_em_step, which nb_train_em ran once per iteration before its driver
 * (pg_em_run.c), both dropped by 0.14.0's update; and the serial functions
 * of nb_metrics' internal state up to 0.9.0, which the update to 0.4.0
 * creates and a later one drops.  Their symbols stay for the update
 * scripts from older versions, which create the functions on the way
 * (CREATE FUNCTION looks the symbol up).  A call (possible only between
 * those scripts) is an error, as PostGIS keeps the symbols of its removed
 * functions (postgis_legacy.c).
 */
#include "postgres.h"

#include "fmgr.h"

/* A C function name whose call raises 0A000 with the message and hint given. */
#define REMOVED_FUNCTION(name, ...) \
	PG_FUNCTION_INFO_V1(name); \
	Datum \
	name(PG_FUNCTION_ARGS) \
	{ \
		ereport(ERROR, \
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), __VA_ARGS__)); \
		PG_RETURN_NULL(); \
	}

#define REMOVED_CALIBRATION(name) \
	REMOVED_FUNCTION(name, errmsg("function %s was removed in nbc 0.14.0", #name))

#define REMOVED_EM_STEP(name) \
	REMOVED_FUNCTION(name, errmsg("nbc_em_step was removed in nbc 0.14.0"), \
					 errhint("nb_train_em and nb_train_em_trace run the iterations of EM."))

#define REMOVED_METRICS_SERIAL(name) \
	REMOVED_FUNCTION(name, errmsg("nb_metrics' internal state is retired"), \
					 errhint("Update the extension: ALTER EXTENSION nbc UPDATE."))

REMOVED_CALIBRATION(nbc_calibration_scores_array)
REMOVED_CALIBRATION(nbc_calibration_scores_tsvector)
REMOVED_CALIBRATION(nbc_calibration_scores_jsonb)
REMOVED_CALIBRATION(nbc_calibration_scores_float8)
REMOVED_CALIBRATION(nbc_calibration_scores_text)
REMOVED_CALIBRATION(nbc_calibration_scores_final)
REMOVED_CALIBRATION(nbc_calibration_fit)
REMOVED_EM_STEP(nb_em_step_array_transfn)
REMOVED_EM_STEP(nb_em_step_tsvector_transfn)
REMOVED_EM_STEP(nb_em_step_final)
REMOVED_METRICS_SERIAL(nb_metrics_serialize)
REMOVED_METRICS_SERIAL(nb_metrics_deserialize)
