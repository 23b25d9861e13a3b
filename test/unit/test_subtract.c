/*
 * test_subtract.c — unit tests of subtracting serialized models
 * (src/nb_subtract.c).
 *
 *   ./test_subtract              run every test
 *   ./test_subtract WORD         run the tests whose name contains WORD
 *
 * The reference is merging (src/nb_merge.c, itself tested against the
 * trainer): a model merged with another and the other subtracted again
 * must be the model, byte for byte when the arithmetic is exact (dyadic
 * weights and values), within 1e-12 relative otherwise; folds of one set of
 * rows taken out of the merge of all must be the merge of the others.
 * Every result must pass nb_view_open.  Inputs come from random rows with
 * every feature type (fixtures.c), in format versions 1 and 2, and from
 * models built field by field (raw_model.c) for the tolerance.
 *
 * Output: see unit.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "malloc_alloc.h"
#include "model_check.h"
#include "nb_format.h"
#include "nb_merge.h"
#include "nb_subtract.h"
#include "raw_model.h"
#include "unit.h"

/* A model: malloc'd bytes, NULL for the empty model. */
typedef struct Model
{
	unsigned char *bytes;
	size_t		size;
} Model;

static void
model_free(Model *m)
{
	free(m->bytes);
	m->bytes = NULL;
}

static bool
open_model(const Model *m, NbView *v)
{
	NbFormatError err;

	if (!nb_view_open(v, m->bytes, m->size, &err))
	{
		fail_at(__LINE__, "invalid model: %s", err.message);
		return false;
	}
	return true;
}

static Model
merge(const Model *a, const Model *b)
{
	NbView		v[2];
	NbView		out;
	Model		r = {NULL, 0};
	NbMerger   *m;

	if (!open_model(a, &v[0]) || !open_model(b, &v[1]))
		return r;
	m = nb_merger_create(v, 2);
	r.size = nb_merger_size(m, SIZE_MAX);
	r.bytes = malloc(r.size);
	if (!nb_merger_write(m, r.bytes, r.size, &out))
		fail_at(__LINE__, "merge overflowed");
	nb_merger_destroy(m);
	return r;
}

/*
 * a - b.  *err gets the refusal (status NB_SUBTRACT_OK otherwise); the
 * result, if any, must be valid and described by the subtraction as
 * nb_view_open describes it.
 */
static Model
subtract(const Model *a, const Model *b, NbSubtractError *err)
{
	NbView		va;
	NbView		vb;
	NbView		out;
	NbView		reopened;
	NbFormatError ferr;
	Model		r = {NULL, 0};
	NbPlan	   *s;

	memset(err, 0, sizeof(*err));
	if (!open_model(a, &va) || !open_model(b, &vb))
		return r;
	s = nb_subtract_plan(&va, &vb, err);
	if (s == NULL)
	{
		if (err->status == NB_SUBTRACT_OK)
			fail_at(__LINE__, "refused without a reason");
		return r;
	}
	if (err->status != NB_SUBTRACT_OK)
		fail_at(__LINE__, "a reason (%d) without a refusal", (int) err->status);
	if (s->C == 0)
	{
		nb_plan_destroy(s);
		return r;
	}
	r.size = nb_plan_size(s, SIZE_MAX);
	r.bytes = malloc(r.size);
	nb_plan_write(s, r.bytes, r.size, &out);
	nb_plan_destroy(s);
	if (!nb_view_open(&reopened, r.bytes, r.size, &ferr))
		fail_at(__LINE__, "the result is not a valid model: %s", ferr.message);
	else
	{
		/* a version 1 view's feature_names is some empty string */
		out.feature_names = reopened.feature_names;
		if (memcmp(&reopened, &out, sizeof(NbView)) != 0)
			fail_at(__LINE__, "the subtraction's view of its result differs from nb_view_open's");
	}
	return r;
}

