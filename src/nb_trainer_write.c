/*
 * nb_trainer_write.c — the trainer's model in its serialized form
 * (nb_format.h): sizes, the finiteness check, and the canonical order
 * (labels, feature names and items by their bytes) it is written in.
 */
#include "nb_trainer_internal.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "nb_port.h"

/* A non-zero (item, class) pair of the pair table, in its item's bucket. */
typedef struct Entry
{
	uint32_t	cls;
	double		count;
	double		docs;
} Entry;

/* Add every entry to sums: the inline counts, the pair table, the dense counts. */
static void
add_entry_sums(const NbTrainer *t, NbSums *sums)
{
	for (uint64_t i = 0; i < (uint64_t) t->tokens.count * NB_INLINE_CLASSES; i++)
	{
		const NbItemCounts *counts = t->inline_counts[i % NB_INLINE_CLASSES];
		const NbItemCounts *in = counts == NULL ? NULL : &counts[i / NB_INLINE_CLASSES];

		nb_interrupt_at(i);
		if (in != NULL && in->count != 0)
			nb_sums_add_entry(sums, in->count, in->docs);
	}
	for (uint64_t i = 0; i <= t->pair_mask; i++)
	{
		nb_interrupt_at(i);
		if (t->pairs[i].key != NB_EMPTY_KEY)
			nb_sums_add_entry(sums, t->pairs[i].count, t->pairs[i].docs);
	}
	for (uint64_t i = 0; t->spread != NULL && i < (uint64_t) t->tokens.count * t->spread_classes; i++)
	{
		nb_interrupt_at(i);
		if (t->spread[i].docs != 0)
			nb_sums_add_entry(sums, t->spread[i].count, t->spread[i].docs);
	}
}

bool
nb_trainer_sums_finite(NbTrainer *t)
{
	NbSums		sums = {0, 0, 0};
	uint64_t	work = 0;

	nb_trainer_end_doc(t);
	if (t->overflow || t->underflow)
		return false;
	for (uint32_t c = 0; c < t->classes.count; c++)
		sums.docs += t->class_docs[c];
	add_entry_sums(t, &sums);
	/* nb_view_open sums each histogram: the sums over all of them bound those */
	{
		double		rows = 0;
		double		tokens = 0;

		for (uint64_t i = 0; i <= t->length_mask; i++)
		{
			nb_interrupt_at(i);
			if (t->lengths[i].length == 0)
				continue;
			rows += t->lengths[i].weight;
			tokens += t->lengths[i].weight * t->lengths[i].length;
		}
		if (!isfinite(rows) || !isfinite(tokens))
			return false;
	}
	for (uint32_t j = 0; j < t->features.count; j++)
	{
		const NbTrainerFeature *f = &t->feature[j];

		nb_interrupt_count(&work, 1 + (uint64_t) t->classes.count);
		if (!isfinite(f->mean) || !isfinite(f->m2))
			return false;
		for (uint32_t c = 0; c < t->classes.count; c++)
			if (!isfinite(f->stats[c].present) || !isfinite(f->stats[c].a) ||
				!isfinite(f->stats[c].b))
				return false;
	}
	return nb_sums_finite(sums);
}

static void
trainer_rows(const void *model, uint32_t c, double *docs, double *present)
{
	const NbTrainer *t = model;

	*docs = t->class_docs[c];
	*present = t->feature[0].stats[c].present;
}

/* The bytes of a class's label in the model: its key's, but a component's number. */
static uint32_t
label_len(const NbTrainer *t, uint32_t key_len)
{
	return t->component_keys ? key_len - NB_COMPONENT_KEY_BYTES : key_len;
}

