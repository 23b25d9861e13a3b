/*
 * nb_merge.c — merging serialized models as sorted runs, see nb_merge.h.
 *
 * nb_merger_create merges the small parts first (labels, feature names and
 * the per-class statistics of every feature), then the items of each
 * feature: two inputs side by side, more through a heap ordered by their
 * current items.  A stretch of items that one input has alone is copied
 * with a few memcpy calls; an item of several inputs gets its entries added
 * up class by class, in input order.  The items go to scratch arrays sized
 * for all input items (only what is written is touched), which gives the
 * exact size; nb_merger_write then fills nb_format's layout with them.
 */
#include "nb_merge.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"

#define NONE UINT32_MAX

void
nb_merge_moments(double *n, double *mean, double *m2, double nb, double meanb, double m2b)
{
	double		total = *n + nb;
	double		delta = meanb - *mean;

	if (nb == 0)
		return;
	if (*n == 0)
	{
		/* exactly the other sample (the formula would compute inf * 0 for huge means) */
		*n = nb;
		*mean = meanb;
		*m2 = m2b;
		return;
	}
	*mean += delta * (nb / total);
	*m2 += m2b + delta * delta * (*n * nb / total);
	*n = total;
}

/* Position of an input in its items: the next item, its first entry and string. */
typedef struct Cursor
{
	uint32_t	item;
	uint64_t	entry;
	size_t		off;
} Cursor;

/* The merged items and entries as they are made, and where the next ones go. */
typedef struct Out
{
	unsigned char *token_len;
	unsigned char *token_entries;
	unsigned char *entry_class;
	unsigned char *entry_count;
	unsigned char *entry_docs;
	char	   *tokens_start;
	char	   *tokens;			/* where the next item's string goes */
	uint64_t	k;				/* next item */
	uint64_t	e;				/* next entry */
	uint64_t	work;			/* units since the last cancellation point */
} Out;

struct NbMerger
{
	const NbView *in;
	uint32_t	n;
	/* classes: the union of the labels, in order */
	uint32_t	C;
	size_t	   *class_base;		/* [n]: input i's classes start here in class_map */
	uint32_t   *class_map;		/* input class -> output class */
	const char **label;
	uint32_t   *label_len;
	double	   *class_docs;
	/* features: the union of the names, in order */
	uint32_t	F;
	size_t	   *feature_base;	/* [n]: input i's features start here in feature_map */
	uint32_t   *feature_map;	/* input feature -> output feature */
	uint32_t   *feature_src;	/* [F * n]: the input's feature, or NONE */
	const char **name;
	uint32_t   *name_len;
	uint32_t   *type;
	uint32_t   *items;			/* [F]: output items of each feature */
	double	   *present;		/* [F * C] */
	double	   *fa;
	double	   *fb;
	double	   *rows;			/* [F] */
	double	   *mean;
	double	   *m2;
	uint32_t	vector_len;
	bool		text_only;
	bool		overflow;		/* a class or feature statistic is not finite */
	/* document lengths (version 3): per output (feature, class) a run of bins */
	bool		lengths;
	uint64_t	H;
	uint32_t   *length_pairs;	/* [F * C] */
	double	   *length_value;
	double	   *length_weight;
	/* items */
	uint64_t	V;
	uint64_t	E;
	size_t		label_bytes;
	size_t		token_bytes;
	size_t		name_bytes;
	Out			out;			/* the items, merged by nb_merger_create */
	/* scratch for items with several inputs: per output class */
	uint64_t   *stamp;
	uint64_t	stamp_now;
	double	   *acc_count;
	double	   *acc_docs;
	uint32_t   *touched;
};

NbMergeStatus
nb_merge_check(const NbView *earlier, uint32_t n, const NbView *v, NbMergeConflict *conflict)
{
	uint32_t	first = NONE;

	conflict->earlier_vector_len = 0;
	for (uint32_t i = 0; i < n; i++)
		if (earlier[i].vector_len != 0)
			conflict->earlier_vector_len = earlier[i].vector_len;
	if (v->vector_len != 0 && conflict->earlier_vector_len != 0 &&
		v->vector_len != conflict->earlier_vector_len)
		return NB_MERGE_VECTOR_CONFLICT;

	/* both name lists are sorted: walk them side by side */
	for (uint32_t i = 0; i < n; i++)
	{
		const NbView *e = &earlier[i];
		NbStringIter enames = nb_view_feature_names(e);
		NbStringIter vnames = nb_view_feature_names(v);
		const char *ename;
		uint32_t	elen;
		const char *vname;
		uint32_t	vlen;
		uint32_t	k = 0;
		bool		more = nb_string_next(&enames, &ename, &elen);

		for (uint32_t j = 0; j < first && more && nb_string_next(&vnames, &vname, &vlen); j++)
		{
			int			c = -1;

			while (more && (c = nb_strcmp(ename, elen, vname, vlen)) < 0)
				if ((more = nb_string_next(&enames, &ename, &elen)))
					k++;
			if (c == 0 && nb_view_feature_type(e, k) != nb_view_feature_type(v, j))
			{
				first = j;
				conflict->earlier_type = nb_view_feature_type(e, k);
			}
		}
	}
	if (first == NONE)
		return NB_MERGE_OK;
	conflict->feature = first;
	return NB_MERGE_TYPE_CONFLICT;
}

