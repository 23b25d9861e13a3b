/*
 * test_merge.c — unit tests of merging serialized models (src/nb_merge.c).
 *
 *   ./test_merge                 run every test
 *   ./test_merge WORD            run the tests whose name contains WORD
 *
 * The reference is the trainer path the server used before nb_merge.c and
 * still uses when rows are added after a merge: every input merged in order
 * into an empty trainer (nb_trainer_merge_view), then nb_trainer_write_view.  The
 * merge must give the same bytes, the same conflicts and the same overflows.
 * Inputs are trained from random rows with every feature type, fractional
 * weights that do not add up exactly (so a different summation order would
 * show), in format versions 1 and 2.
 *
 * Output: see unit.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_alloc.h"
#include "model_check.h"
#include "nb_format.h"
#include "nb_merge.h"
#include "nb_trainer.h"
#include "raw_model.h"
#include "unit.h"

/* ---------------------------------------------------------------- */
/* random models                                                     */

/* How to draw one model's rows. */
typedef struct Spec
{
	int			rows;
	int			classes;		/* labels "c<off>".."c<off+classes-1>" */
	int			class_off;
	int			vocab;			/* tokens "t<off>".. of the bags */
	int			token_off;
	bool		text_only;		/* only text[] rows */
	bool		weights;		/* fractional weights instead of 1 */
	bool		huge;			/* weights near the top of double's range */
	int			vector_len;		/* float8[] rows of this length (0: none) */
	const char *conflict;		/* a feature also used with another type, or NULL */
	NbFeatureType conflict_type;
	bool		old;			/* written as version 1 or 2: lengths unknown */
} Spec;

static uint64_t
rnd(uint64_t *s, uint64_t n)
{
	return nbt_rand(s) % n;
}

static void
add_bag(NbTrainer *t, uint32_t feature, uint64_t *s, const Spec *sp, bool text)
{
	char		store[16][24];
	NbTokenRef	refs[16];
	uint32_t	n = (uint32_t) rnd(s, sp->huge ? 2 : 12);

	for (uint32_t i = 0; i < n; i++)
	{
		/* a skewed vocabulary: small token numbers are common */
		uint64_t	r = rnd(s, (uint64_t) sp->vocab);

		r = r * r / (uint64_t) sp->vocab;
		/* short, exactly 8 bytes, and longer items sharing their first 8 bytes */
		static const char *const forms[] = {"t%d", "commonpr%d", "commonpr", "comm%d"};

		refs[i].len = (uint32_t) snprintf(store[i], sizeof(store[i]), forms[r % 4],
										  (int) r + sp->token_off);
		refs[i].str = store[i];
		refs[i].count = sp->huge ? 1 : 1 + (double) rnd(s, 3);
	}
	if (text)
		(void) nb_trainer_add_text(t, refs, n);
	else
		nb_trainer_add_tokens(t, feature, refs, n);
}

static uint32_t
feature(NbTrainer *t, const char *name, NbFeatureType type)
{
	NbFeatureType existing;

	return (uint32_t) nb_trainer_feature(t, name, (uint32_t) strlen(name), type, &existing);
}

static unsigned char *
serialize(NbTrainer *t, size_t *size)
{
	unsigned char *buf;

	*size = nb_trainer_flat_size(t, SIZE_MAX);
	buf = malloc(*size);
	nb_trainer_write_view(t, buf, *size, NULL);
	return buf;
}

