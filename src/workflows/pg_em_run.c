/*
 * pg_em_run.c — nb_train_em's iterations (nbc_em_iterate, src/README.md,
 * EM), after nbc_em_run (PL/pgSQL) has checked the arguments and trained
 * the model of the labelled rows.  The current model stays in this
 * function's memory: a model spread over by the unlabelled rows is large
 * (110 MB as text for 98 classes of 20,000 short documents), and passing
 * it between statements copied it several times per iteration and filled
 * the backend's cache of models.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "nb_em.h"
#include "nb_exact.h"
#include "pg_features.h"
#include "pg_model.h"
#include "pg_options.h"
#include "pg_predict.h"
#include "pg_prepared.h"
#include "pg_progress.h"
#include "pg_tokenize.h"

/* Rows fetched from the cursor at a time. */
#define EM_BATCH_ROWS 1000

typedef struct EmRun
{
	SPIPlanPtr	plan;			/* SELECT label, features FROM rel */
	Datum		tokenizer_arg;	/* its parameter for rows of text */
	char		tokenizer_null;
	bool		tsvector_features;
	bool		with_tokenizer; /* rows of text: the models keep the tokenizer */
	Jsonb	   *tokenizer;
	TimestampTz reported;		/* the last progress NOTICE, or the start */
	Jsonb	   *options;		/* the model's options, NULL: none */
	double		lambda;
	uint32		components;		/* per class (EM-CM); 1: one multinomial per class */
	MemoryContext batch_ctx;	/* a batch of rows, detoasted */
	NbTokenRef *refs;			/* a row's tokens */
	uint32		refs_cap;
} EmRun;

typedef struct EmState
{
	NbExpandedModel *em;		/* the model being trained */
	double		lambda;
	double		log_prior;		/* of the current model */
	NbExactSum	labelled;		/* log p(x, y) of the labelled rows */
	NbExactSum	unlabelled;		/* log p(x) of the unlabelled rows */
	uint32		n_classes;		/* the current model's, or its slots (components) */
	int64	   *trainer_class;	/* per class or slot, its id in em's trainer, or -1 */
	double	   *weight;			/* an unlabelled row's weights, by id in em's trainer */
	/*
	 * EM-CM (components > 1, src/README.md, EM): the first pass (init) puts
	 * the i-th labelled row of label k in slot k * components + i mod
	 * components; later passes' slots are the current model's components.
	 */
	uint32		components;
	bool		init;
	uint64	   *seen;			/* init: labelled rows of each label so far */
} EmState;

static const char *const em_status_message[] = {
	[NB_EM_KIND] = "nb_train_em supports the kinds multinomial and bernoulli only",
	[NB_EM_NOT_SMOOTHED] = "nb_train_em needs positive pseudo-counts",
	[NB_EM_NOT_BAGS] = "nb_train_em supports bags of tokens only",
};

/*
 * An iteration scoring with pm's scorer for run's options, in ctx: checks
 * that EM is defined for them and that lambda is in [0, 1] (ERROR 22023
 * otherwise), and starts the next model, which keeps run's tokenizer if
 * with_tokenizer; init: the first pass of EM-CM (EmState).
 */