/*
 * The union of n sorted string lists (lists[i] has count[i] strings, lengths
 * in len_arrays[i]); maps every input string to its output position and
 * returns the number of output strings, whose pointers and lengths go to
 * out / out_len (room for the sum of the counts).  Few strings (labels,
 * feature names): a linear scan for the smallest head is enough.
 */
static uint32_t
union_strings(uint32_t n, const char *const *areas, const unsigned char *const *len_arrays,
			  const uint32_t *count, const size_t *base, uint32_t *map,
			  const char **out, uint32_t *out_len, size_t *bytes)
{
	uint32_t   *pos = nb_alloc_zero(sizeof(uint32_t) * n);
	size_t	   *off = nb_alloc_zero(sizeof(size_t) * n);
	uint32_t	total = 0;

	*bytes = 0;
	for (;;)
	{
		int64_t		best = -1;
		const char *bs = NULL;
		uint32_t	blen = 0;

		for (uint32_t i = 0; i < n; i++)
		{
			const char *s;
			uint32_t	len;

			if (pos[i] >= count[i])
				continue;
			s = areas[i] + off[i];
			len = nb_read_u32(len_arrays[i], pos[i]);
			if (best < 0 || nb_strcmp(s, len, bs, blen) < 0)
			{
				best = i;
				bs = s;
				blen = len;
			}
		}
		if (best < 0)
			break;
		out[total] = bs;
		out_len[total] = blen;
		*bytes += blen;
		for (uint32_t i = (uint32_t) best; i < n; i++)
		{
			uint32_t	len;

			if (pos[i] >= count[i])
				continue;
			len = nb_read_u32(len_arrays[i], pos[i]);
			if (nb_strcmp(areas[i] + off[i], len, bs, blen) != 0)
				continue;
			map[base[i] + pos[i]] = total;
			pos[i]++;
			off[i] += len;
		}
		total++;
	}
	nb_free(pos);
	nb_free(off);
	return total;
}

static void
merge_classes(NbMerger *m)
{
	const char **areas = nb_alloc(sizeof(char *) * m->n);
	const unsigned char **lens = nb_alloc(sizeof(unsigned char *) * m->n);
	uint32_t   *count = nb_alloc(sizeof(uint32_t) * m->n);
	size_t		total = 0;

	m->class_base = nb_alloc(sizeof(size_t) * m->n);
	for (uint32_t i = 0; i < m->n; i++)
	{
		areas[i] = m->in[i].labels;
		lens[i] = m->in[i].label_len;
		count[i] = m->in[i].n_classes;
		m->class_base[i] = total;
		total += count[i];
	}
	m->class_map = nb_alloc(sizeof(uint32_t) * total);
	m->label = nb_alloc(sizeof(char *) * total);
	m->label_len = nb_alloc(sizeof(uint32_t) * total);
	m->C = union_strings(m->n, areas, lens, count, m->class_base, m->class_map,
						 m->label, m->label_len, &m->label_bytes);
	m->class_docs = nb_alloc_zero(sizeof(double) * m->C);
	for (uint32_t i = 0; i < m->n; i++)
		for (uint32_t c = 0; c < count[i]; c++)
		{
			double	   *d = &m->class_docs[m->class_map[m->class_base[i] + c]];

			*d += nb_read_f64(m->in[i].class_docs, c);
			if (!isfinite(*d))
				m->overflow = true;
		}
	nb_free(areas);
	nb_free(lens);
	nb_free(count);
}

