/*
 * nb_prune.c — dropping tokens and features from a serialized model, see
 * nb_prune.h.
 *
 * A model's statistics are sums over rows, each feature's apart from the
 * others'.  Removing a token from every row removes its entries and
 * nothing else: a bag's class totals are sums over its entries (nb_index
 * forms them), and the rows with the bag (feature_present) still have it.
 * Removing a whole feature removes its statistics and nothing else.  So
 * the pruned model is the input with those parts left out, written in the
 * same canonical order, and is byte for byte the model of the pruned rows.
 *
 * Document lengths (format version 3) are the exception: dropping some of
 * a bag's tokens shortens the documents by amounts the histogram does not
 * tell, so the pruned model then has no lengths (it is written as versions
 * 1 and 2 write a model whose lengths are unknown).  Dropping whole
 * features, or tokens of categorical features only, keeps the histograms
 * of the bags that remain.
 */
#include "nb_prune.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "nb_mutual_info.h"
#include "nb_runs.h"

/* What happens to a whole feature. */
typedef enum FeatureFate
{
	FEATURE_KEEP,
	FEATURE_DROP,
	FEATURE_ZERO				/* a float8[] position: kept, without statistics */
} FeatureFate;

struct NbPruner
{
	const NbView *v;
	bool	   *keep_item;		/* [V] */
	uint8_t    *fate;			/* [F] FeatureFate */
	NbPlan		plan;			/* the result; its items are copied at writing */
};

/* 2^53: every integer up to it is a double */
#define TOP_K_MAX 9007199254740992.0

void
nb_prune_options_init(NbPruneOptions *o)
{
	o->has_top_k = false;
	o->top_k = 0;
	o->min_documents = 0;
	o->has_max_fraction = false;
	o->max_document_fraction = 1;
}

bool
nb_prune_set_top_k(NbPruneOptions *o, double k)
{
	if (!(k >= 0 && k <= TOP_K_MAX && k == floor(k)))
		return false;
	o->has_top_k = true;
	o->top_k = (uint64_t) k;
	return true;
}

bool
nb_prune_set_min_documents(NbPruneOptions *o, double n)
{
	if (!(n >= 0 && isfinite(n)))
		return false;
	o->min_documents = n;
	return true;
}

bool
nb_prune_set_max_document_fraction(NbPruneOptions *o, double f)
{
	if (!(f >= 0 && f <= 1))
		return false;
	o->has_max_fraction = true;
	o->max_document_fraction = f;
	return true;
}

/* min_documents and max_document_fraction: which bag tokens stay. */
static void
filter_documents(NbPruner *p, const NbPruneOptions *o)
{
	const NbView *v = p->v;
	double		D = 0;
	double		most = INFINITY;
	uint64_t	e = 0;
	uint64_t	work = 0;
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;

	for (uint32_t c = 0; c < v->n_classes; c++)
		D += nb_view_class_docs(v, c);
	if (o->has_max_fraction)
		most = o->max_document_fraction * D;
	while (nb_feature_next(&it, &f))
		for (uint32_t k = f.first_item; k < f.first_item + f.n_items; k++)
		{
			uint32_t	n = nb_view_token_entries(v, k);
			double		df = 0;

			nb_interrupt_count(&work, 1 + (uint64_t) n);
			for (uint32_t i = 0; i < n; i++)
				df += nb_view_entry_docs(v, e + i);
			e += n;
			if (f.type == NB_FEATURE_BAG && (df < o->min_documents || df > most))
				p->keep_item[k] = false;
		}
}

