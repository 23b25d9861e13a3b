/*
 * pg_calibrate.c — the two steps of nb_calibrate (nb_calibrate.h):
 *
 *   nbc_calibration_scores(model, features, actual, options, classes): an
 *     aggregate scoring each row with its fold's out-of-fold model, as
 *     nb_grid_metrics does for nb_cross_validate; its result is the rows'
 *     log posteriors as a float8[n][1 + C], each row its actual class's
 *     position in classes (the whole model's labels) and then the log
 *     posterior of each of those classes (-Infinity for a class the
 *     out-of-fold model lacks, whose rows were all in the fold);
 *   nbc_calibration_fit(method, scores, classes, options): the fit on the
 *     rows of every fold, as the options that apply it and the out-of-fold
 *     log loss and Brier score before and after.
 *
 * The rows' arrays, megabytes each, are nb_alloc's (nb_alloc.h): written
 * once in order, they fault in a huge page at a time.
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

#include "nb_alloc.h"
#include "nb_calibrate.h"
#include "nb_exact.h"
#include "nb_strmap.h"
#include "pg_aggregate.h"
#include "pg_jsonb.h"
#include "pg_label.h"
#include "pg_predict.h"
#include "pg_prepared.h"
#include "pg_unknown.h"

/*
 * The most bytes of log posteriors the scoring pass keeps, and so the
 * largest result of nbc_calibration_scores: the fit holds them about four
 * times over (the array, its copy in the fits' order, the probabilities
 * and the sigmoids), so that nb_calibrate stays near 1 GB at most.
 * nb_calibrate checks its rows against the same limit before it scores
 * any (NB_CALIBRATION_MAX_BYTES in the SQL).
 */
#define NB_CALIBRATION_MAX_BYTES ((Size) 256 * 1024 * 1024)

/*
 * The rows are kept in blocks of about this many bytes (at least a row),
 * allocated as rows come and never moved: growing one array by
 * reallocation left the memory of its earlier sizes resident too.
 */
#define NB_CALIBRATION_BLOCK_BYTES ((Size) 4 * 1024 * 1024)

typedef struct ScoresState
{
	MemoryContext cxt;			/* holds the state and everything in it */
	NbStrMap	classes;		/* the labels given, ids their positions */
	uint32		C;
	const NbPrepared *pm;		/* the model model_class maps */
	uint32	   *model_class;	/* its classes' positions */
	double	  **blocks;			/* the n rows of 1 + C, block_rows to a block */
	Size		block_rows;
	Size		n;
	Size		max_rows;		/* the most rows within NB_CALIBRATION_MAX_BYTES */
} ScoresState;

static const char *
label_of(text *t, uint32 *len)
{
	*len = VARSIZE_ANY_EXHDR(t);
	return VARDATA_ANY(t);
}

static ScoresState *
scores_state(MemoryContext aggctx, ArrayType *classes)
{
	MemoryContext cxt = AllocSetContextCreate(aggctx, "nbc_calibration_scores state",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	ScoresState *st = palloc0(sizeof(ScoresState));
	Datum	   *elems;
	bool	   *nulls;
	int			count;

	st->cxt = cxt;
	deconstruct_array(classes, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &count);
	nb_strmap_init(&st->classes, (uint32) count);
	for (int i = 0; i < count; i++)
	{
		uint32		len;
		const char *s;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("nbc_calibration_scores classes must not be null")));
		s = label_of(DatumGetTextPP(elems[i]), &len);
		if (nb_strmap_intern(&st->classes, s, len, nb_hash_token(s, len)) != (uint32) i)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("nbc_calibration_scores classes must be distinct")));
	}
	st->C = (uint32) count;
	st->max_rows = NB_CALIBRATION_MAX_BYTES / (sizeof(double) * ((Size) st->C + 1));
	st->block_rows = Max(1, NB_CALIBRATION_BLOCK_BYTES / (sizeof(double) * ((Size) st->C + 1)));
	st->blocks = palloc0(sizeof(double *) * (st->max_rows / st->block_rows + 1));
	MemoryContextSwitchTo(old);
	return st;
}

/* The position among the classes given of a label, an error if it is not there. */
static uint32
class_position(const ScoresState *st, const char *s, uint32 len)
{
	int64		id = nb_strmap_find(&st->classes, s, len, nb_hash_token(s, len));

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("label \"%s\" is not among the classes of the calibration", nb_cut_str(s, len))));
	return (uint32) id;
}

