/*
 * pg_train.c — the training aggregates' transition functions and nb_merge.
 *
 * The transition state is an nb_model held as a read/write expanded object
 * in the aggregate's memory context (see pg_model.h), so each row updates it
 * in place; the executor keeps such a value without copying when the
 * function returns the same pointer (nodeAgg.c, ExecAggTransReparent).
 */
#include "pg_model.h"
#include "pg_aggregate.h"
#include "pg_features.h"
#include "pg_label.h"
#include "pg_train.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/float.h"

#include "nb_interrupt.h"
#include "nb_token_batch.h"
#include "pg_progress.h"
#include "pg_tokenize.h"

PG_FUNCTION_INFO_V1(nb_train_array_transfn);
PG_FUNCTION_INFO_V1(nb_train_tsvector_transfn);
PG_FUNCTION_INFO_V1(nb_train_jsonb_transfn);
PG_FUNCTION_INFO_V1(nb_train_float8_transfn);
PG_FUNCTION_INFO_V1(nb_merge);

/*
 * The state to update for this row: the existing one when we own it, else
 * a fresh expanded copy of the model that came in (a flat state, as after
 * a strict combine step copied a partial result).
 */
static NbExpandedModel *
state_for_update(FunctionCallInfo fcinfo, MemoryContext aggctx)
{
	NbExpandedModel *em;

	if (PG_ARGISNULL(0))
		return nb_expanded_create(aggctx, false);
	em = nb_expanded_owned(PG_GETARG_DATUM(0), aggctx);
	if (em != NULL)
		(void) nb_expanded_trainer(em);
	else
	{
		em = nb_expanded_create(aggctx, false);
		nb_expanded_add(em, PG_GETARG_DATUM(0));
	}
	return em;
}

/* What a training row does. */
typedef enum RowKind
{
	ROW_SKIPPED,				/* nothing: NULL features or weight, or weight 0 */
	ROW_NULL_LABEL,				/* a row that a label would train: counted (NbSettings) */
	ROW_LABELLED
} RowKind;

/* What a row does, and its weight (argument weight_arg; -1: none). */
static RowKind
row_kind(FunctionCallInfo fcinfo, int weight_arg, double *weight)
{
	*weight = 1.0;
	if (weight_arg >= 0)
	{
		if (PG_ARGISNULL(weight_arg))
			return ROW_SKIPPED;
		*weight = PG_GETARG_FLOAT8(weight_arg);
		if (isnan(*weight) || isinf(*weight) || *weight < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid training weight: %s",
							float8out_internal(*weight)),
					 errdetail("Weights must be finite and not negative.")));
	}
	if (PG_ARGISNULL(2) || *weight == 0)
		return ROW_SKIPPED;
	return PG_ARGISNULL(1) ? ROW_NULL_LABEL : ROW_LABELLED;
}

/* The state after a row skipped for its NULL label, which it counts. */
static Datum
count_null_label(NbExpandedModel *em)
{
	nb_trainer_count_null_labels(em->trainer, 1);
	/* the count grows no section (its 8 bytes are written once): only its range is checked */
	if (em->trainer->overflow)
		nb_expanded_check(em);
	return EOHPGetRWDatum(&em->hdr);
}

/* Start the row's document; a new class is allocated in the state's context. */
static void
begin_doc(NbExpandedModel *em, text *label, double weight)
{
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);

	nb_trainer_begin_doc(em->trainer, VARDATA_ANY(label),
						 VARSIZE_ANY_EXHDR(label), weight);
	MemoryContextSwitchTo(old);
}

/* Room for n token references, kept with the state (in its context) across rows. */
static NbTokenRef *
reserve_refs(NbExpandedModel *em, uint32 n)
{
	if (n > em->refs_cap)
	{
		if (em->refs != NULL)
			pfree(em->refs);
		em->refs_cap = Max(n, 2 * em->refs_cap);
		em->refs = MemoryContextAllocHuge(em->hdr.eoh_context,
										  sizeof(NbTokenRef) * (Size) em->refs_cap);
	}
	return em->refs;
}