/* top_k: the first k rows of nb_mutual_info among what the filters left. */
static void
keep_top(NbPruner *p, uint64_t k)
{
	const NbView *v = p->v;
	NbMiRow    *rows = nb_alloc(sizeof(NbMiRow) * (nb_mutual_info_max_rows(v) + 1));
	uint64_t	n = nb_mutual_info(v, rows);
	uint64_t	kept = 0;

	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;

	for (uint64_t i = 0; i < n; i++)
	{
		const NbMiRow *r = &rows[i];

		nb_interrupt_at(i);
		if (!r->whole_feature && !p->keep_item[r->item])
			continue;
		if (kept < k)
			kept++;
		else if (r->whole_feature)
			p->fate[r->feature] = FEATURE_DROP;
		else
			p->keep_item[r->item] = false;
	}
	nb_free(rows);
	/* a float8[] position stays, without statistics */
	while (nb_feature_next(&it, &f))
		if (p->fate[f.index] == FEATURE_DROP && nb_is_position_name(f.name, f.name_len, v->vector_len))
			p->fate[f.index] = FEATURE_ZERO;
}

/*
 * Whether the result keeps the kept bags' document lengths: only while no
 * bag that remains loses a token, and version 3 needs a bag (without one
 * left, the model is version 2).  Counts the pairs in plan->H.
 */
static bool
keeps_lengths(NbPruner *p)
{
	const NbView *v = p->v;
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;
	bool		bag = false;
	uint64_t	work = 0;

	if (!nb_view_has_lengths(v))
		return false;
	while (nb_feature_next(&it, &f))
	{
		if (f.type != NB_FEATURE_BAG || p->fate[f.index] == FEATURE_DROP)
			continue;
		bag = true;
		for (uint32_t k = f.first_item; k < f.first_item + f.n_items; k++)
		{
			nb_interrupt_count(&work, 1);
			if (!p->keep_item[k])
				return false;
		}
		for (uint32_t c = 0; c < v->n_classes; c++)
			p->plan.H += nb_view_length_pairs(v, f.index, c);
	}
	return bag;
}

/* The classes, as they are. */
static void
plan_classes(NbPruner *p)
{
	const NbView *v = p->v;
	NbPlan	   *plan = &p->plan;
	NbStringIter labels = nb_view_labels(v);
	const char *str;
	uint32_t	len;

	plan->C = v->n_classes;
	nb_plan_alloc_classes(plan, plan->C);
	for (uint32_t c = 0; nb_string_next(&labels, &str, &len); c++)
	{
		nb_interrupt_at(c);
		plan->label[c] = str;
		plan->label_len[c] = len;
		plan->class_docs[c] = nb_view_class_docs(v, c);
		plan->label_bytes += len;
	}
}

/*
 * The kept features with their statistics (none for a float8[] position
 * kept without them) and lengths, and the counts and bytes of their kept
 * items; a dropped categorical feature's values go with it.
 */
