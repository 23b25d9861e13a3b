/*
 * test_interrupt.c — unit tests of cancellation (src/nb_interrupt.h):
 * every long operation checks for interrupts often enough, and jumping out
 * at a check leaves its inputs intact.
 *
 *   ./test_interrupt         run every test
 *   ./test_interrupt WORD    run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "malloc_alloc.h"
#include "nb_alloc.h"
#include "nb_format.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_merge.h"
#include "nb_subtract.h"
#include "nb_mutual_info.h"
#include "nb_scorer.h"
#include "nb_tokenize.h"
#include "nb_trainer.h"
#include "unit.h"

/* ---------------------------------------------------------------- */
/* cancellation points (nb_interrupt.h)                              */

/*
 * Each long operation runs on inputs big enough for many checks: a row of
 * INT_ROW tokens over INT_VOCAB distinct ones, a model of three classes
 * (the third counted in the trainer's pair table) with 3 * INT_VOCAB
 * entries.  An operation is a function that does its whole work from
 * scratch, frees what it allocated, and returns a digest of its result; its
 * units are the work it does, in nb_interrupt.h's units.  Its inputs are
 * built beforehand (the fixture), so that the checks counted are its own: a
 * loop that lost its check shows even where other loops check too, since
 * each operation must make at least half the checks its units call for.
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
	unsigned char *toy_bytes;	/* the toy model (fixtures.h), for a grid of many option sets */
	NbView		toy_view;
	NbIndex		toy_index;
	unsigned char *twice_bytes; /* the model merged with itself, to subtract it from */
	NbView		twice_view;
	unsigned char *copy_src;	/* INT_COPY_BYTES to copy */
	unsigned char *dcm_bytes;	/* a model of INT_DCM_CLASSES classes (int_dcm_build) */
	NbView		dcm_view;
	NbIndex		dcm_index;
	char	   *text;			/* INT_TEXT_BYTES of words to tokenize (int_text_build) */
	char	   *blank;			/* INT_BLANK_BYTES of white space */
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

/* Room for the bytes nb_copy copies in one run: 16 MiB and a few. */
#define INT_COPY_BYTES (16 * 1024 * 1024 + 3)

/* The fixture's model merged with itself (its counts doubled), with malloc. */
static void
int_twice_build(void)
{
	NbView		views[2] = {ifx.view, ifx.view};
	NbMerger   *m = nb_merger_create(views, 2);
	size_t		size = nb_merger_size(m, SIZE_MAX);

	ifx.twice_bytes = malloc(size);
	if (!nb_merger_write(m, ifx.twice_bytes, size, &ifx.twice_view))
		abort();
	nb_merger_destroy(m);
}

/*
 * The DCM's preparation fits s per class: a model of many classes, each of
 * one document of one token, has few lengths but a fit per class.  Its
 * entries alone call for fewer than a third of the checks asked for.
 */
#define INT_DCM_CLASSES 35000

static void
int_dcm_build(void)
{
	NbTrainer  *t = nb_trainer_create();
	NbFormatError e;
	size_t		size;

	for (uint32_t c = 0; c < INT_DCM_CLASSES; c++)
	{
		char		label[16];
		NbTokenRef tok = {label, 0, 1.0};

		snprintf(label, sizeof(label), "c%06u", c);
		tok.len = (uint32_t) strlen(label);
		nb_trainer_begin_doc(t, label, tok.len, 1.0);
		if (!nb_trainer_add_text(t, &tok, 1))
			abort();
	}
	nb_trainer_end_doc(t);
	ifx.dcm_bytes = serialize(t, &size);
	nb_trainer_destroy(t);
	if (!nb_view_open(&ifx.dcm_view, ifx.dcm_bytes, size, &e))
		abort();
	nb_index_build(&ifx.dcm_index, &ifx.dcm_view);
}

/*
 * A text of INT_TEXT_WORDS words: "W012345 " in capitals, every 16th word
 * Greek with a sigma, so that lowercasing has work beyond ASCII.  A blank
 * text is a unit per 64 bytes only: it takes eight times the bytes.
 */
#define INT_TEXT_WORDS (128 * 1024)
#define INT_TEXT_BYTES ((size_t) INT_TEXT_WORDS * 8)
#define INT_BLANK_BYTES (8 * INT_TEXT_BYTES)

static void
int_text_build(void)
{
	ifx.text = malloc(INT_TEXT_BYTES);
	for (uint32_t k = 0; k < INT_TEXT_WORDS; k++)
	{
		char	   *w = ifx.text + (size_t) k * 8;

		if (k % 16 == 15)
			memcpy(w, "\xce\x9f\xce\x94\xce\xa3 ", 7);	/* ΟΔΣ, 7 bytes */
		else
			snprintf(w, 8, "W%06u", k % 1000000);
		w[7] = ' ';
	}
	ifx.blank = malloc(INT_BLANK_BYTES);
	memset(ifx.blank, ' ', INT_BLANK_BYTES);
}

