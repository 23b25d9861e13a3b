/*
 * pg_jsonb.c — jsonb building helpers, see pg_jsonb.h; and the one place
 * nbc reads or writes PostgreSQL's private formats: numeric's stored form
 * (nb_numeric_to_double) and binary jsonb (nb_jsonb_finish), each where a
 * public function measured too slow or not cancellable (see at each).
 */
#include "pg_jsonb.h"

#include <math.h>

#include <stdlib.h>

#include "common/int.h"
#include "common/shortest_dec.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "nb_decimal.h"

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

/*
 * numeric's stored form, which numeric.c keeps to itself (PostgreSQL 15.18,
 * src/backend/utils/adt/numeric.c lines 134-250: struct NumericShort and
 * NumericLong, NUMERIC_SIGN_MASK .. NUMERIC_WEIGHT; the same in 16-18, and
 * pg_upgrade keeps it stable): the top two bits of the first 16-bit word
 * tell the form; the short form holds the sign, display scale and weight in
 * the rest, the long form the sign and display scale, a 16-bit weight
 * following; then the base-10000 digits, most significant first.  Only
 * nb_numeric_to_double reads it (numbers of jsonb rows: an A/B against
 * numeric_float8_no_overflow, which goes through numeric_out and strtod,
 * measured training on jsonb numbers 2.18x slower and scoring 2.06x); the
 * pg_regress test jsonb_numbers compares it with numeric::float8 on random
 * values on every PostgreSQL version the test command covers.
 */
#define NB_NUMERIC_FORM_MASK	0xC000
#define NB_NUMERIC_LONG_NEG	0x4000	/* a long form, negative (0x0000: positive) */
#define NB_NUMERIC_SHORT		0x8000
#define NB_NUMERIC_SPECIAL		0xC000	/* NaN and infinities */
#define NB_NUMERIC_SHORT_NEG	0x2000
#define NB_NUMERIC_SHORT_WEIGHT_NEG 0x0040
#define NB_NUMERIC_SHORT_WEIGHT_MASK 0x003F

Numeric
nb_float8_numeric(double v)
{
	char		buf[DOUBLE_SHORTEST_DECIMAL_LEN];
	int			len;

	/* JSON has no NaN or infinity: such a value could be neither read back nor restored */
	if (!isfinite(v))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("naive Bayes result is out of range"),
				 errdetail("A number of the jsonb result would be %s, which JSON cannot hold.",
						   isnan(v) ? "NaN" : v > 0 ? "infinity" : "minus infinity"),
				 errhint("Counts or weights this large overflow float8; scale them down.")));
	len = double_to_shortest_decimal_bufn(v, buf);
	buf[len] = '\0';
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
}

void
nb_push_float8(JsonbParseState **state, double v)
{
	JsonbValue	jv;

	jv.type = jbvNumeric;
	jv.val.numeric = nb_float8_numeric(v);
	pushJsonbValue(state, WJB_VALUE, &jv);
}

void
nb_push_pair(JsonbParseState **state, const char *key, double v)
{
	nb_push_key(state, key, strlen(key));
	nb_push_float8(state, v);
}

/*
 * The binary jsonb format (utils/jsonb.h) written directly, as
 * JsonbValueToJsonb writes it (PostgreSQL 15.18,
 * src/backend/utils/adt/jsonb_util.c lines 1529-1870: padBufferToInt,
 * convertToJsonb, convertJsonbValue, convertJsonbArray, convertJsonbObject,
 * convertJsonbScalar), for one reason: cancellation.  JsonbValueToJsonb has
 * no cancellation point, and the tree of a large model (the cast to jsonb)
 * takes it a second or more: cancel.py measured 1096 ms from a cancel to the
 * error with it, 4.5 ms with this writer.  For speed alone it would not stay
 * (an A/B measured the two within 8% on every jsonb result).  The pg_regress
 * test jsonb_numbers compares its results with the same values read back
 * from their text.
 *
 * A container is a header word (count and kind), a JEntry per child (for
 * objects the keys, then the values), then the children's data in the same
 * order.  A JEntry holds the child's type and the length of its data,
 * except every JB_OFFSET_STRIDE'th, which holds the end offset of its data
 * (from the start of the container's data) instead.  Numbers and containers
 * start at 4-byte boundaries of the whole value; the padding before them
 * counts as part of their data.
 */
