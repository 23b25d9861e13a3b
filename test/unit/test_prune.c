/*
 * test_prune.c — unit tests of pruning (src/nb_prune.c).
 *
 *   ./test_prune         run every test
 *   ./test_prune WORD    run the tests whose name contains WORD
 *
 * The reference is the definition: the pruned model must be byte for byte
 * the model the trainer makes from the same rows with the pruned tokens and
 * features left out.  Which tokens go is worked out here from the rows
 * (document frequencies summed over the rows) or, for top_k, from the
 * ranking of nb_mutual_info; rows have random fractional weights, every
 * feature type and float8[] positions.
 *
 * Output: see unit.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "model_check.h"
#include "nb_format.h"
#include "nb_mutual_info.h"
#include "nb_prune.h"
#include "nb_trainer.h"
#include "raw_model.h"
#include "unit.h"

#define NROWS 60
#define NTOK 12					/* tokens t0..t11 in the bag "" and b0..b11 in "b" */
#define NTYPES 7				/* "" bag, b, color, flag, g, positions 1 and 2 */

typedef struct PRow
{
	char		label[4];
	double		weight;
	int			text[NTOK];		/* count of t<i> (0: absent) */
	bool		has_b;
	int			b[NTOK];
	int			color;			/* -1: missing */
	int			flag;			/* -1: missing */
	bool		has_g;
	double		g;
	double		vec[2];
	bool		vec_null[2];
} PRow;

/* What a training pass leaves out: tokens of "" and "b", and whole features. */
typedef struct Drop
{
	bool		text[NTOK];
	bool		b[NTOK];
	bool		color;
	bool		flag;
	bool		g;
	bool		pos[2];			/* a float8[] position: NULL in every row */
} Drop;

static void
rand_prows(PRow *rows, int n, uint64_t seed, bool text_only)
{
	uint64_t	s = seed;

	for (int i = 0; i < n; i++)
	{
		PRow	   *r = &rows[i];

		memset(r, 0, sizeof(*r));
		snprintf(r->label, sizeof(r->label), "c%d", (int) (nbt_rand(&s) % 3));
		r->weight = 0.1 + (double) (nbt_rand(&s) % 1000) / 337.0;
		for (int k = 0; k < NTOK; k++)
		{
			/* rare tokens for high k, class-dependent ones for low k */
			uint64_t	odds = 2 + (uint64_t) k + (r->label[1] == '0' && k < 3 ? 0 : 3);

			if (nbt_rand(&s) % odds == 0)
				r->text[k] = 1 + (int) (nbt_rand(&s) % 3);
		}
		if (text_only)
		{
			r->color = r->flag = -1;
			continue;
		}
		r->has_b = nbt_rand(&s) % 4 != 0;
		for (int k = 0; r->has_b && k < NTOK; k++)
			if (nbt_rand(&s) % (3 + (uint64_t) k) == 0)
				r->b[k] = 1 + (int) (nbt_rand(&s) % 2);
		r->color = nbt_rand(&s) % 5 == 0 ? -1 : (int) (nbt_rand(&s) % 3);
		r->flag = nbt_rand(&s) % 5 == 0 ? -1 : (int) (nbt_rand(&s) % 2);
		r->has_g = nbt_rand(&s) % 6 != 0;
		r->g = (double) (r->label[1] - '0') * 2 + (double) (nbt_rand(&s) % 1000) / 250.0;
		for (int p = 0; p < 2; p++)
		{
			r->vec_null[p] = nbt_rand(&s) % 7 == 0;
			r->vec[p] = (double) (nbt_rand(&s) % 1000) / (p == 0 ? 100.0 : 7.0);
		}
	}
}

static void
add_tokens(NbTrainer *t, uint32_t feature, bool text, const int *counts, const bool *drop,
		   char prefix)
{
	char		store[NTOK][8];
	NbTokenRef	refs[NTOK];
	uint32_t	n = 0;

	for (int k = 0; k < NTOK; k++)
		if (counts[k] > 0 && !drop[k])
		{
			int			len = snprintf(store[n], sizeof(store[n]), "%c%d", prefix, k);

			refs[n].str = store[n];
			refs[n].len = (uint32_t) len;
			refs[n].count = counts[k];
			n++;
		}
	if (text)
	{
		if (!nb_trainer_add_text(t, refs, n))
			abort();
	}
	else
		nb_trainer_add_tokens(t, feature, refs, n);
}