static EmState *
em_begin(const EmRun *run, NbPrepared *pm, NbScorer *scorer, bool init, MemoryContext ctx)
{
	EmState    *st;
	NbEmStatus	status;
	NbOptions	opts;
	NbPseudoCounts pc;
	MemoryContext old;

	/* the pseudo-counts, of the options the scorer applies */
	nb_parse_options(nb_prepared_options(pm, run->options), &pm->index, &opts);
	pc = nb_options_pseudo(&opts);
	status = nb_em_check(scorer, &pc);
	if (status != NB_EM_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s", em_status_message[status]),
				 status == NB_EM_NOT_SMOOTHED ?
				 errdetail("With a pseudo-count of 0 a token can have probability 0 in a class, and the log likelihood EM increases is not finite.") : 0));
	if (!(run->lambda >= 0 && run->lambda <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_train_em lambda must be between 0 and 1, not %s",
						float8out_internal(run->lambda))));

	st = MemoryContextAllocZero(ctx, sizeof(EmState));
	st->em = nb_expanded_create(ctx, false);
	st->lambda = run->lambda;
	st->log_prior = nb_em_log_prior(scorer, &pc, opts.prior_mode == NB_PRIOR_FIT ? pc.class_alpha : 0);
	nb_exact_init(&st->labelled);
	nb_exact_init(&st->unlabelled);
	st->n_classes = pm->index.n_classes;
	if (run->components > 1)
	{
		st->components = run->components;
		st->init = init;
		if (init)
		{
			if ((uint64) pm->index.n_labels * run->components > PG_UINT32_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("nb_train_em cannot make %u components for each of %u classes",
								run->components, pm->index.n_labels)));
			st->n_classes = pm->index.n_labels * run->components;
			st->seen = MemoryContextAllocZero(ctx, sizeof(uint64) * pm->index.n_labels);
		}
		nb_trainer_set_components(nb_expanded_trainer(st->em));
	}
	st->trainer_class = MemoryContextAlloc(ctx, sizeof(int64) * st->n_classes);
	for (uint32 c = 0; c < st->n_classes; c++)
		st->trainer_class[c] = -1;
	st->weight = MemoryContextAllocZero(ctx, sizeof(double) * st->n_classes);
	/* the new model's classes are the current one's: dense counts (nb_trainer.h) */
	old = MemoryContextSwitchTo(st->em->hdr.eoh_context);
	if (!nb_trainer_spread_init(nb_expanded_trainer(st->em), st->n_classes))
		elog(ERROR, "a new trainer refused dense counts");
	MemoryContextSwitchTo(old);
	if (run->with_tokenizer)
	{
		NbTokenizer tok;
		bool		set;

		nb_tokenizer_from_jsonb(run->tokenizer, &tok);
		old = MemoryContextSwitchTo(st->em->hdr.eoh_context);
		set = nb_trainer_set_tokenizer(nb_expanded_trainer(st->em), &tok);
		MemoryContextSwitchTo(old);
		if (!set)
			elog(ERROR, "a new trainer refused a tokenizer");
	}
	return st;
}

/*
 * Add an unlabelled row's tokens to the new model (in its context), in
 * every class c with weight lambda p(c | x), the posteriors exp(log_post)
 * (a class whose posterior underflows to 0 adds nothing).  The new
 * model's classes are those of the current one, in the order they came in:
 * the weights go by their ids there.
 */
static void
train_unlabelled(EmState *st, const NbIndex *ix, const double *log_post,
				 const NbTokenRef *refs, uint32 n)
{
	NbTrainer  *t = nb_expanded_trainer(st->em);

	memset(st->weight, 0, sizeof(double) * st->n_classes);
	for (uint32 c = 0; c < st->n_classes; c++)
	{
		double		w = st->lambda * exp(log_post[c]);

		if (!(w > 0))
			continue;
		if (st->trainer_class[c] < 0)
		{
			uint32		len;
			const char *label = nb_vocab_str(&ix->labels, c, &len);

			st->trainer_class[c] = nb_trainer_class(t, label, len);
		}
		st->weight[st->trainer_class[c]] = w;
	}
	if (!nb_trainer_add_text_spread(t, refs, n, st->weight))
		elog(ERROR, "the next model refused an unlabelled row");
}

/* The next model's id of slot i, component j of label k of the current model. */
static uint32
component_id(EmState *st, const NbIndex *ix, uint32 i, uint32 k, uint32 j)
{
	if (st->trainer_class[i] < 0)
	{
		uint32		len;
		const char *label = nb_vocab_str(&ix->labels, k, &len);
		char	   *key = palloc(len + NB_COMPONENT_KEY_BYTES);

		nb_trainer_component_key(label, len, j, key);
		st->trainer_class[i] = nb_trainer_class(nb_expanded_trainer(st->em), key,
												 len + NB_COMPONENT_KEY_BYTES);
		pfree(key);
	}
	return (uint32) st->trainer_class[i];
}

/* The first component of label k: k itself in a model without components. */
static uint32
first_component(const NbIndex *ix, uint32 k)
{
	return ix->label_first == NULL ? k : ix->label_first[k];
}

/*
 * EM-CM: a row's weights on the next model's components, into st->weight.
 * In the first pass a labelled row (label k >= 0) goes to one component
 * (EmState); later, to its label's components by their posteriors given
 * the label, an unlabelled row (k -1) to every component with lambda
 * times its posterior.  False if no weight is positive.
 */
