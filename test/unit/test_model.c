/*
 * test_model.c — unit tests of the pure model code (src/nb_*.c).
 *
 *   ./test_model                 run every test
 *   ./test_model WORD            run the tests whose name contains WORD
 *   ./test_model --write-corpus DIR
 *                                write the fuzzer's seed corpus (valid models)
 *
 * Prints "ok - name" or "not ok - name: detail" per test, then
 * "N passed, N failed"; exits 1 if any test failed.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "malloc_alloc.h"
#include "model_check.h"
#include "nb_alloc.h"
#include "nb_format.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_merge.h"
#include "nb_mutual_info.h"
#include "nb_scorer.h"
#include "nb_strmap.h"
#include "nb_trainer.h"
#include "raw_model.h"

/* ---------------------------------------------------------------- */
/* a tiny test framework                                             */

static int n_passed;
static int n_failed;
static bool cur_failed;
static char cur_detail[1024];

static void
fail_at(int line, const char *fmt, ...)
{
	va_list		ap;
	int			n;

	if (cur_failed)
		return;
	cur_failed = true;
	n = snprintf(cur_detail, sizeof(cur_detail), "line %d: ", line);
	va_start(ap, fmt);
	vsnprintf(cur_detail + n, sizeof(cur_detail) - n, fmt, ap);
	va_end(ap);
}

/* On failure: record the first failure and leave the test function. */
#define CHECK(cond, ...) \
	do { if (!(cond)) { fail_at(__LINE__, __VA_ARGS__); return; } } while (0)
#define CHECK_NEAR(got, want, tol, what) \
	do { double g_ = (got), w_ = (want); \
		 CHECK(fabs(g_ - w_) <= (tol), "%s = %.17g, expected %.17g", what, g_, w_); } while (0)

/* A comment line that does not count as a test. */
static void
note(const char *fmt, ...)
{
	va_list		ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

typedef void (*TestFn) (void);

static const char *filter;

static void
run(const char *name, TestFn fn)
{
	long		live;

	if (filter != NULL && strstr(name, filter) == NULL)
		return;
	cur_failed = false;
	cur_detail[0] = '\0';
	live = nb_test_live_blocks();
	fn();
	if (!cur_failed && nb_test_live_blocks() != live)
		fail_at(0, "%ld nb_alloc blocks not freed", nb_test_live_blocks() - live);
	if (cur_failed)
	{
		printf("not ok - %s: %s\n", name, cur_detail);
		n_failed++;
	}
	else
	{
		printf("ok - %s\n", name);
		n_passed++;
	}
	fflush(stdout);
}

/* ---------------------------------------------------------------- */
/* helpers                                                           */

#define MAX_DOC_TOKENS 64

typedef struct Row
{
	const char *label;
	double		weight;
	const char *tokens[MAX_DOC_TOKENS]; /* NULL-terminated, each counts once */
} Row;

/* One token through the batch API. */
static void
add_token(NbTrainer *t, const char *str, uint32_t len, double count)
{
	NbTokenRef	r;

	r.str = str;
	r.len = len;
	r.count = count;
	if (!nb_trainer_add_text(t, &r, 1))
		abort();
}

/* A document's tokens as one batch, as the aggregates do. */
static void
train_row(NbTrainer *t, const Row *r)
{
	NbTokenRef	refs[MAX_DOC_TOKENS];
	uint32_t	n = 0;

	nb_trainer_begin_doc(t, r->label, (uint32_t) strlen(r->label), r->weight);
	for (int i = 0; i < MAX_DOC_TOKENS && r->tokens[i] != NULL; i++)
	{
		refs[n].str = r->tokens[i];
		refs[n].len = (uint32_t) strlen(r->tokens[i]);
		refs[n].count = 1.0;
		n++;
	}
	if (!nb_trainer_add_text(t, refs, n))
		abort();
}

static NbTrainer *
train_rows(const Row *rows, int n)
{
	NbTrainer  *t = nb_trainer_create();

	for (int i = 0; i < n; i++)
		train_row(t, &rows[i]);
	return t;
}

/* Serialize into a new malloc'ed buffer. */
static unsigned char *
serialize(const NbTrainer *t, size_t *size)
{
	unsigned char *buf;

	*size = nb_trainer_flat_size(t, SIZE_MAX);
	buf = malloc(*size);
	nb_trainer_write(t, buf, *size);
	return buf;
}

static unsigned char *
serialize_rows(const Row *rows, int n, size_t *size)
{
	NbTrainer  *t = train_rows(rows, n);
	unsigned char *buf = serialize(t, size);

	nb_trainer_destroy(t);
	return buf;
}

static bool
open_view(NbView *v, const unsigned char *buf, size_t size, char *why, size_t whylen)
{
	NbFormatError e;

	if (nb_view_open(v, buf, size, &e))
		return true;
	snprintf(why, whylen, "%s", e.message);
	return false;
}

static int64_t
view_find_class(const NbView *v, const char *label)
{
	const char *s = v->labels;

	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		uint32_t	len = nb_read_u32(v->label_len, c);

		if (len == strlen(label) && memcmp(s, label, len) == 0)
			return c;
		s += len;
	}
	return -1;
}

static int64_t
view_find_token(const NbView *v, const char *tok)
{
	const char *s = v->tokens;

	for (uint32_t k = 0; k < v->n_tokens; k++)
	{
		uint32_t	len = nb_read_u32(v->token_len, k);

		if (len == strlen(tok) && memcmp(s, tok, len) == 0)
			return k;
		s += len;
	}
	return -1;
}

/* Count and document frequency of (token, label); false if no entry. */
static bool
view_entry(const NbView *v, const char *tok, const char *label, double *count, double *docs)
{
	int64_t		k = view_find_token(v, tok);
	int64_t		c = view_find_class(v, label);
	uint64_t	e = 0;

	if (k < 0 || c < 0)
		return false;
	for (int64_t i = 0; i < k; i++)
		e += nb_read_u32(v->token_entries, i);
	for (uint32_t i = 0; i < nb_read_u32(v->token_entries, k); i++, e++)
		if (nb_read_u32(v->entry_class, e) == c)
		{
			*count = nb_read_f64(v->entry_count, e);
			*docs = nb_read_f64(v->entry_docs, e);
			return true;
		}
	return false;
}

/* A text document (the bag "") in an NbDoc (one batch, as the server does). */
static void
make_doc(NbIndex *ix, const char *const *tokens, NbDoc *doc)
{
	NbTokenRef	refs[MAX_DOC_TOKENS];
	uint32_t	n = 0;

	for (int i = 0; tokens[i] != NULL; i++)
	{
		refs[n].str = tokens[i];
		refs[n].len = (uint32_t) strlen(tokens[i]);
		refs[n].count = 1;
		n++;
	}
	nb_doc_begin(doc);
	if (ix->unnamed_bag < 0)
		abort();
	nb_doc_add_tokens(ix, doc, (uint32_t) ix->unnamed_bag, refs, n);
}

/*
 * Posterior of a document (given as tokens) under a model given as rows.
 * post[] receives probabilities (exp of the log posteriors); returns best.
 */
typedef struct Scored
{
	int64_t		best;
	double		post[8];
	double		logp[8];
	bool		any_nan;
} Scored;

static Scored
score_rows(const Row *rows, int nrows, NbKind kind, double alpha, NbPriorMode pm,
		   const double *class_prior, const char *const *tokens)
{
	size_t		size;
	unsigned char *buf = serialize_rows(rows, nrows, &size);
	NbView		v;
	NbIndex		ix;
	NbScorer	sc;
	NbOptions	o = {kind, alpha, pm, class_prior, 1e-9};
	NbDoc		doc;
	char		why[200];
	Scored		r;

	memset(&r, 0, sizeof(r));
	if (!open_view(&v, buf, size, why, sizeof(why)))
	{
		fprintf(stderr, "score_rows: model rejected: %s\n", why);
		abort();
	}
	nb_index_build(&ix, &v);
	nb_scorer_build(&sc, &ix, &o);
	nb_doc_init(&doc, &ix);
	make_doc(&ix, tokens, &doc);
	r.best = nb_scorer_score(&sc, &doc, r.logp);
	nb_doc_free(&doc);
	for (uint32_t c = 0; c < v.n_classes && c < 8; c++)
	{
		r.post[c] = r.logp[c] == -INFINITY ? 0 : exp(r.logp[c]);
		if (isnan(r.logp[c]))
			r.any_nan = true;
	}
	nb_scorer_free(&sc);
	nb_index_free(&ix);
	free(buf);
	return r;
}

static char *
hex(const unsigned char *p, size_t n)
{
	static char out[4096];
	size_t		i;

	for (i = 0; i < n && 2 * i + 3 < sizeof(out); i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * i] = '\0';
	return out;
}

/* ---------------------------------------------------------------- */
/* the toy model of the scorer and mutual-information tests          */

/*
 * Classes (byte order): 0 = "ham", 1 = "spam".  Tokens: a b c d.
 *   ham : b c c d
 *   spam: a a b
 *   spam: a c
 * N (count)  a  b  c  d | T_c   D_c      d (docs)  a  b  c  d
 *   ham      0  1  2  1 |  4     1        ham       0  1  1  1
 *   spam     3  1  1  0 |  5     2        spam      2  1  1  0
 * V = 4, D = 3, T = 9, F = (3, 2, 3, 1); fitted prior 1/3, 2/3.
 */
static const Row toy[] = {
	{"ham", 1, {"b", "c", "c", "d"}},
	{"spam", 1, {"a", "a", "b"}},
	{"spam", 1, {"a", "c"}},
};
#define NTOY 3
#define HAM 0
#define SPAM 1

static const char *const doc_acc[] = {"a", "c", "c", NULL};
static const char *const doc_ad[] = {"a", "d", NULL};
static const char *const doc_aad[] = {"a", "a", "d", NULL};
static const char *const doc_da[] = {"d", "a", NULL};
static const char *const doc_d[] = {"d", NULL};
static const char *const doc_empty[] = {NULL};

/* ---------------------------------------------------------------- */
/* string map and hash                                               */

static void
test_strmap_many(void)
{
	NbStrMap	m;
	char		buf[64];
	const uint32_t n = 100000;

	nb_strmap_init(&m, 0);
	for (uint32_t i = 0; i < n; i++)
	{
		int			len = snprintf(buf, sizeof(buf), "tok%u", i * 7919u);
		uint32_t	id = nb_strmap_intern(&m, buf, len, nb_hash_token(buf, len));

		CHECK(id == i, "intern #%u returned id %u", i, id);
	}
	CHECK(m.count == n, "count %u", m.count);
	for (uint32_t i = 0; i < n; i += 13)
	{
		int			len = snprintf(buf, sizeof(buf), "tok%u", i * 7919u);
		uint64_t	h = nb_hash_token(buf, len);
		uint32_t	slen;
		const char *s;

		CHECK(nb_strmap_find(&m, buf, len, h) == i, "find %s", buf);
		CHECK(nb_strmap_intern(&m, buf, len, h) == i, "re-intern %s", buf);
		s = nb_strmap_str(&m, i, &slen);
		CHECK(slen == (uint32_t) len && memcmp(s, buf, len) == 0, "nb_strmap_str(%u)", i);
	}
	CHECK(m.count == n, "re-interning added strings (count %u)", m.count);
	for (uint32_t i = 0; i < 1000; i++)
	{
		int			len = snprintf(buf, sizeof(buf), "missing%u", i);

		CHECK(nb_strmap_find(&m, buf, len, nb_hash_token(buf, len)) == -1,
			  "found %s", buf);
	}
	/* a prefix of a present string is a different string */
	CHECK(nb_strmap_find(&m, "tok", 3, nb_hash_token("tok", 3)) == -1,
		  "found the prefix \"tok\"");
	CHECK((m.slot_mask + 1) >= 2 * (uint64_t) m.count, "load factor above 1/2");
	nb_strmap_free(&m);
}

static void
test_strmap_binary_and_long(void)
{
	NbStrMap	m;
	static const char bin[] = {'a', '\0', 'b', (char) 0xff};
	char	   *big = malloc(1 << 20);
	uint32_t	id_empty,
				id_bin,
				id_bin3,
				id_big,
				len;
	const char *s;

	memset(big, 'x', 1 << 20);
	nb_strmap_init(&m, 4);
	id_empty = nb_strmap_intern(&m, "", 0, nb_hash_token("", 0));
	id_bin = nb_strmap_intern(&m, bin, 4, nb_hash_token(bin, 4));
	id_bin3 = nb_strmap_intern(&m, bin, 3, nb_hash_token(bin, 3));
	id_big = nb_strmap_intern(&m, big, 1 << 20, nb_hash_token(big, 1 << 20));
	CHECK(id_empty == 0 && id_bin == 1 && id_bin3 == 2 && id_big == 3, "ids %u %u %u %u",
		  id_empty, id_bin, id_bin3, id_big);
	CHECK(nb_strmap_find(&m, "", 0, nb_hash_token("", 0)) == 0, "find empty");
	CHECK(nb_strmap_find(&m, bin, 4, nb_hash_token(bin, 4)) == 1, "find binary");
	s = nb_strmap_str(&m, 3, &len);
	CHECK(len == (1u << 20) && memcmp(s, big, len) == 0, "1 MB string round trip");
	s = nb_strmap_str(&m, 1, &len);
	CHECK(len == 4 && memcmp(s, bin, 4) == 0, "binary string round trip");
	nb_strmap_free(&m);
	free(big);
}

/* Every string has the same hash: probing must compare bytes. */
static void
test_strmap_collisions(void)
{
	NbStrMap	m;
	char		buf[32];

	nb_strmap_init(&m, 0);
	for (uint32_t i = 0; i < 2000; i++)
	{
		int			len = snprintf(buf, sizeof(buf), "%u", i);

		CHECK(nb_strmap_intern(&m, buf, len, 42) == i, "intern %s", buf);
	}
	/* hashes equal in the low 32 bits only */
	for (uint32_t i = 0; i < 2000; i++)
	{
		int			len = snprintf(buf, sizeof(buf), "h%u", i);

		CHECK(nb_strmap_intern(&m, buf, len, (uint64_t) i << 32) == 2000 + i, "intern %s", buf);
	}
	for (uint32_t i = 0; i < 2000; i++)
	{
		int			len = snprintf(buf, sizeof(buf), "%u", i);

		CHECK(nb_strmap_find(&m, buf, len, 42) == i, "find %s", buf);
		len = snprintf(buf, sizeof(buf), "h%u", i);
		CHECK(nb_strmap_find(&m, buf, len, (uint64_t) i << 32) == 2000 + i, "find %s", buf);
		CHECK(nb_strmap_find(&m, buf, len, 42) == -1, "found %s under the wrong hash", buf);
	}
	CHECK(nb_strmap_find(&m, "x", 1, 42) == -1, "found a missing string");
	nb_strmap_free(&m);
}

static void
test_hash(void)
{
	/*
	 * The checksum is part of the stored format: these values must never
	 * change (they were computed with the first implementation).
	 */
	static const struct
	{
		const char *s;
		uint64_t	seed;
		uint64_t	h;
	}			golden[] = {
		{"", 0, UINT64_C(0x0000000000000000)},
		{"", NB_CHECKSUM_SEED, UINT64_C(0xb5bbaa4f6a88d113)},
		{"a", 1, UINT64_C(0x7da4fdb9879b54fa)},
		{"hello world", 1, UINT64_C(0xb2f3b792e113621d)},
		{"0123456789abcdef0123", NB_CHECKSUM_SEED, UINT64_C(0xa08053a82ebda070)},
	};
	unsigned char buf[80];
	unsigned char shifted[96];
	uint64_t	hashes[65];

	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++)
	{
		uint64_t	h = nb_hash_bytes(golden[i].s, strlen(golden[i].s), golden[i].seed);

		CHECK(h == golden[i].h, "nb_hash_bytes(\"%s\", %#llx) = 0x%016llx, expected 0x%016llx",
			  golden[i].s, (unsigned long long) golden[i].seed, (unsigned long long) h,
			  (unsigned long long) golden[i].h);
	}
	for (int i = 0; i < 80; i++)
		buf[i] = (unsigned char) (i * 37 + 11);
	/* deterministic, alignment-independent */
	for (int off = 0; off < 8; off++)
	{
		memcpy(shifted + off, buf, 80);
		CHECK(nb_hash_bytes(shifted + off, 80, 1) == nb_hash_bytes(buf, 80, 1),
			  "hash depends on alignment (offset %d)", off);
	}
	/* every prefix length gives a different hash, including trailing zero bytes */
	memset(buf + 40, 0, 40);
	for (int len = 0; len <= 64; len++)
	{
		hashes[len] = nb_hash_bytes(buf, len, 7);
		CHECK(hashes[len] == nb_hash_bytes(buf, len, 7), "not deterministic");
		for (int j = 0; j < len; j++)
			CHECK(hashes[j] != hashes[len], "prefixes %d and %d collide", j, len);
	}
	CHECK(nb_hash_bytes(buf, 20, 1) != nb_hash_bytes(buf, 20, 2), "seed ignored");
	/*
	 * The format's checksum as nb_format.h defines it: the hash of the bytes
	 * after the header, seeded with the hash of the header's first 24 bytes.
	 */
	for (size_t size = NB_HEADER_SIZE; size <= 80; size += 7)
	{
		uint64_t	want = nb_hash_bytes(buf + NB_HEADER_SIZE, size - NB_HEADER_SIZE,
										 nb_hash_bytes(buf, 24, NB_CHECKSUM_SEED));

		CHECK(nb_format_checksum(buf, size) == want, "nb_format_checksum of %zu bytes", size);
	}
	/* a single bit changes the hash, in every position */
	for (int bit = 0; bit < 8 * 24; bit++)
	{
		uint64_t	h0 = nb_hash_bytes(buf, 24, 3);

		buf[bit / 8] ^= (unsigned char) (1 << (bit % 8));
		CHECK(nb_hash_bytes(buf, 24, 3) != h0, "bit %d ignored", bit);
		buf[bit / 8] ^= (unsigned char) (1 << (bit % 8));
	}
}

/*
 * nb_hash_token and nb_bytes_equal read strings with overlapping word loads:
 * every length up to 40 at every alignment, with a difference in every byte.
 * The strings sit at the very end of an exact-size allocation, so ASan
 * catches a read past them.
 */
static void
test_token_hash_and_equal(void)
{
	for (size_t len = 0; len <= 40; len++)
		for (size_t off = 0; off < 8; off++)
		{
			char	   *a = malloc(off + len);
			char	   *b = malloc(len ? len : 1);
			uint64_t	ha;

			for (size_t i = 0; i < len; i++)
				a[off + i] = b[i] = (char) ('a' + (i * 7) % 26);
			ha = nb_hash_token(a + off, len);
			CHECK(ha == nb_hash_token(b, len), "hash of %zu bytes depends on alignment %zu", len, off);
			CHECK(nb_bytes_equal(a + off, b, len), "equal strings of %zu bytes differ", len);
			for (size_t i = 0; i < len; i++)
			{
				b[i] ^= 0x20;
				CHECK(!nb_bytes_equal(a + off, b, len), "byte %zu of %zu ignored by nb_bytes_equal", i, len);
				CHECK(nb_hash_token(b, len) != ha, "byte %zu of %zu ignored by nb_hash_token", i, len);
				b[i] ^= 0x20;
			}
			/* a zero byte more: a different string, a different hash */
			if (len > 0)
				CHECK(nb_hash_token(a + off, len - 1) != ha, "length %zu vs %zu collide", len - 1, len);
			free(a);
			free(b);
		}
}

/* ---------------------------------------------------------------- */
/* trainer                                                           */

static void
test_trainer_counts(void)
{
	/* weights and repeated tokens: count += weight per occurrence, docs += weight per doc */
	static const Row rows[] = {
		{"spam", 1, {"win", "money", "money", "now"}},
		{"spam", 2, {"money", "cheap"}},
		{"ham", 0.5, {"meeting", "money", "meeting", "meeting"}},
		{"ham", 1, {NULL}},
	};
	static const struct
	{
		const char *tok,
				   *label;
		double		count,
					docs;
	}			want[] = {
		{"cheap", "spam", 2, 2},
		{"meeting", "ham", 1.5, 0.5},
		{"money", "ham", 0.5, 0.5},
		{"money", "spam", 4, 3},
		{"now", "spam", 1, 1},
		{"win", "spam", 1, 1},
	};
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;
	size_t		size;
	NbView		v;
	char		why[200];
	double		count,
				docs;

	CHECK(nb_trainer_is_empty(t), "new trainer not empty");
	for (int i = 0; i < 4; i++)
		train_row(t, &rows[i]);
	CHECK(!nb_trainer_is_empty(t), "trainer empty after rows");
	/* tsvector style: one call with a count of positions */
	nb_trainer_begin_doc(t, "spam", 4, 2);
	add_token(t, "x", 1, 3);
	add_token(t, "x", 1, 1);
	CHECK(!t->overflow, "overflow flag set");
	buf = serialize(t, &size);
	nb_trainer_destroy(t);
	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(v.n_classes == 2 && v.n_tokens == 6 && v.n_entries == 7, "C=%u V=%u E=%llu",
		  v.n_classes, v.n_tokens, (unsigned long long) v.n_entries);
	CHECK(view_find_class(&v, "ham") == 0 && view_find_class(&v, "spam") == 1, "label order");
	CHECK(nb_read_f64(v.class_docs, 0) == 1.5 && nb_read_f64(v.class_docs, 1) == 5,
		  "class docs %g %g", nb_read_f64(v.class_docs, 0), nb_read_f64(v.class_docs, 1));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
	{
		CHECK(view_entry(&v, want[i].tok, want[i].label, &count, &docs), "no entry (%s, %s)",
			  want[i].tok, want[i].label);
		CHECK(count == want[i].count && docs == want[i].docs, "(%s, %s): count %g docs %g, expected %g %g",
			  want[i].tok, want[i].label, count, docs, want[i].count, want[i].docs);
	}
	CHECK(view_entry(&v, "x", "spam", &count, &docs) && count == 8 && docs == 2,
		  "(x, spam) count %g docs %g, expected 8 2", count, docs);
	CHECK(!view_entry(&v, "win", "ham", &count, &docs), "entry (win, ham) exists");
	free(buf);
}

/* The trainer's output equals the layout of nb_format.h written by hand. */
static void
test_trainer_layout(void)
{
	RawModel	m;
	unsigned char *want,
			   *got;
	size_t		wsize,
				gsize;
	uint32_t	k;

	got = serialize_rows(toy, NTOY, &gsize);
	raw_init(&m);
	raw_add_class(&m, "ham", 3, 1);
	raw_add_class(&m, "spam", 4, 2);
	k = raw_add_token(&m, "a", 1);
	raw_add_entry(&m, k, SPAM, 3, 2);
	k = raw_add_token(&m, "b", 1);
	raw_add_entry(&m, k, HAM, 1, 1);
	raw_add_entry(&m, k, SPAM, 1, 1);
	k = raw_add_token(&m, "c", 1);
	raw_add_entry(&m, k, HAM, 2, 1);
	raw_add_entry(&m, k, SPAM, 1, 1);
	k = raw_add_token(&m, "d", 1);
	raw_add_entry(&m, k, HAM, 1, 1);
	want = raw_serialize(&m, &wsize);
	raw_free(&m);
	if (wsize != gsize || memcmp(want, got, wsize) != 0)
	{
		note("want %s", hex(want, wsize));
		note("got  %s", hex(got, gsize));
	}
	CHECK(wsize == gsize, "size %zu, expected %zu", gsize, wsize);
	CHECK(memcmp(want, got, wsize) == 0, "bytes differ from the documented layout");
	CHECK(wsize == 32 + 2 * 12 + 4 * 8 + 6 * 20 + 7 + 4, "size %zu", wsize);
	free(want);
	free(got);
}

