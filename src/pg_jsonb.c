/*
 * pg_jsonb.c — jsonb building helpers, see pg_jsonb.h; and the one place
 * nbc reads or writes PostgreSQL's private formats: numeric's stored form
 * (nb_numeric_to_double) and binary jsonb (nb_jsonb_finish writes it, the
 * object readers nb_jsonb_keep_keys .. nb_jsonb_read_numbers read it), each
 * where a public function measured too slow or not cancellable (see at
 * each).
 */
#include "pg_jsonb.h"

#include <math.h>

#include <stdlib.h>

#include "common/int.h"
#include "common/shortest_dec.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
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

void
nb_push_jsonb(JsonbParseState **state, Jsonb *value)
{
	JsonbValue	jv;

	jv.type = jbvBinary;
	jv.val.binary.data = &value->root;
	jv.val.binary.len = VARSIZE(value) - VARHDRSZ;
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

static uint32 write_jsonb_value(StringInfo buf, const JsonbValue *v, const NbJsonbTable *table);
static uint32 write_number_table(StringInfo buf, const NbJsonbTable *t);

/* A container being written: where it starts, its JEntries and its data. */
typedef struct ContainerWriter
{
	int			start;
	int			entries;
	int			data;
} ContainerWriter;

/* Begin a container of n children (2n for an object) at the end of buf. */
static void
container_begin(StringInfo buf, ContainerWriter *w, uint32 n, bool object)
{
	uint32		header = n | (object ? JB_FOBJECT : JB_FARRAY);
	int			children = object ? 2 * n : n;

	w->start = buf->len;
	pad_to_int(buf);
	appendBinaryStringInfo(buf, (char *) &header, sizeof(header));
	w->entries = buf->len;
	enlargeStringInfo(buf, sizeof(uint32) * children);
	buf->len += sizeof(uint32) * children;
	w->data = buf->len;
}

static void
check_container_size(uint32 size)
{
	if (size > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb object elements exceeds the maximum of %u bytes",
						JENTRY_OFFLENMASK)));
}

/* Child i's data was just written; entry is its type and length. */
static void
container_child(StringInfo buf, ContainerWriter *w, int i, uint32 entry)
{
	uint32		end = (uint32) (buf->len - w->data);

	check_container_size(end);
	if (i % JB_OFFSET_STRIDE == 0)
		entry = (entry & JENTRY_TYPEMASK) | end | JENTRY_HAS_OFF;
	memcpy(buf->data + w->entries + sizeof(uint32) * i, &entry, sizeof(entry));
}

/* The finished container's JEntry. */
static uint32
container_end(StringInfo buf, ContainerWriter *w)
{
	check_container_size((uint32) (buf->len - w->start));
	return JENTRY_ISCONTAINER | (uint32) (buf->len - w->start);
}

/*
 * Write an object's or an array's container at the end of buf; returns its
 * JEntry.
 */
static uint32
write_jsonb_container(StringInfo buf, const JsonbValue *v, const NbJsonbTable *table)
{
	bool		object = v->type == jbvObject;
	int			n = object ? v->val.object.nPairs : v->val.array.nElems;
	ContainerWriter w;

	container_begin(buf, &w, (uint32) n, object);
	for (int i = 0; i < (object ? 2 * n : n); i++)
	{
		const JsonbValue *child;

		if (object)
			child = i < n ? &v->val.object.pairs[i].key : &v->val.object.pairs[i - n].value;
		else
			child = &v->val.array.elems[i];
		CHECK_FOR_INTERRUPTS();
		container_child(buf, &w, i, write_jsonb_value(buf, child, table));
	}
	return container_end(buf, &w);
}

/* Write a value's data at the end of buf; returns its JEntry (type and length). */
static uint32
write_jsonb_value(StringInfo buf, const JsonbValue *v, const NbJsonbTable *table)
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
			return write_jsonb_container(buf, v, table);
		case jbvBinary:
			/* the placeholder of nb_jsonb_finish_table's table */
			if (v->val.binary.data != NULL || table == NULL)
				elog(ERROR, "unexpected jsonb container value");
			return write_number_table(buf, table);
		default:
			elog(ERROR, "unexpected jsonb value type %d", (int) v->type);
	}
	return 0;
}

