/*
 * test_format_writer.c — unit tests of nb_format's writer (nb_format_size,
 * nb_format_begin, nb_format_finish) and of its read-side iterators.
 *
 *   ./test_format_writer        run every test
 *
 * The reference bytes come from raw_model.c, which lays models out from the
 * layout documented in src/nb_format.h independently of nb_format.c.
 * Prints "ok - name" or "not ok - name: detail" per test, then
 * "N passed, N failed"; exits 1 if any test failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb_format.h"
#include "raw_model.h"
#include "unit.h"

#define EXPECT(cond) CHECK_OR_DONE(cond, "%s", #cond)

/*
 * Two classes; a bag "words" with items "ham", "spam" and a Gaussian "x"
 * (version 2; version 3 adds the bag's document lengths).
 */
static void
build(RawModel *m, int version)
{
	uint32_t	t;

	if (version == 1)
		raw_init(m);
	else if (version == 2)
		raw_init_v2(m);
	else
		raw_init_v3(m);
	raw_add_class(m, "no", 2, 3);
	raw_add_class(m, "yes", 3, 2.5);
	if (version == 1)
	{
		t = raw_add_token(m, "ham", 3);
		raw_add_entry(m, t, 0, 4, 2);
		t = raw_add_token(m, "spam", 4);
		raw_add_entry(m, t, 0, 1, 1);
		raw_add_entry(m, t, 1, 6, 2.5);
		return;
	}
	m->vector_len = 0;
	raw_add_feature(m, "words", 5, NB_FEATURE_BAG);
	t = raw_add_item(m, 0, "ham", 3);
	raw_add_entry(m, t, 0, 4, 2);
	t = raw_add_item(m, 0, "spam", 4);
	raw_add_entry(m, t, 0, 1, 1);
	raw_add_entry(m, t, 1, 6, 2.5);
	m->f[0].present[0] = 3;
	m->f[0].present[1] = 2.5;
	raw_add_feature(m, "x", 1, NB_FEATURE_GAUSSIAN);
	m->f[1].present[0] = 2;
	m->f[1].a[0] = 1.5;
	m->f[1].b[0] = 0.5;
	m->f[1].rows = 2;
	m->f[1].mean = 1.5;
	m->f[1].m2 = 0.5;
	if (version == 3)
	{
		raw_add_length(m, 0, 0, 1, 1);
		raw_add_length(m, 0, 0, 4, 2);
		raw_add_length(m, 0, 1, 6, 2.5);
	}
}

static uint64_t
strings_bytes(const RawString *s, size_t stride, uint32_t n)
{
	uint64_t	b = 0;

	for (uint32_t i = 0; i < n; i++)
		b += ((const RawString *) ((const char *) s + i * stride))->len;
	return b;
}

