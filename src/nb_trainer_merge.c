/*
 * nb_trainer_merge.c — adding a serialized model (a view) to a trainer:
 * its settings, features, classes, lengths and entries, within the
 * trainer's size limit.
 */
#include "nb_trainer_internal.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_moments.h"

/* Feature ids of this trainer for the features of a view, or a conflict. */
static NbMergeStatus
map_features(NbTrainer *t, const NbView *v, uint32_t *map, uint32_t *conflict)
{
	NbStringIter names = nb_view_feature_names(v);
	const char *name;
	uint32_t	len;

	if (v->vector_len != 0 && t->vector_len != 0 && v->vector_len != t->vector_len)
		return NB_MERGE_VECTOR_CONFLICT;
	for (uint32_t j = 0; nb_string_next(&names, &name, &len); j++)
	{
		int64_t		found = nb_vocab_find(&t->features, name, len, nb_hash_token(name, len));

		nb_interrupt_at(j);
		if (found >= 0 && t->feature[found].type != nb_view_feature_type(v, j))
		{
			*conflict = j;
			return NB_MERGE_TYPE_CONFLICT;
		}
	}
	names = nb_view_feature_names(v);
	for (uint32_t j = 0; nb_string_next(&names, &name, &len); j++)
	{
		NbFeatureType existing;

		nb_interrupt_at(j);
		map[j] = (uint32_t) nb_trainer_feature(t, name, len, nb_view_feature_type(v, j), &existing);
	}
	if (v->vector_len != 0)
		t->vector_len = v->vector_len;
	return NB_MERGE_OK;
}

/* Whether adding more bytes to the serialized form would pass t->size_limit. */
static bool
passes_limit(const NbTrainer *t, uint64_t more)
{
	uint64_t	size = nb_trainer_min_flat_size(t);

	return size > t->size_limit || more > t->size_limit - size;
}

uint32_t
nb_trainer_input_kinds(const NbTrainer *t)
{
	uint32_t	kinds = nb_input_kinds_base(t->vector_len, &t->settings);

	for (uint32_t j = 0; j < t->features.count; j++)
	{
		uint32_t	len;
		const char *name = nb_vocab_str(&t->features, j, &len);

		nb_interrupt_at(j);
		kinds |= nb_feature_input_kind(name, len, t->feature[j].type, t->vector_len);
	}
	return kinds;
}

/* Whether the trainer's settings are fixed: set, or implied by rows (none). */
static bool
settings_fixed(const NbTrainer *t)
{
	return t->settings_fixed || !nb_trainer_is_empty(t);
}

bool
nb_trainer_set_tokenizer(NbTrainer *t, const NbTokenizer *tok)
{
	NbSettings	s = {true, *tok, NULL, 0, false, false};

	if (settings_fixed(t))
		return nb_settings_same_tokenizer(&t->settings, &s);
	t->settings.has_tokenizer = true;
	t->settings.tokenizer = *tok;
	t->settings_fixed = true;
	return true;
}

/*
 * Merge the view's settings into the trainer's: adopted while not fixed,
 * else compared.  A model of no class (of rows that all had a NULL label)
 * has none to agree on: its settings are neither compared nor adopted.
 */
static NbMergeStatus
merge_settings(NbTrainer *t, const NbView *v)
{
	char	   *options;

	if (v->n_classes == 0)
		return NB_MERGE_OK;
	if (settings_fixed(t))
		return nb_merge_compat_status(nb_compat_check(nb_trainer_input_kinds(t), &t->settings,
													  nb_view_input_kinds(v), &v->settings));
	t->settings = v->settings;
	t->settings.options = NULL;
	if (v->settings.options_len > 0)
	{
		options = nb_alloc(v->settings.options_len);
		memcpy(options, v->settings.options, v->settings.options_len);
		t->settings.options = options;
	}
	t->settings_fixed = true;
	return NB_MERGE_OK;
}