/* Whether two classes of a trainer of component keys have one label. */
static bool
labels_repeat(const NbTrainer *t)
{
	uint32_t	C = t->classes.count;
	NbVocab		seen;
	bool		repeat = false;

	nb_vocab_init(&seen);
	for (uint32_t c = 0; c < C && !repeat; c++)
	{
		uint32_t	len;
		const char *key = nb_vocab_str(&t->classes, c, &len);

		nb_interrupt_at(c);
		len = label_len(t, len);
		repeat = nb_vocab_find(&seen, key, len, nb_hash_token(key, len)) >= 0;
		if (!repeat)
			nb_vocab_add(&seen, key, len, nb_hash_token(key, len));
	}
	nb_vocab_free(&seen);
	return repeat;
}

/*
 * The trainer's model as nb_format lays it out, with its document lengths
 * (version 3) if it knows them and has bags.
 */
static NbFormatShape
trainer_shape(const NbTrainer *t, bool text_only)
{
	NbFormatShape s;
	bool		lengths = !t->lengths_unknown && t->n_bags > 0;

	s.n_classes = t->classes.count;
	s.n_tokens = t->tokens.count;
	s.n_entries = t->n_entries;
	s.n_features = t->features.count;
	s.vector_len = t->vector_len;
	s.label_bytes = nb_vocab_bytes(&t->classes);
	s.token_bytes = nb_vocab_bytes(&t->tokens) - t->prefix_bytes;
	s.name_bytes = nb_vocab_bytes(&t->features);
	s.text_only = text_only;
	s.lengths = lengths;
	s.n_lengths = lengths ? t->lengths_used : 0;
	s.settings = t->settings;
	if (t->component_keys)
	{
		s.label_bytes -= (uint64_t) NB_COMPONENT_KEY_BYTES * t->classes.count;
		s.settings.components = labels_repeat(t);
	}
	return s;
}

uint64_t
nb_trainer_min_flat_size(const NbTrainer *t)
{
	/* text_only: no feature arrays (see nb_trainer.h); every term is bounded by allocated memory */
	NbFormatShape s = trainer_shape(t, true);

	return nb_format_size(&s, SIZE_MAX);
}

/*
 * The shape of the model nb_trainer_write_view writes, once the document
 * has ended: version 1 or not as nb_format_text_only says.
 */
static NbFormatShape
written_shape(NbTrainer *t)
{
	uint32_t	name_len = 0;

	nb_trainer_end_doc(t);
	if (t->features.count > 0)
		(void) nb_vocab_str(&t->features, 0, &name_len);
	return trainer_shape(t, nb_format_text_only(t, t->features.count, name_len,
												t->feature[0].type, t->classes.count,
												trainer_rows));
}

size_t
nb_trainer_flat_size(NbTrainer *t, size_t max_size)
{
	NbFormatShape s = written_shape(t);

	return nb_format_size(&s, max_size);
}

/* A string with its id, sorted into canonical order (byte order). */
typedef struct StrRef
{
	const char *str;
	uint32_t	len;
	uint32_t	id;
} StrRef;

static int
cmp_strref(const void *a, const void *b)
{
	const StrRef *x = a;
	const StrRef *y = b;

	return nb_strcmp(x->str, x->len, y->str, y->len);
}

/* Sort a map's strings (labels, feature names); returns the sorted refs and fills rank[id]. */
static StrRef *
sorted_strings(const NbVocab *map, uint32_t *rank)
{
	StrRef	   *refs = nb_alloc(sizeof(StrRef) * (map->count ? map->count : 1));

	for (uint32_t i = 0; i < map->count; i++)
	{
		nb_interrupt_at(i);
		refs[i].str = nb_vocab_str(map, i, &refs[i].len);
		refs[i].id = i;
	}
	nb_sort(refs, map->count, sizeof(StrRef), cmp_strref);
	for (uint32_t i = 0; i < map->count; i++)
	{
		nb_interrupt_at(i);
		rank[refs[i].id] = i;
	}
	return refs;
}

