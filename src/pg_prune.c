/*
 * pg_prune.c — nb_prune(model, options): the options jsonb read into
 * NbPruneOptions, the model pruned by nb_prune.c.
 */
#include "pg_model.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "nb_prune.h"
#include "pg_jsonb.h"
#include "pg_label.h"
#include "pg_progress.h"

PG_FUNCTION_INFO_V1(nb_prune);

#define TOP_K_DETAIL "It must be an integer from 0 to 2^53."
#define MIN_DOCUMENTS_DETAIL "It must be a finite number of documents, 0 or more."
#define FRACTION_DETAIL "It must be a number from 0 to 1."

/* detail: one of the literal *_DETAIL strings above (translatable as they are) */
#define prune_option_error(option, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("invalid value for nb_prune option \"%s\"", option), \
			 errdetail(detail)))

static void
parse_prune_option(const char *name, const JsonbValue *val, void *arg)
{
	NbPruneOptions *o = arg;
	double		x;

	if (strcmp(name, "top_k") == 0)
	{
		if (!nb_jsonb_number(val, &x) || !nb_prune_set_top_k(o, x))
			prune_option_error("top_k", TOP_K_DETAIL);
	}
	else if (strcmp(name, "min_documents") == 0)
	{
		if (!nb_jsonb_number(val, &x) || !nb_prune_set_min_documents(o, x))
			prune_option_error("min_documents", MIN_DOCUMENTS_DETAIL);
	}
	else if (strcmp(name, "max_document_fraction") == 0)
	{
		if (!nb_jsonb_number(val, &x) || !nb_prune_set_max_document_fraction(o, x))
			prune_option_error("max_document_fraction", FRACTION_DETAIL);
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized nb_prune option \"%s\"", nb_cut_str(name, strlen(name))),
				 errhint("Valid options are top_k, min_documents and max_document_fraction.")));
}

static void
parse_prune_options(Jsonb *options, NbPruneOptions *o)
{
	nb_prune_options_init(o);
	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_prune options must be a JSON object")));
	nb_jsonb_each_option(options, parse_prune_option, o);
}

/*
 * The options are read before the model is opened, so a bad option is
 * reported whatever the model.  The pruner's scratch memory and the
 * detoasted input go with a context of their own; the result, in the
 * caller's context, is written once.  A progress NOTICE may come from the
 * pruner's loops while the scratch context lives.
 */
Datum
nb_prune(PG_FUNCTION_ARGS)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext scratch;
	NbPruneOptions o;
	NbView		view;
	NbView		out;
	NbPruner   *p;
	size_t		size;
	struct varlena *result;

	parse_prune_options(PG_GETARG_JSONB_P(1), &o);
	scratch = AllocSetContextCreate(caller, "nb_prune", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scratch);
	(void) nb_model_open(PG_GETARG_DATUM(0), &view, ERRCODE_DATA_CORRUPTED);
	nb_refuse_components(&view, "nb_prune");
	nb_progress_during(scratch, psprintf("nb_prune: pruning a model of %u classes and %u tokens",
										 view.n_classes, view.n_tokens));
	p = nb_pruner_create(&view, &o);
	size = nb_pruner_size(p, NB_MODEL_MAX_SIZE);
	result = nb_model_alloc(size, caller);
	nb_pruner_write(p, (unsigned char *) VARDATA(result), size, &out);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(scratch);
	PG_RETURN_POINTER(result);
}