/*
 * The view's classes interned (a new label only within the size limit)
 * and their documents added: class_map[c] is the trainer's id of class c.
 */
static NbMergeStatus
merge_classes(NbTrainer *t, const NbView *v, uint32_t *class_map)
{
	const char *s = v->labels;

	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		uint32_t	len = nb_view_label_len(v, c);

		nb_interrupt_at(c);
		/* a new label adds its docs, its length and its bytes */
		if (passes_limit(t, 8 + 4 + (uint64_t) len) &&
			nb_vocab_find(&t->classes, s, len, nb_hash_token(s, len)) < 0)
			return NB_MERGE_TOO_LARGE;
		class_map[c] = nb_trainer_class(t, s, len);
		t->class_docs[class_map[c]] += nb_view_class_docs(v, c);
		if (!isfinite(t->class_docs[class_map[c]]))
			t->overflow = true;
		s += len;
	}
	return NB_MERGE_OK;
}

/* Where a merge is in the view's arrays, which it reads feature after feature. */
typedef struct MergeCursor
{
	const NbView *v;
	const uint32_t *class_map;
	const char *token;			/* the next item's bytes */
	uint32_t	item;			/* the next item */
	uint64_t	entry;			/* its first entry */
	uint64_t	length;			/* the next (length, weight) pair */
	uint64_t	work;			/* for nb_interrupt_count */
} MergeCursor;

/* Add the per-class statistics and moments of the view's feature j to f. */
static void
merge_feature_stats(NbTrainer *t, MergeCursor *cur, uint32_t j, NbTrainerFeature *f)
{
	const NbView *v = cur->v;

	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		NbClassStat *st = &f->stats[cur->class_map[c]];

		nb_interrupt_count(&cur->work, 1);
		nb_feature_stats_add(f->type, &st->present, &st->a, &st->b,
							 nb_view_present(v, j, c), nb_view_a(v, j, c), nb_view_b(v, j, c));
		if (!isfinite(st->present) || !isfinite(st->a) || !isfinite(st->b))
			t->overflow = true;
	}
	if (nb_feature_type(f->type)->stats == NB_STATS_MOMENTS)
	{
		nb_moments_add(&f->rows, &f->mean, &f->m2, nb_view_feature_rows(v, j),
					   nb_view_feature_mean(v, j), nb_view_feature_m2(v, j));
		if (!isfinite(f->m2) || !isfinite(f->mean))
			t->overflow = true;
	}
}

/* Add the document length histograms of the view's bag j to the trainer's bag tj. */
static void
merge_lengths(NbTrainer *t, MergeCursor *cur, uint32_t j, uint32_t tj)
{
	const NbView *v = cur->v;

	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		uint64_t	end = cur->length + nb_view_length_pairs(v, j, c);

		nb_interrupt_count(&cur->work, 1);
		for (; cur->length < end; cur->length++)
		{
			nb_interrupt_count(&cur->work, 1);
			nb_trainer_add_length(t, tj, cur->class_map[c], nb_view_length_value(v, cur->length),
								  nb_view_length_weight(v, cur->length));
		}
	}
}

/* Add the view's next n entries, those of its current item, to the trainer's item tok. */
static void
merge_entries(NbTrainer *t, MergeCursor *cur, uint32_t tok, uint32_t n)
{
	const NbView *v = cur->v;
	uint64_t	e = cur->entry;

	nb_trainer_reserve_pairs(t, n);
	for (uint64_t end = e + n; e < end; e++)
		count_entry(t, tok, cur->class_map[nb_view_entry_class(v, e)],
					nb_view_entry_count(v, e), nb_view_entry_docs(v, e));
	cur->entry = e;
}