static void
int_fixture_build(void)
{
	NbFormatError e;
	size_t		size;
	NbOptions	o = {.kind = NB_MULTINOMIAL, .alpha = 1.0, .prior_mode = NB_PRIOR_FIT, .class_prior = NULL,
		.var_smoothing = 1e-9};

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
	ifx.toy_bytes = serialize_rows(toy, NTOY, &size);
	if (!nb_view_open(&ifx.toy_view, ifx.toy_bytes, size, &e))
		abort();
	nb_index_build(&ifx.toy_index, &ifx.toy_view);
	int_twice_build();
	int_dcm_build();
	ifx.copy_src = malloc(INT_COPY_BYTES);
	for (size_t i = 0; i < INT_COPY_BYTES; i++)
		ifx.copy_src[i] = (unsigned char) (i * 131 >> 7);
	int_text_build();
}

static void
int_fixture_free(void)
{
	free(ifx.text);
	free(ifx.blank);
	nb_scorer_free(&ifx.scorer);
	nb_index_free(&ifx.index);
	nb_index_free(&ifx.toy_index);
	free(ifx.toy_bytes);
	free(ifx.twice_bytes);
	free(ifx.copy_src);
	nb_index_free(&ifx.dcm_index);
	free(ifx.dcm_bytes);
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
	nb_trainer_write_view(ifx.trainer, buf, size, NULL);
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

/* The fixture's model merged with itself, then itself subtracted: the fixture again. */
/* The subtraction alone: its input, the model doubled, is the fixture's. */
static uint64_t
int_op_flat_subtract(void)
{
	NbView		out;
	NbSubtractError err;
	NbPlan	   *s = nb_subtract_plan(&ifx.twice_view, &ifx.view, &err);
	size_t		size;
	unsigned char *result;
	uint64_t	d;

	if (s == NULL || s->C == 0)
		abort();
	size = nb_plan_size(s, SIZE_MAX);
	result = nb_alloc(size);
	nb_plan_write(s, result, size, &out);
	d = nb_hash_bytes(result, size, 4);
	nb_free(result);
	nb_plan_destroy(s);
	return d;
}

/* nb_copy alone, of a buffer made beforehand. */
static uint64_t
int_op_copy(void)
{
	unsigned char *dst = nb_alloc(INT_COPY_BYTES);
	uint64_t	d;

	nb_copy(dst, ifx.copy_src, INT_COPY_BYTES);
	d = memcmp(dst, ifx.copy_src, INT_COPY_BYTES) == 0 ? nb_hash_bytes(dst, 4096, 5) | 1 : 0;
	nb_free(dst);
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
	nb_trainer_write_view(t, buf, size, NULL);
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
	d = ix.token_start[ix.n_tokens] ^ (uint64_t) ix.item_offset[ix.n_tokens] << 32;
	nb_index_free(&ix);
	return d;
}

static uint64_t
int_op_scorer(NbKind kind)
{
	NbOptions	o = {.kind = kind, .alpha = 0.5, .prior_mode = NB_PRIOR_FIT, .class_prior = NULL,
		.var_smoothing = 1e-9};
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
	uint64_t	d = 5;

	/* field by field: the padding of NbMiRow is not part of the result */
	for (uint64_t r = 0; r < n; r++)
	{
		d = nb_hash_bytes(&rows[r].feature, sizeof(rows[r].feature), d);
		d = nb_hash_bytes(&rows[r].item, sizeof(rows[r].item), d);
		d = nb_hash_bytes(&rows[r].whole_feature, sizeof(rows[r].whole_feature), d);
		d = nb_hash_bytes(&rows[r].mi, sizeof(rows[r].mi), d);
	}

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

#define INT_HASH_BYTES (16 * 1024 * 1024 + 5)

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

/*
 * The scorers of a grid of INT_GRID option sets that differ in alpha, each
 * its own column, on the toy model: little work per scorer, but finding
 * the columns compares each option set with every column before it.
 */
#define INT_GRID 3000

static uint64_t
int_op_grid(void)
{
	NbOptions  *opts = nb_alloc(sizeof(NbOptions) * INT_GRID);
	NbScorer   *scorers = nb_alloc(sizeof(NbScorer) * INT_GRID);
	NbScorerSet set;
	uint64_t	d;

	for (uint32_t s = 0; s < INT_GRID; s++)
		opts[s] = (NbOptions) {.kind = NB_MULTINOMIAL, .alpha = 0.001 * (s + 1), .prior_mode = NB_PRIOR_FIT,
			.class_prior = NULL, .var_smoothing = 1e-9};
	nb_scorer_set_build(&set, &ifx.toy_index, scorers, opts, INT_GRID);
	d = (uint64_t) set.m << 32 | (uint64_t) set.n;
	for (uint32_t s = 0; s < INT_GRID; s++)
		nb_scorer_free(&scorers[s]);
	nb_scorer_set_free(&set);
	nb_free(scorers);
	nb_free(opts);
	return d;
}

static uint64_t
int_op_dcm(void)
{
	NbOptions	o = {.kind = NB_DCM, .alpha = NB_DCM_DEFAULT_ALPHA, .prior_mode = NB_PRIOR_FIT,
		.class_prior = NULL, .var_smoothing = 1e-9};
	NbScorer	sc;
	uint64_t	d;

	nb_scorer_build(&sc, &ifx.dcm_index, &o);
	d = nb_hash_bytes(sc.dcm_s, sizeof(double) * ifx.dcm_index.n_features * ifx.dcm_index.n_classes, 6);
	nb_scorer_free(&sc);
	return d;
}

/* A digest of the tokens: their number and bytes. */
static bool
int_token_sink(void *arg, const char *token, uint32_t len, bool stable)
{
	uint64_t   *d = arg;

	(void) stable;
	*d = nb_hash_bytes(token, len, *d + 1);
	return true;
}

static uint64_t
int_tokenize(const char *text, size_t len, NbAnalyzer analyzer, uint32_t ngram_max, bool lowercase)
{
	NbTokenizer t;
	uint64_t	d = 0;

	nb_tokenizer_init(&t);
	t.analyzer = analyzer;
	t.ngram_max = ngram_max;
	t.lowercase = lowercase;
	if (!nb_tokenize(&t, text, len, int_token_sink, &d))
		abort();
	return d | 1;
}

static uint64_t
int_op_tokenize_words(void)
{
	return int_tokenize(ifx.text, INT_TEXT_BYTES, NB_ANALYZER_WORD, 3, true);
}

static uint64_t
int_op_tokenize_chars(void)
{
	return int_tokenize(ifx.text, INT_TEXT_BYTES, NB_ANALYZER_CHAR, 4, true);
}

/* the text as it is, no token: the scan alone */
static uint64_t
int_op_tokenize_blank_words(void)
{
	return int_tokenize(ifx.blank, INT_BLANK_BYTES, NB_ANALYZER_WORD, 1, false);
}

/* one run of white space, made one space */
static uint64_t
int_op_tokenize_blank_chars(void)
{
	return int_tokenize(ifx.blank, INT_BLANK_BYTES, NB_ANALYZER_CHAR_WB, 1, false);
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
	{"subtract a model from its double", int_op_flat_subtract, 0},
	{"nb_copy", int_op_copy, 0},
	{"build the scorers of a grid of many option sets", int_op_grid, 0},
	{"prepare the DCM of a model of many classes", int_op_dcm, 0},
	{"tokenize a large text, word 1- to 3-grams", int_op_tokenize_words, 0},
	{"tokenize a large text, char 1- to 4-grams", int_op_tokenize_chars, 0},
	{"tokenize a large blank text, word", int_op_tokenize_blank_words, 0},
	{"tokenize a large blank text, char_wb", int_op_tokenize_blank_chars, 0},
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
	int_ops[14].units = 2 * E;
	int_ops[15].units = INT_COPY_BYTES / 64;
	int_ops[16].units = (uint64_t) INT_GRID * (INT_GRID - 1) / 2;
	/* an entry per class, and a fit of at least one step over one length */
	int_ops[17].units = ifx.dcm_view.n_entries + (uint64_t) INT_DCM_CLASSES * 2 * NB_DCM_STEP_UNITS;
	/* a unit per 64 bytes read per pass (lowercasing is one), and per token */
	int_ops[18].units = 4 * INT_TEXT_BYTES / 64 + 3 * (uint64_t) INT_TEXT_WORDS;
	int_ops[19].units = 2 * INT_TEXT_BYTES / 64 + 4 * (uint64_t) INT_TEXT_BYTES;
	int_ops[20].units = INT_BLANK_BYTES / 64;
	/* copied, then white space made one space */
	int_ops[21].units = 2 * INT_BLANK_BYTES / 64;
}

static void
test_interrupt_every_operation_checks(void)
{
	int_fixture_build();
	int_units();
	for (size_t i = 0; i < N_INT_OPS; i++)
	{
		long		before = nb_test_interrupts();
		uint64_t	want = int_ops[i].units / (2 * NB_INTERRUPT_EVERY);
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

/* ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("interrupts: every long operation checks once per NB_INTERRUPT_EVERY units or so",
		test_interrupt_every_operation_checks);
	run("interrupts: jumping out at a check, the inputs stay intact and the next run is the same",
		test_interrupt_jump_out);
	return unit_done();
}
