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

void
nb_strmap_init(NbStrMap *map, uint32_t expected)
{
	uint32_t	nslots = slots_for(expected);

	memset(map, 0, sizeof(*map));
	map->id_cap = expected < 8 ? 8 : expected;
	map->offsets = nb_alloc(sizeof(size_t) * ((size_t) map->id_cap + 1));
	map->offsets[0] = 0;
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
	nb_free(map->hashes);
	nb_free(map->slots);
	memset(map, 0, sizeof(*map));
}

/* The first free slot of the probe sequence of hash in slots of mask. */
static NbStrSlot *
free_slot(NbStrSlot *slots, uint32_t mask, uint64_t hash)
{
	uint32_t	i = (uint32_t) hash & mask;

	while (slots[i].id1 != 0)
		i = (i + 1) & mask;
	return &slots[i];
}

/* Double the slots, moving each to its new place. */
static void
grow_slots(NbStrMap *map)
{
	uint32_t	nslots = (map->slot_mask + 1) * 2;
	uint32_t	mask = nslots - 1;
	NbStrSlot  *slots = nb_alloc_zero(sizeof(NbStrSlot) * nslots);

	for (uint32_t i = 0; i <= map->slot_mask; i++)
	{
		const NbStrSlot *old = &map->slots[i];

		nb_interrupt_at(i);
		if (old->id1 != 0)
			*free_slot(slots, mask, map->hashes[old->id1 - 1]) = *old;
	}
	nb_free(map->slots);
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
	uint32_t	id;
	NbStrSlot  *slot;

	if (map->count == map->id_cap)
	{
		map->id_cap = map->id_cap * 2;
		map->offsets = nb_realloc(map->offsets, sizeof(size_t) * ((size_t) map->id_cap + 1));
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
	map->hashes[id] = hash;
	map->arena_used += len;
	if ((uint64_t) map->count * 2 > (uint64_t) map->slot_mask + 1)
		grow_slots(map);
	slot = free_slot(map->slots, map->slot_mask, hash);
	slot->id1 = id + 1;
	slot->tag = (uint32_t) (hash >> 32);
	slot->len = len;
	if (len <= NB_SLOT_INLINE)
		memcpy(slot->bytes, str, len);
	return id;
}
