/*
 * raw_model.c — see raw_model.h.  Plain malloc; aborts on failure.
 */
#include "raw_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_check.h"
#include "nb_format.h"

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
	{
		fprintf(stderr, "raw_model: out of memory\n");
		abort();
	}
	return p;
}

void
raw_set_string(RawString *s, const unsigned char *bytes, uint32_t len)
{
	unsigned char *copy = xrealloc(NULL, len);

	if (len)
		memcpy(copy, bytes, len);
	free(s->s);
	s->s = copy;
	s->len = len;
}

void
raw_init(RawModel *m)
{
	memset(m, 0, sizeof(*m));
	m->version = NB_FORMAT_VERSION_TEXT;
}

void
raw_init_v2(RawModel *m)
{
	memset(m, 0, sizeof(*m));
	m->version = NB_FORMAT_VERSION_FEATURES;
}

void
raw_init_v3(RawModel *m)
{
	memset(m, 0, sizeof(*m));
	m->version = NB_FORMAT_VERSION;
}

static void
free_lengths(RawLengths *l)
{
	free(l->value);
	free(l->weight);
}

static void
free_feature(RawFeature *f)
{
	free(f->name.s);
	free(f->present);
	free(f->a);
	free(f->b);
	for (uint32_t c = 0; c < f->lengths_n; c++)
		free_lengths(&f->lengths[c]);
	free(f->lengths);
}

void
raw_set_version(RawModel *m, uint16_t version)
{
	for (uint32_t j = 0; j < m->nf && version != NB_FORMAT_VERSION; j++)
		for (uint32_t c = 0; c < m->nc; c++)
		{
			free_lengths(&m->f[j].lengths[c]);
			memset(&m->f[j].lengths[c], 0, sizeof(RawLengths));
		}
	if (version == NB_FORMAT_VERSION_TEXT)
	{
		for (uint32_t j = 0; j < m->nf; j++)
			free_feature(&m->f[j]);
		free(m->f);
		m->f = NULL;
		m->nf = 0;
		m->vector_len = 0;
	}
	m->version = version;
}

void
raw_add_length(RawModel *m, uint32_t j, uint32_t c, double length, double weight)
{
	RawLengths *l = &m->f[j].lengths[c];

	l->value = xrealloc(l->value, sizeof(double) * (l->n + 1));
	l->weight = xrealloc(l->weight, sizeof(double) * (l->n + 1));
	l->value[l->n] = length;
	l->weight[l->n] = weight;
	l->n++;
}

void
raw_free(RawModel *m)
{
	for (uint32_t i = 0; i < m->nc; i++)
		free(m->c[i].label.s);
	for (uint32_t i = 0; i < m->nt; i++)
	{
		free(m->t[i].str.s);
		free(m->t[i].e);
	}
	for (uint32_t j = 0; j < m->nf; j++)
		free_feature(&m->f[j]);
	free(m->c);
	free(m->t);
	free(m->f);
	memset(m, 0, sizeof(*m));
}

/* Per-class arrays of every feature: room for nc classes. */
static void
resize_feature_classes(RawModel *m, uint32_t nc)
{
	for (uint32_t j = 0; j < m->nf; j++)
	{
		m->f[j].present = xrealloc(m->f[j].present, sizeof(double) * nc);
		m->f[j].a = xrealloc(m->f[j].a, sizeof(double) * nc);
		m->f[j].b = xrealloc(m->f[j].b, sizeof(double) * nc);
		for (uint32_t c = nc; c < m->f[j].lengths_n; c++)
			free_lengths(&m->f[j].lengths[c]);
		m->f[j].lengths = xrealloc(m->f[j].lengths, sizeof(RawLengths) * nc);
		for (uint32_t c = m->f[j].lengths_n; c < nc; c++)
			memset(&m->f[j].lengths[c], 0, sizeof(RawLengths));
		m->f[j].lengths_n = nc;
	}
}

