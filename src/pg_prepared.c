/*
 * pg_prepared.c — models prepared for scoring, see pg_prepared.h; why they
 * are compared byte for byte as stored, and how call sites and the backend's
 * cache find and keep them: src/README.md, "Prepared models".
 */
#include "pg_prepared.h"

#include <limits.h>

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "nodes/primnodes.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "pg_jsonb.h"
#include "pg_model.h"
#include "pg_options.h"
#include "pg_query_constant.h"

/* How many models one call site keeps at hand (a join with a table of models). */
#define NB_CALL_SITE_MODELS 8

typedef struct CallSiteModel
{
	NbPrepared *pm;				/* pinned; NULL: unused */
	bool		by_pointer;		/* out-of-line: known by its TOAST pointer */
	struct varatt_external toast;	/* by_pointer: the TOAST pointer it serves */
	uint64		last_used;
} CallSiteModel;

typedef struct CallSite
{
	CallSiteModel models[NB_CALL_SITE_MODELS];
	CallSiteModel *last;		/* the previous row's */
	uint64		clock;
	bool		model_is_fixed; /* see model_arg_is_fixed */
	MemoryContextCallback unpin;
	/* per-row scratch: the row's tokens */
	NbTokenRef *refs;
	uint32		refs_cap;
	NbSiteRows	counted;		/* nbc.unknown_features' */
	void	   *label_cast;		/* nb_label_arg's, for a class argument */
} CallSite;

/*
 * nbc.prepared_model_cache and nbc.prepared_model_cache_limit, in
 * kilobytes.  The ceiling's default leaves room for a few large models
 * (four times the default cache) while bounding what a backend can hold
 * idle; an administrator sets it to what the server's memory allows per
 * connection.
 */
static int	cache_kb = 64 * 1024;
static int	cache_limit_kb = 256 * 1024;

/* the backend's prepared models, most recently looked up first */
static MemoryContext cache_ctx = NULL;
static dlist_head cache_models = DLIST_STATIC_INIT(cache_models);
static Size cache_bytes = 0;
static uint64 cache_clock = 0;