static void
merge_features(NbMerger *m)
{
	const char **areas = nb_alloc(sizeof(char *) * m->n);
	const unsigned char **lens = nb_alloc(sizeof(unsigned char *) * m->n);
	uint32_t   *count = nb_alloc(sizeof(uint32_t) * m->n);
	size_t		total = 0;
	uint32_t	C;

	m->feature_base = nb_alloc(sizeof(size_t) * m->n);
	for (uint32_t i = 0; i < m->n; i++)
	{
		const NbView *v = &m->in[i];

		areas[i] = v->feature_names;
		lens[i] = v->feature_name_len;
		count[i] = v->n_features;
		m->feature_base[i] = total;
		total += count[i];
		if (v->vector_len != 0)
			m->vector_len = v->vector_len;
	}
	m->feature_map = nb_alloc(sizeof(uint32_t) * (total ? total : 1));
	m->name = nb_alloc(sizeof(char *) * (total ? total : 1));
	m->name_len = nb_alloc(sizeof(uint32_t) * (total ? total : 1));
	m->F = union_strings(m->n, areas, lens, count, m->feature_base, m->feature_map,
						 m->name, m->name_len, &m->name_bytes);

	C = m->C;
	m->feature_src = nb_alloc(sizeof(uint32_t) * ((size_t) m->F * m->n + 1));
	memset(m->feature_src, 0xff, sizeof(uint32_t) * ((size_t) m->F * m->n + 1));
	m->type = nb_alloc(sizeof(uint32_t) * (m->F + 1));
	m->items = nb_alloc_zero(sizeof(uint32_t) * (m->F + 1));
	m->present = nb_alloc_zero(sizeof(double) * ((size_t) m->F * C + 1));
	m->fa = nb_alloc_zero(sizeof(double) * ((size_t) m->F * C + 1));
	m->fb = nb_alloc_zero(sizeof(double) * ((size_t) m->F * C + 1));
	m->rows = nb_alloc_zero(sizeof(double) * (m->F + 1));
	m->mean = nb_alloc_zero(sizeof(double) * (m->F + 1));
	m->m2 = nb_alloc_zero(sizeof(double) * (m->F + 1));

	/* exactly nb_trainer_merge_view's arithmetic, input after input */
	for (uint32_t i = 0; i < m->n; i++)
	{
		const NbView *v = &m->in[i];
		const uint32_t *cmap = m->class_map + m->class_base[i];

		for (uint32_t j = 0; j < v->n_features; j++)
		{
			uint32_t	f = m->feature_map[m->feature_base[i] + j];
			NbFeatureType type = nb_view_feature_type(v, j);

			m->feature_src[(size_t) f * m->n + i] = j;
			m->type[f] = (uint32_t) type;
			for (uint32_t c = 0; c < v->n_classes; c++)
			{
				size_t		k = (size_t) f * C + cmap[c];
				double		present = nb_view_present(v, j, c);

				if (type == NB_FEATURE_GAUSSIAN)
					nb_merge_moments(&m->present[k], &m->fa[k], &m->fb[k],
									 present, nb_view_a(v, j, c), nb_view_b(v, j, c));
				else
				{
					m->present[k] += present;
					m->fa[k] += nb_view_a(v, j, c);
				}
				if (!isfinite(m->present[k]) || !isfinite(m->fa[k]) || !isfinite(m->fb[k]))
					m->overflow = true;
			}
			if (type == NB_FEATURE_GAUSSIAN)
			{
				nb_merge_moments(&m->rows[f], &m->mean[f], &m->m2[f],
								 nb_read_f64(v->feature_rows, j),
								 nb_read_f64(v->feature_mean, j),
								 nb_read_f64(v->feature_m2, j));
				if (!isfinite(m->m2[f]) || !isfinite(m->mean[f]))
					m->overflow = true;
			}
		}
	}

	/* as the trainer decides: only the bag "" present in every document */
	m->text_only = m->F == 1 && m->name_len[0] == 0 && m->type[0] == NB_FEATURE_BAG;
	for (uint32_t c = 0; m->text_only && c < C; c++)
		if (m->present[c] != m->class_docs[c])
			m->text_only = false;

	/* lengths are kept if there is a bag and no input has bags without them */
	for (uint32_t f = 0; f < m->F; f++)
		if (m->type[f] == NB_FEATURE_BAG)
			m->lengths = true;
	for (uint32_t i = 0; i < m->n; i++)
		if (!nb_view_has_lengths(&m->in[i]) && nb_view_has_bag(&m->in[i]))
			m->lengths = false;

	nb_free(areas);
	nb_free(lens);
	nb_free(count);
}

/*
 * An input's current item in the heap: its first 8 bytes as a big-endian
 * number (zero-padded) decide most comparisons without touching the rest.
 */
typedef struct Head
{
	uint64_t	prefix;
	const char *s;
	uint32_t	len;
	uint32_t	input;
} Head;

