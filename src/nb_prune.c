/*
 * nb_prune.c — dropping tokens and features from a serialized model, see
 * nb_prune.h.
 *
 * A model's statistics are sums over rows, each feature's apart from the
 * others'.  Removing a token from every row removes its entries and
 * nothing else: a bag's class totals are sums over its entries (nb_index
 * forms them), and the rows with the bag (feature_present) still have it.
 * Removing a whole feature removes its statistics and nothing else.  So
 * the pruned model is the input with those parts left out, written in the
 * same canonical order, and is byte for byte the model of the pruned rows.
 *
 * Document lengths (format version 3) are the exception: dropping some of
 * a bag's tokens shortens the documents by amounts the histogram does not
 * tell, so the pruned model then has no lengths (it is written as versions
 * 1 and 2 write a model whose lengths are unknown).  Dropping whole
 * features, or tokens of categorical features only, keeps the histograms
 * of the bags that remain.
 */
#include "nb_prune.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "nb_mutual_info.h"

/* What happens to a whole feature. */
typedef enum FeatureFate
{
	FEATURE_KEEP,
	FEATURE_DROP,
	FEATURE_ZERO				/* a float8[] position: kept, without statistics */
} FeatureFate;

struct NbPruner
{
	const NbView *v;
	bool	   *keep_item;		/* [V] */
	uint8_t    *fate;			/* [F] FeatureFate */
	uint32_t	F;				/* features written */
	uint32_t	V;				/* items written */
	uint64_t	E;				/* entries written */
	uint64_t	label_bytes;
	uint64_t	token_bytes;
	uint64_t	name_bytes;
	bool		text_only;
	bool		lengths;		/* written with the kept bags' lengths */
	uint64_t	H;				/* length pairs written */
};

/* 2^53: every integer up to it is a double */
#define TOP_K_MAX 9007199254740992.0

void
nb_prune_options_init(NbPruneOptions *o)
{
	o->has_top_k = false;
	o->top_k = 0;
	o->min_documents = 0;
	o->has_max_fraction = false;
	o->max_document_fraction = 1;
}

NbPruneStatus
nb_prune_set_top_k(NbPruneOptions *o, double k)
{
	if (!(k >= 0 && k <= TOP_K_MAX && k == floor(k)))
		return NB_PRUNE_TOP_K_INVALID;
	o->has_top_k = true;
	o->top_k = (uint64_t) k;
	return NB_PRUNE_OK;
}

NbPruneStatus
nb_prune_set_min_documents(NbPruneOptions *o, double n)
{
	if (!(n >= 0 && isfinite(n)))
		return NB_PRUNE_MIN_DOCUMENTS_INVALID;
	o->min_documents = n;
	return NB_PRUNE_OK;
}

NbPruneStatus
nb_prune_set_max_document_fraction(NbPruneOptions *o, double f)
{
	if (!(f >= 0 && f <= 1))
		return NB_PRUNE_FRACTION_INVALID;
	o->has_max_fraction = true;
	o->max_document_fraction = f;
	return NB_PRUNE_OK;
}

/* The name is a position of the model's float8[] rows: "1" .. vector_len. */
static bool
is_position(const NbView *v, const char *name, uint32_t len)
{
	uint64_t	n = 0;

	if (v->vector_len == 0 || len == 0 || len > 10 || name[0] == '0')
		return false;
	for (uint32_t i = 0; i < len; i++)
	{
		if (name[i] < '0' || name[i] > '9')
			return false;
		n = n * 10 + (uint64_t) (name[i] - '0');
	}
	return n >= 1 && n <= v->vector_len;
}

/* min_documents and max_document_fraction: which bag tokens stay. */
static void
filter_documents(NbPruner *p, const NbPruneOptions *o)
{
	const NbView *v = p->v;
	double		D = 0;
	double		most = INFINITY;
	uint64_t	e = 0;
	uint64_t	work = 0;
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;

	for (uint32_t c = 0; c < v->n_classes; c++)
		D += nb_read_f64(v->class_docs, c);
	if (o->has_max_fraction)
		most = o->max_document_fraction * D;
	while (nb_feature_next(&it, &f))
		for (uint32_t k = f.first_item; k < f.first_item + f.n_items; k++)
		{
			uint32_t	n = nb_read_u32(v->token_entries, k);
			double		df = 0;

			nb_interrupt_count(&work, 1 + (uint64_t) n);
			for (uint32_t i = 0; i < n; i++)
				df += nb_read_f64(v->entry_docs, e + i);
			e += n;
			if (f.type == NB_FEATURE_BAG && (df < o->min_documents || df > most))
				p->keep_item[k] = false;
		}
}

