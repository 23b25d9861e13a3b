/*
 * pg_calibrate.c — nb_calibrate's aggregate nbc_calibration: each row
 * scored with its fold's out-of-fold model (whole minus the fold's rows,
 * made when the row's fold is not the previous row's: nb_calibrate gives
 * the rows fold by fold), its actual class and log posteriors kept, each
 * class at its position in classes; the final function fits method to the
 * rows (nb_calibrate_fit.h).  The rows' blocks, megabytes each, are
 * nb_alloc's (nb_alloc.h): written once in order, they fault in a huge
 * page at a time.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "nb_alloc.h"
#include "nb_calibrate_fit.h"
#include "nb_vocab.h"
#include "pg_aggregate.h"
#include "pg_jsonb.h"
#include "pg_progress.h"
#include "pg_label.h"
#include "pg_predict.h"
#include "pg_prepared.h"
#include "pg_unknown.h"

/* pg_subtract.c's: a fold's out-of-fold model is whole minus the fold's */
extern PGDLLEXPORT Datum nb_subtract(PG_FUNCTION_ARGS);

/*
 * The most bytes of log posteriors the scoring keeps, which the fit holds
 * about three times over (src/README.md, Calibration); nb_calibrate checks
 * its rows against the same limit before it scores any.
 */
#define NB_CALIBRATION_MAX_BYTES ((Size) 256 * 1024 * 1024)

/*
 * The rows are kept in blocks of about this many bytes (at least a row),
 * allocated as rows come and never moved: growing one array by
 * reallocation left the memory of its earlier sizes resident too.
 */
#define NB_CALIBRATION_BLOCK_BYTES ((Size) 4 * 1024 * 1024)

#define AGGREGATE "nbc_calibration"

typedef struct CalibrationState
{
	MemoryContext cxt;			/* holds the state and everything in it */
	NbVocab		classes;		/* the labels given, ids their positions */
	uint32		C;
	NbCalibrationMethod method;
	Jsonb	   *options;		/* NULL: none */
	int64	   *folds;			/* the folds of fold_models, in its order */
	int			n_folds;
	int64		fold;			/* the fold being scored */
	NbPrepared *pm;				/* its out-of-fold model, NULL before the first row */
	uint32	   *model_class;	/* pm's classes' positions */
	double	  **blocks;			/* the n rows of 1 + C, block_rows to a block */
	Size		block_rows;
	Size		n;
	Size		max_rows;		/* the most rows within NB_CALIBRATION_MAX_BYTES */
	int			folds_begun;	/* the folds scored, the current one too */
	bool		report;			/* nbc.progress */
	TimestampTz started;		/* the first row */
	TimestampTz reported;		/* the last progress NOTICE, or started */
} CalibrationState;

static const char *const method_names[] = {"none", "temperature", "sigmoid", "auto"};

/*
 * An error's CONTEXT line: the fold being scored, or the fit.  (nb_calibrate
 * runs the aggregate outside any exception block, whose rollback would keep
 * a cancel from the client until the scores were freed: no block adds what
 * calibration was doing to the DETAIL.)
 */
static void
scoring_context(void *arg)
{
	const CalibrationState *st = arg;

	errcontext("nbc_calibration scoring fold " INT64_FORMAT, st->fold);
}

static void
fitting_context(void *arg)
{
	const CalibrationState *st = arg;

	errcontext("nbc_calibration fitting method \"%s\"", method_names[st->method]);
}

static const char *
label_of(text *t, uint32 *len)
{
	*len = VARSIZE_ANY_EXHDR(t);
	return VARDATA_ANY(t);
}

static NbCalibrationMethod
method_of(text *t)
{
	char	   *method = text_to_cstring(t);

	for (int m = NB_CALIBRATE_TEMPERATURE; m <= NB_CALIBRATE_AUTO; m++)
		if (strcmp(method, method_names[m]) == 0)
			return (NbCalibrationMethod) m;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unrecognized calibration method \"%s\"", nb_cut_str(method, strlen(method))),
			 errhint("Valid methods are \"auto\", \"temperature\" and \"sigmoid\".")));
	pg_unreachable();
}

/* The classes given, distinct and not null, into st. */
static void
read_classes(CalibrationState *st, ArrayType *classes)
{
	Datum	   *elems;
	bool	   *nulls;
	int			count;

	deconstruct_array(classes, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &count);
	nb_vocab_init(&st->classes);
	for (int i = 0; i < count; i++)
	{
		uint32		len;
		const char *s;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg(AGGREGATE " classes must not be null")));
		s = label_of(DatumGetTextPP(elems[i]), &len);
		if (nb_vocab_intern(&st->classes, s, len, nb_hash_token(s, len)) != (uint32) i)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(AGGREGATE " classes must be distinct")));
	}
	st->C = (uint32) count;
}