/* Input i's item number item, whose string starts at off. */
static inline void
set_head(Head *h, const NbMerger *m, uint32_t i, uint32_t item, size_t off)
{
	const char *s = m->in[i].tokens + off;
	uint32_t	len = nb_read_u32(m->in[i].token_len, item);
	uint64_t	p = 0;

	if (len >= 8)
	{
		memcpy(&p, s, 8);
#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
		p = __builtin_bswap64(p);
#endif
	}
	else
		for (uint32_t b = 0; b < len; b++)
			p |= (uint64_t) (unsigned char) s[b] << (56 - 8 * b);
	h->prefix = p;
	h->s = s;
	h->len = len;
	h->input = i;
}

/*
 * Byte order of two items.  Items contain no zero byte (nb_view_open checks
 * that), so equal prefixes with a string of at most 8 bytes leave only the
 * lengths to compare.
 */
static inline int
head_cmp(const Head *a, const Head *b)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	if (a->len > 8 && b->len > 8)
		return nb_strcmp(a->s + 8, a->len - 8, b->s + 8, b->len - 8);
	return (a->len > b->len) - (a->len < b->len);
}

/* Heap order: by item, then by input, so equal items come out in input order. */
static inline bool
head_less(const Head *a, const Head *b)
{
	int			c = head_cmp(a, b);

	return c < 0 || (c == 0 && a->input < b->input);
}

static void
sift_down(Head *heap, uint32_t size, uint32_t at)
{
	Head		x = heap[at];

	for (;;)
	{
		uint32_t	child = 2 * at + 1;

		if (child >= size)
			break;
		if (child + 1 < size && head_less(&heap[child + 1], &heap[child]))
			child++;
		if (!head_less(&heap[child], &x))
			break;
		heap[at] = heap[child];
		at = child;
	}
	heap[at] = x;
}

/*
 * With many inputs their arrays are too many streams for the hardware
 * prefetcher: fetch what input i reads next a few items ahead.
 */
#define NB_MERGE_AHEAD 16

static inline void
prefetch_input(const NbMerger *m, const Cursor *cur, uint32_t i)
{
	const NbView *v = &m->in[i];

	__builtin_prefetch(v->token_len + ((uint64_t) cur[i].item + NB_MERGE_AHEAD) * 4);
	__builtin_prefetch(v->token_entries + ((uint64_t) cur[i].item + NB_MERGE_AHEAD) * 4);
	__builtin_prefetch(v->tokens + cur[i].off + NB_MERGE_AHEAD * 8);
	__builtin_prefetch(v->entry_class + (cur[i].entry + NB_MERGE_AHEAD) * 4);
	__builtin_prefetch(v->entry_count + (cur[i].entry + NB_MERGE_AHEAD) * 8);
	__builtin_prefetch(v->entry_docs + (cur[i].entry + NB_MERGE_AHEAD) * 8);
}

/* Step input i past its current item. */
static inline void
advance(const NbMerger *m, Cursor *cur, uint32_t i)
{
	const NbView *v = &m->in[i];

	cur[i].off += nb_read_u32(v->token_len, cur[i].item);
	cur[i].entry += nb_read_u32(v->token_entries, cur[i].item);
	cur[i].item++;
}

/*
 * The next r items of input i, which make r output items alone: their
 * arrays copied as they are, but for the classes, which are mapped unless
 * the input has every class.
 */
static void
copy_run(const NbMerger *m, Cursor *cur, uint32_t i, uint64_t r, Out *o)
{
	const NbView *v = &m->in[i];
	const uint32_t *cmap = m->class_map + m->class_base[i];
	uint32_t	k = cur[i].item;
	uint64_t	e = cur[i].entry;
	uint64_t	ne = 0;
	size_t		bytes = 0;

	for (uint64_t x = 0; x < r; x++)
	{
		bytes += nb_read_u32(v->token_len, k + x);
		ne += nb_read_u32(v->token_entries, k + x);
	}
	memcpy(o->token_len + o->k * 4, v->token_len + (uint64_t) k * 4, r * 4);
	memcpy(o->token_entries + o->k * 4, v->token_entries + (uint64_t) k * 4, r * 4);
	memcpy(o->tokens, v->tokens + cur[i].off, bytes);
	if (v->n_classes == m->C)
		memcpy(o->entry_class + o->e * 4, v->entry_class + e * 4, ne * 4);
	else
		for (uint64_t x = 0; x < ne; x++)
			nb_write_u32(o->entry_class, o->e + x, cmap[nb_read_u32(v->entry_class, e + x)]);
	memcpy(o->entry_count + o->e * 8, v->entry_count + e * 8, ne * 8);
	memcpy(o->entry_docs + o->e * 8, v->entry_docs + e * 8, ne * 8);
	o->tokens += bytes;
	o->k += r;
	o->e += ne;
	cur[i].item += (uint32_t) r;
	cur[i].entry += ne;
	cur[i].off += bytes;
	nb_interrupt_count(&o->work, r + ne);
}