/* Subtract, expecting success. */
static Model
subtract_ok(const Model *a, const Model *b)
{
	NbSubtractError err;
	Model		r = subtract(a, b, &err);

	if (err.status != NB_SUBTRACT_OK)
		fail_at(__LINE__, "refused: status %d", (int) err.status);
	return r;
}

static bool
same(const Model *x, const Model *y)
{
	return x->size == y->size && (x->size == 0 || memcmp(x->bytes, y->bytes, x->size) == 0);
}

static bool
close_to(double x, double y, double rel)
{
	return x == y || fabs(x - y) <= rel * fmax(fabs(x), fabs(y));
}

/* The f64 arrays of a view: where they start and how many numbers. */
static int
f64_arrays(const NbView *v, const unsigned char **at, uint64_t *n)
{
	uint64_t	fc = (uint64_t) v->n_features * v->n_classes;
	int			k = 0;

	at[k] = v->class_docs, n[k++] = v->n_classes;
	at[k] = v->entry_count, n[k++] = v->n_entries;
	at[k] = v->entry_docs, n[k++] = v->n_entries;
	if (v->version == NB_FORMAT_VERSION)
	{
		at[k] = v->feature_present, n[k++] = fc;
		at[k] = v->feature_a, n[k++] = fc;
		at[k] = v->feature_b, n[k++] = fc;
		at[k] = v->feature_rows, n[k++] = v->n_features;
		at[k] = v->feature_mean, n[k++] = v->n_features;
		at[k] = v->feature_m2, n[k++] = v->n_features;
	}
	return k;
}

/* Index of the string (str, len) among n strings of an area, or -1. */
static int64_t
find_string(NbStringIter it, const char *str, uint32_t len)
{
	const char *s;
	uint32_t	l;

	for (int64_t i = 0; nb_string_next(&it, &s, &l); i++)
		if (l == len && memcmp(s, str, len) == 0)
			return i;
	return -1;
}

/*
 * The magnitude that number j of f64 array i of v (see f64_arrays) came
 * from: the same statistic in the minuend m (found by feature name and
 * class label), for the Gaussian statistics, whose rounding error is
 * relative to it; 0 for counts.
 */
static double
minuend_scale(const NbView *m, const NbView *v, int i, uint64_t j)
{
	uint32_t	f = (uint32_t) (i <= 5 ? j / v->n_classes : j);
	uint32_t	c = (uint32_t) (j % v->n_classes);
	uint32_t	len;
	const char *name;
	int64_t		mf;
	int64_t		mc;
	const char *label = v->labels;
	NbStringIter it = nb_view_labels(v);

	if (i < 4 || m == NULL)
		return 0;
	name = nb_view_feature_name(v, f, &len);
	mf = find_string(nb_view_feature_names(m), name, len);
	for (uint32_t k = 0; k <= c && nb_string_next(&it, &label, &len); k++)
		;
	mc = find_string(nb_view_labels(m), label, len);
	if (mf < 0 || mc < 0)
		return 0;
	switch (i)
	{
		case 4:
			return fabs(nb_view_a(m, (uint32_t) mf, (uint32_t) mc));
		case 5:
			return fabs(nb_view_b(m, (uint32_t) mf, (uint32_t) mc));
		case 7:
			return fabs(nb_read_f64(m->feature_mean, (uint64_t) mf));
		case 8:
			return fabs(nb_read_f64(m->feature_m2, (uint64_t) mf));
		default:
			return 0;
	}
}

/*
 * x and y the same model but for numbers within rel relative: the same
 * size and layout, every number close, every other byte (but the
 * checksum) equal.  Gaussian means and sums of squares are compared
 * relative to the same statistic of minuend (if not NULL), the model x
 * was subtracted from: cancellation makes their error relative to that.
 */
