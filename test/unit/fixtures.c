/*
 * fixtures.c — training rows, models and view lookups shared by the unit
 * test programs (see fixtures.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "model_check.h"
#include "nb_format.h"
#include "nb_trainer.h"
#include "raw_model.h"

void
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

NbTrainer *
train_rows(const Row *rows, int n)
{
	NbTrainer  *t = nb_trainer_create();

	for (int i = 0; i < n; i++)
		train_row(t, &rows[i]);
	return t;
}

unsigned char *
serialize(NbTrainer *t, size_t *size)
{
	unsigned char *buf;

	*size = nb_trainer_flat_size(t, SIZE_MAX);
	buf = malloc(*size);
	nb_trainer_write_view(t, buf, *size, NULL);
	return buf;
}

unsigned char *
serialize_rows(const Row *rows, int n, size_t *size)
{
	NbTrainer  *t = train_rows(rows, n);
	unsigned char *buf = serialize(t, size);

	nb_trainer_destroy(t);
	return buf;
}

bool
open_view(NbView *v, const unsigned char *buf, size_t size, char *why, size_t whylen)
{
	NbFormatError e;

	if (nb_view_open(v, buf, size, &e))
		return true;
	snprintf(why, whylen, "%s", e.message);
	return false;
}

int64_t
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

char *
hex(const unsigned char *p, size_t n)
{
	static char out[4096];
	size_t		i;

	for (i = 0; i < n && 2 * i + 3 < sizeof(out); i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * i] = '\0';
	return out;
}

const Row toy[] = {
	{"ham", 1, {"b", "c", "c", "d"}},
	{"spam", 1, {"a", "a", "b"}},
	{"spam", 1, {"a", "c"}},
};

void
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

int train_batching;

void
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

unsigned char *
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

const Row empty_full[] = {
	{"empty", 1, {NULL}},
	{"full", 1, {"x", "y"}},
};

int64_t
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

void
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

unsigned char *
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

const MixRow mix[] = {
	{"a", 1, "red", 1, true, 1, true, {"t", "u"}},
	{"a", 2, "blue", 0, true, 4, true, {NULL}},
	{"b", 1, "red", 1, true, 2, true, {"t", "t"}},
	{"b", 1, NULL, 1, true, 6, false, {NULL}},
	{"a", 1, NULL, -1, false, 0, false, {NULL}},
};

void
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

void
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

unsigned char *
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

const MixRow score_rows_mix[] = {
	{"a", 1, "red", 1, true, 1, false, {NULL}},
	{"a", 1, "red", 1, true, 3, false, {NULL}},
	{"a", 1, "red", 0, false, 0, false, {NULL}},
	{"b", 1, "red", 0, true, 10, false, {NULL}},
	{"b", 1, "blue", -1, true, 14, false, {NULL}},
	{"c", 1, "blue", -1, false, 0, false, {NULL}},
};

void
mix_raw_discrete(RawModel *m)
{
	uint32_t	j,
				k;

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

const Row dcm_rows[] = {
	{"a", 1, {"x", "x", "x", "y"}},
	{"a", 1, {"x", "z"}},
	{"a", 1, {"y", "y"}},
	{"b", 1, {"z", "z", "w"}},
	{"b", 1, {"w"}},
};

DcmToy
dcm_toy(double alpha)
{
	static const double len[2][2] = {{2, 4}, {1, 3}};
	static const double weight[2][2] = {{2, 1}, {1, 1}};
	static const double docs[2] = {5, 3};	/* documents with each seen token, summed */
	/* documents of each class with w, x, y, z; 0: never seen */
	static const double d[2][4] = {{0, 2, 2, 1}, {2, 0, 0, 1}};
	DcmToy		t;

	for (int c = 0; c < 2; c++)
	{
		t.fit[c] = nb_dcm_fit(docs[c], len[c], weight[c], 2);
		t.s[c] = 0;
		for (int k = 0; k < 4; k++)
		{
			t.beta[c][k] = (d[c][k] > 0 ? d[c][k] : alpha) / t.fit[c].z;
			t.s[c] += t.beta[c][k];
		}
	}
	return t;
}
