/*
 * nbc.c — the module's entry point: its magic block and what it does when
 * a backend loads it.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "pg_prepared.h"
#include "pg_progress.h"
#include "pg_unknown.h"

/* PostgreSQL 18 records a module's name and version (pg_get_loaded_modules) */
#ifdef PG_MODULE_MAGIC_EXT
PG_MODULE_MAGIC_EXT(.name = "nbc", .version = NBC_VERSION);
#else
PG_MODULE_MAGIC;
#endif

void		_PG_init(void);

void
_PG_init(void)
{
	nb_prepared_define_settings();
	nb_progress_define_settings();
	nb_unknown_init();
	MarkGUCPrefixReserved("nbc");
}
