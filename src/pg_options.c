/*
 * pg_options.c — the prediction options jsonb, parsed into NbOptions.
 *
 * What the options mean and the rules they obey are Core's (nb_options.h);
 * this file reads the JSON and reports a refused value as an error.
 */
#include "pg_options.h"

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"

#include "nb_index.h"
#include "pg_jsonb.h"
#include "pg_label.h"
#include "nb_tokenize.h"

#define KIND_DETAIL "Valid kinds are \"multinomial\", \"bernoulli\", \"complement\" and \"dcm\"."
#define RANGE_DETAIL "It must be a number from 0 to 1e100."
#define BOOLEAN_DETAIL "It must be true or false."
#define CLASS_PRIOR_DETAIL "It must be an object mapping every class label to a probability."
#define PRIOR_SUM_DETAIL "The probabilities must have a positive finite sum."
#define ESTIMATOR_DETAIL "Valid estimators are \"mean\" and \"map\"."
#define BETA_DETAIL "It must be an array of two numbers from 0 to 1e100, the pseudo-counts of presence and absence."
#define TEMPERATURE_DETAIL "It must be a finite number greater than 0."
#define SIGMOID_DETAIL "It must be null or an object mapping class labels to arrays [a, b] of two finite numbers."
#define MAP_DETAIL "The posterior mode of a Dirichlet or Beta prior needs parameters of at least 1."

/* detail: one of the *_DETAIL strings above */
#define option_error(option, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("invalid value for naive Bayes option \"%s\"", option), \
			 errdetail("%s", detail)))

#define map_error(option) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("naive Bayes option \"%s\" must be at least 1 with estimator \"map\"", option), \
			 errdetail(MAP_DETAIL)))

/* Report what Core refused; class_prior's per-class refusals are reported where the label is known. */
static void
check_option(NbOptionStatus status)
{
	switch (status)
	{
		case NB_OPTION_OK:
			return;
		case NB_OPTION_KIND_UNRECOGNIZED:
			option_error("kind", KIND_DETAIL);
			break;
		case NB_OPTION_ALPHA_OUT_OF_RANGE:
			option_error("alpha", RANGE_DETAIL);
			break;
		case NB_OPTION_VAR_SMOOTHING_OUT_OF_RANGE:
			option_error("var_smoothing", RANGE_DETAIL);
			break;
		case NB_OPTION_PRIOR_INVALID:
		case NB_OPTION_PRIOR_SUM_INVALID:
			option_error("class_prior", PRIOR_SUM_DETAIL);
			break;
		case NB_OPTION_CLASS_ALPHA_OUT_OF_RANGE:
			option_error("class_alpha", RANGE_DETAIL);
			break;
		case NB_OPTION_ESTIMATOR_UNRECOGNIZED:
			option_error("estimator", ESTIMATOR_DETAIL);
			break;
		case NB_OPTION_BETA_OUT_OF_RANGE:
			option_error("beta", BETA_DETAIL);
			break;
		case NB_OPTION_MAP_ALPHA_BELOW_ONE:
			map_error("alpha");
			break;
		case NB_OPTION_MAP_BETA_BELOW_ONE:
			map_error("beta");
			break;
		case NB_OPTION_MAP_CLASS_ALPHA_BELOW_ONE:
			map_error("class_alpha");
			break;
		case NB_OPTION_NORM_NOT_COMPLEMENT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("naive Bayes option \"norm\" needs kind \"complement\""),
					 errdetail("Weight normalization is defined for complement naive Bayes only.")));
			break;
		case NB_OPTION_NORM_NOT_SMOOTHED:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("naive Bayes option \"norm\" needs positive smoothing"),
					 errdetail("With alpha 0, or 1 under estimator \"map\", a complement probability can be 0 and its weight infinite.")));
			break;
		case NB_OPTION_DCM_NOT_SMOOTHED:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("naive Bayes kind \"dcm\" needs positive smoothing"),
					 errdetail("With alpha 0, or 1 under estimator \"map\", a token a class never saw has probability 0.")));
			break;
		case NB_OPTION_DCM_NO_BAG:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("naive Bayes kind \"dcm\" needs a model with a bag of tokens"),
					 errdetail("The Dirichlet compound multinomial is a model of token bags; this model has none.")));
			break;
		case NB_OPTION_DCM_NO_LENGTHS:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("naive Bayes kind \"dcm\" needs the document lengths of the model's bags"),
					 errdetail("The model was made before nbc kept document lengths (format version 3), or merged with or subtracted a model made before, or pruned of some of its bags' tokens."),
					 errhint("Train the model again from its rows.")));
			break;
		case NB_OPTION_TEMPERATURE_OUT_OF_RANGE:
			option_error("temperature", TEMPERATURE_DETAIL);
			break;
		case NB_OPTION_SIGMOID_OUT_OF_RANGE:
			option_error("sigmoid", SIGMOID_DETAIL);
			break;
		case NB_OPTION_CALIBRATION_COMPLEMENT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("complement naive Bayes has no probabilities to calibrate"),
					 errdetail("Options \"temperature\" and \"sigmoid\" apply to posterior probabilities; complement's scores only rank the classes.")));
			break;
		case NB_OPTION_COMPLEMENT_NOT_BAGS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("complement naive Bayes needs a model of token bags only"),
					 errdetail("The model has categorical, Gaussian or boolean features.")));
			break;
		case NB_OPTION_COMPLEMENT_COMPONENTS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("complement naive Bayes cannot score a model of mixture components"),
					 errdetail("A class's probability sums its components'; complement's scores are not probabilities.")));
			break;
	}
	elog(ERROR, "unexpected naive Bayes option status %d", (int) status);
}

