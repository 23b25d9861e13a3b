/*
 * pg_jsonb.h — small helpers for building jsonb results, and jsonb numbers as float8.
 */
#ifndef PG_JSONB_H
#define PG_JSONB_H

#include "postgres.h"

#include "lib/stringinfo.h"
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

/* A jsonb value (its tree copied in). */
void		nb_push_jsonb(JsonbParseState **state, Jsonb *value);

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
 * An object of n objects of numbers, all with the same n keys (given in
 * jsonb's key order, nb_jsonb_key_cmp, without repeats): outer key i's
 * object maps key j to cell(i, j, arg).  nb_jsonb_finish_table writes it,
 * row by row, where the tree holds the placeholder value
 * nb_jsonb_table_placeholder makes: a confusion matrix of thousands of
 * classes as a tree would take about 150 bytes a cell, written in place it
 * takes its 20.
 */
typedef double (*NbJsonbCell) (uint32 i, uint32 j, void *arg);

typedef struct NbJsonbTable
{
	uint32		n;
	const char *const *keys;
	const uint32 *lens;
	NbJsonbCell cell;
	void	   *arg;
} NbJsonbTable;

void		nb_jsonb_table_placeholder(JsonbValue *v);
Jsonb	   *nb_jsonb_finish_table(JsonbValue *root, const NbJsonbTable *table);

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

/* An array of two numbers into pair, as nb_jsonb_number (false if v is anything else). */
bool		nb_jsonb_number_pair(const JsonbValue *v, double pair[2]);

/*
 * The pairs of a jsonb object read from jsonb's binary form, for rows of
 * many such objects (nb_metrics' probabilities; pg_jsonb.c says why not
 * JsonbIterator).  obj is an object (JB_ROOT_IS_OBJECT) of n pairs
 * (JB_ROOT_COUNT), its keys in jsonb's order: shorter first, then by bytes.
 */

/* obj's keys into kept (reset first), for nb_jsonb_read_numbers. */
void		nb_jsonb_keep_keys(const Jsonb *obj, StringInfo kept);

/* Each key of obj in order, to key(i, bytes, length, arg); the bytes are obj's. */
typedef void (*NbJsonbKey) (uint32 i, const char *key, uint32 len, void *arg);

void		nb_jsonb_each_key(const Jsonb *obj, NbJsonbKey key, void *arg);

/* Key i of obj: its bytes (obj's) and *len. */
const char *nb_jsonb_key(const Jsonb *obj, uint32 i, uint32 *len);

/*
 * The values of obj in order into values, as nb_numeric_to_double reads
 * them, up to the first that is not a number (*numbers: how many were);
 * true when obj has the keys kept (by nb_jsonb_keep_keys; kept may be
 * zeroed: none), in the same order.
 */
bool		nb_jsonb_read_numbers(const Jsonb *obj, const StringInfoData *kept, double *values,
								  uint32 *numbers);

#endif