/* Map the model's classes to the positions of their labels (once per model). */
static void
map_model(ScoresState *st, const NbPrepared *pm)
{
	if (st->pm == pm)
		return;
	st->model_class = MemoryContextAlloc(st->cxt, sizeof(uint32) * (pm->index.n_classes + 1));
	for (uint32 c = 0; c < pm->index.n_classes; c++)
	{
		uint32		len;
		const char *s = nb_strmap_str(&pm->index.labels, c, &len);

		CHECK_FOR_INTERRUPTS();
		st->model_class[c] = class_position(st, s, len);
	}
	st->pm = pm;
}

/*
 * Room for one more row, refused (54000) before any memory is taken when
 * the rows would pass NB_CALIBRATION_MAX_BYTES: a new block when the last
 * one is full.
 */
static double *
next_row(ScoresState *st)
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
scores_transfn(FunctionCallInfo fcinfo, NbFeatureInput kind)
{
	MemoryContext aggctx;
	ScoresState *st = PG_ARGISNULL(0) ? NULL : (ScoresState *) PG_GETARG_POINTER(0);
	NbPrepared *pm;
	NbScorer   *scorer;
	double	   *row;
	uint32		len;
	const char *actual;

	aggctx = nb_aggregate_context(fcinfo, "nbc_calibration_scores support functions",
								  "nbc_calibration_scores");
	if (PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("nbc_calibration_scores classes must not be null")));
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
	{
		if (st == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(st);
	}
	if (st == NULL)
		st = scores_state(aggctx, PG_GETARG_ARRAYTYPE_P(5));
	pm = nb_prepared_get(fcinfo, PG_GETARG_DATUM(1), PG_ARGISNULL(4) ? NULL : PG_GETARG_JSONB_P(4),
						 &scorer);
	if (scorer->kind == NB_COMPLEMENT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("complement naive Bayes has no probabilities to calibrate")));
	map_model(st, pm);
	actual = label_of(PG_GETARG_TEXT_PP(3), &len);

	nb_prepared_begin_row(pm);
	nb_row_doc(fcinfo, 2, kind, NULL, pm, scorer);
	nb_count_scored_row(fcinfo, 2, kind, pm);
	(void) nb_score_doc(pm, scorer);

	row = next_row(st);
	row[0] = class_position(st, actual, len);
	for (uint32 k = 1; k <= st->C; k++)
		row[k] = -INFINITY;
	for (uint32 c = 0; c < pm->index.n_classes; c++)
		row[1 + st->model_class[c]] = pm->log_post[c];
	st->n++;
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(nbc_calibration_scores_array);
Datum
nbc_calibration_scores_array(PG_FUNCTION_ARGS)
{
	return scores_transfn(fcinfo, NB_INPUT_ARRAY);
}

PG_FUNCTION_INFO_V1(nbc_calibration_scores_tsvector);
Datum
nbc_calibration_scores_tsvector(PG_FUNCTION_ARGS)
{
	return scores_transfn(fcinfo, NB_INPUT_TSVECTOR);
}

PG_FUNCTION_INFO_V1(nbc_calibration_scores_jsonb);
Datum
nbc_calibration_scores_jsonb(PG_FUNCTION_ARGS)
{
	return scores_transfn(fcinfo, NB_INPUT_JSONB);
}

PG_FUNCTION_INFO_V1(nbc_calibration_scores_float8);
Datum
nbc_calibration_scores_float8(PG_FUNCTION_ARGS)
{
	return scores_transfn(fcinfo, NB_INPUT_FLOAT8);
}

PG_FUNCTION_INFO_V1(nbc_calibration_scores_text);
Datum
nbc_calibration_scores_text(PG_FUNCTION_ARGS)
{
	return scores_transfn(fcinfo, NB_INPUT_TEXT);
}

