/*
 * nb_trainer.c — accumulation, merging and serialization of models.
 */
#include "nb_trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"

#define NB_EMPTY_KEY UINT64_MAX

static void
init_pairs(NbTrainer *t, uint64_t nslots)
{
	t->pairs = nb_alloc(sizeof(NbPairSlot) * nslots);
	for (uint64_t i = 0; i < nslots; i++)
		t->pairs[i].key = NB_EMPTY_KEY;
	t->pair_mask = nslots - 1;
}

NbTrainer *
nb_trainer_create(void)
{
	NbTrainer  *t = nb_alloc_zero(sizeof(NbTrainer));

	nb_strmap_init(&t->classes, 8);
	t->class_cap = 8;
	t->class_docs = nb_alloc_zero(sizeof(double) * t->class_cap);
	nb_strmap_init(&t->tokens, 64);
	init_pairs(t, 256);
	return t;
}

void
nb_trainer_destroy(NbTrainer *t)
{
	nb_strmap_free(&t->classes);
	nb_strmap_free(&t->tokens);
	nb_free(t->class_docs);
	nb_free(t->pairs);
	if (t->scratch_hash != NULL)
	{
		nb_free(t->scratch_hash);
		nb_free(t->scratch_id);
	}
	nb_free(t);
}

static uint32_t
intern_class(NbTrainer *t, const char *label, uint32_t len)
{
	uint64_t	h = nb_hash_token(label, len);
	uint32_t	c = nb_strmap_intern(&t->classes, label, len, h);

	if (c >= t->class_cap)
	{
		uint32_t	old = t->class_cap;

		t->class_cap *= 2;
		t->class_docs = nb_realloc(t->class_docs, sizeof(double) * t->class_cap);
		memset(t->class_docs + old, 0, sizeof(double) * (t->class_cap - old));
	}
	return c;
}

static void
grow_pairs(NbTrainer *t)
{
	NbPairSlot *old = t->pairs;
	uint64_t	old_slots = t->pair_mask + 1;

	init_pairs(t, old_slots * 2);
	for (uint64_t i = 0; i < old_slots; i++)
	{
		uint64_t	j;

		if (old[i].key == NB_EMPTY_KEY)
			continue;
		j = nb_hash_mix(old[i].key) & t->pair_mask;
		while (t->pairs[j].key != NB_EMPTY_KEY)
			j = (j + 1) & t->pair_mask;
		t->pairs[j] = old[i];
	}
	nb_free(old);
}

static inline uint64_t
pair_key(uint32_t token, uint32_t cls)
{
	return (uint64_t) token << 32 | cls;
}

/*
 * The slot of a (token, class) pair given the key's hash, created with zero
 * counts if new.  The caller makes sure there is room for one more pair.
 */
static inline NbPairSlot *
find_pair(NbTrainer *t, uint64_t key, uint64_t hash)
{
	uint64_t	j = hash & t->pair_mask;

	for (;;)
	{
		NbPairSlot *s = &t->pairs[j];

		if (s->key == key)
			return s;
		if (s->key == NB_EMPTY_KEY)
		{
			s->key = key;
			s->count = 0;
			s->docs = 0;
			s->last_doc = 0;
			t->n_pairs++;
			return s;
		}
		j = (j + 1) & t->pair_mask;
	}
}

/* Grow the pair table so that n more pairs keep its load factor at most 1/2. */
static void
reserve_pairs(NbTrainer *t, uint64_t n)
{
	while ((t->n_pairs + n) * 2 > t->pair_mask + 1)
		grow_pairs(t);
}

void
nb_trainer_begin_doc(NbTrainer *t, const char *label, uint32_t len, double weight)
{
	t->doc_class = intern_class(t, label, len);
	t->class_docs[t->doc_class] += weight;
	if (!isfinite(t->class_docs[t->doc_class]))
		t->overflow = true;
	t->doc_weight = weight;
	t->doc_seq++;
}

static void
reserve_scratch(NbTrainer *t, uint32_t n)
{
	if (n <= t->scratch_cap)
		return;
	t->scratch_cap = n > 2 * t->scratch_cap ? n : 2 * t->scratch_cap;
	if (t->scratch_hash != NULL)
	{
		nb_free(t->scratch_hash);
		nb_free(t->scratch_id);
	}
	t->scratch_hash = nb_alloc(sizeof(uint64_t) * t->scratch_cap);
	t->scratch_id = nb_alloc(sizeof(uint32_t) * t->scratch_cap);
}

/*
 * Three passes over the batch: hash every token; resolve token ids; update
 * the (token, class) counts.  The second and third prefetch the slots they
 * will need NB_PREFETCH_DISTANCE tokens ahead, so that cache misses overlap.
 */
