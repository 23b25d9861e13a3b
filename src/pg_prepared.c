/*
 * pg_prepared.c — models prepared for scoring, see pg_prepared.h.
 *
 * Per call site (fn_extra), models are keyed like PostGIS keys TOASTed
 * values: an out-of-line model by its TOAST pointer, without being
 * detoasted; an inline compressed one by a hash of its compressed bytes,
 * without being decompressed; any other by its size and the checksum in
 * its header (a 64-bit hash of its content, verified when it is prepared).
 * Several models stay at hand at once (least recently used goes first), so
 * a join with a table of models does not thrash.
 *
 * A TOAST pointer names a value only while the query runs, so across
 * queries the backend keys a prepared model by its stored bytes (fetched,
 * not decompressed) instead.  Call sites pin the models they use until the
 * end of their query (a reset callback on their memory context): the cache
 * can exceed its limit while a query uses more, and shrinks when the
 * query ends.  A model or scorer is built in a context under the current
 * one and moved into the cache only once complete, so an error halfway (a
 * cancel, too: preparation checks for interrupts) leaves nothing behind.
 */
#include "pg_prepared.h"

#include <limits.h>

#include "access/detoast.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "nb_hash.h"
#include "nb_interrupt.h"
#include "pg_model.h"
#include "pg_options.h"

/* How many models one call site keeps at hand (a join with a table of models). */
#define NB_CALL_SITE_MODELS 8

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

typedef struct CallSiteModel
{
	ModelKey	key;
	NbPrepared *pm;				/* pinned; NULL: unused */
	uint64		last_used;
} CallSiteModel;

typedef struct CallSite
{
	CallSiteModel models[NB_CALL_SITE_MODELS];
	uint64		clock;
	MemoryContextCallback unpin;
	/* per-row scratch: the row's tokens */
	NbTokenRef *refs;
	uint32		refs_cap;
} CallSite;

/* nbc.prepared_model_cache, in kilobytes */
static int	cache_limit_kb = 64 * 1024;

/* the backend's prepared models, most recently looked up first */
static MemoryContext cache_ctx = NULL;
static dlist_head cache_models = DLIST_STATIC_INIT(cache_models);
static Size cache_bytes = 0;
static uint64 cache_clock = 0;

void		_PG_init(void);

