/*
 * nb_vocab.h — byte strings (the trainer's items, labels, feature names)
 * interned to dense ids in first-seen order, compactly.
 *
 * A model's training memory is mostly its items' map, so it keeps little per
 * string: the bytes, back to back in one arena in id order, an 8-byte
 * offset, and a 16-byte slot in a hash table at most 3/4 full.  The
 * trainer keeps its statistics in arrays indexed by id (nb_trainer.h).
 *
 * A slot holds the id, a tag (24 bits of the hash and the length, up to
 * 255) and the string's first 8 bytes, so that finding a string of up to 8
 * bytes (most tokens) reads the slot and nothing else, and a longer one the
 * arena only when the slot matches.  Hashes are not kept: the table is
 * rebuilt from the arena when it grows (the old table is freed first, so the
 * two never coexist), and the writer of the model sorts in its memory
 * (nb_vocab_lend_index): the next nb_vocab_index builds it again.
 */
#ifndef NB_VOCAB_H
#define NB_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nb_hash.h"
#include "nb_port.h"

typedef struct NbVocabSlot
{
	uint32_t	id1;			/* id + 1; 0 = empty slot */
	uint32_t	tag;			/* see nb_vocab_tag */
	uint64_t	head;			/* see nb_vocab_head */
} NbVocabSlot;

typedef struct NbVocab
{
	char	   *arena;			/* the strings in id order */
	uint64_t	arena_cap;
	uint64_t   *offsets;		/* offsets[id], and offsets[count] = bytes used */
	uint32_t	count;
	uint32_t	cap;			/* ids offsets has room for */
	NbVocabSlot *slots;			/* the index, or NULL */
	uint32_t	mask;			/* number of slots - 1 (a power of two) */
	bool		indexed;		/* whether slots is the index (else scratch or NULL) */
} NbVocab;

void		nb_vocab_init(NbVocab *v);
void		nb_vocab_free(NbVocab *v);

static inline uint64_t
nb_vocab_bytes(const NbVocab *v)
{
	return v->offsets[v->count];
}

static inline const char *
nb_vocab_str(const NbVocab *v, uint32_t id, uint32_t *len)
{
	*len = (uint32_t) (v->offsets[id + 1] - v->offsets[id]);
	return v->arena + v->offsets[id];
}

/* The slot's tag of a string: the hash's top 24 bits and the length, capped at 255. */
static inline uint32_t
nb_vocab_tag(uint64_t hash, uint32_t len)
{
	return ((uint32_t) (hash >> 32) & ~UINT32_C(0xff)) | (len < 255 ? len : 255);
}

/*
 * The slot's head of a string: its first 8 bytes, or for a shorter one a
 * word that, for a given length, only that string has (nb_tail_word reads
 * it without a byte copy).
 */
static inline uint64_t
nb_vocab_head(const char *str, uint32_t len)
{
	return nb_tail_word((const unsigned char *) str, len < 8 ? len : 8, len < 8 ? len : 8);
}

/* Whether id's string, whose tag and head matched, is str (a string of more than 8 bytes). */
static inline bool
nb_vocab_rest_equal(const NbVocab *v, uint32_t id, const char *str, uint32_t len)
{
	return v->offsets[id + 1] - v->offsets[id] == len &&
		memcmp(v->arena + v->offsets[id] + 8, str + 8, len - 8) == 0;
}

/*
 * Id of the string, or -1 when absent; hash is nb_hash_token's.  The index
 * must be there (nb_vocab_index).  Inline: the hot path of training.
 */
NB_HOT_INLINE int64_t
nb_vocab_find(const NbVocab *v, const char *str, uint32_t len, uint64_t hash)
{
	uint32_t	tag = nb_vocab_tag(hash, len);
	uint64_t	head = nb_vocab_head(str, len);

	for (uint32_t i = (uint32_t) hash & v->mask;; i = (i + 1) & v->mask)
	{
		const NbVocabSlot *s = &v->slots[i];

		if (s->id1 == 0)
			return -1;
		if (s->tag == tag && s->head == head &&
			(len <= 8 || nb_vocab_rest_equal(v, s->id1 - 1, str, len)))
			return (int64_t) s->id1 - 1;
	}
}

/* Ask the CPU to fetch the slot a lookup of this hash starts at. */
static inline void
nb_vocab_prefetch(const NbVocab *v, uint64_t hash)
{
	nb_prefetch(&v->slots[(uint32_t) hash & v->mask]);
}

/*
 * Add a string known to be absent; returns its id.  The index must be there.
 * Ids are 32-bit: a model, at most 1 GB, has fewer strings.
 */
uint32_t	nb_vocab_add(NbVocab *v, const char *str, uint32_t len, uint64_t hash);

/* Id of the string, adding it when absent.  The index must be there. */
uint32_t	nb_vocab_intern(NbVocab *v, const char *str, uint32_t len, uint64_t hash);

/* Build the index anew with nslots slots (a power of two, room for every string). */
void		nb_vocab_rebuild(NbVocab *v, uint32_t nslots);

/* Make sure the index is there (rebuilding it if it was lent, see below). */
static inline void
nb_vocab_index(NbVocab *v)
{
	if (!v->indexed)
		nb_vocab_rebuild(v, v->mask + 1);
}

/*
 * Lend the index's memory as scratch space: at least 16 bytes per string,
 * aligned for 8-byte words, the vocab's until the next nb_vocab_index
 * (which builds the index anew) or nb_vocab_free.  The strings and ids
 * stay.  NULL if there is none (a cancel interrupted building it): the
 * caller then allocates its own, since nothing allocated outside
 * nb_vocab_index may become the vocab's (see nb_trainer_write_view).
 */
static inline void *
nb_vocab_lend_index(NbVocab *v)
{
	v->indexed = false;
	return v->slots;
}

/* Free the index's memory (lent or not) until the next nb_vocab_index. */
void		nb_vocab_drop_index(NbVocab *v);

#endif
