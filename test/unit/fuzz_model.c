/*
 * fuzz_model.c — libFuzzer target for nb_view_open and everything that
 * trusts its result.
 *
 * Every input goes to nb_view_open.  An accepted value is then used as the
 * server would use it (model_check.c: index, scorers of all three kinds with
 * alpha 0, 1 and 0.5, several documents, mutual information, merging into a
 * trainer and re-serializing) and checked: no NaN posterior, posteriors sum
 * to 1, the round trip is byte-identical, the merged value is accepted
 * again, and for well-conditioned models the posteriors and mutual
 * information equal a dense reference implementation.  A failed check
 * aborts, so libFuzzer saves the input.
 *
 * Random bytes almost never pass the checksum, so the custom mutator below
 * usually repairs it (and often the header) after mutating, and also edits
 * models structurally (swap, duplicate or drop tokens, labels and entries,
 * special numbers, string edits, scaling; for version 2 also feature types,
 * item counts, statistics, names and the vector length) and crosses models
 * over by merging them with the trainer: the checks behind the checksum and
 * the code behind nb_view_open get exercised.  Inputs that start with '{'
 * are also training data with named features (version 2).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_check.h"
#include "nb_format.h"
#include "nb_trainer.h"
#include "raw_model.h"

size_t		LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/*
 * The input as training data: lines are documents, a line's first byte
 * picks the class and the weight, the rest is tokens separated by spaces or
 * zero bytes (empty tokens included; strings with a zero byte cannot be
 * stored, and the server's text and tsvector values never have one).  When
 * the input starts with '{', lines also get named features (format version
 * 2): the line's second byte says which: bit 0 the tokens go to the bag
 * "tags" instead of "", bit 1 a categorical "c" (the first token), bit 2 a
 * boolean "b", bit 3 a Gaussian "g", bits 4-5 a float8[] of length 2,
 * bit 6 no text at all.  Training on all documents and training with one
 * token per call must give the same bytes; merging the serialized halves
 * too when there is no Gaussian feature (weights are dyadic and counts
 * small, so every sum is exact; Gaussian means round), and the results
 * must pass every check.
 */
