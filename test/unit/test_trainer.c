/*
 * test_trainer.c — unit tests of the trainer (src/nb_trainer.c): counts,
 * the documented layout byte for byte, canonical output, merges, conflicts,
 * size limits and Gaussian statistics.
 *
 *   ./test_trainer           run every test
 *   ./test_trainer WORD      run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "model_check.h"
#include "nb_hash.h"
#include "nb_format.h"
#include "nb_merge.h"
#include "nb_trainer.h"
#include "raw_model.h"
#include "unit.h"

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
	uint32_t	j,
				k;

	got = serialize_rows(toy, NTOY, &gsize);
	raw_init_v3(&m);
	raw_add_class(&m, "ham", 3, 1);
	raw_add_class(&m, "spam", 4, 2);
	j = raw_add_feature(&m, "", 0, NB_FEATURE_BAG);
	m.f[j].present[HAM] = 1;
	m.f[j].present[SPAM] = 2;
	k = raw_add_item(&m, j, "a", 1);
	raw_add_entry(&m, k, SPAM, 3, 2);
	k = raw_add_item(&m, j, "b", 1);
	raw_add_entry(&m, k, HAM, 1, 1);
	raw_add_entry(&m, k, SPAM, 1, 1);
	k = raw_add_item(&m, j, "c", 1);
	raw_add_entry(&m, k, HAM, 2, 1);
	raw_add_entry(&m, k, SPAM, 1, 1);
	k = raw_add_item(&m, j, "d", 1);
	raw_add_entry(&m, k, HAM, 1, 1);
	/* documents of 4 tokens (ham), 3 and 2 (spam), in increasing length */
	raw_add_length(&m, j, HAM, 4, 1);
	raw_add_length(&m, j, SPAM, 2, 1);
	raw_add_length(&m, j, SPAM, 3, 1);
	want = raw_serialize(&m, &wsize);
	raw_free(&m);
	if (wsize != gsize || memcmp(want, got, wsize) != 0)
	{
		note("want %s", hex(want, wsize));
		note("got  %s", hex(got, gsize));
	}
	CHECK(wsize == gsize, "size %zu, expected %zu", gsize, wsize);
	CHECK(memcmp(want, got, wsize) == 0, "bytes differ from the documented layout");
	/* header and counts, classes, items, entries, the feature, its lengths, strings */
	CHECK(wsize == 32 + 16 + 2 * 12 + 4 * 8 + 6 * 20 + 36 + 2 * 28 + 3 * 16 + 7 + 4,
		  "size %zu", wsize);
	free(want);
	free(got);
}

/* Random documents: integer counts and dyadic weights keep every sum exact. */
#define RAND_ROWS 300
#define RAND_TOKENS 2500

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

	/* a model with its lengths (version 3): the lower bound is exact once rows end */
	CHECK(nb_trainer_flat_size(t, SIZE_MAX) == sa, "flat size %zu, written %zu",
		  nb_trainer_flat_size(t, SIZE_MAX), sa);
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

/*
 * Whether nb_trainer_write_view writes want (what nb_trainer_write_view wrote,
 * size bytes) and describes it as nb_view_open does: the same settings
 * (the writer's are the trainer's, padding and all) and every other field
 * equal (a version 1 view's feature_names is some empty string, as in
 * test_format_writer.c).
 */
static bool
view_as_opened(NbTrainer *t, const unsigned char *want, size_t size)
{
	unsigned char *got = malloc(size);
	NbView		written;
	NbView		opened;
	NbFormatError err;
	bool		same;

	nb_trainer_write_view(t, got, size, &written);
	same = memcmp(got, want, size) == 0 && nb_view_open(&opened, got, size, &err);
	if (same)
	{
		same = nb_settings_same_tokenizer(&written.settings, &opened.settings) &&
			nb_settings_same_options(&written.settings, &opened.settings) &&
			written.settings.jsonb_bag == opened.settings.jsonb_bag;
		written.settings = opened.settings;
		written.feature_names = opened.feature_names;
		same = same && memcmp(&written, &opened, sizeof(NbView)) == 0;
	}
	free(got);
	return same;
}

