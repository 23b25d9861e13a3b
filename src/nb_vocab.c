/*
 * nb_vocab.c — the trainer's compact item map, see nb_vocab.h.
 */
#include "nb_vocab.h"

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "nb_port.h"

#define NB_VOCAB_MIN_SLOTS 64

/* Strings hashed and placed at a time when the index is rebuilt. */
#define NB_VOCAB_BATCH 256

void
nb_vocab_init(NbVocab *v)
{
	memset(v, 0, sizeof(*v));
	v->cap = 64;
	v->offsets = nb_alloc(sizeof(uint64_t) * ((uint64_t) v->cap + 1));
	v->offsets[0] = 0;
	v->arena_cap = 512;
	v->arena = nb_alloc(v->arena_cap);
	v->mask = NB_VOCAB_MIN_SLOTS - 1;
	v->slots = nb_alloc_zero(sizeof(NbVocabSlot) * NB_VOCAB_MIN_SLOTS);
	v->indexed = true;
}

void
nb_vocab_free(NbVocab *v)
{
	nb_free(v->arena);
	nb_free(v->offsets);
	nb_vocab_drop_index(v);
	memset(v, 0, sizeof(*v));
}

void
nb_vocab_drop_index(NbVocab *v)
{
	nb_free_if(v->slots);
	v->slots = NULL;
	v->indexed = false;
}

/* Put id into the first free slot of its probe sequence in slots of mask. */
static inline void
place(const NbVocab *v, NbVocabSlot *slots, uint32_t mask, uint32_t id, uint64_t hash)
{
	uint32_t	len;
	const char *str = nb_vocab_str(v, id, &len);
	uint32_t	i = (uint32_t) hash & mask;

	while (slots[i].id1 != 0)
		i = (i + 1) & mask;
	slots[i].id1 = id + 1;
	slots[i].tag = nb_vocab_tag(hash, len);
	slots[i].head = nb_vocab_head(str, len);
}

/*
 * The old index is freed before the new one is allocated, and the new one
 * is published only when complete: jumping out at a cancellation point
 * leaves no index (the next nb_vocab_index builds it), never a freed or a
 * partial one.
 */
void
nb_vocab_rebuild(NbVocab *v, uint32_t nslots)
{
	uint64_t	hash[NB_VOCAB_BATCH];
	uint32_t	mask = nslots - 1;
	NbVocabSlot *slots;

	nb_vocab_drop_index(v);
	v->mask = mask;
	slots = nb_alloc_zero(sizeof(NbVocabSlot) * (size_t) nslots);
	/* the arena is read in order; the slots, at random, are fetched ahead */
	for (uint32_t lo = 0; lo < v->count; lo += NB_VOCAB_BATCH)
	{
		uint32_t	n = v->count - lo < NB_VOCAB_BATCH ? v->count - lo : NB_VOCAB_BATCH;

		for (uint32_t i = 0; i < n; i++)
		{
			uint32_t	len;
			const char *str = nb_vocab_str(v, lo + i, &len);

			hash[i] = nb_hash_token(str, len);
			nb_prefetch(&slots[(uint32_t) hash[i] & mask]);
		}
		for (uint32_t i = 0; i < n; i++)
			place(v, slots, mask, lo + i, hash[i]);
		nb_interrupt();
	}
	v->slots = slots;
	v->indexed = true;
}

uint32_t
nb_vocab_intern(NbVocab *v, const char *str, uint32_t len, uint64_t hash)
{
	int64_t		found = nb_vocab_find(v, str, len, hash);

	return found >= 0 ? (uint32_t) found : nb_vocab_add(v, str, len, hash);
}

uint32_t
nb_vocab_add(NbVocab *v, const char *str, uint32_t len, uint64_t hash)
{
	uint32_t	id = v->count;
	uint64_t	used = v->offsets[id];

	if (id == v->cap)
	{
		v->cap *= 2;
		v->offsets = nb_realloc(v->offsets, sizeof(uint64_t) * ((uint64_t) v->cap + 1));
	}
	if (used + len > v->arena_cap)
	{
		while (used + len > v->arena_cap)
			v->arena_cap *= 2;
		v->arena = nb_realloc(v->arena, v->arena_cap);
	}
	memcpy(v->arena + used, str, len);
	v->offsets[id + 1] = used + len;
	v->count++;
	/* at most 3/4 full: probes stay short in 16-byte slots, four to a cache line */
	if ((uint64_t) v->count * 4 > ((uint64_t) v->mask + 1) * 3)
		nb_vocab_rebuild(v, (v->mask + 1) * 2);
	else
		place(v, v->slots, v->mask, id, hash);
	return id;
}
