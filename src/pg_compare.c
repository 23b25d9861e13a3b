/*
 * pg_compare.c — equality, byte order and hashing of nb_model values.
 *
 * Models are canonical (labels, features and items in byte order, every
 * count in one representation), so two models are equal exactly when their
 * serialized bytes are.  The order is that of the bytes (memcmp, then the
 * shorter first); it exists so that sorting, DISTINCT, GROUP BY, UNION and
 * merge joins work, and means nothing else.
 *
 * These functions may run while CurrentMemoryContext is a tuplesort's or a
 * hash table's bump context (PostgreSQL 17+), where pfree is not allowed:
 * a toasted argument is detoasted into a private context that is reset
 * after every call instead of being freed piecemeal.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "utils/memutils.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

PG_FUNCTION_INFO_V1(nb_model_eq);
PG_FUNCTION_INFO_V1(nb_model_ne);
PG_FUNCTION_INFO_V1(nb_model_lt);
PG_FUNCTION_INFO_V1(nb_model_le);
PG_FUNCTION_INFO_V1(nb_model_gt);
PG_FUNCTION_INFO_V1(nb_model_ge);
PG_FUNCTION_INFO_V1(nb_model_cmp);
PG_FUNCTION_INFO_V1(nb_model_hash);
PG_FUNCTION_INFO_V1(nb_model_hash_extended);

static MemoryContext detoast_context = NULL;

/* Argument n's bytes, detoasted into detoast_context if need be. */
static struct varlena *
model_arg(FunctionCallInfo fcinfo, int n)
{
	struct varlena *v = (struct varlena *) PG_GETARG_POINTER(n);
	MemoryContext old;

	if (!VARATT_IS_EXTENDED(v))
		return v;
	if (detoast_context == NULL)
		detoast_context = AllocSetContextCreate(TopMemoryContext,
												"nb_model comparison",
												ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(detoast_context);
	v = pg_detoast_datum_packed(v);
	MemoryContextSwitchTo(old);
	return v;
}

static void
release_args(void)
{
	if (detoast_context != NULL)
		MemoryContextReset(detoast_context);
}

/* Byte order: memcmp of the common prefix, then the shorter first. */
static int
compare_models(FunctionCallInfo fcinfo)
{
	struct varlena *a = model_arg(fcinfo, 0);
	struct varlena *b = model_arg(fcinfo, 1);
	Size		alen = VARSIZE_ANY_EXHDR(a);
	Size		blen = VARSIZE_ANY_EXHDR(b);
	int			c = memcmp(VARDATA_ANY(a), VARDATA_ANY(b), Min(alen, blen));

	if (c == 0)
		c = (alen > blen) - (alen < blen);
	else
		c = c > 0 ? 1 : -1;
	release_args();
	return c;
}

Datum
nb_model_eq(PG_FUNCTION_ARGS)
{
	/* models of different sizes differ: no need to detoast them */
	if (toast_raw_datum_size(PG_GETARG_DATUM(0)) != toast_raw_datum_size(PG_GETARG_DATUM(1)))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(compare_models(fcinfo) == 0);
}

Datum
nb_model_ne(PG_FUNCTION_ARGS)
{
	if (toast_raw_datum_size(PG_GETARG_DATUM(0)) != toast_raw_datum_size(PG_GETARG_DATUM(1)))
		PG_RETURN_BOOL(true);
	PG_RETURN_BOOL(compare_models(fcinfo) != 0);
}

Datum
nb_model_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_models(fcinfo) < 0);
}

Datum
nb_model_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_models(fcinfo) <= 0);
}

Datum
nb_model_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_models(fcinfo) > 0);
}

Datum
nb_model_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_models(fcinfo) >= 0);
}

Datum
nb_model_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(compare_models(fcinfo));
}

/* The hash of the serialized bytes, so that equal models hash alike. */
Datum
nb_model_hash(PG_FUNCTION_ARGS)
{
	struct varlena *m = model_arg(fcinfo, 0);
	Datum		h = hash_any((const unsigned char *) VARDATA_ANY(m),
							 (int) VARSIZE_ANY_EXHDR(m));

	release_args();
	PG_RETURN_DATUM(h);
}

Datum
nb_model_hash_extended(PG_FUNCTION_ARGS)
{
	struct varlena *m = model_arg(fcinfo, 0);
	Datum		h = hash_any_extended((const unsigned char *) VARDATA_ANY(m),
									  (int) VARSIZE_ANY_EXHDR(m),
									  PG_GETARG_INT64(1));

	release_args();
	PG_RETURN_DATUM(h);
}
