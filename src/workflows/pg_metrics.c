/*
 * pg_metrics.c — the nb_metrics aggregates: classification metrics of a
 * query's predictions, as jsonb (see src/README.md for the definitions),
 * over an nb_metrics_state (pg_metrics.h).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "pg_aggregate.h"
#include "pg_jsonb.h"
#include "pg_label.h"
#include "pg_metrics.h"

PG_FUNCTION_INFO_V1(nb_metrics_combine);
PG_FUNCTION_INFO_V1(nb_metrics_final);

/* The aggregate's memory context (a direct call is refused). */
static MemoryContext
aggregate_context(FunctionCallInfo fcinfo)
{
	return nb_aggregate_context(fcinfo, "nb_metrics support functions", "nb_metrics");
}

/* The form of a transition function's rows: which arguments follow the prediction. */
typedef struct RowForm
{
	bool		scored;			/* probabilities, not a label */
	int			weight_arg;		/* the weight's argument, or -1 */
	int			options_arg;	/* the options' argument, or -1 */
} RowForm;

/*
 * The row's weight (1 without a weight argument); false when the row is
 * skipped: a NULL actual, prediction or weight.
 */
static bool
row_weight(FunctionCallInfo fcinfo, const RowForm *form, double *weight)
{
	*weight = 1.0;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		return false;
	if (form->weight_arg >= 0)
	{
		if (PG_ARGISNULL(form->weight_arg))
			return false;
		*weight = PG_GETARG_FLOAT8(form->weight_arg);
		if (isnan(*weight) || isinf(*weight) || *weight < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid nb_metrics weight: %s", float8out_internal(*weight)),
					 errdetail("Weights must be finite and not negative.")));
	}
	return true;
}

/* The id of a label, added if new; called in the state's context. */
static uint32
label_id(NbMetricsState *st, const char *label, uint32 len)
{
	int64		id = nb_metrics_find(&st->single, label, len);

	if (id >= 0)
		return (uint32) id;
	if (st->single.labels.count >= NB_METRICS_MAX_CLASSES)
		nb_metrics_state_too_many_labels(st, label, len);
	return nb_metrics_class(&st->single, label, len);
}

static void
parse_option(const char *name, const JsonbValue *value, void *arg)
{
	if (strcmp(name, "ranked") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized nb_metrics option \"%s\"", nb_cut_str(name, strlen(name))),
				 errhint("The only option is \"ranked\".")));
	if (value->type != jbvBool)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_metrics option \"ranked\" must be true or false")));
	*(bool *) arg = value->val.boolean;
}

/* Whether the options (NULL: the defaults) ask for the ranked form, which keeps the rows. */
static bool
ranked_option(Jsonb *options)
{
	bool		ranked = true;

	if (options == NULL)
		return true;
	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_metrics options must be a JSON object")));
	nb_jsonb_each_option(options, parse_option, &ranked);
	return ranked;
}

/*
 * A row's options agree with the state's form; the bytes of the last that
 * did are kept, so that rows with the same options (a constant, mostly) are
 * not parsed again.
 */
static void
check_row_options(FunctionCallInfo fcinfo, const RowForm *form, NbMetricsState *st)
{
	Jsonb	   *options = PG_ARGISNULL(form->options_arg) ? NULL : PG_GETARG_JSONB_P(form->options_arg);
	const char *bytes = options != NULL ? (const char *) options : "";
	int			len = options != NULL ? (int) VARSIZE(options) : 0;

	if (st->row_options.data != NULL && st->row_options.len == len &&
		memcmp(st->row_options.data, bytes, len) == 0)
		return;
	if (ranked_option(options) != st->single.ranked)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_metrics needs the same options in every row"),
				 errdetail("The first row asked for %s form.",
						   st->single.ranked ? "the ranked" : "the unranked")));
	if (st->row_options.data == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(st->hdr.eoh_context);

		initStringInfo(&st->row_options);
		MemoryContextSwitchTo(old);
	}
	resetStringInfo(&st->row_options);
	appendBinaryStringInfo(&st->row_options, bytes, len);
}

