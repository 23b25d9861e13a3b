/*
 * pg_type.c — nb_model input/output: text (base64) and binary send/recv,
 * both exactly the bytes of nb_format.h, both validating everything they
 * are given, neither accepting a model beyond NB_MODEL_MAX_SIZE (so that
 * every model nbc accepts can be dumped as text).  Called by an aggregate
 * (a Citus partial state), the outputs write the packed form (nb_pack.h),
 * which both inputs take.  Big values go in chunks (src/README.md, "The
 * model's format").
 */
#include "pg_model.h"

#include "access/detoast.h"
#include "common/base64.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "parser/scansup.h"
#include "utils/memutils.h"

#include "nb_interrupt.h"
#include "nb_pack.h"

PG_FUNCTION_INFO_V1(nb_model_in);
PG_FUNCTION_INFO_V1(nb_model_out);
PG_FUNCTION_INFO_V1(nb_model_recv);
PG_FUNCTION_INFO_V1(nb_model_send);
PG_FUNCTION_INFO_V1(nb_model_from_text);
PG_FUNCTION_INFO_V1(nb_model_to_text);

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
 * Bytes read in chunks, the base64 text of a model or a model to encode: in
 * memory (mem), or a value stored out of line without compression (as most
 * big models are: their counts do not compress), fetched one slice at a
 * time (mem NULL), so that reading it neither doubles the memory it takes
 * nor runs long without a check for a cancel.
 */
typedef struct Source
{
	const char *mem;
	Datum		stored;
	size_t		len;
	MemoryContext slices;
} Source;

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

/* Open the varlena datum d, to be read in slices if it is stored plain and longer than chunk. */
static void
source_open(Source *src, Datum d, size_t chunk)
{
	struct varlena *v;

	src->stored = d;
	src->len = stored_plain_size((struct varlena *) DatumGetPointer(d));
	src->mem = NULL;
	src->slices = NULL;
	if (src->len > chunk)
	{
		src->slices = AllocSetContextCreate(CurrentMemoryContext, "nb_model slices",
											ALLOCSET_DEFAULT_SIZES);
		return;
	}
	v = PG_DETOAST_DATUM_PACKED(d);
	src->mem = VARDATA_ANY(v);
	src->len = VARSIZE_ANY_EXHDR(v);
}

static void
source_close(Source *src)
{
	if (src->slices != NULL)
		MemoryContextDelete(src->slices);
}

/* Bytes off .. off + *n - 1 of the source, *n at most chunk. */
static const char *
source_piece(const Source *src, size_t off, size_t chunk, size_t *n)
{
	MemoryContext old;
	const char *piece;

	*n = Min(chunk, src->len - off);
	if (src->mem != NULL)
		return src->mem + off;
	old = MemoryContextSwitchTo(src->slices);
	MemoryContextReset(src->slices);
	piece = VARDATA(PG_DETOAST_DATUM_SLICE(src->stored, (int32) off, (int32) *n));
	MemoryContextSwitchTo(old);
	return piece;
}

/*
 * What each character is in base64 text: its 6-bit value (0..63), or one of
 * these.  A table, so that the characters of a model of many megabytes (32
 * of them combined on a Citus coordinator) each cost a load, not calls.
 */
#define B64_SPACE 64			/* white space, skipped */
#define B64_PAD 65				/* '=' */
#define B64_BAD 66

static uint8 b64_class[256];

static const uint8 *
b64_classes(void)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	if (b64_class['='] != B64_PAD)
	{
		for (int c = 0; c < 256; c++)
			b64_class[c] = scanner_isspace((char) c) ? B64_SPACE : B64_BAD;
		for (int i = 0; i < 64; i++)
			b64_class[(unsigned char) digits[i]] = (uint8) i;
		b64_class['='] = B64_PAD;
	}
	return b64_class;
}

/* Decoding in progress: dst has room for exactly size bytes, out written. */
typedef struct B64Decoder
{
	const uint8 *cls;
	unsigned char *dst;
	size_t		size;
	size_t		out;
	uint32		acc;			/* the 6-bit values of a quantum begun */
	int			n;				/* how many */
	int			padding;
} B64Decoder;