static void
insertion_sort(uint32_t *a, uint32_t n)
{
	for (uint32_t x = 1; x < n; x++)
	{
		uint32_t	v = a[x];
		uint32_t	y = x;

		for (; y > 0 && a[y - 1] > v; y--)
			a[y] = a[y - 1];
		a[y] = v;
	}
}

/* An item of several inputs srcs[0..k) (ascending): entries added class by class. */
static void
sum_item(NbMerger *m, Cursor *cur, const uint32_t *srcs, uint32_t k, Out *o)
{
	uint32_t	ntouched = 0;
	uint32_t	len = nb_read_u32(m->in[srcs[0]].token_len, cur[srcs[0]].item);
	const char *s = m->in[srcs[0]].tokens + cur[srcs[0]].off;

	m->stamp_now++;
	for (uint32_t x = 0; x < k; x++)
	{
		uint32_t	i = srcs[x];
		const NbView *v = &m->in[i];
		const uint32_t *cmap = m->class_map + m->class_base[i];
		uint32_t	ne = nb_read_u32(v->token_entries, cur[i].item);
		uint64_t	e = cur[i].entry;

		for (uint32_t y = 0; y < ne; y++)
		{
			uint32_t	c = cmap[nb_read_u32(v->entry_class, e + y)];

			if (m->stamp[c] != m->stamp_now)
			{
				m->stamp[c] = m->stamp_now;
				m->acc_count[c] = 0;
				m->acc_docs[c] = 0;
				m->touched[ntouched++] = c;
			}
			m->acc_count[c] += nb_read_f64(v->entry_count, e + y);
			m->acc_docs[c] += nb_read_f64(v->entry_docs, e + y);
		}
	}
	/* classes in order: sort the few, or pick them out of all classes */
	if (ntouched < m->C / 16)
		insertion_sort(m->touched, ntouched);
	else
	{
		ntouched = 0;
		for (uint32_t c = 0; c < m->C; c++)
			if (m->stamp[c] == m->stamp_now)
				m->touched[ntouched++] = c;
	}
	nb_write_u32(o->token_len, o->k, len);
	nb_write_u32(o->token_entries, o->k, ntouched);
	memcpy(o->tokens, s, len);
	o->tokens += len;
	o->k++;
	for (uint32_t y = 0; y < ntouched; y++)
	{
		uint32_t	c = m->touched[y];

		nb_write_u32(o->entry_class, o->e, c);
		nb_write_f64(o->entry_count, o->e, m->acc_count[c]);
		nb_write_f64(o->entry_docs, o->e, m->acc_docs[c]);
		o->e++;
	}
	for (uint32_t x = 0; x < k; x++)
		advance(m, cur, srcs[x]);
	nb_interrupt_count(&o->work, k + ntouched);
}

