/*
 * pg_features.c — a row's features, from text[], tsvector, jsonb or
 * float8[], in the form the model code takes.
 */
#include "pg_features.h"

#include <math.h>

#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/numeric.h"

#include "nb_interrupt.h"
#include "pg_jsonb.h"
#include "pg_label.h"

void
nb_check_feature_array(ArrayType *array)
{
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("naive Bayes features must be a one-dimensional array"),
				 errdetail("The array has %d dimensions.", ARR_NDIM(array))));
}

/*
 * A walk over the flat array's elements as text (varlena, int alignment),
 * without array_iter_next's general case: it is a good part of the work
 * per token in training and scoring.
 */
void
nb_array_tokens_begin(NbArrayTokens *it, ArrayType *tokens)
{
	it->nulls = ARR_NULLBITMAP(tokens);
	it->p = ARR_DATA_PTR(tokens);
	it->i = 0;
	it->n = nb_array_size(tokens);
}

uint32
nb_array_tokens_next(NbArrayTokens *it, NbTokenRef *refs, uint32 max)
{
	uint32		end = it->n - it->i < max ? it->n : it->i + max;
	char	   *p = it->p;
	uint32		used = 0;

	for (uint32 i = it->i; i < end; i++)
	{
		nb_interrupt_at(i);
		if (it->nulls != NULL && !(it->nulls[i / 8] & (1 << (i % 8))))
			continue;
		refs[used].str = VARDATA_ANY(p);
		refs[used].len = VARSIZE_ANY_EXHDR(p);
		refs[used].count = 1;
		used++;
		p = att_addlength_pointer(p, -1, p);
		p = (char *) att_align_nominal(p, TYPALIGN_INT);
	}
	it->p = p;
	it->i = end;
	return used;
}

uint32
nb_array_tokens(ArrayType *tokens, NbTokenRef *refs)
{
	NbArrayTokens it;

	nb_array_tokens_begin(&it, tokens);
	return nb_array_tokens_next(&it, refs, it.n);
}

void
nb_tsvector_range(TSVector tsv, uint32 first, uint32 n, NbTokenRef *refs)
{
	WordEntry  *entries = ARRPTR(tsv);
	char	   *lexemes = STRPTR(tsv);

	for (uint32 i = 0; i < n; i++)
	{
		WordEntry  *e = &entries[first + i];
		int			npos = e->haspos ? POSDATALEN(tsv, e) : 0;

		nb_interrupt_at(i);
		refs[i].str = lexemes + e->pos;
		refs[i].len = e->len;
		refs[i].count = npos > 0 ? npos : 1;
	}
}

uint32
nb_tsvector_tokens(TSVector tsv, NbTokenRef *refs)
{
	nb_tsvector_range(tsv, 0, tsv->size, refs);
	return tsv->size;
}

/* detail: a string literal, so that it is translated as written */
#define feature_error(key, key_len, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("invalid value for naive Bayes feature \"%s\"", nb_cut_str((key), (key_len))), \
			 errdetail(detail)))

/* A bag given as an array of strings or an object {token: count}. */
static void
visit_bag(const NbJsonbVisitor *v, const char *key, uint32 key_len, JsonbValue *container)
{
	JsonbContainer *jc = container->val.binary.data;
	uint32		n = JsonContainerSize(jc);
	NbTokenRef *refs = v->reserve(v->arg, n);
	uint32		used = 0;
	JsonbIterator *it = JsonbIteratorInit(jc);
	JsonbIteratorToken tok;
	JsonbValue	elem;
	JsonbValue	token;
	uint64		elements = 0;

	while ((tok = JsonbIteratorNext(&it, &elem, true)) != WJB_DONE)
	{
		nb_interrupt_at(elements++);
		if (tok == WJB_ELEM)
		{
			if (elem.type == jbvNull)
				continue;
			if (elem.type != jbvString)
				feature_error(key, key_len, "An array feature is a bag of tokens: its elements must be strings.");
			refs[used].str = elem.val.string.val;
			refs[used].len = elem.val.string.len;
			refs[used].count = 1;
			used++;
		}
		else if (tok == WJB_KEY)
		{
			token = elem;
			tok = JsonbIteratorNext(&it, &elem, true);
			if (elem.type == jbvNull)
				continue;
			if (elem.type != jbvNumeric)
				feature_error(key, key_len, "An object feature is a bag of tokens: its values must be counts.");
			refs[used].count = nb_numeric_to_double(elem.val.numeric);
			if (!(refs[used].count >= 0) || isinf(refs[used].count))
				feature_error(key, key_len, "Token counts must be finite and not negative.");
			if (refs[used].count == 0)
				continue;
			refs[used].str = token.val.string.val;
			refs[used].len = token.val.string.len;
			used++;
		}
	}
	v->bag(v->arg, key, key_len, refs, used);
}

void
nb_jsonb_features(Jsonb *features, const NbJsonbVisitor *v)
{
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	key;
	JsonbValue	val;
	uint64		keys = 0;

	if (!JB_ROOT_IS_OBJECT(features) || JB_ROOT_IS_SCALAR(features))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("naive Bayes features must be a JSON object"),
				 errdetail("Keys name features; a value is a string (categorical), a number (Gaussian), a boolean, or an array or object of tokens.")));

	it = JsonbIteratorInit(&features->root);
	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		const char *k;
		uint32		klen;

		if (tok != WJB_KEY)
			continue;
		nb_interrupt_at(keys++);
		k = key.val.string.val;
		klen = key.val.string.len;
		(void) JsonbIteratorNext(&it, &val, true);
		switch (val.type)
		{
			case jbvNull:
				break;
			case jbvString:
				v->category(v->arg, k, klen, val.val.string.val, val.val.string.len);
				break;
			case jbvNumeric:
				{
					double		x = nb_numeric_to_double(val.val.numeric);

					if (isinf(x))
						feature_error(k, klen, "Numbers must be within the range of double precision.");
					v->real(v->arg, k, klen, x);
				}
				break;
			case jbvBool:
				v->boolean(v->arg, k, klen, val.val.boolean);
				break;
			case jbvBinary:
				visit_bag(v, k, klen, &val);
				break;
			default:
				elog(ERROR, "unexpected jsonb value type %d", (int) val.type);
		}
	}
}

void
nb_float8_features(ArrayType *array, double **values, bool **nulls, int *n)
{
	Datum	   *datums;

	if (ARR_ELEMTYPE(array) != FLOAT8OID)
		elog(ERROR, "expected a float8[]");
	nb_check_feature_array(array);
	deconstruct_array(array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &datums, nulls, n);
	*values = (double *) palloc(sizeof(double) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		double		x = (*nulls)[i] ? 0 : DatumGetFloat8(datums[i]);

		nb_interrupt_at(i);
		if (isnan(x) || isinf(x))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid naive Bayes feature value: %s", float8out_internal(x)),
					 errdetail("Element %d of the float8[] is not a finite number; use NULL for a missing value.",
							   i + 1)));
		(*values)[i] = x;
	}
	pfree(datums);
}
