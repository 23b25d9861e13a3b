/*
 * nb_merge.c — merging serialized models as sorted runs, see nb_merge.h.
 *
 * nb_merger_create merges the small parts first (labels, feature names and
 * the per-class statistics of every feature), then the items of each
 * feature through a heap of the inputs ordered by their current items.  A
 * stretch of items that one input has alone is copied with a few memcpy
 * calls; an item of several inputs gets its entries added up class by
 * class, in input order.  The items go to scratch arrays sized for all
 * input items (only what is written is touched), which gives the exact
 * size; nb_merger_write then fills nb_format's layout with them.
 * What subtraction does alike (the plan of the result, copying runs,
 * comparing items) is in nb_runs.c.
 */
#include "nb_merge.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "nb_moments.h"
#include "nb_runs.h"

struct NbMerger
{
	const NbView *in;
	uint32_t	n;
	NbPlan		p;				/* the merged model; its items merged by nb_merger_create */
	/* classes: the union of the labels, in order */
	size_t	   *class_base;		/* [n]: input i's classes start here in class_map */
	uint32_t   *class_map;		/* input class -> output class */
	/* features: the union of the names, in order */
	size_t	   *feature_base;	/* [n]: input i's features start here in feature_map */
	uint32_t   *feature_map;	/* input feature -> output feature */
	uint32_t   *feature_src;	/* [F * n]: the input's feature, or NB_NONE */
	bool		overflow;		/* a class or feature statistic is not finite */
	/* scratch for items with several inputs: per output class */
	uint64_t   *stamp;
	uint64_t	stamp_now;
	double	   *acc_count;
	double	   *acc_docs;
	uint32_t   *touched;
};

NbMergeStatus
nb_merge_compat_status(NbCompat compat)
{
	switch (compat)
	{
		case NB_COMPAT_INPUTS:
			return NB_MERGE_INPUT_CONFLICT;
		case NB_COMPAT_TOKENIZER:
			return NB_MERGE_TOKENIZER_CONFLICT;
		case NB_COMPAT_OPTIONS:
			return NB_MERGE_OPTIONS_CONFLICT;
		case NB_COMPAT_OK:
		default:
			return NB_MERGE_OK;
	}
}

/*
 * The first of n views with a class, or NULL: a model of no class (of rows
 * that all had a NULL label) holds a count alone, no settings to agree on.
 */
static const NbView *
first_with_classes(const NbView *views, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (views[i].n_classes > 0)
			return &views[i];
	return NULL;
}

NbMergeStatus
nb_merge_check(const NbView *earlier, uint32_t n, const NbView *v, NbMergeConflict *conflict)
{
	uint32_t	first = NB_NONE;
	const NbView *settled = first_with_classes(earlier, n);

	/*
	 * The earlier views together, as a trainer that merged them holds them:
	 * their kinds of rows added up, their settings (all the same).
	 */
	conflict->inputs = nb_view_input_kinds(v);
	conflict->earlier_inputs = 0;
	conflict->earlier_vector_len = 0;
	for (uint32_t i = 0; i < n; i++)
	{
		if (earlier[i].n_classes > 0)
			conflict->earlier_inputs |= nb_view_input_kinds(&earlier[i]);
		if (earlier[i].vector_len != 0)
			conflict->earlier_vector_len = earlier[i].vector_len;
	}
	if (settled != NULL && v->n_classes > 0)
	{
		NbCompat	compat = nb_compat_check(conflict->earlier_inputs, &settled->settings,
											 conflict->inputs, &v->settings);

		if (compat != NB_COMPAT_OK)
			return nb_merge_compat_status(compat);
	}
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
	if (first == NB_NONE)
		return NB_MERGE_OK;
	conflict->feature = first;
	return NB_MERGE_TYPE_CONFLICT;
}

/*
 * The inputs' labels (names false) or feature names (true) as
 * union_strings takes them: a walk over each input's, and where its
 * strings start among all of them (base).
 */
typedef struct InputStrings
{
	NbStringIter *lists;
	size_t	   *base;
	size_t		total;
} InputStrings;