void
nb_trainer_add_tokens(NbTrainer *t, const NbTokenRef *tokens, uint32_t n)
{
	uint64_t   *hash;
	uint32_t   *id;

	reserve_scratch(t, n);
	hash = t->scratch_hash;
	id = t->scratch_id;
	for (uint32_t i = 0; i < n; i++)
		hash[i] = nb_hash_token(tokens[i].str, tokens[i].len);
	reserve_pairs(t, n);
	for (uint32_t i = 0; i < n && i < NB_PREFETCH_DISTANCE; i++)
		nb_strmap_prefetch(&t->tokens, hash[i]);
	for (uint32_t i = 0; i < n; i++)
	{
		int64_t		found;

		if (i + NB_PREFETCH_DISTANCE < n)
			nb_strmap_prefetch(&t->tokens, hash[i + NB_PREFETCH_DISTANCE]);
		found = nb_strmap_find(&t->tokens, tokens[i].str, tokens[i].len, hash[i]);
		id[i] = found >= 0 ? (uint32_t) found :
			nb_strmap_intern(&t->tokens, tokens[i].str, tokens[i].len, hash[i]);
		/* from here on hash[i] holds the hash of the (token, class) key */
		hash[i] = nb_hash_mix(pair_key(id[i], t->doc_class));
	}
	for (uint32_t i = 0; i < n && i < NB_PREFETCH_DISTANCE; i++)
		__builtin_prefetch(&t->pairs[hash[i] & t->pair_mask]);
	for (uint32_t i = 0; i < n; i++)
	{
		NbPairSlot *s;

		if (i + NB_PREFETCH_DISTANCE < n)
			__builtin_prefetch(&t->pairs[hash[i + NB_PREFETCH_DISTANCE] & t->pair_mask]);
		s = find_pair(t, pair_key(id[i], t->doc_class), hash[i]);

		s->count += tokens[i].count * t->doc_weight;
		if (s->last_doc != t->doc_seq)
		{
			s->docs += t->doc_weight;
			s->last_doc = t->doc_seq;
		}
		if (!isfinite(s->count))
			t->overflow = true;
	}
}

void
nb_trainer_merge_view(NbTrainer *t, const NbView *v)
{
	uint32_t   *class_map = nb_alloc(sizeof(uint32_t) * v->n_classes);
	const char *s = v->labels;
	uint64_t	e = 0;

	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		uint32_t	len = nb_read_u32(v->label_len, c);

		class_map[c] = intern_class(t, s, len);
		t->class_docs[class_map[c]] += nb_read_f64(v->class_docs, c);
		if (!isfinite(t->class_docs[class_map[c]]))
			t->overflow = true;
		s += len;
	}
	s = v->tokens;
	for (uint32_t k = 0; k < v->n_tokens; k++)
	{
		uint32_t	len = nb_read_u32(v->token_len, k);
		uint32_t	n = nb_read_u32(v->token_entries, k);
		uint32_t	tok = nb_strmap_intern(&t->tokens, s,
										   len, nb_hash_token(s, len));

		for (uint32_t i = 0; i < n; i++, e++)
		{
			uint64_t	key = pair_key(tok, class_map[nb_read_u32(v->entry_class, e)]);
			NbPairSlot *slot;

			reserve_pairs(t, 1);
			slot = find_pair(t, key, nb_hash_mix(key));

			slot->count += nb_read_f64(v->entry_count, e);
			slot->docs += nb_read_f64(v->entry_docs, e);
			if (!isfinite(slot->count))
				t->overflow = true;
		}
		s += len;
	}
	nb_free(class_map);
}

bool
nb_trainer_sums_finite(const NbTrainer *t)
{
	double		docs = 0;
	double		count = 0;
	double		doc_freq = 0;

	if (t->overflow)
		return false;
	for (uint32_t c = 0; c < t->classes.count; c++)
		docs += t->class_docs[c];
	for (uint64_t i = 0; i <= t->pair_mask; i++)
		if (t->pairs[i].key != NB_EMPTY_KEY)
		{
			count += t->pairs[i].count;
			doc_freq += t->pairs[i].docs;
		}
	return isfinite(docs) && isfinite(count) && isfinite(doc_freq);
}

size_t
nb_trainer_flat_size(const NbTrainer *t, size_t max_size)
{
	/* all terms are bounded by memory already allocated, so no overflow in 64 bits */
	uint64_t	size = NB_HEADER_SIZE +
		(uint64_t) t->classes.count * (8 + 4) +
		(uint64_t) t->tokens.count * (4 + 4) +
		t->n_pairs * (4 + 8 + 8) +
		t->classes.arena_used + t->tokens.arena_used;

	return size > max_size ? 0 : (size_t) size;
}

/* A string with its id, sorted into canonical (byte) order. */
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

/* Sort a map's strings; returns the sorted refs and fills rank[id]. */
static StrRef *
sorted_strings(const NbStrMap *map, uint32_t *rank)
{
	StrRef	   *refs = nb_alloc(sizeof(StrRef) * (map->count ? map->count : 1));

	for (uint32_t i = 0; i < map->count; i++)
	{
		refs[i].str = nb_strmap_str(map, i, &refs[i].len);
		refs[i].id = i;
	}
	qsort(refs, map->count, sizeof(StrRef), cmp_strref);
	for (uint32_t i = 0; i < map->count; i++)
		rank[refs[i].id] = i;
	return refs;
}