static void
fuzz_training(const uint8_t *data, size_t size)
{
	enum
	{
		MAX_DOCS = 64, MAX_TOKENS = 2048
	};
	static const double weights[] = {1, 2, 0.5, 3};
	static const char *const labels[] = {"ham", "spam", "", "\xff"};
	size_t		start[MAX_DOCS + 1];
	int			ndocs = 0;
	NbTrainer  *all = nb_trainer_create();
	NbTrainer  *single = nb_trainer_create();
	NbTrainer  *half[2];
	NbTrainer  *merged = nb_trainer_create();
	NbTokenRef *refs = malloc(sizeof(NbTokenRef) * MAX_TOKENS);
	unsigned char *out[3] = {NULL, NULL, NULL};
	size_t		outsize[3];
	uint32_t	total = 0;
	bool		mixed = size > 0 && data[0] == '{';
	bool		gaussian = false;

	half[0] = nb_trainer_create();
	half[1] = nb_trainer_create();
	start[0] = 0;
	for (size_t i = 0; i < size && ndocs < MAX_DOCS; i++)
		if (data[i] == '\n')
			start[++ndocs] = i + 1;
	if (ndocs < MAX_DOCS && start[ndocs] < size)
		start[++ndocs] = size + 1;
	for (int d = 0; d < ndocs; d++)
	{
		const uint8_t *line = data + start[d];
		size_t		len = start[d + 1] - start[d] - 1;
		uint8_t		head = len > 0 ? line[0] : 0;
		const char *label = labels[head & 3];
		double		w = weights[(head >> 2) & 3];
		uint32_t	n = 0;
		size_t		tok = 1;

		for (size_t i = 1; i <= len && total + n < MAX_TOKENS; i++)
			if (i == len || line[i] == ' ' || line[i] == 0)
			{
				refs[n].str = (const char *) line + tok;
				refs[n].len = (uint32_t) (i - tok);
				refs[n].count = 1 + (head >> 4) % 3;
				n++;
				tok = i + 1;
			}
		if (len <= 1)
			n = 0;
		total += n;
		{
			uint8_t		f = mixed && len > 1 ? line[1] : 0;
			double		x = len > 2 ? (double) ((int) line[2] - 128) / 4 : 0.5;
			NbTrainer  *ts[3] = {all, single, half[d % 2]};

			if (f & 8)
				gaussian = true;
			if (f & 0x30)
				gaussian = true;
			for (int i = 0; i < 3; i++)
			{
				NbTrainer  *t = ts[i];
				NbFeatureType existing;

				nb_trainer_begin_doc(t, label, (uint32_t) strlen(label), w);
				if (!(f & 64))
				{
					int64_t		bag = (f & 1) ? nb_trainer_feature(t, "tags", 4, NB_FEATURE_BAG, &existing) : -1;

					if (t == single)
						for (uint32_t k = 0; k < n; k++)
						{
							if (bag >= 0)
								nb_trainer_add_tokens(t, (uint32_t) bag, refs + k, 1);
							else if (!nb_trainer_add_text(t, refs + k, 1))
								abort();
						}
					if (t != single || n == 0)
					{
						if (bag >= 0)
							nb_trainer_add_tokens(t, (uint32_t) bag, refs, n);
						else if (!nb_trainer_add_text(t, refs, n))
							abort();
					}
					/* mixed rows are jsonb rows: their text is the key "" */
					if (mixed && bag < 0)
						t->settings.jsonb_bag = true;
				}
				if (f & 2)
				{
					int64_t		c = nb_trainer_feature(t, "c", 1, NB_FEATURE_CATEGORICAL, &existing);

					nb_trainer_add_category(t, (uint32_t) c, n > 0 ? refs[0].str : "", n > 0 ? refs[0].len : 0);
				}
				if (f & 4)
					nb_trainer_add_boolean(t, (uint32_t) nb_trainer_feature(t, "b", 1, NB_FEATURE_BOOLEAN, &existing),
										   (f & 128) != 0);
				if (f & 8)
					nb_trainer_add_real(t, (uint32_t) nb_trainer_feature(t, "g", 1, NB_FEATURE_GAUSSIAN, &existing), x);
				if (f & 0x30)
				{
					uint32_t	bad;
					const uint32_t *ids = nb_trainer_vector(t, 2, &bad);

					if (ids == NULL)
						abort();
					if (f & 0x10)
						nb_trainer_add_real(t, ids[0], x * 3);
					if (f & 0x20)
						nb_trainer_add_real(t, ids[1], -x);
				}
			}
		}
	}
	if (ndocs > 0)
	{
		NbView		v;
		NbFormatError e;
		NbtStats	stats = {0};
		char		err[512];

		for (int h = 0; h < 2; h++)
		{
			size_t		n = nb_trainer_flat_size(half[h], SIZE_MAX);
			unsigned char *b;

			if (nb_trainer_is_empty(half[h]))
				continue;
			b = malloc(n);
			nb_trainer_write_view(half[h], b, n, NULL);
			if (!nb_view_open(&v, b, n, &e))
			{
				fprintf(stderr, "fuzz_model: trained model rejected: %s\n", e.message);
				abort();
			}
			{
				uint32_t	conflict;

				NbMergeStatus st = nb_trainer_merge_view(merged, &v, &conflict);

				/*
				 * Halves of rows no SQL aggregate mixes (float8[] positions
				 * beside jsonb keys) may share no kind of rows: refused as
				 * that, and nothing more to compare.
				 */
				if (st == NB_MERGE_INPUT_CONFLICT &&
					(nb_trainer_input_kinds(half[0]) & nb_trainer_input_kinds(half[1])) == 0)
				{
					free(b);
					goto unrelated;
				}
				if (st != NB_MERGE_OK)
				{
					fprintf(stderr, "fuzz_model: merge of a half refused\n");
					abort();
				}
			}
			free(b);
		}
		outsize[0] = nb_trainer_flat_size(all, SIZE_MAX);
		outsize[1] = nb_trainer_flat_size(single, SIZE_MAX);
		outsize[2] = nb_trainer_flat_size(merged, SIZE_MAX);
		for (int i = 0; i < 3; i++)
		{
			out[i] = malloc(outsize[i]);
			nb_trainer_write_view(i == 0 ? all : i == 1 ? single : merged, out[i], outsize[i], NULL);
		}
		if (outsize[1] != outsize[0] || memcmp(out[0], out[1], outsize[0]) != 0)
		{
			fprintf(stderr, "fuzz_model: one token per call trains a different model\n");
			abort();
		}
		if (!gaussian && (outsize[2] != outsize[0] || memcmp(out[0], out[2], outsize[0]) != 0))
		{
			fprintf(stderr, "fuzz_model: merge of the halves differs from training on all\n");
			abort();
		}
		if (!nb_view_open(&v, out[0], outsize[0], &e))
		{
			fprintf(stderr, "fuzz_model: trained model rejected: %s\n", e.message);
			abort();
		}
		if (!nbt_check_model(out[0], outsize[0], &v, size, 0, &stats, err, sizeof(err)))
		{
			fprintf(stderr, "fuzz_model: trained model (version %u, C=%u V=%u F=%u) fails: %s\n",
					v.version, v.n_classes, v.n_tokens, v.n_features, err);
			abort();
		}
		if (gaussian)
		{
			if (!nb_view_open(&v, out[2], outsize[2], &e))
			{
				fprintf(stderr, "fuzz_model: merged halves rejected: %s\n", e.message);
				abort();
			}
			if (!nbt_check_model(out[2], outsize[2], &v, size, 0, &stats, err, sizeof(err)))
			{
				fprintf(stderr, "fuzz_model: merged halves fail: %s\n", err);
				abort();
			}
		}
	}
unrelated:
	for (int i = 0; i < 3; i++)
		free(out[i]);
	free(refs);
	nb_trainer_destroy(all);
	nb_trainer_destroy(single);
	nb_trainer_destroy(half[0]);
	nb_trainer_destroy(half[1]);
	nb_trainer_destroy(merged);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	NbView		view;
	NbFormatError error;
	NbtStats	stats = {0};
	char		err[512];

	memset(error.message, 'x', sizeof(error.message));
	if (!nb_view_open(&view, data, size, &error))
	{
		/* most inputs: not a model, but still training data */
		if (size <= 4096 && (size < 4 || memcmp(data, "NBCM", 4) != 0 || (data[size - 1] & 7) == 0))
			fuzz_training(data, size);
		if (memchr(error.message, '\0', sizeof(error.message)) == NULL || error.message[0] == '\0')
		{
			fprintf(stderr, "fuzz_model: rejected without a terminated error message\n");
			abort();
		}
		return 0;
	}
	if (!nbt_check_model(data, size, &view, view.checksum, 0, &stats,
						 err, sizeof(err)))
	{
		fprintf(stderr, "fuzz_model: accepted value (version %u, C=%u V=%u E=%llu F=%u) fails: %s\n",
				view.version, view.n_classes, view.n_tokens, (unsigned long long) view.n_entries,
				view.n_features, err);
		abort();
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* custom mutator                                                    */

static uint64_t
rnd(uint64_t *s, uint64_t n)
{
	return n ? nbt_rand(s) % n : 0;
}

static double
special_double(uint64_t *s)
{
	static const double v[] = {
		0, -0.0, 1, 2, 0.5, 0.25, 3, 1e308, 1.7976931348623157e308, 2.2250738585072014e-308,
		4.9406564584124654e-324, 1e-300, 1e300, 9007199254740992.0, -1, INFINITY, -INFINITY,
		NAN, 1e154, 65536, 1.0 / 64,
	};

	return v[rnd(s, sizeof(v) / sizeof(v[0]))];
}

static uint32_t
special_u32(uint64_t *s, uint32_t near)
{
	switch (rnd(s, 8))
	{
		case 0:
			return 0;
		case 1:
			return 1;
		case 2:
			return UINT32_MAX;
		case 3:
			return UINT32_C(0x80000000);
		case 4:
			return near + 1;
		case 5:
			return near ? near - 1 : 0;
		case 6:
			return near;
		default:
			return (uint32_t) nbt_rand(s);
	}
}

static int
cmp_string(const RawString *a, const RawString *b)
{
	return nb_strcmp((const char *) a->s, a->len, (const char *) b->s, b->len);
}

static const RawModel *sort_model;

static int
cmp_class_idx(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a;
	uint32_t	y = *(const uint32_t *) b;
	int			c = cmp_string(&sort_model->c[x].label, &sort_model->c[y].label);

	return c ? c : (x > y) - (x < y);
}

static int
cmp_token(const void *a, const void *b)
{
	const RawToken *x = a;
	const RawToken *y = b;

	return cmp_string(&x->str, &y->str);
}

static int
cmp_entry(const void *a, const void *b)
{
	const RawEntry *x = a;
	const RawEntry *y = b;

	return (x->cls > y->cls) - (x->cls < y->cls);
}

static double
fix_value(double v)
{
	return isfinite(v) && v > 0 ? v : 1;
}

static void
fix_string(RawString *s)
{
	for (uint32_t i = 0; i < s->len; i++)
		if (s->s[i] == 0)
			s->s[i] = 1;
}

/*
 * A feature's length histograms made plausible: bags only, lengths
 * positive, finite and increasing, weights positive and within the rows.
 */
static void
repair_lengths(RawModel *m, RawFeature *f)
{
	for (uint32_t c = 0; c < m->nc; c++)
	{
		RawLengths *l = &f->lengths[c];
		uint32_t	n = 0;

		for (uint32_t i = 0; i < l->n; i++)
			if (f->type == NB_FEATURE_BAG && isfinite(l->value[i]) && l->value[i] > 0 &&
				(n == 0 || l->value[i] > l->value[n - 1]) && f->present[c] > 0)
			{
				l->value[n] = l->value[i];
				l->weight[n] = isfinite(l->weight[i]) && l->weight[i] > 0 &&
					l->weight[i] <= f->present[c] ? l->weight[i] : f->present[c];
				n++;
			}
		l->n = n;
	}
}

/* The feature statistics of a version 2 or 3 model made plausible (order kept). */
static void
repair_features(RawModel *m)
{
	uint64_t	items = 0;

	for (uint32_t j = 0; j < m->nf; j++)
	{
		RawFeature *f = &m->f[j];

		if (f->type < 1 || f->type > NB_FEATURE_TYPE_MAX)
			f->type = NB_FEATURE_BAG;
		if (f->type != NB_FEATURE_BAG && f->type != NB_FEATURE_CATEGORICAL)
			f->items = 0;
		items += f->items;
		for (uint32_t c = 0; c < m->nc; c++)
		{
			if (!(f->present[c] >= 0) || f->present[c] > m->c[c].docs)
				f->present[c] = m->c[c].docs;
			if (f->type == NB_FEATURE_GAUSSIAN)
			{
				if (f->present[c] == 0 || !isfinite(f->a[c]))
					f->a[c] = 0;
				if (f->present[c] == 0 || !(f->b[c] >= 0) || !isfinite(f->b[c]))
					f->b[c] = 0;
			}
			else
			{
				f->b[c] = 0;
				if (f->type != NB_FEATURE_BOOLEAN || !(f->a[c] >= 0) || f->a[c] > f->present[c])
					f->a[c] = 0;
			}
		}
		repair_lengths(m, f);
		if (f->type == NB_FEATURE_GAUSSIAN)
		{
			if (!(f->rows >= 0) || !isfinite(f->rows))
				f->rows = 0;
			if (!isfinite(f->mean))
				f->mean = 0;
			if (!(f->m2 >= 0) || !isfinite(f->m2))
				f->m2 = 0;
		}
		else
			f->rows = f->mean = f->m2 = 0;
	}
	/* the rest of the items go to the last feature that may have them */
	if (items != m->nt)
		for (uint32_t j = m->nf; j-- > 0;)
			if (m->f[j].type == NB_FEATURE_BAG || m->f[j].type == NB_FEATURE_CATEGORICAL)
			{
				if (items < m->nt)
					m->f[j].items += (uint32_t) (m->nt - items);
				else if (items - m->nt <= m->f[j].items)
					m->f[j].items -= (uint32_t) (items - m->nt);
				break;
			}
}

/* Make a raw model valid while keeping as much of it as possible. */
static void
repair(RawModel *m)
{
	uint32_t   *order,
			   *map;
	RawClass   *classes;
	uint32_t	nc = 0;
	uint32_t	nt = 0;

	if (m->nc == 0)
		raw_add_class(m, "c", 1, 1);
	for (uint32_t c = 0; c < m->nc; c++)
	{
		fix_string(&m->c[c].label);
		m->c[c].docs = fix_value(m->c[c].docs);
	}
	if (m->version != 1)
	{
		/* version 2: numbers and strings only; classes and items keep their order */
		for (uint32_t k = 0; k < m->nt; k++)
		{
			RawToken   *t = &m->t[k];
			uint32_t	n = 0;

			fix_string(&t->str);
			for (uint32_t i = 0; i < t->n; i++)
				if (t->e[i].cls < m->nc && (n == 0 || t->e[i].cls > t->e[n - 1].cls))
				{
					t->e[n] = t->e[i];
					t->e[n].count = fix_value(t->e[n].count);
					t->e[n].docs = fix_value(t->e[n].docs);
					n++;
				}
			t->n = n;
		}
		for (uint32_t j = 0; j < m->nf; j++)
			fix_string(&m->f[j].name);
		repair_features(m);
		return;
	}
	/* labels: sort, merge duplicates, remember where each old class went */
	order = malloc(sizeof(uint32_t) * m->nc);
	map = malloc(sizeof(uint32_t) * m->nc);
	classes = malloc(sizeof(RawClass) * m->nc);
	for (uint32_t c = 0; c < m->nc; c++)
		order[c] = c;
	sort_model = m;
	if (m->nc > 1)
		qsort(order, m->nc, sizeof(uint32_t), cmp_class_idx);
	for (uint32_t i = 0; i < m->nc; i++)
	{
		RawClass   *src = &m->c[order[i]];

		if (nc > 0 && cmp_string(&classes[nc - 1].label, &src->label) == 0)
		{
			free(src->label.s);
			map[order[i]] = nc - 1;
			continue;
		}
		map[order[i]] = nc;
		classes[nc++] = *src;
	}
	free(m->c);
	m->c = classes;
	/* entries: remap, drop out-of-range and duplicate classes, fix numbers */
	for (uint32_t k = 0; k < m->nt; k++)
	{
		RawToken   *t = &m->t[k];
		uint32_t	n = 0;

		fix_string(&t->str);
		for (uint32_t i = 0; i < t->n; i++)
			if (t->e[i].cls < m->nc)
			{
				t->e[n] = t->e[i];
				t->e[n].cls = map[t->e[i].cls];
				t->e[n].count = fix_value(t->e[n].count);
				t->e[n].docs = fix_value(t->e[n].docs);
				n++;
			}
		if (n > 1)
			qsort(t->e, n, sizeof(RawEntry), cmp_entry);
		t->n = 0;
		for (uint32_t i = 0; i < n; i++)
			if (t->n == 0 || t->e[t->n - 1].cls != t->e[i].cls)
				t->e[t->n++] = t->e[i];
	}
	m->nc = nc;
	free(order);
	free(map);
	/* tokens: sort, drop duplicates and tokens without entries */
	if (m->nt > 1)
		qsort(m->t, m->nt, sizeof(RawToken), cmp_token);
	for (uint32_t k = 0; k < m->nt; k++)
	{
		if (m->t[k].n == 0 || (nt > 0 && cmp_string(&m->t[nt - 1].str, &m->t[k].str) == 0))
		{
			free(m->t[k].str.s);
			free(m->t[k].e);
			continue;
		}
		m->t[nt++] = m->t[k];
	}
	m->nt = nt;
}

static void
random_string(uint64_t *s, RawString *out, const RawModel *m)
{
	unsigned char buf[16];
	uint32_t	len;

	if (m->nt > 0 && rnd(s, 2))
	{
		/* a neighbour of an existing token */
		const RawString *src = &m->t[rnd(s, m->nt)].str;

		len = src->len < 15 ? src->len : 15;
		memcpy(buf, src->s, len);
		if (len > 0 && rnd(s, 2))
			buf[rnd(s, len)] += (unsigned char) (rnd(s, 2) ? 1 : -1);
		else
			buf[len++] = (unsigned char) rnd(s, 256);
	}
	else
	{
		len = (uint32_t) rnd(s, 6);
		for (uint32_t i = 0; i < len; i++)
			buf[i] = (unsigned char) ('a' + rnd(s, 4));
	}
	raw_set_string(out, buf, len);
}

static double *
random_value_field(uint64_t *s, RawModel *m)
{
	uint64_t	pick = rnd(s, 3);

	if (pick == 0 || m->nt == 0)
		return &m->c[rnd(s, m->nc)].docs;
	{
		RawToken   *t = &m->t[rnd(s, m->nt)];

		if (t->n == 0)
			return &m->c[rnd(s, m->nc)].docs;
		return pick == 1 ? &t->e[rnd(s, t->n)].count : &t->e[rnd(s, t->n)].docs;
	}
}

/* A version 2 edit of the features; false if it did not apply. */
static bool
edit_feature(RawModel *m, uint64_t *s)
{
	RawFeature *f;
	uint32_t	c;

	if (m->nf == 0 || rnd(s, 8) == 0)
	{
		/* a new feature, last (names then often out of order: repair sorts nothing) */
		static const char *const names[] = {"~", "~g", "~~", "1", "2", "3", ""};
		uint32_t	type = 1 + (uint32_t) rnd(s, NB_FEATURE_TYPE_MAX);
		const char *name = names[rnd(s, 7)];
		uint32_t	j = raw_add_feature(m, name, (uint32_t) strlen(name), type);

		for (c = 0; c < m->nc; c++)
			if (rnd(s, 2))
			{
				m->f[j].present[c] = m->c[c].docs;
				if (type == NB_FEATURE_BOOLEAN)
					m->f[j].a[c] = m->c[c].docs / 2;
				if (type == NB_FEATURE_GAUSSIAN)
				{
					m->f[j].a[c] = (double) rnd(s, 64) - 32;
					m->f[j].b[c] = (double) rnd(s, 64);
					m->f[j].rows += 1;
					m->f[j].m2 += 1;
				}
			}
		if (type == NB_FEATURE_BAG || type == NB_FEATURE_CATEGORICAL)
			for (uint32_t i = (uint32_t) rnd(s, 3); i > 0 && m->nc > 0; i--)
			{
				unsigned char v = (unsigned char) ('a' + i);
				uint32_t	k = raw_add_item(m, j, (const char *) &v, 1);

				c = (uint32_t) rnd(s, m->nc);
				if (m->f[j].present[c] == 0)
					m->f[j].present[c] = m->c[c].docs;
				raw_add_entry(m, k, c, 1 + (double) rnd(s, 3), m->f[j].present[c] < 1 ? m->f[j].present[c] : 1);
			}
		return true;
	}
	f = &m->f[rnd(s, m->nf)];
	c = (uint32_t) rnd(s, m->nc ? m->nc : 1);
	switch (rnd(s, 14))
	{
		case 0:
			f->type = rnd(s, 4) ? 1 + (uint32_t) rnd(s, NB_FEATURE_TYPE_MAX) : special_u32(s, f->type);
			return true;
		case 1:
			f->items = special_u32(s, f->items);
			return true;
		case 2:
			raw_del_feature(m, (uint32_t) (f - m->f));
			return true;
		case 3:
			if (m->nc == 0)
				return false;
			f->present[c] = rnd(s, 2) ? special_double(s) : m->c[c].docs;
			return true;
		case 4:
			if (m->nc == 0)
				return false;
			f->a[c] = rnd(s, 2) ? special_double(s) : (double) rnd(s, 64) - 32;
			return true;
		case 5:
			if (m->nc == 0)
				return false;
			f->b[c] = rnd(s, 2) ? special_double(s) : (double) rnd(s, 64);
			return true;
		case 6:
			*(rnd(s, 3) == 0 ? &f->rows : rnd(s, 2) ? &f->mean : &f->m2) = special_double(s);
			return true;
		case 7:
			m->vector_len = special_u32(s, m->vector_len);
			return true;
		case 8:					/* swap two feature names */
			{
				RawFeature *g = &m->f[rnd(s, m->nf)];
				RawString	x = f->name;

				f->name = g->name;
				g->name = x;
			}
			return true;
		case 9:					/* a feature name edit */
			{
				unsigned char buf[16];
				uint32_t	len = f->name.len < 15 ? f->name.len : 15;

				memcpy(buf, f->name.s, len);
				if (len > 0 && rnd(s, 2))
					buf[rnd(s, len)] = (unsigned char) ('0' + rnd(s, 10));
				else
					buf[len++] = (unsigned char) rnd(s, 256);
				raw_set_string(&f->name, buf, len);
			}
			return true;
		case 10:				/* a class loses the feature */
			if (m->nc == 0)
				return false;
			f->present[c] = f->a[c] = f->b[c] = 0;
			return true;
		case 11:				/* a document length */
			if (m->nc == 0)
				return false;
			raw_add_length(m, (uint32_t) (f - m->f), c,
						   rnd(s, 2) ? special_double(s) : 1 + (double) rnd(s, 40),
						   rnd(s, 2) ? special_double(s) : f->present[c]);
			return true;
		case 12:				/* a length or its weight changed */
			if (m->nc == 0 || f->lengths[c].n == 0)
				return false;
			{
				uint32_t	i = (uint32_t) rnd(s, f->lengths[c].n);

				if (rnd(s, 2))
					f->lengths[c].value[i] = special_double(s);
				else
					f->lengths[c].weight[i] = special_double(s);
			}
			return true;
		default:				/* version 1 -> 2 -> 3 -> 1 */
			m->version = m->version == 1 ? 2 : m->version == 2 ? 3 : 1;
			return true;
	}
}

/* One structural edit; false if it did not apply. */
static bool
edit(RawModel *m, uint64_t *s)
{
	if (m->nc == 0)
	{
		raw_add_class(m, "c", 1, 1);
		return true;
	}
	if (m->version != 1 && rnd(s, 3) == 0)
		return edit_feature(m, s);
	switch (rnd(s, 18))
	{
		case 0:					/* swap two tokens */
			if (m->nt < 2)
				return false;
			{
				uint32_t	i = (uint32_t) rnd(s, m->nt),
							j = (uint32_t) rnd(s, m->nt);
				RawToken	x = m->t[i];

				m->t[i] = m->t[j];
				m->t[j] = x;
			}
			return true;
		case 1:
			if (m->nt == 0)
				return false;
			raw_dup_token(m, (uint32_t) rnd(s, m->nt));
			return true;
		case 2:
			if (m->nt == 0)
				return false;
			raw_del_token(m, (uint32_t) rnd(s, m->nt));
			return true;
		case 3:					/* a new token with a few entries */
			{
				uint32_t	k = raw_add_token(m, "", 0);
				uint32_t	n = 1 + (uint32_t) rnd(s, m->nc < 3 ? m->nc : 3);
				uint32_t	cls = (uint32_t) rnd(s, m->nc);

				random_string(s, &m->t[k].str, m);
				for (uint32_t i = 0; i < n && cls < m->nc; i++)
				{
					raw_add_entry(m, k, cls, 1 + (double) rnd(s, 4), 1 + (double) rnd(s, 2));
					cls += 1 + (uint32_t) rnd(s, 2);
				}
			}
			return true;
		case 4:					/* swap two classes */
			if (m->nc < 2)
				return false;
			{
				uint32_t	i = (uint32_t) rnd(s, m->nc),
							j = (uint32_t) rnd(s, m->nc);
				RawClass	x = m->c[i];

				m->c[i] = m->c[j];
				m->c[j] = x;
			}
			return true;
		case 5:
			raw_dup_class(m, (uint32_t) rnd(s, m->nc));
			return true;
		case 6:
			if (m->nc < 2)
				return false;
			raw_del_class(m, (uint32_t) rnd(s, m->nc));
			return true;
		case 7:
			{
				uint32_t	c = raw_add_class(m, "", 0, 1 + (double) rnd(s, 3));

				random_string(s, &m->c[c].label, m);
			}
			return true;
		case 8:					/* an entry's class */
		case 9:					/* swap two entries of a token */
		case 10:				/* drop an entry */
		case 11:				/* add an entry */
			{
				RawToken   *t;
				uint32_t	op = (uint32_t) rnd(s, 4);

				if (m->nt == 0)
					return false;
				t = &m->t[rnd(s, m->nt)];
				if (op == 3 || t->n == 0)
				{
					uint32_t	cls = t->n ? t->e[t->n - 1].cls + 1 : 0;

					raw_add_entry(m, (uint32_t) (t - m->t), rnd(s, 4) ? cls : special_u32(s, m->nc),
								  1 + (double) rnd(s, 3), 1);
				}
				else if (op == 0)
					t->e[rnd(s, t->n)].cls = special_u32(s, rnd(s, 2) ? m->nc : t->e[0].cls);
				else if (op == 1 && t->n >= 2)
				{
					uint32_t	i = (uint32_t) rnd(s, t->n);
					RawEntry	x = t->e[i];

					t->e[i] = t->e[(i + 1) % t->n];
					t->e[(i + 1) % t->n] = x;
				}
				else
				{
					uint32_t	i = (uint32_t) rnd(s, t->n);

					memmove(&t->e[i], &t->e[i + 1], sizeof(RawEntry) * (t->n - i - 1));
					t->n--;
				}
			}
			return true;
		case 12:				/* a special number */
			*random_value_field(s, m) = special_double(s);
			return true;
		case 13:				/* an ordinary number */
			*random_value_field(s, m) = (1 + (double) rnd(s, 64)) / (rnd(s, 2) ? 1 : 64);
			return true;
		case 14:				/* string edits */
			{
				RawString  *str = (m->nt > 0 && rnd(s, 3)) ? &m->t[rnd(s, m->nt)].str
					: &m->c[rnd(s, m->nc)].label;
				unsigned char buf[64];
				uint32_t	len = str->len < 63 ? str->len : 63;

				memcpy(buf, str->s, len);
				switch (rnd(s, 5))
				{
					case 0:
						if (len == 0)
							return false;
						buf[rnd(s, len)] = 0;
						break;
					case 1:
						if (len == 0)
							return false;
						buf[rnd(s, len)] = (unsigned char) nbt_rand(s);
						break;
					case 2:
						buf[len++] = (unsigned char) nbt_rand(s);
						break;
					case 3:
						if (len == 0)
							return false;
						len--;
						break;
					default:
						len = 0;
						break;
				}
				raw_set_string(str, buf, len);
			}
			return true;
		case 15:				/* scale a whole kind of number by 2^k */
			{
				int			k = (int) rnd(s, 2100) - 1050;
				uint64_t	what = rnd(s, 3);

				if (what == 0)
					for (uint32_t c = 0; c < m->nc; c++)
						m->c[c].docs = ldexp(m->c[c].docs, k);
				else
					for (uint32_t t = 0; t < m->nt; t++)
						for (uint32_t i = 0; i < m->t[t].n; i++)
						{
							if (what == 1)
								m->t[t].e[i].count = ldexp(m->t[t].e[i].count, k);
							else
								m->t[t].e[i].docs = ldexp(m->t[t].e[i].docs, k);
						}
			}
			return true;
		case 16:				/* a class loses all its tokens */
			{
				uint32_t	c = (uint32_t) rnd(s, m->nc);

				for (uint32_t t = 0; t < m->nt; t++)
				{
					uint32_t	n = 0;

					for (uint32_t i = 0; i < m->t[t].n; i++)
						if (m->t[t].e[i].cls != c)
							m->t[t].e[n++] = m->t[t].e[i];
					m->t[t].n = n;
				}
			}
			return true;
		default:				/* a token occurs in every class */
			if (m->nt == 0)
				return false;
			{
				uint32_t	k = (uint32_t) rnd(s, m->nt);

				m->t[k].n = 0;
				for (uint32_t c = 0; c < m->nc; c++)
					raw_add_entry(m, k, c, 1 + (double) rnd(s, 3), 1);
			}
			return true;
	}
}

/* Write m into data if it fits; 0 if not. */
static size_t
emit(const RawModel *m, uint8_t *data, size_t max_size)
{
	uint64_t	need = raw_size(m);

	if (need > max_size)
		return 0;
	raw_write(m, data);
	return (size_t) need;
}

static void
fix_header(uint8_t *data, size_t size)
{
	if (size < NB_HEADER_SIZE)
		return;
	memcpy(data, "NBCM", 4);
	if (data[4] != NB_FORMAT_VERSION_TEXT && data[4] != NB_FORMAT_VERSION_FEATURES)
		data[4] = NB_FORMAT_VERSION;
	data[5] = 0;
	data[6] = 0;
	data[7] = 0;
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t	s = seed * UINT64_C(0x9e3779b97f4a7c15) + size;
	uint64_t	r = rnd(&s, 100);
	size_t		n;

	if (r < 50)
	{
		RawModel	m;

		if (raw_parse(&m, data, size))
		{
			int			edits = 1 + (int) rnd(&s, 3);
			bool		changed = false;

			for (int i = 0; i < edits; i++)
				changed |= edit(&m, &s);
			if (rnd(&s, 2))
			{
				repair(&m);
				changed = true;
			}
			n = changed ? emit(&m, data, max_size) : 0;
			raw_free(&m);
			if (n > 0)
			{
				/* sometimes break a header count on purpose */
				if (rnd(&s, 16) == 0)
				{
					size_t		off = 8 + 4 * rnd(&s, data[4] == NB_FORMAT_VERSION_TEXT ? 4 : 8);

					if (off == 24 || off == 28)
						off = 32;
					uint32_t	v;

					memcpy(&v, data + off, 4);
					v = special_u32(&s, v);
					memcpy(data + off, &v, 4);
					nbt_fix_checksum(data, n);
				}
				return n;
			}
		}
	}
	if (r < 65 && size >= NB_HEADER_SIZE + 8)
	{
		/* a special number at some 4-aligned field position */
		size_t		off = 8 + 4 * rnd(&s, (size - 8 - 8) / 4 + 1);

		if (off == 24 || off == 28)
			off = 32;
		if (rnd(&s, 2))
		{
			double		d = special_double(&s);

			memcpy(data + off, &d, 8);
		}
		else
		{
			uint32_t	v;

			memcpy(&v, data + off, 4);
			v = special_u32(&s, v);
			memcpy(data + off, &v, 4);
		}
		nbt_fix_checksum(data, size);
		return size;
	}
	n = LLVMFuzzerMutate(data, size, max_size);
	if (r < 95 && n >= NB_HEADER_SIZE)
	{
		if (r < 85)
			fix_header(data, n);
		nbt_fix_checksum(data, n);
	}
	return n;
}

/* Cross two models over: the trainer's merge of both when both are valid, else a splice. */
size_t
LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
						  uint8_t *out, size_t max_out, unsigned int seed)
{
	NbView		v1,
				v2;
	NbFormatError e;
	uint64_t	s = seed;
	size_t		cut1,
				cut2,
				n;

	if (nb_view_open(&v1, d1, s1, &e) && nb_view_open(&v2, d2, s2, &e))
	{
		NbTrainer  *t = nb_trainer_create();
		uint32_t	conflict;

		nb_trainer_merge_view(t, &v1, &conflict);
		/* a conflicting second model: the first alone */
		(void) nb_trainer_merge_view(t, &v2, &conflict);
		n = nb_trainer_flat_size(t, max_out);
		if (n > 0)
			nb_trainer_write_view(t, out, n, NULL);
		nb_trainer_destroy(t);
		if (n > 0)
			return n;
	}
	/* prefix of one, suffix of the other, checksum repaired */
	cut1 = (size_t) rnd(&s, s1 + 1);
	cut2 = (size_t) rnd(&s, s2 + 1);
	if (cut1 > max_out)
		cut1 = max_out;
	if (s2 - cut2 > max_out - cut1)
		cut2 = s2 - (max_out - cut1);
	memcpy(out, d1, cut1);
	memcpy(out + cut1, d2 + cut2, s2 - cut2);
	n = cut1 + s2 - cut2;
	if (n >= NB_HEADER_SIZE)
		nbt_fix_checksum(out, n);
	return n;
}