/* Add the view's next item, of the trainer's feature tj, with its entries. */
static NbMergeStatus
merge_item(NbTrainer *t, MergeCursor *cur, uint32_t tj)
{
	const NbView *v = cur->v;
	uint32_t	len = nb_view_token_len(v, cur->item);
	uint32_t	n = nb_view_token_entries(v, cur->item);
	NbTokenRef	ref = {cur->token, len, 1.0};
	const NbTokenRef *item = (int64_t) tj != t->unnamed_bag ?
		nb_item_keys(&t->item_keys, tj, &ref, 1) : &ref;
	uint64_t	hash = nb_hash_token(item->str, item->len);
	int64_t		found;
	uint32_t	tok;

	nb_interrupt_count(&cur->work, 1 + (uint64_t) n + len / 64);
	nb_vocab_index(&t->tokens);
	found = nb_vocab_find(&t->tokens, item->str, item->len, hash);
	if (found >= 0)
		tok = (uint32_t) found;
	else
	{
		/* a new item adds its length, its entry count, its bytes and an entry */
		if (passes_limit(t, 4 + 4 + (uint64_t) len + (4 + 8 + 8)))
			return NB_MERGE_TOO_LARGE;
		tok = nb_trainer_new_item(t, item->str, item->len, hash);
	}
	merge_entries(t, cur, tok, n);
	cur->token += len;
	return passes_limit(t, 0) ? NB_MERGE_TOO_LARGE : NB_MERGE_OK;
}

/* Add the view's feature j to the trainer's feature tj: statistics, lengths, items. */
static NbMergeStatus
merge_feature(NbTrainer *t, MergeCursor *cur, uint32_t j, uint32_t tj)
{
	NbTrainerFeature *f = &t->feature[tj];
	uint32_t	end = cur->item + nb_view_feature_items(cur->v, j);

	merge_feature_stats(t, cur, j, f);
	if (f->type == NB_FEATURE_BAG && !t->lengths_unknown)
	{
		merge_lengths(t, cur, j, tj);
		if (passes_limit(t, 0))
			return NB_MERGE_TOO_LARGE;
	}
	for (; cur->item < end; cur->item++)
	{
		NbMergeStatus status = merge_item(t, cur, tj);

		if (status != NB_MERGE_OK)
			return status;
	}
	return NB_MERGE_OK;
}

NbMergeStatus
nb_trainer_merge_view(NbTrainer *t, const NbView *v, uint32_t *conflict)
{
	MergeCursor cur = {v, NULL, v->tokens, 0, 0, 0, 0};
	uint32_t   *feature_map;
	uint32_t   *class_map;
	uint64_t	null_labels = t->settings.null_labels;
	NbMergeStatus status = merge_settings(t, v);

	if (status != NB_MERGE_OK)
		return status;
	/* adopted settings bring the view's count, added below with the rest */
	t->settings.null_labels = null_labels;
	feature_map = nb_alloc(sizeof(uint32_t) * v->n_features);
	status = map_features(t, v, feature_map, conflict);
	if (status != NB_MERGE_OK)
	{
		nb_free(feature_map);
		return status;
	}
	nb_trainer_end_doc(t);
	nb_trainer_fold_spread(t);
	/* the lengths of an older model's bags are unknown, and so are the merged ones */
	if (!t->lengths_unknown && !nb_view_has_lengths(v) && nb_view_has_bag(v))
		nb_trainer_drop_lengths(t);
	class_map = nb_alloc(sizeof(uint32_t) * v->n_classes);
	cur.class_map = class_map;
	status = merge_classes(t, v, class_map);
	for (uint32_t j = 0; j < v->n_features && status == NB_MERGE_OK; j++)
		status = merge_feature(t, &cur, j, feature_map[j]);
	if (status == NB_MERGE_OK && v->settings.jsonb_bag)
		t->settings.jsonb_bag = true;
	if (status == NB_MERGE_OK)
		nb_trainer_count_null_labels(t, v->settings.null_labels);
	nb_free(class_map);
	nb_free(feature_map);
	return status;
}