/*
 * Every row in each of 4 classes with weights 1/(k + 1), but not in class
 * i % 5 (row i), as EM adds an unlabelled row (pg_em.c), and every 7th
 * also in its own class as a labelled row: the same bytes whether the
 * classes' counts are dense (nb_trainer_spread_init) and the rows go to
 * every class at once (nb_trainer_add_text_spread), or each row is a
 * document per class in a plain trainer (two classes inline, two in the
 * pair table); with merge, a model merged in next, after which the dense
 * counts are gone (no more spread rows) and rows count in the tables.
 * Spread over spread_classes classes (4 or more: the others have weight 0
 * and do not exist), whose dense counts take at most min_bytes (0: the
 * default) before they move to the tables.
 */
static unsigned char *
train_every_class(const RandRow *rows, bool spread, uint32_t spread_classes, uint64_t min_bytes,
				  const unsigned char *merge, size_t merge_size, size_t *size)
{
	static const char *const labels[] = {"c0", "c1", "c2", "c3"};
	NbTrainer  *t = nb_trainer_create();
	unsigned char *bytes;
	char		tok[MAX_DOC_TOKENS][16];
	NbTokenRef	refs[MAX_DOC_TOKENS];
	double	   *w = calloc(spread_classes, sizeof(double));

	if (min_bytes > 0)
		t->spread_min_bytes = min_bytes;
	if (spread && !nb_trainer_spread_init(t, spread_classes))
		abort();
	if (spread && (t->spread != NULL) != (64 * spread_classes * sizeof(NbItemCounts) <= t->spread_min_bytes))
		fail_at(__LINE__, "dense counts made past their limit, or not within it");
	if (spread)
		for (uint32_t k = 0; k < 4; k++)
			if (nb_trainer_class(t, labels[k], 2) != k)
				abort();
	for (int i = 0; i < RAND_ROWS; i++)
	{
		for (uint32_t j = 0; j < rows[i].n; j++)
		{
			refs[j].len = (uint32_t) snprintf(tok[j], sizeof(tok[j]), "t%u", rows[i].tok[j]);
			refs[j].str = tok[j];
			refs[j].count = 1.0 + j % 3;
		}
		if (i % 7 == 0)
		{
			nb_trainer_begin_doc(t, rows[i].label, (uint32_t) strlen(rows[i].label), rows[i].weight);
			if (!nb_trainer_add_text(t, refs, rows[i].n))
				abort();
		}
		for (int k = 0; k < 4; k++)
			w[k] = i % 5 == k ? 0 : 1.0 / (k + 1);
		if (spread)
		{
			if (!nb_trainer_add_text_spread(t, refs, rows[i].n, w))
				abort();
			continue;
		}
		for (int k = 0; k < 4; k++)
		{
			if (w[k] == 0)
				continue;
			nb_trainer_begin_doc(t, labels[k], 2, w[k]);
			if (!nb_trainer_add_text(t, refs, rows[i].n))
				abort();
		}
	}
	if (spread && min_bytes > 0 && t->spread != NULL)
		fail_at(__LINE__, "dense counts grown past their limit");
	if (merge != NULL)
	{
		/* a merge moves the dense counts to the tables, where later rows count too */
		merge_bytes(t, merge, merge_size);
		if (spread && nb_trainer_add_text_spread(t, refs, 0, w))
			abort();
		for (int i = 0; i < RAND_ROWS / 10; i++)
		{
			refs[0].str = "t1";
			refs[0].len = 2;
			refs[0].count = 1 + i % 3;
			nb_trainer_begin_doc(t, rows[i].label, (uint32_t) strlen(rows[i].label), rows[i].weight);
			if (!nb_trainer_add_text(t, refs, 1))
				abort();
		}
	}
	free(w);
	bytes = serialize(t, size);
	/* EM prepares the model from the view its writer gives (pg_em_run.c) */
	if (!view_as_opened(t, bytes, *size))
	{
		free(bytes);
		bytes = NULL;
	}
	nb_trainer_destroy(t);
	return bytes;
}