Jsonb *
nb_jsonb_finish_table(JsonbValue *root, const NbJsonbTable *table)
{
	StringInfoData buf;

	if (root->type != jbvObject)
		elog(ERROR, "unexpected jsonb root type %d", (int) root->type);
	initStringInfo(&buf);
	buf.len = VARHDRSZ;
	(void) write_jsonb_container(&buf, root, table);
	SET_VARSIZE(buf.data, buf.len);
	return (Jsonb *) buf.data;
}

Jsonb *
nb_jsonb_finish(JsonbValue *root)
{
	return nb_jsonb_finish_table(root, NULL);
}

void
nb_jsonb_table_placeholder(JsonbValue *v)
{
	v->type = jbvBinary;
	v->val.binary.data = NULL;
	v->val.binary.len = 0;
}

/* Write key's bytes as child i of w. */
static void
write_key(StringInfo buf, ContainerWriter *w, int i, const char *key, uint32 len)
{
	appendBinaryStringInfo(buf, key, len);
	container_child(buf, w, i, JENTRY_ISSTRING | len);
}

/*
 * Write t's object of objects at the end of buf; returns its JEntry.  Each
 * row's numbers are made in a context reset after the row, so that the
 * table costs no more than its bytes in buf.
 */
static uint32
write_number_table(StringInfo buf, const NbJsonbTable *t)
{
	ContainerWriter outer;
	MemoryContext row_context;
	MemoryContext old;
	uint32		entry;

	row_context = AllocSetContextCreate(CurrentMemoryContext, "nb_jsonb number table row",
										ALLOCSET_SMALL_SIZES);
	container_begin(buf, &outer, t->n, true);
	for (uint32 i = 0; i < t->n; i++)
		write_key(buf, &outer, (int) i, t->keys[i], t->lens[i]);
	for (uint32 i = 0; i < t->n; i++)
	{
		ContainerWriter row;

		CHECK_FOR_INTERRUPTS();
		container_begin(buf, &row, t->n, true);
		for (uint32 j = 0; j < t->n; j++)
			write_key(buf, &row, (int) j, t->keys[j], t->lens[j]);
		old = MemoryContextSwitchTo(row_context);
		for (uint32 j = 0; j < t->n; j++)
		{
			Numeric		num = nb_float8_numeric(t->cell(i, j, t->arg));
			int			start = buf->len;

			pad_to_int(buf);
			appendBinaryStringInfo(buf, (char *) num, VARSIZE_ANY(num));
			container_child(buf, &row, (int) (t->n + j), JENTRY_ISNUMERIC | (uint32) (buf->len - start));
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(row_context);
		container_child(buf, &outer, (int) (t->n + i), container_end(buf, &row));
	}
	entry = container_end(buf, &outer);
	MemoryContextDelete(row_context);
	return entry;
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

bool
nb_jsonb_number_pair(const JsonbValue *v, double pair[2])
{
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	elem;
	int			n = 0;

	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data) ||
		JsonContainerSize(v->val.binary.data) != 2)
		return false;
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &elem, true)) != WJB_DONE)
		if (tok == WJB_ELEM && !nb_jsonb_number(&elem, &pair[n++]))
			return false;
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

/*
 * An object's pairs read from the binary jsonb format (utils/jsonb.h), as
 * JsonbIteratorNext reads them (PostgreSQL 15.18,
 * src/include/utils/jsonb.h lines 144-205: JEntry, JBE_ADVANCE_OFFSET,
 * JsonbContainer; src/backend/utils/adt/jsonb_util.c lines 503-544 and
 * 919-988: fillJsonbValue, the iterator's JBI_OBJECT_START, JBI_OBJECT_KEY
 * and JBI_OBJECT_VALUE states; the format is the one on disk, which
 * pg_upgrade keeps, the same in 16-18), for speed: nb_metrics reads an
 * object of probabilities per row, and JsonbIterator (an iterator
 * allocated per object, a call per key and per value, and the keys
 * compared one by one to know the row's classes) took 22-40% more of the
 * backend's CPU on its probability forms (test/bench/ab_metrics_keys.tsv,
 * results.md).  The
 * pg_regress test jsonb_objects compares what nb_metrics reads with
 * jsonb_each and numeric::float8 on random objects on every PostgreSQL
 * version the test command covers.
 *
 * An object of n pairs is its header word, n key JEntries, n value
 * JEntries, the keys' data, then the values' data (the layout above
 * nb_jsonb_finish); a JEntry with JENTRY_HAS_OFF holds the end offset of
 * its data, the others its length.  The keys kept for nb_jsonb_read_numbers
 * are n, the n key JEntries and the keys' data: the JEntries too, because
 * the same bytes may be split into other keys.  Equal keys written by
 * another placement of the offsets (jsonb.h allows one) only fail to
 * match, and are read again.
 */

