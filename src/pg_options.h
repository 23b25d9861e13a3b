/*
 * pg_options.h — the prediction options jsonb.
 */
#ifndef PG_OPTIONS_H
#define PG_OPTIONS_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "nb_scorer.h"

/*
 * Parse options (NULL = all defaults) for a model.  A class_prior array is
 * allocated in CurrentMemoryContext.  Every malformed option is an ERROR
 * with SQLSTATE 22023.
 */
void		nb_parse_options(Jsonb *options, const NbIndex *index, NbOptions *opts);

#endif