/* Write m through nb_format's writer into a new buffer of *size bytes. */
static unsigned char *
write_through_format(const RawModel *m, size_t *size, NbView *view)
{
	NbFormatShape s;
	NbFormatWriter w;
	unsigned char *buf;
	char	   *p;
	uint64_t	e = 0;

	memset(&s, 0, sizeof(s));
	s.n_classes = m->nc;
	s.n_tokens = m->nt;
	s.n_entries = 0;
	for (uint32_t k = 0; k < m->nt; k++)
		s.n_entries += m->t[k].n;
	s.n_features = m->nf;
	s.vector_len = m->vector_len;
	s.label_bytes = strings_bytes(&m->c[0].label, sizeof(RawClass), m->nc);
	s.token_bytes = strings_bytes(&m->t[0].str, sizeof(RawToken), m->nt);
	s.name_bytes = m->nf ? strings_bytes(&m->f[0].name, sizeof(RawFeature), m->nf) : 0;
	s.text_only = m->version == 1;
	s.lengths = m->version == 3;
	s.n_lengths = 0;
	for (uint32_t j = 0; s.lengths && j < m->nf; j++)
		for (uint32_t c = 0; c < m->nc; c++)
			s.n_lengths += m->f[j].lengths[c].n;
	*size = nb_format_size(&s, SIZE_MAX);
	if (*size == 0 || nb_format_size(&s, *size - 1) != 0 || nb_format_size(&s, *size) != *size)
		return NULL;
	buf = malloc(*size);
	memset(buf, 0xaa, *size);
	nb_format_begin(&w, &s, buf, *size);
	p = w.labels;
	for (uint32_t c = 0; c < m->nc; c++)
	{
		nb_write_f64(w.class_docs, c, m->c[c].docs);
		nb_write_u32(w.label_len, c, m->c[c].label.len);
		memcpy(p, m->c[c].label.s, m->c[c].label.len);
		p += m->c[c].label.len;
	}
	p = w.tokens;
	for (uint32_t k = 0; k < m->nt; k++)
	{
		nb_write_u32(w.token_len, k, m->t[k].str.len);
		nb_write_u32(w.token_entries, k, m->t[k].n);
		memcpy(p, m->t[k].str.s, m->t[k].str.len);
		p += m->t[k].str.len;
		for (uint32_t i = 0; i < m->t[k].n; i++, e++)
		{
			nb_write_u32(w.entry_class, e, m->t[k].e[i].cls);
			nb_write_f64(w.entry_count, e, m->t[k].e[i].count);
			nb_write_f64(w.entry_docs, e, m->t[k].e[i].docs);
		}
	}
	if (s.lengths)
	{
		uint64_t	h = 0;

		for (uint32_t j = 0; j < m->nf; j++)
			for (uint32_t c = 0; c < m->nc; c++)
			{
				const RawLengths *l = &m->f[j].lengths[c];

				nb_write_u32(w.length_pairs, (uint64_t) j * m->nc + c, l->n);
				for (uint32_t i = 0; i < l->n; i++, h++)
				{
					nb_write_f64(w.length_value, h, l->value[i]);
					nb_write_f64(w.length_weight, h, l->weight[i]);
				}
			}
	}
	if (!s.text_only)
	{
		p = w.feature_names;
		for (uint32_t j = 0; j < m->nf; j++)
		{
			const RawFeature *f = &m->f[j];

			nb_write_u32(w.feature_name_len, j, f->name.len);
			nb_write_u32(w.feature_type, j, f->type);
			nb_write_u32(w.feature_items, j, f->items);
			for (uint32_t c = 0; c < m->nc; c++)
			{
				nb_write_f64(w.feature_present, (uint64_t) j * m->nc + c, f->present[c]);
				nb_write_f64(w.feature_a, (uint64_t) j * m->nc + c, f->a[c]);
				nb_write_f64(w.feature_b, (uint64_t) j * m->nc + c, f->b[c]);
			}
			nb_write_f64(w.feature_rows, j, f->rows);
			nb_write_f64(w.feature_mean, j, f->mean);
			nb_write_f64(w.feature_m2, j, f->m2);
			memcpy(p, f->name.s, f->name.len);
			p += f->name.len;
		}
	}
	nb_format_finish(&w, view);
	return buf;
}

static void
test_writer(int version)
{
	RawModel	m;
	unsigned char *want;
	unsigned char *got = NULL;
	size_t		want_size;
	size_t		got_size;
	NbView		written;
	NbView		opened;
	NbFormatError err;

	build(&m, version);
	want = raw_serialize(&m, &want_size);
	got = write_through_format(&m, &got_size, &written);
	EXPECT(got != NULL);
	EXPECT(got_size == want_size);
	EXPECT(memcmp(got, want, want_size) == 0);
	EXPECT(nb_view_open(&opened, got, got_size, &err));
	EXPECT(nb_view_sums_finite(&written));
	/* a version 1 view's feature_names is some empty string */
	EXPECT(written.feature_names[0] == '\0' || version != 1);
	written.feature_names = opened.feature_names;
	EXPECT(memcmp(&written, &opened, sizeof(NbView)) == 0);
done:
	raw_free(&m);
	free(want);
	free(got);
}

