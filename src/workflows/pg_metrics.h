/*
 * pg_metrics.h — classification metrics as jsonb, for the nb_metrics
 * aggregates and cross-validation alike.
 */
#ifndef PG_METRICS_H
#define PG_METRICS_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "nb_metrics.h"

/*
 * The metrics of a state as nb_metrics returns them (the keys of the
 * README's Reference); an unranked state has no roc_auc and
 * average_precision.  Built in CurrentMemoryContext.
 */
Jsonb	   *nb_metrics_jsonb(NbMetrics *m);

#endif