/*
 * An item's place in canonical order: the rank of its feature, then its
 * value's bytes.  The key holds the first 8 of them as a big-endian number
 * (zero-padded), which orders most items without reading their bytes: 16
 * bytes per item, while the arena is read only on a tie.
 */
typedef struct ItemKey
{
	uint64_t	head;
	uint32_t	group;
	uint32_t	id;
} ItemKey;

_Static_assert(sizeof(ItemKey) == sizeof(NbVocabSlot) &&
			   _Alignof(ItemKey) <= _Alignof(NbVocabSlot),
			   "the sort keys use the index's memory (nb_trainer_write)");

/* What an item's order depends on besides its bytes. */
typedef struct ItemOrder
{
	const NbTrainer *t;
	const uint32_t *feature_rank;
	uint32_t	unnamed_rank;	/* the rank of the bag "" */
} ItemOrder;

/* An item's value (its bytes without the prefix) and the rank of its feature. */
static inline const char *
item_value(const ItemOrder *o, uint32_t id, uint32_t *len, uint32_t *group)
{
	const char *str = nb_vocab_str(&o->t->tokens, id, len);

	*group = o->unnamed_rank;
	if (*len > 0 && str[0] == '\0')
	{
		*group = o->feature_rank[nb_item_key_feature(str)];
		str += NB_ITEM_PREFIX;
		*len -= NB_ITEM_PREFIX;
	}
	return str;
}

static inline bool
key_less(const ItemOrder *o, const ItemKey *x, const ItemKey *y)
{
	const char *xs;
	const char *ys;
	uint32_t	xlen;
	uint32_t	ylen;
	uint32_t	group;

	if (x->group != y->group)
		return x->group < y->group;
	if (x->head != y->head)
		return x->head < y->head;
	xs = item_value(o, x->id, &xlen, &group);
	ys = item_value(o, y->id, &ylen, &group);
	return nb_strcmp(xs, xlen, ys, ylen) < 0;
}

#define NB_SORT_SMALL 16

/*
 * Merge the sorted runs keys[lo, mid) and keys[mid, hi) in place through
 * buf, which has room for the shorter of the two.
 */
static void
merge_keys(const ItemOrder *o, ItemKey *keys, uint64_t lo, uint64_t mid, uint64_t hi, ItemKey *buf)
{
	if (mid - lo <= hi - mid)
	{
		/* the left run goes to buf; merge forwards */
		uint64_t	n = mid - lo;
		uint64_t	i = 0;
		uint64_t	j = mid;
		uint64_t	k = lo;

		memcpy(buf, keys + lo, sizeof(ItemKey) * n);
		while (i < n && j < hi)
			keys[k++] = key_less(o, &keys[j], &buf[i]) ? keys[j++] : buf[i++];
		while (i < n)
			keys[k++] = buf[i++];
	}
	else
	{
		/* the right run goes to buf; merge backwards */
		uint64_t	n = hi - mid;
		uint64_t	i = mid;
		uint64_t	j = n;
		uint64_t	k = hi;

		memcpy(buf, keys + mid, sizeof(ItemKey) * n);
		while (i > lo && j > 0)
			keys[--k] = key_less(o, &buf[j - 1], &keys[i - 1]) ? keys[--i] : buf[--j];
		while (j > 0)
			keys[--k] = buf[--j];
	}
}

/*
 * Sort item keys into canonical order: insertion sort of short runs, then
 * merges, interruptibly.  The comparison is inline, and the buffer half the
 * keys (the sort runs next to the result being written: memory counts).
 */
