/*
 * pg_compare.c — equality, byte order and hashing of nb_model values: the
 * order of their bytes, without decompressing equal values, and without
 * pfree (a bump context may be current): src/README.md, "The model's
 * format".
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

/* f(v), allocating in detoast_context. */
static struct varlena *
in_private_context(struct varlena *(*f) (struct varlena *), struct varlena *v)
{
	MemoryContext old;

	if (detoast_context == NULL)
		detoast_context = AllocSetContextCreate(TopMemoryContext,
												"nb_model comparison",
												ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(detoast_context);
	v = f(v);
	MemoryContextSwitchTo(old);
	return v;
}

/* v as stored: fetched if out of line, still compressed if it was. */
static struct varlena *
fetched(struct varlena *v)
{
	return VARATT_IS_EXTERNAL(v) ? in_private_context(detoast_external_attr, v) : v;
}

/* v's bytes, decompressed if need be. */
static struct varlena *
plain(struct varlena *v)
{
	return VARATT_IS_EXTENDED(v) ? in_private_context(pg_detoast_datum_packed, v) : v;
}

static void
release_args(void)
{
	if (detoast_context != NULL)
		MemoryContextReset(detoast_context);
}

/* Two pointers to one value in a TOAST table. */
static bool
same_toast_value(struct varlena *a, struct varlena *b)
{
	struct varatt_external pa;
	struct varatt_external pb;

	if (!VARATT_IS_EXTERNAL_ONDISK(a) || !VARATT_IS_EXTERNAL_ONDISK(b))
		return false;
	VARATT_EXTERNAL_GET_POINTER(pa, a);
	VARATT_EXTERNAL_GET_POINTER(pb, b);
	return pa.va_valueid == pb.va_valueid && pa.va_toastrelid == pb.va_toastrelid;
}

/* Byte order: memcmp of the common prefix, then the shorter first. */
static int
compare_models(FunctionCallInfo fcinfo)
{
	struct varlena *a = (struct varlena *) PG_GETARG_POINTER(0);
	struct varlena *b = (struct varlena *) PG_GETARG_POINTER(1);
	Size		alen;
	Size		blen;
	int			c;

	if (same_toast_value(a, b))
		return 0;
	a = fetched(a);
	b = fetched(b);
	if (VARATT_IS_COMPRESSED(a) && VARATT_IS_COMPRESSED(b) &&
		VARSIZE(a) == VARSIZE(b) && memcmp(a, b, VARSIZE(a)) == 0)
	{
		release_args();
		return 0;
	}
	a = plain(a);
	b = plain(b);
	alen = VARSIZE_ANY_EXHDR(a);
	blen = VARSIZE_ANY_EXHDR(b);
	c = memcmp(VARDATA_ANY(a), VARDATA_ANY(b), Min(alen, blen));
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
	struct varlena *m = plain(fetched((struct varlena *) PG_GETARG_POINTER(0)));
	Datum		h = hash_any((const unsigned char *) VARDATA_ANY(m),
							 (int) VARSIZE_ANY_EXHDR(m));

	release_args();
	PG_RETURN_DATUM(h);
}

Datum
nb_model_hash_extended(PG_FUNCTION_ARGS)
{
	struct varlena *m = plain(fetched((struct varlena *) PG_GETARG_POINTER(0)));
	Datum		h = hash_any_extended((const unsigned char *) VARDATA_ANY(m),
									  (int) VARSIZE_ANY_EXHDR(m),
									  PG_GETARG_INT64(1));

	release_args();
	PG_RETURN_DATUM(h);
}