/* The class a key of option's object names (an error if the model has none). */
static int64
named_class(const NbIndex *ix, const JsonbValue *key, const char *option)
{
	int64		c = nb_index_class(ix, key->val.string.val, key->val.string.len);

	if (c < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s names unrecognized class \"%s\"", option,
						nb_cut_str(key->val.string.val, key->val.string.len)),
				 errdetail("The model has no class with that label.")));
	return c;
}

static const double *
parse_class_prior(const JsonbValue *v, const NbIndex *ix, NbOptions *o)
{
	double	   *prior = palloc(sizeof(double) * ix->n_labels);
	bool	   *seen = palloc0(sizeof(bool) * ix->n_labels);
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	key;
	JsonbValue	val;

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		option_error("class_prior", CLASS_PRIOR_DETAIL);
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		int64		c;
		double		p;

		if (tok != WJB_KEY)
			continue;
		tok = JsonbIteratorNext(&it, &val, true);
		c = named_class(ix, &key, "class_prior");
		if (!nb_jsonb_number(&val, &p))
			option_error("class_prior", CLASS_PRIOR_DETAIL);
		if (nb_options_check_prior(p) != NB_OPTION_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid class_prior probability for class \"%s\"",
							nb_cut_str(key.val.string.val, key.val.string.len)),
					 errdetail("Probabilities must be finite and not negative.")));
		prior[c] = p;
		seen[c] = true;
	}
	for (uint32 c = 0; c < ix->n_labels; c++)
		if (!seen[c])
		{
			uint32		len;
			const char *label = nb_vocab_str(&ix->labels, c, &len);

			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("class_prior does not name class \"%s\"", nb_cut_str(label, len)),
					 errdetail("It must give a probability for every class.")));
		}
	check_option(nb_options_set_class_prior(o, prior, ix->n_labels));
	return prior;
}

/*
 * sigmoid: null (none) or {label: [a, b]}, of every class, or with two
 * classes of one of them (the other's probability is the complement).
 */
