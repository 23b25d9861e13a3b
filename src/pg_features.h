/*
 * pg_features.h — a row's features as token references, for training and
 * scoring alike.
 */
#ifndef PG_FEATURES_H
#define PG_FEATURES_H

#include "postgres.h"

#include "fmgr.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "nb_trainer.h"

/* The type of a row's features (argument 1). */
typedef enum NbFeatureInput
{
	NB_INPUT_ARRAY,
	NB_INPUT_TSVECTOR,
	NB_INPUT_JSONB,
	NB_INPUT_FLOAT8,
	NB_INPUT_TEXT				/* a document, tokenized with the model's tokenizer */
} NbFeatureInput;

/*
 * The C functions name_array, name_tsvector, name_jsonb, name_float8 and
 * name_text of an SQL function overloaded on its features' type, each
 * returning impl(fcinfo, its NbFeatureInput).
 */
#define NB_FEATURE_FUNCTIONS(name, impl) \
	NB_FEATURE_FUNCTION(name##_array, impl, NB_INPUT_ARRAY) \
	NB_FEATURE_FUNCTION(name##_tsvector, impl, NB_INPUT_TSVECTOR) \
	NB_FEATURE_FUNCTION(name##_jsonb, impl, NB_INPUT_JSONB) \
	NB_FEATURE_FUNCTION(name##_float8, impl, NB_INPUT_FLOAT8) \
	NB_FEATURE_FUNCTION(name##_text, impl, NB_INPUT_TEXT) \
	extern int	no_such_variable

#define NB_FEATURE_FUNCTION(fn, impl, input) \
	PG_FUNCTION_INFO_V1(fn); \
	Datum \
	fn(PG_FUNCTION_ARGS) \
	{ \
		return impl(fcinfo, input); \
	}

/*
 * A features array (text[] or float8[]) must have one dimension, or none
 * ('{}'): ERROR (2202E, as for an array of the wrong length) otherwise,
 * rather than scoring or training on its flattened elements.
 */
void		nb_check_feature_array(ArrayType *array);

/* Number of elements of a text[] (NULLs included): room needed by nb_array_tokens. */
static inline uint32
nb_array_size(ArrayType *tokens)
{
	return (uint32) ArrayGetNItems(ARR_NDIM(tokens), ARR_DIMS(tokens));
}

/*
 * The non-NULL elements of a text[], each counting once (a repeated token
 * repeats); returns how many.  The references point into the array.
 */
uint32		nb_array_tokens(ArrayType *tokens, NbTokenRef *refs);

/*
 * The same in pieces, so that memory does not grow with the row:
 * nb_array_tokens_next fills refs with the non-NULL ones among the next
 * max elements and returns how many.
 */
typedef struct NbArrayTokens
{
	bits8	   *nulls;
	char	   *p;
	uint32		i;
	uint32		n;
} NbArrayTokens;

void		nb_array_tokens_begin(NbArrayTokens *it, ArrayType *tokens);
uint32		nb_array_tokens_next(NbArrayTokens *it, NbTokenRef *refs, uint32 max);

static inline bool
nb_array_tokens_done(const NbArrayTokens *it)
{
	return it->i == it->n;
}

/*
 * The lexemes of a tsvector, each counting once per position (once if it
 * has none); returns how many (tsv->size).  The references point into tsv.
 */
uint32		nb_tsvector_tokens(TSVector tsv, NbTokenRef *refs);

/* Lexemes first .. first + n - 1 of a tsvector, as nb_tsvector_tokens. */
void		nb_tsvector_range(TSVector tsv, uint32 first, uint32 n, NbTokenRef *refs);

/*
 * What a jsonb features object holds, key by key (see nb_jsonb_features).
 * Each callback gets the key; values point into the jsonb.
 */
typedef struct NbJsonbVisitor
{
	void	   *arg;
	/* room for n token references, valid until the next call */
	NbTokenRef *(*reserve) (void *arg, uint32 n);
	void		(*bag) (void *arg, const char *key, uint32 key_len,
						const NbTokenRef *tokens, uint32 n);
	void		(*category) (void *arg, const char *key, uint32 key_len,
							 const char *value, uint32 len);
	void		(*real) (void *arg, const char *key, uint32 key_len, double x);
	void		(*boolean) (void *arg, const char *key, uint32 key_len, bool x);
} NbJsonbVisitor;

/*
 * Walk a jsonb features object: string -> category, number -> real,
 * boolean -> boolean, array of strings -> bag (each element counts once,
 * null elements are skipped), object {token: count} -> bag with those
 * counts (null or 0 counts are skipped), null -> nothing (missing).
 * Anything else is an ERROR (22023) that names the key.
 */
void		nb_jsonb_features(Jsonb *features, const NbJsonbVisitor *visitor);

/*
 * The elements of a float8[] (NULLs included) and their null flags, for
 * training and scoring; ERROR (22023) on NaN or infinity, or as
 * nb_check_feature_array says.
 */
void		nb_float8_features(ArrayType *array, double **values, bool **nulls, int *n);

#endif