static unsigned char *
rand_model(uint64_t *s, const Spec *sp, size_t *size)
{
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;

	for (int r = 0; r < sp->rows; r++)
	{
		char		label[16];
		double		w = 1;
		uint32_t	len;

		len = (uint32_t) snprintf(label, sizeof(label), "c%d",
								  (int) rnd(s, (uint64_t) sp->classes) + sp->class_off);
		if (sp->huge)
			w = 0x1p1022 * (1 + (double) rnd(s, 3));
		else if (sp->weights)
			w = (double) (1 + rnd(s, 97)) / 7.3;
		nb_trainer_begin_doc(t, label, len, w);
		if (sp->text_only)
		{
			add_bag(t, 0, s, sp, true);
			continue;
		}
		if (rnd(s, 4) != 0)
			add_bag(t, 0, s, sp, true);
		if (rnd(s, 2) != 0)
			add_bag(t, feature(t, "words", NB_FEATURE_BAG), s, sp, false);
		if (rnd(s, 3) != 0 && !(sp->conflict != NULL && strcmp(sp->conflict, "colour") == 0))
		{
			char		v[8];

			snprintf(v, sizeof(v), "v%d", (int) rnd(s, 7));
			nb_trainer_add_category(t, feature(t, "colour", NB_FEATURE_CATEGORICAL),
									v, (uint32_t) strlen(v));
		}
		if (rnd(s, 3) != 0)
			nb_trainer_add_real(t, feature(t, "height", NB_FEATURE_GAUSSIAN),
								((double) rnd(s, 100000) - 30000) / 77.0);
		if (rnd(s, 3) != 0)
			nb_trainer_add_boolean(t, feature(t, "flag", NB_FEATURE_BOOLEAN), rnd(s, 2));
		if (sp->conflict != NULL && rnd(s, 2) != 0)
		{
			uint32_t	j = feature(t, sp->conflict, sp->conflict_type);

			if (sp->conflict_type == NB_FEATURE_GAUSSIAN)
				nb_trainer_add_real(t, j, 1.5);
			else
				nb_trainer_add_category(t, j, "x", 1);
		}
		if (sp->vector_len > 0)
		{
			uint32_t	bad;
			const uint32_t *ids = nb_trainer_vector(t, (uint32_t) sp->vector_len, &bad);

			for (int i = 0; i < sp->vector_len; i++)
				if (rnd(s, 5) != 0)
					nb_trainer_add_real(t, ids[i], (double) rnd(s, 1000) / 3.0 - i);
		}
	}
	buf = serialize(t, size);
	nb_trainer_destroy(t);
	if (sp->old)
	{
		/* as written before format version 3: 2, or 1 if it is text only */
		RawModel	m;
		NbView		v;
		NbFormatError e;

		if (!raw_parse(&m, buf, *size))
			abort();
		free(buf);
		raw_set_version(&m, NB_FORMAT_VERSION_FEATURES);
		buf = raw_serialize(&m, size);
		if (!nb_view_open(&v, buf, *size, &e))
		{
			free(buf);
			raw_set_version(&m, NB_FORMAT_VERSION_TEXT);
			buf = raw_serialize(&m, size);
		}
		raw_free(&m);
	}
	return buf;
}

/*
 * A random spec: classes and vocabularies overlap or not; format version 3,
 * or (old) 1 and 2, which know no document lengths.
 */
static Spec
rand_spec(uint64_t *s)
{
	Spec		sp = {0};

	sp.rows = 1 + (int) rnd(s, 60);
	sp.classes = 1 + (int) rnd(s, 6);
	sp.class_off = (int) rnd(s, 4) * 2;
	sp.vocab = 1 + (int) rnd(s, 80);
	sp.token_off = (int) rnd(s, 3) * 40;
	sp.text_only = rnd(s, 3) == 0;
	sp.weights = rnd(s, 2) == 0;
	sp.vector_len = !sp.text_only && rnd(s, 4) == 0 ? 3 : 0;
	sp.old = rnd(s, 4) == 0;
	return sp;
}

/* ---------------------------------------------------------------- */
/* the comparison with the trainer path                               */

typedef struct Outcome
{
	NbMergeStatus status;
	uint32_t	input;			/* the conflicting input */
	uint32_t	feature;
	NbFeatureType earlier_type;
	uint32_t	earlier_vector_len;
	bool		overflow;
	unsigned char *bytes;
	size_t		size;
} Outcome;

static void
trainer_path(const NbView *v, uint32_t n, Outcome *o)
{
	NbTrainer  *t = nb_trainer_create();

	memset(o, 0, sizeof(*o));
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	j;

		o->status = nb_trainer_merge_view(t, &v[i], &j);
		if (o->status != NB_MERGE_OK)
		{
			o->input = i;
			o->earlier_vector_len = t->vector_len;
			if (o->status == NB_MERGE_TYPE_CONFLICT)
			{
				size_t		off = 0;
				NbFeatureType theirs = nb_view_feature_type(&v[i], j);

				for (uint32_t x = 0; x < j; x++)
					off += nb_view_feature_name_len(&v[i], x);
				o->feature = j;
				o->earlier_type = theirs;
				(void) nb_trainer_feature(t, v[i].feature_names + off,
										  nb_view_feature_name_len(&v[i], j), theirs,
										  &o->earlier_type);
			}
			nb_trainer_destroy(t);
			return;
		}
	}
	o->overflow = t->overflow || !nb_trainer_sums_finite(t);
	if (!o->overflow)
		o->bytes = serialize(t, &o->size);
	nb_trainer_destroy(t);
}