static void
pad_to_int(StringInfo buf)
{
	static const char zeros[3] = {0, 0, 0};
	int			pad = INTALIGN(buf->len) - buf->len;

	appendBinaryStringInfo(buf, zeros, pad);
}

static uint32 write_jsonb_value(StringInfo buf, const JsonbValue *v);

/*
 * Write an object's or an array's container at the end of buf; returns its
 * JEntry.
 */
static uint32
write_jsonb_container(StringInfo buf, const JsonbValue *v)
{
	bool		object = v->type == jbvObject;
	int			n = object ? v->val.object.nPairs : v->val.array.nElems;
	int			children = object ? 2 * n : n;
	int			start = buf->len;
	uint32		header = (uint32) n | (object ? JB_FOBJECT : JB_FARRAY);
	int			entries;
	int			data;

	pad_to_int(buf);
	appendBinaryStringInfo(buf, (char *) &header, sizeof(header));
	entries = buf->len;
	enlargeStringInfo(buf, sizeof(uint32) * children);
	buf->len += sizeof(uint32) * children;
	data = buf->len;
	for (int i = 0; i < children; i++)
	{
		const JsonbValue *child;
		uint32		entry;
		uint32		end;

		if (object)
			child = i < n ? &v->val.object.pairs[i].key : &v->val.object.pairs[i - n].value;
		else
			child = &v->val.array.elems[i];
		CHECK_FOR_INTERRUPTS();
		entry = write_jsonb_value(buf, child);
		end = (uint32) (buf->len - data);
		if (end > JENTRY_OFFLENMASK)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("total size of jsonb object elements exceeds the maximum of %u bytes",
							JENTRY_OFFLENMASK)));
		if (i % JB_OFFSET_STRIDE == 0)
			entry = (entry & JENTRY_TYPEMASK) | end | JENTRY_HAS_OFF;
		memcpy(buf->data + entries + sizeof(uint32) * i, &entry, sizeof(entry));
	}
	if (buf->len - start > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb object elements exceeds the maximum of %u bytes",
						JENTRY_OFFLENMASK)));
	return JENTRY_ISCONTAINER | (uint32) (buf->len - start);
}

/* Write a value's data at the end of buf; returns its JEntry (type and length). */
static uint32
write_jsonb_value(StringInfo buf, const JsonbValue *v)
{
	int			start = buf->len;

	switch (v->type)
	{
		case jbvString:
			appendBinaryStringInfo(buf, v->val.string.val, v->val.string.len);
			return JENTRY_ISSTRING | (uint32) v->val.string.len;
		case jbvNull:
			return JENTRY_ISNULL;
		case jbvBool:
			return v->val.boolean ? JENTRY_ISBOOL_TRUE : JENTRY_ISBOOL_FALSE;
		case jbvNumeric:
			pad_to_int(buf);
			appendBinaryStringInfo(buf, (char *) v->val.numeric, VARSIZE_ANY(v->val.numeric));
			return JENTRY_ISNUMERIC | (uint32) (buf->len - start);
		case jbvObject:
		case jbvArray:
			return write_jsonb_container(buf, v);
		default:
			elog(ERROR, "unexpected jsonb value type %d", (int) v->type);
	}
	return 0;
}

Jsonb *
nb_jsonb_finish(JsonbValue *root)
{
	StringInfoData buf;

	if (root->type != jbvObject)
		elog(ERROR, "unexpected jsonb root type %d", (int) root->type);
	initStringInfo(&buf);
	buf.len = VARHDRSZ;
	(void) write_jsonb_container(&buf, root);
	SET_VARSIZE(buf.data, buf.len);
	return (Jsonb *) buf.data;
}

/*
 * The number's base-10000 digits are read from its stored form (the header
 * above, then the digits, most significant first) and nb_decimal_to_double
 * rounds them.  Anything else (NaN, infinities, more digits than 64 bits
 * hold) goes through numeric_float8_no_overflow, which is numeric_out and
 * strtod.
 */
