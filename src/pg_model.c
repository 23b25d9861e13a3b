/*
 * pg_model.c — expanded-object methods and datum access for nb_model.
 */
#include "pg_model.h"

#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "pg_label.h"
#include "pg_options.h"

/* nb_format.h derives the model size limit from these (pure code cannot include them) */
StaticAssertDecl(NB_ALLOC_LIMIT == MaxAllocSize, "NB_ALLOC_LIMIT is not MaxAllocSize");
StaticAssertDecl(NB_TEXT_OVERHEAD == VARHDRSZ + 1, "NB_TEXT_OVERHEAD is not a varlena header and a NUL");

static Size nb_expanded_flat_size(ExpandedObjectHeader *eohptr);
static void nb_expanded_flatten(ExpandedObjectHeader *eohptr, void *result, Size size);

static const ExpandedObjectMethods nb_expanded_methods = {
	nb_expanded_flat_size,
	nb_expanded_flatten
};

/* A trainer in the current context that refuses merges past the size limit. */
static NbTrainer *
new_trainer(void)
{
	NbTrainer  *t = nb_trainer_create();

	t->size_limit = NB_MODEL_MAX_SIZE;
	return t;
}

NbExpandedModel *
nb_expanded_create(MemoryContext parent, bool merging)
{
	MemoryContext ctx = AllocSetContextCreate(parent, "nb_model",
											  ALLOCSET_DEFAULT_SIZES);
	NbExpandedModel *em = MemoryContextAllocZero(ctx, sizeof(NbExpandedModel));
	MemoryContext old;

	EOH_init_header(&em->hdr, &nb_expanded_methods, ctx);
	if (!merging)
	{
		old = MemoryContextSwitchTo(ctx);
		em->trainer = new_trainer();
		MemoryContextSwitchTo(old);
	}
	return em;
}

NbExpandedModel *
nb_expanded_owned(Datum d, MemoryContext parent)
{
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)))
		return NULL;
	eoh = DatumGetEOHP(d);
	if (eoh->eoh_methods != &nb_expanded_methods ||
		MemoryContextGetParent(eoh->eoh_context) != parent)
		return NULL;
	return (NbExpandedModel *) eoh;
}

/*
 * Report that view cannot be merged after the models before it: feature
 * is of type ours there, or their vectors had earlier_vector_len elements.
 */
static void
report_conflict(NbMergeStatus status, const NbView *view, uint32 feature,
				NbFeatureType ours, uint32 earlier_vector_len)
{
	if (status == NB_MERGE_TYPE_CONFLICT)
	{
		uint32		len;
		const char *name = nb_view_feature_name(view, feature, &len);

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot merge naive Bayes models: feature \"%s\" has different types",
						nb_cut_str(name, len)),
				 errdetail("It is %s in one model and %s in the other.",
						   nb_feature_type(ours)->prose,
						   nb_feature_type(nb_view_feature_type(view, feature))->prose)));
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("cannot merge naive Bayes models trained on float8[] of different lengths"),
			 errdetail("One model has %u elements per row, the other %u.",
					   view->vector_len, earlier_vector_len)));
}

static void
expanded_merge(NbExpandedModel *em, Datum d)
{
	NbView		view;
	struct varlena *flat = nb_model_open(d, &view, ERRCODE_DATA_CORRUPTED);
	MemoryContext old;
	uint32		conflict;
	NbMergeStatus status;

	nb_refuse_components(&view, "nb_merge");
	/* a merged model is at least as large as each part */
	if (view.size > NB_MODEL_MAX_SIZE)
		nb_report_too_large(view.size);
	old = MemoryContextSwitchTo(em->hdr.eoh_context);
	status = nb_trainer_merge_view(em->trainer, &view, &conflict);
	MemoryContextSwitchTo(old);
	if (status == NB_MERGE_TOO_LARGE)
		nb_report_too_large(0);
	nb_report_incompatible(false, status, nb_trainer_input_kinds(em->trainer),
						   nb_view_input_kinds(&view));
	if (status == NB_MERGE_TYPE_CONFLICT)
	{
		uint32		len;
		const char *name = nb_view_feature_name(&view, conflict, &len);
		NbFeatureType ours = nb_view_feature_type(&view, conflict);

		/* the feature exists with another type: this only looks it up */
		(void) nb_trainer_feature(em->trainer, name, len, ours, &ours);
		report_conflict(status, &view, conflict, ours, 0);
	}
	if (status == NB_MERGE_VECTOR_CONFLICT)
		report_conflict(status, &view, 0, 0, em->trainer->vector_len);
	if ((Pointer) flat != DatumGetPointer(d))
		pfree(flat);
	nb_expanded_check(em);
}

static void
report_overflow(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("naive Bayes counts overflowed"),
			 errdetail("A weighted count, a sum of counts or a Gaussian feature's spread exceeded the range of double precision.")));
}