uint32_t
raw_add_class(RawModel *m, const char *label, uint32_t len, double docs)
{
	m->c = xrealloc(m->c, sizeof(RawClass) * (m->nc + 1));
	memset(&m->c[m->nc], 0, sizeof(RawClass));
	raw_set_string(&m->c[m->nc].label, (const unsigned char *) label, len);
	m->c[m->nc].docs = docs;
	resize_feature_classes(m, m->nc + 1);
	for (uint32_t j = 0; j < m->nf; j++)
	{
		m->f[j].present[m->nc] = m->f[j].a[m->nc] = m->f[j].b[m->nc] = 0;
		memset(&m->f[j].lengths[m->nc], 0, sizeof(RawLengths));
	}
	return m->nc++;
}

uint32_t
raw_add_feature(RawModel *m, const char *name, uint32_t len, uint32_t type)
{
	RawFeature *f;

	m->f = xrealloc(m->f, sizeof(RawFeature) * (m->nf + 1));
	f = &m->f[m->nf];
	memset(f, 0, sizeof(*f));
	raw_set_string(&f->name, (const unsigned char *) name, len);
	f->type = type;
	f->present = xrealloc(NULL, sizeof(double) * (m->nc ? m->nc : 1));
	f->a = xrealloc(NULL, sizeof(double) * (m->nc ? m->nc : 1));
	f->b = xrealloc(NULL, sizeof(double) * (m->nc ? m->nc : 1));
	f->lengths = xrealloc(NULL, sizeof(RawLengths) * (m->nc ? m->nc : 1));
	f->lengths_n = m->nc;
	for (uint32_t c = 0; c < m->nc; c++)
	{
		f->present[c] = f->a[c] = f->b[c] = 0;
		memset(&f->lengths[c], 0, sizeof(RawLengths));
	}
	return m->nf++;
}

uint32_t
raw_add_item(RawModel *m, uint32_t feature, const char *str, uint32_t len)
{
	if (feature + 1 != m->nf)
	{
		fprintf(stderr, "raw_add_item: items go to the last feature\n");
		abort();
	}
	m->f[feature].items++;
	return raw_add_token(m, str, len);
}

uint32_t
raw_token_feature(const RawModel *m, uint32_t i)
{
	uint64_t	end = 0;

	for (uint32_t j = 0; j < m->nf; j++)
	{
		end += m->f[j].items;
		if (i < end)
			return j;
	}
	return m->nf;
}

void
raw_del_feature(RawModel *m, uint32_t j)
{
	uint64_t	first = 0,
				total = 0;

	for (uint32_t k = 0; k < m->nf; k++)
	{
		if (k < j)
			first += m->f[k].items;
		total += m->f[k].items;
	}
	if (total == m->nt)
		for (uint32_t i = 0; i < m->f[j].items; i++)
		{
			free(m->t[first].str.s);
			free(m->t[first].e);
			memmove(&m->t[first], &m->t[first + 1], sizeof(RawToken) * (m->nt - first - 1));
			m->nt--;
		}
	free_feature(&m->f[j]);
	memmove(&m->f[j], &m->f[j + 1], sizeof(RawFeature) * (m->nf - j - 1));
	m->nf--;
}

uint32_t
raw_add_token(RawModel *m, const char *str, uint32_t len)
{
	m->t = xrealloc(m->t, sizeof(RawToken) * (m->nt + 1));
	memset(&m->t[m->nt], 0, sizeof(RawToken));
	raw_set_string(&m->t[m->nt].str, (const unsigned char *) str, len);
	return m->nt++;
}

void
raw_add_entry(RawModel *m, uint32_t token, uint32_t cls, double count, double docs)
{
	RawToken   *t = &m->t[token];

	t->e = xrealloc(t->e, sizeof(RawEntry) * (t->n + 1));
	t->e[t->n].cls = cls;
	t->e[t->n].count = count;
	t->e[t->n].docs = docs;
	t->n++;
}