/* The keys' data, which the values' data follows. */
static const char *
object_data(const JsonbContainer *jc, uint32 n)
{
	return (const char *) &jc->children[2 * n];
}

void
nb_jsonb_keep_keys(const Jsonb *obj, StringInfo kept)
{
	const JsonbContainer *jc = &obj->root;
	uint32		n = JsonContainerSize(jc);

	resetStringInfo(kept);
	appendBinaryStringInfo(kept, (const char *) &n, sizeof(uint32));
	appendBinaryStringInfo(kept, (const char *) jc->children, sizeof(JEntry) * n);
	/* the keys' data ends where the values' begins */
	appendBinaryStringInfo(kept, object_data(jc, n), getJsonbOffset(jc, n));
}

void
nb_jsonb_each_key(const Jsonb *obj, NbJsonbKey key, void *arg)
{
	const JsonbContainer *jc = &obj->root;
	uint32		n = JsonContainerSize(jc);
	const char *data = object_data(jc, n);
	uint32		end = 0;

	for (uint32 i = 0; i < n; i++)
	{
		uint32		start = end;

		JBE_ADVANCE_OFFSET(end, jc->children[i]);
		key(i, data + start, end - start, arg);
	}
}

const char *
nb_jsonb_key(const Jsonb *obj, uint32 i, uint32 *len)
{
	const JsonbContainer *jc = &obj->root;

	*len = getJsonbLength(jc, i);
	return object_data(jc, JsonContainerSize(jc)) + getJsonbOffset(jc, i);
}

/*
 * The length of the keys' data of obj when its keys are those kept, in the
 * same order; else -1.
 */
static int64
kept_keys_len(const JsonbContainer *jc, uint32 n, const StringInfoData *kept)
{
	Size		entries = sizeof(JEntry) * n;
	uint32		kept_n;
	Size		keys_len;

	if (kept->len < (int) (sizeof(uint32) + entries))
		return -1;
	memcpy(&kept_n, kept->data, sizeof(uint32));
	keys_len = kept->len - sizeof(uint32) - entries;
	if (kept_n != n || memcmp(kept->data + sizeof(uint32), jc->children, entries) != 0 ||
		memcmp(kept->data + sizeof(uint32) + entries, object_data(jc, n), keys_len) != 0)
		return -1;
	return (int64) keys_len;
}

bool
nb_jsonb_read_numbers(const Jsonb *obj, const StringInfoData *kept, double *values,
					  uint32 *numbers)
{
	const JsonbContainer *jc = &obj->root;
	uint32		n = JsonContainerSize(jc);
	const char *data = object_data(jc, n);
	int64		keys_len = kept_keys_len(jc, n, kept);
	/* the values' data follows the keys' */
	uint32		end = keys_len >= 0 ? (uint32) keys_len : getJsonbOffset(jc, n);

	*numbers = n;
	for (uint32 i = 0; i < n; i++)
	{
		JEntry		entry = jc->children[n + i];
		uint32		start = end;

		JBE_ADVANCE_OFFSET(end, entry);
		if (!JBE_ISNUMERIC(entry))
		{
			*numbers = i;
			break;
		}
		/* numbers start at a 4-byte boundary of the data */
		values[i] = nb_numeric_to_double((Numeric) (data + INTALIGN(start)));
	}
	return keys_len >= 0;
}