static Datum
unchanged_state(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}

/* Report that feature name already exists with another type than type. */
static void
type_conflict(NbExpandedModel *em, const char *name, uint32 len, NbFeatureType type)
{
	NbFeatureType existing = type;

	(void) nb_trainer_feature(em->trainer, name, len, type, &existing);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("naive Bayes feature \"%s\" changes type", nb_cut_str(name, len)),
			 errdetail("It is %s in earlier rows and %s in this one.",
					   nb_feature_type(existing)->prose, nb_feature_type(type)->prose),
			 len == 0 ? errhint("The features of text[] and tsvector rows are the bag of tokens named \"\".") : 0));
}

/* What the text transition function keeps per call site (in fn_mcxt). */
typedef struct TextTrainSite
{
	Jsonb	   *options;		/* a copy of the last options, NULL for the defaults */
	NbTokenizer tokenizer;		/* theirs */
	NbTokenBatch batch;
	void	   *label_cast;		/* nb_label_arg's */
} TextTrainSite;

/* The tokenizer of these options (NULL: the defaults), parsed once per call site and options. */
static TextTrainSite *
text_site(FunctionCallInfo fcinfo, Jsonb *options)
{
	TextTrainSite *site = fcinfo->flinfo->fn_extra;
	MemoryContext old;

	if (site != NULL &&
		(site->options == NULL ? options == NULL :
		 options != NULL && VARSIZE(options) == VARSIZE(site->options) &&
		 memcmp(options, site->options, VARSIZE(options)) == 0))
		return site;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	if (site == NULL)
	{
		site = palloc0(sizeof(TextTrainSite));
		nb_token_batch_init(&site->batch);
		fcinfo->flinfo->fn_extra = site;
	}
	nb_tokenizer_from_jsonb(options, &site->tokenizer);
	site->options = NULL;
	if (options != NULL)
	{
		site->options = palloc(VARSIZE(options));
		memcpy(site->options, options, VARSIZE(options));
	}
	MemoryContextSwitchTo(old);
	return site;
}

/*
 * The state to update for a row of (state, label, features [, weight]) or,
 * with site, of text (state, label, body [, [weight,] tokenizer]), whose
 * tokenizer *site has; and its label (detoasted in the per-row context)
 * and weight.  NULL if the row is done with, *done then being the
 * transition function's result.
 */
static NbExpandedModel *
row_state(FunctionCallInfo fcinfo, TextTrainSite **site, text **label, double *weight,
		  Datum *done)
{
	/* (a direct call is refused) */
	MemoryContext aggctx = nb_aggregate_context(fcinfo, "nbc_train_transfn", "nb_train");
	void	  **label_cast = &fcinfo->flinfo->fn_extra;
	RowKind		kind;
	NbExpandedModel *em;

	nb_progress_row("nb_train", "read");
	if (site != NULL)
	{
		int			tokenizer_arg = PG_NARGS() > 3 ? PG_NARGS() - 1 : -1;

		*site = text_site(fcinfo, tokenizer_arg < 0 || PG_ARGISNULL(tokenizer_arg) ? NULL :
						  PG_GETARG_JSONB_P(tokenizer_arg));
		label_cast = &(*site)->label_cast;
	}
	kind = row_kind(fcinfo, PG_NARGS() > (site != NULL ? 4 : 3) ? 3 : -1, weight);
	if (kind == ROW_SKIPPED)
	{
		*done = unchanged_state(fcinfo);
		return NULL;
	}
	em = state_for_update(fcinfo, aggctx);
	/* (before a NULL label: a model of such rows alone is a model of text too) */
	if (site != NULL && !nb_trainer_set_tokenizer(em->trainer, &(*site)->tokenizer))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes training rows have different tokenizers"),
				 errdetail("A model keeps one tokenizer: every row of text must be tokenized with the same options, and a model of text cannot take rows of other types.")));
	if (kind == ROW_NULL_LABEL)
	{
		*done = count_null_label(em);
		return NULL;
	}
	*label = nb_label_arg(fcinfo, 1, label_cast);
	return em;
}

