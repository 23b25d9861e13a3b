/*
 * pg_predict.c — nb_predict, nb_predict_proba, nb_predict_log_proba,
 * nb_probability and nb_predict_top.
 *
 * Each row is scored with the model prepared once (see pg_prepared.h): the
 * row's features go into the prepared model's document, which the scorer
 * for the options given scores.
 */
#include "pg_model.h"

#include <math.h>

#include "funcapi.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "nb_interrupt.h"
#include "nb_scorer.h"
#include "pg_features.h"
#include "pg_jsonb.h"
#include "pg_label.h"
#include "pg_predict.h"
#include "pg_prepared.h"
#include "pg_tokenize.h"
#include "pg_unknown.h"

/*
 * A row's tokens (text[], tsvector) are looked up this many at a time, so
 * that what a document takes beyond its own bytes is its known items
 * (nb_doc.h), not also a reference and a lookup's scratch per token (32
 * bytes each: a 5M-token row took 160 MB more); the document is the same.
 */
#define NB_DOC_BATCH 65536

/* A prepared model with the scorer of the row's options (NULL: any scorer of the model). */
typedef struct RowModel
{
	NbPrepared *pm;
	NbScorer   *scorer;
} RowModel;

/*
 * Add tokens to the document, looked up for the scorer, or without one in
 * the model's index; its scratch grows in the model's context.
 */
static void
doc_add_tokens(RowModel *m, uint32 feature, const NbTokenRef *refs, uint32 n)
{
	MemoryContext old = MemoryContextSwitchTo(m->pm->doc_ctx);

	if (m->scorer != NULL)
		nb_scorer_add_tokens(m->scorer, &m->pm->doc, feature, refs, n);
	else
		nb_doc_add_tokens(&m->pm->index, &m->pm->doc, feature, refs, n);
	MemoryContextSwitchTo(old);
}

/* text[] and tsvector rows are the bag "" (arg: the RowModel). */
static void
doc_add_text(void *arg, const NbTokenRef *refs, uint32 n)
{
	RowModel   *m = arg;

	if (m->pm->index.unnamed_bag < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes model was not trained on text[] or tsvector features"),
				 errhint("Pass the features as jsonb.")));
	doc_add_tokens(m, (uint32) m->pm->index.unnamed_bag, refs, n);
}

/* What nb_jsonb_features calls while building a document to score. */
typedef struct JsonbDocBuilder
{
	FunctionCallInfo fcinfo;
	RowModel   *m;
	NbRowCategories *categories;	/* NULL: not wanted */
} JsonbDocBuilder;

/*
 * The model's feature for a key with a value of the given type: -1 if the
 * model does not know the key (the value is ignored, like an unknown
 * token, and counted as unknown by the caller; the row's first such key
 * is kept for nbc.unknown_features to name), ERROR if the model knows it
 * with another type.
 */
static int64
doc_feature(JsonbDocBuilder *b, const char *key, uint32 key_len, NbFeatureType type)
{
	const NbIndex *ix = &b->m->pm->index;
	int64		j = nb_index_feature(ix, key, key_len);

	if (j >= 0 && ix->feature_type[j] != type)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes feature \"%s\" has the wrong type", nb_cut_str(key, key_len)),
				 errdetail("The model has it as %s; the value given is %s.",
						   nb_feature_type(ix->feature_type[j])->prose,
						   nb_feature_type(type)->prose),
				 errhint("Give each key the JSON type it had in training: a number for a Gaussian feature (not a number in a string), a string for a categorical one, true or false for a boolean, an array or object of tokens for a bag.")));
	if (j < 0 && b->m->pm->unknown_key == NULL)
	{
		b->m->pm->unknown_key = key;
		b->m->pm->unknown_key_len = key_len;
	}
	return j;
}

static NbTokenRef *
doc_reserve(void *arg, uint32 n)
{
	return nb_prepared_refs(((JsonbDocBuilder *) arg)->fcinfo, n);
}

