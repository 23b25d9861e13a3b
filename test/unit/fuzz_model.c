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
 * special numbers, string edits, scaling) and crosses models over by
 * merging them with the trainer: the checks behind the checksum and the
 * code behind nb_view_open get exercised.
 *
 * Environment:
 *   NBC_FUZZ_TOLERATE_KNOWN=1  do not fail on the known bugs listed at
 *       NBT_TOLERATE_KNOWN in model_check.h (lets a long run look for others).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_check.h"
#include "nb_format.h"
#include "nb_trainer.h"
#include "raw_model.h"

size_t		LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static int	check_flags;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *e = getenv("NBC_FUZZ_TOLERATE_KNOWN");

	(void) argc;
	(void) argv;
	if (e != NULL && e[0] == '1')
		check_flags |= NBT_TOLERATE_KNOWN;
	return 0;
}

/*
 * The input as training data: lines are documents, a line's first byte
 * picks the class and the weight, the rest is tokens separated by spaces or
 * zero bytes (empty tokens included; strings with a zero byte cannot be
 * stored, and the server's text and tsvector values never have one).  Training on all documents, training with one
 * token per call, and merging the serialized halves must give the same bytes
 * (weights are dyadic and counts small, so every sum is exact), and the
 * result must pass every check.
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
		nb_trainer_begin_doc(all, label, (uint32_t) strlen(label), w);
		nb_trainer_add_tokens(all, refs, n);
		nb_trainer_begin_doc(single, label, (uint32_t) strlen(label), w);
		for (uint32_t i = 0; i < n; i++)
			nb_trainer_add_tokens(single, refs + i, 1);
		nb_trainer_begin_doc(half[d % 2], label, (uint32_t) strlen(label), w);
		nb_trainer_add_tokens(half[d % 2], refs, n);
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
			nb_trainer_write(half[h], b, n);
			if (!nb_view_open(&v, b, n, &e))
			{
				fprintf(stderr, "fuzz_model: trained model rejected: %s\n", e.message);
				abort();
			}
			nb_trainer_merge_view(merged, &v);
			free(b);
		}
		outsize[0] = nb_trainer_flat_size(all, SIZE_MAX);
		outsize[1] = nb_trainer_flat_size(single, SIZE_MAX);
		outsize[2] = nb_trainer_flat_size(merged, SIZE_MAX);
		for (int i = 0; i < 3; i++)
		{
			out[i] = malloc(outsize[i]);
			nb_trainer_write(i == 0 ? all : i == 1 ? single : merged, out[i], outsize[i]);
		}
		if (outsize[1] != outsize[0] || memcmp(out[0], out[1], outsize[0]) != 0)
		{
			fprintf(stderr, "fuzz_model: one token per call trains a different model\n");
			abort();
		}
		if (outsize[2] != outsize[0] || memcmp(out[0], out[2], outsize[0]) != 0)
		{
			fprintf(stderr, "fuzz_model: merge of the halves differs from training on all\n");
			abort();
		}
		if (!nb_view_open(&v, out[0], outsize[0], &e))
		{
			fprintf(stderr, "fuzz_model: trained model rejected: %s\n", e.message);
			abort();
		}
		if (!nbt_check_model(out[0], outsize[0], &v, size, check_flags, &stats, err, sizeof(err)))
		{
			fprintf(stderr, "fuzz_model: trained model (C=%u V=%u) fails: %s\n",
					v.n_classes, v.n_tokens, err);
			abort();
		}
	}
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
	uint64_t	peek;

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
		if (nb_peek_checksum(data, size, &peek) != (size >= NB_HEADER_SIZE))
		{
			fprintf(stderr, "fuzz_model: nb_peek_checksum wrong about the size\n");
			abort();
		}
		return 0;
	}
	if (!nbt_check_model(data, size, &view, view.checksum, check_flags, &stats,
						 err, sizeof(err)))
	{
		fprintf(stderr, "fuzz_model: accepted value (C=%u V=%u E=%llu) fails: %s\n",
				view.n_classes, view.n_tokens, (unsigned long long) view.n_entries, err);
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

/* One structural edit; false if it did not apply. */
static bool
edit(RawModel *m, uint64_t *s)
{
	if (m->nc == 0)
	{
		raw_add_class(m, "c", 1, 1);
		return true;
	}
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
					size_t		off = 8 + 4 * rnd(&s, 4);
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

		nb_trainer_merge_view(t, &v1);
		nb_trainer_merge_view(t, &v2);
		n = nb_trainer_flat_size(t, max_out);
		if (n > 0)
			nb_trainer_write(t, out, n);
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