/* Merge the items of every feature into m->out. */
static void
merge_items(NbMerger *m)
{
	Cursor	   *cur = nb_alloc_zero(sizeof(Cursor) * m->n);
	Head	   *heap = nb_alloc(sizeof(Head) * m->n);
	uint32_t   *srcs = nb_alloc(sizeof(uint32_t) * m->n);
	uint32_t   *end = nb_alloc(sizeof(uint32_t) * m->n);
	uint64_t	max_items = 0;
	uint64_t	max_entries = 0;
	size_t		max_bytes = 0;
	Out		   *o = &m->out;

	/*
	 * Room for every input item: only the part written is ever touched, so
	 * an overestimate costs address space, not memory.
	 */
	for (uint32_t i = 0; i < m->n; i++)
	{
		max_items += m->in[i].n_tokens;
		max_entries += m->in[i].n_entries;
		max_bytes += m->in[i].size;
	}
	o->token_len = nb_alloc(max_items * 4 + 1);
	o->token_entries = nb_alloc(max_items * 4 + 1);
	o->entry_class = nb_alloc(max_entries * 4 + 1);
	o->entry_count = nb_alloc(max_entries * 8 + 1);
	o->entry_docs = nb_alloc(max_entries * 8 + 1);
	o->tokens_start = nb_alloc(max_bytes + 1);
	o->tokens = o->tokens_start;
	o->k = 0;
	o->e = 0;
	o->work = 0;
	m->stamp = nb_alloc_zero(sizeof(uint64_t) * (m->C + 1));
	m->acc_count = nb_alloc(sizeof(double) * (m->C + 1));
	m->acc_docs = nb_alloc(sizeof(double) * (m->C + 1));
	m->touched = nb_alloc(sizeof(uint32_t) * (m->C + 1));

	for (uint32_t f = 0; f < m->F; f++)
	{
		uint32_t	size = 0;
		uint64_t	before = o->k;

		for (uint32_t i = 0; i < m->n; i++)
		{
			uint32_t	j = m->feature_src[(size_t) f * m->n + i];

			if (j != NONE && nb_view_feature_items(&m->in[i], j) > 0)
			{
				srcs[size++] = i;
				end[i] = cur[i].item + nb_view_feature_items(&m->in[i], j);
			}
		}
		if (size == 1)
			/* one input has items: all of them, as they are */
			copy_run(m, cur, srcs[0], end[srcs[0]] - cur[srcs[0]].item, o);
		else if (size == 2)
		{
			/* two inputs, the common case: side by side, stretches of one copied whole */
			uint32_t	a = srcs[0];
			uint32_t	b = srcs[1];

			while (cur[a].item < end[a] && cur[b].item < end[b])
			{
				Head		ha;
				Head		hb;
				int			c;
				uint32_t	i;
				uint32_t	k;
				size_t		off;
				const Head *other;

				set_head(&ha, m, a, cur[a].item, cur[a].off);
				set_head(&hb, m, b, cur[b].item, cur[b].off);
				c = head_cmp(&ha, &hb);
				if (c == 0)
				{
					sum_item(m, cur, srcs, 2, o);
					continue;
				}
				i = c < 0 ? a : b;
				other = c < 0 ? &hb : &ha;
				k = cur[i].item + 1;
				off = cur[i].off + nb_read_u32(m->in[i].token_len, cur[i].item);
				while (k < end[i])
				{
					Head		h;

					set_head(&h, m, i, k, off);
					if (head_cmp(&h, other) >= 0)
						break;
					off += h.len;
					k++;
				}
				copy_run(m, cur, i, k - cur[i].item, o);
			}
			if (cur[a].item < end[a])
				copy_run(m, cur, a, end[a] - cur[a].item, o);
			if (cur[b].item < end[b])
				copy_run(m, cur, b, end[b] - cur[b].item, o);
		}
		else if (size > 2)
		{
			for (uint32_t x = 0; x < size; x++)
				set_head(&heap[x], m, srcs[x], cur[srcs[x]].item, cur[srcs[x]].off);
			for (uint32_t x = size / 2; x-- > 0;)
				sift_down(heap, size, x);
			while (size > 0)
			{
				Head		top = heap[0];
				uint32_t	k = 0;

				/*
				 * Take every input whose current item is the smallest, in
				 * input order; each goes back in with its next item at once
				 * (one sift instead of a pop and a push), behind this item.
				 */
				do
				{
					uint32_t	i = heap[0].input;

					srcs[k++] = i;
					prefetch_input(m, cur, i);
					if (cur[i].item + 1 < end[i])
						set_head(&heap[0], m, i, cur[i].item + 1,
								 cur[i].off + nb_read_u32(m->in[i].token_len, cur[i].item));
					else
						heap[0] = heap[--size];
					sift_down(heap, size, 0);
				} while (size > 0 && head_cmp(&heap[0], &top) == 0);
				if (k == 1)
					copy_run(m, cur, srcs[0], 1, o);
				else
					sum_item(m, cur, srcs, k, o);
			}
		}
		m->items[f] = (uint32_t) (o->k - before);
	}
	m->V = o->k;
	m->E = o->e;
	m->token_bytes = (size_t) (o->tokens - o->tokens_start);
	nb_free(cur);
	nb_free(heap);
	nb_free(srcs);
	nb_free(end);
}

/* A bin of one input's histogram, for the runs of one output (feature, class). */
typedef struct LengthBin
{
	double		length;
	double		weight;
	uint32_t	input;
} LengthBin;

/* By length, then input: equal lengths are added up in input order. */
static int
cmp_bin(const void *a, const void *b)
{
	const LengthBin *x = a;
	const LengthBin *y = b;

	if (x->length != y->length)
		return x->length < y->length ? -1 : 1;
	return (x->input > y->input) - (x->input < y->input);
}