/* The state, from the first row's arguments (after the state: 4 to 9). */
static CalibrationState *
calibration_state(FunctionCallInfo fcinfo, MemoryContext aggctx)
{
	MemoryContext cxt = AllocSetContextCreate(aggctx, AGGREGATE " state", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	CalibrationState *st = palloc0(sizeof(CalibrationState));
	ArrayType  *folds;

	for (int arg = 4; arg <= 9; arg++)
		if (arg != 8 && PG_ARGISNULL(arg))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg(AGGREGATE " models, folds, classes and method must not be null")));
	st->cxt = cxt;
	st->method = method_of(PG_GETARG_TEXT_PP(9));
	st->options = PG_ARGISNULL(8) ? NULL : PG_GETARG_JSONB_P_COPY(8);
	folds = PG_GETARG_ARRAYTYPE_P(6);
	if (ARR_NDIM(folds) > 1 || ARR_HASNULL(folds) || ARR_ELEMTYPE(folds) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(AGGREGATE " folds must be a one-dimensional bigint[] without nulls")));
	st->n_folds = ArrayGetNItems(ARR_NDIM(folds), ARR_DIMS(folds));
	st->folds = palloc(sizeof(int64) * (st->n_folds + 1));
	memcpy(st->folds, ARR_DATA_PTR(folds), sizeof(int64) * st->n_folds);
	read_classes(st, PG_GETARG_ARRAYTYPE_P(7));
	st->max_rows = NB_CALIBRATION_MAX_BYTES / (sizeof(double) * ((Size) st->C + 1));
	st->block_rows = Max(1, NB_CALIBRATION_BLOCK_BYTES / (sizeof(double) * ((Size) st->C + 1)));
	st->blocks = palloc0(sizeof(double *) * (st->max_rows / st->block_rows + 1));
	st->report = nb_progress_on();
	st->started = st->reported = GetCurrentTimestamp();
	MemoryContextSwitchTo(old);
	return st;
}

/* The position among the classes given of a label, an error if it is not there. */
static uint32
class_position(const CalibrationState *st, const char *s, uint32 len)
{
	int64		id = nb_vocab_find(&st->classes, s, len, nb_hash_token(s, len));

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("label \"%s\" is not among the classes of the calibration", nb_cut_str(s, len))));
	return (uint32) id;
}

/* fold_models' model of fold (argument 5, at folds' position of it). */
static Datum
fold_model(FunctionCallInfo fcinfo, const CalibrationState *st, int64 fold)
{
	ArrayType  *models = PG_GETARG_ARRAYTYPE_P(5);
	Datum	   *elems;
	bool	   *nulls;
	int			count;

	/* (nb_model: a varlena of int alignment, as CREATE TYPE made it) */
	deconstruct_array(models, ARR_ELEMTYPE(models), -1, false, TYPALIGN_INT, &elems, &nulls, &count);
	for (int i = 0; i < st->n_folds && i < count; i++)
		if (st->folds[i] == fold && !nulls[i])
			return elems[i];
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg(AGGREGATE " has no model of fold " INT64_FORMAT, fold)));
	pg_unreachable();
}

/*
 * The out-of-fold model of the row's fold, prepared (found by its bytes
 * among the prepared models, as any call's), its classes mapped to the
 * positions of their labels: when the row's fold is not the previous
 * row's.
 */
static void
use_fold(FunctionCallInfo fcinfo, CalibrationState *st, int64 fold)
{
	Datum		model;
	NbPrepared *pm;

	if (st->pm != NULL && st->fold == fold)
		return;
	/* (first: an error below names this fold, scoring_context) */
	st->fold = fold;
	model = DirectFunctionCall2(nb_subtract, PG_GETARG_DATUM(4), fold_model(fcinfo, st, fold));
	pm = nb_prepared_get_model(fcinfo, model);
	/* (st->cxt is an AllocSet: pfree works there) */
	if (st->model_class != NULL)
		pfree(st->model_class);
	st->model_class = MemoryContextAlloc(st->cxt, sizeof(uint32) * (pm->index.n_labels + 1));
	for (uint32 c = 0; c < pm->index.n_labels; c++)
	{
		uint32		len;
		const char *s = nb_vocab_str(&pm->index.labels, c, &len);

		CHECK_FOR_INTERRUPTS();
		st->model_class[c] = class_position(st, s, len);
	}
	st->pm = pm;
	st->folds_begun++;
	if (st->report && nb_progress_due(&st->reported))
		ereport(NOTICE,
				(errmsg("nb_calibrate: scoring fold %d of %d", st->folds_begun, st->n_folds),
				 errdetail("The scoring began %.1f s ago.", nb_progress_elapsed(st->started))));
}