void
raw_dup_token(RawModel *m, uint32_t i)
{
	RawToken	copy;
	uint32_t	j = raw_token_feature(m, i);

	copy.str.s = NULL;
	raw_set_string(&copy.str, m->t[i].str.s, m->t[i].str.len);
	copy.n = m->t[i].n;
	copy.e = xrealloc(NULL, sizeof(RawEntry) * copy.n);
	if (copy.n)
		memcpy(copy.e, m->t[i].e, sizeof(RawEntry) * copy.n);
	m->t = xrealloc(m->t, sizeof(RawToken) * (m->nt + 1));
	memmove(&m->t[i + 2], &m->t[i + 1], sizeof(RawToken) * (m->nt - i - 1));
	m->t[i + 1] = copy;
	m->nt++;
	if (j < m->nf)
		m->f[j].items++;
}

void
raw_del_token(RawModel *m, uint32_t i)
{
	uint32_t	j = raw_token_feature(m, i);

	free(m->t[i].str.s);
	free(m->t[i].e);
	memmove(&m->t[i], &m->t[i + 1], sizeof(RawToken) * (m->nt - i - 1));
	m->nt--;
	if (j < m->nf)
		m->f[j].items--;
}

void
raw_dup_class(RawModel *m, uint32_t i)
{
	RawClass	copy;

	copy.label.s = NULL;
	raw_set_string(&copy.label, m->c[i].label.s, m->c[i].label.len);
	copy.docs = m->c[i].docs;
	m->c = xrealloc(m->c, sizeof(RawClass) * (m->nc + 1));
	memmove(&m->c[i + 2], &m->c[i + 1], sizeof(RawClass) * (m->nc - i - 1));
	m->c[i + 1] = copy;
	resize_feature_classes(m, m->nc + 1);
	for (uint32_t j = 0; j < m->nf; j++)
	{
		RawFeature *f = &m->f[j];

		RawLengths *l;

		memmove(&f->present[i + 1], &f->present[i], sizeof(double) * (m->nc - i));
		memmove(&f->a[i + 1], &f->a[i], sizeof(double) * (m->nc - i));
		memmove(&f->b[i + 1], &f->b[i], sizeof(double) * (m->nc - i));
		memmove(&f->lengths[i + 1], &f->lengths[i], sizeof(RawLengths) * (m->nc - i));
		/* the copy gets arrays of its own */
		l = &f->lengths[i + 1];
		l->value = memcpy(xrealloc(NULL, sizeof(double) * l->n), l->value, sizeof(double) * l->n);
		l->weight = memcpy(xrealloc(NULL, sizeof(double) * l->n), l->weight, sizeof(double) * l->n);
	}
	m->nc++;
}

void
raw_del_class(RawModel *m, uint32_t i)
{
	free(m->c[i].label.s);
	memmove(&m->c[i], &m->c[i + 1], sizeof(RawClass) * (m->nc - i - 1));
	for (uint32_t j = 0; j < m->nf; j++)
	{
		RawFeature *f = &m->f[j];

		memmove(&f->present[i], &f->present[i + 1], sizeof(double) * (m->nc - i - 1));
		memmove(&f->a[i], &f->a[i + 1], sizeof(double) * (m->nc - i - 1));
		memmove(&f->b[i], &f->b[i + 1], sizeof(double) * (m->nc - i - 1));
		free_lengths(&f->lengths[i]);
		memmove(&f->lengths[i], &f->lengths[i + 1], sizeof(RawLengths) * (f->lengths_n - i - 1));
		f->lengths_n--;
	}
	m->nc--;
}

static uint64_t
raw_entries(const RawModel *m)
{
	uint64_t	E = 0;

	for (uint32_t i = 0; i < m->nt; i++)
		E += m->t[i].n;
	return E;
}

/* Versions 2 and 3: the feature arrays. */
static bool
is_v2(const RawModel *m)
{
	return m->version != NB_FORMAT_VERSION_TEXT;
}

/* Version 3 (or any but 1 and 2): the length arrays. */
static bool
is_v3(const RawModel *m)
{
	return m->version != NB_FORMAT_VERSION_TEXT && m->version != NB_FORMAT_VERSION_FEATURES;
}

static uint64_t
raw_lengths(const RawModel *m)
{
	uint64_t	H = 0;

	for (uint32_t j = 0; j < m->nf; j++)
		for (uint32_t c = 0; c < m->nc; c++)
			H += m->f[j].lengths[c].n;
	return H;
}

