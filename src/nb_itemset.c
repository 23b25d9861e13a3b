/*
 * nb_itemset.c — a document's set of items, see nb_itemset.h.
 */
#include "nb_itemset.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"

#define NB_ITEMSET_MIN_SLOTS 64

void
nb_itemset_init(NbItemSet *set)
{
	set->cap = NB_ITEMSET_MIN_SLOTS;
	set->mask = set->cap - 1;
	set->slots = nb_alloc_zero(sizeof(uint64_t) * set->cap);
	set->used = nb_alloc(sizeof(uint32_t) * (set->cap / 2));
	set->count = 0;
}

void
nb_itemset_free(NbItemSet *set)
{
	nb_free(set->slots);
	nb_free(set->used);
}

void
nb_itemset_clear(NbItemSet *set)
{
	/* a small table is cleared faster whole than slot by slot */
	if ((uint64_t) set->count * 8 > (uint64_t) set->mask + 1)
		memset(set->slots, 0, sizeof(uint64_t) * ((uint64_t) set->mask + 1));
	else
		for (uint32_t i = 0; i < set->count; i++)
			set->slots[set->used[i]] = 0;
	set->count = 0;
}

/* Grow the table to slots in the middle of a document, keeping the members in order. */
static void
resize(NbItemSet *set, uint64_t slots)
{
	uint64_t   *old = set->slots;
	uint32_t   *old_used = set->used;
	uint32_t	n = set->count;

	if (slots > set->cap)
		set->cap = (uint32_t) slots;
	set->slots = nb_alloc_zero(sizeof(uint64_t) * set->cap);
	set->used = nb_alloc(sizeof(uint32_t) * (set->cap / 2));
	set->mask = (uint32_t) (slots - 1);
	set->count = 0;
	for (uint32_t i = 0; i < n; i++)
	{
		uint64_t	s = old[old_used[i]];
		uint32_t	value = (uint32_t) s;

		nb_interrupt_at(i);
		nb_itemset_add(set, (uint32_t) (s >> 32) - 1, &value);
	}
	nb_free(old);
	nb_free(old_used);
}

void
nb_itemset_reserve(NbItemSet *set, uint32_t n)
{
	uint64_t	need = (uint64_t) set->count + n;
	uint64_t	slots = NB_ITEMSET_MIN_SLOTS;

	while (need * 2 > slots)
		slots *= 2;
	if (set->count == 0)
	{
		/* a new document: its own size, within what is allocated if possible */
		if (slots > set->cap)
		{
			nb_free(set->slots);
			nb_free(set->used);
			set->slots = nb_alloc_zero(sizeof(uint64_t) * slots);
			set->used = nb_alloc(sizeof(uint32_t) * (slots / 2));
			set->cap = (uint32_t) slots;
		}
		if (slots > (uint64_t) set->mask + 1 || slots * 4 <= (uint64_t) set->mask + 1)
			set->mask = (uint32_t) (slots - 1);
		return;
	}
	if (slots > (uint64_t) set->mask + 1)
		resize(set, slots);
}