/* The strings an iterator yields, joined by '|'. */
static void
joined(NbStringIter it, char *out, size_t cap)
{
	const char *s;
	uint32_t	len;
	size_t		n = 0;

	out[0] = '\0';
	while (nb_string_next(&it, &s, &len))
		n += (size_t) snprintf(out + n, cap - n, "%s%.*s", n ? "|" : "", (int) len, s);
}

static void
test_iterators(int version)
{
	char		buf[200];
	RawModel	m;
	unsigned char *bytes;
	size_t		size;
	NbView		v;
	NbFormatError err;
	NbFeatureIter it;
	NbFeature	f;

	build(&m, version);
	bytes = raw_serialize(&m, &size);
	EXPECT(nb_view_open(&v, bytes, size, &err));
	joined(nb_view_labels(&v), buf, sizeof(buf));
	EXPECT(strcmp(buf, "no|yes") == 0);
	joined(nb_view_items(&v), buf, sizeof(buf));
	EXPECT(strcmp(buf, "ham|spam") == 0);
	joined(nb_view_feature_names(&v), buf, sizeof(buf));
	EXPECT(strcmp(buf, version == 1 ? "" : "words|x") == 0);

	it = nb_view_features(&v);
	EXPECT(nb_feature_next(&it, &f));
	EXPECT(f.index == 0 && f.type == NB_FEATURE_BAG && f.first_item == 0 && f.n_items == 2);
	EXPECT(f.name_len == (version == 1 ? 0 : 5));
	joined(nb_feature_items(&v, &f), buf, sizeof(buf));
	EXPECT(strcmp(buf, "ham|spam") == 0);
	EXPECT(nb_view_present(&v, 0, 0) == 3 && nb_view_present(&v, 0, 1) == 2.5);
	EXPECT(nb_view_a(&v, 0, 1) == 0 && nb_view_b(&v, 0, 1) == 0);
	EXPECT(nb_read_f64(v.feature_rows, 0) == 0 && nb_read_f64(v.feature_m2, 0) == 0);
	if (version == 2)
	{
		uint32_t	len;
		const char *x = nb_view_feature_name(&v, 1, &len);

		EXPECT(len == 1 && x[0] == 'x');
		EXPECT(nb_feature_next(&it, &f));
		EXPECT(f.index == 1 && f.type == NB_FEATURE_GAUSSIAN && f.first_item == 2 &&
			   f.n_items == 0 && f.name_len == 1 && f.name[0] == 'x');
		EXPECT(nb_view_a(&v, 1, 0) == 1.5 && nb_view_b(&v, 1, 0) == 0.5);
	}
	EXPECT(!nb_feature_next(&it, &f));
done:
	raw_free(&m);
	free(bytes);
}

static void
test_writer_v1(void)
{
	test_writer(1);
}

static void
test_writer_v2(void)
{
	test_writer(2);
}

static void
test_writer_v3(void)
{
	test_writer(3);
}

static void
test_iterators_v1(void)
{
	test_iterators(1);
}

static void
test_iterators_v2(void)
{
	test_iterators(2);
}

/*
 * Version 4: the model of raw_model's bytes with a tokenizer and options
 * (nb_view_shape, nb_format_copy) has the documented layout: version 3's
 * counts (H 0 and flag NB_FORMAT_FLAG_NO_LENGTHS without lengths), the two
 * sizes at 48, the same sections, then the tokenizer and the options before
 * the strings.  Without the settings again it is the original bytes.
 */