static InputStrings
input_strings(const NbMerger *m, bool names)
{
	InputStrings l;

	l.lists = nb_alloc(sizeof(NbStringIter) * m->n);
	l.base = nb_alloc(sizeof(size_t) * m->n);
	l.total = 0;
	for (uint32_t i = 0; i < m->n; i++)
	{
		const NbView *v = &m->in[i];

		l.lists[i] = names ? nb_view_feature_names(v) : nb_view_labels(v);
		l.base[i] = l.total;
		l.total += nb_string_left(&l.lists[i]);
	}
	return l;
}

/*
 * The union of n sorted string lists (lists[i], walked to their end); maps
 * every input string to its output position (map[base[i] + s]) and returns
 * the number of output strings, whose pointers and lengths go to out /
 * out_len (room for the sum of the lists' lengths) and the sum of whose
 * lengths goes to *bytes.  Few strings (labels, feature names): a linear
 * scan for the smallest head is enough.
 */
static uint32_t
union_strings(uint32_t n, NbStringIter *lists, const size_t *base, uint32_t *map,
			  const char **out, uint32_t *out_len, size_t *bytes)
{
	uint32_t   *pos = nb_alloc_zero(sizeof(uint32_t) * n);
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

			if (nb_string_peek(&lists[i], &s, &len) &&
				(best < 0 || nb_strcmp(s, len, bs, blen) < 0))
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
			const char *s;
			uint32_t	len;

			if (!nb_string_peek(&lists[i], &s, &len) || nb_strcmp(s, len, bs, blen) != 0)
				continue;
			map[base[i] + pos[i]] = total;
			pos[i]++;
			(void) nb_string_next(&lists[i], &s, &len);
		}
		total++;
	}
	nb_free(pos);
	return total;
}

static void
merge_classes(NbMerger *m)
{
	InputStrings l = input_strings(m, false);

	m->class_base = l.base;
	m->class_map = nb_alloc(sizeof(uint32_t) * l.total);
	nb_plan_alloc_classes(&m->p, l.total);
	m->p.C = union_strings(m->n, l.lists, m->class_base, m->class_map,
						   m->p.label, m->p.label_len, &m->p.label_bytes);
	for (uint32_t i = 0; i < m->n; i++)
		for (uint32_t c = 0; c < m->in[i].n_classes; c++)
		{
			double	   *d = &m->p.class_docs[m->class_map[m->class_base[i] + c]];

			*d += nb_view_class_docs(&m->in[i], c);
			if (!isfinite(*d))
				m->overflow = true;
		}
	nb_free(l.lists);			/* the merger keeps l.base */
}

