/*
 * pg_features.h — a row's features as token references, for training and
 * scoring alike.
 */
#ifndef PG_FEATURES_H
#define PG_FEATURES_H

#include "postgres.h"

#include "tsearch/ts_type.h"
#include "utils/array.h"

#include "nb_trainer.h"

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
 * The lexemes of a tsvector, each counting once per position (once if it
 * has none); returns how many (tsv->size).  The references point into tsv.
 */
uint32		nb_tsvector_tokens(TSVector tsv, NbTokenRef *refs);

#endif
