/*
 * raw_model.c — see raw_model.h.  Plain malloc; aborts on failure.
 */
#include "raw_model.h"

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
	free(m->c);
	free(m->t);
	memset(m, 0, sizeof(*m));
}

uint32_t
raw_add_class(RawModel *m, const char *label, uint32_t len, double docs)
{
	m->c = xrealloc(m->c, sizeof(RawClass) * (m->nc + 1));
	memset(&m->c[m->nc], 0, sizeof(RawClass));
	raw_set_string(&m->c[m->nc].label, (const unsigned char *) label, len);
	m->c[m->nc].docs = docs;
	return m->nc++;
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
}

void
raw_del_token(RawModel *m, uint32_t i)
{
	free(m->t[i].str.s);
	free(m->t[i].e);
	memmove(&m->t[i], &m->t[i + 1], sizeof(RawToken) * (m->nt - i - 1));
	m->nt--;
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
	m->nc++;
}

void
raw_del_class(RawModel *m, uint32_t i)
{
	free(m->c[i].label.s);
	memmove(&m->c[i], &m->c[i + 1], sizeof(RawClass) * (m->nc - i - 1));
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

uint64_t
raw_size(const RawModel *m)
{
	uint64_t	size = NB_HEADER_SIZE + (uint64_t) m->nc * 12 + (uint64_t) m->nt * 8 +
		raw_entries(m) * 20;

	for (uint32_t i = 0; i < m->nc; i++)
		size += m->c[i].label.len;
	for (uint32_t i = 0; i < m->nt; i++)
		size += m->t[i].str.len;
	return size;
}

/* The documented layout (nb_format.h), written field by field. */
void
raw_write(const RawModel *m, unsigned char *buf)
{
	uint64_t	E = raw_entries(m);
	uint64_t	size = raw_size(m);
	unsigned char *docs = buf + NB_HEADER_SIZE;
	unsigned char *label_len = docs + (uint64_t) m->nc * 8;
	unsigned char *token_len = label_len + (uint64_t) m->nc * 4;
	unsigned char *token_entries = token_len + (uint64_t) m->nt * 4;
	unsigned char *entry_class = token_entries + (uint64_t) m->nt * 4;
	unsigned char *entry_count = entry_class + E * 4;
	unsigned char *entry_docs = entry_count + E * 8;
	unsigned char *strings = entry_docs + E * 8;
	uint64_t	e = 0;

	memset(buf, 0, NB_HEADER_SIZE);
	memcpy(buf, "NBCM", 4);
	buf[4] = NB_FORMAT_VERSION;
	nb_write_u32(buf + 8, 0, m->nc);
	nb_write_u32(buf + 12, 0, m->nt);
	nb_write_u32(buf + 16, 0, (uint32_t) E);
	nb_write_u32(buf + 20, 0, (uint32_t) (E >> 32));
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
				V;
	uint64_t	E,
				need,
				esum = 0,
				slen = 0,
				e = 0;
	const unsigned char *docs, *label_len, *token_len, *token_entries,
			   *entry_class, *entry_count, *entry_docs, *strings;

	raw_init(m);
	if (size < NB_HEADER_SIZE)
		return false;
	C = nb_read_u32(p + 8, 0);
	V = nb_read_u32(p + 12, 0);
	E = nb_read_le64(p + 16);
	/* fixed part, without overflow: each count is bounded by the size first */
	if (C > size / 12 || V > size / 8 || E > size / 20)
		return false;
	need = NB_HEADER_SIZE + (uint64_t) C * 12 + (uint64_t) V * 8 + E * 20;
	if (need > size)
		return false;
	docs = p + NB_HEADER_SIZE;
	label_len = docs + (uint64_t) C * 8;
	token_len = label_len + (uint64_t) C * 4;
	token_entries = token_len + (uint64_t) V * 4;
	entry_class = token_entries + (uint64_t) V * 4;
	entry_count = entry_class + E * 4;
	entry_docs = entry_count + E * 8;
	strings = entry_docs + E * 8;
	for (uint32_t c = 0; c < C; c++)
		slen += nb_read_u32(label_len, c);
	for (uint32_t k = 0; k < V; k++)
	{
		slen += nb_read_u32(token_len, k);
		esum += nb_read_u32(token_entries, k);
	}
	if (slen != size - need || esum != E)
		return false;
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
	return true;
}
