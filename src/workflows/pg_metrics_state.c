/*
 * pg_metrics_state.c — the nb_metrics_state type: expanded-object methods,
 * its flat form, text (base64) and binary input and output, combining; see
 * pg_metrics.h.
 */
#include "pg_metrics.h"

#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "nb_interrupt.h"
#include "pg_label.h"
#include "pg_model.h"

PG_FUNCTION_INFO_V1(nb_metrics_state_in);
PG_FUNCTION_INFO_V1(nb_metrics_state_out);
PG_FUNCTION_INFO_V1(nb_metrics_state_recv);
PG_FUNCTION_INFO_V1(nb_metrics_state_send);

static Size state_flat_size(ExpandedObjectHeader *eohptr);
static void state_flatten(ExpandedObjectHeader *eohptr, void *result, Size size);

static const ExpandedObjectMethods state_methods = {
	state_flat_size,
	state_flatten
};

/* The states it holds: one, or a grid's, one per option set. */
static NbMetrics *
state_sets(NbMetricsState *st, uint32 *n)
{
	*n = st->is_grid ? st->grid.n_sets : 1;
	return st->is_grid ? st->grid.metrics : &st->single;
}

static NbMetricsState *
new_state(MemoryContext parent)
{
	MemoryContext cxt = AllocSetContextCreate(parent, "nb_metrics_state",
											  ALLOCSET_DEFAULT_SIZES);
	NbMetricsState *st = MemoryContextAllocZero(cxt, sizeof(NbMetricsState));

	EOH_init_header(&st->hdr, &state_methods, cxt);
	return st;
}

NbMetricsState *
nb_metrics_state_create(MemoryContext parent, bool scored, bool ranked, bool weighted,
						const struct varlena *options, uint32 n_sets)
{
	NbMetricsState *st = new_state(parent);
	MemoryContext old = MemoryContextSwitchTo(st->hdr.eoh_context);

	if (options != NULL)
	{
		st->is_grid = true;
		nb_grid_init(&st->grid, n_sets);
		st->options = palloc(VARSIZE_ANY(options));
		memcpy(st->options, options, VARSIZE_ANY(options));
	}
	else
		nb_metrics_init(&st->single, scored, ranked, weighted);
	MemoryContextSwitchTo(old);
	return st;
}

/* Bytes of the serialized form: its header, the grid's options, each state. */
static uint64
serial_size(NbMetricsState *st)
{
	uint32		n;
	NbMetrics  *m = state_sets(st, &n);
	uint64		size = NB_METRICS_SERIAL_HEADER + (st->is_grid ? VARSIZE_ANY(st->options) : 0);

	for (uint32 s = 0; s < n; s++)
		size += nb_metrics_serial_size(&m[s]);
	return size;
}

static void
report_too_large(uint64 size)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("nb_metrics state would exceed the maximum size"),
			 errdetail("The state would take %llu bytes; at most %llu can travel between processes or nodes.",
					   (unsigned long long) size,
					   (unsigned long long) NB_METRICS_STATE_MAX_SIZE),
			 errhint("Evaluate fewer rows at once, or pass the option \"ranked\": false for the metrics without ROC AUC and average precision, which keep no rows.")));
}

Size
nb_metrics_state_check_size(NbMetricsState *st)
{
	uint64		size = serial_size(st);

	if (size > NB_METRICS_STATE_MAX_SIZE)
		report_too_large(size);
	return (Size) size;
}

static Size
state_flat_size(ExpandedObjectHeader *eohptr)
{
	return VARHDRSZ + nb_metrics_state_check_size((NbMetricsState *) eohptr);
}

/*
 * Writing allocates nothing: the context the copy goes to may be a bump
 * context (see pg_model.c).
 */
static void
state_flatten(ExpandedObjectHeader *eohptr, void *result, Size size)
{
	NbMetricsState *st = (NbMetricsState *) eohptr;
	uint32		n;
	NbMetrics  *m = state_sets(st, &n);
	unsigned char *out = (unsigned char *) VARDATA(result);

	SET_VARSIZE(result, size);
	out = nb_metrics_write_header(out, n, st->is_grid ? (const void *) st->options : NULL,
								  st->is_grid ? VARSIZE_ANY(st->options) : 0);
	for (uint32 s = 0; s < n; s++)
		out = nb_metrics_write(&m[s], out);
	Assert(out == (unsigned char *) result + size);
}