/* One more base64 digit of value v; false if it does not fit. */
static inline bool
decode_digit(B64Decoder *d, uint8 v)
{
	d->acc = (d->acc << 6) | v;
	if (++d->n < 4)
		return true;
	d->n = 0;
	if (d->size - d->out < 3)
		return false;
	d->dst[d->out++] = (unsigned char) (d->acc >> 16);
	d->dst[d->out++] = (unsigned char) (d->acc >> 8);
	d->dst[d->out++] = (unsigned char) d->acc;
	return true;
}

/*
 * Decode whole quanta of four digits from the n characters at u while they
 * fit in dst and hold no white space or padding (the common case: the text
 * of nb_model_out has none but the last quantum's); the characters used.
 */
static size_t
decode_quanta(B64Decoder *d, const unsigned char *u, size_t n)
{
	size_t		quanta = Min(n / 4, (d->size - d->out) / 3);
	unsigned char *o = d->dst + d->out;
	size_t		q;

	for (q = 0; q < quanta; q++, u += 4, o += 3)
	{
		uint32		a = d->cls[u[0]],
					b = d->cls[u[1]],
					c = d->cls[u[2]],
					e = d->cls[u[3]];

		if ((a | b | c | e) >= 64)
			break;
		a = (a << 18) | (b << 12) | (c << 6) | e;
		o[0] = (unsigned char) (a >> 16);
		o[1] = (unsigned char) (a >> 8);
		o[2] = (unsigned char) a;
	}
	d->out += 3 * q;
	return 4 * q;
}

/*
 * Decode the n characters at p; false at a character that is not base64
 * there.  Between quanta, as many whole ones as can go in one loop do.
 */
static bool
decode_piece(B64Decoder *d, const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *) p;
	size_t		i = 0;

	while (i < n)
	{
		uint8		v;

		if (d->n == 0 && d->padding == 0)
		{
			i += decode_quanta(d, u + i, n - i);
			if (i == n)
				break;
		}
		v = d->cls[u[i++]];
		if (v == B64_SPACE)
			continue;
		if (v == B64_PAD)
			d->padding++;
		else if (v == B64_BAD || d->padding > 0 || !decode_digit(d, v))
			return false;
	}
	return true;
}

/*
 * The last quantum: with one '=' three digits make two bytes, with two two
 * digits one byte (the unused low bits are ignored, as PostgreSQL's decoder
 * does).
 */
static bool
decode_finish(B64Decoder *d)
{
	if (d->padding == 0)
		return d->n == 0;
	if (d->padding > 2 || d->n + d->padding != 4 || d->size - d->out < (size_t) (d->n - 1))
		return false;
	d->acc <<= 6 * d->padding;
	d->dst[d->out++] = (unsigned char) (d->acc >> 16);
	if (d->n == 3)
		d->dst[d->out++] = (unsigned char) (d->acc >> 8);
	return true;
}

/*
 * Decode the base64 text of src into dst, which has room for exactly size
 * bytes.  False if the text is not base64 of exactly size bytes.
 */
static bool
decode_base64(const Source *src, char *dst, size_t size)
{
	B64Decoder	d = {b64_classes(), (unsigned char *) dst, size, 0, 0, 0, 0};

	for (size_t off = 0; off < src->len; off += DECODE_CHUNK)
	{
		size_t		plen;
		const char *p = source_piece(src, off, DECODE_CHUNK, &plen);

		if (!decode_piece(&d, p, plen))
			return false;
		CHECK_FOR_INTERRUPTS();
	}
	return decode_finish(&d) && d.out == size;
}

static void
report_syntax(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s", "nb_model"),
			 errdetail("The text form of a model is base64.")));
}

/*
 * The model of the bytes an input function decoded, validated as bytes from
 * outside: those bytes, or the model whose packed form (nb_pack.h) they are.
 */