/* Random documents: integer counts and dyadic weights keep every sum exact. */
#define RAND_ROWS 300
#define RAND_TOKENS 2500

typedef struct RandRow
{
	char		label[8];
	double		weight;
	uint32_t	n;
	uint32_t	tok[MAX_DOC_TOKENS];
} RandRow;

static void
rand_rows(RandRow *rows, int n, int nclasses, uint32_t vocab, uint64_t seed, bool empty_docs)
{
	static const double weights[] = {1, 1, 1, 2, 0.5, 0.25, 3};

	for (int i = 0; i < n; i++)
	{
		RandRow    *r = &rows[i];

		snprintf(r->label, sizeof(r->label), "c%d", (int) (nbt_rand(&seed) % nclasses));
		r->weight = weights[nbt_rand(&seed) % 7];
		r->n = empty_docs && nbt_rand(&seed) % 10 == 0 ? 0 :
			1 + (uint32_t) (nbt_rand(&seed) % (MAX_DOC_TOKENS - 1));
		for (uint32_t j = 0; j < r->n; j++)
		{
			/* Zipf-ish: small ids are frequent */
			uint64_t	x = nbt_rand(&seed);

			r->tok[j] = (uint32_t) ((x % vocab) * ((x >> 40) % 4 == 0 ? 1 : 0) +
									(x >> 20) % 30);
			r->tok[j] %= vocab;
		}
	}
}

/*
 * batch: 0 = the whole document in one nb_trainer_add_tokens call, 1 = one
 * call per token, 2 = batches of random sizes (seeded by the row).
 */
static int train_batching;

static void
train_rand(NbTrainer *t, const RandRow *r)
{
	char		tok[MAX_DOC_TOKENS][16];
	NbTokenRef	refs[MAX_DOC_TOKENS];
	uint64_t	seed = r->n * 31 + r->tok[0];
	uint32_t	j = 0;

	nb_trainer_begin_doc(t, r->label, (uint32_t) strlen(r->label), r->weight);
	for (uint32_t i = 0; i < r->n; i++)
	{
		refs[i].len = (uint32_t) snprintf(tok[i], sizeof(tok[i]), "t%u", r->tok[i]);
		refs[i].str = tok[i];
		refs[i].count = 1.0;
	}
	/* a text row with no tokens still has the bag "" (as the server adds it) */
	if (train_batching == 0 || r->n == 0)
		nb_trainer_add_text(t, refs, r->n);
	else
		while (j < r->n)
		{
			uint32_t	b = train_batching == 1 ? 1 : (uint32_t) (nbt_rand(&seed) % 9);

			if (b > r->n - j)
				b = r->n - j;
			nb_trainer_add_text(t, refs + j, b);
			j += b;
		}
}

static unsigned char *
serialize_rand(const RandRow *rows, const int *order, int n, size_t *size)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;

	for (int i = 0; i < n; i++)
		train_rand(t, &rows[order ? order[i] : i]);
	buf = serialize(t, size);
	nb_trainer_destroy(t);
	return buf;
}

static void
merge_bytes(NbTrainer *t, const unsigned char *buf, size_t size)
{
	NbView		v;
	NbFormatError e;
	uint32_t	conflict;

	if (!nb_view_open(&v, buf, size, &e))
	{
		fprintf(stderr, "merge_bytes: %s\n", e.message);
		abort();
	}
	if (nb_trainer_merge_view(t, &v, &conflict) != NB_MERGE_OK)
	{
		fprintf(stderr, "merge_bytes: merge refused\n");
		abort();
	}
}

/* ---------------------------------------------------------------- */
/* the model size limit (NB_MODEL_MAX_SIZE) and its arithmetic       */

static void
test_format_size_limit(void)
{
	/* by hand: 3 bytes make 4 characters, a partial group is padded to 4 */
	static const uint64_t enc[][2] = {{0, 0}, {1, 4}, {2, 4}, {3, 4}, {4, 8}, {5, 8}, {6, 8}, {7, 12}};
	/* characters, padding, bytes */
	static const uint64_t dec[][3] = {{0, 0, 0}, {4, 0, 3}, {4, 1, 2}, {4, 2, 1}, {8, 1, 5},
	{UINT64_C(1073741816), 0, UINT64_C(805306362)}};

	for (size_t i = 0; i < sizeof(enc) / sizeof(enc[0]); i++)
		CHECK(nb_base64_len(enc[i][0]) == enc[i][1], "nb_base64_len(%llu) = %llu",
			  (unsigned long long) enc[i][0], (unsigned long long) nb_base64_len(enc[i][0]));
	for (size_t i = 0; i < sizeof(dec) / sizeof(dec[0]); i++)
		CHECK(nb_base64_decoded_len(dec[i][0], (unsigned) dec[i][1]) == dec[i][2],
			  "nb_base64_decoded_len(%llu, %llu)", (unsigned long long) dec[i][0],
			  (unsigned long long) dec[i][1]);
	for (uint64_t n = 0; n < 3000; n++)
		CHECK(nb_base64_decoded_len(nb_base64_len(n), (unsigned) ((3 - n % 3) % 3)) == n,
			  "decoded length of the text of %llu bytes", (unsigned long long) n);

	/*
	 * MaxAllocSize is 2^30 - 1 = 1073741823; minus the varlena header and
	 * the NUL leaves 1073741818 characters: 268435454 whole groups of 4
	 * (1073741816 characters), 805306362 bytes.
	 */
	CHECK(NB_ALLOC_LIMIT == UINT64_C(1073741823), "NB_ALLOC_LIMIT");
	CHECK(NB_MODEL_MAX_SIZE == UINT64_C(805306362), "NB_MODEL_MAX_SIZE = %llu",
		  (unsigned long long) NB_MODEL_MAX_SIZE);
	CHECK(nb_base64_len(NB_MODEL_MAX_SIZE) == UINT64_C(1073741816), "text of the largest model");
	CHECK(nb_base64_len(NB_MODEL_MAX_SIZE) + NB_TEXT_OVERHEAD <= NB_ALLOC_LIMIT,
		  "the largest model's text value fits");
	CHECK(nb_base64_len(NB_MODEL_MAX_SIZE + 1) + NB_TEXT_OVERHEAD > NB_ALLOC_LIMIT,
		  "one byte more does not fit");
}

/*
 * Merge the serialized models a, then b, into a trainer limited to limit
 * bytes; returns the status of b's merge and, when it is fine, the merged
 * model's size in *size.
 */
static NbMergeStatus
merge_limited(const unsigned char *a, size_t sa, const unsigned char *b, size_t sb,
			  uint64_t limit, size_t *size)
{
	NbTrainer  *t = nb_trainer_create();
	NbView		va,
				vb;
	NbFormatError e;
	uint32_t	conflict;
	NbMergeStatus st;

	t->size_limit = limit;
	if (!nb_view_open(&va, a, sa, &e) || !nb_view_open(&vb, b, sb, &e))
		abort();
	st = nb_trainer_merge_view(t, &va, &conflict);
	if (st == NB_MERGE_OK)
		st = nb_trainer_merge_view(t, &vb, &conflict);
	*size = st == NB_MERGE_OK ? nb_trainer_flat_size(t, SIZE_MAX) : 0;
	nb_trainer_destroy(t);
	return st;
}

static void
test_trainer_merge_size_limit(void)
{
	static const Row a_rows[] = {{"a", 1, {"x"}}, {"b", 1, {"y"}}, {"c", 1, {"z"}}};
	/* what b adds: a label only; a new token; only a new (token, class) entry */
	static const Row b_rows[][1] = {{{"newlabel", 1, {NULL}}}, {{"a", 1, {"newtoken"}}},
	{{"c", 1, {"x"}}}};
	static const char *what[] = {"a new label", "a new token", "a new entry"};
	size_t		sa;
	unsigned char *a = serialize_rows(a_rows, 3, &sa);
	NbTrainer  *t = train_rows(a_rows, 3);

	/* a text-only model has no feature arrays: the lower bound is exact */
	CHECK(nb_trainer_min_flat_size(t) == sa, "min flat size %llu of a %zu-byte model",
		  (unsigned long long) nb_trainer_min_flat_size(t), sa);
	nb_trainer_destroy(t);
	for (int i = 0; i < 3; i++)
	{
		size_t		sb,
					merged,
					got;
		unsigned char *b = serialize_rows(b_rows[i], 1, &sb);
		NbMergeStatus at,
					below,
					first;

		(void) merge_limited(a, sa, b, sb, UINT64_MAX, &merged);
		at = merge_limited(a, sa, b, sb, merged, &got);
		CHECK(got == merged || at != NB_MERGE_OK, "%s: %zu bytes under a limit, %zu without",
			  what[i], got, merged);
		below = merge_limited(a, sa, b, sb, merged - 1, &got);
		first = merge_limited(a, sa, a, sa, sa - 1, &got);
		free(b);
		CHECK(merged > sa, "%s: merged %zu bytes, a %zu", what[i], merged, sa);
		CHECK(at == NB_MERGE_OK, "%s: limit = merged size: status %d", what[i], (int) at);
		CHECK(below == NB_MERGE_TOO_LARGE, "%s: limit one byte below: status %d",
			  what[i], (int) below);
		CHECK(first == NB_MERGE_TOO_LARGE, "a part above the limit: status %d", (int) first);
	}
	free(a);
}

static void
test_trainer_merge(void)
{
	RandRow    *rows = malloc(sizeof(RandRow) * RAND_ROWS);
	size_t		s_all,
				s_a,
				s_b,
				s_m;
	unsigned char *all,
			   *a,
			   *b,
			   *m;
	NbTrainer  *t;
	const int	split = 120;

	rand_rows(rows, RAND_ROWS, 5, RAND_TOKENS, 1, true);
	all = serialize_rand(rows, NULL, RAND_ROWS, &s_all);
	a = serialize_rand(rows, NULL, split, &s_a);
	b = serialize_rand(rows + split, NULL, RAND_ROWS - split, &s_b);

	/* merge(A, B) */
	t = nb_trainer_create();
	merge_bytes(t, a, s_a);
	merge_bytes(t, b, s_b);
	m = serialize(t, &s_m);
	nb_trainer_destroy(t);
	CHECK(s_m == s_all && memcmp(m, all, s_all) == 0, "merge(A, B) differs from training on A+B");
	free(m);

	/* merge(B, A) */
	t = nb_trainer_create();
	merge_bytes(t, b, s_b);
	merge_bytes(t, a, s_a);
	m = serialize(t, &s_m);
	nb_trainer_destroy(t);
	CHECK(s_m == s_all && memcmp(m, all, s_all) == 0, "merge(B, A) differs from training on A+B");
	free(m);

	/* train A's rows, then merge B's model, then continue with nothing */
	t = nb_trainer_create();
	for (int i = 0; i < split; i++)
		train_rand(t, &rows[i]);
	merge_bytes(t, b, s_b);
	m = serialize(t, &s_m);
	nb_trainer_destroy(t);
	CHECK(s_m == s_all && memcmp(m, all, s_all) == 0, "rows of A + merge(B) differs");
	free(m);

	/* merge(B) first, then train A's rows: documents keep their own frequencies */
	t = nb_trainer_create();
	merge_bytes(t, b, s_b);
	for (int i = 0; i < split; i++)
		train_rand(t, &rows[i]);
	m = serialize(t, &s_m);
	nb_trainer_destroy(t);
	CHECK(s_m == s_all && memcmp(m, all, s_all) == 0, "merge(B) + rows of A differs");
	free(m);

	/* many small partial models (like parallel workers) */
	t = nb_trainer_create();
	for (int i = 0; i < RAND_ROWS; i += 7)
	{
		size_t		sp;
		unsigned char *p = serialize_rand(rows + i, NULL, i + 7 <= RAND_ROWS ? 7 : RAND_ROWS - i, &sp);

		merge_bytes(t, p, sp);
		free(p);
	}
	m = serialize(t, &s_m);
	nb_trainer_destroy(t);
	CHECK(s_m == s_all && memcmp(m, all, s_all) == 0, "merge of 43 partial models differs");
	free(m);
	free(all);
	free(a);
	free(b);
	free(rows);
}

static void
test_trainer_canonical(void)
{
	RandRow    *rows = malloc(sizeof(RandRow) * RAND_ROWS);
	int		   *order = malloc(sizeof(int) * RAND_ROWS);
	size_t		s0,
				s1;
	unsigned char *b0,
			   *b1;
	uint64_t	seed = 99;
	NbView		v;
	char		why[200];

	rand_rows(rows, RAND_ROWS, 7, RAND_TOKENS, 2, true);
	b0 = serialize_rand(rows, NULL, RAND_ROWS, &s0);
	CHECK(open_view(&v, b0, s0, why, sizeof(why)), "rejected: %s", why);
	/* large enough to grow the pair table and the token map several times */
	CHECK(v.n_entries > 2048 && v.n_tokens > 1024, "only %llu entries, %u tokens",
		  (unsigned long long) v.n_entries, v.n_tokens);
	for (int trial = 0; trial < 5; trial++)
	{
		for (int i = 0; i < RAND_ROWS; i++)
			order[i] = i;
		for (int i = RAND_ROWS - 1; i > 0; i--)
		{
			int			j = (int) (nbt_rand(&seed) % (i + 1));
			int			x = order[i];

			order[i] = order[j];
			order[j] = x;
		}
		/* also shuffle the tokens inside each document */
		for (int i = 0; i < RAND_ROWS; i++)
			for (int j = (int) rows[i].n - 1; j > 0; j--)
			{
				int			k = (int) (nbt_rand(&seed) % (j + 1));
				uint32_t	x = rows[i].tok[j];

				rows[i].tok[j] = rows[i].tok[k];
				rows[i].tok[k] = x;
			}
		b1 = serialize_rand(rows, order, RAND_ROWS, &s1);
		CHECK(s1 == s0 && memcmp(b0, b1, s0) == 0, "order %d gives different bytes", trial);
		free(b1);
	}
	free(b0);
	free(rows);
	free(order);
}

/*
 * nb_trainer_add_tokens: one batch per document, one call per token and
 * random batch sizes (including empty batches) give the same model; a batch
 * may name a new token several times.
 */
static void
test_trainer_batches(void)
{
	RandRow    *rows = malloc(sizeof(RandRow) * RAND_ROWS);
	size_t		s0,
				s1;
	unsigned char *b0,
			   *b1;

	rand_rows(rows, RAND_ROWS, 4, RAND_TOKENS, 5, true);
	train_batching = 0;
	b0 = serialize_rand(rows, NULL, RAND_ROWS, &s0);
	for (int mode = 1; mode <= 2; mode++)
	{
		train_batching = mode;
		b1 = serialize_rand(rows, NULL, RAND_ROWS, &s1);
		train_batching = 0;
		CHECK(s1 == s0 && memcmp(b0, b1, s0) == 0, "batching mode %d gives different bytes", mode);
		free(b1);
	}
	free(b0);
	free(rows);
}

/* Byte order of labels and tokens: unsigned, shorter first; "" and binary bytes. */
static void
test_trainer_byte_order(void)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;
	size_t		size;
	NbView		v;
	char		why[200];
	static const char *const toks[] = {"\xff", "ab", "", "a", "\xc3\xa9t\xc3\xa9", "B", "a\x01"};
	static const char *const sorted[] = {"", "B", "a", "a\x01", "ab", "\xc3\xa9t\xc3\xa9", "\xff"};
	const char *s;

	nb_trainer_begin_doc(t, "\xff", 1, 1);
	nb_trainer_begin_doc(t, "", 0, 1);
	for (int i = 0; i < 7; i++)
		add_token(t, toks[i], (uint32_t) strlen(toks[i]), 1);
	nb_trainer_begin_doc(t, "Z", 1, 1);
	buf = serialize(t, &size);
	nb_trainer_destroy(t);
	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(v.n_classes == 3 && nb_read_u32(v.label_len, 0) == 0 &&
		  memcmp(v.labels, "Z\xff", 2) == 0, "labels not in byte order");
	s = v.tokens;
	for (uint32_t k = 0; k < 7; k++)
	{
		uint32_t	len = nb_read_u32(v.token_len, k);

		CHECK(len == strlen(sorted[k]) && memcmp(s, sorted[k], len) == 0, "token %u out of order", k);
		s += len;
	}
	free(buf);
}

/* ---------------------------------------------------------------- */
/* nb_view_open                                                      */

/* A few valid values: the toy model, a bigger random one, edge shapes. */
typedef struct Sample
{
	const char *name;
	unsigned char *buf;
	size_t		size;
} Sample;

#define NSAMPLES 8

static unsigned char *v2_model(int which, size_t *size);

static void
make_samples(Sample *s)
{
	static const Row one_class[] = {{"only", 1, {"x", "y", "x"}}};
	static const Row no_tokens[] = {{"c", 2, {NULL}}};
	RandRow    *rows = malloc(sizeof(RandRow) * 12);

	s[0].name = "toy";
	s[0].buf = serialize_rows(toy, NTOY, &s[0].size);
	s[1].name = "one class";
	s[1].buf = serialize_rows(one_class, 1, &s[1].size);
	s[2].name = "no tokens";
	s[2].buf = serialize_rows(no_tokens, 1, &s[2].size);
	rand_rows(rows, 10, 3, 16, 3, true);
	for (int i = 0; i < 10; i++)
		rows[i].n %= 6;
	s[3].name = "random";
	s[3].buf = serialize_rand(rows, NULL, 10, &s[3].size);
	free(rows);
	s[4].name = "mixed v2";
	s[4].buf = v2_model(3, &s[4].size);
	s[5].name = "v2 with a vector";
	s[5].buf = v2_model(0, &s[5].size);
	s[6].name = "v2 prior only";
	s[6].buf = v2_model(1, &s[6].size);
	s[7].name = "v2 random mixed";
	s[7].buf = v2_model(2, &s[7].size);
}

static void
free_samples(Sample *s)
{
	for (int i = 0; i < NSAMPLES; i++)
		free(s[i].buf);
}

static void
test_view_accepts_samples(void)
{
	Sample		s[NSAMPLES];
	NbtStats	st = {0};
	char		err[512];

	make_samples(s);
	for (int i = 0; i < NSAMPLES; i++)
	{
		NbView		v;

		CHECK(open_view(&v, s[i].buf, s[i].size, err, sizeof(err)), "%s rejected: %s", s[i].name, err);
		CHECK(nbt_check_model(s[i].buf, s[i].size, &v, 1, 0, &st, err, sizeof(err)),
			  "%s: %s", s[i].name, err);
	}
	free_samples(s);
}

/* Any alignment: values are read with memcpy (UBSan checks the loads). */
static void
test_view_unaligned(void)
{
	size_t		size;
	unsigned char *buf = serialize_rows(toy, NTOY, &size);
	unsigned char *big = malloc(size + 8);
	NbtStats	st = {0};
	char		err[512];

	for (int off = 1; off < 8; off++)
	{
		NbView		v;

		memcpy(big + off, buf, size);
		CHECK(open_view(&v, big + off, size, err, sizeof(err)), "offset %d rejected: %s", off, err);
		CHECK(nbt_check_model(big + off, size, &v, 1, 0, &st, err, sizeof(err)), "offset %d: %s", off, err);
	}
	free(buf);
	free(big);
}

static void
test_view_truncations(void)
{
	Sample		s[NSAMPLES];

	make_samples(s);
	for (int i = 0; i < NSAMPLES; i++)
		for (size_t len = 0; len < s[i].size; len++)
		{
			/* a fresh exact-size copy, so ASan sees any read past the end */
			unsigned char *p = malloc(len ? len : 1);
			NbView		v;
			NbFormatError e;
			bool		accepted;

			memcpy(p, s[i].buf, len);
			accepted = nb_view_open(&v, p, len, &e);
			if (!accepted && len >= NB_HEADER_SIZE)
			{
				/* and with the checksum made right for the shorter value */
				nbt_fix_checksum(p, len);
				accepted = nb_view_open(&v, p, len, &e);
			}
			free(p);
			CHECK(!accepted, "%s truncated to %zu of %zu bytes accepted", s[i].name, len, s[i].size);
		}
	free_samples(s);
}

static void
test_view_extensions(void)
{
	Sample		s[NSAMPLES];

	make_samples(s);
	for (int i = 0; i < NSAMPLES; i++)
		for (size_t extra = 1; extra <= 24; extra++)
			for (int fill = 0; fill < 2; fill++)
			{
				size_t		len = s[i].size + extra;
				unsigned char *p = malloc(len);
				NbView		v;
				NbFormatError e;

				memcpy(p, s[i].buf, s[i].size);
				memset(p + s[i].size, fill ? 'z' : 0, extra);
				nbt_fix_checksum(p, len);
				CHECK(!nb_view_open(&v, p, len, &e), "%s + %zu bytes of %s accepted",
					  s[i].name, extra, fill ? "'z'" : "zero");
				free(p);
			}
	free_samples(s);
}

static void
bitflips(bool fix_checksum)
{
	Sample		s[NSAMPLES];
	NbtStats	st = {0};
	unsigned long accepted = 0,
				total = 0,
				bad = 0;
	char		first[600] = "";
	char		first_negzero[600] = "";
	unsigned long negzero = 0;

	make_samples(s);
	for (int i = 0; i < NSAMPLES; i++)
	{
		unsigned char *p = malloc(s[i].size);

		for (size_t bit = 0; bit < 8 * s[i].size; bit++)
		{
			NbView		v;
			NbFormatError e;
			char		err[512];

			if (fix_checksum && bit / 8 >= 24 && bit / 8 < 32)
				continue;
			memcpy(p, s[i].buf, s[i].size);
			p[bit / 8] ^= (unsigned char) (1u << (bit % 8));
			if (fix_checksum)
				nbt_fix_checksum(p, s[i].size);
			total++;
			if (!nb_view_open(&v, p, s[i].size, &e))
				continue;
			accepted++;
			if (!fix_checksum)
				note("%s: flip of bit %zu (byte %zu) accepted despite the checksum",
					 s[i].name, bit, bit / 8);
			/* an accepted value must be fully usable */
			if (!nbt_check_model(p, s[i].size, &v, bit, 0, &st, err, sizeof(err)))
			{
				const char *known = nbt_known_bug(p, s[i].size, &v, err);

				if (known != NULL)
				{
					/* the known src/ bugs, reported separately below */
					if (negzero++ == 0)
						snprintf(first_negzero, sizeof(first_negzero), "%s with bit %zu flipped: %s",
								 s[i].name, bit, known);
					continue;
				}
				if (bad++ == 0)
				{
					note("first failing value: %s", hex(p, s[i].size));
					snprintf(first, sizeof(first), "%s with bit %zu flipped%s: %s", s[i].name, bit,
							 fix_checksum ? " (checksum fixed)" : "", err);
				}
			}
		}
		free(p);
	}
	free_samples(s);
	note("%lu of %lu single-bit flips accepted%s; %llu posteriors compared with the reference",
		 accepted, total, fix_checksum ? " after fixing the checksum" : "",
		 (unsigned long long) st.ref_compared);
	CHECK(bad == 0, "%lu accepted values fail the checks; first: %s", bad, first);
	CHECK(negzero == 0, "%lu accepted values fail because of known src/ bugs; first: %s", negzero,
		  first_negzero);
	if (!fix_checksum)
		CHECK(accepted == 0, "%lu flips accepted despite the checksum", accepted);
}

