/*
 * pg_inspect.c — looking inside a model: nb_mutual_info, nb_classes,
 * nb_info and the cast to jsonb.
 */
#include "pg_model.h"

#include <math.h>

#include "common/shortest_dec.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "nb_mutual_info.h"
#include "pg_jsonb.h"
#include "pg_options.h"
#include "pg_tokenize.h"

PG_FUNCTION_INFO_V1(nb_mutual_info_srf);
PG_FUNCTION_INFO_V1(nb_classes);
PG_FUNCTION_INFO_V1(nb_info);
PG_FUNCTION_INFO_V1(nb_model_to_jsonb);

/*
 * key: a sum or ratio derived from the stored counts (totals, variances),
 * or null where it passes the range of float8: every count of a valid
 * model is finite, but a sum of many near the top of the range, or a
 * second moment over a weight below 1, need not be, and JSON has no
 * infinity.
 */
static void
push_derived(JsonbParseState **state, const char *key, double v)
{
	JsonbValue	null;

	if (isfinite(v))
	{
		nb_push_pair(state, key, v);
		return;
	}
	nb_push_key(state, key, strlen(key));
	null.type = jbvNull;
	pushJsonbValue(state, WJB_VALUE, &null);
}

/* Where each string of an area starts, so strings can be reached by index. */
static const char **
string_starts(NbStringIter it, uint64 n)
{
	const char **start = palloc_extended(sizeof(char *) * (n + 1), MCXT_ALLOC_HUGE);
	const char *str;
	uint32		len;
	uint64		i = 0;

	start[0] = it.next;
	for (; nb_string_next(&it, &str, &len); i++)
	{
		nb_interrupt_at(i);
		start[i + 1] = str + len;
	}
	return start;
}

/*
 * The name of a ranked row: the token for the bag "" (text[] and tsvector
 * input), "key:token" for a token of the bag named key (the namespace
 * convention of Vowpal Wabbit), the key for any other feature.
 */
static text *
mi_row_name(const NbMiRow *row, const char *const *token_start,
			const char *const *name_start)
{
	const char *key = name_start[row->feature];
	size_t		key_len = name_start[row->feature + 1] - key;
	const char *token;
	size_t		token_len;
	StringInfoData buf;

	if (row->whole_feature)
		return cstring_to_text_with_len(key, key_len);
	token = token_start[row->item];
	token_len = token_start[row->item + 1] - token;
	if (key_len == 0)
		return cstring_to_text_with_len(token, token_len);
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, key, key_len);
	appendStringInfoChar(&buf, ':');
	appendBinaryStringInfo(&buf, token, token_len);
	return cstring_to_text_with_len(buf.data, buf.len);
}

Datum
nb_mutual_info_srf(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NbView		view;
	NbMiRow    *rows;
	uint64		n;
	const char **token_start;
	const char **name_start;

	nb_model_open(PG_GETARG_DATUM(0), &view, ERRCODE_DATA_CORRUPTED);
	InitMaterializedSRF(fcinfo, 0);

	rows = nb_alloc(sizeof(NbMiRow) * (nb_mutual_info_max_rows(&view) + 1));
	n = nb_mutual_info(&view, rows);
	token_start = string_starts(nb_view_items(&view), view.n_tokens);
	name_start = string_starts(nb_view_feature_names(&view), view.n_features);

	for (uint64 i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		CHECK_FOR_INTERRUPTS();
		values[0] = PointerGetDatum(mi_row_name(&rows[i], token_start, name_start));
		values[1] = Float8GetDatum(rows[i].mi);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(DatumGetPointer(values[0]));
	}
	return (Datum) 0;
}

static double
total_docs(const NbView *view)
{
	double		d = 0;

	for (uint32 c = 0; c < view->n_classes; c++)
		d += nb_view_class_docs(view, c);
	return d;
}

/* Add the entry counts of feature f's items to t, per class. */
static void
add_feature_tokens(const NbView *view, const NbFeature *f, double *t)
{
	NbItemIter	items = nb_feature_item_iter(view, f);
	NbItem		item;

	while (nb_item_next(&items, &item))
	{
		nb_interrupt_at(item.index);
		for (uint32 i = 0; i < item.n_entries; i++)
		{
			NbEntry		en = nb_view_entry(view, item.first_entry + i);

			t[en.cls] += en.count;
		}
	}
}