static struct varlena *
input_model(struct varlena *decoded, int sqlstate)
{
	const unsigned char *in = (const unsigned char *) VARDATA(decoded);
	size_t		n = VARSIZE(decoded) - VARHDRSZ;
	uint64		size;
	struct varlena *model = decoded;
	NbView		view;

	if (nb_packed_size(in, n, &size))
	{
		if (size > NB_MODEL_MAX_SIZE)
			nb_report_too_large(size);
		/* no byte unpacks to more than 8: a size beyond that is refused unallocated */
		model = size <= 8 * (uint64) n ? nb_model_alloc(size, CurrentMemoryContext) : NULL;
		if (model == NULL || !nb_unpack(in, n, (unsigned char *) VARDATA(model), size))
			ereport(ERROR,
					(errcode(sqlstate),
					 errmsg("invalid nb_model value"),
					 errdetail("The value is malformed: its packed form does not unpack to %llu bytes.",
							   (unsigned long long) size)));
	}
	nb_model_validate_bytes(VARDATA(model), VARSIZE(model) - VARHDRSZ, &view, sqlstate, true);
	return model;
}

/*
 * The bytes src's base64 text decodes to; false if its characters (white
 * space not counted) cannot be base64.  Counted first, so that a value is
 * allocated once, at its size.
 */
static bool
count_base64(const Source *src, uint64 *size)
{
	const uint8 *cls = b64_classes();
	unsigned	padding = 0;
	size_t		chars = 0;

	for (size_t off = 0; off < src->len; off += DECODE_CHUNK)
	{
		size_t		plen;
		const unsigned char *p = (const unsigned char *) source_piece(src, off, DECODE_CHUNK, &plen);

		for (size_t i = 0; i < plen; i++)
		{
			uint8		v = cls[p[i]];

			if (v != B64_SPACE)
			{
				padding = v == B64_PAD ? padding + 1 : 0;
				chars++;
			}
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (chars % 4 != 0 || padding > 2)
		return false;
	*size = nb_base64_decoded_len(chars, padding);
	return true;
}

bool
nb_base64_text_size(const char *str, size_t len, uint64 *size)
{
	Source		src = {str, (Datum) 0, len, NULL};

	return count_base64(&src, size);
}

bool
nb_base64_text_decode(const char *str, size_t len, char *dst, uint64 size)
{
	Source		src = {str, (Datum) 0, len, NULL};

	return decode_base64(&src, dst, size);
}

size_t
nb_base64_text_encode(const char *data, size_t size, char *out)
{
	size_t		pos = 0;

	for (size_t off = 0; off < size; off += ENCODE_CHUNK)
	{
		size_t		n = Min(ENCODE_CHUNK, size - off);
		int			w = pg_b64_encode((const b64_byte *) data + off, (int) n, out + pos,
									  (int) nb_base64_len(n));

		if (w < 0)
			elog(ERROR, "could not encode base64");
		pos += w;
		CHECK_FOR_INTERRUPTS();
	}
	return pos;
}

/*
 * The size of the bytes the base64 text in memory at src decodes to if it
 * has no white space: from its length and its last two characters.  False
 * when its length cannot be that of such a text.
 */
static bool
guess_size(const Source *src, uint64 *size)
{
	const char *end = src->mem + src->len;
	unsigned	padding;

	if (src->mem == NULL || src->len == 0 || src->len % 4 != 0)
		return false;
	padding = end[-1] != '=' ? 0 : end[-2] != '=' ? 1 : 2;
	*size = nb_base64_decoded_len(src->len, padding);
	return *size <= NB_MODEL_MAX_SIZE;
}

/*
 * The model whose base64 text src holds, validated.  A text in memory
 * without white space (every text nbc writes, such as the partial states
 * a Citus coordinator reads) is decoded in one pass at the size its
 * length gives; any other is counted first.
 */
static struct varlena *
model_from_base64(const Source *src)
{
	uint64		size;
	struct varlena *result = NULL;

	if (guess_size(src, &size))
	{
		result = palloc(VARHDRSZ + size);
		if (!decode_base64(src, VARDATA(result), size))
		{
			pfree(result);
			result = NULL;
		}
	}
	if (result == NULL)
	{
		if (!count_base64(src, &size))
			report_syntax();
		if (size > NB_MODEL_MAX_SIZE)
			nb_report_too_large(size);
		result = palloc(VARHDRSZ + size);
		if (!decode_base64(src, VARDATA(result), size))
			report_syntax();
	}
	SET_VARSIZE(result, VARHDRSZ + size);
	return input_model(result, ERRCODE_INVALID_TEXT_REPRESENTATION);
}

Datum
nb_model_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	Source		src = {str, (Datum) 0, strlen(str), NULL};

	PG_RETURN_POINTER(model_from_base64(&src));
}

/* The cast text::nb_model: the input function, reading a big stored text in slices. */
Datum
nb_model_from_text(PG_FUNCTION_ARGS)
{
	Source		src;
	struct varlena *result;

	source_open(&src, PG_GETARG_DATUM(0), DECODE_CHUNK);
	result = model_from_base64(&src);
	source_close(&src);
	PG_RETURN_POINTER(result);
}

/* Open the model datum d for encoding; the characters of its base64 text. */
static size_t
open_model(Source *m, Datum d)
{
	source_open(m, d, ENCODE_CHUNK);
	/* only a model stored before the limit existed can be larger */
	if (m->len > NB_MODEL_MAX_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("naive Bayes model of %zu bytes is too large for its text form", m->len),
				 errdetail("The text form of a model larger than %llu bytes would exceed the 1 GB limit of a value.",
						   (unsigned long long) NB_MODEL_MAX_SIZE),
				 errhint("Binary COPY can still copy it.")));
	return nb_base64_len(m->len);
}

