/*
 * nb_trainer_internal.h — what the trainer's files (src/README.md) share,
 * for them only: callers use nb_trainer.h.
 */
#ifndef NB_TRAINER_INTERNAL_H
#define NB_TRAINER_INTERNAL_H

#include <math.h>

#include "nb_hash.h"
#include "nb_trainer.h"

/* The key of a free slot of the pair table. */
#define NB_EMPTY_KEY UINT64_MAX

static inline uint64_t
pair_key(uint32_t token, uint32_t cls)
{
	return (uint64_t) token << 32 | cls;
}

/*
 * The slot of a (token, class) pair given the key's hash, created with zero
 * counts if new.  The caller makes sure there is room for one more pair.
 */
static inline NbPairSlot *
find_pair(NbTrainer *t, uint64_t key, uint64_t hash)
{
	uint64_t	j = hash & t->pair_mask;

	for (;;)
	{
		NbPairSlot *s = &t->pairs[j];

		if (s->key == key)
			return s;
		if (s->key == NB_EMPTY_KEY)
		{
			s->key = key;
			s->count = 0;
			s->docs = 0;
			t->pairs_used++;
			t->n_entries++;
			return s;
		}
		j = (j + 1) & t->pair_mask;
	}
}

/*
 * A token's count in a row of weight w: both are positive, but their
 * product can round to 0 (a subnormal weight times a count below 1), which
 * no entry may hold: the trainer refuses the model then, as PostgreSQL's
 * float8 arithmetic refuses an underflow.
 */
static inline double
weighted(NbTrainer *t, double count, double w)
{
	double		x = count * w;

	if (x == 0)
		t->underflow = true;
	return x;
}

/* Add to an item's counts in a class below NB_INLINE_CLASSES. */
static inline void
count_inline(NbTrainer *t, NbItemCounts *in, double count, double docs)
{
	if (in->count == 0)
		t->n_entries++;
	in->count += count;
	in->docs += docs;
	if (!isfinite(in->count))
		t->overflow = true;
}

/*
 * Add to an item's counts in class cls: its inline counts, else its pair's
 * (the caller has reserved room for it).
 */
static inline void
count_entry(NbTrainer *t, uint32_t item, uint32_t cls, double count, double docs)
{
	uint64_t	key = pair_key(item, cls);
	NbPairSlot *s;

	if (cls < NB_INLINE_CLASSES)
	{
		count_inline(t, &t->inline_counts[cls][item], count, docs);
		return;
	}
	s = find_pair(t, key, nb_hash_mix(key));
	s->count += count;
	s->docs += docs;
	if (!isfinite(s->count))
		t->overflow = true;
}

/* Whether item k is counted in the current document's frequency for the first time. */
static inline bool
first_in_doc(NbTrainer *t, uint32_t k)
{
	bool		first = t->item_doc[k] != t->doc_stamp;

	t->item_doc[k] = t->doc_stamp;
	return first;
}

/* The steps the files share (comments at their definitions). */
void		nb_trainer_reserve_pairs(NbTrainer *t, uint64_t n);
uint32_t	nb_trainer_new_item(NbTrainer *t, const char *str, uint32_t len, uint64_t hash);
void		nb_trainer_next_doc(NbTrainer *t);
void		nb_trainer_begin_class_doc(NbTrainer *t, uint32_t cls, double weight);
void		nb_trainer_resolve_items(NbTrainer *t, const NbTokenRef *tokens, uint32_t n);
void		nb_trainer_add_length(NbTrainer *t, uint32_t feature, uint32_t cls,
								  double length, double weight);
void		nb_trainer_drop_lengths(NbTrainer *t);
bool		nb_trainer_spread_fits(const NbTrainer *t, uint64_t items_cap);
void		nb_trainer_spread_to_tables(NbTrainer *t);
void		nb_trainer_fold_spread(NbTrainer *t);

#endif
