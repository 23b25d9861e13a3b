/*
 * pg_removed.c — the C functions of workflows that 0.14.0 removed: 0.13.0's
 * nbc_calibration_scores and nbc_calibration_fit (nb_calibrate's fit is
 * nbc_calibration's final function since), and the aggregate nbc_em_step,
 * which nb_train_em ran once per iteration before its driver
 * (pg_em_run.c).  Their symbols stay for the scripts of older versions: a
 * fresh install or an update from before 0.14.0 creates the functions on
 * the way (CREATE FUNCTION looks the symbol up) and 0.14.0's update drops
 * them.  A call (possible only between those scripts) is an error, as
 * PostGIS keeps the symbols of its removed functions (postgis_legacy.c).
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
