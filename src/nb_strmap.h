/*
 * nb_strmap.h — interning of byte strings (tokens, class labels) to dense ids.
 *
 * Strings are copied into one growing arena; ids are assigned 0, 1, 2, ...
 * in first-seen order.  Open addressing with linear probing.  A slot holds
 * the id, part of the hash, the length and, for strings of up to
 * NB_SLOT_INLINE bytes (most tokens), a copy of the string: a lookup then
 * touches a single cache line, which is what makes a large vocabulary fast.
 * A map may also keep a few bytes of the caller's per string in the slot,
 * after the NbStrSlot (the trainer keeps counts there), so that what a
 * lookup is for is in the line it fetched.  Each id keeps its full 64-bit
 * hash (nb_hash_token) so growing never rehashes bytes, unless the map
 * was made for appending (nb_strmap_init_appending).
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
	uint64_t   *hashes;			/* hashes[id], or NULL (nb_strmap_init_appending) */
	uint32_t	count;
	uint32_t	placed;			/* ids below this have their slot (nb_strmap_append) */
	uint32_t	id_cap;
	NbStrSlot  *slots;			/* slot_size bytes apart, see nb_strmap_slot */
	void	   *slots_block;	/* the allocation slots is aligned in */
	uint32_t	slot_size;		/* sizeof(NbStrSlot) + the payload */
	uint32_t	slot_mask;		/* number of slots - 1 (a power of two) */
} NbStrMap;

/* Room for this many strings without growing; no payload. */
void		nb_strmap_init(NbStrMap *map, uint32_t expected);

/*
 * The same for strings to be appended (nb_strmap_append), with the slots
 * made only by nb_strmap_place_appended, at their final size: until then
 * the map holds its strings and ids only, so a caller can free what it
 * copied them from before the slots take their memory.  Nor does it keep
 * their hashes (8 bytes per string): the strings must be hashed with
 * nb_hash_token, which nb_strmap_hash_of then does again.
 */
void		nb_strmap_init_appending(NbStrMap *map, uint32_t expected);

/*
 * With payload bytes (zeroed) in each slot after its NbStrSlot, which move
 * with it when the map grows; sizeof(NbStrSlot) + payload must be a power
 * of two, and slots are aligned to it (to cache lines, up to 64 bytes).
 */
void		nb_strmap_init_payload(NbStrMap *map, uint32_t expected, uint32_t payload);

static inline NbStrSlot *
nb_strmap_slot(const NbStrMap *map, uint32_t i)
{
	return (NbStrSlot *) ((char *) map->slots + (size_t) i * map->slot_size);
}

/* The payload of slot i (see nb_strmap_init_payload). */
static inline void *
nb_strmap_payload(const NbStrMap *map, uint32_t i)
{
	return nb_strmap_slot(map, i) + 1;
}
void		nb_strmap_free(NbStrMap *map);

/*
 * The probe sequence of a lookup (linear probing): the slot it starts at,
 * then the slot after i.  A caller that keeps a table of its own beside the
 * slots (same number, same positions) probes that table along this sequence.
 */
static inline uint32_t
nb_strmap_probe_start(const NbStrMap *map, uint64_t hash)
{
	return (uint32_t) hash & map->slot_mask;
}

static inline uint32_t
nb_strmap_probe_next(const NbStrMap *map, uint32_t i)
{
	return (i + 1) & map->slot_mask;
}

/* Whether an occupied slot holds the string (its tag already matched). */
NB_HOT_INLINE bool
nb_strmap_slot_holds(const NbStrMap *map, const NbStrSlot *slot, const char *str, uint32_t len)
{
	return slot->len == len &&
		nb_bytes_equal(len <= NB_SLOT_INLINE ? slot->bytes :
					   map->arena + map->offsets[slot->id1 - 1], str, len);
}

/*
 * The slot holding the string, or -1 when absent; slot_size is
 * map->slot_size, which a caller that knows it passes as a constant.
 * Inline: it is the hot path of both training and scoring.
 */
NB_HOT_INLINE int64_t
nb_strmap_find_sized(const NbStrMap *map, size_t slot_size, const char *str, uint32_t len,
					 uint64_t hash)
{
	uint32_t	tag = (uint32_t) (hash >> 32);

	for (uint32_t i = nb_strmap_probe_start(map, hash);; i = nb_strmap_probe_next(map, i))
	{
		const NbStrSlot *slot = (const NbStrSlot *) ((const char *) map->slots + (size_t) i * slot_size);

		if (slot->id1 == 0)
			return -1;
		if (slot->tag == tag && nb_strmap_slot_holds(map, slot, str, len))
			return i;
	}
}

/* The slot of map->slots holding the string, or -1 when absent. */
NB_HOT_INLINE int64_t
nb_strmap_find_slot(const NbStrMap *map, const char *str, uint32_t len, uint64_t hash)
{
	return nb_strmap_find_sized(map, map->slot_size, str, len, hash);
}

/* Id of the string, or -1 when absent. */
NB_HOT_INLINE int64_t
nb_strmap_find(const NbStrMap *map, const char *str, uint32_t len, uint64_t hash)
{
	int64_t		i = nb_strmap_find_slot(map, str, len, hash);

	return i < 0 ? -1 : (int64_t) nb_strmap_slot(map, (uint32_t) i)->id1 - 1;
}

/* The slot of an id whose string has this hash (nb_strmap_hash_of). */
uint32_t	nb_strmap_slot_of(const NbStrMap *map, uint32_t id, uint64_t hash);

/* The hash of id's string: kept, or made again (nb_strmap_init_appending). */
uint64_t	nb_strmap_hash_of(const NbStrMap *map, uint32_t id);

/*
 * Ask the CPU to fetch the slot a lookup of this hash starts at.  Callers
 * with many strings to look up prefetch them all first, so that the cache
 * misses overlap instead of following one another.
 */
static inline void
nb_strmap_prefetch(const NbStrMap *map, uint64_t hash)
{
	nb_prefetch(nb_strmap_slot(map, nb_strmap_probe_start(map, hash)));
}

/*
 * Id of the string, adding it when absent (which may move every slot: a
 * slot number found before is then stale).
 */
uint32_t	nb_strmap_intern(NbStrMap *map, const char *str, uint32_t len,
							 uint64_t hash);

/* nb_strmap_intern for a string known to be absent (no lookup first). */
uint32_t	nb_strmap_add(NbStrMap *map, const char *str, uint32_t len, uint64_t hash);

/*
 * nb_strmap_add without finding the string a slot: lookups miss it until
 * nb_strmap_place_appended, which places every such string at once, much
 * faster for many (the slots they go to are fetched ahead).  A map made by
 * nb_strmap_init_appending ignores hash.
 */
uint32_t	nb_strmap_append(NbStrMap *map, const char *str, uint32_t len, uint64_t hash);
void		nb_strmap_place_appended(NbStrMap *map);

static inline const char *
nb_strmap_str(const NbStrMap *map, uint32_t id, uint32_t *len)
{
	*len = (uint32_t) (map->offsets[id + 1] - map->offsets[id]);
	return map->arena + map->offsets[id];
}

#endif