static void
sort_keys(const ItemOrder *o, ItemKey *keys, uint32_t n)
{
	ItemKey    *buf;
	uint64_t	work = 0;

	for (uint32_t lo = 0; lo < n; lo += NB_SORT_SMALL)
	{
		uint32_t	hi = n - lo < NB_SORT_SMALL ? n : lo + NB_SORT_SMALL;

		nb_interrupt_count(&work, NB_SORT_SMALL);
		for (uint32_t i = lo + 1; i < hi; i++)
		{
			ItemKey		k = keys[i];
			uint32_t	j = i;

			for (; j > lo && key_less(o, &k, &keys[j - 1]); j--)
				keys[j] = keys[j - 1];
			keys[j] = k;
		}
	}
	if (n <= NB_SORT_SMALL)
		return;
	buf = nb_alloc(sizeof(ItemKey) * ((size_t) n / 2 + 1));
	for (uint64_t width = NB_SORT_SMALL; width < n; width *= 2)
		for (uint64_t lo = 0; lo + width < n; lo += 2 * width)
		{
			uint64_t	hi = lo + 2 * width < n ? lo + 2 * width : n;

			nb_interrupt_count(&work, hi - lo);
			merge_keys(o, keys, lo, lo + width, hi, buf);
		}
	nb_free(buf);
}

static int
cmp_length(const void *a, const void *b)
{
	const NbLengthSlot *x = a;
	const NbLengthSlot *y = b;

	if (x->feature != y->feature)
		return x->feature < y->feature ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return (x->length > y->length) - (x->length < y->length);
}

/* Fill the length arrays of version 3: bins sorted by feature, class and length. */
static void
write_lengths(const NbTrainer *t, const uint32_t *feature_rank, const uint32_t *class_rank,
			  const NbFormatWriter *w)
{
	uint64_t	H = t->lengths_used;
	uint64_t	FC = (uint64_t) t->features.count * t->classes.count;
	/* the bins, their feature and class ranked */
	NbLengthSlot *bins = nb_alloc(sizeof(NbLengthSlot) * (H ? H : 1));
	uint64_t	n = 0;

	for (uint64_t i = 0; i <= t->length_mask; i++)
	{
		const NbLengthSlot *s = &t->lengths[i];

		nb_interrupt_at(i);
		if (s->length == 0)
			continue;
		bins[n].feature = feature_rank[s->feature];
		bins[n].cls = class_rank[s->cls];
		bins[n].length = s->length;
		bins[n].weight = s->weight;
		n++;
	}
	nb_sort(bins, H, sizeof(NbLengthSlot), cmp_length);
	/* sorted, the pairs of each (feature, class) are one run, in its order */
	for (uint64_t x = 0, i = 0; x < FC; x++)
	{
		uint32_t	pairs = 0;

		nb_interrupt_at(x);
		for (; i < H && (uint64_t) bins[i].feature * t->classes.count + bins[i].cls == x; i++)
		{
			nb_interrupt_at(i);
			nb_write_f64(w->length_value, i, bins[i].length);
			nb_write_f64(w->length_weight, i, bins[i].weight);
			pairs++;
		}
		nb_write_u32(w->length_pairs, x, pairs);
	}
	nb_free(bins);
}

static int
cmp_entry(const void *a, const void *b)
{
	const Entry *x = a;
	const Entry *y = b;

	return (x->cls > y->cls) - (x->cls < y->cls);
}

/*
 * Sort a bucket's entries (one per class of its item) by class: most are
 * short, and sorted inline faster than by a library sort's calls.
 */
static void
sort_bucket(Entry *en, uint64_t n)
{
	if (n > NB_SORT_SMALL)
	{
		nb_sort(en, n, sizeof(Entry), cmp_entry);
		return;
	}
	for (uint64_t i = 1; i < n; i++)
	{
		Entry		x = en[i];
		uint64_t	j = i;

		for (; j > 0 && en[j - 1].cls > x.cls; j--)
			en[j] = en[j - 1];
		en[j] = x;
	}
}

/*
 * The entries of the pair table, classes ranked, bucketed by the rank of
 * their item and sorted by class rank within a bucket: bucket k is
 * (*entries)[k == 0 ? 0 : end[k - 1] .. end[k]).
 */