static bool
near(const Model *x, const Model *y, double rel, const Model *minuend)
{
	NbView		vx;
	NbView		vy;
	NbView		vm;
	const unsigned char *ax[9];
	const unsigned char *ay[9];
	uint64_t	nx[9];
	uint64_t	ny[9];
	unsigned char *copy;
	bool		ok = true;
	int			k;

	if (x->bytes == NULL || y->bytes == NULL)
		return x->bytes == y->bytes;
	if (x->size != y->size || !open_model(x, &vx) || !open_model(y, &vy) ||
		(minuend != NULL && !open_model(minuend, &vm)))
		return false;
	k = f64_arrays(&vx, ax, nx);
	if (f64_arrays(&vy, ay, ny) != k)
		return false;
	copy = malloc(y->size);
	memcpy(copy, y->bytes, y->size);
	for (int i = 0; i < k && ok; i++)
	{
		ok = nx[i] == ny[i] && ax[i] - x->bytes == ay[i] - y->bytes;
		for (uint64_t j = 0; ok && j < nx[i]; j++)
		{
			double		p = nb_read_f64(ax[i], j);
			double		q = nb_read_f64(ay[i], j);

			ok = close_to(p, q, rel) ||
				fabs(p - q) <= rel * minuend_scale(minuend ? &vm : NULL, &vx, i, j);
			memcpy(copy + (ay[i] - y->bytes) + j * 8, ax[i] + j * 8, 8);
		}
	}
	memcpy(copy + 24, x->bytes + 24, 8);
	ok = ok && memcmp(copy, x->bytes, x->size) == 0;
	free(copy);
	return ok;
}

/* ---------------------------------------------------------------- */
/* random models                                                     */

#define MAX_ROWS 120

/* The model of rows[first .. first + n - 1] (n > 0). */
static Model
model_of(const RandMix *rows, int first, int n)
{
	int			order[MAX_ROWS];
	Model		m;

	for (int i = 0; i < n; i++)
		order[i] = first + i;
	m.bytes = serialize_rand_mix(rows, order, n, &m.size);
	return m;
}

/* nb_subtract(nb_merge(a, b), b) = a, (b, a) too, and nb_subtract(nb_merge(a, b), a) = b. */
static void
check_identity(const Model *a, const Model *b, double rel, int round)
{
	Model		ab = merge(a, b);
	Model		ba = merge(b, a);
	Model		r1 = subtract_ok(&ab, b);
	Model		r2 = subtract_ok(&ba, b);
	Model		r3 = subtract_ok(&ab, a);

	if (!unit_failed())
	{
		if (rel == 0 ? !same(&r1, a) : !near(&r1, a, rel, &ab))
			fail_at(__LINE__, "merge(a, b) - b is not a (round %d)", round);
		else if (rel == 0 ? !same(&r2, a) : !near(&r2, a, rel, &ba))
			fail_at(__LINE__, "merge(b, a) - b is not a (round %d)", round);
		else if (rel == 0 ? !same(&r3, b) : !near(&r3, b, rel, &ab))
			fail_at(__LINE__, "merge(a, b) - a is not b (round %d)", round);
	}
	model_free(&ab);
	model_free(&ba);
	model_free(&r1);
	model_free(&r2);
	model_free(&r3);
}

/*
 * Random splits of random rows with every feature type: exact with dyadic
 * weights and Gaussian values, within 1e-12 with arbitrary values.
 */
static void
identity_rounds(bool dyadic, double rel, uint64_t seed)
{
	static RandMix rows[MAX_ROWS];

	for (int round = 0; round < 150 && !unit_failed(); round++)
	{
		int			n = 2 + (int) (nbt_rand(&seed) % (MAX_ROWS - 1));
		int			k = 1 + (int) (nbt_rand(&seed) % (uint64_t) (n - 1));
		Model		a;
		Model		b;

		rand_mix(rows, n, 1 + (int) (nbt_rand(&seed) % 5), seed, dyadic);
		a = model_of(rows, 0, k);
		b = model_of(rows, k, n - k);
		check_identity(&a, &b, rel, round);
		model_free(&a);
		model_free(&b);
	}
}

static void
test_identity_exact(void)
{
	identity_rounds(true, 0, 11);
}

static void
test_identity_real(void)
{
	identity_rounds(false, 1e-12, 12);
}