/* top_k: the first k rows of nb_mutual_info among what the filters left. */
static void
keep_top(NbPruner *p, uint64_t k)
{
	const NbView *v = p->v;
	NbMiRow    *rows = nb_alloc(sizeof(NbMiRow) * (nb_mutual_info_max_rows(v) + 1));
	uint64_t	n = nb_mutual_info(v, rows);
	uint64_t	kept = 0;

	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;

	for (uint64_t i = 0; i < n; i++)
	{
		const NbMiRow *r = &rows[i];

		nb_interrupt_at(i);
		if (!r->whole_feature)
		{
			if (!p->keep_item[r->item])
				continue;
			if (kept < k)
				kept++;
			else
				p->keep_item[r->item] = false;
			continue;
		}
		if (kept < k)
			kept++;
		else
			p->fate[r->feature] = FEATURE_DROP;
	}
	nb_free(rows);
	/* a float8[] position stays, without statistics */
	while (nb_feature_next(&it, &f))
		if (p->fate[f.index] == FEATURE_DROP && is_position(v, f.name, f.name_len))
			p->fate[f.index] = FEATURE_ZERO;
}

NbPruner *
nb_pruner_create(const NbView *v, const NbPruneOptions *o)
{
	NbPruner   *p = nb_alloc_zero(sizeof(NbPruner));
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;
	uint64_t	work = 0;
	NbStringIter labels = nb_view_labels(v);
	const char *str;
	uint32_t	len;

	p->v = v;
	p->keep_item = nb_alloc(sizeof(bool) * ((uint64_t) v->n_tokens + 1));
	memset(p->keep_item, true, sizeof(bool) * ((uint64_t) v->n_tokens + 1));
	p->fate = nb_alloc_zero((uint64_t) v->n_features + 1);
	if (o->min_documents > 0 || o->has_max_fraction)
		filter_documents(p, o);
	if (o->has_top_k)
		keep_top(p, o->top_k);

	while (nb_string_next(&labels, &str, &len))
		p->label_bytes += len;
	while (nb_feature_next(&it, &f))
	{
		bool		written = p->fate[f.index] != FEATURE_DROP;

		if (written)
		{
			p->F++;
			p->name_bytes += f.name_len;
		}
		for (uint32_t k = f.first_item; k < f.first_item + f.n_items; k++)
		{
			uint32_t	n = nb_read_u32(v->token_entries, k);

			nb_interrupt_count(&work, 1);
			/* a dropped categorical feature's values go with it */
			if (!written)
				p->keep_item[k] = false;
			if (p->keep_item[k])
			{
				p->V++;
				p->E += n;
				p->token_bytes += nb_read_u32(v->token_len, k);
			}
		}
	}

	/* lengths stay exact while no bag that remains loses a token */
	p->lengths = nb_view_has_lengths(v);
	it = nb_view_features(v);
	while (p->lengths && nb_feature_next(&it, &f))
	{
		bool		bag = f.type == NB_FEATURE_BAG && p->fate[f.index] != FEATURE_DROP;

		if (!bag)
			continue;
		for (uint32_t k = f.first_item; k < f.first_item + f.n_items; k++)
		{
			nb_interrupt_count(&work, 1);
			if (!p->keep_item[k])
				p->lengths = false;
		}
		for (uint32_t c = 0; c < v->n_classes; c++)
			p->H += nb_view_length_pairs(v, f.index, c);
	}
	if (p->lengths)
	{
		/* version 3 needs a bag: without one left, the model is version 2 */
		bool		bag = false;

		it = nb_view_features(v);
		while (nb_feature_next(&it, &f))
			if (f.type == NB_FEATURE_BAG && p->fate[f.index] != FEATURE_DROP)
				bag = true;
		p->lengths = bag;
	}
	if (!p->lengths)
		p->H = 0;

	/* as the trainer decides: only the bag "" present in every document is version 1 */
	p->text_only = false;
	it = nb_view_features(v);
	while (p->F == 1 && nb_feature_next(&it, &f))
		if (p->fate[f.index] != FEATURE_DROP)
		{
			p->text_only = f.name_len == 0 && f.type == NB_FEATURE_BAG;
			for (uint32_t c = 0; p->text_only && c < v->n_classes; c++)
				if (nb_view_present(v, f.index, c) != nb_read_f64(v->class_docs, c))
					p->text_only = false;
		}
	return p;
}

/*
 * Every field not set here is zero: a format feature the pruner does not
 * know of (a statistic of whole rows) is left out rather than copied, as
 * the pruned rows would not have it.
 */
static NbFormatShape
pruner_shape(const NbPruner *p)
{
	NbFormatShape s;

	memset(&s, 0, sizeof(s));

	s.n_classes = p->v->n_classes;
	s.n_tokens = p->V;
	s.n_entries = p->E;
	s.n_features = p->F;
	s.vector_len = p->v->vector_len;
	s.label_bytes = p->label_bytes;
	s.token_bytes = p->token_bytes;
	s.name_bytes = p->name_bytes;
	s.text_only = p->text_only;
	s.lengths = p->lengths;
	s.n_lengths = p->H;
	return s;
}