/* Serialize the rows, leaving out what drop says; text_only rows have the bag "" alone. */
static unsigned char *
train_prows(const PRow *rows, int n, const Drop *d, bool text_only, size_t *size)
{
	static const char *const colors[] = {"blue", "green", "red"};
	NbTrainer  *t = nb_trainer_create();
	unsigned char *buf;

	for (int i = 0; i < n; i++)
	{
		const PRow *r = &rows[i];
		const uint32_t *pos;
		uint32_t	bad;

		nb_trainer_begin_doc(t, r->label, (uint32_t) strlen(r->label), r->weight);
		add_tokens(t, 0, true, r->text, d->text, 't');
		if (text_only)
			continue;
		if (r->has_b)
			add_tokens(t, (uint32_t) feature_id(t, "b", NB_FEATURE_BAG), false, r->b, d->b, 'b');
		if (r->color >= 0 && !d->color)
			nb_trainer_add_category(t, (uint32_t) feature_id(t, "color", NB_FEATURE_CATEGORICAL),
									colors[r->color], (uint32_t) strlen(colors[r->color]));
		if (r->flag >= 0 && !d->flag)
			nb_trainer_add_boolean(t, (uint32_t) feature_id(t, "flag", NB_FEATURE_BOOLEAN), r->flag == 1);
		if (r->has_g && !d->g)
			nb_trainer_add_real(t, (uint32_t) feature_id(t, "g", NB_FEATURE_GAUSSIAN), r->g);
		pos = nb_trainer_vector(t, 2, &bad);
		if (pos == NULL)
			abort();
		for (int p = 0; p < 2; p++)
			if (!r->vec_null[p] && !d->pos[p])
				nb_trainer_add_real(t, pos[p], r->vec[p]);
	}
	buf = serialize(t, size);
	nb_trainer_destroy(t);
	return buf;
}

/* Prune buf with o into a new buffer; NULL if that fails. */
static unsigned char *
prune(const unsigned char *buf, size_t size, const NbPruneOptions *o, size_t *out_size)
{
	NbView		v;
	NbView		out;
	char		why[200];
	NbPruner   *p;
	unsigned char *res;

	if (!open_view(&v, buf, size, why, sizeof(why)))
		return NULL;
	p = nb_pruner_create(&v, o);
	*out_size = nb_pruner_size(p, SIZE_MAX);
	res = malloc(*out_size);
	nb_pruner_write(p, res, *out_size, &out);
	nb_pruner_destroy(p);
	if (out.size != *out_size)
	{
		free(res);
		return NULL;
	}
	return res;
}

/* Weighted documents with token k of a bag ("" when b is false), and all documents. */
static double
doc_freq(const PRow *rows, int n, bool b, int k, double *D)
{
	double		df = 0;

	*D = 0;
	for (int i = 0; i < n; i++)
	{
		*D += rows[i].weight;
		if ((b ? rows[i].b[k] : rows[i].text[k]) > 0)
			df += rows[i].weight;
	}
	return df;
}

/*
 * A model as it is without its document lengths (the form of versions 1
 * and 2): what pruning a bag's tokens leaves, since the rows' lengths
 * without them are unknown.
 */
static unsigned char *
without_lengths(const unsigned char *buf, size_t size, size_t *out_size)
{
	RawModel	m;
	NbView		v;
	NbFormatError e;
	unsigned char *out;

	if (!raw_parse(&m, buf, size))
		abort();
	raw_set_version(&m, NB_FORMAT_VERSION_FEATURES);
	out = raw_serialize(&m, out_size);
	if (!nb_view_open(&v, out, *out_size, &e))
	{
		/* the bag "" alone, present in every row: version 1 */
		free(out);
		raw_set_version(&m, NB_FORMAT_VERSION_TEXT);
		out = raw_serialize(&m, out_size);
	}
	raw_free(&m);
	return out;
}

/*
 * The pruned model against the rows trained without what d leaves out:
 * equal bytes (without the lengths if a bag lost tokens, which it must
 * have then), and a valid, usable model (model_check.c).
 */