/* The rows as a float8[n][1 + C]. */
PG_FUNCTION_INFO_V1(nbc_calibration_scores_final);
Datum
nbc_calibration_scores_final(PG_FUNCTION_ARGS)
{
	ScoresState *st;
	int			dims[2];
	int			lbs[2] = {1, 1};
	Size		bytes;
	ArrayType  *result;

	(void) nb_aggregate_context(fcinfo, "nbc_calibration_scores support functions",
								"nbc_calibration_scores");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (ScoresState *) PG_GETARG_POINTER(0);
	/* (at most NB_CALIBRATION_MAX_BYTES: next_row refused more) */
	bytes = sizeof(double) * st->n * (st->C + 1);
	dims[0] = (int) st->n;
	dims[1] = (int) st->C + 1;
	result = nb_alloc(ARR_OVERHEAD_NONULLS(2) + bytes);
	SET_VARSIZE(result, ARR_OVERHEAD_NONULLS(2) + bytes);
	result->ndim = 2;
	result->dataoffset = 0;
	result->elemtype = FLOAT8OID;
	memcpy(ARR_DIMS(result), dims, sizeof(dims));
	memcpy(ARR_LBOUND(result), lbs, sizeof(lbs));
	for (Size done = 0; done < st->n; done += st->block_rows)
	{
		Size		rows = Min(st->block_rows, st->n - done);

		memcpy((double *) ARR_DATA_PTR(result) + done * (st->C + 1), st->blocks[done / st->block_rows],
			   sizeof(double) * rows * (st->C + 1));
		CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_ARRAYTYPE_P(result);
}

/* ---------------------------------------------------------------------- */
/* the fit                                                                */
/* ---------------------------------------------------------------------- */

/* The exact sums of the rows' log loss and Brier score. */
typedef struct RowScores
{
	NbExactSum	log_loss;
	NbExactSum	brier;
} RowScores;

/*
 * Add a row's log loss (scikit-learn's: clipped to [eps, 1 - eps],
 * renormalized) and Brier score, from its probabilities p and its actual
 * class y.
 */
static void
add_row_scores(RowScores *scores, const double *p, uint32 C, uint32 y)
{
	double		sum = 0;
	double		brier = 0;

	/* (a row's Brier score, at most 2, summed plainly: the rows' sum is exact) */
	for (uint32 c = 0; c < C; c++)
	{
		double		e = p[c] - (c == y ? 1.0 : 0.0);

		brier += e * e;
		sum += Min(Max(p[c], DBL_EPSILON), 1 - DBL_EPSILON);
	}
	nb_exact_add(&scores->brier, brier);
	nb_exact_add(&scores->log_loss, -log(Min(Max(p[y], DBL_EPSILON), 1 - DBL_EPSILON) / sum));
}

/* Row i's probabilities under cal into p; l is scratch of C doubles, and so is scratch. */
static void
row_probabilities(const NbCalibrationRows *rows, size_t i, const NbCalibration *cal, double *p,
				  double *l, double *scratch)
{
	uint32		C = rows->C;
	int64		best = -1;

	for (uint32 c = 0; c < C; c++)
	{
		l[c] = rows->log_post[i * C + c];
		if (l[c] != -INFINITY && (best < 0 || l[c] > l[best]))
			best = c;
	}
	if (cal->sigmoid == NULL && !nb_calibration_is_identity(cal))
	{
		/* a temperature alone: each probability's exponential once, p ∝ e^((l - max l) / T) */
		double		sum = 0;

		for (uint32 c = 0; c < C; c++)
		{
			p[c] = l[c] == -INFINITY ? 0.0 : exp((l[c] - l[best]) / cal->temperature);
			sum += p[c];
		}
		for (uint32 c = 0; c < C; c++)
			p[c] /= sum;
		return;
	}
	if (!nb_calibration_is_identity(cal))
		(void) nb_calibration_apply(cal, l, C, best, scratch);
	for (uint32 c = 0; c < C; c++)
		p[c] = l[c] == -INFINITY ? 0.0 : exp(l[c]);
}

/*
 * Log loss and Brier score of rows under cal; with q (not NULL), its
 * values of each row instead of computing them again: with normalize,
 * every class's sigmoid as nb_calibration_fit_sigmoids gives them (unless
 * they underflow), else the probabilities themselves (cal none), as
 * nb_calibration_probabilities gives them.  (The rows of scratch go with
 * the call's memory.)
 */
static void
score_rows(const NbCalibrationRows *rows, const NbCalibration *cal, const double *q, bool normalize,
		   double *log_loss, double *brier)
{
	uint32		C = rows->C;
	double	   *p = palloc(sizeof(double) * C);
	double	   *l = palloc(sizeof(double) * C);
	double	   *scratch = palloc(sizeof(double) * C);
	RowScores	scores;

	nb_exact_init(&scores.log_loss);
	nb_exact_init(&scores.brier);
	for (size_t i = 0; i < rows->n; i++)
	{
		double		sum = 0;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (q != NULL && normalize)
			for (uint32 c = 0; c < C; c++)
				sum += q[c * rows->n + i];
		if (q != NULL && !normalize)
			for (uint32 c = 0; c < C; c++)
				p[c] = q[c * rows->n + i];
		else if (sum >= DBL_MIN)
			for (uint32 c = 0; c < C; c++)
				p[c] = q[c * rows->n + i] / sum;
		else
			row_probabilities(rows, i, cal, p, l, scratch);
		add_row_scores(&scores, p, C, rows->actual[i]);
	}
	*log_loss = nb_exact_value(&scores.log_loss) / rows->n;
	*brier = nb_exact_value(&scores.brier) / rows->n;
}

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

/* A calibration fitted: its map, the option that applies it, its out-of-fold scores. */
typedef struct Fitted
{
	const char *method;
	NbCalibration cal;
	Jsonb	   *option;			/* {"temperature": T} or {"sigmoid": {label: [a, b]}} */
	double		log_loss;
	double		brier;
	uint32		iterations;
} Fitted;

static NbCalibrationStatus
fit_temperature(const NbCalibrationRows *rows, Fitted *f)
{
	JsonbParseState *state = NULL;
	double		t;
	NbCalibrationStatus status = nb_calibration_fit_temperature(rows, &t, &f->iterations);

	if (status != NB_CALIBRATION_OK)
		return status;
	f->method = "temperature";
	nb_calibration_init(&f->cal);
	f->cal.temperature = t;
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_pair(&state, "temperature", t);
	f->option = nb_jsonb_finish(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
	score_rows(rows, &f->cal, NULL, false, &f->log_loss, &f->brier);
	return NB_CALIBRATION_OK;
}

/*
 * Two classes: the second's sigmoid, the first's probability its
 * complement (scikit-learn's).  More: every class's, whose sigmoids of the
 * rows the fit gives for their scores.  q holds the rows' probabilities
 * (nb_calibration_probabilities), and then their sigmoids.
 */
static void
fit_sigmoid(const NbCalibrationRows *rows, ArrayType *classes, double *q, Fitted *f)
{
	JsonbParseState *state = NULL;
	Datum	   *labels;
	int			count;
	double	   *ab = palloc0(sizeof(double) * 2 * rows->C);
	uint32		first = rows->C == 2 ? 1 : 0;

	f->method = "sigmoid";
	report_status(nb_calibration_fit_sigmoids(rows, first, ab, q, &f->iterations));
	deconstruct_array(classes, TEXTOID, -1, false, TYPALIGN_INT, &labels, NULL, &count);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_key(&state, "sigmoid", strlen("sigmoid"));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 c = first; c < rows->C; c++)
	{
		uint32		len;
		const char *s = label_of(DatumGetTextPP(labels[c]), &len);

		nb_push_key(&state, s, len);
		pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		for (int k = 0; k < 2; k++)
		{
			JsonbValue	v;

			v.type = jbvNumeric;
			v.val.numeric = nb_float8_numeric(ab[2 * c + k]);
			pushJsonbValue(&state, WJB_ELEM, &v);
		}
		pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	}
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	f->option = nb_jsonb_finish(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
	nb_calibration_init(&f->cal);
	f->cal.sigmoid = ab;
	f->cal.sigmoid_class = rows->C == 2 ? 1 : NB_SIGMOID_EVERY_CLASS;
	/* (two classes: the complement is computed apart, as nb_calibration_apply does) */
	score_rows(rows, &f->cal, rows->C == 2 ? NULL : q, true, &f->log_loss, &f->brier);
}

static void
push_jsonb(JsonbParseState **state, const char *key, Jsonb *value)
{
	JsonbValue	v;

	nb_push_key(state, key, strlen(key));
	v.type = jbvBinary;
	v.val.binary.data = &value->root;
	v.val.binary.len = VARSIZE(value) - VARHDRSZ;
	pushJsonbValue(state, WJB_VALUE, &v);
}

/*
 * nbc_calibration_fit(method, scores, classes, options): {"method",
 * "options": options with the calibration, "log_loss", "brier" (out of
 * fold, before), "calibrated_log_loss", "calibrated_brier" (after),
 * "iterations"}.  Method "auto" fits both and keeps the one of the lower
 * out-of-fold log loss (temperature on a tie, and sigmoid when no
 * temperature minimizes it), or neither (method "none", the options
 * unchanged) when neither lowers the log loss of the rows before: on
 * separable rows Platt's targets keep the sigmoid's loss above an
 * uncalibrated loss near 0.
 */
PG_FUNCTION_INFO_V1(nbc_calibration_fit);
Datum
nbc_calibration_fit(PG_FUNCTION_ARGS)
{
	char	   *method;
	ArrayType  *scores;
	ArrayType  *classes;
	NbCalibrationRows rows;
	uint32	   *actual;
	double	   *log_post;
	const double *data;
	uint32		C;
	bool	   *seen;
	uint32		n_seen = 0;
	NbCalibration none;
	double	   *probabilities = NULL;
	Fitted		temperature;
	Fitted		sigmoid;
	Fitted		unchanged;
	Fitted	   *chosen;
	JsonbParseState *state = NULL;
	Jsonb	   *options;
	double		before[2];

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("calibration method and classes must not be null")));
	method = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (strcmp(method, "temperature") != 0 && strcmp(method, "sigmoid") != 0 &&
		strcmp(method, "auto") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized calibration method \"%s\"", nb_cut_str(method, strlen(method))),
				 errhint("Valid methods are \"auto\", \"temperature\" and \"sigmoid\".")));
	if (PG_ARGISNULL(1))
		report_status(NB_CALIBRATION_TOO_FEW_ROWS);
	scores = PG_GETARG_ARRAYTYPE_P(1);
	classes = PG_GETARG_ARRAYTYPE_P(2);
	C = (uint32) ArrayGetNItems(ARR_NDIM(classes), ARR_DIMS(classes));
	if (ARR_NDIM(scores) != 2 || ARR_HASNULL(scores) || ARR_ELEMTYPE(scores) != FLOAT8OID ||
		ARR_DIMS(scores)[1] != (int) C + 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("calibration scores must be a float8[rows][1 + classes] without nulls")));
	rows.n = (size_t) ARR_DIMS(scores)[0];
	rows.C = C;
	data = (const double *) ARR_DATA_PTR(scores);
	actual = palloc(sizeof(uint32) * (rows.n + 1));
	log_post = nb_alloc(sizeof(double) * (rows.n * C + 1));
	seen = palloc0(sizeof(bool) * (C + 1));
	for (size_t i = 0; i < rows.n; i++)
	{
		double		a = data[i * (C + 1)];

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!(a >= 0 && a < C && a == floor(a)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("calibration scores name no class in row %zu", i + 1)));
		actual[i] = (uint32) a;
		n_seen += !seen[actual[i]];
		seen[actual[i]] = true;
	}
	if (C < 2 || n_seen < 2)
		report_status(NB_CALIBRATION_ONE_CLASS);
	/* the rows come in an order the plan chose: the fits read them in one of their own */
	nb_calibration_order_rows(rows.n, C, data + 1, C + 1, actual, log_post);
	rows.actual = actual;
	rows.log_post = log_post;

	/* the probabilities, read row by row once: the scores before and the sigmoids read them */
	if (strcmp(method, "temperature") != 0)
	{
		probabilities = nb_alloc(sizeof(double) * (rows.n * C + 1));
		nb_calibration_probabilities(&rows, probabilities);
	}
	nb_calibration_init(&none);
	score_rows(&rows, &none, probabilities, false, &before[0], &before[1]);
	if (strcmp(method, "temperature") == 0)
	{
		report_status(fit_temperature(&rows, &temperature));
		chosen = &temperature;
	}
	else if (strcmp(method, "sigmoid") == 0)
	{
		fit_sigmoid(&rows, classes, probabilities, &sigmoid);
		chosen = &sigmoid;
	}
	else
	{
		bool		have_temperature = fit_temperature(&rows, &temperature) == NB_CALIBRATION_OK;

		fit_sigmoid(&rows, classes, probabilities, &sigmoid);
		chosen = have_temperature && temperature.log_loss <= sigmoid.log_loss ? &temperature : &sigmoid;
		if (!(chosen->log_loss < before[0]))
		{
			unchanged.method = "none";
			unchanged.cal = none;
			unchanged.option = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")));
			unchanged.log_loss = before[0];
			unchanged.brier = before[1];
			unchanged.iterations = 0;
			chosen = &unchanged;
		}
	}
	options = chosen->option;
	if (!PG_ARGISNULL(3))
		options = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, PG_GETARG_DATUM(3),
													 JsonbPGetDatum(options)));

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_key(&state, "method", strlen("method"));
	nb_push_string(&state, chosen->method);
	push_jsonb(&state, "options", options);
	nb_push_pair(&state, "log_loss", before[0]);
	nb_push_pair(&state, "brier", before[1]);
	nb_push_pair(&state, "calibrated_log_loss", chosen->log_loss);
	nb_push_pair(&state, "calibrated_brier", chosen->brier);
	nb_push_pair(&state, "iterations", chosen->iterations);
	PG_RETURN_JSONB_P(nb_jsonb_finish(pushJsonbValue(&state, WJB_END_OBJECT, NULL)));
}
