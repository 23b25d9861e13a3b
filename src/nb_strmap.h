/*
 * nb_strmap.h — interning of byte strings (class labels, feature names) to
 * dense ids.
 *
 * Strings are copied into one growing arena; ids are assigned 0, 1, 2, ...
 * in first-seen order.  Open addressing with linear probing.  A slot holds
 * the id, part of the hash, the length and, for strings of up to
 * NB_SLOT_INLINE bytes (most labels), a copy of the string: a lookup then
 * touches a single cache line.  Each id keeps its full 64-bit hash
 * (nb_hash_token) so growing never rehashes bytes.
 */
#ifndef NB_STRMAP_H
#define NB_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nb_hash.h"
#include "nb_port.h"

/* Ids and string lengths are 32-bit: a model is at most 1 GB anyway. */
#define NB_MAX_STRINGS UINT32_C(0x7ffffffe)

#define NB_SLOT_INLINE 20

typedef struct NbStrSlot
{
	uint32_t	id1;			/* id + 1; 0 = empty slot */
	uint32_t	tag;			/* high 32 bits of the hash */
	uint32_t	len;
	char		bytes[NB_SLOT_INLINE];	/* the string, if len <= NB_SLOT_INLINE */
} NbStrSlot;

typedef struct NbStrMap
{
	char	   *arena;
	size_t		arena_used;
	size_t		arena_cap;
	/* id's string is arena[offsets[id]] .. arena[offsets[id + 1] - 1] */
	size_t	   *offsets;
	uint64_t   *hashes;			/* hashes[id] */
	uint32_t	count;
	uint32_t	id_cap;
	NbStrSlot  *slots;
	uint32_t	slot_mask;		/* number of slots - 1 (a power of two) */
} NbStrMap;

/* Room for this many strings without growing. */
void		nb_strmap_init(NbStrMap *map, uint32_t expected);
void		nb_strmap_free(NbStrMap *map);

/* Whether an occupied slot holds the string (its tag already matched). */
NB_HOT_INLINE bool
nb_strmap_slot_holds(const NbStrMap *map, const NbStrSlot *slot, const char *str, uint32_t len)
{
	return slot->len == len &&
		nb_bytes_equal(len <= NB_SLOT_INLINE ? slot->bytes :
					   map->arena + map->offsets[slot->id1 - 1], str, len);
}

/* Id of the string, or -1 when absent (inline: the trainer's hot path). */
NB_HOT_INLINE int64_t
nb_strmap_find(const NbStrMap *map, const char *str, uint32_t len, uint64_t hash)
{
	uint32_t	tag = (uint32_t) (hash >> 32);

	for (uint32_t i = (uint32_t) hash & map->slot_mask;; i = (i + 1) & map->slot_mask)
	{
		const NbStrSlot *slot = &map->slots[i];

		if (slot->id1 == 0)
			return -1;
		if (slot->tag == tag && nb_strmap_slot_holds(map, slot, str, len))
			return (int64_t) slot->id1 - 1;
	}
}

/*
 * Id of the string, adding it when absent (which may move every slot: a
 * slot number found before is then stale).
 */
uint32_t	nb_strmap_intern(NbStrMap *map, const char *str, uint32_t len,
							 uint64_t hash);

/* nb_strmap_intern for a string known to be absent (no lookup first). */
uint32_t	nb_strmap_add(NbStrMap *map, const char *str, uint32_t len, uint64_t hash);

static inline const char *
nb_strmap_str(const NbStrMap *map, uint32_t id, uint32_t *len)
{
	*len = (uint32_t) (map->offsets[id + 1] - map->offsets[id]);
	return map->arena + map->offsets[id];
}

#endif
