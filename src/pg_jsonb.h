/*
 * pg_jsonb.h — small helpers for building jsonb results.
 */
#ifndef PG_JSONB_H
#define PG_JSONB_H

#include "postgres.h"

#include "utils/jsonb.h"

void		nb_push_key(JsonbParseState **state, const char *s, uint32 len);

/* A string value (NUL-terminated). */
void		nb_push_string(JsonbParseState **state, const char *s);

/* A float8 value, exactly: shortest round-trip digits, whatever extra_float_digits says. */
void		nb_push_float8(JsonbParseState **state, double v);

/* key: float8 */
void		nb_push_pair(JsonbParseState **state, const char *key, double v);

/*
 * JsonbValueToJsonb for a tree of objects, strings, numbers and nulls, with
 * cancellation points: the conversion of a large model's tree takes long.
 */
Jsonb	   *nb_jsonb_finish(JsonbValue *root);

/*
 * A JSON number as float8 (false if v is not a number).  Through strtod
 * rather than numeric_float8, so that a number beyond the range of float8
 * becomes infinity or 0, which an option's range check then refuses with
 * the option's own error, instead of a conversion error.
 */
bool		nb_jsonb_number(const JsonbValue *v, double *result);

#endif
