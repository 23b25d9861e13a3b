/*
 * pg_jsonb.c — jsonb building helpers, see pg_jsonb.h.
 */
#include "pg_jsonb.h"

#include "common/shortest_dec.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

void
nb_push_key(JsonbParseState **state, const char *s, uint32 len)
{
	JsonbValue	jv;

	jv.type = jbvString;
	jv.val.string.val = (char *) s;
	jv.val.string.len = len;
	pushJsonbValue(state, WJB_KEY, &jv);
}

void
nb_push_string(JsonbParseState **state, const char *s)
{
	JsonbValue	jv;

	jv.type = jbvString;
	jv.val.string.val = (char *) s;
	jv.val.string.len = strlen(s);
	pushJsonbValue(state, WJB_VALUE, &jv);
}

void
nb_push_float8(JsonbParseState **state, double v)
{
	char		buf[DOUBLE_SHORTEST_DECIMAL_LEN];
	JsonbValue	jv;

	double_to_shortest_decimal_buf(v, buf);
	jv.type = jbvNumeric;
	jv.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
														 CStringGetDatum(buf),
														 ObjectIdGetDatum(InvalidOid),
														 Int32GetDatum(-1)));
	pushJsonbValue(state, WJB_VALUE, &jv);
}

void
nb_push_pair(JsonbParseState **state, const char *key, double v)
{
	nb_push_key(state, key, strlen(key));
	nb_push_float8(state, v);
}