static void
doc_bag(void *arg, const char *key, uint32 key_len, const NbTokenRef *tokens, uint32 n)
{
	JsonbDocBuilder *b = arg;
	int64		j = doc_feature(b, key, key_len, NB_FEATURE_BAG);

	if (j >= 0)
		doc_add_tokens(b->m, (uint32) j, tokens, n);
	else
		for (uint32 i = 0; i < n; i++)
		{
			nb_interrupt_at(i);
			nb_doc_add_unknown(&b->m->pm->doc, tokens[i].count);
		}
}

static void
doc_category(void *arg, const char *key, uint32 key_len, const char *value, uint32 len)
{
	JsonbDocBuilder *b = arg;
	int64		j = doc_feature(b, key, key_len, NB_FEATURE_CATEGORICAL);
	NbTokenRef	ref = {value, len, 1.0};

	if (j < 0)
	{
		nb_doc_add_unknown(&b->m->pm->doc, 1);
		return;
	}
	doc_add_tokens(b->m, (uint32) j, &ref, 1);
	if (b->categories != NULL)
	{
		if (b->categories->str == NULL)
		{
			uint32		F = b->m->pm->index.n_features;

			b->categories->str = palloc0(sizeof(char *) * F);
			b->categories->len = palloc0(sizeof(uint32) * F);
		}
		b->categories->str[j] = value;
		b->categories->len[j] = len;
	}
}

static void
doc_real(void *arg, const char *key, uint32 key_len, double x)
{
	JsonbDocBuilder *b = arg;
	int64		j = doc_feature(b, key, key_len, NB_FEATURE_GAUSSIAN);

	if (j >= 0)
		nb_doc_add_value(&b->m->pm->doc, (uint32) j, x);
	else
		nb_doc_add_unknown(&b->m->pm->doc, 1);
}

static void
doc_boolean(void *arg, const char *key, uint32 key_len, bool x)
{
	JsonbDocBuilder *b = arg;
	int64		j = doc_feature(b, key, key_len, NB_FEATURE_BOOLEAN);

	if (j >= 0)
		nb_doc_add_value(&b->m->pm->doc, (uint32) j, x ? 1 : 0);
	else
		nb_doc_add_unknown(&b->m->pm->doc, 1);
}

/* A document of text, tokenized as the model's training rows were. */
static void
doc_from_text(RowModel *m, text *body)
{
	NbTokenBatch *batch;

	if (!m->pm->has_tokenizer)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes model has no tokenizer for text features"),
				 errdetail("The model was not trained on text, so it does not know how to tokenize it."),
				 errhint("Pass the features in the type the model was trained on (for example '{a,b}'::text[]), or train the model on text with nb_train(label, body).")));
	batch = nb_prepared_token_batch(m->pm);
	nb_token_batch_begin(batch, doc_add_text, m);
	nb_text_tokenize(&m->pm->tokenizer, body, nb_token_batch_add, batch, &batch->text_buffers);
	nb_token_batch_end(batch);
}

static void
doc_from_float8(NbPrepared *pm, ArrayType *array)
{
	double	   *values;
	bool	   *nulls;
	int			n;

	nb_float8_features(array, &values, &nulls, &n);
	if (pm->index.vector_len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes model was not trained on float8[] features"),
				 errhint("Pass the features as jsonb.")));
	if ((uint32) n != pm->index.vector_len)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("naive Bayes float8[] features do not match the model"),
				 errdetail("The array has %d elements; the model was trained on %u.",
						   n, pm->index.vector_len)));
	for (int i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		if (!nulls[i])
			nb_doc_add_value(&pm->doc, pm->index.position_feature[i], values[i]);
	}
	pfree(values);
	pfree(nulls);
}