static void
merge_path(const NbView *v, uint32_t n, Outcome *o, NbView *out)
{
	NbMerger   *m;

	memset(o, 0, sizeof(*o));
	for (uint32_t i = 1; i < n; i++)
	{
		NbMergeConflict c;

		o->status = nb_merge_check(v, i, &v[i], &c);
		if (o->status != NB_MERGE_OK)
		{
			o->input = i;
			o->earlier_vector_len = c.earlier_vector_len;
			if (o->status == NB_MERGE_TYPE_CONFLICT)
			{
				o->feature = c.feature;
				o->earlier_type = c.earlier_type;
			}
			return;
		}
	}
	m = nb_merger_create(v, n);
	o->size = nb_merger_size(m, SIZE_MAX);
	o->bytes = malloc(o->size);
	o->overflow = !nb_merger_write(m, o->bytes, o->size, out);
	nb_merger_destroy(m);
	if (o->overflow)
	{
		free(o->bytes);
		o->bytes = NULL;
	}
}

static const char *
status_name(NbMergeStatus s)
{
	switch (s)
	{
		case NB_MERGE_OK:
			return "ok";
		case NB_MERGE_TYPE_CONFLICT:
			return "type conflict";
		case NB_MERGE_VECTOR_CONFLICT:
			return "vector conflict";
		case NB_MERGE_INPUT_CONFLICT:
			return "unrelated kinds of rows";
		case NB_MERGE_TOKENIZER_CONFLICT:
			return "tokenizer conflict";
		case NB_MERGE_OPTIONS_CONFLICT:
			return "options conflict";
		default:
			return "too large";
	}
}

/*
 * Merge the n models both ways and compare; on success *merged (if not
 * NULL) gets the merged bytes (malloc'd) and its size.  Returns false after
 * recording a failure.
 */
static bool
same_as_trainer(unsigned char **bufs, const size_t *sizes, uint32_t n,
				unsigned char **merged, size_t *merged_size, NbMergeStatus *status)
{
	NbView	   *v = calloc(n, sizeof(NbView));
	Outcome		want;
	Outcome		got;
	NbView		out;
	NbView		reopened;
	NbFormatError err;
	bool		ok = false;

	memset(&got, 0, sizeof(got));
	memset(&want, 0, sizeof(want));
	for (uint32_t i = 0; i < n; i++)
		CHECK_OR_DONE(nb_view_open(&v[i], bufs[i], sizes[i], &err), "input %u invalid: %s", i, err.message);
	trainer_path(v, n, &want);
	merge_path(v, n, &got, &out);
	if (status != NULL)
		*status = want.status;
	CHECK_OR_DONE(got.status == want.status, "status %s, trainer %s",
		  status_name(got.status), status_name(want.status));
	if (want.status != NB_MERGE_OK)
	{
		CHECK_OR_DONE(got.input == want.input, "conflict at input %u, trainer %u", got.input, want.input);
		CHECK_OR_DONE(got.earlier_vector_len == want.earlier_vector_len,
			  "earlier vector length %u, trainer %u", got.earlier_vector_len,
			  want.earlier_vector_len);
		if (want.status == NB_MERGE_TYPE_CONFLICT)
			CHECK_OR_DONE(got.feature == want.feature && got.earlier_type == want.earlier_type,
				  "conflict feature %u type %d, trainer %u type %d", got.feature,
				  (int) got.earlier_type, want.feature, (int) want.earlier_type);
		ok = true;
		goto done;
	}
	CHECK_OR_DONE(got.overflow == want.overflow, "overflow %d, trainer %d", got.overflow, want.overflow);
	if (want.overflow)
	{
		ok = true;
		goto done;
	}
	CHECK_OR_DONE(got.size == want.size, "%zu bytes, trainer %zu", got.size, want.size);
	for (size_t b = 0; b < got.size; b++)
		CHECK_OR_DONE(got.bytes[b] == want.bytes[b], "byte %zu of %zu differs (%02x, trainer %02x)",
			  b, got.size, got.bytes[b], want.bytes[b]);
	CHECK_OR_DONE(nb_view_open(&reopened, got.bytes, got.size, &err), "result invalid: %s", err.message);
	/* a version 1 view's feature_names is some empty string */
	if (out.version == NB_FORMAT_VERSION_TEXT)
		CHECK_OR_DONE(out.feature_names[0] == '\0', "version 1 feature names not empty");
	out.feature_names = reopened.feature_names;
	CHECK_OR_DONE(memcmp(&reopened, &out, sizeof(NbView)) == 0,
		  "the merge's view of its result differs from nb_view_open's");
	if (merged != NULL)
	{
		*merged = got.bytes;
		*merged_size = got.size;
		got.bytes = NULL;
	}
	ok = true;
done:
	free(v);
	free(want.bytes);
	free(got.bytes);
	return ok;
}

