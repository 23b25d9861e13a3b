/*
 * nb_itemset.h — the items one document has had so far, with a value each,
 * for the scorer adding up an item's repeats.  A table as large as the
 * vocabulary would answer "is this item new in this document?" with a
 * cache miss; this one is sized for the current document (open addressing,
 * at most half full), so it stays in the first-level cache for documents
 * of ordinary length and costs nothing to clear.
 */
#ifndef NB_ITEMSET_H
#define NB_ITEMSET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct NbItemSet
{
	uint64_t   *slots;			/* (item + 1) << 32 | value; 0 = free */
	uint32_t	mask;			/* slots in use for this document - 1 */
	uint32_t	cap;			/* slots allocated */
	uint32_t   *used;			/* slot of each member, in insertion order */
	uint32_t	count;
} NbItemSet;

void		nb_itemset_init(NbItemSet *set);
void		nb_itemset_free(NbItemSet *set);

/* Empty the set (next document). */
void		nb_itemset_clear(NbItemSet *set);

/*
 * Room for n more members.  At the start of a document this also sizes the
 * table for it, so one long document does not make every later one probe a
 * large table.
 */
void		nb_itemset_reserve(NbItemSet *set, uint32_t n);

/*
 * Add item with value if absent and return true; if present return false
 * and set *value to its value.  Needs room (nb_itemset_reserve).
 */
static inline bool
nb_itemset_add(NbItemSet *set, uint32_t item, uint32_t *value)
{
	uint64_t	key = (uint64_t) item + 1;
	uint32_t	j = (uint32_t) ((item * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & set->mask;

	for (;;)
	{
		uint64_t	s = set->slots[j];

		if (s == 0)
		{
			set->slots[j] = key << 32 | *value;
			set->used[set->count++] = j;
			return true;
		}
		if (s >> 32 == key)
		{
			*value = (uint32_t) s;
			return false;
		}
		j = (j + 1) & set->mask;
	}
}

#endif
