/*
 * pg_inspect.c — looking inside a model: nb_mutual_info, nb_classes,
 * nb_info and the cast to jsonb.
 */
#include "pg_model.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "nb_alloc.h"
#include "nb_mutual_info.h"
#include "pg_jsonb.h"

PG_FUNCTION_INFO_V1(nb_mutual_info_srf);
PG_FUNCTION_INFO_V1(nb_classes);
PG_FUNCTION_INFO_V1(nb_info);
PG_FUNCTION_INFO_V1(nb_model_to_jsonb);

/* Offsets of each string of an area, so strings can be reached by index. */
static size_t *
string_offsets(const unsigned char *lengths, uint64 n)
{
	size_t	   *off = palloc_extended(sizeof(size_t) * (n + 1), MCXT_ALLOC_HUGE);

	off[0] = 0;
	for (uint64 i = 0; i < n; i++)
		off[i + 1] = off[i] + nb_read_u32(lengths, i);
	return off;
}

Datum
nb_mutual_info_srf(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NbView		view;
	double	   *mi;
	uint32	   *order;
	size_t	   *off;

	nb_model_open(PG_GETARG_DATUM(0), &view, ERRCODE_DATA_CORRUPTED);
	InitMaterializedSRF(fcinfo, 0);

	mi = nb_alloc(sizeof(double) * (view.n_tokens + 1));
	order = nb_alloc(sizeof(uint32) * (view.n_tokens + 1));
	nb_mutual_info(&view, mi);
	nb_rank_by_mutual_info(mi, view.n_tokens, order);
	off = string_offsets(view.token_len, view.n_tokens);

	for (uint32 i = 0; i < view.n_tokens; i++)
	{
		uint32		k = order[i];
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = PointerGetDatum(cstring_to_text_with_len(view.tokens + off[k],
															 off[k + 1] - off[k]));
		values[1] = Float8GetDatum(mi[k]);
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
		d += nb_read_f64(view->class_docs, c);
	return d;
}

/* Tokens per class: the sum of the class's entry counts. */
static double *
class_tokens(const NbView *view)
{
	double	   *t = palloc0(sizeof(double) * view->n_classes);

	for (uint64 e = 0; e < view->n_entries; e++)
		t[nb_read_u32(view->entry_class, e)] += nb_read_f64(view->entry_count, e);
	return t;
}

Datum
nb_classes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NbView		view;
	double		D;
	const char *label;

	nb_model_open(PG_GETARG_DATUM(0), &view, ERRCODE_DATA_CORRUPTED);
	InitMaterializedSRF(fcinfo, 0);
	D = total_docs(&view);
	label = view.labels;
	for (uint32 c = 0; c < view.n_classes; c++)
	{
		uint32		len = nb_read_u32(view.label_len, c);
		double		docs = nb_read_f64(view.class_docs, c);
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = PointerGetDatum(cstring_to_text_with_len(label, len));
		values[1] = Float8GetDatum(docs);
		values[2] = Float8GetDatum(docs / D);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		label += len;
	}
	return (Datum) 0;
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
	nb_push_pair(&state, "format_version", NB_FORMAT_VERSION);
	nb_push_pair(&state, "bytes", (double) view.size + VARHDRSZ);
	nb_push_pair(&state, "classes", view.n_classes);
	nb_push_pair(&state, "vocabulary", view.n_tokens);
	nb_push_pair(&state, "entries", (double) view.n_entries);
	nb_push_pair(&state, "documents", total_docs(&view));
	nb_push_pair(&state, "tokens", T);
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}

/*
 * {"format_version": 1,
 *  "classes": {label: {"documents": D_c, "tokens": T_c}, ...},
 *  "tokens": {token: {label: {"count": N_jc, "documents": d_jc}, ...}, ...}}
 */
Datum
nb_model_to_jsonb(PG_FUNCTION_ARGS)
{
	NbView		view;
	JsonbParseState *state = NULL;
	JsonbValue *result;
	double	   *tokens;
	size_t	   *label_off;
	const char *token;
	uint64		e = 0;

	nb_model_open(PG_GETARG_DATUM(0), &view, ERRCODE_DATA_CORRUPTED);
	tokens = class_tokens(&view);
	label_off = string_offsets(view.label_len, view.n_classes);

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_pair(&state, "format_version", NB_FORMAT_VERSION);

	nb_push_key(&state, "classes", strlen("classes"));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 c = 0; c < view.n_classes; c++)
	{
		nb_push_key(&state, view.labels + label_off[c], label_off[c + 1] - label_off[c]);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		nb_push_pair(&state, "documents", nb_read_f64(view.class_docs, c));
		nb_push_pair(&state, "tokens", tokens[c]);
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);

	nb_push_key(&state, "tokens", strlen("tokens"));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	token = view.tokens;
	for (uint32 k = 0; k < view.n_tokens; k++)
	{
		uint32		len = nb_read_u32(view.token_len, k);
		uint32		n = nb_read_u32(view.token_entries, k);

		nb_push_key(&state, token, len);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		for (uint32 i = 0; i < n; i++, e++)
		{
			uint32		c = nb_read_u32(view.entry_class, e);

			nb_push_key(&state, view.labels + label_off[c], label_off[c + 1] - label_off[c]);
			pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
			nb_push_pair(&state, "count", nb_read_f64(view.entry_count, e));
			nb_push_pair(&state, "documents", nb_read_f64(view.entry_docs, e));
			pushJsonbValue(&state, WJB_END_OBJECT, NULL);
		}
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
		token += len;
	}
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);

	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}