/*
 * Merge the length histograms: for each output (feature, class), the bins
 * of every input that has them, equal lengths added up in input order (as
 * nb_trainer_merge_view adds them).  The sums are checked as the trainer
 * checks them (nb_trainer_sums_finite).
 */
static void
merge_lengths(NbMerger *m)
{
	uint32_t	C = m->C;
	uint64_t	total = 0;
	uint64_t  **start = nb_alloc(sizeof(uint64_t *) * m->n);
	uint32_t   *in_class = nb_alloc(sizeof(uint32_t) * ((size_t) m->n * C + 1));
	LengthBin  *bins;
	double		rows = 0;
	double		tokens = 0;
	uint64_t	work = 0;

	/* where each input's runs start, and its class of each output class */
	memset(in_class, 0xff, sizeof(uint32_t) * ((size_t) m->n * C + 1));
	for (uint32_t i = 0; i < m->n; i++)
	{
		const NbView *v = &m->in[i];
		uint64_t	fc = (uint64_t) v->n_features * v->n_classes;

		start[i] = nb_alloc(sizeof(uint64_t) * (fc + 1));
		start[i][0] = 0;
		for (uint64_t x = 0; x < fc; x++)
		{
			nb_interrupt_at(x);
			start[i][x + 1] = start[i][x] +
				(nb_view_has_lengths(v) ? nb_read_u32(v->length_pairs, x) : 0);
		}
		for (uint32_t c = 0; c < v->n_classes; c++)
			in_class[(size_t) i * C + m->class_map[m->class_base[i] + c]] = c;
		total += v->n_lengths;
	}
	m->length_pairs = nb_alloc_zero(sizeof(uint32_t) * ((size_t) m->F * C + 1));
	m->length_value = nb_alloc(sizeof(double) * (total + 1));
	m->length_weight = nb_alloc(sizeof(double) * (total + 1));
	bins = nb_alloc(sizeof(LengthBin) * (total + 1));
	for (uint32_t f = 0; f < m->F; f++)
	{
		if (m->type[f] != NB_FEATURE_BAG)
			continue;
		for (uint32_t c = 0; c < C; c++)
		{
			uint64_t	nb = 0;
			uint32_t	inputs = 0;
			uint64_t	first = m->H;

			for (uint32_t i = 0; i < m->n; i++)
			{
				uint32_t	j = m->feature_src[(size_t) f * m->n + i];
				uint32_t	ci = in_class[(size_t) i * C + c];
				const NbView *v = &m->in[i];
				uint64_t	from;
				uint64_t	to;

				if (j == NONE || ci == NONE)
					continue;
				from = start[i][(uint64_t) j * v->n_classes + ci];
				to = start[i][(uint64_t) j * v->n_classes + ci + 1];
				inputs += to > from;
				for (uint64_t h = from; h < to; h++, nb++)
				{
					bins[nb].length = nb_read_f64(v->length_value, h);
					bins[nb].weight = nb_read_f64(v->length_weight, h);
					bins[nb].input = i;
				}
			}
			nb_interrupt_count(&work, 1 + nb);
			if (inputs > 1)
				nb_sort(bins, nb, sizeof(LengthBin), cmp_bin);
			for (uint64_t b = 0; b < nb; b++)
			{
				if (m->H > first && m->length_value[m->H - 1] == bins[b].length)
					m->length_weight[m->H - 1] += bins[b].weight;
				else
				{
					m->length_value[m->H] = bins[b].length;
					m->length_weight[m->H] = bins[b].weight;
					m->H++;
				}
			}
			m->length_pairs[(size_t) f * C + c] = (uint32_t) (m->H - first);
			for (uint64_t h = first; h < m->H; h++)
			{
				if (!isfinite(m->length_weight[h]))
					m->overflow = true;
				rows += m->length_weight[h];
				tokens += m->length_weight[h] * m->length_value[h];
			}
		}
	}
	if (!isfinite(rows) || !isfinite(tokens))
		m->overflow = true;
	for (uint32_t i = 0; i < m->n; i++)
		nb_free(start[i]);
	nb_free(start);
	nb_free(in_class);
	nb_free(bins);
}

NbMerger *
nb_merger_create(const NbView *inputs, uint32_t n)
{
	NbMerger   *m = nb_alloc_zero(sizeof(NbMerger));

	m->in = inputs;
	m->n = n;
	merge_classes(m);
	merge_features(m);
	if (m->lengths)
		merge_lengths(m);
	merge_items(m);
	return m;
}