/* The model rewritten as an earlier format version (raw_set_version). */
static void
as_version(Model *m, uint16_t version)
{
	RawModel	r;

	raw_init(&r);
	if (!raw_parse(&r, m->bytes, m->size))
		fail_at(__LINE__, "raw_parse refused a model");
	raw_set_version(&r, version);
	free(m->bytes);
	m->bytes = raw_serialize(&r, &m->size);
	raw_free(&r);
}

static void
as_version_1(Model *m)
{
	as_version(m, NB_FORMAT_VERSION_TEXT);
}

static void
as_version_2(Model *m)
{
	as_version(m, NB_FORMAT_VERSION_FEATURES);
}

/* Text-only models (formats version 3 and 1), unweighted and weighted. */
static void
test_identity_text(void)
{
	static RandRow rows[MAX_ROWS];
	uint64_t	seed = 13;

	for (int round = 0; round < 100 && !unit_failed(); round++)
	{
		int			n = 2 + (int) (nbt_rand(&seed) % (MAX_ROWS - 1));
		int			k = 1 + (int) (nbt_rand(&seed) % (uint64_t) (n - 1));
		int			order[MAX_ROWS];
		Model		a;
		Model		b;
		NbView		v;

		rand_rows(rows, n, 1 + (int) (nbt_rand(&seed) % 4), 40, seed, round % 3 == 0);
		for (int i = 0; i < n; i++)
			order[i] = i;
		a.bytes = serialize_rand(rows, order, k, &a.size);
		b.bytes = serialize_rand(rows, order + k, n - k, &b.size);
		/* every other round as version 1, which has no document lengths */
		if (round % 2 == 1)
		{
			as_version_1(&a);
			as_version_1(&b);
		}
		if (open_model(&a, &v) && (v.n_features != 1 || nb_view_feature_name_len(&v, 0) != 0 ||
								   v.version != (round % 2 == 1 ? NB_FORMAT_VERSION_TEXT :
												 NB_FORMAT_VERSION)))
			fail_at(__LINE__, "not a model of the bag \"\" alone in version %d", round % 2 == 1 ? 1 : 3);
		check_identity(&a, &b, round % 4 < 2 ? 0 : 1e-12, round);
		model_free(&a);
		model_free(&b);
	}
}

/*
 * Folds of one set of rows: the merge of all without fold k is the merge
 * of the others, and taking every fold away leaves nothing.
 */
static void
test_folds(void)
{
	static RandMix rows[MAX_ROWS];
	uint64_t	seed = 14;

	for (int round = 0; round < 40 && !unit_failed(); round++)
	{
		bool		dyadic = round % 2 == 0;
		Model		fold[4];
		Model		whole;
		Model		left;

		rand_mix(rows, MAX_ROWS, 1 + round % 4, seed + (uint64_t) round, dyadic);
		for (int f = 0; f < 4; f++)
			fold[f] = model_of(rows, f * (MAX_ROWS / 4), MAX_ROWS / 4);
		whole = merge(&fold[0], &fold[1]);
		for (int f = 2; f < 4; f++)
		{
			Model		w = merge(&whole, &fold[f]);

			model_free(&whole);
			whole = w;
		}
		for (int k = 0; k < 4 && !unit_failed(); k++)
		{
			Model		out = subtract_ok(&whole, &fold[k]);
			Model		others = {NULL, 0};

			for (int f = 0; f < 4; f++)
			{
				Model		m;

				if (f == k)
					continue;
				if (others.bytes == NULL)
				{
					others.bytes = malloc(fold[f].size);
					memcpy(others.bytes, fold[f].bytes, fold[f].size);
					others.size = fold[f].size;
					continue;
				}
				m = merge(&others, &fold[f]);
				model_free(&others);
				others = m;
			}
			if (!unit_failed() && !near(&out, &others, dyadic ? 0 : 1e-12, &whole))
				fail_at(__LINE__, "the whole without fold %d is not the other folds (round %d)",
						k, round);
			model_free(&out);
			model_free(&others);
		}
		left = whole;
		for (int f = 0; f < 4 && left.bytes != NULL && !unit_failed(); f++)
		{
			Model		m = subtract_ok(&left, &fold[f]);

			if (f < 3 && m.bytes == NULL)
				fail_at(__LINE__, "nothing left after %d folds", f + 1);
			if (f == 3 && m.bytes != NULL)
				fail_at(__LINE__, "something is left after every fold (round %d)", round);
			if (left.bytes != whole.bytes)
				model_free(&left);
			left = m;
		}
		model_free(&left);
		model_free(&whole);
		for (int f = 0; f < 4; f++)
			model_free(&fold[f]);
	}
}