static void
parse_sigmoid(const JsonbValue *v, const NbIndex *ix, NbOptions *o)
{
	double	   *ab;
	uint32		named = 0;
	int64		only = NB_SIGMOID_EVERY_CLASS;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	key;
	JsonbValue	val;

	if (v->type == jbvNull)
	{
		o->calibration.sigmoid = NULL;
		return;
	}
	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		option_error("sigmoid", SIGMOID_DETAIL);
	if (ix->n_labels < 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes option \"sigmoid\" needs a model of at least two classes")));
	ab = palloc0(sizeof(double) * 2 * ix->n_labels);
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		int64		c;

		if (tok != WJB_KEY)
			continue;
		tok = JsonbIteratorNext(&it, &val, true);
		c = named_class(ix, &key, "sigmoid");
		if (!nb_jsonb_number_pair(&val, &ab[2 * c]))
			option_error("sigmoid", SIGMOID_DETAIL);
		named++;
		only = c;
	}
	if (ix->n_labels == 2 && named != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sigmoid of a model of two classes must name one class"),
				 errdetail("The other class's probability is the complement, as scikit-learn's binary calibration."),
				 errhint("Name the class last in byte order, whose sigmoid nb_calibrate fits.")));
	if (ix->n_labels > 2)
	{
		if (named != ix->n_labels)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("sigmoid must name every class of the model"),
					 errdetail("It names %u of %u classes.", named, ix->n_labels)));
		only = NB_SIGMOID_EVERY_CLASS;
	}
	check_option(nb_options_set_sigmoid(o, ab, ix->n_labels, only));
}

/* beta: [presence, absence] */
static void
parse_beta(const JsonbValue *v, NbOptions *o)
{
	double		b[2];

	if (!nb_jsonb_number_pair(v, b))
		option_error("beta", BETA_DETAIL);
	check_option(nb_options_set_beta(o, b[0], b[1]));
}

/* The options whose value is a number: what refuses another value, and what sets it. */
static const struct
{
	const char *name;
	const char *detail;
	NbOptionStatus (*set) (NbOptions *o, double x);
}			number_options[] = {
	{"alpha", RANGE_DETAIL, nb_options_set_alpha},
	{"var_smoothing", RANGE_DETAIL, nb_options_set_var_smoothing},
	{"class_alpha", RANGE_DETAIL, nb_options_set_class_alpha},
	{"temperature", TEMPERATURE_DETAIL, nb_options_set_temperature},
};

/* What nb_parse_options reads the options into. */
typedef struct ParseTarget
{
	const NbIndex *ix;
	NbOptions  *o;
} ParseTarget;

static void
parse_option(const char *name, const JsonbValue *val, void *arg)
{
	const NbIndex *ix = ((ParseTarget *) arg)->ix;
	NbOptions  *o = ((ParseTarget *) arg)->o;

	for (int i = 0; i < lengthof(number_options); i++)
		if (strcmp(name, number_options[i].name) == 0)
		{
			double		x;

			if (!nb_jsonb_number(val, &x))
				option_error(name, number_options[i].detail);
			check_option(number_options[i].set(o, x));
			return;
		}
	if (strcmp(name, "kind") == 0)
	{
		if (val->type != jbvString)
			option_error("kind", KIND_DETAIL);
		check_option(nb_options_set_kind(o, val->val.string.val, val->val.string.len));
	}
	else if (strcmp(name, "fit_prior") == 0)
	{
		if (val->type != jbvBool)
			option_error("fit_prior", BOOLEAN_DETAIL);
		nb_options_set_fit_prior(o, val->val.boolean);
	}
	else if (strcmp(name, "class_prior") == 0)
		parse_class_prior(val, ix, o);
	else if (strcmp(name, "estimator") == 0)
	{
		if (val->type != jbvString)
			option_error("estimator", ESTIMATOR_DETAIL);
		check_option(nb_options_set_estimator(o, val->val.string.val, val->val.string.len));
	}
	else if (strcmp(name, "beta") == 0)
		parse_beta(val, o);
	else if (strcmp(name, "norm") == 0)
	{
		if (val->type != jbvBool)
			option_error("norm", BOOLEAN_DETAIL);
		nb_options_set_norm(o, val->val.boolean);
	}
	else if (strcmp(name, "sigmoid") == 0)
		parse_sigmoid(val, ix, o);
	else if (nb_is_tokenizer_option(name) || strcmp(name, "tokenizer") == 0)
	{
		/*
		 * "tokenizer" itself gets an option of it as the example; nb_train,
		 * an aggregate, takes the tokenizer by position only
		 */
		const char *example = strcmp(name, "tokenizer") == 0 ? "ngram_range" : name;

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized naive Bayes option \"%s\"", name),
				 errdetail("\"%s\" is about tokenizing text, which the model does as it was trained to; these options are for scoring.", name),
				 errhint("Give the tokenizer's options at training, nb_train(label, body, '{\"%s\": ...}') or nb_cross_validate(..., tokenizer => '{\"%s\": ...}') (its grid takes tokenizers to compare as the key \"tokenizer\"), and score with the model it trains.", example, example)));
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized naive Bayes option \"%s\"", nb_cut_str(name, strlen(name))),
				 errhint("Valid options are kind, alpha, fit_prior, class_prior, var_smoothing, class_alpha, estimator, beta, norm, temperature and sigmoid.")));
}