double
nb_numeric_to_double(Numeric num)
{
	const char *data = VARDATA_ANY(num);
	Size		size = VARSIZE_ANY_EXHDR(num);
	uint16		header;
	bool		negative;
	int			weight;
	Size		first;
	uint64		digits = 0;
	int			ndigits;
	int			i0 = 0;
	int			zeros = 0;
	double		magnitude;

	if (size < sizeof(uint16))
		goto slow;
	memcpy(&header, data, sizeof(uint16));
	if ((header & NB_NUMERIC_FORM_MASK) == NB_NUMERIC_SHORT)
	{
		negative = (header & NB_NUMERIC_SHORT_NEG) != 0;
		weight = (header & NB_NUMERIC_SHORT_WEIGHT_NEG ? ~NB_NUMERIC_SHORT_WEIGHT_MASK : 0) |
			(header & NB_NUMERIC_SHORT_WEIGHT_MASK);
		first = sizeof(uint16);
	}
	else if ((header & NB_NUMERIC_FORM_MASK) != NB_NUMERIC_SPECIAL)
	{
		int16		w;

		/* long: the weight follows the header */
		if (size < 2 * sizeof(uint16))
			goto slow;
		negative = (header & NB_NUMERIC_FORM_MASK) == NB_NUMERIC_LONG_NEG;
		memcpy(&w, data + sizeof(uint16), sizeof(int16));
		weight = w;
		first = 2 * sizeof(uint16);
	}
	else
		goto slow;
	ndigits = (int) ((size - first) / sizeof(int16));
	if (ndigits >= 4)
	{
		/* four digits fit in 64 bits: two independent products, not a chain of four */
		uint16		q[4];

		memcpy(q, data + first, sizeof(q));
		if (q[0] > 9999 || q[1] > 9999 || q[2] > 9999 || q[3] > 9999)
			goto slow;
		digits = ((uint64) q[0] * 10000 + q[1]) * 100000000 + ((uint64) q[2] * 10000 + q[3]);
		i0 = 4;
	}
	for (int i = i0; i < ndigits; i++)
	{
		int16		d;
		uint64		scale = 10000;

		memcpy(&d, data + first + i * sizeof(int16), sizeof(int16));
		if (d < 0 || d > 9999)
			goto slow;

		/*
		 * The last digit without its trailing zeros when 64 bits cannot hold
		 * all its places (17 significant digits and up to 3 zeros): the test
		 * is cheaper than the division, and most numbers need no stripping.
		 */
		if (i == ndigits - 1 && d != 0 && digits > (PG_UINT64_MAX - 9999) / 10000)
		{
			static const uint64 scale_of[4] = {10000, 1000, 100, 10};

			d = (int16) nb_decimal_strip_zeros((uint32) d, &zeros);
			scale = scale_of[zeros];
		}
		if (pg_mul_u64_overflow(digits, scale, &digits) ||
			pg_add_u64_overflow(digits, (uint64) d, &digits))
			goto slow;
	}
	magnitude = nb_decimal_to_double(digits, 4 * (weight - (ndigits - 1)) + zeros);
	return negative ? -magnitude : magnitude;

slow:
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, NumericGetDatum(num)));
}

bool
nb_jsonb_number(const JsonbValue *v, double *result)
{
	if (v->type != jbvNumeric)
		return false;
	*result = nb_numeric_to_double(v->val.numeric);
	return true;
}

void
nb_jsonb_each_option(Jsonb *options, NbJsonbOption option, void *arg)
{
	JsonbIterator *it = JsonbIteratorInit(&options->root);
	JsonbIteratorToken tok;
	JsonbValue	key;
	JsonbValue	val;

	while ((tok = JsonbIteratorNext(&it, &key, true)) != WJB_DONE)
	{
		char	   *name;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(key.val.string.val, key.val.string.len);
		(void) JsonbIteratorNext(&it, &val, true);
		option(name, &val, arg);
		pfree(name);
	}
}
