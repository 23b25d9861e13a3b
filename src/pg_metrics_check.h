/*
 * pg_metrics_check.h — nb_metrics' signals of an analyst's mix-ups: the
 * probabilities given as the actual label (an error), and labels of the
 * two sides that cannot be compared (a WARNING).
 */
#ifndef PG_METRICS_CHECK_H
#define PG_METRICS_CHECK_H

#include "postgres.h"

#include "fmgr.h"

#include "nb_metrics.h"

/*
 * ERROR when the actual label (argument 1, as text) holds probabilities:
 * a jsonb argument, or text that is an object of numbers (the arguments
 * of nb_metrics(actual, predicted) given the other way round).
 */
void		nb_metrics_check_actual(FunctionCallInfo fcinfo, const text *actual);

/*
 * WARNING when, over ten rows or more, no actual label is ever among the
 * predicted ones, or (rows with probabilities that are kept) some actual
 * label is never among the probabilities' classes (for nb_metrics' final
 * function, of a single group: see nb_aggregate_single_group).
 */
void		nb_metrics_warn_labels(const NbMetrics *m);

#endif