static bool
component_weights(EmState *st, const NbIndex *ix, const double *log_post, int64 k)
{
	uint32		lo = k < 0 ? 0 : first_component(ix, (uint32) k);
	uint32		hi = k < 0 ? ix->n_classes : first_component(ix, (uint32) k + 1);
	double		top = -INFINITY;
	double		sum = 0;
	bool		any = false;

	memset(st->weight, 0, sizeof(double) * st->n_classes);
	if (st->init)
	{
		uint32		j = (uint32) (st->seen[k]++ % st->components);

		st->weight[component_id(st, ix, (uint32) k * st->components + j, (uint32) k, j)] = 1;
		return true;
	}
	/* given label k, each component's posterior relative to the label's */
	for (uint32 c = lo; k >= 0 && c < hi; c++)
		top = fmax(top, log_post[c]);
	for (uint32 c = lo; k >= 0 && c < hi && top != -INFINITY; c++)
		sum += exp(log_post[c] - top);
	for (uint32 c = lo; c < hi; c++)
	{
		uint32		label = nb_index_label(ix, c);
		double		w = k < 0 ? st->lambda * exp(log_post[c]) : exp(log_post[c] - top - log(sum));

		if (!(w > 0))
			continue;
		st->weight[component_id(st, ix, c, label, c - first_component(ix, label))] = w;
		any = true;
	}
	return any;
}

/*
 * Score a row's tokens with the current model and add them to the next: a
 * labelled row (label not NULL) to its class, an unlabelled one to every
 * class by its posterior; with components, as component_weights says.
 */
static void
em_add_row(EmState *st, NbPrepared *pm, NbScorer *scorer, const text *label,
		   const NbTokenRef *refs, uint32 n)
{
	double		shared;
	int64		best;
	int64		c;
	MemoryContext old;

	nb_prepared_begin_row(pm);
	old = MemoryContextSwitchTo(pm->doc_ctx);
	nb_scorer_add_tokens(scorer, &pm->doc, (uint32) pm->index.unnamed_bag, refs, n);
	MemoryContextSwitchTo(old);
	shared = nb_em_shared(scorer, &pm->doc);
	best = nb_score_doc(pm, scorer);
	if (best < 0)
		elog(ERROR, "every class is excluded by the class prior");

	/* the first model is trained on every labelled row, and so is each next one */
	c = label == NULL ? -1 : nb_index_class(&pm->index, VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label));
	if (label != NULL && c < 0)
		elog(ERROR, "an EM iteration's labelled row is not a class of the model");
	old = MemoryContextSwitchTo(st->em->hdr.eoh_context);
	if (c >= 0)
		nb_exact_add(&st->labelled, nb_em_log_joint(scorer, (uint32) c, shared));
	else
		nb_exact_add(&st->unlabelled, nb_em_log_marginal(scorer, shared));
	if (st->components > 1)
	{
		/* (the first pass leaves the unlabelled rows out) */
		if ((c >= 0 || !st->init) && component_weights(st, &pm->index, pm->log_post, c) &&
			!nb_trainer_add_text_spread(nb_expanded_trainer(st->em), refs, n, st->weight))
			elog(ERROR, "the next model refused a row");
	}
	else if (c >= 0)
	{
		NbTrainer  *t = nb_expanded_trainer(st->em);

		/* in its class with weight 1 */
		nb_trainer_begin_doc(t, VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label), 1.0);
		if (!nb_trainer_add_text(t, refs, n))
			elog(ERROR, "a model of text[] rows has a feature \"\" of another type");
	}
	else
		train_unlabelled(st, &pm->index, pm->log_post, refs, n);
	MemoryContextSwitchTo(old);
	nb_expanded_check(st->em);
}

/* Room for n token references. */
static NbTokenRef *
row_refs(EmRun *run, uint32 n)
{
	if (n > run->refs_cap)
	{
		run->refs_cap = Max(n, 2 * run->refs_cap);
		run->refs = repalloc_huge(run->refs, sizeof(NbTokenRef) * (Size) run->refs_cap);
	}
	return run->refs;
}

/*
 * Add one row of the cursor to the iteration: its features' tokens, a
 * text[] (checked as training checks it) or a tsvector, pointing into the
 * detoasted value.  A row without features adds nothing, nor does an
 * unlabelled one with lambda 0.
 */