/* ---------------------------------------------------------------- */
/* the tolerance                                                     */

/* A text-only model of one class "a": docs documents, token "x" in xdocs of them (count xcount). */
static Model
one_class(double docs, double xcount, double xdocs)
{
	RawModel	r;
	Model		m;
	uint32_t	c;
	uint32_t	t;

	raw_init(&r);
	c = raw_add_class(&r, "a", 1, docs);
	if (xdocs > 0)
	{
		t = raw_add_token(&r, "x", 1);
		raw_add_entry(&r, t, c, xcount, xdocs);
	}
	m.bytes = raw_serialize(&r, &m.size);
	raw_free(&r);
	return m;
}

static void
expect(const Model *a, const Model *b, NbSubtractStatus status, const char *what)
{
	NbSubtractError err;
	Model		r = subtract(a, b, &err);

	if (!unit_failed() && err.status != status)
		fail_at(__LINE__, "%s: status %d, expected %d", what, (int) err.status, (int) status);
	model_free(&r);
}

static void
test_tolerance(void)
{
	const double tol = NB_SUBTRACT_TOLERANCE;
	Model		a = one_class(1, 1, 1);
	Model		b;
	Model		r;
	NbView		v;

	/* within the tolerance of the minuend: zero, either way */
	b = one_class(1 + 0.5 * tol, 1, 1);
	r = subtract_ok(&a, &b);
	CHECK(r.bytes == NULL, "a difference of half the tolerance is not zero");
	model_free(&b);
	b = one_class(1 - 0.5 * tol, 1 - 0.5 * tol, 1 - 0.5 * tol);
	r = subtract_ok(&a, &b);
	CHECK(r.bytes == NULL, "a remainder of half the tolerance is not zero");
	model_free(&b);

	/* beyond it: a count left, or a negative count refused */
	b = one_class(1 - 2 * tol, 1 - 2 * tol, 1 - 2 * tol);
	r = subtract_ok(&a, &b);
	CHECK(r.bytes != NULL && open_model(&r, &v), "a remainder of twice the tolerance vanished");
	CHECK_NEAR(nb_read_f64(v.class_docs, 0), 2 * tol, 1e-6 * tol, "documents left");
	CHECK_NEAR(nb_read_f64(v.entry_docs, 0), 2 * tol, 1e-6 * tol, "token documents left");
	model_free(&r);
	model_free(&b);
	b = one_class(1 + 2 * tol, 1, 1);
	expect(&a, &b, NB_SUBTRACT_NEGATIVE, "twice the tolerance too many documents");
	model_free(&b);
	model_free(&a);

	/*
	 * A token in every document: rounding may leave its documents a little
	 * above the class's.  0.7 + 0.3 = 1 exactly, but 1 - 0.3 is
	 * 0.7000000000000001 and 1 - 0.30000000000000004 is 0.7 (one unit in
	 * the last place apart).
	 */
	a = one_class(1, 2, 1);
	b = one_class(0.30000000000000004, 0.5, 0.3);
	r = subtract_ok(&a, &b);
	CHECK(r.bytes != NULL && open_model(&r, &v), "a token in every document: nothing left");
	CHECK(nb_read_f64(v.entry_docs, 0) == nb_read_f64(v.class_docs, 0),
		  "token documents %.17g not set to the class's %.17g",
		  nb_read_f64(v.entry_docs, 0), nb_read_f64(v.class_docs, 0));
	model_free(&r);
	model_free(&b);
	/* by more than the tolerance: b's rows are not a's */
	b = one_class(0.3 + 2 * tol, 0.5, 0.3);
	expect(&a, &b, NB_SUBTRACT_MISMATCH, "token documents above the class's");
	model_free(&b);
	model_free(&a);
}