/* Tokens of the bag "" added to the state, in its memory context. */
static void
train_text_batch(void *arg, const NbTokenRef *tokens, uint32 n)
{
	NbExpandedModel *em = arg;
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);

	if (!nb_trainer_add_text(em->trainer, tokens, n))
		type_conflict(em, "", 0, NB_FEATURE_BAG);
	MemoryContextSwitchTo(old);
}

/*
 * Tokens of a text[] or tsvector row added to the trainer at a time: the
 * row's scratch memory (references, hashes, ids) stays this small however
 * long the row is.
 */
#define NB_TRAIN_BATCH 65536

/* One training row of text[] or tsvector, NB_TRAIN_BATCH tokens at a time. */
static Datum
train_row(FunctionCallInfo fcinfo, bool tsvector_features)
{
	NbExpandedModel *em;
	double		weight;
	text	   *label;
	Datum		result;
	ArrayType  *array = NULL;
	TSVector	tsv = NULL;
	NbArrayTokens it;
	NbTokenRef *refs;
	uint32		done = 0;
	uint32		n;

	em = row_state(fcinfo, NULL, &label, &weight, &result);
	if (em == NULL)
		return result;
	/* detoast the inputs in the per-row context, not the state's */
	if (tsvector_features)
		tsv = PG_GETARG_TSVECTOR(2);
	else
	{
		array = PG_GETARG_ARRAYTYPE_P(2);
		nb_check_feature_array(array);
		nb_array_tokens_begin(&it, array);
	}
	refs = reserve_refs(em, Min(tsvector_features ? (uint32) tsv->size : it.n, NB_TRAIN_BATCH));
	begin_doc(em, label, weight);
	/* once even with no tokens: the bag "" is present in the document */
	do
	{
		if (tsvector_features)
		{
			n = Min((uint32) tsv->size - done, NB_TRAIN_BATCH);
			nb_tsvector_range(tsv, done, n, refs);
			done += n;
		}
		else
			n = nb_array_tokens_next(&it, refs, NB_TRAIN_BATCH);
		train_text_batch(em, refs, n);
	} while (tsvector_features ? done < (uint32) tsv->size : !nb_array_tokens_done(&it));
	nb_expanded_check(em);
	PG_RETURN_DATUM(EOHPGetRWDatum(&em->hdr));
}

/*
 * One training row of text: (state, label, body [, [weight,] tokenizer]).
 * The body is tokenized with the tokenizer options (NULL: the defaults),
 * which the model keeps; its tokens are the bag "", as a text[] row's.
 */
PG_FUNCTION_INFO_V1(nb_train_text_transfn);
Datum
nb_train_text_transfn(PG_FUNCTION_ARGS)
{
	TextTrainSite *site;
	NbExpandedModel *em;
	double		weight;
	text	   *label;
	text	   *body;
	Datum		result;

	em = row_state(fcinfo, &site, &label, &weight, &result);
	if (em == NULL)
		return result;
	body = PG_GETARG_TEXT_PP(2);
	begin_doc(em, label, weight);
	nb_token_batch_begin(&site->batch, train_text_batch, em);
	nb_text_tokenize(&site->tokenizer, body, nb_token_batch_add, &site->batch, &site->batch.text_buffers);
	nb_token_batch_end(&site->batch);
	nb_expanded_check(em);
	PG_RETURN_DATUM(EOHPGetRWDatum(&em->hdr));
}

/* Callbacks of nb_jsonb_features that add a row's values to the state. */
static NbTokenRef *
train_reserve(void *arg, uint32 n)
{
	return reserve_refs((NbExpandedModel *) arg, n);
}

/* The feature for a key, created if new (the caller is in the state's context). */
static uint32
train_feature(NbExpandedModel *em, const char *key, uint32 key_len, NbFeatureType type)
{
	NbFeatureType existing;
	int64		j = nb_trainer_feature(em->trainer, key, key_len, type, &existing);

	if (j < 0)
		type_conflict(em, key, key_len, type);
	return (uint32) j;
}