static void
test_view_bitflips(void)
{
	bitflips(false);
}

static void
test_view_bitflips_checksum_fixed(void)
{
	bitflips(true);
}

/* The toy model as a RawModel, to corrupt. */
static void
toy_raw(RawModel *m)
{
	uint32_t	k;

	raw_init(m);
	raw_add_class(m, "ham", 3, 1);
	raw_add_class(m, "spam", 4, 2);
	k = raw_add_token(m, "a", 1);
	raw_add_entry(m, k, SPAM, 3, 2);
	k = raw_add_token(m, "b", 1);
	raw_add_entry(m, k, HAM, 1, 1);
	raw_add_entry(m, k, SPAM, 1, 1);
	k = raw_add_token(m, "c", 1);
	raw_add_entry(m, k, HAM, 2, 1);
	raw_add_entry(m, k, SPAM, 1, 1);
	k = raw_add_token(m, "d", 1);
	raw_add_entry(m, k, HAM, 1, 1);
}

typedef enum
{
	C_NONE,
	C_TOKENS_UNSORTED, C_TOKEN_DUP, C_LABELS_UNSORTED, C_LABEL_DUP,
	C_CLASS_OUT_OF_RANGE, C_CLASS_HUGE, C_CLASSES_UNSORTED, C_CLASS_DUP,
	C_COUNT_ZERO, C_COUNT_NEG_ZERO, C_COUNT_NEG, C_COUNT_NAN, C_COUNT_INF,
	C_EDOCS_ZERO, C_EDOCS_NAN, C_EDOCS_INF,
	C_CDOCS_ZERO, C_CDOCS_NEG, C_CDOCS_NAN, C_CDOCS_INF, C_CDOCS_NEG_INF,
	C_TOKEN_NO_ENTRIES, C_TOKEN_TOO_MANY_ENTRIES,
	C_TOKEN_ZERO_BYTE, C_LABEL_ZERO_BYTE, C_NO_CLASSES, C_TOKEN_EMPTY_DUP,
	/* header / length patches after writing */
	P_BAD_MAGIC, P_VERSION, P_FLAGS, P_C_ZERO, P_C_PLUS1, P_C_HUGE, P_V_PLUS1, P_V_HUGE,
	P_E_ZERO, P_E_PLUS1, P_E_MINUS1, P_E_HUGE, P_E_WRAP4, P_E_WRAP8, P_E_WRAP20,
	P_LABEL_LEN_HUGE, P_LABEL_LEN_PLUS1, P_LABEL_LEN_MINUS1, P_TOKEN_LEN_PLUS1,
	P_TOKEN_LEN_MINUS1, P_TOKEN_LEN_HUGE, P_TOKEN_ENTRIES_HUGE, P_TOKEN_ENTRIES_ZERO,
	P_LABEL_LEN_SHIFT, P_TOKEN_LEN_SHIFT,
	N_CORRUPTIONS
} Corruption;

static const char *const corruption_name[] = {
	"none",
	"tokens unsorted", "duplicate token", "labels unsorted", "duplicate label",
	"entry class = C", "entry class 0xffffffff", "entry classes decreasing", "duplicate entry class",
	"count 0", "count -0.0", "count negative", "count NaN", "count infinite",
	"entry docs 0", "entry docs NaN", "entry docs infinite",
	"class docs 0", "class docs negative", "class docs NaN", "class docs infinite", "class docs -infinity",
	"token with 0 entries", "token with C+1 entries",
	"zero byte in a token", "zero byte in a label", "no classes", "two empty tokens",
	"bad magic", "version 3", "flags 1", "header C = 0", "header C + 1", "header C huge",
	"header V + 1", "header V huge",
	"header E = 0", "header E + 1", "header E - 1", "header E = 2^64-1",
	"header E = 2^62 (E*4 wraps)", "header E = 2^61 (E*8 wraps)", "header E * 20 wraps",
	"label length huge", "label length + 1", "label length - 1", "token length + 1",
	"token length - 1", "token length huge", "token entries huge", "token entries 0 (kept E)",
	"label lengths shifted (sum kept)", "token lengths shifted (sum kept)",
};

static unsigned char *
corrupted(Corruption c, size_t *size)
{
	RawModel	m;
	unsigned char *p;
	uint64_t	E = 6;
	const size_t label_len = 32 + 2 * 8;
	const size_t token_len = label_len + 2 * 4;
	const size_t token_entries = token_len + 4 * 4;

	toy_raw(&m);
	switch (c)
	{
		case C_TOKENS_UNSORTED:
			{
				RawToken	x = m.t[1];

				m.t[1] = m.t[2];
				m.t[2] = x;
			}
			break;
		case C_TOKEN_DUP:
			raw_dup_token(&m, 1);
			break;
		case C_LABELS_UNSORTED:
			{
				RawClass	x = m.c[0];

				m.c[0] = m.c[1];
				m.c[1] = x;
			}
			break;
		case C_LABEL_DUP:
			raw_dup_class(&m, 0);
			break;
		case C_CLASS_OUT_OF_RANGE:
			m.t[0].e[0].cls = 2;
			break;
		case C_CLASS_HUGE:
			m.t[0].e[0].cls = UINT32_MAX;
			break;
		case C_CLASSES_UNSORTED:
			m.t[1].e[0].cls = SPAM;
			m.t[1].e[1].cls = HAM;
			break;
		case C_CLASS_DUP:
			m.t[1].e[1].cls = HAM;
			break;
		case C_COUNT_ZERO:
			m.t[2].e[1].count = 0;
			break;
		case C_COUNT_NEG_ZERO:
			m.t[2].e[1].count = -0.0;
			break;
		case C_COUNT_NEG:
			m.t[2].e[1].count = -1;
			break;
		case C_COUNT_NAN:
			m.t[2].e[1].count = NAN;
			break;
		case C_COUNT_INF:
			m.t[2].e[1].count = INFINITY;
			break;
		case C_EDOCS_ZERO:
			m.t[3].e[0].docs = 0;
			break;
		case C_EDOCS_NAN:
			m.t[3].e[0].docs = -NAN;
			break;
		case C_EDOCS_INF:
			m.t[3].e[0].docs = INFINITY;
			break;
		case C_CDOCS_ZERO:
			m.c[1].docs = 0;
			break;
		case C_CDOCS_NEG:
			m.c[1].docs = -2;
			break;
		case C_CDOCS_NAN:
			m.c[1].docs = NAN;
			break;
		case C_CDOCS_INF:
			m.c[0].docs = INFINITY;
			break;
		case C_CDOCS_NEG_INF:
			m.c[0].docs = -INFINITY;
			break;
		case C_TOKEN_NO_ENTRIES:
			m.t[0].n = 0;
			break;
		case C_TOKEN_TOO_MANY_ENTRIES:
			raw_add_entry(&m, 1, 2, 1, 1);
			break;
		case C_TOKEN_ZERO_BYTE:
			raw_set_string(&m.t[3].str, (const unsigned char *) "d\0", 2);
			break;
		case C_LABEL_ZERO_BYTE:
			raw_set_string(&m.c[1].label, (const unsigned char *) "sp\0am", 5);
			break;
		case C_NO_CLASSES:
			while (m.nt > 0)
				raw_del_token(&m, 0);
			raw_del_class(&m, 1);
			raw_del_class(&m, 0);
			break;
		case C_TOKEN_EMPTY_DUP:
			raw_set_string(&m.t[0].str, (const unsigned char *) "", 0);
			raw_set_string(&m.t[1].str, (const unsigned char *) "", 0);
			break;
		default:
			break;
	}
	p = raw_serialize(&m, size);
	raw_free(&m);

	switch (c)
	{
		case P_BAD_MAGIC:
			p[3] = 'N';
			break;
		case P_VERSION:
			p[4] = 3;
			break;
		case P_FLAGS:
			p[6] = 1;
			break;
		case P_C_ZERO:
			nb_write_u32(p + 8, 0, 0);
			break;
		case P_C_PLUS1:
			nb_write_u32(p + 8, 0, 3);
			break;
		case P_C_HUGE:
			nb_write_u32(p + 8, 0, UINT32_MAX);
			break;
		case P_V_PLUS1:
			nb_write_u32(p + 12, 0, 5);
			break;
		case P_V_HUGE:
			nb_write_u32(p + 12, 0, UINT32_MAX);
			break;
		case P_E_ZERO:
		case P_E_PLUS1:
		case P_E_MINUS1:
		case P_E_HUGE:
		case P_E_WRAP4:
		case P_E_WRAP8:
		case P_E_WRAP20:
			E = c == P_E_ZERO ? 0 : c == P_E_PLUS1 ? 7 : c == P_E_MINUS1 ? 5 :
				c == P_E_HUGE ? UINT64_MAX : c == P_E_WRAP4 ? UINT64_C(1) << 62 :
				c == P_E_WRAP8 ? (UINT64_C(1) << 61) + 1 :
				/* 20 * E = 2^64 + 40 */
				UINT64_C(0xcccccccccccccccc) + 3;
			nb_write_u32(p + 16, 0, (uint32_t) E);
			nb_write_u32(p + 20, 0, (uint32_t) (E >> 32));
			break;
		case P_LABEL_LEN_HUGE:
			nb_write_u32(p + label_len, 1, UINT32_MAX);
			break;
		case P_LABEL_LEN_PLUS1:
			nb_write_u32(p + label_len, 1, 5);
			break;
		case P_LABEL_LEN_MINUS1:
			nb_write_u32(p + label_len, 1, 3);
			break;
		case P_TOKEN_LEN_PLUS1:
			nb_write_u32(p + token_len, 3, 2);
			break;
		case P_TOKEN_LEN_MINUS1:
			nb_write_u32(p + token_len, 3, 0);
			break;
		case P_TOKEN_LEN_HUGE:
			nb_write_u32(p + token_len, 0, UINT32_MAX);
			break;
		case P_TOKEN_ENTRIES_HUGE:
			nb_write_u32(p + token_entries, 0, UINT32_MAX);
			break;
		case P_TOKEN_ENTRIES_ZERO:
			nb_write_u32(p + token_entries, 0, 0);
			break;
		case P_LABEL_LEN_SHIFT:
			/* "ham" "spam" read as "hams" "pam": sum kept, order kept, still valid? no: */
			nb_write_u32(p + label_len, 0, 4);
			nb_write_u32(p + label_len, 1, 3);
			break;
		case P_TOKEN_LEN_SHIFT:
			/* "a" "b" "c" "d" read as "ab" "" "c" "d": unsorted */
			nb_write_u32(p + token_len, 0, 2);
			nb_write_u32(p + token_len, 1, 0);
			break;
		default:
			break;
	}
	nbt_fix_checksum(p, *size);
	return p;
}

static void
test_view_corrupt_structure(void)
{
	for (int c = 0; c < N_CORRUPTIONS; c++)
	{
		size_t		size;
		unsigned char *p = corrupted((Corruption) c, &size);
		NbView		v;
		NbFormatError e;
		bool		accepted;

		e.message[0] = '\0';
		accepted = nb_view_open(&v, p, size, &e);
		if (c == C_NONE)
		{
			CHECK(accepted, "the uncorrupted control value is rejected: %s", e.message);
		}
		else if (c == P_LABEL_LEN_SHIFT)
		{
			/* "hams" < "pam": a different but valid model; it must be usable */
			NbtStats	st = {0};
			char		err[512];

			if (accepted && !nbt_check_model(p, size, &v, 1, 0, &st, err, sizeof(err)))
				CHECK(false, "%s: accepted and then: %s", corruption_name[c], err);
		}
		else
		{
			if (accepted)
				note("accepted: %s", hex(p, size));
			CHECK(!accepted, "%s: accepted", corruption_name[c]);
			CHECK(e.message[0] != '\0', "%s: no error message", corruption_name[c]);
		}
		free(p);
	}
}

/* ---------------------------------------------------------------- */
/* scorer                                                            */

static void
test_scorer_multinomial(void)
{
	/*
	 * alpha = 1, fitted prior, document a c c (x_a = 1, x_c = 2):
	 *   theta_jc = (N_jc + 1) / (T_c + 4)
	 *   ham : a 1/8, c 3/8;  1/3 * 1/8 * (3/8)^2 = 3/512
	 *   spam: a 4/9, c 2/9;  2/3 * 4/9 * (2/9)^2 = 32/2187
	 *   P(ham) = 3/512 / (3/512 + 32/2187) = 6561 / 22945
	 */
	Scored		r = score_rows(toy, NTOY, NB_MULTINOMIAL, 1, NB_PRIOR_FIT, NULL, doc_acc);

	CHECK_NEAR(r.post[HAM], 6561.0 / 22945, 1e-12, "P(ham)");
	CHECK_NEAR(r.post[SPAM], 16384.0 / 22945, 1e-12, "P(spam)");
	CHECK_NEAR(r.logp[HAM], log(6561.0 / 22945), 1e-12, "log P(ham)");
	CHECK(r.best == SPAM, "best %lld", (long long) r.best);

	/*
	 * alpha = 0.5: theta = (N + 0.5) / (T_c + 2)
	 *   ham : a 0.5/6, c 2.5/6: 1/3 * (1/12) * (5/12)^2 = 25/5184
	 *   spam: a 3.5/7 = 1/2, c 1.5/7 = 3/14: 2/3 * 1/2 * 9/196 = 3/196
	 *   P(ham) = (25/5184) / (25/5184 + 3/196)
	 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0.5, NB_PRIOR_FIT, NULL, doc_acc);
	CHECK_NEAR(r.post[HAM], (25.0 / 5184) / (25.0 / 5184 + 3.0 / 196), 1e-12, "P(ham), alpha 0.5");

	/* empty document: the prior */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 1, NB_PRIOR_FIT, NULL, doc_empty);
	CHECK_NEAR(r.post[HAM], 1.0 / 3, 1e-12, "P(ham | empty doc)");
}

static void
test_scorer_bernoulli(void)
{
	/*
	 * alpha = 1: t_jc = (d_jc + 1) / (D_c + 2); document {a, c}: b, d absent.
	 *   ham  (D=1): t = a 1/3, b 2/3, c 2/3, d 2/3
	 *         1/3 * 1/3 * (1 - 2/3) * 2/3 * (1 - 2/3) = 2/243
	 *   spam (D=2): t = a 3/4, b 1/2, c 1/2, d 1/4
	 *         2/3 * 3/4 * (1 - 1/2) * 1/2 * (1 - 1/4) = 3/32
	 *   P(ham) = (2/243) / (2/243 + 3/32) = 64 / 793
	 * Repeating c changes nothing (presence only).
	 */
	Scored		r = score_rows(toy, NTOY, NB_BERNOULLI, 1, NB_PRIOR_FIT, NULL, doc_acc);

	CHECK_NEAR(r.post[HAM], 64.0 / 793, 1e-12, "P(ham)");
	CHECK_NEAR(r.post[SPAM], 729.0 / 793, 1e-12, "P(spam)");
	CHECK(r.best == SPAM, "best %lld", (long long) r.best);

	/*
	 * empty document, every token absent:
	 *   ham : 1/3 * (2/3)(1/3)(1/3)(1/3) = 2/243
	 *   spam: 2/3 * (1/4)(1/2)(1/2)(3/4) = 1/32
	 *   P(ham) = (2/243) / (2/243 + 1/32) = 64 / 307
	 */
	r = score_rows(toy, NTOY, NB_BERNOULLI, 1, NB_PRIOR_FIT, NULL, doc_empty);
	CHECK_NEAR(r.post[HAM], 64.0 / 307, 1e-12, "P(ham | empty doc)");
}

static void
test_scorer_complement(void)
{
	/*
	 * alpha = 1: score_c = sum_j x_j log((T + aV - T_c) / (F_j + a - N_jc)),
	 * T + aV = 13, no prior (2 classes).  Document a c c:
	 *   ham : numerator 13 - 4 = 9; a: 3+1-0 = 4, c: 3+1-2 = 2
	 *         (9/4) * (9/2)^2 = 729/16
	 *   spam: numerator 13 - 5 = 8; a: 3+1-3 = 1, c: 3+1-1 = 3
	 *         8 * (8/3)^2 = 512/9
	 *   P(ham) = (729/16) / (729/16 + 512/9) = 6561 / 14753
	 */
	Scored		r = score_rows(toy, NTOY, NB_COMPLEMENT, 1, NB_PRIOR_FIT, NULL, doc_acc);

	CHECK_NEAR(r.post[HAM], 6561.0 / 14753, 1e-12, "P(ham)");
	CHECK_NEAR(r.post[SPAM], 8192.0 / 14753, 1e-12, "P(spam)");
	CHECK(r.best == SPAM, "best %lld", (long long) r.best);
	/* the class prior is not used: uniform gives the same */
	r = score_rows(toy, NTOY, NB_COMPLEMENT, 1, NB_PRIOR_UNIFORM, NULL, doc_acc);
	CHECK_NEAR(r.post[HAM], 6561.0 / 14753, 1e-12, "P(ham), uniform prior");
}

static void
test_scorer_priors(void)
{
	static const double ham0[] = {0, 1};
	static const double three_one[] = {3, 1};
	Scored		r;

	/*
	 * uniform prior, multinomial alpha = 1, document a c c:
	 *   ham 1/2 * 1/8 * 9/64, spam 1/2 * 4/9 * 4/81
	 *   P(ham) = (9/512) / (9/512 + 16/729) = 6561 / 14753
	 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 1, NB_PRIOR_UNIFORM, NULL, doc_acc);
	CHECK_NEAR(r.post[HAM], 6561.0 / 14753, 1e-12, "P(ham), uniform");
	/* given {ham: 3, spam: 1}: P(ham) = (27/2048) / (27/2048 + 4/729) = 19683 / 27875 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 1, NB_PRIOR_GIVEN, three_one, doc_acc);
	CHECK_NEAR(r.post[HAM], 19683.0 / 27875, 1e-12, "P(ham), given 3:1");
	CHECK(r.best == HAM, "best %lld with prior 3:1", (long long) r.best);
	/* given {ham: 0}: ham is excluded even where it would win */
	r = score_rows(toy, NTOY, NB_BERNOULLI, 1, NB_PRIOR_GIVEN, ham0, doc_d);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1 && r.best == SPAM,
		  "prior 0: log P(ham) = %g, P(spam) = %g", r.logp[HAM], r.post[SPAM]);
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0, NB_PRIOR_GIVEN, ham0, doc_d);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1 && r.best == SPAM,
		  "prior 0, alpha 0: log P(ham) = %g, P(spam) = %g", r.logp[HAM], r.post[SPAM]);
}

static void
test_scorer_alpha0(void)
{
	Scored		r;

	/*
	 * Multinomial, alpha -> 0: theta_jc = (N_jc + a) / (T_c + 4a).
	 * a c c: ham has theta_a ~ a/4 (one zero factor), spam none -> spam 1.
	 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0, NB_PRIOR_FIT, NULL, doc_acc);
	CHECK(r.logp[HAM] == -INFINITY && r.logp[SPAM] == 0 && r.best == SPAM,
		  "a c c: log P = %g, %g", r.logp[HAM], r.logp[SPAM]);
	/*
	 * a d: both have one zero factor; the rest decides:
	 *   ham : 1/3 * (a/4) * (1/4)   -> 1/48 a
	 *   spam: 2/3 * (3/5) * (a/5)   -> 2/25 a
	 *   P(ham) = (1/48) / (1/48 + 2/25) = 25/121
	 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0, NB_PRIOR_FIT, NULL, doc_ad);
	CHECK_NEAR(r.post[HAM], 25.0 / 121, 1e-12, "a d: P(ham)");
	CHECK(r.best == SPAM, "a d: best %lld", (long long) r.best);
	/* a a d: ham has two zero factors, spam one -> spam 1 */
	r = score_rows(toy, NTOY, NB_MULTINOMIAL, 0, NB_PRIOR_FIT, NULL, doc_aad);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1, "a a d: log P(ham) = %g", r.logp[HAM]);

	/*
	 * Bernoulli, alpha -> 0: t_jc = d_jc / D_c:
	 *   ham  t = a 0, b 1, c 1, d 1;   spam t = a 1, b 1/2, c 1/2, d 0.
	 * {a, c}: ham zero factors a, (1 - t_b), (1 - t_d) = 3; spam none -> spam 1.
	 */
	r = score_rows(toy, NTOY, NB_BERNOULLI, 0, NB_PRIOR_FIT, NULL, doc_acc);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1, "bernoulli {a,c}: log P(ham) = %g", r.logp[HAM]);
	/*
	 * {d}: ham: 1 - t_b ~ a/1, 1 - t_c ~ a/1 (2 zero factors), rest 1; prior 1/3
	 *      spam: 1 - t_a ~ a/2, t_d ~ a/2 (2 zero factors), (1/2)(1/2) for b, c;
	 *            prior 2/3: 2/3 * 1/2 * 1/2 * 1/2 * 1/2 = 1/24
	 *   P(ham) = (1/3) / (1/3 + 1/24) = 8/9
	 */
	r = score_rows(toy, NTOY, NB_BERNOULLI, 0, NB_PRIOR_FIT, NULL, doc_d);
	CHECK_NEAR(r.post[HAM], 8.0 / 9, 1e-12, "bernoulli {d}: P(ham)");
	CHECK(r.best == HAM, "bernoulli {d}: best %lld", (long long) r.best);

	/*
	 * Complement, alpha -> 0: ham numerator 9 - 4 = 5, spam 9 - 5 = 4.
	 * a c c: spam's a-denominator F_a - N_a,spam = 0 -> spam's score -> +inf: spam 1.
	 */
	r = score_rows(toy, NTOY, NB_COMPLEMENT, 0, NB_PRIOR_FIT, NULL, doc_acc);
	CHECK(r.logp[HAM] == -INFINITY && r.post[SPAM] == 1, "complement a c c: log P(ham) = %g", r.logp[HAM]);
	/*
	 * d a: ham : d: 5 / (1 - 1 = a), a: 5 / 3     -> (25/3) / a
	 *      spam: d: 4 / 1,         a: 4 / (3 - 3 = a) -> 16 / a
	 *   P(ham) = (25/3) / (25/3 + 16) = 25/73
	 */
	r = score_rows(toy, NTOY, NB_COMPLEMENT, 0, NB_PRIOR_FIT, NULL, doc_da);
	CHECK_NEAR(r.post[HAM], 25.0 / 73, 1e-12, "complement d a: P(ham)");
	for (int kind = 0; kind < 3; kind++)
	{
		const char *const *docs[] = {doc_acc, doc_ad, doc_aad, doc_d, doc_empty};

		for (int d = 0; d < 5; d++)
		{
			r = score_rows(toy, NTOY, (NbKind) kind, 0, NB_PRIOR_FIT, NULL, docs[d]);
			CHECK(!r.any_nan && fabs(r.post[0] + r.post[1] - 1) < 1e-12,
				  "kind %d doc %d: P = %g, %g", kind, d, r.post[0], r.post[1]);
		}
	}
}

/*
 * A class whose documents had no tokens (README: "An empty array is a
 * document with no tokens: it counts for its class's documents and prior").
 *   empty: 1 document, no tokens (T = 0);  full: 1 document "x y".
 * Multinomial, document "x": theta_x,empty = a / (0 + 2a) = 1/2 and
 * theta_x,full = (1 + a) / (2 + 2a) = 1/2 for EVERY a > 0, so the
 * posterior is 1/2, 1/2 for every a > 0 and therefore also in the limit
 * a -> 0 that alpha = 0 is documented to return.
 */