/* ---------------------------------------------------------------- */
/* refusals                                                          */

/* A model of jsonb-like rows, built with the trainer: label, then up to two features. */
static Model
model_rows(const MixRow *rows, int n)
{
	Model		m;

	m.bytes = serialize_mix(rows, n, &m.size);
	return m;
}

static void
expect_named(const Model *a, const Model *b, NbSubtractStatus status, NbSubtractCount count,
			 const char *label, const char *feature, const char *item)
{
	NbSubtractError err;
	Model		r = subtract(a, b, &err);

	model_free(&r);
	if (unit_failed())
		return;
	if (err.status != status)
		fail_at(__LINE__, "status %d, expected %d", (int) err.status, (int) status);
	else if ((status == NB_SUBTRACT_NEGATIVE || status == NB_SUBTRACT_MISMATCH) && err.count != count)
		fail_at(__LINE__, "count %d, expected %d", (int) err.count, (int) count);
	else if ((label == NULL) != (err.label == NULL) ||
			 (label != NULL && (err.label_len != strlen(label) ||
								memcmp(err.label, label, err.label_len) != 0)))
		fail_at(__LINE__, "class \"%.*s\", expected \"%s\"", (int) err.label_len,
				err.label ? err.label : "", label ? label : "(none)");
	else if ((feature == NULL) != (err.feature == NULL) ||
			 (feature != NULL && (err.feature_len != strlen(feature) ||
								  memcmp(err.feature, feature, err.feature_len) != 0)))
		fail_at(__LINE__, "feature \"%.*s\", expected \"%s\"", (int) err.feature_len,
				err.feature ? err.feature : "", feature ? feature : "(none)");
	else if ((item == NULL) != (err.item == NULL) ||
			 (item != NULL && (err.item_len != strlen(item) ||
							   memcmp(err.item, item, err.item_len) != 0)))
		fail_at(__LINE__, "item \"%.*s\", expected \"%s\"", (int) err.item_len,
				err.item ? err.item : "", item ? item : "(none)");
}