/*
 * An actual label of type jsonb is nb_predict_proba's result in the place
 * of the actual label (nb_metrics(probabilities, actual)): refused by its
 * type at a group's first row, before every distinct object is counted as a
 * class.  (Probabilities cast to text are labels like any other text.)
 */
static void
check_actual_type(FunctionCallInfo fcinfo)
{
	if (get_fn_expr_argtype(fcinfo->flinfo, 1) == JSONBOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("nb_metrics actual label cannot be of type jsonb"),
				 errhint("The actual label comes first, then the prediction: nb_metrics(actual, nb_predict_proba(model, features)) or nb_metrics(actual, nb_predict(model, features)). Cast a jsonb label to text.")));
}

/*
 * A transition function's state (argument 0, updated in place) and the
 * row's weight: false for a row to skip (*st may then be NULL), else the
 * state, made at the first row in the form the row's options ask for.
 */
static bool
begin_row(FunctionCallInfo fcinfo, const RowForm *form, NbMetricsState **st, double *weight)
{
	MemoryContext aggctx = aggregate_context(fcinfo);
	bool		weighted = form->weight_arg >= 0;

	*st = nb_metrics_state_of_kind(nb_metrics_state_for_update(fcinfo, aggctx), false);
	if (*st == NULL)
		check_actual_type(fcinfo);
	/* a NULL actual label is skipped, as SQL's aggregates skip NULLs, and counted */
	if (!PG_ARGISNULL(1) && !row_weight(fcinfo, form, weight))
		return false;
	if (*st == NULL)
	{
		bool		ranked = form->options_arg < 0 || PG_ARGISNULL(form->options_arg) ||
			ranked_option(PG_GETARG_JSONB_P(form->options_arg));

		*st = nb_metrics_state_create(aggctx, form->scored, ranked, weighted, NULL, 0);
	}
	/* states of another form come only from a user's own aggregate over these functions */
	else if ((*st)->single.scored != form->scored || (*st)->single.weighted != weighted ||
			 (form->options_arg < 0 && form->scored && !(*st)->single.ranked))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot add rows of another form to an nb_metrics state")));
	if (form->options_arg >= 0)
		check_row_options(fcinfo, form, *st);
	if (PG_ARGISNULL(1))
	{
		nb_metrics_add_null_actual(&(*st)->single);
		return false;
	}
	return true;
}

/* Room for n classes in the row's scratch (a longer row has new keys: read_keys refills it). */
static void
reserve_row(NbMetricsState *st, uint32 n)
{
	if (n <= st->row_cap)
		return;
	/* the state's context is an AllocSet: pfree is fine there */
	if (st->row_cap > 0)
	{
		pfree(st->row_class);
		pfree(st->row_prob);
	}
	st->row_cap = Max(n, 2 * st->row_cap);
	st->row_class = MemoryContextAlloc(st->hdr.eoh_context, sizeof(uint32) * st->row_cap);
	st->row_prob = MemoryContextAlloc(st->hdr.eoh_context, sizeof(double) * st->row_cap);
}

static void
key_class(uint32 i, const char *key, uint32 len, void *arg)
{
	NbMetricsState *st = arg;

	st->row_class[i] = label_id(st, key, len);
}

/*
 * Each key's class (added if new) into st->row_class, and the keys kept in
 * st->keys: rows mostly have the last row's keys in the same order
 * (nb_predict_proba names every class of its model), and then their
 * classes are known without this.
 */
static void
read_keys(NbMetricsState *st, const Jsonb *proba)
{
	MemoryContext old = MemoryContextSwitchTo(st->hdr.eoh_context);

	if (st->keys.data == NULL)
		initStringInfo(&st->keys);
	/* row_class is rewritten: no row matches until the keys are all read */
	resetStringInfo(&st->keys);
	nb_jsonb_each_key(proba, key_class, st);
	nb_jsonb_keep_keys(proba, &st->keys);
	MemoryContextSwitchTo(old);
}