static void
add_row(EmRun *run, EmState *st, NbPrepared *pm, NbScorer *scorer, HeapTuple tuple,
		TupleDesc desc)
{
	bool		label_null;
	bool		features_null;
	Datum		label = SPI_getbinval(tuple, desc, 1, &label_null);
	Datum		features = SPI_getbinval(tuple, desc, 2, &features_null);
	NbTokenRef *refs;
	uint32		n;

	if (features_null || (label_null && st->lambda == 0))
		return;
	if (run->tsvector_features)
	{
		TSVector	tsv = DatumGetTSVector(features);

		refs = row_refs(run, tsv->size);
		n = nb_tsvector_tokens(tsv, refs);
	}
	else
	{
		ArrayType  *array = DatumGetArrayTypeP(features);

		nb_check_feature_array(array);
		refs = row_refs(run, nb_array_size(array));
		n = nb_array_tokens(array, refs);
	}
	em_add_row(st, pm, scorer, label_null ? NULL : DatumGetTextPP(label), refs, n);
}

/*
 * One pass over the rows with the prepared current model: the iteration's
 * state, in ctx, holding the next model and the current one's log
 * likelihood.
 */
static EmState *
run_pass(EmRun *run, NbPrepared *pm, bool init, MemoryContext ctx)
{
	MemoryContext old = MemoryContextSwitchTo(ctx);
	NbScorer   *scorer = nb_prepared_scorer(pm, run->options);
	EmState    *st;
	Portal		portal;

	/* the posteriors of a model of components are theirs (nb_scorer.h) */
	scorer->by_component = true;
	st = em_begin(run, pm, scorer, init, ctx);
	portal = SPI_cursor_open(NULL, run->plan, &run->tokenizer_arg, &run->tokenizer_null, true);

	for (;;)
	{
		/* (SPI's calls return in SPI's own context) */
		SPI_cursor_fetch(portal, true, EM_BATCH_ROWS);
		if (SPI_processed == 0)
			break;
		MemoryContextSwitchTo(run->batch_ctx);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			CHECK_FOR_INTERRUPTS();
			add_row(run, st, pm, scorer, SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
		}
		MemoryContextReset(run->batch_ctx);
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	MemoryContextSwitchTo(old);
	return st;
}

/*
 * The next model of an iteration, flat, with the model's options, in ctx
 * (scratch: the state's context).  *trusted is whether *view describes it:
 * a model without stored options as the trainer wrote it, which need not
 * be validated again (the trainer's view of stored options would point
 * into the trainer, freed before the model is prepared).
 */
static struct varlena *
write_model(EmRun *run, EmState *st, MemoryContext ctx, MemoryContext scratch, NbView *view,
			bool *trusted)
{
	NbExpandedModel *em = st->em;
	struct varlena *flat;
	MemoryContext old;

	if (nb_trainer_is_empty(nb_expanded_trainer(em)))
		elog(ERROR, "an EM iteration trained no row");
	flat = nb_expanded_write(em, run->options == NULL ? ctx : scratch, view);
	*trusted = run->options == NULL && view->settings.options_len == 0;
	if (run->options == NULL)
		return flat;
	old = MemoryContextSwitchTo(ctx);
	flat = nb_model_with_options(PointerGetDatum(flat), run->options);
	MemoryContextSwitchTo(old);
	return flat;
}

/*
 * A model's bytes, flat, prepared for scoring in ctx: described by view if
 * trusted (as the trainer wrote them), else validated first.
 */
static NbPrepared *
prepare(const struct varlena *flat, NbView *view, bool trusted, MemoryContext ctx)
{
	if (!trusted)
		nb_model_validate_bytes(VARDATA(flat), VARSIZE(flat) - VARHDRSZ, view,
								ERRCODE_DATA_CORRUPTED, false);
	return nb_prepared_build(view, ctx);
}

/*
 * An error raised by an iteration, raised again with a sentence saying so
 * after its detail, as nbc_em_run says what it was doing.
 */
static void
rethrow_with_detail(MemoryContext ctx, const char *doing)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(ctx);
	edata = CopyErrorData();
	FlushErrorState();
	edata->detail = edata->detail != NULL && edata->detail[0] != '\0' ?
		psprintf("%s %s", edata->detail, doing) : pstrdup(doing);
	ReThrowError(edata);
}