/*
 * The packed form of the model argument when an aggregate calls (see the
 * top of this file), as a varlena; NULL from anyone else, or when it would
 * not be smaller than the model (every number large).
 */
static struct varlena *
packed_partial(FunctionCallInfo fcinfo)
{
	NbView		view;
	struct varlena *flat;
	struct varlena *packed;
	size_t		n;

	if (!AggCheckCallContext(fcinfo, NULL))
		return NULL;
	flat = nb_model_open_written(PG_GETARG_DATUM(0), &view);
	packed = MemoryContextAllocHuge(CurrentMemoryContext, VARHDRSZ + nb_pack_bound(view.size));
	n = nb_pack(&view, (const unsigned char *) VARDATA(flat), (unsigned char *) VARDATA(packed));
	if (n >= view.size)
		return NULL;
	SET_VARSIZE(packed, VARHDRSZ + n);
	return packed;
}

/* Write the model's base64 text to out, chunk by chunk. */
static void
encode_model(Source *m, char *out)
{
	size_t		pos = 0;

	for (size_t off = 0; off < m->len; off += ENCODE_CHUNK)
	{
		size_t		n;
		const char *data = source_piece(m, off, ENCODE_CHUNK, &n);

		pos += nb_base64_text_encode(data, n, out + pos);
	}
	source_close(m);
}

Datum
nb_model_out(PG_FUNCTION_ARGS)
{
	Source		m;
	struct varlena *packed = packed_partial(fcinfo);
	size_t		len = open_model(&m, packed != NULL ? PointerGetDatum(packed) : PG_GETARG_DATUM(0));
	char	   *out;

	out = palloc(len + 1);
	encode_model(&m, out);
	out[len] = '\0';
	PG_RETURN_CSTRING(out);
}

/*
 * The cast nb_model::text: the output function's text, written straight
 * into the text value (the I/O conversion would copy it once more, and
 * measure it, with no check for a cancel).
 */
Datum
nb_model_to_text(PG_FUNCTION_ARGS)
{
	Source		m;
	size_t		len = open_model(&m, PG_GETARG_DATUM(0));
	text	   *result;

	result = palloc(VARHDRSZ + len);
	SET_VARSIZE(result, VARHDRSZ + len);
	encode_model(&m, VARDATA(result));
	PG_RETURN_TEXT_P(result);
}

Datum
nb_model_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	size_t		size = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, size);
	struct varlena *result;

	if (size > NB_MODEL_MAX_SIZE)
		nb_report_too_large(size);
	result = palloc(size + VARHDRSZ);
	SET_VARSIZE(result, size + VARHDRSZ);
	nb_copy(VARDATA(result), data, size);
	PG_RETURN_POINTER(input_model(result, ERRCODE_INVALID_BINARY_REPRESENTATION));
}

Datum
nb_model_send(PG_FUNCTION_ARGS)
{
	struct varlena *flat = packed_partial(fcinfo);
	StringInfoData buf;

	if (flat == NULL)
		flat = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA(flat), VARSIZE(flat) - VARHDRSZ);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}
