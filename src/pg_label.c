/*
 * pg_label.c — a row's class label as text, whatever the type of its column,
 * and how a message quotes a label.
 *
 * Labels are text in a model, in nb_predict's result and in nb_metrics, but
 * a label column is often integer (stars, a category id) or boolean.  The
 * aggregates that take a label have a second form with the label declared
 * anynonarray (text literals and text columns still choose the text form:
 * PostgreSQL prefers a string type for an unknown literal, and an exact
 * match for a text column), and this reads the label of either form.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "mb/pg_wchar.h"
#include "catalog/pg_type.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "pg_label.h"

/* How a label of a type other than text becomes text. */
typedef struct LabelCast
{
	Oid			type;			/* the argument's type */
	CoercionPathType path;
	FmgrInfo	fn;				/* the cast function, or the output function */
	short		nargs;			/* the cast function's arguments (1 to 3) */
} LabelCast;

/*
 * How a label of type becomes text (label::text): the path and *fn, the
 * cast function or, converted by I/O, the type's output function.
 */
static CoercionPathType
label_conversion(Oid type, Oid *fn)
{
	CoercionPathType path = find_coercion_pathway(TEXTOID, type, COERCION_EXPLICIT, fn);
	bool		varlena;

	if (path == COERCION_PATH_COERCEVIAIO)
		getTypeOutputInfo(type, fn, &varlena);
	return path;
}

static LabelCast *
label_cast(FunctionCallInfo fcinfo, Oid type, void **cache)
{
	LabelCast  *c = *cache;
	Oid			fn;

	if (c != NULL && c->type == type)
		return c;
	c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(LabelCast));
	c->type = type;
	c->path = label_conversion(type, &fn);
	/* every type that is not an array can be cast to text */
	if (c->path != COERCION_PATH_FUNC && c->path != COERCION_PATH_RELABELTYPE &&
		c->path != COERCION_PATH_COERCEVIAIO)
		elog(ERROR, "no cast from type %s to text", format_type_be(type));
	if (c->path != COERCION_PATH_RELABELTYPE)
		fmgr_info_cxt(fn, &c->fn, fcinfo->flinfo->fn_mcxt);
	if (c->path == COERCION_PATH_FUNC)
		c->nargs = (short) get_func_nargs(fn);
	*cache = c;
	return c;
}

/*
 * The declared type of argument arg of the function called.  Only for a
 * call without its expression (a direct fmgr call: Citus's
 * worker_partial_agg calls the transition functions so), which the type of
 * an anynonarray argument cannot be told from.
 */
static Oid
declared_arg_type(FunctionCallInfo fcinfo, int arg)
{
	HeapTuple	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(fcinfo->flinfo->fn_oid));
	Oid			type;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for function %u", fcinfo->flinfo->fn_oid);
	type = ((Form_pg_proc) GETSTRUCT(tuple))->proargtypes.values[arg];
	ReleaseSysCache(tuple);
	return type;
}

text *
nb_label_arg(FunctionCallInfo fcinfo, int arg, void **cache)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, arg);
	LabelCast  *c;
	Datum		value = PG_GETARG_DATUM(arg);

	if (type == TEXTOID)
		return PG_GETARG_TEXT_PP(arg);
	if (!OidIsValid(type))
	{
		if (declared_arg_type(fcinfo, arg) != TEXTOID)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot determine the type of the label"),
					 errdetail("The function was called without its call expression, as Citus's worker_partial_agg calls transition functions."),
					 errhint("Cast the label to text: label::text.")));
		return PG_GETARG_TEXT_PP(arg);
	}
	c = label_cast(fcinfo, type, cache);
	switch (c->path)
	{
		case COERCION_PATH_FUNC:
			/* a cast function's optional arguments: no typmod, explicit */
			if (c->nargs == 3)
				value = FunctionCall3(&c->fn, value, Int32GetDatum(-1), BoolGetDatum(true));
			else if (c->nargs == 2)
				value = FunctionCall2(&c->fn, value, Int32GetDatum(-1));
			else
				value = FunctionCall1(&c->fn, value);
			return DatumGetTextPP(value);
		case COERCION_PATH_RELABELTYPE:
			return DatumGetTextPP(value);
		default:
			return cstring_to_text(OutputFunctionCall(&c->fn, value));
	}
}

/*
 * Is fn an output function that PostgreSQL declares IMMUTABLE though it
 * reads a setting: float4's, float8's and the geometric types'
 * (extra_float_digits), bytea's (bytea_output)?
 */
static bool
output_reads_setting(Oid fn)
{
	static const Oid readers[] = {F_FLOAT4OUT, F_FLOAT8OUT, F_POINT_OUT, F_LSEG_OUT, F_LINE_OUT,
		F_BOX_OUT, F_PATH_OUT, F_POLY_OUT, F_CIRCLE_OUT, F_BYTEAOUT};

	for (int i = 0; i < lengthof(readers); i++)
		if (fn == readers[i])
			return true;
	return false;
}

bool
nb_label_text_is_fixed(Oid type)
{
	Oid			fn;

	switch (label_conversion(type, &fn))
	{
		case COERCION_PATH_RELABELTYPE:
			return true;
		case COERCION_PATH_FUNC:
			return func_volatile(fn) == PROVOLATILE_IMMUTABLE;
		case COERCION_PATH_COERCEVIAIO:
			return func_volatile(fn) == PROVOLATILE_IMMUTABLE && !output_reads_setting(fn);
		default:
			return false;
	}
}

char *
nb_cut_str(const char *s, size_t len)
{
	int			keep;
	char	   *result;

	if (len <= NB_QUOTE_BYTES)
		return pnstrdup(s, len);
	/* len > NB_QUOTE_BYTES: the bytes pg_mbcliplen may look at are there */
	keep = pg_mbcliplen(s, NB_QUOTE_BYTES + 1, NB_QUOTE_BYTES);
	result = palloc(keep + sizeof("..."));
	memcpy(result, s, keep);
	strcpy(result + keep, "...");
	return result;
}