static void
test_settings(int version)
{
	static const char options[] = "{\"alpha\": 2}";
	RawModel	m;
	unsigned char *want;
	unsigned char *got = NULL;
	unsigned char *back = NULL;
	unsigned char tok[NB_TOKENIZER_SIZE];
	size_t		want_size;
	size_t		got_size;
	size_t		back_size;
	size_t		strings;
	size_t		sections;
	NbView		v;
	NbView		g;
	NbFormatError err;
	NbFormatShape shape;
	NbFormatWriter w;
	NbSettings	settings;
	NbSettings	none;

	memset(&settings, 0, sizeof(settings));
	memset(&none, 0, sizeof(none));
	nb_tokenizer_init(&settings.tokenizer);
	settings.tokenizer.ngram_max = 2;
	settings.has_tokenizer = true;
	settings.options = options;
	settings.options_len = sizeof(options) - 1;
	nb_tokenizer_encode(&settings.tokenizer, tok);

	build(&m, version);
	want = raw_serialize(&m, &want_size);
	EXPECT(nb_view_open(&v, want, want_size, &err));
	shape = nb_view_shape(&v, &settings);
	got_size = nb_format_size(&shape, SIZE_MAX);
	EXPECT(got_size > want_size);
	got = malloc(got_size);
	memset(got, 0xaa, got_size);
	nb_format_begin(&w, &shape, got, got_size);
	nb_format_copy(&w, &v);
	nb_format_finish(&w, NULL);
	EXPECT(nb_view_open(&g, got, got_size, &err));
	EXPECT(g.version == 4 && g.settings.has_tokenizer && g.settings.tokenizer.ngram_max == 2);
	EXPECT(g.settings.options_len == sizeof(options) - 1 &&
		   memcmp(g.settings.options, options, sizeof(options) - 1) == 0);
	EXPECT(got[4] == 4 && got[5] == 0);
	EXPECT(got[6] == (version == 3 ? 0 : NB_FORMAT_FLAG_NO_LENGTHS) && got[7] == 0);
	EXPECT(nb_read_u32(got + 48, 0) == NB_TOKENIZER_SIZE);
	EXPECT(nb_read_u32(got + 48, 1) == sizeof(options) - 1);
	strings = strings_bytes(&m.c[0].label, sizeof(RawClass), m.nc) +
		strings_bytes(&m.t[0].str, sizeof(RawToken), m.nt) +
		(m.nf ? strings_bytes(&m.f[0].name, sizeof(RawFeature), m.nf) : 0);
	if (version >= 2)
	{
		size_t		header = version == 3 ? 48 : 40;

		sections = want_size - header - strings;
		EXPECT(memcmp(got + 8, want + 8, 16) == 0);
		EXPECT(memcmp(got + 32, want + 32, header - 32) == 0);
		EXPECT(version == 3 || nb_read_le64(got + 40) == 0);
		EXPECT(memcmp(got + 56, want + header, sections) == 0);
		EXPECT(memcmp(got + 56 + sections, tok, NB_TOKENIZER_SIZE) == 0);
		EXPECT(memcmp(got + 56 + sections + NB_TOKENIZER_SIZE, options, sizeof(options) - 1) == 0);
		EXPECT(memcmp(got + got_size - strings, want + want_size - strings, strings) == 0);
	}

	/* without the settings: the original bytes */
	shape = nb_view_shape(&g, &none);
	back_size = nb_format_size(&shape, SIZE_MAX);
	EXPECT(back_size == want_size);
	back = malloc(back_size);
	nb_format_begin(&w, &shape, back, back_size);
	nb_format_copy(&w, &g);
	nb_format_finish(&w, NULL);
	EXPECT(memcmp(back, want, want_size) == 0);

	/* an unknown flag, the flag of a jsonb bag "" without one, and version 4 without settings, are refused */
	got[6] = 16;
	nb_write_u32(got + 24, 0, (uint32_t) nb_format_checksum(got, got_size));
	nb_write_u32(got + 28, 0, (uint32_t) (nb_format_checksum(got, got_size) >> 32));
	EXPECT(!nb_view_open(&g, got, got_size, &err) && strstr(err.message, "flags") != NULL);
	got[6] = (version == 3 ? 0 : NB_FORMAT_FLAG_NO_LENGTHS) | NB_FORMAT_FLAG_JSONB_BAG;
	nb_write_u32(got + 24, 0, (uint32_t) nb_format_checksum(got, got_size));
	nb_write_u32(got + 28, 0, (uint32_t) (nb_format_checksum(got, got_size) >> 32));
	EXPECT(version == 1 ? nb_view_open(&g, got, got_size, &err) && g.settings.jsonb_bag :
		   !nb_view_open(&g, got, got_size, &err) && strstr(err.message, "jsonb") != NULL);
	got[6] = version == 3 ? 0 : NB_FORMAT_FLAG_NO_LENGTHS;
	memset(got + 48, 0, 8);
	nb_write_u32(got + 24, 0, (uint32_t) nb_format_checksum(got, got_size));
	nb_write_u32(got + 28, 0, (uint32_t) (nb_format_checksum(got, got_size) >> 32));
	EXPECT(!nb_view_open(&g, got, got_size, &err));
done:
	raw_free(&m);
	free(want);
	free(got);
	free(back);
}

