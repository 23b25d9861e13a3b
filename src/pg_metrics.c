/*
 * pg_metrics.c — the nb_metrics aggregates: classification metrics of a
 * query's predictions, as jsonb (see nb_metrics.h for the definitions).
 *
 * The state is internal: an NbMetrics in a memory context of its own (an
 * AllocSet under the aggregate's context), because the pure code frees and
 * reallocates and the aggregate's context need not allow that (PostgreSQL
 * 17's bump contexts).  Partial states travel between parallel workers
 * serialized as bytea in the server's native byte order.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "nb_metrics.h"
#include "pg_jsonb.h"
#include "pg_label.h"
#include "pg_metrics.h"

PG_FUNCTION_INFO_V1(nb_metrics_label_transfn);
PG_FUNCTION_INFO_V1(nb_metrics_proba_transfn);
PG_FUNCTION_INFO_V1(nb_metrics_combine);
PG_FUNCTION_INFO_V1(nb_metrics_serialize);
PG_FUNCTION_INFO_V1(nb_metrics_deserialize);
/* An exact sum in its serial form (nb_exact.h). */
static void
append_exact(StringInfo buf, const NbExactSum *sum)
{
	unsigned char bytes[NB_EXACT_SERIAL_SIZE];

	nb_exact_write(sum, bytes);
	appendBinaryStringInfo(buf, (char *) bytes, NB_EXACT_SERIAL_SIZE);
}

PG_FUNCTION_INFO_V1(nb_metrics_final);

typedef struct MetricsState
{
	MemoryContext cxt;			/* holds the state and everything in it */
	NbMetrics	m;
	uint32		row_cap;		/* room in the row's scratch arrays */
	uint32	   *row_class;		/* the classes of a row's probabilities */
	double	   *row_prob;
	/* the last row's keys: their count, then their JEntries and bytes (see keys_match) */
	uint32		keys_n;
	StringInfoData keys;
} MetricsState;

static MetricsState *
state_create(MemoryContext parent, bool scored, bool weighted)
{
	MemoryContext cxt = AllocSetContextCreate(parent, "nb_metrics state",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MetricsState *st = palloc0(sizeof(MetricsState));

	st->cxt = cxt;
	nb_metrics_init(&st->m, scored, weighted);
	MemoryContextSwitchTo(old);
	return st;
}

/*
 * The aggregate's memory context.  The support functions are SQL-callable
 * (CREATE AGGREGATE needs them to be), so a direct call is a user's error.
 */
static MemoryContext
aggregate_context(FunctionCallInfo fcinfo)
{
	MemoryContext aggctx;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nb_metrics support functions can only be called by the aggregate nb_metrics")));
	return aggctx;
}

/*
 * The row's weight (argument 3 if there is one, else 1); false when the row
 * is skipped: a NULL actual, prediction or weight.
 */
static bool
row_weight(FunctionCallInfo fcinfo, double *weight)
{
	*weight = 1.0;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		return false;
	if (PG_NARGS() > 3)
	{
		if (PG_ARGISNULL(3))
			return false;
		*weight = PG_GETARG_FLOAT8(3);
		if (isnan(*weight) || isinf(*weight) || *weight < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid nb_metrics weight: %s", float8out_internal(*weight)),
					 errdetail("Weights must be finite and not negative.")));
	}
	return true;
}

void
nb_metrics_too_many_labels(const char *label, uint32 len)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("nb_metrics supports at most %d distinct labels",
					NB_METRICS_MAX_CLASSES),
			 errdetail("Label \"%.*s\" would be number %d.", (int) len, label,
					   NB_METRICS_MAX_CLASSES + 1)));
}

/* The id of a label, added if new; called in the state's context. */
static uint32
label_id(MetricsState *st, const char *label, uint32 len)
{
	int64		id = nb_metrics_find(&st->m, label, len);

	if (id >= 0)
		return (uint32) id;
	if (st->m.labels.count >= NB_METRICS_MAX_CLASSES)
		nb_metrics_too_many_labels(label, len);
	return nb_metrics_class(&st->m, label, len);
}

