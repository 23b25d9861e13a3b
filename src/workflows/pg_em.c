/*
 * pg_em.c — one iteration of semi-supervised training by EM (nb_em.h), which
 * nb_train_em's driver (pg_em_run.c) runs over the table once per iteration.
 *
 * Each row is scored with the current model (prepared once per iteration)
 * and added to a new model in the same pass: a labelled row to its class
 * with weight 1, an unlabelled row to every class c with weight lambda p(c | x) (the
 * E-step and the M-step at once; a class whose posterior underflows to 0
 * adds nothing).  The row's tokens are read once, for both.  The result is
 * the new model and the log likelihood of the current one.
 */
#include "pg_em.h"

#include <math.h>

#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/float.h"
#include "utils/jsonb.h"

#include "nb_em.h"
#include "nb_exact.h"
#include "pg_features.h"
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
			double lambda, bool with_tokenizer, Jsonb *tokenizer)
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
	if (!(lambda >= 0 && lambda <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nb_train_em lambda must be between 0 and 1, not %s",
						float8out_internal(lambda))));

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

		/* the first model is trained on every labelled row, and so is each next one */
		if (c < 0)
			elog(ERROR, "an EM iteration's labelled row is not a class of the model");
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

/*
 * The C functions of the aggregate nbc_em_step, which nb_train_em ran once
 * per iteration before its driver (pg_em_run.c) and which 0.14.0 drops.
 * Their symbols stay for the scripts of older versions: a fresh install or
 * an update from before 0.14.0 creates the functions on the way (CREATE
 * FUNCTION looks the symbol up) and 0.14.0's update drops them.  A call
 * (possible only between those scripts) is an error, as PostGIS keeps the
 * symbols of its removed functions (postgis_legacy.c).
 */
static Datum
removed_em_step(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("nbc_em_step was removed in nbc 0.14.0"),
			 errhint("nb_train_em and nb_train_em_trace run the iterations of EM.")));
	pg_unreachable();
}

PG_FUNCTION_INFO_V1(nb_em_step_array_transfn);
Datum
nb_em_step_array_transfn(PG_FUNCTION_ARGS)
{
	return removed_em_step();
}

PG_FUNCTION_INFO_V1(nb_em_step_tsvector_transfn);
Datum
nb_em_step_tsvector_transfn(PG_FUNCTION_ARGS)
{
	return removed_em_step();
}

PG_FUNCTION_INFO_V1(nb_em_step_final);
Datum
nb_em_step_final(PG_FUNCTION_ARGS)
{
	return removed_em_step();
}