static const Row empty_full[] = {
	{"empty", 1, {NULL}},
	{"full", 1, {"x", "y"}},
};
static const char *const doc_x[] = {"x", NULL};

static void
test_scorer_alpha0_empty_class_multinomial(void)
{
	static const double alphas[] = {1, 0.5, 1e-3, 1e-9, 0};
	Scored		r;

	for (int i = 0; i < 5; i++)
	{
		r = score_rows(empty_full, 2, NB_MULTINOMIAL, alphas[i], NB_PRIOR_FIT, NULL, doc_x);
		CHECK_NEAR(r.post[0], 0.5, 1e-9,
				   alphas[i] == 0 ? "alpha=0: P(empty) (theta_x,empty = a/(T_c + aV) loses the 1/V)" :
				   "alpha>0: P(empty)");
	}
}

/*
 * Complement with the same model, document "x":
 *   empty: (T + aV - 0) / (F_x + a - 0)   = (2 + 2a) / (1 + a) = 2
 *   full : (T + aV - 2) / (F_x + a - 1)   = 2a / a            = 2
 * so 1/2, 1/2 for every a > 0 and in the limit.
 */
static void
test_scorer_alpha0_empty_class_complement(void)
{
	static const double alphas[] = {1, 0.5, 1e-3, 1e-9, 0};
	Scored		r;

	for (int i = 0; i < 5; i++)
	{
		r = score_rows(empty_full, 2, NB_COMPLEMENT, alphas[i], NB_PRIOR_FIT, NULL, doc_x);
		CHECK_NEAR(r.post[0], 0.5, 1e-9,
				   alphas[i] == 0 ? "alpha=0: P(empty) (numerator T + aV - T_c = aV loses the V)" :
				   "alpha>0: P(empty)");
	}
}

static void
test_scorer_ties(void)
{
	/* symmetric classes: exact ties go to the lowest class index */
	static const Row sym[] = {
		{"b", 1, {"t", "u"}},
		{"a", 1, {"t", "v"}},
		{"c", 2, {"w"}},
	};
	static const char *const doc_t[] = {"t", NULL};
	static const double equal[] = {1, 1, 1};

	for (int kind = 0; kind < 3; kind++)
		for (int a = 0; a < 2; a++)
		{
			Scored		r = score_rows(sym, 2, (NbKind) kind, a, NB_PRIOR_FIT, NULL, doc_t);

			CHECK(r.best == 0, "kind %d alpha %d: best %lld", kind, a, (long long) r.best);
			CHECK(r.logp[0] == r.logp[1], "kind %d alpha %d: not an exact tie (%.17g, %.17g)",
				  kind, a, r.logp[0], r.logp[1]);
			CHECK_NEAR(r.post[0], 0.5, 1e-12, "P(a)");
			/* with a third class that is less likely, classes 0 and 1 still tie */
			r = score_rows(sym, 3, (NbKind) kind, a, NB_PRIOR_GIVEN, equal, doc_t);
			CHECK(r.best == 0 && r.logp[0] == r.logp[1], "3 classes, kind %d alpha %d: best %lld",
				  kind, a, (long long) r.best);
		}
}

/* Random models, every kind, alpha and prior against the reference implementation. */
static void
random_models(bool empty_docs)
{
	NbtStats	st = {0};
	uint64_t	seed = empty_docs ? 1000 : 7;

	for (int iter = 0; iter < 60; iter++)
	{
		int			nrows = 1 + (int) (nbt_rand(&seed) % 40);
		int			nclasses = 1 + (int) (nbt_rand(&seed) % 6);
		uint32_t	vocab = 1 + (uint32_t) (nbt_rand(&seed) % 200);
		RandRow    *rows = malloc(sizeof(RandRow) * nrows);
		size_t		size;
		unsigned char *buf;
		NbView		v;
		char		err[512];

		rand_rows(rows, nrows, nclasses, vocab, nbt_rand(&seed), empty_docs);
		if (!empty_docs)
			for (int i = 0; i < nrows; i++)
				if (rows[i].n == 0)
					rows[i].n = 1;
		buf = serialize_rand(rows, NULL, nrows, &size);
		free(rows);
		CHECK(open_view(&v, buf, size, err, sizeof(err)), "rejected: %s", err);
		CHECK(nbt_model_is_nice(&v), "random model not well-conditioned");
		if (!nbt_check_model(buf, size, &v, iter, 0, &st, err, sizeof(err)))
		{
			note("model: %s", hex(buf, size));
			free(buf);
			CHECK(false, "model %d: %s", iter, err);
		}
		free(buf);
	}
	note("%llu documents scored, %llu compared with the reference, %llu mutual-information checks",
		 (unsigned long long) st.scored, (unsigned long long) st.ref_compared,
		 (unsigned long long) st.mi_compared);
	CHECK(st.ref_compared > 1000, "only %llu reference comparisons", (unsigned long long) st.ref_compared);
}

static void
test_scorer_random_vs_reference(void)
{
	random_models(false);
}

static void
test_scorer_random_vs_reference_empty_docs(void)
{
	random_models(true);
}

/*
 * Weights are any finite positive number (pg_train.c), so sums over
 * classes can overflow although every stored number is finite and the
 * trainer's overflow flag stays clear.  Posteriors must still not be NaN.
 */
static void
test_scorer_no_nan_total_docs_overflow(void)
{
	/* D_a = D_b = 1e308 (valid), D = 2e308 = inf */
	static const Row rows[] = {
		{"a", 1e308, {"x"}},
		{"b", 1e308, {"y"}},
	};
	static const char *const doc[] = {"x", NULL};
	NbTrainer  *t = train_rows(rows, 2);
	bool		flagged = t->overflow || !nb_trainer_sums_finite(t);
	size_t		size;
	unsigned char *buf = serialize(t, &size);
	NbView		v;
	NbFormatError e;
	bool		valid = nb_view_open(&v, buf, size, &e);

	nb_trainer_destroy(t);
	free(buf);
	CHECK(flagged != valid, "trainer says %s, nb_view_open %s the value",
		  flagged ? "overflow" : "finite", valid ? "accepts" : "rejects");
	for (int kind = 0; kind < 2; kind++)
	{
		Scored		r;

		if (flagged)
			break;				/* refused: fine */
		r = score_rows(rows, 2, (NbKind) kind, 1, NB_PRIOR_FIT, NULL, doc);
		CHECK(!r.any_nan && r.best >= 0, "%s, fit prior: log P = %g, %g, best %lld",
			  kind ? "bernoulli" : "multinomial", r.logp[0], r.logp[1], (long long) r.best);
	}
}

static void
test_scorer_no_nan_class_tokens_overflow(void)
{
	/* T_a = 1e308 + 1e308 = inf although N_xa, N_ya are finite */
	static const Row rows[] = {
		{"a", 1e308, {"x", "y"}},
		{"b", 1, {"z"}},
	};
	NbTrainer  *t = train_rows(rows, 2);
	bool		flagged = t->overflow || !nb_trainer_sums_finite(t);
	static const char *const docs[][3] = {{NULL}, {"z", NULL}, {"x", NULL}};
	size_t		size;
	unsigned char *buf = serialize(t, &size);
	NbView		v;
	NbFormatError e;
	bool		valid = nb_view_open(&v, buf, size, &e);

	nb_trainer_destroy(t);
	free(buf);
	CHECK(flagged != valid, "trainer says %s, nb_view_open %s the value",
		  flagged ? "overflow" : "finite", valid ? "accepts" : "rejects");
	if (flagged)
		return;					/* refused: fine */
	for (int kind = 0; kind < 3; kind++)
		for (int d = 0; d < 3; d++)
		{
			Scored		r = score_rows(rows, 2, (NbKind) kind, 1, NB_PRIOR_FIT, NULL, docs[d]);

			CHECK(!r.any_nan && r.best >= 0, "kind %d, document %d: log P = %g, %g, best %lld",
				  kind, d, r.logp[0], r.logp[1], (long long) r.best);
		}
}

/*
 * nb_view_open accepts entry docs > class docs (never produced by the
 * trainer).  Merging such a model with itself overflows entry_docs; the
 * trainer must then report it (overflow flag or nb_trainer_sums_finite),
 * or write a valid value.
 */
static void
test_trainer_merge_docs_overflow(void)
{
	RawModel	m;
	unsigned char *p,
			   *out;
	size_t		size,
				osize;
	NbView		v,
				v2;
	NbFormatError e;
	NbTrainer  *t;
	bool		overflow;
	bool		valid;
	uint32_t	conflict;

	raw_init(&m);
	raw_add_class(&m, "c", 1, 1);
	raw_add_token(&m, "t", 1);
	raw_add_entry(&m, 0, 0, 1, 1e308);
	p = raw_serialize(&m, &size);
	raw_free(&m);
	if (!nb_view_open(&v, p, size, &e))
	{
		free(p);
		return;					/* rejected up front: fine */
	}
	t = nb_trainer_create();
	nb_trainer_merge_view(t, &v, &conflict);
	nb_trainer_merge_view(t, &v, &conflict);
	out = serialize(t, &osize);
	overflow = t->overflow || !nb_trainer_sums_finite(t);
	nb_trainer_destroy(t);
	valid = nb_view_open(&v2, out, osize, &e);
	free(p);
	free(out);
	CHECK(overflow || valid, "no overflow reported but the merged model is invalid: %s", e.message);
}

/*
 * NbDoc for the bag "": unknown tokens skipped, duplicates merged (counts
 * summed) in order of first occurrence; every document starts afresh, also
 * when the index's sequence number wraps around.
 */
/*
 * A scorer with rows tells tokens apart by a 16-bit tag, the length and the
 * first 8 bytes, and compares longer tokens in the item map.  Tokens alike
 * in all of those but the rest (12 bytes: inline in the item map; 40 bytes:
 * in its arena), half of them in the model: with this many lookups some
 * tags collide, and every present token must be found in its own slot,
 * every absent one not at all, with 32-byte (2 classes) and 64-byte
 * (5 classes) rows.  Also a token longer than a key's length field holds.
 */
static void
test_scorer_rows_alike_tokens(void)
{
	enum
	{
		N = 60000,
		HUGE = 70001
	};
	static const char *const formats[] = {"longtok-%06d", "a-much-longer-shared-token-prefix-%06d"};
	static char huge_bytes[HUGE];
	NbTokenRef	huge = {huge_bytes, HUGE - 1, 1};

	memset(huge_bytes, 'x', sizeof(huge_bytes));
	for (uint32_t C = 2; C <= 5; C += 3)
	{
		NbTrainer  *t = nb_trainer_create();
		size_t		size;
		unsigned char *buf;
		NbView		v;
		NbIndex		ix;
		NbScorer	sc;
		NbOptions	o = {0};
		NbDoc		by_index;
		NbDoc		by_rows;
		char		why[200];
		char		str[64];
		NbTokenRef	ref = {str, 0, 1};
		long		wrong = 0;

		for (int i = 0; i < 2 * N; i += 2)
			for (int f = 0; f < 2; f++)
			{
				char		label[2] = {(char) ('a' + i / 2 % C), 0};

				ref.len = (uint32_t) snprintf(str, sizeof(str), formats[f], i);
				nb_trainer_begin_doc(t, label, 1, 1.0);
				if (!nb_trainer_add_text(t, &ref, 1))
					abort();
			}
		/* longer than a row key's length field holds */
		nb_trainer_begin_doc(t, "a", 1, 1.0);
		if (!nb_trainer_add_text(t, &huge, 1))
			abort();
		buf = serialize(t, &size);
		nb_trainer_destroy(t);
		CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
		nb_index_build(&ix, &v);
		o.kind = NB_MULTINOMIAL;
		o.alpha = 1;
		o.prior_mode = NB_PRIOR_FIT;
		nb_scorer_build(&sc, &ix, &o);
		CHECK(sc.rows != NULL && sc.row_size == (C <= 2 ? 32 : 64), "%u classes: rows of %u bytes",
			  C, sc.row_size);
		nb_doc_init(&by_index, &ix);
		nb_doc_init(&by_rows, &ix);
		for (int i = 0; i < 2 * N; i++)
			for (int f = 0; f < 2; f++)
			{
				bool		present = i % 2 == 0;

				ref.len = (uint32_t) snprintf(str, sizeof(str), formats[f], i);
				nb_doc_begin(&by_index);
				nb_doc_begin(&by_rows);
				nb_doc_add_tokens(&ix, &by_index, (uint32_t) ix.unnamed_bag, &ref, 1);
				nb_scorer_add_tokens(&sc, &by_rows, (uint32_t) ix.unnamed_bag, &ref, 1);
				if (by_index.n_tokens != (present ? 1u : 0u) ||
					by_rows.n_tokens != by_index.n_tokens ||
					(present && (by_rows.tokens[0].slot != by_index.tokens[0].slot ||
								 by_rows.tokens[0].token != by_index.tokens[0].token)))
				{
					if (wrong++ == 0)
						fail_at(__LINE__, "%u classes: %s found %u times through the index, %u through rows",
								C, str, by_index.n_tokens, by_rows.n_tokens);
				}
			}
		CHECK(wrong == 0, "%u classes: %ld of %d lookups differ", C, wrong, 4 * N);
		for (int v = 0; v < 3; v++)
		{
			/* the huge token, the same length with another last byte, one byte longer */
			NbTokenRef	probe = {huge_bytes, HUGE - (v == 2 ? 0 : 1), 1};

			huge_bytes[HUGE - 2] = v == 1 ? 'y' : 'x';
			nb_doc_begin(&by_rows);
			nb_scorer_add_tokens(&sc, &by_rows, (uint32_t) ix.unnamed_bag, &probe, 1);
			CHECK(by_rows.n_tokens == (v == 0 ? 1u : 0u), "%u classes: token of %u bytes (%d) found %u times",
				  C, probe.len, v, by_rows.n_tokens);
		}
		huge_bytes[HUGE - 2] = 'x';
		nb_doc_free(&by_index);
		nb_doc_free(&by_rows);
		nb_scorer_free(&sc);
		nb_index_free(&ix);
		free(buf);
	}
}

static void
test_index_lookup(void)
{
	size_t		size;
	unsigned char *buf = serialize_rows(toy, NTOY, &size);
	NbView		v;
	NbIndex		ix;
	NbDoc		doc;
	char		why[200];
	static const char *const words[] = {"zz", "d", "a", "", "d", "aa", "b"};
	NbTokenRef	refs[7 + 29 * 7];
	uint32_t	bag;

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(v.version == 1, "text-only model written as version %u", v.version);
	nb_index_build(&ix, &v);
	nb_doc_init(&doc, &ix);
	bag = (uint32_t) ix.unnamed_bag;
	for (int i = 0; i < 7; i++)
	{
		refs[i].str = words[i];
		refs[i].len = (uint32_t) strlen(words[i]);
		refs[i].count = i + 1;
	}
	/* round 2 adds the same words 29 more times in a second batch: the table of seen items grows mid-document */
	for (int i = 7; i < 7 + 29 * 7; i++)
		refs[i] = refs[i % 7];
	for (int round = 0; round < 3; round++)
	{
		double		times = round == 2 ? 30 : 1;

		nb_doc_begin(&doc);
		nb_doc_add_tokens(&ix, &doc, bag, refs, 7);
		if (round == 2)
			nb_doc_add_tokens(&ix, &doc, bag, refs + 7, 29 * 7);
		if (doc.n_tokens != 3 || doc.tokens[0].token != 3 || doc.tokens[0].count != 7 * times ||
			doc.tokens[1].token != 0 || doc.tokens[1].count != 3 * times || doc.tokens[2].token != 1 ||
			doc.tokens[2].count != 7 * times || doc.occurrences[bag] != 17 * times || doc.distinct[bag] != 3)
		{
			nb_doc_free(&doc);
			nb_index_free(&ix);
			free(buf);
			CHECK(false, "round %d: %u tokens: (%u %g) (%u %g) (%u %g), expected (3 7) (0 3) (1 7)",
				  round, doc.n_tokens, doc.tokens[0].token, doc.tokens[0].count, doc.tokens[1].token,
				  doc.tokens[1].count, doc.tokens[2].token, doc.tokens[2].count);
		}
	}
	nb_doc_begin(&doc);
	CHECK(doc.n_present == 0 && doc.n_tokens == 0, "nb_doc_begin does not empty the document");
	nb_doc_add_tokens(&ix, &doc, bag, refs, 0);
	CHECK(doc.n_tokens == 0 && doc.n_present == 1 && doc.present[bag], "empty bag not present");
	nb_doc_begin(&doc);
	nb_doc_add_tokens(&ix, &doc, bag, refs, 1);
	CHECK(doc.n_tokens == 0 && doc.occurrences[bag] == 0, "unknown token found");
	/* 200 occurrences of the 4 tokens, in three batches */
	for (int i = 0; i < 200; i++)
	{
		refs[i].str = i % 4 == 0 ? "c" : i % 4 == 1 ? "a" : i % 4 == 2 ? "d" : "b";
		refs[i].len = 1;
		refs[i].count = 1;
	}
	nb_doc_begin(&doc);
	nb_doc_add_tokens(&ix, &doc, bag, refs, 3);
	nb_doc_add_tokens(&ix, &doc, bag, refs + 3, 100);
	nb_doc_add_tokens(&ix, &doc, bag, refs + 103, 97);
	CHECK(doc.n_tokens == 4 && doc.tokens[0].token == 2 && doc.tokens[0].count == 50 &&
		  doc.tokens[3].token == 1 && doc.tokens[3].count == 50 && doc.occurrences[bag] == 200,
		  "200 occurrences: %u tokens, first (%u %g)", doc.n_tokens, doc.tokens[0].token,
		  doc.tokens[0].count);
	CHECK(nb_index_class(&ix, "spam", 4) == SPAM && nb_index_class(&ix, "ham", 3) == HAM &&
		  nb_index_class(&ix, "eggs", 4) == -1, "nb_index_class");
	CHECK(nb_index_only_bags(&ix) && ix.n_features == 1 && nb_index_feature(&ix, "", 0) == 0,
		  "a version 1 model is the one bag \"\"");
	nb_doc_free(&doc);
	nb_index_free(&ix);
	free(buf);
}

/* ---------------------------------------------------------------- */
/* mutual information                                                */

/*
 * nb_mutual_info of a text-only model as one value per token (by item
 * index); false if the rows are not exactly one per token.
 */
static bool
item_mi(const NbView *v, double *mi)
{
	NbMiRow    *rows = malloc(sizeof(NbMiRow) * (nb_mutual_info_max_rows(v) + 1));
	uint64_t	n = nb_mutual_info(v, rows);
	bool		ok = n == v->n_tokens;

	for (uint64_t i = 0; i < n && ok; i++)
	{
		ok = !rows[i].whole_feature && rows[i].item < v->n_tokens;
		if (ok)
			mi[rows[i].item] = rows[i].mi;
	}
	free(rows);
	return ok;
}

static void
test_mutual_info(void)
{
	/*
	 * Murphy eq. 3.76, theta_jc = d_jc / D_c, pi = (1/3, 2/3):
	 *   a: theta = (0, 1),  theta_j = 2/3
	 *      I = 1/3 [1 log(1 / (1/3))] + 2/3 [1 log(1 / (2/3))] = log 3 - 2/3 log 2
	 *      (a predicts the class perfectly: I = H(class))
	 *   b: theta = (1, 1/2), theta_j = 2/3
	 *      I = 1/3 [log(3/2)] + 2/3 [1/2 log(3/4) + 1/2 log(3/2)] = 1/3 log(27/16)
	 *   c: same document frequencies as b;  d: mirror image of a.
	 */
	size_t		size;
	unsigned char *buf = serialize_rows(toy, NTOY, &size);
	NbView		v;
	char		why[200];
	double		mi[4];
	NbMiRow		rows[4];
	const double ia = log(3) - 2.0 / 3 * log(2);
	const double ib = log(27.0 / 16) / 3;

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(item_mi(&v, mi), "not one row per token");
	CHECK(nb_mutual_info(&v, rows) == 4, "rows");
	free(buf);
	CHECK_NEAR(mi[0], ia, 1e-12, "I(a)");
	CHECK_NEAR(mi[1], ib, 1e-12, "I(b)");
	CHECK_NEAR(mi[2], ib, 1e-12, "I(c)");
	CHECK_NEAR(mi[3], ia, 1e-12, "I(d)");
	/* ranked by mi; exact ties (a, d and b, c are mirror images) by token */
	CHECK((rows[0].item == 0 || rows[0].item == 3) && (rows[1].item == 0 || rows[1].item == 3) &&
		  (rows[2].item == 1 || rows[2].item == 2) && (rows[3].item == 1 || rows[3].item == 2),
		  "rank %u %u %u %u", rows[0].item, rows[1].item, rows[2].item, rows[3].item);
}

static void
test_mutual_info_weighted(void)
{
	/*
	 * Two classes of 2 documents each (weights), token t in one document of
	 * class p only: theta = (1/2, 0), pi = (1/2, 1/2), theta_j = 1/4.
	 *   I = 1/2 [1/2 log(2) + 1/2 log((1/2)/(3/4))] + 1/2 [log(1/(3/4))]
	 *     = 3/4 log(4/3)
	 * Token u in every document: I = 0.  Token w: theta = (1, 1/2)... see below.
	 */
	static const Row rows[] = {
		{"p", 1, {"t", "u", "w"}},
		{"p", 1, {"u", "w"}},
		{"q", 2, {"u", "w"}},
	};
	/* w: p has it in both docs (theta 1), q in its one doc of weight 2 (theta 1): I = 0 */
	size_t		size;
	unsigned char *buf = serialize_rows(rows, 3, &size);
	NbView		v;
	char		why[200];
	double		mi[3];

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(item_mi(&v, mi), "not one row per token");
	free(buf);
	CHECK_NEAR(mi[0], 0.75 * log(4.0 / 3), 1e-12, "I(t)");
	CHECK(mi[1] == 0, "I(u) = %g", mi[1]);
	CHECK(mi[2] == 0, "I(w) = %g", mi[2]);
}

/*
 * Weights are any positive finite numbers.  With 1e-300 and 1e10, token x
 * (only in class a) has theta_x = d_x / D = 1e-310 (subnormal) while
 * theta_xa = 1: the exact information is pi_a log(1 / theta_x) + ... ~ 7e-308,
 * tiny and finite, and never more than H(class) <= log 2.
 */
static void
test_mutual_info_extreme_weights(void)
{
	static const Row rows[] = {
		{"a", 1e-300, {"x"}},
		{"b", 1e10, {"y"}},
	};
	size_t		size;
	unsigned char *buf = serialize_rows(rows, 2, &size);
	NbView		v;
	char		why[200];
	double		mi[2];

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(item_mi(&v, mi), "not one row per token");
	free(buf);
	CHECK(isfinite(mi[0]) && mi[0] >= 0 && mi[0] <= log(2), "I(x) = %g (token only in the 1e-300 class)", mi[0]);
	CHECK(isfinite(mi[1]) && mi[1] >= 0 && mi[1] <= log(2), "I(y) = %g", mi[1]);
}

/*
 * Ranking: mi descending, exact ties in model order (feature, then item).
 * Six tokens in two classes of 2 documents each (theta per class):
 *   a (1, 0) and e (0, 1): perfect, log 2 each (an exact tie)
 *   d (1/2, 0): 3/4 log(4/3) (see test_mutual_info_weighted)
 *   b, c, f (1/2, 1/2): 0 (an exact tie)
 * expected order: a, e, d, then b, c, f.
 */