void
nb_parse_options(Jsonb *options, const NbIndex *ix, NbOptions *o)
{
	ParseTarget target = {ix, o};
	NbModelTraits traits;

	nb_options_init(o);
	if (options == NULL)
		return;

	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes options must be a JSON object")));

	nb_jsonb_each_option(options, parse_option, &target);
	check_option(nb_options_check_set(o));
	traits = nb_scorer_model_traits(ix);
	check_option(nb_options_check_model(o, &traits));
}

/* The value with every number replaced by the shortest decimal of its float8 value. */
static JsonbValue *
canonical_numbers(JsonbContainer *container)
{
	JsonbParseState *state = NULL;
	JsonbIterator *it = JsonbIteratorInit(container);
	JsonbIteratorToken tok;
	JsonbValue	v;
	JsonbValue *result = NULL;

	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if ((tok == WJB_VALUE || tok == WJB_ELEM) && v.type == jbvNumeric)
			v.val.numeric = nb_float8_numeric(nb_numeric_to_double(v.val.numeric));
		result = pushJsonbValue(&state, tok, tok < WJB_BEGIN_ARRAY ? &v : NULL);
	}
	return result;
}

char *
nb_options_canonical(Jsonb *options, const NbIndex *index, uint32 *len)
{
	NbOptions	opts;
	Jsonb	   *canonical;
	char	   *text;

	nb_parse_options(options, index, &opts);
	canonical = nb_jsonb_finish(canonical_numbers(&options->root));
	text = JsonbToCString(NULL, &canonical->root, VARSIZE(canonical));
	*len = (uint32) strlen(text);
	return text;
}

Jsonb *
nb_stored_options_jsonb(const NbSettings *settings)
{
	char	   *text = pnstrdup(settings->options, settings->options_len);
	Jsonb	   *options = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));

	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("naive Bayes model's stored options are not a JSON object")));
	return options;
}

/* The stored options parsed as scoring parses them, in the current context. */
static void
parse_stored_options(const NbView *view)
{
	NbIndex		index;
	NbOptions	opts;

	nb_index_copy(&index, view, false);
	nb_parse_options(nb_stored_options_jsonb(&view->settings), &index, &opts);
}

void
nb_check_stored_options(const NbView *view, int sqlstate, const char *refusal, const char *hint)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext scratch;

	if (view->settings.options_len == 0)
		return;
	scratch = AllocSetContextCreate(caller, "nb stored options", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scratch);
	PG_TRY();
	{
		parse_stored_options(view);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		/* what the options are refused for: anything else (a cancel, no memory) goes on */
		if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_DATA_EXCEPTION &&
			edata->sqlerrcode != ERRCODE_DATA_CORRUPTED)
			PG_RE_THROW();
		FlushErrorState();
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("%s", refusal),
				 errdetail("The stored prediction options are invalid: %s.%s%s", edata->message,
						   edata->detail != NULL ? " " : "",
						   edata->detail != NULL ? edata->detail : ""),
				 hint != NULL ? errhint("%s", hint) : 0));
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(scratch);
}