static void
test_settings_v1(void)
{
	test_settings(1);
}

static void
test_settings_v2(void)
{
	test_settings(2);
}

static void
test_settings_v3(void)
{
	test_settings(3);
}

/* Set the checksum of a model patched by hand. */
static void
reseal(unsigned char *buf, size_t size)
{
	uint64_t	u = nb_format_checksum(buf, size);

	nb_write_u32(buf + 24, 0, (uint32_t) u);
	nb_write_u32(buf + 28, 0, (uint32_t) (u >> 32));
}

/* The model of shape s with the sections of view v (NULL: a model of no class), in *size bytes. */
static unsigned char *
write_shape(const NbFormatShape *s, const NbView *v, size_t *size)
{
	NbFormatWriter w;
	unsigned char *buf;

	*size = nb_format_size(s, SIZE_MAX);
	buf = malloc(*size);
	nb_format_begin(&w, s, buf, *size);
	if (v != NULL)
		nb_format_copy(&w, v);
	nb_format_finish(&w, NULL);
	return buf;
}

/* The labels of a model's bytes changed from "no", "np" to a, b and the checksum set again. */
static void
relabel(unsigned char *bytes, size_t size, char a, char b)
{
	unsigned char *at = bytes;

	while (memcmp(at, "no", 2) != 0 || (at[2] != 'n' && at[2] != 'o') || memcmp(at + 4, "yes", 3) != 0)
		at++;
	at[1] = (unsigned char) a;
	at[3] = (unsigned char) b;
	reseal(bytes, size);
}

/*
 * Version 4 with NB_FORMAT_FLAG_COMPONENTS: labels may repeat (a class of
 * several mixture components), in order, and one must; without the flag
 * they may not.  With NB_FORMAT_FLAG_NULL_LABELS too (a model of
 * components merged with one of rows skipped for a NULL label), the count
 * is at 56 as without components, the sections after it.
 */
