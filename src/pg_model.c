/*
 * pg_model.c — expanded-object methods and datum access for nb_model.
 */
#include "pg_model.h"

#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "nb_interrupt.h"

PG_MODULE_MAGIC;

static Size nb_expanded_flat_size(ExpandedObjectHeader *eohptr);
static void nb_expanded_flatten(ExpandedObjectHeader *eohptr, void *result, Size size);

static const ExpandedObjectMethods nb_expanded_methods = {
	nb_expanded_flat_size,
	nb_expanded_flatten
};

NbExpandedModel *
nb_expanded_create(MemoryContext parent)
{
	MemoryContext ctx = AllocSetContextCreate(parent, "nb_model",
											  ALLOCSET_DEFAULT_SIZES);
	NbExpandedModel *em = MemoryContextAlloc(ctx, sizeof(NbExpandedModel));
	MemoryContext old;

	EOH_init_header(&em->hdr, &nb_expanded_methods, ctx);
	old = MemoryContextSwitchTo(ctx);
	em->trainer = nb_trainer_create();
	em->refs = NULL;
	em->refs_cap = 0;
	MemoryContextSwitchTo(old);
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

void
nb_expanded_merge(NbExpandedModel *em, Datum d)
{
	NbView		view;
	struct varlena *flat = nb_model_open(d, &view, ERRCODE_DATA_CORRUPTED);
	MemoryContext old = MemoryContextSwitchTo(em->hdr.eoh_context);
	uint32		conflict;
	NbMergeStatus status = nb_trainer_merge_view(em->trainer, &view, &conflict);

	MemoryContextSwitchTo(old);
	if (status == NB_MERGE_TYPE_CONFLICT)
	{
		const char *name = view.feature_names;
		uint32		len = nb_view_feature_name_len(&view, conflict);
		NbFeatureType theirs = nb_view_feature_type(&view, conflict);
		NbFeatureType ours = theirs;

		for (uint32 j = 0; j < conflict; j++)
			name += nb_view_feature_name_len(&view, j);
		/* the feature exists with another type: this only looks it up */
		(void) nb_trainer_feature(em->trainer, name, len, theirs, &ours);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot merge naive Bayes models: feature \"%.*s\" has different types",
						(int) len, name),
				 errdetail("It is %s in one model and %s in the other.",
						   nb_feature_type_name(ours), nb_feature_type_name(theirs))));
	}
	if (status == NB_MERGE_VECTOR_CONFLICT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot merge naive Bayes models trained on float8[] of different lengths"),
				 errdetail("One model has %u elements per row, the other %u.",
						   view.vector_len, em->trainer->vector_len)));
	if ((Pointer) flat != DatumGetPointer(d))
		pfree(flat);
	nb_expanded_check(em);
}

const char *
nb_feature_type_name(NbFeatureType type)
{
	switch (type)
	{
		case NB_FEATURE_BAG:
			return "a bag of tokens";
		case NB_FEATURE_CATEGORICAL:
			return "categorical";
		case NB_FEATURE_GAUSSIAN:
			return "Gaussian";
		case NB_FEATURE_BOOLEAN:
			return "boolean";
	}
	return "unknown";
}

static void
report_overflow(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("naive Bayes counts overflowed"),
			 errdetail("A weighted count, a sum of counts or a Gaussian feature's spread exceeded the range of double precision.")));
}

void
nb_expanded_check(NbExpandedModel *em)
{
	if (em->trainer->overflow)
		report_overflow();
}

static Size
nb_expanded_flat_size(ExpandedObjectHeader *eohptr)
{
	NbExpandedModel *em = (NbExpandedModel *) eohptr;
	size_t		size = nb_trainer_flat_size(em->trainer, MaxAllocSize - VARHDRSZ);

	/* per-row checks catch single counts; sums over the model are checked here */
	if (!nb_trainer_sums_finite(em->trainer))
		report_overflow();

	if (size == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("naive Bayes model is too large"),
				 errdetail("The serialized model would exceed %zu bytes.",
						   (size_t) MaxAllocSize)));
	return size + VARHDRSZ;
}

static void
nb_expanded_flatten(ExpandedObjectHeader *eohptr, void *result, Size size)
{
	NbExpandedModel *em = (NbExpandedModel *) eohptr;

	SET_VARSIZE(result, size);
	nb_trainer_write(em->trainer, (unsigned char *) VARDATA(result), size - VARHDRSZ);
}

static void
check_strings_encoding(const char *area, const unsigned char *lengths,
					   uint64 n, const char *what, int sqlstate)
{
	for (uint64 i = 0; i < n; i++)
	{
		uint32		len = nb_read_u32(lengths, i);

		nb_interrupt_at(i);
		if (!pg_verify_mbstr(GetDatabaseEncoding(), area, len, true))
			ereport(ERROR,
					(errcode(sqlstate),
					 errmsg("invalid nb_model value"),
					 errdetail("The %s number %llu is not valid in the database encoding.",
							   what, (unsigned long long) i)));
		area += len;
	}
}

void
nb_model_validate_bytes(const char *data, size_t size, NbView *view,
						int sqlstate, bool check_encoding)
{
	NbFormatError error;

	if (!nb_view_open(view, data, size, &error))
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid nb_model value"),
				 errdetail("The value is malformed: %s.", error.message)));
	if (check_encoding)
	{
		check_strings_encoding(view->labels, view->label_len, view->n_classes,
							   "label", sqlstate);
		check_strings_encoding(view->tokens, view->token_len, view->n_tokens,
							   "token", sqlstate);
		if (view->version != NB_FORMAT_VERSION_TEXT)
			check_strings_encoding(view->feature_names, view->feature_name_len,
								   view->n_features, "feature name", sqlstate);
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