static bool
same_as_retrained(const PRow *rows, int n, bool text_only, const NbPruneOptions *o, const Drop *d,
				  char *why, size_t whylen)
{
	static const Drop none;
	size_t		size,
				psize,
				rsize;
	unsigned char *full = train_prows(rows, n, &none, text_only, &size);
	unsigned char *pruned = prune(full, size, o, &psize);
	unsigned char *want = train_prows(rows, n, d, text_only, &rsize);
	bool		ok = pruned != NULL;
	NbView		v;
	NbView		fv;
	NbtStats	stats = {0};

	if (ok && pruned[4] != NB_FORMAT_VERSION && open_view(&fv, full, size, why, whylen) &&
		nb_view_has_lengths(&fv))
	{
		unsigned char *stripped = without_lengths(want, rsize, &rsize);
		uint64_t	bag_items = 0;

		free(want);
		want = stripped;
		/* lengths go only with a bag's tokens: the pruned rows have fewer */
		for (uint32_t j = 0; j < fv.n_features; j++)
			if (nb_view_feature_type(&fv, j) == NB_FEATURE_BAG)
				bag_items += nb_view_feature_items(&fv, j);
		if (!open_view(&v, pruned, psize, why, whylen))
			ok = false;
		else
			for (uint32_t j = 0; j < v.n_features; j++)
				if (nb_view_feature_type(&v, j) == NB_FEATURE_BAG)
					bag_items -= nb_view_feature_items(&v, j);
		if (ok && bag_items == 0)
		{
			ok = false;
			snprintf(why, whylen, "lengths dropped, but no bag lost a token");
		}
	}
	if (!ok)
	{
		if (pruned == NULL)
			snprintf(why, whylen, "pruning failed");
	}
	else if (psize != rsize || memcmp(pruned, want, psize) != 0)
	{
		ok = false;
		snprintf(why, whylen, "pruned model (%zu bytes) differs from the retrained one (%zu bytes)",
				 psize, rsize);
	}
	else if (!open_view(&v, pruned, psize, why, whylen) ||
			 !nbt_check_model(pruned, psize, &v, 7, 0, &stats, why, whylen))
		ok = false;
	free(full);
	free(pruned);
	free(want);
	return ok;
}

static void
test_prune_documents(void)
{
	PRow		rows[NROWS];
	char		why[300];

	for (int text_only = 0; text_only < 2; text_only++)
		for (uint64_t seed = 1; seed <= 20; seed++)
		{
			NbPruneOptions o;
			Drop		d = {0};
			double		D;
			double		lo = (double) (seed % 5) * 1.5;
			double		hi = seed % 3 == 0 ? 1 : 0.2 + 0.05 * (double) (seed % 7);

			rand_prows(rows, NROWS, seed, text_only);
			nb_prune_options_init(&o);
			CHECK(nb_prune_set_min_documents(&o, lo), "min_documents %g", lo);
			CHECK(nb_prune_set_max_document_fraction(&o, hi), "fraction %g", hi);
			for (int k = 0; k < NTOK; k++)
			{
				double		df = doc_freq(rows, NROWS, false, k, &D);

				d.text[k] = df < lo || df > hi * D;
				df = doc_freq(rows, NROWS, true, k, &D);
				d.b[k] = df < lo || df > hi * D;
			}
			CHECK(same_as_retrained(rows, NROWS, text_only, &o, &d, why, sizeof(why)),
				  "seed %llu%s, min %g, fraction %g: %s", (unsigned long long) seed,
				  text_only ? " (text only)" : "", lo, hi, why);
		}
}

/* The kept rows of the ranking: the first k (what top_k means), as drops. */
static void
top_k_drops(const unsigned char *buf, size_t size, uint64_t k, Drop *d)
{
	NbView		v;
	char		why[200];
	NbMiRow    *rows;
	uint64_t	n;

	memset(d, 0, sizeof(*d));
	if (!open_view(&v, buf, size, why, sizeof(why)))
		abort();
	rows = malloc(sizeof(NbMiRow) * (nb_mutual_info_max_rows(&v) + 1));
	n = nb_mutual_info(&v, rows);
	for (uint64_t i = k; i < n; i++)
	{
		uint32_t	len;
		const char *name = nb_view_feature_name(&v, rows[i].feature, &len);
		char		fname[16];

		snprintf(fname, sizeof(fname), "%.*s", (int) len, name);
		if (!rows[i].whole_feature)
		{
			NbStringIter it = nb_view_items(&v);
			const char *s = NULL;
			uint32_t	slen = 0;

			for (uint32_t x = 0; x <= rows[i].item; x++)
				nb_string_next(&it, &s, &slen);
			/* item strings: "t<k>" of the bag "", "b<k>" of "b" */
			int			tok = 0;

			for (uint32_t c = 1; c < slen; c++)
				tok = tok * 10 + (s[c] - '0');
			if (len == 0)
				d->text[tok] = true;
			else
				d->b[tok] = true;
		}
		else if (strcmp(fname, "color") == 0)
			d->color = true;
		else if (strcmp(fname, "flag") == 0)
			d->flag = true;
		else if (strcmp(fname, "g") == 0)
			d->g = true;
		else
			d->pos[atoi(fname) - 1] = true;
	}
	free(rows);
}