static NbFormatShape
merger_shape(const NbMerger *m)
{
	NbFormatShape s;

	s.n_classes = m->C;
	s.n_tokens = (uint32_t) m->V;
	s.n_entries = m->E;
	s.n_features = m->F;
	s.vector_len = m->vector_len;
	s.label_bytes = m->label_bytes;
	s.token_bytes = m->token_bytes;
	s.name_bytes = m->name_bytes;
	s.text_only = m->text_only;
	s.lengths = m->lengths;
	s.n_lengths = m->H;
	return s;
}

size_t
nb_merger_size(const NbMerger *m, size_t max_size)
{
	NbFormatShape s = merger_shape(m);

	return nb_format_size(&s, max_size);
}

void
nb_merger_destroy(NbMerger *m)
{
	nb_free(m->class_base);
	nb_free(m->class_map);
	nb_free(m->label);
	nb_free(m->label_len);
	nb_free(m->class_docs);
	nb_free(m->feature_base);
	nb_free(m->feature_map);
	nb_free(m->feature_src);
	nb_free(m->name);
	nb_free(m->name_len);
	nb_free(m->type);
	nb_free(m->items);
	nb_free(m->present);
	nb_free(m->fa);
	nb_free(m->fb);
	nb_free(m->rows);
	nb_free(m->mean);
	nb_free(m->m2);
	nb_free(m->out.token_len);
	nb_free(m->out.token_entries);
	nb_free(m->out.entry_class);
	nb_free(m->out.entry_count);
	nb_free(m->out.entry_docs);
	nb_free(m->out.tokens_start);
	nb_free(m->stamp);
	nb_free(m->acc_count);
	nb_free(m->acc_docs);
	nb_free(m->touched);
	if (m->lengths)
	{
		nb_free(m->length_pairs);
		nb_free(m->length_value);
		nb_free(m->length_weight);
	}
	nb_free(m);
}

bool
nb_merger_write(NbMerger *m, unsigned char *buf, size_t size, NbView *out)
{
	NbFormatShape shape = merger_shape(m);
	NbFormatWriter w;
	char	   *strings;

	nb_format_begin(&w, &shape, buf, size);
	if (m->lengths)
	{
		for (uint64_t x = 0; x < (uint64_t) m->F * m->C; x++)
			nb_write_u32(w.length_pairs, x, m->length_pairs[x]);
		for (uint64_t h = 0; h < m->H; h++)
		{
			nb_write_f64(w.length_value, h, m->length_value[h]);
			nb_write_f64(w.length_weight, h, m->length_weight[h]);
		}
	}
	if (!m->text_only || m->lengths)
	{
		for (uint32_t j = 0; j < m->F; j++)
		{
			nb_write_u32(w.feature_name_len, j, m->name_len[j]);
			nb_write_u32(w.feature_type, j, m->type[j]);
			nb_write_u32(w.feature_items, j, m->items[j]);
			nb_write_f64(w.feature_rows, j, m->rows[j]);
			nb_write_f64(w.feature_mean, j, m->mean[j]);
			nb_write_f64(w.feature_m2, j, m->m2[j]);
		}
		for (uint64_t x = 0; x < (uint64_t) m->F * m->C; x++)
		{
			nb_write_f64(w.feature_present, x, m->present[x]);
			nb_write_f64(w.feature_a, x, m->fa[x]);
			nb_write_f64(w.feature_b, x, m->fb[x]);
		}
		strings = w.feature_names;
		for (uint32_t j = 0; j < m->F; j++)
		{
			memcpy(strings, m->name[j], m->name_len[j]);
			strings += m->name_len[j];
		}
	}
	strings = w.labels;
	for (uint32_t c = 0; c < m->C; c++)
	{
		nb_write_f64(w.class_docs, c, m->class_docs[c]);
		nb_write_u32(w.label_len, c, m->label_len[c]);
		memcpy(strings, m->label[c], m->label_len[c]);
		strings += m->label_len[c];
	}
	nb_copy(w.token_len, m->out.token_len, m->V * 4);
	nb_copy(w.token_entries, m->out.token_entries, m->V * 4);
	nb_copy(w.entry_class, m->out.entry_class, m->E * 4);
	nb_copy(w.entry_count, m->out.entry_count, m->E * 8);
	nb_copy(w.entry_docs, m->out.entry_docs, m->E * 8);
	nb_copy(w.tokens, m->out.tokens_start, m->token_bytes);
	nb_format_finish(&w, out);

	/* what nb_view_open checks of magnitudes, summed in the same order */
	return !m->overflow && nb_view_sums_finite(out);
}