static void
test_mutual_info_rank_ties(void)
{
	static const Row rows[] = {
		{"p", 1, {"a", "b", "c", "d", "f"}},
		{"p", 1, {"a"}},
		{"q", 1, {"e", "b", "c", "f"}},
		{"q", 1, {"e"}},
	};
	static const char *const want[] = {"a", "e", "d", "b", "c", "f"};
	size_t		size;
	unsigned char *buf = serialize_rows(rows, 4, &size);
	NbView		v;
	char		why[200];
	NbMiRow		r[6];

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(nb_mutual_info(&v, r) == 6, "rows");
	for (int i = 0; i < 6; i++)
		CHECK(r[i].item == view_find_token(&v, want[i]), "position %d: item %u, expected %s", i,
			  r[i].item, want[i]);
	CHECK_NEAR(r[0].mi, log(2), 1e-12, "I(a)");
	CHECK_NEAR(r[2].mi, 0.75 * log(4.0 / 3), 1e-12, "I(d)");
	CHECK(r[0].mi == r[1].mi, "I(a) %.17g != I(e) %.17g", r[0].mi, r[1].mi);
	CHECK(r[3].mi == 0 && r[4].mi == 0 && r[5].mi == 0, "zero information");
	free(buf);
}

/* ---------------------------------------------------------------- */
/* mixed feature types (format version 2)                            */

/*
 * A row with named features: categorical "color", boolean "flag" (-1:
 * missing), Gaussian "x" (has_x), bag "tags" (has_tags).
 */
typedef struct MixRow
{
	const char *label;
	double		weight;
	const char *color;
	int			flag;
	bool		has_x;
	double		x;
	bool		has_tags;
	const char *tags[4];
} MixRow;

static int64_t
feature_id(NbTrainer *t, const char *name, NbFeatureType type)
{
	NbFeatureType existing;
	int64_t		j = nb_trainer_feature(t, name, (uint32_t) strlen(name), type, &existing);

	if (j < 0)
	{
		fprintf(stderr, "feature_id: %s has another type\n", name);
		abort();
	}
	return j;
}

static void
train_mix(NbTrainer *t, const MixRow *r)
{
	nb_trainer_begin_doc(t, r->label, (uint32_t) strlen(r->label), r->weight);
	if (r->color != NULL)
		nb_trainer_add_category(t, (uint32_t) feature_id(t, "color", NB_FEATURE_CATEGORICAL),
								r->color, (uint32_t) strlen(r->color));
	if (r->flag >= 0)
		nb_trainer_add_boolean(t, (uint32_t) feature_id(t, "flag", NB_FEATURE_BOOLEAN), r->flag != 0);
	if (r->has_x)
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "x", NB_FEATURE_GAUSSIAN), r->x);
	if (r->has_tags)
	{
		NbTokenRef	refs[4];
		uint32_t	n = 0;

		for (; n < 4 && r->tags[n] != NULL; n++)
		{
			refs[n].str = r->tags[n];
			refs[n].len = (uint32_t) strlen(r->tags[n]);
			refs[n].count = 1;
		}
		nb_trainer_add_tokens(t, (uint32_t) feature_id(t, "tags", NB_FEATURE_BAG), refs, n);
	}
}

static unsigned char *
serialize_mix(const MixRow *rows, int n, size_t *size)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;

	for (int i = 0; i < n; i++)
		train_mix(t, &rows[i]);
	buf = serialize(t, size);
	nb_trainer_destroy(t);
	return buf;
}

/*
 * Classes a (3 rows of weights 1, 2, 1) and b (2 rows of weight 1):
 *   color  a: red (w1), blue (w2);  b: red, -        -> present a 3, b 1
 *   flag   a: 1 (w1), 0 (w2), -;    b: 1, 1          -> present a 3, b 2; true a 1, b 2
 *   x      a: 1 (w1), 4 (w2), -;    b: 2, 6          -> a: W 3, mean (1 + 8) / 3 = 3,
 *            M2 1*(1-3)^2 + 2*(4-3)^2 = 6; b: W 2, mean 4, M2 8; overall (unweighted)
 *            1, 4, 2, 6: rows 4, mean 13/4, M2 5.0625 + 0.5625 + 1.5625 + 7.5625 = 14.75
 *   tags   a: {t, u}, {} , -;       b: {t, t}, -     -> present a 3, b 1;
 *            t: a (1, 1), b (2, 1); u: a (1, 1)
 * Class docs a 4, b 2.
 */
static const MixRow mix[] = {
	{"a", 1, "red", 1, true, 1, true, {"t", "u"}},
	{"a", 2, "blue", 0, true, 4, true, {NULL}},
	{"b", 1, "red", 1, true, 2, true, {"t", "t"}},
	{"b", 1, NULL, 1, true, 6, false, {NULL}},
	{"a", 1, NULL, -1, false, 0, false, {NULL}},
};
#define NMIX 5

/* The mixed model above written field by field from the documented layout. */
static void
mix_raw(RawModel *m)
{
	uint32_t	j,
				k;

	raw_init_v2(m);
	raw_add_class(m, "a", 1, 4);
	raw_add_class(m, "b", 1, 2);
	j = raw_add_feature(m, "color", 5, NB_FEATURE_CATEGORICAL);
	m->f[j].present[0] = 3;
	m->f[j].present[1] = 1;
	k = raw_add_item(m, j, "blue", 4);
	raw_add_entry(m, k, 0, 2, 2);
	k = raw_add_item(m, j, "red", 3);
	raw_add_entry(m, k, 0, 1, 1);
	raw_add_entry(m, k, 1, 1, 1);
	j = raw_add_feature(m, "flag", 4, NB_FEATURE_BOOLEAN);
	m->f[j].present[0] = 3;
	m->f[j].present[1] = 2;
	m->f[j].a[0] = 1;
	m->f[j].a[1] = 2;
	j = raw_add_feature(m, "tags", 4, NB_FEATURE_BAG);
	m->f[j].present[0] = 3;
	m->f[j].present[1] = 1;
	k = raw_add_item(m, j, "t", 1);
	raw_add_entry(m, k, 0, 1, 1);
	raw_add_entry(m, k, 1, 2, 1);
	k = raw_add_item(m, j, "u", 1);
	raw_add_entry(m, k, 0, 1, 1);
	j = raw_add_feature(m, "x", 1, NB_FEATURE_GAUSSIAN);
	m->f[j].present[0] = 3;
	m->f[j].present[1] = 2;
	m->f[j].a[0] = 3;
	m->f[j].b[0] = 6;
	m->f[j].a[1] = 4;
	m->f[j].b[1] = 8;
	m->f[j].rows = 4;
	m->f[j].mean = 3.25;
	m->f[j].m2 = 14.75;
}

/* Compare two raw models: structure exactly, numbers within rel (0: exactly). */
static bool
raw_equal(const RawModel *x, const RawModel *y, double rel, char *why, size_t whylen)
{
#define NEAR(p, q) (rel == 0 ? memcmp(&(p), &(q), sizeof(double)) == 0 : \
					fabs((p) - (q)) <= rel * (fabs(p) + fabs(q)) + 1e-300)
#define DIFF(...) do { snprintf(why, whylen, __VA_ARGS__); return false; } while (0)
	if (x->version != y->version || x->vector_len != y->vector_len || x->nc != y->nc ||
		x->nt != y->nt || x->nf != y->nf)
		DIFF("version %u/%u, vector %u/%u, C %u/%u, V %u/%u, F %u/%u", x->version, y->version,
			 x->vector_len, y->vector_len, x->nc, y->nc, x->nt, y->nt, x->nf, y->nf);
	for (uint32_t c = 0; c < x->nc; c++)
		if (x->c[c].label.len != y->c[c].label.len ||
			memcmp(x->c[c].label.s, y->c[c].label.s, x->c[c].label.len) != 0 ||
			!NEAR(x->c[c].docs, y->c[c].docs))
			DIFF("class %u: docs %.17g / %.17g", c, x->c[c].docs, y->c[c].docs);
	for (uint32_t k = 0; k < x->nt; k++)
	{
		if (x->t[k].str.len != y->t[k].str.len || x->t[k].n != y->t[k].n ||
			memcmp(x->t[k].str.s, y->t[k].str.s, x->t[k].str.len) != 0)
			DIFF("item %u differs", k);
		for (uint32_t i = 0; i < x->t[k].n; i++)
			if (x->t[k].e[i].cls != y->t[k].e[i].cls || !NEAR(x->t[k].e[i].count, y->t[k].e[i].count) ||
				!NEAR(x->t[k].e[i].docs, y->t[k].e[i].docs))
				DIFF("item %u entry %u: (%u %.17g %.17g) / (%u %.17g %.17g)", k, i, x->t[k].e[i].cls,
					 x->t[k].e[i].count, x->t[k].e[i].docs, y->t[k].e[i].cls, y->t[k].e[i].count,
					 y->t[k].e[i].docs);
	}
	for (uint32_t j = 0; j < x->nf; j++)
	{
		const RawFeature *p = &x->f[j],
				   *q = &y->f[j];

		if (p->name.len != q->name.len || memcmp(p->name.s, q->name.s, p->name.len) != 0 ||
			p->type != q->type || p->items != q->items)
			DIFF("feature %u: name, type %u/%u or items %u/%u", j, p->type, q->type, p->items, q->items);
		if (!NEAR(p->rows, q->rows) || !NEAR(p->mean, q->mean) || !NEAR(p->m2, q->m2))
			DIFF("feature %u: rows %.17g/%.17g mean %.17g/%.17g m2 %.17g/%.17g", j, p->rows, q->rows,
				 p->mean, q->mean, p->m2, q->m2);
		for (uint32_t c = 0; c < x->nc; c++)
			if (!NEAR(p->present[c], q->present[c]) || !NEAR(p->a[c], q->a[c]) || !NEAR(p->b[c], q->b[c]))
				DIFF("feature %u class %u: present %.17g/%.17g a %.17g/%.17g b %.17g/%.17g", j, c,
					 p->present[c], q->present[c], p->a[c], q->a[c], p->b[c], q->b[c]);
	}
	return true;
#undef NEAR
#undef DIFF
}

static void
test_trainer_mixed_layout(void)
{
	size_t		gsize,
				wsize;
	unsigned char *got = serialize_mix(mix, NMIX, &gsize);
	RawModel	want,
				parsed;
	unsigned char *wbuf;
	char		why[300];
	NbView		v;
	NbtStats	st = {0};
	bool		same;

	mix_raw(&want);
	wbuf = raw_serialize(&want, &wsize);
	CHECK(raw_parse(&parsed, got, gsize), "trainer output does not parse as the documented layout");
	same = raw_equal(&parsed, &want, 0, why, sizeof(why));
	raw_free(&parsed);
	raw_free(&want);
	if (!same || wsize != gsize || memcmp(wbuf, got, gsize) != 0)
	{
		note("want %s", hex(wbuf, wsize));
		note("got  %s", hex(got, gsize));
	}
	CHECK(same, "trainer output differs from the hand-made model: %s", why);
	CHECK(wsize == gsize && memcmp(wbuf, got, gsize) == 0, "bytes differ from the documented layout");
	CHECK(got[4] == 2 && got[5] == 0, "version %u", got[4] | got[5] << 8);
	CHECK(open_view(&v, got, gsize, why, sizeof(why)), "rejected: %s", why);
	CHECK(v.n_features == 4 && v.vector_len == 0, "F %u", v.n_features);
	CHECK(nbt_check_model(got, gsize, &v, 3, 0, &st, why, sizeof(why)), "%s", why);
	free(got);
	free(wbuf);
}

/* Version 1 for text only (the bag "" in every row), version 2 for anything else. */
static void
test_trainer_version_choice(void)
{
	NbTrainer  *t;
	unsigned char *buf;
	size_t		size;
	NbView		v;
	char		why[200];
	static const struct
	{
		const char *what;
		int			variant;
		uint16_t	version;
	}			cases[] = {
		{"text in every row", 0, 1},
		{"a row without the bag", 1, 2},
		{"a categorical feature too", 2, 2},
		{"a named bag only", 3, 2},
		{"no features at all", 4, 2},
		{"empty bag in every row", 5, 1},
		{"text merged from a version 1 model", 6, 1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		int			variant = cases[i].variant;

		t = nb_trainer_create();
		if (variant == 6)
		{
			size_t		s1;
			unsigned char *b1 = serialize_rows(toy, NTOY, &s1);

			merge_bytes(t, b1, s1);
			free(b1);
		}
		else
			for (int r = 0; r < NTOY; r++)
			{
				Row			row = toy[r];

				if (variant == 5)
					row.tokens[0] = NULL;
				if (variant == 4)
					nb_trainer_begin_doc(t, row.label, (uint32_t) strlen(row.label), 1);
				else if (variant == 3)
				{
					NbTokenRef	ref = {"w", 1, 1};

					nb_trainer_begin_doc(t, row.label, (uint32_t) strlen(row.label), 1);
					nb_trainer_add_tokens(t, (uint32_t) feature_id(t, "bag", NB_FEATURE_BAG), &ref, 1);
				}
				else if (variant == 1 && r == 1)
					nb_trainer_begin_doc(t, row.label, (uint32_t) strlen(row.label), 1);
				else
				{
					train_row(t, &row);
					if (variant == 2)
						nb_trainer_add_category(t, (uint32_t) feature_id(t, "c", NB_FEATURE_CATEGORICAL), "v", 1);
				}
			}
		buf = serialize(t, &size);
		nb_trainer_destroy(t);
		CHECK(open_view(&v, buf, size, why, sizeof(why)), "%s: rejected: %s", cases[i].what, why);
		CHECK(v.version == cases[i].version, "%s: version %u, expected %u", cases[i].what, v.version,
			  cases[i].version);
		free(buf);
	}
}

/* nb_trainer_add_text with a feature "" of another type; nb_trainer_feature type conflicts. */
static void
test_trainer_type_conflicts(void)
{
	NbTrainer  *t = nb_trainer_create();
	NbFeatureType existing = NB_FEATURE_BAG;
	NbTokenRef	ref = {"tok", 3, 1};
	unsigned char *before,
			   *after;
	size_t		sb,
				sa;
	int64_t		j;

	nb_trainer_begin_doc(t, "c", 1, 1);
	j = nb_trainer_feature(t, "", 0, NB_FEATURE_CATEGORICAL, &existing);
	CHECK(j == 0, "feature id %lld", (long long) j);
	nb_trainer_add_category(t, (uint32_t) j, "v", 1);
	before = serialize(t, &sb);
	CHECK(!nb_trainer_add_text(t, &ref, 1), "add_text accepted with a categorical feature \"\"");
	after = serialize(t, &sa);
	CHECK(sa == sb && memcmp(before, after, sb) == 0, "refused add_text changed the trainer");
	free(after);
	CHECK(nb_trainer_feature(t, "", 0, NB_FEATURE_BAG, &existing) == -1 &&
		  existing == NB_FEATURE_CATEGORICAL, "type conflict not reported (existing %d)", (int) existing);
	CHECK(nb_trainer_feature(t, "", 0, NB_FEATURE_CATEGORICAL, &existing) == 0, "same type refused");
	for (int type = NB_FEATURE_BAG; type <= NB_FEATURE_BOOLEAN; type++)
	{
		int64_t		k = nb_trainer_feature(t, "g", 1, NB_FEATURE_GAUSSIAN, &existing);

		CHECK(k == 1, "id of g: %lld", (long long) k);
		k = nb_trainer_feature(t, "g", 1, (NbFeatureType) type, &existing);
		CHECK(type == NB_FEATURE_GAUSSIAN ? k == 1 : (k == -1 && existing == NB_FEATURE_GAUSSIAN),
			  "g as type %d: %lld", type, (long long) k);
	}
	free(before);
	nb_trainer_destroy(t);
}

/* float8[] positions "1".."n", length and type conflicts (trainer unchanged). */
static void
test_trainer_vector(void)
{
	NbTrainer  *t = nb_trainer_create();
	const uint32_t *ids;
	uint32_t	bad = 0;
	unsigned char *before,
			   *after,
			   *buf;
	size_t		sb,
				sa,
				size;
	NbView		v;
	char		why[200];
	NbFeatureType existing;

	nb_trainer_begin_doc(t, "c", 1, 1);
	ids = nb_trainer_vector(t, 3, &bad);
	CHECK(ids != NULL && t->vector_len == 3, "first vector refused");
	for (uint32_t i = 0; i < 3; i++)
	{
		char		name[4];

		snprintf(name, sizeof(name), "%u", i + 1);
		CHECK(nb_trainer_feature(t, name, 1, NB_FEATURE_GAUSSIAN, &existing) == ids[i],
			  "position %u is not the Gaussian feature \"%s\"", i, name);
		nb_trainer_add_real(t, ids[i], i * 1.5);
	}
	CHECK(nb_trainer_vector(t, 3, &bad) == ids, "second vector of the same length");
	before = serialize(t, &sb);
	bad = 0;
	CHECK(nb_trainer_vector(t, 4, &bad) == NULL && bad == UINT32_MAX, "length 4 after 3: bad %u", bad);
	CHECK(nb_trainer_vector(t, 2, &bad) == NULL && bad == UINT32_MAX, "length 2 after 3: bad %u", bad);
	after = serialize(t, &sa);
	CHECK(sa == sb && memcmp(before, after, sb) == 0, "refused vector changed the trainer");
	free(after);
	CHECK(open_view(&v, before, sb, why, sizeof(why)), "rejected: %s", why);
	CHECK(v.version == 2 && v.vector_len == 3 && v.n_features == 3, "version %u, vector %u, F %u",
		  v.version, v.vector_len, v.n_features);
	free(before);
	nb_trainer_destroy(t);

	/* position 2 exists as a boolean: refused with bad = 1 */
	t = nb_trainer_create();
	nb_trainer_begin_doc(t, "c", 1, 1);
	nb_trainer_add_boolean(t, (uint32_t) feature_id(t, "2", NB_FEATURE_BOOLEAN), true);
	before = serialize(t, &sb);
	bad = 0;
	CHECK(nb_trainer_vector(t, 3, &bad) == NULL && bad == 1, "type conflict at position 2: bad %u", bad);
	after = serialize(t, &sa);
	buf = after;
	size = sa;
	if (!(sa == sb && memcmp(before, after, sb) == 0))
	{
		CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected after the conflict: %s", why);
		free(before);
		free(after);
		nb_trainer_destroy(t);
		CHECK(false, "a refused nb_trainer_vector (type conflict at position 2) changed the trainer: "
			  "%u features now (feature \"1\" was created)", v.n_features);
	}
	CHECK(t->vector_len == 0, "vector length %u after a refused vector", t->vector_len);
	free(before);
	free(after);
	nb_trainer_destroy(t);
}

/* Merges that conflict are refused and change nothing. */
static void
test_trainer_merge_conflicts(void)
{
	static const MixRow other[] = {{"z", 1, NULL, -1, false, 0, false, {NULL}}};
	size_t		sm,
				sb,
				sa;
	unsigned char *model = serialize_mix(mix, NMIX, &sm);
	unsigned char *before,
			   *after;
	NbTrainer  *t = nb_trainer_create();
	NbView		v;
	char		why[200];
	uint32_t	conflict = 99,
				bad;
	NbMergeStatus st;

	CHECK(open_view(&v, model, sm, why, sizeof(why)), "rejected: %s", why);
	/* "flag" (feature 1 of the view) is Gaussian here */
	train_mix(t, &other[0]);
	nb_trainer_add_real(t, (uint32_t) feature_id(t, "flag", NB_FEATURE_GAUSSIAN), 1);
	before = serialize(t, &sb);
	st = nb_trainer_merge_view(t, &v, &conflict);
	after = serialize(t, &sa);
	CHECK(st == NB_MERGE_TYPE_CONFLICT && conflict == 1, "status %d, feature %u", (int) st, conflict);
	CHECK(sa == sb && memcmp(before, after, sb) == 0, "a refused merge changed the trainer");
	free(before);
	free(after);
	nb_trainer_destroy(t);

	/* the text bag "" against a categorical "" */
	{
		size_t		st_size;
		unsigned char *text = serialize_rows(toy, NTOY, &st_size);
		NbView		tv;

		t = nb_trainer_create();
		nb_trainer_begin_doc(t, "c", 1, 1);
		nb_trainer_add_category(t, (uint32_t) feature_id(t, "", NB_FEATURE_CATEGORICAL), "v", 1);
		before = serialize(t, &sb);
		CHECK(open_view(&tv, text, st_size, why, sizeof(why)), "rejected: %s", why);
		st = nb_trainer_merge_view(t, &tv, &conflict);
		after = serialize(t, &sa);
		free(text);
		CHECK(st == NB_MERGE_TYPE_CONFLICT && conflict == 0, "text into categorical \"\": status %d", (int) st);
		CHECK(sa == sb && memcmp(before, after, sb) == 0, "a refused merge changed the trainer");
		free(before);
		free(after);
		nb_trainer_destroy(t);
	}

	/* vectors of different lengths */
	{
		NbTrainer  *a = nb_trainer_create();
		size_t		s2;
		unsigned char *b2;
		NbView		v2;
		const uint32_t *ids;

		nb_trainer_begin_doc(a, "c", 1, 1);
		ids = nb_trainer_vector(a, 2, &bad);
		nb_trainer_add_real(a, ids[0], 1);
		nb_trainer_add_real(a, ids[1], 2);
		b2 = serialize(a, &s2);
		nb_trainer_destroy(a);
		CHECK(open_view(&v2, b2, s2, why, sizeof(why)), "rejected: %s", why);
		t = nb_trainer_create();
		nb_trainer_begin_doc(t, "d", 1, 1);
		ids = nb_trainer_vector(t, 3, &bad);
		nb_trainer_add_real(t, ids[2], 7);
		before = serialize(t, &sb);
		st = nb_trainer_merge_view(t, &v2, &conflict);
		after = serialize(t, &sa);
		free(b2);
		CHECK(st == NB_MERGE_VECTOR_CONFLICT, "status %d", (int) st);
		CHECK(sa == sb && memcmp(before, after, sb) == 0, "a refused merge changed the trainer");
		free(before);
		free(after);
		nb_trainer_destroy(t);
	}
	free(model);
}

/* Random mixed rows: dyadic weights, Gaussian values arbitrary doubles. */
typedef struct RandMix
{
	char		label[4];
	double		weight;
	int			color;			/* -1 missing */
	int			flag;			/* -1 missing */
	bool		has_x;
	double		x;
	bool		has_y;
	double		y;
	uint32_t	ntags;			/* UINT32_MAX: missing */
	uint32_t	tags[6];
	bool		text;			/* the bag "" */
	uint32_t	ntext;
	uint32_t	texttok[6];
	bool		has_vec;		/* float8[] of length 2 */
	double		vec[2];
} RandMix;

static void
rand_mix(RandMix *rows, int n, int nclasses, uint64_t seed, bool dyadic_x)
{
	static const double weights[] = {1, 1, 2, 0.5, 0.25, 3};

	for (int i = 0; i < n; i++)
	{
		RandMix    *r = &rows[i];

		memset(r, 0, sizeof(*r));
		snprintf(r->label, sizeof(r->label), "k%d", (int) (nbt_rand(&seed) % nclasses));
		r->weight = weights[nbt_rand(&seed) % 6];
		r->color = nbt_rand(&seed) % 5 == 0 ? -1 : (int) (nbt_rand(&seed) % 7);
		r->flag = nbt_rand(&seed) % 5 == 0 ? -1 : (int) (nbt_rand(&seed) % 2);
		/* canonical (byte-identical) comparisons: no Gaussian features, whose means round */
		r->has_x = nbt_rand(&seed) % 6 != 0 && !dyadic_x;
		r->x = dyadic_x ? (double) (nbt_rand(&seed) % 64) / 8 :
			((double) (nbt_rand(&seed) % 1000000) / 7919.0 - 40) * (1 + r->label[1] - '0');
		r->has_y = nbt_rand(&seed) % 3 != 0 && !dyadic_x;
		r->y = (double) (nbt_rand(&seed) % 1000) * 1e-2 + 100;
		r->ntags = nbt_rand(&seed) % 4 == 0 ? UINT32_MAX : (uint32_t) (nbt_rand(&seed) % 7);
		for (uint32_t k = 0; r->ntags != UINT32_MAX && k < r->ntags; k++)
			r->tags[k] = (uint32_t) (nbt_rand(&seed) % 12);
		r->text = nbt_rand(&seed) % 2 == 0;
		r->ntext = (uint32_t) (nbt_rand(&seed) % 7);
		for (uint32_t k = 0; k < r->ntext; k++)
			r->texttok[k] = (uint32_t) (nbt_rand(&seed) % 20);
		r->has_vec = nbt_rand(&seed) % 4 != 0 && !dyadic_x;
		r->vec[0] = dyadic_x ? (double) (nbt_rand(&seed) % 16) : (double) (nbt_rand(&seed) % 1000) / 3.0;
		r->vec[1] = dyadic_x ? -1.5 : (double) (nbt_rand(&seed) % 1000) / 7.0 - 50;
	}
}

static void
train_rand_mix(NbTrainer *t, const RandMix *r)
{
	static const char *const colors[] = {"red", "green", "blue", "", "\xc3\xa9", "x y", "z"};
	char		tok[6][8];
	NbTokenRef	refs[6];

	nb_trainer_begin_doc(t, r->label, (uint32_t) strlen(r->label), r->weight);
	if (r->text)
	{
		for (uint32_t k = 0; k < r->ntext; k++)
		{
			refs[k].len = (uint32_t) snprintf(tok[k], sizeof(tok[k]), "w%u", r->texttok[k]);
			refs[k].str = tok[k];
			refs[k].count = 1;
		}
		if (!nb_trainer_add_text(t, refs, r->ntext))
			abort();
	}
	if (r->color >= 0)
		nb_trainer_add_category(t, (uint32_t) feature_id(t, "color", NB_FEATURE_CATEGORICAL),
								colors[r->color], (uint32_t) strlen(colors[r->color]));
	if (r->flag >= 0)
		nb_trainer_add_boolean(t, (uint32_t) feature_id(t, "flag", NB_FEATURE_BOOLEAN), r->flag);
	if (r->has_x)
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "x", NB_FEATURE_GAUSSIAN), r->x);
	if (r->has_y)
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "y", NB_FEATURE_GAUSSIAN), r->y);
	if (r->ntags != UINT32_MAX)
	{
		for (uint32_t k = 0; k < r->ntags; k++)
		{
			refs[k].len = (uint32_t) snprintf(tok[k], sizeof(tok[k]), "t%u", r->tags[k]);
			refs[k].str = tok[k];
			refs[k].count = 1 + k % 2;
		}
		nb_trainer_add_tokens(t, (uint32_t) feature_id(t, "tags", NB_FEATURE_BAG), refs, r->ntags);
	}
	if (r->has_vec)
	{
		uint32_t	bad;
		const uint32_t *ids = nb_trainer_vector(t, 2, &bad);

		if (ids == NULL)
			abort();
		nb_trainer_add_real(t, ids[0], r->vec[0]);
		nb_trainer_add_real(t, ids[1], r->vec[1]);
	}
}