/* The probability of key i is not a number (problem NULL) or the number problem. */
static void
invalid_probability(const Jsonb *proba, uint32 i, const char *problem)
{
	uint32		len;
	const char *key = nb_jsonb_key(proba, i, &len);

	/* a negative number is most likely nb_predict_log_proba's */
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid nb_metrics probabilities"),
			 problem == NULL ?
			 errdetail("The probability of \"%s\" is not a number.", nb_cut_str(key, len)) :
			 errdetail("The probability of \"%s\" is %s, outside [0, 1].",
					   nb_cut_str(key, len), problem),
			 problem != NULL && problem[0] == '-' ?
			 errhint("Log probabilities (nb_predict_log_proba) are not probabilities: pass nb_predict_proba's.") : 0));
}

/*
 * A row's probabilities, validated, into st->row_prob and their classes
 * into st->row_class; returns their number.
 */
static uint32
read_probabilities(NbMetricsState *st, const Jsonb *proba)
{
	uint32		n;
	uint32		numbers;

	if (!JB_ROOT_IS_OBJECT(proba) || JB_ROOT_COUNT(proba) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid nb_metrics probabilities"),
				 errdetail(!JB_ROOT_IS_OBJECT(proba) ? "The probabilities are not a jsonb object." :
						   "The probabilities name no class."),
				 errhint("Pass an object of label: probability as nb_predict_proba returns it.")));
	n = JB_ROOT_COUNT(proba);
	reserve_row(st, n);
	if (!nb_jsonb_read_numbers(proba, &st->keys, st->row_prob, &numbers))
		read_keys(st, proba);
	for (uint32 i = 0; i < numbers; i++)
		if (!(st->row_prob[i] >= 0 && st->row_prob[i] <= 1))
			invalid_probability(proba, i, float8out_internal(st->row_prob[i]));
	if (numbers < n)
		invalid_probability(proba, numbers, NULL);
	return n;
}

/* A row of the form: a predicted label, or probabilities (see RowForm). */
static Datum
metrics_row(FunctionCallInfo fcinfo, const RowForm *form)
{
	NbMetricsState *st;
	double		weight = 1.0;
	text	   *actual;
	text	   *predicted = NULL;
	uint32		n = 0;
	uint32		a;
	MemoryContext old;

	if (!begin_row(fcinfo, form, &st, &weight))
		return nb_metrics_state_return(fcinfo, st);
	actual = nb_label_arg(fcinfo, 1, &fcinfo->flinfo->fn_extra);
	if (form->scored)
		n = read_probabilities(st, PG_GETARG_JSONB_P(2));
	else
		predicted = PG_GETARG_TEXT_PP(2);
	old = MemoryContextSwitchTo(st->hdr.eoh_context);
	a = label_id(st, VARDATA_ANY(actual), VARSIZE_ANY_EXHDR(actual));
	if (form->scored)
		nb_metrics_add_scored(&st->single, a, st->row_class, st->row_prob, n, weight);
	else
		nb_metrics_add(&st->single, a,
					   label_id(st, VARDATA_ANY(predicted), VARSIZE_ANY_EXHDR(predicted)), weight);
	MemoryContextSwitchTo(old);
	nb_metrics_state_check_size(st);
	return nb_metrics_state_return(fcinfo, st);
}

/* A transition function of nb_metrics for rows of a form (RowForm's fields). */
#define METRICS_TRANSFN(name, scored, weight_arg, options_arg) \
	PG_FUNCTION_INFO_V1(name); \
	Datum \
	name(PG_FUNCTION_ARGS) \
	{ \
		RowForm		form = {scored, weight_arg, options_arg}; \
		\
		return metrics_row(fcinfo, &form); \
	}

/* nb_metrics(actual, predicted text [, weight float8]) */
METRICS_TRANSFN(nb_metrics_label_transfn, false, PG_NARGS() > 3 ? 3 : -1, -1)
/* nb_metrics(actual, probabilities jsonb [, weight float8]) */
METRICS_TRANSFN(nb_metrics_proba_transfn, true, PG_NARGS() > 3 ? 3 : -1, -1)
/* nb_metrics(actual, probabilities jsonb, weight float8, options jsonb) */
METRICS_TRANSFN(nb_metrics_proba_options_transfn, true, 3, 4)