/* A value whose bytes are malformed (error says how), or whose text is not base64 (NULL). */
static void
report_corrupt(const char *error)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid nb_metrics_state value"),
			 error != NULL ? errdetail("The value is malformed: %s.", error) :
			 errdetail("The text form of an nb_metrics state is base64.")));
}

/* The labels of a state are valid in the database encoding (read from outside). */
static void
check_encoding(const NbMetrics *m)
{
	for (uint32 c = 0; c < m->labels.count; c++)
	{
		uint32		len;
		const char *s = nb_vocab_str(&m->labels, c, &len);

		if (!pg_verify_mbstr(GetDatabaseEncoding(), s, (int) len, true))
			report_corrupt("a label is not valid in the database encoding");
	}
}

/* Whether two states have the same labels in the same order (a grid's do). */
static bool
same_labels(const NbMetrics *a, const NbMetrics *b)
{
	if (a->labels.count != b->labels.count)
		return false;
	for (uint32 c = 0; c < a->labels.count; c++)
	{
		uint32		alen,
					blen;
		const char *as = nb_vocab_str(&a->labels, c, &alen);
		const char *bs = nb_vocab_str(&b->labels, c, &blen);

		if (alen != blen || memcmp(as, bs, alen) != 0)
			return false;
	}
	return true;
}

/*
 * The state of serialized bytes, validated, in a new context under parent;
 * with check_encoding its labels too (bytes from outside the server).
 */
static NbMetricsState *
read_state(const char *data, Size len, MemoryContext parent, bool encoding)
{
	NbMetricsIn in = {(const unsigned char *) data, (const unsigned char *) data + len, NULL};
	uint32		n;
	const unsigned char *tag;
	uint32		tag_len;
	NbMetricsState *st = new_state(parent);
	MemoryContext old = MemoryContextSwitchTo(st->hdr.eoh_context);
	NbMetrics  *m;

	if (!nb_metrics_read_header(&in, &n, &tag, &tag_len))
		report_corrupt(in.error);
	st->is_grid = tag_len > 0;
	if (!st->is_grid && n != 1)
		report_corrupt("not one state");
	if (st->is_grid)
	{
		if (n == 0 || nb_grid_max_labels(n) == 0 || tag_len < VARHDRSZ ||
			VARSIZE_ANY(tag) != tag_len)
			report_corrupt("a grid out of range");
		nb_grid_init(&st->grid, n);
		st->options = palloc(tag_len);
		memcpy(st->options, tag, tag_len);
	}
	m = state_sets(st, &n);
	for (uint32 s = 0; s < n; s++)
	{
		/* nb_grid_init made the grid's states: read anew */
		if (st->is_grid)
			nb_metrics_free(&m[s]);
		if (!nb_metrics_read(&m[s], &in))
			report_corrupt(in.error);
		if (encoding)
			check_encoding(&m[s]);
		if (st->is_grid && (m[s].ranked || m[s].weighted || !m[s].scored ||
							m[s].labels.count > st->grid.max_labels ||
							!same_labels(&m[0], &m[s])))
			report_corrupt("a grid's state out of its form");
	}
	if (in.p != in.end)
		report_corrupt("bytes left over");
	MemoryContextSwitchTo(old);
	return st;
}

/* Our expanded state, if d is one (read/write or read-only), else NULL. */
static NbMetricsState *
expanded_state(Datum d)
{
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)))
		return NULL;
	eoh = DatumGetEOHP(d);
	return eoh->eoh_methods == &state_methods ? (NbMetricsState *) eoh : NULL;
}

static NbMetricsState *
state_from_datum(Datum d, MemoryContext parent)
{
	struct varlena *flat = PG_DETOAST_DATUM(d);
	NbMetricsState *st = read_state(VARDATA_ANY(flat), VARSIZE_ANY_EXHDR(flat), parent, false);

	if ((Pointer) flat != DatumGetPointer(d))
		pfree(flat);
	return st;
}

/* Labels of src that dst does not have. */
static uint32
new_labels(const NbMetrics *dst, const NbMetrics *src)
{
	uint32		added = 0;

	for (uint32 c = 0; c < src->labels.count; c++)
	{
		uint32		len;
		const char *s = nb_vocab_str(&src->labels, c, &len);

		added += nb_metrics_find(dst, s, len) < 0;
	}
	return added;
}