static void
test_components(void)
{
	RawModel	m;
	unsigned char *v3;
	unsigned char *got = NULL;
	unsigned char *both = NULL;
	size_t		v3_size;
	size_t		got_size;
	size_t		both_size;
	NbView		v;
	NbFormatError err;
	NbFormatShape shape;
	NbSettings	settings;

	memset(&settings, 0, sizeof(settings));
	settings.components = true;
	raw_init_v3(&m);
	m.vector_len = 0;
	raw_add_class(&m, "no", 2, 3);
	raw_add_class(&m, "np", 2, 1);
	raw_add_class(&m, "yes", 3, 2);
	raw_add_feature(&m, "words", 5, NB_FEATURE_BAG);
	raw_add_entry(&m, raw_add_item(&m, 0, "ham", 3), 1, 4, 1);
	for (uint32_t c = 0; c < 3; c++)
		m.f[0].present[c] = m.c[c].docs;
	v3 = raw_serialize(&m, &v3_size);
	EXPECT(nb_view_open(&v, v3, v3_size, &err) && !v.settings.components);
	shape = nb_view_shape(&v, &settings);
	got = write_shape(&shape, &v, &got_size);
	EXPECT(got[4] == 4 && got[6] == NB_FORMAT_FLAG_COMPONENTS);
	/* distinct labels: the flag is refused (such a model is written without it) */
	EXPECT(!nb_view_open(&v, got, got_size, &err) && strstr(err.message, "repeats") != NULL);
	relabel(got, got_size, 'o', 'o');
	EXPECT(nb_view_open(&v, got, got_size, &err) && v.settings.components && v.n_classes == 3);
	settings.null_labels = 5;
	shape = nb_view_shape(&v, &settings);
	both = write_shape(&shape, &v, &both_size);
	EXPECT(both[6] == (NB_FORMAT_FLAG_NULL_LABELS | NB_FORMAT_FLAG_COMPONENTS) &&
		   nb_read_le64(both + 56) == 5 && both_size == got_size + 8);
	EXPECT(memcmp(both + 64, got + 56, got_size - 56) == 0);
	EXPECT(nb_view_open(&v, both, both_size, &err) && v.settings.components &&
		   v.settings.null_labels == 5 && v.n_classes == 3);
	relabel(got, got_size, 'o', 'n');
	EXPECT(!nb_view_open(&v, got, got_size, &err) && strstr(err.message, "in increasing order") != NULL);
	relabel(v3, v3_size, 'o', 'o');
	EXPECT(!nb_view_open(&v, v3, v3_size, &err) && strstr(err.message, "strictly increasing") != NULL);
done:
	raw_free(&m);
	free(v3);
	free(got);
	free(both);
}

/*
 * Rows skipped for a NULL label: a version 3 model with a count is version
 * 4 with flag NB_FORMAT_FLAG_NULL_LABELS and the count at 56 (the sections
 * from 64), the original bytes without it again; a count of 0 with its
 * flag, or past NB_NULL_LABELS_MAX, is refused.  A model of no class holds
 * the count alone (its tokenizer allowed): without the flag, or with an
 * item or options, it is refused.
 */
static void
test_null_labels(void)
{
	RawModel	m;
	unsigned char *want;
	unsigned char *got = NULL;
	unsigned char *back = NULL;
	unsigned char *none = NULL;
	size_t		want_size;
	size_t		got_size;
	size_t		back_size;
	size_t		none_size;
	NbView		v;
	NbView		g;
	NbFormatError err;
	NbFormatShape shape;
	NbSettings	settings;

	build(&m, 3);
	want = raw_serialize(&m, &want_size);
	EXPECT(nb_view_open(&v, want, want_size, &err));
	settings = v.settings;
	settings.null_labels = 7;
	shape = nb_view_shape(&v, &settings);
	got = write_shape(&shape, &v, &got_size);
	EXPECT(got_size == want_size + 16);
	EXPECT(nb_view_open(&g, got, got_size, &err) && g.version == 4 && g.settings.null_labels == 7);
	EXPECT(got[6] == NB_FORMAT_FLAG_NULL_LABELS && nb_read_le64(got + 56) == 7);
	EXPECT(memcmp(got + 64, want + 48, want_size - 48) == 0);
	settings.null_labels = 0;
	shape = nb_view_shape(&g, &settings);
	back = write_shape(&shape, &g, &back_size);
	EXPECT(back_size == want_size && memcmp(back, want, want_size) == 0);
	nb_write_u32(got + 56, 0, 0);
	reseal(got, got_size);
	EXPECT(!nb_view_open(&g, got, got_size, &err) && strstr(err.message, "NULL label") != NULL);
	nb_write_u32(got + 60, 0, 0x80000000u);
	reseal(got, got_size);
	EXPECT(!nb_view_open(&g, got, got_size, &err) && strstr(err.message, "NULL label") != NULL);

	memset(&shape, 0, sizeof(shape));
	shape.settings.null_labels = NB_NULL_LABELS_MAX;
	none = write_shape(&shape, NULL, &none_size);
	EXPECT(none_size == 64 && nb_view_open(&g, none, none_size, &err) && g.n_classes == 0 &&
		   g.settings.null_labels == NB_NULL_LABELS_MAX);
	none[6] = NB_FORMAT_FLAG_NO_LENGTHS;
	reseal(none, none_size);
	EXPECT(!nb_view_open(&g, none, none_size, &err));
	free(none);
	shape.n_tokens = 1;
	shape.token_bytes = 1;
	none = write_shape(&shape, NULL, &none_size);
	EXPECT(!nb_view_open(&g, none, none_size, &err));
	free(none);
	shape.n_tokens = 0;
	shape.token_bytes = 0;
	shape.settings.options = "{}";
	shape.settings.options_len = 2;
	none = write_shape(&shape, NULL, &none_size);
	EXPECT(!nb_view_open(&g, none, none_size, &err) && strstr(err.message, "without classes") != NULL);
done:
	raw_free(&m);
	free(want);
	free(got);
	free(back);
	free(none);
}