void
nb_row_doc(FunctionCallInfo fcinfo, int arg, NbFeatureInput kind, NbRowCategories *categories,
		   NbPrepared *pm, NbScorer *scorer)
{
	RowModel	m = {pm, scorer};

	switch (kind)
	{
		case NB_INPUT_ARRAY:
			{
				ArrayType  *tokens = PG_GETARG_ARRAYTYPE_P(arg);
				NbArrayTokens it;
				NbTokenRef *refs;

				nb_check_feature_array(tokens);
				nb_array_tokens_begin(&it, tokens);
				refs = nb_prepared_refs(fcinfo, Min(it.n, NB_DOC_BATCH));
				/* once for an empty array too: the bag is present */
				do
					doc_add_text(&m, refs, nb_array_tokens_next(&it, refs, NB_DOC_BATCH));
				while (!nb_array_tokens_done(&it));
			}
			break;
		case NB_INPUT_TSVECTOR:
			{
				TSVector	tsv = PG_GETARG_TSVECTOR(arg);
				NbTokenRef *refs = nb_prepared_refs(fcinfo, Min(tsv->size, NB_DOC_BATCH));
				uint32		first = 0;

				do
				{
					uint32		n = Min(tsv->size - first, NB_DOC_BATCH);

					nb_tsvector_range(tsv, first, n, refs);
					doc_add_text(&m, refs, n);
					first += n;
				} while (first < (uint32) tsv->size);
			}
			break;
		case NB_INPUT_JSONB:
			{
				JsonbDocBuilder builder = {fcinfo, &m, categories};
				NbJsonbVisitor visitor = {&builder, doc_reserve, doc_bag, doc_category,
					doc_real, doc_boolean};

				nb_jsonb_features(PG_GETARG_JSONB_P(arg), &visitor);
			}
			break;
		case NB_INPUT_FLOAT8:
			doc_from_float8(m.pm, PG_GETARG_ARRAYTYPE_P(arg));
			break;
		case NB_INPUT_TEXT:
			doc_from_text(&m, PG_GETARG_TEXT_PP(arg));
			break;
	}
}

void
nb_report_score_out_of_range(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("naive Bayes score of the row is out of range"),
			 errdetail("A feature's count or value is too large for its log-probability terms to be summed in float8."),
			 errhint("Scale the counts or values of the features down.")));
}

int64
nb_score_doc(NbPrepared *pm, NbScorer *scorer)
{
	int64		best = nb_scorer_score(scorer, &pm->doc, pm->log_post);

	nb_prepared_end_row(pm);
	if (best == NB_SCORE_OUT_OF_RANGE)
		nb_report_score_out_of_range();
	return best;
}

int64
nb_score_row(FunctionCallInfo fcinfo, NbFeatureInput kind, int options_arg,
			 NbRowCategories *categories, NbPrepared **pm_out, NbScorer **scorer_out)
{
	RowModel	m;
	int64		best;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return -1;
	m.pm = nb_prepared_get_model(fcinfo, PG_GETARG_DATUM(0));
	m.scorer = nb_prepared_scorer(m.pm, PG_ARGISNULL(options_arg) ? NULL :
								  PG_GETARG_JSONB_P(options_arg));

	nb_prepared_begin_row(m.pm);
	nb_row_doc(fcinfo, 1, kind, categories, m.pm, m.scorer);
	nb_count_scored_row(fcinfo, 1, kind, m.pm);
	best = nb_score_doc(m.pm, m.scorer);
	if (best < 0)
		elog(ERROR, "every class is excluded by the class prior");
	*pm_out = m.pm;
	*scorer_out = m.scorer;
	return best;
}

text *
nb_vocab_text(const NbVocab *vocab, uint32 i)
{
	uint32		len;
	const char *s = nb_vocab_str(vocab, i, &len);

	return cstring_to_text_with_len(s, len);
}

/*
 * The posterior of every class, or its logarithm, or NULL (see
 * nb_score_row): an object written straight to the binary jsonb form with
 * its keys in jsonb's order (made once per prepared model): pushing the
 * pairs and sorting them again per row was a tenth of nb_predict_proba's
 * time.
 */
