/*
 * pg_type.c — nb_model input/output: text (base64) and binary send/recv.
 *
 * Both forms carry exactly the serialized bytes of nb_format.h, so every
 * round trip is lossless, and both validate everything they are given.
 * Neither accepts a model beyond NB_MODEL_MAX_SIZE, the largest whose text
 * form fits in a value: every model nbc accepts can be dumped as text.
 *
 * Big values are encoded and decoded in chunks, with a check for a cancel
 * after each.  Input decodes straight into the new value; output reads a
 * big model stored without compression slice by slice.  Sizes are size_t
 * throughout; PostgreSQL's base64 functions take int lengths, which a chunk
 * never exceeds.
 */
#include "pg_model.h"

#include "access/detoast.h"
#include "common/base64.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "parser/scansup.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(nb_model_in);
PG_FUNCTION_INFO_V1(nb_model_out);
PG_FUNCTION_INFO_V1(nb_model_recv);
PG_FUNCTION_INFO_V1(nb_model_send);

/* PostgreSQL 18 declares the binary side of its base64 functions uint8 */
#if PG_VERSION_NUM >= 180000
typedef uint8 b64_byte;
#else
typedef char b64_byte;
#endif

/*
 * Bytes encoded and characters decoded per call: multiples of 3 and 4, so
 * that only the last chunk has padding; about a millisecond of work each.
 */
#define ENCODE_CHUNK ((size_t) 3 * 256 * 1024)
#define DECODE_CHUNK ((size_t) 4 * 256 * 1024)

/*
 * Decode the base64 text of chars characters (white space not counted) into
 * dst, which has room for exactly size bytes.  False if the text is not
 * base64 of exactly size bytes.
 */
static bool
decode_base64(const char *str, size_t chars, char *dst, size_t size)
{
	char	   *chunk = palloc(Min(chars, DECODE_CHUNK) + 1);
	size_t		done = 0;
	size_t		out = 0;

	while (done < chars)
	{
		size_t		n = 0;
		size_t		want;
		int			got;

		/* gather the next chunk's characters, leaving out white space */
		for (; n < DECODE_CHUNK && done + n < chars; str++)
			if (!scanner_isspace(*str))
				chunk[n++] = *str;
		done += n;
		/* only the last chunk may decode to fewer bytes: its padding */
		want = done < chars ? n / 4 * 3 : size - out;
		if (want > size - out)
			return false;
		got = pg_b64_decode(chunk, (int) n, (b64_byte *) (dst + out), (int) want);
		if (got < 0 || (size_t) got != want)
			return false;
		out += want;
		CHECK_FOR_INTERRUPTS();
	}
	return out == size;
}

Datum
nb_model_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	size_t		chars = 0;
	unsigned	padding = 0;
	uint64		size;
	struct varlena *result;
	NbView		view;

	/*
	 * Count the characters first, so that the value is allocated once, at its
	 * size; a cancel is checked once per chunk of text.
	 */
	for (const char *s = str; *s; s++)
	{
		if (!scanner_isspace(*s))
		{
			padding = *s == '=' ? padding + 1 : 0;
			chars++;
		}
		if ((s - str) % DECODE_CHUNK == DECODE_CHUNK - 1)
			CHECK_FOR_INTERRUPTS();
	}
	if (chars % 4 != 0 || padding > 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s", "nb_model"),
				 errdetail("The text form of a model is base64.")));
	size = nb_base64_decoded_len(chars, padding);
	if (size > NB_MODEL_MAX_SIZE)
		nb_report_too_large(size);

	result = palloc(VARHDRSZ + size);
	SET_VARSIZE(result, VARHDRSZ + size);
	if (!decode_base64(str, chars, VARDATA(result), size))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s", "nb_model"),
				 errdetail("The text form of a model is base64.")));
	nb_model_validate_bytes(VARDATA(result), size, &view,
							ERRCODE_INVALID_TEXT_REPRESENTATION, true);
	PG_RETURN_POINTER(result);
}

/*
 * The payload size of a value stored out of line without compression, whose
 * slices can be fetched one at a time; 0 for any other value.
 */
static size_t
stored_plain_size(struct varlena *value)
{
	struct varatt_external pointer;

	if (!VARATT_IS_EXTERNAL_ONDISK(value))
		return 0;
	VARATT_EXTERNAL_GET_POINTER(pointer, value);
	if (VARATT_EXTERNAL_IS_COMPRESSED(pointer))
		return 0;
	return VARATT_EXTERNAL_GET_EXTSIZE(pointer);
}

Datum
nb_model_out(PG_FUNCTION_ARGS)
{
	Datum		d = PG_GETARG_DATUM(0);
	size_t		size = stored_plain_size((struct varlena *) DatumGetPointer(d));
	struct varlena *flat = NULL;
	MemoryContext slices = NULL;
	size_t		len;
	size_t		pos = 0;
	char	   *out;

	/*
	 * A big model stored without compression (as most are: their counts do
	 * not compress) is encoded one slice at a time instead of being fetched
	 * whole, which would double the memory it takes.
	 */
	if (size > ENCODE_CHUNK)
		slices = AllocSetContextCreate(CurrentMemoryContext, "nb_model_out slices",
									   ALLOCSET_DEFAULT_SIZES);
	else
	{
		flat = PG_DETOAST_DATUM(d);
		size = VARSIZE(flat) - VARHDRSZ;
	}
	/* only a model stored before the limit existed can be larger */
	if (size > NB_MODEL_MAX_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("naive Bayes model of %zu bytes is too large for its text form", size),
				 errdetail("The text form of a model larger than %llu bytes would exceed the 1 GB limit of a value.",
						   (unsigned long long) NB_MODEL_MAX_SIZE),
				 errhint("Binary COPY can still copy it.")));
	len = nb_base64_len(size);
	out = palloc(len + 1);
	for (size_t off = 0; off < size; off += ENCODE_CHUNK)
	{
		size_t		n = Min(ENCODE_CHUNK, size - off);
		const char *data;
		int			w;

		if (slices != NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(slices);

			MemoryContextReset(slices);
			data = VARDATA(PG_DETOAST_DATUM_SLICE(d, (int32) off, (int32) n));
			MemoryContextSwitchTo(old);
		}
		else
			data = VARDATA(flat) + off;
		w = pg_b64_encode((const b64_byte *) data, (int) n, out + pos, (int) (len - pos));
		if (w < 0)
			elog(ERROR, "could not encode nb_model as base64");
		pos += w;
		CHECK_FOR_INTERRUPTS();
	}
	if (slices != NULL)
		MemoryContextDelete(slices);
	out[pos] = '\0';
	PG_RETURN_CSTRING(out);
}

Datum
nb_model_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	size_t		size = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, size);
	struct varlena *result;
	NbView		view;

	if (size > NB_MODEL_MAX_SIZE)
		nb_report_too_large(size);
	nb_model_validate_bytes(data, size, &view, ERRCODE_INVALID_BINARY_REPRESENTATION, true);
	result = palloc(size + VARHDRSZ);
	SET_VARSIZE(result, size + VARHDRSZ);
	memcpy(VARDATA(result), data, size);
	PG_RETURN_POINTER(result);
}

Datum
nb_model_send(PG_FUNCTION_ARGS)
{
	struct varlena *flat = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA(flat), VARSIZE(flat) - VARHDRSZ);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}