static void
train_bag(void *arg, const char *key, uint32 key_len, const NbTokenRef *tokens, uint32 n)
{
	NbExpandedModel *em = arg;
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);

	nb_trainer_add_tokens(em->trainer, train_feature(em, key, key_len, NB_FEATURE_BAG),
						  tokens, n);
	/* the bag "" of jsonb rows: the model is a model of jsonb rows too (NbSettings) */
	if (key_len == 0)
		em->trainer->settings.jsonb_bag = true;
	MemoryContextSwitchTo(old);
}

static void
train_category(void *arg, const char *key, uint32 key_len, const char *value, uint32 len)
{
	NbExpandedModel *em = arg;
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);

	nb_trainer_add_category(em->trainer,
							train_feature(em, key, key_len, NB_FEATURE_CATEGORICAL),
							value, len);
	MemoryContextSwitchTo(old);
}

static void
train_real(void *arg, const char *key, uint32 key_len, double x)
{
	NbExpandedModel *em = arg;
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);

	nb_trainer_add_real(em->trainer, train_feature(em, key, key_len, NB_FEATURE_GAUSSIAN), x);
	MemoryContextSwitchTo(old);
}

static void
train_boolean(void *arg, const char *key, uint32 key_len, bool x)
{
	NbExpandedModel *em = arg;
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);

	nb_trainer_add_boolean(em->trainer, train_feature(em, key, key_len, NB_FEATURE_BOOLEAN), x);
	MemoryContextSwitchTo(old);
}

/* One training row with jsonb features: every key adds to its own feature. */
Datum
nb_train_jsonb_transfn(PG_FUNCTION_ARGS)
{
	NbExpandedModel *em;
	double		weight;
	text	   *label;
	Datum		result;
	NbJsonbVisitor visitor = {NULL, train_reserve, train_bag, train_category,
		train_real, train_boolean};

	em = row_state(fcinfo, NULL, &label, &weight, &result);
	if (em == NULL)
		return result;
	visitor.arg = em;
	begin_doc(em, label, weight);
	nb_jsonb_features(PG_GETARG_JSONB_P(2), &visitor);
	nb_expanded_check(em);
	PG_RETURN_DATUM(EOHPGetRWDatum(&em->hdr));
}

/* One training row with float8[] features: Gaussian features "1".."n". */
Datum
nb_train_float8_transfn(PG_FUNCTION_ARGS)
{
	NbExpandedModel *em;
	double		weight;
	text	   *label;
	Datum		result;
	double	   *values;
	bool	   *nulls;
	int			n;
	uint32		bad;
	const uint32 *ids;
	MemoryContext old;

	em = row_state(fcinfo, NULL, &label, &weight, &result);
	if (em == NULL)
		return result;
	nb_float8_features(PG_GETARG_ARRAYTYPE_P(2), &values, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes float8[] features must not be empty")));

	old = MemoryContextSwitchTo(em->hdr.eoh_context);
	ids = nb_trainer_vector(em->trainer, (uint32) n, &bad);
	MemoryContextSwitchTo(old);
	if (ids == NULL && bad == UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("naive Bayes float8[] features must have the same number of elements in every row"),
				 errdetail("This row has %d elements; earlier rows had %u.",
						   n, em->trainer->vector_len),
				 errhint("Use NULL for a missing value.")));
	if (ids == NULL)
	{
		char		name[NB_POSITION_NAME_SIZE];

		type_conflict(em, name, nb_position_name(bad, name), NB_FEATURE_GAUSSIAN);
	}

	begin_doc(em, label, weight);
	for (int i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		if (!nulls[i])
			nb_trainer_add_real(em->trainer, ids[i], values[i]);
	}
	nb_expanded_check(em);
	pfree(values);
	pfree(nulls);
	PG_RETURN_DATUM(EOHPGetRWDatum(&em->hdr));
}

