/* pg_citus.h — scoring calls that Citus would feed a model row by row (see pg_citus.c). */
#ifndef PG_CITUS_H
#define PG_CITUS_H

#include "postgres.h"

#include "nodes/pathnodes.h"

/*
 * Refuse (0A000) a call of fn, planned at root, whose model argument is a
 * column of Citus's remote scan named inside an aggregate with DISTINCT.
 */
void		nb_refuse_citus_distinct_model(Node *model, PlannerInfo *root, Oid fn);

#endif