static void
merge_features(NbMerger *m)
{
	InputStrings l = input_strings(m, true);
	uint32_t	C;
	bool		keep_lengths = false;
	const NbView *settled;

	m->feature_base = l.base;
	for (uint32_t i = 0; i < m->n; i++)
		if (m->in[i].vector_len != 0)
			m->p.vector_len = m->in[i].vector_len;
	m->feature_map = nb_alloc(sizeof(uint32_t) * (l.total ? l.total : 1));
	nb_plan_alloc_features(&m->p, l.total);
	m->p.F = union_strings(m->n, l.lists, m->feature_base, m->feature_map,
						   m->p.name, m->p.name_len, &m->p.name_bytes);
	C = m->p.C;
	m->feature_src = nb_alloc(sizeof(uint32_t) * ((size_t) m->p.F * m->n + 1));
	memset(m->feature_src, 0xff, sizeof(uint32_t) * ((size_t) m->p.F * m->n + 1));
	nb_plan_alloc_stats(&m->p);

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
			m->p.type[f] = (uint32_t) type;
			for (uint32_t c = 0; c < v->n_classes; c++)
			{
				size_t		k = (size_t) f * C + cmap[c];
				double		present = nb_view_present(v, j, c);

				nb_feature_stats_add(type, &m->p.present[k], &m->p.fa[k], &m->p.fb[k],
									 present, nb_view_a(v, j, c), nb_view_b(v, j, c));
				if (!isfinite(m->p.present[k]) || !isfinite(m->p.fa[k]) || !isfinite(m->p.fb[k]))
					m->overflow = true;
			}
			if (nb_feature_type(type)->stats == NB_STATS_MOMENTS)
			{
				nb_moments_add(&m->p.rows[f], &m->p.mean[f], &m->p.m2[f],
								 nb_view_feature_rows(v, j),
								 nb_view_feature_mean(v, j),
								 nb_view_feature_m2(v, j));
				if (!isfinite(m->p.m2[f]) || !isfinite(m->p.mean[f]))
					m->overflow = true;
			}
		}
	}

	m->p.text_only = nb_plan_is_text_only(&m->p);
	settled = first_with_classes(m->in, m->n);
	m->p.settings = (settled != NULL ? settled : m->in)->settings;
	m->p.settings.null_labels = 0;
	for (uint32_t i = 0; i < m->n; i++)
	{
		if (m->in[i].settings.jsonb_bag)
			m->p.settings.jsonb_bag = true;
		m->p.settings.null_labels = nb_null_labels_add(m->p.settings.null_labels,
													   m->in[i].settings.null_labels);
	}
	if (m->p.settings.null_labels > NB_NULL_LABELS_MAX)
		m->overflow = true;

	/* lengths are kept if there is a bag and no input has bags without them */
	for (uint32_t f = 0; f < m->p.F; f++)
		if (m->p.type[f] == NB_FEATURE_BAG)
			keep_lengths = true;
	for (uint32_t i = 0; i < m->n; i++)
		if (!nb_view_has_lengths(&m->in[i]) && nb_view_has_bag(&m->in[i]))
			keep_lengths = false;
	if (keep_lengths)
	{
		uint64_t	pairs = 0;

		for (uint32_t i = 0; i < m->n; i++)
			pairs += m->in[i].n_lengths;
		nb_plan_alloc_lengths(&m->p, pairs);
	}
	nb_free(l.lists);			/* the merger keeps l.base */
}

/* Heap order: by item, then by input, so equal items come out in input order. */
static inline bool
head_less(const NbHead *a, const NbHead *b)
{
	int			c = nb_head_cmp(a, b);

	return c < 0 || (c == 0 && a->input < b->input);
}