Datum
nb_metrics_combine(PG_FUNCTION_ARGS)
{
	return nb_metrics_state_combine_args(fcinfo, aggregate_context(fcinfo), false);
}

/* ---------------------------------------------------------------- */
/* the result                                                        */

/* A number, or null for an undefined metric (NAN). */
static void
push_value(JsonbParseState **state, double v)
{
	if (isnan(v))
	{
		JsonbValue	jv;

		jv.type = jbvNull;
		pushJsonbValue(state, WJB_VALUE, &jv);
	}
	else
		nb_push_float8(state, v);
}

static void
push_number(JsonbParseState **state, const char *key, double v)
{
	nb_push_key(state, key, strlen(key));
	push_value(state, v);
}

static void
push_label(JsonbParseState **state, const NbMetrics *m, uint32 c)
{
	uint32		len;
	const char *s = nb_vocab_str(&m->labels, c, &len);

	nb_push_key(state, s, len);
}

static void
push_averages(JsonbParseState **state, const char *key, const NbAverages *avg)
{
	nb_push_key(state, key, strlen(key));
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	push_number(state, "precision", avg->precision);
	push_number(state, "recall", avg->recall);
	push_number(state, "f1", avg->f1);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* {"macro": ..., "classes": {label: value}} over every class */
static void
push_ranking(JsonbParseState **state, const NbMetrics *m, const NbMetricsResult *r,
			 const char *key, double macro, bool auc)
{
	nb_push_key(state, key, strlen(key));
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	push_number(state, "macro", macro);
	nb_push_key(state, "classes", strlen("classes"));
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 k = 0; k < r->n_classes; k++)
	{
		uint32		c = r->order[k];

		push_label(state, m, c);
		push_value(state, auc ? r->cls[c].roc_auc : r->cls[c].average_precision);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/*
 * {"ece": e, "bins": [{"lower", "upper", "count", "confidence", "accuracy"}
 * per bin]}: the bins of src/README.md, a bin without rows with null
 * confidence and accuracy.
 */
static void
push_calibration(JsonbParseState **state, const NbMetricsResult *r)
{
	nb_push_key(state, "calibration", strlen("calibration"));
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	push_number(state, "ece", r->ece);
	nb_push_key(state, "bins", strlen("bins"));
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	for (int b = 0; b < NB_METRICS_BINS; b++)
	{
		pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
		push_number(state, "lower", (double) b / NB_METRICS_BINS);
		push_number(state, "upper", (double) (b + 1) / NB_METRICS_BINS);
		push_number(state, "count", r->bins[b].weight);
		push_number(state, "confidence", r->bins[b].confidence);
		push_number(state, "accuracy", r->bins[b].accuracy);
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

typedef struct ConfusionCells
{
	const NbMetrics *m;
	const uint32 *cls;			/* the reported classes, in jsonb key order */
} ConfusionCells;

static double
confusion_cell(uint32 i, uint32 j, void *arg)
{
	const ConfusionCells *c = arg;

	return c->m->confusion[(Size) c->cls[i] * c->m->cap + c->cls[j]];
}

/* qsort_arg: classes in the jsonb order of their labels */
static int
label_order(const void *a, const void *b, void *arg)
{
	const NbMetrics *m = arg;
	uint32		alen;
	uint32		blen;
	const char *as = nb_vocab_str(&m->labels, *(const uint32 *) a, &alen);
	const char *bs = nb_vocab_str(&m->labels, *(const uint32 *) b, &blen);

	return nb_jsonb_key_cmp(as, alen, bs, blen);
}

/*
 * The confusion matrix, actual label -> predicted label -> weight, written
 * by nb_jsonb_finish_table in place of root's placeholder: as a tree its
 * 2,047 x 2,047 cells took about 600 MB for a result of 86.
 */
static Jsonb *
finish_with_confusion(JsonbValue *root, const NbMetrics *m, const NbMetricsResult *r)
{
	ConfusionCells cells;
	NbJsonbTable table;
	uint32	   *cls = palloc(sizeof(uint32) * Max(r->n_classes, 1));
	const char **keys = palloc(sizeof(char *) * Max(r->n_classes, 1));
	uint32	   *lens = palloc(sizeof(uint32) * Max(r->n_classes, 1));
	uint32		n = 0;

	for (uint32 c = 0; c < r->n_classes; c++)
		if (nb_metrics_reported(m, c))
			cls[n++] = c;
	qsort_arg(cls, n, sizeof(uint32), label_order, (void *) m);
	for (uint32 i = 0; i < n; i++)
		keys[i] = nb_vocab_str(&m->labels, cls[i], &lens[i]);
	cells.m = m;
	cells.cls = cls;
	table.n = n;
	table.keys = keys;
	table.lens = lens;
	table.cell = confusion_cell;
	table.arg = &cells;
	for (int i = 0; i < root->val.object.nPairs; i++)
	{
		JsonbPair  *pair = &root->val.object.pairs[i];

		if (pair->key.val.string.len == strlen("confusion") &&
			memcmp(pair->key.val.string.val, "confusion", strlen("confusion")) == 0)
		{
			nb_jsonb_table_placeholder(&pair->value);
			return nb_jsonb_finish_table(root, &table);
		}
	}
	elog(ERROR, "nb_metrics result has no confusion matrix");
	return NULL;
}

static Jsonb *
metrics_jsonb(const NbMetrics *m, const NbMetricsResult *r)
{
	JsonbParseState *state = NULL;
	JsonbValue	jv;
	JsonbValue *root;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_key(&state, "rows", 4);
	jv.type = jbvNumeric;
	jv.val.numeric = int64_to_numeric((int64) m->rows);
	pushJsonbValue(&state, WJB_VALUE, &jv);
	if (m->null_actual > 0)
	{
		nb_push_key(&state, "rows_null_actual", strlen("rows_null_actual"));
		jv.val.numeric = int64_to_numeric((int64) m->null_actual);
		pushJsonbValue(&state, WJB_VALUE, &jv);
	}
	push_number(&state, "accuracy", r->accuracy);
	push_number(&state, "balanced_accuracy", r->balanced_accuracy);
	push_averages(&state, "macro", &r->macro);
	push_averages(&state, "weighted", &r->weighted);

	nb_push_key(&state, "classes", strlen("classes"));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 k = 0; k < r->n_classes; k++)
	{
		uint32		c = r->order[k];
		const NbClassMetrics *cm = &r->cls[c];

		if (!nb_metrics_reported(m, c))
			continue;
		push_label(&state, m, c);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		push_number(&state, "precision", cm->precision);
		push_number(&state, "recall", cm->recall);
		push_number(&state, "f1", cm->f1);
		push_number(&state, "support", cm->support);
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);

	/* a placeholder: the table is written in place (finish_with_confusion) */
	nb_push_key(&state, "confusion", strlen("confusion"));
	jv.type = jbvNull;
	pushJsonbValue(&state, WJB_VALUE, &jv);

	if (m->scored)
	{
		push_number(&state, "log_loss", r->log_loss);
		push_number(&state, "brier", r->brier);
	}
	if (nb_metrics_calibrated(m))
		push_calibration(&state, r);
	if (m->ranked)
	{
		push_ranking(&state, m, r, "roc_auc", r->roc_auc_macro, true);
		push_ranking(&state, m, r, "average_precision", r->average_precision_macro, false);
	}
	root = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return finish_with_confusion(root, m, r);
}

Jsonb *
nb_metrics_jsonb(NbMetrics *m)
{
	MemoryContext work;
	MemoryContext old;
	NbMetricsResult r;
	Jsonb	   *result;

	/* the computation's scratch (sorted scores) goes with this context */
	work = AllocSetContextCreate(CurrentMemoryContext, "nb_metrics final",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	nb_metrics_compute(m, &r);
	MemoryContextSwitchTo(old);
	result = metrics_jsonb(m, &r);
	MemoryContextDelete(work);
	return result;
}

/* Labels a message quotes as examples. */
#define NB_LABELS_SHOWN 3

/* Fewer rows say little: a single row's prediction may well be wrong. */
#define NB_LABELS_MIN_ROWS 10

/*
 * Up to NB_LABELS_SHOWN labels c with every seen flag of flags (unnamed_only:
 * and no column of scores, no row's probabilities named it), quoted, comma
 * separated; *count receives how many there are.
 */
static char *
labels_shown(const NbMetrics *m, uint8_t flags, bool unnamed_only, uint32 *count)
{
	StringInfoData buf;

	initStringInfo(&buf);
	*count = 0;
	for (uint32 c = 0; c < m->labels.count; c++)
	{
		uint32		len;
		const char *s;

		if ((m->seen[c] & flags) != flags || (unnamed_only && m->score[c] != NULL))
			continue;
		if (++*count > NB_LABELS_SHOWN)
			continue;
		s = nb_vocab_str(&m->labels, c, &len);
		appendStringInfo(&buf, "%s\"%s\"", *count > 1 ? ", " : "", nb_cut_str(s, len));
	}
	return buf.data;
}

/*
 * WARNING when, over ten rows or more, no actual label is ever among the
 * predicted ones, or (rows with probabilities that are kept) some actual
 * label is never among the probabilities' classes (for the final function
 * of a single group: see nb_aggregate_single_group).
 */
static void
warn_labels(const NbMetrics *m)
{
	static TimestampTz warned = 0;
	uint32		n_actual;
	uint32		n_predicted;
	uint32		n_both;
	uint32		n_unnamed = 0;
	char	   *actual = labels_shown(m, NB_SEEN_ACTUAL, false, &n_actual);
	char	   *predicted = labels_shown(m, NB_SEEN_PREDICTED, false, &n_predicted);
	/* the actual labels no row's probabilities name, when the rows are kept */
	char	   *unnamed = m->ranked ? labels_shown(m, NB_SEEN_ACTUAL, true, &n_unnamed) : NULL;

	(void) labels_shown(m, NB_SEEN_ACTUAL | NB_SEEN_PREDICTED, false, &n_both);
	if (m->rows < NB_LABELS_MIN_ROWS || n_actual == 0 || (n_both > 0 && n_unnamed == 0) ||
		!nb_first_in_statement(&warned))
		return;
	if (n_both == 0)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("no actual label of nb_metrics is ever predicted"),
				 errdetail("The %u actual labels are %s%s; the %u predicted are %s%s.",
						   n_actual, actual, n_actual > NB_LABELS_SHOWN ? ", ..." : "",
						   n_predicted, predicted, n_predicted > NB_LABELS_SHOWN ? ", ..." : ""),
				 errhint("Labels are compared as text (label::text): check that the actual column is the label the model was trained on, of the same type (a numeric(3,1) label trains \"1.0\" where an integer one reads \"1\").")));
	else
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg_plural("%u actual label of nb_metrics is not a class of the probabilities",
							   "%u actual labels of nb_metrics are not classes of the probabilities",
							   n_unnamed, n_unnamed),
				 errdetail("No row's probabilities name %s%s: the model never had %s, and %s rows count as wrong.",
						   unnamed, n_unnamed > NB_LABELS_SHOWN ? ", ..." : "",
						   n_unnamed == 1 ? "it" : "them", n_unnamed == 1 ? "its" : "their"),
				 errhint("Check that the actual column is the label the model was trained on.")));
}

Datum
nb_metrics_final(PG_FUNCTION_ARGS)
{
	NbMetricsState *st;
	Jsonb	   *result;

	(void) aggregate_context(fcinfo);
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = nb_metrics_state_of_kind(nb_metrics_state_open(PG_GETARG_DATUM(0)), false);
	/* no row but some of NULL actual labels: NULL, as over no rows */
	if (st->single.rows == 0)
	{
		nb_metrics_state_close(st, PG_GETARG_DATUM(0));
		PG_RETURN_NULL();
	}
	if (nb_aggregate_single_group(fcinfo))
		warn_labels(&st->single);
	result = nb_metrics_jsonb(&st->single);
	nb_metrics_state_close(st, PG_GETARG_DATUM(0));
	PG_RETURN_JSONB_P(result);
}