static void
test_trainer_add_spread(void)
{
	RandRow    *rows = malloc(sizeof(RandRow) * RAND_ROWS);
	size_t		s0,
				s1;
	unsigned char *b0,
			   *b1;

	rand_rows(rows, RAND_ROWS, 4, RAND_TOKENS, 11, true);
	b0 = train_every_class(rows, false, 4, 0, NULL, 0, &s0);
	b1 = train_every_class(rows, true, 4, 0, NULL, 0, &s1);
	CHECK(b0 != NULL && b1 != NULL, "nb_trainer_write_view differs from nb_view_open");
	CHECK(s1 == s0 && memcmp(b0, b1, s0) == 0, "add_text_spread gives different bytes");
	free(b1);
	/*
	 * 64 classes: dense counts of 128 items fit in 128 kB, of 256 do not
	 * (about 2,000 items come), so they move to the tables midway; in 64 kB
	 * none fit, and every row goes to the tables
	 */
	for (uint64_t min_bytes = 128 * 1024; min_bytes >= 64 * 1024; min_bytes /= 2)
	{
		b1 = train_every_class(rows, true, 64, min_bytes, NULL, 0, &s1);
		CHECK(b1 != NULL && s1 == s0 && memcmp(b0, b1, s0) == 0,
			  "add_text_spread past its dense counts' limit gives different bytes");
		free(b1);
	}
	/* the same with the model merged into both, and rows after the merge */
	{
		size_t		s2,
					s3;
		unsigned char *b2 = train_every_class(rows, false, 4, 0, b0, s0, &s2);
		unsigned char *b3 = train_every_class(rows, true, 4, 0, b0, s0, &s3);

		CHECK(b2 != NULL && b3 != NULL && s3 == s2 && memcmp(b2, b3, s2) == 0,
			  "a merge into dense counts gives different bytes, or views differ");
		free(b2);
		free(b3);
	}
	free(b0);
	free(rows);
}

/*
 * The rows, and every 97th a document of a token that shares its first
 * bytes with many others; with write_midway, the model written twice when
 * half of them are in.  Returns the bytes written at the end.
 */
static unsigned char *
train_prefixed(const RandRow *rows, bool write_midway, size_t *size)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *bytes;
	char		tok[40];

	for (int i = 0; i < RAND_ROWS; i++)
	{
		train_rand(t, &rows[i]);
		if (i % 97 == 0)
		{
			nb_trainer_begin_doc(t, "prefix", 6, 1);
			snprintf(tok, sizeof(tok), "common-prefix-%d", i * 7 % 1000);
			add_token(t, tok, (uint32_t) strlen(tok), 1);
		}
		if (write_midway && i == RAND_ROWS / 2)
		{
			size_t		mid;

			free(serialize(t, &mid));
			free(serialize(t, &mid));
		}
	}
	bytes = serialize(t, size);
	nb_trainer_destroy(t);
	return bytes;
}

/*
 * Writing lends the item index's memory to the sort (nb_vocab_lend_index):
 * writing twice, or writing and then training on, gives the bytes of a
 * trainer that never wrote before.  Many items share their first 8 bytes,
 * so that the sort compares beyond its keys.
 */