/*
 * Room for one more row, refused (54000) before any memory is taken when
 * the rows would pass NB_CALIBRATION_MAX_BYTES: a new block when the last
 * one is full.
 */
static double *
next_row(CalibrationState *st)
{
	Size		row_bytes = sizeof(double) * ((Size) st->C + 1);
	Size		block = st->n / st->block_rows;
	Size		in_block = st->n % st->block_rows;

	if (st->n >= st->max_rows)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many rows to calibrate"),
				 errdetail("The log posteriors of %zu rows of %u classes would take %zu bytes, more than the limit of %zu.",
						   st->n + 1, st->C, (st->n + 1) * row_bytes, NB_CALIBRATION_MAX_BYTES)));
	if (in_block == 0)
	{
		MemoryContext old = MemoryContextSwitchTo(st->cxt);

		st->blocks[block] = nb_alloc(st->block_rows * row_bytes);
		MemoryContextSwitchTo(old);
	}
	return &st->blocks[block][in_block * (st->C + 1)];
}

static Datum
calibration_transfn(FunctionCallInfo fcinfo, NbFeatureInput kind)
{
	MemoryContext aggctx;
	CalibrationState *st = PG_ARGISNULL(0) ? NULL : (CalibrationState *) PG_GETARG_POINTER(0);
	NbPrepared *pm;
	NbScorer   *scorer;
	double	   *row;
	uint32		len;
	const char *actual;
	ErrorContextCallback context = {.callback = scoring_context};

	aggctx = nb_aggregate_context(fcinfo, AGGREGATE " support functions", AGGREGATE);
	if (st == NULL)
		st = calibration_state(fcinfo, aggctx);
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		PG_RETURN_POINTER(st);
	context.arg = st;
	context.previous = error_context_stack;
	error_context_stack = &context;
	use_fold(fcinfo, st, PG_GETARG_INT64(1));
	pm = st->pm;
	scorer = nb_prepared_scorer(pm, st->options);
	if (scorer->kind == NB_COMPLEMENT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("complement naive Bayes has no probabilities to calibrate")));
	actual = label_of(PG_GETARG_TEXT_PP(3), &len);

	nb_prepared_begin_row(pm);
	nb_row_doc(fcinfo, 2, kind, NULL, pm, scorer);
	nb_count_scored_row(fcinfo, 2, kind, pm);
	(void) nb_score_doc(pm, scorer);

	row = next_row(st);
	row[0] = class_position(st, actual, len);
	for (uint32 k = 1; k <= st->C; k++)
		row[k] = -INFINITY;
	for (uint32 c = 0; c < pm->index.n_labels; c++)
		row[1 + st->model_class[c]] = pm->log_post[c];
	st->n++;
	error_context_stack = context.previous;
	PG_RETURN_POINTER(st);
}

NB_FEATURE_FUNCTIONS(nbc_calibration, calibration_transfn);

/* ---------------------------------------------------------------------- */
/* the fit                                                                */
/* ---------------------------------------------------------------------- */

static void
report_status(NbCalibrationStatus status)
{
	switch (status)
	{
		case NB_CALIBRATION_OK:
			return;
		case NB_CALIBRATION_TOO_FEW_ROWS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("no out-of-fold row to calibrate on"),
					 errdetail("Every row's actual class has probability 0 under its out-of-fold model.")));
			break;
		case NB_CALIBRATION_ONE_CLASS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("calibration needs rows of at least two classes")));
			break;
		case NB_CALIBRATION_SEPARATED:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("no temperature minimizes the out-of-fold log loss"),
					 errdetail("Every row's actual class is the most probable out of fold: the log loss falls toward 0 as the temperature falls toward 0."),
					 errhint("Calibrate on more rows, or with method \"sigmoid\".")));
			break;
		case NB_CALIBRATION_NO_BETTER:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("no temperature minimizes the out-of-fold log loss"),
					 errdetail("The out-of-fold posteriors are no better than the uniform distribution: the log loss falls as the temperature grows without bound.")));
			break;
	}
	elog(ERROR, "unexpected calibration status %d", (int) status);
}