/* The trainer's counts out of range (nb_trainer_sums_finite): which way. */
static void
report_range(const NbTrainer *t)
{
	if (t->underflow)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("naive Bayes counts underflowed"),
				 errdetail("A token's count times its row's weight is too small for double precision: it rounds to 0.")));
	report_overflow();
}

void
nb_model_require_classes(const NbView *view)
{
	if (view->n_classes == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes model has no class"),
				 errdetail("Each of the %llu rows it was trained on had a NULL label.",
						   (unsigned long long) view->settings.null_labels),
				 errhint("Train the model on rows whose label is not NULL.")));
}

void
nb_expanded_check(NbExpandedModel *em)
{
	if (em->trainer->overflow || em->trainer->underflow)
		report_range(em->trainer);
	/* refuse as soon as the model passes the limit, long before it is serialized */
	if (nb_trainer_min_flat_size(em->trainer) > NB_MODEL_MAX_SIZE)
		nb_report_too_large(0);
}

void
nb_report_incompatible(bool subtract, NbMergeStatus status, uint32 kinds_a, uint32 kinds_b)
{
	switch (status)
	{
		case NB_MERGE_INPUT_CONFLICT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 subtract ?
					 errmsg("cannot subtract a naive Bayes model trained on %s from one trained on %s",
							nb_input_kinds_prose(kinds_b), nb_input_kinds_prose(kinds_a)) :
					 errmsg("cannot merge naive Bayes models trained on %s and on %s",
							nb_input_kinds_prose(kinds_a), nb_input_kinds_prose(kinds_b)),
					 errdetail("Rows of different types make different features: a bag of text tokens, jsonb keys and float8[] positions are not the same features.")));
			break;
		case NB_MERGE_TOKENIZER_CONFLICT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 subtract ?
					 errmsg("cannot subtract naive Bayes models with different tokenizers") :
					 errmsg("cannot merge naive Bayes models with different tokenizers"),
					 errdetail("The models' tokens were made with different tokenizer options, or only one of them was trained on text with a tokenizer."),
					 errhint("Compare nb_info(model)->'tokenizer' of the models.")));
			break;
		case NB_MERGE_OPTIONS_CONFLICT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 subtract ?
					 errmsg("cannot subtract naive Bayes models with different stored options") :
					 errmsg("cannot merge naive Bayes models with different stored options"),
					 errdetail("The models would be scored differently."),
					 errhint("Give them the same options with nb_with_options(model, options), or none with nb_with_options(model, NULL).")));
			break;
		default:
			break;
	}
}

struct varlena *
nb_model_alloc(size_t size, MemoryContext ctx)
{
	MemoryContext old;
	struct varlena *result;

	if (size == 0)
		nb_report_too_large(0);
	old = MemoryContextSwitchTo(ctx);
	result = nb_alloc(size + VARHDRSZ);
	MemoryContextSwitchTo(old);
	SET_VARSIZE(result, size + VARHDRSZ);
	return result;
}

void
nb_report_too_large(uint64 size)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 size != 0 ?
			 errmsg("naive Bayes model of %llu bytes exceeds the limit of %llu bytes",
					(unsigned long long) size, (unsigned long long) NB_MODEL_MAX_SIZE) :
			 errmsg("naive Bayes model would exceed the limit of %llu bytes",
					(unsigned long long) NB_MODEL_MAX_SIZE),
			 errdetail("The text form of a larger model would exceed the 1 GB limit of a value, so it could not be dumped and restored.")));
}

/*
 * Merge n validated views into a new flat model allocated in ctx (the
 * merge's own scratch memory is in the current context); *out describes it.
 */
static struct varlena *
merge_views(const NbView *views, uint32 n, MemoryContext ctx, NbView *out)
{
	NbMerger   *m = nb_merger_create(views, n);
	size_t		size = nb_merger_size(m, NB_MODEL_MAX_SIZE);
	struct varlena *result = nb_model_alloc(size, ctx);

	if (!nb_merger_write(m, (unsigned char *) VARDATA(result), size, out))
		report_overflow();
	nb_merger_destroy(m);
	return result;
}

void
nb_refuse_components(const NbView *view, const char *function)
{
	if (view->settings.components)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support a model of mixture components", function),
				 errdetail("Its components are fitted by EM to its own rows: they match no other model's classes or components."),
				 errhint("Train a model of the rows wanted with nb_train_em instead.")));
}

/*
 * Refuse view, a validated input merged after the n before it, if it is too
 * large for a merge or cannot be merged with them.
 */
