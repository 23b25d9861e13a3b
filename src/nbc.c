/*
 * nbc.c — the module's entry point: its magic block and what it does when
 * a backend loads it.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "pg_prepared.h"
#include "pg_unknown.h"

/* PostgreSQL 18 records a module's name and version (pg_get_loaded_modules) */
#ifdef PG_MODULE_MAGIC_EXT
PG_MODULE_MAGIC_EXT(.name = "nbc", .version = NBC_VERSION);
#else
PG_MODULE_MAGIC;
#endif

void		_PG_init(void);

/*
 * nbc.progress: long operations report their progress as NOTICEs.
 * nb_cross_validate and nb_train_em_trace (PL/pgSQL) read it with
 * current_setting(); it is defined here so that SET checks its value and
 * SHOW and pg_settings describe it.
 */
static bool nb_progress = false;

void
_PG_init(void)
{
	nb_prepared_define_settings();
	DefineCustomBoolVariable("nbc.progress",
							 "Reports the progress of long nbc operations as notices.",
							 "nb_cross_validate reports each pass over the rows: the folds trained, "
							 "then each batch of folds scored; nb_train_em each iteration with its "
							 "log likelihood; each with the elapsed time.",
							 &nb_progress, false, PGC_USERSET, 0, NULL, NULL, NULL);
	nb_unknown_init();
	MarkGUCPrefixReserved("nbc");
}