static unsigned char *
serialize_rand_mix(const RandMix *rows, const int *order, int n, size_t *size)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;

	for (int i = 0; i < n; i++)
		train_rand_mix(t, &rows[order ? order[i] : i]);
	buf = serialize(t, size);
	nb_trainer_destroy(t);
	return buf;
}

/* Merge the models of parts [cut[i], cut[i+1]) as a balanced tree; returns the bytes. */
static unsigned char *
merge_tree(const RandMix *rows, const int *cut, int lo, int hi, size_t *size)
{
	NbTrainer  *t;
	unsigned char *a,
			   *b,
			   *out;
	size_t		sa,
				sb;
	int			mid;

	if (hi - lo == 1)
		return serialize_rand_mix(rows + cut[lo], NULL, cut[lo + 1] - cut[lo], size);
	mid = (lo + hi) / 2;
	a = merge_tree(rows, cut, lo, mid, &sa);
	b = merge_tree(rows, cut, mid, hi, &sb);
	t = nb_trainer_create();
	merge_bytes(t, b, sb);		/* right first: the order must not matter either */
	merge_bytes(t, a, sa);
	out = serialize(t, size);
	nb_trainer_destroy(t);
	free(a);
	free(b);
	return out;
}

/*
 * Row order, merge order and merge tree do not matter: byte-identical
 * without Gaussian features (dyadic weights: every sum exact), within 1e-12
 * relative with them (Chan et al.'s merge vs weighted Welford round
 * differently; the data are well-conditioned: spread not tiny against the
 * mean).
 */
static void
mixed_merge(bool dyadic)
{
	enum
	{
		N = 240
	};
	RandMix    *rows = malloc(sizeof(RandMix) * N);
	int		   *order = malloc(sizeof(int) * N);
	int			cut[9];
	size_t		s0,
				s1;
	unsigned char *b0,
			   *b1;
	uint64_t	seed = dyadic ? 5 : 6;
	RawModel	r0,
				r1;
	char		why[300];
	NbView		v;
	NbtStats	st = {0};

	rand_mix(rows, N, 4, dyadic ? 21 : 22, dyadic);
	b0 = serialize_rand_mix(rows, NULL, N, &s0);
	CHECK(open_view(&v, b0, s0, why, sizeof(why)), "rejected: %s", why);
	CHECK(v.version == 2 && v.n_features == (dyadic ? 4 : 8) && v.vector_len == (dyadic ? 0 : 2),
		  "version %u, %u features, vector %u", v.version, v.n_features, v.vector_len);
	CHECK(nbt_check_model(b0, s0, &v, 1, 0, &st, why, sizeof(why)), "%s", why);
	CHECK(raw_parse(&r0, b0, s0), "trainer output does not parse");
	for (int trial = 0; trial < 4; trial++)
	{
		bool		same;

		for (int i = 0; i < N; i++)
			order[i] = i;
		for (int i = N - 1; i > 0 && trial > 0; i--)
		{
			int			j = (int) (nbt_rand(&seed) % (i + 1));
			int			x = order[i];

			order[i] = order[j];
			order[j] = x;
		}
		if (trial % 2 == 0)
			b1 = serialize_rand_mix(rows, order, N, &s1);
		else
		{
			/* 8 parts of random sizes, merged as a tree */
			cut[0] = 0;
			cut[8] = N;
			for (int i = 1; i < 8; i++)
				cut[i] = cut[i - 1] + 1 + (int) (nbt_rand(&seed) % ((N - cut[i - 1]) / 3 + 1));
			b1 = merge_tree(rows, cut, 0, 8, &s1);
		}
		CHECK(raw_parse(&r1, b1, s1), "output does not parse");
		same = raw_equal(&r1, &r0, dyadic ? 0 : 1e-12, why, sizeof(why));
		raw_free(&r1);
		if (dyadic && same)
			same = s1 == s0 && memcmp(b0, b1, s0) == 0;
		free(b1);
		if (!same)
		{
			raw_free(&r0);
			free(b0);
			free(rows);
			free(order);
			CHECK(false, "trial %d (%s) differs: %s", trial, trial % 2 ? "merge tree" : "row order", why);
		}
	}
	raw_free(&r0);
	free(b0);
	free(rows);
	free(order);
}

static void
test_trainer_mixed_canonical(void)
{
	mixed_merge(true);
}

static void
test_trainer_gaussian_merge(void)
{
	mixed_merge(false);
}

/*
 * Weighted Gaussian statistics against a two-pass long-double computation,
 * for values with a large offset (1e6 + small), where a naive sum of squares
 * would lose every digit.
 */
static void
test_trainer_gaussian_welford(void)
{
	enum
	{
		N = 500
	};
	NbTrainer  *t = nb_trainer_create();
	double		x[N],
				w[N];
	long double sw = 0,
				swx = 0,
				mean,
				m2 = 0,
				umean = 0,
				um2 = 0;
	uint64_t	seed = 77;
	unsigned char *buf;
	size_t		size;
	NbView		v;
	char		why[200];
	uint32_t	j;

	for (int i = 0; i < N; i++)
	{
		x[i] = 1e6 + (double) (nbt_rand(&seed) % 100000) / 9973.0;
		w[i] = 0.1 + (double) (nbt_rand(&seed) % 50) / 7.0;
		nb_trainer_begin_doc(t, "c", 1, w[i]);
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "x", NB_FEATURE_GAUSSIAN), x[i]);
		sw += w[i];
		swx += (long double) w[i] * x[i];
		umean += x[i];
	}
	mean = swx / sw;
	umean /= N;
	for (int i = 0; i < N; i++)
	{
		m2 += w[i] * (x[i] - mean) * (x[i] - mean);
		um2 += (x[i] - umean) * (x[i] - umean);
	}
	CHECK(!t->overflow, "overflow");
	buf = serialize(t, &size);
	nb_trainer_destroy(t);
	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	j = 0;
	CHECK(fabsl(nb_view_present(&v, j, 0) - sw) <= 1e-12 * sw, "weight %.17g vs %.17Lg", nb_view_present(&v, j, 0), sw);
	CHECK(fabsl(nb_view_a(&v, j, 0) - mean) <= 1e-12 * mean, "mean %.17g vs %.17Lg", nb_view_a(&v, j, 0), mean);
	CHECK(fabsl(nb_view_b(&v, j, 0) - m2) <= 1e-9 * m2, "M2 %.17g vs %.17Lg", nb_view_b(&v, j, 0), m2);
	CHECK(nb_read_f64(v.feature_rows, j) == N, "rows %g", nb_read_f64(v.feature_rows, j));
	CHECK(fabsl(nb_read_f64(v.feature_mean, j) - umean) <= 1e-12 * umean, "overall mean");
	CHECK(fabsl(nb_read_f64(v.feature_m2, j) - um2) <= 1e-9 * um2, "overall M2 %.17g vs %.17Lg",
		  nb_read_f64(v.feature_m2, j), um2);
	free(buf);
}

/*
 * A Gaussian feature whose values are large (|x| > 1.3e154, finite, their
 * variance 0): a single value, and the same model merged into an empty
 * trainer (what the combine function does).
 */
static void
test_trainer_gaussian_large_values(void)
{
	static const double values[] = {1e154, 1e155, -1e200, 1.7e308};

	for (int i = 0; i < 4; i++)
	{
		NbTrainer  *t = nb_trainer_create();
		NbTrainer  *t2;
		unsigned char *buf;
		size_t		size;
		NbView		v;
		char		why[200];
		uint32_t	conflict;
		bool		overflow;

		nb_trainer_begin_doc(t, "c", 1, 1);
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "x", NB_FEATURE_GAUSSIAN), values[i]);
		nb_trainer_begin_doc(t, "c", 1, 1);
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "x", NB_FEATURE_GAUSSIAN), values[i]);
		overflow = t->overflow || !nb_trainer_sums_finite(t);
		buf = serialize(t, &size);
		nb_trainer_destroy(t);
		if (overflow)
		{
			free(buf);
			CHECK(false, "two rows x = %g (variance 0) report an overflow (merge_moments: 0 * inf)",
				  values[i]);
		}
		CHECK(open_view(&v, buf, size, why, sizeof(why)), "x = %g: rejected: %s", values[i], why);
		t2 = nb_trainer_create();
		nb_trainer_merge_view(t2, &v, &conflict);
		overflow = t2->overflow || !nb_trainer_sums_finite(t2);
		nb_trainer_destroy(t2);
		free(buf);
		CHECK(!overflow, "x = %g: merging the model into an empty trainer reports an overflow", values[i]);
	}
}

/* ---------------------------------------------------------------- */
/* scoring with mixed features, by hand                              */

/*
 * The scoring model (weights 1):
 *   class a (3 rows): color red, red, red;  flag 1, 1, 0;  x 1, 3, -;  y 5, 5, 5
 *   class b (2 rows): color red, blue;      flag 0, -;     x 10, 14;   y 5, 5
 *   class c (1 row) : color blue;           -              -           -
 * color: K = 2 (blue, red); N_a = (0, 3), N_b = (1, 1), N_c = (1, 0).
 * flag: a: 2 of 3 true; b: 0 of 1; c: none.
 * x: a: mean 2, M2 2 (var 1); b: mean 12, M2 8 (var 4); c: none.
 *    overall 1, 3, 10, 14: mean 7, M2 36 + 16 + 9 + 49 = 110, variance 27.5.
 * y: constant 5: variance 0 in every class and overall.
 * Prior 3/6, 2/6, 1/6.
 */
static const MixRow score_rows_mix[] = {
	{"a", 1, "red", 1, true, 1, false, {NULL}},
	{"a", 1, "red", 1, true, 3, false, {NULL}},
	{"a", 1, "red", 0, false, 0, false, {NULL}},
	{"b", 1, "red", 0, true, 10, false, {NULL}},
	{"b", 1, "blue", -1, true, 14, false, {NULL}},
	{"c", 1, "blue", -1, false, 0, false, {NULL}},
};

/* The document: NULL color / flag < 0 / isnan(x), isnan(y): missing. */
typedef struct MixDoc
{
	const char *color;
	int			flag;
	double		x;
	double		y;
} MixDoc;

typedef struct MixScored
{
	int64_t		best;
	double		post[4];
	double		logp[4];
	bool		any_nan;
} MixScored;

static MixScored
score_mix(const MixRow *rows, int nrows, bool with_y, double alpha, double var_smoothing, MixDoc d)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;
	size_t		size;
	NbView		v;
	NbIndex		ix;
	NbScorer	sc;
	NbDoc		doc;
	NbOptions	o = {NB_MULTINOMIAL, alpha, NB_PRIOR_FIT, NULL, var_smoothing};
	NbFormatError e;
	MixScored	r;

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < nrows; i++)
	{
		train_mix(t, &rows[i]);
		if (with_y && rows[i].has_x + (rows[i].color != NULL) > 0 && rows[i].label[0] != 'c')
			nb_trainer_add_real(t, (uint32_t) feature_id(t, "y", NB_FEATURE_GAUSSIAN), 5);
	}
	buf = serialize(t, &size);
	nb_trainer_destroy(t);
	if (!nb_view_open(&v, buf, size, &e))
	{
		fprintf(stderr, "score_mix: %s\n", e.message);
		abort();
	}
	nb_index_build(&ix, &v);
	nb_scorer_build(&sc, &ix, &o);
	nb_doc_init(&doc, &ix);
	nb_doc_begin(&doc);
	if (d.color != NULL)
	{
		NbTokenRef	ref = {d.color, (uint32_t) strlen(d.color), 1};

		nb_doc_add_tokens(&ix, &doc, (uint32_t) nb_index_feature(&ix, "color", 5), &ref, 1);
	}
	if (d.flag >= 0)
		nb_doc_add_value(&doc, (uint32_t) nb_index_feature(&ix, "flag", 4), d.flag);
	if (!isnan(d.x))
		nb_doc_add_value(&doc, (uint32_t) nb_index_feature(&ix, "x", 1), d.x);
	if (!isnan(d.y))
		nb_doc_add_value(&doc, (uint32_t) nb_index_feature(&ix, "y", 1), d.y);
	r.best = nb_scorer_score(&sc, &doc, r.logp);
	for (uint32_t c = 0; c < v.n_classes && c < 4; c++)
	{
		r.post[c] = r.logp[c] == -INFINITY ? 0 : exp(r.logp[c]);
		r.any_nan |= isnan(r.logp[c]);
	}
	nb_doc_free(&doc);
	nb_scorer_free(&sc);
	nb_index_free(&ix);
	free(buf);
	return r;
}

/* Posterior of class 0 from unnormalized class probabilities. */
static double
share(const double *p, int n, int c)
{
	double		s = 0;

	for (int i = 0; i < n; i++)
		s += p[i];
	return p[c] / s;
}

#define MISSING_DOC {NULL, -1, NAN, NAN}

static void
test_scorer_categorical(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;

	/*
	 * Classes a, b only (rows 0..4).  Prior 3/5, 2/5; T_a = 3, T_b = 2, K = 2.
	 * alpha = 1, "blue": a (0 + 1) / (3 + 2) = 1/5, b (1 + 1) / (2 + 2) = 1/2
	 *   3/5 * 1/5 = 3/25 vs 2/5 * 1/2 = 5/25: P(a) = 3/8
	 * "green" (never seen): a 1/5, b 1/4: 3/25 vs 1/10: P(a) = 6/11
	 */
	d.color = "blue";
	r = score_mix(score_rows_mix, 5, false, 1, 1e-9, d);
	CHECK_NEAR(r.post[0], 3.0 / 8, 1e-12, "blue: P(a)");
	d.color = "green";
	r = score_mix(score_rows_mix, 5, false, 1, 1e-9, d);
	CHECK_NEAR(r.post[0], 6.0 / 11, 1e-12, "unseen green: P(a)");
	/*
	 * alpha -> 0, "green": a: a/(3 + 2a), b: a/(2 + 2a): one zero factor
	 * each; 3/5 * 1/3 = 1/5 vs 2/5 * 1/2 = 1/5: P(a) = 1/2.
	 * "blue": a has a zero factor, b not: P(b) = 1.
	 */
	r = score_mix(score_rows_mix, 5, false, 0, 1e-9, d);
	CHECK(!r.any_nan, "alpha 0: NaN");
	CHECK_NEAR(r.post[0], 0.5, 1e-12, "alpha 0, unseen green: P(a)");
	d.color = "blue";
	r = score_mix(score_rows_mix, 5, false, 0, 1e-9, d);
	CHECK(r.logp[0] == -INFINITY && r.post[1] == 1 && r.best == 1, "alpha 0, blue: log P(a) %g", r.logp[0]);
	/*
	 * With class c (T_c = 1: blue), alpha -> 0, "green": c: a/(1 + 2a);
	 * prior 3/6, 2/6, 1/6: 1/2 * 1/3, 1/3 * 1/2, 1/6 * 1: each 1/6.
	 */
	d.color = "green";
	r = score_mix(score_rows_mix, 6, false, 0, 1e-9, d);
	CHECK(!r.any_nan, "3 classes, alpha 0: NaN");
	CHECK_NEAR(r.post[0], 1.0 / 3, 1e-12, "3 classes, alpha 0, green: P(a)");
	CHECK_NEAR(r.post[2], 1.0 / 3, 1e-12, "3 classes, alpha 0, green: P(c)");
}

static void
test_scorer_boolean(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;
	double		p[3];

	/*
	 * t = (T + 1) / (M + 2): a (2 + 1) / (3 + 2) = 3/5, b (0 + 1) / (1 + 2) = 1/3,
	 * c (no rows with flag) 1/2.  Prior 1/2, 1/3, 1/6.
	 */
	d.flag = 1;
	r = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);
	p[0] = 0.5 * 0.6, p[1] = 1.0 / 3 / 3, p[2] = 1.0 / 6 * 0.5;
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "flag true: P(a)");
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-12, "flag true: P(c)");
	d.flag = 0;
	r = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);
	p[0] = 0.5 * 0.4, p[1] = 1.0 / 3 * 2 / 3, p[2] = 1.0 / 6 * 0.5;
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "flag false: P(a)");
	/*
	 * alpha -> 0: t_a = 2/3, t_b = 0, t_c = a / 2a = 1/2.
	 * true: b has a zero factor: 1/2 * 2/3 vs 1/6 * 1/2.
	 */
	d.flag = 1;
	r = score_mix(score_rows_mix, 6, false, 0, 1e-9, d);
	p[0] = 0.5 * 2 / 3, p[1] = 0, p[2] = 1.0 / 6 * 0.5;
	CHECK(!r.any_nan && r.logp[1] == -INFINITY, "alpha 0, flag true: log P(b) = %g", r.logp[1]);
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "alpha 0, flag true: P(a)");
	/* false: 1/2 * 1/3, 1/3 * 1, 1/6 * 1/2 */
	d.flag = 0;
	r = score_mix(score_rows_mix, 6, false, 0, 1e-9, d);
	p[0] = 0.5 / 3, p[1] = 1.0 / 3, p[2] = 1.0 / 12;
	CHECK_NEAR(r.post[1], share(p, 3, 1), 1e-12, "alpha 0, flag false: P(b)");
}

static double
log_normal(double x, double mean, double var)
{
	return -0.5 * log(2 * M_PI * var) - (x - mean) * (x - mean) / (2 * var);
}

static void
test_scorer_gaussian(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;
	double		p[3];
	double		floor;

	/*
	 * Classes a, b: var_smoothing 0.1: floor 0.1 * 27.5 = 2.75;
	 * a: N(2, 1 + 2.75), b: N(12, 4 + 2.75).  Prior 3/5, 2/5.  x = 5.
	 */
	d.x = 5;
	r = score_mix(score_rows_mix, 5, false, 1, 0.1, d);
	p[0] = 0.6 * exp(log_normal(5, 2, 3.75));
	p[1] = 0.4 * exp(log_normal(5, 12, 6.75));
	CHECK_NEAR(r.post[0], share(p, 2, 0), 1e-12, "x = 5, var_smoothing 0.1: P(a)");
	/* var_smoothing 1e-9: floor 2.75e-8 */
	r = score_mix(score_rows_mix, 5, false, 1, 1e-9, d);
	p[0] = 0.6 * exp(log_normal(5, 2, 1 + 2.75e-8));
	p[1] = 0.4 * exp(log_normal(5, 12, 4 + 2.75e-8));
	CHECK_NEAR(r.post[0], share(p, 2, 0), 1e-12, "x = 5, var_smoothing 1e-9: P(a)");
	/*
	 * Class c has no x: pooled statistics of a and b (weights 2 and 2):
	 * mean 7, M2 2 + 8 + 2 * 25 + 2 * 25 = 110, variance 110 / 4 = 27.5.
	 */
	floor = 0.1 * 27.5;
	r = score_mix(score_rows_mix, 6, false, 1, 0.1, d);
	p[0] = 0.5 * exp(log_normal(5, 2, 1 + floor));
	p[1] = 1.0 / 3 * exp(log_normal(5, 12, 4 + floor));
	p[2] = 1.0 / 6 * exp(log_normal(5, 7, 27.5 + floor));
	CHECK(!r.any_nan, "NaN");
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-12, "class without x: P(c)");
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-12, "class without x: P(a)");
	/* x and flag together: the product */
	d.flag = 1;
	r = score_mix(score_rows_mix, 6, false, 1, 0.1, d);
	p[0] *= 0.6, p[1] *= 1.0 / 3, p[2] *= 0.5;
	CHECK_NEAR(r.post[1], share(p, 3, 1), 1e-12, "x and flag: P(b)");
	/* x and flag and an unseen color: a 1/5, b 1/4, c (0 + 1) / (1 + 2) = 1/3 */
	d.color = "green";
	r = score_mix(score_rows_mix, 6, false, 1, 0.1, d);
	p[0] *= 0.2, p[1] *= 0.25, p[2] *= 1.0 / 3;
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-12, "x, flag, unseen color: P(c)");
	/* a value far from every class: finite, no NaN */
	d.color = NULL;
	d.flag = -1;
	d.x = 1e300;
	r = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);
	CHECK(!r.any_nan && r.best >= 0, "x = 1e300: log P = %g %g %g", r.logp[0], r.logp[1], r.logp[2]);
	d.x = -1e300;
	r = score_mix(score_rows_mix, 6, false, 0, 0, d);
	CHECK(!r.any_nan && r.best >= 0, "x = -1e300, var_smoothing 0: log P = %g %g %g", r.logp[0],
		  r.logp[1], r.logp[2]);
}