static void
test_refusals(void)
{
	/* label, weight, color, flag, has_x, x, has_tags, tags */
	static const MixRow a_rows[] = {
		{"a", 2, "red", 1, true, 1, true, {"t", "u", NULL}},
		{"a", 1, "blue", 0, true, 3, false, {NULL}},
		{"b", 1, "red", -1, false, 0, true, {"t", NULL}},
	};
	static const MixRow no_class[] = {{"c", 1, "red", -1, false, 0, false, {NULL}}};
	static const MixRow no_value[] = {{"a", 1, "green", -1, false, 0, false, {NULL}}};
	static const MixRow no_value_in_class[] = {{"b", 1, "blue", -1, false, 0, false, {NULL}}};
	static const MixRow no_tag[] = {{"a", 1, NULL, -1, false, 0, true, {"v", NULL}}};
	static const MixRow tag_not_in_class[] = {{"b", 1, NULL, -1, false, 0, true, {"u", NULL}}};
	static const MixRow more_docs[] = {{"b", 2, NULL, -1, false, 0, false, {NULL}}};
	static const MixRow more_rows[] = {{"b", 1, NULL, 1, false, 0, false, {NULL}}};
	static const MixRow more_true[] = {{"a", 3, NULL, 1, false, 0, false, {NULL}}};
	static const MixRow more_values[] = {{"b", 1, NULL, -1, true, 5, false, {NULL}}};
	static const MixRow more_tags[] = {{"b", 1, NULL, -1, false, 0, true, {"t", "t", NULL}}};
	static const MixRow outnumbered[] = {{"a", 2, "red", 1, true, 1, true, {"u", NULL}}};
	Model		a = model_rows(a_rows, 3);
	Model		b;

	b = model_rows(no_class, 1);
	expect_named(&a, &b, NB_SUBTRACT_NO_CLASS, 0, "c", NULL, NULL);
	model_free(&b);
	b = model_rows(no_value, 1);
	expect_named(&a, &b, NB_SUBTRACT_NO_ITEM, 0, NULL, "color", "green");
	model_free(&b);
	b = model_rows(no_value_in_class, 1);
	expect_named(&a, &b, NB_SUBTRACT_NO_ITEM, 0, "b", "color", "blue");
	model_free(&b);
	b = model_rows(no_tag, 1);
	expect_named(&a, &b, NB_SUBTRACT_NO_ITEM, 0, NULL, "tags", "v");
	model_free(&b);
	b = model_rows(tag_not_in_class, 1);
	expect_named(&a, &b, NB_SUBTRACT_NO_ITEM, 0, "b", "tags", "u");
	model_free(&b);
	b = model_rows(more_docs, 1);
	expect_named(&a, &b, NB_SUBTRACT_NEGATIVE, NB_COUNT_DOCUMENTS, "b", NULL, NULL);
	model_free(&b);
	b = model_rows(more_rows, 1);
	expect_named(&a, &b, NB_SUBTRACT_NEGATIVE, NB_COUNT_ROWS, "b", "flag", NULL);
	model_free(&b);
	b = model_rows(more_true, 1);
	expect_named(&a, &b, NB_SUBTRACT_NEGATIVE, NB_COUNT_TRUE, "a", "flag", NULL);
	model_free(&b);
	b = model_rows(more_values, 1);
	expect_named(&a, &b, NB_SUBTRACT_NEGATIVE, NB_COUNT_ROWS, "b", "x", NULL);
	model_free(&b);
	b = model_rows(more_tags, 1);
	expect_named(&a, &b, NB_SUBTRACT_NEGATIVE, NB_COUNT_OCCURRENCES, "b", "tags", "t");
	model_free(&b);
	/*
	 * b's first row has "u" where a's had "t" and "u": a's rows have no
	 * bag of length 1; in version 2, which has no lengths, "t" outnumbers
	 * the rows left with tags
	 */
	b = model_rows(outnumbered, 1);
	expect_named(&a, &b, NB_SUBTRACT_NEGATIVE, NB_COUNT_LENGTH_ROWS, "a", "tags", NULL);
	as_version_2(&a);
	as_version_2(&b);
	expect_named(&a, &b, NB_SUBTRACT_MISMATCH, NB_COUNT_ITEM_DOCUMENTS, "a", "tags", "t");
	model_free(&b);
	model_free(&a);
}

/*
 * A row of class "a" in trainer t: feature (if not NULL) of type type with
 * the value 1 (true), a float8[] of vector_len elements (if not 0) whose
 * first is 1.
 */
static void
add_row(NbTrainer *t, const char *feature, NbFeatureType type, uint32_t vector_len)
{
	NbFeatureType existing;
	uint32_t	bad;

	nb_trainer_begin_doc(t, "a", 1, 1);
	if (feature != NULL)
	{
		uint32_t	j = (uint32_t) nb_trainer_feature(t, feature, (uint32_t) strlen(feature), type,
													  &existing);

		if (type == NB_FEATURE_GAUSSIAN)
			nb_trainer_add_real(t, j, 1);
		else
			nb_trainer_add_boolean(t, j, true);
	}
	if (vector_len > 0)
		nb_trainer_add_real(t, nb_trainer_vector(t, vector_len, &bad)[0], 1);
}

/* The model of t's rows; t is destroyed. */
static Model
model_of_trainer(NbTrainer *t)
{
	Model		m;

	m.bytes = serialize(t, &m.size);
	nb_trainer_destroy(t);
	return m;
}

