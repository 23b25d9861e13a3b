/*
 * pg_em.c — one iteration of semi-supervised training by EM (nb_em.h), the
 * aggregate nbc_em_step that nb_train_em runs over the table once per
 * iteration.
 *
 * Each row is scored with the current model (prepared once for the query:
 * it is the aggregate's first argument, a constant of the plan) and added
 * to a new model in the same pass: a labelled row to its class with weight
 * 1, an unlabelled row to every class c with weight lambda p(c | x) (the
 * E-step and the M-step at once; a class whose posterior underflows to 0
 * adds nothing).  The row's tokens are read once, for both.  The result is
 * the new model and the log likelihood of the current one.
 */
#include "pg_em.h"

#include <math.h>

#include "access/htup_details.h"
#include "funcapi.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"

#include "nb_em.h"
#include "nb_exact.h"
#include "nb_interrupt.h"
#include "pg_aggregate.h"
#include "pg_features.h"
#include "pg_label.h"
#include "pg_options.h"
#include "pg_predict.h"
#include "pg_prepared.h"
#include "pg_tokenize.h"

struct EmState
{
	NbExpandedModel *em;		/* the model being trained */
	double		lambda;
	double		log_prior;		/* of the current model */
	NbExactSum	labelled;		/* log p(x, y) of the labelled rows */
	NbExactSum	unlabelled;		/* log p(x) of the unlabelled rows */
	uint32		n_classes;		/* the current model's */
	int64	   *trainer_class;	/* per class of the current model, its id in em's trainer, or -1 */
	double	   *weight;			/* an unlabelled row's weights, by id in em's trainer */
};

static const char *
em_status_message(NbEmStatus status)
{
	switch (status)
	{
		case NB_EM_KIND:
			return "nb_train_em supports the kinds multinomial and bernoulli only";
		case NB_EM_NOT_SMOOTHED:
			return "nb_train_em needs positive pseudo-counts";
		case NB_EM_NOT_BAGS:
			return "nb_train_em supports bags of tokens only";
		case NB_EM_OK:
			break;
	}
	return "";
}

EmState *
nb_em_begin(MemoryContext ctx, NbPrepared *pm, NbScorer *scorer, Jsonb *options,
			bool lambda_is_null, double lambda, bool with_tokenizer, Jsonb *tokenizer)
{
	EmState    *st;
	NbEmStatus	status;
	NbOptions	opts;
	NbPseudoCounts pc;
	MemoryContext old;

	/* the pseudo-counts, of the options the scorer applies */
	nb_parse_options(nb_prepared_options(pm, options), &pm->index, &opts);
	pc = nb_options_pseudo(&opts);
	status = nb_em_check(scorer, &pc);
	if (status != NB_EM_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s", em_status_message(status)),
				 status == NB_EM_NOT_SMOOTHED ?
				 errdetail("With a pseudo-count of 0 a token can have probability 0 in a class, and the log likelihood EM increases is not finite.") : 0));
	if (lambda_is_null || !(lambda >= 0 && lambda <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_train_em lambda must be between 0 and 1, not %s",
						lambda_is_null ? "null" : float8out_internal(lambda))));

	st = MemoryContextAllocZero(ctx, sizeof(EmState));
	st->em = nb_expanded_create(ctx);
	st->lambda = lambda;
	st->log_prior = nb_em_log_prior(scorer, &pc, opts.prior_mode == NB_PRIOR_FIT ? pc.class_alpha : 0);
	nb_exact_init(&st->labelled);
	nb_exact_init(&st->unlabelled);
	st->n_classes = pm->index.n_classes;
	st->trainer_class = MemoryContextAlloc(ctx, sizeof(int64) * st->n_classes);
	for (uint32 c = 0; c < st->n_classes; c++)
		st->trainer_class[c] = -1;
	st->weight = MemoryContextAllocZero(ctx, sizeof(double) * st->n_classes);
	/* the new model's classes are the current one's: dense counts (nb_trainer.h) */
	old = MemoryContextSwitchTo(st->em->hdr.eoh_context);
	if (!nb_trainer_spread_init(nb_expanded_trainer(st->em), st->n_classes))
		elog(ERROR, "a new trainer refused dense counts");
	MemoryContextSwitchTo(old);
	if (with_tokenizer)
	{
		NbTokenizer tok;
		bool		set;

		nb_tokenizer_from_jsonb(tokenizer, &tok);
		old = MemoryContextSwitchTo(st->em->hdr.eoh_context);
		set = nb_trainer_set_tokenizer(nb_expanded_trainer(st->em), &tok);
		MemoryContextSwitchTo(old);
		if (!set)
			elog(ERROR, "a new trainer refused a tokenizer");
	}
	return st;
}