/* Constant features: variance 0 everywhere. */
static void
test_scorer_gaussian_constant(void)
{
	static const MixRow constant[] = {
		{"a", 1, NULL, -1, true, 5, false, {NULL}},
		{"a", 1, NULL, -1, true, 5, false, {NULL}},
		{"b", 1, NULL, -1, true, 5, false, {NULL}},
		{"c", 1, NULL, -1, false, 0, false, {NULL}},
	};
	static const double xs[] = {5, 6, -20, 4.5};
	static const double smoothing[] = {1e-9, 0, 1};
	MixScored	r;
	MixDoc		d = MISSING_DOC;
	double		p[3];

	/* the only Gaussian feature is constant: floor 0, variance 0: left equal for every class */
	for (int i = 0; i < 4; i++)
		for (int s = 0; s < 3; s++)
		{
			d.x = xs[i];
			r = score_mix(constant, 4, false, 1, smoothing[s], d);
			CHECK(!r.any_nan, "x = %g: NaN", xs[i]);
			CHECK_NEAR(r.post[0], 0.5, 1e-12, "constant x: P(a) is the prior");
			CHECK_NEAR(r.post[2], 0.25, 1e-12, "constant x: P(c) is the prior");
		}
	/*
	 * y constant 5 in classes a and b of the scoring model, x not: floor
	 * 1e-9 * 27.5 > 0; y has variance = floor in a and b (mean 5), and
	 * in class c (no y) pooled variance 0 + floor, mean 5: the same for
	 * every class, so y leaves the posterior of x alone.
	 */
	d.x = 5;
	d.y = 6;
	r = score_mix(score_rows_mix, 6, true, 1, 1e-9, d);
	p[0] = 0.5 * exp(log_normal(5, 2, 1 + 2.75e-8));
	p[1] = 1.0 / 3 * exp(log_normal(5, 12, 4 + 2.75e-8));
	p[2] = 1.0 / 6 * exp(log_normal(5, 7, 27.5 + 2.75e-8));
	CHECK(!r.any_nan, "constant y: NaN");
	CHECK_NEAR(r.post[0], share(p, 3, 0), 1e-9, "constant y: P(a)");
	CHECK_NEAR(r.post[2], share(p, 3, 2), 1e-9, "constant y: P(c)");
	/* only y: the prior */
	d.x = NAN;
	r = score_mix(score_rows_mix, 6, true, 0, 1e-9, d);
	CHECK_NEAR(r.post[0], 0.5, 1e-12, "only constant y: P(a)");
}

/*
 * A value far from a constant feature: the feature is the same for every
 * class (variance 1 everywhere, or the same floor), so the posterior must
 * stay the prior; only rounding may differ.
 */
static void
test_scorer_gaussian_constant_far_value(void)
{
	static const MixRow constant[] = {
		{"a", 1, NULL, -1, true, 5, false, {NULL}},
		{"a", 1, NULL, -1, true, 5, false, {NULL}},
		{"b", 1, NULL, -1, true, 5, false, {NULL}},
		{"c", 1, NULL, -1, false, 0, false, {NULL}},
	};
	static const double xs[] = {-1e6, 1e12, 1e300, -1e300};
	MixScored	r;
	MixDoc		d = MISSING_DOC;

	for (int i = 0; i < 4; i++)
	{
		d.x = xs[i];
		r = score_mix(constant, 4, false, 1, 1e-9, d);
		CHECK(!r.any_nan, "x = %g: NaN", xs[i]);
		CHECK(fabs(r.post[0] - 0.5) < 1e-9 && fabs(r.post[2] - 0.25) < 1e-9,
			  "x = %g, constant x (the same term for every class): P = %.17g %.17g %.17g, "
			  "expected the prior 0.5 0.25 0.25", xs[i], r.post[0], r.post[1], r.post[2]);
	}
}

/* Missing features are left out: every subset of features. */
static void
test_scorer_missing_features(void)
{
	MixScored	r;
	MixDoc		d = MISSING_DOC;

	/* nothing: the prior */
	r = score_mix(score_rows_mix, 6, false, 1, 1e-9, d);
	CHECK_NEAR(r.post[0], 0.5, 1e-12, "no features: P(a)");
	CHECK_NEAR(r.post[2], 1.0 / 6, 1e-12, "no features: P(c)");
	for (double alpha = 0; alpha <= 1; alpha += 0.5)
		for (int mask = 0; mask < 8; mask++)
		{
			d.color = mask & 1 ? (mask & 4 ? "blue" : "green") : NULL;
			d.flag = mask & 2 ? mask & 4 : -1;
			d.x = mask & 4 ? 3 : NAN;
			r = score_mix(score_rows_mix, 6, false, alpha, 1e-9, d);
			CHECK(!r.any_nan && r.best >= 0 &&
				  fabs(r.post[0] + r.post[1] + r.post[2] - 1) < 1e-12,
				  "alpha %g, features %d: P = %g %g %g", alpha, mask, r.post[0], r.post[1], r.post[2]);
		}
}

/* ---------------------------------------------------------------- */
/* nb_view_open: version 2 structure                                 */

typedef enum
{
	V2_NONE,
	V2_TYPE_ZERO, V2_TYPE_FIVE, V2_TYPE_HUGE, V2_ITEMS_ON_GAUSSIAN, V2_ITEMS_ON_BOOLEAN,
	V2_ITEMS_PLUS1, V2_ITEMS_MINUS1, V2_ITEMS_MOVED, V2_NAMES_UNSORTED, V2_NAME_DUP,
	V2_NAME_ZERO_BYTE, V2_PRESENT_GT_DOCS, V2_PRESENT_NEG, V2_PRESENT_NAN, V2_BOOL_TRUE_GT_PRESENT,
	V2_BOOL_TRUE_NEG, V2_BOOL_B, V2_GAUSS_M2_NEG, V2_GAUSS_B_NEG, V2_GAUSS_MEAN_NAN,
	V2_GAUSS_ROWS_NEG, V2_GAUSS_ABSENT_MEAN, V2_CAT_A, V2_BAG_B, V2_CAT_ROWS, V2_ENTRY_DOCS_GT_PRESENT,
	V2_VECTOR_MISSING, V2_VECTOR_NOT_GAUSSIAN, V2_VECTOR_HUGE, V2_ITEMS_UNSORTED,
	V2_F_PLUS1, V2_F_HUGE, V2_TRAILING, V2_VERSION1,
	N_V2_CORRUPTIONS
} V2Corruption;

static const char *const v2_corruption_name[] = {
	"none",
	"feature type 0", "feature type 5", "feature type 0xffffffff", "items on a Gaussian feature",
	"items on a boolean feature",
	"feature items + 1", "feature items - 1", "an item moved to the next feature",
	"feature names unsorted", "duplicate feature name",
	"zero byte in a feature name", "present > class docs", "present negative", "present NaN",
	"boolean true > present",
	"boolean true negative", "boolean b != 0", "Gaussian overall m2 negative", "Gaussian class M2 negative",
	"Gaussian mean NaN",
	"Gaussian rows negative", "Gaussian mean without rows", "categorical a != 0", "bag b != 0",
	"categorical overall rows != 0", "entry docs > feature present",
	"vector_len 6 (positions missing)", "vector position not Gaussian", "vector_len 0xffffffff",
	"items unsorted within a feature",
	"header F + 1", "header F huge", "trailing bytes", "version 1 header on a version 2 body",
};

/*
 * A valid version 2 model with every type and a vector of length 2:
 *   features (byte order): "1" Gaussian, "2" Gaussian, "color" categorical,
 *   "flag" boolean, "tags" bag; classes "a" (docs 4), "b" (docs 2).
 */
static void
v2_raw(RawModel *m)
{
	uint32_t	j,
				k;

	raw_init_v2(m);
	m->vector_len = 2;
	raw_add_class(m, "a", 1, 4);
	raw_add_class(m, "b", 1, 2);
	for (int p = 0; p < 2; p++)
	{
		j = raw_add_feature(m, p ? "2" : "1", 1, NB_FEATURE_GAUSSIAN);
		m->f[j].present[0] = 4;
		m->f[j].present[1] = 2;
		m->f[j].a[0] = 1.5 + p;
		m->f[j].b[0] = 2;
		m->f[j].a[1] = -3;
		m->f[j].b[1] = 0.5;
		m->f[j].rows = 6;
		m->f[j].mean = 0;
		m->f[j].m2 = 40;
	}
	j = raw_add_feature(m, "color", 5, NB_FEATURE_CATEGORICAL);
	m->f[j].present[0] = 3;
	m->f[j].present[1] = 1;
	k = raw_add_item(m, j, "blue", 4);
	raw_add_entry(m, k, 0, 2, 2);
	k = raw_add_item(m, j, "red", 3);
	raw_add_entry(m, k, 0, 1, 1);
	raw_add_entry(m, k, 1, 1, 1);
	j = raw_add_feature(m, "flag", 4, NB_FEATURE_BOOLEAN);
	m->f[j].present[0] = 3;
	m->f[j].present[1] = 2;
	m->f[j].a[0] = 1;
	m->f[j].a[1] = 2;
	j = raw_add_feature(m, "tags", 4, NB_FEATURE_BAG);
	m->f[j].present[0] = 3;
	m->f[j].present[1] = 1;
	k = raw_add_item(m, j, "t", 1);
	raw_add_entry(m, k, 0, 1, 1);
	raw_add_entry(m, k, 1, 2, 1);
	k = raw_add_item(m, j, "u", 1);
	raw_add_entry(m, k, 0, 1, 1);
}

#define F_G1 0
#define F_G2 1
#define F_COLOR 2
#define F_FLAG 3
#define F_TAGS 4

static unsigned char *
v2_corrupted(V2Corruption c, size_t *size)
{
	RawModel	m;
	unsigned char *p;

	v2_raw(&m);
	switch (c)
	{
		case V2_TYPE_ZERO:
			m.f[F_FLAG].type = 0;
			break;
		case V2_TYPE_FIVE:
			m.f[F_FLAG].type = 5;
			break;
		case V2_TYPE_HUGE:
			m.f[F_COLOR].type = UINT32_MAX;
			break;
		case V2_ITEMS_ON_GAUSSIAN:
			/* the categorical feature's items, now Gaussian (statistics otherwise valid) */
			m.f[F_COLOR].type = NB_FEATURE_GAUSSIAN;
			break;
		case V2_ITEMS_ON_BOOLEAN:
			m.f[F_COLOR].type = NB_FEATURE_BOOLEAN;
			break;
		case V2_ITEMS_PLUS1:
			m.f[F_TAGS].items++;
			break;
		case V2_ITEMS_MINUS1:
			m.f[F_TAGS].items--;
			break;
		case V2_ITEMS_MOVED:
			/* "red" becomes a token of "flag": items on a boolean */
			m.f[F_COLOR].items--;
			m.f[F_FLAG].items++;
			break;
		case V2_NAMES_UNSORTED:
			raw_set_string(&m.f[F_FLAG].name, (const unsigned char *) "zzz", 3);
			break;
		case V2_NAME_DUP:
			raw_set_string(&m.f[F_FLAG].name, (const unsigned char *) "color", 5);
			break;
		case V2_NAME_ZERO_BYTE:
			raw_set_string(&m.f[F_FLAG].name, (const unsigned char *) "fl\0g", 4);
			break;
		case V2_PRESENT_GT_DOCS:
			m.f[F_FLAG].present[1] = 2.5;
			break;
		case V2_PRESENT_NEG:
			m.f[F_COLOR].present[1] = -1;
			break;
		case V2_PRESENT_NAN:
			m.f[F_G1].present[0] = NAN;
			break;
		case V2_BOOL_TRUE_GT_PRESENT:
			m.f[F_FLAG].a[0] = 3.5;
			break;
		case V2_BOOL_TRUE_NEG:
			m.f[F_FLAG].a[0] = -1;
			break;
		case V2_BOOL_B:
			m.f[F_FLAG].b[0] = 1;
			break;
		case V2_GAUSS_M2_NEG:
			m.f[F_G2].m2 = -1;
			break;
		case V2_GAUSS_B_NEG:
			m.f[F_G1].b[1] = -0.5;
			break;
		case V2_GAUSS_MEAN_NAN:
			m.f[F_G1].a[0] = NAN;
			break;
		case V2_GAUSS_ROWS_NEG:
			m.f[F_G1].rows = -6;
			break;
		case V2_GAUSS_ABSENT_MEAN:
			m.f[F_G1].present[1] = 0;
			break;
		case V2_CAT_A:
			m.f[F_COLOR].a[0] = 1;
			break;
		case V2_BAG_B:
			m.f[F_TAGS].b[1] = 1;
			break;
		case V2_CAT_ROWS:
			m.f[F_COLOR].rows = 1;
			break;
		case V2_ENTRY_DOCS_GT_PRESENT:
			m.f[F_TAGS].present[1] = 0.5;
			break;
		case V2_VECTOR_MISSING:
			m.vector_len = 6;
			break;
		case V2_VECTOR_NOT_GAUSSIAN:
			m.f[F_G2].type = NB_FEATURE_BOOLEAN;
			m.f[F_G2].a[0] = m.f[F_G2].a[1] = m.f[F_G2].b[0] = m.f[F_G2].b[1] = 0;
			m.f[F_G2].rows = m.f[F_G2].mean = m.f[F_G2].m2 = 0;
			break;
		case V2_VECTOR_HUGE:
			m.vector_len = UINT32_MAX;
			break;
		case V2_ITEMS_UNSORTED:
			raw_set_string(&m.t[0].str, (const unsigned char *) "zed", 3);
			break;
		default:
			break;
	}
	p = raw_serialize(&m, size);
	raw_free(&m);
	switch (c)
	{
		case V2_F_PLUS1:
			nb_write_u32(p + NB_HEADER_SIZE, 0, 6);
			break;
		case V2_F_HUGE:
			nb_write_u32(p + NB_HEADER_SIZE, 0, UINT32_MAX);
			break;
		case V2_TRAILING:
			p = realloc(p, *size + 3);
			memset(p + *size, 'z', 3);
			*size += 3;
			break;
		case V2_VERSION1:
			p[4] = 1;
			break;
		default:
			break;
	}
	nbt_fix_checksum(p, *size);
	return p;
}

static void
test_view_v2_corrupt_structure(void)
{
	for (int c = 0; c < N_V2_CORRUPTIONS; c++)
	{
		size_t		size;
		unsigned char *p = v2_corrupted((V2Corruption) c, &size);
		NbView		v;
		NbFormatError e;
		bool		accepted;

		e.message[0] = '\0';
		accepted = nb_view_open(&v, p, size, &e);
		if (c == V2_NONE)
		{
			NbtStats	st = {0};
			char		err[512];

			CHECK(accepted, "the uncorrupted control value is rejected: %s", e.message);
			CHECK(v.version == 2 && v.n_features == 5 && v.vector_len == 2, "control: F %u", v.n_features);
			CHECK(nbt_check_model(p, size, &v, 1, 0, &st, err, sizeof(err)), "control: %s", err);
		}
		else
		{
			if (accepted)
				note("accepted: %s", hex(p, size));
			CHECK(!accepted, "%s: accepted", v2_corruption_name[c]);
			CHECK(e.message[0] != '\0', "%s: no error message", v2_corruption_name[c]);
		}
		free(p);
	}
}

/* Prior-only (no features), a vector only, zero-feature classes: valid and usable. */
static void
test_view_v2_edge_shapes(void)
{
	RawModel	m;
	unsigned char *p;
	size_t		size;
	NbView		v;
	NbtStats	st = {0};
	char		err[512];
	uint32_t	j;

	raw_init_v2(&m);
	raw_add_class(&m, "a", 1, 1);
	raw_add_class(&m, "b", 1, 3);
	p = raw_serialize(&m, &size);
	CHECK(open_view(&v, p, size, err, sizeof(err)), "prior only: rejected: %s", err);
	CHECK(v.n_features == 0 && v.n_tokens == 0, "prior only: F %u", v.n_features);
	CHECK(nbt_check_model(p, size, &v, 1, 0, &st, err, sizeof(err)), "prior only: %s", err);
	free(p);

	/* a Gaussian feature only class b has; a bag no class has */
	j = raw_add_feature(&m, "g", 1, NB_FEATURE_GAUSSIAN);
	m.f[j].present[1] = 3;
	m.f[j].a[1] = 7;
	m.f[j].b[1] = 0;
	m.f[j].rows = 2;
	m.f[j].mean = 7;
	raw_add_feature(&m, "h", 1, NB_FEATURE_BAG);
	j = raw_add_feature(&m, "k", 1, NB_FEATURE_CATEGORICAL);
	m.f[j].present[0] = 1;
	p = raw_serialize(&m, &size);
	raw_free(&m);
	CHECK(open_view(&v, p, size, err, sizeof(err)), "sparse features: rejected: %s", err);
	CHECK(nbt_check_model(p, size, &v, 1, 0, &st, err, sizeof(err)), "sparse features: %s", err);
	free(p);
}

/* Version 2 samples: 0 every type and a vector (raw), 1 prior only, 2 random mixed, 3 the mixed model. */
static unsigned char *
v2_model(int which, size_t *size)
{
	RawModel	m;
	unsigned char *p;

	switch (which)
	{
		case 0:
			v2_raw(&m);
			break;
		case 1:
			raw_init_v2(&m);
			raw_add_class(&m, "a", 1, 1);
			raw_add_class(&m, "b", 1, 0.5);
			break;
		case 2:
			{
				RandMix    *rows = malloc(sizeof(RandMix) * 12);

				rand_mix(rows, 12, 3, 31, false);
				for (int i = 0; i < 12; i++)
					rows[i].ntags %= 4, rows[i].ntext %= 3;
				p = serialize_rand_mix(rows, NULL, 12, size);
				free(rows);
				return p;
			}
		default:
			return serialize_mix(mix, NMIX, size);
	}
	p = raw_serialize(&m, size);
	raw_free(&m);
	return p;
}

/* ---------------------------------------------------------------- */
/* mutual information of categorical and boolean features            */

static void
test_mutual_info_mixed(void)
{
	/*
	 * The scoring model, classes a and b (rows 0..4):
	 *   color: red (a 3, b 1), blue (a 0, b 1); N = 5, columns 3, 2; rows 4, 1
	 *     I = 3/5 log(3*5 / (4*3)) + 1/5 log(1*5 / (4*2)) + 1/5 log(1*5 / (1*2))
	 *   flag (rows with it: a 3, b 1): true (a 2, b 0), false (a 1, b 1)
	 *     N = 4, columns 3, 1; rows 2, 2:
	 *     I = 2/4 log(2*4 / (2*3)) + 1/4 log(1*4 / (2*3)) + 1/4 log(1*4 / (2*1))
	 *   x: Gaussian, NaN and last.
	 */
	const double icolor = 0.6 * log(15.0 / 12) + 0.2 * log(5.0 / 8) + 0.2 * log(5.0 / 2);
	const double iflag = 0.5 * log(8.0 / 6) + 0.25 * log(4.0 / 6) + 0.25 * log(2.0);
	size_t		size;
	unsigned char *buf = serialize_mix(score_rows_mix, 5, &size);
	NbView		v;
	char		why[200];
	NbMiRow		rows[8];
	uint64_t	n;

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	CHECK(nb_mutual_info_max_rows(&v) == 2 + 3, "max rows");
	n = nb_mutual_info(&v, rows);
	free(buf);
	/* features in byte order: color 0, flag 1, x 2 */
	CHECK(n == 3, "%llu rows", (unsigned long long) n);
	CHECK(icolor > iflag, "hand values out of order");
	CHECK(rows[0].feature == 0 && rows[0].whole_feature && rows[0].item == 0, "row 0: feature %u", rows[0].feature);
	CHECK_NEAR(rows[0].mi, icolor, 1e-12, "I(color)");
	CHECK(rows[1].feature == 1 && rows[1].whole_feature && rows[1].item == 2, "row 1: feature %u item %u",
		  rows[1].feature, rows[1].item);
	CHECK_NEAR(rows[1].mi, iflag, 1e-12, "I(flag)");
	CHECK(rows[2].feature == 2 && rows[2].whole_feature && isnan(rows[2].mi), "row 2: feature %u, mi %g",
		  rows[2].feature, rows[2].mi);
}

