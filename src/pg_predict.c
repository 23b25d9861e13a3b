/*
 * pg_predict.c — nb_predict, nb_predict_proba, nb_predict_log_proba.
 *
 * A model is validated and indexed once per call site and query, not once
 * per row: prepared models hang off fn_extra, keyed like PostGIS keys
 * TOASTed values.  An out-of-line model is recognized by its TOAST pointer
 * without being detoasted, an inline compressed one by a hash of its
 * compressed bytes without being decompressed, any other by its size and
 * the checksum in its header (a 64-bit hash of its content, verified when
 * it is prepared).  Several models stay prepared at once (least recently
 * used goes first), so a join with a table of models does not thrash.
 * Options are keyed by their bytes; a change of options rebuilds only the
 * per-option tables.
 */
#include "pg_model.h"

#include <math.h>

#include "access/detoast.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "nb_hash.h"
#include "nb_scorer.h"
#include "pg_features.h"
#include "pg_jsonb.h"
#include "pg_options.h"

/* How many models one call site keeps prepared (a join with a table of models). */
#define NB_CACHED_MODELS 8

typedef enum ModelKeyKind
{
	KEY_TOAST_POINTER,			/* out-of-line: the TOAST pointer */
	KEY_COMPRESSED,				/* inline compressed: hash of the compressed bytes */
	KEY_CHECKSUM				/* plain: size and the checksum in the header */
} ModelKeyKind;

typedef struct ModelKey
{
	ModelKeyKind kind;
	Oid			toastrelid;
	Oid			valueid;
	Size		size;
	uint64		hash;
} ModelKey;

typedef struct PreparedModel
{
	bool		valid;
	ModelKey	key;
	uint64		last_used;
	MemoryContext model_ctx;
	NbIndex		index;
	double	   *log_post;

	/* the scorer for the last options used, keyed by their bytes (NULL = defaults) */
	bool		scorer_valid;
	struct varlena *options;
	MemoryContext scorer_ctx;
	NbScorer	scorer;
} PreparedModel;

typedef struct PredictCache
{
	PreparedModel models[NB_CACHED_MODELS];
	uint64		clock;
	/* per-row scratch */
	NbTokenRef *refs;
	int64	   *scratch;
	NbDocToken *doc;
	uint32		doc_cap;
} PredictCache;

static PredictCache *
get_cache(FunctionCallInfo fcinfo)
{
	PredictCache *cache = fcinfo->flinfo->fn_extra;

	if (cache == NULL)
	{
		MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;

		cache = MemoryContextAllocZero(mcxt, sizeof(PredictCache));
		for (int i = 0; i < NB_CACHED_MODELS; i++)
		{
			cache->models[i].model_ctx = AllocSetContextCreate(mcxt, "nb_predict model",
															   ALLOCSET_DEFAULT_SIZES);
			cache->models[i].scorer_ctx = AllocSetContextCreate(mcxt, "nb_predict options",
																ALLOCSET_DEFAULT_SIZES);
		}
		cache->doc_cap = 64;
		cache->doc = MemoryContextAlloc(mcxt, sizeof(NbDocToken) * cache->doc_cap);
		cache->refs = MemoryContextAlloc(mcxt, sizeof(NbTokenRef) * cache->doc_cap);
		cache->scratch = MemoryContextAlloc(mcxt, sizeof(int64) * cache->doc_cap);
		fcinfo->flinfo->fn_extra = cache;
	}
	return cache;
}

static bool
same_key(const ModelKey *a, const ModelKey *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == KEY_TOAST_POINTER)
		return a->toastrelid == b->toastrelid && a->valueid == b->valueid;
	return a->size == b->size && a->hash == b->hash;
}

/*
 * The cache key of a model datum, detoasting only when the key needs the
 * plain bytes (then *flat is set, else NULL).
 */
static ModelKey
model_key(Datum model, struct varlena **flat)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(model);
	ModelKey	key;

	memset(&key, 0, sizeof(key));
	*flat = NULL;
	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		struct varatt_external toast;

		VARATT_EXTERNAL_GET_POINTER(toast, raw);
		key.kind = KEY_TOAST_POINTER;
		key.toastrelid = toast.va_toastrelid;
		key.valueid = toast.va_valueid;
	}
	else if (VARATT_IS_COMPRESSED(raw))
	{
		key.kind = KEY_COMPRESSED;
		key.size = VARSIZE(raw);
		key.hash = nb_hash_bytes(raw, VARSIZE(raw), NB_CHECKSUM_SEED);
	}
	else
	{
		*flat = PG_DETOAST_DATUM(model);
		key.kind = KEY_CHECKSUM;
		key.size = VARSIZE(*flat);
		if (!nb_peek_checksum(VARDATA(*flat), VARSIZE(*flat) - VARHDRSZ, &key.hash))
			key.hash = 0;		/* too short to be valid: validation will say so */
	}
	return key;
}