/* The module's only setting; see pg_model.c for PG_MODULE_MAGIC. */
void
_PG_init(void)
{
	DefineCustomIntVariable("nbc.prepared_model_cache",
							"Memory for models kept prepared for scoring between queries.",
							"Per backend; 0 prepares every model once per query.",
							&cache_limit_kb,
							64 * 1024, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("nbc");
}

static Size
cache_limit(void)
{
	return (Size) cache_limit_kb * 1024;
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
	dlist_node *cur;

	if (dlist_is_empty(&cache_models))
		return;
	cur = dlist_tail_node(&cache_models);
	while (cache_bytes > cache_limit())
	{
		NbPrepared *pm = dlist_container(NbPrepared, node, cur);
		dlist_node *prev = dlist_has_prev(&cache_models, cur) ?
			dlist_prev_node(&cache_models, cur) : NULL;

		if (pm->pins == 0)
			free_model(pm);
		if (prev == NULL)
			return;
		cur = prev;
	}
}

/* After a model grew (a new scorer): count its memory again. */
static void
recount(NbPrepared *pm)
{
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

static CallSite *
get_call_site(FunctionCallInfo fcinfo)
{
	CallSite   *site = fcinfo->flinfo->fn_extra;

	if (site == NULL)
	{
		MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;

		site = MemoryContextAllocZero(mcxt, sizeof(CallSite));
		site->refs_cap = 64;
		site->refs = MemoryContextAlloc(mcxt, sizeof(NbTokenRef) * site->refs_cap);
		site->unpin.func = unpin_call_site;
		site->unpin.arg = site;
		MemoryContextRegisterResetCallback(mcxt, &site->unpin);
		fcinfo->flinfo->fn_extra = site;
	}
	return site;
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
 * The call site's key of a model datum, detoasting only when the key needs
 * the plain bytes (then *flat is set, else NULL).
 */
static ModelKey
call_site_key(Datum model, struct varlena **flat)
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
		key.hash = nb_hash_bytes_long(raw, VARSIZE(raw), NB_CHECKSUM_SEED);
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

/* A model of the backend's cache, by its stored bytes (plain or compressed). */
static NbPrepared *
find_cached(Size size, uint64 hash)
{
	dlist_iter	it;

	dlist_foreach(it, &cache_models)
	{
		NbPrepared *pm = dlist_container(NbPrepared, node, it.cur);

		if (pm->key_size == size && pm->key_hash == hash)
			return pm;
	}
	return NULL;
}

/* Prepare the model of the stored bytes and add it to the backend's cache. */
static NbPrepared *
build_model(struct varlena *stored, Size size, uint64 hash)
{
	struct varlena *flat = detoast_attr(stored);
	MemoryContext ctx = AllocSetContextCreate(CurrentMemoryContext, "nb prepared model",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;
	NbPrepared *pm;
	NbView		view;

	nb_model_validate_bytes(VARDATA(flat), VARSIZE(flat) - VARHDRSZ, &view,
							ERRCODE_DATA_CORRUPTED, false);
	old = MemoryContextSwitchTo(ctx);
	pm = palloc0(sizeof(NbPrepared));
	nb_index_build(&pm->index, &view);
	pm->log_post = palloc(sizeof(double) * view.n_classes);
	pm->doc_ctx = AllocSetContextCreate(ctx, "nb prepared document", ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(pm->doc_ctx);
	nb_doc_init(&pm->doc, &pm->index);
	MemoryContextSwitchTo(old);
	if (flat != stored)
		pfree(flat);

	if (cache_ctx == NULL)
		cache_ctx = AllocSetContextCreate(TopMemoryContext, "nb prepared models",
										  ALLOCSET_SMALL_SIZES);
	MemoryContextSetParent(ctx, cache_ctx);
	pm->ctx = ctx;
	pm->key_size = size;
	pm->key_hash = hash;
	pm->bytes = MemoryContextMemAllocated(ctx, true);
	cache_bytes += pm->bytes;
	dlist_push_head(&cache_models, &pm->node);
	return pm;
}

/*
 * The prepared model of a datum the call site has not seen: from the
 * backend's cache, else built.
 */
static NbPrepared *
lookup_model(Datum model, struct varlena *flat)
{
	struct varlena *stored = flat != NULL ? flat : (struct varlena *) DatumGetPointer(model);
	NbPrepared *pm;
	Size		size;
	uint64		hash;

	if (VARATT_IS_EXTERNAL(stored))
		stored = detoast_external_attr(stored); /* still compressed if it was */
	size = VARSIZE_ANY(stored);
	hash = nb_hash_bytes_long(stored, size, NB_CHECKSUM_SEED);
	pm = find_cached(size, hash);
	if (pm == NULL)
		pm = build_model(stored, size, hash);
	else
		dlist_move_head(&cache_models, &pm->node);
	if (stored != flat && (Pointer) stored != DatumGetPointer(model))
		pfree(stored);
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

/* The model's scorer for these options, built if it has none. */
static NbScorer *
get_scorer(NbPrepared *pm, Jsonb *options)
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
	nb_parse_options(options, &pm->index, &opts);
	nb_scorer_build(&scorer, &pm->index, &opts);
	if (options != NULL)
	{
		copy = palloc(VARSIZE(options));
		memcpy(copy, options, VARSIZE(options));
	}
	MemoryContextSwitchTo(old);

	/* a free slot, else the least recently used */
	for (int i = 0; i < NB_SCORERS_PER_MODEL; i++)
		if (slot == NULL || pm->scorers[i].ctx == NULL ||
			(slot->ctx != NULL && pm->scorers[i].last_used < slot->last_used))
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

NbPrepared *
nb_prepared_get(FunctionCallInfo fcinfo, Datum model, Jsonb *options, NbScorer **scorer)
{
	CallSite   *site = get_call_site(fcinfo);
	struct varlena *flat;
	ModelKey	key = call_site_key(model, &flat);
	CallSiteModel *entry = NULL;

	site->clock++;
	for (int i = 0; i < NB_CALL_SITE_MODELS; i++)
		if (site->models[i].pm != NULL && same_key(&site->models[i].key, &key))
		{
			entry = &site->models[i];
			break;
		}
	if (entry == NULL)
	{
		NbPrepared *pm = lookup_model(model, flat);

		/* pin it before anything can trim the cache */
		pm->pins++;
		/* a free entry, else the least recently used one */
		for (int i = 0; i < NB_CALL_SITE_MODELS; i++)
			if (entry == NULL || site->models[i].pm == NULL ||
				(entry->pm != NULL && site->models[i].last_used < entry->last_used))
				entry = &site->models[i];
		if (entry->pm != NULL)
			release(entry->pm);
		entry->pm = pm;
		entry->key = key;
		trim_cache();
	}
	if (flat != NULL && (Pointer) flat != DatumGetPointer(model))
		pfree(flat);
	entry->last_used = site->clock;
	*scorer = get_scorer(entry->pm, options);
	return entry->pm;
}
