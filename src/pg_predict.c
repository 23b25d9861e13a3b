/*
 * pg_predict.c — nb_predict, nb_predict_proba, nb_predict_log_proba.
 *
 * The model is validated and indexed once per call site and query, not once
 * per row: the prepared form hangs off fn_extra, keyed like PostGIS keys
 * TOASTed values.  An out-of-line model is recognized by its TOAST pointer
 * without being detoasted; any other model by its size and the checksum in
 * its header (a 64-bit hash of its content, checked when it is prepared).
 * The options are keyed by their bytes; a change of options rebuilds only
 * the per-option tables.
 */
#include "pg_model.h"

#include <math.h>

#include "access/detoast.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "nb_scorer.h"
#include "pg_jsonb.h"
#include "pg_options.h"

typedef struct PredictCache
{
	/* the model, keyed by TOAST pointer or by size + checksum */
	bool		model_valid;
	bool		by_toast_pointer;
	Oid			toastrelid;
	Oid			valueid;
	Size		size;
	uint64		checksum;
	MemoryContext model_ctx;
	NbIndex		index;

	/* the options, keyed by their bytes (NULL = defaults) */
	bool		scorer_valid;
	struct varlena *options;
	MemoryContext scorer_ctx;
	NbScorer	scorer;

	/* per-row scratch */
	NbDocToken *doc;
	uint32		doc_cap;
	double	   *log_post;
} PredictCache;

static PredictCache *
get_cache(FunctionCallInfo fcinfo)
{
	PredictCache *cache = fcinfo->flinfo->fn_extra;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(PredictCache));
		cache->model_ctx = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
												 "nb_predict model", ALLOCSET_DEFAULT_SIZES);
		cache->scorer_ctx = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
												  "nb_predict options", ALLOCSET_DEFAULT_SIZES);
		fcinfo->flinfo->fn_extra = cache;
	}
	return cache;
}

static void
prepare_model(PredictCache *cache, Datum model)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(model);
	struct varlena *flat;
	struct varatt_external toast;
	uint64		checksum;
	NbView		view;
	MemoryContext old;

	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		VARATT_EXTERNAL_GET_POINTER(toast, raw);
		if (cache->model_valid && cache->by_toast_pointer &&
			cache->toastrelid == toast.va_toastrelid &&
			cache->valueid == toast.va_valueid)
			return;
		flat = PG_DETOAST_DATUM(model);
	}
	else
	{
		flat = PG_DETOAST_DATUM(model);
		if (cache->model_valid && !cache->by_toast_pointer &&
			cache->size == VARSIZE(flat) &&
			nb_peek_checksum(VARDATA(flat), VARSIZE(flat) - VARHDRSZ, &checksum) &&
			cache->checksum == checksum)
			return;
	}

	cache->model_valid = false;
	cache->scorer_valid = false;
	MemoryContextReset(cache->scorer_ctx);
	MemoryContextReset(cache->model_ctx);

	nb_model_validate_bytes(VARDATA(flat), VARSIZE(flat) - VARHDRSZ, &view,
							ERRCODE_DATA_CORRUPTED, false);
	old = MemoryContextSwitchTo(cache->model_ctx);
	nb_index_build(&cache->index, &view);
	cache->doc_cap = 64;
	cache->doc = palloc(sizeof(NbDocToken) * cache->doc_cap);
	cache->log_post = palloc(sizeof(double) * view.n_classes);
	MemoryContextSwitchTo(old);

	cache->by_toast_pointer = VARATT_IS_EXTERNAL_ONDISK(raw);
	if (cache->by_toast_pointer)
	{
		cache->toastrelid = toast.va_toastrelid;
		cache->valueid = toast.va_valueid;
	}
	cache->size = VARSIZE(flat);
	cache->checksum = view.checksum;
	cache->model_valid = true;
	if ((Pointer) flat != (Pointer) raw)
		pfree(flat);
}

static bool
same_options(const struct varlena *cached, const struct varlena *given)
{
	if (cached == NULL || given == NULL)
		return cached == given;
	return VARSIZE(cached) == VARSIZE(given) &&
		memcmp(cached, given, VARSIZE(given)) == 0;
}

static void
prepare_scorer(PredictCache *cache, Jsonb *options)
{
	NbOptions	opts;
	MemoryContext old;

	if (cache->scorer_valid && same_options(cache->options, (struct varlena *) options))
		return;
	cache->scorer_valid = false;
	MemoryContextReset(cache->scorer_ctx);

	old = MemoryContextSwitchTo(cache->scorer_ctx);
	nb_parse_options(options, &cache->index, &opts);
	nb_scorer_build(&cache->scorer, &cache->index, &opts);
	if (options != NULL)
	{
		cache->options = palloc(VARSIZE(options));
		memcpy(cache->options, options, VARSIZE(options));
	}
	else
		cache->options = NULL;
	MemoryContextSwitchTo(old);
	cache->scorer_valid = true;
}

/* Room for n tokens in the document scratch array. */
static void
reserve_doc(PredictCache *cache, uint32 n)
{
	if (n <= cache->doc_cap)
		return;
	cache->doc = repalloc_huge(cache->doc, sizeof(NbDocToken) * (Size) n);
	cache->doc_cap = n;
}