static Datum
predict_posterior(FunctionCallInfo fcinfo, NbFeatureInput kind, bool log_scale)
{
	NbPrepared *pm;
	NbScorer   *scorer;
	uint32		n;
	const uint32 *order;
	JsonbPair  *pairs;
	JsonbValue	root;

	if (nb_score_row(fcinfo, kind, 2, NULL, &pm, &scorer) < 0)
		PG_RETURN_NULL();
	n = pm->index.n_labels;
	order = nb_prepared_jsonb_order(pm);
	pairs = palloc(sizeof(JsonbPair) * (n + 1));
	for (uint32 k = 0; k < n; k++)
	{
		uint32		c = order[k];
		uint32		len;
		const char *s = nb_vocab_str(&pm->index.labels, c, &len);
		double		lp = pm->log_post[c];

		pairs[k].key.type = jbvString;
		pairs[k].key.val.string.val = (char *) s;
		pairs[k].key.val.string.len = (int) len;
		pairs[k].order = k;
		if (log_scale && lp == -INFINITY)
			/* JSON has no -Infinity: probability 0 is null */
			pairs[k].value.type = jbvNull;
		else
		{
			pairs[k].value.type = jbvNumeric;
			pairs[k].value.val.numeric =
				nb_float8_numeric(log_scale ? lp : lp == -INFINITY ? 0.0 : exp(lp));
		}
	}
	root.type = jbvObject;
	root.val.object.nPairs = (int) n;
	root.val.object.pairs = pairs;
	PG_RETURN_JSONB_P(nb_jsonb_finish(&root));
}

/* The label of the most probable class, or NULL (see nb_score_row). */
static Datum
predict_label(FunctionCallInfo fcinfo, NbFeatureInput kind)
{
	NbPrepared *pm;
	NbScorer   *scorer;
	int64		best = nb_score_row(fcinfo, kind, 2, NULL, &pm, &scorer);

	if (best < 0)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(nb_vocab_text(&pm->index.labels, (uint32) best));
}

static Datum
predict_proba(FunctionCallInfo fcinfo, NbFeatureInput kind)
{
	return predict_posterior(fcinfo, kind, false);
}

static Datum
predict_log_proba(FunctionCallInfo fcinfo, NbFeatureInput kind)
{
	return predict_posterior(fcinfo, kind, true);
}

/*
 * nb_probability(model, features, label, options): the posterior of one
 * class as float8, the number nb_predict_proba gives it (to the bit: that
 * number is this double, written exactly), without the object of every
 * class that a query would read one value of (a view's column, a sum).
 * NULL for a NULL model, features or label; a label the model has no
 * class of is an error.  The label may be of any type, as label::text
 * (the form nb_train stores it in).
 */
static Datum
predict_class_probability(FunctionCallInfo fcinfo, NbFeatureInput kind)
{
	NbPrepared *pm;
	NbScorer   *scorer;
	text	   *label;
	int64		c;
	double		lp;

	if (PG_ARGISNULL(2) || nb_score_row(fcinfo, kind, 3, NULL, &pm, &scorer) < 0)
		PG_RETURN_NULL();
	label = nb_label_arg(fcinfo, 2, nb_prepared_label_cast(fcinfo));
	c = nb_index_class(&pm->index, VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label));
	if (c < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes model has no class \"%s\"",
						nb_cut_str(VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label))),
				 errhint("nb_classes(model) lists the model's classes.")));
	lp = pm->log_post[c];
	PG_RETURN_FLOAT8(lp == -INFINITY ? 0.0 : exp(lp));
}

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
 * NULL k), most probable first.  The row is scored as nb_predict_proba
 * scores it, so each probability is the number nb_predict_proba gives that
 * class, and the first row's label is nb_predict's.  Complement naive Bayes
 * ranks the classes but its scores are not probabilities: probability is
 * NULL there.
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

NB_FEATURE_FUNCTIONS(nb_predict, predict_label);
NB_FEATURE_FUNCTIONS(nb_predict_proba, predict_proba);
NB_FEATURE_FUNCTIONS(nb_predict_log_proba, predict_log_proba);
NB_FEATURE_FUNCTIONS(nb_probability, predict_class_probability);
NB_FEATURE_FUNCTIONS(nb_predict_top, predict_top);