static bool
same_form(const NbMetrics *a, const NbMetrics *b)
{
	return a->scored == b->scored && a->weighted == b->weighted &&
		a->ranked == b->ranked && a->scores_only == b->scores_only;
}

/*
 * Add src's rows to dst: states of the same aggregate (forms, grids of the
 * same option sets), within the labels a state takes.
 */
static void
combine(NbMetricsState *dst, NbMetricsState *src)
{
	uint32		n,
				src_n;
	NbMetrics  *d = state_sets(dst, &n);
	NbMetrics  *s = state_sets(src, &src_n);
	MemoryContext old;

	/*
	 * The states of one aggregate are all of one form; others come only
	 * from a user's own aggregate over these functions.
	 */
	if (dst->is_grid != src->is_grid || n != src_n ||
		(dst->is_grid && (VARSIZE_ANY(dst->options) != VARSIZE_ANY(src->options) ||
						  memcmp(dst->options, src->options, VARSIZE_ANY(dst->options)) != 0)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine nb_metrics states of different aggregates"),
				 errdetail("Only the partial states of one nb_metrics or nb_grid_metrics call combine.")));
	for (uint32 k = 0; k < n; k++)
		if (!same_form(&d[k], &s[k]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot combine nb_metrics states of different forms"),
					 errdetail("Only the partial states of one nb_metrics or nb_grid_metrics call combine.")));
	/* a grid's states have the same labels: the first tells for all */
	if (d[0].labels.count + new_labels(&d[0], &s[0]) >
		(dst->is_grid ? dst->grid.max_labels : NB_METRICS_MAX_CLASSES))
		nb_metrics_state_too_many_labels(dst, NULL, 0);
	old = MemoryContextSwitchTo(dst->hdr.eoh_context);
	for (uint32 k = 0; k < n; k++)
	{
		CHECK_FOR_INTERRUPTS();
		nb_metrics_merge(&d[k], &s[k]);
	}
	MemoryContextSwitchTo(old);
	nb_metrics_state_check_size(dst);
}

/* An empty state of the same form as st (for a grid, the same option sets). */
static NbMetricsState *
empty_like(NbMetricsState *st, MemoryContext parent)
{
	NbMetricsState *empty;

	if (st->is_grid)
	{
		empty = nb_metrics_state_create(parent, true, false, false, st->options, st->grid.n_sets);
		for (uint32 s = 0; s < st->grid.n_sets; s++)
			empty->grid.metrics[s].scores_only = st->grid.metrics[s].scores_only;
		return empty;
	}
	empty = nb_metrics_state_create(parent, st->single.scored, st->single.ranked,
									st->single.weighted, NULL, 0);
	empty->single.scores_only = st->single.scores_only;
	return empty;
}

/* A copy of a state in a new context under parent. */
static NbMetricsState *
copy_state(NbMetricsState *st, MemoryContext parent)
{
	NbMetricsState *copy = empty_like(st, parent);

	combine(copy, st);
	return copy;
}

NbMetricsState *
nb_metrics_state_for_update(FunctionCallInfo fcinfo, MemoryContext aggctx)
{
	Datum		d = PG_GETARG_DATUM(0);
	NbMetricsState *st;

	if (PG_ARGISNULL(0))
		return NULL;
	st = expanded_state(d);
	if (st != NULL && VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)) &&
		MemoryContextGetParent(st->hdr.eoh_context) == aggctx)
		return st;
	/* a flat state (a hash aggregate's spilled one), or one not ours to change */
	if (st == NULL)
		return state_from_datum(d, aggctx);
	return copy_state(st, aggctx);
}

NbMetricsState *
nb_metrics_state_open(Datum d)
{
	NbMetricsState *st = expanded_state(d);

	return st != NULL ? st : state_from_datum(d, CurrentMemoryContext);
}

void
nb_metrics_state_close(NbMetricsState *st, Datum d)
{
	if (expanded_state(d) != st)
		MemoryContextDelete(st->hdr.eoh_context);
}

NbMetricsState *
nb_metrics_state_of_kind(NbMetricsState *st, bool grid)
{
	if (st != NULL && st->is_grid != grid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("an %s state is not an %s state", st->is_grid ? "nb_grid_metrics" : "nb_metrics",
						grid ? "nb_grid_metrics" : "nb_metrics")));
	return st;
}