static void
plan_features(NbPruner *p)
{
	const NbView *v = p->v;
	NbPlan	   *plan = &p->plan;
	uint32_t	C = v->n_classes;
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;
	uint32_t	j = 0;			/* next feature planned */
	uint64_t	h = 0;			/* next length pair read */
	uint64_t	ho = 0;			/* next length pair planned */
	uint64_t	work = 0;

	nb_plan_alloc_features(plan, plan->F);
	nb_plan_alloc_stats(plan);
	if (plan->lengths)
		nb_plan_alloc_lengths(plan, plan->H);
	while (nb_feature_next(&it, &f))
	{
		FeatureFate fate = (FeatureFate) p->fate[f.index];
		NbStringIter items = nb_feature_items(v, &f);
		const char *str;
		uint32_t	len;

		for (uint32_t k = f.first_item; nb_string_next(&items, &str, &len); k++)
		{
			nb_interrupt_count(&work, 1);
			if (fate == FEATURE_DROP)
				p->keep_item[k] = false;
			if (!p->keep_item[k])
				continue;
			plan->items[j]++;
			plan->V++;
			plan->E += nb_view_token_entries(v, k);
			plan->token_bytes += len;
		}
		if (fate == FEATURE_DROP)
		{
			for (uint32_t c = 0; nb_view_has_lengths(v) && c < C; c++)
				h += nb_view_length_pairs(v, f.index, c);
			continue;
		}
		plan->name[j] = f.name;
		plan->name_len[j] = f.name_len;
		plan->name_bytes += f.name_len;
		plan->type[j] = (uint32_t) f.type;
		nb_interrupt_count(&work, C);
		for (uint32_t c = 0; c < C; c++)
		{
			uint64_t	x = (uint64_t) j * C + c;
			uint32_t	n = nb_view_has_lengths(v) ? nb_view_length_pairs(v, f.index, c) : 0;

			if (fate == FEATURE_KEEP)
			{
				plan->present[x] = nb_view_present(v, f.index, c);
				plan->fa[x] = nb_view_a(v, f.index, c);
				plan->fb[x] = nb_view_b(v, f.index, c);
			}
			if (plan->lengths)
			{
				plan->length_pairs[x] = n;
				for (uint64_t end = h + n; h < end; h++, ho++)
				{
					nb_interrupt_count(&work, 1);
					plan->length_value[ho] = nb_view_length_value(v, h);
					plan->length_weight[ho] = nb_view_length_weight(v, h);
				}
			}
			else
				h += n;
		}
		if (fate == FEATURE_KEEP)
		{
			plan->rows[j] = nb_view_feature_rows(v, f.index);
			plan->mean[j] = nb_view_feature_mean(v, f.index);
			plan->m2[j] = nb_view_feature_m2(v, f.index);
		}
		j++;
	}
}

NbPruner *
nb_pruner_create(const NbView *v, const NbPruneOptions *o)
{
	NbPruner   *p = nb_alloc_zero(sizeof(NbPruner));

	p->v = v;
	p->keep_item = nb_alloc(sizeof(bool) * ((uint64_t) v->n_tokens + 1));
	memset(p->keep_item, true, sizeof(bool) * ((uint64_t) v->n_tokens + 1));
	p->fate = nb_alloc_zero((uint64_t) v->n_features + 1);
	if (o->min_documents > 0 || o->has_max_fraction)
		filter_documents(p, o);
	if (o->has_top_k)
		keep_top(p, o->top_k);

	for (uint32_t j = 0; j < v->n_features; j++)
		if (p->fate[j] != FEATURE_DROP)
			p->plan.F++;
	p->plan.vector_len = v->vector_len;
	p->plan.lengths = keeps_lengths(p);
	if (!p->plan.lengths)
		p->plan.H = 0;
	plan_classes(p);
	plan_features(p);
	p->plan.text_only = nb_plan_is_text_only(&p->plan);
	p->plan.settings = v->settings;
	return p;
}

size_t
nb_pruner_size(const NbPruner *p, size_t max_size)
{
	return nb_plan_size(&p->plan, max_size);
}

/* The kept items, copied in runs straight into the model. */
void
nb_pruner_write(const NbPruner *p, unsigned char *buf, size_t size, NbView *out)
{
	const NbView *v = p->v;
	NbFormatWriter w;
	NbRunOut	o;
	NbCursor	cur = {0, 0, 0};
	uint64_t	work = 0;

	nb_plan_write_begin(&p->plan, buf, size, &w);
	nb_run_out_at(&o, &w);
	while (cur.item < v->n_tokens)
	{
		uint32_t	end = cur.item;

		while (end < v->n_tokens && p->keep_item[end])
			end++;
		if (end > cur.item)
			nb_copy_run(v, NULL, v->n_classes, &cur, end - cur.item, &o);
		if (end < v->n_tokens)
		{
			nb_interrupt_count(&work, 1);
			nb_cursor_advance(v, &cur);
		}
	}
	nb_format_finish(&w, out);
}

void
nb_pruner_destroy(NbPruner *p)
{
	nb_free(p->keep_item);
	nb_free(p->fate);
	nb_plan_free(&p->plan);
	nb_free(p);
}
