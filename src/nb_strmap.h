/*
 * nb_strmap.h — interning of byte strings (tokens, class labels) to dense ids.
 *
 * Strings are copied into one growing arena; ids are assigned 0, 1, 2, ...
 * in first-seen order.  Open addressing with linear probing over a table of
 * ids; each id keeps its full 64-bit hash so growing never rehashes bytes.
 */
#ifndef NB_STRMAP_H
#define NB_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Ids and string lengths are 32-bit: a model is at most 1 GB anyway. */
#define NB_MAX_STRINGS UINT32_C(0x7ffffffe)

typedef struct NbStrMap
{
	char	   *arena;
	size_t		arena_used;
	size_t		arena_cap;
	size_t	   *offsets;		/* offsets[id] into arena */
	uint32_t   *lengths;		/* lengths[id] */
	uint64_t   *hashes;			/* hashes[id] */
	uint32_t	count;
	uint32_t	id_cap;
	uint64_t   *slots;			/* high 32 bits of the hash << 32 | (id + 1); 0 = empty */
	uint32_t	slot_mask;		/* number of slots - 1 (a power of two) */
} NbStrMap;

void		nb_strmap_init(NbStrMap *map, uint32_t expected);
void		nb_strmap_free(NbStrMap *map);

/*
 * Id of the string, or -1 when absent.  Inline: it is the hot path of both
 * training and scoring.  Each slot carries part of the hash, so a probe
 * touches the string only when that part matches.
 */
static inline int64_t
nb_strmap_find(const NbStrMap *map, const char *str, uint32_t len, uint64_t hash)
{
	uint32_t	i = (uint32_t) hash & map->slot_mask;
	uint64_t	tag = hash >> 32;

	for (;;)
	{
		uint64_t	slot = map->slots[i];
		uint32_t	id;

		if (slot == 0)
			return -1;
		id = (uint32_t) slot - 1;
		if ((slot >> 32) == tag && map->lengths[id] == len &&
			memcmp(map->arena + map->offsets[id], str, len) == 0)
			return id;
		i = (i + 1) & map->slot_mask;
	}
}

/* Id of the string, adding it when absent. */
uint32_t	nb_strmap_intern(NbStrMap *map, const char *str, uint32_t len,
							 uint64_t hash);

static inline const char *
nb_strmap_str(const NbStrMap *map, uint32_t id, uint32_t *len)
{
	*len = map->lengths[id];
	return map->arena + map->offsets[id];
}

/* Seed of the string hash; any fixed value works, it is not stored anywhere. */
#define NB_STRING_SEED UINT64_C(0x6e62632d746f6b31)

#endif
