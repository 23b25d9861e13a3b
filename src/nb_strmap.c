/*
 * nb_strmap.c — string interning, see nb_strmap.h.
 */
#include "nb_strmap.h"

#include <stdint.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"

static uint32_t
slots_for(uint32_t expected)
{
	uint32_t	n = 16;

	/* keep the load factor at most 1/2 */
	while (n < (uint64_t) expected * 2 && n < (UINT32_C(1) << 31))
		n <<= 1;
	return n;
}

/* A zeroed slot array of nslots slots, aligned to the slot size. */
static NbStrSlot *
alloc_slots(const NbStrMap *map, uint32_t nslots, void **block)
{
	size_t		size = map->slot_size;

	*block = nb_alloc_zero(size * ((size_t) nslots + 1));
	return (NbStrSlot *) (((uintptr_t) *block + size - 1) & ~(uintptr_t) (size - 1));
}

/* Room for expected ids and their strings, and nslots slots; hashes kept or not. */
static void
init(NbStrMap *map, uint32_t expected, uint32_t payload, uint32_t nslots, bool hashes)
{
	memset(map, 0, sizeof(*map));
	map->id_cap = expected < 8 ? 8 : expected;
	map->offsets = nb_alloc(sizeof(size_t) * ((size_t) map->id_cap + 1));
	map->offsets[0] = 0;
	map->hashes = hashes ? nb_alloc(sizeof(uint64_t) * map->id_cap) : NULL;
	map->arena_cap = 64 + (size_t) map->id_cap * 8;
	map->arena = nb_alloc(map->arena_cap);
	map->slot_size = sizeof(NbStrSlot) + payload;
	map->slots = alloc_slots(map, nslots, &map->slots_block);
	map->slot_mask = nslots - 1;
}

void
nb_strmap_init_payload(NbStrMap *map, uint32_t expected, uint32_t payload)
{
	init(map, expected, payload, slots_for(expected), true);
}

void
nb_strmap_init(NbStrMap *map, uint32_t expected)
{
	init(map, expected, 0, slots_for(expected), true);
}

void
nb_strmap_init_appending(NbStrMap *map, uint32_t expected)
{
	init(map, expected, 0, slots_for(0), false);
}

void
nb_strmap_free(NbStrMap *map)
{
	nb_free(map->arena);
	nb_free(map->offsets);
	if (map->hashes != NULL)
		nb_free(map->hashes);
	nb_free(map->slots_block);
	memset(map, 0, sizeof(*map));
}

/* The first free slot of the probe sequence of hash in slots of mask. */
static NbStrSlot *
free_slot(const NbStrMap *map, NbStrSlot *slots, uint32_t mask, uint64_t hash)
{
	uint32_t	i = (uint32_t) hash & mask;

	for (;;)
	{
		NbStrSlot  *slot = (NbStrSlot *) ((char *) slots + (size_t) i * map->slot_size);

		if (slot->id1 == 0)
			return slot;
		i = (i + 1) & mask;
	}
}

/* Put a new id, whose string has this hash, into the first free slot of its probe sequence. */
static void
place(const NbStrMap *map, uint32_t id, uint64_t hash)
{
	NbStrSlot  *slot = free_slot(map, map->slots, map->slot_mask, hash);

	slot->id1 = id + 1;
	slot->tag = (uint32_t) (hash >> 32);
	slot->len = (uint32_t) (map->offsets[id + 1] - map->offsets[id]);
	if (slot->len <= NB_SLOT_INLINE)
		memcpy(slot->bytes, map->arena + map->offsets[id], slot->len);
}

/* Double the slots, moving each (with its payload) to its new place. */
static void
grow_slots(NbStrMap *map)
{
	uint32_t	nslots = (map->slot_mask + 1) * 2;
	uint32_t	mask = nslots - 1;
	void	   *block;
	NbStrSlot  *slots = alloc_slots(map, nslots, &block);

	for (uint32_t i = 0; i <= map->slot_mask; i++)
	{
		const NbStrSlot *old = nb_strmap_slot(map, i);

		nb_interrupt_at(i);
		if (old->id1 != 0)
			memcpy(free_slot(map, slots, mask, nb_strmap_hash_of(map, old->id1 - 1)), old,
				   map->slot_size);
	}
	nb_free(map->slots_block);
	map->slots_block = block;
	map->slots = slots;
	map->slot_mask = mask;
}

