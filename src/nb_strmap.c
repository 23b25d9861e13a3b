/*
 * nb_strmap.c — string interning, see nb_strmap.h.
 */
#include "nb_strmap.h"

#include <string.h>

#include "nb_alloc.h"

static uint32_t
slots_for(uint32_t expected)
{
	uint32_t	n = 16;

	/* keep the load factor at most 1/2 */
	while (n < (uint64_t) expected * 2 && n < (UINT32_C(1) << 31))
		n <<= 1;
	return n;
}

void
nb_strmap_init(NbStrMap *map, uint32_t expected)
{
	uint32_t	nslots = slots_for(expected);

	memset(map, 0, sizeof(*map));
	map->id_cap = expected < 8 ? 8 : expected;
	map->offsets = nb_alloc(sizeof(size_t) * map->id_cap);
	map->lengths = nb_alloc(sizeof(uint32_t) * map->id_cap);
	map->hashes = nb_alloc(sizeof(uint64_t) * map->id_cap);
	map->arena_cap = 64 + (size_t) map->id_cap * 8;
	map->arena = nb_alloc(map->arena_cap);
	map->slots = nb_alloc_zero(sizeof(NbStrSlot) * nslots);
	map->slot_mask = nslots - 1;
}

void
nb_strmap_free(NbStrMap *map)
{
	nb_free(map->arena);
	nb_free(map->offsets);
	nb_free(map->lengths);
	nb_free(map->hashes);
	nb_free(map->slots);
	memset(map, 0, sizeof(*map));
}

/* Put id into the first free slot of its probe sequence. */
static void
place(const NbStrMap *map, NbStrSlot *slots, uint32_t mask, uint32_t id)
{
	uint64_t	hash = map->hashes[id];
	uint32_t	i = (uint32_t) hash & mask;
	NbStrSlot  *slot;

	while (slots[i].id1 != 0)
		i = (i + 1) & mask;
	slot = &slots[i];
	slot->id1 = id + 1;
	slot->tag = (uint32_t) (hash >> 32);
	slot->len = map->lengths[id];
	if (slot->len <= NB_SLOT_INLINE)
		memcpy(slot->bytes, map->arena + map->offsets[id], slot->len);
}

static void
grow_slots(NbStrMap *map)
{
	uint32_t	nslots = (map->slot_mask + 1) * 2;
	uint32_t	mask = nslots - 1;
	NbStrSlot  *slots = nb_alloc_zero(sizeof(NbStrSlot) * nslots);

	for (uint32_t id = 0; id < map->count; id++)
		place(map, slots, mask, id);
	nb_free(map->slots);
	map->slots = slots;
	map->slot_mask = mask;
}

uint32_t
nb_strmap_intern(NbStrMap *map, const char *str, uint32_t len, uint64_t hash)
{
	int64_t		found = nb_strmap_find(map, str, len, hash);
	uint32_t	id;

	if (found >= 0)
		return (uint32_t) found;

	if (map->count == map->id_cap)
	{
		map->id_cap = map->id_cap * 2;
		map->offsets = nb_realloc(map->offsets, sizeof(size_t) * map->id_cap);
		map->lengths = nb_realloc(map->lengths, sizeof(uint32_t) * map->id_cap);
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
	map->offsets[id] = map->arena_used;
	map->lengths[id] = len;
	map->hashes[id] = hash;
	map->arena_used += len;

	if ((uint64_t) map->count * 2 > (uint64_t) map->slot_mask + 1)
		grow_slots(map);
	else
		place(map, map->slots, map->slot_mask, id);
	return id;
}

uint32_t
nb_strmap_slot_of(const NbStrMap *map, uint32_t id)
{
	uint32_t	i = (uint32_t) map->hashes[id] & map->slot_mask;

	while (map->slots[i].id1 != id + 1)
		i = (i + 1) & map->slot_mask;
	return i;
}
