/*
 * pg_metrics.h — what the nb_metrics and nb_grid_metrics aggregates share:
 * their state, nb_metrics_state (a type, held as an expanded object in a
 * context of its own: src/README.md, Metrics), and its result as jsonb.
 */
#ifndef PG_METRICS_H
#define PG_METRICS_H

#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/expandeddatum.h"
#include "utils/jsonb.h"

#include "nb_grid.h"
#include "nb_metrics.h"

/*
 * The largest serialized state: its base64 text form, with a varlena header
 * and a NUL, fits in a value, so every state can travel as text.
 */
#define NB_METRICS_STATE_MAX_SIZE (((uint64) MaxAllocSize - VARHDRSZ - 1) / 4 * 3)

typedef struct NbMetricsState
{
	ExpandedObjectHeader hdr;
	bool		is_grid;		/* nb_grid_metrics' (grid) or nb_metrics' (single) */
	NbMetrics	single;
	NbGrid		grid;
	struct varlena *options;	/* a grid's option sets, as the first row gave them */
	/* nb_metrics' probability rows: scratch for one row (pg_metrics.c) */
	uint32		row_cap;
	uint32	   *row_class;
	double	   *row_prob;
	StringInfoData keys;		/* the last row's keys (pg_metrics.c, read_keys) */
	StringInfoData row_options; /* the last row's options, which the state's form matched */
} NbMetricsState;

/*
 * A new state in its own context under parent: single (as nb_metrics_init),
 * or a grid of n_sets option sets when options is not NULL.
 */
NbMetricsState *nb_metrics_state_create(MemoryContext parent, bool scored, bool ranked,
										bool weighted, const struct varlena *options,
										uint32 n_sets);

/*
 * The state of argument 0 of a transition function, to update in place:
 * NULL for a NULL argument, the state itself when it is this aggregate's
 * read/write expanded object, else an expanded copy of it in aggctx.
 */
NbMetricsState *nb_metrics_state_for_update(FunctionCallInfo fcinfo, MemoryContext aggctx);

/* The state of a datum to read (expanded, or made from the flat form in the current context). */
NbMetricsState *nb_metrics_state_open(Datum d);

/*
 * Done with a state nb_metrics_state_open gave for d: one it made from the
 * flat form is freed now (not when the caller's context goes: a Citus
 * coordinator combines a state per shard in one context).
 */
void		nb_metrics_state_close(NbMetricsState *st, Datum d);

/* A transition or combine function's result: the state's read/write datum, or NULL for none. */
static inline Datum
nb_metrics_state_return(FunctionCallInfo fcinfo, NbMetricsState *st)
{
	if (st == NULL)
		PG_RETURN_NULL();
	return EOHPGetRWDatum(&st->hdr);
}

/* st (or NULL) if it is a grid's (nb_grid_metrics) or not as grid says, else an error. */
NbMetricsState *nb_metrics_state_of_kind(NbMetricsState *st, bool grid);

/*
 * The size of the state's serialized form (without a varlena header); ERROR
 * 54000 if it passed NB_METRICS_STATE_MAX_SIZE.
 */
Size		nb_metrics_state_check_size(NbMetricsState *st);

/*
 * The combine function of both aggregates: the first state updated in place
 * when it is this aggregate's, else a copy; the second read where it is
 * (expanded) or from its flat form (from a parallel worker, or Citus's
 * worker as text).  grid: both must be nb_grid_metrics' states (nb_metrics'
 * final function refuses a grid's).
 */
Datum		nb_metrics_state_combine_args(FunctionCallInfo fcinfo, MemoryContext aggctx,
										  bool grid);

/* The error of a label that would be one more than a state takes. */
void		nb_metrics_state_too_many_labels(const NbMetricsState *st, const char *label,
											 uint32 len);

/*
 * The metrics of a state as nb_metrics returns them (the keys of the
 * README's Reference); an unranked state has no roc_auc and
 * average_precision.  Built in CurrentMemoryContext (pg_metrics.c).
 */
Jsonb	   *nb_metrics_jsonb(NbMetrics *m);

#endif