static void
bucket_pairs(const NbTrainer *t, const uint32_t *order, const uint32_t *class_rank,
			 uint64_t **end, Entry **entries)
{
	uint32_t	V = t->tokens.count;
	uint32_t   *item_rank = nb_alloc(sizeof(uint32_t) * (V ? V : 1));
	uint64_t   *e = nb_alloc_zero(sizeof(uint64_t) * ((uint64_t) V + 1));
	Entry	   *out = nb_alloc(sizeof(Entry) * (t->pairs_used ? t->pairs_used : 1));
	uint64_t	work = 0;

	for (uint32_t k = 0; k < V; k++)
	{
		nb_interrupt_at(k);
		item_rank[order[k]] = k;
	}
	/* counting sort: e[rank + 1] counts, then e[rank] is where the bucket starts */
	for (uint64_t i = 0; i <= t->pair_mask; i++)
	{
		nb_interrupt_at(i);
		if (t->pairs[i].key != NB_EMPTY_KEY)
			e[item_rank[t->pairs[i].key >> 32] + 1]++;
	}
	for (uint32_t k = 0; k < V; k++)
	{
		nb_interrupt_at(k);
		e[k + 1] += e[k];
	}
	/* filling bucket k moves e[k] to where it ends */
	for (uint64_t i = 0; i <= t->pair_mask; i++)
	{
		const NbPairSlot *s = &t->pairs[i];

		nb_interrupt_at(i);
		if (s->key != NB_EMPTY_KEY)
		{
			Entry	   *en = &out[e[item_rank[s->key >> 32]]++];

			en->cls = class_rank[(uint32_t) s->key];
			en->count = s->count;
			en->docs = s->docs;
		}
	}
	nb_free(item_rank);
	for (uint32_t k = 0; k < V; k++)
	{
		uint64_t	lo = k == 0 ? 0 : e[k - 1];

		/* at most one entry per class: sort runs of them interruptibly */
		nb_interrupt_count(&work, 1 + (e[k] - lo));
		if (e[k] - lo > 1)
			sort_bucket(out + lo, e[k] - lo);
	}
	*end = e;
	*entries = out;
}

/* Fill the feature arrays of versions 2 and 3. */
static void
write_features(const NbTrainer *t, const StrRef *features, const StrRef *classes,
			   const ItemOrder *o, const uint32_t *order, const NbFormatWriter *w)
{
	uint32_t	C = t->classes.count;
	uint32_t	F = t->features.count;
	uint32_t	V = t->tokens.count;
	uint32_t	k = 0;
	uint64_t	work = 0;

	for (uint32_t j = 0; j < F; j++)
	{
		const NbTrainerFeature *f = &t->feature[features[j].id];
		uint32_t	n = 0;

		nb_interrupt_count(&work, 1 + (uint64_t) C);
		for (; k < V; n++, k++)
		{
			uint32_t	len;
			uint32_t	group;

			(void) item_value(o, order[k], &len, &group);
			if (group != j)
				break;
		}
		nb_write_u32(w->feature_name_len, j, features[j].len);
		nb_write_u32(w->feature_type, j, (uint32_t) f->type);
		nb_write_u32(w->feature_items, j, n);
		for (uint32_t c = 0; c < C; c++)
		{
			const NbClassStat *st = &f->stats[classes[c].id];
			uint64_t	i = (uint64_t) j * C + c;

			nb_write_f64(w->feature_present, i, st->present);
			nb_write_f64(w->feature_a, i, st->a);
			nb_write_f64(w->feature_b, i, st->b);
		}
		nb_write_f64(w->feature_rows, j, f->rows);
		nb_write_f64(w->feature_mean, j, f->mean);
		nb_write_f64(w->feature_m2, j, f->m2);
	}
}

static inline void
write_entry(const NbFormatWriter *w, uint64_t i, uint32_t cls, double count, double docs)
{
	nb_write_u32(w->entry_class, i, cls);
	nb_write_f64(w->entry_count, i, count);
	nb_write_f64(w->entry_docs, i, docs);
}

