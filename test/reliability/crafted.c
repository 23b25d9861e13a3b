/*
 * crafted.c — mutated nb_model values against a live server (see crafted.sh).
 *
 * Takes the valid seed models of crafted.sql, mutates them (bit flips, byte
 * edits, truncations and extensions, edits of count, length and number
 * fields, shifted string lengths, splices of two seeds), repairs the
 * checksum of most of them so the mutation reaches past the checksum check,
 * and sends each value to the server twice, pipelined:
 *   1. as text (base64, nb_model_in), asking for the result in binary
 *      (nb_model_send): accepted values must come back byte-identical;
 *   2. in binary (nb_model_recv), asking for the text form (nb_model_out)
 *      and crafted.use(value), which merges, scores and inspects it;
 *   3. with RAW, as bytea cast to nb_model without input function
 *      (crafted.use_raw: how a value corrupted on disk reaches the
 *      functions), so every function must validate what it is given.
 * Each value must be either rejected by both inputs with a specific
 * SQLSTATE (class 22 or XX001 data_corrupted; XX000, an internal error,
 * fails) or accepted by both and then round-trip byte-identically and pass
 * crafted.use.  Unvalidated bytes that are not a model must make every
 * function fail with XX001 (data_corrupted); valid ones behave as through
 * the input functions.  The local nb_view_open (linked from src/) must agree with
 * the server, but for strings the server rejects as invalid in the database
 * encoding and stored prediction options it rejects as scoring would (it
 * parses them against the model).  A lost connection means a backend crashed (the server then
 * ends every session).
 *
 * Usage: crafted COUNT SEED FAILDIR [RAW]   (connection from the PG* environment;
 *        RAW=1 when the cast from bytea to nb_model exists, see crafted.sh)
 * Prints TAP lines and the distribution of outcomes; exit status 1 if any
 * test failed.  Failing values are written to FAILDIR as hex.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "nb_format.h"

#define MAX_SEEDS 64
#define WINDOW 8				/* values in flight */
#define MAX_EXAMPLES 5			/* failures printed per kind */

typedef struct Seed
{
	unsigned char *bytes;
	size_t		size;
} Seed;

/* A field of a seed that the structural mutations edit. */
typedef enum FieldKind
{
	FIELD_U32,					/* a count or length */
	FIELD_F64,					/* a number */
	FIELD_LEN_ARRAY				/* a u32 array whose total matters (string
								 * lengths, entries per item, items per
								 * feature): also shifted pairwise */
} FieldKind;

typedef struct Field
{
	FieldKind	kind;
	size_t		offset;
	uint64_t	n;				/* elements */
} Field;

typedef struct Layout
{
	Field		fields[32];
	int			nfields;
	size_t		strings;		/* offset of the string areas */
} Layout;

typedef struct Value
{
	long		index;
	unsigned char *bytes;
	size_t		size;
	char		how[160];		/* the mutations, for the report */
	bool		local_ok;		/* nb_view_open accepts it */
} Value;

static Seed seeds[MAX_SEEDS];
static Layout layouts[MAX_SEEDS];
static int	nseeds;
static uint64_t rng;

/* outcome counters */
static long n_values,
			n_accepted,
			n_rejected;
static long n_fail_sqlstate,
			n_fail_agree,
			n_fail_roundtrip,
			n_fail_use,
			n_fail_raw;
static long n_raw;
static bool raw_path;
static char *fail_dir;

typedef struct Count
{
	char		key[64];
	long		n;
} Count;

static Count rejections[64];	/* SQLSTATE of rejected values */
static int	nrejections;
static Count use_errors[256];	/* "operation:SQLSTATE" of accepted values */
static int	nuse_errors;
static Count reasons[256];		/* why values were rejected (the detail, numbers left out) */
static int	nreasons;

static void
count(Count *c, int *n, int cap, const char *key)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(c[i].key, key) == 0)
		{
			c[i].n++;
			return;
		}
	if (*n < cap)
	{
		snprintf(c[*n].key, sizeof(c[*n].key), "%s", key);
		c[(*n)++].n = 1;
	}
}

