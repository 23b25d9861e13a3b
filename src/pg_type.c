/*
 * pg_type.c — nb_model input/output: text (base64) and binary send/recv.
 *
 * Both forms carry exactly the serialized bytes of nb_format.h, so every
 * round trip is lossless, and both validate everything they are given.
 */
#include "pg_model.h"

#include "common/base64.h"
#include "libpq/pqformat.h"
#include "parser/scansup.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(nb_model_in);
PG_FUNCTION_INFO_V1(nb_model_out);
PG_FUNCTION_INFO_V1(nb_model_recv);
PG_FUNCTION_INFO_V1(nb_model_send);

/* Copy validated payload bytes into a new varlena. */
static struct varlena *
model_from_bytes(const char *data, size_t size, int sqlstate)
{
	NbView		view;
	struct varlena *result;

	nb_model_validate_bytes(data, size, &view, sqlstate, true);
	result = palloc(size + VARHDRSZ);
	SET_VARSIZE(result, size + VARHDRSZ);
	memcpy(VARDATA(result), data, size);
	return result;
}

/*
 * The base64 text without white space, so that line-wrapped base64 (as
 * encode(..., 'base64') produces) is accepted too.
 */
static char *
strip_white_space(const char *str, size_t *len)
{
	char	   *out = palloc(strlen(str) + 1);
	size_t		n = 0;

	for (; *str; str++)
		if (!scanner_isspace(*str))
			out[n++] = *str;
	out[n] = '\0';
	*len = n;
	return out;
}

Datum
nb_model_in(PG_FUNCTION_ARGS)
{
	size_t		len;
	char	   *str = strip_white_space(PG_GETARG_CSTRING(0), &len);
	char	   *bytes;
	int			n;

	if (len > (size_t) (MaxAllocSize / 3 * 4))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("nb_model input is too long")));
	bytes = palloc(pg_b64_dec_len((int) len) + 1);
	n = pg_b64_decode(str, (int) len, bytes, pg_b64_dec_len((int) len));
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s", "nb_model"),
				 errdetail("The text form of a model is base64.")));
	PG_RETURN_POINTER(model_from_bytes(bytes, n, ERRCODE_INVALID_TEXT_REPRESENTATION));
}

Datum
nb_model_out(PG_FUNCTION_ARGS)
{
	struct varlena *flat = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	int			size = VARSIZE(flat) - VARHDRSZ;
	int			cap = pg_b64_enc_len(size) + 1;
	char	   *out = palloc(cap);
	int			n = pg_b64_encode(VARDATA(flat), size, out, cap);

	if (n < 0)
		elog(ERROR, "could not encode nb_model as base64");
	out[n] = '\0';
	PG_RETURN_CSTRING(out);
}

Datum
nb_model_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			size = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, size);

	PG_RETURN_POINTER(model_from_bytes(data, size, ERRCODE_INVALID_BINARY_REPRESENTATION));
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