/* A NOTICE of iteration k when one is due, the log likelihood as round(x::numeric, 3). */
static void
report_progress(EmRun *run, int k, double log_likelihood, TimestampTz started)
{
	Datum		rounded;

	if (!nb_progress_due(&run->reported))
		return;
	rounded = DirectFunctionCall2(numeric_round,
								  DirectFunctionCall1(float8_numeric, Float8GetDatum(log_likelihood)),
								  Int32GetDatum(3));
	ereport(NOTICE,
			(errmsg("nb_train_em: iteration %d, log likelihood %s", k,
					DatumGetCString(DirectFunctionCall1(numeric_out, rounded))),
			 errdetail("Elapsed: %.1f s.", nb_progress_elapsed(started))));
}

/* SELECT label::text, features FROM rel, as nbc_em_run's step read them. */
static SPIPlanPtr
rows_plan(FunctionCallInfo fcinfo, Oid rel, text *label_column, text *features_column,
		  Oid features_type)
{
	char	   *ext = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
	const char *features = quote_identifier(text_to_cstring(features_column));
	char	   *sql;
	Oid			argtype = JSONBOID;
	SPIPlanPtr	plan;

	sql = psprintf("SELECT %s::text, %s FROM %s",
				   quote_identifier(text_to_cstring(label_column)),
				   features_type == TEXTOID ?
				   psprintf("%s.nb_tokens(%s::text, $1)", quote_identifier(ext), features) :
				   psprintf("%s::%s", features, format_type_be(features_type)),
				   DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(rel))));
	plan = SPI_prepare(sql, features_type == TEXTOID ? 1 : 0, &argtype);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	return plan;
}

/* Arguments a direct call could get wrong; nbc_em_run passes them right. */
static void
check_arguments(FunctionCallInfo fcinfo)
{
	Oid			features_type;

	/* an older declaration (0.16.0's has 14 arguments) until the extension is updated */
	if (PG_NARGS() != 15)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the functions of extension nbc are those of an older version"),
				 errhint("Run ALTER EXTENSION nbc UPDATE.")));
	for (int i = 0; i < PG_NARGS(); i++)
		if (PG_ARGISNULL(i) && i != 6 && i != 7)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("nbc_em_iterate arguments but options and tokenizer must not be null")));
	features_type = PG_GETARG_OID(4);
	if (features_type != TEXTOID && features_type != TEXTARRAYOID && features_type != TSVECTOROID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nbc_em_iterate features type must be text, text[] or tsvector, not %s",
						format_type_be(features_type))));
	if (PG_GETARG_INT32(11) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nbc_em_iterate components must be at least 1")));
}

/* The run of nbc_em_iterate's arguments, its memory in caller. */
static void
start_run(FunctionCallInfo fcinfo, EmRun *run, MemoryContext caller)
{
	Oid			features_type = PG_GETARG_OID(4);

	run->reported = PG_GETARG_TIMESTAMPTZ(14);
	run->lambda = PG_GETARG_FLOAT8(5);
	run->components = (uint32) PG_GETARG_INT32(11);
	run->options = PG_ARGISNULL(6) ? NULL : PG_GETARG_JSONB_P_COPY(6);
	run->tokenizer = PG_ARGISNULL(7) ? NULL : PG_GETARG_JSONB_P_COPY(7);
	run->tsvector_features = features_type == TSVECTOROID;
	run->with_tokenizer = features_type == TEXTOID;
	run->tokenizer_arg = PointerGetDatum(run->tokenizer);
	run->tokenizer_null = run->tokenizer == NULL ? 'n' : ' ';
	run->batch_ctx = AllocSetContextCreate(caller, "nb_train_em rows", ALLOCSET_DEFAULT_SIZES);
	run->refs_cap = 64;
	run->refs = MemoryContextAlloc(caller, sizeof(NbTokenRef) * run->refs_cap);
}

/*
 * nbc_em_iterate(model, rel, label_column, features_column, features_type,
 * lambda, options, tokenizer, iterations, tolerance, unlabelled,
 * components, trace, models, started): EM from model, the model of the
 * labelled rows.  Iteration k scores every row with model k, whose log
 * likelihood it gives, and trains model k + 1.  Rows (iteration, log
 * likelihood, model) of each iteration if trace, else of the last only, the
 * model NULL unless models (nb_train_em_history: no model is copied into
 * the tuplestore).  It stops after iterations iterations, with nothing
 * unlabelled to learn from or lambda 0 after the first (one component per
 * class), or when the log likelihood rose by at most tolerance times its
 * size (from the third on, the fourth with components: the models before
 * have the labelled rows' vocabulary only, so their log likelihoods are
 * not comparable).
 */
