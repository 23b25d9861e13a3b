/*
 * pg_prepared.h — models prepared for scoring, kept per call site and
 * across queries.
 *
 * Preparing a model (detoasting, validating, building its hash tables and
 * per-class logarithms) costs far more than scoring a row with it, so a
 * prepared model is kept: each call site (FmgrInfo) finds the models of
 * its recent rows without preparing them again, and the backend keeps
 * prepared models across queries, found by their stored bytes, up to
 * min(nbc.prepared_model_cache, nbc.prepared_model_cache_limit) kilobytes
 * (least recently used goes first; a model in use by a running query
 * stays).  A prepared model serves only a model of exactly its bytes.
 */
#ifndef PG_PREPARED_H
#define PG_PREPARED_H

#include "postgres.h"

#include "fmgr.h"
#include "lib/ilist.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "nb_scorer.h"
#include "nb_settings.h"
#include "nb_token_batch.h"

/* How many option sets one prepared model keeps scorers for. */
#define NB_SCORERS_PER_MODEL 8

typedef struct NbPreparedScorer
{
	MemoryContext ctx;			/* NULL: unused */
	struct varlena *options;	/* their bytes, NULL for the defaults */
	uint64		last_used;
	NbScorer	scorer;
} NbPreparedScorer;

/* The scorers of every option set of a grid (nb_prepared_grid). */
typedef struct NbPreparedGrid
{
	MemoryContext ctx;			/* NULL: none */
	struct varlena *options;	/* the jsonb[] they were built for */
	NbScorerSet set;
} NbPreparedGrid;

/* A model value's bytes as stored: a compressed varlena whole, else its payload. */
typedef struct NbStoredBytes
{
	bool		compressed;
	const char *data;
	Size		size;
} NbStoredBytes;

typedef struct NbPrepared
{
	NbIndex		index;
	NbDoc		doc;			/* the row being scored (grows in doc_ctx) */
	double	   *log_post;		/* its log posterior per class */
	MemoryContext ctx;
	MemoryContext doc_ctx;
	bool		cached;			/* in the backend's cache (else nb_prepared_build's) */
	bool		doc_busy;		/* a row began and did not end (it raised an error) */
	/* the row's first jsonb key the model does not have (into the row), or NULL */
	const char *unknown_key;
	uint32		unknown_key_len;
	/* the backend's list: the bytes prepared, users and memory */
	dlist_node	node;
	NbStoredBytes key;
	int			pins;			/* call sites of running queries holding it */
	Size		bytes;
	NbPreparedScorer scorers[NB_SCORERS_PER_MODEL];
	NbPreparedGrid grid;		/* the last grid asked for */
	uint32	   *jsonb_order;	/* NULL, or the classes in jsonb's key order */
	bool		has_tokenizer;	/* the model's tokenizer, for rows of text */
	NbTokenizer tokenizer;
	NbTokenBatch *batch;		/* NULL before the first row of text */
	Jsonb	   *stored_options; /* the model's prediction options, or NULL */
} NbPrepared;

/*
 * The classes in the order of jsonb object keys (shorter labels first, then
 * byte order), made once per prepared model: a result object of every class
 * is written in it without sorting its keys again.
 */
const uint32 *nb_prepared_jsonb_order(NbPrepared *pm);

/*
 * A model prepared from its validated view in a new context under parent,
 * kept in no cache and found by no call site: for a caller that scores
 * with a model it made itself (EM's iterations, pg_em_run.c).  It reads
 * the model's items in place: the view's bytes must stay until parent is
 * reset or deleted.
 */
NbPrepared *nb_prepared_build(const NbView *view, MemoryContext parent);

/* The prepared model's scorer for options (NULL: defaults), built if it has none. */
NbScorer   *nb_prepared_scorer(NbPrepared *pm, Jsonb *options);

/*
 * The options a scorer is built with: the model's stored options, with the
 * call's (NULL: none) taking precedence key by key (jsonb's ||).
 */
Jsonb	   *nb_prepared_options(const NbPrepared *pm, Jsonb *given);

/* The model datum prepared for this call site, pinned by it until its query ends. */
NbPrepared *nb_prepared_get_model(FunctionCallInfo fcinfo, Datum model);

/*
 * The prepared model's scorers of every option set of a grid, a
 * one-dimensional jsonb[] whose NULL elements mean the defaults: a set of
 * them in its order.  A model keeps the scorers of one grid, so that a call
 * site scoring every row under the same grid builds them once.
 */
NbScorerSet *nb_prepared_grid(NbPrepared *pm, ArrayType *options);

/*
 * Start scoring a row with pm->doc (fill it in doc_ctx), and end it.  The
 * model outlives a query that fails halfway through a row: the next row
 * then starts with a new document rather than one an error left half done.
 */
void		nb_prepared_begin_row(NbPrepared *pm);
void		nb_prepared_end_row(NbPrepared *pm);

/* The token batch of the model's rows of text, made at the first. */
NbTokenBatch *nb_prepared_token_batch(NbPrepared *pm);

/* The rows a call site counted for the statement report of nbc.unknown_features (pg_unknown.c). */
typedef struct NbSiteRows
{
	const void *report;			/* compared, never read */
	int64		rows;
} NbSiteRows;

NbSiteRows *nb_prepared_site_rows(FunctionCallInfo fcinfo);

/*
 * The call site's cache of nb_label_arg, for an argument naming a class
 * (nb_probability's label, nb_explain's against) of any type.
 */
void	  **nb_prepared_label_cast(FunctionCallInfo fcinfo);

/* Room for n token references, per-row scratch of the call site. */
NbTokenRef *nb_prepared_refs(FunctionCallInfo fcinfo, uint32 n);

/* Define nbc.prepared_model_cache and nbc.prepared_model_cache_limit (at load). */
void		nb_prepared_define_settings(void);

#endif
