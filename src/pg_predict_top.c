/*
 * pg_predict_top.c — nb_predict_top: the k most probable classes of a row,
 * each with its probability as float8, as rows a view can select.
 *
 * The row is scored as nb_predict_proba scores it (nb_score_row), so each
 * row's probability is the number nb_predict_proba gives that class, and
 * the first row's label is nb_predict's.
 */
#include "pg_model.h"

#include <math.h>

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "nb_interrupt.h"
#include "nb_scorer.h"
#include "pg_predict.h"
#include "pg_prepared.h"

/* A class and its log posterior, to rank. */
typedef struct RankedClass
{
	double		log_post;
	uint32		cls;
	bool		predicted;		/* nb_predict's class */
} RankedClass;

/*
 * Most probable first; on a tie nb_predict's class, then the label first in
 * byte order (the classes' order).  (A temperature can round classes of
 * different posteriors to a tie: the prediction is still the one before it.)
 */
static int
rank_order(const void *a, const void *b)
{
	const RankedClass *x = a;
	const RankedClass *y = b;

	if (x->log_post != y->log_post)
		return x->log_post > y->log_post ? -1 : 1;
	if (x->predicted != y->predicted)
		return x->predicted ? -1 : 1;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

/*
 * nb_predict_top(model, features, k, options): k rows (every class for a
 * NULL k), most probable first.  Complement naive Bayes ranks the classes
 * but its scores are not probabilities: probability is NULL there.
 */
static Datum
predict_top(FunctionCallInfo fcinfo, NbFeatureInput input)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NbPrepared *pm;
	NbScorer   *scorer;
	RankedClass *ranked;
	uint32		n;
	uint32		k;
	int64		best;

	InitMaterializedSRF(fcinfo, 0);
	if (!PG_ARGISNULL(2) && PG_GETARG_INT32(2) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must not be negative"),
				 errdetail("k is %d.", PG_GETARG_INT32(2))));
	best = nb_score_row(fcinfo, input, 3, NULL, &pm, &scorer);
	if (best < 0)
		return (Datum) 0;

	n = pm->index.n_labels;
	k = PG_ARGISNULL(2) ? n : Min(n, (uint32) PG_GETARG_INT32(2));
	ranked = palloc_extended(sizeof(RankedClass) * n, MCXT_ALLOC_HUGE);
	for (uint32 c = 0; c < n; c++)
	{
		nb_interrupt_at(c);
		ranked[c].log_post = pm->log_post[c];
		ranked[c].cls = c;
		ranked[c].predicted = c == best;
	}
	nb_sort(ranked, n, sizeof(RankedClass), rank_order);
	for (uint32 i = 0; i < k; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, scorer->kind == NB_COMPLEMENT};

		CHECK_FOR_INTERRUPTS();
		values[0] = PointerGetDatum(nb_vocab_text(&pm->index.labels, ranked[i].cls));
		/* probability 0 is a log posterior of -Infinity, as nb_predict_proba writes it */
		values[1] = Float8GetDatum(ranked[i].log_post == -INFINITY ? 0.0 : exp(ranked[i].log_post));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

NB_FEATURE_FUNCTIONS(nb_predict_top, predict_top);