static void
check_merge_input(const NbView *earlier, uint32 n, const NbView *view)
{
	NbMergeConflict conflict;
	NbMergeStatus status;

	nb_refuse_components(view, "nb_merge");
	/* a merged model is at least as large as each part */
	if (view->size > NB_MODEL_MAX_SIZE)
		nb_report_too_large(view->size);
	status = nb_merge_check(earlier, n, view, &conflict);
	nb_report_incompatible(false, status, conflict.earlier_inputs, conflict.inputs);
	if (status != NB_MERGE_OK)
		report_conflict(status, view, conflict.feature, conflict.earlier_type,
						conflict.earlier_vector_len);
}

/* Merge the inputs of a merging model into one, its flat form. */
static void
collapse_inputs(NbExpandedModel *em)
{
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);
	NbView		view;
	struct varlena *merged = merge_views(em->view, em->n_inputs, em->hdr.eoh_context, &view);

	for (uint32 i = 0; i < em->n_inputs; i++)
		pfree(em->input[i]);
	em->input[0] = merged;
	em->view[0] = view;
	em->n_inputs = 1;
	em->merged = true;
	MemoryContextSwitchTo(old);
}

/*
 * Keep model datum d as a flat input of a merging model: detoasted into
 * the model's context (or copied there: a plain datum lives only as long as
 * its row), validated, checked against the inputs before it.
 */
static void
hold_input(NbExpandedModel *em, Datum d)
{
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);
	struct varlena *flat = PG_DETOAST_DATUM(d);
	NbView	   *view = &em->view[em->n_inputs];

	if ((Pointer) flat == DatumGetPointer(d))
	{
		/* nb_alloc: huge pages, so that a partial state of many megabytes is few page faults */
		struct varlena *copy = nb_alloc(VARSIZE(flat));

		nb_copy(copy, flat, VARSIZE(flat));
		flat = copy;
	}
	MemoryContextSwitchTo(old);
	nb_model_validate_bytes(VARDATA(flat), VARSIZE(flat) - VARHDRSZ, view,
							ERRCODE_DATA_CORRUPTED, false);
	check_merge_input(em->view, em->n_inputs, view);
	em->input[em->n_inputs++] = flat;
	em->merged = false;
	if (em->n_inputs == NB_MERGE_FANIN)
		collapse_inputs(em);
}

void
nb_expanded_add(NbExpandedModel *em, Datum d)
{
	if (em->trainer != NULL)
		expanded_merge(em, d);
	else
		hold_input(em, d);
}

NbTrainer *
nb_expanded_trainer(NbExpandedModel *em)
{
	if (em->trainer == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);
		uint32		conflict;

		/*
		 * The inputs were checked against each other when they came in; only
		 * their sum can still be too large.
		 */
		em->trainer = new_trainer();
		for (uint32 i = 0; i < em->n_inputs; i++)
		{
			if (nb_trainer_merge_view(em->trainer, &em->view[i], &conflict) == NB_MERGE_TOO_LARGE)
				nb_report_too_large(0);
			pfree(em->input[i]);
		}
		em->n_inputs = 0;
		em->merged = false;
		MemoryContextSwitchTo(old);
		nb_expanded_check(em);
	}
	return em->trainer;
}

struct varlena *
nb_model_merge(const Datum *d, int n)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext scratch = AllocSetContextCreate(caller, "nb_merge",
												  ALLOCSET_DEFAULT_SIZES);
	NbView		views[NB_MERGE_FANIN];
	NbView		out;
	struct varlena *result;

	Assert(n >= 1 && n <= NB_MERGE_FANIN);
	/* detoasted copies and the merge's scratch memory go with scratch */
	MemoryContextSwitchTo(scratch);
	for (int i = 0; i < n; i++)
	{
		(void) nb_model_open(d[i], &views[i], ERRCODE_DATA_CORRUPTED);
		check_merge_input(views, i, &views[i]);
	}
	result = merge_views(views, n, caller, &out);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(scratch);
	return result;
}

/*
 * PostgreSQL calls the two methods below wherever it copies the value out of
 * its expanded form, in whatever memory context the copy goes to: since
 * PostgreSQL 17 that can be a bump context (tuplesort's; in 18 hash
 * aggregation's too), where a pfree fails.  So the size is arithmetic only,
 * and writing the flat form, which frees its sort arrays, runs in a scratch
 * context of its own.
 */

/*
 * End the trainer's current document in the model's own context: adding
 * its lengths can grow the trainer's table of them, which must live as long
 * as the model, not in the caller's context or the flattening's scratch (a
 * window aggregate flattens its running model after every row, and the
 * next row used the freed table).
 */
static void
end_document(NbExpandedModel *em)
{
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);

	nb_trainer_end_doc(em->trainer);
	MemoryContextSwitchTo(old);
}