uint64_t
raw_size(const RawModel *m)
{
	uint64_t	size = NB_HEADER_SIZE + (uint64_t) m->nc * 12 + (uint64_t) m->nt * 8 +
		raw_entries(m) * 20;

	for (uint32_t i = 0; i < m->nc; i++)
		size += m->c[i].label.len;
	for (uint32_t i = 0; i < m->nt; i++)
		size += m->t[i].str.len;
	if (is_v2(m))
	{
		size += 8 + (uint64_t) m->nf * (3 * 4 + 3 * 8) + (uint64_t) m->nf * m->nc * 3 * 8;
		for (uint32_t j = 0; j < m->nf; j++)
			size += m->f[j].name.len;
	}
	if (is_v3(m))
		size += 8 + (uint64_t) m->nf * m->nc * 4 + raw_lengths(m) * 16;
	return size;
}

/* The documented layout (nb_format.h), written field by field. */
void
raw_write(const RawModel *m, unsigned char *buf)
{
	uint64_t	E = raw_entries(m);
	uint64_t	size = raw_size(m);
	uint64_t	F = m->nf;
	uint64_t	FC = F * m->nc;
	uint64_t	H = raw_lengths(m);
	unsigned char *docs = buf + NB_HEADER_SIZE + (is_v3(m) ? 16 : is_v2(m) ? 8 : 0);
	unsigned char *label_len = docs + (uint64_t) m->nc * 8;
	unsigned char *token_len = label_len + (uint64_t) m->nc * 4;
	unsigned char *token_entries = token_len + (uint64_t) m->nt * 4;
	unsigned char *entry_class = token_entries + (uint64_t) m->nt * 4;
	unsigned char *entry_count = entry_class + E * 4;
	unsigned char *entry_docs = entry_count + E * 8;
	unsigned char *fend = entry_docs + E * 8;
	unsigned char *name_len = fend;
	unsigned char *type = name_len + F * 4;
	unsigned char *items = type + F * 4;
	unsigned char *present = items + F * 4;
	unsigned char *fa = present + FC * 8;
	unsigned char *fb = fa + FC * 8;
	unsigned char *rows = fb + FC * 8;
	unsigned char *mean = rows + F * 8;
	unsigned char *m2 = mean + F * 8;
	unsigned char *pairs = m2 + F * 8;
	unsigned char *lvalue = pairs + FC * 4;
	unsigned char *lweight = lvalue + H * 8;
	unsigned char *strings = is_v3(m) ? lweight + H * 8 : is_v2(m) ? m2 + F * 8 : fend;
	uint64_t	e = 0;
	uint64_t	h = 0;

	memset(buf, 0, NB_HEADER_SIZE);
	memcpy(buf, "NBCM", 4);
	buf[4] = (unsigned char) m->version;
	buf[5] = (unsigned char) (m->version >> 8);
	nb_write_u32(buf + 8, 0, m->nc);
	nb_write_u32(buf + 12, 0, m->nt);
	nb_write_u32(buf + 16, 0, (uint32_t) E);
	nb_write_u32(buf + 20, 0, (uint32_t) (E >> 32));
	if (is_v2(m))
	{
		nb_write_u32(buf + NB_HEADER_SIZE, 0, m->nf);
		nb_write_u32(buf + NB_HEADER_SIZE, 1, m->vector_len);
	}
	if (is_v3(m))
	{
		nb_write_u32(buf + NB_HEADER_SIZE, 2, (uint32_t) H);
		nb_write_u32(buf + NB_HEADER_SIZE, 3, (uint32_t) (H >> 32));
		for (uint32_t j = 0; j < m->nf; j++)
			for (uint32_t c = 0; c < m->nc; c++)
			{
				const RawLengths *l = &m->f[j].lengths[c];

				nb_write_u32(pairs, (uint64_t) j * m->nc + c, l->n);
				for (uint32_t i = 0; i < l->n; i++, h++)
				{
					nb_write_f64(lvalue, h, l->value[i]);
					nb_write_f64(lweight, h, l->weight[i]);
				}
			}
	}
	for (uint32_t c = 0; c < m->nc; c++)
	{
		nb_write_f64(docs, c, m->c[c].docs);
		nb_write_u32(label_len, c, m->c[c].label.len);
		if (m->c[c].label.len)
			memcpy(strings, m->c[c].label.s, m->c[c].label.len);
		strings += m->c[c].label.len;
	}
	for (uint32_t k = 0; k < m->nt; k++)
	{
		nb_write_u32(token_len, k, m->t[k].str.len);
		nb_write_u32(token_entries, k, m->t[k].n);
		if (m->t[k].str.len)
			memcpy(strings, m->t[k].str.s, m->t[k].str.len);
		strings += m->t[k].str.len;
		for (uint32_t i = 0; i < m->t[k].n; i++, e++)
		{
			nb_write_u32(entry_class, e, m->t[k].e[i].cls);
			nb_write_f64(entry_count, e, m->t[k].e[i].count);
			nb_write_f64(entry_docs, e, m->t[k].e[i].docs);
		}
	}
	if (is_v2(m))
		for (uint32_t j = 0; j < m->nf; j++)
		{
			const RawFeature *f = &m->f[j];

			nb_write_u32(name_len, j, f->name.len);
			nb_write_u32(type, j, f->type);
			nb_write_u32(items, j, f->items);
			for (uint32_t c = 0; c < m->nc; c++)
			{
				nb_write_f64(present, (uint64_t) j * m->nc + c, f->present[c]);
				nb_write_f64(fa, (uint64_t) j * m->nc + c, f->a[c]);
				nb_write_f64(fb, (uint64_t) j * m->nc + c, f->b[c]);
			}
			nb_write_f64(rows, j, f->rows);
			nb_write_f64(mean, j, f->mean);
			nb_write_f64(m2, j, f->m2);
			if (f->name.len)
				memcpy(strings, f->name.s, f->name.len);
			strings += f->name.len;
		}
	nbt_fix_checksum(buf, (size_t) size);
}