static Datum
return_state(FunctionCallInfo fcinfo, MetricsState *st)
{
	if (st == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(st);
}

/*
 * A transition function's state (argument 0) and the row's weight: false
 * for a row to skip, else the state, made at the first row.
 */
static bool
begin_row(FunctionCallInfo fcinfo, bool scored, MetricsState **st, double *weight)
{
	MemoryContext aggctx = aggregate_context(fcinfo);

	*st = PG_ARGISNULL(0) ? NULL : (MetricsState *) PG_GETARG_POINTER(0);
	if (!row_weight(fcinfo, weight))
		return false;
	if (*st == NULL)
		*st = state_create(aggctx, scored, PG_NARGS() > 3);
	return true;
}

/*
 * A predicted label that is an object of probabilities is nb_predict_proba's
 * result cast to text (nb_metrics(actual, p::text), or a text column that
 * holds it), which would count every distinct object as a class: refused on
 * the first such row, before a state of thousands of "labels" is built.
 */
static void
check_predicted_label(text *predicted)
{
	const char *s = VARDATA_ANY(predicted);
	int			len = (int) VARSIZE_ANY_EXHDR(predicted);

	if (nb_metrics_label_is_scores(s, (size_t) len))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("predicted label is a JSON object of probabilities"),
				 errdetail("The predicted label is \"%.*s%s\".",
						   pg_mbcliplen(s, len, 60), s, len > 60 ? "..." : ""),
				 errhint("Pass the probabilities as jsonb, as nb_predict_proba returns them (without a cast to text), or the label nb_predict returns.")));
}

/* nb_metrics(actual text, predicted text [, weight float8]) */
Datum
nb_metrics_label_transfn(PG_FUNCTION_ARGS)
{
	MetricsState *st;
	double		weight;
	text	   *actual;
	text	   *predicted;
	MemoryContext old;
	uint32		a,
				p;

	if (!begin_row(fcinfo, false, &st, &weight))
		return return_state(fcinfo, st);
	actual = nb_label_arg(fcinfo, 1, &fcinfo->flinfo->fn_extra);
	predicted = PG_GETARG_TEXT_PP(2);
	check_predicted_label(predicted);
	old = MemoryContextSwitchTo(st->cxt);
	a = label_id(st, VARDATA_ANY(actual), VARSIZE_ANY_EXHDR(actual));
	p = label_id(st, VARDATA_ANY(predicted), VARSIZE_ANY_EXHDR(predicted));
	nb_metrics_add(&st->m, a, p, weight);
	MemoryContextSwitchTo(old);
	PG_RETURN_POINTER(st);
}

/* Room for n classes in the row's scratch arrays. */
static void
reserve_row(MetricsState *st, uint32 n)
{
	uint32		cap = Max(n, 2 * st->row_cap);

	if (n <= st->row_cap)
		return;
	/* the state's context is an AllocSet: repalloc is fine there */
	if (st->row_cap == 0)
	{
		st->row_class = MemoryContextAlloc(st->cxt, sizeof(uint32) * cap);
		st->row_prob = MemoryContextAlloc(st->cxt, sizeof(double) * cap);
	}
	else
	{
		st->row_class = repalloc(st->row_class, sizeof(uint32) * cap);
		st->row_prob = repalloc(st->row_prob, sizeof(double) * cap);
	}
	st->row_cap = cap;
}

/*
 * Whether an object of n pairs has the last row's keys, in the same order:
 * rows mostly do (nb_predict_proba names every class of its model), and
 * then their classes are known.  The keys are their n JEntries and bytes
 * (both: the same bytes may be split into other keys), which the pairs'
 * layout puts first (utils/jsonb.h): n key entries, n value entries, the
 * keys' data, the values' data.  The same entries give the same length of
 * the keys' data, *keys_len.
 */
static bool
keys_match(const MetricsState *st, const JsonbContainer *jc, uint32 n, uint32 *keys_len)
{
	if (n != st->keys_n || memcmp(st->keys.data, jc->children, sizeof(JEntry) * n) != 0)
		return false;
	*keys_len = st->keys.len - sizeof(JEntry) * n;
	return memcmp(st->keys.data + sizeof(JEntry) * n, &jc->children[2 * n], *keys_len) == 0;
}

/* Each key's class (added if new) into st->row_class; the keys kept for keys_match. */
static void
read_keys(MetricsState *st, const JsonbContainer *jc, uint32 n, uint32 keys_len)
{
	const char *data = (const char *) &jc->children[2 * n];
	uint32		key_end = 0;
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	/* row_class is rewritten: no row matches until the keys are all read */
	st->keys_n = 0;
	for (uint32 i = 0; i < n; i++)
	{
		uint32		key_start = key_end;

		JBE_ADVANCE_OFFSET(key_end, jc->children[i]);
		st->row_class[i] = label_id(st, data + key_start, key_end - key_start);
	}
	if (st->keys.data == NULL)
		initStringInfo(&st->keys);
	resetStringInfo(&st->keys);
	appendBinaryStringInfo(&st->keys, (const char *) jc->children, sizeof(JEntry) * n);
	appendBinaryStringInfo(&st->keys, data, keys_len);
	st->keys_n = n;
	MemoryContextSwitchTo(old);
}

