/*
 * pg_jsonb.h — small helpers for building jsonb results, and jsonb numbers as float8.
 */
#ifndef PG_JSONB_H
#define PG_JSONB_H

#include "postgres.h"

#include "utils/jsonb.h"
#include "utils/numeric.h"

void		nb_push_key(JsonbParseState **state, const char *s, uint32 len);

/*
 * The order of jsonb object keys: shorter first, then by bytes.  Keys given
 * in this order are not sorted again.
 */
static inline int
nb_jsonb_key_cmp(const char *a, uint32 a_len, const char *b, uint32 b_len)
{
	if (a_len != b_len)
		return a_len < b_len ? -1 : 1;
	return memcmp(a, b, a_len);
}

/* A string value (NUL-terminated). */
void		nb_push_string(JsonbParseState **state, const char *s);

/*
 * A float8 as the numeric of a jsonb number, exactly: its shortest
 * round-trip digits, whatever extra_float_digits says.
 */
Numeric		nb_float8_numeric(double v);

/* A float8 value, as nb_float8_numeric makes it. */
void		nb_push_float8(JsonbParseState **state, double v);

/* key: float8 */
void		nb_push_pair(JsonbParseState **state, const char *key, double v);

/*
 * JsonbValueToJsonb for a tree of objects (at the root), arrays, strings,
 * numbers, booleans and nulls, with
 * cancellation points: the conversion of a large model's tree takes long.
 */
Jsonb	   *nb_jsonb_finish(JsonbValue *root);

/*
 * A numeric as the nearest float8, as numeric_out and strtod give it (not
 * numeric_float8: a number beyond the range of float8 becomes infinity or
 * 0, which the caller's range check then refuses with its own error,
 * instead of a conversion error), but from numeric's digits, without the
 * text: the numbers of jsonb rows (probabilities, feature values, counts).
 */
double		nb_numeric_to_double(Numeric num);

/*
 * Each key of an options object and its value, in jsonb's key order, to
 * option(name, value, arg), name a NUL-terminated copy that lives until
 * option returns.  The caller checked that options is an object.
 */
typedef void (*NbJsonbOption) (const char *name, const JsonbValue *value, void *arg);

void		nb_jsonb_each_option(Jsonb *options, NbJsonbOption option, void *arg);

/* A JSON number as float8, as nb_numeric_to_double (false if v is not a number). */
bool		nb_jsonb_number(const JsonbValue *v, double *result);

#endif