static void
free_all(unsigned char **bufs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(bufs[i]);
}

/* ---------------------------------------------------------------- */
/* tests                                                             */

/* Two models: every pair of specs, both ways, and each one alone. */
static void
test_pairs(void)
{
	uint64_t	s = 1;

	for (int round = 0; round < 200; round++)
	{
		Spec		a = rand_spec(&s);
		Spec		b = rand_spec(&s);
		unsigned char *bufs[2];
		size_t		sizes[2];
		unsigned char *rev[2];
		size_t		rsizes[2];

		bufs[0] = rand_model(&s, &a, &sizes[0]);
		bufs[1] = rand_model(&s, &b, &sizes[1]);
		rev[0] = bufs[1];
		rev[1] = bufs[0];
		rsizes[0] = sizes[1];
		rsizes[1] = sizes[0];
		if (!same_as_trainer(bufs, sizes, 2, NULL, NULL, NULL) ||
			!same_as_trainer(rev, rsizes, 2, NULL, NULL, NULL) ||
			!same_as_trainer(bufs, sizes, 1, NULL, NULL, NULL))
			fail_append(" (round %d)", round);
		free_all(bufs, 2);
		if (unit_failed())
			return;
	}
}

/* Up to 16 models at once, in random orders (a fuzz-like loop). */
static void
test_many(void)
{
	uint64_t	s = 2;

	for (int round = 0; round < 120; round++)
	{
		uint32_t	n = 1 + (uint32_t) rnd(&s, round % 4 == 0 ? 16 : 6);
		unsigned char *bufs[16];
		size_t		sizes[16];
		Spec		base = rand_spec(&s);

		for (uint32_t i = 0; i < n; i++)
		{
			Spec		sp = rnd(&s, 2) ? base : rand_spec(&s);

			sp.class_off = (int) rnd(&s, 4);
			sp.token_off = (int) rnd(&s, 3) * 20;
			bufs[i] = rand_model(&s, &sp, &sizes[i]);
		}
		if (!same_as_trainer(bufs, sizes, n, NULL, NULL, NULL))
			fail_append(" (round %d)", round);
		free_all(bufs, n);
		if (unit_failed())
			return;
	}
}

/*
 * Merging in steps (16 inputs, then the result with the next ones: what
 * the aggregate does) gives the bytes of merging all at once.
 */
static void
test_steps(void)
{
	uint64_t	s = 3;
	unsigned char *bufs[24];
	size_t		sizes[24];
	unsigned char *step[9];
	size_t		step_sizes[9];
	unsigned char *first = NULL;
	unsigned char *all = NULL;
	size_t		first_size;
	size_t		all_size;
	Spec		sp = rand_spec(&s);

	sp.text_only = false;
	sp.weights = true;
	sp.vector_len = 2;
	for (int i = 0; i < 24; i++)
	{
		sp.class_off = (int) rnd(&s, 5);
		bufs[i] = rand_model(&s, &sp, &sizes[i]);
	}
	if (!same_as_trainer(bufs, sizes, 16, &first, &first_size, NULL))
		goto done;			/* same_as_trainer recorded the failure */
	step[0] = first;
	step_sizes[0] = first_size;
	for (int i = 0; i < 8; i++)
	{
		step[i + 1] = bufs[16 + i];
		step_sizes[i + 1] = sizes[16 + i];
	}
	if (!same_as_trainer(step, step_sizes, 9, &all, &all_size, NULL))
		goto done;			/* same_as_trainer recorded the failure */
	{
		unsigned char *once = NULL;
		size_t		once_size;

		if (!same_as_trainer(bufs, sizes, 24, &once, &once_size, NULL))
			goto done;			/* same_as_trainer recorded the failure */
		CHECK_OR_DONE(once_size == all_size && memcmp(once, all, all_size) == 0,
			  "merging in steps differs from merging at once");
		free(once);
	}
done:
	free(first);
	free(all);
	free_all(bufs, 24);
}