/*
 * Write item id's entries from i on: its inline counts and its bucket of
 * pair entries, merged by class rank.  Returns the number of entries.
 */
static uint32_t
write_item_entries(const NbTrainer *t, const NbFormatWriter *w, uint32_t id,
				   const uint32_t *class_rank, const Entry *bucket, uint64_t n_bucket,
				   uint64_t i)
{
	uint32_t	order[NB_INLINE_CLASSES];
	uint32_t	n_inline = 0;
	uint32_t	a = 0;
	uint64_t	b = 0;

	for (uint32_t c = 0; c < NB_INLINE_CLASSES; c++)
		if (t->inline_counts[c] != NULL && t->inline_counts[c][id].count != 0)
			order[n_inline++] = c;
	if (n_inline == 2 && class_rank[order[1]] < class_rank[order[0]])
	{
		order[0] = 1;
		order[1] = 0;
	}
	while (a < n_inline || b < n_bucket)
	{
		if (b == n_bucket || (a < n_inline && class_rank[order[a]] < bucket[b].cls))
		{
			const NbItemCounts *in = &t->inline_counts[order[a]][id];

			write_entry(w, i++, class_rank[order[a]], in->count, in->docs);
			a++;
		}
		else
		{
			write_entry(w, i++, bucket[b].cls, bucket[b].count, bucket[b].docs);
			b++;
		}
	}
	return n_inline + (uint32_t) n_bucket;
}

/*
 * write_item_entries with dense counts: the classes in rank order
 * (classes[r].id has rank r), each from the dense counts, the inline
 * counts or the bucket.
 */
static uint32_t
write_spread_item_entries(const NbTrainer *t, const NbFormatWriter *w, uint32_t id,
						  const StrRef *classes, const Entry *bucket, uint64_t n_bucket,
						  uint64_t i)
{
	const NbItemCounts *cells = &t->spread[(uint64_t) id * t->spread_classes];
	uint64_t	first = i;
	uint64_t	b = 0;

	for (uint32_t r = 0; r < t->classes.count; r++)
	{
		uint32_t	c = classes[r].id;
		const NbItemCounts *in = NULL;

		if (c < t->spread_classes)
			in = cells[c].docs != 0 ? &cells[c] : NULL;
		else if (c < NB_INLINE_CLASSES && t->inline_counts[c] != NULL &&
				 t->inline_counts[c][id].count != 0)
			in = &t->inline_counts[c][id];
		if (in != NULL)
			write_entry(w, i++, r, in->count, in->docs);
		else if (b < n_bucket && bucket[b].cls == r)
		{
			write_entry(w, i++, r, bucket[b].count, bucket[b].docs);
			b++;
		}
	}
	return (uint32_t) (i - first);
}

/*
 * The item ids in canonical order.  Writing looks up no string: the
 * index's memory, 16 bytes or more per item (it is at most 3/4 full),
 * holds the sort keys instead, and the next row builds the index again.
 * Never build it here: the server writes in a scratch context, deleted
 * right after.  Freed once sorted, before the result is written.
 */
static uint32_t *
sorted_items(NbTrainer *t, const ItemOrder *order)
{
	uint32_t	V = t->tokens.count;
	ItemKey    *keys = nb_vocab_lend_index(&t->tokens);
	ItemKey    *own_keys = NULL;
	uint32_t   *ids;

	if (keys == NULL)
		keys = own_keys = nb_alloc(sizeof(ItemKey) * (V ? V : 1));
	for (uint32_t k = 0; k < V; k++)
	{
		uint32_t	len;
		const char *str = item_value(order, k, &len, &keys[k].group);
		unsigned char head[8] = {0};

		nb_interrupt_at(k);
		memcpy(head, str, len < 8 ? len : 8);
		keys[k].head = 0;
		for (int b = 0; b < 8; b++)
			keys[k].head = keys[k].head << 8 | head[b];
		keys[k].id = k;
	}
	sort_keys(order, keys, V);
	/* the ids in order are all that is left to know: 4 bytes an item, not 16 */
	ids = nb_alloc(sizeof(uint32_t) * (V ? V : 1));
	for (uint32_t k = 0; k < V; k++)
	{
		nb_interrupt_at(k);
		ids[k] = keys[k].id;
	}
	if (own_keys != NULL)
		nb_free(own_keys);
	else
		nb_vocab_drop_index(&t->tokens);
	return ids;
}