/* Add a labelled row's tokens to the new model, in its class with weight 1. */
static void
train_labelled(EmState *st, const char *label, uint32 len, const NbTokenRef *refs, uint32 n)
{
	MemoryContext old = MemoryContextSwitchTo(st->em->hdr.eoh_context);
	NbTrainer  *t = nb_expanded_trainer(st->em);

	nb_trainer_begin_doc(t, label, len, 1.0);
	if (!nb_trainer_add_text(t, refs, n))
		elog(ERROR, "a model of text[] rows has a feature \"\" of another type");
	MemoryContextSwitchTo(old);
}

/*
 * Add an unlabelled row's tokens to the new model, in every class c with
 * weight lambda p(c | x), the posteriors exp(log_post) (a class whose
 * posterior underflows to 0 adds nothing).  The new model's classes are
 * those of the current one, in the order they came in: the weights go by
 * their ids there.
 */
static void
train_unlabelled(EmState *st, const NbIndex *ix, const double *log_post,
				 const NbTokenRef *refs, uint32 n)
{
	MemoryContext old = MemoryContextSwitchTo(st->em->hdr.eoh_context);
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
			const char *label = nb_strmap_str(&ix->labels, c, &len);

			st->trainer_class[c] = nb_trainer_class(t, label, len);
		}
		st->weight[st->trainer_class[c]] = w;
	}
	if (!nb_trainer_add_text_spread(t, refs, n, st->weight))
		elog(ERROR, "the next model refused an unlabelled row");
	MemoryContextSwitchTo(old);
}

void
nb_em_add_row(EmState *st, NbPrepared *pm, NbScorer *scorer, const text *label,
			  const NbTokenRef *refs, uint32 n)
{
	double		shared;
	int64		best;
	MemoryContext old;

	nb_prepared_begin_row(pm);
	old = MemoryContextSwitchTo(pm->doc_ctx);
	nb_scorer_add_tokens(scorer, &pm->doc, (uint32) pm->index.unnamed_bag, refs, n);
	MemoryContextSwitchTo(old);
	shared = nb_em_shared(scorer, &pm->doc);
	best = nb_score_doc(pm, scorer);
	if (best < 0)
		elog(ERROR, "every class is excluded by the class prior");

	if (label != NULL)
	{
		int64		c = nb_index_class(&pm->index, VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label));

		if (c < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("nbc_em_step label \"%s\" is not a class of the model",
							nb_cut_str(VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label))),
					 errdetail("The model of an iteration is trained on every labelled row.")));
		nb_exact_add(&st->labelled, nb_em_log_joint(scorer, (uint32) c, shared));
		train_labelled(st, VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label), refs, n);
	}
	else
	{
		nb_exact_add(&st->unlabelled, nb_em_log_marginal(scorer, shared));
		train_unlabelled(st, &pm->index, pm->log_post, refs, n);
	}
	nb_expanded_check(st->em);
}

bool
nb_em_skips_row(const EmState *st, bool label_is_null, bool features_are_null)
{
	return features_are_null || (label_is_null && st->lambda == 0);
}

NbExpandedModel *
nb_em_model(const EmState *st)
{
	return st->em;
}

double
nb_em_log_likelihood(const EmState *st)
{
	return nb_exact_value(&st->labelled) + st->lambda * nb_exact_value(&st->unlabelled) +
		st->log_prior;
}