unsigned char *
raw_serialize(const RawModel *m, size_t *size)
{
	unsigned char *buf;

	*size = (size_t) raw_size(m);
	buf = xrealloc(NULL, *size);
	raw_write(m, buf);
	return buf;
}

bool
raw_parse(RawModel *m, const unsigned char *p, size_t size)
{
	uint32_t	C,
				V,
				F = 0;
	uint64_t	E,
				H = 0,
				hsum = 0,
				need,
				esum = 0,
				slen = 0,
				e = 0;
	uint16_t	version;
	bool		v2;
	bool		v3;
	size_t		body = NB_HEADER_SIZE;
	const unsigned char *docs, *label_len, *token_len, *token_entries,
			   *entry_class, *entry_count, *entry_docs, *strings,
			   *name_len = NULL, *type = NULL, *items = NULL, *present = NULL,
			   *fa = NULL, *fb = NULL, *rows = NULL, *mean = NULL, *m2 = NULL,
			   *pairs = NULL, *lvalue = NULL, *lweight = NULL;

	raw_init(m);
	if (size < NB_HEADER_SIZE)
		return false;
	version = (uint16_t) (p[4] | p[5] << 8);
	v2 = version != NB_FORMAT_VERSION_TEXT;
	v3 = v2 && version != NB_FORMAT_VERSION_FEATURES;
	C = nb_read_u32(p + 8, 0);
	V = nb_read_u32(p + 12, 0);
	E = nb_read_le64(p + 16);
	if (v2)
	{
		if (size < NB_HEADER_SIZE + 8)
			return false;
		F = nb_read_u32(p + NB_HEADER_SIZE, 0);
		body += 8;
	}
	if (v3)
	{
		if (size < NB_HEADER_SIZE + 16)
			return false;
		H = nb_read_le64(p + NB_HEADER_SIZE + 8);
		body += 8;
	}
	/* fixed part, without overflow: each count is bounded by the size first */
	if (C > size / 12 || V > size / 8 || E > size / 20 || F > size / 36 || H > size / 16 ||
		(C > 0 && F > size / 28 / C))
		return false;
	need = body + (uint64_t) C * 12 + (uint64_t) V * 8 + E * 20 +
		(uint64_t) F * 36 + (uint64_t) F * C * (v3 ? 28 : 24) + H * 16;
	if (need > size)
		return false;
	docs = p + body;
	label_len = docs + (uint64_t) C * 8;
	token_len = label_len + (uint64_t) C * 4;
	token_entries = token_len + (uint64_t) V * 4;
	entry_class = token_entries + (uint64_t) V * 4;
	entry_count = entry_class + E * 4;
	entry_docs = entry_count + E * 8;
	strings = entry_docs + E * 8;
	if (v2)
	{
		name_len = strings;
		type = name_len + (uint64_t) F * 4;
		items = type + (uint64_t) F * 4;
		present = items + (uint64_t) F * 4;
		fa = present + (uint64_t) F * C * 8;
		fb = fa + (uint64_t) F * C * 8;
		rows = fb + (uint64_t) F * C * 8;
		mean = rows + (uint64_t) F * 8;
		m2 = mean + (uint64_t) F * 8;
		strings = m2 + (uint64_t) F * 8;
	}
	if (v3)
	{
		pairs = strings;
		lvalue = pairs + (uint64_t) F * C * 4;
		lweight = lvalue + H * 8;
		strings = lweight + H * 8;
		for (uint64_t x = 0; x < (uint64_t) F * C; x++)
			hsum += nb_read_u32(pairs, x);
	}
	for (uint32_t c = 0; c < C; c++)
		slen += nb_read_u32(label_len, c);
	for (uint32_t k = 0; k < V; k++)
	{
		slen += nb_read_u32(token_len, k);
		esum += nb_read_u32(token_entries, k);
	}
	for (uint32_t j = 0; j < F; j++)
		slen += nb_read_u32(name_len, j);
	if (slen != size - need || esum != E || hsum != H)
		return false;
	m->version = version;
	if (v2)
		m->vector_len = nb_read_u32(p + NB_HEADER_SIZE, 1);
	for (uint32_t c = 0; c < C; c++)
	{
		uint32_t	len = nb_read_u32(label_len, c);

		raw_add_class(m, (const char *) strings, len, nb_read_f64(docs, c));
		strings += len;
	}
	for (uint32_t k = 0; k < V; k++)
	{
		uint32_t	len = nb_read_u32(token_len, k);
		uint32_t	n = nb_read_u32(token_entries, k);

		raw_add_token(m, (const char *) strings, len);
		strings += len;
		for (uint32_t i = 0; i < n; i++, e++)
			raw_add_entry(m, k, nb_read_u32(entry_class, e), nb_read_f64(entry_count, e),
						  nb_read_f64(entry_docs, e));
	}
	for (uint32_t j = 0; j < F; j++)
	{
		uint32_t	len = nb_read_u32(name_len, j);
		RawFeature *f;

		raw_add_feature(m, (const char *) strings, len, nb_read_u32(type, j));
		strings += len;
		f = &m->f[j];
		f->items = nb_read_u32(items, j);
		for (uint32_t c = 0; c < C; c++)
		{
			f->present[c] = nb_read_f64(present, (uint64_t) j * C + c);
			f->a[c] = nb_read_f64(fa, (uint64_t) j * C + c);
			f->b[c] = nb_read_f64(fb, (uint64_t) j * C + c);
		}
		f->rows = nb_read_f64(rows, j);
		f->mean = nb_read_f64(mean, j);
		f->m2 = nb_read_f64(m2, j);
	}
	for (uint32_t j = 0, h = 0; v3 && j < F; j++)
		for (uint32_t c = 0; c < C; c++)
			for (uint32_t n = nb_read_u32(pairs, (uint64_t) j * C + c); n > 0; n--, h++)
				raw_add_length(m, j, c, nb_read_f64(lvalue, h), nb_read_f64(lweight, h));
	return true;
}