void
nb_trainer_write_view(NbTrainer *t, unsigned char *buf, size_t size, NbView *view)
{
	uint32_t	C = t->classes.count;
	uint32_t	V = t->tokens.count;
	uint32_t	F = t->features.count;
	NbFormatShape shape = written_shape(t);
	uint32_t   *class_rank = nb_alloc(sizeof(uint32_t) * (C ? C : 1));
	uint32_t   *feature_rank = nb_alloc(sizeof(uint32_t) * (F ? F : 1));
	StrRef	   *classes = sorted_strings(&t->classes, class_rank);
	StrRef	   *features = sorted_strings(&t->features, feature_rank);
	ItemOrder	order = {t, feature_rank,
	t->unnamed_bag >= 0 ? feature_rank[t->unnamed_bag] : 0};
	uint32_t   *ids = sorted_items(t, &order);
	uint64_t   *bucket_end = NULL;
	Entry	   *pairs = NULL;
	NbFormatWriter w;
	char	   *strings;
	uint64_t	e = 0;
	uint64_t	work = 0;

	if (t->pairs_used > 0)
		bucket_pairs(t, ids, class_rank, &bucket_end, &pairs);
	nb_format_begin(&w, &shape, buf, size);
	if (w.feature_name_len != NULL)
		write_features(t, features, classes, &order, ids, &w);
	if (shape.lengths)
		write_lengths(t, feature_rank, class_rank, &w);

	strings = w.labels;
	for (uint32_t c = 0; c < C; c++)
	{
		uint32_t	len = label_len(t, classes[c].len);

		nb_interrupt_count(&work, 1 + classes[c].len / 64);
		nb_write_f64(w.class_docs, c, t->class_docs[classes[c].id]);
		nb_write_u32(w.label_len, c, len);
		memcpy(strings, classes[c].str, len);
		strings += len;
	}
	for (uint32_t k = 0; k < V; k++)
	{
		uint32_t	len;
		uint32_t	group;
		const char *str = item_value(&order, ids[k], &len, &group);
		uint64_t	lo = pairs == NULL || k == 0 ? 0 : bucket_end[k - 1];
		uint64_t	hi = pairs == NULL ? 0 : bucket_end[k];
		const Entry *bucket = pairs == NULL ? NULL : pairs + lo;
		uint32_t	n = t->spread != NULL ?
			write_spread_item_entries(t, &w, ids[k], classes, bucket, hi - lo, e) :
			write_item_entries(t, &w, ids[k], class_rank, bucket, hi - lo, e);

		nb_interrupt_count(&work, 1 + n + len / 64);
		nb_write_u32(w.token_len, k, len);
		nb_write_u32(w.token_entries, k, n);
		memcpy(strings, str, len);
		strings += len;
		e += n;
	}
	if (w.feature_names != NULL)
		for (uint32_t j = 0; j < F; j++)
		{
			nb_interrupt_count(&work, 1 + features[j].len / 64);
			memcpy(strings, features[j].str, features[j].len);
			strings += features[j].len;
		}
	nb_format_finish(&w, view);

	nb_free(class_rank);
	nb_free(feature_rank);
	nb_free(classes);
	nb_free(features);
	nb_free(ids);
	nb_free_if(bucket_end);
	nb_free_if(pairs);
}

