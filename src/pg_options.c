/*
 * pg_options.c — parsing and validation of the prediction options.
 *
 *   kind         "multinomial" (default) | "bernoulli" | "complement"
 *   alpha        Lidstone smoothing, 0 <= alpha <= 1e100 (default 1)
 *   fit_prior    true (default): prior from the training documents;
 *                false: uniform
 *   class_prior  {label: p} for every class, p >= 0 finite, not all 0;
 *                normalized; takes precedence over fit_prior
 *   var_smoothing  Gaussian variance floor as a fraction of the largest
 *                feature variance, 0 <= var_smoothing <= 1e100 (default 1e-9)
 */
#include "pg_options.h"

#include <math.h>
#include <stdlib.h>

#include "utils/builtins.h"
#include "utils/numeric.h"

/* Larger alphas would overflow alpha * vocabulary to infinity. */
#define NB_MAX_ALPHA 1e100

static void
option_error(const char *option, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for naive Bayes option \"%s\"", option),
			 errdetail("%s", detail)));
}

/*
 * A JSON number as float8.  Through strtod rather than numeric_float8, so
 * that a number beyond the range of float8 becomes infinity (rejected by the
 * range checks with the option's own error) or 0, not a conversion error.
 */
static double
number_value(const JsonbValue *v, const char *option, const char *detail)
{
	char	   *digits;

	if (v->type != jbvNumeric)
		option_error(option, detail);
	digits = DatumGetCString(DirectFunctionCall1(numeric_out,
												 NumericGetDatum(v->val.numeric)));
	return strtod(digits, NULL);
}

static double *
parse_class_prior(const JsonbValue *v, const NbIndex *ix)
{
	const char *detail = "It must be an object mapping every class label to a probability.";
	double	   *prior = palloc(sizeof(double) * ix->n_classes);
	bool	   *seen = palloc0(sizeof(bool) * ix->n_classes);
	double		sum = 0;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	key;
	JsonbValue	val;

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		option_error("class_prior", detail);
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		int64		c;
		double		p;

		if (tok != WJB_KEY)
			continue;
		tok = JsonbIteratorNext(&it, &val, true);
		c = nb_index_class(ix, key.val.string.val, key.val.string.len);
		if (c < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("class_prior names unrecognized class \"%.*s\"",
							key.val.string.len, key.val.string.val),
					 errdetail("The model has no class with that label.")));
		p = number_value(&val, "class_prior", detail);
		if (!(p >= 0) || isinf(p))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid class_prior probability for class \"%.*s\"",
							key.val.string.len, key.val.string.val),
					 errdetail("Probabilities must be finite and not negative.")));
		prior[c] = p;
		seen[c] = true;
		sum += p;
	}
	for (uint32 c = 0; c < ix->n_classes; c++)
		if (!seen[c])
		{
			uint32		len;
			const char *label = nb_strmap_str(&ix->labels, c, &len);

			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("class_prior does not name class \"%.*s\"", (int) len, label),
					 errdetail("class_prior must give a probability for every class.")));
		}
	if (!(sum > 0) || isinf(sum))
		option_error("class_prior", "The probabilities must have a positive finite sum.");
	pfree(seen);
	return prior;
}

void
nb_parse_options(Jsonb *options, const NbIndex *ix, NbOptions *o)
{
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	key;
	JsonbValue	val;
	bool		fit_prior = true;

	o->kind = NB_MULTINOMIAL;
	o->alpha = 1.0;
	o->prior_mode = NB_PRIOR_FIT;
	o->class_prior = NULL;
	o->var_smoothing = 1e-9;
	if (options == NULL)
		return;

	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes options must be a JSON object")));

	it = JsonbIteratorInit(&options->root);
	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		char	   *name;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(key.val.string.val, key.val.string.len);
		tok = JsonbIteratorNext(&it, &val, true);

		if (strcmp(name, "kind") == 0)
		{
			const char *detail = "Valid kinds are \"multinomial\", \"bernoulli\" and \"complement\".";
			char	   *kind;

			if (val.type != jbvString)
				option_error(name, detail);
			kind = pnstrdup(val.val.string.val, val.val.string.len);
			if (strcmp(kind, "multinomial") == 0)
				o->kind = NB_MULTINOMIAL;
			else if (strcmp(kind, "bernoulli") == 0)
				o->kind = NB_BERNOULLI;
			else if (strcmp(kind, "complement") == 0)
				o->kind = NB_COMPLEMENT;
			else
				option_error(name, detail);
		}
		else if (strcmp(name, "alpha") == 0)
		{
			const char *detail = "alpha must be a number from 0 to 1e100.";

			o->alpha = number_value(&val, name, detail);
			if (!(o->alpha >= 0 && o->alpha <= NB_MAX_ALPHA))
				option_error(name, detail);
		}
		else if (strcmp(name, "fit_prior") == 0)
		{
			if (val.type != jbvBool)
				option_error(name, "fit_prior must be true or false.");
			fit_prior = val.val.boolean;
		}
		else if (strcmp(name, "class_prior") == 0)
			o->class_prior = parse_class_prior(&val, ix);
		else if (strcmp(name, "var_smoothing") == 0)
		{
			const char *detail = "var_smoothing must be a number from 0 to 1e100.";

			o->var_smoothing = number_value(&val, name, detail);
			if (!(o->var_smoothing >= 0 && o->var_smoothing <= NB_MAX_ALPHA))
				option_error(name, detail);
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unrecognized naive Bayes option \"%s\"", name),
					 errhint("Valid options are kind, alpha, fit_prior, class_prior and var_smoothing.")));
	}
	if (o->kind == NB_COMPLEMENT && !nb_index_only_bags(ix))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("complement naive Bayes needs a model of token bags only"),
				 errdetail("The model has categorical, Gaussian or boolean features.")));
	if (o->class_prior != NULL)
		o->prior_mode = NB_PRIOR_GIVEN;
	else if (!fit_prior)
		o->prior_mode = NB_PRIOR_UNIFORM;
}