static uint32
doc_from_array(PredictCache *cache, ArrayType *tokens)
{
	int			n = ArrayGetNItems(ARR_NDIM(tokens), ARR_DIMS(tokens));
	uint32		used = 0;
	array_iter	it;

	reserve_doc(cache, n);
	array_iter_setup(&it, (AnyArrayType *) tokens);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		elem = array_iter_next(&it, &isnull, i, -1, false, TYPALIGN_INT);
		text	   *tok;
		int64		k;

		if (isnull)
			continue;
		tok = (text *) DatumGetPointer(elem);
		k = nb_index_token(&cache->index, VARDATA_ANY(tok), VARSIZE_ANY_EXHDR(tok));
		if (k < 0)
			continue;
		cache->doc[used].token = (uint32) k;
		cache->doc[used].count = 1;
		used++;
	}
	return nb_doc_normalize(cache->doc, used);
}

static uint32
doc_from_tsvector(PredictCache *cache, TSVector tsv)
{
	WordEntry  *entries = ARRPTR(tsv);
	char	   *lexemes = STRPTR(tsv);
	uint32		used = 0;

	reserve_doc(cache, tsv->size);
	for (int i = 0; i < tsv->size; i++)
	{
		int			npos = entries[i].haspos ? POSDATALEN(tsv, &entries[i]) : 0;
		int64		k = nb_index_token(&cache->index, lexemes + entries[i].pos,
									   entries[i].len);

		if (k < 0)
			continue;
		cache->doc[used].token = (uint32) k;
		cache->doc[used].count = npos > 0 ? npos : 1;
		used++;
	}
	/* lexemes are distinct, but sorting by index keeps entry access in order */
	return nb_doc_normalize(cache->doc, used);
}

typedef enum FeatureKind
{
	FEATURES_ARRAY,
	FEATURES_TSVECTOR
} FeatureKind;

/*
 * Score the row: returns the index of the predicted class with
 * cache->log_post filled, or -1 for a NULL result (NULL model or features).
 */
static int64
score_row(FunctionCallInfo fcinfo, FeatureKind kind, PredictCache **cache_out)
{
	PredictCache *cache;
	uint32		n;
	int64		best;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return -1;
	cache = get_cache(fcinfo);
	prepare_model(cache, PG_GETARG_DATUM(0));
	prepare_scorer(cache, PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2));

	if (kind == FEATURES_ARRAY)
		n = doc_from_array(cache, PG_GETARG_ARRAYTYPE_P(1));
	else
		n = doc_from_tsvector(cache, PG_GETARG_TSVECTOR(1));

	best = nb_scorer_score(&cache->scorer, cache->doc, n, cache->log_post);
	if (best < 0)
		elog(ERROR, "every class is excluded by the class prior");
	*cache_out = cache;
	return best;
}

static text *
class_label(PredictCache *cache, uint32 c)
{
	uint32		len;
	const char *s = nb_strmap_str(&cache->index.labels, c, &len);

	return cstring_to_text_with_len(s, len);
}

static Datum
posterior_jsonb(PredictCache *cache, bool log_scale)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 c = 0; c < cache->index.n_classes; c++)
	{
		uint32		len;
		const char *s = nb_strmap_str(&cache->index.labels, c, &len);
		double		lp = cache->log_post[c];

		nb_push_key(&state, s, len);
		if (!log_scale)
			nb_push_float8(&state, lp == -INFINITY ? 0.0 : exp(lp));
		else if (lp == -INFINITY)
		{
			/* JSON has no -Infinity: probability 0 is null */
			JsonbValue	jv;

			jv.type = jbvNull;
			pushJsonbValue(&state, WJB_VALUE, &jv);
		}
		else
			nb_push_float8(&state, lp);
	}
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}

#define PREDICT_FUNCTIONS(suffix, kind) \
PG_FUNCTION_INFO_V1(nb_predict_##suffix); \
Datum \
nb_predict_##suffix(PG_FUNCTION_ARGS) \
{ \
	PredictCache *cache; \
	int64		best = score_row(fcinfo, kind, &cache); \
	if (best < 0) \
		PG_RETURN_NULL(); \
	PG_RETURN_TEXT_P(class_label(cache, (uint32) best)); \
} \
PG_FUNCTION_INFO_V1(nb_predict_proba_##suffix); \
Datum \
nb_predict_proba_##suffix(PG_FUNCTION_ARGS) \
{ \
	PredictCache *cache; \
	if (score_row(fcinfo, kind, &cache) < 0) \
		PG_RETURN_NULL(); \
	return posterior_jsonb(cache, false); \
} \
PG_FUNCTION_INFO_V1(nb_predict_log_proba_##suffix); \
Datum \
nb_predict_log_proba_##suffix(PG_FUNCTION_ARGS) \
{ \
	PredictCache *cache; \
	if (score_row(fcinfo, kind, &cache) < 0) \
		PG_RETURN_NULL(); \
	return posterior_jsonb(cache, true); \
}

PREDICT_FUNCTIONS(array, FEATURES_ARRAY)
PREDICT_FUNCTIONS(tsvector, FEATURES_TSVECTOR)