/*
 * Sizes computed from the layout by hand: version 1 ignores the features,
 * and a count whose bytes pass the limit, or 64 bits, gives 0 (too large)
 * rather than a wrapped-around size.
 */
static void
test_size_limits(void)
{
	NbFormatShape s;

	memset(&s, 0, sizeof(s));
	s.n_classes = 2;
	s.n_tokens = 3;
	s.n_entries = 4;
	s.label_bytes = 5;
	s.token_bytes = 6;
	/* version 1: header, docs and label lengths, token lengths and entries, entries, strings */
	s.text_only = true;
	s.n_features = UINT32_MAX;
	s.name_bytes = 1000;
	EXPECT(nb_format_size(&s, SIZE_MAX) == 32 + 2 * 12 + 3 * 8 + 4 * 20 + 5 + 6);
	/* version 2: 8 bytes of counts, F * 36 + F * C * 24 bytes of features, names */
	s.text_only = false;
	s.n_features = 1;
	s.name_bytes = 7;
	EXPECT(nb_format_size(&s, SIZE_MAX) == 32 + 8 + 2 * 12 + 3 * 8 + 4 * 20 + 5 + 6 + 36 + 2 * 24 + 7);
	EXPECT(nb_format_size(&s, 32 + 8 + 2 * 12 + 3 * 8 + 4 * 20 + 5 + 6 + 36 + 2 * 24 + 6) == 0);
	/* F * C * 24 bytes past 64 bits */
	s.n_features = UINT32_MAX;
	s.n_classes = UINT32_MAX;
	EXPECT(nb_format_size(&s, SIZE_MAX) == 0);
	/* version 3: H * 16 bytes of lengths past 64 bits */
	s.n_features = 1;
	s.n_classes = 2;
	s.lengths = true;
	s.n_lengths = UINT64_C(1) << 60;
	EXPECT(nb_format_size(&s, SIZE_MAX) == 0);
	s.n_lengths = 3;
	EXPECT(nb_format_size(&s, SIZE_MAX) ==
		   32 + 16 + 2 * 12 + 3 * 8 + 4 * 20 + 5 + 6 + 36 + 2 * 24 + 7 + 2 * 4 + 3 * 16);
done:
	;
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("format writer: version 1 bytes as documented, its view as nb_view_open's", test_writer_v1);
	run("format writer: version 2 bytes as documented, its view as nb_view_open's", test_writer_v2);
	run("format writer: version 3 bytes as documented, its view as nb_view_open's", test_writer_v3);
	run("format iterators: labels, items, features of version 1 (the implied bag \"\")",
		test_iterators_v1);
	run("format iterators: labels, items, features of version 2", test_iterators_v2);
	run("format version 4: settings of a version 1 model, and removed again", test_settings_v1);
	run("format version 4: settings of a version 2 model (no lengths), as documented", test_settings_v2);
	run("format version 4: settings of a version 3 model, as documented", test_settings_v3);
	run("format version 4: mixture components, repeated labels only with their flag", test_components);
	run("format version 4: rows skipped for a NULL label, and a model of them alone", test_null_labels);
	run("format size: by hand for each version; counts past the limit or 64 bits give 0", test_size_limits);
	return unit_done();
}