typedef struct Entry
{
	uint32_t	cls;
	double		count;
	double		docs;
} Entry;

static int
cmp_entry(const void *a, const void *b)
{
	const Entry *x = a;
	const Entry *y = b;

	return (x->cls > y->cls) - (x->cls < y->cls);
}

void
nb_trainer_write(const NbTrainer *t, unsigned char *buf, size_t size)
{
	uint32_t	C = t->classes.count;
	uint32_t	V = t->tokens.count;
	uint64_t	E = t->n_pairs;
	uint32_t   *class_rank = nb_alloc(sizeof(uint32_t) * (C ? C : 1));
	uint32_t   *token_rank = nb_alloc(sizeof(uint32_t) * (V ? V : 1));
	StrRef	   *classes = sorted_strings(&t->classes, class_rank);
	StrRef	   *tokens = sorted_strings(&t->tokens, token_rank);
	uint64_t   *start = nb_alloc_zero(sizeof(uint64_t) * ((uint64_t) V + 1));
	Entry	   *entries = nb_alloc(sizeof(Entry) * (E ? E : 1));
	unsigned char *docs, *label_len, *token_len, *token_entries, *entry_class,
			   *entry_count, *entry_docs;
	char	   *strings;
	uint16_t	version = NB_FORMAT_VERSION;
	uint16_t	flags = 0;
	uint64_t	u;

	/* bucket the pairs by token rank (counting sort), then order each bucket by class */
	for (uint64_t i = 0; i <= t->pair_mask; i++)
		if (t->pairs[i].key != NB_EMPTY_KEY)
			start[token_rank[t->pairs[i].key >> 32] + 1]++;
	for (uint32_t k = 0; k < V; k++)
		start[k + 1] += start[k];
	{
		uint64_t   *fill = nb_alloc(sizeof(uint64_t) * (V ? V : 1));

		memcpy(fill, start, sizeof(uint64_t) * V);
		for (uint64_t i = 0; i <= t->pair_mask; i++)
		{
			const NbPairSlot *s = &t->pairs[i];
			Entry	   *en;

			if (s->key == NB_EMPTY_KEY)
				continue;
			en = &entries[fill[token_rank[s->key >> 32]]++];
			en->cls = class_rank[(uint32_t) s->key];
			en->count = s->count;
			en->docs = s->docs;
		}
		nb_free(fill);
	}
	for (uint32_t k = 0; k < V; k++)
		if (start[k + 1] - start[k] > 1)
			qsort(entries + start[k], start[k + 1] - start[k], sizeof(Entry), cmp_entry);

	memset(buf, 0, NB_HEADER_SIZE);
	memcpy(buf, "NBCM", 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	version = __builtin_bswap16(version);
#endif
	memcpy(buf + 4, &version, 2);
	memcpy(buf + 6, &flags, 2);
	nb_write_u32(buf + 8, 0, C);
	nb_write_u32(buf + 12, 0, V);
	nb_write_u32(buf + 16, 0, (uint32_t) E);
	nb_write_u32(buf + 20, 0, (uint32_t) (E >> 32));

	docs = buf + NB_HEADER_SIZE;
	label_len = docs + (uint64_t) C * 8;
	token_len = label_len + (uint64_t) C * 4;
	token_entries = token_len + (uint64_t) V * 4;
	entry_class = token_entries + (uint64_t) V * 4;
	entry_count = entry_class + E * 4;
	entry_docs = entry_count + E * 8;
	strings = (char *) (entry_docs + E * 8);

	for (uint32_t c = 0; c < C; c++)
	{
		nb_write_f64(docs, c, t->class_docs[classes[c].id]);
		nb_write_u32(label_len, c, classes[c].len);
		memcpy(strings, classes[c].str, classes[c].len);
		strings += classes[c].len;
	}
	for (uint32_t k = 0; k < V; k++)
	{
		nb_write_u32(token_len, k, tokens[k].len);
		nb_write_u32(token_entries, k, (uint32_t) (start[k + 1] - start[k]));
		memcpy(strings, tokens[k].str, tokens[k].len);
		strings += tokens[k].len;
	}
	for (uint64_t i = 0; i < E; i++)
	{
		nb_write_u32(entry_class, i, entries[i].cls);
		nb_write_f64(entry_count, i, entries[i].count);
		nb_write_f64(entry_docs, i, entries[i].docs);
	}

	u = nb_format_checksum(buf, size);
	nb_write_u32(buf + 24, 0, (uint32_t) u);
	nb_write_u32(buf + 28, 0, (uint32_t) (u >> 32));

	nb_free(class_rank);
	nb_free(token_rank);
	nb_free(classes);
	nb_free(tokens);
	nb_free(start);
	nb_free(entries);
}