Datum
nb_train_array_transfn(PG_FUNCTION_ARGS)
{
	return train_row(fcinfo, false);
}

Datum
nb_train_tsvector_transfn(PG_FUNCTION_ARGS)
{
	return train_row(fcinfo, true);
}

/*
 * nb_merge(a, b): the model of the union of the rows of a and b.  NULL is
 * the empty model.  Inside an aggregate (as the combine function, or as the
 * transition function of nb_merge(nb_model)) the state collects its inputs
 * and merges them when it is flattened (see pg_model.h); elsewhere a new
 * flat model is returned.  Neither input is ever changed or returned as the
 * state itself.
 */
Datum
nb_merge(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx;
	NbExpandedModel *em;
	Datum		both[2];
	int			n = 0;

	if (PG_ARGISNULL(1))
		return unchanged_state(fcinfo);

	if (AggCheckCallContext(fcinfo, &aggctx))
	{
		em = PG_ARGISNULL(0) ? NULL : nb_expanded_owned(PG_GETARG_DATUM(0), aggctx);
		if (em == NULL)
		{
			em = nb_expanded_create(aggctx, true);
			if (!PG_ARGISNULL(0))
				nb_expanded_add(em, PG_GETARG_DATUM(0));
		}
		nb_expanded_add(em, PG_GETARG_DATUM(1));
		PG_RETURN_DATUM(EOHPGetRWDatum(&em->hdr));
	}

	if (!PG_ARGISNULL(0))
		both[n++] = PG_GETARG_DATUM(0);
	both[n++] = PG_GETARG_DATUM(1);
	PG_RETURN_POINTER(nb_model_merge(both, n));
}

/*
 * A model whose average class has fewer than two documents, from at least
 * NB_SWAP_MIN_CLASSES classes, is reported: a class seen once teaches naive
 * Bayes next to nothing, and the usual cause is a label column holding the
 * documents (nb_train(body, label) for nb_train(label, body)).  Legitimate
 * many-class data (language identification over a hundred languages) has
 * tens of documents per class; a handful of rows of as many classes, as in
 * an example, are too few to tell.
 */
#define NB_SWAP_MIN_CLASSES 20

/*
 * nb_train's final function: the state unchanged, after a WARNING when
 * the classes of a single model are almost as many as its documents; NULL
 * for a model of no class (rows that all had a NULL label), as SQL's
 * aggregates give NULL over NULLs.  Partial states (parallel workers,
 * Citus's shards) carry the count of such rows without a final function,
 * and a live model's trigger makes its own model of it (nbc_live_delta).
 */
PG_FUNCTION_INFO_V1(nbc_train_final);
Datum
nbc_train_final(PG_FUNCTION_ARGS)
{
	static TimestampTz warned = 0;
	uint32		classes;
	double		documents;

	nb_model_class_totals(PG_GETARG_DATUM(0), &classes, &documents);
	if (classes == 0)
		PG_RETURN_NULL();
	if (!nb_aggregate_single_group(fcinfo))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (classes >= NB_SWAP_MIN_CLASSES && classes > documents / 2 &&
		nb_first_in_statement(&warned))
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("naive Bayes model has %u classes from %s documents",
						classes, float8out_internal(documents)),
				 errdetail("A class has fewer than two documents on average, too few for naive Bayes to learn from."),
				 errhint("Check the order of the arguments: nb_train(label, features).")));
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}

bool
nb_is_train_transfn(Oid fn)
{
	static const PGFunction transfns[] = {nb_train_array_transfn, nb_train_tsvector_transfn,
		nb_train_jsonb_transfn, nb_train_float8_transfn, nb_train_text_transfn};
	FmgrInfo	finfo;

	/* recognized by the C function it runs, which nobody else can bind to */
	fmgr_info(fn, &finfo);
	for (int i = 0; i < lengthof(transfns); i++)
		if (finfo.fn_addr == transfns[i])
			return true;
	return false;
}