static void
test_trainer_write_then_train(void)
{
	RandRow    *rows = malloc(sizeof(RandRow) * RAND_ROWS);
	unsigned char *b0,
			   *b1;
	size_t		s0,
				s1;

	rand_rows(rows, RAND_ROWS, 5, RAND_TOKENS, 11, true);
	b1 = train_prefixed(rows, true, &s1);
	b0 = train_prefixed(rows, false, &s0);
	CHECK(s1 == s0 && memcmp(b0, b1, s0) == 0, "writing midway changed the model");
	free(b0);
	free(b1);
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

/* The mixed model above written field by field from the documented layout. */
static void
mix_raw(RawModel *m)
{
	uint32_t	j;

	raw_init_v3(m);
	raw_add_class(m, "a", 1, 4);
	raw_add_class(m, "b", 1, 2);
	mix_raw_discrete(m);
	/* "tags" (feature 2): a row of 2 tokens in each class; the empty bag has no length */
	raw_add_length(m, 2, 0, 2, 1);
	raw_add_length(m, 2, 1, 2, 1);
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
	CHECK(got[4] == 3 && got[5] == 0, "version %u", got[4] | got[5] << 8);
	CHECK(open_view(&v, got, gsize, why, sizeof(why)), "rejected: %s", why);
	CHECK(v.n_features == 4 && v.vector_len == 0, "F %u", v.n_features);
	CHECK(nbt_check_model(got, gsize, &v, 3, 0, &st, why, sizeof(why)), "%s", why);
	free(got);
	free(wbuf);
}

/*
 * Version 3 for anything with a bag, version 2 without; the versions of
 * unknown lengths after a merge with an older model with bags: 1 for text
 * only (the bag "" in every row), else 2.
 */
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
		{"text in every row", 0, 3},
		{"a row without the bag", 1, 3},
		{"a categorical feature too", 2, 3},
		{"a named bag only", 3, 3},
		{"no features at all", 4, 2},
		{"empty bag in every row", 5, 3},
		{"text merged from a version 3 model", 6, 3},
		{"text merged from a version 1 model", 7, 1},
		{"text and a categorical merged from version 1", 8, 2},
		{"a categorical merged from version 2 without bags into text with it", 9, 3},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		int			variant = cases[i].variant;

		t = nb_trainer_create();
		if (variant >= 6)
		{
			size_t		s1;
			unsigned char *b1 = serialize_rows(toy, NTOY, &s1);

			merge_bytes(t, b1, s1);
			free(b1);
		}
		if (variant >= 7)
		{
			/* an older model: version 1 (text) or 2 (a categorical feature only) */
			RawModel	old;
			size_t		s1;
			unsigned char *b1;

			if (variant == 9)
			{
				raw_init_v2(&old);
				raw_add_class(&old, "ham", 3, 1);
				raw_add_feature(&old, "c", 1, NB_FEATURE_CATEGORICAL);
				old.f[0].present[0] = 1;
				raw_add_entry(&old, raw_add_item(&old, 0, "v", 1), 0, 1, 1);
			}
			else
			{
				raw_init(&old);
				raw_add_class(&old, "ham", 3, 1);
				raw_add_entry(&old, raw_add_token(&old, "b", 1), 0, 1, 1);
			}
			b1 = raw_serialize(&old, &s1);
			raw_free(&old);
			if (variant == 9)
			{
				/* rows with the categorical too: models of unrelated rows do not merge */
				nb_trainer_begin_doc(t, "ham", 3, 1);
				nb_trainer_add_category(t, (uint32_t) feature_id(t, "c", NB_FEATURE_CATEGORICAL), "w", 1);
			}
			merge_bytes(t, b1, s1);
			free(b1);
			if (variant == 8)
			{
				nb_trainer_begin_doc(t, "ham", 3, 1);
				nb_trainer_add_category(t, (uint32_t) feature_id(t, "c", NB_FEATURE_CATEGORICAL), "v", 1);
			}
		}
		else if (variant == 6)
			;
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
		CHECK(view_as_opened(t, buf, size), "%s: nb_trainer_write_view differs from nb_view_open",
			  cases[i].what);
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

	/* the text bag "" against a categorical "" (a jsonb key) */
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
		/* a bag of text rows and a jsonb key: unrelated kinds of rows, refused before the types */
		CHECK(st == NB_MERGE_INPUT_CONFLICT, "text into categorical \"\": status %d", (int) st);
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
	CHECK(v.version == 3 && v.n_features == (dyadic ? 4 : 8) && v.vector_len == (dyadic ? 0 : 2),
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

/*
 * The pair table through its doublings (grow_pairs): after every doubling
 * each pair is in the first free slot from its home, once, and pairs_used
 * counts them, although before doublings there were runs that went round
 * the end of the table (pairs whose home lies after their slot).  Then
 * every count of the written model is the one kept here.
 */
#define PT_CLASSES 12
#define PT_TOKENS 20000
#define PT_ROWS 40000
#define PT_SEEDS 4

/* Pairs whose run goes round the end of the table; -1 if the table is not valid. */
static int64_t
pair_table_check(const NbTrainer *t, char *why, size_t whylen)
{
	uint64_t	used = 0;
	int64_t		wrapped = 0;

	for (uint64_t p = 0; p <= t->pair_mask; p++)
	{
		uint64_t	key = t->pairs[p].key;
		uint64_t	home;

		if (key == UINT64_MAX)
			continue;
		used++;
		home = nb_hash_mix(key) & t->pair_mask;
		wrapped += home > p;
		for (uint64_t j = home; j != p; j = (j + 1) & t->pair_mask)
			if (t->pairs[j].key == UINT64_MAX || t->pairs[j].key == key)
			{
				snprintf(why, whylen, "slot %llu of the run from %llu to %llu is %s",
						 (unsigned long long) j, (unsigned long long) home,
						 (unsigned long long) p,
						 t->pairs[j].key == key ? "the same pair" : "free");
				return -1;
			}
	}
	if (used != t->pairs_used)
	{
		snprintf(why, whylen, "%llu pairs, pairs_used %llu", (unsigned long long) used,
				 (unsigned long long) t->pairs_used);
		return -1;
	}
	return wrapped;
}

/*
 * Train PT_ROWS random rows (seed) checking the pair table at every
 * doubling; *growths and *wrapped_before add up what was seen.  Returns
 * the trainer, NULL on a failure.
 */
static NbTrainer *
pair_growth_rows(uint64_t seed, double *want, int *growths, int64_t *wrapped_before)
{
	NbTrainer  *t = nb_trainer_create();
	uint64_t	mask = t->pair_mask;
	char		why[200];

	for (int r = 0; r < PT_ROWS; r++)
	{
		char		label[8];
		char		tok[5][8];
		NbTokenRef	refs[5];
		int			c = (int) (nbt_rand(&seed) % PT_CLASSES);

		snprintf(label, sizeof(label), "c%02d", c);
		for (int i = 0; i < 5; i++)
		{
			int			k = (int) (nbt_rand(&seed) % PT_TOKENS);

			snprintf(tok[i], sizeof(tok[i]), "t%05d", k);
			refs[i].str = tok[i];
			refs[i].len = 6;
			refs[i].count = 1;
			if (want != NULL)
				want[(size_t) k * PT_CLASSES + c] += 1;
		}
		/* about to double: count the runs round the end of the old table */
		if ((t->pairs_used + 5) * 4 > (t->pair_mask + 1) * 3)
		{
			int64_t		w = pair_table_check(t, why, sizeof(why));

			if (w < 0)
			{
				fail_at(__LINE__, "before a doubling: %s", why);
				nb_trainer_destroy(t);
				return NULL;
			}
			*wrapped_before += w;
		}
		nb_trainer_begin_doc(t, label, 3, 1.0);
		if (!nb_trainer_add_text(t, refs, 5))
			abort();
		if (t->pair_mask != mask)
		{
			if (pair_table_check(t, why, sizeof(why)) < 0)
			{
				fail_at(__LINE__, "seed %llu, after doubling to %llu slots: %s",
						(unsigned long long) seed, (unsigned long long) t->pair_mask + 1, why);
				nb_trainer_destroy(t);
				return NULL;
			}
			mask = t->pair_mask;
			(*growths)++;
		}
	}
	return t;
}

static void
test_trainer_pair_growth(void)
{
	double	   *want = calloc((size_t) PT_TOKENS * PT_CLASSES, sizeof(double));
	int			growths = 0;
	int64_t		wrapped_before = 0;
	NbTrainer  *t = pair_growth_rows(17, want, &growths, &wrapped_before);
	unsigned char *buf = NULL;
	size_t		size;
	NbView		v;
	char		why[200];
	const char *s;
	uint64_t	e = 0;
	uint64_t	nonzero = 0;

	if (t == NULL)
		goto done;
	/* more seeds: tables of other layouts, checked at every doubling */
	for (uint64_t seed = 1; seed <= PT_SEEDS; seed++)
	{
		NbTrainer  *other = pair_growth_rows(1000 + seed, NULL, &growths, &wrapped_before);

		if (other == NULL)
			goto done;
		nb_trainer_destroy(other);
	}
	CHECK_OR_DONE(wrapped_before > 0, "no run went round the end before a doubling");

	size = nb_trainer_flat_size(t, SIZE_MAX);
	buf = malloc(size);
	nb_trainer_write_view(t, buf, size, NULL);
	CHECK_OR_DONE(open_view(&v, buf, size, why, sizeof(why)), "rejected: %s", why);
	s = v.tokens;
	for (uint32_t k = 0; k < v.n_tokens; k++)
	{
		uint32_t	len = nb_read_u32(v.token_len, k);
		int			tk = 0;

		/* "t" and five digits; the strings are not NUL-terminated */
		for (int d = 1; d < 6; d++)
			tk = tk * 10 + (s[d] - '0');
		for (uint32_t i = 0; i < nb_read_u32(v.token_entries, k); i++, e++)
		{
			uint32_t	c = nb_read_u32(v.entry_class, e);

			/* labels c00..c11 sort as their numbers */
			CHECK_OR_DONE(nb_read_f64(v.entry_count, e) == want[(size_t) tk * PT_CLASSES + c],
						  "token %.*s, class %u: %g, expected %g", (int) len, s, c,
						  nb_read_f64(v.entry_count, e), want[(size_t) tk * PT_CLASSES + c]);
		}
		s += len;
	}
	for (size_t i = 0; i < (size_t) PT_TOKENS * PT_CLASSES; i++)
		nonzero += want[i] != 0;
	CHECK_OR_DONE(e == nonzero, "%llu entries, expected %llu", (unsigned long long) e,
				  (unsigned long long) nonzero);
	note("%d doublings; %lld pairs in runs round the end just before one", growths,
		 (long long) wrapped_before);
done:
	free(buf);
	free(want);
	if (t != NULL)
		nb_trainer_destroy(t);
}

/* ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("trainer: writing midway (the index's memory lent to the sort) changes nothing",
		test_trainer_write_then_train);
	run("trainer: counts and document frequencies with weights", test_trainer_counts);
	run("trainer: output matches the documented layout byte for byte", test_trainer_layout);
	run("trainer: merge of serialized parts equals training on all rows", test_trainer_merge);
	run("trainer: serialization is canonical (row and token order)", test_trainer_canonical);
	run("trainer: batch sizes of nb_trainer_add_tokens do not matter", test_trainer_batches);
	run("trainer: a row added to every class at once (nb_trainer_add_text_spread) as to each",
		test_trainer_add_spread);
	run("trainer: the pair table stays a valid linear-probing table through its doublings",
		test_trainer_pair_growth);
	run("trainer: labels and tokens in unsigned byte order, empty and binary strings",
		test_trainer_byte_order);
	run("trainer: self-merge that overflows entry docs is reported or valid",
		test_trainer_merge_docs_overflow);
	run("trainer: merges stop at size_limit (label, token, entry), not one byte before",
		test_trainer_merge_size_limit);
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
	return unit_done();
}