/*
 * The rows in the fits' order (they came in one the plan chose), their
 * blocks freed: actual and log_post, nb_alloc's, into rows.
 */
static void
ordered_rows(CalibrationState *st, NbCalibrationRows *rows)
{
	const double **row = nb_alloc(sizeof(double *) * (st->n + 1));
	uint32	   *actual = nb_alloc(sizeof(uint32) * (st->n + 1));
	double	   *log_post = nb_alloc(sizeof(double) * (st->n * st->C + 1));

	for (Size i = 0; i < st->n; i++)
	{
		const double *r = &st->blocks[i / st->block_rows][(i % st->block_rows) * (st->C + 1)];

		CHECK_FOR_INTERRUPTS();
		actual[i] = (uint32) r[0];
		row[i] = r + 1;
	}
	nb_calibration_order_rows(st->n, st->C, row, actual, log_post);
	nb_free(row);
	rows->n = st->n;
	rows->C = st->C;
	rows->actual = actual;
	rows->log_post = log_post;
	/* (the state is the final function's to change: FINALFUNC_MODIFY = READ_WRITE) */
	for (Size b = 0; b * st->block_rows < st->n; b++)
		nb_free(st->blocks[b]);
	st->n = 0;
}

/* The option that applies fit: {"temperature": T} or {"sigmoid": {label: [a, b]}}, or {}. */
static Jsonb *
fit_option(const CalibrationState *st, const NbCalibrationFit *fit)
{
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	if (fit->method == NB_CALIBRATE_TEMPERATURE)
		nb_push_pair(&state, "temperature", fit->cal.temperature);
	if (fit->method == NB_CALIBRATE_SIGMOID)
	{
		nb_push_key(&state, "sigmoid", strlen("sigmoid"));
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		for (uint32 c = st->C == 2 ? 1 : 0; c < st->C; c++)
		{
			uint32		len;
			const char *s = nb_vocab_str(&st->classes, c, &len);

			nb_push_key(&state, s, len);
			pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
			for (int k = 0; k < 2; k++)
			{
				JsonbValue	v;

				v.type = jbvNumeric;
				v.val.numeric = nb_float8_numeric(fit->sigmoid[2 * c + k]);
				pushJsonbValue(&state, WJB_ELEM, &v);
			}
			pushJsonbValue(&state, WJB_END_ARRAY, NULL);
		}
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	return nb_jsonb_finish(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

PG_FUNCTION_INFO_V1(nbc_calibration_final);
Datum
nbc_calibration_final(PG_FUNCTION_ARGS)
{
	CalibrationState *st;
	NbCalibrationRows rows;
	NbCalibrationFit fit;
	NbCalibrationStatus status;
	JsonbParseState *state = NULL;
	Jsonb	   *options;
	ErrorContextCallback context = {.callback = fitting_context};

	(void) nb_aggregate_context(fcinfo, AGGREGATE " support functions", AGGREGATE);
	if (PG_ARGISNULL(0))
		report_status(NB_CALIBRATION_TOO_FEW_ROWS);
	st = (CalibrationState *) PG_GETARG_POINTER(0);
	context.arg = st;
	context.previous = error_context_stack;
	error_context_stack = &context;
	ordered_rows(st, &rows);
	status = nb_calibration_fit(&rows, st->method, &fit);
	nb_free((void *) rows.actual);
	nb_free((void *) rows.log_post);
	report_status(status);
	error_context_stack = context.previous;
	options = fit_option(st, &fit);
	if (st->options != NULL)
		options = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(st->options),
													 JsonbPGetDatum(options)));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_key(&state, "method", strlen("method"));
	nb_push_string(&state, method_names[fit.method]);
	nb_push_key(&state, "options", strlen("options"));
	nb_push_jsonb(&state, options);
	nb_push_pair(&state, "log_loss", fit.log_loss);
	nb_push_pair(&state, "brier", fit.brier);
	nb_push_pair(&state, "calibrated_log_loss", fit.calibrated_log_loss);
	nb_push_pair(&state, "calibrated_brier", fit.calibrated_brier);
	nb_push_pair(&state, "iterations", fit.iterations);
	nb_calibration_fit_free(&fit);
	PG_RETURN_JSONB_P(nb_jsonb_finish(pushJsonbValue(&state, WJB_END_OBJECT, NULL)));
}