/* The probability of key i is not a number (problem NULL) or the number problem. */
static void
invalid_probability(const JsonbContainer *jc, uint32 n, uint32 i, const char *problem)
{
	const char *data = (const char *) &jc->children[2 * n];
	uint32		key_start = getJsonbOffset(jc, i);
	int			key_len = (int) getJsonbLength(jc, i);

	if (problem == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid nb_metrics probabilities"),
				 errdetail("The probability of \"%.*s\" is not a number.",
						   key_len, data + key_start)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid nb_metrics probabilities"),
			 errdetail("The probability of \"%.*s\" is %s, outside [0, 1].",
					   key_len, data + key_start, problem)));
}

/* nb_metrics(actual text, probabilities jsonb [, weight float8]) */
Datum
nb_metrics_proba_transfn(PG_FUNCTION_ARGS)
{
	MetricsState *st;
	double		weight;
	text	   *actual;
	Jsonb	   *proba;
	uint32		n;
	const JsonbContainer *jc;
	const char *data;
	uint32		keys_len;
	uint32		value_end;
	uint32		a;
	MemoryContext old;

	if (!begin_row(fcinfo, true, &st, &weight))
		return return_state(fcinfo, st);
	actual = nb_label_arg(fcinfo, 1, &fcinfo->flinfo->fn_extra);
	proba = PG_GETARG_JSONB_P(2);
	if (!JB_ROOT_IS_OBJECT(proba))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid nb_metrics probabilities"),
				 errdetail("The probabilities are not a jsonb object."),
				 errhint("Pass an object of label: probability as nb_predict_proba returns it.")));
	n = JB_ROOT_COUNT(proba);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid nb_metrics probabilities"),
				 errdetail("The probabilities name no class."),
				 errhint("Pass an object of label: probability as nb_predict_proba returns it.")));
	reserve_row(st, n);

	jc = &proba->root;
	data = (const char *) &jc->children[2 * n];
	if (!keys_match(st, jc, n, &keys_len))
	{
		/* the keys' data ends where the values' begins */
		keys_len = getJsonbOffset(jc, n);
		read_keys(st, jc, n, keys_len);
	}
	value_end = keys_len;
	for (uint32 i = 0; i < n; i++)
	{
		JEntry		value_entry = jc->children[n + i];
		uint32		value_start = value_end;
		double		p;

		JBE_ADVANCE_OFFSET(value_end, value_entry);
		if (!JBE_ISNUMERIC(value_entry))
			invalid_probability(jc, n, i, NULL);
		/* numbers start at a 4-byte boundary of the data */
		p = nb_numeric_to_double((Numeric) (data + INTALIGN(value_start)));
		if (!(p >= 0 && p <= 1))
			invalid_probability(jc, n, i, float8out_internal(p));
		st->row_prob[i] = p;
	}

	old = MemoryContextSwitchTo(st->cxt);
	a = label_id(st, VARDATA_ANY(actual), VARSIZE_ANY_EXHDR(actual));
	nb_metrics_add_scored(&st->m, a, st->row_class, st->row_prob, n, weight);
	MemoryContextSwitchTo(old);
	PG_RETURN_POINTER(st);
}

Datum
nb_metrics_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = aggregate_context(fcinfo);
	MetricsState *st1 = PG_ARGISNULL(0) ? NULL : (MetricsState *) PG_GETARG_POINTER(0);
	MetricsState *st2 = PG_ARGISNULL(1) ? NULL : (MetricsState *) PG_GETARG_POINTER(1);
	uint32		added = 0;
	MemoryContext old;

	if (st2 == NULL)
		return return_state(fcinfo, st1);
	/* st2 may live in a short-lived context (deserialized): copy it */
	if (st1 == NULL)
		st1 = state_create(aggctx, st2->m.scored, st2->m.weighted);
	/* the states of one aggregate are all of one form: anything else is a bug */
	if (st1->m.scored != st2->m.scored || st1->m.weighted != st2->m.weighted ||
		st1->m.ranked != st2->m.ranked)
		elog(ERROR, "nb_metrics states of different forms cannot be combined");
	for (uint32 c = 0; c < st2->m.labels.count; c++)
	{
		uint32		len;
		const char *s = nb_strmap_str(&st2->m.labels, c, &len);

		added += nb_metrics_find(&st1->m, s, len) < 0;
	}
	if (st1->m.labels.count + added > NB_METRICS_MAX_CLASSES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("nb_metrics supports at most %d distinct labels",
						NB_METRICS_MAX_CLASSES)));
	old = MemoryContextSwitchTo(st1->cxt);
	nb_metrics_merge(&st1->m, &st2->m);
	MemoryContextSwitchTo(old);
	PG_RETURN_POINTER(st1);
}