uint32
nb_em_row_tokens(Datum features, bool tsvector_features, NbTokenRef *(*reserve) (void *, uint32),
				 void *arg, NbTokenRef **refs)
{
	if (tsvector_features)
	{
		TSVector	tsv = DatumGetTSVector(features);

		*refs = reserve(arg, tsv->size);
		return nb_tsvector_tokens(tsv, *refs);
	}
	else
	{
		ArrayType  *array = DatumGetArrayTypeP(features);

		nb_check_feature_array(array);
		*refs = reserve(arg, nb_array_size(array));
		return nb_array_tokens(array, *refs);
	}
}

/* Room for a row's tokens in the call site's scratch. */
static NbTokenRef *
call_site_refs(void *fcinfo, uint32 n)
{
	return nb_prepared_refs((FunctionCallInfo) fcinfo, n);
}

/*
 * nbc_em_step(model, label text, features, lambda, options [, tokenizer]):
 * features text[] or tsvector; a NULL label makes the row unlabelled; rows
 * with NULL features are skipped.  With a tokenizer argument the features
 * are the tokens of documents of text and the new model keeps the
 * tokenizer.
 */
static Datum
em_step(FunctionCallInfo fcinfo, bool tsvector_features)
{
	MemoryContext aggctx;
	EmState    *st;
	NbPrepared *pm;
	NbScorer   *scorer;
	NbTokenRef *refs;
	uint32		n;

	aggctx = nb_aggregate_context(fcinfo, "nbc_em_step_transfn", "nbc_em_step");
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("nbc_em_step needs a model")));
	st = PG_ARGISNULL(0) ? NULL : (EmState *) PG_GETARG_POINTER(0);
	pm = nb_prepared_get(fcinfo, PG_GETARG_DATUM(1),
						 PG_ARGISNULL(5) ? NULL : PG_GETARG_JSONB_P(5), &scorer);
	if (st == NULL)
		st = nb_em_begin(aggctx, pm, scorer, PG_ARGISNULL(5) ? NULL : PG_GETARG_JSONB_P(5),
						 PG_ARGISNULL(4), PG_ARGISNULL(4) ? 0 : PG_GETARG_FLOAT8(4),
						 PG_NARGS() > 6, PG_NARGS() > 6 && !PG_ARGISNULL(6) ? PG_GETARG_JSONB_P(6) : NULL);
	if (nb_em_skips_row(st, PG_ARGISNULL(2), PG_ARGISNULL(3)))
		PG_RETURN_POINTER(st);

	n = nb_em_row_tokens(PG_GETARG_DATUM(3), tsvector_features, call_site_refs, fcinfo, &refs);
	nb_em_add_row(st, pm, scorer, PG_ARGISNULL(2) ? NULL : PG_GETARG_TEXT_PP(2), refs, n);
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(nb_em_step_array_transfn);
Datum
nb_em_step_array_transfn(PG_FUNCTION_ARGS)
{
	return em_step(fcinfo, false);
}

PG_FUNCTION_INFO_V1(nb_em_step_tsvector_transfn);
Datum
nb_em_step_tsvector_transfn(PG_FUNCTION_ARGS)
{
	return em_step(fcinfo, true);
}

/*
 * The new model and the current model's log likelihood (nb_em.h), as the
 * composite nbc_em_step; NULL over no rows.  A model that nothing was
 * added to (no labelled row, lambda 0) is NULL.
 */
PG_FUNCTION_INFO_V1(nb_em_step_final);
Datum
nb_em_step_final(PG_FUNCTION_ARGS)
{
	EmState    *st = PG_ARGISNULL(0) ? NULL : (EmState *) PG_GETARG_POINTER(0);
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (st == NULL)
		PG_RETURN_NULL();
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "nbc_em_step_final must return a composite type");
	desc = BlessTupleDesc(desc);
	if (nb_trainer_is_empty(nb_expanded_trainer(st->em)))
		nulls[0] = true;
	else
	{
		nb_expanded_check(st->em);
		values[0] = EOHPGetRWDatum(&st->em->hdr);
	}
	values[1] = Float8GetDatum(nb_em_log_likelihood(st));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