PG_FUNCTION_INFO_V1(nb_em_iterate);
Datum
nb_em_iterate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			rel;
	int32		max_iterations;
	double		tolerance;
	bool		anything_unlabelled;
	bool		trace;
	bool		models;
	TimestampTz started;
	char	   *rel_name;
	bool		report = nb_progress_on();
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext model_ctx[2];
	MemoryContext prepared_ctx;
	MemoryContext step_ctx;
	EmRun		run = {0};
	struct varlena *model;
	NbPrepared *pm = NULL;
	NbView		view;
	bool		trusted = false;	/* view describes model */
	double		previous = 0;
	double		log_likelihood = 0;
	int			k = 0;

	check_arguments(fcinfo);
	rel = PG_GETARG_OID(1);
	max_iterations = PG_GETARG_INT32(8);
	tolerance = PG_GETARG_FLOAT8(9);
	anything_unlabelled = PG_GETARG_INT64(10) > 0;
	trace = PG_GETARG_BOOL(12);
	models = PG_GETARG_BOOL(13);
	started = PG_GETARG_TIMESTAMPTZ(14);
	rel_name = DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(rel)));
	InitMaterializedSRF(fcinfo, 0);
	start_run(fcinfo, &run, caller);
	/* the current model's bytes and the next one's, its prepared form, the step */
	model_ctx[0] = AllocSetContextCreate(caller, "nb_train_em model", ALLOCSET_DEFAULT_SIZES);
	model_ctx[1] = AllocSetContextCreate(caller, "nb_train_em model", ALLOCSET_DEFAULT_SIZES);
	prepared_ctx = AllocSetContextCreate(caller, "nb_train_em prepared", ALLOCSET_DEFAULT_SIZES);
	step_ctx = AllocSetContextCreate(caller, "nb_train_em step", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(model_ctx[0]);
	model = (struct varlena *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0));
	MemoryContextSwitchTo(caller);

	SPI_connect();
	run.plan = rows_plan(fcinfo, rel, PG_GETARG_TEXT_PP(2), PG_GETARG_TEXT_PP(3), PG_GETARG_OID(4));
	MemoryContextSwitchTo(caller);
	for (;;)
	{
		char	   *doing = psprintf("EM on \"%s\" was in iteration %d.", rel_name, k + 1);
		struct varlena *volatile next = NULL;
		bool		last;

		PG_TRY();
		{
			EmState    *st;

			if (pm == NULL)
				pm = prepare(model, &view, trusted, prepared_ctx);
			st = run_pass(&run, pm, run.components > 1 && k == 0, step_ctx);
			log_likelihood = nb_exact_value(&st->labelled) +
				st->lambda * nb_exact_value(&st->unlabelled) + st->log_prior;
			last = (run.components == 1 && (!anything_unlabelled || run.lambda == 0)) ||
				k >= max_iterations ||
				(k >= (run.components > 1 ? 3 : 2) && float8_le(float8_mi(log_likelihood, previous),
									 float8_mul(tolerance, fabs(previous))));
			if (!last)
			{
				MemoryContextReset(prepared_ctx);
				pm = NULL;
				next = write_model(&run, st, model_ctx[(k + 1) % 2], step_ctx, &view, &trusted);
			}
		}
		PG_CATCH();
		{
			rethrow_with_detail(caller, doing);
		}
		PG_END_TRY();
		MemoryContextSwitchTo(caller);

		if (report)
			report_progress(&run, k, log_likelihood, started);
		if (trace || last)
		{
			Datum		values[3] = {Int32GetDatum(k), Float8GetDatum(log_likelihood),
			PointerGetDatum(model)};
			bool		nulls[3] = {false, false, !models};

			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		if (last)
			break;
		previous = log_likelihood;
		MemoryContextReset(model_ctx[k % 2]);
		model = next;
		MemoryContextReset(step_ctx);
		pfree(doing);
		k++;
	}
	SPI_finish();
	return (Datum) 0;
}