/* Type and vector-length conflicts: found at the same input and feature. */
static void
test_conflicts(void)
{
	uint64_t	s = 4;
	int			found[3] = {0, 0, 0};

	for (int round = 0; round < 150; round++)
	{
		uint32_t	n = 2 + (uint32_t) rnd(&s, 5);
		unsigned char *bufs[8];
		size_t		sizes[8];
		NbMergeStatus status = NB_MERGE_OK;

		for (uint32_t i = 0; i < n; i++)
		{
			Spec		sp = rand_spec(&s);

			sp.text_only = false;
			sp.rows = 5 + (int) rnd(&s, 20);
			if (rnd(&s, 3) == 0)
			{
				sp.conflict = rnd(&s, 2) ? "colour" : "z";
				sp.conflict_type = sp.conflict[0] == 'z' && rnd(&s, 2) ?
					NB_FEATURE_CATEGORICAL : NB_FEATURE_GAUSSIAN;
			}
			sp.vector_len = rnd(&s, 3) == 0 ? 2 + (int) rnd(&s, 2) : 0;
			bufs[i] = rand_model(&s, &sp, &sizes[i]);
		}
		if (!same_as_trainer(bufs, sizes, n, NULL, NULL, &status))
			fail_append(" (round %d)", round);
		found[status]++;
		free_all(bufs, n);
		if (unit_failed())
			return;
	}
	CHECK_OR_DONE(found[NB_MERGE_TYPE_CONFLICT] > 10 && found[NB_MERGE_VECTOR_CONFLICT] > 10 &&
		  found[NB_MERGE_OK] > 10, "too few cases: %d ok, %d type, %d vector conflicts",
		  found[0], found[1], found[2]);
done:
	;
}

/* Counts near the top of double's range: overflow exactly when the trainer's does. */
static void
test_overflow(void)
{
	uint64_t	s = 5;
	int			overflows = 0;

	for (int round = 0; round < 60; round++)
	{
		Spec		sp = rand_spec(&s);
		unsigned char *bufs[2];
		size_t		sizes[2];
		NbView		v[2];
		NbFormatError err;

		sp.huge = true;
		sp.text_only = rnd(&s, 2) == 0;
		sp.vector_len = 0;
		sp.rows = 1;
		sp.classes = 1 + (int) rnd(&s, 2);
		sp.vocab = 3;
		bufs[0] = rand_model(&s, &sp, &sizes[0]);
		bufs[1] = rand_model(&s, &sp, &sizes[1]);
		/* only valid inputs can be merged: skip the draws that already overflow */
		if (nb_view_open(&v[0], bufs[0], sizes[0], &err) &&
			nb_view_open(&v[1], bufs[1], sizes[1], &err))
		{
			Outcome		o;

			trainer_path(v, 2, &o);
			overflows += o.overflow;
			free(o.bytes);
			if (!same_as_trainer(bufs, sizes, 2, NULL, NULL, NULL))
				fail_append(" (round %d)", round);
		}
		free_all(bufs, 2);
		if (unit_failed())
			return;
	}
	CHECK_OR_DONE(overflows > 5, "only %d overflows drawn", overflows);
done:
	;
}

/* Merging one model gives it back; merging it with itself doubles it. */
static void
test_identity(void)
{
	uint64_t	s = 6;

	for (int round = 0; round < 50; round++)
	{
		Spec		sp = rand_spec(&s);
		size_t		size;
		unsigned char *buf = rand_model(&s, &sp, &size);
		unsigned char *twice[2] = {buf, buf};
		size_t		sizes[2] = {size, size};
		unsigned char *merged = NULL;
		size_t		merged_size;

		if (same_as_trainer(&buf, &size, 1, &merged, &merged_size, NULL))
		{
			if (merged_size != size || memcmp(merged, buf, size) != 0)
				fail_at(__LINE__, "one model merged alone changed (round %d)", round);
			else
				(void) same_as_trainer(twice, sizes, 2, NULL, NULL, NULL);
		}
		free(merged);
		free(buf);
		if (unit_failed())
			return;
	}
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("merge two models both ways, as the trainer does", test_pairs);
	run("merge up to 16 models at once, as the trainer does", test_many);
	run("merge in steps: same bytes as at once", test_steps);
	run("merge conflicts: same input, feature and types as the trainer", test_conflicts);
	run("merge overflow: exactly when the trainer overflows", test_overflow);
	run("merge one model: unchanged; with itself: as the trainer", test_identity);
	return unit_done();
}