void
nb_metrics_state_too_many_labels(const NbMetricsState *st, const char *label, uint32 len)
{
	uint32		most = st->is_grid ? st->grid.max_labels : NB_METRICS_MAX_CLASSES;

	if (!st->is_grid || most == NB_METRICS_MAX_CLASSES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("nb_metrics supports at most %d distinct labels",
						NB_METRICS_MAX_CLASSES),
				 label != NULL ?
				 errdetail("Label \"%s\" would be number %d.", nb_cut_str(label, len),
						   NB_METRICS_MAX_CLASSES + 1) : 0));
	/* a grid's confusion matrices take at most NB_GRID_MAX_BYTES together */
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg_plural("nb_grid_metrics of %u option set supports at most %u distinct labels",
						   "nb_grid_metrics of %u option sets supports at most %u distinct labels",
						   st->grid.n_sets, st->grid.n_sets, most),
			 label != NULL ?
			 errdetail("Label \"%s\" would be number %u.", nb_cut_str(label, len), most + 1) : 0,
			 errhint("Score fewer option sets at a time.")));
}

Datum
nb_metrics_state_combine_args(FunctionCallInfo fcinfo, MemoryContext aggctx, bool grid)
{
	NbMetricsState *st1 = nb_metrics_state_for_update(fcinfo, aggctx);
	NbMetricsState *st2;

	if (grid)
		(void) nb_metrics_state_of_kind(st1, true);
	if (PG_ARGISNULL(1))
		return nb_metrics_state_return(fcinfo, st1);
	st2 = nb_metrics_state_open(PG_GETARG_DATUM(1));
	if (grid)
		(void) nb_metrics_state_of_kind(st2, true);
	if (st1 == NULL)
		st1 = copy_state(st2, aggctx);
	else
		combine(st1, st2);
	nb_metrics_state_close(st2, PG_GETARG_DATUM(1));
	return nb_metrics_state_return(fcinfo, st1);
}

/* ---------------------------------------------------------------- */
/* input and output                                                  */

/* The serialized bytes of a state datum, in the current context. */
static struct varlena *
flat_bytes(Datum d)
{
	NbMetricsState *st = expanded_state(d);
	struct varlena *flat;
	Size		size;

	if (st == NULL)
		return PG_DETOAST_DATUM(d);
	size = EOH_get_flat_size(&st->hdr);
	flat = palloc(size);
	EOH_flatten_into(&st->hdr, flat, size);
	return flat;
}

/* Validate the bytes of a flat state value (from outside: their encoding too). */
static void
check_state_bytes(const char *data, Size len)
{
	MemoryContext check = AllocSetContextCreate(CurrentMemoryContext, "nb_metrics_state input",
												ALLOCSET_DEFAULT_SIZES);

	(void) read_state(data, len, check, true);
	MemoryContextDelete(check);
}

/* Decoded in chunks straight into the value, with checks for a cancel (pg_type.c). */
Datum
nb_metrics_state_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	size_t		len = strlen(str);
	uint64		size;
	struct varlena *result;

	if (!nb_base64_text_size(str, len, &size))
		report_corrupt(NULL);
	if (size > NB_METRICS_STATE_MAX_SIZE)
		report_too_large(size);
	result = palloc(VARHDRSZ + size);
	SET_VARSIZE(result, VARHDRSZ + size);
	if (!nb_base64_text_decode(str, len, VARDATA(result), size))
		report_corrupt(NULL);
	check_state_bytes(VARDATA(result), size);
	PG_RETURN_POINTER(result);
}

Datum
nb_metrics_state_out(PG_FUNCTION_ARGS)
{
	struct varlena *flat = flat_bytes(PG_GETARG_DATUM(0));
	size_t		len = VARSIZE_ANY_EXHDR(flat);
	char	   *out = palloc(nb_base64_len(len) + 1);

	out[nb_base64_text_encode(VARDATA_ANY(flat), len, out)] = '\0';
	PG_RETURN_CSTRING(out);
}

Datum
nb_metrics_state_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	const char *bytes = pq_getmsgbytes(buf, len);
	struct varlena *result;

	check_state_bytes(bytes, (Size) len);
	result = palloc(VARHDRSZ + len);
	SET_VARSIZE(result, VARHDRSZ + len);
	nb_copy(VARDATA(result), bytes, len);
	PG_RETURN_POINTER(result);
}

Datum
nb_metrics_state_send(PG_FUNCTION_ARGS)
{
	struct varlena *flat = flat_bytes(PG_GETARG_DATUM(0));
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA_ANY(flat), VARSIZE_ANY_EXHDR(flat));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}