static Size
nb_expanded_flat_size(ExpandedObjectHeader *eohptr)
{
	NbExpandedModel *em = (NbExpandedModel *) eohptr;
	size_t		size;

	if (em->trainer == NULL)
	{
		/* merged once, then kept: the flat form may be asked for many times */
		if (!em->merged)
			collapse_inputs(em);
		return VARSIZE(em->input[0]);
	}

	end_document(em);
	size = nb_trainer_flat_size(em->trainer, SIZE_MAX);
	/* per-row checks catch single counts; sums over the model are checked here */
	if (!nb_trainer_sums_finite(em->trainer))
		report_range(em->trainer);
	if (size > NB_MODEL_MAX_SIZE)
		nb_report_too_large(size);
	return size + VARHDRSZ;
}

/* The trainer's model into result, of size bytes with its header; see nb_trainer_write_view. */
static void
write_trainer(NbExpandedModel *em, void *result, Size size, NbView *view)
{
	MemoryContext scratch;
	MemoryContext old;

	end_document(em);
	scratch = AllocSetContextCreate(em->hdr.eoh_context, "nb_model flatten",
									ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(scratch);
	SET_VARSIZE(result, size);
	nb_trainer_write_view(em->trainer, (unsigned char *) VARDATA(result), size - VARHDRSZ, view);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(scratch);
}

static void
nb_expanded_flatten(ExpandedObjectHeader *eohptr, void *result, Size size)
{
	NbExpandedModel *em = (NbExpandedModel *) eohptr;

	if (em->trainer == NULL)
	{
		if (!em->merged)
			collapse_inputs(em);
		Assert(size == VARSIZE(em->input[0]));
		nb_copy(result, em->input[0], size);
		return;
	}
	write_trainer(em, result, size, NULL);
}

struct varlena *
nb_expanded_write(NbExpandedModel *em, MemoryContext ctx, NbView *view)
{
	Size		size;
	struct varlena *result;

	Assert(em->trainer != NULL);
	size = nb_expanded_flat_size(&em->hdr);
	result = nb_model_alloc(size - VARHDRSZ, ctx);

	write_trainer(em, result, size, view);
	return result;
}

struct varlena *
nb_model_open_written(Datum d, NbView *view)
{
	if (VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)) &&
		DatumGetEOHP(d)->eoh_methods == &nb_expanded_methods &&
		((NbExpandedModel *) DatumGetEOHP(d))->trainer != NULL)
		return nb_expanded_write((NbExpandedModel *) DatumGetEOHP(d), CurrentMemoryContext, view);
	return nb_model_open(d, view, ERRCODE_DATA_CORRUPTED);
}

void
nb_model_class_totals(Datum d, uint32 *classes, double *documents)
{
	NbView		view;
	NbView	   *v = &view;

	*documents = 0;
	if (VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)) &&
		DatumGetEOHP(d)->eoh_methods == &nb_expanded_methods)
	{
		NbExpandedModel *em = (NbExpandedModel *) DatumGetEOHP(d);

		if (em->trainer != NULL)
		{
			*classes = em->trainer->classes.count;
			for (uint32 c = 0; c < *classes; c++)
				*documents += em->trainer->class_docs[c];
			return;
		}
		/* the merge flattening would do, kept for it */
		if (!em->merged)
			collapse_inputs(em);
		v = &em->view[0];
	}
	else
		nb_model_open(d, &view, ERRCODE_DATA_CORRUPTED);
	*classes = v->n_classes;
	for (uint32 c = 0; c < *classes; c++)
		*documents += nb_view_class_docs(v, c);
}

static void
check_strings_encoding(NbStringIter it, const char *what, int sqlstate)
{
	const char *str;
	uint32		len;

	for (uint64 i = 0; nb_string_next(&it, &str, &len); i++)
	{
		nb_interrupt_at(i);
		if (!pg_verify_mbstr(GetDatabaseEncoding(), str, len, true))
			ereport(ERROR,
					(errcode(sqlstate),
					 errmsg("invalid nb_model value"),
					 errdetail("The %s number %llu is not valid in the database encoding.",
							   what, (unsigned long long) i)));
	}
}

void
nb_model_validate_bytes(const char *data, size_t size, NbView *view,
						int sqlstate, bool from_outside)
{
	NbFormatError error;

	if (!nb_view_open(view, data, size, &error))
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid nb_model value"),
				 errdetail("The value is malformed: %s.", error.message)));
	if (from_outside)
	{
		check_strings_encoding(nb_view_labels(view), "label", sqlstate);
		check_strings_encoding(nb_view_items(view), "token", sqlstate);
		check_strings_encoding(nb_view_feature_names(view), "feature name", sqlstate);
		nb_check_stored_options(view, sqlstate, "invalid nb_model value", NULL);
	}
}

struct varlena *
nb_model_open(Datum d, NbView *view, int sqlstate)
{
	struct varlena *flat = PG_DETOAST_DATUM(d);

	nb_model_validate_bytes(VARDATA(flat), VARSIZE(flat) - VARHDRSZ, view,
							sqlstate, false);
	return flat;
}