static PreparedModel *
prepare_model(PredictCache *cache, Datum model)
{
	struct varlena *flat;
	ModelKey	key = model_key(model, &flat);
	PreparedModel *pm = NULL;
	NbView		view;
	MemoryContext old;

	cache->clock++;
	for (int i = 0; i < NB_CACHED_MODELS; i++)
		if (cache->models[i].valid && same_key(&cache->models[i].key, &key))
		{
			cache->models[i].last_used = cache->clock;
			return &cache->models[i];
		}

	/* a miss: take a free entry, else the least recently used one */
	for (int i = 0; i < NB_CACHED_MODELS; i++)
		if (pm == NULL || !cache->models[i].valid ||
			(pm->valid && cache->models[i].last_used < pm->last_used))
			pm = &cache->models[i];

	pm->valid = false;
	pm->scorer_valid = false;
	MemoryContextReset(pm->scorer_ctx);
	MemoryContextReset(pm->model_ctx);

	if (flat == NULL)
		flat = PG_DETOAST_DATUM(model);
	nb_model_validate_bytes(VARDATA(flat), VARSIZE(flat) - VARHDRSZ, &view,
							ERRCODE_DATA_CORRUPTED, false);
	old = MemoryContextSwitchTo(pm->model_ctx);
	nb_index_build(&pm->index, &view);
	pm->log_post = palloc(sizeof(double) * view.n_classes);
	MemoryContextSwitchTo(old);

	pm->key = key;
	pm->last_used = cache->clock;
	pm->valid = true;
	if ((Pointer) flat != DatumGetPointer(model))
		pfree(flat);
	return pm;
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
prepare_scorer(PreparedModel *pm, Jsonb *options)
{
	NbOptions	opts;
	MemoryContext old;

	if (pm->scorer_valid && same_options(pm->options, (struct varlena *) options))
		return;
	pm->scorer_valid = false;
	MemoryContextReset(pm->scorer_ctx);

	old = MemoryContextSwitchTo(pm->scorer_ctx);
	nb_parse_options(options, &pm->index, &opts);
	nb_scorer_build(&pm->scorer, &pm->index, &opts);
	if (options != NULL)
	{
		pm->options = palloc(VARSIZE(options));
		memcpy(pm->options, options, VARSIZE(options));
	}
	else
		pm->options = NULL;
	MemoryContextSwitchTo(old);
	pm->scorer_valid = true;
}

/* Room for n tokens in the per-row scratch arrays. */
static void
reserve_doc(PredictCache *cache, uint32 n)
{
	if (n <= cache->doc_cap)
		return;
	cache->doc_cap = Max(n, 2 * cache->doc_cap);
	cache->doc = repalloc_huge(cache->doc, sizeof(NbDocToken) * (Size) cache->doc_cap);
	cache->refs = repalloc_huge(cache->refs, sizeof(NbTokenRef) * (Size) cache->doc_cap);
	cache->scratch = repalloc_huge(cache->scratch, sizeof(int64) * (Size) cache->doc_cap);
}

/* The document's distinct known tokens. */
static uint32
lookup_doc(PredictCache *cache, NbIndex *index, uint32 n)
{
	return nb_index_lookup(index, cache->refs, n, cache->scratch, cache->doc);
}

static uint32
doc_from_array(PredictCache *cache, NbIndex *index, ArrayType *tokens)
{
	reserve_doc(cache, nb_array_size(tokens));
	return lookup_doc(cache, index, nb_array_tokens(tokens, cache->refs));
}

static uint32
doc_from_tsvector(PredictCache *cache, NbIndex *index, TSVector tsv)
{
	reserve_doc(cache, tsv->size);
	return lookup_doc(cache, index, nb_tsvector_tokens(tsv, cache->refs));
}

typedef enum FeatureKind
{
	FEATURES_ARRAY,
	FEATURES_TSVECTOR
} FeatureKind;

/*
 * Score the row: returns the index of the predicted class with the prepared
 * model's log_post filled, or -1 for a NULL result (NULL model or features).
 */
static int64
score_row(FunctionCallInfo fcinfo, FeatureKind kind, PreparedModel **pm_out)
{
	PredictCache *cache;
	PreparedModel *pm;
	uint32		n;
	int64		best;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return -1;
	cache = get_cache(fcinfo);
	pm = prepare_model(cache, PG_GETARG_DATUM(0));
	prepare_scorer(pm, PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2));

	if (kind == FEATURES_ARRAY)
		n = doc_from_array(cache, &pm->index, PG_GETARG_ARRAYTYPE_P(1));
	else
		n = doc_from_tsvector(cache, &pm->index, PG_GETARG_TSVECTOR(1));

	best = nb_scorer_score(&pm->scorer, cache->doc, n, pm->log_post);
	if (best < 0)
		elog(ERROR, "every class is excluded by the class prior");
	*pm_out = pm;
	return best;
}

static text *
class_label(PreparedModel *pm, uint32 c)
{
	uint32		len;
	const char *s = nb_strmap_str(&pm->index.labels, c, &len);

	return cstring_to_text_with_len(s, len);
}

static Datum
posterior_jsonb(PreparedModel *pm, bool log_scale)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (uint32 c = 0; c < pm->index.n_classes; c++)
	{
		uint32		len;
		const char *s = nb_strmap_str(&pm->index.labels, c, &len);
		double		lp = pm->log_post[c];

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
	PreparedModel *pm; \
	int64		best = score_row(fcinfo, kind, &pm); \
	if (best < 0) \
		PG_RETURN_NULL(); \
	PG_RETURN_TEXT_P(class_label(pm, (uint32) best)); \
} \
PG_FUNCTION_INFO_V1(nb_predict_proba_##suffix); \
Datum \
nb_predict_proba_##suffix(PG_FUNCTION_ARGS) \
{ \
	PreparedModel *pm; \
	if (score_row(fcinfo, kind, &pm) < 0) \
		PG_RETURN_NULL(); \
	return posterior_jsonb(pm, false); \
} \
PG_FUNCTION_INFO_V1(nb_predict_log_proba_##suffix); \
Datum \
nb_predict_log_proba_##suffix(PG_FUNCTION_ARGS) \
{ \
	PreparedModel *pm; \
	if (score_row(fcinfo, kind, &pm) < 0) \
		PG_RETURN_NULL(); \
	return posterior_jsonb(pm, true); \
}

PREDICT_FUNCTIONS(array, FEATURES_ARRAY)
PREDICT_FUNCTIONS(tsvector, FEATURES_TSVECTOR)