/* A model of one row (see add_row). */
static Model
one_row(const char *feature, NbFeatureType type, uint32_t vector_len)
{
	NbTrainer  *t = nb_trainer_create();

	add_row(t, feature, type, vector_len);
	return model_of_trainer(t);
}

/* Features, types and float8[] lengths. */
static void
test_refusals_features(void)
{
	NbTrainer  *t = nb_trainer_create();
	Model		a;
	Model		b;

	/* a: a Gaussian "p" and a float8[] of 2 in one row, nothing in another */
	add_row(t, "p", NB_FEATURE_GAUSSIAN, 2);
	add_row(t, NULL, 0, 0);
	a = model_of_trainer(t);

	b = one_row("q", NB_FEATURE_GAUSSIAN, 0);
	expect_named(&a, &b, NB_SUBTRACT_NO_FEATURE, 0, NULL, "q", NULL);
	model_free(&b);
	b = one_row("p", NB_FEATURE_BOOLEAN, 0);
	expect_named(&a, &b, NB_SUBTRACT_TYPE, 0, NULL, "p", NULL);
	model_free(&b);
	b = one_row(NULL, 0, 3);
	expect(&a, &b, NB_SUBTRACT_VECTOR, "float8[] of another length");
	expect(&b, &a, NB_SUBTRACT_VECTOR, "float8[] of another length, the other way");
	model_free(&b);

	/* b without float8[] rows: a keeps its vector */
	b = one_row(NULL, 0, 0);
	{
		Model		r = subtract_ok(&a, &b);
		NbView		v;

		CHECK(r.bytes != NULL && open_model(&r, &v), "nothing left");
		CHECK(v.vector_len == 2 && v.n_features == 3, "vector %u, %u features", v.vector_len,
			  v.n_features);
		model_free(&r);
	}
	model_free(&b);
	model_free(&a);
}

/* ---------------------------------------------------------------- */
/* any pair of valid models                                          */

/*
 * Models of unrelated random rows (and models built field by field) as a
 * and b: the subtraction refuses or gives a valid model, and never reads
 * or writes out of bounds (ASan) or leaks.
 */
static void
test_unrelated(void)
{
	static RandMix ra[40];
	static RandMix rb[40];
	uint64_t	seed = 15;
	int			refused = 0;

	for (int round = 0; round < 300 && !unit_failed(); round++)
	{
		long		live = nb_test_live_blocks();
		int			na = 1 + (int) (nbt_rand(&seed) % 40);
		int			nb = 1 + (int) (nbt_rand(&seed) % 40);
		NbSubtractError err;
		Model		a;
		Model		b;
		Model		r;

		rand_mix(ra, na, 1 + round % 3, seed, round % 2 == 0);
		rand_mix(rb, nb, 1 + round % 4, seed + 1, round % 3 == 0);
		a = model_of(ra, 0, na);
		b = model_of(rb, 0, nb);
		r = subtract(&a, &b, &err);
		refused += err.status != NB_SUBTRACT_OK;
		model_free(&r);
		/* b's rows are among those of a merged with b */
		{
			Model		ab = merge(&a, &b);

			r = subtract_ok(&ab, &b);
			model_free(&r);
			model_free(&ab);
		}
		model_free(&a);
		model_free(&b);
		if (nb_test_live_blocks() != live)
			fail_at(__LINE__, "blocks left behind (round %d)", round);
	}
	note("%d of 300 unrelated pairs refused", refused);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("subtract: merge(a, b) - b = a byte for byte, every feature type", test_identity_exact);
	run("subtract: merge(a, b) - b = a within 1e-12, real values", test_identity_real);
	run("subtract: text-only models (format versions 3 and 1)", test_identity_text);
	run("subtract: folds out of the whole are the other folds", test_folds);
	run("subtract: the tolerance, relative to the minuend", test_tolerance);
	run("subtract: refusals name the class, feature and item", test_refusals);
	run("subtract: refusals of features, types and float8[] lengths", test_refusals_features);
	run("subtract: unrelated models refuse or give a valid model", test_unrelated);
	return unit_done();
}