uint32_t
nb_strmap_intern(NbStrMap *map, const char *str, uint32_t len, uint64_t hash)
{
	int64_t		found = nb_strmap_find(map, str, len, hash);

	return found >= 0 ? (uint32_t) found : nb_strmap_add(map, str, len, hash);
}

uint32_t
nb_strmap_add(NbStrMap *map, const char *str, uint32_t len, uint64_t hash)
{
	uint32_t	id = nb_strmap_append(map, str, len, hash);

	nb_strmap_place_appended(map);
	return id;
}

uint32_t
nb_strmap_append(NbStrMap *map, const char *str, uint32_t len, uint64_t hash)
{
	uint32_t	id;

	if (map->count == map->id_cap)
	{
		map->id_cap = map->id_cap * 2;
		map->offsets = nb_realloc(map->offsets, sizeof(size_t) * ((size_t) map->id_cap + 1));
		if (map->hashes != NULL)
			map->hashes = nb_realloc(map->hashes, sizeof(uint64_t) * map->id_cap);
	}
	if (map->arena_used + len > map->arena_cap)
	{
		while (map->arena_used + len > map->arena_cap)
			map->arena_cap *= 2;
		map->arena = nb_realloc(map->arena, map->arena_cap);
	}
	id = map->count++;
	memcpy(map->arena + map->arena_used, str, len);
	map->offsets[id + 1] = map->arena_used + len;
	if (map->hashes != NULL)
		map->hashes[id] = hash;
	map->arena_used += len;
	return id;
}

void
nb_strmap_place_appended(NbStrMap *map)
{
	uint32_t	nslots = slots_for(map->count);
	/* the hashes of ids id .. id + NB_PREFETCH_DISTANCE - 1, at id % NB_PREFETCH_DISTANCE */
	uint64_t	ahead[NB_PREFETCH_DISTANCE];

	/*
	 * With no slot taken yet, the slots are made once at their final size:
	 * growing would move nothing, but hold the old and the new slots at once.
	 */
	if (map->placed == 0 && nslots > map->slot_mask + 1)
	{
		nb_free(map->slots_block);
		map->slots = alloc_slots(map, nslots, &map->slots_block);
		map->slot_mask = nslots - 1;
	}
	while ((uint64_t) map->count * 2 > (uint64_t) map->slot_mask + 1)
		grow_slots(map);
	for (uint32_t id = map->placed; id < map->count && id < map->placed + NB_PREFETCH_DISTANCE; id++)
		ahead[id % NB_PREFETCH_DISTANCE] = nb_strmap_hash_of(map, id);
	for (uint32_t id = map->placed; id < map->count; id++)
	{
		uint64_t	hash = ahead[id % NB_PREFETCH_DISTANCE];

		nb_interrupt_at(id);
		/* the slots are at random: fetch those of later ids meanwhile */
		if (id + NB_PREFETCH_DISTANCE < map->count)
		{
			ahead[id % NB_PREFETCH_DISTANCE] = nb_strmap_hash_of(map, id + NB_PREFETCH_DISTANCE);
			nb_strmap_prefetch(map, ahead[id % NB_PREFETCH_DISTANCE]);
		}
		place(map, id, hash);
	}
	map->placed = map->count;
}

uint64_t
nb_strmap_hash_of(const NbStrMap *map, uint32_t id)
{
	uint32_t	len;
	const char *str;

	if (map->hashes != NULL)
		return map->hashes[id];
	str = nb_strmap_str(map, id, &len);
	return nb_hash_token(str, len);
}

uint32_t
nb_strmap_slot_of(const NbStrMap *map, uint32_t id, uint64_t hash)
{
	uint32_t	i = nb_strmap_probe_start(map, hash);

	while (nb_strmap_slot(map, i)->id1 != id + 1)
		i = nb_strmap_probe_next(map, i);
	return i;
}