static void
test_prune_top_k(void)
{
	static const Drop none;
	PRow		rows[NROWS];
	char		why[300];

	for (int text_only = 0; text_only < 2; text_only++)
		for (uint64_t seed = 1; seed <= 10; seed++)
			for (uint64_t k = 0; k <= 2 * NTOK + 6; k += 1 + seed % 3)
			{
				NbPruneOptions o;
				Drop		d;
				size_t		size;
				unsigned char *full;

				rand_prows(rows, NROWS, seed, text_only);
				full = train_prows(rows, NROWS, &none, text_only, &size);
				top_k_drops(full, size, k, &d);
				free(full);
				nb_prune_options_init(&o);
				CHECK(nb_prune_set_top_k(&o, (double) k), "top_k %llu", (unsigned long long) k);
				CHECK(same_as_retrained(rows, NROWS, text_only, &o, &d, why, sizeof(why)),
					  "seed %llu%s, top_k %llu: %s", (unsigned long long) seed,
					  text_only ? " (text only)" : "", (unsigned long long) k, why);
			}
}

/* No option, or options that keep everything: the same bytes. */
static void
test_prune_identity(void)
{
	static const Drop none;
	PRow		rows[NROWS];
	NbPruneOptions o;
	size_t		size,
				psize;
	unsigned char *full,
			   *pruned;

	rand_prows(rows, NROWS, 3, false);
	full = train_prows(rows, NROWS, &none, false, &size);
	nb_prune_options_init(&o);
	pruned = prune(full, size, &o, &psize);
	CHECK_OR_DONE(pruned != NULL && psize == size && memcmp(pruned, full, size) == 0, "no options");
	free(pruned);
	nb_prune_set_top_k(&o, 1e6);
	nb_prune_set_min_documents(&o, 0);
	nb_prune_set_max_document_fraction(&o, 1);
	pruned = prune(full, size, &o, &psize);
	CHECK_OR_DONE(pruned != NULL && psize == size && memcmp(pruned, full, size) == 0, "keep all");
done:
	free(pruned);
	free(full);
}

/* top_k 0 leaves the bags empty, the positions without statistics, and the rest gone. */
static void
test_prune_nothing_left(void)
{
	PRow		rows[NROWS];
	Drop		d;
	NbPruneOptions o;
	char		why[300];

	memset(&d, true, sizeof(d));
	rand_prows(rows, NROWS, 5, false);
	nb_prune_options_init(&o);
	nb_prune_set_top_k(&o, 0);
	CHECK(same_as_retrained(rows, NROWS, false, &o, &d, why, sizeof(why)), "%s", why);
}

static void
test_prune_option_values(void)
{
	NbPruneOptions o;

	nb_prune_options_init(&o);
	CHECK(!nb_prune_set_top_k(&o, -1), "top_k -1");
	CHECK(!nb_prune_set_top_k(&o, 1.5), "top_k 1.5");
	CHECK(!nb_prune_set_top_k(&o, NAN), "top_k NaN");
	CHECK(!nb_prune_set_top_k(&o, INFINITY), "top_k inf");
	CHECK(!nb_prune_set_top_k(&o, 9007199254740994.0), "top_k 2^53 + 2");
	CHECK(!o.has_top_k, "a refused top_k was set");
	CHECK(nb_prune_set_top_k(&o, 9007199254740992.0), "top_k 2^53");
	CHECK(!nb_prune_set_min_documents(&o, -0.5), "min -0.5");
	CHECK(!nb_prune_set_min_documents(&o, INFINITY), "min inf");
	CHECK(!nb_prune_set_min_documents(&o, NAN), "min NaN");
	CHECK(nb_prune_set_min_documents(&o, 2.5), "min 2.5");
	CHECK(!nb_prune_set_max_document_fraction(&o, 1.0000001), "fraction > 1");
	CHECK(!nb_prune_set_max_document_fraction(&o, -0.1), "fraction < 0");
	CHECK(!nb_prune_set_max_document_fraction(&o, NAN), "fraction NaN");
	CHECK(!o.has_max_fraction, "a refused fraction was set");
	CHECK(nb_prune_set_max_document_fraction(&o, 0), "fraction 0");
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("prune: min_documents and max_document_fraction equal training without the tokens",
		test_prune_documents);
	run("prune: top_k equals training without all but the first k rows of nb_mutual_info",
		test_prune_top_k);
	run("prune: no option, or options that keep everything, give the same bytes", test_prune_identity);
	run("prune: top_k 0 keeps empty bags, float8[] positions without statistics, and the rows",
		test_prune_nothing_left);
	run("prune: option values out of range are refused", test_prune_option_values);
	return unit_done();
}