/* The first rows values of a column (nb_metrics.h), a segment at a time. */
static void
append_column(StringInfo buf, double *const *column, uint64 rows)
{
	for (uint64 i = 0, n; i < rows; i += n)
	{
		const double *run;

		n = rows - i;
		run = nb_metrics_score_run(column, i, &n);
		appendBinaryStringInfo(buf, (const char *) run, sizeof(double) * n);
	}
}

/*
 * Serialized state: flags (scored, weighted), rows, the Brier sum, the
 * labels (length, bytes, seen flags), the dense confusion matrix, and with
 * probabilities the log loss sums (K + 1 of them by classes named) and the
 * row arrays (actual, weights, then per class a flag and its column).
 */
Datum
nb_metrics_serialize(PG_FUNCTION_ARGS)
{
	MetricsState *st = (MetricsState *) PG_GETARG_POINTER(0);
	NbMetrics  *m = &st->m;
	uint32		K = m->labels.count;
	StringInfoData buf;
	uint8		flags[2] = {m->scored, m->weighted};

	(void) aggregate_context(fcinfo);
	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	appendBinaryStringInfo(&buf, (char *) flags, 2);
	appendBinaryStringInfo(&buf, (char *) &m->rows, sizeof(uint64));
	append_exact(&buf, &m->brier);
	appendBinaryStringInfo(&buf, (char *) &K, sizeof(uint32));
	for (uint32 c = 0; c < K; c++)
	{
		uint32		len;
		const char *s = nb_strmap_str(&m->labels, c, &len);

		appendBinaryStringInfo(&buf, (char *) &len, sizeof(uint32));
		appendBinaryStringInfo(&buf, s, len);
		appendBinaryStringInfo(&buf, (char *) &m->seen[c], 1);
	}
	for (uint32 a = 0; a < K; a++)
		appendBinaryStringInfo(&buf, (char *) (m->confusion + (Size) a * m->cap),
							   sizeof(double) * K);
	if (m->scored)
	{
		append_exact(&buf, &m->ll_sum);
		for (uint32 n = 0; n <= K; n++)
		{
			uint8		present = m->ll_inv_sum[n] != NULL;

			appendBinaryStringInfo(&buf, (char *) &present, 1);
			if (present)
				append_exact(&buf, m->ll_inv_sum[n]);
		}
		nb_metrics_flush(m);
		appendBinaryStringInfo(&buf, (char *) m->actual, sizeof(uint32) * m->rows);
		if (m->weighted)
			append_column(&buf, m->weight, m->rows);
		for (uint32 c = 0; c < K; c++)
		{
			uint8		has = m->score[c] != NULL;

			appendBinaryStringInfo(&buf, (char *) &has, 1);
			if (has)
				append_column(&buf, m->score[c], m->rows);
		}
	}
	SET_VARSIZE(buf.data, buf.len);
	PG_RETURN_BYTEA_P(buf.data);
}

/* Reading a serialized state: a corrupt one is a bug, not a user's error. */
typedef struct Reader
{
	const char *p;
	const char *end;
} Reader;

static const char *
take(Reader *r, uint64 n)
{
	const char *p = r->p;

	if ((uint64) (r->end - r->p) < n)
		elog(ERROR, "truncated nb_metrics state");
	r->p += n;
	return p;
}

static void
read_into(Reader *r, void *dst, uint64 n)
{
	memcpy(dst, take(r, n), n);
}

/* An exact sum in its serial form, as append_exact wrote it. */
static void
read_exact(Reader *r, NbExactSum *sum)
{
	if (!nb_exact_read(sum, (const unsigned char *) take(r, NB_EXACT_SERIAL_SIZE)))
		elog(ERROR, "corrupt nb_metrics state: a sum out of its form");
}

