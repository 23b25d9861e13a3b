/*
 * nbc.c — the module's entry point: its magic block and what it does when
 * a backend loads it.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "pg_prepared.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	nb_prepared_define_settings();
	MarkGUCPrefixReserved("nbc");
}
