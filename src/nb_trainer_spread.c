/*
 * nb_trainer_spread.c — the soft-labelled rows of EM: each row goes to
 * every class at once with a weight per class, counted in dense per-item
 * arrays while they stay small enough, else in the tables.
 */
#include "nb_trainer_internal.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"

/*
 * Whether the dense counts of items_cap items stay within the trainer's
 * spread_min_bytes, or within twice its entries (NB_SPREAD_MIN_BYTES).
 */
bool
nb_trainer_spread_fits(const NbTrainer *t, uint64_t items_cap)
{
	uint64_t	cells = 2 * t->n_entries;
	uint64_t	limit = t->spread_min_bytes / sizeof(NbItemCounts);

	if (cells > limit)
		limit = cells;
	return t->spread_classes == 0 || items_cap <= limit / t->spread_classes;
}

bool
nb_trainer_spread_init(NbTrainer *t, uint32_t n_classes)
{
	if (t->n_entries > 0 || t->spread_active != NULL)
		return false;
	t->spread_classes = n_classes;
	t->spread_active = nb_alloc(sizeof(uint32_t) * (n_classes ? n_classes : 1));
	if (nb_trainer_spread_fits(t, t->item_cap))
		t->spread = nb_alloc_zero(sizeof(NbItemCounts) * n_classes * t->item_cap);
	return true;
}

/* Whether any of the n weights is positive. */
static bool
any_positive(const double *w, uint32_t n)
{
	for (uint32_t c = 0; c < n; c++)
		if (w[c] > 0)
			return true;
	return false;
}

/* The document added to each spread class of a positive weight in turn, counted in the tables. */
static void
add_spread_by_class(NbTrainer *t, uint32_t feature, const NbTokenRef *tokens, uint32_t n,
					const double *w)
{
	for (uint32_t c = 0; c < t->spread_classes; c++)
	{
		nb_interrupt_at(c);
		if (!(w[c] > 0))
			continue;
		nb_trainer_begin_class_doc(t, c, w[c]);
		nb_trainer_add_tokens(t, feature, tokens, n);
	}
}

bool
nb_trainer_add_text_spread(NbTrainer *t, const NbTokenRef *tokens, uint32_t n, const double *w)
{
	uint32_t	n_classes = t->spread_classes;
	NbFeatureType existing;
	int64_t		j = t->unnamed_bag >= 0 ? t->unnamed_bag :
		nb_trainer_feature(t, "", 0, NB_FEATURE_BAG, &existing);
	NbTrainerFeature *f;
	uint32_t   *active;
	uint32_t	n_active = 0;
	double		length = 0;
	uint64_t	work = 0;

	if (j < 0 || t->spread_active == NULL)
		return false;
	/*
	 * The items first: a new one may move the dense counts to the tables.
	 * A row of no positive weight adds nothing, not even its tokens as items.
	 */
	if (n > 0 && any_positive(w, n_classes))
		nb_trainer_resolve_items(t, tokens, n);
	if (t->spread == NULL)
	{
		add_spread_by_class(t, (uint32_t) j, tokens, n, w);
		return true;
	}
	f = &t->feature[j];
	nb_trainer_end_doc(t);
	nb_trainer_next_doc(t);
	f->last_doc = t->doc_seq;
	active = t->spread_active;
	for (uint32_t c = 0; c < n_classes; c++)
	{
		if (!(w[c] > 0))
			continue;
		active[n_active++] = c;
		t->class_docs[c] += w[c];
		f->stats[c].present += w[c];
		if (!isfinite(t->class_docs[c]) || !isfinite(f->stats[c].present))
			t->overflow = true;
	}
	for (uint32_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		length += tokens[i].count;
	}
	if (!isfinite(length))
		t->overflow = true;
	/* the lengths as end_doc adds them, per class */
	if (!t->lengths_unknown && length > 0 && isfinite(length))
		for (uint32_t a = 0; a < n_active; a++)
			nb_trainer_add_length(t, (uint32_t) j, active[a], length, w[active[a]]);
	if (n == 0 || n_active == 0)
		return true;
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	id = t->scratch_id[i];
		NbItemCounts *cells = &t->spread[(uint64_t) id * n_classes];
		bool		first = first_in_doc(t, id);
		double		count = tokens[i].count;

		nb_interrupt_count(&work, 1 + (uint64_t) n_active);
		for (uint32_t a = 0; a < n_active; a++)
		{
			uint32_t	c = active[a];
			NbItemCounts *cell = &cells[c];

			if (cell->docs == 0)
				t->n_entries++;
			cell->count += weighted(t, count, w[c]);
			if (first)
				cell->docs += w[c];
			if (!isfinite(cell->count))
				t->overflow = true;
		}
	}
	return true;
}

/*
 * Move the dense counts of the spread classes to the tables of the others
 * (inline and pairs): rows added later go there too.
 */
void
nb_trainer_spread_to_tables(NbTrainer *t)
{
	uint32_t	S = t->spread_classes;
	uint32_t	V = t->tokens.count;
	uint64_t	pairs = 0;
	uint64_t	work = 0;

	if (t->spread == NULL)
		return;
	for (uint64_t i = 0; i < (uint64_t) V * S; i++)
	{
		nb_interrupt_at(i);
		pairs += t->spread[i].docs != 0 && i % S >= NB_INLINE_CLASSES;
	}
	nb_trainer_reserve_pairs(t, pairs);
	for (uint32_t k = 0; k < V; k++)
	{
		const NbItemCounts *cells = &t->spread[(uint64_t) k * S];

		nb_interrupt_count(&work, 1 + (uint64_t) S);
		for (uint32_t c = 0; c < S; c++)
		{
			const NbItemCounts *cell = &cells[c];

			if (cell->docs == 0)
				continue;
			/* counted as an entry when added: counted again below if new to the tables */
			t->n_entries--;
			count_entry(t, k, c, cell->count, cell->docs);
		}
	}
	nb_free(t->spread);
	t->spread = NULL;
}

/* Before a merge, which adds in the tables: no more spread rows after it. */
void
nb_trainer_fold_spread(NbTrainer *t)
{
	nb_trainer_spread_to_tables(t);
	nb_free_if(t->spread_active);
	t->spread_active = NULL;
	t->spread_classes = 0;
}

void
nb_trainer_set_components(NbTrainer *t)
{
	t->component_keys = true;
}

void
nb_trainer_component_key(const char *label, uint32_t len, uint32_t k, char *key)
{
	memcpy(key, label, len);
	key[len] = '\0';
	for (int b = 0; b < 4; b++)
		key[len + 1 + b] = (char) (k >> (24 - 8 * b));
}
