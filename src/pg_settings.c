/*
 * pg_settings.c — nb_with_options: prediction options kept inside a model
 * (nb_settings.h), the defaults of every scoring function that scores with
 * it (pg_prepared.c applies them).
 */
#include "pg_model.h"

#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "nb_index.h"
#include "pg_options.h"

PG_FUNCTION_INFO_V1(nb_with_options);

struct varlena *
nb_model_with_options(Datum model, Jsonb *options)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext scratch;
	NbView		view;
	NbSettings	settings;
	NbFormatShape shape;
	NbFormatWriter w;
	size_t		size;
	struct varlena *result;

	scratch = AllocSetContextCreate(caller, "nb_with_options", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scratch);
	(void) nb_model_open(model, &view, ERRCODE_DATA_CORRUPTED);
	settings = view.settings;
	settings.options = NULL;
	settings.options_len = 0;
	if (options != NULL)
	{
		NbIndex		index;

		nb_model_require_classes(&view);
		nb_index_build(&index, &view);
		settings.options = nb_options_canonical(options, &index, &settings.options_len);
	}
	shape = nb_view_shape(&view, &settings);
	size = nb_format_size(&shape, NB_MODEL_MAX_SIZE);
	result = nb_model_alloc(size, caller);
	nb_format_begin(&w, &shape, (unsigned char *) VARDATA(result), size);
	nb_format_copy(&w, &view);
	nb_format_finish(&w, NULL);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(scratch);
	return result;
}

/*
 * nb_with_options(model, options): the model with options (NULL: none) as
 * its stored prediction options, checked against it as a call's options
 * are.  The rest of the model is copied as it is; without any setting left
 * it is the model's earlier format version, byte for byte what training it
 * gave.
 */
Datum
nb_with_options(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(nb_model_with_options(PG_GETARG_DATUM(0),
											PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1)));
}