void
nb_prepared_define_settings(void)
{
	DefineCustomIntVariable("nbc.prepared_model_cache",
							"Memory for models kept prepared for scoring between queries.",
							"Per backend; 0 prepares every model once per query. "
							"At most nbc.prepared_model_cache_limit is used.",
							&cache_kb,
							64 * 1024, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("nbc.prepared_model_cache_limit",
							"Most memory nbc.prepared_model_cache may use, whatever a session sets it to.",
							"Per backend; also the most the scorers of one nb_grid_metrics grid may take.",
							&cache_limit_kb,
							256 * 1024, 0, MAX_KILOBYTES,
							PGC_SUSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
}

static Size
cache_limit(void)
{
	return (Size) Min(cache_kb, cache_limit_kb) * 1024;
}

static void
free_model(NbPrepared *pm)
{
	dlist_delete(&pm->node);
	cache_bytes -= pm->bytes;
	/* pm lives in its own context */
	MemoryContextDelete(pm->ctx);
}

/* Free the least recently used models no query holds while over the limit. */
static void
trim_cache(void)
{
	dlist_node *cur = dlist_is_empty(&cache_models) ? NULL : dlist_tail_node(&cache_models);

	while (cur != NULL && cache_bytes > cache_limit())
	{
		NbPrepared *pm = dlist_container(NbPrepared, node, cur);

		cur = dlist_has_prev(&cache_models, cur) ? dlist_prev_node(&cache_models, cur) : NULL;
		if (pm->pins == 0)
			free_model(pm);
	}
}

/* After a model grew (a new scorer): count its memory again. */
static void
recount(NbPrepared *pm)
{
	if (!pm->cached)
		return;
	cache_bytes -= pm->bytes;
	pm->bytes = MemoryContextMemAllocated(pm->ctx, true);
	cache_bytes += pm->bytes;
	trim_cache();
}

static void
release(NbPrepared *pm)
{
	Assert(pm->pins > 0);
	pm->pins--;
	if (pm->pins == 0)
		trim_cache();
}

/* Reset callback of a call site's memory context: its query is over. */
static void
unpin_call_site(void *arg)
{
	CallSite   *site = arg;

	for (int i = 0; i < NB_CALL_SITE_MODELS; i++)
		if (site->models[i].pm != NULL)
		{
			release(site->models[i].pm);
			site->models[i].pm = NULL;
		}
}

/*
 * Is the call's model argument the same value on every row for as long as
 * the call site exists (one execution of the plan)?  A constant of the plan
 * (a literal, or a parameter that a custom plan folded in) is; so is a
 * model the planner proved constant and marked (pg_query_constant.c).  In
 * an aggregate's transition function the model is the aggregate's first
 * argument, which the Aggref has (fn_expr holds placeholders only): a
 * constant, or an InitPlan's value the plan sets once.
 */
static bool
model_arg_is_fixed(FunctionCallInfo fcinfo)
{
	Node	   *expr = fcinfo->flinfo->fn_expr;
	Aggref	   *agg = AggGetAggref(fcinfo);
	Node	   *arg;

	if (agg != NULL)
	{
		if (list_length(agg->args) == 0)
			return false;
		arg = (Node *) ((TargetEntry *) linitial(agg->args))->expr;
		return IsA(arg, Const) || nb_agg_arg_is_query_constant(fcinfo, arg);
	}
	if (expr == NULL || !IsA(expr, FuncExpr) || list_length(((FuncExpr *) expr)->args) == 0)
		return false;
	arg = linitial(((FuncExpr *) expr)->args);
	return IsA(arg, Const) || nb_expr_is_query_constant(arg, fcinfo->flinfo->fn_mcxt);
}

/* Kept apart from get_call_site, which every row calls. */
static pg_noinline CallSite *
new_call_site(FunctionCallInfo fcinfo)
{
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
	CallSite   *site = MemoryContextAllocZero(mcxt, sizeof(CallSite));

	site->refs_cap = 64;
	site->refs = MemoryContextAlloc(mcxt, sizeof(NbTokenRef) * site->refs_cap);
	site->model_is_fixed = model_arg_is_fixed(fcinfo);
	site->unpin.func = unpin_call_site;
	site->unpin.arg = site;
	MemoryContextRegisterResetCallback(mcxt, &site->unpin);
	fcinfo->flinfo->fn_extra = site;
	return site;
}

static CallSite *
get_call_site(FunctionCallInfo fcinfo)
{
	CallSite   *site = fcinfo->flinfo->fn_extra;

	if (unlikely(site == NULL))
		site = new_call_site(fcinfo);
	return site;
}

NbSiteRows *
nb_prepared_site_rows(FunctionCallInfo fcinfo)
{
	return &get_call_site(fcinfo)->counted;
}

void	  **
nb_prepared_label_cast(FunctionCallInfo fcinfo)
{
	return &get_call_site(fcinfo)->label_cast;
}

NbTokenRef *
nb_prepared_refs(FunctionCallInfo fcinfo, uint32 n)
{
	CallSite   *site = get_call_site(fcinfo);

	if (n > site->refs_cap)
	{
		site->refs_cap = Max(n, 2 * site->refs_cap);
		site->refs = repalloc_huge(site->refs, sizeof(NbTokenRef) * (Size) site->refs_cap);
	}
	return site->refs;
}

static NbStoredBytes
stored_bytes(const struct varlena *value)
{
	NbStoredBytes b;

	Assert(!VARATT_IS_EXTERNAL(value));
	b.compressed = VARATT_IS_COMPRESSED(value);
	if (b.compressed)
	{
		b.data = (const char *) value;
		b.size = VARSIZE(value);
	}
	else
	{
		b.data = VARDATA_ANY(value);
		b.size = VARSIZE_ANY_EXHDR(value);
	}
	return b;
}

/* Was pm prepared from exactly these bytes? */
static bool
same_bytes(const NbPrepared *pm, const NbStoredBytes *b)
{
	return pm->key.compressed == b->compressed && pm->key.size == b->size &&
		memcmp(pm->key.data, b->data, b->size) == 0;
}

/*
 * Is the call site's entry the model of this row?  Found by its TOAST
 * pointer (out of line), else by its bytes.
 *
 * A TOAST value is never changed once written (an update writes a new
 * one), and its value id is an OID that GetNewOidWithIndex gives no new
 * value of the same TOAST table while chunks with that id are still there
 * (it looks with SnapshotAny, so dead chunks count too).  Chunks go only
 * when VACUUM finds them dead to every snapshot, which cannot happen while
 * the query that read the pointer runs (its snapshot holds this backend's
 * xmin back), or with the whole table's contents (TRUNCATE).  Even then a
 * new value gets its id from the OID counter, which comes back to the old
 * one only after 2^32 more OIDs.  So a pointer names the same bytes for as
 * long as a call site lives (one query, or one transaction for a PL/pgSQL
 * simple expression), short of that wraparound; PostGIS keys its cache of
 * prepared geometries the same way.
 */
static inline bool
entry_matches(const CallSiteModel *entry, bool by_pointer, const struct varatt_external *toast,
			  const NbStoredBytes *b)
{
	if (entry->pm == NULL || entry->by_pointer != by_pointer)
		return false;
	if (by_pointer)
		return entry->toast.va_toastrelid == toast->va_toastrelid &&
			entry->toast.va_valueid == toast->va_valueid;
	return same_bytes(entry->pm, b);
}

/* A model of the backend's cache prepared from these bytes. */
static NbPrepared *
find_cached(const NbStoredBytes *b)
{
	dlist_iter	it;

	dlist_foreach(it, &cache_models)
	{
		NbPrepared *pm = dlist_container(NbPrepared, node, it.cur);

		if (same_bytes(pm, b))
			return pm;
	}
	return NULL;
}

/*
 * The part of preparing a model that reads its validated view, in ctx: the
 * index without its item map (place_model adds it).  With own_items the
 * index copies what it reads of the items, so that the caller can free the
 * view's bytes in between; else it reads them in place, and the bytes must
 * outlive the prepared model (nb_index_copy).
 */
static NbPrepared *
copy_model(const NbView *view, MemoryContext ctx, bool own_items)
{
	MemoryContext old;
	NbPrepared *pm;

	nb_model_require_classes(view);
	old = MemoryContextSwitchTo(ctx);
	pm = palloc0(sizeof(NbPrepared));
	pm->ctx = ctx;
	nb_index_copy(&pm->index, view, own_items);
	pm->log_post = palloc(sizeof(double) * view->n_classes);
	pm->has_tokenizer = view->settings.has_tokenizer;
	pm->tokenizer = view->settings.tokenizer;
	if (view->settings.options_len > 0)
		pm->stored_options = nb_stored_options_jsonb(&view->settings);
	MemoryContextSwitchTo(old);
	return pm;
}

static void
place_model(NbPrepared *pm)
{
	MemoryContext old = MemoryContextSwitchTo(pm->ctx);

	nb_index_place(&pm->index);
	pm->doc_ctx = AllocSetContextCreate(pm->ctx, "nb prepared document", ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(pm->doc_ctx);
	nb_doc_init(&pm->doc, &pm->index);
	MemoryContextSwitchTo(old);
}

/*
 * Prepare the model of the stored bytes and add it to the backend's cache,
 * in ctx (a new context under the current one).  The bytes are its key; if
 * they are already in ctx (fetched there), they are kept, not copied.  The
 * index reads the model's items in place in the key, or, for a compressed
 * key, copies them out of the decompressed model, which goes before the
 * item map is made (nb_index_copy).
 */
static NbPrepared *
build_model(const NbStoredBytes *b, MemoryContext ctx, bool bytes_in_ctx)
{
	struct varlena *flat = NULL;
	char	   *key;
	const char *data;
	Size		size;
	NbPrepared *pm;
	NbView		view;

	if (bytes_in_ctx)
		key = unconstify(char *, b->data);
	else
	{
		key = MemoryContextAlloc(ctx, b->size);
		memcpy(key, b->data, b->size);
	}
	if (b->compressed)
	{
		flat = detoast_attr((struct varlena *) key);
		data = VARDATA(flat);
		size = VARSIZE(flat) - VARHDRSZ;
	}
	else
	{
		data = key;
		size = b->size;
	}
	nb_model_validate_bytes(data, size, &view, ERRCODE_DATA_CORRUPTED, false);
	pm = copy_model(&view, ctx, flat != NULL);
	pm->cached = true;
	pm->key = *b;
	pm->key.data = key;
	/* the decompressed model before the item map takes its memory */
	if (flat != NULL)
		pfree(flat);
	place_model(pm);

	if (cache_ctx == NULL)
		cache_ctx = AllocSetContextCreate(TopMemoryContext, "nb prepared models",
										  ALLOCSET_SMALL_SIZES);
	MemoryContextSetParent(ctx, cache_ctx);
	pm->bytes = MemoryContextMemAllocated(ctx, true);
	cache_bytes += pm->bytes;
	dlist_push_head(&cache_models, &pm->node);
	return pm;
}

NbPrepared *
nb_prepared_build(const NbView *view, MemoryContext parent)
{
	NbPrepared *pm = copy_model(view, AllocSetContextCreate(parent, "nb prepared model",
															 ALLOCSET_DEFAULT_SIZES), false);

	place_model(pm);
	return pm;
}

/*
 * The prepared model of stored bytes the call site has not seen: from the
 * backend's cache, else built in ctx (see build_model), which is deleted if
 * the cache has it.
 */
static NbPrepared *
lookup_model(const NbStoredBytes *b, MemoryContext ctx, bool bytes_in_ctx)
{
	NbPrepared *pm = find_cached(b);

	if (pm == NULL)
		return build_model(b, ctx, bytes_in_ctx);
	MemoryContextDelete(ctx);
	dlist_move_head(&cache_models, &pm->node);
	return pm;
}

void
nb_prepared_begin_row(NbPrepared *pm)
{
	if (pm->doc_busy)
	{
		MemoryContext old;

		MemoryContextReset(pm->doc_ctx);
		old = MemoryContextSwitchTo(pm->doc_ctx);
		nb_doc_init(&pm->doc, &pm->index);
		MemoryContextSwitchTo(old);
	}
	else
		nb_doc_begin(&pm->doc);
	pm->doc_busy = true;
	pm->unknown_key = NULL;
}

void
nb_prepared_end_row(NbPrepared *pm)
{
	pm->doc_busy = false;
}

static bool
same_options(const struct varlena *cached, const struct varlena *given)
{
	if (cached == NULL || given == NULL)
		return cached == given;
	return VARSIZE(cached) == VARSIZE(given) &&
		memcmp(cached, given, VARSIZE(given)) == 0;
}

NbTokenBatch *
nb_prepared_token_batch(NbPrepared *pm)
{
	if (pm->batch == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(pm->ctx);

		pm->batch = palloc(sizeof(NbTokenBatch));
		nb_token_batch_init(pm->batch);
		MemoryContextSwitchTo(old);
		recount(pm);
	}
	return pm->batch;
}

Jsonb *
nb_prepared_options(const NbPrepared *pm, Jsonb *given)
{
	if (pm->stored_options == NULL)
		return given;
	if (given == NULL)
		return pm->stored_options;
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(pm->stored_options),
											  JsonbPGetDatum(given)));
}

NbScorer *
nb_prepared_scorer(NbPrepared *pm, Jsonb *options)
{
	NbPreparedScorer *slot = NULL;
	NbOptions	opts;
	NbScorer	scorer;
	MemoryContext ctx;
	MemoryContext old;
	struct varlena *copy = NULL;

	for (int i = 0; i < NB_SCORERS_PER_MODEL; i++)
		if (pm->scorers[i].ctx != NULL &&
			same_options(pm->scorers[i].options, (struct varlena *) options))
		{
			pm->scorers[i].last_used = ++cache_clock;
			return &pm->scorers[i].scorer;
		}

	ctx = AllocSetContextCreate(CurrentMemoryContext, "nb prepared options",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(ctx);
	nb_parse_options(nb_prepared_options(pm, options), &pm->index, &opts);
	nb_scorer_build(&scorer, &pm->index, &opts);
	if (options != NULL)
		copy = (struct varlena *) DatumGetPointer(datumCopy(JsonbPGetDatum(options), false, -1));
	MemoryContextSwitchTo(old);

	/* the least recently used slot: a free one first (its last_used is 0) */
	for (int i = 0; i < NB_SCORERS_PER_MODEL; i++)
		if (slot == NULL || pm->scorers[i].last_used < slot->last_used)
			slot = &pm->scorers[i];
	if (slot->ctx != NULL)
		MemoryContextDelete(slot->ctx);
	MemoryContextSetParent(ctx, pm->ctx);
	slot->ctx = ctx;
	slot->options = copy;
	slot->scorer = scorer;
	slot->last_used = ++cache_clock;
	recount(pm);
	return &slot->scorer;
}

/*
 * A grid's scorers take memory in proportion to the number of option sets
 * times the size of the model: a short array of option sets could have a
 * backend allocate far more than the server has.  They are part of the
 * prepared model, so they may take what the administrator lets prepared
 * models take, nbc.prepared_model_cache_limit, and no more.
 */
static void
check_grid_memory(const NbPrepared *pm, const NbOptions *opts, int count)
{
	uint64		bytes = nb_scorer_set_bytes(&pm->index, opts, (uint32) count);

	if (bytes > (uint64) cache_limit_kb * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg_plural("naive Bayes grid of %d option set needs more memory than nbc.prepared_model_cache_limit allows",
							   "naive Bayes grid of %d option sets needs more memory than nbc.prepared_model_cache_limit allows",
							   count, count),
				 errdetail("Its scorers for this model would take at least %llu kB; the limit is %d kB.",
						   (unsigned long long) ((bytes + 1023) / 1024), cache_limit_kb),
				 errhint("Score fewer option sets at a time, or ask an administrator to raise nbc.prepared_model_cache_limit.")));
}

/* Built if the model has other ones or none. */
NbScorerSet *
nb_prepared_grid(NbPrepared *pm, ArrayType *options)
{
	MemoryContext ctx;
	MemoryContext old;
	Datum	   *elems;
	bool	   *nulls;
	int			count;
	NbScorer   *scorers;
	NbOptions  *opts;
	NbScorerSet set;
	struct varlena *copy;

	if (pm->grid.ctx != NULL && same_options(pm->grid.options, (struct varlena *) options))
		return &pm->grid.set;
	if (ARR_NDIM(options) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes grid must be a one-dimensional array of option sets"),
				 errdetail("The array has %d dimensions.", ARR_NDIM(options))));
	ctx = AllocSetContextCreate(CurrentMemoryContext, "nb prepared grid",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(ctx);
	deconstruct_array(options, JSONBOID, -1, false, TYPALIGN_INT, &elems, &nulls, &count);
	if (count == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes grid has no option sets")));
	scorers = palloc(sizeof(NbScorer) * count);
	opts = palloc(sizeof(NbOptions) * count);
	for (int i = 0; i < count; i++)
		nb_parse_options(nb_prepared_options(pm, nulls[i] ? NULL : DatumGetJsonbP(elems[i])),
						 &pm->index, &opts[i]);
	check_grid_memory(pm, opts, count);
	nb_scorer_set_build(&set, &pm->index, scorers, opts, (uint32) count);
	copy = (struct varlena *) DatumGetPointer(datumCopy(PointerGetDatum(options), false, -1));
	MemoryContextSwitchTo(old);

	if (pm->grid.ctx != NULL)
		MemoryContextDelete(pm->grid.ctx);
	MemoryContextSetParent(ctx, pm->ctx);
	pm->grid.ctx = ctx;
	pm->grid.options = copy;
	pm->grid.set = set;
	recount(pm);
	return &pm->grid.set;
}

NbPrepared *
nb_prepared_get_model(FunctionCallInfo fcinfo, Datum model)
{
	CallSite   *site = get_call_site(fcinfo);
	struct varlena *value = (struct varlena *) DatumGetPointer(model);
	struct varlena *fetched = NULL;
	bool		by_pointer = VARATT_IS_EXTERNAL_ONDISK(value);
	struct varatt_external toast;
	NbStoredBytes b = {false, NULL, 0};
	CallSiteModel *entry = NULL;

	/* the same value on every row: what the first row found */
	if (site->model_is_fixed && site->last != NULL)
		return site->last->pm;
	if (by_pointer)
		VARATT_EXTERNAL_GET_POINTER(toast, value);
	else
	{
		/* an expanded or indirect value: its flat form */
		if (VARATT_IS_EXTERNAL(value))
			value = fetched = detoast_external_attr(value);
		b = stored_bytes(value);
	}

	site->clock++;
	/* the previous row's model first: consecutive rows mostly share one */
	if (site->last != NULL && entry_matches(site->last, by_pointer, &toast, &b))
		entry = site->last;
	else
		for (int i = 0; i < NB_CALL_SITE_MODELS; i++)
		{
			CallSiteModel *e = &site->models[i];

			if (e != site->last && entry_matches(e, by_pointer, &toast, &b))
			{
				entry = e;
				break;
			}
		}
	if (entry == NULL)
	{
		NbPrepared *pm;
		MemoryContext ctx = AllocSetContextCreate(CurrentMemoryContext, "nb prepared model",
												  ALLOCSET_DEFAULT_SIZES);

		if (by_pointer)
		{
			/*
			 * Fetched, still compressed if it was, into the context of the
			 * model it may become: the key of a new one without a copy.
			 */
			MemoryContext old = MemoryContextSwitchTo(ctx);

			value = detoast_external_attr(value);
			MemoryContextSwitchTo(old);
			b = stored_bytes(value);
		}
		pm = lookup_model(&b, ctx, by_pointer);
		/* pin it before anything can trim the cache */
		pm->pins++;
		/* the least recently used entry: a free one first (its last_used is 0) */
		for (int i = 0; i < NB_CALL_SITE_MODELS; i++)
			if (entry == NULL || site->models[i].last_used < entry->last_used)
				entry = &site->models[i];
		if (entry->pm != NULL)
			release(entry->pm);
		entry->pm = pm;
		entry->by_pointer = by_pointer;
		if (by_pointer)
			entry->toast = toast;
		trim_cache();
	}
	if (fetched != NULL)
		pfree(fetched);
	entry->last_used = site->clock;
	site->last = entry;
	return entry->pm;
}

/* qsort comparator of class ids by their labels in jsonb key order */
static int
cmp_jsonb_key(const void *x, const void *y, void *arg)
{
	const NbVocab *labels = arg;
	uint32		a_len;
	uint32		b_len;
	const char *a = nb_vocab_str(labels, *(const uint32 *) x, &a_len);
	const char *b = nb_vocab_str(labels, *(const uint32 *) y, &b_len);

	return nb_jsonb_key_cmp(a, a_len, b, b_len);
}

const uint32 *
nb_prepared_jsonb_order(NbPrepared *pm)
{
	if (pm->jsonb_order == NULL)
	{
		uint32		n = pm->index.n_labels;
		uint32	   *order = MemoryContextAlloc(pm->ctx, sizeof(uint32) * (n + 1));

		for (uint32 c = 0; c < n; c++)
			order[c] = c;
		qsort_arg(order, n, sizeof(uint32), cmp_jsonb_key, &pm->index.labels);
		pm->jsonb_order = order;
	}
	return pm->jsonb_order;
}