/* Tokens per class: the sum of the entry counts of the bag features' tokens. */
static double *
class_tokens(const NbView *view)
{
	double	   *t = palloc0(sizeof(double) * view->n_classes);
	NbFeatureIter it = nb_view_features(view);
	NbFeature	f;

	while (nb_feature_next(&it, &f))
		if (f.type == NB_FEATURE_BAG)
			add_feature_tokens(view, &f, t);
	return t;
}

/*
 * "lengths": {length: weight, ...}, the document length histogram of bag j
 * in class c starting at pair *h (version 3); advances *h.
 */
static void
push_lengths(JsonbParseState **state, const NbView *view, uint32 j, uint32 c, uint64 *h)
{
	nb_push_key(state, "lengths", strlen("lengths"));
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	for (uint64 end = *h + nb_view_length_pairs(view, j, c); *h < end; (*h)++)
	{
		/* the key is kept by reference until the value is built */
		char	   *key = palloc(DOUBLE_SHORTEST_DECIMAL_LEN);

		CHECK_FOR_INTERRUPTS();
		nb_push_key(state, key, double_to_shortest_decimal_buf(nb_view_length_value(view, *h), key));
		nb_push_float8(state, nb_view_length_weight(view, *h));
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* The first pair of feature j's histograms (version 3). */
static uint64
first_length(const NbView *view, uint32 j)
{
	uint64		h = 0;

	for (uint64 x = 0; x < (uint64) j * view->n_classes; x++)
	{
		CHECK_FOR_INTERRUPTS();
		h += nb_view_length_pairs_at(view, x);
	}
	return h;
}

/* {label: {"count": N_jc, "documents": d_jc}, ...} for an item's entries. */
static void
push_entries(JsonbParseState **state, const NbView *view, const char *const *label_start,
			 const NbItem *item)
{
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 i = 0; i < item->n_entries; i++)
	{
		NbEntry		en = nb_view_entry(view, item->first_entry + i);

		nb_push_key(state, label_start[en.cls], label_start[en.cls + 1] - label_start[en.cls]);
		pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
		nb_push_pair(state, "count", en.count);
		nb_push_pair(state, "documents", en.docs);
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/* Items in the order of jsonb object keys */
static int
cmp_item_keys(const void *a, const void *b)
{
	const NbItem *x = a;
	const NbItem *y = b;

	return nb_jsonb_key_cmp(x->str, x->len, y->str, y->len);
}

/*
 * {item: entries, ...} for the items of feature f.  The keys go in in
 * jsonb's order, which pushJsonbValue then only checks: it would otherwise
 * sort a large vocabulary's keys itself, for a second or more, where
 * nothing can cancel it; nb_sort can be cancelled.
 */
static void
push_items(JsonbParseState **state, const NbView *view, const char *const *label_start,
		   const NbFeature *f)
{
	uint32		n = f->n_items;
	NbItem	   *keys = palloc_extended(sizeof(NbItem) * ((Size) n + 1), MCXT_ALLOC_HUGE);
	NbItemIter	items = nb_feature_item_iter(view, f);

	for (uint32 i = 0; nb_item_next(&items, &keys[i]); i++)
		nb_interrupt_at(i);
	nb_sort(keys, n, sizeof(NbItem), cmp_item_keys);

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		nb_push_key(state, keys[i].str, keys[i].len);
		push_entries(state, view, label_start, &keys[i]);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
	pfree(keys);
}

/* One feature of a version 2 or 3 model: type, per-class statistics, items. */
static void
push_feature(JsonbParseState **state, const NbView *view, const NbFeature *f,
			 const char *const *label_start)
{
	NbFeatureType type = f->type;
	const NbFeatureTypeInfo *info = nb_feature_type(type);
	uint32		j = f->index;
	double	   *tokens = palloc0(sizeof(double) * view->n_classes);
	uint64		h = nb_view_has_lengths(view) ? first_length(view, j) : 0;

	if (type == NB_FEATURE_BAG)
		add_feature_tokens(view, f, tokens);

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	nb_push_key(state, "type", strlen("type"));
	nb_push_string(state, info->name);
	if (info->stats == NB_STATS_MOMENTS)
	{
		double		rows = nb_view_feature_rows(view, j);

		nb_push_pair(state, "rows", rows);
		nb_push_pair(state, "mean", nb_view_feature_mean(view, j));
		push_derived(state, "variance", rows > 0 ? nb_view_feature_m2(view, j) / rows : 0);
	}
	nb_push_key(state, "classes", strlen("classes"));
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 c = 0; c < view->n_classes; c++)
	{
		double		present = nb_view_present(view, j, c);

		nb_push_key(state, label_start[c], label_start[c + 1] - label_start[c]);
		pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
		nb_push_pair(state, "documents", present);
		if (type == NB_FEATURE_BAG)
		{
			push_derived(state, "tokens", tokens[c]);
			if (nb_view_has_lengths(view))
				push_lengths(state, view, j, c, &h);
		}
		else if (info->stats == NB_STATS_TRUE_ROWS)
			nb_push_pair(state, "true", nb_view_a(view, j, c));
		else if (info->stats == NB_STATS_MOMENTS && present > 0)
		{
			nb_push_pair(state, "mean", nb_view_a(view, j, c));
			push_derived(state, "variance", nb_view_b(view, j, c) / present);
		}
		pushJsonbValue(state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
	if (info->items != NULL)
	{
		nb_push_key(state, info->items, strlen(info->items));
		push_items(state, view, label_start, f);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
	pfree(tokens);
}

/*
 * The "features" object of a version 2 or 3 model, after its vector length:
 * each feature's type (nb_info), or with label_start all it holds
 * (model::jsonb).
 */
static void
push_features(JsonbParseState **state, const NbView *view, const char *const *label_start)
{
	NbFeatureIter it = nb_view_features(view);
	NbFeature	f;

	if (view->vector_len > 0)
		nb_push_pair(state, "vector_length", view->vector_len);
	nb_push_key(state, "features", strlen("features"));
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	while (nb_feature_next(&it, &f))
	{
		CHECK_FOR_INTERRUPTS();
		nb_push_key(state, f.name, f.name_len);
		if (label_start == NULL)
			nb_push_string(state, nb_feature_type(f.type)->name);
		else
			push_feature(state, view, &f, label_start);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

Datum
nb_classes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NbView		view;
	double		D;
	NbStringIter labels;
	const char *label;
	uint32		len;

	const char *prev = NULL;
	uint32		prev_len = 0;
	double		docs = 0;

	nb_model_open(PG_GETARG_DATUM(0), &view, ERRCODE_DATA_CORRUPTED);
	InitMaterializedSRF(fcinfo, 0);
	D = total_docs(&view);
	labels = nb_view_labels(&view);
	/* a row per label: a class of mixture components sums theirs */
	for (uint32 c = 0;; c++)
	{
		bool		more = nb_string_next(&labels, &label, &len);

		CHECK_FOR_INTERRUPTS();
		if (prev != NULL && (!more || nb_strcmp(prev, prev_len, label, len) != 0))
		{
			Datum		values[3];
			bool		nulls[3] = {false, false, false};

			values[0] = PointerGetDatum(cstring_to_text_with_len(prev, prev_len));
			values[1] = Float8GetDatum(docs);
			values[2] = Float8GetDatum(docs / D);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			docs = 0;
		}
		if (!more)
			break;
		docs += nb_view_class_docs(&view, c);
		prev = label;
		prev_len = len;
	}
	return (Datum) 0;
}

/* The model's labels, distinct: its classes, fewer than its components if it has any. */
static uint32
label_count(const NbView *view)
{
	NbStringIter labels = nb_view_labels(view);
	const char *label;
	const char *prev = NULL;
	uint32		len;
	uint32		prev_len = 0;
	uint32		n = 0;

	while (nb_string_next(&labels, &label, &len))
	{
		CHECK_FOR_INTERRUPTS();
		if (prev == NULL || nb_strcmp(prev, prev_len, label, len) != 0)
			n++;
		prev = label;
		prev_len = len;
	}
	return n;
}

/* The type of the rows the model was trained on, as far as it shows. */
static const char *
input_prose(const NbView *view)
{
	uint32		kinds = nb_view_input_kinds(view);

	if (view->settings.has_tokenizer)
		return "text";
	if (kinds == NB_INPUT_TOKENS)
		return "text[] or tsvector";
	return nb_input_kinds_prose(kinds);
}

/* "rows_null_label": the rows training skipped for a NULL label, exactly. */
static void
push_null_labels(JsonbParseState **state, const NbView *view)
{
	JsonbValue	v;

	nb_push_key(state, "rows_null_label", strlen("rows_null_label"));
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric((int64) view->settings.null_labels);
	pushJsonbValue(state, WJB_VALUE, &v);
}

Datum
nb_info(PG_FUNCTION_ARGS)
{
	NbView		view;
	JsonbParseState *state = NULL;
	JsonbValue *result;
	double	   *tokens;
	double		T = 0;

	nb_model_open(PG_GETARG_DATUM(0), &view, ERRCODE_DATA_CORRUPTED);
	tokens = class_tokens(&view);
	for (uint32 c = 0; c < view.n_classes; c++)
		T += tokens[c];

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_pair(&state, "format_version", view.version);
	nb_push_pair(&state, "bytes", (double) view.size + VARHDRSZ);
	nb_push_pair(&state, "classes", label_count(&view));
	if (view.settings.components)
		nb_push_pair(&state, "components", view.n_classes);
	nb_push_pair(&state, "vocabulary", view.n_tokens);
	nb_push_pair(&state, "entries", (double) view.n_entries);
	push_derived(&state, "documents", total_docs(&view));
	push_derived(&state, "tokens", T);
	push_null_labels(&state, &view);
	if (nb_view_has_lengths(&view))
		nb_push_pair(&state, "length_pairs", (double) view.n_lengths);
	if (view.version != NB_FORMAT_VERSION_TEXT)
		push_features(&state, &view, NULL);
	nb_push_key(&state, "input", 5);
	nb_push_string(&state, input_prose(&view));
	if (view.settings.has_tokenizer)
	{
		nb_push_key(&state, "tokenizer", 9);
		nb_push_jsonb(&state, nb_tokenizer_to_jsonb(&view.settings.tokenizer));
	}
	if (view.settings.options_len > 0)
	{
		nb_push_key(&state, "options", 7);
		nb_push_jsonb(&state, nb_stored_options_jsonb(&view.settings));
	}
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(nb_jsonb_finish(result));
}

/*
 * Text only (the bag "" alone, present in every document; version 1, or 3
 * with "lengths" per class):
 * {"format_version": 1,
 *  "classes": {label: {"documents": D_c, "tokens": T_c[, "lengths": {n: w, ...}]}, ...},
 *  "tokens": {token: {label: {"count": N_jc, "documents": d_jc}, ...}, ...}}
 * Otherwise:
 * {"format_version": 2, "classes": {label: {"documents": D_c}, ...},
 *  ["vector_length": n,] "features": {name: push_feature, ...}}
 * where version 3 gives each bag's classes their "lengths", and a model
 * with rows skipped for a NULL label has "rows_null_label" after the version.
 */
Datum
nb_model_to_jsonb(PG_FUNCTION_ARGS)
{
	NbView		view;
	JsonbParseState *state = NULL;
	JsonbValue *result;
	double	   *tokens;
	const char **label_start;
	bool		v1;
	uint64		h = 0;

	nb_model_open(PG_GETARG_DATUM(0), &view, ERRCODE_DATA_CORRUPTED);
	/* jsonb's keys are unique: a label per class */
	if (view.settings.components)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a model of mixture components has no jsonb form"),
				 errdetail("Its classes' components share their labels, and the keys of a jsonb object are unique.")));
	/* the bag "" alone, present in every document, shows as version 1 shows it whatever its version */
	v1 = nb_view_text_only(&view);
	tokens = class_tokens(&view);
	label_start = string_starts(nb_view_labels(&view), view.n_classes);

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_pair(&state, "format_version", view.version);
	if (view.settings.null_labels > 0)
		push_null_labels(&state, &view);

	nb_push_key(&state, "classes", strlen("classes"));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 c = 0; c < view.n_classes; c++)
	{
		CHECK_FOR_INTERRUPTS();
		nb_push_key(&state, label_start[c], label_start[c + 1] - label_start[c]);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		nb_push_pair(&state, "documents", nb_view_class_docs(&view, c));
		if (v1)
			push_derived(&state, "tokens", tokens[c]);
		if (v1 && nb_view_has_lengths(&view))
			push_lengths(&state, &view, 0, c, &h);
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);

	if (v1)
	{
		NbFeatureIter it = nb_view_features(&view);
		NbFeature	bag;

		/* the one feature, the bag "": its items are the model's tokens */
		nb_feature_next(&it, &bag);
		nb_push_key(&state, "tokens", strlen("tokens"));
		push_items(&state, &view, label_start, &bag);
	}
	else
		push_features(&state, &view, label_start);

	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(nb_jsonb_finish(result));
}