/* The first rows values of a column, as append_column wrote them. */
static void
read_column(Reader *r, double *const *column, uint64 rows)
{
	for (uint64 i = 0, n; i < rows; i += n)
	{
		double	   *run;

		n = rows - i;
		run = nb_metrics_score_run(column, i, &n);
		read_into(r, run, sizeof(double) * n);
	}
}

Datum
nb_metrics_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *bytes = PG_GETARG_BYTEA_PP(0);
	Reader		r = {VARDATA_ANY(bytes), VARDATA_ANY(bytes) + VARSIZE_ANY_EXHDR(bytes)};
	uint8		flags[2];
	uint64		rows;
	NbExactSum	brier;
	uint32		K;
	MetricsState *st;
	NbMetrics  *m;
	MemoryContext old;

	(void) aggregate_context(fcinfo);
	read_into(&r, flags, 2);
	read_into(&r, &rows, sizeof(uint64));
	read_exact(&r, &brier);
	read_into(&r, &K, sizeof(uint32));
	if (K > NB_METRICS_MAX_CLASSES)
		elog(ERROR, "corrupt nb_metrics state: %u labels", K);
	st = state_create(CurrentMemoryContext, flags[0] != 0, flags[1] != 0);
	m = &st->m;
	old = MemoryContextSwitchTo(st->cxt);
	for (uint32 c = 0; c < K; c++)
	{
		uint32		len;
		const char *s;

		read_into(&r, &len, sizeof(uint32));
		s = take(&r, len);
		if (nb_metrics_class(m, s, len) != c)
			elog(ERROR, "corrupt nb_metrics state: label %u repeated", c);
		read_into(&r, &m->seen[c], 1);
	}
	for (uint32 a = 0; a < K; a++)
		read_into(&r, m->confusion + (Size) a * m->cap, sizeof(double) * K);
	m->brier = brier;
	if (m->scored)
	{
		read_exact(&r, &m->ll_sum);
		for (uint32 n = 0; n <= K; n++)
		{
			uint8		present;

			read_into(&r, &present, 1);
			if (present)
				read_exact(&r, nb_metrics_inv_sum(m, n));
		}
		if (rows > (uint64) (r.end - r.p) / sizeof(uint32))
			elog(ERROR, "corrupt nb_metrics state: %llu rows", (unsigned long long) rows);
		nb_metrics_reserve_rows(m, Max(rows, 1));
		read_into(&r, m->actual, sizeof(uint32) * rows);
		for (uint64 i = 0; i < rows; i++)
			if (m->actual[i] >= K)
				elog(ERROR, "corrupt nb_metrics state: class %u", m->actual[i]);
		if (m->weighted)
			read_column(&r, m->weight, rows);
		for (uint32 c = 0; c < K; c++)
		{
			uint8		has;

			read_into(&r, &has, 1);
			if (has)
				read_column(&r, nb_metrics_column(m, c), rows);
		}
	}
	m->rows = rows;
	nb_metrics_restage(m);
	if (r.p != r.end)
		elog(ERROR, "corrupt nb_metrics state: %zu bytes left over", (size_t) (r.end - r.p));
	MemoryContextSwitchTo(old);
	PG_RETURN_POINTER(st);
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
	const char *s = nb_strmap_str(&m->labels, c, &len);

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

	nb_push_key(&state, "confusion", strlen("confusion"));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 i = 0; i < r->n_classes; i++)
	{
		uint32		a = r->order[i];

		if (!nb_metrics_reported(m, a))
			continue;
		CHECK_FOR_INTERRUPTS();
		push_label(&state, m, a);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		for (uint32 j = 0; j < r->n_classes; j++)
		{
			uint32		p = r->order[j];

			if (!nb_metrics_reported(m, p))
				continue;
			push_label(&state, m, p);
			nb_push_float8(&state, m->confusion[(Size) a * m->cap + p]);
		}
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);

	if (m->scored)
	{
		push_number(&state, "log_loss", r->log_loss);
		push_number(&state, "brier", r->brier);
	}
	if (m->ranked)
	{
		push_ranking(&state, m, r, "roc_auc", r->roc_auc_macro, true);
		push_ranking(&state, m, r, "average_precision", r->average_precision_macro, false);
	}
	root = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return nb_jsonb_finish(root);
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

Datum
nb_metrics_final(PG_FUNCTION_ARGS)
{
	(void) aggregate_context(fcinfo);
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(nb_metrics_jsonb(&((MetricsState *) PG_GETARG_POINTER(0))->m));
}