/* The rejection's detail without its numbers, so that like reasons count together. */
static void
count_reason(const char *detail)
{
	char		key[64];
	size_t		n = 0;
	const char *p = detail;

	if (strncmp(p, "The value is malformed: ", 24) == 0)
		p += 24;
	for (; *p != '\0' && n + 1 < sizeof(key); p++)
		if (!(*p >= '0' && *p <= '9') && !(n > 0 && key[n - 1] == ' ' && *p == ' '))
			key[n++] = *p;
	key[n] = '\0';
	count(reasons, &nreasons, 256, key);
}

static uint64_t
next(void)
{
	uint64_t	z = (rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
below(uint64_t n)
{
	return n ? next() % n : 0;
}

static void
die(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	printf("Bail out! ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(2);
}

/* ------------------------------------------------------------------ */
/* seeds and their layout                                              */

static void
add_field(Layout *l, FieldKind kind, size_t offset, uint64_t n)
{
	if (n > 0)
		l->fields[l->nfields++] = (Field) {kind, offset, n};
}

/* Where the arrays of a valid seed are (nb_format.h). */
static void
seed_layout(const NbView *v, const unsigned char *base, Layout *l)
{
	uint64_t	fc = (uint64_t) v->n_features * v->n_classes;

#define OFF(p) ((size_t) ((const unsigned char *) (p) - base))
	l->nfields = 0;
	add_field(l, FIELD_U32, 8, 3);	/* C, V, low word of E */
	if (v->version != 1)
		add_field(l, FIELD_U32, 32, 2); /* F, vector length */
	if (v->version == 3)
		add_field(l, FIELD_U32, 40, 1); /* low word of H */
	add_field(l, FIELD_F64, OFF(v->class_docs), v->n_classes);
	add_field(l, FIELD_LEN_ARRAY, OFF(v->label_len), v->n_classes);
	add_field(l, FIELD_LEN_ARRAY, OFF(v->token_len), v->n_tokens);
	add_field(l, FIELD_LEN_ARRAY, OFF(v->token_entries), v->n_tokens);
	add_field(l, FIELD_U32, OFF(v->entry_class), v->n_entries);
	add_field(l, FIELD_F64, OFF(v->entry_count), v->n_entries);
	add_field(l, FIELD_F64, OFF(v->entry_docs), v->n_entries);
	if (v->version == 3)
	{
		add_field(l, FIELD_LEN_ARRAY, OFF(v->length_pairs), fc);
		add_field(l, FIELD_F64, OFF(v->length_value), v->n_lengths);
		add_field(l, FIELD_F64, OFF(v->length_weight), v->n_lengths);
	}
	if (v->version != 1)
	{
		add_field(l, FIELD_LEN_ARRAY, OFF(v->feature_name_len), v->n_features);
		add_field(l, FIELD_U32, OFF(v->feature_type), v->n_features);
		add_field(l, FIELD_LEN_ARRAY, OFF(v->feature_items), v->n_features);
		add_field(l, FIELD_F64, OFF(v->feature_present), fc);
		add_field(l, FIELD_F64, OFF(v->feature_a), fc);
		add_field(l, FIELD_F64, OFF(v->feature_b), fc);
		add_field(l, FIELD_F64, OFF(v->feature_rows), v->n_features);
		add_field(l, FIELD_F64, OFF(v->feature_mean), v->n_features);
		add_field(l, FIELD_F64, OFF(v->feature_m2), v->n_features);
	}
	l->strings = OFF(v->labels);
#undef OFF
}

static void
load_seeds(PGconn *conn)
{
	PGresult   *res = PQexecParams(conn, "SELECT m FROM crafted.seed ORDER BY id",
								   0, NULL, NULL, NULL, NULL, 1);

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("cannot read crafted.seed: %s", PQerrorMessage(conn));
	nseeds = PQntuples(res);
	if (nseeds == 0 || nseeds > MAX_SEEDS)
		die("crafted.seed has %d rows", nseeds);
	for (int i = 0; i < nseeds; i++)
	{
		NbView		v;
		NbFormatError e;

		seeds[i].size = PQgetlength(res, i, 0);
		seeds[i].bytes = malloc(seeds[i].size);
		memcpy(seeds[i].bytes, PQgetvalue(res, i, 0), seeds[i].size);
		if (!nb_view_open(&v, seeds[i].bytes, seeds[i].size, &e))
			die("seed %d is not valid here: %s", i + 1, e.message);
		seed_layout(&v, seeds[i].bytes, &layouts[i]);
	}
	PQclear(res);
}

/* ------------------------------------------------------------------ */
/* mutations                                                           */

static uint32_t
special_u32(uint32_t v, size_t size)
{
	switch (below(12))
	{
		case 0:
			return 0;
		case 1:
			return 1;
		case 2:
			return v + 1;
		case 3:
			return v - 1;
		case 4:
			return v * 2;
		case 5:
			return v / 2;
		case 6:
			return UINT32_MAX;
		case 7:
			return 0x80000000u;
		case 8:
			return 0x7fffffffu;
		case 9:
			return (uint32_t) size;
		case 10:
			return (uint32_t) (size / 4);
		default:
			return (uint32_t) next();
	}
}

static double
special_f64(double x)
{
	static const double v[] = {0, -0.0, 1, 0.5, -1, 2, 1e308, 1.7976931348623157e308,
		2.2250738585072014e-308, 4.9406564584124654e-324, 1e154, 9007199254740992.0,
	1e-300, 3};

	switch (below(8))
	{
		case 0:
			return NAN;
		case 1:
			return below(2) ? INFINITY : -INFINITY;
		case 2:
			return x * 2;
		case 3:
			return x / 2;
		case 4:
			return nextafter(x, below(2) ? INFINITY : -INFINITY);
		case 5:
			return -x;
		default:
			return v[below(sizeof(v) / sizeof(v[0]))];
	}
}

/*
 * One mutation of buf (size *size, capacity cap) made from seed s; returns
 * a short description.
 */
static const char *
mutate(unsigned char *buf, size_t *size, size_t cap, int s, char *note, size_t notelen)
{
	const Layout *l = &layouts[s];
	size_t		n = *size;
	uint64_t	r = below(100);

	if (n == 0)
	{
		buf[0] = (unsigned char) next();
		*size = 1;
		return "byte";
	}
	if (r < 12)
	{
		/* flip one to three bits */
		int			k = 1 + (int) below(3);

		for (int i = 0; i < k; i++)
		{
			size_t		at = below(n);

			buf[at] ^= (unsigned char) (1u << below(8));
		}
		snprintf(note, notelen, "bitflip%d", k);
		return note;
	}
	if (r < 22)
	{
		/* set a byte: special or random, often in the string areas */
		static const unsigned char b[] = {0, 0xff, 0x7f, 0x80, 0xc3, 0xe6, 'a', '0'};
		size_t		at = (below(2) && l->strings < n) ? l->strings + below(n - l->strings) : below(n);

		buf[at] = below(2) ? b[below(sizeof(b))] : (unsigned char) next();
		snprintf(note, notelen, "byte@%zu", at);
		return note;
	}
	if (r < 30)
	{
		/* truncate */
		size_t		to = below(4) == 0 ? below(n) : n - 1 - below(n < 16 ? n : 16);

		*size = to;
		snprintf(note, notelen, "truncate@%zu", to);
		return note;
	}
	if (r < 34)
	{
		/* extend with random bytes, or a copy of the tail */
		size_t		k = 1 + below(16);

		if (n + k > cap)
			k = cap - n;
		for (size_t i = 0; i < k; i++)
			buf[n + i] = below(2) ? (unsigned char) next() : buf[n - 1 - below(n < k ? n : k)];
		*size = n + k;
		snprintf(note, notelen, "extend+%zu", k);
		return note;
	}
	if (r < 40)
	{
		/* delete or duplicate a range */
		size_t		at = below(n);
		size_t		k = 1 + below(n - at < 24 ? n - at : 24);

		if (below(2))
		{
			memmove(buf + at, buf + at + k, n - at - k);
			*size = n - k;
			snprintf(note, notelen, "delete%zu@%zu", k, at);
		}
		else
		{
			if (n + k > cap)
				k = cap - n;
			memmove(buf + at + k, buf + at, n - at);
			*size = n + k;
			snprintf(note, notelen, "duplicate%zu@%zu", k, at);
		}
		return note;
	}
	if (r < 80 && l->nfields > 0)
	{
		/* a field of the layout: a count, a length, a number */
		const Field *f = &l->fields[below(l->nfields)];
		uint64_t	i = below(f->n);
		size_t		w = f->kind == FIELD_F64 ? 8 : 4;
		size_t		at = f->offset + i * w;

		if (at + w > n)
			return "field (cut off)";
		if (f->kind == FIELD_F64)
		{
			nb_write_f64(buf + at, 0, special_f64(nb_read_f64(buf + at, 0)));
			snprintf(note, notelen, "f64@%zu", at);
		}
		else if (f->kind == FIELD_LEN_ARRAY && f->n > 1 && below(2))
		{
			/* move d from one element to the next: the total stays */
			uint64_t	j = i + 1 < f->n ? i + 1 : i - 1;
			size_t		at2 = f->offset + j * 4;
			uint32_t	d = 1 + (uint32_t) below(3);

			if (at2 + 4 > n)
				return "shift (cut off)";
			nb_write_u32(buf + at, 0, nb_read_u32(buf + at, 0) + d);
			nb_write_u32(buf + at2, 0, nb_read_u32(buf + at2, 0) - d);
			snprintf(note, notelen, "shift%u@%zu", d, at);
		}
		else
		{
			nb_write_u32(buf + at, 0, special_u32(nb_read_u32(buf + at, 0), n));
			snprintf(note, notelen, "u32@%zu", at);
		}
		return note;
	}
	if (r < 88)
	{
		/* swap two bytes of the string areas (breaks or keeps the order) */
		size_t		base = l->strings < n ? l->strings : 0;
		size_t		a = base + below(n - base),
					b = base + below(n - base);
		unsigned char t = buf[a];

		buf[a] = buf[b];
		buf[b] = t;
		snprintf(note, notelen, "swap@%zu,%zu", a, b);
		return note;
	}
	{
		/* splice another seed in: its tail, a chunk, or its header */
		int			o = (int) below(nseeds);
		const Seed *other = &seeds[o];
		uint64_t	kind = below(3);

		if (kind == 0)
		{
			size_t		cut = below(n + 1);
			size_t		from = below(other->size + 1);
			size_t		k = other->size - from;

			if (cut + k > cap)
				k = cap - cut;
			memcpy(buf + cut, other->bytes + from, k);
			*size = cut + k;
			snprintf(note, notelen, "splice:%zu+seed%d@%zu", cut, o + 1, from);
		}
		else if (kind == 1)
		{
			size_t		at = below(n);
			size_t		k = 1 + below(64);

			if (at + k > n)
				k = n - at;
			if (at + k > other->size)
				k = other->size > at ? other->size - at : 0;
			memcpy(buf + at, other->bytes + at, k);
			snprintf(note, notelen, "chunk%zu@%zu<-seed%d", k, at, o + 1);
		}
		else
		{
			size_t		h = n < 40 ? n : 40;

			if (other->size < h)
				h = other->size;
			memcpy(buf, other->bytes, h);
			snprintf(note, notelen, "header<-seed%d", o + 1);
		}
		return note;
	}
}

static void
fix_checksum(unsigned char *buf, size_t size)
{
	uint64_t	h;

	if (size < NB_HEADER_SIZE)
		return;
	h = nb_format_checksum(buf, size);
	for (int i = 0; i < 8; i++)
		buf[24 + i] = (unsigned char) (h >> (8 * i));
}

static void
make_value(Value *v, long index, uint64_t run_seed)
{
	int			s;
	int			k;
	size_t		cap;
	char		note[64];
	NbFormatError e;
	NbView		view;
	size_t		used = 0;

	rng = run_seed * UINT64_C(0x100000001b3) + (uint64_t) index;
	s = (int) below(nseeds);
	cap = seeds[s].size + 128;
	v->index = index;
	v->bytes = realloc(v->bytes, cap);
	memcpy(v->bytes, seeds[s].bytes, seeds[s].size);
	v->size = seeds[s].size;
	used += snprintf(v->how, sizeof(v->how), "seed%d", s + 1);
	k = below(10) < 6 ? 1 : below(2) ? 2 : 3;
	for (int i = 0; i < k; i++)
	{
		const char *what = mutate(v->bytes, &v->size, cap, s, note, sizeof(note));

		if (used < sizeof(v->how))
			used += snprintf(v->how + used, sizeof(v->how) - used, " %s", what);
	}
	/* nineteen times in twenty, repair the checksum */
	if (below(20) != 0)
		fix_checksum(v->bytes, v->size);
	else if (used < sizeof(v->how))
		snprintf(v->how + used, sizeof(v->how) - used, " (checksum not repaired)");
	v->local_ok = nb_view_open(&view, v->bytes, v->size, &e);
}

/* ------------------------------------------------------------------ */
/* the server side                                                     */

static char *
base64(const unsigned char *p, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char	   *out = malloc(4 * ((n + 2) / 3) + 1);
	char	   *o = out;

	for (size_t i = 0; i < n; i += 3)
	{
		uint32_t	w = (uint32_t) p[i] << 16 | (i + 1 < n ? (uint32_t) p[i + 1] << 8 : 0) |
			(i + 2 < n ? p[i + 2] : 0);

		*o++ = a[w >> 18 & 63];
		*o++ = a[w >> 12 & 63];
		*o++ = i + 1 < n ? a[w >> 6 & 63] : '=';
		*o++ = i + 2 < n ? a[w & 63] : '=';
	}
	*o = '\0';
	return out;
}

static void
save_failure(const Value *v, const char *kind, const char *why, long *counter)
{
	(*counter)++;
	if (*counter <= MAX_EXAMPLES)
		printf("# %s: value %ld (%s, %zu bytes): %s\n", kind, v->index, v->how, v->size, why);
	if (fail_dir != NULL)
	{
		char		path[512];
		FILE	   *f;

		snprintf(path, sizeof(path), "%s/%s-%ld.hex", fail_dir, kind, v->index);
		if ((f = fopen(path, "w")) != NULL)
		{
			fprintf(f, "# %s\n# %s\n", v->how, why);
			for (size_t i = 0; i < v->size; i++)
				fprintf(f, "%02x", v->bytes[i]);
			fprintf(f, "\n");
			fclose(f);
		}
	}
}

static void
send_value(PGconn *conn, const Value *v, Oid model_oid)
{
	char	   *b64 = base64(v->bytes, v->size);
	const char *tv[1] = {b64};
	const char *bv[1] = {(const char *) v->bytes};
	int			blen[1] = {(int) v->size};
	int			text_fmt[1] = {0};
	int			bin_fmt[1] = {1};
	Oid			types[1] = {model_oid};

	if (!PQsendQueryParams(conn, "SELECT $1::nb_model", 1, types, tv, NULL, text_fmt, 1) ||
		!PQpipelineSync(conn) ||
		!PQsendQueryParams(conn, "SELECT $1::nb_model::text, crafted.use($1)", 1, types,
						   bv, blen, bin_fmt, 0) ||
		!PQpipelineSync(conn))
		die("cannot send value %ld: %s", v->index, PQerrorMessage(conn));
	if (raw_path &&
		(!PQsendQueryParams(conn, "SELECT crafted.use_raw($1::bytea)", 1, NULL,
							bv, blen, bin_fmt, 0) ||
		 !PQpipelineSync(conn)))
		die("cannot send value %ld: %s", v->index, PQerrorMessage(conn));
	free(b64);
}

/* The result of one query and its sync; NULL data when it failed. */
typedef struct Reply
{
	bool		ok;
	char		sqlstate[6];
	char		detail[256];
	PGresult   *res;
} Reply;

static bool
get_reply(PGconn *conn, Reply *r)
{
	PGresult   *res;
	PGresult   *sync;

	memset(r, 0, sizeof(*r));
	res = PQgetResult(conn);
	if (res == NULL)
		return false;
	if (PQresultStatus(res) == PGRES_TUPLES_OK)
	{
		r->ok = true;
		r->res = res;
		if (PQgetResult(conn) != NULL)
			return false;
	}
	else if (PQresultStatus(res) == PGRES_FATAL_ERROR)
	{
		const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		const char *d = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);

		if (st == NULL)
		{
			PQclear(res);
			return false;		/* a client-side error: the connection is gone */
		}
		snprintf(r->sqlstate, sizeof(r->sqlstate), "%s", st);
		snprintf(r->detail, sizeof(r->detail), "%s", d ? d : PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
		PQclear(res);
		if (PQgetResult(conn) != NULL)
			return false;
	}
	else
	{
		PQclear(res);
		return false;
	}
	sync = PQgetResult(conn);
	if (sync == NULL || PQresultStatus(sync) != PGRES_PIPELINE_SYNC)
		return false;
	PQclear(sync);
	return true;
}

/* A specific error for a value that is not a model: class 22 or XX001. */
static bool
specific(const char *sqlstate)
{
	return strncmp(sqlstate, "22", 2) == 0 || strcmp(sqlstate, "XX001") == 0 ||
		strcmp(sqlstate, "54000") == 0;
}

/*
 * crafted.use's outcomes: the inspection functions and merging a value with
 * itself must work (an overflow of a doubled count, 22003, is a specific
 * error); scoring and merging with another model may fail with a class 22
 * error (a feature of another type, a vector of another length); nothing may
 * fail with another SQLSTATE or give a wrong result.
 */
static const char *
check_use(const char *out, char *why, size_t whylen)
{
	char	   *copy = strdup(out);
	const char *problem = NULL;

	for (char *tok = strtok(copy, " "); tok != NULL && problem == NULL; tok = strtok(NULL, " "))
	{
		char	   *colon = strchr(tok, ':');
		const char *code;
		bool		strict;

		if (colon == NULL)
		{
			problem = "unreadable outcome";
			break;
		}
		*colon = '\0';
		code = colon + 1;
		strict = strcmp(tok, "info") == 0 || strcmp(tok, "jsonb") == 0 ||
			strcmp(tok, "mi") == 0 || strcmp(tok, "classes") == 0 ||
			strcmp(tok, "merge_self") == 0 || strcmp(tok, "merge_agg") == 0;
		if (strcmp(code, "ok") == 0)
			continue;
		if (strcmp(code, "bad") == 0)
		{
			snprintf(why, whylen, "%s gives a wrong result", tok);
			problem = why;
		}
		else if (strict ? !(strcmp(code, "22003") == 0 && strncmp(tok, "merge", 5) == 0) &&
				 strcmp(code, "54000") != 0 :
				 !specific(code) || strcmp(code, "XX001") == 0)
		{
			snprintf(why, whylen, "%s fails with SQLSTATE %s", tok, code);
			problem = why;
		}
		else
		{
			char		key[48];

			snprintf(key, sizeof(key), "%s:%s", tok, code);
			count(use_errors, &nuse_errors, 256, key);
		}
	}
	free(copy);
	return problem;
}

/*
 * The unvalidated bytes through crafted.use_raw.  When they are not a model,
 * every operation must fail with XX001.  When they are, the outcomes must be
 * those through the input functions (use); when the inputs rejected them for
 * their encoding (use is NULL), which the functions do not check, every
 * outcome must be ok or a specific error (merge_self and merge_agg read the
 * merged model back in, which fails on the encoding).
 */
static void
judge_raw(const Value *v, const Reply *r, const char *use)
{
	char		why[512];
	const char *out;
	char	   *copy;

	n_raw++;
	if (!r->ok)
	{
		snprintf(why, sizeof(why), "crafted.use_raw fails with SQLSTATE %s: %s", r->sqlstate, r->detail);
		save_failure(v, "raw", why, &n_fail_raw);
		return;
	}
	out = PQgetvalue(r->res, 0, 0);
	if (use != NULL)
	{
		if (strcmp(out, use) != 0)
		{
			snprintf(why, sizeof(why), "outcomes differ from the validated value's: %s", out);
			save_failure(v, "raw", why, &n_fail_raw);
		}
		return;
	}
	copy = strdup(out);
	for (char *tok = strtok(copy, " "); tok != NULL; tok = strtok(NULL, " "))
	{
		const char *colon = strchr(tok, ':');
		const char *code = colon != NULL ? colon + 1 : "";
		bool		ok = v->local_ok ?
			strcmp(code, "ok") == 0 || specific(code) :
			strcmp(code, "XX001") == 0;

		if (!ok)
		{
			snprintf(why, sizeof(why), "%s, yet %s", v->local_ok ?
					 "a model in another encoding" : "not a model", tok);
			save_failure(v, "raw", why, &n_fail_raw);
			break;
		}
	}
	free(copy);
}

static void
judge(const Value *v, Reply *t, Reply *b, Reply *r)
{
	char		why[512];

	n_values++;
	if (t->ok != b->ok)
	{
		snprintf(why, sizeof(why), "text input %s, binary input %s",
				 t->ok ? "accepts" : t->sqlstate, b->ok ? "accepts" : b->sqlstate);
		save_failure(v, "disagree", why, &n_fail_agree);
		return;
	}
	if (!t->ok)
	{
		n_rejected++;
		{
			char		key[48];

			snprintf(key, sizeof(key), "%s (text input)", t->sqlstate);
			count(rejections, &nrejections, 64, key);
			snprintf(key, sizeof(key), "%s (binary input)", b->sqlstate);
			count(rejections, &nrejections, 64, key);
		}
		count_reason(t->detail);
		if (!specific(t->sqlstate) || !specific(b->sqlstate))
		{
			snprintf(why, sizeof(why), "rejected with SQLSTATE %s (text) and %s (binary): %s",
					 t->sqlstate, b->sqlstate, t->detail);
			save_failure(v, "sqlstate", why, &n_fail_sqlstate);
		}
		else if (v->local_ok && strstr(t->detail, "database encoding") == NULL &&
				 strstr(t->detail, "stored prediction options") == NULL)
		{
			snprintf(why, sizeof(why), "nb_view_open accepts it, the server rejects it: %s", t->detail);
			save_failure(v, "disagree", why, &n_fail_agree);
		}
		if (r != NULL)
			judge_raw(v, r, NULL);
		return;
	}
	n_accepted++;
	if (!v->local_ok)
		save_failure(v, "disagree", "the server accepts what nb_view_open rejects", &n_fail_agree);
	{
		char	   *b64 = base64(v->bytes, v->size);
		const char *text = PQgetvalue(b->res, 0, 0);
		bool		bin_same = (size_t) PQgetlength(t->res, 0, 0) == v->size &&
			memcmp(PQgetvalue(t->res, 0, 0), v->bytes, v->size) == 0;

		if (!bin_same || strcmp(text, b64) != 0)
			save_failure(v, "roundtrip", !bin_same ? "text in, binary out: other bytes" :
						 "binary in, text out: other text", &n_fail_roundtrip);
		free(b64);
	}
	{
		const char *problem = check_use(PQgetvalue(b->res, 0, 1), why, sizeof(why));

		if (problem != NULL)
			save_failure(v, "use", problem, &n_fail_use);
		if (r != NULL)
			judge_raw(v, r, PQgetvalue(b->res, 0, 1));
	}
}

static int	test_no = 0;
static bool all_ok = true;

static void
tap(bool ok, const char *fmt,...)
{
	va_list		ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	all_ok &= ok;
}

static int
by_count(const void *a, const void *b)
{
	const Count *x = a,
			   *y = b;

	return (y->n > x->n) - (y->n < x->n);
}

int
main(int argc, char **argv)
{
	long		total;
	uint64_t	run_seed;
	PGconn	   *conn;
	PGresult   *res;
	Oid			model_oid;
	Value		window[WINDOW];
	long		sent = 0,
				done = 0;
	bool		lost = false;
	long		local_valid = 0;

	if (argc < 3)
	{
		fprintf(stderr, "usage: crafted COUNT SEED [FAILDIR [RAW]]\n");
		return 2;
	}
	total = atol(argv[1]);
	run_seed = strtoull(argv[2], NULL, 10);
	fail_dir = argc > 3 && argv[3][0] != '\0' ? argv[3] : NULL;
	raw_path = argc > 4 && strcmp(argv[4], "1") == 0;

	conn = PQconnectdb("");
	if (PQstatus(conn) != CONNECTION_OK)
		die("cannot connect: %s", PQerrorMessage(conn));
	res = PQexec(conn, "SELECT 'nb_model'::regtype::oid");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("no nb_model type: %s", PQerrorMessage(conn));
	model_oid = (Oid) strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	load_seeds(conn);

	memset(window, 0, sizeof(window));
	if (!PQenterPipelineMode(conn))
		die("cannot enter pipeline mode: %s", PQerrorMessage(conn));
	while (done < total && !lost)
	{
		while (sent < total && sent - done < WINDOW)
		{
			Value	   *v = &window[sent % WINDOW];

			make_value(v, sent, run_seed);
			local_valid += v->local_ok;
			send_value(conn, v, model_oid);
			sent++;
		}
		if (PQflush(conn) < 0)
			lost = true;
		else
		{
			Value	   *v = &window[done % WINDOW];
			Reply		t = {0},
						b = {0},
						r = {0};

			if (!get_reply(conn, &t) || !get_reply(conn, &b) ||
				(raw_path && !get_reply(conn, &r)))
			{
				long		lost_values = 0;

				lost = true;
				printf("# connection lost at value %ld (%s): %s", v->index, v->how,
					   PQerrorMessage(conn));
				save_failure(v, "crash", "the connection was lost", &lost_values);
			}
			else
				judge(v, &t, &b, raw_path ? &r : NULL);
			PQclear(t.res);
			PQclear(b.res);
			PQclear(r.res);
			done++;
		}
	}
	PQexitPipelineMode(conn);
	if (!lost)
	{
		res = PQexec(conn, "SELECT 1");
		lost = PQresultStatus(res) != PGRES_TUPLES_OK;
		PQclear(res);
	}

	qsort(rejections, nrejections, sizeof(Count), by_count);
	qsort(use_errors, nuse_errors, sizeof(Count), by_count);
	qsort(reasons, nreasons, sizeof(Count), by_count);
	printf("# %ld values from %d seeds (run seed %llu): %ld accepted, %ld rejected; "
		   "nb_view_open accepts %ld\n",
		   n_values, nseeds, (unsigned long long) run_seed, n_accepted, n_rejected, local_valid);
	for (int i = 0; i < nrejections; i++)
		printf("# rejected with SQLSTATE %s: %ld\n", rejections[i].key, rejections[i].n);
	for (int i = 0; i < nreasons && i < 20; i++)
		printf("# rejected because: %s: %ld\n", reasons[i].key, reasons[i].n);
	for (int i = 0; i < nuse_errors; i++)
		printf("# accepted, then %s: %ld\n", use_errors[i].key, use_errors[i].n);
	tap(!lost && n_values == total, "no crash: the connection survived all %ld values (%ld judged)",
		total, n_values);
	tap(n_fail_sqlstate == 0, "every rejection has a specific SQLSTATE (class 22, XX001 or 54000)%s",
		n_fail_sqlstate ? " — not for some" : "");
	tap(n_fail_agree == 0, "text input, binary input and nb_view_open agree on every value (%ld disagree)",
		n_fail_agree);
	tap(n_fail_roundtrip == 0, "every accepted value round-trips text and binary byte-identically (%ld differ)",
		n_fail_roundtrip);
	tap(n_fail_use == 0, "every accepted value merges, scores and is inspected without a wrong result "
		"or an unspecific error (%ld fail)", n_fail_use);
	if (raw_path)
		tap(n_fail_raw == 0, "unvalidated bytes (bytea cast to nb_model): every function fails with XX001 "
			"on the %ld that are not models, the others behave (%ld fail)",
			n_raw - local_valid, n_fail_raw);
	else
		printf("ok %d - unvalidated bytes # SKIP needs a superuser (CREATE CAST ... WITHOUT FUNCTION)\n",
			   ++test_no);
	PQfinish(conn);
	return all_ok ? 0 : 1;
}