/* A named bag: Murphy 3.76 with D_c the rows of the class that have the bag. */
static void
test_mutual_info_named_bag(void)
{
	/*
	 * The mixed model: tags present a 3 (weights 1, 2), b 1; D = 4, pi = (3/4, 1/4).
	 *   t: d = (1, 1): theta (1/3, 1), theta_t = 1/2
	 *      I = 3/4 [1/3 log(2/3) + 2/3 log(4/3)] + 1/4 [log 2]
	 *   u: d = (1, 0): theta (1/3, 0), theta_u = 1/4
	 *      I = 3/4 [1/3 log(4/3) + 2/3 log((2/3)/(3/4))] + 1/4 [log(4/3)]
	 */
	const double it = 0.75 * (log(2.0 / 3) / 3 + 2.0 / 3 * log(4.0 / 3)) + 0.25 * log(2.0);
	const double iu = 0.75 * (log(4.0 / 3) / 3 + 2.0 / 3 * log(8.0 / 9)) + 0.25 * log(4.0 / 3);
	size_t		size;
	unsigned char *buf = serialize_mix(mix, NMIX, &size);
	NbView		v;
	char		why[200];
	NbMiRow		rows[8];
	uint64_t	n;
	bool		seen_t = false,
				seen_u = false;

	CHECK(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	n = nb_mutual_info(&v, rows);
	free(buf);
	/* color, flag, t, u, x */
	CHECK(n == 5, "%llu rows", (unsigned long long) n);
	for (uint64_t i = 0; i < n; i++)
		if (rows[i].feature == 2)
		{
			CHECK(!rows[i].whole_feature, "bag row as a whole feature");
			CHECK_NEAR(rows[i].mi, rows[i].item == 2 ? it : iu, 1e-12, rows[i].item == 2 ? "I(t)" : "I(u)");
			seen_t |= rows[i].item == 2;
			seen_u |= rows[i].item == 3;
		}
	CHECK(seen_t && seen_u, "bag items missing");
	CHECK(rows[4].feature == 3 && isnan(rows[4].mi), "Gaussian x not last");
}

/* ---------------------------------------------------------------- */
/* cancellation points (nb_interrupt.h)                              */

/*
 * Each long operation runs on inputs big enough for many checks: a row of
 * INT_ROW tokens over INT_VOCAB distinct ones, a model of three classes
 * (the third counted in the trainer's pair table) with 3 * INT_VOCAB
 * entries.  An operation is a function that does its whole work from
 * scratch, frees what it allocated, and returns a digest of its result; its
 * units are the work it does, in nb_interrupt.h's units.
 */
#define INT_VOCAB 60000
#define INT_ROW (4 * INT_VOCAB)

typedef struct IntFixture
{
	char	   *arena;			/* the tokens' bytes */
	NbTokenRef *row;			/* INT_ROW tokens */
	NbTrainer  *trainer;		/* trained on the row as classes a, b, c */
	unsigned char *bytes;		/* its serialized form */
	size_t		size;
	NbView		view;
	NbIndex		index;
	NbScorer	scorer;			/* multinomial, alpha 1 */
} IntFixture;

static IntFixture ifx;

static void
int_train_row(NbTrainer *t)
{
	static const char *const labels[] = {"a", "b", "c"};

	for (int c = 0; c < 3; c++)
	{
		nb_trainer_begin_doc(t, labels[c], 1, 1.0 + c);
		/* each class sees the row from another starting point */
		if (!nb_trainer_add_text(t, ifx.row + c * (INT_ROW / 8), INT_ROW - c * (INT_ROW / 8)))
			abort();
	}
}

static void
int_fixture_build(void)
{
	NbFormatError e;
	NbOptions	o = {NB_MULTINOMIAL, 1.0, NB_PRIOR_FIT, NULL, 1e-9};

	ifx.arena = malloc((size_t) INT_VOCAB * 8);
	ifx.row = malloc(sizeof(NbTokenRef) * INT_ROW);
	for (uint32_t k = 0; k < INT_VOCAB; k++)
		snprintf(ifx.arena + (size_t) k * 8, 8, "w%06u", k);
	for (uint32_t i = 0; i < INT_ROW; i++)
	{
		ifx.row[i].str = ifx.arena + (size_t) ((i * UINT64_C(7919)) % INT_VOCAB) * 8;
		ifx.row[i].len = 7;
		ifx.row[i].count = 1.0;
	}
	ifx.trainer = nb_trainer_create();
	int_train_row(ifx.trainer);
	ifx.bytes = serialize(ifx.trainer, &ifx.size);
	if (!nb_view_open(&ifx.view, ifx.bytes, ifx.size, &e))
		abort();
	nb_index_build(&ifx.index, &ifx.view);
	nb_scorer_build(&ifx.scorer, &ifx.index, &o);
}

static void
int_fixture_free(void)
{
	nb_scorer_free(&ifx.scorer);
	nb_index_free(&ifx.index);
	free(ifx.bytes);
	nb_trainer_destroy(ifx.trainer);
	free(ifx.row);
	free(ifx.arena);
}

static uint64_t
int_op_train(void)
{
	NbTrainer  *t = nb_trainer_create();
	uint64_t	d;

	int_train_row(t);
	d = nb_trainer_flat_size(t, SIZE_MAX) ^ t->n_entries << 32;
	nb_trainer_destroy(t);
	return d;
}

/* The fixture's trainer flattened, as the expanded object's methods do. */
static uint64_t
int_op_write(void)
{
	size_t		size = nb_trainer_flat_size(ifx.trainer, SIZE_MAX);
	unsigned char *buf = nb_alloc(size);
	uint64_t	d;

	if (!nb_trainer_sums_finite(ifx.trainer))
		abort();
	nb_trainer_write(ifx.trainer, buf, size);
	d = nb_hash_bytes(buf, size, 1);
	nb_free(buf);
	return d;
}

static uint64_t
int_op_view(void)
{
	NbView		v;
	NbFormatError e;

	if (!nb_view_open(&v, ifx.bytes, ifx.size, &e))
		return 0;
	return v.n_entries ^ v.checksum;
}

/* The fixture's model merged flat with itself, from two and from three inputs. */
static uint64_t
int_flat_merge(uint32_t n)
{
	NbView		views[3] = {ifx.view, ifx.view, ifx.view};
	NbView		out;
	NbMerger   *m = nb_merger_create(views, n);
	size_t		size = nb_merger_size(m, SIZE_MAX);
	unsigned char *buf = nb_alloc(size);
	uint64_t	d;

	if (!nb_merger_write(m, buf, size, &out))
		abort();
	d = nb_hash_bytes(buf, size, 3);
	nb_free(buf);
	nb_merger_destroy(m);
	return d;
}

static uint64_t
int_op_flat_merge2(void)
{
	return int_flat_merge(2);
}

static uint64_t
int_op_flat_merge3(void)
{
	return int_flat_merge(3);
}

static uint64_t
int_op_merge(void)
{
	NbTrainer  *t = nb_trainer_create();
	uint32_t	conflict;
	size_t		size;
	unsigned char *buf;
	uint64_t	d;

	if (nb_trainer_merge_view(t, &ifx.view, &conflict) != NB_MERGE_OK ||
		nb_trainer_merge_view(t, &ifx.view, &conflict) != NB_MERGE_OK)
		abort();
	size = nb_trainer_flat_size(t, SIZE_MAX);
	buf = nb_alloc(size);
	nb_trainer_write(t, buf, size);
	d = nb_hash_bytes(buf, size, 2);
	nb_free(buf);
	nb_trainer_destroy(t);
	return d;
}

static uint64_t
int_op_index(void)
{
	NbIndex		ix;
	uint64_t	d;

	nb_index_build(&ix, &ifx.view);
	d = ix.token_start[ix.n_tokens] ^ (uint64_t) ix.tokens.count << 32;
	nb_index_free(&ix);
	return d;
}

static uint64_t
int_op_scorer(NbKind kind)
{
	NbOptions	o = {kind, 0.5, NB_PRIOR_FIT, NULL, 1e-9};
	NbScorer	sc;
	NbDoc		doc;
	double		logp[3];
	uint64_t	d;

	nb_scorer_build(&sc, &ifx.index, &o);
	nb_doc_init(&doc, &ifx.index);
	nb_scorer_add_tokens(&sc, &doc, (uint32_t) ifx.index.unnamed_bag, ifx.row, 50);
	nb_scorer_score(&sc, &doc, logp);
	d = nb_hash_bytes(logp, sizeof(logp), 3);
	nb_doc_free(&doc);
	nb_scorer_free(&sc);
	return d;
}

static uint64_t
int_op_multinomial(void)
{
	return int_op_scorer(NB_MULTINOMIAL);
}

static uint64_t
int_op_bernoulli(void)
{
	return int_op_scorer(NB_BERNOULLI);
}

static uint64_t
int_op_complement(void)
{
	return int_op_scorer(NB_COMPLEMENT);
}

/* A document of the whole row, with the fixture's scorer (by index and by rows). */
static uint64_t
int_op_score(void)
{
	NbDoc		doc;
	double		logp[3];
	uint64_t	d;

	nb_doc_init(&doc, &ifx.index);
	nb_scorer_add_tokens(&ifx.scorer, &doc, (uint32_t) ifx.index.unnamed_bag, ifx.row, INT_ROW);
	nb_scorer_score(&ifx.scorer, &doc, logp);
	d = nb_hash_bytes(logp, sizeof(logp), 4);
	nb_doc_begin(&doc);
	nb_doc_add_tokens(&ifx.index, &doc, (uint32_t) ifx.index.unnamed_bag, ifx.row, INT_ROW);
	d ^= doc.n_tokens;
	nb_doc_free(&doc);
	return d;
}

static uint64_t
int_op_mutual_info(void)
{
	NbMiRow    *rows = nb_alloc(sizeof(NbMiRow) * (nb_mutual_info_max_rows(&ifx.view) + 1));
	uint64_t	n = nb_mutual_info(&ifx.view, rows);
	uint64_t	d = nb_hash_bytes(rows, sizeof(NbMiRow) * n, 5);

	nb_free(rows);
	return d;
}

static int
int_cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/* nb_sort of INT_ROW numbers with repeats, against qsort. */
static uint64_t
int_op_sort(void)
{
	uint64_t   *v = nb_alloc(sizeof(uint64_t) * INT_ROW);
	uint64_t   *w = nb_alloc(sizeof(uint64_t) * INT_ROW);
	uint64_t	d;

	for (uint32_t i = 0; i < INT_ROW; i++)
		v[i] = w[i] = nb_hash_mix(i) % (INT_ROW / 3);
	nb_sort(v, INT_ROW, sizeof(uint64_t), int_cmp_u64);
	qsort(w, INT_ROW, sizeof(uint64_t), int_cmp_u64);
	d = memcmp(v, w, sizeof(uint64_t) * INT_ROW) == 0 ? nb_hash_bytes(v, sizeof(uint64_t) * INT_ROW, 6) : 0;
	nb_free(w);
	nb_free(v);
	return d;
}

#define INT_HASH_BYTES (32 * 1024 * 1024 + 5)

static uint64_t
int_op_hash(void)
{
	unsigned char *buf = nb_alloc(INT_HASH_BYTES);
	uint64_t	d;

	for (size_t i = 0; i < INT_HASH_BYTES; i++)
		buf[i] = (unsigned char) (i * 131 >> 7);
	d = nb_hash_bytes_long(buf, INT_HASH_BYTES, 7);
	if (d != nb_hash_bytes(buf, INT_HASH_BYTES, 7))
		d = 0;
	nb_free(buf);
	return d;
}

typedef struct IntOp
{
	const char *name;
	uint64_t	(*fn) (void);
	uint64_t	units;			/* work of one run, set by int_units */
} IntOp;

static IntOp int_ops[] = {
	{"train a huge row", int_op_train, 0},
	{"flatten a trainer", int_op_write, 0},
	{"validate a model", int_op_view, 0},
	{"merge a model twice", int_op_merge, 0},
	{"build an index", int_op_index, 0},
	{"build a multinomial scorer", int_op_multinomial, 0},
	{"build a Bernoulli scorer", int_op_bernoulli, 0},
	{"build a complement scorer", int_op_complement, 0},
	{"score a huge document", int_op_score, 0},
	{"mutual information", int_op_mutual_info, 0},
	{"nb_sort", int_op_sort, 0},
	{"nb_hash_bytes_long", int_op_hash, 0},
	{"merge flat models, two inputs", int_op_flat_merge2, 0},
	{"merge flat models, three inputs", int_op_flat_merge3, 0},
};

#define N_INT_OPS (sizeof(int_ops) / sizeof(int_ops[0]))

/* A lower bound of each operation's work: tokens, entries, items or bytes / 64. */
static void
int_units(void)
{
	uint64_t	E = ifx.view.n_entries;
	uint64_t	V = ifx.view.n_tokens;

	int_ops[0].units = INT_ROW * 3 - 3 * (INT_ROW / 8);
	int_ops[1].units = V + E;
	int_ops[2].units = E;
	int_ops[3].units = 2 * E;
	int_ops[4].units = E;
	int_ops[5].units = E;
	int_ops[6].units = E;
	int_ops[7].units = E;
	int_ops[8].units = 2 * (uint64_t) INT_ROW;
	int_ops[9].units = V + E;
	int_ops[10].units = INT_ROW;
	int_ops[11].units = INT_HASH_BYTES / 64;
	int_ops[12].units = 2 * E;
	int_ops[13].units = 3 * E;
}

static void
test_interrupt_every_operation_checks(void)
{
	int_fixture_build();
	int_units();
	for (size_t i = 0; i < N_INT_OPS; i++)
	{
		long		before = nb_test_interrupts();
		uint64_t	want = int_ops[i].units / (4 * NB_INTERRUPT_EVERY);
		long		calls;

		int_ops[i].fn();
		calls = nb_test_interrupts() - before;
		note("%s: %ld checks for %llu units", int_ops[i].name, calls,
			 (unsigned long long) int_ops[i].units);
		if (want < 2 || calls < (long) want || calls > (long) (int_ops[i].units / 64 + 64))
		{
			int_fixture_free();
			CHECK(want >= 2, "%s: too little work to test", int_ops[i].name);
			CHECK(calls >= (long) want, "%s: %ld checks for %llu units, expected at least %llu",
				  int_ops[i].name, calls, (unsigned long long) int_ops[i].units,
				  (unsigned long long) want);
			CHECK(false, "%s: %ld checks for %llu units: not a check per work unit",
				  int_ops[i].name, calls, (unsigned long long) int_ops[i].units);
		}
	}
	int_fixture_free();
}

static jmp_buf int_env;
static long int_jump_at;

static void
int_jump(long calls)
{
	if (calls == int_jump_at)
		longjmp(int_env, 1);
}

/*
 * Jump out at the first, a middle and the last check of each operation,
 * free what was allocated since it started (as an error frees the memory
 * context); the fixture it read must be intact and the next run give the
 * same result.  ASan sees any use of freed memory and any leak.
 */
static void
test_interrupt_jump_out(void)
{
	static size_t i;
	static int	k;
	static uint64_t want;
	static long calls;
	static unsigned long mark;
	static const char *failure;

	failure = NULL;
	int_fixture_build();
	for (i = 0; i < N_INT_OPS && failure == NULL; i++)
	{
		long		before = nb_test_interrupts();

		want = int_ops[i].fn();
		calls = nb_test_interrupts() - before;
		if (want == 0 || calls < 2)
			failure = "no result or fewer than 2 checks";
		for (k = 0; k < 3 && failure == NULL; k++)
		{
			int_jump_at = nb_test_interrupts() + (k == 0 ? 1 : k == 1 ? (calls + 1) / 2 : calls);
			mark = nb_test_alloc_mark();
			nb_test_on_interrupt(int_jump);
			if (setjmp(int_env) == 0)
			{
				int_ops[i].fn();
				failure = "ran to the end without jumping";
			}
			nb_test_on_interrupt(NULL);
			nb_test_free_since(mark);
			if (failure == NULL && int_op_view() != (ifx.view.n_entries ^ ifx.view.checksum))
				failure = "the model read is no longer valid";
			if (failure == NULL && int_ops[i].fn() != want)
				failure = "a run after the jump gives another result";
		}
	}
	int_fixture_free();
	CHECK(failure == NULL, "%s (jump %d): %s", int_ops[i - 1].name, k, failure);
}

static void
run_interrupt_tests(void)
{
	run("interrupts: every long operation checks once per NB_INTERRUPT_EVERY units or so",
		test_interrupt_every_operation_checks);
	run("interrupts: jumping out at a check, the inputs stay intact and the next run is the same",
		test_interrupt_jump_out);
}

/* ---------------------------------------------------------------- */
/* seed corpus for the fuzzer                                        */

static int
write_file(const char *dir, const char *name, const unsigned char *buf, size_t size)
{
	char		path[4096];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, size, f) != size || fclose(f) != 0)
	{
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("%s (%zu bytes)\n", path, size);
	return 0;
}

static int
write_corpus(const char *dir)
{
	static const Row one_class[] = {{"only", 1, {"x", "y", "x"}}};
	static const Row no_tokens[] = {{"c", 2, {NULL}}};
	static const Row bytes[] = {
		{"", 1, {"", "\xff", "a\x01", "\xc3\xa9t\xc3\xa9"}},
		{"\xff\xfe", 0.5, {"a\x01", "\x7f"}},
	};
	RandRow    *rows = malloc(sizeof(RandRow) * 30);
	unsigned char *buf;
	size_t		size;
	int			rc = 0;

	mkdir(dir, 0777);
	buf = serialize_rows(toy, NTOY, &size);
	rc |= write_file(dir, "toy.nbm", buf, size);
	free(buf);
	buf = serialize_rows(one_class, 1, &size);
	rc |= write_file(dir, "one_class.nbm", buf, size);
	free(buf);
	buf = serialize_rows(no_tokens, 1, &size);
	rc |= write_file(dir, "no_tokens.nbm", buf, size);
	free(buf);
	buf = serialize_rows(empty_full, 2, &size);
	rc |= write_file(dir, "empty_class.nbm", buf, size);
	free(buf);
	buf = serialize_rows(bytes, 2, &size);
	rc |= write_file(dir, "bytes.nbm", buf, size);
	free(buf);
	rand_rows(rows, 30, 5, 24, 11, true);
	for (int i = 0; i < 30; i++)
		rows[i].n = rows[i].n % 6;
	buf = serialize_rand(rows, NULL, 30, &size);
	rc |= write_file(dir, "weighted.nbm", buf, size);
	free(buf);
	free(rows);
	/* version 2 */
	{
		static const char *const names[] = {"v2_vector_all_types.nbm", "v2_prior_only.nbm",
		"v2_random_mixed.nbm", "v2_mixed.nbm"};
		static const char training[] =
			"{\x0f\x90red a b\n"
			"\x05\x3a" "blue c\n"
			"\x11\x0b\x70red\n"
			"\x02\x4a\x88\n"
			"\x16\x8e\x81x y z\n";
		RandMix    *mrows = malloc(sizeof(RandMix) * 40);

		for (int i = 0; i < 4; i++)
		{
			buf = v2_model(i, &size);
			rc |= write_file(dir, names[i], buf, size);
			free(buf);
		}
		buf = serialize_mix(score_rows_mix, 6, &size);
		rc |= write_file(dir, "v2_scoring.nbm", buf, size);
		free(buf);
		rand_mix(mrows, 40, 4, 9, false);
		for (int i = 0; i < 40; i++)
			mrows[i].ntags %= 3, mrows[i].ntext %= 3;
		buf = serialize_rand_mix(mrows, NULL, 40, &size);
		rc |= write_file(dir, "v2_random_vector.nbm", buf, size);
		free(buf);
		free(mrows);
		rc |= write_file(dir, "train_mixed.txt", (const unsigned char *) training, sizeof(training) - 1);
	}
	return rc;
}

/* ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
		return write_corpus(argv[2]);
	if (argc == 2)
		filter = argv[1];

	run("strmap: intern 100000 strings, growth, find missing", test_strmap_many);
	run("strmap: empty, binary and 1 MB strings", test_strmap_binary_and_long);
	run("strmap: colliding hashes", test_strmap_collisions);
	run("hash: golden values, determinism, alignment, prefixes, bits", test_hash);
	run("hash: nb_hash_token and nb_bytes_equal at every length and alignment",
		test_token_hash_and_equal);
	run("trainer: counts and document frequencies with weights", test_trainer_counts);
	run("trainer: output matches the documented layout byte for byte", test_trainer_layout);
	run("trainer: merge of serialized parts equals training on all rows", test_trainer_merge);
	run("trainer: serialization is canonical (row and token order)", test_trainer_canonical);
	run("trainer: batch sizes of nb_trainer_add_tokens do not matter", test_trainer_batches);
	run("trainer: labels and tokens in unsigned byte order, empty and binary strings",
		test_trainer_byte_order);
	run("trainer: self-merge that overflows entry docs is reported or valid",
		test_trainer_merge_docs_overflow);
	run("format: size limit, base64 lengths (NB_MODEL_MAX_SIZE by hand)", test_format_size_limit);
	run("trainer: merges stop at size_limit (label, token, entry), not one byte before",
		test_trainer_merge_size_limit);
	run("view: accepts trainer output and it is fully usable", test_view_accepts_samples);
	run("view: accepts values at any alignment", test_view_unaligned);
	run("view: rejects every truncation", test_view_truncations);
	run("view: rejects trailing bytes", test_view_extensions);
	run("view: rejects every single-bit flip (checksum)", test_view_bitflips);
	run("view: single-bit flips with the checksum fixed are rejected or usable",
		test_view_bitflips_checksum_fixed);
	run("view: rejects corrupted structure behind a valid checksum", test_view_corrupt_structure);
	run("scorer: multinomial posteriors by hand (alpha 1, 0.5)", test_scorer_multinomial);
	run("scorer: bernoulli posteriors by hand (alpha 1)", test_scorer_bernoulli);
	run("scorer: complement posteriors by hand (alpha 1)", test_scorer_complement);
	run("scorer: uniform, given and zero class priors", test_scorer_priors);
	run("scorer: alpha=0 zero factors, fewest win, no NaN", test_scorer_alpha0);
	run("scorer: multinomial alpha=0 with a class that has no tokens (limit of alpha->0)",
		test_scorer_alpha0_empty_class_multinomial);
	run("scorer: complement alpha=0 when the other classes have no tokens (limit of alpha->0)",
		test_scorer_alpha0_empty_class_complement);
	run("scorer: exact ties go to the lowest class index", test_scorer_ties);
	run("scorer: random models vs reference (every class has tokens)",
		test_scorer_random_vs_reference);
	run("scorer: random models vs reference (with token-less documents)",
		test_scorer_random_vs_reference_empty_docs);
	run("scorer: total documents overflow (weights 1e308): refused, or no NaN",
		test_scorer_no_nan_total_docs_overflow);
	run("scorer: a class's token total overflows (weights 1e308): refused, or no NaN",
		test_scorer_no_nan_class_tokens_overflow);
	run("scorer: rows tell apart tokens alike in tag, length and first 8 bytes",
		test_scorer_rows_alike_tokens);
	run("scorer: nb_doc_add_tokens skips unknown tokens, adds up repeats across batches", test_index_lookup);
	run("mutual info: toy model by hand (Murphy eq. 3.76)", test_mutual_info);
	run("mutual info: weighted example by hand, zero information", test_mutual_info_weighted);
	run("mutual info: finite for extreme weights (1e-300 and 1e10)", test_mutual_info_extreme_weights);
	run("mutual info: rank descending, ties by token index", test_mutual_info_rank_ties);
	run("trainer v2: categorical, boolean, Gaussian and named bag match the layout byte for byte",
		test_trainer_mixed_layout);
	run("trainer v2: text-only models are version 1, anything else version 2",
		test_trainer_version_choice);
	run("trainer v2: type conflicts (nb_trainer_feature -1, add_text false) change nothing",
		test_trainer_type_conflicts);
	run("trainer v2: nb_trainer_vector positions, length and type conflicts change nothing",
		test_trainer_vector);
	run("trainer v2: conflicting merges (type, vector) are refused and change nothing",
		test_trainer_merge_conflicts);
	run("trainer v2: mixed features canonical across row order and merge trees (byte-identical)",
		test_trainer_mixed_canonical);
	run("trainer v2: Gaussian merges (Chan) equal training on all rows within 1e-12",
		test_trainer_gaussian_merge);
	run("trainer v2: weighted Welford equals a two-pass long-double computation",
		test_trainer_gaussian_welford);
	run("trainer v2: Gaussian values beyond 1.3e154 (variance 0) train and merge without overflow",
		test_trainer_gaussian_large_values);
	run("scorer v2: categorical by hand, unseen values, alpha 0", test_scorer_categorical);
	run("scorer v2: boolean by hand, alpha 1 and 0", test_scorer_boolean);
	run("scorer v2: Gaussian by hand, variance floor, class without values (pooled)",
		test_scorer_gaussian);
	run("scorer v2: constant Gaussian features: no NaN, the same for every class",
		test_scorer_gaussian_constant);
	run("scorer v2: a far value of a constant feature leaves the prior",
		test_scorer_gaussian_constant_far_value);
	run("scorer v2: missing features are left out, every subset, alpha 0..1",
		test_scorer_missing_features);
	run("view v2: rejects corrupted feature structure behind a valid checksum",
		test_view_v2_corrupt_structure);
	run("view v2: prior-only and sparse feature models are valid and usable",
		test_view_v2_edge_shapes);
	run("mutual info v2: categorical and boolean plug-in by hand, Gaussian NaN last",
		test_mutual_info_mixed);
	run("mutual info v2: named bag (D_c = rows with the bag) by hand", test_mutual_info_named_bag);
	run_interrupt_tests();

	printf("%d passed, %d failed\n", n_passed, n_failed);
	return n_failed ? 1 : 0;
}