size_t
nb_pruner_size(const NbPruner *p, size_t max_size)
{
	NbFormatShape s = pruner_shape(p);

	return nb_format_size(&s, max_size);
}

void
nb_pruner_write(const NbPruner *p, unsigned char *buf, size_t size, NbView *out)
{
	const NbView *v = p->v;
	uint32_t	C = v->n_classes;
	NbFormatShape shape = pruner_shape(p);
	NbFormatWriter w;
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;
	uint32_t	j = 0;			/* next feature written */
	uint32_t	k = 0;			/* next item written */
	uint64_t	e = 0;			/* next entry read */
	uint64_t	eo = 0;			/* next entry written */
	char	   *names;
	char	   *tokens;
	uint64_t	work = 0;
	uint64_t	h = 0;			/* next length pair read */
	uint64_t	ho = 0;			/* next length pair written */

	nb_format_begin(&w, &shape, buf, size);
	for (uint32_t c = 0; c < C; c++)
	{
		nb_interrupt_at(c);
		nb_write_f64(w.class_docs, c, nb_read_f64(v->class_docs, c));
		nb_write_u32(w.label_len, c, nb_read_u32(v->label_len, c));
	}
	nb_copy(w.labels, v->labels, p->label_bytes);
	names = w.feature_names;
	tokens = w.tokens;
	while (nb_feature_next(&it, &f))
	{
		FeatureFate fate = (FeatureFate) p->fate[f.index];
		NbStringIter items = nb_feature_items(v, &f);
		uint32_t	items_written = 0;

		for (uint32_t x = f.first_item; x < f.first_item + f.n_items; x++)
		{
			uint32_t	n = nb_read_u32(v->token_entries, x);
			const char *s = NULL;
			uint32_t	len = 0;

			(void) nb_string_next(&items, &s, &len);
			nb_interrupt_count(&work, 1 + (uint64_t) n + len / 64);
			if (p->keep_item[x])
			{
				nb_write_u32(w.token_len, k, len);
				nb_write_u32(w.token_entries, k, n);
				memcpy(tokens, s, len);
				tokens += len;
				memcpy(w.entry_class + eo * 4, v->entry_class + e * 4, (size_t) n * 4);
				memcpy(w.entry_count + eo * 8, v->entry_count + e * 8, (size_t) n * 8);
				memcpy(w.entry_docs + eo * 8, v->entry_docs + e * 8, (size_t) n * 8);
				eo += n;
				k++;
				items_written++;
			}
			e += n;
		}
		if (fate == FEATURE_DROP || (p->text_only && !p->lengths))
		{
			for (uint32_t c = 0; nb_view_has_lengths(v) && c < C; c++)
				h += nb_view_length_pairs(v, f.index, c);
			continue;
		}
		for (uint32_t c = 0; nb_view_has_lengths(v) && c < C; c++)
		{
			uint32_t	n = nb_view_length_pairs(v, f.index, c);

			if (p->lengths)
			{
				nb_write_u32(w.length_pairs, (uint64_t) j * C + c, n);
				memcpy(w.length_value + ho * 8, v->length_value + h * 8, (size_t) n * 8);
				memcpy(w.length_weight + ho * 8, v->length_weight + h * 8, (size_t) n * 8);
				ho += n;
			}
			h += n;
		}
		nb_write_u32(w.feature_name_len, j, f.name_len);
		nb_write_u32(w.feature_type, j, (uint32_t) f.type);
		nb_write_u32(w.feature_items, j, items_written);
		memcpy(names, f.name, f.name_len);
		names += f.name_len;
		for (uint32_t c = 0; c < C; c++)
		{
			uint64_t	x = (uint64_t) j * C + c;
			bool		zero = fate == FEATURE_ZERO;

			nb_write_f64(w.feature_present, x, zero ? 0 : nb_view_present(v, f.index, c));
			nb_write_f64(w.feature_a, x, zero ? 0 : nb_view_a(v, f.index, c));
			nb_write_f64(w.feature_b, x, zero ? 0 : nb_view_b(v, f.index, c));
		}
		nb_interrupt_count(&work, C);
		nb_write_f64(w.feature_rows, j, fate == FEATURE_ZERO ? 0 : nb_read_f64(v->feature_rows, f.index));
		nb_write_f64(w.feature_mean, j, fate == FEATURE_ZERO ? 0 : nb_read_f64(v->feature_mean, f.index));
		nb_write_f64(w.feature_m2, j, fate == FEATURE_ZERO ? 0 : nb_read_f64(v->feature_m2, f.index));
		j++;
	}
	nb_format_finish(&w, out);
}

void
nb_pruner_destroy(NbPruner *p)
{
	nb_free(p->keep_item);
	nb_free(p->fate);
	nb_free(p);
}