static void
sift_down(NbHead *heap, uint32_t size, uint32_t at)
{
	NbHead		x = heap[at];

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

/* The second smallest of a heap of size >= 2: a child of the root. */
static inline const NbHead *
next_head(const NbHead *heap, uint32_t size)
{
	return size > 2 && head_less(&heap[2], &heap[1]) ? &heap[2] : &heap[1];
}

/*
 * The next r items of input i, which make r output items alone (see
 * nb_copy_run).
 */
static void
copy_run(const NbMerger *m, NbCursor *cur, uint32_t i, uint64_t r, NbRunOut *o)
{
	nb_copy_run(&m->in[i], m->class_map + m->class_base[i], m->p.C, &cur[i], r, o);
}

/* Classes sorted by insertion at most: beyond, in n log n (insertion's n^2 took seconds). */
#define INSERTION_SORT_MAX 64

static int
cmp_class(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a;
	uint32_t	y = *(const uint32_t *) b;

	return (x > y) - (x < y);
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
sum_item(NbMerger *m, NbCursor *cur, const uint32_t *srcs, uint32_t k, NbRunOut *o)
{
	uint32_t	ntouched = 0;
	uint32_t	len = nb_view_token_len(&m->in[srcs[0]], cur[srcs[0]].item);
	const char *s = m->in[srcs[0]].tokens + cur[srcs[0]].off;

	m->stamp_now++;
	for (uint32_t x = 0; x < k; x++)
	{
		uint32_t	i = srcs[x];
		const NbView *v = &m->in[i];
		const uint32_t *cmap = m->class_map + m->class_base[i];
		uint32_t	ne = nb_view_token_entries(v, cur[i].item);
		uint64_t	e = cur[i].entry;

		for (uint32_t y = 0; y < ne; y++)
		{
			uint32_t	c = cmap[nb_view_entry_class(v, e + y)];

			if (m->stamp[c] != m->stamp_now)
			{
				m->stamp[c] = m->stamp_now;
				m->acc_count[c] = 0;
				m->acc_docs[c] = 0;
				m->touched[ntouched++] = c;
			}
			m->acc_count[c] += nb_view_entry_count(v, e + y);
			m->acc_docs[c] += nb_view_entry_docs(v, e + y);
		}
	}
	/* classes in order: sort the few, or pick them out of all classes (8 a unit of work) */
	if (ntouched <= INSERTION_SORT_MAX)
		insertion_sort(m->touched, ntouched);
	else if (ntouched < m->p.C / 16)
		nb_sort(m->touched, ntouched, sizeof(uint32_t), cmp_class);
	else
	{
		ntouched = 0;
		for (uint32_t c = 0; c < m->p.C; c++)
			if (m->stamp[c] == m->stamp_now)
				m->touched[ntouched++] = c;
		nb_interrupt_count(&o->work, m->p.C / 8);
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
		nb_cursor_advance(&m->in[srcs[x]], &cur[srcs[x]]);
	nb_interrupt_count(&o->work, k + ntouched);
}

/* Merge the items of every feature into m->p.out. */
static void
merge_items(NbMerger *m)
{
	NbCursor   *cur = nb_alloc_zero(sizeof(NbCursor) * m->n);
	NbHead	   *heap = nb_alloc(sizeof(NbHead) * m->n);
	uint32_t   *srcs = nb_alloc(sizeof(uint32_t) * m->n);
	uint32_t   *end = nb_alloc(sizeof(uint32_t) * m->n);
	uint64_t	max_items = 0;
	uint64_t	max_entries = 0;
	size_t		max_bytes = 0;
	NbRunOut   *o = &m->p.out;

	/* room for every input item */
	for (uint32_t i = 0; i < m->n; i++)
	{
		max_items += m->in[i].n_tokens;
		max_entries += m->in[i].n_entries;
		max_bytes += m->in[i].size;
	}
	nb_run_out_alloc(o, max_items, max_entries, max_bytes);
	m->stamp = nb_alloc_zero(sizeof(uint64_t) * (m->p.C + 1));
	m->acc_count = nb_alloc(sizeof(double) * (m->p.C + 1));
	m->acc_docs = nb_alloc(sizeof(double) * (m->p.C + 1));
	m->touched = nb_alloc(sizeof(uint32_t) * (m->p.C + 1));

	for (uint32_t f = 0; f < m->p.F; f++)
	{
		uint32_t	size = 0;
		uint64_t	before = o->k;

		for (uint32_t i = 0; i < m->n; i++)
		{
			uint32_t	j = m->feature_src[(size_t) f * m->n + i];

			if (j != NB_NONE && nb_view_feature_items(&m->in[i], j) > 0)
			{
				srcs[size++] = i;
				end[i] = cur[i].item + nb_view_feature_items(&m->in[i], j);
			}
		}
		for (uint32_t x = 0; x < size; x++)
			nb_head_set(&heap[x], &m->in[srcs[x]], srcs[x], cur[srcs[x]].item, cur[srcs[x]].off);
		for (uint32_t x = size / 2; x-- > 0;)
			sift_down(heap, size, x);
		while (size > 0)
		{
			NbHead		top = heap[0];
			uint32_t	k = 0;

			if (size == 1 || nb_head_cmp(&top, next_head(heap, size)) < 0)
			{
				/* the smallest item is one input's alone: copy its stretch whole */
				uint32_t	i = top.input;
				uint32_t	to = end[i];

				if (size > 1)
					to = nb_run_end(&m->in[i], &cur[i], end[i], next_head(heap, size));
				copy_run(m, cur, i, to - cur[i].item, o);
				if (cur[i].item < end[i])
					nb_head_set(&heap[0], &m->in[i], i, cur[i].item, cur[i].off);
				else
					heap[0] = heap[--size];
				sift_down(heap, size, 0);
				continue;
			}

			/*
			 * Take every input whose current item is the smallest, in input
			 * order; each goes back in with its next item at once (one sift
			 * instead of a pop and a push), behind this item.
			 */
			do
			{
				uint32_t	i = heap[0].input;

				srcs[k++] = i;
				if (cur[i].item + 1 < end[i])
					nb_head_set(&heap[0], &m->in[i], i, cur[i].item + 1,
								cur[i].off + nb_view_token_len(&m->in[i], cur[i].item));
				else
					heap[0] = heap[--size];
				sift_down(heap, size, 0);
			} while (size > 0 && nb_head_cmp(&heap[0], &top) == 0);
			sum_item(m, cur, srcs, k, o);
		}
		m->p.items[f] = (uint32_t) (o->k - before);
	}
	m->p.V = o->k;
	m->p.E = o->e;
	m->p.token_bytes = (size_t) (o->tokens - o->tokens_start);
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
	NbPlan	   *p = &m->p;
	uint32_t	C = p->C;
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

		start[i] = nb_length_starts(v);
		for (uint32_t c = 0; c < v->n_classes; c++)
			in_class[(size_t) i * C + m->class_map[m->class_base[i] + c]] = c;
		total += v->n_lengths;
	}
	bins = nb_alloc(sizeof(LengthBin) * (total + 1));
	for (uint32_t f = 0; f < p->F; f++)
	{
		if (p->type[f] != NB_FEATURE_BAG)
			continue;
		for (uint32_t c = 0; c < C; c++)
		{
			uint64_t	nb = 0;
			uint32_t	inputs = 0;
			uint64_t	first = p->H;

			for (uint32_t i = 0; i < m->n; i++)
			{
				uint32_t	j = m->feature_src[(size_t) f * m->n + i];
				uint32_t	ci = in_class[(size_t) i * C + c];
				const NbView *v = &m->in[i];
				uint64_t	from;
				uint64_t	to;

				if (j == NB_NONE || ci == NB_NONE)
					continue;
				from = start[i][(uint64_t) j * v->n_classes + ci];
				to = start[i][(uint64_t) j * v->n_classes + ci + 1];
				inputs += to > from;
				for (uint64_t h = from; h < to; h++, nb++)
				{
					bins[nb].length = nb_view_length_value(v, h);
					bins[nb].weight = nb_view_length_weight(v, h);
					bins[nb].input = i;
				}
			}
			nb_interrupt_count(&work, 1 + nb);
			if (inputs > 1)
				nb_sort(bins, nb, sizeof(LengthBin), cmp_bin);
			for (uint64_t b = 0; b < nb; b++)
			{
				if (p->H > first && p->length_value[p->H - 1] == bins[b].length)
					p->length_weight[p->H - 1] += bins[b].weight;
				else
				{
					p->length_value[p->H] = bins[b].length;
					p->length_weight[p->H] = bins[b].weight;
					p->H++;
				}
			}
			p->length_pairs[(size_t) f * C + c] = (uint32_t) (p->H - first);
			for (uint64_t h = first; h < p->H; h++)
			{
				if (!isfinite(p->length_weight[h]))
					m->overflow = true;
				rows += p->length_weight[h];
				tokens += p->length_weight[h] * p->length_value[h];
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
	if (m->p.lengths)
		merge_lengths(m);
	merge_items(m);
	return m;
}

size_t
nb_merger_size(const NbMerger *m, size_t max_size)
{
	return nb_plan_size(&m->p, max_size);
}

void
nb_merger_destroy(NbMerger *m)
{
	nb_free(m->class_base);
	nb_free(m->class_map);
	nb_free(m->feature_base);
	nb_free(m->feature_map);
	nb_free(m->feature_src);
	nb_plan_free(&m->p);
	nb_free(m->stamp);
	nb_free(m->acc_count);
	nb_free(m->acc_docs);
	nb_free(m->touched);
	nb_free(m);
}

bool
nb_merger_write(NbMerger *m, unsigned char *buf, size_t size, NbView *out)
{
	nb_plan_write(&m->p, buf, size, out);

	/* what nb_view_open checks of magnitudes, summed in the same order */
	return !m->overflow && nb_view_sums_finite(out);
}
