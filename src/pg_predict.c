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
	NbDoc		doc;
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
	/* per-row scratch: the row's tokens */
	NbTokenRef *refs;
	uint32		refs_cap;
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
		cache->refs_cap = 64;
		cache->refs = MemoryContextAlloc(mcxt, sizeof(NbTokenRef) * cache->refs_cap);
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
	nb_doc_init(&pm->doc, &pm->index);
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

/* Room for n token references in the per-row scratch. */
static NbTokenRef *
reserve_refs(PredictCache *cache, uint32 n)
{
	if (n > cache->refs_cap)
	{
		cache->refs_cap = Max(n, 2 * cache->refs_cap);
		cache->refs = repalloc_huge(cache->refs, sizeof(NbTokenRef) * (Size) cache->refs_cap);
	}
	return cache->refs;
}

/* Add tokens to the document; its scratch grows in the model's context. */
static void
doc_add_tokens(PreparedModel *pm, uint32 feature, const NbTokenRef *refs, uint32 n)
{
	MemoryContext old = MemoryContextSwitchTo(pm->model_ctx);

	nb_scorer_add_tokens(&pm->scorer, &pm->doc, feature, refs, n);
	MemoryContextSwitchTo(old);
}

/* text[] and tsvector rows are the bag "". */
static void
doc_add_text(PreparedModel *pm, const NbTokenRef *refs, uint32 n)
{
	if (pm->index.unnamed_bag < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes model was not trained on text[] or tsvector features"),
				 errhint("Pass the features as jsonb.")));
	doc_add_tokens(pm, (uint32) pm->index.unnamed_bag, refs, n);
}

/* What nb_jsonb_features calls while building a document to score. */
typedef struct JsonbDocBuilder
{
	PredictCache *cache;
	PreparedModel *pm;
} JsonbDocBuilder;

/*
 * The model's feature for a key with a value of the given type: -1 if the
 * model does not know the key (the value is ignored, like an unknown
 * token), ERROR if the model knows it with another type.
 */
static int64
doc_feature(JsonbDocBuilder *b, const char *key, uint32 key_len, NbFeatureType type)
{
	int64		j = nb_index_feature(&b->pm->index, key, key_len);

	if (j >= 0 && b->pm->index.feature_type[j] != type)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes feature \"%.*s\" has the wrong type", (int) key_len, key),
				 errdetail("The model has it as %s; the value given is %s.",
						   nb_feature_type_name(b->pm->index.feature_type[j]),
						   nb_feature_type_name(type))));
	return j;
}

static NbTokenRef *
doc_reserve(void *arg, uint32 n)
{
	return reserve_refs(((JsonbDocBuilder *) arg)->cache, n);
}

static void
doc_bag(void *arg, const char *key, uint32 key_len, const NbTokenRef *tokens, uint32 n)
{
	JsonbDocBuilder *b = arg;
	int64		j = doc_feature(b, key, key_len, NB_FEATURE_BAG);

	if (j >= 0)
		doc_add_tokens(b->pm, (uint32) j, tokens, n);
}

static void
doc_category(void *arg, const char *key, uint32 key_len, const char *value, uint32 len)
{
	JsonbDocBuilder *b = arg;
	int64		j = doc_feature(b, key, key_len, NB_FEATURE_CATEGORICAL);
	NbTokenRef	ref = {value, len, 1.0};

	if (j >= 0)
		doc_add_tokens(b->pm, (uint32) j, &ref, 1);
}

static void
doc_real(void *arg, const char *key, uint32 key_len, double x)
{
	JsonbDocBuilder *b = arg;
	int64		j = doc_feature(b, key, key_len, NB_FEATURE_GAUSSIAN);

	if (j >= 0)
		nb_doc_add_value(&b->pm->doc, (uint32) j, x);
}

static void
doc_boolean(void *arg, const char *key, uint32 key_len, bool x)
{
	JsonbDocBuilder *b = arg;
	int64		j = doc_feature(b, key, key_len, NB_FEATURE_BOOLEAN);

	if (j >= 0)
		nb_doc_add_value(&b->pm->doc, (uint32) j, x ? 1 : 0);
}

static void
doc_from_float8(PreparedModel *pm, ArrayType *array)
{
	double	   *values;
	bool	   *nulls;
	int			n;

	nb_float8_features(array, &values, &nulls, &n);
	if (pm->index.vector_len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes model was not trained on float8[] features"),
				 errhint("Pass the features as jsonb.")));
	if ((uint32) n != pm->index.vector_len)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("naive Bayes float8[] features have %d elements, the model has %u",
						n, pm->index.vector_len)));
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			nb_doc_add_value(&pm->doc, pm->index.position_feature[i], values[i]);
	pfree(values);
	pfree(nulls);
}

typedef enum FeatureKind
{
	FEATURES_ARRAY,
	FEATURES_TSVECTOR,
	FEATURES_JSONB,
	FEATURES_FLOAT8
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
	int64		best;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return -1;
	cache = get_cache(fcinfo);
	pm = prepare_model(cache, PG_GETARG_DATUM(0));
	prepare_scorer(pm, PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2));

	nb_doc_begin(&pm->doc);
	switch (kind)
	{
		case FEATURES_ARRAY:
			{
				ArrayType  *tokens = PG_GETARG_ARRAYTYPE_P(1);
				NbTokenRef *refs = reserve_refs(cache, nb_array_size(tokens));

				doc_add_text(pm, refs, nb_array_tokens(tokens, refs));
			}
			break;
		case FEATURES_TSVECTOR:
			{
				TSVector	tsv = PG_GETARG_TSVECTOR(1);
				NbTokenRef *refs = reserve_refs(cache, tsv->size);

				doc_add_text(pm, refs, nb_tsvector_tokens(tsv, refs));
			}
			break;
		case FEATURES_JSONB:
			{
				JsonbDocBuilder builder = {cache, pm};
				NbJsonbVisitor visitor = {&builder, doc_reserve, doc_bag, doc_category,
					doc_real, doc_boolean};

				nb_jsonb_features(PG_GETARG_JSONB_P(1), &visitor);
			}
			break;
		case FEATURES_FLOAT8:
			doc_from_float8(pm, PG_GETARG_ARRAYTYPE_P(1));
			break;
	}

	best = nb_scorer_score(&pm->scorer, &pm->doc, pm->log_post);
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
PREDICT_FUNCTIONS(jsonb, FEATURES_JSONB)
PREDICT_FUNCTIONS(float8, FEATURES_FLOAT8)
